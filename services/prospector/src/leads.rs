//! Leads: stored postings with their score, listed with filters, read with the full breakdown,
//! moved through the LeadStatus state machine, found by scans and rescored when the scoring
//! configuration changes.

use chrono::{DateTime, Utc};
use prospector_api::prospector::errors;
use prospector_api::prospector::models::{self, Lead, LeadDetail, LeadScore, LeadStatus, ScoreBreakdown, ScoreSignals};
use runtime::Context;
use sqlx::Row;
use sqlx::any::AnyRow;
use support::Problem;

use crate::engine::{self, Scored};
use crate::posting::Posting;
use crate::scoring;
use runtime::OperationFault;
use runtime::store::{Nullable, Store, Tx, now_ms, to_time};

/// Columns every lead read selects, in the order [`Stored::from_row`] expects.
pub const COLUMNS: &str = "id, posting, status, tags, breakdown, score, confidence, created_at, updated_at, fetched_at";

/// A lead as stored.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: String,
    pub posting: Posting,
    pub status: LeadStatus,
    pub tags: Vec<String>,
    pub breakdown: ScoreBreakdown,
    pub composite: f64,
    pub confidence: f64,
    pub created_at: i64,
    pub updated_at: i64,
    pub fetched_at: i64,
}

impl Stored {
    /// Reads a row selected with [`COLUMNS`]. Stored JSON is written by this module only; a row
    /// that no longer parses is a fault, reported by the caller.
    pub fn from_row(r: &AnyRow) -> Result<Stored, String> {
        let id: String = r.get(0);
        let posting = serde_json::from_str(&r.get::<String, _>(1)).map_err(|e| format!("lead {id} posting: {e}"))?;
        let status = LeadStatus::parse(&r.get::<String, _>(2)).ok_or_else(|| format!("lead {id}: bad status"))?;
        let tags = serde_json::from_str(&r.get::<String, _>(3)).map_err(|e| format!("lead {id} tags: {e}"))?;
        let breakdown =
            serde_json::from_str(&r.get::<String, _>(4)).map_err(|e| format!("lead {id} breakdown: {e}"))?;
        Ok(Stored {
            id,
            posting,
            status,
            tags,
            breakdown,
            composite: r.get(5),
            confidence: r.get(6),
            created_at: r.get(7),
            updated_at: r.get(8),
            fetched_at: r.get(9),
        })
    }

    fn score(&self) -> LeadScore {
        let s = &self.breakdown.signals;
        let values =
            [s.skill_match.value, s.budget.value, s.client_history.value, s.competition.value, s.timeline.value];
        lead_score(self.composite, self.confidence, values)
    }

    /// The list view.
    pub fn lead(&self) -> Lead {
        let listed = Listed {
            id: self.id.clone(),
            posting: self.posting.clone(),
            status: self.status,
            tags: self.tags.clone(),
            score: self.score(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        };
        listed.lead()
    }
}

/// A lead's score as the API shows it: the composite, its confidence and each signal's value
/// (skill match, budget, client history, competition, timeline).
pub(crate) fn lead_score(composite: f64, confidence: f64, values: [f64; 5]) -> LeadScore {
    let [skill_match, budget, client_history, competition, timeline] = values;
    LeadScore {
        composite,
        confidence,
        signals: ScoreSignals { skill_match, budget, client_history, competition, timeline },
    }
}

/// What a list shows of a lead, read from a row selected with [`COLUMNS`]: of the stored score
/// breakdown only each signal's value, so the explanation sentences (most of its text) are
/// skipped, never copied.
pub(crate) struct Listed {
    id: String,
    posting: Posting,
    status: LeadStatus,
    tags: Vec<String>,
    score: LeadScore,
    created_at: i64,
    updated_at: i64,
}

/// The signal values of a stored [`ScoreBreakdown`].
#[derive(serde::Deserialize)]
struct ListedBreakdown {
    signals: ListedSignals,
}

#[derive(serde::Deserialize)]
struct ListedSignals {
    skill_match: ListedSignal,
    budget: ListedSignal,
    client_history: ListedSignal,
    competition: ListedSignal,
    timeline: ListedSignal,
}

#[derive(serde::Deserialize)]
struct ListedSignal {
    value: f64,
}

impl Listed {
    pub(crate) fn from_row(r: &AnyRow) -> Result<Listed, String> {
        let id: String = r.get(0);
        let posting = serde_json::from_str(r.get::<&str, _>(1)).map_err(|e| format!("lead {id} posting: {e}"))?;
        let status = LeadStatus::parse(r.get::<&str, _>(2)).ok_or_else(|| format!("lead {id}: bad status"))?;
        let tags = serde_json::from_str(r.get::<&str, _>(3)).map_err(|e| format!("lead {id} tags: {e}"))?;
        let b: ListedBreakdown =
            serde_json::from_str(r.get::<&str, _>(4)).map_err(|e| format!("lead {id} breakdown: {e}"))?;
        let s = b.signals;
        let values =
            [s.skill_match.value, s.budget.value, s.client_history.value, s.competition.value, s.timeline.value];
        let score = lead_score(r.get(5), r.get(6), values);
        Ok(Listed { id, posting, status, tags, score, created_at: r.get(7), updated_at: r.get(8) })
    }

    /// The list view.
    pub(crate) fn lead(self) -> Lead {
        let p = self.posting;
        Lead {
            id: self.id,
            job_title: p.title,
            platform: p.platform,
            url: p.url,
            description: p.description,
            skills: p.skills,
            budget: p.budget,
            client: p.client,
            proposals_count: p.proposals_count,
            posted_at: p.posted_at,
            score: self.score,
            status: self.status,
            tags: self.tags,
            created_at: to_time(self.created_at),
            updated_at: to_time(self.updated_at),
        }
    }
}

impl Stored {
    /// The detail view, with the breakdown.
    pub fn detail(&self) -> LeadDetail {
        let l = self.lead();
        LeadDetail {
            id: l.id,
            job_title: l.job_title,
            platform: l.platform,
            url: l.url,
            description: l.description,
            skills: l.skills,
            budget: l.budget,
            client: l.client,
            proposals_count: l.proposals_count,
            posted_at: l.posted_at,
            score: l.score,
            breakdown: self.breakdown.clone(),
            status: l.status,
            tags: l.tags,
            created_at: l.created_at,
            updated_at: l.updated_at,
        }
    }
}

/// Statuses in which a lead is still open: scans refresh their posting and config changes
/// rescore them. Closed leads keep the data their outcome was decided on (what backtests replay).
pub const OPEN: [LeadStatus; 4] =
    [LeadStatus::New, LeadStatus::Reviewing, LeadStatus::Shortlisted, LeadStatus::Dismissed];

pub(crate) fn open_list() -> String {
    OPEN.iter().map(|s| format!("'{}'", s.as_str())).collect::<Vec<_>>().join(", ")
}

/// `LIKE` pattern matching `needle` anywhere, with `\` as the escape character.
pub(crate) fn contains_pattern(needle: &str) -> String {
    let mut p = String::from("%");
    for c in needle.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// Reads one lead of `tenant` inside `tx`.
pub async fn load(tx: &mut Tx, tenant: &str, id: &str) -> Result<Option<Stored>, String> {
    fetch(&mut **tx, tenant, id).await
}

async fn fetch<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(
    exec: E,
    tenant: &str,
    id: &str,
) -> Result<Option<Stored>, String> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM leads WHERE tenant_id = $1 AND id = $2")))
        .bind(tenant)
        .bind(id)
        .fetch_optional(exec)
        .await
        .map_err(|e| e.to_string())?;
    row.as_ref().map(Stored::from_row).transpose()
}

/// `GET /leads/{id}`.
pub async fn get(store: &Store, cx: &mut Context, id: &str) -> Result<LeadDetail, errors::GetLeadError> {
    let (caller, op) = (&cx.caller, cx.op);
    match fetch(store.readers(), &caller.tenant, id).await.map_err(|e| op.fault("reading", e))? {
        Some(lead) => Ok(lead.detail()),
        None => Err(errors::GetLeadError::NotFound(missing("lead", id))),
    }
}

/// The problem for an object this tenant does not have.
pub fn missing(what: &str, id: &str) -> Problem {
    Problem::new(format!("no {what} {id}")).with("id", id)
}

/// The conflict answered for a move the state machine does not allow.
pub fn bad_move<S: std::fmt::Display + Copy>(what: &str, from: S, to: S, allowed: &[S]) -> Problem {
    let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    let listed = if allowed.is_empty() { "none: it is final".to_string() } else { allowed.join(", ") };
    Problem::new(format!("a {what} cannot move from {from} to {to}; allowed from {from}: {listed}"))
        .with("field", "status")
        .with("value", to.to_string())
        .with("current", from.to_string())
        .with("allowed", allowed)
}

/// Sets a lead's status inside `tx` if the state machine allows it (the same status is a no-op).
/// The inner error is the conflict: a move the state machine does not list, or a lead whose status
/// a concurrent request changed since `lead` was read (the update is conditional on it, so two
/// moves at once cannot both apply); the outer one a storage fault.
pub async fn move_status(
    tx: &mut Tx,
    lead: &Stored,
    to: LeadStatus,
    now: i64,
) -> Result<Result<(), Problem>, sqlx::Error> {
    if lead.status == to {
        return Ok(Ok(()));
    }
    if !lead.status.can_move_to(to) {
        return Ok(Err(bad_move("lead", lead.status, to, lead.status.next_states())));
    }
    let outcome = match to {
        LeadStatus::Won => Some("won"),
        LeadStatus::Lost => Some("lost"),
        _ => None,
    };
    let moved = sqlx::query(
        "UPDATE leads SET status = $1, outcome = COALESCE($4, outcome), updated_at = $2, revision = revision + 1 \
         WHERE id = $3 AND status = $5",
    )
    .bind(to.as_str())
    .bind(now)
    .bind(&lead.id)
    .bind(Nullable(outcome))
    .bind(lead.status.as_str())
    .execute(&mut **tx)
    .await?;
    if moved.rows_affected() == 0 {
        return Ok(Err(Problem::new(format!(
            "lead {} changed while this request ran (it is no longer {}); read it again",
            lead.id, lead.status
        ))
        .with("field", "status")
        .with("value", to.as_str())));
    }
    Ok(Ok(()))
}

/// `PATCH /leads/{id}`.
pub async fn update(cx: &mut Context, input: models::UpdateLeadInput) -> Result<Lead, errors::UpdateLeadError> {
    let op = cx.op;
    use errors::UpdateLeadError as E;
    let (tx, caller, _) = cx.parts::<errors::UpdateLeadError>().await?;
    let lead = load(&mut *tx, &caller.tenant, &input.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| E::NotFound(missing("lead", &input.id)))?;
    let now = now_ms();
    if let Some(to) = input.status.filter(|s| *s != lead.status) {
        if to == LeadStatus::ProposalSent {
            return Err(E::Conflict(
                Problem::new(
                    "proposal_sent is set by submitting a proposal (POST /proposals/{id}/submit), not by update_lead",
                )
                .with("field", "status")
                .with("value", to.as_str()),
            ));
        }
        move_status(&mut *tx, &lead, to, now)
            .await
            .map_err(|e| op.fault("moving the lead", e))?
            .map_err(E::Conflict)?;
    }
    if let Some(tags) = &input.tags {
        let mut unique: Vec<&String> = Vec::new();
        for t in tags {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        sqlx::query("UPDATE leads SET tags = $1, updated_at = $2, revision = revision + 1 WHERE id = $3")
            .bind(serde_json::to_string(&unique).unwrap_or_else(|_| "[]".into()))
            .bind(now)
            .bind(&lead.id)
            .execute(&mut **tx)
            .await
            .map_err(|e| op.fault("updating tags", e))?;
    }
    let lead = load(&mut *tx, &caller.tenant, &input.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| op.fault("reading", "lead vanished"))?;
    Ok(lead.lead())
}

/// Every column a lead derives from its posting, computed in one place: the insert and the
/// refresh of a posting bind all of them, so no write of a posting can leave one stale.
struct PostingColumns<'a> {
    title: &'a str,
    posting: String,
    /// What a backtest replays of the lead ([`crate::replay`]).
    replay: Vec<u8>,
    /// Text `q` searches: title, description and skills, lowercased.
    search_text: String,
    /// What the `budget` sort key orders by: the budget maximum (or its only figure).
    budget_value: Option<f64>,
    posted_at: Option<i64>,
}

impl<'a> PostingColumns<'a> {
    /// The columns of lead `id`, found at `created_at`, of posting `p` fetched at `fetched_at`.
    fn of(p: &'a Posting, id: &str, fetched_at: i64, created_at: i64) -> Self {
        PostingColumns {
            title: &p.title,
            posting: serde_json::to_string(p).unwrap_or_default(),
            replay: crate::replay::encode(id, fetched_at, created_at, &p.scoring_input()),
            search_text: format!("{}\n{}\n{}", p.title, p.description.as_deref().unwrap_or(""), p.skills.join(" "))
                .to_lowercase(),
            budget_value: p.budget.as_ref().and_then(|b| b.max.or(b.min)),
            posted_at: p.posted_at.map(|t| t.timestamp_millis()),
        }
    }
}

/// What storing one posting did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A new lead.
    New,
    /// The platform job was already a lead (refreshed when still open).
    Duplicate,
}

/// Stores one fetched posting for `tenant`: a new lead scored with `config`, or, for a job
/// already known, a refresh of its posting and score while the lead is still open.
pub async fn store_posting(
    tx: &mut Tx,
    tenant: &str,
    source: &str,
    posting: &Posting,
    config: &models::ScoringConfig,
    fetched_at: DateTime<Utc>,
) -> Result<Found, sqlx::Error> {
    let scored = engine::score(posting, &config.weights, &config.parameters, config.version, fetched_at);
    let now = now_ms();
    let existing = sqlx::query(
        "SELECT id, status, created_at FROM leads WHERE tenant_id = $1 AND platform = $2 AND external_id = $3",
    )
    .bind(tenant)
    .bind(&posting.platform)
    .bind(&posting.id)
    .fetch_optional(&mut **tx)
    .await?;
    if let Some(row) = existing {
        let id: String = row.get(0);
        let status = LeadStatus::parse(&row.get::<String, _>(1));
        if status.is_some_and(|s| OPEN.contains(&s)) {
            let c = PostingColumns::of(posting, &id, fetched_at.timestamp_millis(), row.get(2));
            sqlx::query(
                "UPDATE leads SET job_title = $1, posting = $2, replay = $3, fetched_at = $4, search_text = $5, \
                 budget_value = $6, posted_at = $7, score = $8, confidence = $9, breakdown = $10, config_version = $11, \
                 updated_at = $12, revision = revision + 1 WHERE id = $13",
            )
            .bind(c.title)
            .bind(c.posting)
            .bind(c.replay)
            .bind(fetched_at.timestamp_millis())
            .bind(c.search_text)
            .bind(Nullable(c.budget_value))
            .bind(Nullable(c.posted_at))
            .bind(scored.score.composite)
            .bind(scored.score.confidence)
            .bind(serde_json::to_string(&scored.breakdown).unwrap_or_default())
            .bind(config.version)
            .bind(now)
            .bind(&id)
            .execute(&mut **tx)
            .await?;
        }
        return Ok(Found::Duplicate);
    }
    insert(tx, tenant, source, posting, &scored, config.version, fetched_at, LeadStatus::INITIAL, now).await?;
    Ok(Found::New)
}

/// Inserts a lead row (scans, and the benchmark's and tests' seeding).
#[allow(clippy::too_many_arguments)]
pub async fn insert(
    tx: &mut Tx,
    tenant: &str,
    source: &str,
    posting: &Posting,
    scored: &Scored,
    config_version: i64,
    fetched_at: DateTime<Utc>,
    status: LeadStatus,
    now: i64,
) -> Result<String, sqlx::Error> {
    let id = format!("lead_{}", uuid::Uuid::now_v7().simple());
    let c = PostingColumns::of(posting, &id, fetched_at.timestamp_millis(), now);
    sqlx::query(
        "INSERT INTO leads (id, tenant_id, source, platform, external_id, job_title, posting, replay, fetched_at, \
         search_text, budget_value, posted_at, status, outcome, tags, score, confidence, breakdown, config_version, \
         created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $19, $8, $9, $10, $11, $12, $18, '[]', $13, $14, $15, $16, $17, $17)",
    )
    .bind(&id)
    .bind(tenant)
    .bind(source)
    .bind(&posting.platform)
    .bind(&posting.id)
    .bind(c.title)
    .bind(c.posting)
    .bind(fetched_at.timestamp_millis())
    .bind(c.search_text)
    .bind(Nullable(c.budget_value))
    .bind(Nullable(c.posted_at))
    .bind(status.as_str())
    .bind(scored.score.composite)
    .bind(scored.score.confidence)
    .bind(serde_json::to_string(&scored.breakdown).unwrap_or_default())
    .bind(config_version)
    .bind(now)
    .bind(Nullable(match status {
        LeadStatus::Won => Some("won"),
        LeadStatus::Lost => Some("lost"),
        _ => None,
    }))
    .bind(c.replay)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

/// Leads whose replay record [`fill_replays`] writes per transaction.
const FILL_BATCH: i64 = 1000;

/// Writes the replay record ([`crate::replay`]) of every lead without one: those stored before
/// the column existed, or by a release that did not write it. Batches of [`FILL_BATCH`] leads,
/// each in a transaction of its own, in the order of their ids, so a fill that stops (a restart)
/// goes on where it stopped; the lead's `scoring_input` (the record's JSON predecessor) is
/// emptied as its record is written. A lead whose posting does not parse keeps none (a backtest
/// over it then answers an error). Returns how many records were written.
pub async fn fill_replays(store: &Store) -> Result<u64, sqlx::Error> {
    let (mut after, mut filled) = (String::new(), 0);
    loop {
        let mut tx = store.begin().await?;
        let leads: Vec<(String, String, i64, i64)> = sqlx::query_as(
            "SELECT id, posting, fetched_at, created_at FROM leads WHERE replay IS NULL AND id > $1 ORDER BY id LIMIT $2",
        )
        .bind(&after)
        .bind(FILL_BATCH)
        .fetch_all(&mut *tx)
        .await?;
        let Some((last, ..)) = leads.last() else { return tx.commit().await.map(|()| filled) };
        after = last.clone();
        let records: Vec<(&String, Vec<u8>)> = leads
            .iter()
            .filter_map(|(id, posting, fetched_at, created_at)| {
                let posting = serde_json::from_str::<Posting>(posting).ok()?;
                Some((id, crate::replay::encode(id, *fetched_at, *created_at, &posting.scoring_input())))
            })
            .collect();
        if records.is_empty() {
            tx.commit().await?;
            continue;
        }
        // One statement per batch: the ids and records as a table of values (whose columns both
        // backends name `column1`, `column2`), each lead found by its key.
        let values = (0..records.len()).map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2)).collect::<Vec<_>>();
        let sql = format!(
            "UPDATE leads SET replay = filled.column2, scoring_input = NULL, revision = revision + 1 \
             FROM (VALUES {}) AS filled WHERE leads.id = filled.column1 AND leads.replay IS NULL",
            values.join(", ")
        );
        let mut update = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (id, record) in &records {
            update = update.bind(*id).bind(record.as_slice());
        }
        filled += update.execute(&mut *tx).await?.rows_affected();
        tx.commit().await?;
    }
}

/// Rescores the tenant's open leads scored with an older configuration than the current one,
/// in batches (each its own transaction, so requests interleave). A lead keeps the moment it was
/// fetched, so a rescore changes only what the configuration changes.
pub async fn rescore(store: &Store, tenant: &str) -> Result<u64, String> {
    let config = scoring::current(store, tenant).await.map_err(|e| e.to_string())?;
    let mut done = 0u64;
    loop {
        let mut tx = store.begin().await.map_err(|e| e.to_string())?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM leads WHERE tenant_id = $1 AND config_version < $2 AND status IN ({}) ORDER BY id LIMIT 500",
            open_list()
        )))
        .bind(tenant)
        .bind(config.version)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| e.to_string())?;
        if rows.is_empty() {
            tx.commit().await.map_err(|e| e.to_string())?;
            return Ok(done);
        }
        let now = now_ms();
        for r in &rows {
            let lead = Stored::from_row(r)?;
            let s = engine::score(
                &lead.posting,
                &config.weights,
                &config.parameters,
                config.version,
                to_time(lead.fetched_at),
            );
            sqlx::query("UPDATE leads SET score = $1, confidence = $2, breakdown = $3, config_version = $4, updated_at = $5, revision = revision + 1 WHERE id = $6 AND config_version < $4")
                .bind(s.score.composite)
                .bind(s.score.confidence)
                .bind(serde_json::to_string(&s.breakdown).unwrap_or_default())
                .bind(config.version)
                .bind(now)
                .bind(&lead.id)
                .execute(&mut *tx)
                .await
                .map_err(|e| e.to_string())?;
            done += 1;
        }
        tx.commit().await.map_err(|e| e.to_string())?;
    }
}
