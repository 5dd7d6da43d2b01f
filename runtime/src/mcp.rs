//! A service's MCP tools at its MCP path (Streamable HTTP), on the official Rust SDK (rmcp), for any
//! registered service whose spec declares an MCP endpoint.
//!
//! rmcp speaks the protocol (2025-06-18, 2025-11-25 and 2026-07-28: initialize, notifications,
//! `tools/list`, `tools/call`, `ping`, `server/discover`, header checks). In front of it an axum
//! layer authorises every request *before* the protocol layer sees it, so clients get real HTTP
//! 401 and 403 answers with the `WWW-Authenticate` challenge they upgrade their token from. The
//! tools are the generated descriptors, and each call goes through the generated dispatch to the
//! same trait method as REST: RBAC, tenancy, leases and audit behave identically on both surfaces.
//! Between the two, [`jsonrpc`] answers a body that is not one JSON-RPC message with a JSON-RPC
//! error, as the protocol requires.

mod jsonrpc;

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use support::{Operation, request_id};

use crate::auth::{BearerGate, Denial, challenge};
use crate::caller::Caller;
use crate::ratelimit::Decision;

use crate::api::ServiceApi;

/// JSON-RPC error code for "the token's scope is too low": outside −32768..−32000, which the
/// JSON-RPC and MCP specifications reserve.
pub const INSUFFICIENT_SCOPE_CODE: i64 = -31403;

/// JSON-RPC error code for "the token's rate limit is exhausted" (sent with HTTP 429), outside
/// the reserved range like [`INSUFFICIENT_SCOPE_CODE`].
pub const RATE_LIMITED_CODE: i64 = -31429;

/// One service's tools, served from its generated descriptors.
#[derive(Clone)]
pub struct ToolServer {
    api: Arc<ServiceApi>,
    /// The endpoint's gate: told of tool calls whose arguments are refused (it audits them).
    gate: Arc<BearerGate>,
    tools: Arc<Vec<Tool>>,
}

impl ToolServer {
    /// Parses the generated descriptors once.
    pub fn new(api: Arc<ServiceApi>, gate: Arc<BearerGate>) -> anyhow::Result<Self> {
        let tools: Vec<Tool> = serde_json::from_str(api.info().tools_json)?;
        Ok(ToolServer { api, gate, tools: Arc::new(tools) })
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> InitializeResult {
        let service = self.api.info();
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new(format!("specwright-{}", service.name), env!("CARGO_PKG_VERSION"))
            .with_title(service.title);
        info.instructions = service.mcp_instructions.map(str::to_string);
        info
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // Every tool fits one page, so the server never issues a cursor: any cursor is unknown.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!("unknown cursor {cursor:?}: this server lists every tool in one page"),
                None,
            ));
        }
        let mut result = ListToolsResult::with_all_items((*self.tools).clone());
        // The list is the same for every caller and changes only with a new release.
        result.ttl_ms = Some(300_000);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The auth layer put the caller into the HTTP request; rmcp hands us its parts.
        let caller = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Caller>())
            .cloned()
            .ok_or_else(|| McpError::internal_error("request was not authenticated", None))?;
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let started = std::time::Instant::now();
        let request_id = caller.request_id.clone();
        let called = self.api.call_tool(&self.gate, caller, &request.name, arguments).await;
        if let (Some(outcome), Some(op)) = (&called, self.api.tool(&request.name)) {
            let word = if outcome.is_ok() { "ok" } else { "error" };
            crate::metrics::tool_call(self.api.info().name, op.tool.unwrap_or(op.id), word, Some(started.elapsed()));
        }
        match called {
            None => Err(McpError::invalid_params(format!("unknown tool: {}", request.name), None)),
            Some(Ok(value)) => Ok(CallToolResult::structured(value).into()),
            Some(Err(failure)) => {
                let body = failure.into_body(self.api.info(), Some(&request_id));
                Ok(CallToolResult::structured_error(body).into())
            }
        }
    }
}

/// What the auth layer needs.
#[derive(Clone)]
struct Guard {
    api: Arc<ServiceApi>,
    gate: Arc<BearerGate>,
    body_limit: usize,
}

/// The scope a JSON-RPC message needs: a tool call needs its operation's; anything else the
/// lowest tier (enough to connect and list the tools).
fn required(api: &ServiceApi, message: &Value) -> (&'static str, Option<&'static Operation>) {
    if message.get("method").and_then(Value::as_str) == Some("tools/call") {
        let name = message.pointer("/params/name").and_then(Value::as_str).unwrap_or_default();
        if let Some(op) = api.tool(name) {
            // A public operation's tool needs what connecting needs.
            let scope = if op.public { lowest(api) } else { op.scope };
            return (scope, Some(op));
        }
    }
    (lowest(api), None)
}

/// The lowest scope tier of the service: enough to connect and list the tools.
fn lowest(api: &ServiceApi) -> &'static str {
    api.info().scopes.first().map(|s| s.name).unwrap_or_default()
}

async fn authorize(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let resource = guard.gate.resource().clone();
    let rid = request_id(&parts).map(str::to_string);
    let lowest = lowest(&guard.api);
    // OPTIONS preflights carry no credentials; let the transport answer them.
    if parts.method == axum::http::Method::OPTIONS {
        return next.run(Request::from_parts(parts, body)).await;
    }
    crate::metrics::name_service(&parts.extensions, resource.service.name);
    // Every request counts against the caller's bucket of the service (the same one as its REST
    // requests), before the scope check, as at the REST gate.
    let mut caller = match guard.gate.authenticate(&parts).await {
        Ok(c) => c,
        Err(denial) => {
            if let Some(d) = guard.gate.meter(&parts, None).await.filter(|d| !d.allowed) {
                return rate_limited(&guard.gate, &parts, &d, None);
            }
            return challenge(&resource, rid.as_deref(), lowest, denial);
        }
    };
    let bytes: Bytes = match axum::body::to_bytes(body, guard.body_limit).await {
        Ok(b) => b,
        Err(_) => return jsonrpc::too_large(guard.body_limit, rid.as_deref()),
    };
    let message = serde_json::from_slice::<Value>(&bytes).ok();
    if let Some(d) = guard.gate.meter(&parts, Some(&caller)).await.filter(|d| !d.allowed) {
        return rate_limited(&guard.gate, &parts, &d, message.as_ref().and_then(|m| m.get("id")).cloned());
    }
    if let Some(message) = &message {
        let (scope, op) = required(&guard.api, message);
        if !resource.service.satisfies(caller.scopes.iter().map(String::as_str), scope) {
            // A denied tool call is audited like a denied REST request.
            if let Some(op) = op {
                crate::metrics::tool_call(resource.service.name, op.tool.unwrap_or(op.id), "denied", None);
                guard.gate.audit_scope_denial(&caller, op).await;
            }
            return insufficient_scope(&resource, rid.as_deref(), scope, message.get("id").cloned());
        }
    }
    caller.request_id = rid.unwrap_or_default();
    parts.extensions.insert(caller);
    // The JSON-RPC check inside reads the message parsed here instead of parsing it again.
    if let Some(message) = message {
        parts.extensions.insert(jsonrpc::Parsed(message));
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// HTTP 429 with `Retry-After` and the `X-RateLimit-*` headers, and a JSON-RPC error answering
/// the request's id (`null` when it could not be read) with [`RATE_LIMITED_CODE`] and, in `data`,
/// the service's error code, the limit and the seconds to wait.
fn rate_limited(gate: &BearerGate, parts: &axum::http::request::Parts, d: &Decision, id: Option<Value>) -> Response {
    let rest = gate.limited(parts, d);
    let problem = crate::auth::rate_limited_problem(d);
    let mut data = problem.details;
    data.insert("code".into(), json!(gate.resource().service.roles.rate_limited));
    data.insert("request_id".into(), json!(request_id(parts)));
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": { "code": RATE_LIMITED_CODE, "message": problem.message, "data": data },
    });
    let mut resp = (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response();
    for (name, value) in rest.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            resp.headers_mut().insert(name.clone(), value.clone());
        }
    }
    resp
}

/// HTTP 403 with the same challenge as REST and a JSON-RPC error body naming the scope.
fn insufficient_scope(
    resource: &crate::auth::Resource,
    request_id: Option<&str>,
    scope: &str,
    id: Option<Value>,
) -> Response {
    let rest = challenge(resource, request_id, scope, Denial::InsufficientScope);
    let code = resource.service.roles.insufficient_scope;
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {
            "code": INSUFFICIENT_SCOPE_CODE,
            "message": format!("insufficient_scope: this call requires {scope}"),
            "data": { "code": code, "required": scope, "request_id": request_id },
        }
    });
    let mut resp = (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    for name in [header::WWW_AUTHENTICATE, header::HeaderName::from_static("x-request-id")] {
        if let Some(v) = rest.headers().get(&name) {
            resp.headers_mut().insert(name, v.clone());
        }
    }
    resp
}

/// Hosts and origins the endpoint accepts (DNS-rebinding protection): the public URL's host and
/// origin (scheme, host, port: never its path, which no `Origin` carries), the loopback names,
/// and the configured ones ([`crate::Config::mcp_allowed_hosts`], `mcp_allowed_origins`).
fn transport_config(config: &crate::config::Config) -> StreamableHttpServerConfig {
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

/// The route at the service's MCP path: authorisation layer, JSON-RPC framing, then rmcp's
/// Streamable HTTP service. `None` when the service has no MCP endpoint.
pub fn router(
    api: Arc<ServiceApi>,
    gate: Arc<BearerGate>,
    config: &crate::config::Config,
    body_limit: usize,
) -> anyhow::Result<Option<Router>> {
    let Some(path) = api.info().mcp_path.filter(|_| api.has_mcp()) else {
        return Ok(None);
    };
    let handler = ToolServer::new(api.clone(), gate.clone())?;
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        transport_config(config),
    );
    let guard = Guard { api, gate, body_limit };
    let route = Router::new()
        .route_service(path, service)
        .layer(middleware::from_fn_with_state(body_limit, jsonrpc::check))
        .layer(middleware::from_fn_with_state(guard, authorize))
        .layer(middleware::from_fn(no_cache));
    Ok(Some(match browser_clients(config) {
        Some(cors) => route.layer(cors),
        None => route,
    }))
}

/// CORS for browser-based MCP clients of the allowed origins (the MCP Inspector, a web app):
/// preflights answered before authorisation, the MCP headers allowed in and the ones a client
/// reads (`Mcp-Session-Id`, `MCP-Protocol-Version`, and `WWW-Authenticate`, whose challenge
/// starts its sign-in) exposed. Bearer tokens only: never credentials. `None` when no origin
/// besides the server's own is allowed (same-origin requests need no CORS).
fn browser_clients(config: &crate::config::Config) -> Option<tower_http::cors::CorsLayer> {
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

async fn no_cache(request: Request, next: Next) -> Response {
    let mut resp = next.run(request).await;
    // Tool results may carry secrets (a credential the tool reveals).
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}
