//! `[wire]`: how a service writes its bodies. Errors as RFC 9457 problem details change every
//! error response of both documents and the generated service table; a spec that asks for
//! something the format cannot mean is refused with its fix.

use serde_json::Value;

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

fn generated(spec: &str) -> Vec<codegen::File> {
    codegen::generate(&[("todos.toml", spec)]).unwrap_or_else(|e| panic!("{e}"))
}

fn document(files: &[codegen::File], path: &str) -> Value {
    let doc = files.iter().find(|f| f.path == path).unwrap_or_else(|| panic!("no {path}"));
    serde_json::from_str(&doc.text).unwrap()
}

fn problems(types: Option<&str>) -> String {
    let types = types.map(|t| format!("problem_types = \"{t}\"\n")).unwrap_or_default();
    format!("{TODOS}\n[wire]\nerrors = \"problem\"\n{types}")
}

#[test]
fn problem_details_are_every_error_response_of_both_documents() {
    let files = generated(&problems(Some("https://todos.example/problems/")));
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc = document(&files, path);
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        assert!(schemas.contains_key("Problem") && !schemas.contains_key("ErrorResponse"), "{path}");
        let problem = &schemas["Problem"];
        for member in ["type", "title", "status", "detail", "code"] {
            assert!(problem["required"].as_array().unwrap().contains(&Value::from(member)), "{path}: {member}");
        }
        assert!(
            problem["properties"]["type"]["description"].as_str().unwrap().contains("https://todos.example/problems/")
        );
        let mut errors = 0;
        for (route, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                for (status, response) in op["responses"].as_object().unwrap() {
                    if !status.starts_with('4') && !status.starts_with('5') {
                        continue;
                    }
                    errors += 1;
                    let content = response["content"].as_object().unwrap();
                    let types: Vec<&String> = content.keys().collect();
                    assert_eq!(types, ["application/problem+json"], "{path} {method} {route} {status}");
                    assert_eq!(content["application/problem+json"]["schema"]["$ref"], "#/components/schemas/Problem");
                }
            }
        }
        assert!(errors > 20, "{path}: every operation's errors were seen ({errors})");
    }
    let table = files.iter().find(|f| f.path.ends_with("operations.rs")).expect("operations.rs");
    let squeezed: String = table.text.split_whitespace().collect();
    assert!(
        squeezed.contains(
            "wire:support::Wire{success:support::SuccessFormat::Envelope,errors:support::ErrorFormat::Problem{types:Some(\"https://todos.example/problems/\"),},},"
        ),
        "{}",
        table.text
    );
}

#[test]
fn the_envelope_stays_the_default() {
    let files = generated(TODOS);
    let doc = document(&files, "openapi/todos.json");
    assert!(doc["components"]["schemas"].get("Problem").is_none());
    assert_eq!(
        doc["paths"]["/todos/{id}"]["get"]["responses"]["404"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorResponse"
    );
    let table = files.iter().find(|f| f.path.ends_with("operations.rs")).expect("operations.rs");
    assert!(table.text.contains("wire: support::Wire::ENVELOPE"));
    // Without a base URI the type is `about:blank`, and the document says what titles it.
    let doc = document(&generated(&problems(None)), "openapi/todos.json");
    let problem = &doc["components"]["schemas"]["Problem"]["properties"];
    assert!(problem["type"]["description"].as_str().unwrap().contains("about:blank"));
    assert_eq!(problem["title"]["description"], "The HTTP status's reason phrase.");
}

#[test]
fn problem_types_that_cannot_be_a_base_uri_are_refused() {
    let refused = |spec: &str| codegen::load("todos.toml", spec).expect_err("refused").to_string();
    assert_eq!(
        refused(&problems(Some("problems/"))),
        "todos.toml: [wire] problem_types: `problems/` is not an absolute http(s) URI ending in `/`; fix: write \
         it like `https://api.example.com/problems/`; each problem's type is it followed by the code"
    );
    assert!(refused(&problems(Some("https://todos.example/problems"))).contains("ending in `/`"));
    assert_eq!(
        refused(&format!("{TODOS}\n[wire]\nproblem_types = \"https://todos.example/p/\"\n")),
        "todos.toml: [wire] problem_types: names the base URI of problem types, but errors are not written as \
         problem details; fix: set `errors = \"problem\"`, or remove problem_types"
    );
    let unknown = refused(&format!("{TODOS}\n[wire]\nerrors = \"xml\"\n"));
    assert!(unknown.contains("unknown variant `xml`, expected `envelope` or `problem`"), "{unknown}");
}

#[test]
fn bare_bodies_are_the_output_itself_and_a_page_is_an_array_with_headers() {
    let spec = format!("{TODOS}\n[wire]\nsuccess = \"bare\"\n");
    let files = generated(&spec);
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc = document(&files, path);
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        assert!(!schemas.keys().any(|k| k.ends_with("Envelope") || k.ends_with("Page") || k == "PageMeta"), "{path}");
        let one = &doc["paths"]["/todos/{id}"]["get"]["responses"]["200"];
        assert_eq!(one["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Todo", "{path}");
        let list = &doc["paths"]["/todos"]["get"]["responses"]["200"];
        assert_eq!(list["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/TodoList");
        assert_eq!(schemas["TodoList"]["type"], "array");
        assert_eq!(schemas["TodoList"]["items"]["$ref"], "#/components/schemas/Todo");
        assert_eq!(list["headers"]["X-Total-Count"]["schema"]["type"], "integer", "{path}");
        assert_eq!(list["headers"]["Link"]["schema"]["type"], "string", "{path}");
        assert_eq!(doc["paths"]["/todos"]["get"]["x-pagination"]["total"], "header:X-Total-Count");
    }
    let squeezed: String =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect();
    assert!(squeezed.contains("success:support::SuccessFormat::Bare,errors:support::ErrorFormat::Envelope"));
}

#[test]
fn a_bare_page_travels_over_mcp_as_an_object_its_output_schema_states() {
    let spec = format!(
        "{}\n[wire]\nsuccess = \"bare\"\n",
        TODOS.replace("base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/api/mcp\"").replace(
            "list_todos = {",
            "list_todos = { mcp = { name = \"todos.list\", title = \"List\", description = \"List to-dos.\" }, "
        )
    );
    let files = generated(&spec);
    let tools = document(&files, "mcp/todos.tools.json");
    let out = &tools[0]["outputSchema"];
    assert_eq!(out["type"], "object");
    assert_eq!(out["required"], serde_json::json!(["items", "total", "page", "per_page"]));
    assert_eq!(out["properties"]["items"]["items"]["$ref"], "#/$defs/Todo");
    assert!(out["$defs"]["Todo"].is_object());
}

/// An error model of the service's own, appended to the example: `{"error": {…}, "trace_id"}`.
const OWN: &str = include_str!("fixtures/wire/error_model.toml");

#[test]
fn an_error_model_of_the_service_own_is_every_error_response() {
    let files = generated(&format!("{TODOS}{OWN}"));
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc = document(&files, path);
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        assert!(!schemas.contains_key("ErrorResponse") && !schemas.contains_key("Problem"), "{path}");
        assert_eq!(schemas["ApiError"]["properties"]["error"]["$ref"], "#/components/schemas/ApiErrorBody");
        let missing = &doc["paths"]["/todos/{id}"]["get"]["responses"]["404"]["content"];
        assert_eq!(missing["application/json"]["schema"]["$ref"], "#/components/schemas/ApiError", "{path}");
    }
    let squeezed: String =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect();
    assert!(
        squeezed.contains(
            "errors:support::ErrorFormat::Model(&support::ErrorModel{code:\"error.code\",message:\"error.message\",\
             status:None,details:Some(\"error.details\"),request_id:Some(\"trace_id\"),}"
        ),
        "{squeezed}"
    );
}

#[test]
fn an_error_model_that_cannot_carry_its_roles_is_refused_with_the_fix() {
    let refused = |own: &str| codegen::load("todos.toml", &format!("{TODOS}{own}")).expect_err("refused").to_string();
    assert_eq!(
        refused(&OWN.replace("model = \"ApiError\"", "model = \"Oops\"")),
        "todos.toml: [wire] errors: model `Oops` is not declared; fix: declare it under [models], or name another"
    );
    assert_eq!(
        refused(&OWN.replace("code = \"error.code\"", "code = \"error.kind\"")),
        "todos.toml: [wire] errors: code = `error.kind`: model `ApiErrorBody` has no field `kind`; fix: name a \
         field of `ApiErrorBody`, or nested fields joined by `.`\ntodos.toml: [wire] errors: field \
         `ApiErrorBody.code` is required, but no role of the error model fills it; fix: make it optional, or name \
         it as one of code, message, status, details, request_id"
    );
    assert_eq!(
        refused(&OWN.replace("message = \"error.message\"", "message = \"trace_id.text\"")),
        "todos.toml: [wire] errors: message = `trace_id.text`: `ApiError.trace_id` is not a model; fix: only a \
         model field can hold nested fields\ntodos.toml: [wire] errors: field `ApiErrorBody.message` is required, but \
         no role of the error model fills it; fix: make it optional, or name it as one of code, message, status, \
         details, request_id"
    );
    assert_eq!(
        refused(&OWN.replace("fields.details = { type = \"json\"", "fields.details = { type = \"string\"")),
        "todos.toml: [wire] errors: details = `error.details`: field `ApiErrorBody.details` is not of type json or \
         map<json>; fix: give the field type json or map<json>, or name another"
    );
    let typo = refused(&OWN.replace("request_id = ", "request = "));
    assert!(typo.contains("unknown field `request`, expected one of"), "{typo}");
}

#[test]
fn changing_the_error_model_is_breaking() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let old = format!("{TODOS}{OWN}");
    let new = old.replace(", request_id = \"trace_id\"", "");
    let report = codegen::diff::compare(&load(&old), &load(&new));
    let lines: Vec<String> = report.changes.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        ["breaking: todos: [wire] errors: errors are written as the error model `ApiError` (code at `error.code`, \
          message at `error.message`, details at `error.details`) instead of the error model `ApiError` (code at \
          `error.code`, message at `error.message`, details at `error.details`, request_id at `trace_id`) \
          [error-format-changed]"]
    );
}

/// `output = "Model[]"`: a top-level array, in each wire format; the generated method returns a
/// `Vec`, and changing one object to a list is breaking.
#[test]
fn a_list_output_is_an_array_enveloped_or_bare() {
    let list =
        TODOS.replace("output = \"Todo\", errors = [\"not_found\"", "output = \"Todo[]\", errors = [\"not_found\"");
    assert_ne!(list, TODOS, "the example's get_todo answers one Todo");
    let envelope = document(&generated(&list), "openapi/todos.json");
    let body = &envelope["paths"]["/todos/{id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(body["$ref"], "#/components/schemas/TodoListEnvelope");
    let schema = &envelope["components"]["schemas"]["TodoListEnvelope"];
    assert_eq!(schema["properties"]["data"]["items"]["$ref"], "#/components/schemas/Todo");
    let files = generated(&format!("{list}\n[wire]\nsuccess = \"bare\"\n"));
    let bare = document(&files, "openapi/todos.json");
    assert_eq!(bare["components"]["schemas"]["TodoList"]["type"], "array");
    let service = files.iter().find(|f| f.path.ends_with("service.rs")).unwrap();
    let squeezed: String = service.text.split_whitespace().collect();
    assert!(squeezed.contains("Result<Vec<models::Todo>,errors::GetTodoError>"), "{}", service.text);

    let paged = TODOS.replace("output = \"Todo\", paginated = true", "output = \"Todo[]\", paginated = true");
    let err = codegen::load("todos.toml", &paged).expect_err("refused").to_string();
    assert!(err.contains("a paginated output is a page of a model, not of a list"), "{err}");

    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines: Vec<String> =
        codegen::diff::compare(&load(TODOS), &load(&list)).changes.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        ["breaking: todos: operation `get_todo`: answers a list instead of one object [output-shape-changed]"]
    );
}
