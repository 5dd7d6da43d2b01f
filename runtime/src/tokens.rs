//! Personal access tokens: random secrets shown once, stored only as a SHA-256 hash, carrying
//! scopes and an optional expiry. Checked on every request, so a revoked or expired token fails
//! on its very next use.

use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::store::{Store, now_ms};

/// Every vault personal token starts with this, so the gate knows it is not a JWT.
pub const PERSONAL_PREFIX: &str = "swp_";

/// A freshly minted secret: `swp_` + 40 random base62 characters (≈238 bits).
pub fn mint() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rngs::OsRng;
    let body: String = (0..40).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect();
    format!("{PERSONAL_PREFIX}{body}")
}

/// The stored form of a secret. A fast hash suffices: the secret has ~238 bits of entropy.
pub fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// An authenticated personal token.
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// Token id.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its user.
    pub user_id: String,
    /// Its scopes.
    pub scopes: Vec<String>,
}

/// Looks a presented secret up; the error says why it is refused (never the secret).
pub async fn authenticate(store: &Store, secret: &str) -> Result<Authenticated, &'static str> {
    let row = sqlx::query(
        "SELECT id, tenant_id, user_id, scopes, expires_at, revoked_at FROM personal_tokens WHERE hash = $1",
    )
    .bind(hash(secret))
    .fetch_optional(store.pool())
    .await
    .map_err(|_| "the token could not be checked")?
    .ok_or("the token is not known")?;
    let revoked: Option<i64> = row.get(5);
    if revoked.is_some() {
        return Err("the token has been revoked");
    }
    let expires: Option<i64> = row.get(4);
    let now = now_ms();
    if expires.is_some_and(|e| e <= now) {
        return Err("the token has expired");
    }
    let id: String = row.get(0);
    // Best effort: last use is informational and must not fail the request.
    let _ = sqlx::query("UPDATE personal_tokens SET last_used_at = $1 WHERE id = $2")
        .bind(now)
        .bind(&id)
        .execute(store.pool())
        .await;
    let scopes: String = row.get(3);
    Ok(Authenticated {
        id,
        tenant_id: row.get(1),
        user_id: row.get(2),
        scopes: scopes.split_whitespace().map(str::to_string).collect(),
    })
}
