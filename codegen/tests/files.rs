//! File outputs (`output = "file"` with its `media_types`): the generated trait and endpoint,
//! both documents, the loader's checks and the contract diff's rules.

use serde_json::Value;

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

const GET: &str = "input = \"TodoRef\", output = \"Todo\",";

fn file_spec(types: &str) -> String {
    assert!(TODOS.contains(GET));
    TODOS.replacen(GET, &format!("input = \"TodoRef\", output = \"file\", media_types = [{types}],"), 1)
}

#[test]
fn a_file_output_is_a_streamed_file_in_the_code_and_a_typed_string_in_the_documents() {
    let files = codegen::generate(&[("todos.toml", &file_spec("\"text/csv\", \"image/png\""))]).unwrap();
    let text =
        |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.split_whitespace().collect::<String>();
    assert!(text("service.rs").contains("Result<support::File,errors::GetTodoError>"), "{}", text("service.rs"));
    assert!(text("router.rs").contains("s.get_todo(cx,input).await.map(support::Success::File)"));
    for (path, csv) in [
        ("openapi/todos.json", serde_json::json!({"type": "string", "contentMediaType": "text/csv"})),
        ("openapi/todos.3.0.json", serde_json::json!({"type": "string", "format": "binary"})),
    ] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let ok = &doc["paths"]["/todos/{id}"]["get"]["responses"]["200"];
        assert_eq!(ok["content"]["text/csv"]["schema"], csv, "{path}");
        assert!(ok["content"]["image/png"].is_object() && ok["content"].get("application/json").is_none());
        assert!(ok["headers"]["Content-Disposition"].is_object(), "{path}");
    }
}

#[test]
fn the_loader_asks_a_file_output_for_its_types_and_refuses_what_needs_json() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        refused(file_spec("")),
        "todos.toml: operation `get_todo`: a file output declares no media type; fix: add `media_types = \
         [\"text/csv\"]` (the types it may have)"
    );
    assert_eq!(
        refused(file_spec("\"csv\"")),
        "todos.toml: operation `get_todo`: media type `csv` is not `type/subtype`; fix: write it like `text/csv`"
    );
    assert_eq!(
        refused(file_spec("\"text/csv\"").replace("output = \"file\", ", "conditional = true, output = \"file\", ")),
        "todos.toml: operation `get_todo`: a file output cannot be a conditional request (its tag is a digest of \
         JSON); fix: answer a model, or drop it"
    );
    assert_eq!(
        refused(TODOS.replacen(GET, &format!("{GET} media_types = [\"text/csv\"],"), 1)),
        "todos.toml: operation `get_todo`: `media_types` is for `output = \"file\"`; fix: remove `media_types`, or \
         answer a file"
    );
}

#[test]
fn the_diff_says_what_a_file_output_change_breaks() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let csv = file_spec("\"text/csv\"");
    assert_eq!(
        lines(TODOS, &csv),
        ["breaking: todos: operation `get_todo`: answers a file instead of JSON [output-shape-changed]"]
    );
    assert_eq!(
        lines(&csv, &file_spec("\"text/csv\", \"text/plain\"")),
        ["breaking: todos: operation `get_todo`: may now answer a file of `text/plain` [file-media-type-added]"]
    );
    assert_eq!(
        lines(&file_spec("\"text/csv\", \"text/plain\""), &csv),
        ["compatible: todos: operation `get_todo`: no longer answers `text/plain` [file-media-type-removed]"]
    );
}

/// The to-dos with an attachment upload (multipart), a raw upload and a form create.
fn upload_spec() -> String {
    let models = r#"
[models.Attach]
description = "A file for a to-do."
fields.id = { type = "string", in = "path", description = "The to-do." }
fields.file = { type = "file", media_types = ["image/*", "application/pdf"], max_size = 1000, description = "The file." }
fields.note = { type = "string", optional = true, description = "About it." }

[models.Raw]
description = "The body is the file."
fields.id = { type = "string", in = "path", description = "The to-do." }
fields.content = { type = "file", description = "The file." }
"#;
    let ops = "attach = { route = \"POST /todos/{id}/files\", scope = \"todos:write\", summary = \"Attach\", input = \"Attach\", output = \"Todo\", body = \"multipart\", errors = [\"validation\"] }\n\
               put_raw = { route = \"PUT /todos/{id}/raw\", scope = \"todos:write\", summary = \"Raw\", input = \"Raw\", body = \"raw\", errors = [\"validation\"] }\n";
    let spec = TODOS.replacen("[operations]", &format!("{models}\n[operations]"), 1).replacen(
        "input = \"NewTodo\", output = \"Todo\", status = 201,",
        "input = \"NewTodo\", output = \"Todo\", status = 201, body = \"form\",",
        1,
    );
    format!("{spec}{ops}")
}

#[test]
fn uploads_are_typed_in_the_code_and_described_in_each_body_format() {
    let files = codegen::generate(&[("todos.toml", &upload_spec())]).unwrap_or_else(|e| panic!("{e}"));
    let text =
        |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.split_whitespace().collect::<String>();
    let models = text("models.rs");
    assert!(models.contains("pubfile:support::Upload,"), "{models}");
    assert!(models.contains("Kind::File{media_types:&[\"image/*\",\"application/pdf\"],max_size:1000,}"), "{models}");
    let table = text("operations.rs");
    for format in ["Form", "Multipart", "Raw"] {
        assert!(table.contains(&format!("body:support::BodyFormat::{format},")), "{format}: {table}");
    }
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let multipart = &doc["paths"]["/todos/{id}/files"]["post"]["requestBody"]["content"]["multipart/form-data"];
        assert_eq!(multipart["encoding"]["file"]["contentType"], "image/*, application/pdf", "{path}");
        let form = &doc["paths"]["/todos"]["post"]["requestBody"]["content"];
        assert!(form["application/x-www-form-urlencoded"].is_object() && form.get("application/json").is_none());
        let raw = &doc["paths"]["/todos/{id}/raw"]["put"]["requestBody"]["content"]["application/octet-stream"];
        assert!(raw["schema"].is_object(), "{path}: {raw}");
    }
    let doc: Value =
        serde_json::from_str(&files.iter().find(|f| f.path == "openapi/todos.json").unwrap().text).unwrap();
    let file = &doc["components"]["schemas"]["AttachBody"]["properties"]["file"];
    assert_eq!(file["contentMediaType"], "application/octet-stream", "{file}");
    assert!(file["description"].as_str().unwrap().ends_with("A file of image/*, application/pdf, at most 1000 bytes."));
}

#[test]
fn the_loader_puts_files_where_a_body_can_carry_them() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    let spec = upload_spec();
    assert_eq!(
        refused(spec.replace("body = \"multipart\"", "body = \"json\"")),
        "todos.toml: operation `attach`: input model `Attach` has a file field, which a JSON body cannot carry; fix: \
         set `body = \"multipart\"` (or `\"raw\"` for a body that is the file)"
    );
    let files_in_a_list = spec.replace("body = \"multipart\"", "body = \"form\"").replace(
        "fields.file = { type = \"file\", media_types = [\"image/*\", \"application/pdf\"],",
        "fields.file = { type = \"file[]\", media_types = [\"image/*\", \"application/pdf\"],",
    );
    assert!(refused(files_in_a_list).ends_with(
        "todos.toml: operation `attach`: form field `Attach.file` holds a file or a union, which a form cannot \
         carry; fix: use `body = \"multipart\"` for files, or JSON for unions"
    ));
    // One file in a form is the field's value, its bytes percent-encoded.
    assert!(codegen::load("todos.toml", &spec.replace("body = \"multipart\"", "body = \"form\"")).is_ok());
    assert_eq!(
        refused(spec.replace(
            "summary = \"Raw\", input = \"Raw\"",
            "summary = \"Raw\", input = \"Raw\", mcp = { name = \"raw\", title = \"Raw\", description = \"Raw.\" }"
        )),
        "todos.toml: operation `put_raw`: takes a file, which an MCP tool call cannot carry (its arguments are JSON); \
         fix: remove `mcp`, or take the content another way"
    );
    assert_eq!(
        refused(spec.replace(
            "fields.content = { type = \"file\", description = \"The file.\" }",
            "fields.content = { type = \"file\", description = \"The file.\" }\nfields.extra = { type = \"string\", description = \"More.\" }"
        )),
        "todos.toml: operation `put_raw`: a raw body is one file, but input model `Raw` has 2 body field(s); fix: give \
         the input one `file` body field (the rest in the path, query or headers)"
    );
    assert_eq!(
        refused(spec.replace("media_types = [\"image/*\", \"application/pdf\"]", "media_types = [\"image\"]")),
        "todos.toml: model `Attach` field `file`: media type `image` is not `type/subtype`, `type/*` or `*/*`; fix: \
         write it like `image/png`"
    );
    assert_eq!(
        refused(spec.replace("fields.note = { type = \"string\",", "fields.note = { type = \"string\", max_size = 5,")),
        "todos.toml: model `Attach` field `note`: `media_types` and `max_size` are for `file` fields; fix: remove \
         them, or make the field a `file`"
    );
}

#[test]
fn the_diff_says_what_an_upload_change_breaks() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let spec = upload_spec();
    assert_eq!(
        lines(
            &spec,
            &spec.replace("[\"image/*\", \"application/pdf\"], max_size = 1000", "[\"image/*\"], max_size = 999")
        ),
        [
            "breaking: todos: operation `attach` input field `file`: media type `application/pdf` is no longer accepted [input-field-narrowed]",
            "breaking: todos: operation `attach` input field `file`: max_size lowered to 999 [input-field-narrowed]",
        ]
    );
    assert_eq!(
        lines(&spec, &spec.replacen("status = 201, body = \"form\",", "status = 201,", 1)),
        ["breaking: todos: operation `create_todo`: takes a json body instead of form [request-body-format-changed]"]
    );
}

#[test]
fn a_stream_returns_events_and_documents_its_format_and_item() {
    let spec = TODOS.replacen(GET, "input = \"TodoRef\", output = \"Todo\", stream = \"ndjson\",", 1);
    let files = codegen::generate(&[("todos.toml", &spec)]).unwrap_or_else(|e| panic!("{e}"));
    let text =
        |end: &str| files.iter().find(|f| f.path.ends_with(end)).unwrap().text.split_whitespace().collect::<String>();
    assert!(text("service.rs").contains("Result<support::Events<models::Todo>,errors::GetTodoError>"));
    let router = text("router.rs");
    assert!(
        router.contains("support::Success::Streamed(events.into_response(support::StreamFormat::Ndjson"),
        "{router}"
    );
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let ok = &doc["paths"]["/todos/{id}"]["get"]["responses"]["200"]["content"];
        assert_eq!(ok["application/x-ndjson"]["x-item-schema"]["$ref"], "#/components/schemas/Todo", "{path}");
        assert!(ok.get("application/json").is_none(), "{path}: no single body to wrap");
    }
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        refused(TODOS.replacen(
            "output = \"Todo\", paginated = true,",
            "output = \"Todo\", paginated = true, stream = \"sse\",",
            1
        )),
        "todos.toml: operation `list_todos`: a stream cannot be paginated; fix: drop it, or answer a single output"
    );
    assert_eq!(
        refused(TODOS.replacen(
            "input = \"NewTodo\", output = \"Todo\",",
            "input = \"NewTodo\", output = \"Todo\", stream = \"sse\",",
            1
        )),
        "todos.toml: operation `create_todo`: a stream is read with GET; fix: use GET\n\
         todos.toml: operation `create_todo`: a stream cannot be answered with another status than 200; fix: drop it, \
         or answer a single output"
    );
}

#[test]
fn ranges_are_declared_documented_checked_and_diffed() {
    let ranged = file_spec("\"video/mp4\"").replacen("output = \"file\",", "output = \"file\", ranges = true,", 1);
    let files = codegen::generate(&[("todos.toml", &ranged)]).unwrap_or_else(|e| panic!("{e}"));
    let table =
        files.iter().find(|f| f.path.ends_with("operations.rs")).unwrap().text.split_whitespace().collect::<String>();
    assert!(table.contains("ranges:true,"), "{table}");
    assert!(
        table.contains("range_not_satisfiable:Some(\"range_not_satisfiable\")"),
        "the prelude adds the role: {table}"
    );
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let op = &doc["paths"]["/todos/{id}"]["get"];
        let params: Vec<&str> =
            op["parameters"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
        assert!(params.contains(&"Range") && params.contains(&"If-Range"), "{path}: {params:?}");
        assert!(op["responses"]["206"]["headers"]["Content-Range"].is_object(), "{path}");
        assert!(op["responses"]["206"]["content"]["video/mp4"].is_object(), "{path}");
        assert!(op["responses"]["416"]["headers"]["Content-Range"].is_object(), "{path}");
        assert!(op["responses"]["200"]["headers"]["Accept-Ranges"].is_object(), "{path}");
    }
    // Documents of services without ranges do not gain the code.
    let plain = codegen::generate(&[("todos.toml", &file_spec("\"video/mp4\""))]).unwrap();
    let doc = &plain.iter().find(|f| f.path == "openapi/todos.json").unwrap().text;
    assert!(!doc.contains("range_not_satisfiable"));

    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        refused(TODOS.replacen(GET, &format!("{GET} ranges = true,"), 1)),
        "todos.toml: operation `get_todo`: `ranges` is for `output = \"file\"`; fix: remove `ranges`, or answer a file"
    );

    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    let plain = file_spec("\"video/mp4\"");
    assert_eq!(
        lines(&plain, &ranged),
        ["compatible: todos: operation `get_todo`: answers parts of its file (`Range`) [ranges-added]"]
    );
    assert_eq!(
        lines(&ranged, &plain),
        ["breaking: todos: operation `get_todo`: no longer answers parts of its file [ranges-removed]"]
    );
}
