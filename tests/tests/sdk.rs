//! The generated client SDKs against a live server. `cargo xtask sdk` generates them (into
//! `target/sdk/`, with its pinned generators under `target/sdk-tools/`); `.ci/run` does that and
//! points at both with `SPECWRIGHT_SDK_DIR` and `SPECWRIGHT_SDK_TOOLS`. One smoke program per
//! language (`xtask/sdk/smoke/`) uses only its SDK: a write token stores and lists credentials, a
//! read token's write call is the typed 403 naming `vault:write`, a prospector scan of the
//! embedded sample feed is listed with `min_score` and pagination, `min_score=150` is the typed
//! 422 naming the field, and the rate-limit headers are read. Each prints a one-line JSON
//! summary, checked here.
//!
//! The Rust and TypeScript programs compile against the SDKs where `cargo xtask sdk` writes them
//! by default (`target/sdk/`: Cargo path dependencies, relative imports), so `SPECWRIGHT_SDK_DIR`
//! must be that folder.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The generated SDKs and the installed generator tools, or `None` (skip) when not configured.
fn sdk_dirs() -> Option<(PathBuf, PathBuf)> {
    let sdk = tests::tool("SPECWRIGHT_SDK_DIR")?;
    let tools = tests::tool("SPECWRIGHT_SDK_TOOLS")?;
    let (sdk, tools) = (PathBuf::from(sdk), PathBuf::from(tools));
    let expected = xtask::workspace_root().join("target/sdk");
    assert_eq!(
        sdk.canonicalize()
            .unwrap_or_else(|e| panic!("SPECWRIGHT_SDK_DIR {}: {e}; run `cargo xtask sdk`", sdk.display())),
        expected.canonicalize().unwrap_or_else(|e| panic!("{}: {e}; run `cargo xtask sdk`", expected.display())),
        "the Rust and TypeScript smoke programs build against {}: generate there (`cargo xtask sdk`, no --out)",
        expected.display()
    );
    Some((sdk, tools))
}

/// A server with tenant `acme` (administrator alice) and the smoke programs' four arguments:
/// the base URL, a `vault:write` token, a `vault:read` token and a prospector (Team plan) token.
async fn server() -> (common::TestServer, Vec<String>) {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let args = vec![
        server.base.clone(),
        server.token_for("alice", "acme", "vault:write"),
        server.token_for("alice", "acme", "vault:read"),
        server.team_token("alice", "acme"),
    ];
    (server, args)
}

/// Runs `cmd` off the async runtime; its output, after asserting it succeeded.
async fn run(mut cmd: Command, what: &str) -> (String, Duration) {
    let what = what.to_string();
    tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start {:?}: {e}", cmd.get_program()));
        let took = start.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what} failed ({}):\n{stdout}{stderr}", out.status);
        (stdout, took)
    })
    .await
    .expect("join")
}

/// The summary a smoke program printed (its last line), checked against the scenario.
fn check_summary(stdout: &str, sdk: &str) -> Value {
    let line = stdout.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default();
    let summary: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{sdk}: the summary is not JSON ({e}): {stdout}"));
    assert_eq!(summary["sdk"], sdk, "{summary}");
    assert_eq!(summary["ok"], true, "{summary}");
    assert!(summary["credential"].as_str().is_some_and(|k| k.starts_with(&format!("sdk-smoke-{sdk}-"))), "{summary}");
    assert!(summary["credentials_total"].as_i64().is_some_and(|n| n >= 1), "{summary}");
    let forbidden = &summary["forbidden"];
    assert_eq!(
        (&forbidden["status"], &forbidden["code"], &forbidden["required"]),
        (&Value::from(403), &Value::from("auth/insufficient-scope"), &Value::from("vault:write")),
        "{summary}"
    );
    assert_eq!(summary["scan_fetched"], 40, "the embedded sample feed has 40 postings: {summary}");
    let leads = &summary["leads"];
    assert_eq!((&leads["page"], &leads["per_page"]), (&Value::from(1), &Value::from(5)), "{summary}");
    let (total, returned) = (leads["total"].as_i64().unwrap_or(-1), leads["returned"].as_i64().unwrap_or(-1));
    assert!(total >= 1 && returned == total.min(5), "{summary}");
    let min = leads["min_score"].as_f64().expect("min_score");
    let scores = leads["scores"].as_array().expect("scores");
    assert!(
        scores.len() as i64 == returned && scores.iter().all(|s| s.as_f64().is_some_and(|s| s >= min)),
        "{summary}"
    );
    let invalid = &summary["invalid"];
    assert_eq!(
        (&invalid["status"], &invalid["code"], &invalid["field"]),
        (&Value::from(422), &Value::from("validation_error"), &Value::from("min_score")),
        "{summary}"
    );
    let limits = &summary["rate_limit"];
    assert_eq!(limits["limit"], 300, "the Team plan's per-minute limit: {summary}");
    assert!(limits["remaining"].as_u64().is_some_and(|r| r < 300), "{summary}");
    assert!(limits["reset"].as_u64().is_some_and(|r| r > 1_700_000_000), "{summary}");
    summary
}

fn smoke_dir(language: &str) -> PathBuf {
    xtask::workspace_root().join("xtask/sdk/smoke").join(language)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_sdk_smoke_program_passes_against_a_live_server() {
    if sdk_dirs().is_none() {
        return;
    }
    let root = xtask::workspace_root();
    let manifest = smoke_dir("rust").join("Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Its own target folder: the `cargo test` running this holds the lock on target/debug.
    let cargo_cmd = |verb: &str| {
        let mut cmd = Command::new(&cargo);
        cmd.args([verb, "--quiet", "--locked", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", root.join("target/sdk-smoke"))
            .current_dir(&root);
        cmd
    };
    // Built before the server's tokens are minted: a cold build can outlast their ten minutes.
    let (_, build) = run(cargo_cmd("build"), "building the Rust SDK smoke program").await;
    let (server, args) = server().await;
    let mut cmd = cargo_cmd("run");
    cmd.arg("--").args(&args);
    let (stdout, took) = run(cmd, "the Rust SDK smoke program").await;
    let summary = check_summary(&stdout, "rust");
    println!("rust SDK smoke: build {build:.1?}, run {took:.1?}: {summary}");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_smoke_program_passes_against_a_live_server() {
    let Some((sdk, tools)) = sdk_dirs() else {
        return;
    };
    let python = tools.join("python/bin/python");
    let path = std::env::join_paths([sdk.join("python/vault"), sdk.join("python/prospector")]).expect("PYTHONPATH");
    let (server, args) = server().await;
    let mut cmd = Command::new(&python);
    cmd.arg(smoke_dir("python").join("smoke.py"))
        .args(&args)
        .env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let (stdout, took) = run(cmd, "the Python SDK smoke program").await;
    let summary = check_summary(&stdout, "python");
    println!("python SDK smoke: run {took:.1?}: {summary}");
    drop(server);
}

/// Compiles the TypeScript smoke program with the pinned tsc (strict, per its tsconfig.json; any
/// type error fails and emits nothing) into `out`, ready for Node: `out/node_modules` is the
/// installed tools' (openapi-fetch) and `out/package.json` makes the emitted `.js` ES modules.
async fn compile_typescript(tools: &Path, out: &Path) -> (PathBuf, Duration) {
    let node = std::env::var("SPECWRIGHT_NODE").unwrap_or_else(|_| "node".into());
    let modules = tools.join("node/node_modules");
    let mut cmd = Command::new(&node);
    cmd.arg(modules.join("typescript/bin/tsc"))
        .arg("-p")
        .arg(smoke_dir("typescript").join("tsconfig.json"))
        .arg("--noEmitOnError")
        .arg("--outDir")
        .arg(out);
    let (_, took) = run(cmd, "tsc (type-checking and compiling the TypeScript SDK smoke program)").await;
    std::fs::write(out.join("package.json"), "{\"type\":\"module\"}\n").expect("package.json");
    std::os::unix::fs::symlink(&modules, out.join("node_modules")).expect("node_modules link");
    // tsconfig.json sets rootDir to the workspace root, so the output mirrors the source tree.
    (out.join("xtask/sdk/smoke/typescript/smoke.js"), took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_smoke_program_type_checks_and_passes_against_a_live_server() {
    let Some((_, tools)) = sdk_dirs() else {
        return;
    };
    let out = tempfile::tempdir().expect("temp dir");
    let (script, compile) = compile_typescript(&tools, out.path()).await;
    let (server, args) = server().await;
    let mut cmd = Command::new(std::env::var("SPECWRIGHT_NODE").unwrap_or_else(|_| "node".into()));
    cmd.arg(&script).args(&args);
    let (stdout, took) = run(cmd, "the TypeScript SDK smoke program").await;
    let summary = check_summary(&stdout, "typescript");
    println!("typescript SDK smoke: tsc {compile:.1?}, run {took:.1?}: {summary}");
    drop(server);
}
