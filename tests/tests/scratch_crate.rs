//! The generator outside this repository: a crate of a user's own (tests/fixtures/scratch-crate/,
//! copied to a temporary folder with path dependencies on this workspace's `codegen`, `support`
//! and `runtime`) generates its API from its own spec in build.rs — the prelude example
//! `codegen/tests/fixtures/prelude/todos.toml` — and serves it with the runtime's builder. The
//! test builds it with cargo (offline, pinned by this workspace's Cargo.lock, into
//! the workspace's own target folder, whose dependencies it shares), serves it, checks it with the
//! conformance kit against its spec folder and calls it as a client would (its errors in a model
//! of its own, as an existing API's would be); then breaks the spec
//! and expects the build to fail with the generator's message.

mod outside;

use std::path::{Path, PathBuf};
use std::process::Command;

use outside::{build, free_addr, workspace};
use serde_json::{Value, json};
use tests::process::Process;

/// The scratch crate in `dir`: the fixture and the prelude spec, pinned to this workspace.
fn lay_out(dir: &Path) {
    let root = workspace();
    let fixture = root.join("tests/fixtures/scratch-crate");
    let manifest = std::fs::read_to_string(fixture.join("Cargo.toml.template")).unwrap();
    let manifest = manifest.replace("WORKSPACE", root.to_str().unwrap());
    std::fs::write(dir.join("Cargo.toml"), outside::pin(dir, &manifest)).unwrap();
    std::fs::copy(fixture.join("build.rs"), dir.join("build.rs")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::copy(fixture.join("src/main.rs"), dir.join("src/main.rs")).unwrap();
    std::fs::create_dir_all(dir.join("spec")).unwrap();
    // Its errors in a model of its own, as an existing API's would be.
    let spec = std::fs::read_to_string(root.join("codegen/tests/fixtures/prelude/todos.toml")).unwrap();
    let errors = std::fs::read_to_string(root.join("codegen/tests/fixtures/wire/error_model.toml")).unwrap();
    std::fs::write(dir.join("spec/todos.toml"), format!("{spec}\n{errors}")).unwrap();
}

fn binary() -> PathBuf {
    outside::target().join("debug/scratch-todos")
}

fn token(data: &Path, tenant: &str, scope: &str, addr: &str) -> String {
    outside::token(&binary(), "TODOS", addr, data, tenant, scope)
}

async fn call(
    client: &reqwest::Client,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = client.request(method.parse().unwrap(), url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    let text = resp.text().await.unwrap();
    (
        status,
        headers,
        if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) },
    )
}

#[tokio::test]
async fn a_crate_outside_the_workspace_generates_its_api_in_build_rs_and_serves_it() {
    let dir = tempfile::tempdir().unwrap();
    lay_out(dir.path());
    let (ok, stderr) = build(dir.path(), &[]);
    assert!(ok, "expected the scratch crate to build, got:\n{stderr}");
    assert!(
        !dir.path().join("generated").exists() && !dir.path().join("src/todos").exists(),
        "expected generated code only under OUT_DIR"
    );

    let data = dir.path().join("data");
    let addr = free_addr();
    let mut cmd = Command::new(binary());
    cmd.env("TODOS_ADDR", &addr).env("TODOS_DATA_DIR", &data);
    let _server = Process::start(cmd, &addr, &dir.path().join("server.log")).await;
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();
    let todos = format!("{base}/api/v1/todos");

    // The platform's gate and documents, driven by the crate's own spec: the conformance kit with
    // the contract generated from that spec (as `specwright conformance --spec DIR` runs it).
    let contract = specwright::spec_contract::spec_contract(&dir.path().join("spec")).unwrap();
    let report = conformance::run(&contract, &conformance::Target::new(&base, &data).unwrap()).await;
    assert!(report.passed(), "{report}");
    assert!(report.count("todos") > 0, "{report}");
    let (read, write) = (token(&data, "t1", "todos:read", &addr), token(&data, "t1", "todos:write", &addr));

    // The implementation, reached through the generated router.
    let (status, _, body) = call(&client, "POST", &todos, Some(&write), Some(json!({"title": "write the test"}))).await;
    assert_eq!((status, &body["data"]), (201, &json!({"id": "t1", "title": "write the test", "done": false})));
    let (status, _, body) = call(&client, "GET", &format!("{todos}?done=false"), Some(&read), None).await;
    assert_eq!((status, &body["meta"]["total"], &body["data"][0]["id"]), (200, &json!(1), &json!("t1")));
    let other = token(&data, "t2", "todos:read", &addr);
    let (status, headers, body) = call(&client, "GET", &format!("{todos}/t1"), Some(&other), None).await;
    assert_eq!(
        (status, &body["error"]["code"], &body["error"]["details"]["id"]),
        (404, &json!("not_found"), &json!("t1"))
    );
    assert_eq!(body["trace_id"], headers["x-request-id"].to_str().unwrap(), "the crate's own error model: {body}");
    let (status, _, body) = call(&client, "POST", &todos, Some(&write), Some(json!({"title": ""}))).await;
    assert_eq!(
        (status, &body["error"]["code"], &body["error"]["details"]["field"]),
        (422, &json!("validation"), &json!("title"))
    );
    let (status, headers, _) = call(&client, "PUT", &todos, Some(&write), Some(json!({}))).await;
    assert_eq!((status, headers["allow"].to_str().unwrap()), (405, "GET, POST"));
    let (status, _, _) = call(&client, "DELETE", &format!("{todos}/t1"), Some(&write), None).await;
    assert_eq!(status, 204);

    // A spec edit reruns build.rs; an invalid one fails the build with the generator's message.
    let spec = dir.path().join("spec/todos.toml");
    let text = std::fs::read_to_string(&spec).unwrap().replacen("scope = \"todos:read\"", "scope = \"todos:nope\"", 1);
    std::fs::write(&spec, text).unwrap();
    let (ok, stderr) = build(dir.path(), &[]);
    assert!(!ok, "expected the build to fail on an unknown scope");
    assert!(
        stderr.contains("spec/todos.toml") && stderr.contains("todos:nope"),
        "expected the generator's message naming the file and the scope, got:\n{stderr}"
    );
}
