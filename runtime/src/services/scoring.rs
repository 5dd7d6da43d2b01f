//! The scoring configuration: weights of the five signals and the parameters of their
//! computation, versioned per tenant. Every update stores a new version (leads name the version
//! they were scored with); a tenant that never set one starts from the defaults as version 1.

use generated::prospector::errors;
use generated::prospector::models::{self, ScoringConfig, ScoringParameters, SignalWeights};
use generated::support::Problem;
use sqlx::Row;

use crate::auth::Caller;
use crate::services::fault;
use crate::store::{Store, Tx, now_ms, to_time};

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
pub async fn get(store: &Store, caller: &Caller) -> Result<ScoringConfig, errors::GetScoringConfigError> {
    let mut tx = store.begin().await.map_err(|e| fault("scoring_config", "begin", e))?;
    let config = match latest(&mut tx, &caller.tenant).await.map_err(|e| fault("scoring_config", "reading", e))? {
        Some(c) => c,
        None => {
            let (w, p) = defaults();
            insert(&mut tx, &caller.tenant, "defaults", 1, &w, &p)
                .await
                .map_err(|e| fault("scoring_config", "storing defaults", e))?;
            latest(&mut tx, &caller.tenant)
                .await
                .map_err(|e| fault("scoring_config", "reading", e))?
                .ok_or_else(|| fault("scoring_config", "reading", "no row"))?
        }
    };
    tx.commit().await.map_err(|e| fault("scoring_config", "commit", e))?;
    Ok(config)
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
