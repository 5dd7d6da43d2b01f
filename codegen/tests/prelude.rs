//! The spec prelude: the standard error catalog, error roles and pagination a spec inherits, and
//! how a spec overrides or extends them.

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

fn openapi(spec: &str) -> serde_json::Value {
    let files = codegen::generate(&[("todos.toml", spec)]).unwrap_or_else(|e| panic!("{e}"));
    let doc = files.iter().find(|f| f.path == "openapi/todos.json").expect("the document");
    serde_json::from_str(&doc.text).unwrap()
}

fn response(doc: &serde_json::Value, path: &str, method: &str, status: &str) -> String {
    doc["paths"][path][method]["responses"][status]["description"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_spec_without_a_catalog_inherits_the_prelude() {
    let api = codegen::load("todos.toml", TODOS).unwrap_or_else(|e| panic!("{e}"));
    let codes: Vec<&str> = api.spec.errors.keys().map(String::as_str).collect();
    // Some codes come only where something asks for them: `not_implemented` where a spec lists
    // it in `service_wide`, the preconditions where an operation is a conditional write,
    // `range_not_satisfiable` where one answers ranges.
    let on_demand = ["not_implemented", "precondition_failed", "precondition_required", "range_not_satisfiable"];
    for (code, status, ..) in codegen::spec::PRELUDE.iter().filter(|(c, ..)| !on_demand.contains(c)) {
        assert_eq!(api.spec.errors.get(*code).map(|e| e.status), Some(*status), "{code} in {codes:?}");
    }
    for code in on_demand {
        assert!(!codes.contains(&code), "{code} is not in a catalog nothing asks it of");
    }
    let guarded = TODOS.replace("delete_todo = {", "delete_todo = { conditional = \"required\",");
    let api = codegen::load("todos.toml", &guarded).unwrap_or_else(|e| panic!("{e}"));
    let status = |code: &str| api.spec.errors.get(code).map(|e| e.status);
    assert_eq!((status("precondition_failed"), status("precondition_required")), (Some(412), Some(428)));
    assert_eq!(api.spec.error_roles.not_found, "not_found");
    assert_eq!((api.spec.pagination.default_per_page, api.spec.pagination.max_per_page), (20, 100));
    let doc = openapi(TODOS);
    assert!(response(&doc, "/todos/{id}", "get", "401").contains("`unauthenticated`"), "{doc}");
    assert!(response(&doc, "/todos/{id}", "get", "403").starts_with("`insufficient_scope`"));
    assert!(response(&doc, "/todos/{id}", "get", "404").starts_with("`not_found`: No route matches"));
    assert!(response(&doc, "/todos", "get", "500").starts_with("`internal`"), "service-wide codes");
}

#[test]
fn a_declared_code_overrides_the_prelude_and_roles_point_at_codes_of_its_own() {
    let overridden = format!(
        "{TODOS}\n[errors.not_found]\nstatus = 404\nmessage = \"No such to-do.\"\ndescription = \"No to-do has that id.\"\n"
    );
    let doc = openapi(&overridden);
    assert_eq!(response(&doc, "/todos/{id}", "get", "404"), "`not_found`: No to-do has that id.");
    assert!(response(&doc, "/todos/{id}", "get", "403").starts_with("`insufficient_scope`"), "the rest stays");

    // A role pointed at the spec's own code: the prelude's code of that role is not added.
    let own = TODOS.replace("errors = [\"not_found\", \"validation\"]", "errors = [\"todo/missing\", \"validation\"]")
        + "\n[error_roles]\nnot_found = \"todo/missing\"\n\n[errors.\"todo/missing\"]\nstatus = 404\nmessage = \"No such to-do.\"\ndescription = \"Missing.\"\n";
    let api = codegen::load("todos.toml", &own).unwrap_or_else(|e| panic!("{e}"));
    assert!(!api.spec.errors.contains_key("not_found"), "{:?}", api.spec.errors.keys());
    assert!(api.spec.errors.contains_key("unauthenticated"), "the other roles keep the prelude");
    assert!(response(&openapi(&own), "/todos/{id}", "get", "404").starts_with("`todo/missing`"));

    // A code of its own must be declared: the prelude holds only its own codes.
    let undeclared = format!("{TODOS}\n[error_roles]\nnot_found = \"gone\"\n");
    let err = codegen::load("todos.toml", &undeclared).expect_err("refused").to_string();
    assert!(err.contains("[error_roles] not_found: undeclared error code `gone`"), "{err}");
}

/// `TODOS` with its operations written in the long form: `[[operations]]` entries with `id`,
/// `method` and `path`, one key per line.
fn long_form() -> String {
    let head = &TODOS[..TODOS.find("[operations]").expect("the operations table")];
    let ops = [
        (
            "list_todos",
            "GET",
            "/todos",
            "todos:read",
            "List to-dos",
            "ListTodos",
            Some("Todo"),
            "paginated = true\nerrors = [\"validation\"]",
        ),
        (
            "create_todo",
            "POST",
            "/todos",
            "todos:write",
            "Create a to-do",
            "NewTodo",
            Some("Todo"),
            "status = 201\nerrors = [\"validation\"]",
        ),
        (
            "get_todo",
            "GET",
            "/todos/{id}",
            "todos:read",
            "Read a to-do",
            "TodoRef",
            Some("Todo"),
            "errors = [\"not_found\", \"validation\"]",
        ),
        (
            "delete_todo",
            "DELETE",
            "/todos/{id}",
            "todos:write",
            "Delete a to-do",
            "DeleteTodo",
            None,
            "errors = [\"not_found\", \"validation\"]",
        ),
    ];
    let mut out = head.to_string();
    for (id, method, path, scope, summary, input, output, rest) in ops {
        let output = output.map(|o| format!("output = \"{o}\"\n")).unwrap_or_default();
        out.push_str(&format!(
            "[[operations]]\nid = \"{id}\"\nmethod = \"{method}\"\npath = \"{path}\"\nscope = \"{scope}\"\n\
             summary = \"{summary}\"\ninput = \"{input}\"\n{output}{rest}\n\n"
        ));
    }
    out
}

#[test]
fn the_table_form_with_routes_generates_what_the_long_form_does() {
    let short = codegen::generate(&[("todos.toml", TODOS)]).unwrap_or_else(|e| panic!("{e}"));
    let long = codegen::generate(&[("todos.toml", &long_form())]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(short, long);
    assert!(TODOS.lines().count() <= 50, "a four-operation, two-scope spec fits in 50 lines");
    let api = codegen::load("todos.toml", TODOS).unwrap();
    let ids: Vec<&str> = api.operations.iter().map(|o| o.id()).collect();
    assert_eq!(ids, ["list_todos", "create_todo", "get_todo", "delete_todo"], "table order is spec order");
}

fn refused(spec: &str) -> String {
    codegen::load("todos.toml", spec).expect_err("refused").to_string()
}

#[test]
fn a_route_that_cannot_be_read_is_refused_with_its_fix() {
    let fix = "fix: write `route = \"GET /things/{id}\"`, or `method` and `path`";
    assert_eq!(
        refused(&TODOS.replace("\"GET /todos\"", "\"GET todos\"")),
        format!(
            "todos.toml: operation `list_todos`: route `GET todos` is not a method (GET, POST, PUT, PATCH, DELETE) and a path; {fix}"
        )
    );
    assert_eq!(
        refused(&TODOS.replace("\"GET /todos\"", "\"FETCH /todos\"")),
        format!(
            "todos.toml: operation `list_todos`: route `FETCH /todos` is not a method (GET, POST, PUT, PATCH, DELETE) and a path; {fix}"
        )
    );
    assert_eq!(
        refused(&TODOS.replace("route = \"DELETE /todos/{id}\", ", "")),
        format!("todos.toml: operation `delete_todo`: has no route; {fix}")
    );
    assert_eq!(
        refused(
            &TODOS.replace("route = \"DELETE /todos/{id}\", ", "route = \"DELETE /todos/{id}\", method = \"DELETE\", ")
        ),
        "todos.toml: operation `delete_todo`: has both `route` and `method`/`path`; fix: keep `route`, or `method` and `path`"
    );
    let renamed = refused(&TODOS.replace("get_todo = { ", "get_todo = { id = \"read_todo\", "));
    assert!(
        renamed.contains("[operations.get_todo] sets `id = \"read_todo\"`; the key is the id, so leave `id` out"),
        "{renamed}"
    );
    assert!(renamed.contains("line 39"), "the position of the operations table: {renamed}");
}

/// `[error_roles] conflict` names the 409 code a lost race for a unique key answers: it must be a
/// declared code with status 409, and the generated error enums map to it only in the operations
/// that declare it.
#[test]
fn the_conflict_role_names_a_declared_409_and_reaches_the_error_enums() {
    let conflict = "\n[errors.\"todo/exists\"]\nstatus = 409\nmessage = \"It exists.\"\ndescription = \"Taken.\"\n";
    let roles = "\n[error_roles]\nconflict = \"todo/exists\"\n";
    let spec = format!("{TODOS}{roles}{conflict}");
    let files = codegen::generate(&[("todos.toml", &spec)]).unwrap_or_else(|e| panic!("{e}"));
    let errors = files.iter().find(|f| f.path.ends_with("errors.rs")).expect("errors.rs");
    assert!(
        errors.text.contains("internal: Internal, unavailable: Unavailable, conflict: \"todo/exists\";"),
        "{}",
        errors.text
    );

    let undeclared = format!("{TODOS}{roles}");
    let err = codegen::load("todos.toml", &undeclared).expect_err("refused").to_string();
    assert_eq!(
        err,
        "todos.toml: [error_roles] conflict: undeclared error code `todo/exists`; fix: declare \
         [errors.\"todo/exists\"] with status 409"
    );
    let wrong = format!("{TODOS}{roles}{}", conflict.replace("409", "410"));
    let err = codegen::load("todos.toml", &wrong).expect_err("refused").to_string();
    assert_eq!(
        err,
        "todos.toml: [error_roles] conflict: `todo/exists` answers HTTP 410 but this role needs 409; fix: point \
         the role at a code with status 409"
    );
    // Without the role, nothing is mapped: the header names no conflict code.
    let files = codegen::generate(&[("todos.toml", TODOS)]).unwrap_or_else(|e| panic!("{e}"));
    let errors = files.iter().find(|f| f.path.ends_with("errors.rs")).expect("errors.rs");
    assert!(!errors.text.contains("conflict:"), "{}", errors.text);
}
