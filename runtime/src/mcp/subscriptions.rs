//! Resource subscriptions: `resources/subscribe` and `resources/unsubscribe` within a session
//! (revisions before 2026-07-28) and `subscriptions/listen` streams (2026-07-28). Each follows its
//! service's published calls ([`crate::changes`], whose rule says which calls change which
//! resource) for its caller's tenant, and tells the client `notifications/resources/updated`
//! with the URI it subscribed to. The scope a subscription needs is the one reading the resource
//! needs, checked before the protocol layer as for `resources/read`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;
use support::Operation;
use tokio::sync::{broadcast, watch};

use super::catalog::Catalog;
use crate::api::ServiceApi;
use crate::changes::{Change, Changes, affects};

/// The most resources one session or one listen stream watches.
const MAX_WATCHED: usize = 64;

/// One resource watched: its URI as the client named it, the operation reading it and the
/// values of its variables.
#[derive(Debug)]
pub(super) struct Watched {
    uri: String,
    reader: &'static Operation,
    values: Vec<(String, String)>,
}

/// The resource `uri` names, or `-32602` with the URI in `data` (as `resources/read` answers an
/// unknown one).
pub(super) fn resolve(api: &ServiceApi, catalog: &Catalog, uri: &str) -> Result<Watched, McpError> {
    let not_found = || McpError::invalid_params("Resource not found", Some(json!({ "uri": uri })));
    let located = catalog.locate(uri).ok_or_else(not_found)?;
    let reader = api.operation(&located.operation).ok_or_else(not_found)?;
    // The URI's values as the operation reads them, so that they compare with a call's path
    // parameters however each was written (`007` and `7` for a number).
    let read = support::path_arguments(reader, &located.values)
        .map_err(|f| McpError::invalid_params(f.problem.message, Some(json!({ "uri": uri }))))?;
    let values = read.as_object().into_iter().flatten().map(|(n, v)| (n.clone(), support::scalar_text(v))).collect();
    Ok(Watched { uri: uri.to_string(), reader, values })
}

/// What a listen stream is granted of what it asked: the resources it names that the service
/// has (at most [`MAX_WATCHED`]); never a list's changes, which a spec does not make.
pub(super) fn accepted(catalog: &Catalog, requested: &SubscriptionFilter) -> SubscriptionFilter {
    let uris = requested.resource_subscriptions.iter().flatten();
    let known: Vec<&String> = uris.filter(|uri| catalog.locate(uri).is_some()).take(MAX_WATCHED).collect();
    SubscriptionFilter::builder().resource_subscriptions(known.into_iter().cloned()).build()
}

/// Tells `send` the URI of every watched resource a published call may have changed for
/// `tenant`, until `send` answers `false` (the client is gone) or nothing is published any more.
/// A subscriber that fell behind is told every resource it watches.
async fn follow<F, Fut>(mut changes: broadcast::Receiver<Arc<Change>>, tenant: &str, watched: &[Watched], mut send: F)
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = bool>,
{
    loop {
        let hit: Vec<&Watched> = match changes.recv().await {
            Ok(change) => watched.iter().filter(|w| affects(&change, tenant, w.reader, &w.values)).collect(),
            Err(broadcast::error::RecvError::Lagged(_)) => watched.iter().collect(),
            Err(broadcast::error::RecvError::Closed) => return,
        };
        for w in hit {
            if !send(w.uri.clone()).await {
                return;
            }
        }
    }
}

/// Waits until the server process stops (never, for a server that is not told).
async fn stopped(mut stopping: watch::Receiver<bool>) {
    if stopping.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Serves one `subscriptions/listen` stream (acknowledged already) until the client cancels it
/// or the server stops, which ends it with its final result.
pub(super) async fn listen(
    api: &ServiceApi,
    catalog: &Catalog,
    changes: Option<&Changes>,
    stopping: watch::Receiver<bool>,
    context: SubscriptionContext,
) -> Result<(), McpError> {
    let caller = super::caller_of(context.request_context())?;
    let uris = context.accepted().resource_subscriptions.clone().unwrap_or_default();
    let watched: Vec<Watched> = uris.iter().filter_map(|uri| resolve(api, catalog, uri).ok()).collect();
    let sink = context.sink().clone();
    let following = async {
        match changes.filter(|_| !watched.is_empty()) {
            Some(changes) => {
                let send = |uri: String| {
                    let sink = sink.clone();
                    async move { sink.notify_resource_updated(uri).await.is_ok() }
                };
                follow(changes.watch(), &caller.tenant, &watched, send).await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = context.cancelled() => {}
        () = stopped(stopping) => {}
        () = following => {}
    }
    Ok(())
}

/// The resources one session (before 2026-07-28) watches, each followed by a task of its own
/// that tells the session's peer; the tasks end with the session.
#[derive(Debug, Default)]
pub(super) struct Session {
    watching: Mutex<HashMap<String, tokio::task::AbortHandle>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        for (_, task) in self.watching.get_mut().map(std::mem::take).unwrap_or_default() {
            task.abort();
        }
    }
}

impl Session {
    /// Watches `watched` for `tenant` (nothing new when it is watched already), telling `peer`.
    pub(super) fn subscribe(
        &self,
        changes: Option<&Changes>,
        tenant: String,
        watched: Watched,
        peer: Peer<RoleServer>,
    ) -> Result<(), McpError> {
        let mut watching = self.watching.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if watching.contains_key(&watched.uri) {
            return Ok(());
        }
        if watching.len() >= MAX_WATCHED {
            return Err(McpError::invalid_params(
                format!("a session watches at most {MAX_WATCHED} resources; unsubscribe from one first"),
                Some(json!({ "uri": watched.uri, "limit": MAX_WATCHED })),
            ));
        }
        let Some(changes) = changes.map(Changes::watch) else { return Ok(()) };
        let uri = watched.uri.clone();
        let task = tokio::spawn(async move {
            let send = |uri: String| {
                let peer = peer.clone();
                async move { peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_ok() }
            };
            follow(changes, &tenant, std::slice::from_ref(&watched), send).await;
        });
        watching.insert(uri, task.abort_handle());
        Ok(())
    }

    /// Stops watching `uri` (nothing to do when it is not watched).
    pub(super) fn unsubscribe(&self, uri: &str) {
        let removed = self.watching.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(uri);
        if let Some(task) = removed {
            task.abort();
        }
    }
}
