//! MCP descriptors: each tool's (name, description with its `SCOPE:` line, input and output
//! schemas, annotations derived from the operation's method, task support), and the catalog of resources,
//! resource templates, prompts and completion sources.

use serde_json::{Value, json};

use crate::ir::{Api, Operation};
use crate::openapi;
use crate::spec::Method;

/// `_meta` key carrying the required scope in machine-readable form.
pub const SCOPE_META_KEY: &str = "dev.specwright/requiredScope";

/// The descriptors of every tool of `api`, as a JSON array in spec order.
pub fn descriptors(api: &Api, doc: &Value) -> Value {
    let tools = api.operations.iter().filter_map(|op| {
        let tool = op.def.mcp.as_ref()?;
        // Over MCP a public operation needs what connecting needs: the lowest tier.
        let scope = api.mcp_scope(op);
        let method = op.method();
        let read_only = method.is_safe();
        let destructive = tool.destructive.unwrap_or(matches!(method, Method::Delete | Method::Put | Method::Patch));
        let idempotent = tool.idempotent.unwrap_or(method.is_safe() || matches!(method, Method::Put | Method::Delete));
        let mut annotations = json!({ "title": tool.title, "readOnlyHint": read_only, "openWorldHint": false });
        if !read_only {
            annotations["destructiveHint"] = json!(destructive);
            annotations["idempotentHint"] = json!(idempotent);
        }
        let mut d = json!({
            "name": tool.name,
            "title": tool.title,
            "description": match &op.def.deprecated {
                Some(d) => format!("{}\n\n{}\n\nSCOPE: {scope}", tool.description.trim(), openapi::deprecation_note(d)),
                None => format!("{}\n\nSCOPE: {scope}", tool.description.trim()),
            },
            "inputSchema": openapi::input_schema(api, doc, op),
        });
        mark_headers(api, op, &mut d["inputSchema"]);
        if let Some(out) = openapi::output_schema(api, doc, op) {
            d["outputSchema"] = out;
        }
        d["annotations"] = annotations;
        // Protocol revision 2025-11-25 lists a tool's task support on it (the client decides
        // there that a call is a task); the 2026-07-28 tool has no such field.
        if let Some(task) = tool.task {
            d["execution"] = json!({ "taskSupport": task });
        }
        d["_meta"] = json!({ SCOPE_META_KEY: scope, OPERATION_META_KEY: op.id() });
        Some(d)
    });
    Value::Array(tools.collect())
}

/// Marks each argument whose field travels in a header over REST (a string, number or boolean)
/// with `x-mcp-header`: its header's name, which a 2026-07-28 client sends as
/// `Mcp-Param-<name>` beside the argument (SEP-2243), so that what routes on headers sees it.
fn mark_headers(api: &Api, op: &Operation, schema: &mut Value) {
    use crate::ir::Ty;
    let Some(input) = api.input(op) else { return };
    for f in input.fields_in(support::Location::Header) {
        let simple =
            matches!(f.ty, Ty::String | Ty::Integer | Ty::Number | Ty::Boolean | Ty::Enum(_) | Ty::DateTime | Ty::Date);
        let pointer = format!("/properties/{}", f.name.replace('~', "~0").replace('/', "~1"));
        if let (true, Some(property)) = (simple, schema.pointer_mut(&pointer)) {
            property["x-mcp-header"] = json!(f.http_header());
        }
    }
}

/// `_meta` key naming the operation a tool, resource or completion calls.
pub const OPERATION_META_KEY: &str = "dev.specwright/operationId";

/// The service's MCP catalog beyond its tools (`mcp/<service>.catalog.json`), `None` when it has
/// no resources and no prompts: `resources` and `resourceTemplates` as `resources/list` and
/// `resources/templates/list` answer them, `prompts` as `prompts/list` does, each with its scope
/// and operation in `_meta`; `messages` (each prompt's, by name) and `completions` (each
/// completable argument's source: an operation and the field of its items, or the values) are
/// what the runtime reads to answer `prompts/get` and `completion/complete`.
pub fn catalog(api: &Api) -> Option<Value> {
    if !api.has_mcp_catalog() {
        return None;
    }
    let resources: Vec<&Operation> = api.operations.iter().filter(|o| o.def.resource.is_some()).collect();
    let (mut fixed, mut templates, mut completions) = (Vec::new(), Vec::new(), Vec::new());
    for op in &resources {
        let (Some(r), Some(uri)) = (&op.def.resource, api.resource_uri(op)) else { continue };
        let templated = !support::template_variables(&uri).is_empty();
        let mut d = json!({ if templated { "uriTemplate" } else { "uri" }: uri, "name": r.name });
        if let Some(title) = &r.title {
            d["title"] = json!(title);
        }
        d["description"] = json!(format!("{}\n\nSCOPE: {}", r.description.trim(), api.mcp_scope(op)));
        if let Some(mime) = resource_mime(op) {
            d["mimeType"] = json!(mime);
        }
        d["_meta"] = json!({ SCOPE_META_KEY: api.mcp_scope(op), OPERATION_META_KEY: op.id() });
        for var in support::template_variables(&uri) {
            if let Some(source) = variable_source(api, op, var) {
                completions
                    .push(json!({ "ref": { "type": "ref/resource", "uri": uri }, "argument": var, "source": source }));
            }
        }
        if templated { templates.push(d) } else { fixed.push(d) }
    }
    let mut prompts = Vec::new();
    let mut messages = serde_json::Map::new();
    let mut asks = serde_json::Map::new();
    for p in &api.spec.prompts {
        let arguments: Vec<Value> = p
            .arguments
            .iter()
            .map(|a| {
                let mut d = json!({ "name": a.name });
                if let Some(t) = &a.title {
                    d["title"] = json!(t);
                }
                d["description"] = json!(a.description);
                d["required"] = json!(a.required);
                d
            })
            .collect();
        let scope = api.prompt_scope(p).unwrap_or_default();
        let mut d = json!({ "name": p.name });
        if let Some(t) = &p.title {
            d["title"] = json!(t);
        }
        d["description"] = json!(format!("{}\n\nSCOPE: {scope}", p.description.trim()));
        d["arguments"] = json!(arguments);
        d["_meta"] = json!({ SCOPE_META_KEY: scope });
        prompts.push(d);
        messages.insert(p.name.clone(), serde_json::to_value(&p.messages).unwrap_or_default());
        if !p.asks.is_empty() {
            asks.insert(p.name.clone(), p.asks.iter().map(ask_form).collect());
        }
        for a in &p.arguments {
            let source = match &a.complete {
                Some(c) => Some(source_of(api, c)),
                // An argument that is a variable of a resource the prompt reads completes as it.
                None => p.messages.iter().filter_map(|m| m.resource.as_ref().or(m.image.as_ref())).find_map(|uri| {
                    let (op, own) = api.resource_of(uri)?;
                    let at = support::template_variables(uri).iter().position(|v| *v == a.name)?;
                    let var = *support::template_variables(&own).get(at)?;
                    variable_source(api, op, var)
                }),
            };
            if let Some(source) = source {
                completions.push(
                    json!({ "ref": { "type": "ref/prompt", "name": p.name }, "argument": a.name, "source": source }),
                );
            }
        }
    }
    // Each tool whose content the spec declares, by tool name: its blocks.
    let content: serde_json::Map<String, Value> = api
        .operations
        .iter()
        .filter_map(|op| op.def.mcp.as_ref().filter(|t| !t.content.is_empty()))
        .map(|t| (t.name.clone(), serde_json::to_value(&t.content).unwrap_or_default()))
        .collect();
    let mut catalog = json!({
        "toolContent": content,
        "resources": fixed,
        "resourceTemplates": templates,
        "prompts": prompts,
        "messages": messages,
        "completions": completions,
    });
    if !asks.is_empty() {
        catalog["asks"] = Value::Object(asks);
    }
    Some(catalog)
}

/// A prompt's ask as the elicitation form it sends: its key, message and the schema of its
/// required text fields.
fn ask_form(ask: &crate::spec::PromptAskDef) -> Value {
    let properties: serde_json::Map<String, Value> = ask
        .fields
        .iter()
        .map(|f| (f.name.clone(), json!({ "type": "string", "description": f.description })))
        .collect();
    let required: Vec<&str> = ask.fields.iter().map(|f| f.name.as_str()).collect();
    json!({
        "name": ask.name,
        "message": ask.message,
        "schema": { "type": "object", "properties": properties, "required": required },
    })
}

/// The media type a resource's content has, where one is known beforehand.
fn resource_mime(op: &Operation) -> Option<String> {
    if op.file_output {
        return match op.def.media_types.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
    }
    Some("application/json".into())
}

/// Where the values of a resource's URI variable `var` come from: its spec's `complete`, else
/// the enum its path parameter is.
fn variable_source(api: &Api, op: &Operation, var: &str) -> Option<Value> {
    if let Some(c) = op.def.resource.as_ref().and_then(|r| r.complete.get(var)) {
        return Some(source_of(api, c));
    }
    let field = api.input(op)?.fields.iter().find(|f| f.name == var)?;
    match &field.ty {
        crate::ir::Ty::Enum(name) => Some(enum_values(api, name)),
        _ => None,
    }
}

fn source_of(api: &Api, c: &crate::spec::CompletionDef) -> Value {
    match (&c.operation, &c.enum_name) {
        (Some(op), _) => json!({ "operation": op, "field": c.field }),
        (None, Some(name)) => enum_values(api, name),
        (None, None) => json!({ "values": c.values }),
    }
}

fn enum_values(api: &Api, name: &str) -> Value {
    let values: Vec<&str> =
        api.spec.enums.get(name).map(|e| e.values.iter().map(|v| v.name.as_str()).collect()).unwrap_or_default();
    json!({ "values": values })
}
