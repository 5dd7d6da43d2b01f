//! How real documents are written (the public OpenAPI directory, GitHub's description), each
//! construct imported, generated and read back from the emitted 3.1 document as the source says it.

use codegen::import::{self, Options, Outcome};
use serde_json::{Value, json};

/// A document of these paths, with a `Thing` schema and the shared parameter `Fields`.
fn document(paths: Value) -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Things", "version": "1.0.0"},
        "servers": [{"url": "https://example.com/v1"}],
        "paths": paths,
        "components": {
            "schemas": {"Thing": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string"}, "+1": {"type": "integer"}, "-1": {"type": "integer"}
            }}},
            "parameters": {"Fields": {"name": "fields", "in": "query", "style": "form", "explode": false,
                "schema": {"type": "array", "items": {"type": "string"}}}}
        }
    })
}

fn get(id: &str, params: Value) -> Value {
    json!({"get": {"operationId": id, "parameters": params, "responses": {"200": {"description": "The thing.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}})
}

/// The import (scopes by method, as the CLI advises), its generated 3.1 document, and the report.
fn round_trip(doc: &Value) -> (Value, import::Report, String) {
    let options = Options { scope_by_method: Some(("read".into(), "write".into())), ..Default::default() };
    let imported = import::import(doc, &options).unwrap_or_else(|e| panic!("{e}"));
    let files = codegen::generate(&[("things.toml", &imported.toml)]).unwrap_or_else(|e| panic!("{e}"));
    let emitted =
        files.iter().find(|f| f.path.ends_with(".json") && f.path.starts_with("openapi/") && !f.path.contains("3.0"));
    (serde_json::from_str(&emitted.unwrap().text).unwrap(), imported.report, imported.toml)
}

#[test]
fn comma_separated_and_delimited_lists_travel_as_the_document_says() {
    let doc = document(json!({
        "/things": get("list_things", json!([
            {"$ref": "#/components/parameters/Fields"},
            {"name": "tags", "in": "query", "style": "pipeDelimited", "schema": {"type": "array", "items": {"type": "string"}}},
            {"name": "ids", "in": "query", "schema": {"type": "array", "items": {"type": "integer"}}}
        ]))
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("style = \"comma\"") && toml.contains("style = \"pipe\""), "{toml}");
    let params = emitted["paths"]["/things"]["get"]["parameters"].as_array().unwrap();
    let style = |name: &str| {
        let p = params.iter().find(|p| p["name"] == name).unwrap();
        (p["style"].clone(), p["explode"].clone())
    };
    assert_eq!(style("fields"), (json!("form"), json!(false)));
    assert_eq!(style("tags"), (json!("pipeDelimited"), json!(false)));
    assert_eq!(style("ids"), (Value::Null, json!(true)));
    // The loader keeps `style` to query lists.
    let refused = toml.replacen("style = \"comma\"", "style = \"comma\", in = \"header\"", 1);
    let e = codegen::load("things.toml", &refused.replacen("in = \"query\", ", "", 1)).expect_err("refused");
    assert!(e.to_string().contains("`style = \"comma\"` is for lists in the query"), "{e}");
}

#[test]
fn a_fixed_segment_beside_a_parameter_a_trailing_slash_and_a_dateless_deprecation_import() {
    let mut doc = document(json!({
        "/things/{id}/parts": get("list_parts", json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}])),
        "/things/special/{name}": get("get_special", json!([{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}])),
        "/things/": get("list_things", json!([])),
    }));
    doc["paths"]["/things/"]["get"]["deprecated"] = json!(true);
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    for path in ["/things/{id}/parts", "/things/special/{name}", "/things/"] {
        assert!(emitted["paths"][path]["get"].is_object(), "{path} is served");
    }
    assert!(toml.contains("deprecated = true"), "{toml}");
    assert_eq!(emitted["paths"]["/things/"]["get"]["deprecated"], true);
    // `+1` and `-1` are two fields of `Thing`, each with a Rust name of its own, and so are fields
    // Rust spells alike.
    let thing = &emitted["components"]["schemas"]["Thing"]["properties"];
    assert!(thing["+1"].is_object() && thing["-1"].is_object(), "{thing}");
}

#[test]
fn what_the_loader_refuses_leaves_out_only_the_operations_that_use_it() {
    // A model the loader refuses (a pattern no regular expression engine reads) is read as a place, not as text: the operation using it is left out with the loader's words, the other stays.
    let mut doc = document(json!({
        "/things/{id}": get("get_thing", json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}])),
        "/odd": {"get": {"operationId": "get_odd", "responses": {"200": {"description": "Odd.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Odd"}}}}}}}
    }));
    doc["components"]["schemas"]["Odd"] = json!({"type": "object", "properties": {
        "a_b": {"type": "string", "pattern": "^(x"}
    }});
    let (emitted, report, _) = round_trip(&doc);
    let odd = report.entries.iter().find(|e| e.id == "get_odd").unwrap();
    match &odd.outcome {
        Outcome::NotImported(why) => {
            assert!(why[0].0.starts_with("model `Odd` field `a_b`: pattern does not compile"), "{why:?}")
        }
        other => panic!("{other:?}"),
    }
    assert!(emitted["paths"]["/things/{id}"]["get"].is_object());
}

#[test]
fn a_success_documented_as_a_class_stays_one_and_error_classes_are_the_platforms() {
    let ranged = |content: Value| {
        json!({"2XX": {"description": "Success.", "content": content}, "4XX": {"description": "Client error."},
               "5XX": {"description": "Server error."}})
    };
    let doc = document(json!({
        "/things/{id}": {
            "get": {"operationId": "get_thing", "responses": ranged(json!({"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}))},
            "delete": {"operationId": "delete_thing", "responses": ranged(json!(null))},
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]
        }
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    for method in ["get", "delete"] {
        let responses = &emitted["paths"]["/things/{id}"][method]["responses"];
        assert!(
            responses["2XX"].is_object() && responses["200"].is_null() && responses["204"].is_null(),
            "{responses}"
        );
    }
    assert!(emitted["paths"]["/things/{id}"]["get"]["responses"]["2XX"]["content"]["application/json"].is_object());
    // What is answered: 200 with the thing, 204 for the delete.
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let table: String =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect();
    assert!(table.contains("success_status:204"), "the delete answers 204");
    let refused = toml.replacen("status_documented = \"range\"", "status_documented = \"range\"\nstatus = 303", 1);
    assert!(codegen::load("things.toml", &refused).is_err());
}

#[test]
fn an_operation_documented_by_its_failures_alone_keeps_its_success_unstated_and_answers_204() {
    let doc = document(json!({
        "/things/{id}/archive": {
            "post": {"operationId": "archive_thing", "responses": {"403": {"description": "Not yours."}}},
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]
        }
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("status_documented = \"none\""), "{toml}");
    let responses = emitted["paths"]["/things/{id}/archive"]["post"]["responses"].as_object().unwrap();
    assert!(responses.keys().all(|k| !k.starts_with('2')), "no success is documented: {responses:?}");
    assert!(responses.contains_key("403"), "{responses:?}");
    // What is answered: 204, as any operation without output.
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let table: String =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect();
    assert!(table.contains("success_status:204"), "{table}");
    // An output nobody could read from the documents is refused.
    let with_output =
        toml.replacen("status_documented = \"none\"", "status_documented = \"none\"\noutput = \"Thing\"", 1);
    let err = codegen::load("things.toml", &with_output).unwrap_err().to_string();
    assert!(err.contains("leaves the success out of the documents"), "{err}");
}

#[test]
fn response_headers_beside_a_list_body_keep_both() {
    let doc = document(json!({
        "/things": {"get": {"operationId": "list_things", "responses": {"200": {"description": "The things.",
            "headers": {"X-Next-Cursor": {"description": "Where the next page starts.", "schema": {"type": "string"}}},
            "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}}}}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("in = \"payload\""), "{toml}");
    let answer = &emitted["paths"]["/things"]["get"]["responses"]["200"];
    assert!(answer["headers"]["X-Next-Cursor"].is_object(), "{answer}");
    let schema = &answer["content"]["application/json"]["schema"];
    assert_eq!(schema["type"], "array", "{schema}");
    assert_eq!(schema["items"]["$ref"], "#/components/schemas/Thing", "{schema}");
}

#[test]
fn a_body_offered_in_xml_or_text_beside_json_keeps_each_for_the_implementation_to_read() {
    let thing = json!({"schema": {"$ref": "#/components/schemas/Thing"}});
    let doc = document(json!({
        "/things": {"post": {"operationId": "create_thing", "requestBody": {"required": true, "content": {
            "application/json": thing, "application/xml": thing, "text/plain": thing, "*/*": thing}},
            "responses": {"204": {"description": "Created."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let content = emitted["paths"]["/things"]["post"]["requestBody"]["content"].as_object().unwrap();
    let types: Vec<&str> = content.keys().map(String::as_str).collect();
    assert_eq!(types, ["application/json", "application/xml", "text/plain"], "a range is no type a body is sent as");
    assert_eq!(content["application/xml"], content["application/json"], "the same fields in each");
    // The implementation reads them: the trait says how, and the table lists them.
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let text = |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.clone();
    let service: String = text("service.rs").split_whitespace().collect();
    assert!(
        service.contains("fnread_body(&self,operation:&'staticstr,media:&str,body:&[u8],)->support::BodyRead"),
        "{service}"
    );
    let table: String = text("operations.rs").split_whitespace().collect();
    assert!(table.contains(r#"read_types:&["application/xml","text/plain"]"#), "{table}");
    let ranged = toml.replacen("\"text/plain\"]", "\"text/plain\", \"*/*\"]", 1);
    let err = codegen::load("things.toml", &ranged).unwrap_err().to_string();
    assert!(err.contains("`*/*` is not a media type a body is sent as"), "{err}");
}

#[test]
fn objects_in_the_query_travel_as_deep_objects_or_as_their_members() {
    let window = json!({"type": "object", "properties": {"gte": {"type": "integer"}, "lte": {"type": "integer"}}});
    let spot = json!({"type": "object", "required": ["lat"], "properties": {"lat": {"type": "number"}, "lng": {"type": "number"}}});
    let doc = document(json!({
        "/things": {"get": {"operationId": "list_things", "parameters": [
            {"name": "created", "in": "query", "style": "deepObject", "explode": true, "schema": window},
            {"name": "filter", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
            {"name": "more", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
            {"name": "spot", "in": "query", "schema": spot}
        ], "responses": {"204": {"description": "Listed."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let params = emitted["paths"]["/things"]["get"]["parameters"].as_array().unwrap();
    let by_name = |n: &str| params.iter().find(|p| p["name"] == n).unwrap_or_else(|| panic!("{n}: {params:?}"));
    assert_eq!(
        (&by_name("created")["style"], &by_name("filter")["style"]),
        (&json!("deepObject"), &json!("deepObject"))
    );
    assert!(by_name("spot")["style"].is_null() && by_name("spot")["explode"] == json!(true), "{params:?}");
    // Not exploded, an object in one parameter (`spot=lat,1,lng,2`) is not read.
    let one = document(json!({"/things": {"get": {"operationId": "list_things", "parameters": [
        {"name": "spot", "in": "query", "explode": false, "schema": spot}],
        "responses": {"204": {"description": "Listed."}}}}}));
    let (_, report, _) = round_trip(&one);
    assert!(report.to_string().contains("parameter style `form`, not exploded for an object"), "{report}");
    // Two objects taking the parameters no field names cannot tell theirs apart.
    let open = toml.replace(", style = \"deep\"", "");
    let err = codegen::load("things.toml", &open).unwrap_err().to_string();
    assert!(err.contains("takes the parameters no field names"), "{err}\n{toml}");
}

#[test]
fn a_union_with_a_member_of_any_value_is_any_value() {
    let doc = document(json!({
        "/things": {"post": {"operationId": "create_thing", "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"type": "object", "properties": {
                "value": {"oneOf": [{"type": "string"}, {"description": "Anything else."}]},
                "either": {"anyOf": [{"type": "integer"}, {"oneOf": [{"type": "string"}, {"type": "boolean"}]}]}
            }}}}},
            "responses": {"204": {"description": "Created."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(report.to_string().contains("has a member of any value, so it is any JSON value"), "{report}");
    assert!(
        toml.contains("one_of = [\"integer\", \"string\", \"boolean\"]"),
        "a nested union's members are its own: {toml}"
    );
    let schema = &emitted["components"]["schemas"]["CreateThingInput"]["properties"]["value"];
    assert!(schema.get("type").is_none() && schema.get("oneOf").is_none(), "any value: {schema}");
}

#[test]
fn a_parameter_described_by_json_content_is_json_text() {
    let text = |schema: Value| json!({"application/json": {"schema": schema}});
    let doc = document(json!({
        "/things/{kind}": {"get": {"operationId": "list_things", "parameters": [
            {"name": "kind", "in": "path", "required": true, "content": text(json!({"type": "string", "maxLength": 8}))},
            {"name": "q", "in": "query", "content": text(json!({"type": "object", "properties": {"state": {"type": "string"}}}))},
            {"name": "x", "in": "query", "content": {"text/csv": {"schema": {"type": "string"}}}}
        ], "responses": {"204": {"description": "Listed."}}}}
    }));
    let (_, report, _) = round_trip(&doc);
    assert!(report.to_string().contains("`content` other than one JSON media type"), "{report}");
    let doc = document(json!({
        "/things/{kind}": {"get": {"operationId": "list_things", "parameters": [
            {"name": "kind", "in": "path", "required": true, "content": text(json!({"type": "string", "maxLength": 8}))},
            {"name": "q", "in": "query", "content": text(json!({"type": "object", "properties": {"state": {"type": "string"}}}))}
        ], "responses": {"204": {"description": "Listed."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let params = emitted["paths"]["/things/{kind}"]["get"]["parameters"].as_array().unwrap();
    for p in params {
        assert!(p["content"]["application/json"]["schema"].is_object() && p.get("schema").is_none(), "{p}");
    }
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let models: String =
        files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text.split_whitespace().collect();
    assert_eq!(models.matches(".json_text()").count(), 2, "{models}");
}

#[test]
fn a_success_body_that_is_a_union_of_values_is_the_payload_of_its_answer() {
    let doc = document(json!({
        "/things/{id}": {"get": {"operationId": "get_thing", "parameters": [
            {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "The thing, or its id.", "content": {"application/json": {"schema":
                {"oneOf": [{"$ref": "#/components/schemas/Thing"}, {"type": "string"}]}}}}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("in = \"payload\"") && toml.contains("one_of = [\"Thing\", \"string\"]"), "{toml}");
    let schema = &emitted["paths"]["/things/{id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    let members = schema["oneOf"].as_array().unwrap_or_else(|| panic!("{schema}"));
    assert_eq!(members.len(), 2, "{schema}");
}

#[test]
fn one_name_in_several_places_keeps_each_under_its_name() {
    let doc = document(json!({
        "/things": {"put": {"operationId": "put_thing", "parameters": [
            {"name": "active", "in": "query", "schema": {"type": "boolean"}},
            {"name": "id", "in": "query", "schema": {"type": "string"}},
            {"name": "id", "in": "header", "schema": {"type": "string"}}
        ], "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
            "properties": {"active": {"type": "string"}, "name": {"type": "string"}}}}}},
            "responses": {"204": {"description": "Done."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let op = &emitted["paths"]["/things"]["put"];
    let params: Vec<(&str, &str)> = op["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["in"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    for expected in [("query", "active"), ("query", "id"), ("header", "id")] {
        assert!(params.contains(&expected), "{expected:?} in {params:?}");
    }
    let body = &emitted["components"]["schemas"]["PutThingInputBody"]["properties"];
    assert!(body["active"].is_object(), "the body keeps its `active`: {body}");
    assert!(toml.contains("name = \"active\"") && toml.contains("name = \"id\""), "{toml}");
    // Two parameters under one name are refused.
    let twice = toml.replacen("name = \"active\"", "name = \"id\"", 1);
    let err = codegen::load("things.toml", &twice).unwrap_err().to_string();
    assert!(err.contains("travel under one name, `id`"), "{err}");
}

#[test]
fn head_and_options_operations_import_and_head_answers_no_body() {
    let id = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]);
    let doc = document(json!({
        "/things/{id}": {
            "get": {"operationId": "get_thing", "parameters": id, "responses": {"200": {"description": "The thing.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}},
            "head": {"operationId": "check_thing", "parameters": id, "responses": {"200": {"description": "It exists.",
                "headers": {"X-Size": {"schema": {"type": "integer"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}},
            "options": {"operationId": "thing_options", "parameters": id, "responses": {"204": {"description": "Allowed."}}}
        }
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(report.to_string().contains("the answer to HEAD has no content"), "{report}");
    let item = &emitted["paths"]["/things/{id}"];
    assert!(item["head"]["responses"]["200"]["headers"]["X-Size"].is_object(), "{item}");
    assert!(item["head"]["responses"]["200"].get("content").is_none(), "{item}");
    assert!(item["options"]["responses"]["204"].is_object(), "{item}");
    // A HEAD answering a body is refused.
    let bodied = toml.replacen("output = \"CheckThingOutput\"", "output = \"Thing\"", 1);
    assert_ne!(bodied, toml, "{toml}");
    let err = codegen::load("things.toml", &bodied).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("HEAD answers no body"), "{err}\n{toml}");
}

#[test]
fn a_path_parameter_named_like_an_inherited_body_field_is_named_apart_too() {
    let mut doc = document(json!({
        "/sites/{name}": {"put": {"operationId": "put_site", "parameters": [
            {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Site"}}}},
            "responses": {"204": {"description": "Put."}}}}
    }));
    doc["components"]["schemas"]["Named"] = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    doc["components"]["schemas"]["Site"] = json!({"allOf": [{"$ref": "#/components/schemas/Named"},
        {"type": "object", "properties": {"kind": {"type": "string"}}}]});
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(emitted["paths"]["/sites/{path_name}"]["put"].is_object(), "{}", emitted["paths"]);
}

#[test]
fn an_optional_get_body_of_no_fields_is_no_body_and_one_with_fields_is_the_apis_get_body() {
    let form = |schema: Value| json!({"content": {"application/x-www-form-urlencoded": {"schema": schema}}});
    let doc = document(json!({
        "/account": {"get": {"operationId": "get_account",
            "requestBody": form(json!({"type": "object", "properties": {}, "additionalProperties": false})),
            "responses": {"200": {"description": "The account.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}},
        "/search": {"get": {"operationId": "search",
            "requestBody": form(json!({"type": "object", "properties": {"q": {"type": "string"}}})),
            "responses": {"204": {"description": "Searched."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(report.to_string().contains("the optional GET body of no fields is left out"), "{report}");
    assert!(emitted["paths"]["/account"]["get"].get("requestBody").is_none(), "{}", emitted["paths"]);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("get_body = true"), "{toml}");
    let body = &emitted["paths"]["/search"]["get"]["requestBody"]["content"]["application/x-www-form-urlencoded"];
    assert!(body["schema"].is_object(), "{}", emitted["paths"]["/search"]);
}

#[test]
fn an_all_of_that_stands_for_a_value_is_that_value_not_a_model() {
    let mut doc = document(json!({
        "/things": {"post": {"operationId": "create_thing", "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"type": "object", "properties": {
                "address": {"$ref": "#/components/schemas/AddressId"},
                "check": {"$ref": "#/components/schemas/Check"}
            }}}}},
            "responses": {"204": {"description": "Created."}}}}
    }));
    let schemas = &mut doc["components"]["schemas"];
    schemas["ResourceId"] = json!({"type": "string", "maxLength": 36});
    schemas["AddressId"] = json!({"allOf": [{"$ref": "#/components/schemas/ResourceId"}, {"type": "string"}]});
    schemas["Deadman"] = json!({"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["deadman"]}}});
    schemas["Custom"] =
        json!({"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["custom"]}}});
    schemas["Kinds"] = json!({"oneOf": [{"$ref": "#/components/schemas/Deadman"}, {"$ref": "#/components/schemas/Custom"}],
        "discriminator": {"propertyName": "type"}});
    schemas["Check"] = json!({"allOf": [{"$ref": "#/components/schemas/Kinds"}]});
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let fields = &emitted["components"]["schemas"]["CreateThingInput"]["properties"];
    assert_eq!(
        (&fields["address"]["type"][0], &fields["address"]["maxLength"]),
        (&json!("string"), &json!(36)),
        "{fields}"
    );
    assert!(fields["check"].to_string().contains("Kinds"), "the union itself: {fields}");
}

#[test]
fn a_snake_case_header_keeps_its_name_as_written() {
    let doc = document(json!({
        "/things": {"get": {"operationId": "list_things", "parameters": [
            {"name": "api_key", "in": "header", "required": true, "schema": {"type": "string"}}],
            "responses": {"204": {"description": "Listed."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("fields.api_key_header = ") && toml.contains("name = \"api_key\""), "{toml}");
    let param = &emitted["paths"]["/things"]["get"]["parameters"][0];
    assert_eq!((&param["name"], &param["in"]), (&json!("api_key"), &json!("header")), "{param}");
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let models: String =
        files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text.split_whitespace().collect();
    assert!(models.contains(r#".wire("api_key")"#), "{models}");
}

#[test]
fn a_body_of_any_type_is_a_file_of_any_type() {
    let doc = document(json!({
        "/blobs": {"put": {"operationId": "put_blob", "requestBody": {"required": true, "content": {
            "*/*": {"schema": {"type": "string", "format": "binary"}}}},
            "responses": {"204": {"description": "Stored."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("media_types = [\"*/*\"]"), "{toml}");
    let content = emitted["paths"]["/blobs"]["put"]["requestBody"]["content"].as_object().unwrap();
    assert_eq!(content.keys().collect::<Vec<_>>(), ["*/*"], "{content:?}");
}

#[test]
fn numbers_say_what_documents_say_and_misplaced_constraints_become_words() {
    let doc = document(json!({
        "/things": {"post": {"operationId": "create_thing", "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"type": "object", "required": ["level"], "properties": {
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "multipleOf": 0.25},
                "cap": {"type": "number", "exclusiveMaximum": 10},
                "mode": {"enum": [0, "auto", null]},
                "when": {"type": "string", "format": "date-time", "maxLength": 30}
            }}}}},
            "responses": {"201": {"description": "Made.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(
        toml.contains("values = [1, 2, 3]")
            && toml.contains("exclusive_minimum = 0")
            && toml.contains("multiple_of = 0.25"),
        "{toml}"
    );
    let body = emitted["paths"]["/things"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
        .map(|name| emitted["components"]["schemas"][name]["properties"].clone())
        .unwrap();
    assert_eq!(body["level"]["enum"], json!([1, 2, 3]));
    assert_eq!((&body["ratio"]["exclusiveMinimum"], &body["ratio"]["multipleOf"]), (&json!(0), &json!(0.25)));
    assert_eq!(body["cap"]["exclusiveMaximum"], json!(10));
    assert_eq!(body["mode"]["enum"], json!([0, "auto", null]));
    assert!(
        body["when"]["description"].as_str().unwrap().contains("The document also says: maxLength 30."),
        "{}",
        body["when"]
    );
}

#[test]
fn a_body_under_several_json_media_types_keeps_each() {
    let thing = json!({"schema": {"$ref": "#/components/schemas/Thing"}});
    let doc = document(json!({
        "/things/{thingId}": {
            "parameters": [{"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}}],
            "put": {"operationId": "put_thing",
                "requestBody": {"required": true, "content": {"application/json": thing, "text/json": thing, "application/*+json": thing}},
                "responses": {"200": {"description": "The thing.", "content": {"text/plain": thing, "application/json": thing, "text/json": thing}}}},
            "get": {"operationId": "get_thing",
                "responses": {"200": {"description": "The thing.", "content": {"application/vnd.things.v2+json": thing}}}}
        }
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let put = &emitted["paths"]["/things/{thingId}"]["put"];
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<std::collections::BTreeSet<_>>();
    let set = |k: &[&str]| k.iter().map(|m| m.to_string()).collect::<std::collections::BTreeSet<_>>();
    assert_eq!(keys(&put["requestBody"]["content"]), set(&["application/json", "text/json", "application/*+json"]));
    // `text/plain` is another format, which the implementation renders: a string of it.
    let answers = &put["responses"]["200"]["content"];
    assert_eq!(keys(answers), set(&["application/json", "text/json", "text/plain"]));
    assert_eq!(answers["text/plain"]["schema"], json!({"type": "string", "contentMediaType": "text/plain"}));
    assert_eq!(answers["text/json"]["schema"]["$ref"], "#/components/schemas/Thing");
    let get = &emitted["paths"]["/things/{thingId}"]["get"];
    assert_eq!(keys(&get["responses"]["200"]["content"]), set(&["application/vnd.things.v2+json"]));
}

#[test]
fn a_nullable_reference_written_as_a_union_and_nullable_items_import() {
    // Microsoft Graph's way: `anyOf: [{$ref}, {type: object, nullable: true}]`, in lists too.
    let nullable_thing =
        json!({"anyOf": [{"$ref": "#/components/schemas/Thing"}, {"type": "object", "nullable": true}]});
    let mut doc = document(json!({
        "/boxes": {"get": {"operationId": "list_boxes", "responses": {"200": {"description": "Boxes.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Box"}}}}}}}
    }));
    doc["components"]["schemas"]["Box"] = json!({"type": "object", "properties": {
        "main": nullable_thing, "things": {"type": "array", "items": nullable_thing}
    }});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("nullable_items = true"), "{toml}");
    // `Box` names Rust's own in the generated code: the model is `Box2`, said in the report.
    assert!(toml.contains("[models.Box2]"), "{toml}");
    assert!(report.to_string().contains("schema `Box` is the model `Box2`"), "{report}");
    let things = &emitted["components"]["schemas"]["Box2"]["properties"]["things"];
    assert_eq!(things["items"]["oneOf"][1]["type"], "null", "{things}");
}

#[test]
fn a_conditional_header_without_its_answers_is_the_implementations_to_read() {
    let doc = document(json!({
        "/things/{thingId}": {"delete": {"operationId": "delete_thing", "parameters": [
            {"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "If-Match", "in": "header", "description": "ETag", "schema": {"type": "string"}}
        ], "responses": {"204": {"description": "Gone."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("in = \"header\""), "{toml}");
    let params = emitted["paths"]["/things/{thingId}"]["delete"]["parameters"].as_array().unwrap();
    assert!(params.iter().any(|p| p["name"] == "If-Match" && p["in"] == "header"), "{params:?}");
}

#[test]
fn a_412_makes_a_conditional_write_only_beside_the_if_match_it_answers() {
    let write = |params: Value| {
        json!({"operationId": "put_thing", "parameters": params, "requestBody": {"content": {"application/json":
            {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
            "responses": {"200": {"description": "Put."}, "412": {"description": "The thing is locked."}}})
    };
    let id = json!({"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}});
    // A 412 alone (files.com, Dracoon: "locked", "not ready") is the implementation's refusal:
    // nothing adds an `If-Match` the document does not send.
    let doc = document(json!({"/things/{thingId}": {"put": write(json!([id.clone()]))}}));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(!toml.contains("conditional"), "{toml}");
    let op = &emitted["paths"]["/things/{thingId}"]["put"];
    let params = op["parameters"].as_array().unwrap();
    assert!(!params.iter().any(|p| p["name"] == "If-Match"), "{params:?}");
    assert!(op["responses"]["412"].is_object(), "the 412 stays documented: {op}");
    // Beside the `If-Match` it answers, it is the platform's conditional write.
    let if_match = json!({"name": "If-Match", "in": "header", "schema": {"type": "string"}});
    let doc = document(json!({"/things/{thingId}": {"put": write(json!([id, if_match]))}}));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("conditional = true"), "{toml}");
    let params = emitted["paths"]["/things/{thingId}"]["put"]["parameters"].as_array().unwrap();
    assert!(params.iter().any(|p| p["name"] == "If-Match" && p["in"] == "header"), "{params:?}");
}

#[test]
fn a_string_enum_of_other_values_is_their_text_and_an_empty_one_any_string() {
    let doc = document(json!({
        "/forms": get("list_forms", json!([
            {"name": "extended", "in": "query", "schema": {"type": "string", "enum": [true, false]}},
            {"name": "level", "in": "query", "schema": {"type": "string", "enum": [1, 2.5, null]}},
            {"name": "trim", "in": "query", "schema": {"type": "string", "enum": []}}
        ]))
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let params = emitted["paths"]["/forms"]["get"]["parameters"].as_array().unwrap();
    let schema = |name: &str| {
        let p = params.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name}: {params:?}"));
        let s = &p["schema"];
        if let Some(r) = s["$ref"].as_str() {
            emitted["components"]["schemas"][r.rsplit('/').next().unwrap()].clone()
        } else {
            s.clone()
        }
    };
    assert_eq!(schema("extended")["enum"], json!(["true", "false"]));
    assert_eq!(schema("level")["enum"], json!(["1", "2.5"]));
    let trim = schema("trim");
    assert!(trim["type"] == "string" && trim.get("enum").is_none(), "{trim}");
}

#[test]
fn a_redirect_without_its_location_stated_still_answers_one() {
    // GitHub's migration archives: `302` with a description alone.
    let doc = document(json!({
        "/user/migrations/{migration_id}/archive": {"get": {"operationId": "download_archive", "parameters": [
            {"name": "migration_id", "in": "path", "required": true, "schema": {"type": "integer"}}
        ], "responses": {"302": {"description": "Response"}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(report.to_string().contains("the 302 redirect answers a `Location`"), "{report}");
    assert!(toml.contains("status = 302"), "{toml}");
    let answer = &emitted["paths"]["/user/migrations/{migration_id}/archive"]["get"]["responses"]["302"];
    assert!(answer["headers"]["Location"]["required"] == true, "{answer}");
}

#[test]
fn a_ref_into_a_path_is_read_percent_decoded() {
    // DigitalOcean's description points at other operations' answers with the URI fragment's
    // percent-encoding (RFC 6901, section 6).
    let doc = document(json!({
        "/keys/{key_id}": {"get": {"operationId": "get_key", "parameters": [
            {"name": "key_id", "in": "path", "required": true, "schema": {"type": "string"}}
        ], "responses": {"200": {"description": "A key.", "content": {"application/json": {"schema": {
            "type": "object", "properties": {"name": {"type": "string"}}}}}}}}},
        "/keys/{key_id}/copy": {"post": {"operationId": "copy_key", "parameters": [
            {"$ref": "#/paths/~1keys~1%7Bkey_id%7D/get/parameters/0"}
        ], "responses": {"200": {"$ref": "#/paths/~1keys~1%7Bkey_id%7D/get/responses/200"}}}}
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let answer = &emitted["paths"]["/keys/{key_id}/copy"]["post"]["responses"]["200"];
    assert!(answer["content"]["application/json"].is_object(), "{answer}");
}

#[test]
fn a_list_in_a_path_segment_is_comma_separated() {
    // DaniWeb's `/apps/{ID}`: several ids in one segment, OpenAPI's `simple` style.
    let doc = document(json!({
        "/apps/{ID}": {"get": {"operationId": "get_apps", "parameters": [
            {"name": "ID", "in": "path", "required": true, "style": "simple", "schema": {"type": "array",
                "maxItems": 100, "items": {"type": "integer", "minimum": 1}}}
        ], "responses": {"200": {"description": "The apps."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("type = \"integer[]\""), "{toml}");
    let param = &emitted["paths"]["/apps/{ID}"]["get"]["parameters"][0];
    assert_eq!((&param["style"], &param["schema"]["type"]), (&json!("simple"), &json!("array")), "{param}");
}

#[test]
fn parameters_sharing_a_segment_apart_by_text_are_served_and_next_to_each_other_refused() {
    // Adobe AEM's packages; Buffer's `{id}{mediaTypeExtension}`, which no request tells apart.
    let param = |n: &str| json!({"name": n, "in": "path", "required": true, "schema": {"type": "string"}});
    let op = |id: &str, params: Value| {
        json!({"get": {"operationId": id, "parameters": params,
        "responses": {"200": {"description": "The file."}}}})
    };
    let doc = document(json!({
        "/etc/packages/{group}/{name}-{version}.zip": op("get_package", json!([param("group"), param("name"), param("version")])),
        "/profiles/{id}{ext}": op("get_profile", json!([param("id"), param("ext")]))
    }));
    let (emitted, report, _) = round_trip(&doc);
    let text = report.to_string();
    assert!(text.contains("holds `{id}` and `{ext}` with no text between them"), "{text}");
    let params =
        emitted["paths"]["/etc/packages/{group}/{name}-{version}.zip"]["get"]["parameters"].as_array().unwrap();
    let names: Vec<&Value> = params.iter().map(|p| &p["name"]).collect();
    assert_eq!(names, [&json!("group"), &json!("name"), &json!("version")]);
    assert!(emitted["paths"].get("/profiles/{id}{ext}").is_none());
}

#[test]
fn bytes_under_json_and_other_types_are_a_file_in_each() {
    // Apptigent's `StringToFile`: `format: binary` under `application/json` and six other types.
    let binary = json!({"schema": {"type": "string", "format": "binary"}});
    let doc = document(json!({
        "/StringToFile": {"post": {"operationId": "string_to_file", "requestBody": {"content": {"application/json":
            {"schema": {"type": "object", "properties": {"text": {"type": "string"}}}}}},
            "responses": {"200": {"description": "The file.", "content": {
                "application/json": binary, "text/csv": binary, "text/plain": binary}}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("output = \"file\""), "{toml}");
    let content = emitted["paths"]["/StringToFile"]["post"]["responses"]["200"]["content"].as_object().unwrap();
    let mut types: Vec<&String> = content.keys().collect();
    types.sort();
    assert_eq!(types, ["application/json", "text/csv", "text/plain"]);
}

#[test]
fn enum_values_rust_spells_alike_get_variants_of_their_own() {
    let doc = document(json!({
        "/things": get("list_things", json!([{"name": "orderby", "in": "query", "schema": {"type": "array",
            "items": {"type": "string", "enum": ["id", "ID", "id desc", "id_desc", "id"]}}}]))
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("name = \"ID\", description = \"\", rust = \"Id2\""), "{toml}");
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let models = &files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text;
    assert!(models.contains("Id2") && models.contains("IdDesc2"), "{models}");
    let param = &emitted["paths"]["/things"]["get"]["parameters"][0];
    assert!(param.is_object());
}

#[test]
fn fields_rust_spells_alike_get_names_of_their_own() {
    let mut doc = document(json!({
        "/odd": {"get": {"operationId": "get_odd", "responses": {"200": {"description": "Odd.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Odd"}}}}}}}
    }));
    doc["components"]["schemas"]["Odd"] = json!({"type": "object", "properties": {
        "a_b": {"type": "string"}, "aB": {"type": "string"}, "a-b": {"type": "integer"}
    }});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("rust = \"a_b_2\"") && toml.contains("rust = \"a_b_3\""), "{toml}");
    let props = &emitted["components"]["schemas"]["Odd"]["properties"];
    assert!(props["aB"].is_object() && props["a-b"].is_object());
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let models = &files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text;
    assert!(models.contains("#[serde(rename = \"aB\")]") && models.contains("pub a_b_2"), "{models}");
}

#[test]
fn unions_of_inline_objects_become_models() {
    let mut doc = document(json!({
        "/shapes": {"get": {"operationId": "get_shape", "responses": {"200": {"description": "A shape.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Holder"}}}}}}}
    }));
    doc["components"]["schemas"]["Holder"] = json!({"type": "object", "properties": {
        "shape": {"oneOf": [
            {"title": "Circle", "type": "object", "required": ["radius"], "properties": {"radius": {"type": "number"}}},
            {"type": "object", "required": ["side"], "properties": {"side": {"type": "number"}}}
        ]},
        "tagged": {"oneOf": [
            {"type": "object", "required": ["kind", "radius"], "properties": {"kind": {"type": "string", "enum": ["circle"]}, "radius": {"type": "number"}}},
            {"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string", "const": "dot"}}}
        ], "discriminator": {"propertyName": "kind"}},
        "amount": {"oneOf": [{"type": "number"}, {"type": "string"}]},
        "customer": {"anyOf": [{"type": "string"}, {"$ref": "#/components/schemas/Thing"}]}
    }});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("[models.Circle]"), "{toml}");
    let schemas = &emitted["components"]["schemas"];
    let holder = &schemas["Holder"]["properties"];
    // Scalars and models: a JSON value of one of their types, stated as `oneOf`.
    assert!(
        toml.contains("one_of = [\"number\", \"string\"]") && toml.contains("one_of = [\"string\", \"Thing\"]"),
        "{toml}"
    );
    assert_eq!(holder["amount"]["oneOf"].as_array().map(Vec::len), Some(2), "{holder}");
    assert_eq!(holder["customer"]["oneOf"][1]["$ref"], "#/components/schemas/Thing", "{holder}");
    let tagged = holder["tagged"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
    assert_eq!(schemas[tagged]["discriminator"]["propertyName"], "kind", "{}", schemas[tagged]);
    assert!(toml.contains("circle = ") && toml.contains("dot = "), "{toml}");
}

#[test]
fn a_delete_may_carry_a_body_and_a_get_may_not() {
    let doc = document(json!({
        "/things": {"delete": {"operationId": "delete_things", "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"type": "object", "required": ["ids"], "properties": {
                "ids": {"type": "array", "items": {"type": "string"}}}}}}},
            "responses": {"204": {"description": "Gone."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(emitted["paths"]["/things"]["delete"]["requestBody"]["content"]["application/json"].is_object());
    let get = toml.replace("DELETE /things", "GET /things");
    let e = codegen::load("things.toml", &get).expect_err("a GET body is refused");
    assert!(e.to_string().contains("GET operations cannot take body fields"), "{e}");
}

#[test]
fn an_enum_of_strings_without_a_type_is_a_string_enum() {
    let mut doc = document(json!({
        "/levels": {"get": {"operationId": "get_level", "responses": {"200": {"description": "A level.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Level"}}}}}}}
    }));
    doc["components"]["schemas"]["Special"] = json!({"enum": ["-INF", "INF", "NaN"]});
    doc["components"]["schemas"]["Level"] = json!({"type": "object", "properties": {
        "value": {"oneOf": [{"type": "number"}, {"type": "string"}, {"$ref": "#/components/schemas/Special"}]}
    }});
    let (_, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(
        toml.contains("[enums.Special]") && toml.contains("one_of = [\"number\", \"string\", \"Special\"]"),
        "{toml}"
    );
}

#[test]
fn an_untagged_union_whose_members_cannot_be_told_apart_is_one_of_its_models() {
    let mut doc = document(json!({
        "/pets": {"post": {"operationId": "add_pet", "requestBody": {"required": true, "content": {"application/json": {
            "schema": {"type": "object", "required": ["pet"], "properties": {"pet": {"oneOf": [
                {"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}]}}}}}},
            "responses": {"204": {"description": "Added."}}}}
    }));
    doc["components"]["schemas"]["Cat"] =
        json!({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}});
    doc["components"]["schemas"]["Dog"] = json!({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "bark": {"type": "boolean"}}});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("one_of = [\"Cat\", \"Dog\"]"), "{toml}");
    let schemas = &emitted["components"]["schemas"];
    assert!(schemas["Cat"].is_object() && schemas["Dog"].is_object());
}

#[test]
fn a_path_parameter_named_like_a_body_field_is_named_apart_and_the_requests_stay_the_same() {
    let thing = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}});
    let doc = document(json!({
        "/things/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "put": {"operationId": "put_thing", "requestBody": {"content": thing.clone()},
                    "responses": {"200": {"description": "Replaced.", "content": thing.clone()}}},
            "get": {"operationId": "get_thing", "responses": {"200": {"description": "The thing.", "content": thing}}}
        },
        "/things/{id}/parts": get("list_parts", json!([
            {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "id", "in": "query", "schema": {"type": "integer"}}
        ]))
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    // Every path names the parameter alike (routes sharing a prefix must), and the body and the
    // query keep their `id`.
    assert!(emitted["paths"]["/things/{path_id}"]["put"].is_object(), "{}", emitted["paths"]);
    assert!(emitted["paths"]["/things/{path_id}/parts"]["get"].is_object());
    let params = &emitted["paths"]["/things/{path_id}/parts"]["get"]["parameters"];
    let names: Vec<(&str, &str)> =
        params.as_array().unwrap().iter().map(|p| (p["name"].as_str().unwrap(), p["in"].as_str().unwrap())).collect();
    assert!(names.contains(&("path_id", "path")) && names.contains(&("id", "query")), "{names:?}");
    let body = &emitted["components"]["schemas"];
    assert!(body.to_string().contains("\"id\""), "the body's `id` stays");
    assert!(report.to_string().contains("the path parameter `id` is named `path_id`"), "{report}");
    assert!(toml.contains("fields.path_id = "), "{toml}");
}

#[test]
fn a_reference_into_another_schema_is_that_schema_inline() {
    let mut doc = document(json!({
        "/things": {"get": {"operationId": "list_things", "parameters": [
            {"name": "page", "in": "query", "schema": {"$ref": "#/components/schemas/Envelope/properties/page"}}
        ], "responses": {"200": {"description": "The things.", "content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/Thing"}}}}}}}
    }));
    doc["components"]["schemas"]["Envelope"] =
        json!({"type": "object", "properties": {"page": {"type": "integer", "minimum": 1, "readOnly": true}}});
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let page = &emitted["paths"]["/things"]["get"]["parameters"][0];
    assert_eq!(
        (&page["name"], &page["schema"]["type"], &page["schema"]["minimum"]),
        (&json!("page"), &json!("integer"), &json!(1))
    );
}

#[test]
fn a_json_body_also_sent_as_a_form_is_decoded_as_one_where_a_form_carries_its_fields() {
    let schema = |name: &str| json!({"$ref": format!("#/components/schemas/{name}")});
    let both = |name: &str| {
        json!({"content": {"application/json": {"schema": schema(name)},
                           "application/x-www-form-urlencoded": {"schema": schema(name)},
                           "multipart/form-data": {"schema": schema(name)}}})
    };
    let post = |id: &str, body: &str| {
        json!({"post": {"operationId": id, "requestBody": both(body),
               "responses": {"204": {"description": "Done."}}}})
    };
    let mut doc = document(json!({"/flat": post("post_flat", "Flat"), "/nested": post("post_nested", "Nested"),
                                  "/either": post("post_either", "Either")}));
    doc["components"]["schemas"]["Flat"] = json!({"type": "object", "properties": {
        "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}});
    doc["components"]["schemas"]["Nested"] =
        json!({"type": "object", "properties": {"thing": {"$ref": "#/components/schemas/Thing"}}});
    let variant = |tag: &str| {
        json!({"type": "object", "required": ["kind", tag], "properties": {
            "kind": {"type": "string", "enum": [tag]}, tag: {"type": "string"}}})
    };
    doc["components"]["schemas"]["Either"] = json!({"type": "object", "properties": {"choice": {
        "oneOf": [variant("a"), variant("b")], "discriminator": {"propertyName": "kind"}}}});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let content = |path: &str| emitted["paths"][path]["post"]["requestBody"]["content"].clone();
    let types = |path: &str| -> Vec<String> { content(path).as_object().unwrap().keys().cloned().collect() };
    let all = ["application/json", "application/x-www-form-urlencoded", "multipart/form-data"].map(String::from);
    assert_eq!((types("/flat"), types("/nested")), (all.to_vec(), all.to_vec()));
    // A nested value in a form travels in brackets (`thing[id]=1`), as the document says.
    assert_eq!(
        content("/nested")["application/x-www-form-urlencoded"]["encoding"]["thing"],
        json!({"style": "deepObject", "explode": true})
    );
    // The platform decodes the flat and the nested one's forms; a union's are the implementation's.
    let report = report.to_string();
    let read_note = "reads [\"application/x-www-form-urlencoded\", \"multipart/form-data\"] bodies (`read_body`)";
    assert_eq!(report.matches(read_note).count(), 1, "{report}");
    assert!(report.contains("POST /either (post_either): imported, normalised"), "{report}");
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let table: String =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect();
    assert_eq!(table.matches("body_forms:&[support::BodyFormat::Form,support::BodyFormat::Multipart]").count(), 2);
    let read = r#"read_types:&["application/x-www-form-urlencoded","multipart/form-data"]"#;
    assert_eq!(table.matches(read).count(), 1, "{table}");
    let refused = codegen::load(
        "things.toml",
        &round_trip(&doc).2.replace("request_types = [\"application/json\", ", "request_types = ["),
    );
    assert!(refused.is_err_and(|e| e.to_string().contains("lists no JSON media type")));
}

#[test]
fn paths_sharing_a_prefix_name_its_parameter_alike() {
    let doc = document(json!({
        "/things/{id}": get("get_thing", json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}])),
        "/things/{thingId}/parts": get("list_parts", json!([{"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}}])),
        "/things/{name}": {"delete": {"operationId": "delete_thing", "parameters": [
            {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"204": {"description": "Deleted."}}}}
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let paths: Vec<&String> = emitted["paths"].as_object().unwrap().keys().collect();
    assert_eq!(paths, ["/things/{id}", "/things/{id}/parts"], "one route per shape, named alike");
    assert!(emitted["paths"]["/things/{id}"]["delete"].is_object());
    assert!(report.to_string().contains("the path parameter `thingId` is named `id`, as the paths sharing its prefix"));
}

#[test]
fn a_prefix_name_taken_by_another_parameter_of_the_path_is_not_given_twice() {
    // Keycloak: a path's `id` beside a field `id` is `path_id` everywhere, so the root's `/{id}`
    // names its prefix's parameter `path_id`; `/{realm}/config/{id}` holds that `path_id` already,
    // so `realm` keeps its name rather than take it twice.
    let param = |n: &str| json!({"name": n, "in": "path", "required": true, "schema": {"type": "string"}});
    let query_id = json!({"name": "id", "in": "query", "schema": {"type": "string"}});
    let doc = document(json!({
        "/{id}": get("get_root", json!([param("id")])),
        "/{realm}/config/{id}": get("get_config", json!([param("realm"), param("id"), query_id]))
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let paths: Vec<&String> = emitted["paths"].as_object().unwrap().keys().collect();
    let config = paths.iter().find(|p| p.ends_with("/config/{path_id}")).unwrap_or_else(|| panic!("{paths:?}"));
    let params = emitted["paths"][config.as_str()]["get"]["parameters"].as_array().unwrap();
    assert_eq!(params.len(), 3, "{params:?}");
}

#[test]
fn an_operations_parameter_overrides_the_paths_of_the_same_name_and_place() {
    // Zoom and Spoonacular declare a path parameter on the path and again on the operation.
    let doc = document(json!({
        "/recipes/{id}/widget": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "get": {"operationId": "widget", "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "number"}},
                {"name": "normalize", "in": "query", "schema": {"type": "boolean"}}
            ], "responses": {"200": {"description": "The widget."}}}
        }
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let params = emitted["paths"]["/recipes/{id}/widget"]["get"]["parameters"].as_array().unwrap();
    let id = params.iter().find(|p| p["name"] == "id").unwrap();
    assert_eq!(id["schema"]["type"], "number", "the operation's: {params:?}");
}

#[test]
fn a_default_answer_alone_is_the_success_and_stays_default() {
    let thing = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}});
    let doc = document(json!({
        "/things/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "get": {"operationId": "get_thing", "responses": {"default": {"description": "The thing.", "content": thing}}},
            "delete": {"operationId": "delete_thing", "responses": {"default": {"description": "Deleted."}}}
        }
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let get = &emitted["paths"]["/things/{id}"]["get"]["responses"];
    assert!(get["default"]["content"]["application/json"].is_object() && get["200"].is_null(), "{get}");
    let delete = &emitted["paths"]["/things/{id}"]["delete"]["responses"];
    assert!(delete["default"].is_object() && delete["204"].is_null(), "{delete}");
    // Answered 200 with the thing, and 204.
    let files = codegen::generate(&[("things.toml", &toml)]).unwrap();
    let table: String =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect();
    assert!(table.contains("success_status:204"), "{table}");
}

#[test]
fn an_all_of_of_one_scalar_is_that_scalar() {
    let mut doc = document(json!({
        "/things": {"get": {"operationId": "list_things", "parameters": [
            {"name": "color", "in": "query", "schema": {"allOf": [{"$ref": "#/components/schemas/Color"}, {"description": "The color."}, {"default": "red"}]}},
            {"name": "code", "in": "query", "schema": {"allOf": [{"type": "string"}, {"maxLength": 5}, {"pattern": "^[a-z]+$"}]}}
        ], "responses": {"200": {"description": "The things.", "content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/Thing"}}}}}}}
    }));
    doc["components"]["schemas"]["Color"] = json!({"type": "string", "enum": ["red", "blue"]});
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let params = &emitted["paths"]["/things"]["get"]["parameters"];
    assert_eq!(params[0]["schema"]["$ref"], "#/components/schemas/Color", "{params}");
    assert_eq!((&params[1]["schema"]["maxLength"], &params[1]["schema"]["pattern"]), (&json!(5), &json!("^[a-z]+$")));
}

#[test]
fn groups_of_required_fields_import_as_the_requires_of_the_input() {
    // GitHub's "give `state` or `assignees`" body, and its "either an `id` or an `owner`, `repo`
    // and `number`" one; a group's name the schema does not describe is a field of any value.
    let body = |schema: Value| json!({"required": true, "content": {"application/json": {"schema": schema}}});
    let doc = document(json!({
        "/alerts/{n}": {"patch": {"operationId": "update_alert",
            "parameters": [{"name": "n", "in": "path", "required": true, "schema": {"type": "integer"}}],
            "requestBody": body(json!({"type": "object", "anyOf": [{"required": ["state"]}, {"required": ["assignees"]}],
                "properties": {"state": {"type": "string"}, "assignees": {"type": "array", "items": {"type": "string"}}}})),
            "responses": {"204": {"description": "Done."}}}},
        "/items": {"post": {"operationId": "add_item",
            "requestBody": body(json!({"type": "object", "required": ["type"], "additionalProperties": false,
                "oneOf": [{"required": ["id"]}, {"required": ["owner", "repo", "number"]}],
                "properties": {"type": {"type": "string"}, "id": {"type": "integer"}, "owner": {"type": "string"},
                    "repo": {"type": "string"}}})),
            "responses": {"204": {"description": "Done."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("requires = { any_of = [[\"state\"], [\"assignees\"]] }"), "{toml}");
    assert!(toml.contains("requires = { one_of = [[\"id\"], [\"owner\", \"repo\", \"number\"]] }"), "{toml}");
    let schemas = &emitted["components"]["schemas"];
    let add = schemas.as_object().unwrap().values().find(|s| s["oneOf"].is_array()).expect("the body with oneOf");
    assert_eq!(add["oneOf"][1]["required"], json!(["owner", "repo", "number"]));
    assert!(add["properties"]["number"].is_object(), "{add}");
}

#[test]
fn members_told_apart_by_a_one_valued_property_are_a_tagged_union() {
    // GitHub's repository rules: no discriminator, but each member's required `type` is an enum
    // of one value.
    let rule = |kind: &str, extra: Value| {
        json!({"type": "object", "required": ["type"], "properties": {
            "type": {"type": "string", "enum": [kind]}, "parameters": extra}})
    };
    let mut doc = document(json!({
        "/rules": {"get": {"operationId": "list_rules", "responses": {"200": {"description": "Rules.",
            "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Rule"}}}}}}}}
    }));
    doc["components"]["schemas"]["Creation"] = rule("creation", json!({"type": "object"}));
    doc["components"]["schemas"]["Deletion"] = rule("deletion", json!({"type": "object"}));
    doc["components"]["schemas"]["Rule"] =
        json!({"oneOf": [{"$ref": "#/components/schemas/Creation"}, {"$ref": "#/components/schemas/Deletion"}]});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("tag = \"type\""), "{toml}");
    assert!(report.to_string().contains("told apart by `type`"), "{report}");
    assert_eq!(emitted["components"]["schemas"]["Rule"]["discriminator"]["propertyName"], "type");
}

#[test]
fn a_parameter_of_one_value_or_a_list_or_of_scalars_one_any_text_is_read_as_text_says_it() {
    let doc = document(json!({
        "/workflows/{workflow_id}": get("get_workflow", json!([
            {"name": "workflow_id", "in": "path", "required": true, "schema": {"oneOf": [{"type": "integer"}, {"type": "string"}]}},
            {"name": "fields", "in": "query", "schema": {"oneOf": [{"type": "string"}, {"type": "array", "maxItems": 50, "items": {"type": "string"}}]}}
        ]))
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("fields.workflow_id = { type = \"string\""), "{toml}");
    let params = emitted["paths"]["/workflows/{workflow_id}"]["get"]["parameters"].as_array().unwrap();
    let fields = params.iter().find(|p| p["name"] == "fields").unwrap();
    assert_eq!((&fields["schema"]["type"], &fields["schema"]["maxItems"]), (&json!("array"), &json!(50)));
    assert!(report.to_string().contains("a lone value is a list of one"), "{report}");
}

#[test]
fn operations_told_apart_by_the_query_keep_their_paths_and_a_client_set_header_is_left_to_http() {
    // OSIsoft lists `/servers#name` beside `/servers`, AWS `/#Action=Run` beside `/#Action=Stop`,
    // Weatherbit a path parameter in the query part (`?city={city}`); Conjur documents
    // `Accept-Encoding`, which a client's HTTP library sets of its own.
    let action = |id: &str, name: &str| {
        json!({"get": {"operationId": id, "parameters": [
            {"name": "Action", "in": "query", "required": true, "schema": {"type": "string", "enum": [name]}}
        ], "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}})
    };
    let doc = document(json!({
        "/things": get("list_things", json!([
            {"name": "Accept-Encoding", "in": "header", "schema": {"type": "string", "enum": ["base64"]}}
        ])),
        "/things#name": get("find_thing", json!([{"name": "name", "in": "query", "required": true, "schema": {"type": "string"}}])),
        "/#Action=Run": action("run", "Run"),
        "/#Action=Stop": action("stop", "Stop"),
        "/weather?city={city}": get("weather", json!([{"name": "city", "in": "path", "required": true, "schema": {"type": "string"}}])),
        "/send/#env/v1/{id}": get("garbled", json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]))
    }));
    let (emitted, report, toml) = round_trip(&doc);
    let text = report.to_string();
    assert!(text.contains("`Accept-Encoding`") && !toml.contains("Accept-Encoding = {"), "{toml}");
    for path in ["/things", "/things#name", "/#Action=Run", "/#Action=Stop", "/weather?city={city}"] {
        assert!(emitted["paths"][path]["get"].is_object(), "{path}: {text}");
    }
    let city = &emitted["paths"]["/weather?city={city}"]["get"]["parameters"][0];
    assert_eq!((&city["name"], &city["in"]), (&json!("city"), &json!("path")), "as the document says");
    assert!(text.contains("the query part `#env/v1/{id}` of path `/send/#env/v1/{id}`"), "{text}");
}

#[test]
fn a_file_beside_response_headers_or_other_answers_imports_and_round_trips() {
    let pdf = json!({"application/pdf": {"schema": {"type": "string", "format": "binary"}}});
    let doc = document(json!({
        "/documents/{id}/download": {"get": {"operationId": "download", "parameters": [
            {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "The file.", "content": pdf.clone(), "headers": {
                "X-Checksum": {"required": true, "schema": {"type": "string"}},
                "Content-Length": {"schema": {"type": "integer"}}
            }}}}},
        "/exports": {"post": {"operationId": "export",
            "responses": {"200": {"description": "The export.", "content": pdf},
                          "202": {"description": "Still running."}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("in = \"payload\"") && toml.contains("x_checksum"), "{toml}");
    assert!(!toml.contains("content_length"), "the file answer sends its own length: {toml}");
    let download = &emitted["paths"]["/documents/{id}/download"]["get"]["responses"]["200"];
    assert!(download["content"]["application/pdf"].is_object(), "{download}");
    assert!(download["headers"]["X-Checksum"].is_object(), "{download}");
    let export = &emitted["paths"]["/exports"]["post"]["responses"];
    assert!(export["200"]["content"]["application/pdf"].is_object() && export["202"].is_object(), "{export}");
}

#[test]
fn a_partial_answer_beside_other_than_a_file_is_the_implementations_to_give() {
    // Downloads documented without content, and a JSON `206` for a partial result: the
    // implementation answers them; a file's `206` is the platform's ranges.
    let empty = json!({"description": "Done."});
    let doc = document(json!({
        "/downloads/{token}": {"get": {"operationId": "download", "parameters": [
            {"name": "token", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": empty.clone(), "206": {"description": "A part."}}}},
        "/chores": {"get": {"operationId": "chores", "responses": {
            "200": {"description": "All.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
            "206": {"description": "Some.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}},
        "/files/{id}": {"get": {"operationId": "file", "parameters": [
            {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "The file.", "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}},
                          "206": {"description": "A part.", "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("status = 206"), "{toml}");
    assert!(toml.contains("ranges = true"), "{toml}");
    for path in ["/downloads/{token}", "/chores"] {
        assert!(emitted["paths"][path]["get"]["responses"]["206"].is_object(), "{path}");
    }
    let chores = &emitted["paths"]["/chores"]["get"]["responses"]["206"]["content"];
    assert!(chores["application/json"].is_object(), "{chores}");
}

#[test]
fn other_formats_stay_beside_alternatives_pages_and_payloads() {
    let thing = json!({"schema": {"$ref": "#/components/schemas/Thing"}});
    let things = json!({"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}});
    let text = json!({"schema": {"type": "string"}});
    let doc = document(json!({
        // Kubernetes' way: 200, 201 and 202 each in JSON, YAML and protobuf.
        "/things": {
            "post": {"operationId": "create_thing",
                "requestBody": {"required": true, "content": {"application/json": thing}},
                "responses": {
                    "200": {"description": "The thing.", "content": {"application/json": thing, "application/yaml": thing, "application/vnd.things.protobuf": thing}},
                    "201": {"description": "Created.", "content": {"application/json": thing, "application/yaml": thing, "application/vnd.things.protobuf": thing}},
                    "202": {"description": "Accepted."}}},
            // A page in CSV too.
            "get": {"operationId": "list_things",
                "parameters": [{"name": "page", "in": "query", "schema": {"type": "integer"}},
                    {"name": "per_page", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "Things.",
                    "headers": {"X-Total-Count": {"schema": {"type": "integer"}}},
                    "content": {"application/json": things, "text/csv": things}}}}
        },
        // A string beside a response header: the payload of an output model, in XML too.
        "/things/{thingId}/name": {"get": {"operationId": "get_name",
            "parameters": [{"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "Its name.",
                "headers": {"X-Name-Length": {"schema": {"type": "integer"}}},
                "content": {"application/json": text, "application/xml": text}}}}},
        // Another answer whose formats differ from the main one's: JSON only.
        "/things/{thingId}": {"put": {"operationId": "put_thing",
            "parameters": [{"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/json": thing}},
            "responses": {
                "200": {"description": "The thing.", "content": {"application/json": thing, "application/xml": thing}},
                "201": {"description": "Created.", "content": {"application/json": thing}}}}}
    }));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let create = &emitted["paths"]["/things"]["post"]["responses"];
    let formats = ["application/json", "application/yaml", "application/vnd.things.protobuf"];
    assert_eq!(keys(&create["200"]["content"]), formats);
    assert_eq!(keys(&create["201"]["content"]), formats);
    assert!(create["202"].get("content").is_none());
    let list = &emitted["paths"]["/things"]["get"]["responses"]["200"];
    assert_eq!(keys(&list["content"]), ["application/json", "text/csv"]);
    assert_eq!(list["content"]["text/csv"]["schema"], json!({"type": "string", "contentMediaType": "text/csv"}));
    let name = &emitted["paths"]["/things/{thingId}/name"]["get"]["responses"]["200"];
    assert_eq!(keys(&name["content"]), ["application/json", "application/xml"]);
    assert!(name["headers"].get("X-Name-Length").is_some(), "{name}");
    // XML renders the value itself: its schema, bare.
    assert_eq!(name["content"]["application/xml"]["schema"]["type"], "string");
    let put = &emitted["paths"]["/things/{thingId}"]["put"]["responses"];
    assert_eq!(
        (keys(&put["200"]["content"]), keys(&put["201"]["content"])),
        (vec!["application/json".to_string()], vec!["application/json".to_string()])
    );
    let put_note = report.to_string();
    assert!(
        put_note.contains(r#"answers its JSON media types only (the document also offers ["application/xml"])"#),
        "{put_note}"
    );
    assert_eq!(toml.matches("answer_types").count(), 3, "{toml}");
}

#[test]
fn documents_inconsistent_in_small_ways_import_as_their_senders_mean_them() {
    let mut doc = document(json!({
        // A union of one member (a discriminator of one mapping), as a request body.
        "/configs": {"post": {"operationId": "create_config",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Config"}}}},
            // An unregistered 2xx, as YNAB's bulk update answers 209.
            "responses": {"209": {"description": "Updated.", "headers": {
                "X-Next-Billing": {"schema": {"type": "string", "format": "date-time"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}},
        "/ratings/{rating}": {"get": {"operationId": "get_rating",
            "parameters": [
                // Numbers whose values are written as strings, and an integer listing words.
                {"name": "rating", "in": "path", "required": true, "schema": {"type": "integer", "enum": ["1", "2", "10"]}},
                {"name": "change", "in": "query", "schema": {"type": "integer", "enum": ["created", "found"]}},
                // A default the field's own format refuses.
                {"name": "email", "in": "query", "schema": {"type": "string", "format": "email", "default": ""}}],
            "responses": {"200": {"description": "The thing.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}}
    }));
    doc["components"]["schemas"]["Config"] = json!({"oneOf": [{"$ref": "#/components/schemas/RouteConfig"}],
        "discriminator": {"propertyName": "type", "mapping": {"route": "#/components/schemas/RouteConfig"}}});
    doc["components"]["schemas"]["RouteConfig"] = json!({"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}, "asn": {"type": "integer"}}});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let create = &emitted["paths"]["/configs"]["post"];
    assert_eq!(
        create["requestBody"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/RouteConfig",
        "the one member itself"
    );
    let updated = &create["responses"]["209"];
    let billing = &updated["headers"]["X-Next-Billing"]["schema"];
    assert_eq!((&billing["type"], &billing["format"]), (&json!("string"), &json!("date-time")));
    let params = emitted["paths"]["/ratings/{rating}"]["get"]["parameters"].as_array().unwrap();
    let schema = |name: &str| params.iter().find(|p| p["name"] == name).map(|p| p["schema"].clone()).unwrap();
    assert_eq!(schema("rating")["enum"], json!([1, 2, 10]));
    let change = schema("change");
    let name = change["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")).unwrap_or_default();
    assert_eq!(emitted["components"]["schemas"][name]["enum"], json!(["created", "found"]), "{change}");
    assert!(schema("email").get("default").is_none(), "{}", schema("email"));
    let text = report.to_string();
    assert!(text.contains("written as strings, are the numbers they spell"), "{text}");
    assert!(text.contains("lists strings as its values"), "{text}");
    assert!(toml.contains("status = 209"), "{toml}");
}

#[test]
fn nameless_parameters_undeclared_path_parameters_and_names_in_two_places_import() {
    let mut doc = document(json!({
        // A header named like a body field of the answer (figshare's `Location` beside `location`).
        "/files": {"post": {"operationId": "create_file",
            "parameters": [{"name": "", "in": "query", "schema": {"type": "string"}}],
            "responses": {"201": {"description": "Created.",
                "headers": {"Location": {"schema": {"type": "string"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Place"}}}}}}},
        // `{id}` is not declared; `{name}` is also a body field; `path_name` is taken already.
        "/tags/{id}/items/{name}": {"post": {"operationId": "add_item",
            "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "path_name", "in": "query", "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Place"}}}},
            "responses": {"204": {"description": "Added."}}}}
    }));
    doc["components"]["schemas"]["Place"] = json!({"type": "object", "required": ["location", "name"],
        "properties": {"location": {"type": "string"}, "name": {"type": "string"}}});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let create = &emitted["paths"]["/files"]["post"];
    assert!(create.get("parameters").is_none_or(|p| p.as_array().unwrap().is_empty()), "{create}");
    let created = &create["responses"]["201"];
    assert!(created["headers"]["Location"].is_object(), "{created}");
    assert!(toml.contains(r#"name = "Location""#), "{toml}");
    let (path, add) = emitted["paths"].as_object().unwrap().iter().find(|(p, _)| p.starts_with("/tags/")).unwrap();
    assert_eq!(path, "/tags/{id}/items/{path_name_2}");
    let params: Vec<(&str, &str)> = add["post"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["in"].as_str().unwrap()))
        .collect();
    assert_eq!(params, [("path_name_2", "path"), ("path_name", "query"), ("id", "path")]);
    let text = report.to_string();
    assert!(text.contains("has no name, which no request can send"), "{text}");
    assert!(text.contains("the path parameter `id` is not declared: a string"), "{text}");
}

#[test]
fn a_redirect_with_a_body_and_parameters_beside_text_in_a_segment_import() {
    let doc = document(json!({
        // A redirect that also describes where it leads; its `Location` is sent though unstated.
        "/items/{itemId}": {"get": {"operationId": "find_item",
            "parameters": [{"name": "itemId", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"302": {"description": "Found.",
                "content": {"application/json": {"schema": {"type": "object", "properties": {"location": {"type": "string"}}}}}}}}},
        // A segment of a parameter and text beside a path whose segment holds two.
        "/records/{recordId}.{format}": {"get": get("get_record", json!([
            {"name": "recordId", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "format", "in": "path", "required": true, "schema": {"type": "string"}}]))},
        "/records/{recordId}/similar.{format}": {"get": get("similar_records", json!([
            {"name": "recordId", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "format", "in": "path", "required": true, "schema": {"type": "string"}}]))}
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let found = &emitted["paths"]["/items/{itemId}"]["get"]["responses"]["302"];
    assert!(found["headers"]["Location"].is_object(), "{found}");
    assert!(found["content"]["application/json"].is_object(), "{found}");
    for path in ["/records/{recordId}.{format}", "/records/{recordId}/similar.{format}"] {
        assert!(emitted["paths"][path]["get"].is_object(), "{path}: {}", emitted["paths"]);
    }
}

#[test]
fn parameters_that_state_no_type_are_text() {
    let doc = document(json!({
        "/things": get("list_things", json!([
            {"name": "tags", "in": "query", "style": "form", "explode": false, "schema": {"type": "array", "items": {}}},
            {"name": "sets", "in": "query", "style": "form", "explode": false,
                "schema": {"type": "array", "items": {}, "enum": ["pc", "mobile"]}},
            {"name": "q", "in": "query", "schema": {}}
        ]))
    }));
    let (emitted, report, _) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let params = emitted["paths"]["/things"]["get"]["parameters"].as_array().unwrap();
    let schema = |name: &str| params.iter().find(|p| p["name"] == name).map(|p| p["schema"].clone()).unwrap();
    assert_eq!(schema("tags")["items"]["type"], "string");
    assert_eq!(schema("q")["type"], "string");
    let sets = schema("sets");
    let name = sets["items"]["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")).unwrap_or_default();
    assert_eq!(emitted["components"]["schemas"][name]["enum"], json!(["pc", "mobile"]), "{sets}");
}

#[test]
fn a_list_schema_met_inside_itself_and_free_form_query_objects_import() {
    let mut doc = document(json!({
        "/sections": {"get": {"operationId": "list_sections",
            "parameters": [
                {"name": "sort_by", "in": "query", "schema": {"type": "object"}},
                {"name": "filter", "in": "query", "schema": {"type": "object"}}],
            "responses": {"200": {"description": "Sections.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Sections"}}}}}}}
    }));
    // A list of sections, each holding that list (a menu's children, a report's records).
    doc["components"]["schemas"]["Sections"] =
        json!({"type": "array", "items": {"$ref": "#/components/schemas/Section"}});
    doc["components"]["schemas"]["Section"] = json!({"type": "object", "properties": {
        "title": {"type": "string"}, "children": {"$ref": "#/components/schemas/Sections"}}});
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    let children = &emitted["components"]["schemas"]["Section"]["properties"]["children"];
    assert_eq!(children["items"]["$ref"], "#/components/schemas/Section", "{children}");
    let params = emitted["paths"]["/sections"]["get"]["parameters"].as_array().unwrap();
    for name in ["sort_by", "filter"] {
        let p = params.iter().find(|p| p["name"] == name).unwrap();
        assert_eq!(p["style"], "deepObject", "{p}");
    }
    assert_eq!(toml.matches(r#"style = "deep""#).count(), 2, "{toml}");
}

#[test]
fn a_request_type_of_its_own_shape_is_described_by_its_own_model() {
    // The template as base64 in JSON, as a file in a multipart form, or as JSON-LD of other names.
    let content = json!({
        "application/json": {"schema": {"type": "object", "required": ["template"], "properties": {
            "template": {"type": "string", "description": "Its content, base64-encoded."}}}},
        "multipart/form-data": {"schema": {"type": "object", "required": ["template"], "properties": {
            "template": {"type": "string", "format": "binary"}}}},
        "application/ld+json": {"schema": {"type": "object", "properties": {"@id": {"type": "string"}}}}
    });
    let doc = document(json!({"/templates": {"post": {"operationId": "add_template",
        "requestBody": {"required": true, "content": content},
        "responses": {"204": {"description": "Added."}}}}}));
    let (emitted, report, toml) = round_trip(&doc);
    assert!(!report.partial(), "{report}");
    assert!(toml.contains("request_models = { \"multipart/form-data\" = \"AddTemplateMultipartBody\", \"application/ld+json\" = \"AddTemplateLdJsonBody\" }"), "{toml}");
    let report = report.to_string();
    assert!(
        report.contains("reads `multipart/form-data` bodies, described by model `AddTemplateMultipartBody`"),
        "{report}"
    );
    let body = &emitted["paths"]["/templates"]["post"]["requestBody"]["content"];
    let types: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(types, ["application/json", "application/ld+json", "multipart/form-data"]);
    let schemas = &emitted["components"]["schemas"];
    let template = &schemas["AddTemplateMultipartBody"]["properties"]["template"];
    assert_eq!(template["contentMediaType"], "application/octet-stream", "the file stays a file: {template}");
    assert!(schemas["AddTemplateLdJsonBody"]["properties"]["@id"].is_object());
    assert_eq!(body["multipart/form-data"]["schema"]["$ref"], "#/components/schemas/AddTemplateMultipartBody");
}
