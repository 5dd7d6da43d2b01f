//! Contracts and their milestones: created when a proposal is accepted, listed, read, and moved
//! through the MilestoneStatus state machine; the contract completes (or is cancelled) when
//! every milestone is closed.

use prospector_api::prospector::errors;
use prospector_api::prospector::models::{
    self, Contract, ContractStatus, ContractTerms, Milestone, MilestoneStatus, Proposal,
};
use runtime::Context;
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{Paged, Paging, Problem};

use crate::leads::{Stored, bad_move, missing};
use runtime::OperationFault;
use runtime::store::{Arg, Nullable, Select, Store, Tx, now_ms, to_time};

const COLUMNS: &str = "id, proposal_id, lead_id, title, client_name, platform, platform_reference, status, total_amount, currency, started_at, completed_at, updated_at";

fn from_row(r: &AnyRow) -> Result<Contract, String> {
    let id: String = r.get(0);
    Ok(Contract {
        proposal_id: r.get(1),
        lead_id: r.get(2),
        title: r.get(3),
        client_name: r.get(4),
        platform: r.get(5),
        platform_reference: r.get(6),
        status: ContractStatus::parse(&r.get::<String, _>(7)).ok_or_else(|| format!("contract {id}: bad status"))?,
        total_amount: r.get(8),
        currency: r.get(9),
        started_at: to_time(r.get(10)),
        completed_at: r.get::<Option<i64>, _>(11).map(to_time),
        updated_at: to_time(r.get(12)),
        milestones: Vec::new(),
        id,
    })
}

fn milestone(r: &AnyRow) -> Result<(String, Milestone), String> {
    let id: String = r.get(1);
    Ok((
        r.get(0),
        Milestone {
            title: r.get(2),
            amount: r.get(3),
            due_on: r.get::<Option<i64>, _>(4).map(to_time),
            status: MilestoneStatus::parse(&r.get::<String, _>(5))
                .ok_or_else(|| format!("milestone {id}: bad status"))?,
            updated_at: to_time(r.get(6)),
            id,
        },
    ))
}

/// Fills in the milestones of `contracts` (one query).
async fn with_milestones<'e, E>(exec: E, mut contracts: Vec<Contract>) -> Result<Vec<Contract>, String>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    if contracts.is_empty() {
        return Ok(contracts);
    }
    let marks: Vec<String> = (1..=contracts.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT contract_id, id, title, amount, due_on, status, updated_at FROM milestones WHERE contract_id IN ({}) ORDER BY contract_id, position",
        marks.join(", ")
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for c in &contracts {
        q = q.bind(c.id.clone());
    }
    let rows = q.fetch_all(exec).await.map_err(|e| e.to_string())?;
    for r in &rows {
        let (contract, m) = milestone(r)?;
        if let Some(c) = contracts.iter_mut().find(|c| c.id == contract) {
            c.milestones.push(m);
        }
    }
    Ok(contracts)
}

async fn load(tx: &mut Tx, tenant: &str, id: &str) -> Result<Option<Contract>, String> {
    let row =
        sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM contracts WHERE tenant_id = $1 AND id = $2")))
            .bind(tenant)
            .bind(id)
            .fetch_optional(&mut **tx)
            .await
            .map_err(|e| e.to_string())?;
    let Some(contract) = row.as_ref().map(from_row).transpose()? else { return Ok(None) };
    Ok(with_milestones(&mut **tx, vec![contract]).await?.pop())
}

/// `GET /contracts`.
pub async fn list(
    store: &Store,
    cx: &mut Context,
    input: models::ListContractsInput,
    paging: Paging,
) -> Result<Paged<Contract>, errors::ListContractsError> {
    let (caller, op) = (&cx.caller, cx.op);
    let filter = "tenant_id = $1 AND ($2 IS NULL OR status = $2)";
    let args = [Arg::Text(Some(caller.tenant.clone())), Arg::Text(input.status.map(|s| s.as_str().to_string()))];
    let (total, rows) = store
        .page(
            Select { columns: COLUMNS, table: "contracts", filter, order: "started_at DESC, id", args: &args },
            paging,
        )
        .await
        .map_err(|e| op.fault("listing", e))?;
    let contracts = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>().map_err(|e| op.fault("reading", e))?;
    let items = with_milestones(store.readers(), contracts).await.map_err(|e| op.fault("reading milestones", e))?;
    Ok(Paged { items, total })
}

/// `GET /contracts/{id}`.
pub async fn get(cx: &mut Context, id: &str) -> Result<Contract, errors::GetContractError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::GetContractError>().await?;
    let found = load(&mut *tx, &caller.tenant, id).await.map_err(|e| op.fault("reading", e))?;
    found.ok_or_else(|| errors::GetContractError::NotFound(missing("contract", id)))
}

/// Creates the contract of an accepted proposal inside `tx`; returns its id.
pub async fn create(
    tx: &mut Tx,
    tenant: &str,
    proposal: &Proposal,
    lead: &Stored,
    terms: &ContractTerms,
    now: i64,
) -> Result<String, sqlx::Error> {
    let id = format!("ctr_{}", uuid::Uuid::now_v7().simple());
    let currency = terms
        .currency
        .clone()
        .or_else(|| proposal.currency.clone())
        .or_else(|| lead.posting.budget.as_ref().map(|b| b.currency.clone()))
        .unwrap_or_else(|| "USD".into());
    let client = terms
        .client_name
        .clone()
        .or_else(|| lead.posting.client.as_ref().and_then(|c| c.name.clone()))
        .unwrap_or_else(|| "unknown client".into());
    let total: f64 = terms.milestones.iter().map(|m| m.amount).sum();
    sqlx::query("INSERT INTO contracts (id, tenant_id, proposal_id, lead_id, title, client_name, platform, platform_reference, status, total_amount, currency, started_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)")
        .bind(&id)
        .bind(tenant)
        .bind(&proposal.id)
        .bind(&lead.id)
        .bind(terms.title.clone().unwrap_or_else(|| lead.posting.title.clone()))
        .bind(client)
        .bind(&lead.posting.platform)
        .bind(Nullable(terms.platform_reference.as_deref()))
        .bind(ContractStatus::INITIAL.as_str())
        .bind(total)
        .bind(currency)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    for (i, m) in terms.milestones.iter().enumerate() {
        sqlx::query("INSERT INTO milestones (contract_id, id, position, title, amount, due_on, status, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
            .bind(&id)
            .bind(format!("ms_{}", i + 1))
            .bind(i as i64)
            .bind(&m.title)
            .bind(m.amount)
            .bind(Nullable(m.due_on.map(|d| d.timestamp_millis())))
            .bind(MilestoneStatus::INITIAL.as_str())
            .bind(now)
            .execute(&mut **tx)
            .await?;
    }
    Ok(id)
}

/// `PATCH /contracts/{id}/milestones/{mid}`.
pub async fn update_milestone(
    cx: &mut Context,
    input: models::UpdateMilestoneInput,
) -> Result<Contract, errors::UpdateMilestoneError> {
    let op = cx.op;
    use errors::UpdateMilestoneError as E;
    let (tx, caller, _) = cx.parts::<errors::UpdateMilestoneError>().await?;
    let contract = load(&mut *tx, &caller.tenant, &input.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| E::NotFound(missing("contract", &input.id)))?;
    let Some(current) = contract.milestones.iter().find(|m| m.id == input.mid) else {
        return Err(E::NotFound(
            Problem::new(format!("contract {} has no milestone {}", contract.id, input.mid))
                .with("id", input.mid.as_str()),
        ));
    };
    if current.status == input.status {
        return Ok(contract);
    }
    if contract.status != ContractStatus::Active {
        return Err(E::Conflict(
            Problem::new(format!(
                "contract {} is {}; milestones change only while it is active",
                contract.id, contract.status
            ))
            .with("contract_status", contract.status.as_str()),
        ));
    }
    if !current.status.can_move_to(input.status) {
        return Err(E::Conflict(bad_move("milestone", current.status, input.status, current.status.next_states())));
    }
    let now = now_ms();
    sqlx::query(
        "UPDATE milestones SET status = $1, updated_at = $2 WHERE contract_id = $3 AND id = $4 AND status = $5",
    )
    .bind(input.status.as_str())
    .bind(now)
    .bind(&contract.id)
    .bind(&current.id)
    .bind(current.status.as_str())
    .execute(&mut **tx)
    .await
    .map_err(|e| op.fault("updating the milestone", e))?;
    let statuses: Vec<MilestoneStatus> =
        contract.milestones.iter().map(|m| if m.id == input.mid { input.status } else { m.status }).collect();
    let closed = statuses.iter().all(|s| matches!(s, MilestoneStatus::Paid | MilestoneStatus::Cancelled));
    let (status, completed_at) = if closed {
        let any_paid = statuses.contains(&MilestoneStatus::Paid);
        (if any_paid { ContractStatus::Completed } else { ContractStatus::Cancelled }, Some(now))
    } else {
        (ContractStatus::Active, None)
    };
    sqlx::query("UPDATE contracts SET status = $1, completed_at = $2, updated_at = $3 WHERE id = $4")
        .bind(status.as_str())
        .bind(Nullable(completed_at))
        .bind(now)
        .bind(&contract.id)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("updating", e))?;
    let updated = load(&mut *tx, &caller.tenant, &contract.id)
        .await
        .map_err(|e| op.fault("reading", e))?
        .ok_or_else(|| op.fault("reading", "contract vanished"))?;
    Ok(updated)
}
