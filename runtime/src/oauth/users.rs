//! Users of the embedded authorization server: a sign-in name, the tenant they belong to, and an
//! argon2id password hash (PHC string). Created with `specwright user add`.

use anyhow::{Context, Result, bail};
use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use sqlx::Row;

use crate::store::{Store, now_ms};

/// Shortest password accepted (NIST SP 800-63B asks for at least 8).
pub const MIN_PASSWORD: usize = 8;
/// Longest password accepted (bounds the hashing work a request can ask for).
pub const MAX_PASSWORD: usize = 1024;

/// A signed-in user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// The user's id (the token's `sub`).
    pub id: String,
    /// Their tenant.
    pub tenant: String,
}

async fn hash(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || {
        Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| anyhow::anyhow!("{e}"))
    })
    .await
    .context("hashing the password")?
}

/// Creates `user` in `tenant` (which must exist), or sets a new password if they exist there.
/// Returns whether the user is new.
pub async fn add(store: &Store, user: &str, tenant: &str, password: &str) -> Result<bool> {
    if !crate::names::user_ok(user) {
        bail!("{}", crate::names::USER_RULE);
    }
    if password.chars().count() < MIN_PASSWORD || password.len() > MAX_PASSWORD {
        bail!("a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters");
    }
    let tenant_exists =
        sqlx::query("SELECT 1 FROM tenants WHERE id = $1").bind(tenant).fetch_optional(store.pool()).await?;
    if tenant_exists.is_none() {
        bail!("there is no tenant {tenant}; create it with `specwright tenant create {tenant} --admin <user>`");
    }
    let existing =
        sqlx::query("SELECT tenant_id FROM users WHERE id = $1").bind(user).fetch_optional(store.pool()).await?;
    let phc = hash(password.to_string()).await?;
    let now = now_ms();
    match existing {
        Some(row) => {
            let current: String = row.get(0);
            if current != tenant {
                bail!("user {user} belongs to tenant {current}");
            }
            sqlx::query("UPDATE users SET password_hash = $1, password_changed_at = $2 WHERE id = $3")
                .bind(phc)
                .bind(now)
                .bind(user)
                .execute(store.pool())
                .await?;
            // A new password ends every session signed in with the old one.
            sqlx::query("DELETE FROM sessions WHERE user_id = $1").bind(user).execute(store.pool()).await?;
            Ok(false)
        }
        None => {
            sqlx::query(
                "INSERT INTO users (id, tenant_id, password_hash, created_at, password_changed_at) VALUES ($1, $2, $3, $4, $4)",
            )
            .bind(user)
            .bind(tenant)
            .bind(phc)
            .bind(now)
            .execute(store.pool())
            .await?;
            Ok(true)
        }
    }
}

/// The user if `password` is theirs. Unknown users cost the same hashing work as known ones, so
/// timing does not tell which names exist.
pub async fn verify(store: &Store, user: &str, password: &str) -> Result<Option<User>> {
    if password.len() > MAX_PASSWORD || !crate::names::user_ok(user) {
        return Ok(None);
    }
    let row = sqlx::query("SELECT tenant_id, password_hash FROM users WHERE id = $1")
        .bind(user)
        .fetch_optional(store.pool())
        .await?;
    let (tenant, phc) = match row {
        Some(r) => (Some(r.get::<String, _>(0)), r.get::<String, _>(1)),
        None => (None, dummy_hash().to_string()),
    };
    let password = password.to_string();
    let ok = tokio::task::spawn_blocking(move || {
        PasswordHash::new(&phc)
            .map(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
            .unwrap_or(false)
    })
    .await
    .context("verifying the password")?;
    Ok(match (ok, tenant) {
        (true, Some(tenant)) => Some(User { id: user.to_string(), tenant }),
        _ => None,
    })
}

/// A hash of a random password, computed once: what unknown users are checked against.
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| {
        let random = uuid::Uuid::new_v4().to_string();
        Argon2::default().hash_password(random.as_bytes()).map(|h| h.to_string()).unwrap_or_default()
    })
}

/// The tenant of `user`, if they exist.
pub async fn tenant_of(store: &Store, user: &str) -> Result<Option<String>> {
    let row = sqlx::query("SELECT tenant_id FROM users WHERE id = $1").bind(user).fetch_optional(store.pool()).await?;
    Ok(row.map(|r| r.get(0)))
}

/// Removes `user`: their password, sessions, consents and refresh tokens (so no new access token
/// can be minted for them; access tokens already issued expire within the hour). Their role
/// assignments and grants belong to the services that keep them. Returns whether they existed.
pub async fn remove(store: &Store, user: &str) -> Result<bool> {
    let mut tx = store.begin().await?;
    let existed =
        sqlx::query("DELETE FROM users WHERE id = $1").bind(user).execute(&mut *tx).await?.rows_affected() > 0;
    sqlx::query("DELETE FROM sessions WHERE user_id = $1").bind(user).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM oauth_consents WHERE user_id = $1").bind(user).execute(&mut *tx).await?;
    sqlx::query("UPDATE oauth_refresh_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL")
        .bind(now_ms())
        .bind(user)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(existed)
}
