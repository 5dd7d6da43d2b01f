//! Leases: single-use, time-limited handles on one version of a credential's secret.
//!
//! Redeeming is one conditional `UPDATE … WHERE state = 'active' AND expires_at > now`: of many
//! concurrent redeems exactly one changes the row, and only that one gets the secret. Only the
//! user who issued a lease sees, redeems or revokes it.

use runtime::Context;
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{Paged, Paging, Problem};
use vault_api::vault::errors;
use vault_api::vault::models::{self, CredentialState, Lease, LeaseState, LeasedSecret};

use crate::credentials::{open_version, visible};
use crate::problems::{forbidden, not_found};
use crate::rbac::Perms;
use crate::state::Vault;
use runtime::OperationFault;
use runtime::caller::Caller;
use runtime::sql::{Arg, Sql};
use runtime::store::{Nullable, Tx, now_ms, to_time};

const COLUMNS: &str = "id, credential_key, version, state, issued_to, purpose, ttl_seconds, expires_at, created_at, redeemed_at, revoked_at";

fn from_row(r: &AnyRow, now: i64) -> Lease {
    let expires_at: i64 = r.get(7);
    let mut state = LeaseState::parse(&r.get::<String, _>(3)).unwrap_or(LeaseState::Expired);
    // An active lease past its expiry is expired; no background job is needed to say so.
    if state == LeaseState::Active && expires_at <= now {
        state = LeaseState::Expired;
    }
    Lease {
        id: r.get(0),
        credential_key: r.get(1),
        version: r.get(2),
        state,
        issued_to: r.get(4),
        purpose: r.get(5),
        ttl_seconds: r.get(6),
        expires_at: to_time(expires_at),
        created_at: to_time(r.get(8)),
        redeemed_at: r.get::<Option<i64>, _>(9).map(to_time),
        revoked_at: r.get::<Option<i64>, _>(10).map(to_time),
    }
}

async fn load_mine(tx: &mut Tx, caller: &Caller, id: &str) -> Result<Option<AnyRow>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM leases WHERE tenant_id = $1 AND id = $2 AND issued_to = $3");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(&caller.tenant)
        .bind(id)
        .bind(&caller.subject)
        .fetch_optional(&mut **tx)
        .await
}

pub(super) async fn list(
    _vault: &Vault,
    cx: &mut Context,
    input: models::ListLeasesInput,
    paging: Paging,
) -> Result<Paged<Lease>, errors::ListLeasesError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::ListLeasesError>().await?;
    let now = now_ms();
    let mut filter = Sql::new(" WHERE tenant_id = $1 AND issued_to = $2");
    filter.args = vec![Arg::text(caller.tenant.clone()), Arg::text(caller.subject.clone())];
    if let Some(k) = &input.credential_key {
        filter.push(" AND credential_key = ?", Arg::text(k.clone()));
    }
    match input.state {
        Some(LeaseState::Active) => filter.push(" AND state = 'active' AND expires_at > ?", Arg::Int(now)),
        Some(LeaseState::Expired) => {
            filter.push(" AND (state = 'expired' OR (state = 'active' AND expires_at <= ?))", Arg::Int(now))
        }
        Some(s) => filter.push(" AND state = ?", Arg::text(s.as_str())),
        None => &mut filter,
    };
    let count = Sql { text: format!("SELECT COUNT(*) FROM leases{}", filter.text), args: filter.args.clone() };
    let total: i64 = count.query().fetch_one(&mut **tx).await.map_err(|e| op.fault("counting leases", e))?.get(0);
    let mut page = Sql {
        text: format!("SELECT {COLUMNS} FROM leases{} ORDER BY created_at DESC, id DESC", filter.text),
        args: filter.args,
    };
    page.push(" LIMIT ?", Arg::Int(i64::from(paging.per_page)));
    page.push(" OFFSET ?", Arg::Int(paging.offset() as i64));
    let rows = page.query().fetch_all(&mut **tx).await.map_err(|e| op.fault("listing leases", e))?;
    Ok(Paged { items: rows.iter().map(|r| from_row(r, now)).collect(), total: total.max(0) as u64 })
}

pub(super) async fn issue(
    vault: &Vault,
    cx: &mut Context,
    input: models::IssueLeaseInput,
) -> Result<Lease, errors::IssueLeaseError> {
    let op = cx.op;
    let (tx, caller, targets) = cx.parts::<errors::IssueLeaseError>().await?;
    use errors::IssueLeaseError as E;
    let access = vault.access(tx, op, caller).await?;
    let (row, perms) = visible(tx, op, caller, &access, &input.credential_key).await?.map_err(E::ResourceNotFound)?;
    if !perms.has(Perms::REVEAL) {
        return Err(E::AuthForbidden(forbidden("canReveal", &format!("credential {}", row.key))));
    }
    if row.state == CredentialState::Archived {
        return Err(E::CredentialArchived(Problem::new(format!(
            "Credential {} is archived and cannot be leased.",
            row.key
        ))));
    }
    let version = input.version.unwrap_or(row.current_version);
    let exists = sqlx::query("SELECT 1 FROM credential_versions WHERE tenant_id = $1 AND key = $2 AND version = $3")
        .bind(&caller.tenant)
        .bind(&row.key)
        .bind(version)
        .fetch_optional(&mut **tx)
        .await
        .map_err(|e| op.fault("loading a version", e))?;
    if exists.is_none() {
        return Err(E::ResourceNotFound(
            Problem::new(format!("Credential {} has no version {version}.", row.key)).with("version", version),
        ));
    }
    let ttl = input.ttl_seconds.unwrap_or(vault.leases.default_ttl).clamp(1, vault.leases.max_ttl);
    let now = now_ms();
    let id = format!("lse_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(
        "INSERT INTO leases (tenant_id, id, credential_key, version, issued_to, purpose, ttl_seconds, expires_at, state, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'active', $9)",
    )
    .bind(&caller.tenant)
    .bind(&id)
    .bind(&row.key)
    .bind(version)
    .bind(&caller.subject)
    .bind(Nullable(input.purpose.as_deref()))
    .bind(ttl)
    .bind(now + ttl * 1000)
    .bind(now)
    .execute(&mut **tx)
    .await
    .map_err(|e| op.fault("inserting a lease", e))?;
    targets.push(id.clone());
    let row = load_mine(tx, caller, &id)
        .await
        .map_err(|e| op.fault("reloading", e))?
        .ok_or_else(|| op.fault("reloading", "row vanished"))?;
    Ok(from_row(&row, now))
}

fn unavailable(lease: &Lease) -> Problem {
    Problem::new(format!("Lease {} is {} and can no longer be redeemed.", lease.id, lease.state))
        .with("state", lease.state.as_str())
}

pub(super) async fn redeem(
    vault: &Vault,
    cx: &mut Context,
    input: models::RedeemLeaseInput,
) -> Result<LeasedSecret, errors::RedeemLeaseError> {
    let op = cx.op;
    let (tx, caller, targets) = cx.parts::<errors::RedeemLeaseError>().await?;
    use errors::RedeemLeaseError as E;
    let now = now_ms();
    let claimed = sqlx::query(
        "UPDATE leases SET state = 'redeemed', redeemed_at = $1 \
         WHERE tenant_id = $2 AND id = $3 AND issued_to = $4 AND state = 'active' AND expires_at > $1 \
         RETURNING credential_key, version",
    )
    .bind(now)
    .bind(&caller.tenant)
    .bind(&input.lease_id)
    .bind(&caller.subject)
    .fetch_optional(&mut **tx)
    .await
    .map_err(|e| op.fault("redeeming a lease", e))?;
    let Some(claimed) = claimed else {
        return match load_mine(tx, caller, &input.lease_id).await.map_err(|e| op.fault("loading a lease", e))? {
            Some(r) => Err(E::LeaseUnavailable(unavailable(&from_row(&r, now)))),
            None => Err(E::ResourceNotFound(not_found("lease", &input.lease_id))),
        };
    };
    let key: String = claimed.get(0);
    let version: i64 = claimed.get(1);
    targets.push(key.clone());
    // The grant is checked again at redeem time: revoking it stops outstanding leases too. A
    // denial rolls the claim back, so the lease is not spent.
    let access = vault.access(tx, op, caller).await?;
    let (row, perms) = visible(tx, op, caller, &access, &key).await?.map_err(E::ResourceNotFound)?;
    if !perms.has(Perms::REVEAL) {
        return Err(E::AuthForbidden(forbidden("canReveal", &format!("credential {key}"))));
    }
    let value = open_version(vault, tx, op, &caller.tenant, &key, version)
        .await?
        .ok_or_else(|| E::ResourceNotFound(not_found("credential version", &version.to_string())))?;
    Ok(LeasedSecret {
        lease_id: input.lease_id,
        credential_key: key,
        version,
        kind: row.kind,
        username: row.username,
        value,
        redeemed_at: to_time(now),
    })
}

pub(super) async fn revoke(
    _vault: &Vault,
    cx: &mut Context,
    input: models::RevokeLeaseInput,
) -> Result<Lease, errors::RevokeLeaseError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::RevokeLeaseError>().await?;
    use errors::RevokeLeaseError as E;
    let now = now_ms();
    let done = sqlx::query("UPDATE leases SET state = 'revoked', revoked_at = $1 WHERE tenant_id = $2 AND id = $3 AND issued_to = $4 AND state = 'active' AND expires_at > $1")
        .bind(now)
        .bind(&caller.tenant)
        .bind(&input.id)
        .bind(&caller.subject)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("revoking a lease", e))?
        .rows_affected();
    let row = load_mine(tx, caller, &input.id)
        .await
        .map_err(|e| op.fault("loading a lease", e))?
        .ok_or_else(|| E::ResourceNotFound(not_found("lease", &input.id)))?;
    let lease = from_row(&row, now);
    if done == 0 {
        return Err(E::LeaseUnavailable(unavailable(&lease)));
    }
    Ok(lease)
}
