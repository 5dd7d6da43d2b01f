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
//! work) is not announced, and a subscriber hears the calls made through its own server process.

use std::sync::Arc;

use support::Operation;
use tokio::sync::broadcast;

/// One call that succeeded and may have changed data.
#[derive(Debug)]
pub struct Change {
    /// The caller's tenant: only its own subscribers hear of it.
    pub tenant: String,
    /// The operation called.
    pub op: &'static Operation,
    /// Its path parameters with their values, in the route's order.
    pub path: Vec<(&'static str, String)>,
}

/// How many changes a slow subscriber may fall behind before it is told that everything it
/// watches may have changed.
const BACKLOG: usize = 256;

/// The changes made through one service, for whoever watches them. Cloning shares it.
#[derive(Clone)]
pub struct Changes {
    sender: broadcast::Sender<Arc<Change>>,
}

impl Default for Changes {
    fn default() -> Self {
        Changes { sender: broadcast::channel(BACKLOG).0 }
    }
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").field("watchers", &self.sender.receiver_count()).finish()
    }
}

impl Changes {
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
    if change.tenant != tenant || change.op.service.name != reader.service.name {
        return false;
    }
    if values.is_empty() {
        return true;
    }
    let segments = |path: &'static str| path.split('/').filter(|s| !s.is_empty());
    for (read, write) in segments(reader.path).zip(segments(change.op.path)) {
        match (variable(read), variable(write)) {
            (None, None) if read != write => return false,
            (Some(r), Some(w)) => {
                let read = values.iter().find(|(n, _)| n == r).map(|(_, v)| v.as_str());
                let written = change.path.iter().find(|(n, _)| *n == w).map(|(_, v)| v.as_str());
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
        Change { tenant: tenant.into(), op, path: path.iter().map(|(n, v)| (*n, v.to_string())).collect() }
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
