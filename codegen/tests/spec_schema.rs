//! The JSON Schema of the spec format, exported for editors as `spec/spec.schema.json` (in this repository, and in every project `new-service` lays out).

use serde_json::Value;

#[test]
fn spec_schema_is_json_describing_the_top_level_tables() {
    let text = codegen::spec_schema();
    let schema: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("expected spec_schema() to be JSON: {e}"));
    let properties = schema["properties"].as_object().expect("expected the schema to have `properties`");
    for table in ["service", "security", "operations", "errors", "error_roles"] {
        assert!(
            properties.contains_key(table),
            "expected the spec schema to describe `{table}`, it has: {:?}",
            properties.keys().collect::<Vec<_>>()
        );
    }
}
