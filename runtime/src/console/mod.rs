//! The web console served by the binary: pages that use the sign-in session.

/// The console's home page (where signing in leads by default).
pub const HOME: &str = "/console/";
