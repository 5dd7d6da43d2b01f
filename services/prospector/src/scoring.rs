//! The scoring configuration: weights of the five signals and the parameters of their
//! computation, versioned per tenant. Every update stores a new version (leads name the version
//! they were scored with); a tenant that never set one starts from the defaults as version 1.

use futures_util::TryStreamExt;
use generated::prospector::errors;
use generated::prospector::models::{self, ScoringConfig, ScoringParameters, SignalWeights};
use sqlx::Row;
use support::Problem;

use runtime::auth::Caller;
use runtime::fault;
use runtime::store::{Nullable, Store, Tx, now_ms, to_time};

/// The configuration a tenant starts from.
pub fn defaults() -> (SignalWeights, ScoringParameters) {
    (
        SignalWeights { skill_match: 30.0, budget: 25.0, client_history: 20.0, competition: 15.0, timeline: 10.0 },
        ScoringParameters {
            skills: Vec::new(),
            budget_floor: 200.0,
            budget_target: 3000.0,
            currency: "USD".into(),
            max_competition: 50,
            stale_after_days: 14,
            evidence_prior: 5,
            top_tier_min_confidence: 0.5,
        },
    )
}

/// Rules the schema cannot state: a usable weighting and an ordered budget range. Shared by
/// updates and backtests.
pub fn check(weights: &SignalWeights, parameters: &ScoringParameters) -> Result<(), Problem> {
    let w = [weights.skill_match, weights.budget, weights.client_history, weights.competition, weights.timeline];
    if w.iter().all(|x| *x == 0.0) {
        return Err(Problem::new("weights must not all be zero")
            .with("field", "weights")
            .with("value", serde_json::to_value(weights).unwrap_or_default()));
    }
    if parameters.budget_floor > parameters.budget_target {
        return Err(Problem::new(format!(
            "budget_floor ({}) must not exceed budget_target ({})",
            parameters.budget_floor, parameters.budget_target
        ))
        .with("field", "parameters.budget_floor")
        .with("value", parameters.budget_floor));
    }
    Ok(())
}

async fn latest(tx: &mut Tx, tenant: &str) -> Result<Option<ScoringConfig>, sqlx::Error> {
    let row = sqlx::query("SELECT version, weights, parameters, updated_at FROM scoring_configs WHERE tenant_id = $1 ORDER BY version DESC LIMIT 1")
        .bind(tenant)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.map(|r| {
        let (dw, dp) = defaults();
        ScoringConfig {
            version: r.get(0),
            weights: serde_json::from_str(&r.get::<String, _>(1)).unwrap_or(dw),
            parameters: serde_json::from_str(&r.get::<String, _>(2)).unwrap_or(dp),
            updated_at: to_time(r.get(3)),
        }
    }))
}

async fn insert(
    tx: &mut Tx,
    tenant: &str,
    by: &str,
    version: i64,
    weights: &SignalWeights,
    parameters: &ScoringParameters,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO scoring_configs (tenant_id, version, weights, parameters, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(tenant)
        .bind(version)
        .bind(serde_json::to_string(weights).unwrap_or_default())
        .bind(serde_json::to_string(parameters).unwrap_or_default())
        .bind(now_ms())
        .bind(by)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The tenant's current configuration (the defaults, stored as version 1, on first use).
pub async fn current(store: &Store, tenant: &str) -> Result<ScoringConfig, sqlx::Error> {
    let mut tx = store.begin().await?;
    let config = current_in(&mut tx, tenant).await?;
    tx.commit().await?;
    Ok(config)
}

/// As [`current`], inside the caller's transaction.
pub async fn current_in(tx: &mut Tx, tenant: &str) -> Result<ScoringConfig, sqlx::Error> {
    match latest(tx, tenant).await? {
        Some(c) => Ok(c),
        None => {
            let (w, p) = defaults();
            insert(tx, tenant, "defaults", 1, &w, &p).await?;
            latest(tx, tenant).await?.ok_or(sqlx::Error::RowNotFound)
        }
    }
}

/// The caller's current configuration.
pub async fn get(store: &Store, caller: &Caller) -> Result<ScoringConfig, errors::GetScoringConfigError> {
    current(store, &caller.tenant).await.map_err(|e| fault("scoring_config", "reading", e))
}

/// Stores a new version; with `expected_version`, only if that is still the current one.
pub async fn update(
    store: &Store,
    caller: &Caller,
    input: models::UpdateScoringConfigInput,
) -> Result<ScoringConfig, errors::UpdateScoringConfigError> {
    use errors::UpdateScoringConfigError as E;
    check(&input.weights, &input.parameters).map_err(E::ValidationError)?;
    let mut tx = store.begin().await.map_err(|e| fault("scoring_config", "begin", e))?;
    let current = latest(&mut tx, &caller.tenant)
        .await
        .map_err(|e| fault("scoring_config", "reading", e))?
        .map(|c| c.version)
        .unwrap_or(1);
    if let Some(expected) = input.expected_version.filter(|e| *e != current) {
        return Err(E::Conflict(
            Problem::new(format!("The scoring configuration is at version {current}, not {expected}; read it again."))
                .with("current_version", current),
        ));
    }
    // A concurrent update that took this version makes the insert fail: that is a conflict too.
    if let Err(e) =
        insert(&mut tx, &caller.tenant, &caller.subject, current + 1, &input.weights, &input.parameters).await
    {
        return Err(match e.as_database_error().map(|d| d.is_unique_violation()) {
            Some(true) => E::Conflict(
                Problem::new("The scoring configuration changed concurrently; read it again.")
                    .with("current_version", current + 1),
            ),
            _ => fault("scoring_config", "storing", e),
        });
    }
    let config = latest(&mut tx, &caller.tenant)
        .await
        .map_err(|e| fault("scoring_config", "reading", e))?
        .ok_or_else(|| fault("scoring_config", "reading", "no row"))?;
    tx.commit().await.map_err(|e| fault("scoring_config", "commit", e))?;
    Ok(config)
}

/// Default k of precision@k and number of tiers of a backtest.
pub const DEFAULT_TOP_K: i64 = 25;
pub const DEFAULT_TIERS: i64 = 4;

/// `POST /scoring/backtest`: replays the tenant's leads with a known outcome, each from its
/// posting as last fetched and scored as of that moment, under the live and the proposed
/// configuration. Read-only; the scoring runs off the async workers.
pub async fn backtest(
    store: &Store,
    caller: &Caller,
    input: models::BacktestInput,
) -> Result<models::BacktestReport, errors::RunBacktestError> {
    use crate::backtest::{self, Case, Point, Settings};
    use crate::engine;
    use crate::posting::Posting;
    use errors::RunBacktestError as E;
    check(&input.weights, &input.parameters).map_err(E::ValidationError)?;
    if let (Some(since), Some(until)) = (input.since, input.until)
        && since >= until
    {
        return Err(E::ValidationError(
            Problem::new("since must be before until").with("field", "since").with("value", since.to_rfc3339()),
        ));
    }
    let live = current(store, &caller.tenant).await.map_err(|e| fault("backtest", "reading the configuration", e))?;
    let settings = Settings {
        top_k: input.top_k.unwrap_or(DEFAULT_TOP_K).max(1) as usize,
        tiers: input.tiers.unwrap_or(DEFAULT_TIERS).max(2) as usize,
        current_min_confidence: live.parameters.top_tier_min_confidence,
        proposed_min_confidence: input.parameters.top_tier_min_confidence,
        current_config_version: live.version,
    };
    // The stored postings stream from the database in chunks to a blocking task that parses and
    // scores each one as it arrives, keeping only its two points: memory holds a few chunks of
    // postings, never all of them, and reading overlaps scoring.
    let (since, until) = (input.since.map(|t| t.timestamp_millis()), input.until.map(|t| t.timestamp_millis()));
    let (chunks, mut arriving) = tokio::sync::mpsc::channel::<Vec<Stored>>(BACKTEST_CHUNKS_IN_FLIGHT);
    let scoring = tokio::task::spawn_blocking(move || {
        // Composite and confidence only: the explanation sentences are most of a score's cost.
        let point = |(composite, confidence): (f64, f64)| Point { composite, confidence };
        let mut cases: Vec<Case> = Vec::new();
        while let Some(chunk) = arriving.blocking_recv() {
            for Stored { id, posting, fetched_at, won, created_at } in chunk {
                let posting: Posting = serde_json::from_str(&posting).map_err(|e| format!("lead {id}: {e}"))?;
                let at = to_time(fetched_at);
                cases.push(Case {
                    current: point(engine::point(&posting, &live.weights, &live.parameters, at)),
                    proposed: point(engine::point(&posting, &input.weights, &input.parameters, at)),
                    id,
                    won,
                    found_at: to_time(created_at),
                });
            }
        }
        Ok::<_, String>(backtest::evaluate(&cases, &settings))
    });
    let mut rows = sqlx::query(
        "SELECT id, posting, fetched_at, outcome, created_at FROM leads WHERE tenant_id = $1 AND outcome IS NOT NULL \
         AND ($2 IS NULL OR created_at >= $2) AND ($3 IS NULL OR created_at < $3)",
    )
    .bind(&caller.tenant)
    .bind(Nullable(since))
    .bind(Nullable(until))
    .fetch(store.readers());
    let mut chunk = Vec::with_capacity(BACKTEST_CHUNK);
    while let Some(r) = rows.try_next().await.map_err(|e| fault("backtest", "reading leads", e))? {
        chunk.push(Stored {
            id: r.get(0),
            posting: r.get(1),
            fetched_at: r.get(2),
            won: r.get::<String, _>(3) == "won",
            created_at: r.get(4),
        });
        // A send fails only once the scoring task has stopped on a bad posting: its error follows.
        if chunk.len() == BACKTEST_CHUNK
            && chunks.send(std::mem::replace(&mut chunk, Vec::with_capacity(BACKTEST_CHUNK))).await.is_err()
        {
            break;
        }
    }
    drop(rows);
    if !chunk.is_empty() {
        let _ = chunks.send(chunk).await;
    }
    drop(chunks);
    scoring.await.map_err(|e| fault("backtest", "computing", e))?.map_err(|e| fault("backtest", "reading leads", e))
}

/// Stored postings per chunk sent from the database reader to the backtest's scoring task.
const BACKTEST_CHUNK: usize = 2048;
/// Chunks read ahead of the scoring task: the most raw postings a backtest holds at once is
/// `(BACKTEST_CHUNKS_IN_FLIGHT + 2) × BACKTEST_CHUNK`.
const BACKTEST_CHUNKS_IN_FLIGHT: usize = 4;

/// A historical lead as stored: its posting still JSON text.
struct Stored {
    id: String,
    posting: String,
    fetched_at: i64,
    won: bool,
    created_at: i64,
}
