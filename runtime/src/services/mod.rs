//! The prospector service and its domain modules.

pub mod api_tokens;
pub mod backtest;
pub mod connector;
pub mod contracts;
pub mod engine;
pub mod idempotency;
pub mod leads;
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
