//! The token endpoint (authorization code and rotating refresh tokens, RFC 6749 and OAuth 2.1)
//! and revocation (RFC 7009).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use sqlx::Row;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::keys::Claims;
use crate::store::now_ms;
use crate::tokens::hash;

use super::assertion::{AssertionError, JWT_BEARER, claimed_issuer};
use super::documents::DocumentAuth;
use super::*;

/// What a grant yields: who, what, for which audience, in which refresh family.
pub(super) struct Grant {
    pub(super) client_id: String,
    pub(super) user: String,
    pub(super) tenant: String,
    pub(super) scope: String,
    pub(super) resources: Vec<String>,
    pub(super) family: String,
    /// When the user signed in, epoch milliseconds (unknown for grants made before it was kept).
    pub(super) auth_time: Option<i64>,
    /// The authorization request's nonce (the code's grant only; refreshed ID tokens carry none).
    pub(super) nonce: Option<String>,
}

impl AuthServer {
    /// Mints the access token and a new refresh token for `grant` (access scope `scope`,
    /// audience `audience`), and answers with them.
    pub(super) async fn issue(&self, grant: &Grant, scope: &str, audience: Vec<String>) -> Response {
        let now = chrono::Utc::now().timestamp();
        let claims = Claims {
            iss: self.config.issuer(),
            sub: grant.user.clone(),
            aud: audience,
            exp: now + ACCESS_TTL_SECONDS,
            iat: now,
            jti: uuid::Uuid::new_v4().to_string(),
            scope: scope.to_string(),
            tenant: grant.tenant.clone(),
            plan: None,
            client_id: Some(grant.client_id.clone()),
        };
        let access = match self.keys.mint(&claims) {
            Ok(t) => t,
            Err(e) => return internal(e),
        };
        let id_token = if scope.split_whitespace().any(|s| s == OPENID_SCOPE) {
            match self.id_token(grant, &access, now) {
                Ok(t) => Some(t),
                Err(e) => return internal(e),
            }
        } else {
            None
        };
        let refresh = crate::tokens::random_secret();
        let now_ms = now_ms();
        let stored = sqlx::query(
            "INSERT INTO oauth_refresh_tokens (hash, family_id, client_id, user_id, tenant_id, scope, resource, created_at, expires_at, auth_time) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(hash(&refresh))
        .bind(&grant.family)
        .bind(&grant.client_id)
        .bind(&grant.user)
        .bind(&grant.tenant)
        .bind(&grant.scope)
        .bind(serde_json::to_string(&grant.resources).unwrap_or_default())
        .bind(now_ms)
        .bind(now_ms + REFRESH_TTL_MS)
        .bind(grant.auth_time)
        .execute(self.store.pool())
        .await;
        if let Err(e) = stored {
            return internal(e);
        }
        let mut answer = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TTL_SECONDS,
            "scope": scope,
            "refresh_token": refresh,
        });
        if let Some(id_token) = id_token {
            answer["id_token"] = json!(id_token);
        }
        let mut resp = axum::Json(answer).into_response();
        resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        resp.headers_mut().insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        resp
    }

    /// The OpenID Connect ID token of `grant` (Core 1.0 sections 2 and 3.1.3.6), issued with the
    /// access token `access` at `now` (epoch seconds): who signed in, for which client, when, the
    /// request's nonce, and `at_hash` binding it to the access token.
    fn id_token(&self, grant: &Grant, access: &str, now: i64) -> anyhow::Result<String> {
        let digest = Sha256::digest(access.as_bytes());
        let mut claims = json!({
            "iss": self.config.issuer(),
            "sub": grant.user,
            "aud": grant.client_id,
            "exp": now + ACCESS_TTL_SECONDS,
            "iat": now,
            "at_hash": URL_SAFE_NO_PAD.encode(&digest[..16]),
            "tenant": grant.tenant,
        });
        if let Some(at) = grant.auth_time {
            claims["auth_time"] = json!(at / 1000);
        }
        if let Some(nonce) = &grant.nonce {
            claims["nonce"] = json!(nonce);
        }
        self.keys.sign_id_token(&claims)
    }

    pub(super) async fn revoke_family(&self, family: &str) {
        let r =
            sqlx::query("UPDATE oauth_refresh_tokens SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL")
                .bind(now_ms())
                .bind(family)
                .execute(self.store.pool())
                .await;
        if let Err(e) = r {
            tracing::error!(error = %e, "could not revoke a refresh-token family");
        }
    }

    /// Marks a code or refresh token used, once: `claim` is a conditional UPDATE of (now, hash)
    /// that changes its row the first time only. A second use means the secret may be in an
    /// attacker's hands (RFC 9700 sections 4.2.4 and 4.14.2), so its whole family is revoked.
    pub(super) async fn use_once(
        &self,
        claim: &'static str,
        hash: &str,
        family: &str,
        replayed: &str,
    ) -> Result<(), Box<Response>> {
        match sqlx::query(claim).bind(now_ms()).bind(hash).execute(self.store.pool()).await {
            Ok(r) if r.rows_affected() == 1 => Ok(()),
            Ok(_) => {
                self.revoke_family(family).await;
                Err(Box::new(token_error(StatusCode::BAD_REQUEST, "invalid_grant", replayed)))
            }
            Err(e) => Err(Box::new(internal(e))),
        }
    }

    /// The audience the token request asks for: a subset of what was granted.
    pub(super) fn audience(&self, p: &Params, granted: &[String]) -> Result<Vec<String>, TokenError> {
        let asked: Vec<String> = p.all("resource").into_iter().map(|r| r.trim_end_matches('/').to_string()).collect();
        if asked.is_empty() {
            return Ok(granted.to_vec());
        }
        match asked.iter().find(|r| !granted.contains(r)) {
            Some(r) => Err(TokenError::bad("invalid_target", format!("{r} was not granted"))),
            None => Ok(asked),
        }
    }

    pub(super) async fn authorization_code(&self, p: &Params, client: &Client) -> Response {
        let Some(code) = p.get("code") else {
            return token_error(StatusCode::BAD_REQUEST, "invalid_request", "code is required");
        };
        let code_hash = hash(code);
        let row = match sqlx::query(
            "SELECT client_id, user_id, tenant_id, redirect_uri, scope, resource, code_challenge, family_id, expires_at, used_at, nonce, auth_time \
             FROM oauth_codes WHERE hash = $1",
        )
        .bind(&code_hash)
        .fetch_optional(self.store.pool())
        .await
        {
            Ok(Some(r)) => r,
            Ok(None) => return token_error(StatusCode::BAD_REQUEST, "invalid_grant", "the authorization code is not known"),
            Err(e) => return internal(e),
        };
        let family: String = row.get(7);
        // Single use: claim it before anything else, so two concurrent redemptions cannot both pass.
        let claim = "UPDATE oauth_codes SET used_at = $1 WHERE hash = $2 AND used_at IS NULL";
        let replayed = "the authorization code was already used; the tokens issued for it are revoked";
        if let Err(e) = self.use_once(claim, &code_hash, &family, replayed).await {
            return *e;
        }
        if row.get::<String, _>(0) != client.id {
            return token_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "the authorization code was issued to another client",
            );
        }
        if row.get::<i64, _>(8) <= now_ms() {
            return token_error(StatusCode::BAD_REQUEST, "invalid_grant", "the authorization code has expired");
        }
        if p.get("redirect_uri") != Some(row.get::<String, _>(3).as_str()) {
            return token_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "redirect_uri does not match the one of the authorization request",
            );
        }
        let Some(verifier) = p.get("code_verifier") else {
            return token_error(StatusCode::BAD_REQUEST, "invalid_request", "code_verifier is required (PKCE)");
        };
        if !pkce_matches(verifier, &row.get::<String, _>(6)) {
            return token_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "code_verifier does not match the code_challenge",
            );
        }
        let grant = Grant {
            client_id: client.id.clone(),
            user: row.get(1),
            tenant: row.get(2),
            scope: row.get(4),
            resources: serde_json::from_str(&row.get::<String, _>(5)).unwrap_or_default(),
            family,
            nonce: row.get(10),
            auth_time: row.get(11),
        };
        let audience = match self.audience(p, &grant.resources) {
            Ok(a) => a,
            Err(r) => return r.into_response(),
        };
        let scope = grant.scope.clone();
        self.issue(&grant, &scope, audience).await
    }

    pub(super) async fn refresh_token(&self, p: &Params, client: &Client) -> Response {
        let Some(token) = p.get("refresh_token") else {
            return token_error(StatusCode::BAD_REQUEST, "invalid_request", "refresh_token is required");
        };
        let token_hash = hash(token);
        let row = match sqlx::query(
            "SELECT family_id, client_id, user_id, tenant_id, scope, resource, expires_at, rotated_at, revoked_at, auth_time \
             FROM oauth_refresh_tokens WHERE hash = $1",
        )
        .bind(&token_hash)
        .fetch_optional(self.store.pool())
        .await
        {
            Ok(Some(r)) => r,
            Ok(None) => return token_error(StatusCode::BAD_REQUEST, "invalid_grant", "the refresh token is not known"),
            Err(e) => return internal(e),
        };
        let family: String = row.get(0);
        if row.get::<String, _>(1) != client.id {
            return token_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "the refresh token was issued to another client",
            );
        }
        if row.get::<Option<i64>, _>(8).is_some() {
            return token_error(StatusCode::BAD_REQUEST, "invalid_grant", "the refresh token has been revoked");
        }
        if row.get::<i64, _>(6) <= now_ms() {
            return token_error(StatusCode::BAD_REQUEST, "invalid_grant", "the refresh token has expired");
        }
        let replayed = "the refresh token was already used; its whole family is now revoked";
        if row.get::<Option<i64>, _>(7).is_some() {
            self.revoke_family(&family).await;
            return token_error(StatusCode::BAD_REQUEST, "invalid_grant", replayed);
        }
        let user: String = row.get(2);
        match users::tenant_of(&self.store, &user).await {
            Ok(Some(t)) if t == row.get::<String, _>(3) => {}
            Ok(_) => return token_error(StatusCode::BAD_REQUEST, "invalid_grant", "the user no longer exists"),
            Err(e) => return internal(e),
        }
        let grant = Grant {
            client_id: client.id.clone(),
            user,
            tenant: row.get(3),
            scope: row.get(4),
            resources: serde_json::from_str(&row.get::<String, _>(5)).unwrap_or_default(),
            family,
            auth_time: row.get(9),
            nonce: None,
        };
        // A refresh may narrow the scope (RFC 6749 section 6), never widen it.
        let scope = match p.get("scope") {
            None => grant.scope.clone(),
            Some(asked) => {
                let granted = self.catalog.closure(grant.scope.split_whitespace());
                if let Some(extra) = asked.split_whitespace().find(|s| !granted.contains(*s)) {
                    return token_error(StatusCode::BAD_REQUEST, "invalid_scope", &format!("{extra} was not granted"));
                }
                normalise(&asked.split_whitespace().map(str::to_string).collect())
            }
        };
        let audience = match self.audience(p, &grant.resources) {
            Ok(a) => a,
            Err(r) => return r.into_response(),
        };
        // Claim the token last: a request refused above leaves it usable, so a client's bad
        // request is never mistaken for a replay that revokes the family.
        let claim = "UPDATE oauth_refresh_tokens SET rotated_at = $1 WHERE hash = $2 AND rotated_at IS NULL";
        if let Err(e) = self.use_once(claim, &token_hash, &grant.family, replayed).await {
            return *e;
        }
        self.issue(&grant, &scope, audience).await
    }
}

/// `POST /oauth/token`.
pub(super) async fn token(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
    let p = match form(&headers, &body) {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    if headers.contains_key(header::AUTHORIZATION) {
        return token_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "clients here are public (token_endpoint_auth_method none); send client_id in the body, no credentials",
        );
    }
    let assertion = match (p.get("client_assertion_type"), p.get("client_assertion")) {
        (None, None) => None,
        (Some(JWT_BEARER), Some(a)) => Some(a),
        _ => {
            return token_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                &format!("a client assertion is client_assertion_type={JWT_BEARER} with client_assertion"),
            );
        }
    };
    let client_id = match (p.get("client_id"), assertion.and_then(claimed_issuer)) {
        (Some(id), _) => id.to_string(),
        (None, Some(iss)) => iss,
        (None, None) => return token_error(StatusCode::UNAUTHORIZED, "invalid_client", "client_id is required"),
    };
    let client = match s.client(&client_id).await {
        Ok(c) => c,
        Err(ClientError::Unknown) => {
            return token_error(StatusCode::UNAUTHORIZED, "invalid_client", "no such client is registered");
        }
        Err(ClientError::Document(why)) => {
            return token_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                &format!("the client's metadata document cannot be used: {why}"),
            );
        }
        Err(ClientError::Storage(e)) => return internal(e),
    };
    match (&client.document, assertion) {
        (Some(DocumentAuth::PrivateKeyJwt(keys)), Some(assertion)) => {
            match s.verify_assertion(&client.id, keys, assertion).await {
                Ok(()) => {}
                Err(AssertionError::Refused(why)) => {
                    return token_error(StatusCode::UNAUTHORIZED, "invalid_client", &why);
                }
                Err(AssertionError::Storage(e)) => return internal(e),
            }
        }
        (Some(DocumentAuth::PrivateKeyJwt(_)), None) => {
            return token_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "this client authenticates with private_key_jwt: send client_assertion_type and client_assertion",
            );
        }
        (_, Some(_)) => {
            return token_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "this client is public (token_endpoint_auth_method none): send no client_assertion",
            );
        }
        (_, None) => {}
    }
    match p.get("grant_type") {
        Some(g)
            if !client.grant_types.iter().any(|x| x == g) && matches!(g, "authorization_code" | "refresh_token") =>
        {
            token_error(
                StatusCode::BAD_REQUEST,
                "unauthorized_client",
                &format!("this client is not registered for {g}"),
            )
        }
        Some("authorization_code") => s.authorization_code(&p, &client).await,
        Some("refresh_token") => s.refresh_token(&p, &client).await,
        Some(other) => {
            token_error(StatusCode::BAD_REQUEST, "unsupported_grant_type", &format!("{other} is not supported"))
        }
        None => token_error(StatusCode::BAD_REQUEST, "invalid_request", "grant_type is required"),
    }
}

/// `POST /oauth/revoke` (RFC 7009): revokes a refresh token and its family. Always 200, so the
/// answer does not tell whether a token existed.
pub(super) async fn revoke(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
    let p = match form(&headers, &body) {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    let Some(token) = p.get("token") else {
        return token_error(StatusCode::BAD_REQUEST, "invalid_request", "token is required");
    };
    let row = sqlx::query("SELECT family_id, client_id FROM oauth_refresh_tokens WHERE hash = $1")
        .bind(hash(token))
        .fetch_optional(s.store.pool())
        .await;
    match row {
        Ok(Some(r)) if p.get("client_id").is_none_or(|c| c == r.get::<String, _>(1)) => {
            s.revoke_family(&r.get::<String, _>(0)).await;
        }
        Ok(_) => {}
        Err(e) => return internal(e),
    }
    let mut resp = StatusCode::OK.into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}
