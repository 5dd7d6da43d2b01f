//! Which calls change which MCP resources, and the news of each change for the clients subscribed
//! to them (`resources/subscribe` before 2026-07-28, `subscriptions/listen` since).
//!
//! A call that may change data (any operation the spec does not mark `read_only`, which every
//! `GET` is unless its spec says otherwise) is published once it has succeeded and committed,
//! with its caller's tenant and the path parameters it addressed, on its service's [`Changes`], whatever surface it came through (REST,
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
//! than miss one that did. Work a service does outside an operation call (a job that ends in the
//! background) is announced by the service itself, on the handle [`crate::Platform::changes`]
//! gives it, naming the operation whose route addresses what changed (`GET /exports/{id}` with
//! the job's id); the same rule then says who hears.
//!
//! Replicas on PostgreSQL announce their calls to each other: once a call that may change data
//! has committed, one task per process ([`Announcer`]) sends it with `pg_notify` on [`CHANNEL`],
//! as many calls in one notification as fit, outside the calls' transactions (a notifying
//! transaction takes a lock that would make every write commit alone); each process listens
//! ([`relay`]) and tells its subscribers of the other replicas' calls. When announcements are
//! dropped (a full queue, the database out of reach) the next one says so, and when the
//! listening connection is lost or stops answering, every subscriber is told that what it
//! watches may have changed. On SQLite (one process per database) a process tells its own.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use support::Operation;
use tokio::sync::broadcast;

use crate::store::Store;

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

/// A call as replicas announce it: the service, the caller's tenant, the operation and its path
/// parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Announced {
    service: String,
    tenant: String,
    op: String,
    path: Vec<(String, String)>,
}

/// One notification: the process that sent it (which skips its own), whether announcements were
/// dropped since its last, and the calls.
#[derive(Debug, Serialize, Deserialize)]
struct Notification {
    origin: String,
    #[serde(default)]
    dropped: bool,
    calls: Vec<Announced>,
}

/// The largest notification PostgreSQL carries is 8,000 bytes; a call that would not fit alone
/// goes without its path parameters (it then reaches every item's subscribers, which errs
/// towards telling).
const MOST_ANNOUNCED: usize = 7_900;

/// How many committed calls may wait to be announced before more are dropped (and the next
/// notification says so).
const ANNOUNCING_BACKLOG: usize = 4_096;

/// The calls of one notification each, in order, as many as fit under [`MOST_ANNOUNCED`].
fn notifications(calls: Vec<Announced>, dropped: bool) -> Vec<String> {
    let text = |calls: Vec<Announced>, dropped: bool| {
        serde_json::to_string(&Notification { origin: origin().to_string(), dropped, calls }).unwrap_or_default()
    };
    let (mut out, mut batch) = (Vec::new(), Vec::new());
    for mut call in calls {
        if text(vec![call.clone()], dropped).len() > MOST_ANNOUNCED {
            call.path.clear();
        }
        batch.push(call);
        if text(batch.clone(), dropped).len() > MOST_ANNOUNCED {
            let last = batch.pop();
            out.push(text(std::mem::take(&mut batch), dropped && out.is_empty()));
            batch.extend(last);
        }
    }
    if !batch.is_empty() || (dropped && out.is_empty()) {
        out.push(text(batch, dropped && out.is_empty()));
    }
    out
}

/// Sends committed calls to the other replicas, from one task of this process. Cloning shares it.
#[derive(Clone, Debug)]
pub struct Announcer {
    sender: tokio::sync::mpsc::Sender<Announced>,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl Announcer {
    /// Starts announcing through `store` (PostgreSQL) until every handle is dropped.
    pub fn start(store: Store) -> Announcer {
        let (sender, mut queue) = tokio::sync::mpsc::channel::<Announced>(ANNOUNCING_BACKLOG);
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = dropped.clone();
        tokio::spawn(async move {
            let mut calls = Vec::new();
            while queue.recv_many(&mut calls, 256).await > 0 {
                let was_dropped = flag.swap(false, std::sync::atomic::Ordering::AcqRel);
                for payload in notifications(std::mem::take(&mut calls), was_dropped) {
                    let notify = sqlx::query("SELECT pg_notify($1, $2)").bind(CHANNEL).bind(payload);
                    if let Err(e) = notify.execute(store.pool()).await {
                        tracing::warn!(error = %e, "could not announce calls to the other replicas");
                        flag.store(true, std::sync::atomic::Ordering::Release);
                    }
                }
            }
        });
        Announcer { sender, dropped }
    }

    /// Queues a committed call; one that does not fit is dropped, and the next notification says
    /// that calls were.
    fn announce(&self, call: Announced) {
        if self.sender.try_send(call).is_err() {
            self.dropped.store(true, std::sync::atomic::Ordering::Release);
        }
    }
}

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
    announcing: Option<Announcer>,
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
    /// The same, announcing its calls to the other replicas through `announcer`.
    pub fn announced_by(mut self, announcer: Announcer) -> Self {
        self.announcing = Some(announcer);
        self
    }

    /// A call of `op` that may have changed data and is committed, or work outside a call that
    /// changed what `op`'s route addresses with `path`'s values: its subscribers here are told,
    /// and the other replicas where this service announces.
    pub fn committed(&self, tenant: String, op: &'static Operation, path: Vec<(&'static str, String)>) {
        if let Some(announcer) = &self.announcing {
            announcer.announce(Announced {
                service: op.service.name.to_string(),
                tenant: tenant.clone(),
                op: op.id.to_string(),
                path: path.iter().map(|(n, v)| (n.to_string(), v.clone())).collect(),
            });
        }
        self.publish(Change::Call { tenant, op, path });
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

/// Whether a call of an operation is published: one the spec does not say changes nothing
/// (`read_only`, which every `GET` is unless its spec says otherwise).
pub fn publishes(op: &Operation) -> bool {
    !op.read_only
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
    // The path alone (a route may carry a query part), and a segment holding more than one
    // parameter or a parameter beside text is no constraint.
    let segments = |path: &'static str| path.split('?').next().unwrap_or_default().split('/').filter(|s| !s.is_empty());
    for (read, write) in segments(reader.path).zip(segments(op.path)) {
        match (variable(read), variable(write)) {
            (None, None) if read != write && !read.contains('{') && !write.contains('{') => return false,
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

/// The operations of one service that announces, and its changes.
pub type Announcing = (&'static [&'static Operation], Changes);

/// Listens, until `stopping` turns `true`, for the calls other replicas announce on the
/// database at `url` (PostgreSQL), and tells each service's subscribers of its own (`services`:
/// each service's operations and changes). A lost connection tells every subscriber that what it
/// watches may have changed, and is opened again.
pub async fn relay(url: String, services: Vec<Announcing>, mut stopping: tokio::sync::watch::Receiver<bool>) {
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
        // A connection dropped without a word (an idle timeout on the way) is found by asking.
        let mut check = tokio::time::interval(CHECK_EVERY);
        check.tick().await;
        loop {
            let received = tokio::select! {
                _ = stopping.wait_for(|stop| *stop) => return,
                _ = check.tick() => None,
                received = listener.try_recv() => Some(received),
            };
            let Some(received) = received else {
                let asked = tokio::time::timeout(CHECK_WAIT, sqlx::query("SELECT 1").execute(&mut listener)).await;
                if !matches!(asked, Ok(Ok(_))) {
                    tracing::warn!("the listener of other replicas' changes stopped answering; reconnecting");
                    break;
                }
                continue;
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

/// How often the listening connection is asked whether it still answers, and how long it has.
const CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(30);
const CHECK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Tells the subscribers of the services a notification names of its calls, unless this process
/// sent it; of everything, when it says calls were dropped.
fn deliver(services: &[Announcing], payload: &str) {
    let Ok(notification) = serde_json::from_str::<Notification>(payload) else { return };
    if notification.origin == origin() {
        return;
    }
    if notification.dropped {
        services.iter().for_each(|(_, changes)| changes.publish(Change::Lost));
    }
    for call in notification.calls {
        let of_service = |(ops, _): &&Announcing| ops.first().is_some_and(|op| op.service.name == call.service);
        let Some((ops, changes)) = services.iter().find(of_service) else { continue };
        let Some(op) = ops.iter().copied().find(|op| op.id == call.op) else { continue };
        let path = call
            .path
            .into_iter()
            .filter_map(|(name, value)| Some((op.input.iter().find(|f| f.name == name)?.name, value)))
            .collect();
        changes.publish(Change::Call { tenant: call.tenant, op, path });
    }
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
    fn a_routes_query_part_is_no_segment() {
        let weather = op("weather", Method::Get, "/weather?city={city}");
        let report = op("report", Method::Post, "/weather");
        let paris = [("city".to_string(), "paris".to_string())];
        assert!(affects(&change(report, "t1", &[]), "t1", weather, &paris));
        let action = op("describe", Method::Get, "/?Action=Describe&Id={id}");
        let modify = op("modify", Method::Post, "/?Action=Modify&Id={id}");
        let one = [("id".to_string(), "i-1".to_string())];
        assert!(affects(&change(modify, "t1", &[("id", "i-1")]), "t1", action, &one));
    }

    #[test]
    fn calls_go_in_as_few_notifications_as_fit_and_a_drop_is_said_once() {
        let call = |n: usize| Announced {
            service: "s".into(),
            tenant: "t".into(),
            op: "o".into(),
            path: vec![("id".into(), "x".repeat(n))],
        };
        assert_eq!(notifications(vec![call(10), call(10)], false).len(), 1);
        let many = notifications((0..100).map(|_| call(200)).collect(), true);
        assert!(many.len() > 1 && many.iter().all(|p| p.len() <= MOST_ANNOUNCED), "{}", many.len());
        let parsed: Vec<Notification> = many.iter().map(|p| serde_json::from_str(p).unwrap()).collect();
        assert_eq!(parsed.iter().map(|n| n.calls.len()).sum::<usize>(), 100);
        assert_eq!(parsed.iter().filter(|n| n.dropped).count(), 1);
        // A call too long to fit goes without its path parameters.
        let huge = notifications(vec![call(10_000)], false);
        let one: Notification = serde_json::from_str(&huge[0]).unwrap();
        assert!(huge[0].len() <= MOST_ANNOUNCED && one.calls[0].path.is_empty());
        // A drop with nothing else to say is still said.
        assert_eq!(notifications(Vec::new(), true).len(), 1);
    }

    #[test]
    fn only_calls_that_may_write_are_published() {
        assert!(publishes(op("update", Method::Patch, "/items/{id}")));
        assert!(!publishes(&Operation { read_only: true, ..*op("get", Method::Get, "/items/{id}") }));
        let search = Operation { read_only: true, ..*op("search", Method::Post, "/items/search") };
        assert!(!publishes(&search));
    }
}
