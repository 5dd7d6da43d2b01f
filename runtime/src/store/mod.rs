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
//!
//! On SQLite, every statement is planned once per connection, whatever values are bound to it
//! (see [`plans`]): a bound `LIMIT` no longer makes each execution parse and plan it again.

mod batch;
mod liveness;
mod pages;
mod plans;
mod sqlite_memory;
mod tx;
mod values;
use batch::*;
pub use pages::Select;
pub use tx::*;
pub use values::*;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result};
use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::Migrator;
use sqlx::{Any, AnyPool, Connection, Transaction};

/// Pool settings: how many connections, and how long a request waits for one before it is told
/// the database is unavailable (503) instead of hanging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Largest number of open connections; `None`: 1 on SQLite (one writer at a time), 16 on PostgreSQL.
    pub max_connections: Option<u32>,
    /// SQLite only: connections for read-only transactions beside the writer (WAL lets them read
    /// while it writes); `None`: 4.
    pub max_readers: Option<u32>,
    /// Longest wait for a connection (and for connecting).
    pub acquire_timeout: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings { max_connections: None, max_readers: None, acquire_timeout: Duration::from_secs(5) }
    }
}

/// Seconds a client is told to wait when the storage is unavailable.
pub const RETRY_AFTER_SECONDS: u64 = 5;

/// Whether `e` says the database is unavailable for now (worth a retry) rather than a defect:
/// see [`fault_kind`], which classifies every storage error in one place.
pub fn is_transient(e: &sqlx::Error) -> bool {
    matches!(fault_kind::classify(e), StorageFault::Unavailable(_))
}

/// Whether `cause` (any error value) is a transient storage error: a `sqlx::Error`, or an
/// `anyhow::Error` wrapping one, for which [`is_transient`] holds.
pub fn is_transient_cause(cause: &dyn std::any::Any) -> bool {
    matches!(fault_kind::classify_cause(cause), StorageFault::Unavailable(_))
}

pub mod fault_kind;
mod group;

pub use fault_kind::{StorageFault, Unavailable};

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
    /// Read-only transactions: on SQLite a pool of its own (`query_only` connections), on
    /// PostgreSQL the same pool as writes.
    readers: AnyPool,
    backend: Backend,
    /// Test hook: fail the next N audit writes (to prove operations fail closed).
    fail_audit: Arc<AtomicU32>,
    /// Tasks holding a transaction (see the module documentation).
    holders: Holders,
    /// The group commit's queue, started on first use ([`Store::insert_grouped`]).
    group: Arc<OnceLock<tokio::sync::mpsc::Sender<Grouped>>>,
    /// SQLite: the group commit of writing transactions.
    writer: group::Writer,
    /// How long a transaction waits to begin.
    acquire_timeout: Duration,
    /// Whether the database was last seen unavailable ([`Store::is_known_unavailable`]).
    unavailable: Arc<AtomicBool>,
    /// Rows to insert once the database answers again, started on first use
    /// ([`Store::insert_later`]).
    later: Arc<OnceLock<tokio::sync::mpsc::Sender<Grouped>>>,
    /// Totals of [`Store::page_versioned`], by filter and version, and the counts in flight.
    counts: pages::Counts,
}

/// The SQLite database in the data directory (platform tables and every service's own).
pub const DATABASE_FILE: &str = "specwright.db";

/// Begins a PostgreSQL transaction (with `statement`, else `BEGIN`) on a task of its own, so it
/// always completes. sqlx counts a PostgreSQL transaction only once the server has answered its
/// `BEGIN`, and rolls back only counted ones when a begin is abandoned: a request cancelled while
/// its `BEGIN` is in flight (its client gone, its time limit passed) would hand the connection
/// back inside a transaction the pool's clean-up cannot see, and its next user would run inside
/// it (a write in a leftover read-only transaction fails). On its own task the begin finishes,
/// and a transaction no one is left to take is dropped there, which rolls it back like any
/// other. SQLite needs none of this: its worker counts the transaction as it begins it, so the
/// pool's clean-up ([`pool_options`]) sees an abandoned one and closes that connection.
///
/// The whole begin (a connection, then its `BEGIN` answered) takes at most `within`, the
/// acquire timeout: a connection that went silent (a partition) fails the request in that time
/// as an unanswered ping would. A `BEGIN` that fails on a lost connection (one that died while
/// idle in the pool, which is used without a ping while it is fresh: see [`liveness`]) is tried
/// once more, on a connection the pool now checks first.
async fn begin_whole(
    pool: &AnyPool,
    statement: Option<&'static str>,
    within: Duration,
) -> Result<Transaction<'static, Any>, sqlx::Error> {
    let deadline = tokio::time::Instant::now() + within;
    let mut tries = 0;
    loop {
        tries += 1;
        let pool = pool.clone();
        let begin = tokio::spawn(async move {
            match statement {
                Some(statement) => pool.begin_with(statement).await,
                None => pool.begin().await,
            }
        });
        let Ok(joined) = tokio::time::timeout_at(deadline, begin).await else {
            return Err(sqlx::Error::PoolTimedOut);
        };
        match joined.map_err(|e| sqlx::Error::Io(std::io::Error::other(e)))? {
            Err(e) if tries == 1 && fault_kind::says_connection_lost(&e) => {
                liveness::connection_lost();
                tracing::info!("beginning a transaction again after a lost connection: {e}");
            }
            begun => return begun,
        }
    }
}

/// The options of a pool: its size, the acquire timeout, the clean-up of connections returned
/// inside a transaction, the pings before use (on PostgreSQL only where [`liveness`] says, on
/// SQLite none) and, on SQLite, the busy timeout and foreign keys (plus `query_only` for the
/// readers' pool, so a write in a read transaction fails instead of taking the write lock).
fn pool_options(backend: Backend, max: u32, acquire_timeout: Duration, read_only: bool) -> AnyPoolOptions {
    let options = AnyPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(acquire_timeout)
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
    let options = options.test_before_acquire(false);
    if backend != Backend::Sqlite {
        // A PostgreSQL connection is pinged before use only when it may have died unseen.
        return options.before_acquire(|conn, meta| {
            Box::pin(async move {
                if liveness::ping_before_use(meta.idle_for) {
                    conn.ping().await?;
                }
                Ok(true)
            })
        });
    }
    // An in-process SQLite connection does not go stale the way a network one does, so it is
    // never pinged (a round trip to its worker thread) before use.
    options.after_connect(move |conn, _| {
        Box::pin(async move {
            // WAL lets readers run beside the single writer; the busy timeout makes
            // writers queue instead of failing while another transaction commits.
            sqlx::query("PRAGMA busy_timeout = 10000").execute(&mut *conn).await?;
            sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await?;
            if read_only {
                sqlx::query("PRAGMA query_only = ON").execute(&mut *conn).await?;
            }
            Ok(())
        })
    })
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
        // SQLite allows one writer at a time, so one writing connection makes writers queue fairly
        // in the pool instead of spinning in SQLite's sleeping busy handler (which gave p99
        // latencies near a second under load); reads run on a pool of their own beside it.
        if backend == Backend::Sqlite {
            plans::register();
        }
        let max = settings.max_connections.unwrap_or(if backend == Backend::Sqlite { 1 } else { 16 }).max(1);
        let pool = pool_options(backend, max, settings.acquire_timeout, false)
            .connect(&url)
            .await
            .with_context(|| format!("connecting to the {backend:?} database"))?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
        }
        let readers = match backend {
            Backend::Sqlite => {
                let n = settings.max_readers.unwrap_or(4).max(1);
                pool_options(backend, n, settings.acquire_timeout, true)
                    .connect(&url)
                    .await
                    .with_context(|| format!("connecting to the {backend:?} database"))?
            }
            Backend::Postgres => pool.clone(),
        };
        let store = Store {
            pool,
            readers,
            backend,
            fail_audit: Arc::new(AtomicU32::new(0)),
            holders: Holders::default(),
            group: Arc::default(),
            writer: group::Writer::default(),
            acquire_timeout: settings.acquire_timeout,
            unavailable: Arc::default(),
            later: Arc::default(),
            counts: pages::Counts::default(),
        };
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
        self.readers.close().await;
    }

    /// Whether the database answers a query, waiting for a connection no longer than a request
    /// would (the pool's acquire timeout).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        let answered = sqlx::query("SELECT 1").execute(&self.pool).await.map(|_| ());
        self.observe(answered.as_ref().map(|_| ()));
        answered
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

    /// The readers' pool, for reads outside any transaction (on SQLite they never wait for the
    /// writer). Refuses, as [`Store::pool`] does, a task that holds a transaction.
    pub fn readers(&self) -> &AnyPool {
        self.refuse_nested();
        &self.readers
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

    /// What a `SELECT` in a writing transaction appends to read rows it is about to change, so no
    /// concurrent transaction changes them between the read and the write (a check of a version,
    /// a state or a balance, then an update): ` FOR UPDATE` on PostgreSQL, whose default
    /// `READ COMMITTED` would otherwise let two transactions read the same version and both
    /// write; nothing on SQLite, whose writing transaction holds the database's write lock from
    /// its start. Not for a read-only transaction, which cannot lock.
    pub fn for_update(&self) -> &'static str {
        match self.backend {
            Backend::Postgres => " FOR UPDATE",
            Backend::Sqlite => "",
        }
    }

    /// Starts a writing transaction. On SQLite it is a member of the group commit (see
    /// [`group`]): it waits its turn for the one writing connection, inside a transaction that
    /// took the write lock at once (`BEGIN IMMEDIATE`), and its commit is shared with the
    /// transactions that run while it waits for the disk. On PostgreSQL it is a transaction of
    /// its own.
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        self.refuse_nested();
        let started = std::time::Instant::now();
        let begun = match self.backend {
            Backend::Sqlite => self.writer.begin(&self.pool, self.acquire_timeout).await.map(Inner::Member),
            Backend::Postgres => begin_whole(&self.pool, None, self.acquire_timeout).await.map(Inner::Own),
        };
        self.opened(begun, started, false)
    }

    /// A transaction just begun (or not), its wait measured.
    fn opened(
        &self,
        begun: Result<Inner, sqlx::Error>,
        started: std::time::Instant,
        read_only: bool,
    ) -> Result<Tx, sqlx::Error> {
        let timed_out = matches!(begun, Err(sqlx::Error::PoolTimedOut));
        crate::metrics::transaction_wait(started.elapsed(), timed_out);
        self.observe(begun.as_ref().map(drop));
        Ok(Tx { inner: begun?, _holder: Holder::new(&self.holders), read_only })
    }

    /// Records what an attempt to reach the database found: unavailable after a transient
    /// failure, available after a success (any other failure says nothing about it).
    fn observe(&self, attempt: Result<(), &sqlx::Error>) {
        match attempt {
            Ok(()) => self.unavailable.store(false, Ordering::Relaxed),
            Err(e) if is_transient(e) => self.unavailable.store(true, Ordering::Relaxed),
            Err(_) => {}
        }
    }

    /// Whether the database was unavailable when last reached (a connection not acquired within
    /// the acquire timeout, a connection lost, a refusal), and has not been reached since. A
    /// request that only records its own failure then does not wait for it again: see
    /// [`Store::insert_later`].
    pub fn is_known_unavailable(&self) -> bool {
        self.unavailable.load(Ordering::Relaxed)
    }

    /// Queues `row` for `into` (as [`Store::insert_grouped`] takes them) and returns at once; one
    /// task inserts queued rows through the group commit, retrying while the database is
    /// unavailable, until it answers or the store closes. For rows that record a failure (the
    /// audit row of a request refused because the database is down): the request is answered
    /// without a second wait on the database, and the row is kept while the process runs. At most
    /// [`LATER_MAX`] rows wait; past that a row is dropped and logged.
    pub fn insert_later(&self, into: &'static str, row: Vec<Arg>) {
        let queue = self.later.get_or_init(|| {
            let (send, receive) = tokio::sync::mpsc::channel(LATER_MAX);
            tokio::spawn(insert_when_available(self.clone(), receive));
            send
        });
        let (done, _) = tokio::sync::oneshot::channel();
        match queue.try_send(Grouped { into, row, done }) {
            Ok(()) => crate::metrics::rows_waiting(1),
            Err(_) => {
                crate::metrics::rows_dropped();
                tracing::error!(table = into, "a row waiting for the database was dropped: {LATER_MAX} already wait");
            }
        }
    }

    /// The pool's connections: open, and idle among them.
    pub fn pool_size(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle())
    }

    /// Starts a read-only transaction: one consistent snapshot for all its statements, that never
    /// takes the write lock (on SQLite a connection of the readers' pool, which WAL lets read
    /// while the writer writes; on PostgreSQL `REPEATABLE READ READ ONLY`, since under the
    /// default `READ COMMITTED` each statement would see the commits made since the one before,
    /// and a page could disagree with its own total). A write inside it fails.
    pub async fn begin_read(&self) -> Result<Tx, sqlx::Error> {
        self.refuse_nested();
        let started = std::time::Instant::now();
        let begun = match self.backend {
            Backend::Sqlite => self.readers.begin().await,
            Backend::Postgres => {
                begin_whole(&self.pool, Some("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), self.acquire_timeout)
                    .await
            }
        }
        .map(Inner::Own);
        self.opened(begun, started, true)
    }

    /// The transaction an operation runs in: read-only when its spec says it changes nothing
    /// (every `GET`, and what the spec marks `read_only`), a writing one otherwise.
    pub async fn begin_for(&self, op: &support::Operation) -> Result<Tx, sqlx::Error> {
        match op.read_only {
            true => self.begin_read().await,
            false => self.begin().await,
        }
    }

    /// Inserts `row` into `into` (`table (column, …)`, the values in that order) in the next
    /// group commit and returns once it is durable (or has failed): concurrent callers share one
    /// transaction, a few multi-row statements and one sync to disk. For rows that need no
    /// transaction of their caller's, such as the audit rows of reads.
    pub async fn insert_grouped(&self, into: &'static str, row: Vec<Arg>) -> Result<(), sqlx::Error> {
        let queue = self.group.get_or_init(|| {
            let (send, receive) = tokio::sync::mpsc::channel(4 * QUEUE_MAX);
            tokio::spawn(group_commit(self.clone(), receive));
            send
        });
        let (done, outcome) = tokio::sync::oneshot::channel();
        let gone = || sqlx::Error::PoolClosed;
        queue.send(Grouped { into, row, done }).await.map_err(|_| gone())?;
        outcome.await.map_err(|_| gone())?
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A store on a fresh SQLite file with a table `grouped (id, note NOT NULL)`.
    pub(super) async fn store() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(None, dir.path()).await.unwrap();
        sqlx::query("CREATE TABLE grouped (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
            .execute(store.pool())
            .await
            .unwrap();
        (store, dir)
    }

    /// Concurrent writers share commits, every acknowledged row is stored, and the one row that
    /// cannot be written fails alone: the rest of its group still commits.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_group_commit_keeps_every_acknowledged_row_and_fails_only_the_bad_one() {
        let (store, _dir) = store().await;
        let writes: Vec<_> = (0..200)
            .map(|i| {
                let store = store.clone();
                // Row 100 breaks NOT NULL.
                let note = if i == 100 { None } else { Some(format!("row {i}")) };
                tokio::spawn(async move {
                    store.insert_grouped("grouped (id, note)", vec![Arg::Int(i), Arg::Text(note)]).await
                })
            })
            .collect();
        let mut failed = Vec::new();
        for (i, w) in writes.into_iter().enumerate() {
            if w.await.unwrap().is_err() {
                failed.push(i);
            }
        }
        assert_eq!(failed, vec![100]);
        let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM grouped").fetch_one(store.pool()).await.unwrap();
        assert_eq!(stored, 199);
    }

    /// Concurrent writing transactions share group commits: each `commit` returns once its row is
    /// visible to a new reader, one that fails (its statement refused, its transaction dropped)
    /// or is cancelled mid-way loses only its own changes, and none leaves the write lock held.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn grouped_transactions_keep_every_committed_change_and_lose_only_their_own_on_failure() {
        let (store, _dir) = store().await;
        let insert = "INSERT INTO grouped (id, note) VALUES ($1, $2)";
        let writes: Vec<_> = (0..200_i64)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut tx = store.begin().await?;
                    query(insert, &[Arg::Int(i), Arg::Text(Some(format!("row {i}")))]).execute(&mut *tx).await?;
                    // Row 100 then breaks NOT NULL: its transaction is dropped, never committed.
                    let second = if i == 100 { None } else { Some("again".to_string()) };
                    query(insert, &[Arg::Int(1000 + i), Arg::Text(second)]).execute(&mut *tx).await?;
                    tx.commit().await?;
                    // Committed means visible to a reader that starts now.
                    let mut read = store.begin_read().await?;
                    let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM grouped WHERE id IN ($1, $2)")
                        .bind(i)
                        .bind(1000 + i)
                        .fetch_one(&mut *read)
                        .await?;
                    Ok::<i64, sqlx::Error>(seen)
                })
            })
            .collect();
        // One more that is cancelled while it holds the connection, its row written.
        let cancelled = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.begin().await.unwrap();
                query(insert, &[Arg::Int(5000), Arg::Text(Some("cancelled".into()))]).execute(&mut *tx).await.unwrap();
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancelled.abort();
        let mut failed = Vec::new();
        for (i, w) in writes.into_iter().enumerate() {
            match w.await.unwrap() {
                Ok(seen) => assert_eq!(seen, 2, "row {i} committed but not visible"),
                Err(_) => failed.push(i),
            }
        }
        assert_eq!(failed, vec![100]);
        // Nothing holds the write lock now: a write outside the group gets through at once.
        let direct = sqlx::query("INSERT INTO grouped (id, note) VALUES (9999, 'direct')").execute(store.pool());
        tokio::time::timeout(Duration::from_secs(5), direct).await.expect("the write lock was released").unwrap();
        let ids: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM grouped ORDER BY id").fetch_all(store.pool()).await.unwrap();
        let expected: Vec<i64> =
            (0..200).chain((1000..1200).filter(|i| *i != 1100)).filter(|i| *i != 100).chain([9999]).collect();
        assert_eq!(ids, expected);
    }

    /// A lone transaction that is rolled back, or dropped, ends the group it opened: the next
    /// writer, in or out of the group, is not kept waiting.
    #[tokio::test]
    async fn a_writing_transaction_dropped_or_rolled_back_alone_releases_the_write_lock() {
        let (store, _dir) = store().await;
        let mut tx = store.begin().await.unwrap();
        sqlx::query("INSERT INTO grouped (id, note) VALUES (1, 'undone')").execute(&mut *tx).await.unwrap();
        tx.rollback().await.unwrap();
        let mut tx = store.begin().await.unwrap();
        sqlx::query("INSERT INTO grouped (id, note) VALUES (2, 'dropped')").execute(&mut *tx).await.unwrap();
        drop(tx);
        let direct = sqlx::query("INSERT INTO grouped (id, note) VALUES (3, 'kept')").execute(store.pool());
        tokio::time::timeout(Duration::from_secs(5), direct).await.expect("the write lock was released").unwrap();
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM grouped").fetch_all(store.pool()).await.unwrap();
        assert_eq!(ids, vec![3]);
    }

    /// A read-only transaction sees the data and cannot write; on SQLite it runs beside a writer
    /// that holds the write lock.
    #[tokio::test]
    async fn a_read_transaction_reads_beside_the_writer_and_refuses_writes() {
        let (store, _dir) = store().await;
        store.insert_grouped("grouped (id, note)", vec![Arg::Int(1), Arg::Text(Some("one".into()))]).await.unwrap();
        let writer = store.begin().await.unwrap();
        let reading = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tx = store.begin_read().await.unwrap();
                assert!(tx.is_read_only());
                let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM grouped").fetch_one(&mut *tx).await.unwrap();
                let refused = sqlx::query("INSERT INTO grouped (id, note) VALUES (2, 'two')").execute(&mut *tx).await;
                (n, refused.is_err())
            }
        });
        let (n, refused) = tokio::time::timeout(Duration::from_secs(5), reading).await.expect("not blocked").unwrap();
        assert_eq!((n, refused), (1, true));
        writer.rollback().await.unwrap();
    }
}
