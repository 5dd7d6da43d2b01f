//! The notes service's binary as a test runs it: on a free port, with a data directory of its own.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use tests::process::Process;

/// The notes binary, built in this package from its own source (`notes-server` in Cargo.toml).
pub const BIN: &str = env!("CARGO_BIN_EXE_notes-server");

pub struct Server {
    /// Stopped when the server is dropped, failing the test if it panicked anywhere.
    process: Process,
    /// `http://127.0.0.1:<port>`
    pub base: String,
    /// Where the server's Prometheus metrics are, when it serves them.
    metrics: Option<String>,
    /// Its configuration as a client sees it (address and data directory).
    pub config: runtime::Config,
    database_url: Option<String>,
    _dir: Arc<tempfile::TempDir>,
}

impl Server {
    pub async fn start(database_url: Option<&str>) -> Server {
        Server::start_with(database_url, false).await
    }

    /// Starts the binary, serving metrics on a port of their own when `metrics` is set.
    pub async fn start_with(database_url: Option<&str>, metrics: bool) -> Server {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let metrics_port =
            metrics.then(|| std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port());
        Server::launch(dir, port, database_url, metrics_port).await
    }

    /// Starts the binary with its data directory in `dir` (for example a small file system).
    pub async fn start_in(dir: tempfile::TempDir, database_url: Option<&str>) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Server::launch(Arc::new(dir), port, database_url, None).await
    }

    /// A second replica: another process on its own port over the same data directory (the same
    /// signing keys) and database.
    pub async fn replica(&self) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Server::launch(self._dir.clone(), port, self.database_url.as_deref(), None).await
    }

    /// Kills the server at once (SIGKILL: no shutdown, no final checkpoint) and starts it again
    /// on the same port, data directory and database.
    pub async fn kill_and_restart(mut self) -> Server {
        let _ = self.process.child.kill();
        let port = self.config.addr.port();
        let metrics_port = self.metrics.as_deref().and_then(|m| m.split(':').nth(2)?.split('/').next()?.parse().ok());
        Server::launch(self._dir.clone(), port, self.database_url.as_deref(), metrics_port).await
    }

    async fn launch(
        dir: Arc<tempfile::TempDir>,
        port: u16,
        database_url: Option<&str>,
        metrics_port: Option<u16>,
    ) -> Server {
        let addr = format!("127.0.0.1:{port}");
        let metrics = metrics_port.map(|port| format!("http://127.0.0.1:{port}/metrics"));
        let mut cmd = Command::new(BIN);
        match metrics_port {
            Some(port) => cmd.env("NOTES_METRICS_ADDR", format!("127.0.0.1:{port}")),
            None => cmd.env_remove("NOTES_METRICS_ADDR"),
        };
        cmd.env("NOTES_ADDR", &addr)
            .env("NOTES_DATA_DIR", dir.path())
            // Webhook receivers of the tests listen on loopback, and retries come quickly.
            .env("NOTES_WEBHOOKS_ALLOW_PRIVATE", "1")
            .env("NOTES_WEBHOOKS_RETRY_SECONDS", "1,1,1,1,1,1,1,1,1,1,1,1")
            .env("NOTES_WEBHOOKS_TIMEOUT_SECONDS", "2")
            .env_remove("NOTES_PUBLIC_URL")
            .env_remove("REDIS_URL");
        match database_url {
            Some(url) => cmd.env("DATABASE_URL", url),
            None => cmd.env_remove("DATABASE_URL"),
        };
        let process = Process::start(cmd, &addr, &dir.path().join("server.log")).await;
        let base = format!("http://{addr}");
        let config = runtime::Config::new(addr.parse().unwrap(), None, dir.path().to_path_buf());
        Server { process, base, metrics, config, database_url: database_url.map(str::to_string), _dir: dir }
    }

    /// A token of the server's own signing key for `tenant`, with `scope`, for both resources.
    pub fn token(&self, tenant: &str, scope: &str) -> String {
        let keys = runtime::keys::SigningKeys::load_or_create(&self.config.data_dir).unwrap();
        let audience = runtime::Catalog::new([&notes::SERVICE]).resources(&self.config);
        keys.mint(&runtime::keys::claims(&self.config.issuer(), "ann", tenant, scope, audience, 600, None)).unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The server's metrics, as Prometheus scrapes them.
    pub async fn scrape(&self) -> String {
        let resp = reqwest::get(self.metrics.as_deref().expect("started with metrics")).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/plain; version=0.0.4; charset=utf-8");
        resp.text().await.unwrap()
    }
}

/// The PostgreSQL database of the backend tests (`DATABASE_URL_TEST`). Without it, says that the
/// suite `what` is skipped, unless under CI, which runs every suite.
pub fn postgres(what: &str) -> Option<String> {
    match std::env::var("DATABASE_URL_TEST") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("SPECWRIGHT_CI").is_some() => panic!("CI runs every suite: set DATABASE_URL_TEST"),
        _ => {
            eprintln!("SKIPPED: {what} on PostgreSQL: DATABASE_URL_TEST is not set");
            None
        }
    }
}

/// One JSON-RPC message to the MCP endpoint with `token` (protocol revision 2025-06-18).
pub async fn mcp(s: &Server, token: &str, body: serde_json::Value) -> reqwest::Response {
    mcp_of(s, token, "2025-06-18", body).await
}

/// One JSON-RPC message to the MCP endpoint with `token`, of protocol `revision` (stateless).
pub async fn mcp_of(s: &Server, token: &str, revision: &str, body: serde_json::Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(s.url("/api/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", revision)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Two tests of `body` (an `async fn(Option<&str>)` taking the PostgreSQL URL): `$sqlite` on the
/// embedded database, and `$postgres` on `DATABASE_URL_TEST`, which says it skipped `$what`
/// without one (and fails under CI).
#[macro_export]
macro_rules! on_both_backends {
    ($body:ident: $sqlite:ident, $postgres:ident, $what:literal) => {
        #[tokio::test]
        async fn $sqlite() {
            $body(None).await;
        }

        #[tokio::test]
        async fn $postgres() {
            if let Some(url) = notes_server::postgres($what) {
                $body(Some(&url)).await;
            }
        }
    };
}

/// Polls an export's status at `url` until it is no longer pending; its last status.
pub async fn export_finished(client: &reqwest::Client, url: &str, token: &str) -> serde_json::Value {
    for _ in 0..200 {
        let status: serde_json::Value = client.get(url).bearer_auth(token).send().await.unwrap().json().await.unwrap();
        if status["state"] != "pending" {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the export at {url} stayed pending");
}

/// The database of a notes server, as a test reaches it beside the server.
pub async fn pool(s: &Server, database_url: Option<&str>) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let url = database_url.map_or_else(
        || format!("sqlite://{}", s.config.data_dir.join(runtime::store::DATABASE_FILE).display()),
        str::to_string,
    );
    sqlx::AnyPool::connect(&url).await.unwrap()
}
