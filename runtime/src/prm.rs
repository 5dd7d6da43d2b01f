//! OAuth 2.0 Protected Resource Metadata (RFC 9728) for each resource this server protects.
//!
//! Public, `application/json`, cacheable for five minutes, readable from any origin. Each document
//! is served at the paths below (under the public URL: a proxy stripping the public URL's path
//! reaches them) and, when the public URL has a path, also where RFC 9728 section 3.1 puts it for
//! a resource with that path (`/.well-known/oauth-protected-resource/sw/api/mcp`), for a proxy that
//! forwards those well-known paths unchanged.

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
        "resource_documentation": config.url(crate::docs::DOCS_PATH),
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

/// The well-known prefix of RFC 9728.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The path-inserted well-known path RFC 9728 gives the resource at `path` under the public URL
/// (`/.well-known/oauth-protected-resource` followed by the resource's whole path).
fn rfc9728_path(config: &Config, path: &str) -> String {
    format!("{WELL_KNOWN}{}", config.path(path))
}

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
    for (paths, resource_path, doc) in [
        (&VAULT_REST_PATHS[..], generated::vault::SERVICE.base_path, rest),
        (&VAULT_MCP_PATHS[..], crate::mcp::path(), mcp),
        (&[PROSPECTOR_PATH][..], generated::prospector::SERVICE.base_path, prospector),
    ] {
        let mut paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        if !config.base_path().is_empty() {
            paths.push(rfc9728_path(config, resource_path));
        }
        for p in paths {
            let doc = doc.clone();
            r = r.route(&p, get(move || async move { respond(doc) }));
        }
    }
    r
}
