//! JSON text written once: what an answer carries as it is, and what entity tags digest.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

/// JSON text, written once from an operation's output: a REST answer's body carries it as it is
/// (the wire format's envelope written around it), and only an MCP tool result, which carries a
/// JSON value, parses it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText(pub(crate) String);

impl JsonText {
    /// The compact JSON text of `value` (`null` for a value JSON cannot hold).
    pub fn of<T: Serialize + ?Sized>(value: &T) -> JsonText {
        JsonText(serde_json::to_string(value).unwrap_or_else(|_| "null".to_string()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The JSON value the text holds.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// A `200` answer with this body, as `application/json`.
    pub(crate) fn into_response(self) -> Response {
        let mut resp = Response::new(Body::from(self.0));
        resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        resp
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> Self {
        JsonText(value.to_string())
    }
}

impl std::fmt::Display for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
