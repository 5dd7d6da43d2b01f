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

use support::ServiceInfo;

use crate::catalog::Catalog;
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

fn scopes(service: &ServiceInfo) -> Vec<&'static str> {
    service.scopes.iter().map(|s| s.name).collect()
}

/// The well-known prefix of RFC 9728.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// One protected resource of a service: its REST API or its MCP endpoint.
#[derive(Debug, Clone, Copy)]
pub struct Surface {
    /// The service.
    pub service: &'static ServiceInfo,
    /// The resource's path (the base path, or the MCP path).
    pub path: &'static str,
    /// Where the spec also serves its document (the first is announced in challenges).
    pub declared: &'static [&'static str],
    /// Whether this is the MCP endpoint.
    pub mcp: bool,
}

impl Surface {
    /// Every protected resource of `catalog`'s services: each REST API, then its MCP endpoint.
    pub fn all(catalog: &Catalog) -> Vec<Surface> {
        catalog
            .services()
            .flat_map(|s| {
                let rest = Surface { service: s, path: s.base_path, declared: s.metadata_paths, mcp: false };
                let mcp =
                    s.mcp_path.map(|p| Surface { service: s, path: p, declared: s.mcp_metadata_paths, mcp: true });
                std::iter::once(rest).chain(mcp)
            })
            .collect()
    }

    /// The resource identifier: its path under the public URL.
    pub fn resource(&self, config: &Config) -> String {
        config.url(self.path)
    }

    /// The path of the document challenges announce: the first the spec declares, else the one
    /// RFC 9728 derives from the resource's path.
    pub fn announced_path(&self) -> String {
        self.declared.first().map_or_else(|| format!("{WELL_KNOWN}{}", self.path), |p| p.to_string())
    }

    /// Every path its document is served at: the declared ones, the RFC 9728 one and, under a public
    /// URL with a path, the RFC 9728 one for the resource's full path.
    pub fn paths(&self, config: &Config) -> Vec<String> {
        let mut paths: Vec<String> = self.declared.iter().map(|p| p.to_string()).collect();
        paths.push(format!("{WELL_KNOWN}{}", self.path));
        if !config.base_path().is_empty() {
            paths.push(rfc9728_path(config, self.path));
        }
        let mut seen = std::collections::BTreeSet::new();
        paths.retain(|p| seen.insert(p.clone()));
        paths
    }

    /// The document's `resource_name`: the service's title, naming the surface when it has two
    /// (a title that already ends in "API" names its REST API as it is).
    pub fn name(&self) -> String {
        let title = self.service.title;
        match (self.service.mcp_path.is_some(), self.mcp) {
            (false, _) => title.to_string(),
            (true, false) if title.ends_with(" API") => title.to_string(),
            (true, false) => format!("{title} REST API"),
            (true, true) => format!("{title} MCP server"),
        }
    }
}

/// The path-inserted well-known path RFC 9728 gives the resource at `path` under the public URL
/// (`/.well-known/oauth-protected-resource` followed by the resource's whole path).
fn rfc9728_path(config: &Config, path: &str) -> String {
    format!("{WELL_KNOWN}{}", config.path(path))
}

/// Routes serving the PRM document of every protected resource of `catalog`'s services.
pub fn router(config: &Config, catalog: &Catalog) -> Router {
    let mut r = Router::new();
    for surface in Surface::all(catalog) {
        let doc = document(config, &surface.resource(config), &surface.name(), &scopes(surface.service));
        for p in surface.paths(config) {
            let doc = doc.clone();
            r = r.route(&p, get(move || async move { respond(doc) }));
        }
    }
    r.layer(crate::cors::public_documents())
}
