//! The MCP catalog beyond tools (`mcp/<service>.catalog.json`): resources and templates derived
//! from `GET` operations, completion sources (declared, and derived from enums and from the
//! resources a prompt reads), prompts with their scope; and every spec the runtime could not
//! serve refused with its place and fix.

use serde_json::{Value, json};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

/// The to-do example served over MCP, with `edits` applied (each `(from, to)` must be there) and
/// `tail` appended.
fn spec(edits: &[(&str, &str)], tail: &str) -> String {
    let mut text = TODOS.replacen("base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/mcp\"", 1);
    for (from, to) in edits {
        assert!(text.contains(from), "no `{from}`");
        text = text.replacen(from, to, 1);
    }
    text + tail
}

const LISTED: (&str, &str) = (
    "summary = \"List to-dos\",",
    "summary = \"List to-dos\", resource = { name = \"todos\", description = \"Open to-dos.\" },",
);
const ONE: (&str, &str) = (
    "summary = \"Read a to-do\",",
    "summary = \"Read a to-do\", resource = { name = \"todo\", title = \"A to-do\", description = \"One to-do.\", complete.id = { operation = \"list_todos\", field = \"id\" } },",
);
const PROMPT: &str = r#"
[[prompts]]
name = "review"
description = "Review a to-do."
arguments = [{ name = "id", description = "Its id." }, { name = "tone", description = "How.", required = false, complete = { values = ["kind", "blunt"] } }]
messages = [{ text = "Review it, {tone}; keep {\"json\": 1} as it is." }, { role = "assistant", resource = "todos://todos/{id}" }]
"#;

fn catalog(text: &str) -> Value {
    let files = codegen::generate(&[("todos.toml", text)]).unwrap_or_else(|e| panic!("{e}"));
    let file = files.iter().find(|f| f.path == "mcp/todos.catalog.json").expect("a catalog");
    serde_json::from_str(&file.text).unwrap()
}

fn refused(text: &str) -> String {
    match codegen::load("todos.toml", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn get_operations_become_resources_and_templates_with_their_scope() {
    let c = catalog(&spec(&[LISTED, ONE], PROMPT));
    assert_eq!(c["resources"][0]["uri"], "todos://todos");
    assert_eq!(c["resources"][0]["mimeType"], "application/json");
    let one = &c["resourceTemplates"][0];
    assert_eq!((one["uriTemplate"].as_str(), one["title"].as_str()), (Some("todos://todos/{id}"), Some("A to-do")));
    assert_eq!(one["description"], "One to-do.\n\nSCOPE: todos:read");
    assert_eq!(
        one["_meta"],
        json!({"dev.specwright/requiredScope": "todos:read", "dev.specwright/operationId": "get_todo"})
    );
    // The prompt needs what the resource it reads needs; its messages keep their placeholders.
    let prompt = &c["prompts"][0];
    assert_eq!(prompt["_meta"]["dev.specwright/requiredScope"], "todos:read");
    assert_eq!(prompt["arguments"][1], json!({"name": "tone", "description": "How.", "required": false}));
    assert_eq!(c["messages"]["review"][1], json!({"role": "assistant", "resource": "todos://todos/{id}"}));
    // Completions: the template's declared source, the prompt's own values, and the prompt's
    // `id`, which completes as the template variable it fills.
    let sources: Vec<(String, String, Value)> = c["completions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (c["ref"]["type"].as_str().unwrap().into(), c["argument"].as_str().unwrap().into(), c["source"].clone())
        })
        .collect();
    let listing = json!({"operation": "list_todos", "field": "id"});
    assert_eq!(
        sources,
        [
            ("ref/resource".into(), "id".into(), listing.clone()),
            ("ref/prompt".into(), "id".into(), listing),
            ("ref/prompt".into(), "tone".into(), json!({"values": ["kind", "blunt"]})),
        ]
    );
}

#[test]
fn a_service_without_resources_or_prompts_has_no_catalog() {
    let files = codegen::generate(&[("todos.toml", &spec(&[], ""))]).unwrap();
    assert!(!files.iter().any(|f| f.path.ends_with(".catalog.json")));
}

#[test]
fn an_enum_path_parameter_completes_with_its_values() {
    let text = spec(
        &[
            (
                "[models.TodoRef]",
                "[enums.Color]\ndescription = \"A color.\"\nvalues = [{ name = \"red\", description = \"Red.\" }, { name = \"blue\", description = \"Blue.\" }]\n\n[models.ByColor]\ndescription = \"A color.\"\nfields.color = { type = \"Color\", in = \"path\", description = \"The color.\" }\n\n[models.TodoRef]",
            ),
            (
                "delete_todo =",
                "by_color = { route = \"GET /colors/{color}\", scope = \"todos:read\", summary = \"By color\", input = \"ByColor\", output = \"Todo\", list = true, errors = [\"validation\"], resource = { name = \"color\", description = \"To-dos of a color.\" } }\ndelete_todo =",
            ),
        ],
        "",
    );
    let text = text.replace("output = \"Todo\", list = true,", "output = \"Todo[]\",");
    let c = catalog(&text);
    assert_eq!(c["completions"][0]["source"], json!({"values": ["red", "blue"]}), "{c}");
}

#[test]
fn specs_the_runtime_could_not_serve_are_refused_with_their_fix() {
    let cases: Vec<(String, &str)> = vec![
        (
            spec(
                &[(
                    "summary = \"Create a to-do\",",
                    "summary = \"Create a to-do\", resource = { name = \"x\", description = \"X.\" },",
                )],
                "",
            ),
            "only a `GET` operation reads a resource",
        ),
        (
            spec(
                &[
                    LISTED,
                    ("resource = { name = \"todos\"", "resource = { name = \"todos\", uri = \"todos://all/{x}\""),
                ],
                "",
            ),
            "has the variables",
        ),
        (
            spec(
                &[LISTED, ("resource = { name = \"todos\"", "resource = { name = \"todos\", uri = \"no scheme\"")],
                "",
            ),
            "has no scheme",
        ),
        (
            spec(
                &[
                    LISTED,
                    ("resource = { name = \"todos\"", "resource = { name = \"todos\", uri = \"todos://todos/{id}\""),
                ],
                "",
            )
            .replacen(
                "summary = \"Read a to-do\",",
                "summary = \"Read a to-do\", resource = { name = \"todo\", description = \"T.\" },",
                1,
            ),
            "has the variables",
        ),
        (
            spec(&[ONE, LISTED, ("resource = { name = \"todos\"", "resource = { name = \"todo\"")], ""),
            "resource `todo` is declared twice",
        ),
        (
            spec(
                &[
                    ONE,
                    (
                        "complete.id = { operation = \"list_todos\", field = \"id\" }",
                        "complete.id = { operation = \"list_todos\" }",
                    ),
                ],
                "",
            ),
            "name the `field` of each item",
        ),
        (
            spec(
                &[
                    ONE,
                    (
                        "complete.id = { operation = \"list_todos\", field = \"id\" }",
                        "complete.id = { operation = \"get_todo\", field = \"id\" }",
                    ),
                ],
                "",
            ),
            "is not a `GET` that needs no input",
        ),
        (
            spec(
                &[
                    ONE,
                    (
                        "complete.id = { operation = \"list_todos\", field = \"id\" }",
                        "complete.id = { operation = \"list_todos\", field = \"done\" }",
                    ),
                ],
                "",
            ),
            "`done` is no string field of `Todo`",
        ),
        (
            spec(
                &[
                    ONE,
                    (
                        "complete.id = { operation = \"list_todos\", field = \"id\" }",
                        "complete.nope = { values = [\"a\"] }",
                    ),
                ],
                "",
            ),
            "`complete` names `nope`",
        ),
        (
            spec(
                &[
                    ONE,
                    (
                        "complete.id = { operation = \"list_todos\", field = \"id\" }",
                        "complete.id = { values = [\"a\"], enum = \"X\" }",
                    ),
                ],
                "",
            ),
            "exactly one of `operation`, `enum` and `values`",
        ),
        (spec(&[ONE], &PROMPT.replace("{tone}", "{mood}")), "names `{mood}`, which is no argument nor field of an ask"),
        (
            spec(&[ONE], &PROMPT.replace("todos://todos/{id}", "todos://nothing/{id}")),
            "which is no resource of this service",
        ),
        (spec(&[ONE], &PROMPT.replace("resource = \"todos", "image = \"todos")), "answers no `image/*` file"),
        (
            spec(
                &[ONE],
                &PROMPT.replace(
                    "{ text = \"Review",
                    "{ text = \"x\", resource = \"todos://todos/{id}\" }, { text = \"Review",
                ),
            ),
            "not exactly one of",
        ),
        (spec(&[ONE], &format!("{PROMPT}{PROMPT}")), "the prompt is declared twice"),
        (
            spec(
                &[ONE],
                &PROMPT.replace(
                    "description = \"Review a to-do.\"",
                    "description = \"Review a to-do.\"\nscope = \"todos:admin\"",
                ),
            ),
            "is not in the scope catalog",
        ),
        (
            spec(&[ONE], &PROMPT.replace("name = \"review\"", "name = \"a review\"")),
            "a prompt's name is 1–64 characters",
        ),
        (
            TODOS.replacen(
                "summary = \"List to-dos\",",
                "summary = \"List to-dos\", resource = { name = \"t\", description = \"T.\" },",
                1,
            ),
            "mcp_path is not set",
        ),
    ];
    for (text, expected) in cases {
        let message = refused(&text);
        assert!(message.contains(expected), "expected `{expected}` in:\n{message}");
    }
}

/// `get_todo`'s tool with `content` blocks.
fn with_content(blocks: &str) -> String {
    spec(
        &[(
            "summary = \"Read a to-do\",",
            &format!(
                "summary = \"Read a to-do\", mcp = {{ name = \"todos.get\", title = \"Get\", description = \"Get.\", content = [{blocks}] }},"
            ),
        )],
        "",
    )
}

#[test]
fn a_tools_content_is_declared_from_its_outputs_fields() {
    let c = catalog(&with_content("{ text = \"title\" }, { link = \"todos://todos/{id}\" }"));
    assert_eq!(c["toolContent"]["todos.get"], json!([{"text": "title"}, {"link": "todos://todos/{id}"}]));
    let cases = [
        ("{ text = \"done\" }", "`done` is no string field of `Todo`"),
        ("{ image = \"title\" }", "needs the `mime_type`"),
        ("{ resource = \"title\" }", "`uri` goes with `resource`"),
        ("{ link = \"todos://todos/{nope}\" }", "`{nope}` in `todos://todos/{nope}` is no field of `Todo`"),
        ("{ text = \"title\", link = \"x://y\" }", "not exactly one of"),
    ];
    for (blocks, expected) in cases {
        let message = refused(&with_content(blocks));
        assert!(message.contains(expected), "expected `{expected}` in:\n{message}");
    }
    let listed = spec(
        &[(
            "paginated = true,",
            "paginated = true, mcp = { name = \"l\", title = \"L\", description = \"L.\", content = [{ text = \"title\" }] },",
        )],
        "",
    );
    assert!(refused(&listed).contains("reads the fields of an output model"));
}

/// The to-do reader as a tool that may ask its client for input, failing over REST with `code`.
fn asking(code: &str) -> String {
    spec(
        &[(
            "summary = \"Read a to-do\",",
            &format!(
                "summary = \"Read a to-do\", mcp = {{ name = \"todos.get\", title = \"Get\", description = \"Get.\", asks_input = \"{code}\" }},"
            ),
        )],
        "",
    )
}

#[test]
fn an_operation_asking_for_input_declares_the_error_rest_answers_and_its_enum_converts() {
    let files = codegen::generate(&[("todos.toml", &asking("validation"))]).unwrap_or_else(|e| panic!("{e}"));
    let errors = files.iter().find(|f| f.path.ends_with("errors.rs")).expect("errors.rs");
    assert!(
        errors.text.contains(
            "impl From<support::InputRequired> for GetTodoError {\n    fn from(e: support::InputRequired) -> Self {\n        GetTodoError::Validation(e.into_problem())"
        ),
        "{}",
        errors.text
    );
    let message = refused(&asking("conflict"));
    assert!(message.contains("`mcp.asks_input` names `conflict`, which the operation does not declare"), "{message}");
}
