//! End to end with MCP clients no one here wrote: the official Python SDK (`mcp` on PyPI) and the
//! MCP Inspector CLI (npm). `.ci/run` installs both, pinned, and points at them with
//! `SPECWRIGHT_MCP_PYTHON` and `SPECWRIGHT_MCP_INSPECTOR`; elsewhere the tests say they skipped.

mod common;

use std::process::Command;

async fn run(cmd: Vec<String>) -> (bool, String) {
    tokio::task::spawn_blocking(move || {
        let out = Command::new(&cmd[0]).args(&cmd[1..]).output().expect("run client");
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    })
    .await
    .unwrap()
}

async fn vault() -> (common::TestServer, String, String, String) {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let write = server.token_for("alice", "acme", "vault:write");
    let read = server.token_for("alice", "acme", "vault:read");
    let url = server.url("/api/mcp");
    (server, url, write, read)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_lists_stores_leases_redeems_and_gets_our_403() {
    let Some(python) = tests::tool("SPECWRIGHT_MCP_PYTHON") else {
        return;
    };
    let (_server, url, write, read) = vault().await;
    let script = xtask::workspace_root().join("tests/mcp_clients/python_client.py").display().to_string();
    // `auto` negotiates 2026-07-28 through server/discover; `legacy` forces the initialize handshake.
    for mode in ["auto", "legacy"] {
        let (ok, out) =
            run(vec![python.clone(), script.clone(), url.clone(), write.clone(), read.clone(), mode.into()]).await;
        assert!(ok, "python client ({mode}) failed:\n{out}");
        assert!(out.contains("\"forbidden_code\": -31403"), "{mode}: {out}");
    }
}

/// No token made beforehand: the SDK's OAuth provider discovers our authorization server,
/// registers, and a headless user signs in and consents (vault:read); a write tool then steps up
/// to `vault:read vault:write` within the call (consent shown again); a second connection over
/// the same token storage authorizes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_completes_the_oauth_flow_with_step_up_and_token_reuse() {
    let Some(python) = tests::tool("SPECWRIGHT_MCP_PYTHON") else {
        return;
    };
    let server = common::TestServer::start().await;
    let url = server.url("/api/mcp");
    python_oauth_flow(&python, &server, &url).await;
}

/// The same flow through a reverse proxy that strips `/sw`: the server's public URL is
/// `http://127.0.0.1:<proxy port>/sw`, so discovery (RFC 9728, then RFC 8414 at
/// `/.well-known/oauth-authorization-server/sw`), the sign-in and consent forms, their redirects
/// and the browser's `Origin` all go through the prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_completes_the_oauth_flow_through_a_path_stripping_proxy() {
    let Some(python) = tests::tool("SPECWRIGHT_MCP_PYTHON") else {
        return;
    };
    let (server, public) = common::proxy::serve_behind("/sw", |_| {}).await;
    python_oauth_flow(&python, &server, &format!("{public}/api/mcp")).await;
}

/// The same behind the common ingress rule: only `/sw/…` is routed, so the RFC 8414 and OpenID
/// path-inserted locations at the host's root answer 404 and the SDK finds the authorization
/// server's metadata at `/sw/.well-known/openid-configuration` (OpenID Connect Discovery).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_completes_the_oauth_flow_when_only_the_prefix_is_routed() {
    let Some(python) = tests::tool("SPECWRIGHT_MCP_PYTHON") else {
        return;
    };
    let (server, public) = common::proxy::serve_behind_prefix_only("/sw", |_| {}).await;
    let origin = public.trim_end_matches("/sw");
    let root = reqwest::get(format!("{origin}/.well-known/oauth-authorization-server/sw")).await.unwrap();
    assert_eq!(root.status(), 404, "the host's root is not routed here");
    python_oauth_flow(&python, &server, &format!("{public}/api/mcp")).await;
}

/// The official TypeScript client 2.x (`@modelcontextprotocol/client`) behind a proxy that
/// routes only `/sw`: discovery, registration, sign-in, consent, tools and step-up, once in the
/// 2025 handshake (its default) and once negotiating the 2026-07-28 revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_signs_in_and_steps_up_in_both_revisions_when_only_the_prefix_is_routed() {
    let Some(modules) = tests::tool("SPECWRIGHT_MCP_CLIENT_NODE_MODULES") else {
        return;
    };
    let (server, public) = common::proxy::serve_behind_prefix_only("/sw", |_| {}).await;
    server.tenant("acme", "alice").await;
    runtime::oauth::users::add(&server.state.store, "alice", "acme", "correct horse battery").await.unwrap();
    let script = xtask::workspace_root().join("tests/mcp_clients/ts_oauth.mjs").display().to_string();
    let node = std::env::var("SPECWRIGHT_NODE").unwrap_or_else(|_| "node".into());
    for (mode, revision) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let args = vec![
            script.clone(),
            format!("{public}/api/mcp"),
            "alice".into(),
            "correct horse battery".into(),
            mode.into(),
        ];
        let (node, modules) = (node.clone(), modules.clone());
        let out = tokio::task::spawn_blocking(move || {
            Command::new(node).args(args).env("SPECWRIGHT_MCP_CLIENT_NODE_MODULES", modules).output().expect("run node")
        })
        .await
        .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "TypeScript client ({mode}) failed:\n{text}");
        let summary: serde_json::Value = text
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("no JSON summary in:\n{text}"));
        assert_eq!(summary["consents"], 2, "{summary}");
        assert_eq!(summary["protocol_version"], revision, "{summary}");
    }
}

/// Runs `tests/mcp_clients/python_oauth.py` against the MCP endpoint at `url` (served by `server`)
/// and checks its summary.
async fn python_oauth_flow(python: &str, server: &common::TestServer, url: &str) {
    server.tenant("acme", "alice").await;
    runtime::oauth::users::add(&server.state.store, "alice", "acme", "correct horse battery").await.unwrap();
    let script = xtask::workspace_root().join("tests/mcp_clients/python_oauth.py").display().to_string();
    let (ok, out) = run(vec![python.into(), script, url.into(), "alice".into(), "correct horse battery".into()]).await;
    assert!(ok, "python OAuth client failed ({url}):\n{out}");
    let summary: serde_json::Value = out
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON summary in:\n{out}"));
    assert_eq!(summary["consents"], 2, "{summary}");
    assert_eq!(summary["authorizations"], 2, "{summary}");
    assert_eq!(summary["second_connection_authorizations"], 0, "{summary}");
    let scope = summary["stored_scope"].as_str().unwrap_or_default();
    assert!(scope.split(' ').any(|s| s == "vault:write"), "the stepped-up token is stored: {summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_inspector_cli_lists_and_calls_tools() {
    let Some(inspector) = tests::tool("SPECWRIGHT_MCP_INSPECTOR") else {
        return;
    };
    let (_server, url, write, read) = vault().await;
    let base = |token: &str, method: &str| {
        vec![
            inspector.clone(),
            "--cli".into(),
            url.clone(),
            "--transport".into(),
            "http".into(),
            "--method".into(),
            method.into(),
            "--header".into(),
            format!("Authorization: Bearer {token}"),
        ]
    };
    let (ok, out) = run(base(&read, "tools/list")).await;
    assert!(ok && out.contains("vault.lease_credential") && out.contains("SCOPE: vault:write"), "tools/list:\n{out}");
    let mut store = base(&write, "tools/call");
    store.extend(
        ["--tool-name", "vault.store_credential", "--tool-arg", "key=from-inspector", "--tool-arg", "value=v1"]
            .map(String::from),
    );
    let (ok, out) = run(store).await;
    assert!(ok && out.contains("from-inspector"), "tools/call with a write token:\n{out}");
    let mut denied = base(&read, "tools/call");
    denied.extend(
        ["--tool-name", "vault.store_credential", "--tool-arg", "key=denied", "--tool-arg", "value=v1"]
            .map(String::from),
    );
    let (ok, out) = run(denied).await;
    assert!(
        !ok && out.contains("nsufficient scope") && out.contains("vault:write"),
        "a write tool with a read token fails naming the scope:\n{out}"
    );
}
