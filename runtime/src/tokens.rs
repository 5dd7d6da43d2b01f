//! Stored tokens (personal access tokens and API tokens): random secrets shown once, stored only
//! as a SHA-256 hash, carrying scopes, an optional plan and an optional expiry. Issued and
//! revoked here for every service that offers them ([`issue`], [`revoke`]); checked on every
//! request ([`authenticate`]), so a revoked or expired token fails on its very next use.

use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::store::{Nullable, Store, now_ms};

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

    /// The table the kind is stored in.
    fn table(self) -> &'static str {
        match self {
            Kind::Personal => "personal_tokens",
            Kind::Api => "api_tokens",
        }
    }

    /// What every id of the kind starts with.
    fn id_prefix(self) -> &'static str {
        match self {
            Kind::Personal => "pat_",
            Kind::Api => "tok_",
        }
    }
}

/// A stored token to issue ([`issue`]).
#[derive(Debug, Clone, Copy)]
pub struct NewToken<'a> {
    /// Which kind: its secret's prefix and its table.
    pub kind: Kind,
    /// The tenant and the user the token acts as.
    pub tenant: &'a str,
    pub user: &'a str,
    /// Its label.
    pub name: &'a str,
    /// Its scopes (stored sorted, each once).
    pub scopes: &'a [String],
    /// Its rate-limit plan (API tokens only; `None` for personal ones).
    pub plan: Option<&'a str>,
    /// When it stops working, epoch milliseconds.
    pub expires_at: Option<i64>,
}

/// A token just issued: the secret is here once, and never stored.
#[derive(Debug, Clone)]
pub struct Issued {
    /// Its id (`pat_…`, `tok_…`), what lists and revocations name.
    pub id: String,
    /// The secret, to show its owner once.
    pub secret: String,
    /// The secret's first eight characters, kept to tell tokens apart in lists.
    pub prefix: String,
    /// Its scopes, sorted, each once.
    pub scopes: Vec<String>,
    /// When it was issued, epoch milliseconds.
    pub created_at: i64,
}

/// Mints a token of `new.kind` and stores its hash through `db` (the call's transaction, or the
/// pool outside a request): the one place a stored token is made.
pub async fn issue<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    new: NewToken<'_>,
) -> Result<Issued, sqlx::Error> {
    let secret = mint(new.kind);
    let id = format!("{}{}", new.kind.id_prefix(), &uuid::Uuid::new_v4().simple().to_string()[..16]);
    let prefix: String = secret.chars().take(8).collect();
    let mut scopes = new.scopes.to_vec();
    scopes.sort();
    scopes.dedup();
    let created_at = now_ms();
    // Personal tokens have no plan column; the statement is one of two constants.
    let insert = match new.kind {
        Kind::Personal => {
            "INSERT INTO personal_tokens (id, tenant_id, user_id, name, prefix, hash, scopes, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        }
        Kind::Api => {
            "INSERT INTO api_tokens (id, tenant_id, user_id, name, prefix, hash, scopes, created_at, expires_at, plan) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        }
    };
    let mut query = sqlx::query(insert)
        .bind(&id)
        .bind(new.tenant)
        .bind(new.user)
        .bind(new.name)
        .bind(&prefix)
        .bind(hash(&secret))
        .bind(scopes.join(" "))
        .bind(created_at)
        .bind(Nullable(new.expires_at));
    if new.kind == Kind::Api {
        query = query.bind(new.plan.unwrap_or_default());
    }
    query.execute(db).await?;
    Ok(Issued { id, secret, prefix, scopes, created_at })
}

/// Revokes the active token `id` of `user` in `tenant` through `db`: whether there was one (a
/// token of another user or tenant, or one already revoked, is not there). It fails from its
/// very next request.
pub async fn revoke<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    kind: Kind,
    tenant: &str,
    user: &str,
    id: &str,
) -> Result<bool, sqlx::Error> {
    // The table name is one of two constants; every value is bound.
    let statement = format!(
        "UPDATE {} SET revoked_at = $1 WHERE id = $2 AND tenant_id = $3 AND user_id = $4 AND revoked_at IS NULL",
        kind.table()
    );
    let done =
        sqlx::query(sqlx::AssertSqlSafe(statement)).bind(now_ms()).bind(id).bind(tenant).bind(user).execute(db).await?;
    Ok(done.rows_affected() > 0)
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
