//! How the MCP endpoint meets HTTP: the hosts and origins rmcp's transport accepts, CORS for
//! browser-based clients, and no caching of answers.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

/// Hosts and origins the endpoint accepts (DNS-rebinding protection): the public URL's host and
/// origin (scheme, host, port: never its path, which no `Origin` carries), the loopback names,
/// and the configured ones ([`crate::Config::mcp_allowed_hosts`], `mcp_allowed_origins`).
pub(super) fn transport_config(config: &crate::config::Config) -> StreamableHttpServerConfig {
    let origin = config.origin();
    let authority = origin.as_str().split_once("://").map_or(origin.as_str(), |(_, a)| a).to_string();
    let host = match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h.to_string(),
        _ => authority.clone(),
    };
    let mut hosts = vec![authority, host, "localhost".into(), "127.0.0.1".into(), "[::1]".into()];
    hosts.extend(config.mcp_allowed_hosts.iter().cloned());
    // With its port: rmcp reads an origin without one as "any port".
    let mut origins = vec![origin.with_port()];
    // This server reached by a loopback name on its own port (a page it serves, a local client):
    // no rebinding, which needs a name of the attacker's.
    let port = config.addr.port();
    origins.extend(["localhost", "127.0.0.1", "[::1]"].map(|h| format!("http://{h}:{port}")));
    origins.extend(config.mcp_allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default().enforce_origin_validation();
    config.legacy_session_mode = false;
    config.json_response = true;
    config.sse_keep_alive = None;
    config.allowed_hosts = hosts;
    config.allowed_origins = origins;
    config
}

/// CORS for browser-based MCP clients of the allowed origins (the MCP Inspector, a web app):
/// preflights answered before authorisation, the MCP headers allowed in and the ones a client
/// reads (`Mcp-Session-Id`, `MCP-Protocol-Version`, and `WWW-Authenticate`, whose challenge
/// starts its sign-in) exposed. Bearer tokens only: never credentials. `None` when no origin
/// besides the server's own is allowed (same-origin requests need no CORS).
pub(super) fn browser_clients(config: &crate::config::Config) -> Option<tower_http::cors::CorsLayer> {
    use axum::http::{HeaderName, Method};
    if config.mcp_allowed_origins.is_empty() {
        return None;
    }
    let origins: Vec<HeaderValue> =
        config.mcp_allowed_origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()).collect();
    let name = HeaderName::from_static;
    Some(
        tower_http::cors::CorsLayer::new()
            .allow_origin(origins)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::ACCEPT,
                name("mcp-session-id"),
                name("mcp-protocol-version"),
                name("mcp-method"),
                name("mcp-name"),
                name("last-event-id"),
            ])
            .expose_headers([name("mcp-session-id"), name("mcp-protocol-version"), header::WWW_AUTHENTICATE])
            .max_age(std::time::Duration::from_secs(3600)),
    )
}

pub(super) async fn no_cache(request: Request, next: Next) -> Response {
    let mut resp = next.run(request).await;
    // Tool results may carry secrets (a credential the tool reveals).
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}
