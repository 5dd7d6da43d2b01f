//! The scoring configuration: weights of the five signals and the parameters of their
//! computation, versioned per tenant. Every update stores a new version (leads name the version
//! they were scored with); a tenant that never set one starts from the defaults as version 1.

use prospector_api::prospector::errors;
use prospector_api::prospector::models::{self, ScoringConfig, ScoringParameters, SignalWeights};
use std::sync::Arc;

use runtime::Context;
use sqlx::Row;
use support::Problem;

use crate::backtest::{Case, Point};
use crate::engine;
use runtime::OperationFault;
use runtime::store::{Backend, Nullable, Store, Tx, now_ms, to_time};

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

/// Whether an insert of a version that already exists is a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// The defaults stored on first use, which two first requests of a tenant may store at once:
    /// the one kept is as good as the other (each then reads it).
    Fine,
    /// A new version taken by a concurrent update: the unique key decides, and the fault reporter
    /// answers the caller's conflict.
    Conflict,
}

/// Inserts a version.
async fn insert(
    tx: &mut Tx,
    tenant: &str,
    by: &str,
    (version, taken): (i64, Taken),
    weights: &SignalWeights,
    parameters: &ScoringParameters,
) -> Result<(), sqlx::Error> {
    let sql = match taken {
        Taken::Fine => {
            "INSERT INTO scoring_configs (tenant_id, version, weights, parameters, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING"
        }
        Taken::Conflict => {
            "INSERT INTO scoring_configs (tenant_id, version, weights, parameters, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)"
        }
    };
    sqlx::query(sql)
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
            insert(tx, tenant, "defaults", (1, Taken::Fine), &w, &p).await?;
            latest(tx, tenant).await?.ok_or(sqlx::Error::RowNotFound)
        }
    }
}

/// The caller's current configuration. The spec marks this `GET` as writing: a tenant's first
/// read stores the defaults as version 1, the version its leads then name.
pub async fn get(cx: &mut Context) -> Result<ScoringConfig, errors::GetScoringConfigError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::GetScoringConfigError>().await?;
    current_in(tx, &caller.tenant).await.map_err(|e| op.fault("reading", e))
}

/// The tenant's current configuration as a read sees it: the stored one, or the defaults a first
/// use would store as version 1.
async fn read(tx: &mut Tx, tenant: &str) -> Result<ScoringConfig, sqlx::Error> {
    match latest(tx, tenant).await? {
        Some(c) => Ok(c),
        None => {
            let (weights, parameters) = defaults();
            Ok(ScoringConfig { version: 1, weights, parameters, updated_at: chrono::Utc::now() })
        }
    }
}

/// Stores a new version; with `expected_version`, only if that is still the current one.
pub async fn update(
    cx: &mut Context,
    input: models::UpdateScoringConfigInput,
) -> Result<ScoringConfig, errors::UpdateScoringConfigError> {
    let op = cx.op;
    use errors::UpdateScoringConfigError as E;
    check(&input.weights, &input.parameters).map_err(E::ValidationError)?;
    let (tx, caller, _) = cx.parts::<errors::UpdateScoringConfigError>().await?;
    // Updates of one tenant's configuration take turns on its first version's row (versions are
    // never deleted, so every update locks the same row), so the version read below is the
    // latest on every backend: without `expected_version`, concurrent updates each store a version
    // of their own (the last one wins), as they do on SQLite, whose writers already take turns;
    // with it, all but the first answer 409.
    current_in(&mut *tx, &caller.tenant).await.map_err(|e| op.fault("reading", e))?;
    let first = "UPDATE scoring_configs SET updated_at = updated_at WHERE tenant_id = $1 \
                 AND version = (SELECT MIN(version) FROM scoring_configs WHERE tenant_id = $1)";
    sqlx::query(first).bind(&caller.tenant).execute(&mut **tx).await.map_err(|e| op.fault("taking its turn", e))?;
    let current = latest(&mut *tx, &caller.tenant).await.map_err(|e| op.fault("reading", e))?.map_or(1, |c| c.version);
    if let Some(expected) = input.expected_version.filter(|e| *e != current) {
        return Err(E::Conflict(
            Problem::new(format!("The scoring configuration is at version {current}, not {expected}; read it again."))
                .with("current_version", current),
        ));
    }
    // A concurrent update that took this version makes the insert break the unique key: the
    // fault reporter answers that as the conflict it is.
    let next = (current + 1, Taken::Conflict);
    insert(&mut *tx, &caller.tenant, &caller.subject, next, &input.weights, &input.parameters)
        .await
        .map_err(|e| op.fault("storing", e))?;
    let config = latest(&mut *tx, &caller.tenant)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| op.fault("reading", "no row"))?;
    Ok(config)
}

/// Default k of precision@k and number of tiers of a backtest.
pub const DEFAULT_TOP_K: i64 = 25;
pub const DEFAULT_TIERS: i64 = 4;

/// Historical leads as backtests replay them (the chunks of replay records as they were read),
/// kept per tenant and period while the tenant's leads are unchanged: a configuration is tuned by
/// running backtest after backtest over the same history, and reading it is most of each run.
///
/// A set is kept under the tenant's lead version (`lead_versions`, which a trigger advances in the
/// transaction of every change to its leads) read in the backtest's own snapshot, and used only by
/// a backtest that reads the same version in its snapshot: its leads are then exactly those the
/// database holds for it, so the report is the one a fresh read gives. At most
/// [`REPLAYS_KEPT`] bytes of records are kept over all sets (the oldest set goes first); a history
/// larger than that is read every time, in chunks, as before.
#[derive(Default)]
pub struct Replays {
    kept: std::sync::Mutex<Vec<(ReplayKey, Arc<Chunks>)>>,
}

/// Leads as they were read, a chunk at a time.
type Chunks = Vec<Chunk>;

impl std::fmt::Debug for Replays {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sets = self.kept.lock().map(|k| k.len()).unwrap_or(0);
        f.debug_struct("Replays").field("sets", &sets).finish()
    }
}

/// Bytes of replay records kept over every tenant and period, at most: 32 MiB, the records of
/// about 220,000 leads of the benchmark's history (about 150 bytes each; a lead is decoded again
/// at each run, which costs a tenth of reading it).
pub const REPLAYS_KEPT: usize = 32 << 20;

/// What a set of replayed leads answers for: a tenant, a period and the tenant's lead version.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ReplayKey {
    tenant: String,
    since: Option<i64>,
    until: Option<i64>,
    version: Option<i64>,
}

/// The bytes of the records of `chunks`.
fn bytes(chunks: &Chunks) -> usize {
    chunks.iter().map(Chunk::bytes).sum()
}

impl Replays {
    fn get(&self, key: &ReplayKey) -> Option<Arc<Chunks>> {
        let kept = self.kept.lock().ok()?;
        kept.iter().find(|(k, _)| k == key).map(|(_, leads)| leads.clone())
    }

    /// Keeps `leads` under `key`, in place of any set of the same tenant and period.
    fn keep(&self, key: ReplayKey, leads: Chunks) {
        if bytes(&leads) > REPLAYS_KEPT {
            return;
        }
        let Ok(mut kept) = self.kept.lock() else { return };
        kept.retain(|(k, _)| (&k.tenant, k.since, k.until) != (&key.tenant, key.since, key.until));
        kept.push((key, Arc::new(leads)));
        while kept.iter().map(|(_, leads)| bytes(leads)).sum::<usize>() > REPLAYS_KEPT {
            kept.remove(0);
        }
    }
}

/// `POST /scoring/backtest`: replays the tenant's leads with a known outcome, each from its
/// posting as last fetched and scored as of that moment, under the live and the proposed
/// configuration. Read-only; the scoring runs off the async workers.
pub async fn backtest(
    cx: &mut Context,
    store: &Store,
    replays: &Replays,
    input: models::BacktestInput,
) -> Result<models::BacktestReport, errors::RunBacktestError> {
    let op = cx.op;
    use crate::backtest::{self, Case, Settings};
    use errors::RunBacktestError as E;
    check(&input.weights, &input.parameters).map_err(E::ValidationError)?;
    if let (Some(since), Some(until)) = (input.since, input.until)
        && since >= until
    {
        return Err(E::ValidationError(
            Problem::new("since must be before until").with("field", "since").with("value", since.to_rfc3339()),
        ));
    }
    // Over MCP, for a client that polls tasks, the backtest goes on as a task from here (before
    // its snapshot begins). Its progress is its two stages.
    cx.background().await;
    cx.progress(0.0, Some(2.0), Some("reading and scoring leads")).await;
    // The spec marks the backtest read-only: one snapshot holds the configuration, the tenant's
    // lead version and the leads (some of them read in another snapshot of the same lead version:
    // see below).
    let tenant = cx.caller.tenant.clone();
    let tx = cx.tx.get::<E>().await?;
    let live = read(tx, &tenant).await.map_err(|e| op.fault("reading the configuration", e))?;
    let version = lead_version(tx, &tenant).await.map_err(|e| op.fault("reading leads", e))?;
    let settings = Settings {
        top_k: input.top_k.unwrap_or(DEFAULT_TOP_K).max(1) as usize,
        tiers: input.tiers.unwrap_or(DEFAULT_TIERS).max(2) as usize,
        current_min_confidence: live.parameters.top_tier_min_confidence,
        proposed_min_confidence: input.parameters.top_tier_min_confidence,
        current_config_version: live.version,
    };
    let (since, until) = (input.since.map(|t| t.timestamp_millis()), input.until.map(|t| t.timestamp_millis()));
    let key = ReplayKey { tenant: tenant.clone(), since, until, version };
    let configs = Arc::new((live, input));
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, BACKTEST_MAX_SCORERS);
    // Composite and confidence only: the explanation sentences are most of a score's cost.
    fn points((live, proposed): &(ScoringConfig, models::BacktestInput)) -> (engine::Points<'_>, engine::Points<'_>) {
        (
            engine::Points::new(&live.weights, &live.parameters),
            engine::Points::new(&proposed.weights, &proposed.parameters),
        )
    }
    // Cases come back a chunk at a time and are laid out once, in a vector of their exact size.
    let flatten = |parts: Vec<Vec<Case>>| {
        let mut cases = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        parts.into_iter().for_each(|mut part| cases.append(&mut part));
        cases
    };

    if let Some(leads) = replays.get(&key) {
        // The same leads as this snapshot holds, as read: decoded and scored on every core.
        cx.tx.end_read::<E>().await?;
        let scorers: Vec<_> = (0..workers)
            .map(|w| {
                let (leads, configs) = (leads.clone(), configs.clone());
                tokio::task::spawn_blocking(move || {
                    let points = points(&configs);
                    let mine = leads.iter().skip(w).step_by(workers);
                    mine.map(|chunk| chunk.cases(&points)).collect::<Result<Vec<Vec<Case>>, _>>()
                })
            })
            .collect();
        let mut parts = Vec::new();
        for scorer in scorers {
            let mut part =
                scorer.await.map_err(|e| op.fault("computing", e))?.map_err(|e| op.fault("reading leads", e))?;
            parts.append(&mut part);
        }
        cx.progress(1.0, Some(2.0), Some("computing the metrics")).await;
        return tokio::task::spawn_blocking(move || backtest::evaluate(&flatten(parts), &settings))
            .await
            .map_err(|e| op.fault("computing", e));
    }

    // The replay records (not the whole postings) stream from the database in chunks, dealt in
    // turn to one blocking scorer per core, which decodes and scores each lead as it arrives and
    // keeps its two points, and the chunk while the history stays small enough to keep
    // ([`REPLAYS_KEPT`]): memory holds a few chunks, never all of a larger history, and reading
    // overlaps scoring.
    let read = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (mut scorers, mut senders) = (Vec::with_capacity(workers), Vec::with_capacity(workers));
    for _ in 0..workers {
        let (chunks, mut arriving) = tokio::sync::mpsc::channel::<Chunk>(BACKTEST_CHUNKS_IN_FLIGHT);
        let (configs, read) = (configs.clone(), read.clone());
        senders.push(chunks);
        scorers.push(tokio::task::spawn_blocking(move || {
            let points = points(&configs);
            let mut cases: Vec<Vec<Case>> = Vec::new();
            let mut kept: Option<Chunks> = Some(Vec::new());
            while let Some(chunk) = arriving.blocking_recv() {
                cases.push(chunk.cases(&points)?);
                let bytes = chunk.bytes();
                match kept.as_mut() {
                    Some(kept)
                        if read.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed) + bytes <= REPLAYS_KEPT =>
                    {
                        kept.push(chunk)
                    }
                    _ => kept = None,
                }
            }
            Ok::<_, String>((cases, kept))
        }));
    }
    // The period is read in two halves at once: the first in this snapshot, the second on a
    // connection of its own, in a snapshot that holds the same lead version (so the same leads).
    // Whichever claims the second half first reads it: the helper once its snapshot is checked,
    // or this read once the first half is done. So a backtest never waits for a second
    // connection (on a busy or one-connection pool this read takes the second half too), and
    // no lead is read twice.
    let tx = cx.tx.get::<E>().await?;
    let middle = middle(tx, &tenant, since, until).await.map_err(|e| op.fault("reading leads", e))?;
    let claim = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut helper = middle.map(|middle| {
        let (store, tenant, senders, claim) = (store.clone(), tenant.clone(), senders.clone(), claim.clone());
        Aborting(tokio::spawn(async move {
            let mut tx = store.begin_read().await?;
            if lead_version(&mut tx, &tenant).await? != version || !claimed(&claim) {
                return Ok(());
            }
            read_period(&mut tx, store.backend(), &tenant, (Some(middle), until), &senders, 1).await?;
            tx.commit().await
        }))
    });
    let first = (since, middle.or(until));
    read_period(tx, store.backend(), &tenant, first, &senders, 0).await.map_err(|e| op.fault("reading leads", e))?;
    if let Some(middle) = middle {
        if claimed(&claim) {
            // The helper has not begun: stop it (it will find the half claimed if it gets that far).
            drop(helper.take());
            read_period(tx, store.backend(), &tenant, (Some(middle), until), &senders, 0)
                .await
                .map_err(|e| op.fault("reading leads", e))?;
        } else if let Some(helper) = helper.as_mut() {
            (&mut helper.0)
                .await
                .map_err(|e| op.fault("reading leads", e))?
                .map_err(|e| op.fault("reading leads", e))?;
        }
    }
    cx.tx.end_read::<E>().await?;
    drop(senders);
    let mut parts: Vec<Vec<Case>> = Vec::new();
    let mut leads: Option<Chunks> = Some(Vec::new());
    for scorer in scorers {
        let (mut part, kept) =
            scorer.await.map_err(|e| op.fault("computing", e))?.map_err(|e| op.fault("reading leads", e))?;
        parts.append(&mut part);
        leads = leads.zip(kept).map(|(mut all, mut kept)| {
            all.append(&mut kept);
            all
        });
    }
    if let Some(leads) = leads {
        replays.keep(key, leads);
    }
    cx.progress(1.0, Some(2.0), Some("computing the metrics")).await;
    tokio::task::spawn_blocking(move || backtest::evaluate(&flatten(parts), &settings))
        .await
        .map_err(|e| op.fault("computing", e))
}

/// Claims the second half of a backtest's period for the caller (the helper or the request);
/// false when the other already did.
fn claimed(claim: &std::sync::atomic::AtomicBool) -> bool {
    !claim.swap(true, std::sync::atomic::Ordering::AcqRel)
}

/// A task stopped when its handle is dropped: a backtest whose request is gone stops reading.
struct Aborting<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for Aborting<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The tenant's lead version in `tx`'s snapshot (none before its first lead).
async fn lead_version(tx: &mut Tx, tenant: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT version FROM lead_versions WHERE tenant_id = $1")
        .bind(tenant)
        .fetch_optional(&mut **tx)
        .await
}

/// The middle of the span of creation times of the tenant's leads with an outcome in the period
/// (`since`, `until`): none when it holds none.
async fn middle(tx: &mut Tx, tenant: &str, since: Option<i64>, until: Option<i64>) -> Result<Option<i64>, sqlx::Error> {
    let (lo, hi): (Option<i64>, Option<i64>) = sqlx::query_as(BACKTEST_SPAN)
        .bind(tenant)
        .bind(since.unwrap_or(i64::MIN))
        .bind(until.unwrap_or(i64::MAX))
        .fetch_one(&mut **tx)
        .await?;
    Ok(lo.zip(hi).map(|(lo, hi)| lo + (hi - lo) / 2))
}

/// The first and the last creation time of the tenant's ($1) leads with an outcome created in
/// [$2, $3): four lookups, one at each end of each outcome's range of the index `leads_replay`.
const BACKTEST_SPAN: &str = "SELECT MIN(lo), MAX(hi) FROM (\
     SELECT (SELECT created_at FROM leads WHERE tenant_id = $1 AND outcome = o AND created_at >= $2 \
             AND created_at < $3 ORDER BY created_at LIMIT 1) AS lo, \
            (SELECT created_at FROM leads WHERE tenant_id = $1 AND outcome = o AND created_at >= $2 \
             AND created_at < $3 ORDER BY created_at DESC LIMIT 1) AS hi \
     FROM (SELECT 'lost' AS o UNION ALL SELECT 'won') AS outcomes) AS ends";

/// Reads the tenant's leads with an outcome created in the period (`since`, `until`), lost then
/// won, dealt to `scorers` starting at `first` (see [`read_outcome`]).
async fn read_period(
    tx: &mut Tx,
    backend: Backend,
    tenant: &str,
    (since, until): (Option<i64>, Option<i64>),
    scorers: &[tokio::sync::mpsc::Sender<Chunk>],
    first: usize,
) -> Result<(), sqlx::Error> {
    for won in [false, true] {
        read_outcome(tx, Outcome { backend, tenant, won, since, until }, scorers, first).await?;
    }
    Ok(())
}

/// The leads of one outcome a backtest reads: the tenant's, won or lost, created in the period.
#[derive(Debug, Clone, Copy)]
struct Outcome<'a> {
    backend: Backend,
    tenant: &'a str,
    won: bool,
    since: Option<i64>,
    until: Option<i64>,
}

/// Leads of one outcome as read in one statement: how many, and their replay records one after
/// the other (none when no lead of the chunk has one).
struct Chunk {
    won: bool,
    leads: i64,
    records: Option<Vec<u8>>,
}

impl Chunk {
    /// The chunk's leads, decoded and scored under the current and the proposed configuration
    /// (composite and confidence only: the explanation sentences are most of a score's cost): an
    /// error when a record does not decode, or when a lead has none (its posting could not be read
    /// when the records were filled).
    fn cases(&self, (current, proposed): &(engine::Points, engine::Points)) -> Result<Vec<Case>, String> {
        // Laid out once, in a vector of the chunk's size.
        let mut cases = Vec::with_capacity(usize::try_from(self.leads).unwrap_or_default());
        for lead in crate::replay::records(self.records.as_deref().unwrap_or_default()) {
            let lead = lead?;
            let at = to_time(lead.fetched_at);
            let point = |(composite, confidence): (f64, f64)| Point { composite, confidence };
            cases.push(Case {
                current: point(current.of(&lead.input, at)),
                proposed: point(proposed.of(&lead.input, at)),
                id: lead.id,
                won: self.won,
                found_at: to_time(lead.created_at),
            });
        }
        match self.leads - cases.len() as i64 {
            0 => Ok(cases),
            missing => Err(format!("{missing} stored leads without a replay record (their posting does not parse)")),
        }
    }

    /// The bytes its records take.
    fn bytes(&self) -> usize {
        self.records.as_ref().map_or(0, Vec::len)
    }
}

/// Reads the leads of `part` in chunks in index order, each read as one row holding the whole
/// chunk's replay records (one round trip to the database per chunk, not per lead, and one walk
/// of the index), all in `tx`'s snapshot. The next chunk starts after the last key (created_at,
/// id) of this one, which its records state. On SQLite the index `leads_replay` holds every column
/// read, so the rows and their postings are not read. The chunks are dealt in turn to `scorers`,
/// starting at `first`; a send fails only once that scorer has stopped on a bad record, whose
/// error the caller reports.
async fn read_outcome(
    tx: &mut Tx,
    part: Outcome<'_>,
    scorers: &[tokio::sync::mpsc::Sender<Chunk>],
    first: usize,
) -> Result<(), sqlx::Error> {
    let outcome = if part.won { "won" } else { "lost" };
    let statement = match part.backend {
        Backend::Sqlite => SQLITE_CHUNK,
        Backend::Postgres => POSTGRES_CHUNK,
    };
    // The index range starts at the period's start (the key is read after the one before it).
    let mut after = (part.since.map_or(i64::MIN, |since| since.saturating_sub(1)), String::new());
    for turn in first.. {
        let (leads, records, newest): (i64, Option<Vec<u8>>, Option<i64>) = sqlx::query_as(statement)
            .bind(part.tenant)
            .bind(outcome)
            .bind(Nullable(part.since))
            .bind(Nullable(part.until))
            .bind(after.0)
            .bind(&after.1)
            .bind(BACKTEST_CHUNK as i64)
            .fetch_one(&mut **tx)
            .await?;
        // A full chunk may have more after it: they start after its last key, which must be
        // past the one this chunk started after and be the newest row's (a record out of step
        // with its row would otherwise read a lead twice or not at all).
        let next = if leads == BACKTEST_CHUNK as i64 {
            let last = crate::replay::last_key(records.as_deref().unwrap_or_default());
            match last.map_err(|e| sqlx::Error::Decode(e.into()))? {
                Some((created_at, id)) if (created_at, id) > (after.0, &after.1) && Some(created_at) == newest => {
                    Some((created_at, id.to_string()))
                }
                _ => return Err(sqlx::Error::Decode("a chunk's replay records out of step with its rows".into())),
            }
        } else {
            None
        };
        let chunk = Chunk { won: part.won, leads, records };
        if leads > 0 && scorers[turn % scorers.len()].send(chunk).await.is_err() {
            return Ok(());
        }
        match next {
            Some(key) => after = key,
            None => return Ok(()),
        }
    }
    Ok(())
}

/// Leads per chunk read from the database and sent to a scorer.
const BACKTEST_CHUNK: usize = 2048;

/// A chunk of a backtest's read: of the tenant's ($1) leads with the outcome $2, created in the
/// period ($3, $4), the first $7 after the key ($5, $6) in the order (created_at, id), from an
/// index range; how many, their records concatenated, and the newest creation time. SQLite's
/// `group_concat` joins blobs byte for byte (as text, which the cast makes a blob again);
/// PostgreSQL's `string_agg` joins `bytea`.
macro_rules! chunk_statement {
    ($aggregate:literal) => {
        concat!(
            "SELECT count(*), ",
            $aggregate,
            ", max(created_at) FROM (SELECT created_at, replay FROM leads WHERE tenant_id = $1 AND outcome = $2 \
             AND ($3 IS NULL OR created_at >= $3) AND ($4 IS NULL OR created_at < $4) AND (created_at, id) > ($5, $6) \
             ORDER BY created_at, id LIMIT $7) AS chunk"
        )
    };
}
const SQLITE_CHUNK: &str = chunk_statement!("CAST(group_concat(replay, '') AS BLOB)");
const POSTGRES_CHUNK: &str = chunk_statement!("string_agg(replay, ''::bytea)");

/// Chunks read ahead of each scorer: the most records a backtest holds at once is
/// `scorers × (BACKTEST_CHUNKS_IN_FLIGHT + 1) × BACKTEST_CHUNK` plus the one being filled.
const BACKTEST_CHUNKS_IN_FLIGHT: usize = 4;
/// At most this many scorers, whatever the core count: a backtest shares the server.
const BACKTEST_MAX_SCORERS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks of `n` bytes of records in all.
    fn leads(n: usize) -> Chunks {
        let chunk = |bytes: usize| Chunk { won: true, leads: 1, records: Some(vec![0; bytes]) };
        vec![chunk(n / 2), chunk(n - n / 2)]
    }

    fn key(tenant: &str, since: Option<i64>, version: i64) -> ReplayKey {
        ReplayKey { tenant: tenant.into(), since, until: None, version: Some(version) }
    }

    /// A set answers only for its tenant, period and version; a newer version of the same
    /// tenant and period replaces it; the sets never hold more than `REPLAYS_KEPT` bytes of
    /// records (the oldest goes first), and a larger history is not kept at all.
    #[test]
    fn kept_replays_answer_for_their_version_and_stay_within_the_bound() {
        let replays = Replays::default();
        replays.keep(key("acme", None, 1), leads(10));
        assert_eq!(replays.get(&key("acme", None, 1)).map(|l| bytes(&l)), Some(10));
        assert!(replays.get(&key("acme", None, 2)).is_none(), "another version");
        assert!(replays.get(&key("acme", Some(5), 1)).is_none(), "another period");
        assert!(replays.get(&key("globex", None, 1)).is_none(), "another tenant");

        replays.keep(key("acme", None, 2), leads(3));
        assert!(replays.get(&key("acme", None, 1)).is_none(), "replaced by the newer version");
        assert_eq!(replays.get(&key("acme", None, 2)).map(|l| bytes(&l)), Some(3));

        replays.keep(key("globex", None, 1), leads(REPLAYS_KEPT - 3));
        assert!(replays.get(&key("acme", None, 2)).is_some(), "both fit");
        replays.keep(key("initech", None, 1), leads(1));
        assert!(replays.get(&key("acme", None, 2)).is_none(), "the oldest set went first");
        assert!(replays.get(&key("globex", None, 1)).is_some());
        assert!(replays.get(&key("initech", None, 1)).is_some());

        replays.keep(key("umbrella", None, 1), leads(REPLAYS_KEPT + 1));
        assert!(replays.get(&key("umbrella", None, 1)).is_none(), "too large to keep");
        let kept: usize = replays.kept.lock().unwrap().iter().map(|(_, l)| bytes(l)).sum();
        assert!(kept <= REPLAYS_KEPT, "{kept}");
    }
}
