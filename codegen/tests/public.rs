//! Public operations (`public = true`): served without a token, written `security: []`, their
//! loader rules, the contract diff's, and the import of a document's `security: []`.

use serde_json::{Value, json};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");
const GET: &str = "get_todo = { route = \"GET /todos/{id}\", scope = \"todos:read\",";

fn public() -> String {
    assert!(TODOS.contains(GET));
    TODOS.replacen(GET, "get_todo = { route = \"GET /todos/{id}\", public = true,", 1)
}

#[test]
fn a_public_operation_names_no_scope_and_answers_no_scope_refusal() {
    let files = codegen::generate(&[("todos.toml", &public())]).unwrap_or_else(|e| panic!("{e}"));
    let doc: Value =
        serde_json::from_str(&files.iter().find(|f| f.path == "openapi/todos.json").unwrap().text).unwrap();
    let op = &doc["paths"]["/todos/{id}"]["get"];
    assert_eq!(op["security"], json!([]));
    assert!(op["description"].as_str().unwrap().contains("Public: served without a token"), "{op}");
    // A token sent is still checked (401); no scope can be missing (no 403).
    assert!(op["responses"]["401"].is_object() && op["responses"]["403"].is_null());
    let table: String =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect();
    assert!(table.contains("scope:\"\",satisfied_by:&[],public:true,"), "{table}");

    let refused =
        codegen::load("todos.toml", &public().replacen("public = true,", "public = true, scope = \"todos:read\",", 1));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "todos.toml: operation `get_todo`: a public operation needs no scope, but it names `todos:read`; fix: remove \
         `scope`, or `public`"
    );
}

#[test]
fn making_an_operation_private_breaks_clients_and_public_does_not() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let made_public = lines(TODOS, &public());
    assert!(
        made_public.contains(
            &"compatible: todos: operation `get_todo`: is served without a token [operation-made-public]".to_string()
        ),
        "{made_public:?}"
    );
    let made_private = lines(&public(), TODOS);
    assert!(
        made_private.contains(
            &"breaking: todos: operation `get_todo`: needs a token with scope `todos:read` (it was public) [operation-made-private]"
                .to_string()
        ),
        "{made_private:?}"
    );
}

#[test]
fn a_documents_security_list_left_empty_imports_as_public() {
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "Things", "version": "1.0.0"},
        "security": [{"oauth": ["things:read"]}],
        "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": {"clientCredentials": {
            "tokenUrl": "https://example.com/token", "scopes": {"things:read": "Read."}}}}}},
        "paths": {
            "/meta": {"get": {"operationId": "meta", "security": [], "responses": {"204": {"description": "Up."}}}},
            "/things": {"get": {"operationId": "things", "responses": {"204": {"description": "Listed."}}}}
        }
    });
    let imported =
        codegen::import::import(&doc, &codegen::import::Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(imported.toml.contains("[operations.meta]\nroute = \"GET /meta\"\npublic = true\n"), "{}", imported.toml);
    assert!(imported.toml.contains("[operations.things]\nroute = \"GET /things\"\nscope = \"things:read\""));
    let files = codegen::generate(&[("things.toml", &imported.toml)]).unwrap_or_else(|e| panic!("{e}"));
    let emitted: Value =
        serde_json::from_str(&files.iter().find(|f| f.path.ends_with("things.json")).unwrap().text).unwrap();
    assert_eq!(emitted["paths"]["/meta"]["get"]["security"], json!([]));
}
