//! What each call of an operation receives beside its input ([`Context`]), and how the platform
//! ends the call ([`conclude`]): the operation's transaction, read-only when the spec says the
//! operation changes nothing and the group writer otherwise, is begun when the implementation
//! first asks for it and committed or rolled back after it returns; the audit row of a service
//! whose spec turns audit on commits with the change (or, for a call that changed nothing, goes
//! through the group commit) before the answer leaves, fail closed. Implementations keep only
//! their business logic: they never begin, commit or audit.

use support::{Fault, InternalError, Operation};

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
    /// The operation's path parameters with their values: the item the call addresses.
    pub path: Vec<(&'static str, String)>,
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
        Context {
            caller,
            op,
            tx: Transaction { store, op, tx: None, stepped: false },
            targets: Vec::new(),
            path: Vec::new(),
            committed: Vec::new(),
        }
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
    /// Whether a step has committed ([`Transaction::commit_step`]).
    stepped: bool,
}

impl Transaction {
    /// The transaction: read-only when the spec says the operation changes nothing (every `GET`,
    /// and what it marks `read_only`), else writing. Begun on the first call; a failure to begin
    /// is the operation's unavailable or internal error ([`fault`]).
    pub async fn get<E: InternalError>(&mut self) -> Result<&mut Tx, E> {
        let tx = match self.tx.take() {
            Some(tx) => tx,
            None => {
                let Some(store) = &self.store else {
                    return Err(fault(self.op.id, "starting a transaction", "this server has no database"));
                };
                store.begin_for(self.op).await.map_err(|e| fault(self.op.id, "starting a transaction", e))?
            }
        };
        Ok(self.tx.insert(tx))
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

    /// Commits the work so far, for an operation that must make a step durable before it goes
    /// on: a claim before it calls another system (never hold a transaction over a network call),
    /// or a long import committing part by part so that other requests interleave and its
    /// progress survives. The next [`Transaction::get`] begins a new transaction. The call's
    /// audit row commits with its last step (or through the group commit when none follows);
    /// a failure after a step rolls back only what followed it. Nothing to do when none has begun.
    pub async fn commit_step<E: InternalError>(&mut self) -> Result<(), E> {
        match self.tx.take() {
            None => Ok(()),
            Some(tx) => {
                let read_only = tx.is_read_only();
                tx.commit().await.map_err(|e| fault(self.op.id, "committing a step", e))?;
                self.stepped |= !read_only;
                Ok(())
            }
        }
    }

    /// Rolls back the work since the last step, now rather than when the call ends: for a call
    /// that, having failed, must undo what an earlier step committed through the store (a claim
    /// released), which on SQLite's one writer would otherwise wait for this transaction.
    pub fn discard(&mut self) {
        self.tx = None;
    }

    /// Whether the transaction has begun.
    pub fn is_begun(&self) -> bool {
        self.tx.is_some()
    }
}

/// Ends a call: without audit, commits the transaction on success and rolls it back on failure;
/// with audit (`audit` is where rows go), as [`crate::audit::finish`] (a begun transaction) or
/// [`crate::audit::finish_read`] (none). A success is answered only once committed and recorded;
/// what the call asked to run on commit runs then, and a call that may have changed data is
/// published on `changes` (its service's: [`crate::changes`]).
pub async fn conclude(
    audit: Option<&Store>,
    changes: Option<&crate::changes::Changes>,
    cx: Context,
    outcome: Result<(), &'static str>,
) -> Result<(), Fault> {
    let Context { caller, op, tx, targets, path, committed } = cx;
    let stepped = tx.stepped;
    let ended = match (audit, tx.tx) {
        (Some(store), Some(tx)) => crate::audit::finish(store, tx, &caller, op, &targets, outcome).await,
        (Some(store), None) => crate::audit::finish_read(store, &caller, op, &targets, outcome).await,
        (None, Some(tx)) => match outcome {
            Ok(()) => tx.commit().await.map_err(|e| fault(op.id, "committing", e)),
            // Dropping the transaction rolls it back.
            Err(_) => Ok(()),
        },
        (None, None) => Ok(()),
    };
    if outcome.is_ok() && ended.is_ok() {
        for then in committed {
            then();
        }
    }
    // What may have changed: a call that succeeded, or one whose steps committed before it failed.
    let changed = (outcome.is_ok() && ended.is_ok()) || stepped;
    if let Some(changes) = changes.filter(|_| changed && crate::changes::publishes(op)) {
        changes.committed(caller.tenant, op, path);
    }
    ended
}

#[cfg(test)]
pub(crate) mod tests {
    //! A call's transaction and audit, on a real SQLite store: committed with the call's success,
    //! rolled back with its failure, recorded where audit is on; hooks only after a commit.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use sqlx::Row;
    use support::{Method, OperationError, ServiceInfo};

    use super::*;
    use crate::caller::AuthMethod;

    mod errors {
        support::operation_errors! {
            internal: Internal, unavailable: Unavailable;
            Write { Refused = "refused", Internal = "internal", Unavailable = "unavailable" }
        }
    }
    use errors::Write;

    static SERVICE: ServiceInfo = ServiceInfo {
        name: "example",
        title: "Example",
        base_path: "/x",
        mcp_path: None,
        metadata_paths: &[],
        mcp_metadata_paths: &[],
        mcp_instructions: None,
        audit: true,
        stored_tokens: &[],
        scopes: &[],
        errors: &[
            support::ErrorInfo { code: "refused", status: 409, message: "Refused." },
            support::ErrorInfo { code: "internal", status: 500, message: "Internal." },
            support::ErrorInfo { code: "unavailable", status: 503, message: "Unavailable." },
        ],
        roles: support::ErrorRoles {
            unauthenticated: "",
            invalid_token: "",
            insufficient_scope: "",
            malformed: "",
            validation: "",
            payload_too_large: "",
            unsupported_media_type: "",
            not_found: "",
            method_not_allowed: "",
            rate_limited: "",
            internal: "internal",
            request_timeout: "",
            unavailable: "unavailable",
            precondition_failed: None,
            precondition_required: None,
            range_not_satisfiable: None,
        },
        wire: support::Wire::ENVELOPE,
        default_per_page: 20,
        max_per_page: 100,
        plans: &[],
        default_plan: None,
        openapi_json: "{}",
        openapi_30_json: "{}",
        tools_json: "[]",
        mcp_catalog_json: "{}",
        operations: || &[],
    };

    pub(crate) static WRITE: Operation = Operation {
        id: "write",
        method: Method::Post,
        path: "/w",
        full_path: "/x/w",
        scope: "s",
        satisfied_by: &["s"],
        public: false,
        success_status: 200,
        has_body: false,
        no_store: false,
        answer_types: &[],
        body_forms: &[],
        read_types: &[],
        rate_limited: false,
        read_only: false,
        paginated: false,
        tool: None,
        asks_input: false,
        task: support::TaskSupport::Never,
        tags: &[],
        input: &[],
        deprecation: None,
        body: support::BodyFormat::Json,
        conditional: None,
        ranges: false,
        requires: None,
        service: &SERVICE,
    };

    static READ: Operation = Operation { id: "read", method: Method::Get, read_only: true, ..WRITE };

    fn caller() -> Caller {
        Caller {
            subject: "alice".into(),
            tenant: "acme".into(),
            scopes: vec!["s".into()],
            plan: None,
            method: AuthMethod::Jwt,
            token_id: None,
            request_id: "req".into(),
        }
    }

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(None, dir.path()).await.unwrap();
        sqlx::query("CREATE TABLE kept (v TEXT NOT NULL)").execute(store.pool()).await.unwrap();
        (dir, store)
    }

    /// One call of `op` that inserts `v` and succeeds or fails, concluded with audit in `audit`:
    /// what ending it met, and whether its hooks ran.
    async fn call(store: &Store, audit: Option<&Store>, v: &str, fail: bool) -> (Result<(), Fault>, bool) {
        let mut cx = Context::new(caller(), &WRITE, Some(store.clone()));
        cx.target(v);
        let committed = Arc::new(AtomicBool::new(false));
        let seen = committed.clone();
        cx.on_commit(move || seen.store(true, Ordering::SeqCst));
        let tx = cx.tx.get::<Write>().await.unwrap();
        sqlx::query("INSERT INTO kept (v) VALUES ($1)").bind(v).execute(&mut **tx).await.unwrap();
        let outcome = if fail { Err("refused") } else { Ok(()) };
        let concluded = conclude(audit, None, cx, outcome).await;
        (concluded, committed.load(Ordering::SeqCst))
    }

    async fn kept(store: &Store) -> Vec<String> {
        let rows = sqlx::query("SELECT v FROM kept ORDER BY v").fetch_all(store.pool()).await.unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    }

    #[tokio::test]
    async fn a_success_commits_and_runs_its_hooks_a_failure_rolls_back_and_runs_none() {
        let (_dir, store) = store().await;
        assert_eq!(call(&store, None, "a", false).await, (Ok(()), true));
        assert_eq!(call(&store, None, "b", true).await, (Ok(()), false), "the refusal is answered as it is");
        assert_eq!(kept(&store).await, ["a"], "the failed call's insert is rolled back");
    }

    #[tokio::test]
    async fn with_audit_the_row_commits_with_the_change_and_a_failure_is_recorded_too() {
        let (_dir, store) = store().await;
        call(&store, Some(&store), "a", false).await.0.unwrap();
        call(&store, Some(&store), "b", true).await.0.unwrap();
        let rows = sqlx::query(
            "SELECT operation, targets, outcome, status, error_code FROM audit_events ORDER BY occurred_at, id",
        )
        .fetch_all(store.pool())
        .await
        .unwrap();
        let rows: Vec<(String, String, String, i64, Option<String>)> =
            rows.iter().map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4))).collect();
        assert_eq!(
            rows,
            [
                ("write".into(), r#"["a"]"#.into(), "allowed".into(), 200, None),
                ("write".into(), r#"["b"]"#.into(), "failed".into(), 409, Some("refused".into())),
            ]
        );
    }

    #[tokio::test]
    async fn a_read_ends_its_snapshot_early_when_asked_a_write_cannot() {
        let (_dir, store) = store().await;
        let mut read = Context::new(caller(), &READ, Some(store.clone()));
        assert!(read.tx.get::<Write>().await.unwrap().is_read_only());
        read.tx.end_read::<Write>().await.unwrap();
        assert!(!read.tx.is_begun());
        let mut write = Context::new(caller(), &WRITE, Some(store.clone()));
        write.tx.get::<Write>().await.unwrap();
        assert_eq!(write.tx.end_read::<Write>().await.map_err(|e| e.code()), Err("internal"));
        assert!(write.tx.is_begun(), "the writing transaction stays, to be concluded");
        drop(write);
        let mut unbegun = Context::new(caller(), &WRITE, None);
        assert_eq!(unbegun.tx.get::<Write>().await.map(|_| ()).map_err(|e| e.code()), Err("internal"));
    }

    #[tokio::test]
    async fn a_committed_step_survives_a_later_failure_and_a_discard_undoes_only_what_followed() {
        let (_dir, store) = store().await;
        let mut cx = Context::new(caller(), &WRITE, Some(store.clone()));
        let insert = |v: &'static str| sqlx::query("INSERT INTO kept (v) VALUES ($1)").bind(v);
        insert("claim").execute(&mut **cx.tx.get::<Write>().await.unwrap()).await.unwrap();
        cx.tx.commit_step::<Write>().await.unwrap();
        assert!(!cx.tx.is_begun());
        assert_eq!(kept(&store).await, ["claim"], "durable before the call goes on");
        insert("discarded").execute(&mut **cx.tx.get::<Write>().await.unwrap()).await.unwrap();
        cx.tx.discard();
        // On SQLite's one writer, this write would wait for the discarded transaction.
        sqlx::query("UPDATE kept SET v = 'released' WHERE v = 'claim'").execute(store.pool()).await.unwrap();
        insert("last").execute(&mut **cx.tx.get::<Write>().await.unwrap()).await.unwrap();
        assert_eq!(conclude(None, None, cx, Err("refused")).await, Ok(()));
        assert_eq!(kept(&store).await, ["released"], "the last step rolls back, the committed one stays");
    }
}
