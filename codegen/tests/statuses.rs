//! Declared success statuses, response headers from an output's `in = "header"` fields, and
//! conditional requests: the loader's checks, the generated code, both documents, the MCP
//! schemas and the contract diff's rules.

mod common;
use common::{file, generated, squeezed};

use serde_json::Value;

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

const GET: &str = "get_todo = { route = \"GET /todos/{id}\",";
const DELETE: &str = "delete_todo = { route = \"DELETE /todos/{id}\",";
const CREATE: &str = "create_todo = { route = \"POST /todos\", scope = \"todos:write\", summary = \"Create a to-do\", input = \"NewTodo\", output = \"Todo\", status = 201,";

/// The to-dos with a tagged read, a guarded delete, a 202 create answering `Location` and
/// `Retry-After`, and a redirect.
fn headed_spec() -> String {
    for part in [GET, DELETE, CREATE] {
        assert!(TODOS.contains(part), "{part}");
    }
    let models = r#"
[models.Accepted]
description = "A to-do on its way."
fields.id = { type = "string", description = "Identifier." }
fields.location = { type = "string", in = "header", description = "Where it will be." }
fields.retry_after = { type = "integer", in = "header", optional = true, description = "Seconds until it is." }

[models.Moved]
description = "Where it went."
fields.location = { type = "string", in = "header", description = "The new place." }

[models.FindTodo]
description = "Names one to-do."
fields.id = { type = "string", in = "path", description = "The to-do." }
"#;
    let ops = "find_todo = { route = \"GET /todos/{id}/find\", scope = \"todos:read\", summary = \"Find a to-do\", input = \"FindTodo\", output = \"Moved\", status = 303, errors = [\"validation\"] }\n";
    let spec = TODOS
        .replacen(GET, "get_todo = { conditional = true, route = \"GET /todos/{id}\",", 1)
        .replacen(DELETE, "delete_todo = { conditional = \"required\", route = \"DELETE /todos/{id}\",", 1)
        .replacen(
            CREATE,
            "create_todo = { route = \"POST /todos\", scope = \"todos:write\", summary = \"Create a to-do\", input = \"NewTodo\", output = \"Accepted\", status = 202,",
            1,
        )
        .replacen("[operations]", &format!("{models}\n[operations]"), 1);
    format!("{spec}{ops}")
}

#[test]
fn the_generated_code_tags_guards_and_sets_the_declared_headers() {
    let files = generated(&headed_spec());
    let table = squeezed(file(&files, "operations.rs"));
    assert!(table.contains("conditional:Some(support::Conditional::Read)"), "{table}");
    assert!(table.contains("conditional:Some(support::Conditional::Write{required:true,})"));
    assert!(table.contains("success_status:202") && table.contains("success_status:303"));
    assert!(table.contains(
        "precondition_failed:Some(\"precondition_failed\"),precondition_required:Some(\"precondition_required\")"
    ));
    let models = squeezed(file(&files, "models.rs"));
    assert!(models.contains("#[serde(default,skip_serializing)]pubif_match:support::IfMatch,"), "{models}");
    assert!(models.contains("#[serde(skip)]publocation:String"), "an output header is not in the body");
    let router = squeezed(file(&files, "router.rs"));
    assert!(router.contains("success=success.header(\"location\",&out.location);"), "{router}");
    assert!(router.contains("ifletSome(v)=&out.retry_after{success=success.header(\"retry-after\",v);}"));
    assert!(router.contains("letmutsuccess=support::Success::Empty;"), "the redirect answers no body");
    // The delete's enum carries the 412 its implementation answers; the 428 is the decoder's.
    let errors = squeezed(file(&files, "errors.rs"));
    let delete = errors.split("DeleteTodoError{").nth(1).unwrap().split('}').next().unwrap();
    assert!(delete.contains("PreconditionFailed=\"precondition_failed\""), "{delete}");
    assert!(!delete.contains("PreconditionRequired"));
}

#[test]
fn both_documents_state_the_statuses_headers_and_preconditions() {
    let files = generated(&headed_spec());
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(file(&files, path)).unwrap();
        let read = &doc["paths"]["/todos/{id}"]["get"];
        let param =
            |op: &Value, name: &str| op["parameters"].as_array().unwrap().iter().find(|p| p["name"] == name).cloned();
        assert!(param(read, "If-None-Match").is_some(), "{path}");
        assert!(read["responses"]["200"]["headers"]["ETag"].is_object());
        assert!(read["responses"]["304"].is_object() && read["responses"]["304"]["content"].is_null());
        let delete = &doc["paths"]["/todos/{id}"]["delete"];
        assert_eq!(param(delete, "If-Match").unwrap()["required"], true, "{path}");
        for status in ["412", "428"] {
            assert!(delete["responses"][status].is_object(), "{path} {status}");
        }
        let create = &doc["paths"]["/todos"]["post"]["responses"]["202"];
        assert!(create["headers"]["Location"].is_object() && create["headers"]["Retry-After"].is_object());
        let accepted = &doc["components"]["schemas"]["Accepted"];
        assert!(accepted["properties"]["location"].is_null(), "headers are not body fields: {accepted}");
        assert!(accepted["properties"]["id"].is_object());
        let found = &doc["paths"]["/todos/{id}/find"]["get"]["responses"]["303"];
        assert!(found["headers"]["Location"].is_object() && found["content"].is_null(), "{path}");
        assert!(doc["components"]["schemas"]["Moved"].is_null());
    }
}

#[test]
fn the_loader_refuses_statuses_and_preconditions_that_cannot_work() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    let spec = headed_spec();
    assert_eq!(
        refused(spec.replace("status = 303", "status = 305")),
        "todos.toml: operation `find_todo`: success status 305 is not one an operation may declare; fix: use a 2xx \
         but 206, or a redirect (301, 302, 303, 307, 308)"
    );
    // An unregistered 2xx is a success as any other (RFC 9110 section 15: read as a 200).
    let unregistered = headed_spec().replace("status = 303", "status = 299").replace(
        "fields.location = { type = \"string\", in = \"header\", description = \"The new place.\" }",
        "fields.place = { type = \"string\", description = \"The new place.\" }",
    );
    let api = codegen::load("todos.toml", &unregistered).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(api.operations.iter().find(|o| o.id() == "find_todo").map(|o| o.status), Some(299));
    assert_eq!(
        refused(spec.replace("output = \"Moved\", status = 303", "output = \"Todo\", status = 303")),
        "todos.toml: operation `find_todo`: a 303 redirect needs an output with a required `location` header; fix: \
         declare an output model with `fields.location = { type = \"string\", in = \"header\", ... }`"
    );
    // A body beside the `Location` (RFC 9110 section 15.4 lets a redirect carry a note).
    let noted = headed_spec().replace(
        "fields.location = { type = \"string\", in = \"header\", description = \"The new place.\" }",
        "fields.location = { type = \"string\", in = \"header\", description = \"The new place.\" }\nfields.note = { type = \"string\", description = \"Why.\" }",
    );
    assert!(noted.contains("fields.note"));
    let api = codegen::load("todos.toml", &noted).unwrap_or_else(|e| panic!("{e}"));
    let doc = codegen::openapi::document(&api);
    let found = &doc["paths"]["/todos/{id}/find"]["get"]["responses"]["303"];
    assert!(found["headers"]["Location"].is_object() && found["content"]["application/json"].is_object(), "{found}");
    assert_eq!(
        refused(spec.replace("output = \"Accepted\", status = 202", "output = \"Accepted\", status = 204")),
        "todos.toml: operation `create_todo`: success status 204 answers no body, but the output has body fields; \
         fix: use 200, or give an output whose fields are all `in = \"header\"`"
    );
    assert_eq!(
        refused(spec.replace("get_todo = { conditional = true", "get_todo = { conditional = \"required\"")),
        "todos.toml: operation `get_todo`: `conditional = \"required\"` is for writes; a read answers 304 to \
         `If-None-Match`; fix: write `conditional = true`"
    );
    assert_eq!(
        refused(spec.replace(
            "[models.DeleteTodo]\ndescription = \"Names the to-do to delete.\"\n",
            "[models.DeleteTodo]\ndescription = \"Names the to-do to delete.\"\nfields.if_match = { type = \"string\", in = \"header\", optional = true, description = \"Mine.\" }\n"
        )),
        "todos.toml: operation `delete_todo`: input model `DeleteTodo` declares `if_match`, which a conditional \
         write adds itself; fix: remove the field; the implementation reads `input.if_match`"
    );
    let tool =
        "mcp = { name = \"todos.delete\", title = \"Delete\", description = \"Delete a to-do.\" }, route = \"DELETE";
    assert_eq!(
        refused(spec.replace("route = \"DELETE", tool)),
        "todos.toml: operation `delete_todo`: requires `If-Match`, which an MCP tool call cannot send (a tool result \
         carries no `ETag` to send back); fix: write `conditional = true`, or remove `mcp`"
    );
    assert_eq!(
        refused(spec.replace(
            "fields.title = { type = \"string\", description = \"What to do.\" }",
            "fields.title = { type = \"string\", description = \"What to do.\" }\nfields.moved = { type = \"Moved\", description = \"Nested.\" }"
        )),
        "todos.toml: model `Todo` field `moved`: model `Moved` has header fields, so it cannot be a field's type; \
         fix: give `moved` a model without `in = \"header\"` fields"
    );
}

#[test]
fn mcp_schemas_leave_out_what_only_http_carries() {
    let spec = headed_spec().replace(
        "input = \"NewTodo\", output = \"Accepted\"",
        "mcp = { name = \"todos.create\", title = \"Create\", description = \"Create a to-do.\" }, input = \"NewTodo\", output = \"Accepted\"",
    );
    let files = generated(&spec);
    let tools: Value = serde_json::from_str(file(&files, "mcp/todos.tools.json")).unwrap();
    let create = tools.as_array().unwrap().iter().find(|t| t["name"] == "todos.create").unwrap();
    // The envelope's `data` is the model, without its header fields.
    let accepted = &create["outputSchema"]["$defs"]["Accepted"];
    assert!(accepted["properties"]["location"].is_null(), "{create}");
    assert!(accepted["properties"]["id"].is_object(), "{create}");
}

#[test]
fn the_diff_classifies_statuses_preconditions_and_moved_headers() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let headed = headed_spec();
    let tagged = TODOS.replacen(GET, "get_todo = { conditional = true, route = \"GET /todos/{id}\",", 1);
    assert_eq!(
        lines(TODOS, &tagged),
        ["compatible: todos: operation `get_todo`: takes part in conditional requests (ETag) [conditional-added]"]
    );
    assert_eq!(
        lines(&tagged, TODOS),
        ["breaking: todos: operation `get_todo`: no longer takes part in conditional requests (no ETag, its \
          preconditions ignored) [conditional-removed]"]
    );
    let optional = headed.replace("conditional = \"required\"", "conditional = true");
    assert_eq!(
        lines(&optional, &headed),
        ["breaking: todos: operation `delete_todo`: requires If-Match (a request without it is refused with 428) \
          [precondition-required]"]
    );
    assert_eq!(
        lines(&headed, &headed.replace("status = 303", "status = 302")),
        ["breaking: todos: operation `find_todo`: answers 302 instead of 303 [status-changed]"]
    );
    let body = headed.replace(
        "fields.location = { type = \"string\", in = \"header\", description = \"Where it will be.\" }",
        "fields.location = { type = \"string\", description = \"Where it will be.\" }",
    );
    assert_eq!(
        lines(&headed, &body),
        ["breaking: todos: operation `create_todo` output field `location`: moved from a response header to the \
          body [output-field-moved]"]
    );
}

#[test]
fn paths_are_routed_as_the_router_routes_them() {
    let models = r#"
[models.KindRef]
description = "A kind."
fields.kind = { type = "string", in = "path", description = "The kind." }

[models.PartRef]
description = "A part."
fields.id = { type = "string", in = "path", description = "The to-do." }
"#;
    let ops = "by_kind = { route = \"GET /todos/kinds/{kind}\", scope = \"todos:read\", summary = \"By kind\", input = \"KindRef\", output = \"Todo\", errors = [\"validation\"] }\n\
               part = { route = \"GET /todos/{id}/part\", scope = \"todos:read\", summary = \"Part\", input = \"PartRef\", output = \"Todo\", errors = [\"validation\"] }\n";
    let spec = format!("{}{ops}", TODOS.replacen("[operations]", &format!("{models}\n[operations]"), 1));
    // A fixed segment beside a parameter: the fixed one wins (`/todos/kinds/part` is `by_kind`),
    // as axum routes and as real documents (GitHub's) are written.
    codegen::load("todos.toml", &spec).unwrap_or_else(|e| panic!("{e}"));
    // A trailing slash is part of a path.
    let slash = spec.replace("GET /todos/{id}/part", "GET /todos/{id}/part/");
    codegen::load("todos.toml", &slash).unwrap_or_else(|e| panic!("{e}"));
    // The same segments with the parameters named apart are one route to any router.
    let renamed = spec.replace("GET /todos/{id}/part", "DELETE /todos/kinds/{id}");
    assert_eq!(
        codegen::load("todos.toml", &renamed).expect_err("refused").to_string(),
        "todos.toml: operation `part`: path `/todos/kinds/{id}` is path `/todos/kinds/{kind}` of operation `by_kind` \
         with its parameters named apart: one route to a router; fix: name the parameters of the two paths alike"
    );
}

#[test]
fn an_operation_without_an_output_may_answer_another_empty_success() {
    let todos = include_str!("fixtures/prelude/todos.toml");
    let spec = todos.replace("input = \"DeleteTodo\", errors", "input = \"DeleteTodo\", status = 202, errors");
    let files = codegen::generate(&[("todos.toml", &spec)]).unwrap_or_else(|e| panic!("{e}"));
    let doc: serde_json::Value =
        serde_json::from_str(&files.iter().find(|f| f.path == "openapi/todos.json").unwrap().text).unwrap();
    let responses = &doc["paths"]["/todos/{id}"]["delete"]["responses"];
    assert!(responses["202"].is_object() && responses["202"]["content"].is_null(), "{responses}");
    assert!(responses["204"].is_null(), "{responses}");
    let ops =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect::<String>();
    assert!(ops.contains("success_status:202"), "the endpoint answers 202");
}
