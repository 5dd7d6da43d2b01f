//! Schemathesis (PyPI) against the live server, every service of the workspace (the vault, the
//! prospector and the notes showcase), with valid tokens: every check on
//! (server errors, response schemas and statuses, accepted and rejected inputs, headers, stateful
//! links), bounded and seeded so CI stays short and a finding reproduces. `.ci/run` installs it;
//! elsewhere the test says it skipped. Exceptions live in `tests/schemathesis/*.toml`, each with
//! its reason.

mod common;

use std::process::Command;

/// Runs schemathesis on `document` with `token` (and the settings file of `config`, under
/// `tests/schemathesis/`); panics with its report on any finding.
async fn fuzz(bin: String, document: String, token: String, config: Option<&str>, extra: Vec<String>) {
    let mut global = vec!["--no-color".to_string()];
    if let Some(name) = config {
        let path = xtask::workspace_root().join("tests/schemathesis").join(name);
        global.extend(["--config-file".to_string(), path.display().to_string()]);
    }
    let out = tokio::task::spawn_blocking(move || {
        Command::new(&bin)
            .env("SCHEMATHESIS_HOOKS", xtask::workspace_root().join("tests/schemathesis/hooks.py"))
            .args(&global)
            .arg("run")
            .arg(&document)
            .args(["--header", &format!("Authorization: Bearer {token}")])
            // One worker and a fixed seed: the same cases in the same order on every run. A generous
            // request timeout: CI runs other suites beside this one on two cores.
            // A redirect is checked as it is answered, not followed (a link note's URL is no
            // server this suite should reach).
            .args(["--seed", "20261122", "--workers", "1", "--request-timeout", "30", "--max-redirects", "0"])
            .args(["--warnings", "off", "--generation-database", "none"])
            .args(&extra)
            .output()
            .expect("run schemathesis")
    })
    .await
    .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "schemathesis found problems in {}:\n{report}",
        std::env::args().next().unwrap_or_default()
    );
    eprintln!("{}", report.lines().rev().take(6).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vault_behaves_as_its_document_says() {
    let Some(bin) = tests::tool("SPECWRIGHT_SCHEMATHESIS") else { return };
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let document = server.url("/openapi/vault.json");
    // Changing role assignments could demote the fuzzing user and turn the rest of the run into
    // 403s; they get their own run with a second administrator the fuzzer cannot learn the name of.
    let role_ops = ["assign_role", "remove_role_assignment"];
    // Every token is on the `standard` plan: stay under its per-minute limit rather than test
    // 429s (as the prospector's run stays under Team's), and start each run with fresh windows.
    let standard = vault_api::vault::SERVICE.plan("standard").expect("the vault declares `standard`");
    let pace = format!("{}/m", standard.per_minute - 10);
    let mut main = vec!["--max-examples".to_string(), "20".into(), "--rate-limit".into(), pace.clone()];
    for op in role_ops {
        main.extend(["--exclude-operation-id".to_string(), op.to_string()]);
    }
    fuzz(bin.clone(), document.clone(), server.token_for("alice", "acme", "vault:admin"), Some("vault.toml"), main)
        .await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (status, _) = server
        .call("PUT", "/api/v1/tenants/acme/role-assignments/root", &admin, Some(serde_json::json!({ "role": "admin" })))
        .await;
    assert_eq!(status, 200);
    server.next_rate_window();
    let mut roles = vec!["--max-examples".to_string(), "20".into(), "--rate-limit".into(), pace];
    for op in role_ops {
        roles.extend(["--include-operation-id".to_string(), op.to_string()]);
    }
    fuzz(bin, document, server.token_for("root", "acme", "vault:admin"), Some("vault.toml"), roles).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prospector_behaves_as_its_document_says() {
    let Some(bin) = tests::tool("SPECWRIGHT_SCHEMATHESIS") else { return };
    let server = common::TestServer::start().await;
    let token = server.team_token("alice", "acme");
    // Real leads to find, so operations on a lead reach more than 404.
    let (status, _) = server.call("POST", "/v1/prospector/leads/scan", &token, Some(serde_json::json!({}))).await;
    assert_eq!(status, 200);
    // The Team plan allows 300 requests a minute per token; stay under it rather than test 429s.
    let extra = ["--max-examples", "10", "--rate-limit", "290/m"].map(String::from).to_vec();
    fuzz(bin, server.url("/openapi/prospector.json"), token, Some("prospector.toml"), extra).await;
}

/// The notes showcase, served alone as its own binary serves it; its errors are RFC 9457 problem
/// details, which schemathesis checks against the document's `application/problem+json` responses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notes_showcase_behaves_as_its_document_says() {
    let Some(bin) = tests::tool("SPECWRIGHT_SCHEMATHESIS") else { return };
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = runtime::Config::new(listener.local_addr().unwrap(), None, dir.path().to_path_buf());
    let platform = runtime::Platform::open(config.clone()).await.unwrap();
    let app = notes::server(&platform).await.unwrap();
    tokio::spawn(async move { platform.run(listener, app).await });
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir).unwrap();
    let audience = runtime::Catalog::new([&notes::SERVICE]).resources(&config);
    let claims = runtime::keys::claims(&config.issuer(), "ann", "acme", "notes:write", audience, 3600, None);
    let token = keys.mint(&claims).unwrap();
    // The basic plan allows 120 requests a minute per token; stay under it rather than test 429s.
    let extra = ["--max-examples", "20", "--rate-limit", "110/m"].map(String::from).to_vec();
    fuzz(bin, config.url("/openapi/notes.json"), token, Some("notes.toml"), extra).await;
}
