//! `specwright-codegen` run as a user runs it, on a spec folder outside the workspace's own.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn codegen(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_specwright-codegen")).args(args).output().expect("the command runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A project folder holding `spec/` with the given fixture.
fn project_with(fixture: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("spec")).unwrap();
    let name = Path::new(fixture).file_name().unwrap();
    std::fs::copy(fixtures().join(fixture), dir.path().join("spec").join(name)).unwrap();
    dir
}

fn generate(dir: &Path, check: bool) -> Output {
    let (spec, out) = (dir.join("spec"), dir.join("api"));
    let mut args = vec!["generate".as_ref(), "--spec".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str()];
    if check {
        args.push("--check".as_ref());
    }
    codegen(&args)
}

#[test]
fn generates_checks_and_removes_what_it_no_longer_produces() {
    let dir = project_with("valid/memos.toml");
    let api = dir.path().join("api");
    let stale = generate(dir.path(), true);
    assert_eq!(stale.status.code(), Some(1), "an empty output folder is stale");
    assert!(text(&stale.stderr).contains("added: src/lib.rs"), "{}", text(&stale.stderr));

    let made = generate(dir.path(), false);
    assert!(made.status.success(), "{}", text(&made.stderr));
    // The same files `codegen::generate` returns, the Rust ones formatted by rustfmt.
    let spec = std::fs::read_to_string(dir.path().join("spec/memos.toml")).unwrap();
    let expected = codegen::generate(&[("memos.toml", &spec)]).unwrap();
    for f in &expected {
        let written = std::fs::read_to_string(api.join(&f.path)).unwrap_or_else(|_| panic!("{} written", f.path));
        if f.path.ends_with(".rs") {
            assert_eq!(written, codegen::project::rustfmt(&f.text, None).unwrap(), "{}", f.path);
        } else {
            assert_eq!(written, f.text, "{}", f.path);
        }
    }
    assert!(api.join("openapi/memos.json").exists() && api.join("mcp/memos.tools.json").exists());
    let fresh = generate(dir.path(), true);
    assert!(fresh.status.success(), "just generated: {}", text(&fresh.stderr));

    // An edited output file, a stale generated one and a file of the user's own.
    std::fs::write(api.join("src/lib.rs"), "// edited by hand\n").unwrap();
    std::fs::write(api.join("src/old.rs"), "// from an earlier spec\n").unwrap();
    std::fs::write(api.join("Cargo.toml"), "[package]\n").unwrap();
    let drift = generate(dir.path(), true);
    assert_eq!(drift.status.code(), Some(1));
    let listed = text(&drift.stderr);
    assert!(listed.contains("changed: src/lib.rs") && listed.contains("removed: src/old.rs"), "{listed}");
    assert!(!listed.contains("Cargo.toml"), "the user's files are not the generator's: {listed}");
    assert!(generate(dir.path(), false).status.success());
    assert!(!api.join("src/old.rs").exists(), "a file the spec no longer produces is removed");
    assert_eq!(std::fs::read_to_string(api.join("Cargo.toml")).unwrap(), "[package]\n", "the user's file is kept");
    assert!(generate(dir.path(), true).status.success());
}

#[test]
fn an_invalid_spec_names_its_file_and_writes_nothing() {
    let dir = project_with("invalid/unknown_scope.toml");
    let out = generate(dir.path(), false);
    assert_eq!(out.status.code(), Some(1));
    let message = text(&out.stderr);
    assert!(message.contains("unknown_scope.toml") && message.contains("is invalid"), "{message}");
    assert!(!dir.path().join("api").exists(), "nothing written");
    let none = codegen(&[
        "generate".as_ref(),
        "--spec".as_ref(),
        dir.path().join("nowhere").as_os_str(),
        "--out".as_ref(),
        dir.path().join("api").as_os_str(),
    ]);
    assert_eq!(none.status.code(), Some(1));
    assert!(text(&none.stderr).contains("reading the spec folder"), "{}", text(&none.stderr));
}

#[test]
fn prints_the_spec_schema() {
    let out = codegen(&["schema".as_ref()]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), codegen::spec_schema());
}

#[test]
fn new_service_writes_a_project_and_never_over_another() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("pantry");
    let out = codegen(&["new-service".as_ref(), "pantry".as_ref(), "--dir".as_ref(), project.as_os_str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The layout of this repository: spec/, generated/ (already generated), the service's src/.
    for path in [
        "spec/pantry.toml",
        "spec/spec.schema.json",
        "Cargo.toml",
        "generated/Cargo.toml",
        "generated/src/pantry/router.rs",
        "generated/openapi/pantry.json",
        "src/lib.rs",
        "src/service.rs",
        "src/main.rs",
    ] {
        assert!(project.join(path).is_file(), "expected {path}");
    }
    assert!(!project.join("build.rs").exists(), "the API is generated into generated/, not at build time");
    // What it generated is what `generate --check` expects.
    let (spec, generated) = (project.join("spec"), project.join("generated"));
    let check = codegen(&[
        "generate".as_ref(),
        "--spec".as_ref(),
        spec.as_os_str(),
        "--out".as_ref(),
        generated.as_os_str(),
        "--check".as_ref(),
    ]);
    assert!(check.status.success(), "{}{}", text(&check.stdout), text(&check.stderr));

    let again = codegen(&["new-service".as_ref(), "pantry".as_ref(), "--dir".as_ref(), project.as_os_str()]);
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("is not empty; choose a new folder"), "{}", text(&again.stderr));
    let bad = codegen(&["new-service".as_ref(), "Pantry".as_ref(), "--dir".as_ref(), dir.path().join("x").as_os_str()]);
    assert!(text(&bad.stderr).contains("cannot name a service: use snake_case"), "{}", text(&bad.stderr));
    assert!(!dir.path().join("x").exists(), "nothing written for a refused name");
}

#[test]
fn diff_fails_on_a_breaking_change_of_the_same_major_version_and_passes_with_a_new_one() {
    let (old, new) = (project_with("prelude/todos.toml"), project_with("prelude/todos.toml"));
    let spec = new.path().join("spec/todos.toml");
    let text = std::fs::read_to_string(&spec).unwrap().replacen("get_todo = {", "read_todo = {", 1);
    std::fs::write(&spec, &text).unwrap();
    let run = || codegen(&["diff".as_ref(), old.path().join("spec").as_os_str(), new.path().join("spec").as_os_str()]);
    let out = run();
    assert!(!out.status.success());
    assert!(
        text_of(&out).contains("breaking: todos: operation `get_todo`: renamed to `read_todo` [operation-renamed]"),
        "{}",
        text_of(&out)
    );
    std::fs::write(&spec, text.replacen("version = \"1.0.0\"", "version = \"2.0.0\"", 1)).unwrap();
    let out = run();
    assert!(out.status.success(), "{}", text_of(&out));
}

fn text_of(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

#[test]
fn import_writes_nothing_when_something_is_left_out_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let doc = fixtures().join("import/petstore.yaml");
    let out = dir.path().join("spec");
    let args = |extra: &[&str]| {
        let mut a: Vec<std::ffi::OsString> =
            vec!["import".into(), doc.clone().into(), "--out".into(), out.clone().into()];
        a.extend(extra.iter().map(Into::into));
        a
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        codegen(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>())
    };
    let refused = run(&[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    assert!(text(&refused.stdout).contains("GET /pets/{petId}/events (pet_events): NOT imported:"));
    assert!(!out.exists(), "nothing written");
    let written = run(&["--allow-partial", "--name", "pets", "--mcp-ops", "listPets"]);
    assert_eq!(written.status.code(), Some(0), "{}", text(&written.stderr));
    let spec = std::fs::read_to_string(out.join("pets.toml")).unwrap();
    assert!(spec.contains("name = \"pets\"") && spec.contains("mcp = { name = \"list_pets\""), "{spec}");
    assert!(spec.matches("mcp = {").count() == 1, "only the operation named");
    let bad = run(&["--scope-by-method", "read:pets:write"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("--scope-by-method: write it as READ:WRITE"));
    // What was written generates.
    let generated = codegen(&[
        "generate".as_ref(),
        "--spec".as_ref(),
        out.as_os_str(),
        "--out".as_ref(),
        dir.path().join("api").as_os_str(),
    ]);
    assert_eq!(generated.status.code(), Some(0), "{}", text(&generated.stderr));
}

#[test]
fn new_service_from_a_document_starts_a_project_from_its_import() {
    let dir = tempfile::tempdir().unwrap();
    let doc = fixtures().join("import/petstore.yaml");
    let project = dir.path().join("shop");
    let run = |extra: &[&str]| {
        let mut a: Vec<std::ffi::OsString> = vec![
            "new-service".into(),
            "shop".into(),
            "--dir".into(),
            project.clone().into(),
            "--from".into(),
            doc.clone().into(),
        ];
        a.extend(extra.iter().map(Into::into));
        codegen(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>())
    };
    let refused = run(&[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text_of(&refused));
    assert!(text_of(&refused).contains("--allow-partial leaves them out"), "{}", text_of(&refused));
    assert!(!project.exists(), "nothing written");
    let made = run(&["--allow-partial"]);
    assert_eq!(made.status.code(), Some(0), "{}", text_of(&made));
    let spec = std::fs::read_to_string(project.join("spec/shop.toml")).unwrap();
    assert!(spec.starts_with("#:schema spec.schema.json\n"), "{spec}");
    assert!(spec.contains("service_wide = [\"internal\", \"request_timeout\", \"unavailable\", \"not_implemented\"]"));
    let service = std::fs::read_to_string(project.join("src/service.rs")).unwrap();
    assert!(
        service.contains("async fn list_pets(") && service.contains("NotImplemented(unwritten(\"list_pets\"))"),
        "{service}"
    );
    assert!(!service.contains("fn pet_events("), "the operation left out has no method");
}
