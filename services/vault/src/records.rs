//! Listing the audit log: tenant administrators and auditors, newest first.

use runtime::Context;
use sqlx::Row;
use support::{Paged, Paging, Problem};
use vault_api::vault::errors;
use vault_api::vault::models::{self, AuditEvent, AuditOutcome, AuthMethod};

use crate::state::Vault;
use runtime::OperationFault;
use runtime::audit;
use runtime::sql::{Arg, Sql};
use runtime::store::to_time;

pub(super) async fn list(
    vault: &Vault,
    cx: &mut Context,
    input: models::ListAuditInput,
    paging: Paging,
) -> Result<Paged<AuditEvent>, errors::ListAuditError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::ListAuditError>().await?;
    let access = vault.access(tx, op, caller).await?;
    if !access.can_audit() {
        return Err(errors::ListAuditError::AuthForbidden(
            Problem::new("Only tenant administrators and auditors read the audit log.")
                .with("required_role", "auditor"),
        ));
    }
    let mut sql = Sql::new(" WHERE tenant_id = $1");
    sql.args.push(Arg::text(caller.tenant.clone()));
    if let Some(a) = input.actor {
        sql.push(" AND actor = ?", Arg::text(a));
    }
    if let Some(o) = input.operation {
        sql.push(" AND operation = ?", Arg::text(o));
    }
    if let Some(o) = input.outcome {
        sql.push(" AND outcome = ?", Arg::text(o.as_str()));
    }
    if let Some(t) = input.target {
        // Targets are stored as a JSON array of strings; match the quoted element.
        sql.push(" AND targets LIKE ?", Arg::text(format!("%{}%", serde_json::to_string(&t).unwrap_or_default())));
    }
    if let Some(s) = input.since {
        sql.push(" AND occurred_at >= ?", Arg::Int(s.timestamp_millis()));
    }
    if let Some(u) = input.until {
        sql.push(" AND occurred_at < ?", Arg::Int(u.timestamp_millis()));
    }
    let count = Sql { text: format!("SELECT COUNT(*) FROM audit_events{}", sql.text), args: sql.args.clone() };
    let total: i64 = count.query().fetch_one(&mut **tx).await.map_err(|e| op.fault("counting audit rows", e))?.get(0);
    let mut page = Sql {
        text: format!(
            "SELECT id, occurred_at, request_id, actor, auth_method, token_id, scope, tenant_id, operation, targets, outcome, status, error_code FROM audit_events{} ORDER BY occurred_at DESC, id DESC",
            sql.text
        ),
        args: sql.args,
    };
    page.push(" LIMIT ?", Arg::Int(i64::from(paging.per_page)));
    page.push(" OFFSET ?", Arg::Int(paging.offset() as i64));
    let rows = page.query().fetch_all(&mut **tx).await.map_err(|e| op.fault("listing audit rows", e))?;
    let items = rows
        .iter()
        .map(|r| AuditEvent {
            id: r.get("id"),
            occurred_at: to_time(r.get("occurred_at")),
            request_id: r.get("request_id"),
            actor: r.get("actor"),
            auth_method: AuthMethod::parse(&r.get::<String, _>("auth_method")).unwrap_or(AuthMethod::Jwt),
            token_id: r.get("token_id"),
            scope: r.get("scope"),
            tenant_id: r.get("tenant_id"),
            operation: r.get("operation"),
            targets: audit::targets(r),
            outcome: AuditOutcome::parse(&r.get::<String, _>("outcome")).unwrap_or(AuditOutcome::Failed),
            status: r.get("status"),
            error_code: r.get("error_code"),
        })
        .collect();
    Ok(Paged { items, total: total.max(0) as u64 })
}
