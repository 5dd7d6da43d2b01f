//! What each call of an operation receives beside its input ([`Context`]), and how the platform
//! ends the call ([`conclude`]): the operation's transaction, read-only when the spec says the
//! operation changes nothing and the group writer otherwise, is begun when the implementation
//! first asks for it and committed or rolled back after it returns; the audit row of a service
//! whose spec turns audit on commits with the change (or, for a call that changed nothing, goes
//! through the group commit) before the answer leaves, fail closed. Implementations keep only
//! their business logic: they never begin, commit or audit.

use support::{InternalError, Operation, OperationError, Reply};

use crate::caller::Caller;
use crate::fault;
use crate::store::{Store, Tx};

/// One call of an operation, as its implementation sees it.
///
/// Its fields are public so that an implementation can hold the transaction and read the caller
/// at once (`let tx = cx.tx.get().await?;` beside `&cx.caller.tenant`).
pub struct Context {
    /// Who is calling.
    pub caller: Caller,
    /// The operation called.
    pub op: &'static Operation,
    /// The operation's transaction, begun on first use.
    pub tx: Transaction,
    /// The identifiers the call touched, in the order it reports them: the `targets` of its
    /// audit row (kept also for a failure, so report them before the first check that can fail).
    pub targets: Vec<String>,
    committed: Vec<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("caller", &self.caller.subject)
            .field("op", &self.op.id)
            .field("begun", &self.tx.tx.is_some())
            .field("targets", &self.targets)
            .finish()
    }
}

impl Context {
    /// A call of `op` by `caller`, whose transaction (if it asks for one) runs in `store`.
    pub fn new(caller: Caller, op: &'static Operation, store: Option<Store>) -> Self {
        Context { caller, op, tx: Transaction { store, op, tx: None }, targets: Vec::new(), committed: Vec::new() }
    }

    /// The transaction (begun on first use), the caller and the audit targets at once, for code
    /// that reads the caller and reports targets while it holds the transaction.
    pub async fn parts<E: InternalError>(&mut self) -> Result<(&mut Tx, &Caller, &mut Vec<String>), E> {
        let tx = self.tx.get().await?;
        Ok((tx, &self.caller, &mut self.targets))
    }

    /// Reports an identifier the call touches, for its audit row.
    pub fn target(&mut self, id: impl Into<String>) {
        self.targets.push(id.into());
    }

    /// Runs `then` once the call has succeeded and its change is committed (for example, to wake
    /// what watches the data it changed); never when it fails or rolls back.
    pub fn on_commit(&mut self, then: impl FnOnce() + Send + 'static) {
        self.committed.push(Box::new(then));
    }
}

/// An operation's transaction, begun when the implementation first asks for it.
pub struct Transaction {
    store: Option<Store>,
    op: &'static Operation,
    tx: Option<Tx>,
}

impl Transaction {
    /// The transaction: read-only when the spec says the operation changes nothing (every `GET`,
    /// and what it marks `read_only`), else writing. Begun on the first call; a failure to begin
    /// is the operation's unavailable or internal error ([`fault`]).
    pub async fn get<E: InternalError>(&mut self) -> Result<&mut Tx, E> {
        if self.tx.is_none() {
            let Some(store) = &self.store else {
                return Err(fault(self.op.id, "starting a transaction", "this server has no database"));
            };
            let begun = store.begin_for(self.op).await.map_err(|e| fault(self.op.id, "starting a transaction", e))?;
            self.tx = Some(begun);
        }
        Ok(self.tx.as_mut().expect("begun above"))
    }

    /// Ends a read-only transaction before the call returns, so that the call may go on to read
    /// through the store (a file it answers): its snapshot is no longer needed. A writing
    /// transaction ends only with its call, committed with its audit row: asking to end one
    /// early is a fault. Nothing to do when none has begun.
    pub async fn end_read<E: InternalError>(&mut self) -> Result<(), E> {
        match self.tx.take() {
            None => Ok(()),
            Some(tx) if tx.is_read_only() => tx.commit().await.map_err(|e| fault(self.op.id, "ending the read", e)),
            Some(tx) => {
                self.tx = Some(tx);
                Err(fault(self.op.id, "ending the read", "a writing transaction ends only with its call"))
            }
        }
    }

    /// Whether the transaction has begun.
    pub fn is_begun(&self) -> bool {
        self.tx.is_some()
    }
}

/// Ends a call: without audit, commits the transaction on success and rolls it back on failure;
/// with audit (`audit` is where rows go), as [`crate::audit::finish`] (a begun transaction) or
/// [`crate::audit::finish_read`] (none). A success is answered only once committed and recorded;
/// what the call asked to run on commit runs then.
pub async fn conclude<E: OperationError + InternalError>(
    audit: Option<&Store>,
    cx: Context,
    result: Reply<E>,
) -> Reply<E> {
    let Context { caller, op, tx, targets, committed } = cx;
    let result = match (audit, tx.tx) {
        (Some(store), Some(tx)) => crate::audit::finish(store, tx, &caller, op, &targets, result).await,
        (Some(store), None) => crate::audit::finish_read(store, &caller, op, &targets, result).await,
        (None, Some(tx)) => match result {
            Ok(success) => tx.commit().await.map(|()| success).map_err(|e| fault(op.id, "committing", e)),
            // Dropping the transaction rolls it back.
            Err(e) => Err(e),
        },
        (None, None) => result,
    };
    if result.is_ok() {
        for then in committed {
            then();
        }
    }
    result
}
