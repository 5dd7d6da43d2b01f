//! Bodies that are not objects: a payload field (`in = "payload"`, the whole request body) and an
//! output that is a value rather than a model (`output = "integer"`, `"string[]"`,
//! `"map<integer>"`): the generated code, both documents, MCP schemas, the loader's checks and the
//! contract diff's rules.

use serde_json::{Value, json};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

/// The to-dos with a label operation taking an array and answering one, and a count.
fn spec(payload: &str, output: &str) -> String {
    let models = format!(
        r#"
[models.Label]
description = "A to-do and its labels."
fields.id = {{ type = "string", in = "path", description = "The to-do." }}
fields.labels = {{ {payload}, description = "Its labels." }}
"#
    );
    let ops = format!(
        "label = {{ route = \"PUT /todos/{{id}}/labels\", scope = \"todos:write\", summary = \"Label\", input = \"Label\", output = \"{output}\", errors = [\"validation\"], mcp = {{ name = \"todos.label\", title = \"Label\", description = \"Label a to-do.\" }} }}\n"
    );
    let spec = TODOS.replacen("[operations]", &format!("{models}\n[operations]"), 1);
    format!("{spec}{ops}")
}

const LABELS: &str = "type = \"string[]\", in = \"payload\", max_items = 3";

#[test]
fn a_payload_is_the_body_and_a_value_output_the_answer_in_code_documents_and_tools() {
    let files = codegen::generate(&[("todos.toml", &spec(LABELS, "string[]"))]).unwrap_or_else(|e| panic!("{e}"));
    let text =
        |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.split_whitespace().collect::<String>();
    assert!(text("service.rs").contains("Result<Vec<String>,errors::LabelError>"), "{}", text("service.rs"));
    assert!(text("models.rs").contains("FieldSpec::payload(\"labels\""), "{}", text("models.rs"));
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let op = &doc["paths"]["/todos/{id}/labels"]["put"];
        let body = &op["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!((body["type"].as_str(), body["maxItems"].as_u64()), (Some("array"), Some(3)), "{path}: {body}");
        assert_eq!(op["requestBody"]["required"], true);
        // The prelude's envelope: `{"data": [...]}`.
        let ok = &op["responses"]["200"]["content"]["application/json"]["schema"];
        assert_eq!(ok["properties"]["data"], json!({"type": "array", "items": {"type": "string"}}), "{path}: {ok}");
        let params = op["parameters"].as_array().unwrap();
        assert!(params.iter().all(|p| p["name"] != "labels"), "the payload is no parameter: {params:?}");
    }
    let tools: Value =
        serde_json::from_str(&files.iter().find(|f| f.path.ends_with("tools.json")).unwrap().text).unwrap();
    let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == "todos.label").unwrap();
    assert_eq!(tool["inputSchema"]["properties"]["labels"]["type"], "array");
    assert_eq!(tool["outputSchema"]["properties"]["data"]["type"], "array");

    // Bare bodies: the array itself, and `{"items"}` for a tool; a number `{"value"}`.
    let bare = |output: &str| {
        let text = spec(LABELS, output).replacen("[operations]", "[wire]\nsuccess = \"bare\"\n\n[operations]", 1);
        codegen::generate(&[("todos.toml", &text)]).unwrap_or_else(|e| panic!("{e}"))
    };
    let files = bare("string[]");
    let doc: Value =
        serde_json::from_str(&files.iter().find(|f| f.path == "openapi/todos.json").unwrap().text).unwrap();
    let ok = &doc["paths"]["/todos/{id}/labels"]["put"]["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(ok, &json!({"type": "array", "items": {"type": "string"}}));
    let tools: Value =
        serde_json::from_str(&files.iter().find(|f| f.path.ends_with("tools.json")).unwrap().text).unwrap();
    assert_eq!(tools[0]["outputSchema"]["required"], json!(["items"]));
    let files = bare("integer");
    let tools: Value =
        serde_json::from_str(&files.iter().find(|f| f.path.ends_with("tools.json")).unwrap().text).unwrap();
    assert_eq!(tools[0]["outputSchema"]["properties"]["value"]["type"], "integer");
    let files = bare("map<integer>");
    let tools: Value =
        serde_json::from_str(&files.iter().find(|f| f.path.ends_with("tools.json")).unwrap().text).unwrap();
    assert_eq!(tools[0]["outputSchema"]["additionalProperties"]["type"], "integer");
}

#[test]
fn the_loader_keeps_a_payload_alone_in_the_body_and_a_value_output_out_of_pages_and_streams() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    let with_field = spec(LABELS, "Todo").replacen(
        "fields.labels =",
        "fields.note = { type = \"string\", optional = true, description = \"A note.\" }\nfields.labels =",
        1,
    );
    assert_eq!(
        refused(with_field),
        "todos.toml: operation `label`: input model `Label` has payload field `labels` and body field `note`, but \
         the payload is the whole body; fix: move the other field to the path, query or headers, or make the \
         payload a model holding both"
    );
    let two = spec(LABELS, "Todo").replacen(
        "fields.labels =",
        "fields.more = { type = \"string\", in = \"payload\", description = \"More.\" }\nfields.labels =",
        1,
    );
    assert_eq!(
        refused(two),
        "todos.toml: operation `label`: input model `Label` has more than one payload field (`more`, `labels`); \
         fix: keep one field with `in = \"payload\"`: it is the whole body"
    );
    assert_eq!(
        refused(spec(LABELS, "Todo").replacen(
            "errors = [\"validation\"], mcp",
            "body = \"form\", errors = [\"validation\"], mcp",
            1
        )),
        "todos.toml: operation `label`: payload field `Label.labels` is a JSON body, but the operation's body is not \
         JSON; fix: drop `body` (a payload is JSON), or make the field a body field"
    );
    assert_eq!(
        refused(spec(LABELS, "Nothing")),
        "todos.toml: operation `label`: output `Nothing` is neither a declared model nor a type; fix: declare the \
         model under [models], or write a type: string, integer, number, boolean, date, datetime, json, T[], \
         map<T>, an enum or a union"
    );
    assert_eq!(
        refused(spec(LABELS, "integer").replacen("output = \"integer\",", "output = \"integer\", status = 204,", 1)),
        "todos.toml: operation `label`: success status 204 answers no body, but the output has body fields; fix: \
         use 200, or give an output whose fields are all `in = \"header\"`"
    );
    let listed = TODOS.replacen("output = \"Todo\", paginated = true", "output = \"string\", paginated = true", 1);
    assert!(
        refused(listed).contains("output `string` is not a model, so it cannot be paginated"),
        "a page is of models"
    );
}

#[test]
fn an_outputs_payload_is_its_body_alone_beside_headers() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    // A list as the whole answer, with a response header beside it.
    let answered = |extra: &str, output: &str| {
        let model = format!(
            "[models.Labels]\ndescription = \"Labels.\"\nfields.labels = {{ type = \"string[]\", in = \"payload\", description = \"The labels.\" }}\nfields.x_count = {{ type = \"integer\", in = \"header\", description = \"How many.\" }}\n{extra}\n"
        );
        let op = format!(
            "labels = {{ route = \"GET /labels\", scope = \"todos:read\", summary = \"Labels\", output = \"{output}\" }}\n"
        );
        format!("{}{op}", TODOS.replacen("[operations]", &format!("{model}\n[operations]"), 1))
    };
    codegen::load("todos.toml", &answered("", "Labels")).unwrap_or_else(|e| panic!("{e}"));
    let with_field = answered("fields.note = { type = \"string\", description = \"A note.\" }", "Labels");
    assert!(
        refused(with_field).contains("output model `Labels` has a payload field beside other body fields"),
        "a payload is the whole body"
    );
    assert!(
        refused(answered("", "Labels[]")).contains("has a payload field, which a list cannot answer"),
        "a list of bodies is not one body"
    );
}

#[test]
fn the_diff_says_a_changed_value_output_or_a_moved_payload_breaks_clients() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    assert_eq!(
        lines(&spec(LABELS, "string[]"), &spec(LABELS, "integer")),
        ["breaking: todos: operation `label`: answers `integer` instead of `string[]` [output-shape-changed]"]
    );
    assert_eq!(
        lines(&spec(LABELS, "Todo"), &spec(LABELS, "string[]")),
        ["breaking: todos: operation `label`: answers `string[]` instead of `Todo` [output-shape-changed]"]
    );
    let in_body = "type = \"string[]\", max_items = 3";
    let moved = lines(&spec(in_body, "Todo"), &spec(LABELS, "Todo"));
    assert!(moved.iter().any(|l| l.starts_with("breaking:") && l.contains("labels")), "{moved:?}");
}

/// The to-dos with a create input taking keys beside its fields (labels with a weight each).
fn weighted(additional: &str) -> String {
    let models = format!(
        r#"
[models.Weights]
description = "A title and any other key with a weight."
fields.title = {{ type = "string", description = "Title." }}
{additional}
"#
    );
    let ops = "weigh = { route = \"POST /weights\", scope = \"todos:write\", summary = \"Weigh\", input = \"Weights\", output = \"Todo\", errors = [\"validation\"] }\n";
    format!("{}{ops}", TODOS.replacen("[operations]", &format!("{models}\n[operations]"), 1))
}

const WEIGHTS: &str = "additional = { type = \"integer\", minimum = 1, description = \"A weight.\" }";

#[test]
fn keys_beside_the_fields_are_a_flattened_map_checked_documented_and_diffed() {
    let files = codegen::generate(&[("todos.toml", &weighted(WEIGHTS))]).unwrap_or_else(|e| panic!("{e}"));
    let models =
        files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text.split_whitespace().collect::<String>();
    assert!(models.contains("#[serde(flatten)]pubadditional:std::collections::BTreeMap<String,i64>,"), "{models}");
    assert!(
        models.contains("FieldSpec::body(\"*\",Kind::Integer).minimum(1.0),]"),
        "the other keys' spec, none required: {models}"
    );
    assert!(!models.contains("#[serde(deny_unknown_fields)]pubstructWeights"), "serde cannot flatten and deny");
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let schema = &doc["components"]["schemas"]["Weights"];
        assert_eq!(schema["additionalProperties"]["type"], "integer", "{path}: {schema}");
        assert_eq!(schema["additionalProperties"]["minimum"], 1, "{path}");
    }

    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        refused(weighted("additional = { type = \"integer\", optional = true, description = \"A weight.\" }")),
        "todos.toml: model `Weights` additional keys: sets optional, which only a named field may have; fix: give \
         the additional keys a type, a description and value constraints only"
    );
    assert_eq!(
        refused(weighted(WEIGHTS).replacen("input = \"Weights\",", "input = \"Weights\", body = \"form\",", 1)),
        "todos.toml: operation `weigh`: input model `Weights` has additional keys, which only a JSON body object \
         carries; fix: drop `additional`, or take a JSON body without a payload field"
    );

    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    assert_eq!(
        lines(&weighted(""), &weighted(WEIGHTS)),
        ["compatible: todos: model `Weights`: takes other keys of `integer` [additional-keys-added]"]
    );
    assert_eq!(
        lines(&weighted(WEIGHTS), &weighted("")),
        ["breaking: todos: model `Weights`: no longer takes other keys [additional-keys-removed]"]
    );
    assert_eq!(
        lines(&weighted(WEIGHTS), &weighted(&WEIGHTS.replace("minimum = 1", "minimum = 5"))),
        ["breaking: todos: model `Weights`: other keys' values narrowed: minimum 1 → 5 [additional-keys-narrowed]"]
    );
}

#[test]
fn a_prerendered_output_is_handed_over_as_json_text_and_documented_the_same() {
    let rendered = TODOS.replacen("paginated = true,", "paginated = true, prerendered = true,", 1).replacen(
        "output = \"Todo\", errors = [\"not_found\"",
        "output = \"Todo\", prerendered = true, errors = [\"not_found\"",
        1,
    );
    let files = codegen::generate(&[("todos.toml", &rendered)]).unwrap_or_else(|e| panic!("{e}"));
    let plain = codegen::generate(&[("todos.toml", TODOS)]).unwrap();
    let text = |files: &[codegen::File], end: &str| {
        files.iter().find(|f| f.path.ends_with(end)).unwrap_or_else(|| panic!("{end}")).text.clone()
    };
    let service = text(&files, "todos/service.rs");
    assert!(service.contains("Paged<support::Rendered<models::Todo>>"), "{service}");
    assert!(service.contains("Output = Result<support::Rendered<models::Todo>, errors::GetTodoError>"), "{service}");
    let router = text(&files, "todos/router.rs");
    assert!(router.contains("Success::rendered_page(&out, paging)") && router.contains("Success::rendered(&out)"));
    for doc in ["openapi/todos.json", "openapi/todos.3.0.json", "mcp/todos.json"] {
        if plain.iter().any(|f| f.path == doc) {
            assert_eq!(text(&files, doc), text(&plain, doc), "{doc} says the same");
        }
    }
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert!(
        refused(TODOS.replacen("input = \"DeleteTodo\",", "input = \"DeleteTodo\", prerendered = true,", 1))
            .contains("`prerendered` is for an output that is one model or a page of one")
    );
}

/// The labels as a JSON list, or as a CSV file in a multipart form (`request_models`).
fn uploaded(extra: &str) -> String {
    let model = "\n[models.LabelUpload]\ndescription = \"The labels as a CSV file.\"\n\
                 fields.file = { type = \"file\", media_types = [\"text/csv\"], max_size = 1000, description = \"One label per line.\" }\n";
    let spec = spec(LABELS, "string[]").replacen("[operations]", &format!("{model}\n[operations]"), 1);
    spec.replacen(
        "output = \"string[]\",",
        &format!(
            "output = \"string[]\", request_types = [\"application/json\", \"multipart/form-data\"], request_models = {{ \"multipart/form-data\" = \"LabelUpload\" }},{extra}"
        ),
        1,
    )
}

#[test]
fn a_request_type_of_another_shape_is_documented_by_its_model_and_read_by_the_implementation() {
    let files = codegen::generate(&[("todos.toml", &uploaded(""))]).unwrap_or_else(|e| panic!("{e}"));
    let text = |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.clone();
    let table: String = text("operations.rs").split_whitespace().collect();
    assert!(table.contains(r#"read_types:&["multipart/form-data"]"#), "{table}");
    assert!(text("service.rs").contains("fn read_body("), "the implementation is given the body to read");
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let content = &doc["paths"]["/todos/{id}/labels"]["put"]["requestBody"]["content"];
        assert_eq!(content["application/json"]["schema"]["type"], "array", "{path}: the input's own body");
        let multipart = &content["multipart/form-data"];
        assert_eq!(multipart["schema"]["$ref"], "#/components/schemas/LabelUpload", "{path}: {multipart}");
        assert_eq!(multipart["encoding"]["file"]["contentType"], "text/csv", "{path}");
        assert!(doc["components"]["schemas"]["LabelUpload"]["properties"]["file"].is_object(), "{path}");
    }
}

#[test]
fn the_loader_keeps_request_models_to_listed_types_and_body_models() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    let label = "todos.toml: operation `label`: ";
    assert_eq!(
        refused(uploaded("").replace(
            "request_types = [\"application/json\", \"multipart/form-data\"]",
            "request_types = [\"application/json\"]"
        )),
        format!(
            "{label}`request_models` names `multipart/form-data`, which `request_types` does not list; fix: list it in `request_types`"
        )
    );
    assert!(
        refused(uploaded("").replace("= \"LabelUpload\" }", "= \"Nothing\" }")).starts_with(&format!(
            "{label}`request_models`: `Nothing` is not a model; fix: name a model under [models]"
        ))
    );
    assert!(refused(uploaded("").replace("= \"LabelUpload\" }", "= \"Label\" }")).starts_with(&format!(
        "{label}`request_models`: model `Label` has fields outside the body; fix: describe the body alone: its fields are body fields"
    )));
    assert_eq!(
        refused(uploaded("").replace(
            "{ \"multipart/form-data\" = \"LabelUpload\" }",
            "{ \"multipart/form-data\" = \"LabelUpload\", \"application/json\" = \"LabelUpload\" }"
        )),
        format!(
            "{label}`request_models` describes every JSON request type: none is left for the input; fix: leave the input's JSON type out of `request_models`"
        )
    );
}

#[test]
fn the_diff_says_a_request_body_of_another_shape_changed() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let spec = uploaded("");
    let renamed =
        spec.replace("[models.LabelUpload]", "[models.LabelCsv]").replace("= \"LabelUpload\" }", "= \"LabelCsv\" }");
    assert_eq!(
        lines(&spec, &renamed),
        [
            "breaking: todos: operation `label`: takes `multipart/form-data` bodies shaped as `LabelCsv` instead of `LabelUpload` [request-model-changed]"
        ]
    );
    let narrowed = spec.replace("max_size = 1000", "max_size = 10");
    assert_eq!(
        lines(&spec, &narrowed),
        [
            "breaking: todos: operation `label` `multipart/form-data` body input field `file`: max_size lowered to 10 [input-field-narrowed]"
        ]
    );
}
