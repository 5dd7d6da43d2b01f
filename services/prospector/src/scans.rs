//! On-demand scans: run the configured lead sources, store what is new as scored leads and
//! refresh what is known. One scan at a time per tenant; an `Idempotency-Key` replays a report.

use chrono::Utc;
use prospector_api::prospector::errors::ScanLeadsError as E;
use prospector_api::prospector::models::{ScanLeadsInput, ScanReport, ScanSourceResult, ScanTotals};
use support::Problem;

use crate::idempotency::{self, Begin};
use crate::leads::{self, Found};
use crate::scoring;
use crate::sources::{self, Source};
use runtime::Context;
use runtime::OperationFault;
use runtime::store::{Store, Tx, now_ms};

/// A scan lock older than this is taken to belong to a scan that died.
const STALE_LOCK_MS: i64 = 15 * 60 * 1000;

/// `POST /leads/scan`: in steps, each committed before the next (the idempotency claim, the scan
/// lock, the configuration, then each source's leads), so no transaction is held while a source
/// is fetched and what a source brought is kept if a later one fails.
pub async fn scan(
    cx: &mut Context,
    store: &Store,
    configured: &[Source],
    http: &reqwest::Client,
    input: ScanLeadsInput,
) -> Result<ScanReport, E> {
    let op = cx.op;
    let chosen: Vec<&Source> = match &input.sources {
        None => configured.iter().collect(),
        Some(names) => {
            if let Some(unknown) = names.iter().find(|n| !configured.iter().any(|s| &s.name == *n)) {
                let known: Vec<&str> = configured.iter().map(|s| s.name.as_str()).collect();
                return Err(E::ValidationError(
                    Problem::new(format!("no lead source named {unknown}; configured: {}", known.join(", ")))
                        .with("field", "sources")
                        .with("value", unknown.as_str()),
                ));
            }
            configured.iter().filter(|s| names.contains(&s.name)).collect()
        }
    };
    let names: Vec<&str> = chosen.iter().map(|s| s.name.as_str()).collect();
    let fingerprint = || idempotency::fingerprint(&names);
    let key = input.idempotency_key.as_deref();
    let claim = match idempotency::start(cx, key, fingerprint, E::Conflict).await? {
        Begin::Replay(report) => return Ok(report),
        Begin::Run(claim) => claim,
    };
    let tenant = cx.caller.tenant.clone();
    let scan_id = format!("scan_{}", uuid::Uuid::now_v7().simple());
    let mut held = Held { store: store.clone(), tenant: tenant.clone(), scan_id: None, claim: claim.clone() };
    let result = async {
        let taken = lock(cx.tx.get::<E>().await?, &tenant, &scan_id).await.map_err(|e| op.fault("locking", e))?;
        if !taken {
            return Err(E::Conflict(
                Problem::new("a scan is already running for this account; retry when it has finished")
                    .with("field", "sources"),
            ));
        }
        cx.tx.commit_step::<E>().await?;
        held.scan_id = Some(scan_id.clone());
        // Over MCP, for a client that polls tasks, the scan goes on as a task from here: it holds
        // the lock (committed) and no transaction.
        cx.background().await;
        let report = run(cx, &chosen, http, &scan_id, &held).await;
        cx.tx.discard();
        held.unlock().await;
        report
    }
    .await;
    match (result, claim) {
        (Ok(report), Some(claim)) => {
            let tx = cx.tx.get::<E>().await?;
            idempotency::finish(tx, &claim, &report).await.map_err(|e| op.fault("idempotency", e))?;
            held.claim = None;
            Ok(report)
        }
        (Err(e), Some(claim)) => {
            cx.tx.discard();
            idempotency::abandon(store, &claim).await;
            held.claim = None;
            Err(e)
        }
        (result, None) => result,
    }
}

/// What a running scan holds: its lock (once taken) and its claimed key. A scan stopped before
/// it ends (its task cancelled, its request gone) drops it holding them, and they are released
/// then, in the background, so that the account can scan again and the key be retried.
struct Held {
    store: Store,
    tenant: String,
    scan_id: Option<String>,
    claim: Option<idempotency::Claim>,
}

impl Held {
    /// Releases the lock.
    async fn unlock(&mut self) {
        if let Some(scan_id) = self.scan_id.take() {
            unlock(&self.store, &self.tenant, &scan_id).await;
        }
    }

    /// Marks what is held as still in use, so that neither is taken to belong to a scan that
    /// died however long the scan runs (a task has no request deadline).
    async fn keep(&self) {
        if let Some(scan_id) = &self.scan_id {
            let kept = sqlx::query("UPDATE scan_locks SET started_at = $1 WHERE tenant_id = $2 AND scan_id = $3")
                .bind(now_ms())
                .bind(&self.tenant)
                .bind(scan_id)
                .execute(self.store.pool())
                .await;
            if let Err(e) = kept {
                tracing::warn!("keeping the scan lock failed (it goes stale 15 minutes after its last mark): {e}");
            }
        }
        if let Some(claim) = &self.claim {
            idempotency::keep(&self.store, claim).await;
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let (scan_id, claim) = (self.scan_id.take(), self.claim.take());
        if scan_id.is_none() && claim.is_none() {
            return;
        }
        let (store, tenant) = (self.store.clone(), std::mem::take(&mut self.tenant));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Some(scan_id) = scan_id {
                    unlock(&store, &tenant, &scan_id).await;
                }
                if let Some(claim) = claim {
                    idempotency::abandon(&store, &claim).await;
                }
            });
        }
    }
}

/// Takes the tenant's scan lock (one scan at a time) unless another scan holds it; a lock older
/// than [`STALE_LOCK_MS`] is taken over.
async fn lock(tx: &mut Tx, tenant: &str, scan_id: &str) -> Result<bool, sqlx::Error> {
    let now = now_ms();
    sqlx::query("DELETE FROM scan_locks WHERE tenant_id = $1 AND started_at < $2")
        .bind(tenant)
        .bind(now - STALE_LOCK_MS)
        .execute(&mut **tx)
        .await?;
    let taken = sqlx::query(
        "INSERT INTO scan_locks (tenant_id, scan_id, started_at) VALUES ($1, $2, $3) ON CONFLICT (tenant_id) DO NOTHING",
    )
    .bind(tenant)
    .bind(scan_id)
    .bind(now)
    .execute(&mut **tx)
    .await?
    .rows_affected()
        == 1;
    Ok(taken)
}

async fn unlock(store: &Store, tenant: &str, scan_id: &str) {
    if let Err(e) = sqlx::query("DELETE FROM scan_locks WHERE tenant_id = $1 AND scan_id = $2")
        .bind(tenant)
        .bind(scan_id)
        .execute(store.pool())
        .await
    {
        tracing::warn!("releasing the scan lock failed (it goes stale in 15 minutes): {e}");
    }
}

async fn run(
    cx: &mut Context,
    chosen: &[&Source],
    http: &reqwest::Client,
    scan_id: &str,
    held: &Held,
) -> Result<ScanReport, E> {
    let op = cx.op;
    let started_at = Utc::now();
    let tenant = cx.caller.tenant.clone();
    let config = scoring::current_in(cx.tx.get::<E>().await?, &tenant)
        .await
        .map_err(|e| op.fault("reading the configuration", e))?;
    cx.tx.commit_step::<E>().await?;
    let mut results = Vec::new();
    let total = chosen.len() as f64;
    for source in chosen {
        let message = format!("scanning {} ({} of {})", source.name, results.len() + 1, chosen.len());
        cx.progress(results.len() as f64, Some(total), Some(&message)).await;
        let fetched_at = Utc::now();
        let mut result =
            ScanSourceResult { name: source.name.clone(), fetched: 0, new: 0, duplicates: 0, failed: 0, error: None };
        match sources::fetch(source, http, fetched_at).await {
            Err(reason) => {
                tracing::warn!(scan = scan_id, source = %source.name, "lead source failed: {reason}");
                result.error = Some(reason);
            }
            Ok(found) => {
                for reason in &found.failed {
                    tracing::info!(scan = scan_id, source = %source.name, "posting skipped: {reason}");
                }
                result.failed = found.failed.len() as i64;
                result.fetched = (found.postings.len() + found.failed.len()) as i64;
                let tx = cx.tx.get::<E>().await?;
                for posting in &found.postings {
                    match leads::store_posting(tx, &tenant, &source.name, posting, &config, fetched_at)
                        .await
                        .map_err(|e| op.fault("storing a lead", e))?
                    {
                        Found::New => result.new += 1,
                        Found::Duplicate => result.duplicates += 1,
                    }
                }
                cx.tx.commit_step::<E>().await?;
            }
        }
        results.push(result);
        held.keep().await;
    }
    cx.progress(total, Some(total), Some("every source scanned")).await;
    let totals = results.iter().fold(ScanTotals { fetched: 0, new: 0, duplicates: 0, failed: 0 }, |t, r| ScanTotals {
        fetched: t.fetched + r.fetched,
        new: t.new + r.new,
        duplicates: t.duplicates + r.duplicates,
        failed: t.failed + r.failed,
    });
    tracing::info!(
        scan = scan_id,
        new = totals.new,
        duplicates = totals.duplicates,
        failed = totals.failed,
        "scan finished"
    );
    Ok(ScanReport { scan_id: scan_id.into(), started_at, finished_at: Utc::now(), sources: results, totals })
}
