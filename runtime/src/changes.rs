//! Which calls change which MCP resources, and the news of each change for the clients subscribed
//! to them (`resources/subscribe` before 2026-07-28, `subscriptions/listen` since).
//!
//! A call that may change data (any operation but a `GET` or one the spec marks `read_only`) is
//! published once it has succeeded and committed, with its caller's tenant and the path
//! parameters it addressed, on its service's [`Changes`], whatever surface it came through (REST,
//! MCP, the console). A resource of the same service and tenant may have changed with it when:
//!
//! - the resource has no variables (a list, a count, any view of the tenant's data): with every
//!   such call;
//! - it is an item of a template: with a call whose route and the resource's agree segment by
//!   segment where both are literal, and whose path parameters have the URI's values where both
//!   routes have a parameter at the same place. `shop://items/7` (`GET /items/{id}`) changes
//!   with `PATCH /items/7`, `DELETE /items/7`, `POST /items/7/files` and `POST /items` (which
//!   may touch any item), never with `PATCH /items/8` or `POST /labels`.
//!
//! The rule errs towards telling: a subscriber re-reads a resource that did not change rather
//! than miss one that did. Work done outside an operation call (a service's own background
//! work) is not announced.
//!
//! Replicas on PostgreSQL announce their calls to each other: a call that may change data sends
//! `pg_notify` on [`CHANNEL`] in its own transaction (so only a committed call is announced, and
//! with it), and each process listens ([`relay`]) and tells its subscribers of the other
//! replicas' calls. When the listening connection is lost, every subscriber is told that what it
//! watches may have changed. On SQLite (one process per database) a process tells its own.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use support::Operation;
use tokio::sync::broadcast;

use crate::store::{Store, Tx};

/// What subscribers hear.
#[derive(Debug)]
pub enum Change {
    /// A call that succeeded and may have changed data.
    Call {
        /// The caller's tenant: only its own subscribers hear of it.
        tenant: String,
        /// The operation called.
        op: &'static Operation,
        /// Its path parameters with their values, in the route's order.
        path: Vec<(&'static str, String)>,
    },
    /// Calls of other replicas may have gone unheard: anything may have changed.
    Lost,
}

/// The PostgreSQL channel replicas announce their calls on.
pub const CHANNEL: &str = "specwright_changes";

/// A call as replicas announce it: the process that served it (which skips its own), the
/// service, the caller's tenant, the operation and its path parameters.
#[derive(Debug, Serialize, Deserialize)]
struct Announced {
    origin: String,
    service: String,
    tenant: String,
    op: String,
    path: Vec<(String, String)>,
}

/// The largest announcement PostgreSQL carries is 8,000 bytes; one that would be longer goes
/// without its path parameters (it then reaches every item's subscribers, which errs towards
/// telling).
const MOST_ANNOUNCED: usize = 7_900;

/// This process among the replicas.
fn origin() -> &'static str {
    static ORIGIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// How many changes a slow subscriber may fall behind before it is told that everything it
/// watches may have changed.
const BACKLOG: usize = 256;

/// The changes made through one service, for whoever watches them. Cloning shares it.
#[derive(Clone)]
pub struct Changes {
    sender: broadcast::Sender<Arc<Change>>,
    /// Where calls are announced to the other replicas (PostgreSQL), for a service with
    /// resources to subscribe to.
    announcing: Option<Store>,
}

impl Default for Changes {
    fn default() -> Self {
        Changes { sender: broadcast::channel(BACKLOG).0, announcing: None }
    }
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").field("watchers", &self.sender.receiver_count()).finish()
    }
}

impl Changes {
    /// The same, announcing calls to the other replicas through `store` when it is PostgreSQL.
    pub fn announced_through(mut self, store: &Store) -> Self {
        if store.backend() == crate::store::Backend::Postgres {
            self.announcing = Some(store.clone());
        }
        self
    }

    /// Announces a call that may change data to the other replicas, in `tx` (its transaction,
    /// committed with it) or, for a call that wrote in none, at once. Nothing to do unless this
    /// service announces.
    pub async fn announce(
        &self,
        tx: Option<&mut Tx>,
        tenant: &str,
        op: &'static Operation,
        path: &[(&'static str, String)],
    ) -> Result<(), sqlx::Error> {
        let Some(store) = &self.announcing else { return Ok(()) };
        let mut announced = Announced {
            origin: origin().to_string(),
            service: op.service.name.to_string(),
            tenant: tenant.to_string(),
            op: op.id.to_string(),
            path: path.iter().map(|(n, v)| (n.to_string(), v.clone())).collect(),
        };
        let mut payload = serde_json::to_string(&announced).unwrap_or_default();
        if payload.len() > MOST_ANNOUNCED {
            announced.path.clear();
            payload = serde_json::to_string(&announced).unwrap_or_default();
        }
        let notify = sqlx::query("SELECT pg_notify($1, $2)").bind(CHANNEL).bind(payload);
        match tx.filter(|tx| !tx.is_read_only()) {
            Some(tx) => notify.execute(&mut **tx).await.map(drop),
            None => notify.execute(store.pool()).await.map(drop),
        }
    }

    /// Tells the watchers of `change`, if there are any (nothing is kept for later ones).
    pub fn publish(&self, change: Change) {
        if self.sender.receiver_count() > 0 {
            // An error only says that the last watcher left meanwhile.
            let _ = self.sender.send(Arc::new(change));
        }
    }

    /// The changes from now on.
    pub fn watch(&self) -> broadcast::Receiver<Arc<Change>> {
        self.sender.subscribe()
    }
}

/// Whether a call of an operation that may change data is published: one that succeeded and is
/// neither a `GET` nor marked `read_only`.
pub fn publishes(op: &Operation) -> bool {
    !op.read_only && op.method != support::Method::Get
}

/// Whether `change` may have changed, for `tenant`, the resource that `reader` reads with
/// `values` (its URI's variables, named as the reader's path parameters).
pub fn affects(change: &Change, tenant: &str, reader: &Operation, values: &[(String, String)]) -> bool {
    let Change::Call { tenant: of, op, path } = change else { return true };
    if of != tenant || op.service.name != reader.service.name {
        return false;
    }
    if values.is_empty() {
        return true;
    }
    let segments = |path: &'static str| path.split('/').filter(|s| !s.is_empty());
    for (read, write) in segments(reader.path).zip(segments(op.path)) {
        match (variable(read), variable(write)) {
            (None, None) if read != write => return false,
            (Some(r), Some(w)) => {
                let read = values.iter().find(|(n, _)| n == r).map(|(_, v)| v.as_str());
                let written = path.iter().find(|(n, _)| *n == w).map(|(_, v)| v.as_str());
                if let (Some(read), Some(written)) = (read, written)
                    && read != written
                {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// Listens, until `stopping` turns `true`, for the calls other replicas announce on the
/// database at `url` (PostgreSQL), and tells each service's subscribers of its own (`services`:
/// each service's API and changes). A lost connection tells every subscriber that what it
/// watches may have changed, and is opened again.
pub async fn relay(
    url: String,
    services: Vec<(Arc<crate::api::ServiceApi>, Changes)>,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    let lost = || services.iter().for_each(|(_, changes)| changes.publish(Change::Lost));
    // Retried after a second, then twice as long each time up to half a minute while the database
    // stays out of reach.
    let (mut first, mut wait) = (true, std::time::Duration::from_secs(1));
    loop {
        if !first {
            lost();
            tokio::select! {
                _ = stopping.wait_for(|stop| *stop) => return,
                () = tokio::time::sleep(wait) => {}
            }
            wait = (wait * 2).min(std::time::Duration::from_secs(30));
        }
        first = false;
        let mut listener = match sqlx::postgres::PgListener::connect(&url).await {
            Ok(listener) => listener,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for other replicas' changes; retrying");
                continue;
            }
        };
        if let Err(e) = listener.listen(CHANNEL).await {
            tracing::warn!(error = %e, "cannot listen for other replicas' changes; retrying");
            continue;
        }
        wait = std::time::Duration::from_secs(1);
        loop {
            let received = tokio::select! {
                _ = stopping.wait_for(|stop| *stop) => return,
                received = listener.try_recv() => received,
            };
            match received {
                Ok(Some(notification)) => deliver(&services, notification.payload()),
                // The connection was lost; the next call reconnects and listens again.
                Ok(None) => lost(),
                Err(e) => {
                    tracing::warn!(error = %e, "lost the listener of other replicas' changes; reconnecting");
                    break;
                }
            }
        }
    }
}

/// Tells the subscribers of the service an announcement names, unless this process made it.
fn deliver(services: &[(Arc<crate::api::ServiceApi>, Changes)], payload: &str) {
    let Ok(announced) = serde_json::from_str::<Announced>(payload) else { return };
    if announced.origin == origin() {
        return;
    }
    let Some((api, changes)) = services.iter().find(|(api, _)| api.info().name == announced.service) else { return };
    let Some(op) = api.operation(&announced.op) else { return };
    let path = announced
        .path
        .into_iter()
        .filter_map(|(name, value)| Some((op.input.iter().find(|f| f.name == name)?.name, value)))
        .collect();
    changes.publish(Change::Call { tenant: announced.tenant, op, path });
}

/// The name of a path segment that is one parameter (`{id}`).
fn variable(segment: &str) -> Option<&str> {
    segment.strip_prefix('{')?.strip_suffix('}').filter(|n| !n.contains(['{', '}']))
}

#[cfg(test)]
mod tests {
    //! The rule on an item service's routes: an item changes with the calls that address it, its
    //! collection's creation and its own sub-items; a list with every call; nothing across
    //! tenants or items.

    use support::{Method, Operation};

    use super::*;

    fn op(id: &'static str, method: Method, path: &'static str) -> &'static Operation {
        Box::leak(Box::new(Operation { id, method, path, ..crate::context::tests::WRITE }))
    }

    fn change(op: &'static Operation, tenant: &str, path: &[(&'static str, &str)]) -> Change {
        Change::Call { tenant: tenant.into(), op, path: path.iter().map(|(n, v)| (*n, v.to_string())).collect() }
    }

    #[test]
    fn an_item_changes_with_the_calls_that_may_reach_it() {
        let item = op("get_item", Method::Get, "/items/{id}");
        let seven = [("id".to_string(), "7".to_string())];
        let update = op("update_item", Method::Patch, "/items/{id}");
        let attach = op("attach", Method::Post, "/items/{item}/files");
        let create = op("create_item", Method::Post, "/items");
        let label = op("create_label", Method::Post, "/labels");
        assert!(affects(&change(update, "t1", &[("id", "7")]), "t1", item, &seven));
        assert!(!affects(&change(update, "t1", &[("id", "8")]), "t1", item, &seven), "another item");
        assert!(!affects(&change(update, "t2", &[("id", "7")]), "t1", item, &seven), "another tenant's item 7");
        assert!(affects(&change(attach, "t1", &[("item", "7")]), "t1", item, &seven), "its sub-item");
        assert!(!affects(&change(attach, "t1", &[("item", "8")]), "t1", item, &seven));
        assert!(affects(&change(create, "t1", &[]), "t1", item, &seven), "a call on its collection");
        assert!(!affects(&change(label, "t1", &[]), "t1", item, &seven), "another collection");
        let due = op("due", Method::Get, "/items/due");
        assert!(affects(&change(label, "t1", &[]), "t1", due, &[]), "a view changes with any call");
        assert!(!affects(&change(label, "t2", &[]), "t1", due, &[]), "but only the tenant's own");
    }

    #[test]
    fn only_calls_that_may_write_are_published() {
        assert!(publishes(op("update", Method::Patch, "/items/{id}")));
        assert!(!publishes(op("get", Method::Get, "/items/{id}")));
        let search = Operation { read_only: true, ..*op("search", Method::Post, "/items/search") };
        assert!(!publishes(&search));
    }
}
