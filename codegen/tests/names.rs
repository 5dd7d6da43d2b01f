//! Names as APIs write them (snake_case, camelCase, `$ref`, `in-progress`) on the wire, a Rust name derived.

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
        "todos.toml: model `Todo` field `due_at`: its Rust name is that of field `dueAt`; fix: give one of them `rust = \"…\"`, a Rust name of its own"
    );
    assert_eq!(
        refused(with_field("fields.\"a\\tb\" = { type = \"boolean\", description = \"Done.\" }")),
        "todos.toml: model `Todo` field `a\tb`: name is empty, too long or holds a control character; fix: write \
         the name as the wire spells it, without control characters, in at most 256 bytes"
    );
    let header = refused(with_field(
        "fields.\"X Trace\" = { type = \"string\", in = \"header\", optional = true, description = \"T.\" }",
    ));
    assert_eq!(
        header.lines().next(),
        Some(
            "todos.toml: model `Todo` field `X Trace`: a header field's name is no HTTP header name; fix: write \
             `request_id` for `Request-Id`, or the header's name (`X-RateLimit-Limit`)"
        )
    );
}

#[test]
fn any_wire_name_gets_a_rust_name_and_alike_ones_are_refused() {
    use codegen::ir::{header_name, rust_field_name, rust_variant_name};
    let fields =
        [("$ref", "ref"), ("filter[name]", "filter_name"), ("3d", "_3d"), ("+", "field_2b"), ("self", "self_")];
    for (wire, rust) in fields {
        assert_eq!(rust_field_name(wire), rust, "{wire}");
    }
    let variants =
        [("in-progress", "InProgress"), ("1.0", "V10"), ("-", "V2d"), ("Self", "SelfValue"), ("draft", "Draft")];
    for (wire, rust) in variants {
        assert_eq!(rust_variant_name(wire), rust, "{wire}");
    }
    assert_eq!(
        (header_name("request_id"), header_name("X-RateLimit-Limit")),
        ("Request-Id".into(), "X-RateLimit-Limit".into())
    );

    let alike = TODOS.replacen(
        "[models.Todo]",
        "[enums.Mood]\ndescription = \"M.\"\nvalues = [{ name = \"a-b\", description = \"A.\" }, { name = \"a_b\", description = \"B.\" }]\n\n[models.Todo]",
        1,
    );
    assert_eq!(
        codegen::load("todos.toml", &alike).expect_err("refused").to_string(),
        "todos.toml: enum `Mood`: value `a_b` has the Rust name of value `a-b`; fix: give one of them `rust = \"…\"`, a Rust name of its own"
    );
}
