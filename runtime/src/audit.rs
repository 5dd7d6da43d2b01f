//! The audit log: one row per scoped operation, allowed, denied or failed. Rows never hold secret
//! values: only identifiers, the operation, the scope and the outcome.

use sqlx::Row;
use support::{Fault, Operation};

use crate::caller::Caller;
use crate::fault;
use crate::store::{Arg, Store, Tx, now_ms};

/// What became of an audited request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Ran and succeeded.
    Allowed,
    /// Refused by scope, grant, role or tenant isolation.
    Denied,
    /// Admitted but failed.
    Failed,
}

impl Outcome {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Allowed => "allowed",
            Outcome::Denied => "denied",
            Outcome::Failed => "failed",
        }
    }
}

/// One row to write.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Who.
    pub caller: &'a Caller,
    /// Which operation.
    pub op: &'a Operation,
    /// Identifiers it touched.
    pub targets: &'a [String],
    /// Outcome.
    pub outcome: Outcome,
    /// HTTP status answered.
    pub status: u16,
    /// Error code answered, if any.
    pub error_code: Option<&'a str>,
}

impl<'a> Entry<'a> {
    /// The row of `op` succeeding: `allowed`, with its success status.
    pub fn allowed(caller: &'a Caller, op: &'a Operation, targets: &'a [String]) -> Entry<'a> {
        Entry { caller, op, targets, outcome: Outcome::Allowed, status: op.success_status, error_code: None }
    }
}

/// The table and its columns, in the order of [`values`].
macro_rules! into {
    () => {
        "audit_events (tenant_id, id, occurred_at, request_id, actor, auth_method, token_id, \
         scope, operation, targets, outcome, status, error_code)"
    };
}
const INTO: &str = into!();
const INSERT: &str =
    concat!("INSERT INTO ", into!(), " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)");

/// The values of one row, in the order of [`INTO`].
fn values(e: &Entry<'_>) -> Vec<Arg> {
    let text = |s: &str| Arg::Text(Some(s.to_string()));
    vec![
        text(&e.caller.tenant),
        Arg::Text(Some(format!("aud_{}", uuid::Uuid::now_v7().simple()))),
        Arg::Int(now_ms()),
        text(&e.caller.request_id),
        text(&e.caller.subject),
        text(e.caller.method.as_str()),
        Arg::Text(e.caller.token_id.clone()),
        text(e.op.scope),
        text(e.op.id),
        Arg::Text(Some(serde_json::to_string(e.targets).unwrap_or_else(|_| "[]".into()))),
        text(e.outcome.as_str()),
        Arg::Int(i64::from(e.status)),
        Arg::Text(e.error_code.map(str::to_string)),
    ]
}

/// The injected failure of a test, when one is pending (see [`Store::fail_next_audit_writes`]).
fn injected(store: &Store) -> Result<(), sqlx::Error> {
    match store.take_audit_failure() {
        true => Err(sqlx::Error::Protocol("injected audit write failure".into())),
        false => Ok(()),
    }
}

/// Writes one audit row inside `tx` (so it commits, or not, with the change it records).
pub async fn write(store: &Store, tx: &mut Tx, e: Entry<'_>) -> Result<(), sqlx::Error> {
    injected(store)?;
    crate::store::query(INSERT, &values(&e)).execute(&mut **tx).await?;
    Ok(())
}

/// Writes one audit row through the store's group commit, returning once it is durable: for rows
/// that record no change of their own (reads, refusals), which then share one commit with every
/// other such row written meanwhile.
pub async fn write_alone(store: &Store, e: Entry<'_>) -> Result<(), sqlx::Error> {
    injected(store)?;
    store.insert_grouped(INTO, values(&e)).await
}

/// Whether the request being recorded has already met the database unavailable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// Not yet: its row may wait for the database once.
    No,
    /// It waited and failed (a 503), or its deadline passed (a 408): its row must not make it
    /// wait again.
    Yes,
}

/// Writes the row of a request that failed or was refused, which changed nothing. A request
/// waits for the database at most once: when it already has ([`Waited::Yes`]), when the store
/// knows the database is unavailable, or when this write finds it so, the row is queued
/// ([`Store::insert_later`], written once the database answers) and the request is answered at
/// once. Otherwise it returns once the row is durable.
pub async fn record_failure(store: &Store, e: Entry<'_>, waited: Waited) -> Result<(), sqlx::Error> {
    injected(store)?;
    if waited == Waited::Yes || store.is_known_unavailable() {
        store.insert_later(INTO, values(&e));
        return Ok(());
    }
    match store.insert_grouped(INTO, values(&e)).await {
        Err(err) if crate::store::is_transient(&err) => {
            store.insert_later(INTO, values(&e));
            Ok(())
        }
        written => written,
    }
}

/// Audits a request answered without running its operation: one the gate refused (scope too
/// low: `Denied`), one whose input the decoder refused (`Failed`), or one cut off by the
/// request deadline (`Failed`, [`Waited::Yes`]).
pub async fn record_refusal(
    store: &Store,
    caller: &Caller,
    op: &Operation,
    (outcome, code, status): (Outcome, &str, u16),
    waited: Waited,
) -> Result<(), sqlx::Error> {
    record_failure(store, Entry { caller, op, targets: &[], outcome, status, error_code: Some(code) }, waited).await
}

/// Ends an audited operation. On success, its `allowed` row is made durable before the result is
/// returned (fail closed: no audit row, no change and no result): written in `tx` and committed
/// with the change, or, for a read-only `tx` (which changes nothing), through the group commit.
/// On failure, `tx` rolls back and the `failed` (or, for a 403, `denied`) row goes through
/// [`record_failure`]. Every service whose spec turns audit on ends each scoped operation through here
/// (or through [`finish_read`]).
pub async fn finish(
    store: &Store,
    mut tx: Tx,
    caller: &Caller,
    op: &'static Operation,
    targets: &[String],
    outcome: Result<(), &'static str>,
) -> Result<(), Fault> {
    if outcome.is_err() {
        drop(tx);
    } else if tx.is_read_only() {
        // Ends the snapshot; nothing to keep.
        tx.commit().await.map_err(|e| fault(op.id, "ending the read", e))?;
    } else {
        let entry = Entry::allowed(caller, op, targets);
        if let Err(e) = write(store, &mut tx, entry).await {
            return Err(fault(op.id, "writing the audit row", e));
        }
        return tx.commit_audit(1).await.map_err(|e| fault(op.id, "committing", e));
    }
    finish_read(store, caller, op, targets, outcome).await
}

/// Ends an audited operation that changed nothing and ran in no transaction of its own (its
/// reads were single statements): on success the `allowed` row, on failure (`outcome` holds the
/// error's catalog code) the `failed` (or, for a 403, `denied`) row, each through the group
/// commit; a success is answered only once its row is durable.
pub async fn finish_read(
    store: &Store,
    caller: &Caller,
    op: &'static Operation,
    targets: &[String],
    outcome: Result<(), &'static str>,
) -> Result<(), Fault> {
    match outcome {
        Ok(()) => {
            let entry = Entry::allowed(caller, op, targets);
            write_alone(store, entry).await.map_err(|e| fault(op.id, "writing the audit row", e))
        }
        Err(code) => {
            let status = op.service.error(code).map(|e| e.status).unwrap_or(500);
            let outcome = if status == 403 { Outcome::Denied } else { Outcome::Failed };
            let entry = Entry { caller, op, targets, outcome, status, error_code: Some(code) };
            // An operation that answered "unavailable" has met the database down already.
            let waited = if code == op.service.roles.unavailable { Waited::Yes } else { Waited::No };
            if let Err(e) = record_failure(store, entry, waited).await {
                tracing::error!(operation = op.id, error = %e, "could not audit a failed operation");
            }
            Ok(())
        }
    }
}

/// Reads the `targets` column of an audit row.
pub fn targets(row: &sqlx::any::AnyRow) -> Vec<String> {
    serde_json::from_str(&row.get::<String, _>("targets")).unwrap_or_default()
}
