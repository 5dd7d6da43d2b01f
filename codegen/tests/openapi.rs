//! Properties of the OpenAPI documents generated for the `memos` fixture: what SDK generators and
//! API consumers may rely on, independently of the exact bytes the snapshots pin down.

use std::collections::BTreeSet;

use serde_json::{Value, json};

const MEMOS: &str = include_str!("fixtures/valid/memos.toml");

/// The generated file at `path`, parsed as JSON.
fn generated_json(path: &str) -> Value {
    let files = codegen::generate(&[("memos.toml", MEMOS)]).unwrap_or_else(|e| panic!("expected a valid spec:\n{e}"));
    let file = files.iter().find(|f| f.path == path).unwrap_or_else(|| panic!("expected {path} to be generated"));
    serde_json::from_str(&file.text).unwrap_or_else(|e| panic!("expected {path} to be JSON: {e}"))
}

/// Every operation of a document as (operationId, operation object).
fn operations(doc: &Value) -> Vec<(String, &Value)> {
    let paths = doc["paths"].as_object().expect("`paths` is an object");
    let mut out = Vec::new();
    for item in paths.values() {
        for (method, op) in item.as_object().expect("a path item is an object") {
            let id = op["operationId"].as_str().unwrap_or_else(|| panic!("expected an operationId on {method} {op}"));
            out.push((id.to_string(), op));
        }
    }
    out
}

fn operation<'a>(doc: &'a Value, id: &str) -> &'a Value {
    operations(doc).into_iter().find(|(i, _)| i == id).map(|(_, op)| op).unwrap_or_else(|| panic!("no operation {id}"))
}

/// Every JSON object in `v`, recursively, with its JSON pointer.
fn objects<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a serde_json::Map<String, Value>)>) {
    match v {
        Value::Object(m) => {
            out.push((at.clone(), m));
            for (k, x) in m {
                objects(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                objects(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn all_objects(doc: &Value) -> Vec<(String, &serde_json::Map<String, Value>)> {
    let mut out = Vec::new();
    objects(doc, String::new(), &mut out);
    out
}

#[test]
fn openapi_31_document_declares_its_version() {
    let doc = generated_json("openapi/memos.json");
    assert_eq!(doc["openapi"], "3.1.0", "expected openapi/memos.json to be an OpenAPI 3.1.0 document");
}

#[test]
fn every_operation_has_an_id_and_requires_its_oauth2_scope() {
    let doc = generated_json("openapi/memos.json");
    let expected = [
        ("list_memos", "memos:read"),
        ("create_memo", "memos:write"),
        ("update_memo", "memos:write"),
        ("get_memo_json", "memos:read"),
        ("put_memo", "memos:write"),
        ("some_memos", "memos:read"),
        ("memo_range", "memos:read"),
        ("memo_titles", "memos:read"),
        ("count_memos_by_state", "memos:read"),
        ("count_memos_by_title", "memos:read"),
        ("search_memos", "memos:read"),
        ("download_memo", "memos:read"),
        ("check_memo", "memos:read"),
        ("delete_memo", "memos:write"),
    ];
    let ids: BTreeSet<String> = operations(&doc).into_iter().map(|(id, _)| id).collect();
    assert_eq!(
        ids,
        expected.iter().map(|(id, _)| id.to_string()).chain(["count_memos".to_string()]).collect(),
        "expected exactly the spec's operations, each with its operationId"
    );
    // The public one requires nothing, as OpenAPI writes it, and its token is still checked.
    let public = operation(&doc, "count_memos");
    assert_eq!(public["security"], json!([]));
    assert!(public["responses"]["401"].is_object() && public["responses"]["403"].is_null(), "{public}");
    for (id, scope) in expected {
        assert_eq!(
            operation(&doc, id)["security"],
            json!([{ "oauth2": [scope] }]),
            "expected {id} to require exactly the oauth2 scope {scope}"
        );
    }
}

/// The decoder refuses any string holding U+0000; no schema says so, so every validation response
/// does.
#[test]
fn every_validation_response_states_the_nul_rule() {
    let doc = generated_json("openapi/memos.json");
    for id in ["list_memos", "create_memo", "update_memo", "delete_memo"] {
        let text = operation(&doc, id)["responses"]["422"]["description"].as_str().unwrap_or_default().to_string();
        assert!(
            text.starts_with("`validation`: ")
                && text.ends_with(
                    "No string may hold U+0000 (NUL), in any field or parameter: one that does is refused this way."
                ),
            "expected {id}'s 422 to describe the validation error and then the NUL rule, got {text:?}"
        );
    }
}

#[test]
fn every_operation_documents_every_status_it_may_answer() {
    let doc = generated_json("openapi/memos.json");
    // Every operation may answer 401 (unauthenticated, invalid_token), 403 (insufficient_scope),
    // 408, 500 and 503 (request timeout, internal, unavailable: service-wide); operations with a
    // body also 400 (malformed), 413 and 415.
    const AUTOMATIC: [u16; 5] = [401, 403, 408, 500, 503];
    const BODY: [u16; 3] = [400, 413, 415];
    // (operation, success statuses, statuses of the codes it lists in `errors`, has a request body)
    let cases: [(&str, &[u16], &[u16], bool); 5] = [
        ("list_memos", &[200, 204], &[422], false),
        ("create_memo", &[201], &[422], true),
        ("update_memo", &[200], &[404, 422], true),
        ("put_memo", &[200, 201, 204], &[422], true),
        // A lone path string can fail too: a string holding U+0000 is refused.
        ("delete_memo", &[204, 202, 308], &[404, 422], false),
    ];
    for (id, success, declared, has_body) in cases {
        let op = operation(&doc, id);
        let mut expected: BTreeSet<u16> = AUTOMATIC.into_iter().chain(declared.iter().copied()).collect();
        expected.extend(success);
        if has_body {
            expected.extend(BODY);
        }
        let actual: BTreeSet<u16> = op["responses"]
            .as_object()
            .unwrap_or_else(|| panic!("expected {id} to have responses"))
            .keys()
            .map(|k| k.parse().unwrap_or_else(|_| panic!("expected numeric status keys on {id}, got {k}")))
            .collect();
        assert_eq!(actual, expected, "expected {id} to document exactly these statuses");
        for status in expected.iter().filter(|s| **s >= 400) {
            assert_eq!(
                op["responses"][status.to_string()]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/ApiError",
                "expected {id}'s {status} response to carry the service's error model"
            );
        }
        assert_eq!(
            op["requestBody"].is_object(),
            has_body,
            "expected {id} to have a request body exactly when its input has body fields"
        );
    }
}

#[test]
fn a_status_shared_by_several_codes_names_each_of_them() {
    let doc = generated_json("openapi/memos.json");
    let text =
        operation(&doc, "list_memos")["responses"]["401"]["description"].as_str().unwrap_or_default().to_string();
    for code in ["`unauthenticated`", "`invalid_token`"] {
        assert!(text.contains(code), "expected the 401 response of list_memos to name {code}, got: {text}");
    }
}

#[test]
fn oauth2_scheme_lists_every_scope() {
    let doc = generated_json("openapi/memos.json");
    let scopes = &doc["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]["scopes"];
    assert_eq!(
        scopes,
        &json!({ "memos:read": "Read memos.", "memos:write": "Create and change memos." }),
        "expected the oauth2 authorization-code flow to list both scopes with their descriptions"
    );
}

#[test]
fn openapi_30_document_declares_its_version() {
    let doc = generated_json("openapi/memos.3.0.json");
    assert_eq!(doc["openapi"], "3.0.3", "expected openapi/memos.3.0.json to be an OpenAPI 3.0.3 document");
}

#[test]
fn openapi_30_document_uses_no_31_only_constructs() {
    let doc = generated_json("openapi/memos.3.0.json");
    for (at, object) in all_objects(&doc) {
        assert!(!object.get("type").is_some_and(Value::is_array), "expected no `type` array in 3.0, found one at {at}");
        assert!(object.get("type") != Some(&json!("null")), "expected no `type: null` in 3.0, found one at {at}");
        assert!(
            !object.get("examples").is_some_and(Value::is_array),
            "expected no schema `examples` array in 3.0, found one at {at}"
        );
    }
    assert_eq!(
        doc["info"]["license"],
        json!({ "name": "Apache-2.0", "url": "https://spdx.org/licenses/Apache-2.0.html" }),
        "expected the 3.0 license with a URL in place of the SPDX `identifier`"
    );
}

#[test]
fn openapi_30_keeps_examples_as_a_single_example() {
    let v31 = generated_json("openapi/memos.json");
    let v30 = generated_json("openapi/memos.3.0.json");
    let title = "/components/schemas/CreateMemoInputBody/properties/title";
    assert_eq!(v31.pointer(title).map(|t| &t["examples"]), Some(&json!(["Groceries"])), "3.1: `examples` array");
    assert_eq!(v30.pointer(title).map(|t| &t["example"]), Some(&json!("Groceries")), "3.0: single `example`");
}

#[test]
fn nullable_field_becomes_nullable_true_in_30() {
    // `UpdateMemoInput` mixes path and body fields, so its body part is the schema `UpdateMemoInputBody`.
    let body_ref = "#/components/schemas/UpdateMemoInputBody";
    let due = "/components/schemas/UpdateMemoInputBody/properties/due";

    let v31 = generated_json("openapi/memos.json");
    assert_eq!(
        operation(&v31, "update_memo")["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        body_ref,
        "expected update_memo's body to be UpdateMemoInputBody"
    );
    let due31 = v31.pointer(due).unwrap_or_else(|| panic!("expected {due} in 3.1"));
    assert_eq!(due31["type"], json!(["string", "null"]), "expected 3.1 to spell the nullable `due` as a type array");

    let v30 = generated_json("openapi/memos.3.0.json");
    let due30 = v30.pointer(due).unwrap_or_else(|| panic!("expected {due} in 3.0"));
    assert_eq!(due30["type"], "string", "expected 3.0 `due` to have the single type `string`");
    assert_eq!(due30["format"], "date-time", "expected 3.0 `due` to keep its date-time format");
    assert_eq!(due30["nullable"], true, "expected 3.0 `due` to be `nullable: true`");
}

/// What the documents say of a request body is what the decoder does with it: an object nested
/// in a request refuses keys it does not know (so it is closed), and `null` stands for an
/// optional field's absence in JSON only (a form's text has no `null`).
#[test]
fn request_schemas_say_what_the_decoder_accepts() {
    let todos = include_str!("fixtures/prelude/todos.toml")
        .replacen(
            "fields.title = { type = \"string\", min_length = 1, max_length = 200, description = \"What to do.\" }",
            "fields.title = { type = \"string\", min_length = 1, max_length = 200, description = \"What to do.\" }\n\
             fields.memo = { type = \"Memo\", optional = true, description = \"A memo.\" }\n\
             fields.tag = { type = \"string\", optional = true, description = \"A tag.\" }",
            1,
        )
        .replacen(
            "[models.Todo]",
            "[models.Memo]\ndescription = \"A memo.\"\nfields.text = { type = \"string\", description = \"Its text.\" }\n\n\
             [models.FormTodo]\ndescription = \"A to-do from a form.\"\nfields.title = { type = \"string\", description = \"What.\" }\n\
             fields.tag = { type = \"string\", optional = true, description = \"A tag.\" }\n\n[models.Todo]",
            1,
        )
        .replacen(
            "[operations]",
            "[operations]\nform_todo = { route = \"POST /todos/form\", scope = \"todos:write\", summary = \"From a form\", \
             input = \"FormTodo\", output = \"Todo\", body = \"form\", errors = [\"validation\"] }",
            1,
        );
    let files = codegen::generate(&[("todos.toml", &todos)]).unwrap_or_else(|e| panic!("{e}"));
    let doc: Value =
        serde_json::from_str(&files.iter().find(|f| f.path == "openapi/todos.json").unwrap().text).unwrap();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["Memo"]["additionalProperties"], json!(false), "nested in a request: closed");
    assert_eq!(schemas["NewTodo"]["properties"]["tag"]["type"], json!(["string", "null"]), "JSON: null is absence");
    assert_eq!(schemas["FormTodo"]["properties"]["tag"]["type"], json!("string"), "a form has no null");
}
