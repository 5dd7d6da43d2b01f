//! The scope each MCP message needs, checked before the protocol layer: a tool call or a resource
//! read (or subscription) its operation's, a prompt its own, a listen stream every resource's it
//! watches, anything else the service's lowest tier.

use serde_json::Value;
use support::Operation;

use super::catalog;
use crate::api::ServiceApi;

/// The scope a JSON-RPC message needs: a tool call or a resource read needs its operation's, a
/// prompt its own; anything else the lowest tier (enough to connect, list and complete).
pub(super) fn required(
    api: &ServiceApi,
    catalog: &catalog::Catalog,
    message: &Value,
) -> (&'static str, Option<&'static Operation>) {
    let param = |name: &str| message.pointer(&format!("/params/{name}")).and_then(Value::as_str).unwrap_or_default();
    let op = match message.get("method").and_then(Value::as_str) {
        Some("tools/call") => api.tool(param("name")),
        Some("resources/read" | "resources/subscribe") => {
            catalog.locate(param("uri")).and_then(|l| api.operation(&l.operation))
        }
        Some("prompts/get") => {
            let scope = catalog.prompt_scope(param("name"));
            let known = api.info().scopes.iter().map(|s| s.name).find(|s| Some(*s) == scope);
            return (known.unwrap_or_else(|| lowest(api)), None);
        }
        _ => None,
    };
    match op {
        Some(op) => (op_scope(api, op), Some(op)),
        None => (lowest(api), None),
    }
}

/// The scopes a `subscriptions/listen` request needs: reading each resource it names that the
/// service has (none for any other message).
pub(super) fn listen_scope<'a>(
    api: &'a ServiceApi,
    catalog: &'a catalog::Catalog,
    message: &'a Value,
) -> impl Iterator<Item = &'static str> + 'a {
    let listen = message.get("method").is_some_and(|m| m == "subscriptions/listen");
    let uris = message.pointer("/params/notifications/resourceSubscriptions").and_then(Value::as_array);
    uris.filter(|_| listen)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|uri| catalog.locate(uri).and_then(|l| api.operation(&l.operation)))
        .map(|op| op_scope(api, op))
}

/// The lowest scope tier of the service: enough to connect and list the tools.
pub(super) fn lowest(api: &ServiceApi) -> &'static str {
    api.info().scopes.first().map(|s| s.name).unwrap_or_default()
}

/// The scope a call of `op` needs over MCP: its own, or for a public operation what connecting
/// needs.
pub(super) fn op_scope(api: &ServiceApi, op: &Operation) -> &'static str {
    if op.public { lowest(api) } else { op.scope }
}
