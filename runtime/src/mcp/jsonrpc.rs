//! JSON-RPC framing at the MCP endpoint: every answer of the endpoint is a JSON-RPC message (or
//! the OAuth challenge). A body that is not JSON, or JSON that is not one JSON-RPC message this
//! server can read (a member named twice included), is answered the way JSON-RPC 2.0 and MCP's
//! Streamable HTTP transport say (HTTP 400 with a JSON-RPC error: −32700 Parse error, −32600
//! Invalid Request, −32602 Invalid params) before rmcp sees it, and any error rmcp still answers
//! with a line of text (a wrong content type, a method other than POST, an `Accept` without JSON,
//! a foreign `Origin`) keeps its status and headers but gets a JSON-RPC error body, as does a
//! body over the size limit ([`too_large`]).

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
use serde::Deserialize;
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
            ErrorCode::INTERNAL_ERROR => "Internal error",
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

/// The message, once it is one (for the layers inside, which read it instead of parsing it again).
fn classify(body: &[u8], parsed: Option<Value>) -> Result<Value, Refusal> {
    let value: Value = match parsed {
        Some(value) => value,
        None => serde_json::from_slice(body)
            .map_err(|e| Refusal::new(ErrorCode::PARSE_ERROR, None, format!("the body is not JSON: {e}")))?,
    };
    // JSON leaves a member named twice open and parsers disagree on which one wins (rmcp refuses
    // it): never guess which `id`, `method` or argument was meant.
    if let Err(e) = support::parse_json_strict(body) {
        return Err(Refusal::new(
            ErrorCode::INVALID_REQUEST,
            None,
            format!("a JSON-RPC message names each member once: {e}"),
        ));
    }
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
    match ClientJsonRpcMessage::deserialize(&value) {
        Ok(_) => Ok(value),
        Err(e) => {
            let code = if has_method { ErrorCode::INVALID_PARAMS } else { ErrorCode::INVALID_REQUEST };
            Err(Refusal::new(code, id, e.to_string()))
        }
    }
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

/// Whether `headers` say the body is JSON (`Content-Type` `application/json`, any parameters), as
/// rmcp decides it for requests.
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// HTTP 413 with a JSON-RPC error: the body is larger than `limit` bytes.
/// HTTP 400 with JSON-RPC error -32020: the request's headers disagree with its body.
pub(super) fn header_mismatch(id: Option<Value>, reason: &str, request_id: Option<&str>) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": { "code": ErrorCode::HEADER_MISMATCH.0, "message": "Header mismatch", "data": { "reason": reason, "request_id": request_id } },
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

pub(super) fn too_large(limit: usize, request_id: Option<&str>) -> Response {
    let refusal = Refusal::new(ErrorCode::INVALID_REQUEST, None, format!("the body is larger than {limit} bytes"));
    answer(StatusCode::PAYLOAD_TOO_LARGE, &refusal, request_id)
}

/// Gives an error the protocol layer answered without a JSON body (its own line of text) a
/// JSON-RPC error body answering `id`, keeping the status and the other headers (`Allow` of a
/// 405, say); `reason` replaces the layer's text when given.
async fn framed(resp: Response, id: Option<Value>, reason: Option<&str>, request_id: Option<&str>) -> Response {
    let status = resp.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(resp.headers()) {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let reason = match reason {
        Some(r) => r.to_string(),
        None => {
            let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
            String::from_utf8_lossy(&text).trim().to_string()
        }
    };
    let code = if status.is_server_error() { ErrorCode::INTERNAL_ERROR } else { ErrorCode::INVALID_REQUEST };
    let mut framed = answer(status, &Refusal::new(code, id, reason), request_id);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            framed.headers_mut().insert(name.clone(), value.clone());
        }
    }
    framed
}

/// The layer: refuses a POST body that is not one readable JSON-RPC message with HTTP 400, and
/// gives every error the protocol layer answers in text a JSON-RPC error body ([`framed`]). Runs
/// after authorisation (which has already bounded the body by `limit`), so an anonymous caller
/// still gets 401 first.
pub(super) async fn check(State(limit): State<usize>, mut request: Request, next: Next) -> Response {
    let rid = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let rid = rid.as_deref();
    // The layers inside see a parsed message only where it is one this check let through.
    let parsed = request.extensions_mut().remove::<Parsed>().map(|p| p.0);
    if request.method() != Method::POST {
        return framed(next.run(request).await, None, None, rid).await;
    }
    if !is_json(request.headers()) {
        let reason = "send the message with Content-Type: application/json";
        return framed(next.run(request).await, None, Some(reason), rid).await;
    }
    let (mut parts, body) = request.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => return too_large(limit, rid),
    };
    let id = parsed.as_ref().and_then(|v| v.as_object()).and_then(readable_id);
    match classify(&bytes, parsed) {
        Ok(message) => parts.extensions.insert(Parsed(message)),
        Err(refusal) => return answer(StatusCode::BAD_REQUEST, &refusal, rid),
    };
    framed(next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await, id, None, rid).await
}

/// HTTP 404 for a session this caller cannot use (unknown, expired, or another caller's).
pub(super) fn unknown_session(id: Option<Value>, request_id: Option<&str>) -> Response {
    let refusal = Refusal::new(ErrorCode::INVALID_REQUEST, id, "no such session: initialize a new one");
    answer(StatusCode::NOT_FOUND, &refusal, request_id)
}

/// HTTP 429 for an `initialize` of a caller holding as many sessions as it may.
pub(super) fn too_many_sessions(id: Option<Value>, request_id: &str) -> Response {
    let reason = format!(
        "this caller holds {} open sessions: close one (DELETE with its Mcp-Session-Id) or wait five minutes for an idle one to end",
        super::sessions::PER_CALLER
    );
    answer(StatusCode::TOO_MANY_REQUESTS, &Refusal::new(ErrorCode::INVALID_REQUEST, id, reason), Some(request_id))
}
