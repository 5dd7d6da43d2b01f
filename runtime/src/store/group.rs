//! SQLite's group commit of writing transactions.
//!
//! SQLite has one writer at a time, and a commit in WAL mode with `synchronous = FULL` waits for
//! the write-ahead log to reach the disk. Committing every request's transaction on its own makes
//! that sync the ceiling of every write. Here the writing transactions of concurrent requests
//! share one database transaction and one sync, the way a database server groups its commits:
//!
//! - Each request's transaction is a **member**: a savepoint inside the group's transaction, on
//!   the single writing connection, held by one request at a time (a fair queue).
//! - When a member commits, its savepoint is released and it waits for the group. If other
//!   transactions are waiting to begin (and the group holds fewer than [`GROUP_MAX`]), they join
//!   the group first; the last of them commits it. Otherwise it commits at once.
//! - **No response before its own commit**: every member is told once the group's `COMMIT` has
//!   returned, with its outcome. A failed `COMMIT` fails exactly the members of that group.
//! - A member that fails or is dropped (an error answer, a cancelled request) rolls back to its
//!   savepoint, leaving the rest of the group intact. If even that fails (SQLite ends the whole
//!   transaction on a full disk or an I/O error), the group is abandoned: every member waiting in
//!   it is told it failed, and nothing of it was kept.
//! - The commit runs in a task of its own, so a request cancelled while committing never decides
//!   the outcome told to the others; a group left open by members that all went away is
//!   committed by a task that queues behind the transactions it waited for.
//!
//! Within a group, a member sees the changes of the members before it (one connection); their
//! clients, like its own, hear back only once all of them are durable.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sqlx::{Any, AnyConnection, AnyPool, Transaction};
use tokio::sync::{Mutex, OwnedMutexGuard, oneshot};

/// Most transactions one group commit carries, so the first of them waits a bounded time.
pub const GROUP_MAX: usize = 64;

/// The group's savepoint of the member holding the connection.
const SAVEPOINT: &str = "SAVEPOINT specwright_member";
const RELEASE: &str = "RELEASE SAVEPOINT specwright_member";
const ROLLBACK_TO: &str = "ROLLBACK TO SAVEPOINT specwright_member";

/// The writing connection's group: shared by every clone of the store.
#[derive(Debug, Clone, Default)]
pub struct Writer {
    state: Arc<Mutex<State>>,
    /// Transactions waiting to begin: a member that commits while there are some leaves the
    /// group open for them.
    waiting: Arc<AtomicUsize>,
}

/// The open group, if any.
#[derive(Debug, Default)]
struct State {
    /// The group's transaction (`BEGIN IMMEDIATE` on the pool's writing connection).
    tx: Option<Transaction<'static, Any>>,
    /// A member's savepoint is open (its member is running, or was dropped before it ended).
    savepoint: bool,
    /// Members that committed their savepoint, waiting for the group's commit.
    members: Vec<oneshot::Sender<Result<(), sqlx::Error>>>,
    /// Audit rows the members carry (for the metrics of audit commits).
    audit_rows: usize,
    /// A task that commits the group, should nobody else, is queued.
    finisher: bool,
    /// Counts the groups ended, so a finisher knows whether its group is still the open one.
    generation: u64,
}

/// Counts a transaction waiting to begin while it lives.
struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    fn new(count: &Arc<AtomicUsize>) -> Waiting {
        count.fetch_add(1, Ordering::SeqCst);
        Waiting(count.clone())
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A writing transaction inside the group: it holds the writing connection until it ends.
#[derive(Debug)]
pub struct Member {
    guard: Option<OwnedMutexGuard<State>>,
    writer: Writer,
}

impl Writer {
    /// Begins a member: waits its turn for the writing connection (at most `timeout`, then
    /// [`sqlx::Error::PoolTimedOut`]), opens the group's transaction when none is open, and sets
    /// the member's savepoint.
    pub async fn begin(&self, pool: &AnyPool, timeout: Duration) -> Result<Member, sqlx::Error> {
        let waiting = Waiting::new(&self.waiting);
        let mut guard = tokio::time::timeout(timeout, self.state.clone().lock_owned())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?;
        drop(waiting);
        settle(&mut guard).await;
        if guard.tx.is_none() {
            guard.tx = Some(pool.begin_with("BEGIN IMMEDIATE").await?);
        }
        if let Err(e) = sqlx::query(SAVEPOINT).execute(connection(&mut guard)).await {
            abandon(&mut guard, &e).await;
            return Err(e);
        }
        guard.savepoint = true;
        Ok(Member { guard: Some(guard), writer: self.clone() })
    }

    /// Ends a member's turn on the connection: leaves the group open for the transactions
    /// waiting to begin (with a finisher queued behind them), or commits it now.
    fn end_turn(&self, mut guard: OwnedMutexGuard<State>) {
        let full = guard.members.len() >= GROUP_MAX;
        if self.waiting.load(Ordering::SeqCst) > 0 && !full {
            if !guard.finisher && guard.tx.is_some() {
                guard.finisher = true;
                let generation = guard.generation;
                let state = self.state.clone();
                drop(guard);
                tokio::spawn(async move {
                    let mut guard = state.lock_owned().await;
                    if guard.generation == generation {
                        finish(&mut guard).await;
                    }
                });
            }
            return;
        }
        tokio::spawn(async move { finish(&mut guard).await });
    }
}

impl Member {
    fn guard(&mut self) -> &mut OwnedMutexGuard<State> {
        self.guard.as_mut().expect("a member holds the connection until it ends")
    }

    /// Releases the member's savepoint and waits until the group that carries it is durable.
    /// `audit_rows`: the audit rows among its changes (for the metrics).
    pub async fn commit(mut self, audit_rows: usize) -> Result<(), sqlx::Error> {
        let mut guard = self.guard.take().expect("a member holds the connection until it ends");
        if let Err(e) = sqlx::query(RELEASE).execute(connection(&mut guard)).await {
            settle(&mut guard).await;
            self.writer.end_turn(guard);
            return Err(e);
        }
        guard.savepoint = false;
        let (done, outcome) = oneshot::channel();
        guard.members.push(done);
        guard.audit_rows += audit_rows;
        self.writer.end_turn(guard);
        outcome.await.map_err(|_| sqlx::Error::PoolClosed)?
    }

    /// Undoes the member's changes; the rest of the group stays.
    pub async fn rollback(mut self) -> Result<(), sqlx::Error> {
        let mut guard = self.guard.take().expect("a member holds the connection until it ends");
        let undone = rollback_to(&mut guard).await;
        if let Err(e) = &undone {
            abandon(&mut guard, e).await;
        }
        self.writer.end_turn(guard);
        undone
    }

    /// The writing connection.
    pub fn connection(&self) -> &AnyConnection {
        self.guard.as_ref().and_then(|g| g.tx.as_deref()).expect("a member's group is open")
    }

    /// The writing connection, to run a statement on.
    pub fn connection_mut(&mut self) -> &mut AnyConnection {
        connection(self.guard())
    }
}

impl Drop for Member {
    /// A member dropped before it ended (an error answer, a cancelled request): its savepoint is
    /// rolled back by a task, which then ends the turn as a commit would.
    fn drop(&mut self) {
        let Some(mut guard) = self.guard.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let writer = self.writer.clone();
        runtime.spawn(async move {
            settle(&mut guard).await;
            writer.end_turn(guard);
        });
    }
}

fn connection(guard: &mut State) -> &mut AnyConnection {
    guard.tx.as_deref_mut().expect("a member's group is open")
}

async fn rollback_to(guard: &mut State) -> Result<(), sqlx::Error> {
    sqlx::query(ROLLBACK_TO).execute(connection(guard)).await?;
    sqlx::query(RELEASE).execute(connection(guard)).await?;
    guard.savepoint = false;
    Ok(())
}

/// Rolls back the savepoint of a member that did not end, abandoning the group if that fails.
async fn settle(guard: &mut State) {
    if guard.savepoint
        && guard.tx.is_some()
        && let Err(e) = rollback_to(guard).await
    {
        abandon(guard, &e).await;
    }
    guard.savepoint = false;
}

/// Ends the group without keeping any of it, telling every waiting member why.
async fn abandon(guard: &mut State, cause: &sqlx::Error) {
    tracing::warn!(error = %cause, members = guard.members.len(), "abandoning a group of writing transactions");
    if let Some(tx) = guard.tx.take() {
        // The connection goes back to the pool, which discards it if it is still not clean.
        let _ = tx.rollback().await;
    }
    let members = std::mem::take(&mut guard.members);
    if !members.is_empty() {
        crate::metrics::audit_commit(guard.audit_rows, Duration::ZERO, false);
    }
    for m in members {
        let _ = m.send(Err(copy(cause)));
    }
    reset(guard);
}

/// Commits the group and tells each member.
async fn finish(guard: &mut State) {
    settle(guard).await;
    let Some(tx) = guard.tx.take() else { return reset(guard) };
    let members = std::mem::take(&mut guard.members);
    if members.is_empty() {
        // Every member rolled back: nothing to keep.
        let _ = tx.rollback().await;
        return reset(guard);
    }
    let started = Instant::now();
    let committed = tx.commit().await;
    if guard.audit_rows > 0 || committed.is_err() {
        crate::metrics::audit_commit(guard.audit_rows, started.elapsed(), committed.is_ok());
    }
    if let Err(e) = &committed {
        tracing::warn!(error = %e, members = members.len(), "a group commit failed");
    }
    for m in members {
        let _ = m.send(committed.as_ref().map(|_| ()).map_err(copy));
    }
    reset(guard);
}

fn reset(guard: &mut State) {
    guard.savepoint = false;
    guard.audit_rows = 0;
    guard.finisher = false;
    guard.generation += 1;
}

/// The error told to each member of a failed group: transient (a 503 to retry) when the cause was.
pub(super) fn copy(e: &sqlx::Error) -> sqlx::Error {
    match super::is_transient(e) {
        true => sqlx::Error::Io(std::io::Error::other(format!("the group commit failed: {e}"))),
        false => sqlx::Error::Protocol(format!("the group commit failed: {e}")),
    }
}
