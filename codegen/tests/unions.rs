//! `[unions]`: a value of one of several models, tagged (a field names the variant; OpenAPI
//! `discriminator`) or untagged (each variant has a required field the others lack). The loader
//! refuses a union a value could not be told apart by; both documents, the MCP schemas, the
//! generated Rust and the contract diff carry it.

use serde_json::{Value, json};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

/// The example with a tagged union (`Body`) and an untagged one (`Due`) on new to-dos.
fn with_unions(unions: &str) -> String {
    let spec = TODOS.replace(
        "fields.title = { type = \"string\", min_length = 1, max_length = 200, description = \"What to do.\" }",
        "fields.title = { type = \"string\", min_length = 1, max_length = 200, description = \"What to do.\" }\n\
         fields.body = { type = \"Body\", optional = true, description = \"Details.\" }\n\
         fields.due = { type = \"Due\", optional = true, description = \"When.\" }",
    );
    format!("{spec}\n{unions}")
}

const UNIONS: &str = r#"
[unions.Body]
description = "Details."
tag = "kind"
variants = { text = "Text", link = "Link" }

[unions.Due]
description = "When."
variants = { on = "DueOn", within = "DueWithin" }

[models.Text]
description = "Text."
fields.text = { type = "string", description = "The text." }

[models.Link]
description = "A link."
fields.url = { type = "string", description = "Where." }
fields.text = { type = "string", optional = true, description = "Its text." }

[models.DueOn]
description = "On a day."
fields.on = { type = "datetime", description = "The day." }

[models.DueWithin]
description = "Within days."
fields.days = { type = "integer", description = "How many." }
"#;

fn files(spec: &str) -> Vec<codegen::File> {
    codegen::generate(&[("todos.toml", spec)]).unwrap_or_else(|e| panic!("{e}"))
}

fn json_file(files: &[codegen::File], path: &str) -> Value {
    serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap()
}

#[test]
fn a_tagged_union_is_a_discriminated_one_of_and_an_untagged_one_a_plain_one_of() {
    let files = files(&with_unions(UNIONS));
    for path in ["openapi/todos.json", "openapi/todos.3.0.json"] {
        let schemas = json_file(&files, path)["components"]["schemas"].clone();
        assert_eq!(
            schemas["Body"]["discriminator"],
            json!({"propertyName": "kind", "mapping": {
                "link": "#/components/schemas/BodyLink", "text": "#/components/schemas/BodyText"}}),
            "{path}"
        );
        assert_eq!(
            schemas["Body"]["oneOf"],
            json!([{"$ref": "#/components/schemas/BodyText"}, {"$ref": "#/components/schemas/BodyLink"}])
        );
        // Each tagged variant: the tag first, required, its one value; a request-side variant is closed.
        let link = &schemas["BodyLink"];
        assert_eq!(link["properties"]["kind"]["enum"], json!(["link"]), "{path}");
        assert_eq!(link["required"], json!(["kind", "url"]));
        assert_eq!(link["additionalProperties"], false);
        // A model held only by a tagged union has no schema of its own: its variant schema is it.
        assert!(schemas.get("Link").is_none() && schemas.get("Text").is_none(), "{path}");
        assert!(schemas["DueOn"].is_object(), "untagged variants are their models");
        assert_eq!(
            schemas["Due"],
            json!({"type": "object", "oneOf": [{"$ref": "#/components/schemas/DueOn"},
                   {"$ref": "#/components/schemas/DueWithin"}], "description": "When."})
        );
    }
    let models = &files.iter().find(|f| f.path.ends_with("models.rs")).unwrap().text;
    let squeezed: String = models.split_whitespace().collect();
    assert!(squeezed.contains("#[serde(tag=\"kind\")]pubenumBody{"), "{models}");
    assert!(squeezed.contains("#[serde(untagged)]pubenumDue{"), "{models}");
    assert!(
        squeezed.contains("UnionSpec{tag:Some(\"kind\"),variants:&[(\"text\",&TEXT_FIELDS),(\"link\",&LINK_FIELDS)]")
    );
}

#[test]
fn mcp_schemas_keep_the_variants_but_not_the_openapi_discriminator() {
    let spec =
        with_unions(UNIONS).replace("base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/api/mcp\"");
    let spec = spec.replace(
        "create_todo = {",
        "create_todo = { mcp = { name = \"todos.create\", title = \"Create\", description = \"Create a to-do.\" }, ",
    );
    let tools = json_file(&files(&spec), "mcp/todos.tools.json");
    let input = &tools[0]["inputSchema"];
    assert!(!input.to_string().contains("discriminator"), "{input}");
    assert_eq!(input["$defs"]["Body"]["oneOf"][0]["$ref"], "#/$defs/BodyText");
    assert_eq!(input["$defs"]["BodyText"]["properties"]["kind"]["enum"], json!(["text"]));
}

fn refused(unions: &str) -> String {
    codegen::load("todos.toml", &with_unions(unions)).expect_err("refused").to_string()
}

#[test]
fn a_union_whose_values_cannot_be_told_apart_is_refused_with_the_fix() {
    assert_eq!(
        refused(&UNIONS.replace(
            "fields.text = { type = \"string\", optional = true",
            "fields.kind = { type = \"string\", optional = true"
        )),
        "todos.toml: union `Body`: variant `link`: model `Link` has a field `kind`, the union's tag; fix: rename the \
         field or the tag: the tag is written beside the model's fields"
    );
    assert_eq!(
        refused(&UNIONS.replace("fields.days = { type = \"integer\"", "fields.on = { type = \"integer\"")),
        "todos.toml: union `Due`: variant `on` has no required field that the other variants lack, so a value cannot \
         be told apart; fix: give it such a field, or set `tag` to tag the union\ntodos.toml: union `Due`: variant \
         `within` has no required field that the other variants lack, so a value cannot be told apart; fix: give it \
         such a field, or set `tag` to tag the union"
    );
    assert_eq!(
        refused(&UNIONS.replace("within = \"DueWithin\"", "within = \"Nope\"")),
        "todos.toml: union `Due`: variant `within` holds `Nope`, which is not a model; fix: name a model declared \
         under [models]"
    );
    assert_eq!(
        refused(
            &UNIONS.replace("variants = { on = \"DueOn\", within = \"DueWithin\" }", "variants = { on = \"DueOn\" }")
        ),
        "todos.toml: union `Due`: has fewer than two variants; fix: list at least two, or use the model itself"
    );
    assert!(
        refused(&UNIONS.replace("link = \"Link\"", "\"text!\" = \"Link\""))
            .contains("variant `text!` has the Rust name of variant `text`"),
        "variants that Rust spells alike are refused"
    );
}

#[test]
fn the_contract_diff_names_what_a_union_change_breaks() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let old = with_unions(UNIONS);
    let lines = |new: &str| -> Vec<String> {
        codegen::diff::compare(&load(&old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    assert_eq!(
        lines(&old.replace("tag = \"kind\"", "tag = \"type\"")),
        ["breaking: todos: union `Body`: tag `kind` became `type` [union-tag-changed]"]
    );
    assert_eq!(
        lines(&old.replace(
            "variants = { text = \"Text\", link = \"Link\" }",
            "variants = { text = \"Text\", url = \"Link\" }"
        )),
        [
            "breaking: todos: union `Body`: variant `link` was removed [union-variant-removed]",
            "compatible: todos: union `Body`: variant `url` was added (clients must accept variants they do not know) \
             [union-variant-added]",
        ]
    );
}
