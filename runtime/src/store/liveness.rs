//! When a PostgreSQL connection is checked (pinged) before use.
//!
//! A ping is a round trip to the server before the request's own first statement. sqlx's default
//! pings every connection on every acquire, which a busy server pays on every request (see
//! BENCHMARKS.md). The pool pings instead only the connections that can have died unseen, as
//! HikariCP does (its `aliveBypassWindowMs`, 500 ms by default):
//!
//! - one idle for [`IDLE_BEFORE_PING`] or longer (a server restart, an idle timeout on the
//!   server or a firewall closes idle connections; a busy connection was answering a moment ago);
//! - every connection for [`DOUBT_FOR`] after any storage error said a connection was lost (an
//!   I/O error, a TLS or protocol error, the server ending the session): a restart or a
//!   failover ends all of them at once.
//!
//! So when the server closes connections that were busy a moment ago, the requests that draw
//! them before the first failure is seen fail (503 with `Retry-After`, nothing changed), and the
//! pool is checked from then on. Beside that, a connection returned inside a transaction is
//! pinged and closed if it fails (one that died in use), and a transaction whose `BEGIN` fails
//! on a lost connection is begun once more, on a checked one.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A connection idle at least this long is pinged before its next use.
pub const IDLE_BEFORE_PING: Duration = Duration::from_millis(500);

/// How long after a lost connection every connection is pinged before use.
pub const DOUBT_FOR: Duration = Duration::from_secs(10);

/// Until when (in [`elapsed_ms`]) every connection is pinged.
static DOUBT_UNTIL: AtomicU64 = AtomicU64::new(0);

/// Milliseconds since the first call, on the monotonic clock.
fn elapsed_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Records that a connection was lost (or unresponsive): every connection is pinged before use
/// for the next [`DOUBT_FOR`]. [`super::fault_kind::classify`] records every storage error that
/// says so, wherever it is classified (the fault reporter, a begin, a retry), so no path can miss
/// one.
pub fn connection_lost() {
    DOUBT_UNTIL.fetch_max(elapsed_ms() + DOUBT_FOR.as_millis() as u64, Ordering::Relaxed);
}

/// Whether a connection idle for `idle_for` is pinged before use.
pub fn ping_before_use(idle_for: Duration) -> bool {
    idle_for >= IDLE_BEFORE_PING || elapsed_ms() < DOUBT_UNTIL.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::fault_kind::{self, StorageFault, Unavailable, says_connection_lost};

    #[test]
    fn lost_connections_are_told_from_other_errors() {
        assert!(says_connection_lost(&sqlx::Error::Io(std::io::Error::other("reset"))));
        assert!(says_connection_lost(&sqlx::Error::Protocol("unexpected message".into())));
        assert!(!says_connection_lost(&sqlx::Error::PoolTimedOut));
        assert!(!says_connection_lost(&sqlx::Error::RowNotFound));
    }

    /// A busy connection is used as it is, one idle for long is checked, and after a lost
    /// connection every one is checked for a while. (The window is process-wide, so this test
    /// opens it last.)
    #[test]
    fn connections_are_pinged_when_idle_long_or_after_a_loss() {
        assert!(ping_before_use(IDLE_BEFORE_PING));
        assert!(ping_before_use(Duration::from_secs(600)));
        assert!(!says_connection_lost(&sqlx::Error::RowNotFound));
        assert_eq!(
            fault_kind::classify(&sqlx::Error::Io(std::io::Error::other("broken pipe"))),
            StorageFault::Unavailable(Unavailable::ConnectionLost)
        );
        assert!(ping_before_use(Duration::ZERO), "every connection while a loss is recent");
    }
}
