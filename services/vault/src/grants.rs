//! Grants on credentials and folders, and tenant role assignments: administrators only (the
//! `vault:admin` scope lets a token ask; the tenant `admin` role lets the user do it).

use runtime::Context;
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{InternalError, Operation, Paged, Paging, Problem};
use vault_api::vault::models::{self, Grant, GrantTarget, Permission, RoleAssignment, TenantRole};
use vault_api::vault::{errors, operations as ops};

use crate::credentials::{folder_exists, hold_folder, load};
use crate::problems::not_found;
use crate::rbac::{self, Access};
use crate::state::Vault;
use runtime::OperationFault;
use runtime::caller::Caller;
use runtime::sql::{Arg, Sql};
use runtime::store::{Tx, now_ms, to_time};

fn admin_only() -> Problem {
    Problem::new("Only tenant administrators manage grants and roles.").with("required_role", "admin")
}

const COLUMNS: &str = "id, target, target_id, principal, permissions, created_at, created_by";

fn from_row(r: &AnyRow) -> Grant {
    Grant {
        id: r.get(0),
        target: GrantTarget::parse(&r.get::<String, _>(1)).unwrap_or(GrantTarget::Credential),
        target_id: r.get(2),
        principal: r.get(3),
        permissions: rbac::decode(&r.get::<String, _>(4)),
        created_at: to_time(r.get(5)),
        created_by: r.get(6),
    }
}

/// Whether the grant target exists in the caller's tenant.
/// Whether the grant's target exists; a folder that a grant is being written on is held until the
/// transaction ends (see `credentials::hold_folder`).
async fn target_exists<E: InternalError>(
    tx: &mut Tx,
    op: &Operation,
    tenant: &str,
    target: GrantTarget,
    id: &str,
) -> Result<bool, E> {
    let r = match target {
        GrantTarget::Credential => load(tx, tenant, id).await.map(|r| r.is_some()),
        GrantTarget::Folder if !op.read_only => hold_folder(tx, tenant, id).await,
        GrantTarget::Folder => folder_exists(tx, tenant, id).await,
    };
    r.map_err(|e| op.fault::<E>("loading a grant target", e))
}

/// Which grants a list shows.
pub(super) enum Filter {
    /// All of the tenant's, optionally narrowed.
    Tenant(models::ListGrantsInput),
    /// Those on one credential or folder.
    On(GrantTarget, String),
}

/// Failures shared by the grant operations.
pub(super) enum GrantError {
    NotFound(Problem),
    Forbidden(Problem),
}

macro_rules! grant_error {
    ($($t:ty),*) => {$(
        impl From<GrantError> for $t {
            fn from(e: GrantError) -> Self {
                match e {
                    GrantError::NotFound(p) => <$t>::ResourceNotFound(p),
                    GrantError::Forbidden(p) => <$t>::AuthForbidden(p),
                }
            }
        }
    )*};
}
grant_error!(
    errors::ListCredentialGrantsError,
    errors::CreateCredentialGrantError,
    errors::DeleteCredentialGrantError,
    errors::ListFolderGrantsError,
    errors::CreateFolderGrantError,
    errors::DeleteFolderGrantError,
    errors::DeleteGrantError,
    errors::ListRoleAssignmentsError,
    errors::AssignRoleError,
    errors::RemoveRoleAssignmentError
);

impl From<GrantError> for errors::ListGrantsError {
    fn from(e: GrantError) -> Self {
        match e {
            GrantError::NotFound(p) | GrantError::Forbidden(p) => errors::ListGrantsError::AuthForbidden(p),
        }
    }
}

async fn require_admin<E: InternalError>(
    vault: &Vault,
    tx: &mut Tx,
    op: &Operation,
    caller: &Caller,
) -> Result<Result<Access, GrantError>, E> {
    let access = vault.access(tx, op, caller).await?;
    Ok(if access.is_admin() { Ok(access) } else { Err(GrantError::Forbidden(admin_only())) })
}

pub(super) async fn list<E: InternalError + From<GrantError>>(
    vault: &Vault,
    cx: &mut Context,
    filter: Filter,
    paging: Paging,
) -> Result<Paged<Grant>, E> {
    let (tx, caller, _) = cx.parts::<E>().await?;
    let op: &Operation = match &filter {
        Filter::Tenant(_) => &ops::LIST_GRANTS,
        Filter::On(GrantTarget::Credential, _) => &ops::LIST_CREDENTIAL_GRANTS,
        Filter::On(GrantTarget::Folder, _) => &ops::LIST_FOLDER_GRANTS,
    };
    require_admin::<E>(vault, tx, op, caller).await?.map_err(E::from)?;
    let mut sql = Sql::new(" WHERE tenant_id = $1");
    sql.args.push(Arg::text(caller.tenant.clone()));
    match filter {
        Filter::Tenant(input) => {
            if let Some(p) = input.principal {
                sql.push(" AND principal = ?", Arg::text(p));
            }
            if let Some(t) = input.target {
                sql.push(" AND target = ?", Arg::text(t.as_str()));
            }
        }
        Filter::On(target, id) => {
            if !target_exists::<E>(tx, op, &caller.tenant, target, &id).await? {
                return Err(E::from(GrantError::NotFound(not_found(target.as_str(), &id))));
            }
            sql.push(" AND target = ?", Arg::text(target.as_str()));
            sql.push(" AND target_id = ?", Arg::text(id));
        }
    }
    let count = Sql { text: format!("SELECT COUNT(*) FROM grants{}", sql.text), args: sql.args.clone() };
    let total: i64 = count.query().fetch_one(&mut **tx).await.map_err(|e| op.fault::<E>("counting grants", e))?.get(0);
    let mut page =
        Sql { text: format!("SELECT {COLUMNS} FROM grants{} ORDER BY created_at, id", sql.text), args: sql.args };
    page.push(" LIMIT ?", Arg::Int(i64::from(paging.per_page)));
    page.push(" OFFSET ?", Arg::Int(paging.offset() as i64));
    let rows = page.query().fetch_all(&mut **tx).await.map_err(|e| op.fault::<E>("listing grants", e))?;
    Ok(Paged { items: rows.iter().map(from_row).collect(), total: total.max(0) as u64 })
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site per grant target; a struct would only rename the same fields"
)]
pub(super) async fn create<E: InternalError + From<GrantError>>(
    vault: &Vault,
    cx: &mut Context,
    target: GrantTarget,
    target_id: String,
    principal: String,
    permissions: Vec<Permission>,
) -> Result<Grant, E> {
    let (tx, caller, targets) = cx.parts::<E>().await?;
    let op: &Operation =
        if target == GrantTarget::Credential { &ops::CREATE_CREDENTIAL_GRANT } else { &ops::CREATE_FOLDER_GRANT };
    require_admin::<E>(vault, tx, op, caller).await?.map_err(E::from)?;
    if !target_exists::<E>(tx, op, &caller.tenant, target, &target_id).await? {
        return Err(E::from(GrantError::NotFound(not_found(target.as_str(), &target_id))));
    }
    let now = now_ms();
    let encoded = rbac::encode(&permissions);
    // One grant per principal and target: granting again replaces the permissions. One statement
    // (an upsert on the unique index), so two grants to the same principal at once both succeed,
    // the later one's permissions kept, instead of the second insert breaking the index.
    let fresh = format!("grt_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
    let id: String = sqlx::query(
        "INSERT INTO grants (tenant_id, id, target, target_id, principal, permissions, created_at, created_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (tenant_id, target, target_id, principal) \
         DO UPDATE SET permissions = excluded.permissions, created_at = excluded.created_at, created_by = excluded.created_by \
         RETURNING id",
    )
    .bind(&caller.tenant)
    .bind(&fresh)
    .bind(target.as_str())
    .bind(&target_id)
    .bind(&principal)
    .bind(&encoded)
    .bind(now)
    .bind(&caller.subject)
    .fetch_one(&mut **tx)
    .await
    .map_err(|e| op.fault::<E>("granting", e))?
    .get(0);
    targets.push(id.clone());
    let sql = format!("SELECT {COLUMNS} FROM grants WHERE tenant_id = $1 AND id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(&caller.tenant)
        .bind(&id)
        .fetch_one(&mut **tx)
        .await
        .map_err(|e| op.fault::<E>("reloading", e))?;
    Ok(from_row(&row))
}

pub(super) async fn delete<E: InternalError + From<GrantError>>(
    vault: &Vault,
    cx: &mut Context,
    on: Option<(GrantTarget, &str)>,
    grant_id: &str,
) -> Result<(), E> {
    let (tx, caller, _) = cx.parts::<E>().await?;
    let op: &Operation = match on {
        None => &ops::DELETE_GRANT,
        Some((GrantTarget::Credential, _)) => &ops::DELETE_CREDENTIAL_GRANT,
        Some((GrantTarget::Folder, _)) => &ops::DELETE_FOLDER_GRANT,
    };
    require_admin::<E>(vault, tx, op, caller).await?.map_err(E::from)?;
    let mut sql = Sql::new("DELETE FROM grants WHERE tenant_id = $1 AND id = $2");
    sql.args = vec![Arg::text(caller.tenant.clone()), Arg::text(grant_id.to_string())];
    if let Some((target, id)) = on {
        sql.push(" AND target = ?", Arg::text(target.as_str()));
        sql.push(" AND target_id = ?", Arg::text(id.to_string()));
    }
    let n = sql.query().execute(&mut **tx).await.map_err(|e| op.fault::<E>("deleting a grant", e))?.rows_affected();
    if n == 0 {
        return Err(E::from(GrantError::NotFound(not_found("grant", grant_id))));
    }
    Ok(())
}

fn role_from_row(r: &AnyRow) -> RoleAssignment {
    RoleAssignment {
        tenant_id: r.get(0),
        user_id: r.get(1),
        role: TenantRole::parse(&r.get::<String, _>(2)).unwrap_or(TenantRole::Member),
        assigned_at: to_time(r.get(3)),
        assigned_by: r.get(4),
    }
}

/// The path's tenant must be the caller's: any other answers 404, like one that does not exist.
fn own_tenant(caller: &Caller, tenant_id: &str) -> Result<(), GrantError> {
    if caller.tenant == tenant_id { Ok(()) } else { Err(GrantError::NotFound(not_found("tenant", tenant_id))) }
}

async fn admins(tx: &mut Tx, tenant: &str) -> Result<i64, sqlx::Error> {
    Ok(sqlx::query("SELECT COUNT(*) FROM role_assignments WHERE tenant_id = $1 AND role = 'admin'")
        .bind(tenant)
        .fetch_one(&mut **tx)
        .await?
        .get(0))
}

pub(super) async fn list_roles(
    vault: &Vault,
    cx: &mut Context,
    input: models::ListRoleAssignmentsInput,
    paging: Paging,
) -> Result<Paged<RoleAssignment>, errors::ListRoleAssignmentsError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::ListRoleAssignmentsError>().await?;
    type E = errors::ListRoleAssignmentsError;
    own_tenant(caller, &input.tenant_id)?;
    require_admin::<E>(vault, tx, op, caller).await??;
    let total: i64 = sqlx::query("SELECT COUNT(*) FROM role_assignments WHERE tenant_id = $1")
        .bind(&caller.tenant)
        .fetch_one(&mut **tx)
        .await
        .map_err(|e| op.fault::<E>("counting", e))?
        .get(0);
    let rows = sqlx::query("SELECT tenant_id, user_id, role, assigned_at, assigned_by FROM role_assignments WHERE tenant_id = $1 ORDER BY user_id LIMIT $2 OFFSET $3")
        .bind(&caller.tenant)
        .bind(i64::from(paging.per_page))
        .bind(paging.offset() as i64)
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| op.fault::<E>("listing roles", e))?;
    Ok(Paged { items: rows.iter().map(role_from_row).collect(), total: total.max(0) as u64 })
}

pub(super) async fn assign_role(
    vault: &Vault,
    cx: &mut Context,
    input: models::AssignRoleInput,
) -> Result<RoleAssignment, errors::AssignRoleError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::AssignRoleError>().await?;
    use errors::AssignRoleError as E;
    own_tenant(caller, &input.tenant_id)?;
    require_admin::<E>(vault, tx, op, caller).await??;
    let current =
        Access::load(tx, &caller.tenant, &input.user_id).await.map_err(|e| op.fault::<E>("loading a role", e))?.role;
    if current == Some(TenantRole::Admin)
        && input.role != TenantRole::Admin
        && admins(tx, &caller.tenant).await.map_err(|e| op.fault::<E>("counting admins", e))? <= 1
    {
        return Err(E::ResourceConflict(
            Problem::new("This is the tenant's last administrator; assign another first.")
                .with("user_id", input.user_id.clone()),
        ));
    }
    let now = now_ms();
    sqlx::query(
        "INSERT INTO role_assignments (tenant_id, user_id, role, assigned_at, assigned_by) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = $3, assigned_at = $4, assigned_by = $5",
    )
    .bind(&caller.tenant)
    .bind(&input.user_id)
    .bind(input.role.as_str())
    .bind(now)
    .bind(&caller.subject)
    .execute(&mut **tx)
    .await
    .map_err(|e| op.fault::<E>("assigning a role", e))?;
    Ok(RoleAssignment {
        tenant_id: caller.tenant.clone(),
        user_id: input.user_id,
        role: input.role,
        assigned_at: to_time(now),
        assigned_by: caller.subject.clone(),
    })
}

pub(super) async fn remove_role(
    vault: &Vault,
    cx: &mut Context,
    input: models::RemoveRoleAssignmentInput,
) -> Result<(), errors::RemoveRoleAssignmentError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::RemoveRoleAssignmentError>().await?;
    use errors::RemoveRoleAssignmentError as E;
    own_tenant(caller, &input.tenant_id)?;
    require_admin::<E>(vault, tx, op, caller).await??;
    let row = sqlx::query("SELECT tenant_id, user_id, role, assigned_at, assigned_by FROM role_assignments WHERE tenant_id = $1 AND user_id = $2")
        .bind(&caller.tenant)
        .bind(&input.user_id)
        .fetch_optional(&mut **tx)
        .await
        .map_err(|e| op.fault::<E>("loading a role", e))?
        .ok_or_else(|| E::ResourceNotFound(not_found("role assignment for", &input.user_id)))?;
    if role_from_row(&row).role == TenantRole::Admin
        && admins(tx, &caller.tenant).await.map_err(|e| op.fault::<E>("counting admins", e))? <= 1
    {
        return Err(E::ResourceConflict(
            Problem::new("This is the tenant's last administrator; assign another first.")
                .with("user_id", input.user_id.clone()),
        ));
    }
    sqlx::query("DELETE FROM role_assignments WHERE tenant_id = $1 AND user_id = $2")
        .bind(&caller.tenant)
        .bind(&input.user_id)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault::<E>("removing a role", e))?;
    Ok(())
}
