//! The prospector service and its domain modules.

pub mod api_tokens;
pub mod connector;
pub mod contracts;
pub mod idempotency;
pub mod leads;
pub mod backtest;
pub mod engine;
pub mod posting;
pub mod proposals;
pub mod prospector;
pub mod scans;
pub mod scoring;
pub mod sources;

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
