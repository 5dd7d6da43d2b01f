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

    /// Whether the service has an MCP endpoint to serve (its spec declares an MCP path, and
    /// tools, resources or prompts).
    pub fn has_mcp(&self) -> bool {
        self.info.mcp_path.is_some() && self.dispatch.is_some()
    }

    /// The axum router of every operation, each admitted by `gate`.
    pub fn router(&self, gate: std::sync::Arc<G>) -> axum::Router {
        (self.router)(gate, self.layers.clone())
    }

    /// Calls tool `name` for a caller `gate` admitted; `None` when there is no such tool.
    pub fn call_tool<'a>(&'a self, gate: &'a G, caller: G::Caller, name: &'a str, arguments: Value) -> ToolCall<'a> {
        match self.tool(name) {
            Some(op) => self.call_operation(gate, caller, op, arguments),
            None => Box::pin(std::future::ready(None)),
        }
    }

    /// Calls operation `op` over MCP (a tool, a resource read, a completion's listing) for a
    /// caller `gate` admitted, with its arguments as a tool's; `None` when the MCP endpoint
    /// reaches no such operation.
    pub fn call_operation<'a>(
        &'a self,
        gate: &'a G,
        caller: G::Caller,
        op: &'static Operation,
        arguments: Value,
    ) -> ToolCall<'a> {
        match &self.dispatch {
            Some(d) => d.call(gate, caller, op, arguments),
            None => Box::pin(std::future::ready(None)),
        }
    }

    /// The operation `id`, among those of this service.
    pub fn operation(&self, id: &str) -> Option<&'static Operation> {
        self.operations.iter().copied().find(|op| op.id == id)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::endpoint::ToolOutcome;
    use crate::respond::ToolAnswer;
    use crate::tests::{OP, Open, SERVICE, block_on};

    /// Echoes the caller and the arguments of operation `op`, as a generated dispatch calls its method.
    struct Echo;

    impl Tools<Open> for Echo {
        fn call<'a>(
            &'a self,
            _: &'a Open,
            caller: &'static str,
            op: &'static Operation,
            arguments: Value,
        ) -> ToolCall<'a> {
            Box::pin(async move {
                (op.id == "op").then(|| Ok(ToolAnswer::Json(json!({ "caller": caller, "arguments": arguments }))))
            })
        }
    }

    /// The JSON a call answered, `None` when it reached no operation.
    fn answered(outcome: ToolOutcome) -> Option<Value> {
        outcome.map(|o| if let Ok(ToolAnswer::Json(v)) = o { v } else { panic!("not a JSON answer: {o:?}") })
    }

    static TOOLS: [(&str, &Operation); 1] = [("test.op", &OP)];
    static OPERATIONS: [&Operation; 1] = [&OP];

    #[test]
    fn an_api_without_tools_serves_no_mcp_and_calls_no_tool() {
        let api: Api<Open> = Api::new(&SERVICE, &OPERATIONS, |_, _| axum::Router::new());
        assert_eq!(api.info().name, "test");
        assert_eq!(api.operations().len(), 1);
        assert!(!api.has_mcp() && api.tools().is_empty() && api.tool("test.op").is_none());
        assert!(block_on(api.call_tool(&Open, "caller", "test.op", json!({}))).is_none());
    }

    #[test]
    fn an_api_with_tools_finds_their_operations_and_dispatches_calls() {
        let api: Api<Open> = Api::new(&SERVICE, &OPERATIONS, |_, _| axum::Router::new()).with_tools(&TOOLS, Echo);
        assert_eq!(api.tool("test.op").map(|op| op.id), Some("op"));
        assert!(api.tool("test.other").is_none());
        // The service declares no MCP path, so there is no endpoint to serve the tools at.
        assert!(!api.has_mcp());
        let answer = answered(block_on(api.call_tool(&Open, "caller", "test.op", json!({ "a": 1 }))));
        assert_eq!(answer, Some(json!({ "caller": "caller", "arguments": { "a": 1 } })));
        assert!(block_on(api.call_tool(&Open, "caller", "nope", json!({}))).is_none());
        // An operation is called by itself too (a resource read), tool or not.
        let op = api.operation("op").expect("the operation");
        assert!(
            answered(block_on(api.call_operation(&Open, "caller", op, json!({})))).is_some()
                && api.operation("x").is_none()
        );
    }
}
