//! Defaults of optional input fields, string formats and the `date` type: what the loader
//! accepts, what the generated code and both documents say, and what the contract diff calls a
//! change of them.

use serde_json::{Value, json};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

const LIST: &str = "fields.done = { type = \"boolean\", in = \"query\", optional = true, description = \"Only done (or open) ones.\" }";

/// The example with `extra` fields on the list's filters.
fn with_filters(extra: &str) -> String {
    assert!(TODOS.contains(LIST));
    TODOS.replacen(LIST, &format!("{LIST}\n{extra}"), 1)
}

const FILTERS: &str = r#"[enums.Order]
description = "Order."
values = [{ name = "newest", description = "Newest first." }, { name = "oldest", description = "Oldest first." }]
"#;

fn spec(extra: &str) -> String {
    format!("{}\n{FILTERS}", with_filters(extra))
}

const GOOD: &str = r#"fields.order = { type = "Order", in = "query", optional = true, default = "newest", description = "Order." }
fields.limit = { type = "integer", in = "query", optional = true, default = 10, minimum = 1, maximum = 50, description = "At most." }
fields.since = { type = "date", in = "query", optional = true, description = "From this day." }
fields.owner = { type = "string", in = "query", optional = true, format = "email", description = "Whose." }"#;

fn generated(spec: &str) -> Vec<codegen::File> {
    codegen::generate(&[("todos.toml", spec)]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_default_is_a_plain_value_for_the_handler_and_stated_in_both_documents() {
    let files = generated(&spec(GOOD));
    let models = files.iter().find(|f| f.path.ends_with("models.rs")).unwrap();
    let squeezed: String = models.text.split_whitespace().collect();
    assert!(squeezed.contains("puborder:Order,"), "{}", models.text);
    assert!(squeezed.contains("publimit:i64,"));
    assert!(squeezed.contains("pubsince:Option<chrono::NaiveDate>,"));
    assert!(
        squeezed
            .contains("FieldSpec::query(\"order\",Kind::Enum(&[\"newest\",\"oldest\"])).default(\"\\\"newest\\\"\")")
    );
    assert!(squeezed.contains(".format(support::Format::Email)"));
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let params = doc["paths"]["/todos"]["get"]["parameters"].as_array().unwrap().clone();
        let schema = |name: &str| params.iter().find(|p| p["name"] == name).unwrap()["schema"].clone();
        assert_eq!(schema("order")["default"], "newest", "{path}");
        assert_eq!(schema("order")["allOf"], json!([{"$ref": "#/components/schemas/Order"}]), "{path}");
        assert_eq!(schema("limit")["default"], 10, "{path}");
        assert_eq!(schema("since")["format"], "date", "{path}");
        assert_eq!(schema("owner")["format"], "email", "{path}");
    }
}

fn refused(extra: &str) -> String {
    codegen::load("todos.toml", &spec(extra)).expect_err("refused").to_string()
}

#[test]
fn a_default_the_field_would_refuse_or_cannot_hold_is_refused_with_the_fix() {
    let field = |attrs: &str| format!("fields.x = {{ {attrs}, description = \"X.\" }}");
    let cases = [
        (
            field("type = \"integer\", in = \"query\", optional = true, default = 0, minimum = 1"),
            "default 0 is outside minimum/maximum",
        ),
        (
            field("type = \"Order\", in = \"query\", optional = true, default = \"random\""),
            "default \"random\" is not a value of enum Order",
        ),
        (
            field("type = \"string\", in = \"query\", default = \"a\""),
            "a default is for an optional field that is not nullable",
        ),
        (
            field("type = \"date\", in = \"query\", optional = true, default = \"2030-02-30\""),
            "default \"2030-02-30\" is not a value of type date",
        ),
        (
            field("type = \"string\", in = \"query\", optional = true, format = \"uuid\", default = \"abc\""),
            "default \"abc\" is not in the format uuid",
        ),
        (
            field("type = \"integer\", in = \"query\", optional = true, format = \"email\""),
            "format applies to strings and string lists only",
        ),
    ];
    for (extra, problem) in cases {
        let err = refused(&extra);
        assert!(err.contains(&format!("model `ListTodos` field `x`: {problem}")), "{extra}: {err}");
    }
    // A nested model's field: the decoder fills defaults of an operation's input only.
    let nested = format!(
        "{}\n[models.Window]\ndescription = \"W.\"\nfields.days = {{ type = \"integer\", optional = true, default = 7, description = \"D.\" }}\n",
        spec("fields.window = { type = \"Window\", optional = true, description = \"W.\" }")
    );
    let err = codegen::load("todos.toml", &nested).expect_err("refused").to_string();
    assert!(
        err.contains("model `Window` field `days`: has a default, but the model is not only an operation's input"),
        "{err}"
    );
}

#[test]
fn the_contract_diff_calls_a_changed_default_or_a_new_format_breaking() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let old = spec(GOOD);
    let lines = |new: &str| -> Vec<String> {
        codegen::diff::compare(&load(&old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    assert_eq!(
        lines(&old.replace("default = 10", "default = 20")),
        ["breaking: todos: operation `list_todos` input field `limit`: default 10 became 20 [input-default-changed]"]
    );
    assert_eq!(
        lines(&old.replace("format = \"email\"", "format = \"uuid\"")),
        ["breaking: todos: operation `list_todos` input field `owner`: format `uuid` [input-field-narrowed]"]
    );
    assert_eq!(
        lines(&old.replace(", format = \"email\"", "")),
        [
            "compatible: todos: operation `list_todos` input field `owner`: format `email` dropped [input-field-loosened]"
        ]
    );
}
