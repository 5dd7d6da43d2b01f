//! `Idempotency-Key` handling for operations a client may retry after a timeout (scans,
//! proposal generation, submission): the first request with a key runs and its response is kept
//! for 24 hours; a retry with the same key and the same request gets that response again; the
//! same key with a different request, or while the first is still running, is a conflict.

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use sqlx::Row;
use support::{InternalError, Problem};

use runtime::Context;
use runtime::OperationFault;
use runtime::store::{Store, Tx, now_ms};

/// How long a key is remembered.
pub const RETENTION_MS: i64 = 24 * 3600 * 1000;
/// A request still marked running after this long is taken to have died; its key is reusable.
pub const STALE_MS: i64 = 10 * 60 * 1000;

/// One claimed key.
#[derive(Debug, Clone)]
pub struct Claim {
    tenant: String,
    operation: &'static str,
    key: String,
}

/// What a key lookup found.
#[derive(Debug)]
pub enum Begin<T> {
    /// Run the operation; with a claimed key, then [`finish`] (or [`abandon`] on failure).
    Run(Option<Claim>),
    /// A retry: answer this again.
    Replay(T),
}

/// The fingerprint of a request: a hash of its operation-specific canonical form.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p.as_bytes());
    }
    format!("{:x}", h.finalize())
}

/// Starts the call's operation: without a key it just runs; with one, the key is claimed (under
/// the operation's id), or its earlier result is replayed, or the conflict is answered through
/// `conflict`. The claim is the call's first step, committed before the operation runs, so a
/// concurrent retry sees it. The fingerprint of the request is computed only when a key was sent.
pub async fn start<T: DeserializeOwned, E: InternalError>(
    cx: &mut Context,
    key: Option<&str>,
    fingerprint: impl FnOnce() -> String,
    conflict: impl FnOnce(Problem) -> E,
) -> Result<Begin<T>, E> {
    let Some(key) = key else { return Ok(Begin::Run(None)) };
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<E>().await?;
    let found =
        begin(tx, &caller.tenant, op.id, key, &fingerprint()).await.map_err(|e| op.fault("idempotency key", e))?;
    cx.tx.commit_step::<E>().await?;
    found.map_err(conflict)
}

/// Claims `key` for `operation`, or finds its earlier result. The inner `Err` is the conflict.
async fn begin<T: DeserializeOwned>(
    tx: &mut Tx,
    tenant: &str,
    operation: &'static str,
    key: &str,
    fingerprint: &str,
) -> Result<Result<Begin<T>, Problem>, sqlx::Error> {
    let now = now_ms();
    sqlx::query("DELETE FROM idempotency_keys WHERE tenant_id = $1 AND operation = $2 AND idem_key = $3 AND (created_at < $4 OR (state = 'running' AND created_at < $5))")
        .bind(tenant)
        .bind(operation)
        .bind(key)
        .bind(now - RETENTION_MS)
        .bind(now - STALE_MS)
        .execute(&mut **tx)
        .await?;
    let row = sqlx::query("SELECT fingerprint, state, response FROM idempotency_keys WHERE tenant_id = $1 AND operation = $2 AND idem_key = $3")
        .bind(tenant)
        .bind(operation)
        .bind(key)
        .fetch_optional(&mut **tx)
        .await?;
    let outcome = match row {
        Some(r) => {
            let (seen, state, response): (String, String, Option<String>) = (r.get(0), r.get(1), r.get(2));
            if seen != fingerprint {
                Err(reused(key, "with a different request"))
            } else if state != "done" {
                Err(reused(key, "while the first request with it is still running"))
            } else {
                match response.as_deref().map(serde_json::from_str::<T>) {
                    Some(Ok(v)) => Ok(Begin::Replay(v)),
                    _ => return Err(sqlx::Error::Protocol("an idempotent response no longer parses".into())),
                }
            }
        }
        None => {
            // A concurrent first use of the same key (PostgreSQL runs the two lookups side by
            // side) inserts first: this one then finds the key taken and is told so.
            let inserted = sqlx::query("INSERT INTO idempotency_keys (tenant_id, operation, idem_key, fingerprint, state, created_at) VALUES ($1, $2, $3, $4, 'running', $5) ON CONFLICT DO NOTHING")
                .bind(tenant)
                .bind(operation)
                .bind(key)
                .bind(fingerprint)
                .bind(now)
                .execute(&mut **tx)
                .await?
                .rows_affected();
            if inserted == 1 {
                Ok(Begin::Run(Some(Claim { tenant: tenant.into(), operation, key: key.into() })))
            } else {
                Err(reused(key, "while the first request with it is still running"))
            }
        }
    };
    Ok(outcome)
}

fn reused(key: &str, how: &str) -> Problem {
    Problem::new(format!("the Idempotency-Key was already used {how}; use a new key for a new request"))
        .with("field", "Idempotency-Key")
        .with("value", key)
}

/// Records the response of a claimed key, inside the transaction that made the operation's
/// changes (so the two land together).
pub async fn finish<T: Serialize>(tx: &mut Tx, claim: &Claim, response: &T) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE idempotency_keys SET state = 'done', response = $1 WHERE tenant_id = $2 AND operation = $3 AND idem_key = $4")
        .bind(serde_json::to_string(response).unwrap_or_default())
        .bind(&claim.tenant)
        .bind(claim.operation)
        .bind(&claim.key)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Marks a claimed key as still in use by its operation, which runs longer than a request would
/// (as a task): it is not taken to belong to a request that died until [`STALE_MS`] after this.
pub async fn keep(store: &Store, claim: &Claim) {
    let sql = "UPDATE idempotency_keys SET created_at = $4 WHERE tenant_id = $1 AND operation = $2 AND idem_key = $3 AND state = 'running'";
    if let Err(e) = on_running(claim, sqlx::query(sql)).bind(now_ms()).execute(store.pool()).await {
        tracing::warn!(operation = claim.operation, "keeping an idempotency key failed: {e}");
    }
}

/// Releases a claimed key after the operation failed, so a retry runs it again.
pub async fn abandon(store: &Store, claim: &Claim) {
    let sql =
        "DELETE FROM idempotency_keys WHERE tenant_id = $1 AND operation = $2 AND idem_key = $3 AND state = 'running'";
    if let Err(e) = on_running(claim, sqlx::query(sql)).execute(store.pool()).await {
        tracing::warn!(
            operation = claim.operation,
            "releasing an idempotency key failed (it expires in 10 minutes): {e}"
        );
    }
}

/// `query` on the claimed key's row (its first three parameters the claim's tenant, operation
/// and key).
fn on_running<'q>(
    claim: &'q Claim,
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    query.bind(claim.tenant.as_str()).bind(claim.operation).bind(claim.key.as_str())
}
