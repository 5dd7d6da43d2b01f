//! The web console served by the binary: pages that use the sign-in session.

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::oauth::sessions;
use crate::store::Store;

/// The console's home page (where signing in leads by default).
pub const HOME: &str = "/console/";

/// `GET /console/session`: who is signed in and the CSRF token the console's requests echo.
/// Same-origin only (no CORS headers), so another site cannot read the token.
async fn session(axum::extract::State(store): axum::extract::State<Store>, headers: HeaderMap) -> Response {
    let found = match sessions::cookie(&headers) {
        Some(secret) => sessions::lookup(&store, secret).await,
        None => Ok(None),
    };
    let mut resp = match found {
        Ok(Some(s)) => {
            axum::Json(serde_json::json!({ "user": s.user, "tenant": s.tenant, "csrf_token": s.csrf })).into_response()
        }
        Ok(None) => {
            (StatusCode::UNAUTHORIZED, axum::Json(serde_json::json!({ "error": "not signed in" }))).into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "could not read a session");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                axum::Json(serde_json::json!({ "error": "could not read the session" })),
            )
                .into_response()
        }
    };
    resp.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    resp
}

/// The console's routes.
pub fn router(state: &crate::AppState) -> Router {
    Router::new().route("/console/session", get(session)).with_state(state.store.clone())
}
