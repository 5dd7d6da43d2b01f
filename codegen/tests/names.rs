//! Field names as APIs write them: snake_case or camelCase on the wire, snake case in Rust.

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

fn with_field(line: &str) -> String {
    TODOS.replacen("fields.done = { type = \"boolean\", description = \"Whether it is done.\" }", line, 1)
}

#[test]
fn a_camel_case_field_keeps_its_wire_name_and_gets_a_rust_one() {
    let spec = with_field("fields.dueAt = { type = \"datetime\", optional = true, description = \"When.\" }");
    let files = codegen::generate(&[("todos.toml", &spec)]).unwrap_or_else(|e| panic!("{e}"));
    let models =
        files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text.split_whitespace().collect::<String>();
    assert!(models.contains("#[serde(rename=\"dueAt\")]"), "{models}");
    assert!(models.contains("pubdue_at:Option<chrono::DateTime<chrono::Utc>>"), "{models}");
    let doc: serde_json::Value =
        serde_json::from_str(&files.iter().find(|f| f.path == "openapi/todos.json").unwrap().text).unwrap();
    assert!(doc["components"]["schemas"]["Todo"]["properties"]["dueAt"].is_object());
}

#[test]
fn the_loader_refuses_names_that_collide_in_rust_or_are_no_identifiers() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    let twice = with_field(
        "fields.dueAt = { type = \"datetime\", description = \"When.\" }\nfields.due_at = { type = \"datetime\", description = \"When.\" }",
    );
    assert_eq!(
        refused(twice),
        "todos.toml: model `Todo` field `due_at`: its Rust name is that of field `dueAt`; fix: rename one of them"
    );
    assert_eq!(
        refused(with_field("fields.Done = { type = \"boolean\", description = \"Done.\" }")),
        "todos.toml: model `Todo` field `Done`: name is not a snake_case or camelCase identifier; fix: use letters, \
         digits and `_`, starting with a lowercase letter"
    );
}
