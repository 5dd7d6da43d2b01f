//! The one REST handler ([`rest`]) and MCP call ([`tool`]) every generated operation goes through.

use std::future::Future;

use axum::extract::Request;
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::decode::{admit, admit_arguments};
use crate::gate::Gate;
use crate::layers::{Layers, Route};
use crate::paging::Paging;
use crate::problem::{InternalError, OperationError};
use crate::respond::Reply;
use crate::respond::{ToolFailure, respond, respond_error};
use crate::table::{Method, Operation};

/// One operation of service implementation `S` (whose calls receive a context `C`), as the generic REST
/// handler [`rest`] and MCP dispatch [`tool`] call it. Generated per operation.
pub trait Endpoint<S, C>: 'static {
    /// The decoded input ([`NoInput`] when the operation takes none).
    type Input: DeserializeOwned + Send;
    /// The operation's closed error enum.
    type Error: OperationError + InternalError;
    /// The operation's table entry.
    const OP: &'static Operation;
    /// Calls the service's method: what it answers on success, or its error.
    fn call(
        service: &S,
        cx: &mut C,
        input: Self::Input,
        paging: Paging,
    ) -> impl Future<Output = Reply<Self::Error>> + Send;
    /// What the call touches, read from its input before the call: the `targets` of its audit
    /// row, as the spec's `audit_targets` names them (none unless it does).
    fn targets(_input: &Self::Input) -> Vec<String> {
        Vec::new()
    }
}

/// The router state of a generated service: its implementation, the gate admitting callers and
/// the layers its operations' routes are wrapped in.
pub struct App<S, G> {
    /// The implementation.
    pub service: std::sync::Arc<S>,
    /// The gate.
    pub gate: std::sync::Arc<G>,
    /// The per-operation layers.
    pub layers: Layers,
}

/// Adds operation `E`'s REST route to its path's `router`, under its method: [`rest`], wrapped in
/// the layers of `app` that select it (with none, the handler as it is).
pub fn on<E, S, G>(
    router: axum::routing::MethodRouter<std::sync::Arc<App<S, G>>>,
    app: &std::sync::Arc<App<S, G>>,
) -> axum::routing::MethodRouter<std::sync::Arc<App<S, G>>>
where
    S: Send + Sync + 'static,
    G: Gate,
    E: Endpoint<S, G::Context>,
{
    use axum::handler::Handler;
    use axum::routing::MethodFilter;
    let filter = match E::OP.method {
        Method::Get => MethodFilter::GET,
        Method::Post => MethodFilter::POST,
        Method::Put => MethodFilter::PUT,
        Method::Patch => MethodFilter::PATCH,
        Method::Delete => MethodFilter::DELETE,
    };
    if !app.layers.selects(E::OP) {
        return router.on(filter, rest::<E, S, G>);
    }
    let route = Route::new(rest::<E, S, G>.with_state(app.clone()));
    router.on_service(filter, app.layers.wrap(E::OP, route))
}

/// The axum handler of every operation `E`: admits and decodes the request, calls the service,
/// and answers the success body or the error envelope.
pub async fn rest<E, S, G>(
    axum::extract::State(app): axum::extract::State<std::sync::Arc<App<S, G>>>,
    req: Request,
) -> Response
where
    S: Send + Sync + 'static,
    G: Gate,
    E: Endpoint<S, G::Context>,
{
    let op = E::OP;
    let (parts, caller, input, paging) = match admit::<G, E::Input>(&*app.gate, op, req).await {
        Ok(v) => v,
        Err(mut rejected) => {
            // Refusals of a deprecated operation say so too: a client learns it from any answer.
            if let Some(d) = op.deprecation {
                d.mark(&mut rejected);
            }
            return rejected;
        }
    };
    let mut cx = app.gate.context(caller, op, E::targets(&input));
    let result = E::call(&app.service, &mut cx, input, paging).await;
    match app.gate.conclude(cx, result).await {
        Ok(body) => respond(&parts, op, body),
        Err(e) => respond_error(&parts, op, e),
    }
}

/// The MCP call of operation `E` for a caller the gate admitted: decodes the arguments and
/// answers the REST route's success body (`{}` for an empty one) or the failure.
pub async fn tool<E, S, G>(service: &S, gate: &G, caller: G::Caller, arguments: Value) -> Result<Value, ToolFailure>
where
    G: Gate,
    E: Endpoint<S, G::Context>,
{
    let (input, paging) = admit_arguments::<G, E::Input>(gate, &caller, E::OP, arguments).await?;
    let mut cx = gate.context(caller, E::OP, E::targets(&input));
    let result = E::call(service, &mut cx, input, paging).await;
    match gate.conclude(cx, result).await {
        Ok(success) => Ok(success.into_tool_body(E::OP.service)),
        Err(e) => Err(ToolFailure::from_error(E::OP, e)),
    }
}

/// What a tool call answers: `None` when the service has no tool of that name, else the same JSON
/// body the REST route answers or the failure.
pub type ToolOutcome = Option<Result<Value, ToolFailure>>;

/// A boxed tool call borrowing the gate, the caller and the name for `'a`.
pub type ToolCall<'a> = std::pin::Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// The MCP dispatch of one service: decodes a tool's arguments into its operation's input and
/// calls the same trait method as the REST route. Generated per service; the runtime calls it
/// through [`Api::call_tool`].
pub trait Tools<G: Gate>: Send + Sync + 'static {
    /// Calls tool `name` for a caller `gate` admitted.
    fn call<'a>(&'a self, gate: &'a G, caller: G::Caller, name: &'a str, arguments: Value) -> ToolCall<'a>;
}
