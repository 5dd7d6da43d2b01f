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

/// Rust's keywords (strict and reserved, 2024 edition): what a document may name a field or an
/// operation after (a forecasting API's `override`, an `r#type` discriminator).
const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn", "else",
    "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod",
    "move", "mut", "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true",
    "try", "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

#[test]
fn every_rust_keyword_names_a_field_and_an_operation() {
    let fields: String = RUST_KEYWORDS
        .iter()
        .map(|k| format!("fields.{k} = {{ type = \"string\", optional = true, description = \"A word.\" }}\n"))
        .collect();
    let mut spec = with_field(&fields).replace(
        "[operations]",
        "[error_roles]\nservice_wide = [\"internal\", \"request_timeout\", \"unavailable\", \"not_implemented\"]\n\n[operations]",
    );
    for k in RUST_KEYWORDS {
        spec.push_str(&format!(
            "{k} = {{ route = \"GET /words/{k}\", scope = \"todos:read\", summary = \"A word\", output = \"Todo\" }}\n"
        ));
    }
    let files = codegen::generate(&[("todos.toml", &spec)]).unwrap_or_else(|e| panic!("{e}"));
    for f in files.iter().filter(|f| f.path.ends_with(".rs")) {
        syn::parse_file(&f.text).unwrap_or_else(|e| panic!("{} is no Rust: {e}", f.path));
    }
    // And the implementation `new-service` writes for it.
    let api = codegen::load("todos.toml", &spec).unwrap();
    for (path, text) in codegen::scaffold::implementation(&api, "todos_api::todos").unwrap() {
        syn::parse_file(&text).unwrap_or_else(|e| panic!("the scaffold's {path} is no Rust: {e}"));
    }
    let squeezed =
        |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.split_whitespace().collect::<String>();
    let models = squeezed("todos/models.rs");
    assert!(models.contains("pubr#override:Option<String>"), "{models}");
    assert!(models.contains("#[serde(rename=\"self\")]"), "{models}");
    let service = squeezed("todos/service.rs");
    assert!(service.contains("fnr#override(") && service.contains("fnself_("), "{service}");
}

#[test]
fn a_type_named_as_the_generated_rust_names_its_own_is_refused() {
    // `Box`, `Option`, `Kind`: the models module uses them bare (an API's `Box` schema).
    let spec = TODOS.replace("[models.NewTodo]", "[models.Box]\ndescription = \"A box.\"\nfields.id = { type = \"string\", description = \"Id.\" }\n\n[models.NewTodo]");
    let message = codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        message,
        "todos.toml: model `Box`: `Box` is a name the generated Rust uses for its own (`Option`, `Box`, `Kind`, ...); \
         fix: rename it, e.g. `BoxItem`"
    );
}
