//! Tool arguments carried in HTTP headers too (SEP-2243, MCP 2026-07-28): an argument whose
//! field travels in a header over REST is marked `x-mcp-header` in the tool's input schema, and a
//! 2026-07-28 request carries it as `Mcp-Param-<header>` beside the argument, so that what routes
//! on headers (a gateway, a load balancer) sees it. The endpoint refuses a request whose header and
//! argument disagree (one without the other, another value, a `=?base64?…?=` value that does not
//! decode) before the protocol layer, as HTTP 400 with JSON-RPC error -32020.

use axum::http::request::Parts;
use base64::Engine;
use serde_json::Value;
use support::{Location, Operation};

/// The first revision whose clients send the headers.
const SINCE: &str = "2026-07-28";

/// Why the headers of a `tools/call` of `op` disagree with its arguments, if they do.
pub(super) fn mismatch(op: &Operation, parts: &Parts, message: &Value) -> Option<String> {
    let revision = parts.headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok()).unwrap_or_default();
    if revision < SINCE {
        return None;
    }
    let arguments = message.pointer("/params/arguments");
    for f in op.input.iter().filter(|f| f.location == Location::Header) {
        let name = format!("Mcp-Param-{}", f.http_header());
        let header = parts.headers.get(&name).map(|v| v.to_str().map(|t| t.trim_matches([' ', '\t'])));
        let argument = arguments.and_then(|a| a.get(f.name)).filter(|v| !v.is_null());
        match (argument, header) {
            (None, None) => {}
            (None, Some(_)) => return Some(format!("{name} is sent without the argument `{}`", f.name)),
            (Some(_), None) => return Some(format!("the argument `{}` is sent without its header {name}", f.name)),
            (Some(_), Some(Err(_))) => return Some(format!("{name} is not visible ASCII")),
            (Some(arg), Some(Ok(text))) => {
                let Some(value) = decoded(text) else {
                    return Some(format!("{name} is not valid `=?base64?…?=`"));
                };
                if value != super::scalar_text(arg) {
                    return Some(format!("{name} does not match the argument `{}`", f.name));
                }
            }
        }
    }
    None
}

/// A header's value: `=?base64?…?=` decoded (UTF-8, canonical padding), any other text as it is.
fn decoded(text: &str) -> Option<String> {
    match text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::decoded;

    #[test]
    fn a_value_is_literal_unless_it_is_whole_base64() {
        assert_eq!(decoded("=?base64?SGVsbG8=?=").as_deref(), Some("Hello"));
        assert_eq!(decoded("=?base64?SGVsbG8?="), None, "padding");
        assert_eq!(decoded("=?base64?SGVs!!!bG8=?="), None);
        assert_eq!(decoded("SGVsbG8=").as_deref(), Some("SGVsbG8="));
        assert_eq!(decoded("=?base64?SGVsbG8=").as_deref(), Some("=?base64?SGVsbG8="));
    }
}
