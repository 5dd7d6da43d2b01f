//! Cross-origin reads of the public documents (Protected Resource Metadata, the JWK Set, the
//! OpenAPI documents): browser-based clients discover resources, keys and APIs from their own
//! origin. Public, read-only, and never with credentials (`Access-Control-Allow-Origin: *`).

use axum::http::Method;
use tower_http::cors::{Any, CorsLayer};

/// The layer every public document's route carries.
pub fn public_documents() -> CorsLayer {
    CorsLayer::new().allow_origin(Any).allow_methods([Method::GET]).max_age(std::time::Duration::from_secs(3600))
}
