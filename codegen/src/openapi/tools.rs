//! JSON Schemas that stand alone, for MCP tools: an operation's input and output with the components they use inlined under `$defs`.

use serde_json::{Value, json};

use crate::ir::{Api, Model, Operation, Ty};
use crate::spec::SuccessFormat;

use super::*;

/// Renames every member `from` to `to`: utoipa writes what it has no field for as an `x-`
/// extension, and `contentSchema` (JSON Schema 2020-12, so OpenAPI 3.1) is one.
pub(crate) fn rename_key(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.remove(from) {
                m.insert(to.to_string(), x);
            }
            m.values_mut().for_each(|x| rename_key(x, from, to));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rename_key(x, from, to)),
        _ => {}
    }
}

/// A serialized schema or document with each `with_requires` extension its keyword.
pub(super) fn requires_keywords(v: &mut Value) {
    for (from, to) in REQUIRES_KEYS {
        rename_key(v, from, to);
    }
}

/// utoipa keeps `x-` extensions in a hash map; put them last, sorted, so output is byte-stable.
pub(super) fn order_extensions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let mut ext: Vec<(String, Value)> = Vec::new();
            let keys: Vec<String> = m.keys().filter(|k| k.starts_with("x-")).cloned().collect();
            for k in keys {
                if let Some(x) = m.remove(&k) {
                    ext.push((k, x));
                }
            }
            ext.sort_by(|a, b| a.0.cmp(&b.0));
            m.extend(ext);
            m.values_mut().for_each(order_extensions);
        }
        Value::Array(a) => a.iter_mut().for_each(order_extensions),
        _ => {}
    }
}

/// A standalone JSON Schema (2020-12) for the component `name` of `doc`, with every schema it
/// references copied under `$defs`.
pub fn standalone_schema(doc: &Value, root: Value) -> Value {
    let comps = &doc["components"]["schemas"];
    let mut defs = serde_json::Map::new();
    let mut pending = Vec::new();
    collect_refs(&root, &mut pending);
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let schema = comps[&name].clone();
        collect_refs(&schema, &mut pending);
        defs.insert(name, schema);
    }
    let mut sorted: Vec<(String, Value)> = defs.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = rewrite_refs(root);
    if let Value::Object(map) = &mut out
        && !sorted.is_empty()
    {
        map.insert("$defs".into(), Value::Object(sorted.into_iter().map(|(k, v)| (k, rewrite_refs(v))).collect()));
    }
    out
}

pub(super) fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref")
                && let Some(name) = r.strip_prefix("#/components/schemas/")
            {
                out.push(name.to_string());
            }
            m.values().for_each(|x| collect_refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// References into `#/$defs/` instead of the document's components. OpenAPI's `discriminator`
/// (whose mapping names components) is no JSON Schema keyword and goes: each tagged variant's
/// tag `enum` already tells the variants apart.
pub(super) fn rewrite_refs(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, x)| !(k == "discriminator" && x.get("propertyName").is_some()))
                .map(|(k, x)| match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => (k, Value::String(r.replace("#/components/schemas/", "#/$defs/"))),
                    (_, x) => (k, rewrite_refs(x)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(rewrite_refs).collect()),
        other => other,
    }
}

/// The JSON Schema of an operation's full input (path, query and body fields as one object),
/// as an MCP tool's `inputSchema`.
pub fn input_schema(api: &Api, doc: &Value, op: &Operation) -> Value {
    let model: Option<&Model> = api.input(op);
    let root = match model {
        Some(m) => with_requires(
            object_schema(&m.description, m.fields.iter(), m.additional.as_ref(), true, Side::Request, true),
            m.requires.as_ref(),
        ),
        None => object_schema("No arguments.", std::iter::empty(), None, true, Side::Request, true),
    };
    let mut v = serde_json::to_value(&root).unwrap_or_default();
    requires_keywords(&mut v);
    if let Value::Object(map) = &mut v {
        map.remove("description");
        map.entry("properties").or_insert_with(|| json!({}));
    }
    standalone_schema(doc, v)
}

/// The JSON Schema of the structured content an operation's tool answers, as an MCP
/// `outputSchema`: its REST success body, except that a bare page (an array, which MCP's
/// structured content cannot be) is `{"items", "total", "page", "per_page"}`.
pub fn output_schema(api: &Api, doc: &Value, op: &Operation) -> Option<Value> {
    // Answers of other types (or none, whose structured content is `{}`) than the main one's:
    // no one schema promises what a call returns.
    if !op.alternatives.is_empty() {
        let main = op.value_output.clone().or_else(|| {
            let m = Ty::Model(op.def.output.clone()?);
            Some(if op.list_output { Ty::List(Box::new(m)) } else { m })
        });
        if op.alternatives.iter().any(|a| a.output != main) {
            return None;
        }
    }
    if let Some(ty) = op.value_output.as_ref().or(op.output_payload.as_ref()) {
        // Structured content is an object: a bare value that is none travels in `items` (a
        // list) or `value` (anything else), as `Success::into_tool_body` puts it.
        let schema = serde_json::to_value(value_output_schema(api, op)?).ok()?;
        let bare = api.spec.wire.success == SuccessFormat::Bare;
        let root = match ty {
            Ty::List(_) if bare => json!({"type": "object", "properties": {"items": schema}, "required": ["items"]}),
            // Any JSON: no schema promises an object.
            Ty::Json if bare => return None,
            Ty::Map(_) => schema,
            // A union's variants are models: objects, stated at the root as MCP asks.
            Ty::Union(_) if bare => json!({"type": "object", "allOf": [schema]}),
            _ if bare => json!({"type": "object", "properties": {"value": schema}, "required": ["value"]}),
            _ => schema,
        };
        return Some(standalone_schema(doc, root));
    }
    let name = output_schema_name(api, op)?;
    if op.list_output && api.spec.wire.success == SuccessFormat::Bare {
        // MCP's structured content is an object: a list travels as `{"items": [...]}`.
        let model = op.def.output.as_ref()?;
        let list = json!({
            "type": "object",
            "description": format!("A list of `{model}`."),
            "properties": {"items": {"type": "array", "items": {"$ref": format!("#/components/schemas/{model}")}}},
            "required": ["items"],
        });
        return Some(standalone_schema(doc, list));
    }
    if op.def.paginated && api.spec.wire.success == SuccessFormat::Bare {
        let model = op.def.output.as_ref()?;
        let int = |d: &str| json!({"type": "integer", "format": "int64", "description": d});
        let page = json!({
            "type": "object",
            "description": format!("A page of `{model}` items."),
            "properties": {
                "items": {"type": "array", "items": {"$ref": format!("#/components/schemas/{model}")}},
                "total": int("Number of items matching the request, over all pages."),
                "page": int("This page's number, starting at 1."),
                "per_page": int("Items per page."),
            },
            "required": ["items", "total", "page", "per_page"],
        });
        return Some(standalone_schema(doc, page));
    }
    Some(standalone_schema(doc, doc["components"]["schemas"][&name].clone()))
}
