//! The OpenID Connect userinfo endpoint (Core 1.0 section 5.3): the signed-in user's claims for
//! an access token of this server that carries the `openid` scope.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::*;

/// A refusal with its RFC 6750 challenge.
fn refused(status: StatusCode, error: &str, description: &str) -> Response {
    let challenge = format!("Bearer error=\"{error}\", error_description=\"{description}\"");
    let mut resp = (status, axum::Json(json!({ "error": error, "error_description": description }))).into_response();
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `GET` or `POST /oauth/userinfo` with `Authorization: Bearer <access token>`.
pub(super) async fn userinfo(State(s): State<Arc<AuthServer>>, headers: HeaderMap) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let Some(token) = bearer else {
        let mut resp = (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({ "error": "invalid_request",
            "error_description": "send the access token as Authorization: Bearer" })),
        )
            .into_response();
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return resp;
    };
    let claims = match s.keys.verify(token, &s.config.issuer(), &[s.config.url(USERINFO_PATH)]) {
        Ok(c) => c,
        Err(why) => return refused(StatusCode::UNAUTHORIZED, "invalid_token", why),
    };
    if !claims.scope.split_whitespace().any(|x| x == OPENID_SCOPE) {
        return refused(StatusCode::FORBIDDEN, "insufficient_scope", "the token does not carry the openid scope");
    }
    match users::tenant_of(&s.store, &claims.sub).await {
        Ok(Some(tenant)) if tenant == claims.tenant => {}
        Ok(_) => return refused(StatusCode::UNAUTHORIZED, "invalid_token", "the user no longer exists"),
        Err(e) => return internal(e),
    }
    let mut resp = axum::Json(json!({ "sub": claims.sub, "tenant": claims.tenant })).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}
