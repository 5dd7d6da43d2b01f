//! The one REST handler and MCP call every generated operation goes through: [`on`] routes an
//! operation to it, [`tool`] calls it. Both erase the operation's types first, so that what every
//! call goes through (admission, decoding, the end of the call, the answer) is compiled once per
//! service and gate, whatever the number of operations.

use std::future::Future;
use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::decode::{BodyRead, Prepare, admit, admit_arguments, deserialize};
use crate::fields::Location;
use crate::gate::{Gate, Touched};
use crate::layers::{Layers, Route};
use crate::paging::Paging;
use crate::problem::{Failure, Fault, InternalError, OperationError};
use crate::respond::Reply;
use crate::respond::{ToolAnswer, ToolFailure, respond, respond_error};
use crate::table::{Method, Operation};
use crate::validate::Rejection;

/// One operation of service implementation `S` (whose calls receive a context `C`), as the generic REST
/// handler ([`on`]) and MCP call ([`tool`]) call it. Generated per operation.
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
    /// Reads a body sent in one of the operation's other formats ([`Operation::read_types`])
    /// into JSON, as the service's implementation reads it (see [`crate::ReadBody`]); none
    /// unless the operation lists such formats.
    fn read_body(_service: &S, _media: &str, _body: &[u8]) -> BodyRead {
        None
    }
}

/// The router state of a generated service: its implementation, the gate admitting callers and
/// the layers its operations' routes are wrapped in.
pub struct App<S, G> {
    /// The implementation.
    pub service: Arc<S>,
    /// The gate.
    pub gate: Arc<G>,
    /// The per-operation layers.
    pub layers: Layers,
}

/// Adds operation `E`'s REST route to its path's `router`, under its method: the shared handler
/// with `E`'s parts, wrapped in the layers of `app` that select it (with none, the
/// handler as it is).
pub fn on<E, S, G>(
    router: axum::routing::MethodRouter<Arc<App<S, G>>>,
    app: &Arc<App<S, G>>,
) -> axum::routing::MethodRouter<Arc<App<S, G>>>
where
    S: Send + Sync + 'static,
    G: Gate,
    E: Endpoint<S, G::Context>,
{
    route(router, app, Erased::of::<E>())
}

/// [`on`] for an operation whose types are erased: one handler type per service, whatever its
/// number of operations.
fn route<S, G>(
    router: axum::routing::MethodRouter<Arc<App<S, G>>>,
    app: &Arc<App<S, G>>,
    endpoint: Erased<S, G::Context>,
) -> axum::routing::MethodRouter<Arc<App<S, G>>>
where
    S: Send + Sync + 'static,
    G: Gate,
{
    use axum::handler::Handler;
    let op = endpoint.op;
    let filter = filter(op.method);
    let handler = move |axum::extract::State(app): axum::extract::State<Arc<App<S, G>>>, req: Request| {
        rest::<S, G>(app, endpoint, req)
    };
    if !app.layers.selects(op) {
        return router.on(filter, handler);
    }
    let route = Route::new(handler.with_state(app.clone()));
    router.on_service(filter, app.layers.wrap(op, route))
}

/// The methods of one path of a generated service's router.
pub type Methods<S, G> = axum::routing::MethodRouter<Arc<App<S, G>>>;

/// Adds the operations that share one path and method, told apart by their query (each path's
/// query or fragment part: `/?Action=Run` beside `/?Action=Stop`, [`crate::query_conditions`]),
/// to their path's `router`: each request goes to the first operation whose conditions its query
/// meets, those asking more first, then in the order given. A request meeting none goes to the
/// operation that asks nothing, or to the only one where it asks only for parameters (its
/// decoder then names what is missing); else it is answered `not_found`, as a path no operation
/// serves.
pub fn among<S, G>(
    router: Methods<S, G>,
    app: &Arc<App<S, G>>,
    choices: Vec<(&'static Operation, Methods<S, G>)>,
) -> Methods<S, G>
where
    S: Send + Sync + 'static,
    G: Gate,
{
    type Choice = (Vec<(&'static str, Option<&'static str>)>, axum::routing::MethodRouter<()>);
    let Some(&(first, _)) = choices.first() else { return router };
    let service = first.service;
    let only = choices.len() == 1;
    let mut choices: Vec<Choice> = choices
        .into_iter()
        .map(|(op, r)| {
            let is_field =
                |n: &str| op.input.iter().any(|f| f.location == crate::fields::Location::Query && f.wire == n);
            (crate::paths::query_conditions(op.path, is_field), r.with_state(app.clone()))
        })
        .collect();
    choices.sort_by_key(|(conditions, _)| std::cmp::Reverse(conditions.len()));
    let fallback =
        choices.iter().position(|(c, _)| c.is_empty() || (only && c.iter().all(|(_, value)| value.is_none())));
    let choices: Arc<Vec<Choice>> = Arc::new(choices);
    let handler = move |req: Request| {
        let choices = choices.clone();
        async move {
            use tower::ServiceExt;
            let pairs: Vec<(String, String)> =
                req.uri().query().and_then(|q| serde_urlencoded::from_str(q).ok()).unwrap_or_default();
            let chosen = choices.iter().position(|(c, _)| crate::paths::meets(c, &pairs)).or(fallback);
            match chosen {
                Some(i) => match choices[i].1.clone().oneshot(req).await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                },
                None => {
                    let (parts, _) = req.into_parts();
                    let problem = crate::problem::Problem::new(format!(
                        "no operation of {} {} takes this query",
                        parts.method,
                        parts.uri.path()
                    ));
                    crate::problem::error_response(
                        service,
                        service.roles.not_found,
                        problem,
                        crate::problem::request_id(&parts),
                    )
                }
            }
        }
    };
    router.on(filter(first.method), handler)
}

fn filter(method: Method) -> axum::routing::MethodFilter {
    use axum::routing::MethodFilter;
    match method {
        Method::Get => MethodFilter::GET,
        Method::Post => MethodFilter::POST,
        Method::Put => MethodFilter::PUT,
        Method::Patch => MethodFilter::PATCH,
        Method::Delete => MethodFilter::DELETE,
        Method::Head => MethodFilter::HEAD,
        Method::Options => MethodFilter::OPTIONS,
    }
}

/// The handler of every operation: admits and decodes the request, calls the service, ends the
/// call (its transaction, its audit row) and answers the success body or the error. Generic
/// over the service and the gate only: the operation comes as its [`Erased`] parts.
async fn rest<S, G>(app: Arc<App<S, G>>, endpoint: Erased<S, G::Context>, req: Request) -> Response
where
    S: Send + Sync + 'static,
    G: Gate,
{
    let op = endpoint.op;
    let read = |media: &str, body: &[u8]| (endpoint.read)(&app.service, media, body);
    let (parts, caller, prepared, paging) = match admit(&*app.gate, op, req, endpoint.prepare, &read).await {
        Ok(v) => v,
        Err(mut rejected) => {
            // Refusals of a deprecated operation say so too: a client learns it from any answer.
            if let Some(d) = op.deprecation {
                d.mark(&mut rejected);
            }
            return rejected;
        }
    };
    match endpoint.run(&*app.service, &*app.gate, caller, prepared, paging).await {
        Ok(body) => respond(&parts, op, body),
        Err(e) => respond_error(&parts, op, e),
    }
}

/// The MCP call of operation `E` for a caller the gate admitted: decodes the arguments and
/// answers the REST route's success body (`{}` for an empty one), its file, or the failure.
pub fn tool<'a, E, S, G>(
    service: &'a S,
    gate: &'a G,
    caller: G::Caller,
    arguments: Value,
) -> impl Future<Output = Result<ToolAnswer, ToolFailure>> + Send + 'a
where
    S: Send + Sync + 'static,
    G: Gate,
    E: Endpoint<S, G::Context>,
{
    call_tool::<S, G>(service, gate, caller, Erased::of::<E>(), arguments)
}

/// [`tool`] for an operation whose types are erased.
async fn call_tool<S, G>(
    service: &S,
    gate: &G,
    caller: G::Caller,
    endpoint: Erased<S, G::Context>,
    arguments: Value,
) -> Result<ToolAnswer, ToolFailure>
where
    S: Send + Sync + 'static,
    G: Gate,
{
    let op = endpoint.op;
    let (prepared, paging) = admit_arguments(gate, &caller, op, arguments, endpoint.prepare).await?;
    match endpoint.run(service, gate, caller, prepared, paging).await {
        Ok(success) => Ok(success.into_tool_answer(op.service)),
        Err(e) => Err(ToolFailure::from_error(op, e)),
    }
}

/// The call of a service's method with an input that decoded.
type Call<S, C> = Box<dyn for<'a> FnOnce(&'a S, &'a mut C, Paging) -> BoxFuture<'a, Reply<Failure>> + Send>;

/// One call of an operation once its input decoded: the audit targets the input names, and the
/// call of the service's method with it.
struct Prepared<S, C> {
    touched: Touched,
    call: Call<S, C>,
}

/// Operation `E`'s parts with its types erased, which the shared handler and tool call use:
/// its table entry, how its fields become a [`Prepared`] call, and how a fault met while ending
/// the call becomes its error.
struct Erased<S, C> {
    op: &'static Operation,
    prepare: Prepare<Prepared<S, C>>,
    fault: fn(Fault) -> Failure,
    read: fn(&S, &str, &[u8]) -> BodyRead,
}

impl<S, C> Clone for Erased<S, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, C> Copy for Erased<S, C> {}

impl<S, C> Erased<S, C>
where
    S: Send + Sync + 'static,
    C: Send + 'static,
{
    fn of<E: Endpoint<S, C>>() -> Self {
        Erased {
            op: E::OP,
            prepare: prepare::<E, S, C>,
            fault: |f| Failure::of(f.into_error::<E::Error>()),
            read: E::read_body,
        }
    }

    /// Calls the service with the prepared input in the context the gate opens for it, and ends
    /// the call through the gate: its result, or the fault met while ending it.
    async fn run<G: Gate<Context = C>>(
        self,
        service: &S,
        gate: &G,
        caller: G::Caller,
        prepared: Prepared<S, C>,
        paging: Paging,
    ) -> Reply<Failure> {
        let mut cx = gate.context(caller, self.op, prepared.touched);
        let result = (prepared.call)(service, &mut cx, paging).await;
        let outcome = match &result {
            Ok(_) => Ok(()),
            Err(e) => Err(e.code),
        };
        match gate.conclude(cx, outcome).await {
            Ok(()) => result,
            Err(fault) => Err((self.fault)(fault)),
        }
    }
}

/// Operation `E`'s input from the object of its fields, with the call of its method.
fn prepare<E, S, C>(op: &'static Operation, fields: Map<String, Value>) -> Result<Prepared<S, C>, Rejection>
where
    E: Endpoint<S, C>,
    S: Send + Sync + 'static,
    C: Send + 'static,
{
    let path = path_values(op, &fields);
    let input: E::Input = deserialize(op.service, fields)?;
    let touched = Touched { targets: E::targets(&input), path };
    Ok(Prepared {
        touched,
        call: call::<S, C, _>(move |s, cx, paging| {
            Box::pin(async move { E::call(s, cx, input, paging).await.map_err(Failure::of) })
        }),
    })
}

/// A JSON value as text: a string as it is, anything else as JSON writes it (how a call's path
/// parameters are compared, whichever way they arrived).
pub fn scalar_text(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_string)
}

/// The values of `op`'s path parameters among its decoded `fields`, as text, in the route's order;
/// none for a read-only operation, whose call changes nothing anyone is told of.
fn path_values(op: &'static Operation, fields: &Map<String, Value>) -> Vec<(&'static str, String)> {
    if op.read_only {
        return Vec::new();
    }
    op.input
        .iter()
        .filter(|f| f.location == Location::Path)
        .filter_map(|f| Some((f.name, scalar_text(fields.get(f.name)?))))
        .collect()
}

/// Boxes a call, naming the lifetime its future borrows for.
fn call<S, C, F>(f: F) -> Call<S, C>
where
    F: for<'a> FnOnce(&'a S, &'a mut C, Paging) -> BoxFuture<'a, Reply<Failure>> + Send + 'static,
{
    Box::new(f)
}

/// What an MCP call of an operation answers: `None` when the MCP endpoint reaches no such
/// operation, else the same body the REST route answers (or its file) or the failure.
pub type ToolOutcome = Option<Result<ToolAnswer, ToolFailure>>;

/// A boxed MCP call borrowing the gate and the caller for `'a`.
pub type ToolCall<'a> = BoxFuture<'a, ToolOutcome>;

/// The MCP dispatch of one service: decodes the arguments of a call of an operation the MCP
/// endpoint reaches (a tool, a resource, a completion's listing) into its input and calls the
/// same trait method as the REST route. Generated per service; the runtime calls it through
/// [`Api::call_tool`] and [`Api::call_operation`].
pub trait Tools<G: Gate>: Send + Sync + 'static {
    /// Calls operation `op` for a caller `gate` admitted.
    fn call<'a>(&'a self, gate: &'a G, caller: G::Caller, op: &'static Operation, arguments: Value) -> ToolCall<'a>;
}
