//! MCP tool descriptors: name, description with its `SCOPE:` line, input and output schemas,
//! and annotations derived from the operation's method.

use serde_json::{Value, json};

use crate::ir::Api;
use crate::openapi;
use crate::spec::Method;

/// `_meta` key carrying the required scope in machine-readable form.
pub const SCOPE_META_KEY: &str = "dev.specwright/requiredScope";

/// The descriptors of every tool of `api`, as a JSON array in spec order.
pub fn descriptors(api: &Api, doc: &Value) -> Value {
    let tools = api.operations.iter().filter_map(|op| {
        let tool = op.def.mcp.as_ref()?;
        // Over MCP a public operation needs what connecting needs: the lowest tier.
        let lowest = api.spec.security.scopes.first().map(|s| s.name.clone()).unwrap_or_default();
        let scope = if op.def.public { lowest } else { op.def.scope.clone().unwrap_or_default() };
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
        if let Some(out) = openapi::output_schema(api, doc, op) {
            d["outputSchema"] = out;
        }
        d["annotations"] = annotations;
        d["_meta"] = json!({ SCOPE_META_KEY: scope, "dev.specwright/operationId": op.id() });
        Some(d)
    });
    Value::Array(tools.collect())
}
