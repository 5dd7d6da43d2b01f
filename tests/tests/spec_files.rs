//! Spec files are written by people, in editors that complete and check them against
//! `spec/spec.schema.json` (taplo, Even Better TOML): every spec of the repository names the
//! schema on its first line, by a path that reaches it, and every valid spec (the starter
//! `new-service` writes included) passes the schema, so the schema never refuses what the
//! generator accepts. The schema check runs Python's `jsonschema` (Draft 2020-12, as schemars
//! writes it); `.ci/run` installs it, elsewhere the check says it skipped.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    xtask::workspace_root()
}

/// Every spec file of the repository: the services', the generator's valid and invalid fixtures.
fn spec_files() -> Vec<PathBuf> {
    let root = root();
    let mut dirs = vec![
        root.join("codegen/tests/fixtures/valid"),
        root.join("codegen/tests/fixtures/prelude"),
        root.join("codegen/tests/fixtures/invalid"),
    ];
    for (spec, _) in xtask::projects(&root) {
        dirs.push(root.join(&spec));
        if root.join(&spec).join("released").is_dir() {
            dirs.push(root.join(spec).join("released"));
        }
    }
    dirs.sort();
    dirs.dedup();
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_spec_file_names_the_schema_by_a_path_that_reaches_it() {
    let schema = root().join(xtask::SCHEMA_PATH).canonicalize().unwrap();
    let files = spec_files();
    assert!(files.len() >= 20, "expected the services' specs and the fixtures, found {files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let first = text.lines().next().unwrap_or_default();
        let Some(path) = first.strip_prefix("#:schema ") else {
            panic!("expected {} to start with `#:schema <path of spec.schema.json>`, got `{first}`", file.display());
        };
        let resolved = file.parent().unwrap().join(path.trim()).canonicalize();
        assert_eq!(
            resolved.ok().as_deref(),
            Some(schema.as_path()),
            "{}: `{first}` does not reach spec/spec.schema.json",
            file.display()
        );
    }
}

/// Validates each (name, TOML text) against the schema with Python's jsonschema: the failures.
fn schema_failures(python: &str, specs: &[(String, String)]) -> String {
    let docs: Vec<serde_json::Value> = specs
        .iter()
        .map(|(name, text)| {
            let value: toml::Value = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            serde_json::json!({ "name": name, "spec": serde_json::to_value(value).unwrap() })
        })
        .collect();
    let input = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(input.path(), serde_json::to_string(&docs).unwrap()).unwrap();
    let script = r#"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
for doc in json.load(open(sys.argv[2])):
    for e in validator.iter_errors(doc["spec"]):
        print(f"{doc['name']}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
"#;
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(root().join(xtask::SCHEMA_PATH))
        .arg(input.path())
        .output()
        .expect("run python");
    assert!(out.status.success(), "the schema check did not run:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_valid_spec_passes_the_schema_and_the_schema_refuses_an_unknown_key() {
    let Some(python) = tests::tool("SPECWRIGHT_JSONSCHEMA_PYTHON") else { return };
    let mut valid: Vec<(String, String)> = spec_files()
        .into_iter()
        .filter(|p| !p.starts_with(root().join("codegen/tests/fixtures/invalid")))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    valid.push(("the new-service starter".into(), codegen::scaffold::spec("shelf", "spec.schema.json")));
    for (name, text) in &valid {
        codegen::load(name, text).unwrap_or_else(|e| panic!("expected {name} to be valid:\n{e}"));
    }
    let failures = schema_failures(&python, &valid);
    assert!(failures.is_empty(), "expected every valid spec to pass spec.schema.json:\n{failures}");

    let typo = valid[0].1.replacen("[service]\n", "[service]\ntitel = \"typo\"\n", 1);
    let failures = schema_failures(&python, &[("typo".into(), typo)]);
    assert!(
        failures.contains("typo: service: Additional properties are not allowed ('titel' was unexpected)"),
        "{failures}"
    );
}
