//! Storage: one sqlx `AnyPool` over SQLite (the embedded default, a file in the data directory)
//! or PostgreSQL (when `DATABASE_URL` is a `postgres://` URL), with per-backend migrations
//! applied at start. Queries use `$N` placeholders, which both backends accept.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};
use sqlx::any::{AnyArguments, AnyPoolOptions, AnyRow, install_default_drivers};
use sqlx::{Any, AnyPool, Transaction};

/// A transaction on the store.
pub type Tx = Transaction<'static, Any>;

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
            Arg::Text(t) => q.bind(t.as_deref()),
        };
    }
    q
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
    /// Opens `url`, or the SQLite file `vault.db` in `data_dir` when `url` is `None`, and applies
    /// the migrations of its backend.
    pub async fn open(url: Option<&str>, data_dir: &Path) -> Result<Store> {
        install_default_drivers();
        let url = match url {
            Some(u) => u.to_string(),
            None => {
                std::fs::create_dir_all(data_dir)?;
                let path = data_dir.join("vault.db");
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
        // SQLite allows one writer at a time and every vault operation writes (its audit row), so one
        // connection makes requests queue fairly in the pool instead of spinning in SQLite's
        // sleeping busy handler (which gave p99 latencies near a second under load).
        let mut options = AnyPoolOptions::new().max_connections(if backend == Backend::Sqlite { 1 } else { 16 });
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
        match backend {
            Backend::Sqlite => {
                sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
                sqlx::migrate!("./migrations/sqlite").run(&pool).await.context("migrating the SQLite database")?;
            }
            Backend::Postgres => {
                sqlx::migrate!("./migrations/postgres")
                    .run(&pool)
                    .await
                    .context("migrating the PostgreSQL database")?;
            }
        }
        Ok(Store { pool, backend, fail_audit: Arc::new(AtomicU32::new(0)) })
    }

    /// The connection pool.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Starts a transaction. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`), so
    /// concurrent writers queue behind the busy timeout instead of failing on lock upgrade.
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
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
        paging: generated::support::Paging,
    ) -> Result<(u64, Vec<AnyRow>), sqlx::Error> {
        use sqlx::Row;
        let count = format!("SELECT COUNT(*) FROM {table} WHERE {filter}");
        let total: i64 = bind_all(sqlx::query(sqlx::AssertSqlSafe(count)), args).fetch_one(&self.pool).await?.get(0);
        let n = args.len();
        let select =
            format!("SELECT {columns} FROM {table} WHERE {filter} ORDER BY {order} LIMIT ${} OFFSET ${}", n + 1, n + 2);
        let rows = bind_all(sqlx::query(sqlx::AssertSqlSafe(select)), args)
            .bind(i64::from(paging.per_page))
            .bind(paging.offset() as i64)
            .fetch_all(&self.pool)
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
