//! OAuth 2.0 Protected Resource Metadata (RFC 9728) for each resource this server protects.
//!
//! Public, `application/json`, cacheable for five minutes, readable from any origin.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::config::Config;

/// A PRM document for `resource`, protected with `scopes`.
pub fn document(config: &Config, resource: &str, name: &str, scopes: &[&str]) -> Value {
    json!({
        "resource": resource,
        "resource_name": name,
        "authorization_servers": [config.issuer()],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_documentation": format!("{}/docs/", config.public_url),
    })
}

fn respond(doc: Value) -> Response {
    let mut resp = axum::Json(doc).into_response();
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    resp
}

fn scopes(service: &generated::support::ServiceInfo) -> Vec<&'static str> {
    service.scopes.iter().map(|s| s.name).collect()
}

/// Paths of the vault REST API's PRM document (the seed's, then the RFC 9728 path-inserted one).
pub const VAULT_REST_PATHS: [&str; 2] =
    ["/api/v1/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/v1"];
/// Paths of the vault MCP endpoint's PRM document (the root one, then the path-inserted one).
pub const VAULT_MCP_PATHS: [&str; 2] =
    ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/mcp"];
/// Path of the prospector API's PRM document.
pub const PROSPECTOR_PATH: &str = "/.well-known/oauth-protected-resource/v1/prospector";

/// Routes serving every PRM document.
pub fn router(config: &Config) -> Router {
    let vault = scopes(&generated::vault::SERVICE);
    let rest = document(config, &config.vault_rest_resource(), "Credential Vault REST API", &vault);
    let mcp = document(config, &config.vault_mcp_resource(), "Credential Vault MCP server", &vault);
    let prospector = document(
        config,
        &config.prospector_resource(),
        "Lead Prospecting API",
        &scopes(&generated::prospector::SERVICE),
    );
    let mut r = Router::new();
    for (paths, doc) in
        [(&VAULT_REST_PATHS[..], rest), (&VAULT_MCP_PATHS[..], mcp), (&[PROSPECTOR_PATH][..], prospector)]
    {
        for p in paths {
            let doc = doc.clone();
            r = r.route(p, get(move || async move { respond(doc) }));
        }
    }
    r
}
