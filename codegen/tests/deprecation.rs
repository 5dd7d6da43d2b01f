//! Deprecated operations and fields: the generated headers, both documents, the MCP tool's
//! description, the loader's checks and the contract diff's rules.

use serde_json::Value;

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

const GET: &str = "get_todo = { route = \"GET /todos/{id}\",";
const DEPRECATED: &str = "get_todo = { deprecated = { since = \"2026-11-26\", sunset = \"2027-06-01\", instead = \"Use the list.\" }, route = \"GET /todos/{id}\",";
const DONE: &str = "fields.done = { type = \"boolean\", in = \"query\", optional = true,";

fn deprecated_spec() -> String {
    assert!(TODOS.contains(GET) && TODOS.contains(DONE));
    TODOS.replacen(GET, DEPRECATED, 1).replacen(DONE, &format!("{DONE} deprecated = true,"), 1)
}

fn generated(spec: &str) -> Vec<codegen::File> {
    codegen::generate(&[("todos.toml", spec)]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_deprecated_operation_carries_its_headers_and_the_documents_mark_it() {
    let files = generated(&deprecated_spec());
    let table = files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap();
    let squeezed: String = table.text.split_whitespace().collect();
    assert!(
        squeezed.contains(
            "deprecation:Some(&support::Deprecation{deprecation:Some(\"@1795651200\"),sunset:Some(\"Tue,01Jun202700:00:00GMT\"),},),"
        ),
        "{}",
        table.text
    );
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let op = &doc["paths"]["/todos/{id}"]["get"];
        assert_eq!(op["deprecated"], true, "{path}");
        assert!(
            op["description"]
                .as_str()
                .unwrap()
                .ends_with("**Deprecated** since 2026-11-26; it may be removed from 2027-06-01. Use the list.")
        );
        for status in ["200", "404"] {
            assert!(op["responses"][status]["headers"]["Deprecation"].is_object(), "{path} {status}");
        }
        let list = &doc["paths"]["/todos"]["get"];
        assert!(list.get("deprecated").is_none(), "only the deprecated operation");
        let done = list["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "done").unwrap();
        assert_eq!(done["deprecated"], true, "{path}");
    }
}

#[test]
fn a_deprecation_without_a_day_marks_the_documents_and_sends_no_header() {
    let spec = TODOS.replacen(GET, "get_todo = { deprecated = true, route = \"GET /todos/{id}\",", 1);
    let files = generated(&spec);
    let table = files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap();
    let squeezed: String = table.text.split_whitespace().collect();
    assert!(
        squeezed.contains("deprecation:Some(&support::Deprecation{deprecation:None,sunset:None,},),"),
        "{}",
        table.text
    );
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let op = &doc["paths"]["/todos/{id}"]["get"];
        assert_eq!(op["deprecated"], true, "{path}");
        assert!(op["description"].as_str().unwrap().ends_with("**Deprecated**."), "{}", op["description"]);
        assert!(op["responses"]["200"]["headers"]["Deprecation"].is_null(), "{path}: no day, no header");
    }
    let refused = codegen::load("todos.toml", &spec.replace("deprecated = true", "deprecated = false"));
    assert!(refused.expect_err("refused").to_string().contains("write `deprecated = true`, or leave it out"));
    // The contract diff names no day it does not have.
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let changes: Vec<String> =
        codegen::diff::compare(&load(TODOS), &load(&spec)).changes.iter().map(ToString::to_string).collect();
    assert_eq!(changes, ["compatible: todos: operation `get_todo`: was deprecated [operation-deprecated]"]);
}

#[test]
fn deprecation_dates_are_checked() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        refused(deprecated_spec().replace("since = \"2026-11-26\"", "since = \"soon\"")),
        "todos.toml: operation `get_todo`: deprecated since `soon` is not a date; fix: write it like `2026-11-26`"
    );
    assert_eq!(
        refused(deprecated_spec().replace("sunset = \"2027-06-01\"", "sunset = \"2026-01-01\"")),
        "todos.toml: operation `get_todo`: deprecated sunset `2026-01-01` is not after since `2026-11-26`; fix: give \
         a later sunset"
    );
}

#[test]
fn deprecating_is_compatible_and_removing_what_was_deprecated_still_breaks() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let deprecated = deprecated_spec();
    assert_eq!(
        lines(TODOS, &deprecated),
        [
            "compatible: todos: operation `list_todos` input field `done`: was deprecated [input-field-deprecated]",
            "compatible: todos: operation `get_todo`: was deprecated since 2026-11-26 [operation-deprecated]",
        ]
    );
    let removed: String = deprecated.lines().filter(|l| !l.starts_with("get_todo")).collect::<Vec<_>>().join("\n");
    assert_eq!(
        lines(&deprecated, &removed),
        [
            "breaking: todos: operation `get_todo`: was removed (deprecated since 2026-11-26) [deprecated-operation-removed]"
        ]
    );
}
