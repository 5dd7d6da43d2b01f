//! Storage: one sqlx `AnyPool` over SQLite (the embedded default, a file in the data directory)
//! or PostgreSQL (when `DATABASE_URL` is a `postgres://` URL), with per-backend migrations
//! applied at start. Queries use `$N` placeholders, which both backends accept.
//!
//! Two rules keep one bad request from taking the database away from every other one:
//! - **No connection is acquired while the same task holds a transaction.** On a one-connection
//!   pool (SQLite) that waits for itself; anywhere it can exhaust the pool. A [`Tx`] registers its
//!   task, and [`Store::pool`] and [`Store::begin`] refuse (a panic the server answers as a 500
//!   at once, never a stall) when that task asks for another connection. Functions that run inside
//!   a transaction therefore take the transaction, never the store.
//! - **A connection that leaves a transaction in an unknown state is discarded.** After a failed
//!   statement or COMMIT (a full disk, a lost server), sqlx may keep counting a transaction the
//!   database already ended, and every later `BEGIN` on that connection fails. When a connection
//!   comes back to the pool still inside a transaction, its pending rollback is flushed and, if it
//!   is still not clean, it is closed; the pool opens a fresh one for the next request.
//!
//! And one rule keeps one request from breaking a statement for the requests after it:
//! - **An optional value is bound as [`Nullable`], never as a bare `Option`.** PostgreSQL prepares
//!   each statement once per connection with the parameter types of its first execution, and sqlx
//!   keeps it. A NULL typed differently from the values bound later breaks every later execution
//!   with a value ("incorrect binary data format in bind parameter N"): sqlx 0.9's `Any` driver
//!   sends the NULL of an `Option<f64>` as a `REAL` (f32), so a proposal without a bid made every
//!   later proposal with a bid fail on that connection. [`Nullable`] sends each NULL with the type
//!   of its values.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use sqlx::AnyConnection;
use sqlx::any::{AnyArguments, AnyPoolOptions, AnyRow, AnyTypeInfo, install_default_drivers};
use sqlx::encode::{Encode, IsNull};
use sqlx::error::BoxDynError;
use sqlx::migrate::Migrator;
use sqlx::types::Type;
use sqlx::{Any, AnyPool, Connection, Database, Transaction};

/// Where a query's arguments are encoded.
type ArgumentBuffer = <Any as Database>::ArgumentBuffer;

/// Pool settings: how many connections, and how long a request waits for one before it is told
/// the database is unavailable (503) instead of hanging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Largest number of open connections; `None`: 1 on SQLite (one writer at a time), 16 on PostgreSQL.
    pub max_connections: Option<u32>,
    /// Longest wait for a connection (and for connecting).
    pub acquire_timeout: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings { max_connections: None, acquire_timeout: Duration::from_secs(5) }
    }
}

/// Seconds a client is told to wait when the storage is unavailable.
pub const RETRY_AFTER_SECONDS: u64 = 5;

/// Whether `e` says the database is unreachable, full or overloaded for now (worth a retry),
/// rather than a defect: no connection within the acquire timeout, an I/O or TLS failure, a
/// SQLite `FULL`/`IOERR`/`CANTOPEN`/`BUSY`/`LOCKED`, a PostgreSQL connection exception (class 08),
/// insufficient resources (class 53, e.g. disk full) or a server shutting down (57P01-57P03).
pub fn is_transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            let code = db.code().map(|c| c.to_string()).unwrap_or_default();
            if db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>().is_some() {
                // PostgreSQL SQLSTATE.
                code.starts_with("08") || code.starts_with("53") || matches!(code.as_str(), "57P01" | "57P02" | "57P03")
            } else {
                // SQLite (extended) result codes; the low byte is the primary code.
                code.parse::<u32>().is_ok_and(|n| matches!(n & 0xff, 5 | 6 | 10 | 13 | 14))
            }
        }
        _ => false,
    }
}

/// Whether `cause` (any error value) is a transient storage error: a `sqlx::Error`, or an
/// `anyhow::Error` wrapping one, for which [`is_transient`] holds.
pub fn is_transient_cause(cause: &dyn std::any::Any) -> bool {
    cause.downcast_ref::<sqlx::Error>().is_some_and(is_transient)
        || cause.downcast_ref::<anyhow::Error>().and_then(|e| e.downcast_ref::<sqlx::Error>()).is_some_and(is_transient)
}

/// The tasks that hold a transaction now, with how many each holds.
type Holders = Arc<Mutex<HashMap<tokio::task::Id, usize>>>;

/// A transaction on the store. It derefs to the connection, so `&mut *tx` runs a query in it.
/// While it lives, its task may not acquire another connection from the store.
#[derive(Debug)]
pub struct Tx {
    inner: Transaction<'static, Any>,
    _holder: Holder,
}

impl Tx {
    /// Commits the transaction.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.inner.commit().await
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        self.inner.rollback().await
    }
}

impl std::ops::Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.inner
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.inner
    }
}

/// Marks the current task as holding a transaction until dropped.
#[derive(Debug)]
struct Holder {
    holders: Holders,
    task: Option<tokio::task::Id>,
}

impl Holder {
    fn new(holders: &Holders) -> Holder {
        let task = tokio::task::try_id();
        if let (Some(id), Ok(mut map)) = (task, holders.lock()) {
            *map.entry(id).or_insert(0) += 1;
        }
        Holder { holders: holders.clone(), task }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if let (Some(id), Ok(mut map)) = (self.task, self.holders.lock())
            && let Some(n) = map.get_mut(&id)
        {
            *n -= 1;
            if *n == 0 {
                map.remove(&id);
            }
        }
    }
}

/// Which database the store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite file (embedded default).
    Sqlite,
    /// PostgreSQL server.
    Postgres,
}

/// The database, shared by every request.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// Test hook: fail the next N audit writes (to prove operations fail closed).
    fail_audit: Arc<AtomicU32>,
    /// Tasks holding a transaction (see the module documentation).
    holders: Holders,
}

/// An optional value to bind: the value, or SQL `NULL` typed like the value (see the module
/// documentation). `query.bind(Nullable(input.bid_amount))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nullable<T>(pub Option<T>);

/// A type whose values a column holds, and how its NULL is typed on the wire.
pub trait Column: Type<Any> {
    /// Encodes the value.
    fn encode_value(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError>;
    /// Encodes SQL `NULL` with the type the values are sent with.
    fn encode_null(buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError>;
}

/// Types whose `None` sqlx already sends with the type of their values.
macro_rules! column_typed_by_sqlx {
    ($($t:ty),*) => {$(
        impl Column for $t {
            fn encode_value(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
                Encode::<Any>::encode_by_ref(self, buf)
            }
            fn encode_null(buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
                Encode::<Any>::encode_by_ref(&None::<$t>, buf)
            }
        }
    )*};
}
column_typed_by_sqlx!(i64, String, &str);

impl Column for f64 {
    fn encode_value(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        Encode::<Any>::encode_by_ref(self, buf)
    }
    /// sqlx 0.9's `Any` driver swaps the two float NULL kinds when it hands arguments to the
    /// backend (launchbadge/sqlx#4284): the NULL of an `f32` goes out as the `f64` NULL
    /// (`DOUBLE PRECISION`), the one an `f64` value has. `typed_nulls` in
    /// `tests/tests/every_operation.rs` checks this against PostgreSQL, so an sqlx that fixes the
    /// swap fails it instead of bringing the defect back.
    fn encode_null(buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        Encode::<Any>::encode_by_ref(&None::<f32>, buf)
    }
}

impl<T: Column> Type<Any> for Nullable<T> {
    fn type_info() -> AnyTypeInfo {
        T::type_info()
    }
}

impl<T: Column> Encode<'_, Any> for Nullable<T> {
    fn encode_by_ref(&self, buf: &mut ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        match &self.0 {
            Some(v) => v.encode_value(buf),
            None => T::encode_null(buf),
        }
    }
}

/// A value bound to a query whose filter is built at run time (see [`Store::page`]).
#[derive(Debug, Clone)]
pub enum Arg {
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text, or SQL `NULL`.
    Text(Option<String>),
}

fn bind_all<'q>(
    mut q: sqlx::query::Query<'q, Any, AnyArguments>,
    args: &'q [Arg],
) -> sqlx::query::Query<'q, Any, AnyArguments> {
    for a in args {
        q = match a {
            Arg::Int(i) => q.bind(*i),
            Arg::Real(f) => q.bind(*f),
            Arg::Text(t) => q.bind(Nullable(t.as_deref())),
        };
    }
    q
}

/// The SQLite database in the data directory (platform tables and every service's own).
pub const DATABASE_FILE: &str = "specwright.db";

/// Data directories of earlier releases kept the database in `vault.db`: it is renamed (with its
/// `-wal` and `-shm` files) the first time this release opens the directory, so nothing is lost.
fn adopt_legacy_file(data_dir: &Path, path: &Path) -> Result<()> {
    let legacy = data_dir.join("vault.db");
    if path.exists() || !legacy.exists() {
        return Ok(());
    }
    for suffix in ["-wal", "-shm"] {
        let side = data_dir.join(format!("vault.db{suffix}"));
        if side.exists() {
            std::fs::rename(&side, data_dir.join(format!("{DATABASE_FILE}{suffix}")))?;
        }
    }
    std::fs::rename(&legacy, path).with_context(|| format!("renaming {} to {}", legacy.display(), path.display()))
}

/// Now, in epoch milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Epoch milliseconds as a UTC timestamp.
pub fn to_time(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

impl Store {
    /// Opens `url`, or the SQLite file [`DATABASE_FILE`] in `data_dir` when `url` is `None`, and applies
    /// the migrations of its backend.
    pub async fn open(url: Option<&str>, data_dir: &Path) -> Result<Store> {
        Self::open_with(url, data_dir, PoolSettings::default()).await
    }

    /// As [`Store::open`], with these pool settings.
    pub async fn open_with(url: Option<&str>, data_dir: &Path, settings: PoolSettings) -> Result<Store> {
        install_default_drivers();
        let url = match url {
            Some(u) => u.to_string(),
            None => {
                std::fs::create_dir_all(data_dir)?;
                let path = data_dir.join(DATABASE_FILE);
                adopt_legacy_file(data_dir, &path)?;
                // Create the file owner-only; SQLite gives its -wal and -shm files the same mode.
                #[cfg(unix)]
                if !path.exists() {
                    use std::os::unix::fs::OpenOptionsExt;
                    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
                }
                format!("sqlite://{}?mode=rwc", path.display())
            }
        };
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            anyhow::bail!("DATABASE_URL must be a postgres:// or sqlite: URL");
        };
        // SQLite allows one writer at a time and every audited operation writes (its audit row), so one
        // connection makes requests queue fairly in the pool instead of spinning in SQLite's
        // sleeping busy handler (which gave p99 latencies near a second under load).
        let max = settings.max_connections.unwrap_or(if backend == Backend::Sqlite { 1 } else { 16 }).max(1);
        let mut options = AnyPoolOptions::new()
            .max_connections(max)
            .acquire_timeout(settings.acquire_timeout)
            // A connection back from a request still inside a transaction: flush the rollback
            // its dropped transaction queued; if it is still not clean (the database had already
            // ended the transaction, so the rollback failed), close it instead of reusing it.
            .after_release(|conn, _| {
                Box::pin(async move {
                    if !conn.is_in_transaction() {
                        return Ok(true);
                    }
                    conn.ping().await?;
                    if conn.is_in_transaction() {
                        tracing::warn!("closing a database connection left inside a failed transaction");
                        return Ok(false);
                    }
                    Ok(true)
                })
            });
        if backend == Backend::Sqlite {
            options = options.after_connect(|conn, _| {
                Box::pin(async move {
                    // WAL lets readers run beside the single writer; the busy timeout makes
                    // writers queue instead of failing while another transaction commits.
                    sqlx::query("PRAGMA busy_timeout = 10000").execute(&mut *conn).await?;
                    sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await?;
                    Ok(())
                })
            });
        }
        let pool = options.connect(&url).await.with_context(|| format!("connecting to the {backend:?} database"))?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
        }
        let store = Store { pool, backend, fail_audit: Arc::new(AtomicU32::new(0)), holders: Holders::default() };
        // The platform's own tables; each service applies its own when it opens (`Store::migrate`).
        store
            .migrate("platform", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres"))
            .await?;
        Ok(store)
    }

    /// Applies a service's own migrations (`sqlite` or `postgres`, by this store's backend), tracked
    /// in a table of their own (`_sqlx_migrations_<owner>`), so each service's versions are its own
    /// and never collide with the platform's or another service's.
    pub async fn migrate(&self, owner: &str, sqlite: Migrator, postgres: Migrator) -> Result<()> {
        anyhow::ensure!(
            !owner.is_empty() && owner.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "migration owner {owner:?}: lowercase letters, digits and _ only"
        );
        let mut migrator = match self.backend {
            Backend::Sqlite => sqlite,
            Backend::Postgres => postgres,
        };
        migrator.dangerous_set_table_name(format!("_sqlx_migrations_{owner}"));
        migrator.run(&self.pool).await.with_context(|| format!("applying the migrations of {owner}"))
    }

    /// Closes the pool once the connections in use come back (at shutdown: SQLite checkpoints
    /// its write-ahead log when the last connection closes).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Whether the database answers a query, waiting for a connection no longer than a request
    /// would (the pool's acquire timeout).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map(|_| ())
    }

    /// The connection pool, for a query outside any transaction.
    ///
    /// # Panics
    /// When the calling task holds a transaction of this store: acquiring a second connection
    /// there waits for itself on a one-connection pool. Pass the transaction instead.
    pub fn pool(&self) -> &AnyPool {
        self.refuse_nested();
        &self.pool
    }

    fn refuse_nested(&self) {
        let Some(id) = tokio::task::try_id() else { return };
        let holding = self.holders.lock().map(|m| m.contains_key(&id)).unwrap_or(false);
        assert!(
            !holding,
            "a database connection was requested by a task that holds a transaction; \
             functions running inside a transaction must take the transaction, not the store"
        );
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Starts a transaction. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`), so
    /// concurrent writers queue behind the busy timeout instead of failing on lock upgrade.
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        self.refuse_nested();
        let started = std::time::Instant::now();
        let begun = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        };
        let timed_out = matches!(begun, Err(sqlx::Error::PoolTimedOut));
        crate::metrics::transaction_wait(started.elapsed(), timed_out);
        Ok(Tx { inner: begun?, _holder: Holder::new(&self.holders) })
    }

    /// The pool's connections: open, and idle among them.
    pub fn pool_size(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle())
    }

    /// One page of `SELECT {columns} FROM {table} WHERE {filter} ORDER BY {order}`, and how many
    /// rows the filter matches over all pages. `filter` refers to `args` as `$1`, `$2`, ….
    pub async fn page(
        &self,
        columns: &str,
        table: &str,
        filter: &str,
        order: &str,
        args: &[Arg],
        paging: support::Paging,
    ) -> Result<(u64, Vec<AnyRow>), sqlx::Error> {
        use sqlx::Row;
        let count = format!("SELECT COUNT(*) FROM {table} WHERE {filter}");
        let total: i64 = bind_all(sqlx::query(sqlx::AssertSqlSafe(count)), args).fetch_one(self.pool()).await?.get(0);
        let n = args.len();
        let select =
            format!("SELECT {columns} FROM {table} WHERE {filter} ORDER BY {order} LIMIT ${} OFFSET ${}", n + 1, n + 2);
        let rows = bind_all(sqlx::query(sqlx::AssertSqlSafe(select)), args)
            .bind(i64::from(paging.per_page))
            .bind(paging.offset() as i64)
            .fetch_all(self.pool())
            .await?;
        Ok((total.max(0) as u64, rows))
    }

    /// Test hook: make the next `n` audit writes fail.
    pub fn fail_next_audit_writes(&self, n: u32) {
        self.fail_audit.store(n, Ordering::SeqCst);
    }

    /// Consumes one injected audit failure, if any is pending.
    pub fn take_audit_failure(&self) -> bool {
        self.fail_audit.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
    }
}
