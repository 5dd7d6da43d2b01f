//! JSON-RPC framing at the MCP endpoint: a body that is not JSON, or JSON that is not one JSON-RPC
//! message this server can read, is answered the way JSON-RPC 2.0 and MCP's Streamable HTTP
//! transport say (HTTP 400 with a JSON-RPC error: −32700 Parse error, −32600 Invalid Request,
//! −32602 Invalid params), before rmcp sees it: rmcp answers every such body with HTTP 415 and a
//! line of text, which no JSON-RPC client can read.

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
use serde_json::{Map, Value, json};

/// Why a body is not one JSON-RPC message the server can read.
#[derive(Debug)]
struct Refusal {
    /// −32700, −32600 or −32602.
    code: ErrorCode,
    /// The request's id, when it could be read (`null` in the answer otherwise).
    id: Option<Value>,
    /// What was wrong, for the error's `data`.
    reason: String,
}

impl Refusal {
    fn new(code: ErrorCode, id: Option<Value>, reason: impl Into<String>) -> Self {
        Refusal { code, id, reason: reason.into() }
    }

    /// The standard message of the code (JSON-RPC 2.0 §5.1).
    fn message(&self) -> &'static str {
        match self.code {
            ErrorCode::PARSE_ERROR => "Parse error",
            ErrorCode::INVALID_PARAMS => "Invalid params",
            _ => "Invalid Request",
        }
    }
}

/// A request id MCP allows: a string or an integer (never `null`).
fn readable_id(obj: &Map<String, Value>) -> Option<Value> {
    obj.get("id").filter(|id| id.is_string() || id.is_i64()).cloned()
}

/// Checks that `body` is one JSON-RPC 2.0 message rmcp can read.
/// The request's body as JSON, parsed by a layer outside this check (the MCP authorisation).
#[derive(Debug, Clone)]
pub(super) struct Parsed(pub Value);

fn classify(body: &[u8], parsed: Option<Value>) -> Result<(), Refusal> {
    let value: Value = match parsed {
        Some(value) => value,
        None => serde_json::from_slice(body)
            .map_err(|e| Refusal::new(ErrorCode::PARSE_ERROR, None, format!("the body is not JSON: {e}")))?,
    };
    let obj = match &value {
        Value::Object(obj) => obj,
        // MCP dropped JSON-RPC batches in 2025-06-18, before every revision this server speaks.
        Value::Array(_) => {
            return Err(Refusal::new(ErrorCode::INVALID_REQUEST, None, "batches are not supported: send one message"));
        }
        _ => return Err(Refusal::new(ErrorCode::INVALID_REQUEST, None, "a JSON-RPC message is a JSON object")),
    };
    let id = readable_id(obj);
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(Refusal::new(ErrorCode::INVALID_REQUEST, id, r#""jsonrpc" must be "2.0""#));
    }
    if obj.contains_key("id") && id.is_none() {
        return Err(Refusal::new(ErrorCode::INVALID_REQUEST, None, r#""id" must be a string or an integer"#));
    }
    let has_method = match obj.get("method") {
        Some(Value::String(_)) => true,
        Some(_) => return Err(Refusal::new(ErrorCode::INVALID_REQUEST, id, r#""method" must be a string"#)),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => false,
        None => {
            return Err(Refusal::new(
                ErrorCode::INVALID_REQUEST,
                id,
                "neither a request, a notification nor a response",
            ));
        }
    };
    // The envelope is sound; what rmcp still cannot read is a known method's parameters.
    serde_json::from_value::<ClientJsonRpcMessage>(value).map(drop).map_err(|e| {
        let code = if has_method { ErrorCode::INVALID_PARAMS } else { ErrorCode::INVALID_REQUEST };
        Refusal::new(code, id, e.to_string())
    })
}

/// A JSON-RPC error response with `status`.
fn answer(status: StatusCode, refusal: &Refusal, request_id: Option<&str>) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": refusal.id.clone().unwrap_or(Value::Null),
        "error": {
            "code": refusal.code.0,
            "message": refusal.message(),
            "data": { "reason": refusal.reason, "request_id": request_id },
        }
    });
    (status, axum::Json(body)).into_response()
}

/// Whether the request says its body is JSON, as rmcp decides it.
fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The layer: refuses a POST body that is not one readable JSON-RPC message with HTTP 400, and
/// gives rmcp's 415 for a body not sent as JSON a JSON-RPC error body. Runs after authorisation
/// (which has already bounded the body by `limit`), so an anonymous caller still gets 401 first.
pub(super) async fn check(State(limit): State<usize>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let rid = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    if !is_json(&request) {
        let resp = next.run(request).await;
        if resp.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
            return resp;
        }
        let refusal =
            Refusal::new(ErrorCode::INVALID_REQUEST, None, "send the message with Content-Type: application/json");
        return answer(StatusCode::UNSUPPORTED_MEDIA_TYPE, &refusal, rid.as_deref());
    }
    let (mut parts, body) = request.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response(),
    };
    let parsed = parts.extensions.remove::<Parsed>().map(|p| p.0);
    if let Err(refusal) = classify(&bytes, parsed) {
        return answer(StatusCode::BAD_REQUEST, &refusal, rid.as_deref());
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}
