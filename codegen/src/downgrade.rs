//! Renders an OpenAPI 3.1 document as 3.0.3, for generators that only read 3.0 (progenitor).
//!
//! utoipa emits 3.1 only, so this is a JSON pass over the finished document. It covers exactly
//! the 3.1 constructs our emitter produces: nullable type arrays, `oneOf` with `null`,
//! `examples` in schemas, a file's `contentMediaType`, numeric exclusive bounds and
//! `license.identifier`.

use serde_json::{Map, Value, json};

/// Converts a 3.1 document produced by [`crate::openapi::document`] to 3.0.3.
pub fn to_openapi_30(doc: &Value) -> Value {
    let mut doc = doc.clone();
    if let Value::Object(root) = &mut doc {
        root.insert("openapi".into(), json!("3.0.3"));
        root.remove("jsonSchemaDialect");
        // 3.0 has no `webhooks`; the extension Redocly and others read keeps them.
        if let Some(hooks) = root.remove("webhooks") {
            root.insert("x-webhooks".into(), hooks);
        }
        if let Some(Value::Object(license)) = root.get_mut("info").and_then(|i| i.get_mut("license")) {
            // 3.0 has no SPDX `identifier`; its license object names a URL instead.
            if let Some(Value::String(id)) = license.remove("identifier") {
                license.entry("url").or_insert_with(|| json!(format!("https://spdx.org/licenses/{id}.html")));
            }
        }
        for key in ["paths", "components", "x-webhooks"] {
            if let Some(v) = root.get_mut(key) {
                walk(v);
            }
        }
    }
    let schemas = doc.pointer("/components/schemas").cloned().unwrap_or(Value::Null);
    type_nullable_refs(&mut doc, &schemas);
    doc
}

/// 3.0 applies `nullable` only beside a `type` (OAS 3.0.3's clarification, and what redocly's
/// `nullable-type-sibling` checks): a nullable `allOf: [$ref]` gets the referenced schema's type.
fn type_nullable_refs(v: &mut Value, schemas: &Value) {
    match v {
        Value::Object(m) => {
            if m.get("nullable") == Some(&json!(true))
                && !m.contains_key("type")
                && let Some(Value::Array(all)) = m.get("allOf")
                && let [one] = all.as_slice()
                && let Some(name) =
                    one.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
                && let Some(t) = schemas.get(name).and_then(|s| s.get("type")).cloned()
            {
                m.insert("type".into(), t);
            }
            m.values_mut().for_each(|x| type_nullable_refs(x, schemas));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| type_nullable_refs(x, schemas)),
        _ => {}
    }
}

fn walk(v: &mut Value) {
    match v {
        Value::Object(m) => {
            convert_schema(m);
            m.values_mut().for_each(walk);
        }
        Value::Array(a) => a.iter_mut().for_each(walk),
        _ => {}
    }
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type") == Some(&json!("null"))
}

fn convert_schema(m: &mut Map<String, Value>) {
    // 3.1's `exclusiveMinimum: 5` is 3.0's `minimum: 5, exclusiveMinimum: true` (the same for
    // the maximum); a spec gives a side one bound or the other.
    for (exclusive, inclusive) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        if let Some(bound) = m.get(exclusive).filter(|v| v.is_number()).cloned() {
            m.insert(inclusive.into(), bound);
            m.insert(exclusive.into(), json!(true));
        }
    }
    // `type: ["string", "null"]` → `type: string, nullable: true`
    if let Some(Value::Array(types)) = m.get("type") {
        let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let nullable = non_null.len() < types.len();
        if let [single] = non_null.as_slice() {
            m.insert("type".into(), single.clone());
        }
        if nullable {
            m.insert("nullable".into(), json!(true));
        }
    }
    // `oneOf: [X, {type: null}]` → `allOf: [X], nullable: true`
    if let Some(Value::Array(items)) = m.get("oneOf")
        && items.len() == 2
        && items.iter().any(is_null_schema)
    {
        let other: Vec<Value> = items.iter().filter(|i| !is_null_schema(i)).cloned().collect();
        m.remove("oneOf");
        m.insert("allOf".into(), Value::Array(other));
        m.insert("nullable".into(), json!(true));
    }
    // A file's `contentMediaType` (3.1) → `format: binary` (3.0's way of saying "raw bytes"); JSON
    // text (an event's data) stays a plain string, its `contentSchema` an extension (3.0 has none).
    if let Some(schema) = m.remove("contentSchema") {
        m.insert("x-contentSchema".into(), schema);
    }
    // Base64 text: 3.0 says so with `format: byte` alone, which the schema already has.
    m.remove("contentEncoding");
    match m.remove("contentMediaType") {
        Some(Value::String(t)) if t == "application/json" => {}
        Some(_) => {
            m.insert("format".into(), json!("binary"));
        }
        None => {}
    }
    // JSON Schema `examples: [..]` → OpenAPI 3.0 `example`, only inside schemas (where it is an array).
    if let Some(Value::Array(ex)) = m.get("examples")
        && let Some(first) = ex.first().cloned()
    {
        m.remove("examples");
        m.insert("example".into(), first);
    }
}
