//! `cargo xtask new-service NAME` in a temporary copy of this workspace, and the standalone
//! project `specwright-codegen new-service NAME --dir DIR` writes: each lays out the service (the
//! xtask one registered, with its API crate generated so `generate --check` is clean), and the
//! result builds and serves: the platform's gate in front, every operation answering `501
//! not_implemented` with the error envelope until its method is written, and the binary's own
//! `conformance` command passing against it.

mod outside;

use std::path::Path;
use std::process::Command;

use outside::{build, free_addr, serve, workspace};
use serde_json::{Value, json};

/// This workspace's sources (no build output, history or local data) copied into `to`.
fn copy_workspace(from: &Path, to: &Path) {
    const SKIP: &[&str] = &[".git", "target", "node_modules", "specwright-data", ".venv", ".schemathesis"];
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if SKIP.iter().any(|s| name == *s) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_workspace(&src, &dst);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

#[tokio::test]
async fn new_service_lays_out_a_service_that_builds_and_answers_501_until_written() {
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path();
    copy_workspace(&workspace(), root);

    let created =
        xtask::new_service::new_service(root, "shelf").unwrap_or_else(|e| panic!("new-service failed: {e:#}"));
    for path in [
        "services/shelf/spec/shelf.toml",
        "services/shelf/src/lib.rs",
        "services/shelf/src/main.rs",
        "services/shelf/migrations/sqlite/0001_shelf.sql",
        "services/shelf/migrations/postgres/0001_shelf.sql",
        "services/shelf/api/src/shelf/router.rs",
    ] {
        assert!(root.join(path).is_file(), "expected {path} among {:?}", created.files);
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("\"services/shelf\", \"services/shelf/api\"")
            && manifest.contains("shelf-api = { path = \"services/shelf/api\" }"),
        "registered:\n{manifest}"
    );
    let drift = xtask::check(root).unwrap();
    assert!(drift.is_empty(), "expected `generate --check` to be clean after new-service:\n{drift}");

    // A second service of the same name, or a name that is not one, is refused and writes nothing.
    let again = xtask::new_service::new_service(root, "shelf").unwrap_err().to_string();
    assert!(again.contains("already exists"), "{again}");
    let bad = xtask::new_service::new_service(root, "Shelf").unwrap_err().to_string();
    assert!(bad.contains("cannot name a service: use snake_case"), "{bad}");
    assert!(!root.join("services/Shelf").exists());

    let (ok, stderr) = build(root, &["-p", "shelf"]);
    assert!(ok, "expected the new service to build, got:\n{stderr}");
    expect_unwritten(&outside::target().join("debug/shelf"), "SHELF", "shelf", root).await;
}

#[tokio::test]
async fn new_service_from_an_openapi_document_serves_it_guarded_and_answers_501_until_written() {
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path();
    copy_workspace(&workspace(), root);
    let document = std::fs::read_to_string(workspace().join("codegen/tests/fixtures/import/petstore.yaml")).unwrap();

    // One of its operations cannot be imported: refused without `--allow-partial`, left out with it.
    let refused = codegen::scaffold::import_for("shop", &document, false).unwrap_err();
    assert!(refused.contains("GET /pets/{petId}/owner (pet_owner): NOT imported"), "{refused}");
    let (spec, report) = codegen::scaffold::import_for("shop", &document, true).unwrap();
    assert!(report.partial());
    xtask::new_service::new_service_from(root, "shop", Some(&spec)).unwrap_or_else(|e| panic!("{e:#}"));
    let written = std::fs::read_to_string(root.join("services/shop/spec/shop.toml")).unwrap();
    assert!(written.starts_with("#:schema ../../../spec/spec.schema.json\n"), "{written}");
    let drift = xtask::check(root).unwrap();
    assert!(drift.is_empty(), "expected `generate --check` to be clean after new-service --from:\n{drift}");

    let (ok, stderr) = build(root, &["-p", "shop"]);
    assert!(ok, "expected the imported service to build, got:\n{stderr}");
    let bin = outside::target().join("debug/shop");
    let data = root.join("data");
    let addr = free_addr();
    let token = |scope: &str| outside::token(&bin, "SHOP", &addr, &data, "t1", scope);
    let mut cmd = Command::new(&bin);
    cmd.env("SHOP_ADDR", &addr).env("SHOP_DATA_DIR", &data);
    let _server = serve(cmd, &addr, &root.join("server.log")).await;
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();
    let pets = format!("{base}/v1/pets");

    // The document's own OAuth scopes guard its routes, with the challenge naming them.
    let resp = client.get(&pets).send().await.unwrap();
    assert_eq!(resp.status(), 401, "the gate is in front of it");
    assert!(resp.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"), "{:?}", resp.headers());
    let (read, write) = (token("read:pets"), token("write:pets"));
    let resp = client.post(&pets).bearer_auth(&read).json(&json!({"name": "Rex"})).send().await.unwrap();
    assert_eq!(resp.status(), 403, "its scope tiers are enforced");
    let resp = client.post(&pets).bearer_auth(&write).json(&json!({"name": ""})).send().await.unwrap();
    assert_eq!(resp.status(), 422, "its schema's bounds are checked before the method");
    let resp = client.post(&pets).bearer_auth(&write).json(&json!({"name": "Rex", "legs": 4})).send().await.unwrap();
    assert_eq!(resp.status(), 422, "an unknown field is refused");
    for (method, url, body) in [
        ("GET", pets.clone(), None),
        ("POST", pets.clone(), Some(json!({"name": "Rex"}))),
        ("GET", format!("{pets}/p1"), None),
        ("DELETE", format!("{pets}/p1"), None),
        ("GET", format!("{base}/v1/stats"), None),
    ] {
        let token = if method == "GET" { &read } else { &write };
        let mut req = client.request(method.parse().unwrap(), &url).bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 501, "{method} {url}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_implemented", "{method} {url}: {body}");
    }
    // The left-out operation is not served.
    let resp = client.get(format!("{pets}/p1/owner")).bearer_auth(&read).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    // Its binary's conformance kit passes against it: challenges, scope tiers, PRM, documents,
    // MCP tools.
    let out = Command::new(&bin).args(["conformance", "--url", &base]).env("SHOP_DATA_DIR", &data).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}{}", String::from_utf8_lossy(&out.stderr));
    assert!(table.lines().last().is_some_and(|l| l.contains("(shop ") && l.contains(" 0 failed")), "{table}");
}

/// Serves the new service's binary `bin` (settings prefixed `env`, scopes `NAME:…`) and checks
/// the platform guards it and every operation answers 501 `not_implemented`.
async fn expect_unwritten(bin: &Path, env: &str, name: &str, root: &Path) {
    let data = root.join("data");
    let addr = free_addr();
    let token = |scope: &str| outside::token(bin, env, &addr, &data, "t1", scope);
    let mut cmd = Command::new(bin);
    cmd.env(format!("{env}_ADDR"), &addr).env(format!("{env}_DATA_DIR"), &data);
    let _server = serve(cmd, &addr, &root.join("server.log")).await;
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();
    let items = format!("{base}/api/v1/items");
    let resp = client.get(&items).send().await.unwrap();
    assert_eq!(resp.status(), 401, "the gate is in front of it");
    let (read, write) = (token(&format!("{name}:read")), token(&format!("{name}:write")));
    let resp = client.post(&items).bearer_auth(&read).json(&json!({"name": "x"})).send().await.unwrap();
    assert_eq!(resp.status(), 403, "its scope tiers are enforced");
    let resp = client.post(&items).bearer_auth(&write).json(&json!({"name": ""})).send().await.unwrap();
    assert_eq!(resp.status(), 422, "its input is validated before the method");
    for (method, url, body) in [
        ("GET", items.clone(), None),
        ("POST", items.clone(), Some(json!({"name": "a book"}))),
        ("GET", format!("{items}/i1"), None),
        ("DELETE", format!("{items}/i1"), None),
    ] {
        let mut req = client.request(method.parse().unwrap(), &url).bearer_auth(&write);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 501, "{method} {url}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_implemented", "{method} {url}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().ends_with("is not implemented yet"), "{body}");
    }
    // Its binary carries the conformance kit: the running server enforces its spec.
    let out =
        Command::new(bin).args(["conformance", "--url", &base]).env(format!("{env}_DATA_DIR"), &data).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        table.lines().last().is_some_and(|l| l.contains(&format!("({name} ")) && l.contains(" 0 failed")),
        "{table}"
    );
}

#[tokio::test]
async fn the_standalone_layout_generates_in_build_rs_builds_and_answers_501_until_written() {
    // What `specwright-codegen new-service pantry --dir DIR` writes, with the published crates
    // pointed at this workspace (they are not on the registry this machine reaches).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let ws = workspace();
    for (path, text) in codegen::scaffold::standalone("pantry", None).unwrap() {
        let full = root.join(&path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        let text = if path == "Cargo.toml" {
            let mut text = text;
            for (package, folder) in [
                ("specwright-support", "support"),
                ("specwright-runtime", "runtime"),
                ("specwright-codegen", "codegen"),
                ("specwright-conformance", "conformance"),
            ] {
                let from = format!("package = \"{package}\", ");
                assert!(text.contains(&from), "expected the manifest to depend on {package}:\n{text}");
                text = text.replace(&from, &format!("{from}path = \"{}\", ", ws.join(folder).display()));
            }
            outside::pin(root, &text)
        } else {
            text
        };
        std::fs::write(full, text).unwrap();
    }
    let (ok, stderr) = build(root, &[]);
    assert!(ok, "expected the new project to build, got:\n{stderr}");
    expect_unwritten(&outside::target().join("debug/pantry"), "PANTRY", "pantry", root).await;
}
