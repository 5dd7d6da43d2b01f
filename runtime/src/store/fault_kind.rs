//! What a storage error means to the client, decided in one place: the database unavailable for
//! now (503 with `Retry-After`: retrying later can succeed), a write that lost a race for a unique
//! key (the operation's conflict, 409), or a defect (500).
//!
//! PostgreSQL errors are classified by SQLSTATE class, SQLite errors by primary result code, and
//! errors that never reached a database by the driver's error kind. A kind missing from a list of
//! messages is the mistake this module exists to prevent: a database refusing connections during
//! a restore answered 500 while a dropped connection answered 503.

/// What a storage error means to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFault {
    /// The database is unreachable, refusing work or out of a resource for now: 503, retry.
    Unavailable(Unavailable),
    /// A write would have duplicated a unique key that a concurrent request wrote first.
    UniqueConflict,
    /// Anything else: a defect, answered 500.
    Defect,
}

/// Why the database is unavailable for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// No connection within the acquire timeout, or the pool is closing.
    NoConnection,
    /// The connection failed or was lost: I/O, TLS, a refused or reset connection (SQLSTATE class
    /// 08), the SQLite worker gone.
    ConnectionLost,
    /// The server is shutting down, restarting, or an operator cancelled the work (class 57:
    /// 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 57014 cancelled).
    OperatorIntervention,
    /// The database does not accept connections or the object is not ready (class 55: 55000 with
    /// `ALLOW_CONNECTIONS false` or during a restore, 55P03 lock not available, 55006 in use).
    NotReady,
    /// Out of a resource: too many connections (53300), disk full (53100), memory (53200); on
    /// SQLite `FULL` and `NOMEM`.
    InsufficientResources,
    /// The server accepts only reads (25006: a standby after a failover, or
    /// `default_transaction_read_only`).
    ReadOnly,
    /// The transaction lost to a concurrent one and may succeed if retried (40001 serialization
    /// failure, 40P01 deadlock); on SQLite `BUSY` and `LOCKED`.
    Contention,
    /// The storage itself failed to read or write (58000, 58030; SQLite `IOERR`, `CANTOPEN`).
    StorageIo,
}

impl Unavailable {
    /// A short name for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Unavailable::NoConnection => "no_connection",
            Unavailable::ConnectionLost => "connection_lost",
            Unavailable::OperatorIntervention => "operator_intervention",
            Unavailable::NotReady => "not_ready",
            Unavailable::InsufficientResources => "insufficient_resources",
            Unavailable::ReadOnly => "read_only",
            Unavailable::Contention => "contention",
            Unavailable::StorageIo => "storage_io",
        }
    }
}

/// The database an error code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeSource {
    /// A PostgreSQL SQLSTATE (five characters).
    Postgres,
    /// A SQLite extended result code (a decimal number).
    Sqlite,
}

/// Classifies a database's own error code: a PostgreSQL SQLSTATE or a SQLite extended result code.
pub fn classify_code(source: CodeSource, code: &str) -> StorageFault {
    use StorageFault::{Defect, Unavailable as U, UniqueConflict};
    use Unavailable::*;
    match source {
        CodeSource::Postgres => match code {
            "23505" => UniqueConflict,
            "25006" => U(ReadOnly),
            "40001" | "40P01" => U(Contention),
            "58000" | "58030" => U(StorageIo),
            _ => match code.get(..2) {
                Some("08") => U(ConnectionLost),
                Some("53") => U(InsufficientResources),
                Some("55") => U(NotReady),
                Some("57") => U(OperatorIntervention),
                _ => Defect,
            },
        },
        CodeSource::Sqlite => {
            let Ok(extended) = code.parse::<u32>() else { return Defect };
            // SQLITE_CONSTRAINT_PRIMARYKEY and SQLITE_CONSTRAINT_UNIQUE.
            if matches!(extended, 1555 | 2067) {
                return UniqueConflict;
            }
            // The low byte is the primary result code.
            match extended & 0xff {
                5 | 6 => U(Contention),             // BUSY, LOCKED
                7 | 13 => U(InsufficientResources), // NOMEM, FULL
                10 | 14 => U(StorageIo),            // IOERR, CANTOPEN
                _ => Defect,
            }
        }
    }
}

/// Classifies a storage error. One that says a connection was lost is also recorded for the
/// pool, which then checks its connections before use for a while (see [`super::liveness`]).
pub fn classify(e: &sqlx::Error) -> StorageFault {
    if says_connection_lost(e) {
        super::liveness::connection_lost();
    }
    classify_only(e)
}

/// Whether `e` says the connection it came from may be gone: lost (I/O, TLS, SQLSTATE class 08),
/// its session ended by the server (class 57: shutdown, an administrator's termination), or a
/// reply the driver could not read (the stream is then out of step).
pub fn says_connection_lost(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Protocol(_))
        || matches!(
            classify_only(e),
            StorageFault::Unavailable(Unavailable::ConnectionLost | Unavailable::OperatorIntervention)
        )
}

fn classify_only(e: &sqlx::Error) -> StorageFault {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => StorageFault::Unavailable(Unavailable::NoConnection),
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::WorkerCrashed => {
            StorageFault::Unavailable(Unavailable::ConnectionLost)
        }
        sqlx::Error::Database(db) => {
            let source = match db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
                Some(_) => CodeSource::Postgres,
                None => CodeSource::Sqlite,
            };
            match db.code() {
                Some(code) => classify_code(source, &code),
                None => StorageFault::Defect,
            }
        }
        _ => StorageFault::Defect,
    }
}

/// Classifies any error value: a `sqlx::Error`, or an `anyhow::Error` wrapping one; anything
/// else is a defect.
pub fn classify_cause(cause: &dyn std::any::Any) -> StorageFault {
    let sqlx = cause
        .downcast_ref::<sqlx::Error>()
        .or_else(|| cause.downcast_ref::<anyhow::Error>().and_then(|e| e.downcast_ref::<sqlx::Error>()));
    sqlx.map_or(StorageFault::Defect, classify)
}

#[cfg(test)]
mod tests {
    use super::*;
    use StorageFault::{Defect, Unavailable as U, UniqueConflict};
    use Unavailable::*;

    #[test]
    fn every_postgresql_kind_is_classified_by_its_sqlstate() {
        let cases = [
            ("23505", UniqueConflict),
            ("08000", U(ConnectionLost)),
            ("08001", U(ConnectionLost)),
            ("08006", U(ConnectionLost)),
            ("08P01", U(ConnectionLost)),
            ("53000", U(InsufficientResources)),
            ("53100", U(InsufficientResources)), // disk full
            ("53200", U(InsufficientResources)), // out of memory
            ("53300", U(InsufficientResources)), // too many connections
            ("55000", U(NotReady)),              // database not accepting connections
            ("55006", U(NotReady)),
            ("55P03", U(NotReady)),
            ("57014", U(OperatorIntervention)),
            ("57P01", U(OperatorIntervention)),
            ("57P02", U(OperatorIntervention)),
            ("57P03", U(OperatorIntervention)),
            ("25006", U(ReadOnly)),
            ("40001", U(Contention)),
            ("40P01", U(Contention)),
            ("58000", U(StorageIo)),
            ("58030", U(StorageIo)),
            // Defects: a wrong statement, a foreign key or check broken, a type mismatch.
            ("42601", Defect),
            ("42P01", Defect),
            ("23503", Defect),
            ("23514", Defect),
            ("22P02", Defect),
            ("25P02", Defect),
            ("XX000", Defect),
        ];
        for (code, expected) in cases {
            assert_eq!(classify_code(CodeSource::Postgres, code), expected, "SQLSTATE {code}");
        }
    }

    #[test]
    fn every_sqlite_kind_is_classified_by_its_result_code() {
        let cases = [
            ("1555", UniqueConflict), // SQLITE_CONSTRAINT_PRIMARYKEY
            ("2067", UniqueConflict), // SQLITE_CONSTRAINT_UNIQUE
            ("5", U(Contention)),     // BUSY
            ("517", U(Contention)),   // BUSY_SNAPSHOT
            ("6", U(Contention)),     // LOCKED
            ("7", U(InsufficientResources)),
            ("13", U(InsufficientResources)), // FULL
            ("10", U(StorageIo)),
            ("266", U(StorageIo)), // IOERR_READ
            ("14", U(StorageIo)),
            ("787", Defect),  // SQLITE_CONSTRAINT_FOREIGNKEY
            ("275", Defect),  // SQLITE_CONSTRAINT_CHECK
            ("1299", Defect), // SQLITE_CONSTRAINT_NOTNULL
            ("1", Defect),
            ("8", Defect), // READONLY: a write on a query_only connection is a defect
            ("11", Defect),
            ("not a number", Defect),
        ];
        for (code, expected) in cases {
            assert_eq!(classify_code(CodeSource::Sqlite, code), expected, "SQLite result code {code}");
        }
    }

    #[test]
    fn errors_that_never_reached_a_database_are_classified_by_kind() {
        assert_eq!(classify(&sqlx::Error::PoolTimedOut), U(NoConnection));
        assert_eq!(classify(&sqlx::Error::PoolClosed), U(NoConnection));
        assert_eq!(classify(&sqlx::Error::Io(std::io::Error::other("reset"))), U(ConnectionLost));
        assert_eq!(classify(&sqlx::Error::WorkerCrashed), U(ConnectionLost));
        assert_eq!(classify(&sqlx::Error::Protocol("unexpected".into())), Defect);
        assert_eq!(classify(&sqlx::Error::RowNotFound), Defect);
        let wrapped = anyhow::Error::from(sqlx::Error::PoolTimedOut).context("loading");
        assert_eq!(classify_cause(&wrapped), U(NoConnection));
        assert_eq!(classify_cause(&"a message"), Defect);
    }
}
