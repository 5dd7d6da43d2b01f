//! Implementations of generated service traits that are not built yet (see the README).

pub mod api_tokens;
pub mod prospector;
pub mod scoring;

use generated::support::Problem;

/// The problem answered by an operation whose behaviour is not built yet.
pub fn not_built(operation: &str) -> Problem {
    Problem::new(format!("{operation} is specified but not built yet in this release.")).with("operation", operation)
}
