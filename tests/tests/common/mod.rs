//! Test harness: a real server on a loopback port with its own data directory, and helpers to
//! mint good and bad tokens.

#![allow(dead_code, reason = "each test binary uses a different subset of the harness")]

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use generated::support::Operation;
use runtime::keys::{Claims, SigningKeys};
use runtime::{AppState, Config};

/// A running server.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`
    pub base: String,
    /// Its state (config and keys).
    pub state: AppState,
    _dir: tempfile::TempDir,
}

impl TestServer {
    /// Starts a server on a free loopback port.
    pub async fn start() -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let config = Config::new(addr, None, dir.path().to_path_buf());
        let state = AppState::open(config).await.expect("open state");
        let app = runtime::build(&state);
        tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serve");
        });
        TestServer { base: format!("http://{addr}"), state, _dir: dir }
    }

    /// Claims for `scope`, valid for every resource of this server.
    pub fn claims(&self, scope: &str) -> Claims {
        let c = &self.state.config;
        runtime::keys::claims(&c.issuer(), "alice", "acme", scope, c.all_resources(), 600, None)
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
    generated::vault::OPERATIONS.iter().chain(generated::prospector::OPERATIONS.iter()).copied().collect()
}
