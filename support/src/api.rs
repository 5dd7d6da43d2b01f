//! [`Api`]: one generated service and its implementation as a value a runtime serves.

use serde_json::Value;

use crate::endpoint::{ToolCall, Tools};
use crate::gate::Gate;
use crate::layers::{Layers, Route, Select};
use crate::table::{Operation, ServiceInfo};

type RouterFactory<G> = Box<dyn Fn(std::sync::Arc<G>, Layers) -> axum::Router + Send + Sync>;

/// One generated service with its implementation, as one value a runtime serves without knowing
/// its types: its description ([`ServiceInfo`]: paths, scopes, plans, error catalog, documents),
/// its operation table, its router (built for the gate the runtime supplies) and, when the spec
/// declares an MCP endpoint, its tools and their dispatch. Made by the generated `api` function
/// of each service (`NAME_api::NAME::api(implementation)`).
pub struct Api<G: Gate> {
    info: &'static ServiceInfo,
    operations: &'static [&'static Operation],
    router: RouterFactory<G>,
    tools: &'static [(&'static str, &'static Operation)],
    dispatch: Option<Box<dyn Tools<G>>>,
    layers: Layers,
}

impl<G: Gate> std::fmt::Debug for Api<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("service", &self.info.name)
            .field("operations", &self.operations.len())
            .field("tools", &self.tools.len())
            .field("layers", &self.layers)
            .finish()
    }
}

impl<G: Gate> Api<G> {
    /// A service without MCP tools: its description, operation table and router factory.
    pub fn new(
        info: &'static ServiceInfo,
        operations: &'static [&'static Operation],
        router: impl Fn(std::sync::Arc<G>, Layers) -> axum::Router + Send + Sync + 'static,
    ) -> Self {
        Api { info, operations, router: Box::new(router), tools: &[], dispatch: None, layers: Layers::default() }
    }

    /// The same service with `layer` around the REST route of every operation `select` picks
    /// (see [`Layers`]): `api(service).layer(Select::Tag("counts"), SetResponseHeaderLayer::…)`.
    /// The first attached is the innermost.
    pub fn layer<L>(mut self, select: Select, layer: L) -> Self
    where
        L: tower::Layer<Route> + Send + Sync + 'static,
        L::Service: tower::Service<
                axum::extract::Request,
                Response = axum::response::Response,
                Error = std::convert::Infallible,
            > + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Future: Send + 'static,
    {
        self.layers.push(select, layer);
        self
    }

    /// The same service with its MCP tools (name → operation) and their dispatch.
    pub fn with_tools(mut self, tools: &'static [(&'static str, &'static Operation)], dispatch: impl Tools<G>) -> Self {
        self.tools = tools;
        self.dispatch = Some(Box::new(dispatch));
        self
    }

    /// The service's description.
    pub fn info(&self) -> &'static ServiceInfo {
        self.info
    }

    /// Every operation, in spec order.
    pub fn operations(&self) -> &'static [&'static Operation] {
        self.operations
    }

    /// Tool name → operation, in spec order (empty without MCP).
    pub fn tools(&self) -> &'static [(&'static str, &'static Operation)] {
        self.tools
    }

    /// The operation of tool `name`.
    pub fn tool(&self, name: &str) -> Option<&'static Operation> {
        self.tools.iter().find(|(n, _)| *n == name).map(|(_, op)| *op)
    }

    /// Whether the service has MCP tools to serve (its spec declares an MCP path and tools).
    pub fn has_mcp(&self) -> bool {
        self.info.mcp_path.is_some() && self.dispatch.is_some()
    }

    /// The axum router of every operation, each admitted by `gate`.
    pub fn router(&self, gate: std::sync::Arc<G>) -> axum::Router {
        (self.router)(gate, self.layers.clone())
    }

    /// Calls tool `name` for a caller `gate` admitted; `None` when there is no such tool.
    pub fn call_tool<'a>(&'a self, gate: &'a G, caller: G::Caller, name: &'a str, arguments: Value) -> ToolCall<'a> {
        match &self.dispatch {
            Some(d) => d.call(gate, caller, name, arguments),
            None => Box::pin(std::future::ready(None)),
        }
    }
}
