//! `cargo xtask new-service NAME` in a temporary copy of this workspace, and the standalone
//! project `specwright-codegen new-service NAME --dir DIR` writes: each lays out the service (the
//! xtask one registered, with its API crate generated so `generate --check` is clean), and the
//! result builds and serves: the platform's gate in front, every operation answering `501
//! not_implemented` with the error envelope until its method is written, and the binary's own
//! `conformance` command passing against it.

mod outside;

use std::path::Path;
use std::process::Command;

use outside::{build, free_addr, workspace};
use serde_json::{Value, json};
use tests::process::Process;

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
        "spec/shelf/shelf.toml",
        "services/shelf/src/lib.rs",
        "services/shelf/src/service.rs",
        "services/shelf/src/main.rs",
        "services/shelf/migrations/sqlite/0001_shelf.sql",
        "services/shelf/migrations/postgres/0001_shelf.sql",
        "generated/shelf/src/shelf/router.rs",
    ] {
        assert!(root.join(path).is_file(), "expected {path} among {:?}", created.files);
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("\"services/shelf\", \"generated/shelf\"")
            && manifest.contains("shelf-api = { path = \"generated/shelf\" }"),
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
    expect_unwritten(&outside::target().join("debug/shelf"), root, starter("shelf", "SHELF")).await;
}

#[tokio::test]
async fn new_service_from_an_openapi_document_serves_it_guarded_and_answers_501_until_written() {
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path();
    copy_workspace(&workspace(), root);
    let document =
        codegen::project::read_openapi(&workspace().join("codegen/tests/fixtures/import/petstore.yaml")).unwrap();

    // One of its operations cannot be imported: refused without `--allow-partial`, left out with it.
    let refused = codegen::scaffold::import_for("shop", &document, false).unwrap_err();
    assert!(refused.contains("GET /pets/{petId}/events (pet_events): NOT imported"), "{refused}");
    let (spec, report) = codegen::scaffold::import_for("shop", &document, true).unwrap();
    assert!(report.partial());
    xtask::new_service::new_service_from(root, "shop", Some(&spec)).unwrap_or_else(|e| panic!("{e:#}"));
    let written = std::fs::read_to_string(root.join("spec/shop/shop.toml")).unwrap();
    assert!(written.starts_with("#:schema ../spec.schema.json\n"), "{written}");
    let drift = xtask::check(root).unwrap();
    assert!(drift.is_empty(), "expected `generate --check` to be clean after new-service --from:\n{drift}");

    let (ok, stderr) = build(root, &["-p", "shop"]);
    assert!(ok, "expected the imported service to build, got:\n{stderr}");
    let bin = outside::target().join("debug/shop");
    let pets = "/v1/pets";
    let unwritten = Unwritten {
        name: "shop",
        env: "SHOP",
        collection: pets,
        scopes: ("read:pets".into(), "write:pets".into()),
        valid: json!({"name": "Rex"}),
        invalid: json!({"name": ""}),
        routes: vec![("GET", format!("{pets}/p1")), ("DELETE", format!("{pets}/p1"))],
        // The operation left out is not served.
        absent: Some(format!("{pets}/p1/events")),
        public: Some("/v1/stats"),
    };
    expect_unwritten(&bin, root, unwritten).await;
}

/// What [`expect_unwritten`] tries of a new service.
struct Unwritten {
    /// The service's name, as the conformance table names it.
    name: &'static str,
    /// The prefix of its settings (`SHELF` for `SHELF_ADDR`).
    env: &'static str,
    /// A collection route: `GET` lists, `POST` creates.
    collection: &'static str,
    /// The read and the write scope.
    scopes: (String, String),
    /// A body `POST` accepts, and one it refuses.
    valid: Value,
    invalid: Value,
    /// Other routes, each answering 501.
    routes: Vec<(&'static str, String)>,
    /// A route that must not be served.
    absent: Option<String>,
    /// A public route (`security: []`): admitted without a token.
    public: Option<&'static str>,
}

/// Serves the new service's binary `bin` and checks the platform guards it (the challenge, the
/// scope tiers, validation before the method) and every operation answers 501 `not_implemented`
/// until written, and its binary's conformance kit passes against it.
async fn expect_unwritten(bin: &Path, root: &Path, service: Unwritten) {
    let (env, data, addr) = (service.env, root.join("data"), free_addr());
    let token = |scope: &str| outside::token(bin, env, &addr, &data, "t1", scope);
    let mut cmd = Command::new(bin);
    cmd.env(format!("{env}_ADDR"), &addr).env(format!("{env}_DATA_DIR"), &data);
    let _server = Process::start(cmd, &addr, &root.join("server.log")).await;
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();
    let collection = format!("{base}{}", service.collection);
    let resp = client.get(&collection).send().await.unwrap();
    assert_eq!(resp.status(), 401, "the gate is in front of it");
    assert!(resp.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"), "{:?}", resp.headers());
    let (read, write) = (token(&service.scopes.0), token(&service.scopes.1));
    let resp = client.post(&collection).bearer_auth(&read).json(&service.valid).send().await.unwrap();
    assert_eq!(resp.status(), 403, "its scope tiers are enforced");
    let resp = client.post(&collection).bearer_auth(&write).json(&service.invalid).send().await.unwrap();
    assert_eq!(resp.status(), 422, "its input is validated before the method");
    let mut unknown = service.valid.clone();
    unknown["no_such_field"] = json!(1);
    let resp = client.post(&collection).bearer_auth(&write).json(&unknown).send().await.unwrap();
    assert_eq!(resp.status(), 422, "an unknown field is refused");
    let mut routes = vec![
        ("GET", service.collection.to_string(), None),
        ("POST", service.collection.to_string(), Some(service.valid)),
    ];
    routes.extend(service.routes.into_iter().map(|(m, p)| (m, p, None)));
    for (method, path, body) in routes {
        let url = format!("{base}{path}");
        let token = if method == "GET" { &read } else { &write };
        let mut req = client.request(method.parse().unwrap(), &url).bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 501, "{method} {url}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_implemented", "{method} {url}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().ends_with("is not implemented yet"), "{body}");
    }
    if let Some(path) = service.public {
        // Admitted without a token, to the method that is not written yet; a bad token is still
        // refused, and a good one admitted whatever its scope.
        let url = format!("{base}{path}");
        let resp = client.get(&url).send().await.unwrap();
        assert_eq!(resp.status(), 501, "{path} is public");
        let resp = client.get(&url).bearer_auth("not-a-token").send().await.unwrap();
        assert_eq!(resp.status(), 401, "{path}: a bad token is refused");
        let resp = client.get(&url).bearer_auth(&read).send().await.unwrap();
        assert_eq!(resp.status(), 501, "{path}: a token is admitted");
    }
    if let Some(path) = service.absent {
        let resp = client.get(format!("{base}{path}")).bearer_auth(&read).send().await.unwrap();
        assert_eq!(resp.status(), 404, "{path} is not served");
    }
    // Its binary carries the conformance kit: the running server enforces its spec.
    let out =
        Command::new(bin).args(["conformance", "--url", &base]).env(format!("{env}_DATA_DIR"), &data).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}{}", String::from_utf8_lossy(&out.stderr));
    let name = service.name;
    assert!(
        table.lines().last().is_some_and(|l| l.contains(&format!("({name} ")) && l.contains(" 0 failed")),
        "{table}"
    );
}

/// The starter spec's four operations, of service `name`.
fn starter(name: &'static str, env: &'static str) -> Unwritten {
    let items = "/api/v1/items";
    Unwritten {
        name,
        env,
        collection: items,
        scopes: (format!("{name}:read"), format!("{name}:write")),
        valid: json!({"name": "a book"}),
        invalid: json!({"name": ""}),
        routes: vec![("GET", format!("{items}/i1")), ("DELETE", format!("{items}/i1"))],
        absent: None,
        public: None,
    }
}

#[tokio::test]
async fn the_standalone_layout_has_the_repositorys_top_level_builds_and_answers_501_until_written() {
    // What `specwright-codegen new-service pantry --dir DIR` writes, with the published crates
    // pointed at this workspace (they are not on the registry this machine reaches): spec/,
    // generated/ (generated from the spec) and the service's src/, as this repository is laid out.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    outside::lay_out(root, codegen::scaffold::standalone("pantry", None).unwrap());
    for path in ["spec/pantry.toml", "generated/src/pantry/router.rs", "src/lib.rs", "src/service.rs"] {
        assert!(root.join(path).is_file(), "expected {path}");
    }
    let (ok, stderr) = build(root, &[]);
    assert!(ok, "expected the new project to build, got:\n{stderr}");
    expect_unwritten(&outside::target().join("debug/pantry"), root, starter("pantry", "PANTRY")).await;
}
