//! File outputs (`output = "file"` with its `media_types`): the generated trait and endpoint,
//! both documents, the loader's checks and the contract diff's rules.

use serde_json::Value;

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

const GET: &str = "input = \"TodoRef\", output = \"Todo\",";

fn file_spec(types: &str) -> String {
    assert!(TODOS.contains(GET));
    TODOS.replacen(GET, &format!("input = \"TodoRef\", output = \"file\", media_types = [{types}],"), 1)
}

#[test]
fn a_file_output_is_a_streamed_file_in_the_code_and_a_typed_string_in_the_documents() {
    let files = codegen::generate(&[("todos.toml", &file_spec("\"text/csv\", \"image/png\""))]).unwrap();
    let text =
        |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.split_whitespace().collect::<String>();
    assert!(text("service.rs").contains("Result<support::File,errors::GetTodoError>"), "{}", text("service.rs"));
    assert!(text("router.rs").contains("s.get_todo(c,input).await.map(support::Success::File)"));
    for (path, csv) in [
        ("openapi/todos.json", serde_json::json!({"type": "string", "contentMediaType": "text/csv"})),
        ("openapi/todos.3.0.json", serde_json::json!({"type": "string", "format": "binary"})),
    ] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let ok = &doc["paths"]["/todos/{id}"]["get"]["responses"]["200"];
        assert_eq!(ok["content"]["text/csv"]["schema"], csv, "{path}");
        assert!(ok["content"]["image/png"].is_object() && ok["content"].get("application/json").is_none());
        assert!(ok["headers"]["Content-Disposition"].is_object(), "{path}");
    }
}

#[test]
fn the_loader_asks_a_file_output_for_its_types_and_refuses_what_needs_json() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        refused(file_spec("")),
        "todos.toml: operation `get_todo`: a file output declares no media type; fix: add `media_types = \
         [\"text/csv\"]` (the types it may have)"
    );
    assert_eq!(
        refused(file_spec("\"csv\"")),
        "todos.toml: operation `get_todo`: media type `csv` is not `type/subtype`; fix: write it like `text/csv`"
    );
    assert_eq!(
        refused(file_spec("\"text/csv\"").replace("output = \"file\", ", "conditional = true, output = \"file\", ")),
        "todos.toml: operation `get_todo`: a file output cannot be a conditional request (its tag is a digest of \
         JSON); fix: answer a model, or drop it"
    );
    assert_eq!(
        refused(TODOS.replacen(GET, &format!("{GET} media_types = [\"text/csv\"],"), 1)),
        "todos.toml: operation `get_todo`: `media_types` is for `output = \"file\"`; fix: remove `media_types`, or \
         answer a file"
    );
}

#[test]
fn the_diff_says_what_a_file_output_change_breaks() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let csv = file_spec("\"text/csv\"");
    assert_eq!(
        lines(TODOS, &csv),
        ["breaking: todos: operation `get_todo`: answers a file instead of JSON [output-shape-changed]"]
    );
    assert_eq!(
        lines(&csv, &file_spec("\"text/csv\", \"text/plain\"")),
        ["breaking: todos: operation `get_todo`: may now answer a file of `text/plain` [file-media-type-added]"]
    );
    assert_eq!(
        lines(&file_spec("\"text/csv\", \"text/plain\""), &csv),
        ["compatible: todos: operation `get_todo`: no longer answers `text/plain` [file-media-type-removed]"]
    );
}
