//! The fault reporter every service implementation answers server faults through.

use support::{InternalError, Problem};

/// A server fault: logged with where it happened and its cause (never a secret), answered
/// without detail. Every service implementation reports faults through this one function. A
/// cause that says the storage is unreachable, full or overloaded for now answers the service's
/// unavailable error (503, `Retry-After`) instead of the internal one: the client may retry.
pub fn fault<E: InternalError>(place: &str, what: &str, cause: impl std::fmt::Display + 'static) -> E {
    let transient = crate::store::is_transient_cause(&cause);
    if transient {
        tracing::warn!(place, "{what}: storage unavailable: {cause}");
        return E::unavailable(
            Problem::new(format!(
                "The service's storage is unavailable for now; nothing was changed. Retry in {} seconds.",
                crate::store::RETRY_AFTER_SECONDS
            ))
            .with("retry_after", crate::store::RETRY_AFTER_SECONDS),
        );
    }
    tracing::error!(place, "{what}: {cause}");
    E::internal(Problem::new("Internal error; nothing was changed and no secret was returned."))
}
