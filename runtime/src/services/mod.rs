//! Implementations of the generated service traits.

pub mod prospector;
pub mod vault;

use generated::support::Problem;

/// The problem answered by an operation whose behaviour is not built yet.
pub fn not_built(operation: &str) -> Problem {
    Problem::new(format!("{operation} is specified but not built yet in this release.")).with("operation", operation)
}
