//! The authorization server's error answers (RFC 6749 section 5.2): what the token and
//! registration endpoints answer, and a storage fault in any of its endpoints.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The token endpoint's error answer (RFC 6749 section 5.2).
pub(super) fn token_error(status: StatusCode, error: &str, description: &str) -> Response {
    let mut resp = (status, axum::Json(json!({ "error": error, "error_description": description }))).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"specwright\""));
    }
    resp
}

/// A token- or registration-endpoint error, turned into its JSON answer at the edge.
pub(super) struct TokenError {
    pub(super) status: StatusCode,
    pub(super) error: &'static str,
    pub(super) description: String,
}

impl TokenError {
    pub(super) fn bad(error: &'static str, description: impl Into<String>) -> Self {
        TokenError { status: StatusCode::BAD_REQUEST, error, description: description.into() }
    }
}

impl IntoResponse for TokenError {
    fn into_response(self) -> Response {
        token_error(self.status, self.error, &self.description)
    }
}

pub(super) fn internal(e: impl std::fmt::Display + 'static) -> Response {
    if crate::store::is_transient_cause(&e) {
        // RFC 6749's code for a server that cannot answer for now; the client may retry.
        tracing::warn!(error = %e, "authorization server: storage unavailable");
        let mut resp = token_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            "the server's storage is unavailable for now; nothing was issued; retry shortly",
        );
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(crate::store::RETRY_AFTER_SECONDS));
        return resp;
    }
    tracing::error!(error = %e, "authorization server failure");
    token_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "an internal error occurred; nothing was issued")
}
