//! Several success answers on one operation (`alternatives`): the loader's checks, the enum the
//! method returns and how the router answers each variant, both documents, the MCP schema, the
//! contract diff's rules, and the import of documents that list several successes.

mod common;
use common::{file, generated, squeezed};

use codegen::import::{self, Options};
use serde_json::{Value, json};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");
const DELETE: &str = "delete_todo = { route = \"DELETE /todos/{id}\", scope = \"todos:write\", summary = \"Delete a to-do\", input = \"DeleteTodo\",";

/// The to-dos whose delete answers 204, or 200 with the to-do it archived instead, or 202 with
/// the number of items still to remove, or 303 to where the to-do went.
fn spec(alternatives: &str) -> String {
    assert!(TODOS.contains(DELETE));
    TODOS.replacen(DELETE, &format!("{DELETE} alternatives = [{alternatives}],"), 1)
}

const THREE: &str = "{ status = 200, output = \"Todo\", description = \"Archived instead.\" }, { status = 202, output = \"integer\" }, { status = 303 }";

#[test]
fn the_method_returns_an_enum_of_the_answers_and_each_variant_has_its_status() {
    let files = generated(&spec(THREE));
    let answers = squeezed(file(&files, "todos/answers.rs"));
    assert!(
        answers.contains("pubenumDeleteTodo{") &&
        answers.contains("NoContent,") &&
        answers.contains("Ok(models::Todo),") &&
        answers.contains("Accepted(i64),") &&
        // A redirect holds the `Location` to go to.
        answers.contains("SeeOther(String),"),
        "{answers}"
    );
    let service = squeezed(file(&files, "todos/service.rs"));
    assert!(service.contains("Result<answers::DeleteTodo,errors::DeleteTodoError>"), "{service}");
    // Without the braces and commas the printer may put around an arm.
    let bare = |t: &str| t.replace(['{', '}', ','], "");
    let router = bare(&squeezed(file(&files, "todos/router.rs")));
    for arm in [
        "answers::DeleteTodo::NoContent=>support::Success::Empty,",
        "answers::DeleteTodo::Ok(out)=>support::Success::one(&out).status(200),",
        "answers::DeleteTodo::Accepted(out)=>support::Success::one(&out).status(202),",
        "answers::DeleteTodo::SeeOther(location)=>support::Success::Empty.status(303).header(\"location\",location),",
    ] {
        assert!(router.contains(&bare(arm)), "{arm} in {router}");
    }
    // Operations without alternatives are as they were, and a spec without any has no `answers`.
    assert!(router.contains("s.get_todo(cxinput).await.map(|out|support::Success::one(&out))"));
    assert!(!generated(TODOS).iter().any(|f| f.path.ends_with("answers.rs")));
}

#[test]
fn both_documents_list_every_answer_with_its_body_and_headers() {
    let files = generated(&spec(THREE));
    for doc in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(file(&files, doc)).unwrap();
        let responses = &doc["paths"]["/todos/{id}"]["delete"]["responses"];
        assert!(responses["204"]["content"].is_null(), "{responses}");
        assert_eq!(responses["200"]["description"], "Archived instead.");
        assert_eq!(
            responses["200"]["content"]["application/json"]["schema"]["properties"]["data"]["$ref"],
            "#/components/schemas/Todo"
        );
        assert_eq!(responses["202"]["description"], "Accepted.");
        assert_eq!(responses["202"]["content"]["application/json"]["schema"]["properties"]["data"]["type"], "integer");
        assert_eq!(responses["303"]["headers"]["Location"]["required"], true, "{}", responses["303"]);
        assert!(responses["303"]["content"].is_null());
    }
}

#[test]
fn a_tool_promises_an_output_schema_only_when_every_answer_has_the_same_type() {
    let tool = "mcp = { name = \"todos.delete\", title = \"Delete\", description = \"Delete a to-do.\" },";
    let schema_of = |spec: String| {
        let files = generated(&spec.replacen(DELETE, &format!("{DELETE} {tool}"), 1));
        let tools: Value = serde_json::from_str(file(&files, "mcp/todos.tools.json")).unwrap();
        tools.as_array().unwrap().iter().find(|t| t["name"] == "todos.delete").unwrap()["outputSchema"].clone()
    };
    assert!(schema_of(spec("{ status = 200, output = \"Todo\" }")).is_null(), "no body beside a to-do");
    let same = TODOS.replacen(
        DELETE,
        &format!("{DELETE} output = \"Todo\", status = 200, alternatives = [{{ status = 202, output = \"Todo\" }}],"),
        1,
    );
    assert!(schema_of(same)["properties"]["data"].is_object(), "the to-do whichever answer");
}

#[test]
fn the_loader_refuses_answers_that_cannot_be_told_apart_or_carried() {
    let refused = |alternatives: &str| {
        codegen::load("todos.toml", &spec(alternatives)).expect_err("refused").to_string().replace("todos.toml: ", "")
    };
    assert_eq!(
        refused("{ status = 204 }"),
        "operation `delete_todo`: success status 204 is answered twice; fix: give each answer its own status"
    );
    assert_eq!(
        refused("{ status = 100 }"),
        "operation `delete_todo`: alternative status 100 is not a success an operation may answer beside another; \
         fix: use a 2xx, 304, or a redirect (301, 302, 303, 307, 308)"
    );
    assert_eq!(
        refused("{ status = 205, output = \"Todo\" }"),
        "operation `delete_todo`: alternative status 205 answers no body, but it has an output; fix: remove its \
         `output`, or use 200"
    );
    assert_eq!(
        refused("{ status = 200, output = \"DeleteTodo\" }"),
        "operation `delete_todo`: alternative 200 answers a model with fields outside the body; fix: answer a model \
         whose fields all travel in the body"
    );
    assert_eq!(
        refused("{ status = 200, output = \"file\" }"),
        "operation `delete_todo`: alternative 200 answers a file; fix: answer a file on the main answer alone"
    );
    assert_eq!(
        refused("{ status = 200, output = \"Nothing\" }"),
        "operation `delete_todo`: alternative 200: unknown type `Nothing`; fix: use string, integer, number, \
         boolean, datetime, date, json, file, T[], map<T>, or a name declared under [enums], [models] or [unions]"
    );
    // A page beside other answers (GitHub's list that may answer `301` for a moved repository):
    // the main answer is written as a page, with its links and count.
    let paged = TODOS.replacen("paginated = true,", "paginated = true, alternatives = [{ status = 202 }],", 1);
    let router = squeezed(file(&generated(&paged), "todos/router.rs"));
    assert!(router.contains("answers::ListTodos::Ok(out)=>support::Success::page(&out,paging)"), "{router}");
    let tool = "mcp = { name = \"todos.delete\", title = \"Delete\", description = \"Delete a to-do.\" },";
    let message =
        codegen::load("todos.toml", &spec("{ status = 303 }").replacen(DELETE, &format!("{DELETE} {tool}"), 1))
            .expect_err("refused")
            .to_string();
    assert!(message.contains("alternative 303 is a redirect, which a tool result cannot follow"), "{message}");
}

#[test]
fn the_diff_breaks_on_an_answer_added_and_not_on_one_removed() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let one = spec("{ status = 200, output = \"Todo\" }");
    assert_eq!(lines(TODOS, &one), ["breaking: todos: operation `delete_todo`: may now answer 200 [answer-added]"]);
    assert_eq!(
        lines(&one, TODOS),
        ["compatible: todos: operation `delete_todo`: no longer answers 200 [answer-removed]"]
    );
    assert_eq!(
        lines(&one, &spec("{ status = 200, output = \"integer\" }")),
        [
            "breaking: todos: operation `delete_todo`: answers `integer` instead of `Todo` with 200 [output-shape-changed]"
        ]
    );
}

/// A document whose operations list several successes the way real ones do.
fn document() -> Value {
    let thing = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}});
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Things", "version": "1.0.0"},
        "paths": {
            "/things/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "put": {"operationId": "put_thing", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewThing"}}}}, "responses": {
                    "200": {"description": "Replaced.", "content": thing.clone()},
                    "201": {"description": "Created.", "content": thing.clone()},
                    "204": {"description": "Unchanged."}
                }},
                "get": {"operationId": "get_thing", "responses": {
                    "200": {"description": "The thing.", "content": thing.clone()},
                    "301": {"description": "Moved permanently.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
                    "304": {"description": "Not modified."}
                }},
                "delete": {"operationId": "delete_thing", "responses": {
                    "202": {"description": "Deletion started.", "content": {"application/json": {"schema": {"type": "integer"}}}},
                    "204": {"description": "Deleted."},
                    "304": {"description": "Not modified."}
                }}
            }
        },
        "components": {"schemas": {
            "Thing": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
            "NewThing": {"type": "object", "properties": {"name": {"type": "string"}}},
            "Error": {"type": "object", "properties": {"message": {"type": "string"}}}
        }}
    })
}

#[test]
fn several_successes_import_as_alternatives_and_round_trip() {
    let doc = document();
    let options = Options { scope_by_method: Some(("read".into(), "write".into())), ..Default::default() };
    let imported = import::import(&doc, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(!imported.report.partial(), "{}", imported.report);
    let files = generated_named(&imported.toml);
    let emitted: Value = serde_json::from_str(file(&files, "openapi/things.json")).unwrap();
    for (method, statuses) in
        [("put", ["200", "201", "204"]), ("get", ["200", "301", "304"]), ("delete", ["202", "204", "304"])]
    {
        let responses = &emitted["paths"]["/things/{id}"][method]["responses"];
        for s in statuses {
            assert!(responses[s].is_object(), "{method} {s}: {responses}");
        }
        for (s, source) in doc["paths"]["/things/{id}"][method]["responses"].as_object().unwrap() {
            let has = |r: &Value| r["content"]["application/json"].is_object();
            assert_eq!(has(&responses[s]), has(source), "{method} {s}: the body as the source has it");
        }
    }
    // A read's 304 is the platform's conditional read; a write's is the implementation's.
    assert!(imported.toml.contains("conditional = true"), "{}", imported.toml);
    let answers = squeezed(file(&files, "things/answers.rs"));
    assert!(answers.contains("pubenumPutThing{") && answers.contains("Created(models::Thing)"), "{answers}");
    assert!(answers.contains("MovedPermanently(String,models::Error)"), "{answers}");
    assert!(answers.contains("pubenumDeleteThing{") && answers.contains("NotModified,"), "{answers}");
    assert!(imported.report.to_string().contains("the 301 answer carries the `Location` it redirects to"));
}

fn generated_named(spec: &str) -> Vec<codegen::File> {
    codegen::generate(&[("things.toml", spec)]).unwrap_or_else(|e| panic!("{e}"))
}
