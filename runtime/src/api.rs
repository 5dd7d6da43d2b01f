//! [`ServiceApi`]: a registered service as the platform serves it.

use crate::auth::BearerGate;

/// A service with its implementation, as the platform serves it: what the generated
/// `api(implementation)` of every service makes, admitted by the platform's gate.
pub type ServiceApi = support::Api<BearerGate>;
