//! The fault reporter every service implementation answers server faults through.

use support::{InternalError, Operation, Problem};

use crate::store::{StorageFault, fault_kind};

/// [`fault`] at an operation, named by its id in the log: `cx.op.fault("loading grants", e)`, or
/// `op.fault(…)` in a helper handed the operation. What a request's code reports its faults
/// through, so the log always names the operation that met the fault.
pub trait OperationFault {
    /// The fault `what` (what the operation was doing) met `cause`, as the operation's error.
    fn fault<E: InternalError>(&self, what: &str, cause: impl std::fmt::Display + 'static) -> E;
}

impl OperationFault for Operation {
    fn fault<E: InternalError>(&self, what: &str, cause: impl std::fmt::Display + 'static) -> E {
        fault(self.id, what, cause)
    }
}

/// A server fault: logged with where it happened and its cause (never a secret), answered
/// without detail. Every service implementation reports faults through this one function, and
/// [`fault_kind`] decides what the cause means to the client:
/// - the storage unreachable, refusing work, full or overloaded for now: the service's
///   unavailable error (503, `Retry-After`); the client may retry;
/// - a write that lost a race for a unique key (two requests creating the same key at once): the
///   operation's conflict error (409), as when the key already existed before the request, if
///   the operation declares it;
/// - anything else: the internal error (500).
pub fn fault<E: InternalError>(place: &str, what: &str, cause: impl std::fmt::Display + 'static) -> E {
    match fault_kind::classify_cause(&cause) {
        StorageFault::Unavailable(kind) => {
            tracing::warn!(place, kind = kind.as_str(), "{what}: storage unavailable: {cause}");
            return E::unavailable(
                Problem::new(format!(
                    "The service's storage is unavailable for now; nothing was changed. Retry in {} seconds.",
                    crate::store::RETRY_AFTER_SECONDS
                ))
                .with("retry_after", crate::store::RETRY_AFTER_SECONDS),
            );
        }
        StorageFault::UniqueConflict => {
            let problem = Problem::new(
                "It already exists: a request made at the same time created it first; nothing was changed.",
            );
            if let Some(conflict) = E::conflict(problem) {
                tracing::info!(place, "{what}: lost a race for a unique key: {cause}");
                return conflict;
            }
            tracing::error!(place, "{what}: a unique key taken concurrently, and no conflict error declared: {cause}");
        }
        StorageFault::Defect => tracing::error!(place, "{what}: {cause}"),
    }
    E::internal(Problem::internal())
}
