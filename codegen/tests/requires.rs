//! Groups of fields a request gives in full (`requires`): what the loader accepts, what the
//! documents and the tools say, and what the contract diff makes of a change.

mod common;
use common::{file, generated};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");
const TITLE: &str =
    "fields.title = { type = \"string\", min_length = 1, max_length = 200, description = \"What to do.\" }";

/// `TODOS` whose new to-do also takes an optional `note` and `link`, with `requires` (if any).
fn with_requires(requires: &str) -> String {
    let fields = format!(
        "{TITLE}\nfields.note = {{ type = \"string\", optional = true, description = \"A note.\" }}\n\
         fields.link = {{ type = \"string\", optional = true, description = \"A link.\" }}\n{requires}"
    );
    assert!(TODOS.contains(TITLE));
    TODOS.replacen(TITLE, &fields, 1)
}

#[test]
fn a_model_requires_groups_of_its_optional_body_fields() {
    let files = generated(&with_requires("requires = { one_of = [[\"note\"], [\"link\"]] }"));
    let doc: serde_json::Value = serde_json::from_str(file(&files, "openapi/todos.json")).unwrap();
    let new_todo = &doc["components"]["schemas"]["NewTodo"];
    assert_eq!(new_todo["oneOf"], serde_json::json!([{"required": ["note"]}, {"required": ["link"]}]), "{new_todo}");
    let doc30: serde_json::Value = serde_json::from_str(file(&files, "openapi/todos.3.0.json")).unwrap();
    assert_eq!(doc30["components"]["schemas"]["NewTodo"]["oneOf"], new_todo["oneOf"]);
    let operations = common::squeezed(file(&files, "todos/operations.rs"));
    assert!(
        operations.contains("requires:Some(&support::Requires{exactly_one:true,groups:&[&[\"note\"],&[\"link\"]]"),
        "{operations}"
    );

    let refused =
        |requires: &str| codegen::load("todos.toml", &with_requires(requires)).expect_err("refused").to_string();
    assert_eq!(
        refused("requires = { any_of = [[\"note\"], [\"title\"]] }"),
        "todos.toml: model `NewTodo` requires: names `title`, which every request gives (it is not optional); fix: \
         group optional fields only"
    );
    assert_eq!(
        refused("requires = { any_of = [[\"note\"], [\"colour\"]] }"),
        "todos.toml: model `NewTodo` requires: names `colour`, which is no field of the model; fix: name its fields"
    );
    assert!(
        refused("requires = { any_of = [[\"note\"]] }").contains("names fewer than two groups"),
        "one group is required fields"
    );
    assert!(
        refused("requires = { any_of = [[\"note\"], [\"link\"]], one_of = [[\"note\"], [\"link\"]] }")
            .contains("lists both `any_of` and `one_of`")
    );
}

#[test]
fn requiring_groups_of_a_request_breaks_its_contract_and_dropping_them_does_not() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let (none, some) = (with_requires(""), with_requires("requires = { any_of = [[\"note\"], [\"link\"]] }"));
    let lines = |old: &str, new: &str| {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect::<Vec<_>>()
    };
    assert_eq!(
        lines(&none, &some),
        ["breaking: todos: model `NewTodo`: now requires at least one of [note] [link] [required-groups-narrowed]"]
    );
    assert_eq!(
        lines(&some, &none),
        ["compatible: todos: model `NewTodo`: no longer requires groups of fields [required-groups-changed]"]
    );
}
