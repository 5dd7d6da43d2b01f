//! Test harness: a real server on a loopback port with its own data directory, and helpers to
//! mint good and bad tokens.

#![allow(dead_code, reason = "each test binary uses a different subset of the harness")]

pub mod proxy;

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use runtime::keys::{Claims, SigningKeys};
use runtime::ratelimit::ShiftedClock;
use runtime::{Config, Platform};
use support::Operation;

/// A running server.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`
    pub base: String,
    /// Its state (config and keys).
    pub state: Platform,
    /// Its data directory (an empty one of its own when started [`TestServer::beside`] another).
    pub dir: tempfile::TempDir,
    /// The clock its rate limiter reads (the system clock unless a test moves it).
    pub rate_clock: Arc<ShiftedClock>,
    _db: Option<PgDatabase>,
}

/// Which storage backend a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite file in the data directory (the embedded default).
    Sqlite,
    /// A fresh database on the PostgreSQL server of `DATABASE_URL_TEST`.
    Postgres,
}

/// The PostgreSQL server tests use: `DATABASE_URL_TEST`, else the local default.
fn pg_admin_url() -> String {
    std::env::var("DATABASE_URL_TEST").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A throwaway PostgreSQL database, dropped when the server is.
pub struct PgDatabase {
    admin_url: String,
    name: String,
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let (url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop from a separate thread: Drop may run inside an async runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            rt.block_on(async {
                use sqlx::Connection;
                let mut c = sqlx::PgConnection::connect(&url).await.ok()?;
                sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                    .execute(&mut c)
                    .await
                    .ok()
            })
        })
        .join();
    }
}

/// A fresh database on the PostgreSQL server of `DATABASE_URL_TEST`: its URL, and the guard that
/// drops it. `None` (with a notice) when the server is unreachable; under `SPECWRIGHT_CI=1` that
/// fails instead.
pub async fn postgres_database() -> Option<(String, PgDatabase)> {
    let database = fresh_pg_database().await;
    if database.is_none() {
        assert!(
            std::env::var("SPECWRIGHT_CI").is_err(),
            "SPECWRIGHT_CI is set but PostgreSQL is unreachable at {}",
            pg_admin_url()
        );
        eprintln!("SKIPPED (PostgreSQL backend): no server at {}; .ci/run starts one", pg_admin_url());
    }
    database
}

async fn fresh_pg_database() -> Option<(String, PgDatabase)> {
    use sqlx::Connection;
    let admin_url = pg_admin_url();
    let mut c =
        match tokio::time::timeout(std::time::Duration::from_secs(3), sqlx::PgConnection::connect(&admin_url)).await {
            Ok(Ok(c)) => c,
            _ => return None,
        };
    let name = format!("specwright_test_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut c).await.ok()?;
    let base = admin_url.rsplit_once('/').map(|(b, _)| b.to_string()).unwrap_or(admin_url.clone());
    Some((format!("{base}/{name}"), PgDatabase { admin_url, name }))
}

impl TestServer {
    /// Starts a server on a free loopback port with the embedded defaults (SQLite).
    pub async fn start() -> TestServer {
        Self::start_on(Backend::Sqlite).await.expect("SQLite always works")
    }

    /// Starts a server on `backend`. `None` means PostgreSQL is unreachable and the test should
    /// skip (a notice is printed); under `SPECWRIGHT_CI=1` that is a failure instead.
    pub async fn start_on(backend: Backend) -> Option<TestServer> {
        Self::start_configured(backend, |_, _| {}).await
    }

    /// As [`TestServer::start_on`], with the platform's configuration and the services' settings
    /// adjusted by `configure` first.
    pub async fn start_configured(
        backend: Backend,
        configure: impl FnOnce(&mut Config, &mut specwright::Settings),
    ) -> Option<TestServer> {
        let dir = tempfile::tempdir().expect("temp dir");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let mut config = Config::new(addr, None, dir.path().to_path_buf());
        let mut db = None;
        if backend == Backend::Postgres {
            match fresh_pg_database().await {
                Some((url, guard)) => {
                    config.database_url = Some(url);
                    db = Some(guard);
                }
                None => {
                    assert!(
                        std::env::var("SPECWRIGHT_CI").is_err(),
                        "SPECWRIGHT_CI is set but PostgreSQL is unreachable at {}",
                        pg_admin_url()
                    );
                    eprintln!("SKIPPED (PostgreSQL backend): no server at {}; .ci/run starts one", pg_admin_url());
                    return None;
                }
            }
        }
        let mut settings = specwright::Settings::default();
        configure(&mut config, &mut settings);
        Some(Self::try_launch(listener, config, settings, dir, db).await.expect("the server starts"))
    }

    /// A second server over this one's data directory and database, as a restarted process or a
    /// second replica would be: its caches (signing keys, the vault's data keys) start empty. It
    /// has its own address, so its tokens come from its own [`TestServer::token_for`].
    pub async fn beside(&self) -> TestServer {
        self.try_beside().await.expect("a second server")
    }

    /// As [`TestServer::beside`], with the error that stopped it from starting.
    pub async fn try_beside(&self) -> anyhow::Result<TestServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let mut config = Config::new(addr, None, self.state.config.data_dir.clone());
        config.database_url = self.state.config.database_url.clone();
        // Its own `dir` stays empty: the data is the first server's, which outlives it.
        let own = tempfile::tempdir().expect("temp dir");
        Self::try_launch(listener, config, specwright::Settings::default(), own, None).await
    }

    async fn try_launch(
        listener: tokio::net::TcpListener,
        config: Config,
        settings: specwright::Settings,
        dir: tempfile::TempDir,
        db: Option<PgDatabase>,
    ) -> anyhow::Result<TestServer> {
        let addr = listener.local_addr()?;
        let rate_clock = Arc::new(ShiftedClock::default());
        let state = Platform::open_with_clock(config, rate_clock.clone()).await?;
        let app = specwright::app(&state, &settings).await?;
        let limits = state.config.http;
        tokio::spawn(async move {
            runtime::server::serve(listener, app, limits, std::future::pending()).await.expect("serve");
        });
        Ok(TestServer { base: format!("http://{addr}"), state, dir, rate_clock, _db: db })
    }

    /// Starts a fresh rate-limit minute for every token and client address. Both services limit
    /// each token by its plan (vault tokens: the `standard` plan; prospector tokens: Starter
    /// unless [`TestServer::team_token`]): a test that sends more in a minute with one token, or
    /// more unauthenticated requests, calls this rather than meet 429s by accident.
    pub fn next_rate_window(&self) {
        self.rate_clock.next_minute();
    }

    /// Creates `tenant` with `admin` as its first administrator.
    pub async fn tenant(&self, tenant: &str, admin: &str) {
        specwright::create_tenant(&self.state.store, tenant, admin).await.expect("create tenant");
    }

    /// A token for `sub` in `tenant` carrying `scope`, with rate-limit buckets of its own (the
    /// vault's `standard` plan; see [`TestServer::next_rate_window`]).
    pub fn token_for(&self, sub: &str, tenant: &str, scope: &str) -> String {
        let c = &self.state.config;
        self.state
            .keys
            .mint(&runtime::keys::claims(
                &c.issuer(),
                sub,
                tenant,
                scope,
                specwright::catalog().resources(c),
                600,
                None,
            ))
            .expect("mint")
    }

    /// A prospector token for `sub` in `tenant` on the Team plan (300 requests a minute, so
    /// functional tests are not throttled).
    pub fn team_token(&self, sub: &str, tenant: &str) -> String {
        let c = &self.state.config;
        self.state
            .keys
            .mint(&runtime::keys::claims(
                &c.issuer(),
                sub,
                tenant,
                "prospector",
                specwright::catalog().resources(c),
                600,
                Some("team".into()),
            ))
            .expect("mint")
    }

    /// Sends `method path` with a bearer token and an optional JSON body; returns status and body.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut rb = self
            .client()
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), self.url(path))
            .bearer_auth(token);
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(serde_json::Value::Null))
    }

    /// Claims for `scope`, valid for every resource of this server.
    pub fn claims(&self, scope: &str) -> Claims {
        let c = &self.state.config;
        runtime::keys::claims(&c.issuer(), "alice", "acme", scope, specwright::catalog().resources(c), 600, None)
    }

    /// A valid token carrying `scope`.
    pub fn token(&self, scope: &str) -> String {
        self.state.keys.mint(&self.claims(scope)).expect("mint")
    }

    /// A token with these claims, signed with the server's key.
    pub fn sign(&self, claims: &Claims) -> String {
        self.state.keys.mint(claims).expect("mint")
    }

    /// An HTTP client.
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::new()
    }

    /// `base + path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }
}

/// A key the server does not know.
pub fn foreign_keys() -> Arc<SigningKeys> {
    let dir = tempfile::tempdir().expect("temp dir");
    Arc::new(SigningKeys::load_or_create(dir.path()).expect("keys"))
}

/// An unsigned token (`alg: none`) with these claims.
pub fn unsigned(claims: &Claims) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).expect("claims"));
    format!("{header}.{body}.")
}

/// The operation's path with every `{param}` filled in.
pub fn concrete_path(op: &Operation) -> String {
    op.full_path.split('/').map(|seg| if seg.starts_with('{') { "x1" } else { seg }).collect::<Vec<_>>().join("/")
}

/// Builds a request for `op` at its concrete path.
pub fn request(client: &reqwest::Client, server: &TestServer, op: &Operation) -> reqwest::RequestBuilder {
    let method = reqwest::Method::from_bytes(op.method.as_str().as_bytes()).expect("method");
    let rb = client.request(method, server.url(&concrete_path(op)));
    if op.has_body { rb.header("content-type", "application/json").body("{}") } else { rb }
}

/// Every operation of both services.
pub fn all_operations() -> Vec<&'static Operation> {
    vault_api::vault::OPERATIONS.iter().chain(prospector_api::prospector::OPERATIONS.iter()).copied().collect()
}

/// Runs a test body on SQLite and on PostgreSQL: `on_both_backends!(name, |server| async { … })`.
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident, |$server:ident| $body:block) => {
        mod $name {
            use super::*;
            async fn run($server: common::TestServer) $body
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                run(common::TestServer::start_on(common::Backend::Sqlite).await.unwrap()).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                if let Some(s) = common::TestServer::start_on(common::Backend::Postgres).await {
                    run(s).await
                }
            }
        }
    };
    // The same, each server started by `$start(backend)` (a configured server).
    ($name:ident, $start:path, |$server:ident| $body:block) => {
        mod $name {
            use super::*;
            async fn run($server: common::TestServer) $body
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                run($start(common::Backend::Sqlite).await.unwrap()).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                if let Some(s) = $start(common::Backend::Postgres).await {
                    run(s).await
                }
            }
        }
    };
}

/// Registers a public client named `name` with the authorization server at `base` (a server's
/// public URL) over RFC 7591, as any client does; its `client_id`.
pub async fn register_client(base: &str, name: &str, redirect_uri: &str) -> String {
    let registered: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/oauth/register"))
        .json(&serde_json::json!({ "client_name": name, "redirect_uris": [redirect_uri] }))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("registration answer");
    registered["client_id"].as_str().expect("registered").to_string()
}
