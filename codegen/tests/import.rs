//! `import`: an OpenAPI document (YAML or JSON, 3.0 or 3.1) becomes a spec that loads and
//! generates, with a report naming every normalisation and every construct left out, by pointer.

use codegen::import::{self, McpSelection, Options, Outcome};
use serde_json::Value;

const PETSTORE: &str = include_str!("fixtures/import/petstore.yaml");

fn outcome<'a>(report: &'a import::Report, id: &str) -> &'a Outcome {
    &report.entries.iter().find(|e| e.id == id).unwrap_or_else(|| panic!("no entry {id}: {report}")).outcome
}

#[test]
fn a_petstore_imports_with_its_names_and_a_report_of_what_changed() {
    let doc = import::parse(PETSTORE).expect("YAML reads");
    let options = Options { mcp: McpSelection::Tags(vec!["pets".into()]), ..Options::default() };
    let imported = import::import(&doc, &options).unwrap_or_else(|e| panic!("{e}"));
    let report = &imported.report;
    assert_eq!(imported.name, "swagger_petstore");
    assert_eq!(*outcome(report, "show_pet_by_id"), Outcome::Exact, "{report}");
    assert_eq!(
        *outcome(report, "pet_photo"),
        Outcome::Normalised(vec!["no MCP tool: a file cannot travel in a tool call".into()]),
        "selected by its tag, but a file cannot be a tool's result"
    );
    assert_eq!(*outcome(report, "set_pet_tags"), Outcome::Exact, "{report}");
    match outcome(report, "create_pets") {
        Outcome::Normalised(notes) => {
            assert!(notes.iter().any(|n| n.contains("needs scope `write:pets` only")), "{notes:?}");
            assert!(
                notes.iter().any(|n| n.contains("the body schema `NewPet` is the input's body fields")),
                "{notes:?}"
            );
            assert!(
                notes
                    .iter()
                    .any(|n| n
                        .contains("the answer is `CreatePetsOutput`: the fields of `Pet` and the response headers")),
                "{notes:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    // A union of models no field tells apart: a JSON value of one of them, the answer's payload.
    match outcome(report, "pet_owner") {
        Outcome::Normalised(notes) => {
            assert_eq!(notes, &["the answer is `PetOwnerOutput`: its body (one of [\"Pet\", \"NewPet\"])"])
        }
        other => panic!("{other:?}"),
    }
    match outcome(report, "pet_events") {
        Outcome::NotImported(why) => assert_eq!(
            why,
            &[(
                "a stream whose events have no item schema (`itemSchema`)".to_string(),
                "/paths/~1pets~1{petId}~1events/get/responses/200/content/text~1event-stream".to_string()
            )]
        ),
        other => panic!("{other:?}"),
    }
    match outcome(report, "pet_keeper") {
        Outcome::Normalised(notes) => assert!(notes[0].contains("tagged by `kind`"), "{notes:?}"),
        other => panic!("{other:?}"),
    }
    assert!(report.partial());
    let text = report.to_string();
    assert!(text.ends_with("11 operations: 6 exact, 4 normalised, 1 not imported\n"), "{text}");

    // The spec a person would write: the document's names, camelCase kept on the wire.
    let spec = &imported.toml;
    if std::env::var_os("SHOW_IMPORT").is_some() {
        eprintln!("{spec}");
    }
    for line in [
        "[models.Pet]",
        "fields.photoUrls = { type = \"string[]\", optional = true, format = \"uri\", description = \"\" }",
        "fields.birthday = { type = \"date\", optional = true, nullable = true, description = \"\" }",
        "[enums.PetStatus]",
        "[operations.list_pets]",
        "route = \"GET /pets\"",
        "output = \"Pet[]\"",
        "fields.body = { type = \"string[]\", in = \"payload\", max_items = 10, description = \"The request body.\" }",
        "output = \"map<integer>\"",
        "media_types = [\"image/png\"]",
        "base_path = \"/v1\"",
        "[unions.Keeper]",
        "fields.location = { type = \"string\", in = \"header\", description = \"Where the pet is.\" }",
        "fields.retry_after = { type = \"integer\", in = \"header\", optional = true, description = \"\" }",
        "status = 202",
        "[models.KeeperShelter]",
        "fields.capacity = { type = \"integer\", optional = true, minimum = 0, description = \"\" }",
    ] {
        assert!(spec.contains(line), "{line}\n{spec}");
    }
    assert!(!spec.contains("PetEventsInput"), "what a left-out operation made goes with it");
    let files = codegen::generate(&[("swagger_petstore.toml", spec)]).unwrap_or_else(|e| panic!("{e}\n{spec}"));
    let doc: Value =
        serde_json::from_str(&files.iter().find(|f| f.path.ends_with("swagger_petstore.json")).unwrap().text).unwrap();
    for path in ["/pets", "/pets/{petId}", "/pets/{petId}/photo", "/pets/{petId}/tags", "/stats"] {
        assert!(doc["paths"][path].is_object(), "{path}");
    }
    let tools: Value =
        serde_json::from_str(&files.iter().find(|f| f.path.ends_with("tools.json")).unwrap().text).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        ["list_pets", "create_pets", "show_pet_by_id", "delete_pet", "set_pet_tags"],
        "tagged `pets`, no file"
    );
}

#[test]
fn an_operation_without_a_scope_needs_a_rule_and_json_reads_too() {
    let doc = import::parse(PETSTORE).unwrap();
    let mut json: Value = doc.clone();
    json["paths"]["/stats"]["get"].as_object_mut().unwrap().remove("security");
    let text = serde_json::to_string(&json).unwrap();
    let doc = import::parse(&text).expect("JSON reads");
    let imported = import::import(&doc, &Options::default()).unwrap();
    match outcome(&imported.report, "stats") {
        Outcome::NotImported(why) => assert_eq!(why[0].1, "/paths/~1stats/get/security"),
        other => panic!("{other:?}"),
    }
    let by_method = Options { scope_by_method: Some(("read:pets".into(), "write:pets".into())), ..Options::default() };
    let imported = import::import(&doc, &by_method).unwrap();
    match outcome(&imported.report, "stats") {
        Outcome::Normalised(notes) => assert!(notes[0].contains("by its method"), "{notes:?}"),
        other => panic!("{other:?}"),
    }
    assert!(import::parse("openapi: 2.0\n").is_err());
    assert_eq!(
        import::parse("swagger: '2.0'\n").unwrap_err().to_string(),
        "no `openapi` version: not an OpenAPI 3 document"
    );
}

/// The notes showcase's own document: every operation comes back, and platform features
/// (conditional requests, ranges, pages, redirects, a stream, a dated deprecation) come back as
/// the spec says them, not as fields.
#[test]
fn the_notes_document_imports_back_with_its_features() {
    let doc = import::parse(include_str!("../../generated/notes/openapi/notes.json")).unwrap();
    let imported = import::import(&doc, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let report = &imported.report;
    let left_out: Vec<&str> =
        report.entries.iter().filter(|e| matches!(e.outcome, Outcome::NotImported(_))).map(|e| e.id.as_str()).collect();
    assert!(left_out.is_empty(), "{report}");
    let spec = &imported.toml;
    for line in [
        "paginated = true",
        "conditional = true",
        "ranges = true",
        "status = 302",
        "status = 202",
        "[unions.NoteContent]",
        "stream = \"sse\"",
        "deprecated = { since = \"2026-11-26\", sunset = \"2027-06-01\"",
    ] {
        assert!(spec.contains(line), "{line}\n{spec}");
    }
    for absent in ["if_match", "if_none_match", "x_rate_limit", "x_total_count"] {
        assert!(!spec.contains(absent), "{absent} is the platform's, not a field\n{spec}");
    }
    codegen::generate(&[("notes.toml", spec)]).unwrap_or_else(|e| panic!("{e}\n{spec}"));
}

#[test]
fn refs_to_other_files_are_brought_in_with_their_names() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/split/openapi.yaml");
    let doc = codegen::project::read_openapi(&path).unwrap_or_else(|e| panic!("{e:#}"));
    let imported = import::import(&doc, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!imported.report.partial(), "{}", imported.report);
    let spec = codegen::load("split_shelter.toml", &imported.toml).unwrap_or_else(|e| panic!("{e}"));
    let models: Vec<&str> = spec.spec.models.keys().map(String::as_str).collect();
    for model in ["Pet", "Tag", "Owner"] {
        assert!(models.contains(&model), "{model} in {models:?}");
    }
    let show = spec.operations.iter().find(|o| o.id() == "show_pet").expect("showPet");
    assert_eq!(show.def.output.as_deref(), Some("Pet"));
    assert!(show.def.errors.iter().any(|e| e == "not_found"), "{:?}", show.def.errors);
    let input = &spec.models[show.def.input.as_deref().unwrap()];
    assert_eq!(input.fields[0].name, "petId", "the path parameter from the other file");

    // A ref to a file that is not there names it (the reader is the caller's: here, in memory).
    let doc = serde_json::json!({"openapi": "3.1.0", "paths": {"/a": {"get": {"responses": {"200": {
        "description": "A.", "content": {"application/json": {"schema": {"$ref": "models/a.json"}}}}}}}}});
    let mut read = |file: &str| match file {
        "api/models/a.json" => Ok(r##"{"type": "object", "properties": {"b": {"$ref": "b.json#/B"}}}"##.to_string()),
        other => Err(format!("no file {other}")),
    };
    let refused = codegen::bundle::bundle(doc, "api/openapi.json", &mut read).unwrap_err();
    assert_eq!(refused, "api/models/b.json: no file api/models/b.json");
}

/// A small document whose every error answer is `ApiError`.
fn with_error_model(error: Value) -> Value {
    serde_json::json!({
        "openapi": "3.1.0",
        "info": {"title": "Shop", "version": "1.0.0"},
        "servers": [{"url": "https://shop.example.com/v1"}],
        "paths": {"/items/{id}": {"get": {
            "operationId": "getItem",
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {
                "200": {"description": "The item.", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}}},
                "404": {"description": "No such item.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}}},
                "500": {"description": "A fault.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}}}
            }
        }}},
        "components": {"schemas": {"ApiError": error}}
    })
}

#[test]
fn the_documents_own_error_model_is_kept() {
    let error = serde_json::json!({"type": "object", "required": ["code", "message"], "properties": {
        "code": {"type": "string"}, "message": {"type": "string"}, "status": {"type": "integer"},
        "traceId": {"type": "string"}, "hint": {"type": "string"}}});
    let options = Options { scope_by_method: Some(("shop:read".into(), "shop:write".into())), ..Options::default() };
    let imported = import::import(&with_error_model(error.clone()), &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        imported.report.service.iter().any(|n| n.starts_with("errors are written as the document's `ApiError`")),
        "{}",
        imported.report
    );
    assert!(
        imported.toml.contains(
            "errors = { model = \"ApiError\", code = \"code\", message = \"message\", status = \"status\", request_id = \"traceId\" }"
        ),
        "{}",
        imported.toml
    );
    let files = codegen::generate(&[("shop.toml", &imported.toml)]).unwrap_or_else(|e| panic!("{e}"));
    let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == "openapi/shop.json").unwrap().text).unwrap();
    assert_eq!(
        doc["paths"]["/items/{id}"]["get"]["responses"]["404"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ApiError"
    );

    // A member the platform cannot fill keeps Specwright's envelope, and the report says why.
    let mut stamped = error;
    stamped["required"] = serde_json::json!(["code", "message", "hint"]);
    let imported = import::import(&with_error_model(stamped), &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        imported
            .report
            .service
            .iter()
            .any(|n| n.contains("(`ApiError` requires `hint`, which the platform cannot fill)")),
        "{}",
        imported.report
    );
}
