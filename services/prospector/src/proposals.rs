//! Proposals: drafted from a lead by a deterministic template, edited, moved through the
//! ProposalStatus state machine, submitted to the originating platform through a connector
//! (idempotently), and closed by the client's decision, which creates the contract.

use prospector_api::prospector::errors;
use prospector_api::prospector::models::{
    self, LeadStatus, Proposal, ProposalOutcome, ProposalStatus, ProposalTone, ScoringParameters,
};
use runtime::Context;
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{Paged, Paging, Problem};

use crate::connector::{ConnectorError, HttpConnector, Submission};
use crate::idempotency::{self, Begin};
use crate::leads::{self, Stored, bad_move, missing};
use crate::{contracts, scoring};
use runtime::OperationFault;
use runtime::store::{Arg, Nullable, Select, Store, Tx, now_ms, to_time};

/// Where submissions go.
#[derive(Debug)]
pub enum Connector {
    /// The recording outbox (default): each submission and withdrawal is written to
    /// `platform_outbox` in the transaction that changes the proposal, for a relay to deliver.
    Outbox,
    /// A platform's HTTP API, called with retries.
    Http(HttpConnector),
}

/// A submission claim older than this is taken to belong to a request that died.
const STALE_SUBMIT_MS: i64 = 2 * 60 * 1000;

const COLUMNS: &str = "id, lead_id, status, draft_text, tone, bid_amount, currency, created_at, updated_at, submitted_at, platform_reference, contract_id";

fn from_row(r: &AnyRow) -> Result<Proposal, String> {
    let id: String = r.get(0);
    Ok(Proposal {
        status: ProposalStatus::parse(&r.get::<String, _>(2)).ok_or_else(|| format!("proposal {id}: bad status"))?,
        lead_id: r.get(1),
        draft_text: r.get(3),
        tone: r.get::<Option<String>, _>(4).as_deref().and_then(ProposalTone::parse),
        bid_amount: r.get(5),
        currency: r.get(6),
        created_at: to_time(r.get(7)),
        updated_at: to_time(r.get(8)),
        submitted_at: r.get::<Option<i64>, _>(9).map(to_time),
        platform_reference: r.get(10),
        contract_id: r.get(11),
        id,
    })
}

async fn load(tx: &mut Tx, tenant: &str, id: &str) -> Result<Option<Proposal>, String> {
    fetch(&mut **tx, tenant, id).await
}

async fn fetch<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(
    exec: E,
    tenant: &str,
    id: &str,
) -> Result<Option<Proposal>, String> {
    let row =
        sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM proposals WHERE tenant_id = $1 AND id = $2")))
            .bind(tenant)
            .bind(id)
            .fetch_optional(exec)
            .await
            .map_err(|e| e.to_string())?;
    row.as_ref().map(from_row).transpose()
}

/// `GET /proposals`.
pub async fn list(
    store: &Store,
    cx: &mut Context,
    input: models::ListProposalsInput,
    paging: Paging,
) -> Result<Paged<Proposal>, errors::ListProposalsError> {
    let (caller, op) = (&cx.caller, cx.op);
    let filter = "tenant_id = $1 AND ($2 IS NULL OR status = $2) AND ($3 IS NULL OR lead_id = $3)";
    let args = [
        Arg::Text(Some(caller.tenant.clone())),
        Arg::Text(input.status.map(|s| s.as_str().to_string())),
        Arg::Text(input.lead_id),
    ];
    let (total, rows) = store
        .page(
            Select { columns: COLUMNS, table: "proposals", filter, order: "updated_at DESC, id", args: &args },
            paging,
        )
        .await
        .map_err(|e| op.fault("listing", e))?;
    let items = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>().map_err(|e| op.fault("reading", e))?;
    Ok(Paged { items, total })
}

/// `GET /proposals/{id}`.
pub async fn get(store: &Store, cx: &mut Context, id: &str) -> Result<Proposal, errors::GetProposalError> {
    let (caller, op) = (&cx.caller, cx.op);
    fetch(store.readers(), &caller.tenant, id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| errors::GetProposalError::NotFound(missing("proposal", id)))
}

fn money(amount: f64, currency: &str) -> String {
    if amount.fract() == 0.0 { format!("{currency} {amount:.0}") } else { format!("{currency} {amount:.2}") }
}

fn list_words(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The draft text for a lead: a fixed template per tone, filled only from the lead's posting,
/// the configured skills, the bid and the caller's instructions, so the same input always gives
/// the same text.
pub fn draft(
    lead: &Stored,
    params: &ScoringParameters,
    tone: ProposalTone,
    instructions: Option<&str>,
    bid: Option<(f64, &str)>,
) -> String {
    let p = &lead.posting;
    let mine: Vec<String> = params.skills.iter().map(|s| s.trim().to_lowercase()).collect();
    let matched: Vec<&str> = p.skills.iter().filter(|s| mine.contains(s)).map(String::as_str).collect();
    let client = p.client.as_ref().and_then(|c| c.name.as_deref());
    let greeting = match (tone, client) {
        (ProposalTone::Friendly, Some(name)) => format!("Hi {name},"),
        (ProposalTone::Friendly, None) => "Hi there,".to_string(),
        (ProposalTone::Concise, _) => String::new(),
        (ProposalTone::Professional, Some(name)) => format!("Dear {name},"),
        (ProposalTone::Professional, None) => "Dear Hiring Manager,".to_string(),
    };
    let opening = match tone {
        ProposalTone::Professional => {
            format!("I read your posting \"{}\" with interest and would like to offer my services.", p.title)
        }
        ProposalTone::Friendly => {
            format!("Your project \"{}\" caught my eye, and it sounds like a great fit for me.", p.title)
        }
        ProposalTone::Concise => format!("Re: \"{}\".", p.title),
    };
    let skills = if !matched.is_empty() {
        match tone {
            ProposalTone::Concise => format!("Relevant skills: {}.", list_words(&matched)),
            _ => format!("You ask for {}, which is exactly the work I do day to day.", list_words(&matched)),
        }
    } else if !p.skills.is_empty() {
        let asked: Vec<&str> = p.skills.iter().take(5).map(String::as_str).collect();
        format!("I have read through the requirements ({}) and can deliver what the project needs.", list_words(&asked))
    } else {
        "I have read through the description and can deliver what the project needs.".to_string()
    };
    let plan = match tone {
        ProposalTone::Concise => "Plan: confirm scope, deliver in small reviewed steps, hand over with documentation.".to_string(),
        _ => "How I would work:\n1. A short call to confirm scope, priorities and acceptance criteria.\n2. Delivery in small, reviewed increments, with progress you can check at any time.\n3. A clean handover: documentation, tests and a walkthrough.".to_string(),
    };
    let offer = match bid {
        Some((amount, currency)) => {
            let hourly = p.budget.as_ref().is_some_and(|b| b.kind == models::BudgetKind::Hourly);
            let unit = if hourly { " per hour" } else { " for the whole project" };
            format!("My bid is {}{unit}.", money(amount, currency))
        }
        None => "I am happy to agree on a price once the scope is confirmed.".to_string(),
    };
    let closing = match tone {
        ProposalTone::Professional => "I look forward to hearing from you.\n\nKind regards",
        ProposalTone::Friendly => "Looking forward to chatting!\n\nCheers",
        ProposalTone::Concise => "Available to start now.",
    };
    let mut parts: Vec<String> = Vec::new();
    if !greeting.is_empty() {
        parts.push(greeting);
    }
    parts.push(format!("{opening} {skills}"));
    if let Some(extra) = instructions.map(str::trim).filter(|s| !s.is_empty()) {
        parts.push(extra.to_string());
    }
    parts.push(plan);
    parts.push(offer);
    parts.push(closing.to_string());
    parts.join("\n\n")
}

/// `POST /proposals`.
pub async fn create(
    cx: &mut Context,
    store: &Store,
    input: models::CreateProposalInput,
) -> Result<Proposal, errors::CreateProposalError> {
    let op = cx.op;
    use errors::CreateProposalError as E;
    let fingerprint = || {
        let request =
            (&input.lead_id, input.tone.map(|t| t.as_str()), &input.instructions, input.bid_amount, &input.currency);
        idempotency::fingerprint(&[&serde_json::to_string(&request).unwrap_or_default()])
    };
    let key = input.idempotency_key.as_deref();
    let claim = match idempotency::start(cx, key, fingerprint, E::Conflict).await? {
        Begin::Replay(p) => return Ok(p),
        Begin::Run(claim) => claim,
    };
    let result = async {
        let (tx, caller, _) = cx.parts::<E>().await?;
        let config =
            scoring::current_in(&mut *tx, &caller.tenant).await.map_err(|e| op.fault("configuration", e))?;
        let lead = leads::load(&mut *tx, &caller.tenant, &input.lead_id)
            .await
            .map_err(|e| op.fault("reading the lead", e))?
            .ok_or_else(|| E::NotFound(missing("lead", &input.lead_id).with("field", "lead_id")))?;
        if lead.status == LeadStatus::Archived {
            return Err(E::Conflict(
                Problem::new(format!("lead {} is archived; reopen a lead before writing a proposal", lead.id))
                    .with("field", "lead_id")
                    .with("value", lead.id.as_str()),
            ));
        }
        let tone = input.tone.unwrap_or(ProposalTone::Professional);
        let currency = input.bid_amount.map(|_| {
            input
                .currency
                .clone()
                .or_else(|| lead.posting.budget.as_ref().map(|b| b.currency.clone()))
                .unwrap_or_else(|| config.parameters.currency.clone())
        });
        let bid = input.bid_amount.zip(currency.as_deref());
        let text = draft(&lead, &config.parameters, tone, input.instructions.as_deref(), bid);
        let id = format!("prop_{}", uuid::Uuid::now_v7().simple());
        let now = now_ms();
        sqlx::query("INSERT INTO proposals (id, tenant_id, lead_id, status, draft_text, tone, bid_amount, currency, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)")
            .bind(&id)
            .bind(&caller.tenant)
            .bind(&lead.id)
            .bind(ProposalStatus::INITIAL.as_str())
            .bind(&text)
            .bind(tone.as_str())
            .bind(Nullable(input.bid_amount))
            .bind(Nullable(currency.as_deref()))
            .bind(now)
            .execute(&mut **tx)
            .await
            .map_err(|e| op.fault("storing", e))?;
        let proposal = load(&mut *tx, &caller.tenant, &id)
            .await
            .map_err(|e| op.fault("reading", e))?
            .ok_or_else(|| op.fault("reading", "proposal vanished"))?;
        if let Some(claim) = &claim {
            idempotency::finish(&mut *tx, claim, &proposal).await.map_err(|e| op.fault("idempotency", e))?;
            // The claimed key's answer is durable before a retry can ask for it again.
            cx.tx.commit_step::<E>().await?;
        }
        Ok(proposal)
    }
    .await;
    if let (Err(_), Some(claim)) = (&result, &claim) {
        cx.tx.discard();
        idempotency::abandon(store, claim).await;
    }
    result
}

/// `PATCH /proposals/{id}`.
pub async fn update(
    cx: &mut Context,
    connector: &Connector,
    input: models::UpdateProposalInput,
) -> Result<Proposal, errors::UpdateProposalError> {
    let op = cx.op;
    use errors::UpdateProposalError as E;
    let (tx, caller, _) = cx.parts::<errors::UpdateProposalError>().await?;
    let current = load(&mut *tx, &caller.tenant, &input.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| E::NotFound(missing("proposal", &input.id)))?;
    let editable = matches!(current.status, ProposalStatus::Draft | ProposalStatus::Ready);
    let edits = input.draft_text.is_some() || input.bid_amount.is_some() || input.currency.is_some();
    if edits && !editable {
        return Err(E::Conflict(
            Problem::new(format!("a {} proposal cannot be edited; only draft and ready ones can", current.status))
                .with("current", current.status.as_str()),
        ));
    }
    let now = now_ms();
    if edits {
        let text = input.draft_text.clone().unwrap_or_else(|| current.draft_text.clone());
        let bid = match input.bid_amount {
            None => current.bid_amount,
            Some(b) => b,
        };
        let currency = match (bid, input.currency.clone().or_else(|| current.currency.clone())) {
            (None, _) => None,
            (Some(_), Some(c)) => Some(c),
            (Some(_), None) => Some(
                scoring::current_in(&mut *tx, &caller.tenant)
                    .await
                    .map_err(|e| op.fault("configuration", e))?
                    .parameters
                    .currency,
            ),
        };
        sqlx::query(
            "UPDATE proposals SET draft_text = $1, bid_amount = $2, currency = $3, updated_at = $4 WHERE id = $5",
        )
        .bind(&text)
        .bind(Nullable(bid))
        .bind(Nullable(currency.as_deref()))
        .bind(now)
        .bind(&current.id)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("updating", e))?;
    }
    let mut withdrawal = None;
    if let Some(to) = input.status.filter(|s| *s != current.status) {
        let platform_only = match to {
            ProposalStatus::Submitted => Some("submitted is reached by POST /proposals/{id}/submit"),
            ProposalStatus::Accepted | ProposalStatus::Rejected => {
                Some("accepted and rejected are recorded by POST /proposals/{id}/outcome")
            }
            _ => None,
        };
        if let Some(how) = platform_only {
            return Err(E::Conflict(Problem::new(how).with("field", "status").with("value", to.as_str())));
        }
        if !current.status.can_move_to(to) {
            return Err(E::Conflict(bad_move("proposal", current.status, to, current.status.next_states())));
        }
        sqlx::query("UPDATE proposals SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4")
            .bind(to.as_str())
            .bind(now)
            .bind(&current.id)
            .bind(current.status.as_str())
            .execute(&mut **tx)
            .await
            .map_err(|e| op.fault("updating", e))?;
        if to == ProposalStatus::Withdrawn && current.status == ProposalStatus::Submitted {
            withdrawal = current.platform_reference.clone();
        }
    }
    if let Some(reference) = &withdrawal {
        match connector {
            Connector::Outbox => {
                let platform = leads_platform(&mut *tx, &caller.tenant, &current.lead_id, op).await?;
                record(
                    &mut *tx,
                    &caller.tenant,
                    &current.id,
                    "withdraw",
                    &platform,
                    &serde_json::json!({ "reference": reference }),
                )
                .await
                .map_err(|e| op.fault("recording the withdrawal", e))?;
            }
            Connector::Http(http) => match http.withdraw(reference).await {
                Ok(done) => {
                    if !done {
                        tracing::info!(proposal = %current.id, "the platform does not support withdrawal; withdrawn here only");
                    }
                }
                Err(e) => return Err(E::UpstreamUnavailable(upstream(&e))),
            },
        }
    }
    let proposal = load(&mut *tx, &caller.tenant, &current.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| op.fault("reading", "proposal vanished"))?;
    Ok(proposal)
}

async fn leads_platform<E: support::InternalError>(
    tx: &mut Tx,
    tenant: &str,
    lead_id: &str,
    op: &'static support::Operation,
) -> Result<String, E> {
    leads::load(tx, tenant, lead_id)
        .await
        .map_err(|e| op.fault("reading the lead", e))?
        .map(|l| l.posting.platform)
        .ok_or_else(|| op.fault("reading the lead", "lead vanished"))
}

fn upstream(e: &ConnectorError) -> Problem {
    Problem::new(format!("the platform did not take the request: {e}; nothing was changed, retry later"))
}

/// Writes one outbox row.
async fn record(
    tx: &mut Tx,
    tenant: &str,
    proposal: &str,
    action: &str,
    platform: &str,
    payload: &serde_json::Value,
) -> Result<String, sqlx::Error> {
    let id = format!("obx_{}", uuid::Uuid::now_v7().simple());
    sqlx::query("INSERT INTO platform_outbox (id, tenant_id, proposal_id, action, platform, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)")
        .bind(&id)
        .bind(tenant)
        .bind(proposal)
        .bind(action)
        .bind(platform)
        .bind(payload.to_string())
        .bind(now_ms())
        .execute(&mut **tx)
        .await?;
    Ok(id)
}

/// `POST /proposals/{id}/submit`.
pub async fn submit(
    cx: &mut Context,
    store: &Store,
    connector: &Connector,
    input: models::SubmitProposalInput,
) -> Result<Proposal, errors::SubmitProposalError> {
    use errors::SubmitProposalError as E;
    let fingerprint = || idempotency::fingerprint(&[&input.id]);
    let key = input.idempotency_key.as_deref();
    let claim = match idempotency::start(cx, key, fingerprint, E::Conflict).await? {
        Begin::Replay(p) => return Ok(p),
        Begin::Run(claim) => claim,
    };
    let result = submit_once(cx, store, connector, &input.id, claim.as_ref()).await;
    if let (Err(_), Some(claim)) = (&result, &claim) {
        cx.tx.discard();
        idempotency::abandon(store, claim).await;
    }
    result
}

async fn submit_once(
    cx: &mut Context,
    store: &Store,
    connector: &Connector,
    id: &str,
    claim: Option<&idempotency::Claim>,
) -> Result<Proposal, errors::SubmitProposalError> {
    let op = cx.op;
    use errors::SubmitProposalError as E;
    // 1. Check and claim the proposal, so concurrent submits (with or without a key) cannot both
    //    reach the platform: a step of its own, committed before the platform is called.
    let now = now_ms();
    let tenant = cx.caller.tenant.clone();
    let tx = cx.tx.get::<E>().await?;
    let proposal = load(&mut *tx, &tenant, id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| E::NotFound(missing("proposal", id)))?;
    if proposal.status != ProposalStatus::Ready {
        let problem = if proposal.status == ProposalStatus::Draft {
            Problem::new("only a ready proposal can be submitted: mark it ready first (PATCH status=ready)")
                .with("current", "draft")
        } else {
            bad_move("proposal", proposal.status, ProposalStatus::Submitted, proposal.status.next_states())
        };
        return Err(E::Conflict(problem));
    }
    let lead = leads::load(&mut *tx, &tenant, &proposal.lead_id)
        .await
        .map_err(|e| op.fault("reading the lead", e))?
        .ok_or_else(|| op.fault("reading the lead", "lead vanished"))?;
    if lead.status != LeadStatus::ProposalSent && !lead.status.can_move_to(LeadStatus::ProposalSent) {
        return Err(E::Conflict(
            Problem::new(format!(
                "lead {} is {}; a proposal can be submitted only for a new, reviewing or shortlisted lead",
                lead.id, lead.status
            ))
            .with("lead_status", lead.status.as_str()),
        ));
    }
    let claimed = sqlx::query("UPDATE proposals SET submitting_since = $1 WHERE id = $2 AND status = 'ready' AND (submitting_since IS NULL OR submitting_since < $3)")
        .bind(now)
        .bind(&proposal.id)
        .bind(now - STALE_SUBMIT_MS)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("claiming", e))?
        .rows_affected();
    if claimed != 1 {
        return Err(E::Conflict(
            Problem::new("this proposal is being submitted by another request").with("current", "ready"),
        ));
    }
    cx.tx.commit_step::<E>().await?;

    let submission = Submission {
        proposal_id: proposal.id.clone(),
        tenant: tenant.clone(),
        platform: lead.posting.platform.clone(),
        job_id: lead.posting.id.clone(),
        job_url: lead.posting.url.clone(),
        text: proposal.draft_text.clone(),
        bid_amount: proposal.bid_amount,
        currency: proposal.currency.clone(),
    };
    // 2. The platform call, outside any transaction (it may take seconds with retries).
    let reference = match connector {
        Connector::Outbox => None,
        Connector::Http(http) => match http.submit(&submission).await {
            Ok(receipt) => Some(receipt.reference),
            Err(e) => {
                release(store, &proposal.id).await;
                return Err(E::UpstreamUnavailable(upstream(&e)));
            }
        },
    };
    // 3. Record the result, committed here so that a failure releases the claim.
    let finished = async {
        let tx = cx.tx.get::<E>().await?;
        let recorded = async {
            let reference = match reference {
                Some(r) => r,
                None => record(&mut *tx, &tenant, &proposal.id, "submit", &submission.platform, &serde_json::json!({
                    "proposal_id": submission.proposal_id, "platform": submission.platform, "job_id": submission.job_id,
                    "job_url": submission.job_url, "text": submission.text, "bid_amount": submission.bid_amount, "currency": submission.currency,
                })).await?,
            };
            let at = now_ms();
            sqlx::query("UPDATE proposals SET status = 'submitted', submitted_at = $1, platform_reference = $2, submitting_since = NULL, updated_at = $1 WHERE id = $3")
                .bind(at)
                .bind(&reference)
                .bind(&proposal.id)
                .execute(&mut **tx)
                .await?;
            if lead.status != LeadStatus::ProposalSent {
                sqlx::query("UPDATE leads SET status = 'proposal_sent', updated_at = $1, revision = revision + 1 WHERE id = $2")
                    .bind(at)
                    .bind(&lead.id)
                    .execute(&mut **tx)
                    .await?;
            }
            let done = load(&mut *tx, &tenant, &proposal.id)
                .await
                .map_err(sqlx::Error::Protocol)?
                .ok_or(sqlx::Error::RowNotFound)?;
            if let Some(claim) = claim {
                idempotency::finish(&mut *tx, claim, &done).await?;
            }
            Ok::<_, sqlx::Error>(done)
        }
        .await
        .map_err(|e| op.fault("recording the submission", e))?;
        cx.tx.commit_step::<E>().await?;
        Ok(recorded)
    }
    .await;
    if finished.is_err() {
        cx.tx.discard();
        release(store, &proposal.id).await;
    }
    finished
}

async fn release(store: &Store, id: &str) {
    if let Err(e) =
        sqlx::query("UPDATE proposals SET submitting_since = NULL WHERE id = $1").bind(id).execute(store.pool()).await
    {
        tracing::warn!(proposal = id, "releasing the submission claim failed (it goes stale in 2 minutes): {e}");
    }
}

/// `POST /proposals/{id}/outcome`.
pub async fn record_outcome(
    cx: &mut Context,
    input: models::RecordOutcomeInput,
) -> Result<Proposal, errors::RecordProposalOutcomeError> {
    let op = cx.op;
    use errors::RecordProposalOutcomeError as E;
    match (input.outcome, &input.contract) {
        (ProposalOutcome::Accepted, None) => {
            return Err(E::ValidationError(
                Problem::new("contract is required when the outcome is accepted")
                    .with("field", "contract")
                    .with("value", serde_json::Value::Null),
            ));
        }
        (ProposalOutcome::Rejected, Some(c)) => {
            return Err(E::ValidationError(
                Problem::new("contract must be absent when the outcome is rejected")
                    .with("field", "contract")
                    .with("value", serde_json::to_value(c).unwrap_or_default()),
            ));
        }
        _ => {}
    }
    let (tx, caller, _) = cx.parts::<errors::RecordProposalOutcomeError>().await?;
    let proposal = load(&mut *tx, &caller.tenant, &input.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| E::NotFound(missing("proposal", &input.id)))?;
    let (to, lead_to) = match input.outcome {
        ProposalOutcome::Accepted => (ProposalStatus::Accepted, LeadStatus::Won),
        ProposalOutcome::Rejected => (ProposalStatus::Rejected, LeadStatus::Lost),
    };
    if !proposal.status.can_move_to(to) {
        return Err(E::Conflict(bad_move("proposal", proposal.status, to, proposal.status.next_states())));
    }
    let lead = leads::load(&mut *tx, &caller.tenant, &proposal.lead_id)
        .await
        .map_err(|e| op.fault("reading the lead", e))?
        .ok_or_else(|| op.fault("reading the lead", "lead vanished"))?;
    let now = now_ms();
    let contract_id = match &input.contract {
        Some(terms) => Some(
            contracts::create(&mut *tx, &caller.tenant, &proposal, &lead, terms, now)
                .await
                .map_err(|e| op.fault("creating the contract", e))?,
        ),
        None => None,
    };
    // Conditional on the status read above: of two decisions at once (accepted and rejected),
    // one applies and the other is a conflict, never both.
    let decided = sqlx::query(
        "UPDATE proposals SET status = $1, contract_id = $2, updated_at = $3 WHERE id = $4 AND status = $5",
    )
    .bind(to.as_str())
    .bind(Nullable(contract_id.as_deref()))
    .bind(now)
    .bind(&proposal.id)
    .bind(proposal.status.as_str())
    .execute(&mut **tx)
    .await
    .map_err(|e| op.fault("updating", e))?;
    if decided.rows_affected() == 0 {
        return Err(E::Conflict(
            Problem::new(format!("proposal {} was decided while this request ran; read it again", proposal.id))
                .with("field", "outcome"),
        ));
    }
    // The platform's decision is recorded whatever the lead's bookkeeping state; the lead follows
    // when its state machine allows.
    if lead.status.can_move_to(lead_to) {
        leads::move_status(&mut *tx, &lead, lead_to, now)
            .await
            .map_err(|e| op.fault("moving the lead", e))?
            .map_err(E::Conflict)?;
    }
    let done = load(&mut *tx, &caller.tenant, &proposal.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| op.fault("reading", "proposal vanished"))?;
    Ok(done)
}
