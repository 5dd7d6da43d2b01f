//! Tenants: the platform's unit of isolation. Every row a service keeps is scoped by a tenant id
//! the gate took from the caller's credential; this table lists the tenants created by an operator.

use anyhow::{Result, bail};

use crate::store::{Tx, now_ms};

/// Creates tenant `id` inside `tx` (so a service can add what it keeps per tenant, its first
/// administrator say, in the same commit). Fails when the name breaks the tenant rule or the
/// tenant exists.
pub async fn create(tx: &mut Tx, id: &str) -> Result<()> {
    if !crate::names::tenant_ok(id) {
        bail!("{}", crate::names::TENANT_RULE);
    }
    let exists = sqlx::query("SELECT 1 FROM tenants WHERE id = $1").bind(id).fetch_optional(&mut **tx).await?.is_some();
    if exists {
        bail!("tenant {id} already exists");
    }
    sqlx::query("INSERT INTO tenants (id, created_at) VALUES ($1, $2)")
        .bind(id)
        .bind(now_ms())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Makes `tx` take its turn with every other transaction that calls this for `tenant`, until it
/// ends: a lock on the tenant's row. For changes decided on a tenant-wide structure read in the
/// same transaction (a folder tree: a move must not close a cycle that a concurrent move opened),
/// which under PostgreSQL's `READ COMMITTED` would otherwise each decide on what the other had not
/// yet committed. Statements after it see what the previous holder committed. On SQLite, whose
/// writers already take turns, it costs one statement. A tenant that was never created holds no
/// row, so nothing is locked for it.
pub async fn take_turn(tx: &mut Tx, tenant: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE tenants SET created_at = created_at WHERE id = $1").bind(tenant).execute(&mut **tx).await?;
    Ok(())
}
