//! Per-operation layers: tower layers a service attaches to the REST routes of the operations it
//! selects by id, tag or scope (a time limit, a cache header, a check of its own), with
//! [`Api::layer`](crate::Api::layer). A layer wraps the whole route of each operation it selects,
//! the gate and the decoder included: it sees the request as it arrives and the answer as it
//! leaves. MCP tool calls travel inside the service's MCP endpoint, not through these routes.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service};

use crate::table::Operation;

/// The REST route of one operation, as a layer wraps it.
pub type Route = BoxCloneSyncService<Request, Response, Infallible>;

/// Which operations a layer wraps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Select {
    /// Every operation of the service.
    All,
    /// The operation with this id (its `operationId`).
    Operation(&'static str),
    /// Every operation with this tag.
    Tag(&'static str),
    /// Every operation whose required scope is this one.
    Scope(&'static str),
}

impl Select {
    /// Whether `op` is selected.
    pub fn matches(&self, op: &Operation) -> bool {
        match self {
            Select::All => true,
            Select::Operation(id) => op.id == *id,
            Select::Tag(tag) => op.tags.contains(tag),
            Select::Scope(scope) => op.scope == *scope,
        }
    }
}

type Wrap = Arc<dyn Fn(Route) -> Route + Send + Sync>;

/// The layers of one service with what each selects, in the order they were attached: the first
/// attached is the innermost, as with axum's `Router::layer`.
#[derive(Clone, Default)]
pub struct Layers(Vec<(Select, Wrap)>);

impl std::fmt::Debug for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(select, _)| select)).finish()
    }
}

impl Layers {
    /// Attaches `layer` to the operations `select` picks.
    pub fn push<L>(&mut self, select: Select, layer: L)
    where
        L: Layer<Route> + Send + Sync + 'static,
        L::Service: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        self.0.push((select, Arc::new(move |route| Route::new(layer.layer(route)))));
    }

    /// Whether any layer selects `op`.
    pub fn selects(&self, op: &Operation) -> bool {
        self.0.iter().any(|(select, _)| select.matches(op))
    }

    /// `route` wrapped in every layer that selects `op`, the first attached innermost.
    pub fn wrap(&self, op: &Operation, route: Route) -> Route {
        self.0.iter().filter(|(select, _)| select.matches(op)).fold(route, |route, (_, wrap)| wrap(route))
    }
}
