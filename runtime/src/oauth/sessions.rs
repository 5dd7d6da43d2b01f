//! Browser sessions: signing in sets an opaque cookie naming a stored session (only its SHA-256
//! hash is kept), which carries a CSRF token. Used by the authorization server's pages, the
//! console, and cookie requests to the REST APIs, which skip scope checks but never RBAC or tenant
//! isolation: scopes bind Bearer callers (OAuth 2.0, RFC 6750), and the product requires a signed-in
//! session to meet RBAC and tenant isolation only.

use axum::http::{HeaderMap, HeaderValue, Method, header};
use sqlx::Row;

use crate::config::Origin;
use crate::store::{Store, now_ms};
use crate::tokens::hash;

/// The session cookie's name.
pub const COOKIE: &str = "specwright_session";
/// The header (API requests) or form field (pages) that proves a state-changing request comes
/// from our own pages.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// How long a session lasts, in milliseconds (12 hours).
pub const LIFETIME_MS: i64 = 12 * 3_600_000;

/// A signed-in session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The user.
    pub user: String,
    /// Their tenant.
    pub tenant: String,
    /// The token state-changing requests must echo.
    pub csrf: String,
    /// When the user signed in, epoch milliseconds (an ID token's `auth_time`).
    pub signed_in_at: i64,
}

/// Starts a session; returns the cookie value and the session.
pub async fn create(store: &Store, user: &str, tenant: &str) -> sqlx::Result<(String, Session)> {
    let secret = crate::tokens::random_secret();
    let csrf = crate::tokens::random_secret();
    let now = now_ms();
    // Expired sessions are cleared as new ones start.
    sqlx::query("DELETE FROM sessions WHERE expires_at <= $1").bind(now).execute(store.pool()).await?;
    sqlx::query(
        "INSERT INTO sessions (hash, user_id, tenant_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(hash(&secret))
    .bind(user)
    .bind(tenant)
    .bind(&csrf)
    .bind(now)
    .bind(now + LIFETIME_MS)
    .execute(store.pool())
    .await?;
    Ok((secret, Session { user: user.into(), tenant: tenant.into(), csrf, signed_in_at: now }))
}

/// The live session a cookie value names.
pub async fn lookup(store: &Store, secret: &str) -> sqlx::Result<Option<Session>> {
    let row = sqlx::query(
        "SELECT user_id, tenant_id, csrf_token, created_at FROM sessions WHERE hash = $1 AND expires_at > $2",
    )
    .bind(hash(secret))
    .bind(now_ms())
    .fetch_optional(store.pool())
    .await?;
    Ok(row.map(|r| Session { user: r.get(0), tenant: r.get(1), csrf: r.get(2), signed_in_at: r.get(3) }))
}

/// The session a request's cookie names, with the cookie's value, if it is live.
pub async fn from_headers(store: &Store, headers: &HeaderMap) -> sqlx::Result<Option<(String, Session)>> {
    let Some(secret) = cookie(headers) else { return Ok(None) };
    Ok(lookup(store, secret).await?.map(|s| (secret.to_string(), s)))
}

/// Ends the session a cookie value names.
pub async fn delete(store: &Store, secret: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM sessions WHERE hash = $1").bind(hash(secret)).execute(store.pool()).await?;
    Ok(())
}

/// The session cookie's value in a request, if any.
pub fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim_matches('"'))
        .filter(|v| !v.is_empty() && v.len() <= 128)
}

/// The `Set-Cookie` value that stores `secret` (or, with `None`, clears the cookie) for `path`
/// (the public URL's path, [`crate::config::Config::cookie_path`]). HttpOnly, SameSite=Lax, and
/// Secure when the server is reached over HTTPS.
pub fn set_cookie(secret: Option<&str>, secure: bool, path: &str) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let value = match secret {
        Some(s) => {
            format!("{COOKIE}={s}; Path={path}; HttpOnly; SameSite=Lax; Max-Age={}{secure}", LIFETIME_MS / 1000)
        }
        None => format!("{COOKIE}=; Path={path}; HttpOnly; SameSite=Lax; Max-Age=0{secure}"),
    };
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("specwright_session=; Max-Age=0"))
}

/// Equal strings, compared in time independent of where they differ (`subtle`; only the length
/// may show, and the secrets compared here have a fixed length).
pub fn same(a: &str, b: &str) -> bool {
    subtle::ConstantTimeEq::ct_eq(a.as_bytes(), b.as_bytes()).into()
}

/// Whether a request was sent by a page of another site: its `Origin` says so, or, when it sends
/// none or an opaque `null` one (privacy settings), its `Sec-Fetch-Site`. `origin` is this server's
/// public origin (scheme, host, port: what browsers send, never the public URL's path).
pub fn cross_site(headers: &HeaderMap, origin: &Origin) -> bool {
    let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        Some("null") => fetch_site != Some("same-origin"),
        Some(o) => !origin.matches(o),
        None => fetch_site.is_some_and(|v| v == "cross-site" || v == "same-site"),
    }
}

/// Whether a cookie request may proceed: safe methods always; others only from our own origin
/// and carrying the session's CSRF token in `X-CSRF-Token` or, from a form, `presented`.
pub fn csrf_ok(
    method: &Method,
    headers: &HeaderMap,
    session: &Session,
    origin: &Origin,
    presented: Option<&str>,
) -> bool {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return true;
    }
    let token = presented.or_else(|| headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()));
    !cross_site(headers, origin) && token.is_some_and(|t| same(t, &session.csrf))
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_is_string_equality() {
        assert!(super::same("csrf-abc", "csrf-abc"));
        assert!(!super::same("csrf-abc", "csrf-abd"));
        assert!(!super::same("csrf-abc", "csrf-ab"));
        assert!(super::same("", ""));
    }
}
