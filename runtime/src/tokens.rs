//! Personal access tokens: random secrets shown once, stored only as a SHA-256 hash, carrying
//! scopes and an optional expiry. Checked on every request, so a revoked or expired token fails
//! on its very next use.

use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::store::{Store, now_ms};

/// Every personal access token starts with this, so the gate knows it is not a JWT.
pub const PERSONAL_PREFIX: &str = "swp_";
/// Every API token starts with this.
pub const API_PREFIX: &str = "prs_";

/// Which kind of stored token a secret is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A personal access token (`swp_…`, table `personal_tokens`), for services whose spec lists
    /// `personal` in `stored_tokens`.
    Personal,
    /// An API token (`prs_…`, table `api_tokens`, with a plan), for services whose spec lists
    /// `api` in `stored_tokens`.
    Api,
}

impl Kind {
    /// The kind a presented secret claims to be, from its prefix.
    pub fn of(secret: &str) -> Option<Kind> {
        if secret.starts_with(PERSONAL_PREFIX) {
            Some(Kind::Personal)
        } else if secret.starts_with(API_PREFIX) {
            Some(Kind::Api)
        } else {
            None
        }
    }

    /// The kind a spec names in `stored_tokens` (`personal`, `api`).
    pub fn named(name: &str) -> Option<Kind> {
        match name {
            "personal" => Some(Kind::Personal),
            "api" => Some(Kind::Api),
            _ => None,
        }
    }

    /// The name specs use for this kind.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Personal => "personal",
            Kind::Api => "api",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Kind::Personal => PERSONAL_PREFIX,
            Kind::Api => API_PREFIX,
        }
    }
}

/// A freshly minted secret: the kind's prefix + 40 random base62 characters (≈238 bits).
pub fn mint(kind: Kind) -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rngs::OsRng;
    let body: String = (0..40).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect();
    format!("{}{body}", kind.prefix())
}

/// 256 random bits, base64url: session ids, CSRF tokens, authorization codes, refresh tokens.
pub fn random_secret() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The stored form of a secret. A fast hash suffices: the secret has ~238 bits of entropy.
pub fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// An authenticated stored token.
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
    /// Its rate-limit plan (API tokens).
    pub plan: Option<String>,
}

/// Why a presented stored token was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The token is not acceptable; the text says why (never the secret).
    Invalid(&'static str),
    /// The store could not be read: nothing is known about the token (answer 503, not 401).
    Unavailable,
}

/// Looks a presented secret up.
pub async fn authenticate(store: &Store, kind: Kind, secret: &str) -> Result<Authenticated, Refusal> {
    use Refusal::Invalid;
    let (select, touch) = match kind {
        Kind::Personal => (
            "SELECT id, tenant_id, user_id, scopes, expires_at, revoked_at, CAST(NULL AS TEXT) FROM personal_tokens WHERE hash = $1",
            "UPDATE personal_tokens SET last_used_at = $1 WHERE id = $2",
        ),
        Kind::Api => (
            "SELECT id, tenant_id, user_id, scopes, expires_at, revoked_at, plan FROM api_tokens WHERE hash = $1",
            "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2",
        ),
    };
    let row = sqlx::query(select)
        .bind(hash(secret))
        .fetch_optional(store.readers())
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "could not read a stored token");
            Refusal::Unavailable
        })?
        .ok_or(Invalid("the token is not known"))?;
    if row.get::<Option<i64>, _>(5).is_some() {
        return Err(Invalid("the token has been revoked"));
    }
    let now = now_ms();
    if row.get::<Option<i64>, _>(4).is_some_and(|e| e <= now) {
        return Err(Invalid("the token has expired"));
    }
    let id: String = row.get(0);
    // Best effort: last use is informational and must not fail the request.
    let _ = sqlx::query(touch).bind(now).bind(&id).execute(store.pool()).await;
    let scopes: String = row.get(3);
    Ok(Authenticated {
        id,
        tenant_id: row.get(1),
        user_id: row.get(2),
        scopes: scopes.split_whitespace().map(str::to_string).collect(),
        plan: row.get(6),
    })
}
