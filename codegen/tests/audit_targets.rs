//! `audit_targets`: the input fields an operation's audit row names, read by the generated
//! `Endpoint` before the call; what the loader refuses of it; and that it stays out of the
//! documents a client is given.

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

const GET: &str = "get_todo = { route = \"GET /todos/{id}\",";
const CREATE: &str = "create_todo = { route = \"POST /todos\",";

/// The to-do spec with `targets` (a TOML array's inside) as `get_todo`'s audit targets and the
/// new to-do's title and tags as `create_todo`'s.
fn spec(targets: &str) -> String {
    assert!(TODOS.contains(GET) && TODOS.contains(CREATE));
    TODOS
        .replacen(GET, &format!("get_todo = {{ audit_targets = [{targets}], route = \"GET /todos/{{id}}\","), 1)
        .replacen(
            CREATE,
            "create_todo = { audit_targets = [\"title\", \"tags\", \"note\"], route = \"POST /todos\",",
            1,
        )
        .replacen(
            "fields.title = { type = \"string\", min_length = 1, max_length = 200, description = \"What to do.\" }",
            "fields.title = { type = \"string\", min_length = 1, max_length = 200, description = \"What to do.\" }\n\
             fields.tags = { type = \"string[]\", description = \"Labels.\" }\n\
             fields.note = { type = \"string\", optional = true, description = \"A remark.\" }\n\
             fields.due = { type = \"integer\", optional = true, description = \"Days left.\" }",
            1,
        )
}

fn squeezed(text: &str) -> String {
    text.split_whitespace().collect()
}

#[test]
fn the_endpoint_reads_the_named_fields_in_order_whatever_their_shape() {
    let files = codegen::generate(&[("todos.toml", spec("\"id\"").as_str())]).unwrap_or_else(|e| panic!("{e}"));
    let router = squeezed(&files.iter().find(|f| f.path.ends_with("router.rs")).unwrap().text);
    // A required string, a list of strings and an optional string, in the order the spec names them.
    assert!(
        router.contains(
            "fntargets(input:&Self::Input)->Vec<String>{std::iter::empty()\
             .chain(std::iter::once(input.title.clone())).chain(input.tags.iter().cloned())\
             .chain(input.note.clone()).collect()}"
        ),
        "{router}"
    );
    assert!(router.contains("fntargets(input:&Self::Input)->Vec<String>{vec![input.id.clone()]}"), "{router}");
    // An operation that names none keeps the trait's default (no targets).
    assert_eq!(router.matches("fntargets(").count(), 2, "{router}");
    // The documents a client is given do not carry it: it is how the service audits, not its contract.
    for file in files.iter().filter(|f| f.path.starts_with("openapi/") || f.path.starts_with("mcp/")) {
        assert!(!file.text.contains("audit_targets") && !file.text.contains("audit-targets"), "{}", file.path);
    }
}

#[test]
fn the_loader_refuses_a_target_that_is_not_a_string_field_of_the_input() {
    let cases = [
        ("\"ident\"", "`audit_targets` names `ident`, which is not a field of `TodoRef`; fix: use one of: id"),
        ("\"id\", \"id\"", "`audit_targets` names `id` twice; fix: name each field once"),
    ];
    for (targets, expected) in cases {
        let err = codegen::load("todos.toml", &spec(targets)).unwrap_err().to_string();
        assert!(err.contains(expected), "expected `{expected}` in:\n{err}");
    }
    let on_integer = spec("\"id\"").replacen("\"title\", \"tags\", \"note\"", "\"due\"", 1);
    let err = codegen::load("todos.toml", &on_integer).unwrap_err().to_string();
    assert!(err.contains("`audit_targets` names `NewTodo.due`, which is not a string or a list of strings"), "{err}");
    let without_input =
        TODOS.replacen("list_todos = { route", "list_todos = { audit_targets = [\"done\"], route", 1).replacen(
            "input = \"ListTodos\", output = \"Todo\", paginated = true, errors = [\"validation\"]",
            "output = \"Todo\"",
            1,
        );
    let err = codegen::load("todos.toml", &without_input).unwrap_err().to_string();
    assert!(err.contains("`audit_targets` names input fields, but the operation has no input model"), "{err}");
}
