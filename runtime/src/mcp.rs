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

mod calls;
mod catalog;
mod headers;
mod jsonrpc;
mod reads;
mod scopes;
mod sessions;
mod subscriptions;
mod tasks_2025;
mod transport;

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    Reference, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use support::{request_id, scalar_text};

use crate::auth::{BearerGate, Denial, challenge};
use crate::caller::Caller;
use crate::ratelimit::Decision;

use crate::api::ServiceApi;
use scopes::{listen_scope, lowest, op_scope, required};

/// JSON-RPC error code for "the token's scope is too low": outside −32768..−32000, which the
/// JSON-RPC and MCP specifications reserve.
pub const INSUFFICIENT_SCOPE_CODE: i64 = -31403;

/// JSON-RPC error code for "the token's rate limit is exhausted" (sent with HTTP 429), outside
/// the reserved range like [`INSUFFICIENT_SCOPE_CODE`].
pub const RATE_LIMITED_CODE: i64 = -31429;

/// How long a list (tools, resources, templates, prompts) may be reused: it is the same for every
/// caller and changes only with a new release.
const LIST_TTL_MS: u64 = 300_000;

/// One service's tools, resources and prompts, served from its generated descriptors.
#[derive(Clone)]
pub struct ToolServer {
    api: Arc<ServiceApi>,
    /// The endpoint's gate: told of tool calls whose arguments are refused (it audits them).
    gate: Arc<BearerGate>,
    tools: Arc<Vec<Tool>>,
    catalog: Arc<catalog::Catalog>,
    /// The server's public URL (the REST API's paths follow it).
    public: Arc<str>,
    /// Whether clients of revisions before 2026-07-28 get sessions: when an operation asks its
    /// client for input, which such a client answers on a session's stream (where it may then
    /// also hear of changes to resources it subscribes to).
    sessions: bool,
    /// The resources this session watches (a new one for each session).
    watching: Arc<subscriptions::Session>,
    /// Turns `true` when the server process stops: listen streams end then.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Where tool calls that go on in the background are kept, when a tool may.
    tasks: Option<crate::tasks::Tasks>,
    /// How long a `tasks/result` of revision 2025-11-25 waits for its task, within the request's
    /// time limit.
    result_wait: std::time::Duration,
}

impl ToolServer {
    /// Parses the generated descriptors once.
    pub fn new(
        api: Arc<ServiceApi>,
        gate: Arc<BearerGate>,
        public: &str,
        stopping: tokio::sync::watch::Receiver<bool>,
        result_wait: std::time::Duration,
    ) -> anyhow::Result<Self> {
        let tools: Vec<Tool> = serde_json::from_str(api.info().tools_json)?;
        let catalog = catalog::Catalog::parse(api.info().mcp_catalog_json)?;
        let sessions = api.operations().iter().any(|op| op.asks_input);
        let tasks = api
            .operations()
            .iter()
            .any(|op| op.task != support::TaskSupport::Never)
            .then(|| gate.database().map(|store| crate::tasks::Tasks::new(store.clone(), api.info().name)))
            .flatten();
        Ok(ToolServer {
            api,
            gate,
            tools: Arc::new(tools),
            catalog: Arc::new(catalog),
            public: public.into(),
            sessions,
            watching: Arc::default(),
            stopping,
            tasks,
            result_wait,
        })
    }

    /// The server for one new session (or one stateless request): watching nothing yet.
    fn for_session(&self) -> Self {
        ToolServer { watching: Arc::default(), ..self.clone() }
    }

    fn reader(&self) -> reads::Reader<'_> {
        reads::Reader { api: &self.api, gate: &self.gate, catalog: &self.catalog }
    }
}

/// Whether `service`'s MCP endpoint has resources (to read and subscribe to).
pub(crate) fn has_resources(service: &support::ServiceInfo) -> bool {
    service.mcp_path.is_some() && catalog::Catalog::parse(service.mcp_catalog_json).is_ok_and(|c| c.has_resources())
}

/// A list that is the same for every caller, as one page: `$result` of `$items`, fresh for
/// [`LIST_TTL_MS`] and cacheable by anyone.
macro_rules! public_list {
    ($result:ty, $items:expr) => {{
        let mut result = <$result>::with_all_items($items);
        result.ttl_ms = Some(LIST_TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
        result
    }};
}

/// Refuses a cursor: every list fits one page, so the server never issues one.
fn one_page(request: Option<PaginatedRequestParams>, what: &str) -> Result<(), McpError> {
    match request.and_then(|r| r.cursor) {
        Some(cursor) => Err(McpError::invalid_params(
            format!("unknown cursor {cursor:?}: this server lists every {what} in one page"),
            None,
        )),
        None => Ok(()),
    }
}

/// The caller the auth layer put into the HTTP request rmcp hands over.
fn caller_of(context: &RequestContext<RoleServer>) -> Result<Caller, McpError> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<Caller>())
        .cloned()
        .ok_or_else(|| McpError::internal_error("request was not authenticated", None))
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> InitializeResult {
        let service = self.api.info();
        // What the spec declares; logging and progress come from the platform, for any operation.
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        capabilities.logging = Some(Default::default());
        if self.tasks.is_some() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::TASKS_EXTENSION_ID.to_string(), Default::default());
        }
        if self.tools.is_empty() {
            capabilities.tools = None;
        }
        let (resources, prompts) = (self.catalog.has_resources(), !self.catalog.prompts.is_empty());
        if resources {
            // Every resource may be subscribed to: the platform knows which calls change it.
            let mut declared = rmcp::model::ResourcesCapability::default();
            declared.subscribe = Some(true);
            capabilities.resources = Some(declared);
        }
        if prompts {
            capabilities.prompts = Some(Default::default());
        }
        if resources || prompts {
            capabilities.completions = Some(Default::default());
        }
        let mut info = InitializeResult::new(capabilities);
        info.server_info = Implementation::new(format!("specwright-{}", service.name), env!("CARGO_PKG_VERSION"))
            .with_title(service.title);
        info.instructions = service.mcp_instructions.map(str::to_string);
        info
    }

    /// The handshake of revisions before 2026-07-28: as `server/discover` answers, but a client
    /// without a session has no stream to hear of changes on, so subscriptions are declared only
    /// where the endpoint keeps sessions.
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let mut info = self.negotiate_initialize(&request)?;
        if let Some(resources) = info.capabilities.resources.as_mut().filter(|_| !self.sessions) {
            resources.subscribe = None;
        }
        Ok(info)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        one_page(request, "tool")?;
        Ok(public_list!(ListToolsResult, (*self.tools).clone()))
    }

    /// Acknowledged: a stateless server remembers no level, so calls log at `info` and above on
    /// the revisions that have this method ([`crate::progress`]).
    #[allow(deprecated, reason = "MCP logging is deprecated in the draft, not in the revisions served")]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        if !self.catalog.has_resources() {
            return Err(McpError::method_not_found::<rmcp::model::ListResourcesRequestMethod>());
        }
        one_page(request, "resource")?;
        Ok(public_list!(ListResourcesResult, self.catalog.resources.clone()))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        if !self.catalog.has_resources() {
            return Err(McpError::method_not_found::<rmcp::model::ListResourceTemplatesRequestMethod>());
        }
        one_page(request, "resource template")?;
        Ok(public_list!(ListResourceTemplatesResult, self.catalog.resource_templates.clone()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if !self.catalog.has_resources() {
            return Err(McpError::method_not_found::<rmcp::model::ReadResourceRequestMethod>());
        }
        Ok(self.reader().read(caller_of(&context)?, &request.uri).await?.into())
    }

    #[allow(deprecated, reason = "the revisions before 2026-07-28 subscribe this way")]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.catalog.has_resources() || !self.sessions {
            return Err(McpError::method_not_found::<rmcp::model::SubscribeRequestMethod>());
        }
        let caller = caller_of(&context)?;
        let watched = subscriptions::resolve(&self.api, &self.catalog, &request.uri)?;
        self.watching.subscribe(self.gate.changes(), caller.tenant, watched, context.peer.clone())
    }

    #[allow(deprecated, reason = "the revisions before 2026-07-28 subscribe this way")]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.catalog.has_resources() || !self.sessions {
            return Err(McpError::method_not_found::<rmcp::model::UnsubscribeRequestMethod>());
        }
        self.watching.unsubscribe(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.catalog.has_resources().then(|| subscriptions::accepted(&self.catalog, requested))
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        let stopping = self.stopping.clone();
        subscriptions::listen(&self.api, &self.catalog, self.gate.changes(), stopping, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        if self.catalog.prompts.is_empty() {
            return Err(McpError::method_not_found::<rmcp::model::ListPromptsRequestMethod>());
        }
        one_page(request, "prompt")?;
        Ok(public_list!(ListPromptsResult, self.catalog.prompts.clone()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if self.catalog.prompts.is_empty() {
            return Err(McpError::method_not_found::<rmcp::model::GetPromptRequestMethod>());
        }
        let caller = caller_of(&context)?;
        let arguments = request.arguments.clone().map(Value::Object).unwrap_or(Value::Null);
        let reader = self.reader();
        let read = reader.prompt(caller.clone(), &request.name, request.arguments);
        let binding = crate::inputs::Binding {
            caller: &caller,
            method: "prompts/get",
            name: &request.name,
            arguments: &arguments,
        };
        let asks = !self.catalog.prompt_asks(&request.name).is_empty();
        let answers = (request.input_responses, request.request_state.as_deref());
        let round = self.in_round(&context, binding, asks, answers, read);
        match round.await? {
            crate::inputs::Outcome::Done(prompt) => Ok(prompt?.into()),
            crate::inputs::Outcome::InputRequired(asked) => Ok(asked.into()),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        if !self.catalog.has_resources() && self.catalog.prompts.is_empty() {
            return Err(McpError::method_not_found::<rmcp::model::CompleteRequestMethod>());
        }
        let (kind, key) = match &request.r#ref {
            Reference::Prompt(p) => ("ref/prompt", p.name.as_str()),
            Reference::Resource(r) => ("ref/resource", r.uri.as_str()),
            _ => return Err(McpError::invalid_params("unknown reference type", None)),
        };
        let argument = &request.argument;
        let completion =
            self.reader().complete(caller_of(&context)?, kind, key, &argument.name, &argument.value).await?;
        Ok(CompleteResult::new(completion))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = caller_of(&context)?;
        let Some(op) = self.api.tool(&request.name) else {
            return Err(McpError::invalid_params(format!("unknown tool: {}", request.name), None));
        };
        // A client of 2025-11-25 says itself whether a call is a task ([`tasks_2025`]).
        let parts = context.extensions.get::<axum::http::request::Parts>();
        if let Some(refused) = parts
            .and_then(|p| p.extensions.get::<tasks_2025::Asked>())
            .and_then(|asked| tasks_2025::refusal(&request.name, op.task, *asked))
        {
            return Err(refused);
        }
        let declared = context.client_capabilities().is_some_and(|c| c.supports_tasks());
        match (op.task, &self.tasks) {
            (support::TaskSupport::Never, _) => self.call(op, request, &context, caller).await,
            (support::TaskSupport::Required, _) if !declared => Err(McpError::missing_required_client_capability(
                rmcp::model::ClientCapabilities::builder().enable_tasks().build(),
            )),
            (_, Some(tasks)) if declared => self.call_as_task(tasks.clone(), op, request, context, caller).await,
            (support::TaskSupport::Required, _) => {
                Err(McpError::internal_error("this tool runs only as a task, and this server keeps no tasks", None))
            }
            _ => self.call(op, request, &context, caller).await,
        }
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        let task = self.task_store()?.get(&caller_of(&context)?, &request.task_id).await?;
        Ok(rmcp::model::GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.task_store()?.update(&caller_of(&context)?, &request.task_id, request.input_responses).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.task_store()?.cancel(&caller_of(&context)?, &request.task_id).await
    }

    /// Revision 2025-11-25's task methods ([`tasks_2025`]); any other method rmcp does not know
    /// is not one.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let legacy = parts.is_some_and(tasks_2025::of_revision) && context.meta.protocol_version().is_none();
        if let (Some(tasks), true) = (&self.tasks, legacy) {
            // Input a task waits for can be asked only within a session.
            let session = parts.is_some_and(|p| p.headers.contains_key("mcp-session-id"));
            let peer = session.then_some(&context.peer);
            let caller = caller_of(&context)?;
            let call = (request.method.as_str(), request.params.as_ref());
            if let Some(answer) = tasks_2025::answer(tasks, &caller, call, self.result_wait, peer).await? {
                return Ok(rmcp::model::CustomResult(answer));
            }
        }
        Err(McpError::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, request.method, None))
    }
}

/// What the auth layer needs.
#[derive(Clone)]
struct Guard {
    api: Arc<ServiceApi>,
    gate: Arc<BearerGate>,
    catalog: Arc<catalog::Catalog>,
    body_limit: usize,
    /// Who owns each session, when the endpoint keeps sessions.
    owners: Option<Arc<sessions::Owners>>,
}

/// `template` (a URI template) filled in from the members of `object` that are not `null`.
fn fill_from(template: &str, object: &Value) -> String {
    support::expand_template(template, |name| object.get(name).filter(|v| !v.is_null()).map(scalar_text))
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
        // A listen stream needs the scope of every resource it watches, as reading each would.
        if let Some(scope) = listen_scope(&guard.api, &guard.catalog, message)
            .find(|scope| !resource.service.satisfies(caller.scopes.iter().map(String::as_str), scope))
        {
            return insufficient_scope(&resource, rid.as_deref(), scope, message.get("id").cloned());
        }
        let (scope, op) = required(&guard.api, &guard.catalog, message);
        if !resource.service.satisfies(caller.scopes.iter().map(String::as_str), scope) {
            // A denied tool call is audited like a denied REST request.
            if let Some(op) = op {
                crate::metrics::tool_call(resource.service.name, op.tool.unwrap_or(op.id), "denied", None);
                guard.gate.audit_scope_denial(&caller, op).await;
            }
            return insufficient_scope(&resource, rid.as_deref(), scope, message.get("id").cloned());
        }
        if let Some(reason) = op.and_then(|op| headers::mismatch(op, &parts, message)) {
            return jsonrpc::header_mismatch(message.get("id").cloned(), &reason, rid.as_deref());
        }
    }
    caller.request_id = rid.unwrap_or_default();
    let session = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let owner = guard.owners.as_ref().map(|owners| (owners.clone(), caller.clone()));
    if let (Some((owners, caller)), Some(id)) = (&owner, &session)
        && !owners.admits(id, caller)
    {
        return jsonrpc::unknown_session(
            message.as_ref().and_then(|m| m.get("id")).cloned(),
            Some(caller.request_id.as_str()),
        );
    }
    let initializing = message.as_ref().and_then(|m| m.get("method")).is_some_and(|m| m == "initialize");
    if let (Some((owners, caller)), None, true) = (&owner, &session, initializing)
        && !owners.may_open(caller)
    {
        return jsonrpc::too_many_sessions(message.as_ref().and_then(|m| m.get("id")).cloned(), &caller.request_id);
    }
    let closing = parts.method == axum::http::Method::DELETE;
    parts.extensions.insert(caller);
    // The JSON-RPC check inside reads the message parsed here instead of parsing it again.
    if let Some(message) = message {
        parts.extensions.insert(jsonrpc::Parsed(message));
    }
    let resp = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    if let Some((owners, caller)) = owner {
        match (&session, resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())) {
            (None, Some(opened)) => owners.opened(opened, &caller),
            (Some(id), _) if closing && resp.status().is_success() => owners.closed(id),
            _ => {}
        }
    }
    resp
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

/// The route at the service's MCP path: authorisation layer, JSON-RPC framing, then rmcp's
/// Streamable HTTP service. `None` when the service has no MCP endpoint.
pub fn router(
    api: Arc<ServiceApi>,
    gate: Arc<BearerGate>,
    config: &crate::config::Config,
    body_limit: usize,
    stopping: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<Option<Router>> {
    let Some(path) = api.info().mcp_path.filter(|_| api.has_mcp()) else {
        return Ok(None);
    };
    // A 2025-11-25 `tasks/result` answers within the request's time limit.
    let result_wait = config.http.request_timeout.saturating_sub(std::time::Duration::from_secs(2));
    let public = config.url("");
    let handler = ToolServer::new(api.clone(), gate.clone(), public.trim_end_matches('/'), stopping, result_wait)?;
    let catalog = handler.catalog.clone();
    // Clients of 2025-11-25 run tasks as that revision has them, from the same store.
    let legacy = match handler.tasks.clone() {
        Some(tasks) => Some(tasks_2025::Legacy::new(api.info().tools_json, tasks)?),
        None => None,
    };
    let mut transport = transport::transport_config(config);
    let sessions = handler.sessions;
    transport.legacy_session_mode = sessions;
    let route = if sessions {
        let sessions = Arc::new(LocalSessionManager::default());
        Router::new()
            .route_service(path, StreamableHttpService::new(move || Ok(handler.for_session()), sessions, transport))
    } else {
        let sessions = Arc::new(NeverSessionManager::default());
        Router::new()
            .route_service(path, StreamableHttpService::new(move || Ok(handler.for_session()), sessions, transport))
    };
    let owners = sessions.then(|| Arc::new(sessions::Owners::default()));
    let route = match legacy {
        Some(legacy) => route.layer(middleware::from_fn_with_state(legacy, tasks_2025::serve)),
        None => route,
    };
    let guard = Guard { api, gate, catalog, body_limit, owners };
    let route = route
        .layer(middleware::from_fn_with_state(body_limit, jsonrpc::check))
        .layer(middleware::from_fn_with_state(guard, authorize))
        .layer(middleware::from_fn(transport::no_cache));
    Ok(Some(match transport::browser_clients(config) {
        Some(cors) => route.layer(cors),
        None => route,
    }))
}
