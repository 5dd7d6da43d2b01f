//! Implementations of generated service traits that are not built yet (see the README).

pub mod api_tokens;
pub mod posting;
pub mod prospector;
pub mod scoring;

use generated::support::{InternalError, Problem};

/// A server fault: logged with where it happened and its cause (never a secret), answered
/// without detail. Every service implementation reports faults through this one function.
pub fn fault<E: InternalError>(place: &str, what: &str, cause: impl std::fmt::Display) -> E {
    tracing::error!(place, "{what}: {cause}");
    E::internal(Problem::new("Internal error; nothing was changed and no secret was returned."))
}

/// The problem answered by an operation whose behaviour is not built yet.
pub fn not_built(operation: &str) -> Problem {
    Problem::new(format!("{operation} is specified but not built yet in this release.")).with("operation", operation)
}
