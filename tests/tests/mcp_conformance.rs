//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, npm, pinned in
//! `.ci/package.json`) against the vault's MCP endpoint and the notes service's, each served as
//! its binary serves it. `.ci/run` installs it with the Node it needs and names the command in
//! `SPECWRIGHT_MCP_CONFORMANCE`; elsewhere the tests say they skipped.
//!
//! The suite's client sends no credentials, so each endpoint is reached through a proxy that adds
//! a valid Bearer token (as an operator's authenticating proxy would) and keeps `Host` and
//! `Origin` as sent: the DNS-rebinding scenario's forged `Host` reaches the server unchanged. What
//! the suite checks that these services do not offer (its own fixture tools, resources, prompts,
//! sampling, elicitation, logging, completions, sessions with server-to-client streams) is listed
//! in `tests/mcp_conformance/*.yaml`, each entry with the reason; the suite fails on a listed
//! scenario that passes as much as on an unlisted one that fails.

mod common;

use axum::http::{HeaderMap, HeaderValue};

/// Runs the suite against `url` with the expected failures in `baseline`.
async fn suite(command: String, url: String, baseline: &str) -> (bool, String) {
    let baseline = xtask::workspace_root().join("tests/mcp_conformance").join(baseline).display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().display().to_string();
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(&command)
            .args([
                "server",
                "--suite",
                "all",
                "--url",
                &url,
                "--expected-failures",
                &baseline,
                "--output-dir",
                &out_dir,
            ])
            .output()
            .expect("run the conformance suite");
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    })
    .await
    .unwrap()
}

/// `Authorization: Bearer` with each of `tokens`, for the proxy to use in turn: a run of the suite
/// is more requests than one token's plan allows a minute.
fn bearers(tokens: impl IntoIterator<Item = String>) -> Vec<HeaderMap> {
    tokens
        .into_iter()
        .map(|token| {
            let mut added = HeaderMap::new();
            added.insert("authorization", HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
            added
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vault_mcp_endpoint_passes_the_official_conformance_suite() {
    let Some(command) = tests::tool("SPECWRIGHT_MCP_CONFORMANCE") else { return };
    let proxy = common::proxy::Proxy::bind("").await;
    let public = proxy.origin.clone();
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |c, _| c.public_url = public.clone())
        .await
        .unwrap();
    server.tenant("acme", "alice").await;
    proxy.start_adding(&server.base, bearers((0..4).map(|_| server.token_for("alice", "acme", "vault:admin"))));
    let (ok, out) = suite(command, format!("{public}/api/mcp"), "vault.yaml").await;
    assert!(ok, "the conformance suite failed against the vault:\n{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notes_mcp_endpoint_passes_the_official_conformance_suite() {
    let Some(command) = tests::tool("SPECWRIGHT_MCP_CONFORMANCE") else { return };
    let proxy = common::proxy::Proxy::bind("").await;
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config =
        runtime::Config::new(listener.local_addr().unwrap(), Some(proxy.origin.clone()), dir.path().to_path_buf());
    let platform = runtime::Platform::open(config.clone()).await.unwrap();
    let app = notes::server(&platform).await.unwrap();
    let backend = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { platform.run(listener, app).await });
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir).unwrap();
    let audience = runtime::Catalog::new([&notes::SERVICE]).resources(&config);
    let tokens = (0..4).map(|_| {
        let claims =
            runtime::keys::claims(&config.issuer(), "ann", "acme", "notes:write", audience.clone(), 3600, None);
        keys.mint(&claims).unwrap()
    });
    let public = proxy.origin.clone();
    proxy.start_adding(&backend, bearers(tokens));
    let (ok, out) = suite(command, format!("{public}/api/mcp"), "notes.yaml").await;
    assert!(ok, "the conformance suite failed against notes:\n{out}");
}
