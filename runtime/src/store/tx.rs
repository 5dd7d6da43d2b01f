//! [`Tx`]: a transaction of the store (its own, or a member of SQLite's group commit), and the record of which task holds one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use sqlx::AnyConnection;
use sqlx::{Any, Transaction};

use super::*;

/// The tasks that hold a transaction now, with how many each holds.
pub(super) type Holders = Arc<Mutex<HashMap<tokio::task::Id, usize>>>;

/// A transaction on the store. It derefs to the connection, so `&mut *tx` runs a query in it.
/// While it lives, its task may not acquire another connection from the store.
#[derive(Debug)]
pub struct Tx {
    pub(super) inner: Inner,
    pub(super) _holder: Holder,
    pub(super) read_only: bool,
}

/// What a [`Tx`] is on its backend.
#[derive(Debug)]
pub(super) enum Inner {
    /// A database transaction of its own (reads; PostgreSQL's writes, whose concurrent commits
    /// the server already groups into shared WAL flushes).
    Own(Transaction<'static, Any>),
    /// A member of SQLite's group commit (see [`group`]).
    Member(group::Member),
}

impl Tx {
    /// Whether this transaction only reads ([`Store::begin_read`]): the database refuses its
    /// writes, and an audit row of its operation goes to the group commit instead.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Commits the transaction, returning once its changes are durable (on SQLite, once the
    /// group commit that carries it has committed).
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self.inner {
            Inner::Own(tx) => tx.commit().await,
            Inner::Member(m) => m.commit(0).await,
        }
    }

    /// Commits a transaction carrying `rows` audit rows, measured as an audit commit (its time,
    /// its row count, or its failure; on SQLite, those of the group commit that carries it).
    pub async fn commit_audit(self, rows: usize) -> Result<(), sqlx::Error> {
        match self.inner {
            Inner::Own(tx) => {
                let started = std::time::Instant::now();
                let committed = tx.commit().await;
                crate::metrics::audit_commit(rows, started.elapsed(), committed.is_ok());
                committed
            }
            Inner::Member(m) => m.commit(rows).await,
        }
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        match self.inner {
            Inner::Own(tx) => tx.rollback().await,
            Inner::Member(m) => m.rollback().await,
        }
    }
}

impl std::ops::Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        match &self.inner {
            Inner::Own(tx) => tx,
            Inner::Member(m) => m.connection(),
        }
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.inner {
            Inner::Own(tx) => tx,
            Inner::Member(m) => m.connection_mut(),
        }
    }
}

/// Marks the current task as holding a transaction until dropped.
#[derive(Debug)]
pub(super) struct Holder {
    pub(super) holders: Holders,
    pub(super) task: Option<tokio::task::Id>,
}

impl Holder {
    pub(super) fn new(holders: &Holders) -> Holder {
        let task = tokio::task::try_id();
        if let (Some(id), Ok(mut map)) = (task, holders.lock()) {
            *map.entry(id).or_insert(0) += 1;
        }
        Holder { holders: holders.clone(), task }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if let (Some(id), Ok(mut map)) = (self.task, self.holders.lock())
            && let Some(n) = map.get_mut(&id)
        {
            *n -= 1;
            if *n == 0 {
                map.remove(&id);
            }
        }
    }
}
