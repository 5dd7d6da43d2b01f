//! The authorization endpoint: the request validated, sign-in and the consent screen, and the
//! code sent back (PKCE S256 required, `iss` per RFC 9207, `resource` per RFC 8707).

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use sqlx::Row;

use super::sessions::Session;
use crate::store::{Nullable, now_ms};
use crate::tokens::hash;

use super::*;

/// A validated authorization request.
#[derive(Debug, Clone)]
pub(super) struct AuthRequest {
    pub(super) client: Client,
    pub(super) redirect_uri: String,
    pub(super) scopes: BTreeSet<String>,
    pub(super) state: Option<String>,
    pub(super) code_challenge: String,
    pub(super) resources: Vec<String>,
    /// OpenID Connect: the value the ID token must echo.
    pub(super) nonce: Option<String>,
    /// OpenID Connect `prompt=none`: answer without showing any page (or with an error).
    pub(super) silent: bool,
}

/// Why an authorization request fails: shown to the user when the client or redirect URI cannot
/// be trusted, otherwise sent back to the client (RFC 6749 section 4.1.2.1).
pub(super) enum AuthError {
    Page(StatusCode, String),
    Redirect { redirect_uri: String, state: Option<String>, error: &'static str, description: String },
}

impl AuthServer {
    pub(super) async fn session(&self, headers: &HeaderMap) -> Option<(String, Session)> {
        match sessions::from_headers(&self.store, headers).await {
            Ok(found) => found,
            Err(e) => {
                tracing::error!(error = %e, "could not read a session");
                None
            }
        }
    }

    /// Checks an authorization request (query of GET, form of POST).
    pub(super) async fn validate(&self, p: &Params) -> Result<AuthRequest, AuthError> {
        let page = |m: String| AuthError::Page(StatusCode::BAD_REQUEST, m);
        let client_id = p.get("client_id").ok_or_else(|| page("The request names no client (client_id).".into()))?;
        let client = match self.client(client_id).await {
            Ok(c) => c,
            Err(ClientError::Unknown) => return Err(page(format!("No client {client_id} is registered here."))),
            Err(ClientError::Document(why)) => {
                return Err(page(format!("The client's metadata document at {client_id} cannot be used: {why}.")));
            }
            Err(ClientError::Storage(e)) => {
                return Err(AuthError::Page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("Could not look the client up: {e}"),
                ));
            }
        };
        let redirect_uri = match p.get("redirect_uri") {
            Some(r) if client.redirect_uris.iter().any(|u| u == r) => r.to_string(),
            Some(r) => return Err(page(format!("{r} is not a redirect URI registered for this client."))),
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
            None => return Err(page("The client has several redirect URIs; the request must name one.".into())),
        };
        let state = p.get("state").map(str::to_string);
        let fail = |error: &'static str, description: String| AuthError::Redirect {
            redirect_uri: redirect_uri.clone(),
            state: state.clone(),
            error,
            description,
        };
        match p.get("response_type") {
            Some("code") => {}
            Some(other) => {
                return Err(fail(
                    "unsupported_response_type",
                    format!("response_type {other} is not supported; use code"),
                ));
            }
            None => return Err(fail("invalid_request", "response_type is required".into())),
        }
        if !client.grant_types.iter().any(|g| g == "authorization_code") {
            return Err(fail(
                "unauthorized_client",
                "this client is not registered for the authorization_code grant".into(),
            ));
        }
        let code_challenge = match (p.get("code_challenge"), p.get("code_challenge_method")) {
            (Some(c), Some("S256"))
                if c.len() == 43 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
            {
                c.to_string()
            }
            (Some(_), Some("S256")) => {
                return Err(fail("invalid_request", "code_challenge is not a base64url SHA-256 digest".into()));
            }
            (Some(_), _) => return Err(fail("invalid_request", "code_challenge_method must be S256".into())),
            (None, _) => {
                return Err(fail(
                    "invalid_request",
                    "PKCE is required: send code_challenge with code_challenge_method=S256".into(),
                ));
            }
        };
        let requested: Vec<&str> = p.get("scope").map(|s| s.split_whitespace().collect()).unwrap_or_default();
        if requested.is_empty() {
            return Err(fail("invalid_scope", format!("scope is required ({})", self.catalog.scope_list())));
        }
        if let Some(unknown) =
            requested.iter().find(|s| **s != OPENID_SCOPE && self.catalog.scopes().all(|i| i.name != **s))
        {
            return Err(fail("invalid_scope", format!("unknown scope {unknown}")));
        }
        let scopes: BTreeSet<String> = requested.iter().map(|s| s.to_string()).collect();
        let served = self.catalog.resources(&self.config);
        let mut resources = Vec::new();
        for r in p.all("resource") {
            let r = r.trim_end_matches('/').to_string();
            if !served.contains(&r) {
                return Err(fail("invalid_target", format!("{r} is not a resource this server protects")));
            }
            if !resources.contains(&r) {
                resources.push(r);
            }
        }
        if resources.is_empty() {
            resources = self.default_resources(&scopes);
        }
        if scopes.contains(OPENID_SCOPE) {
            // The access token of an OpenID request reads the user's claims at the userinfo endpoint.
            resources.push(self.config.url(USERINFO_PATH));
        }
        let nonce = match p.get("nonce") {
            Some(n) if n.len() > 512 => return Err(fail("invalid_request", "nonce is at most 512 characters".into())),
            n => n.map(str::to_string),
        };
        let silent = match p.get("prompt") {
            None => false,
            Some("none") => true,
            Some(other) if other.split_whitespace().all(|v| matches!(v, "login" | "consent")) => false,
            Some(other) => return Err(fail("invalid_request", format!("prompt {other} is not supported"))),
        };
        Ok(AuthRequest { client, redirect_uri, scopes, state, code_challenge, resources, nonce, silent })
    }

    /// The audience of a token whose request named no resource: the resources its scopes reach.
    pub(super) fn default_resources(&self, scopes: &BTreeSet<String>) -> Vec<String> {
        self.catalog.resources_for_scopes(&self.config, scopes)
    }

    pub(super) fn error_response(&self, e: AuthError) -> Response {
        match e {
            AuthError::Page(status, message) => pages::error(status, &message),
            AuthError::Redirect { redirect_uri, state, error, description } => {
                let issuer = self.config.issuer();
                let mut params =
                    vec![("error", error), ("error_description", description.as_str()), ("iss", issuer.as_str())];
                if let Some(s) = &state {
                    params.push(("state", s));
                }
                redirect(StatusCode::FOUND, &with_query(&redirect_uri, &params))
            }
        }
    }

    /// Whether the user approved these scopes for this client before (a broader approval counts).
    pub(super) async fn consented(&self, user: &str, req: &AuthRequest) -> sqlx::Result<bool> {
        let rows = sqlx::query("SELECT scope FROM oauth_consents WHERE user_id = $1 AND client_id = $2")
            .bind(user)
            .bind(&req.client.id)
            .fetch_all(self.store.pool())
            .await?;
        Ok(rows.iter().any(|r| {
            let granted = self.catalog.closure(r.get::<String, _>(0).split_whitespace());
            req.scopes.iter().all(|s| granted.contains(s))
        }))
    }

    /// Issues a code for `req` and answers with the redirect that carries it.
    pub(super) async fn grant(&self, status: StatusCode, session: &Session, req: &AuthRequest) -> Response {
        let code = crate::tokens::random_secret();
        let result = sqlx::query(
            "INSERT INTO oauth_codes (hash, client_id, user_id, tenant_id, redirect_uri, scope, resource, code_challenge, family_id, expires_at, nonce, auth_time) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(hash(&code))
        .bind(&req.client.id)
        .bind(&session.user)
        .bind(&session.tenant)
        .bind(&req.redirect_uri)
        .bind(normalise(&req.scopes))
        .bind(serde_json::to_string(&req.resources).unwrap_or_default())
        .bind(&req.code_challenge)
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(now_ms() + self.config.oauth_code_ttl_seconds * 1000)
        .bind(Nullable(req.nonce.as_deref()))
        .bind(session.signed_in_at)
        .execute(self.store.pool())
        .await;
        if let Err(e) = result {
            tracing::error!(error = %e, "could not store an authorization code");
            return pages::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Could not issue the authorization code; try again.",
            );
        }
        let issuer = self.config.issuer();
        let mut params = vec![("code", code.as_str()), ("iss", issuer.as_str())];
        if let Some(s) = &req.state {
            params.push(("state", s));
        }
        redirect(status, &with_query(&req.redirect_uri, &params))
    }

    pub(super) fn consent_page(&self, session: &Session, req: &AuthRequest, p: &Params) -> Response {
        let lines: Vec<pages::ScopeLine<'_>> = req
            .scopes
            .iter()
            .filter_map(|s| match self.catalog.scopes().find(|i| i.name == s) {
                Some(i) => Some(pages::ScopeLine { name: i.name, description: i.description }),
                None if s == OPENID_SCOPE => {
                    Some(pages::ScopeLine { name: OPENID_SCOPE, description: OPENID_SCOPE_DESCRIPTION })
                }
                None => None,
            })
            .collect();
        let mut hidden: Vec<(String, String)> =
            p.0.iter().filter(|(k, _)| k != "decision" && k != "csrf").cloned().collect();
        hidden.push(("csrf".into(), session.csrf.clone()));
        pages::consent(&pages::Consent {
            action: &self.config.path(AUTHORIZE_PATH),
            client_name: req.client.name.as_deref().unwrap_or(&req.client.id),
            client_id: &req.client.id,
            client_host: req.client.host().as_deref(),
            local_only: req.client.document.is_some() && req.client.local_only(),
            redirect_uri: &req.redirect_uri,
            user: &session.user,
            scopes: &lines,
            resources: &req.resources,
            hidden: &hidden,
        })
    }
}

/// The answer to a `prompt=none` request that would need a page (OpenID Connect Core 3.1.2.6).
fn silent_refusal(req: AuthRequest, error: &'static str, description: &str) -> AuthError {
    AuthError::Redirect { redirect_uri: req.redirect_uri, state: req.state, error, description: description.into() }
}

/// `GET /oauth/authorize`: sign in first, then consent (unless given before), then the code.
pub(super) async fn authorize_get(
    State(s): State<Arc<AuthServer>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let query = query.unwrap_or_default();
    let p = match Params::parse(&query) {
        Ok(p) => p,
        Err(e) => return pages::error(StatusCode::BAD_REQUEST, &e),
    };
    let req = match s.validate(&p).await {
        Ok(r) => r,
        Err(e) => return s.error_response(e),
    };
    let Some((_, session)) = s.session(&headers).await else {
        if req.silent {
            return s.error_response(silent_refusal(req, "login_required", "the user is not signed in"));
        }
        let next = format!("{AUTHORIZE_PATH}?{query}");
        return redirect(StatusCode::FOUND, &with_query(&s.config.url(LOGIN_PATH), &[("next", &next)]));
    };
    match s.consented(&session.user, &req).await {
        Ok(true) => s.grant(StatusCode::FOUND, &session, &req).await,
        Ok(false) if req.silent => {
            s.error_response(silent_refusal(req, "consent_required", "the user has not approved these scopes"))
        }
        Ok(false) => s.consent_page(&session, &req, &p),
        Err(e) => pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not read consents: {e}")),
    }
}

/// `POST /oauth/authorize`: the consent form's answer.
pub(super) async fn authorize_post(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
    let p = match Params::from_body(&body) {
        Ok(p) => p,
        Err(e) => return pages::error(StatusCode::BAD_REQUEST, &e),
    };
    let Some((_, session)) = s.session(&headers).await else {
        return pages::error(StatusCode::UNAUTHORIZED, "Your session has ended; start again from the application.");
    };
    if !sessions::csrf_ok(&Method::POST, &headers, &session, &s.config.origin(), p.get("csrf")) {
        return pages::error(
            StatusCode::FORBIDDEN,
            "This approval did not come from the consent page; nothing was granted.",
        );
    }
    let req = match s.validate(&p).await {
        Ok(r) => r,
        Err(e) => return s.error_response(e),
    };
    match p.get("decision") {
        Some("approve") => {}
        Some("deny") => {
            return s.error_response(AuthError::Redirect {
                redirect_uri: req.redirect_uri,
                state: req.state,
                error: "access_denied",
                description: "the user denied the request".into(),
            });
        }
        _ => return pages::error(StatusCode::BAD_REQUEST, "The form carries no decision (approve or deny)."),
    }
    let scope = normalise(&req.scopes);
    let stored = sqlx::query(
        "INSERT INTO oauth_consents (user_id, client_id, scope, granted_at, client_name) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (user_id, client_id, scope) DO UPDATE SET granted_at = excluded.granted_at, client_name = excluded.client_name",
    )
    .bind(&session.user)
    .bind(&req.client.id)
    .bind(&scope)
    .bind(now_ms())
    .bind(Nullable(req.client.name.as_deref()))
    .execute(s.store.pool())
    .await;
    if let Err(e) = stored {
        return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not record the consent: {e}"));
    }
    s.grant(StatusCode::SEE_OTHER, &session, &req).await
}
