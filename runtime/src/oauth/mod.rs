//! The embedded OAuth 2.1 authorization server: metadata (RFC 8414), dynamic client registration
//! (RFC 7591), the authorization endpoint with sign-in and a consent screen (PKCE S256 required,
//! `iss` in responses per RFC 9207, `resource` per RFC 8707), the token endpoint (authorization
//! code and rotating refresh tokens), revocation (RFC 7009), and the sign-in session.

pub mod pages;
pub mod sessions;
pub mod users;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::keys::{Claims, SigningKeys};
use crate::store::{Nullable, Store, now_ms};
use crate::tokens::hash;
use sessions::Session;

/// Where the embedded authorization server publishes its signing keys (RFC 7517).
pub const JWKS_PATH: &str = "/.well-known/jwks.json";
/// Where the server's endpoints live (relative to the issuer).
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
/// Token endpoint.
pub const TOKEN_PATH: &str = "/oauth/token";
/// Dynamic client registration endpoint.
pub const REGISTER_PATH: &str = "/oauth/register";
/// Token revocation endpoint.
pub const REVOKE_PATH: &str = "/oauth/revoke";
/// Sign-in page.
pub const LOGIN_PATH: &str = "/login";
/// Sign-out.
pub const LOGOUT_PATH: &str = "/logout";
/// RFC 8414 metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-authorization-server";

/// The client the API documentation page (Swagger UI at `/docs/`) signs in with, registered at
/// start-up with the page's redirect URI.
pub const DOCS_CLIENT_ID: &str = "specwright-docs";
/// Where Swagger UI receives the authorization response.
pub const DOCS_REDIRECT_PATH: &str = "/docs/oauth2-redirect.html";

/// Access tokens live an hour.
pub const ACCESS_TTL_SECONDS: i64 = 3600;
/// Refresh tokens live 30 days (each use rotates them).
pub const REFRESH_TTL_MS: i64 = 30 * 86_400_000;
/// Largest form or registration body accepted.
const BODY_LIMIT: usize = 64 * 1024;

/// Failed sign-ins allowed per user name and client address in [`THROTTLE_WINDOW`].
const FAILURES_PER_USER: u32 = 5;
/// Failed sign-ins allowed per client address in [`THROTTLE_WINDOW`] (password spraying).
const FAILURES_PER_ADDRESS: u32 = 50;
/// The window failed sign-ins are counted in.
const THROTTLE_WINDOW: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Counts failed sign-ins (in process) so passwords cannot be guessed at speed.
#[derive(Debug, Default)]
struct Throttle(std::sync::Mutex<std::collections::HashMap<String, (u32, std::time::Instant)>>);

impl Throttle {
    fn keys(address: &str, user: &str) -> [(String, u32); 2] {
        [(format!("{address}|{}", user.to_lowercase()), FAILURES_PER_USER), (address.to_string(), FAILURES_PER_ADDRESS)]
    }

    /// Seconds until another attempt is allowed, if the limit is reached.
    fn blocked(&self, address: &str, user: &str) -> Option<u64> {
        let map = self.0.lock().ok()?;
        Self::keys(address, user).iter().find_map(|(k, limit)| {
            map.get(k)
                .filter(|(n, since)| *n >= *limit && since.elapsed() < THROTTLE_WINDOW)
                .map(|(_, since)| (THROTTLE_WINDOW - since.elapsed()).as_secs() + 1)
        })
    }

    fn failed(&self, address: &str, user: &str) {
        let Ok(mut map) = self.0.lock() else { return };
        if map.len() > 100_000 {
            map.retain(|_, (_, since)| since.elapsed() < THROTTLE_WINDOW);
        }
        for (k, _) in Self::keys(address, user) {
            let entry = map.entry(k).or_insert((0, std::time::Instant::now()));
            if entry.1.elapsed() >= THROTTLE_WINDOW {
                *entry = (0, std::time::Instant::now());
            }
            entry.0 += 1;
        }
    }

    fn succeeded(&self, address: &str, user: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(&Self::keys(address, user)[0].0);
        }
    }
}

/// The authorization server's shared state.
#[derive(Debug, Clone)]
pub struct AuthServer {
    store: Store,
    keys: Arc<SigningKeys>,
    config: Config,
    throttle: Arc<Throttle>,
    /// The registered services: the scopes this server grants and the resources it mints for.
    catalog: Catalog,
    /// Where sign-in lands when no page asked for it.
    home: String,
    /// The path of the human-readable API documentation (the metadata's `service_documentation`).
    documentation: String,
}

/// The scope list normalised: known names, de-duplicated, sorted, space-joined.
fn normalise(scopes: &BTreeSet<String>) -> String {
    scopes.iter().cloned().collect::<Vec<_>>().join(" ")
}

/// Form or query parameters; every name at most once (RFC 6749 section 3.1) except `resource`.
struct Params(Vec<(String, String)>);

/// Why a text is refused: it holds U+0000 (NUL), which PostgreSQL text cannot store. Every
/// parameter and every string of client metadata is checked before it reaches a query, as the
/// generated decoder does for the APIs.
const HOLDS_NUL: &str = "holds U+0000 (NUL), which no parameter may";

impl Params {
    fn parse(text: &str) -> Result<Params, String> {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(text).map_err(|_| "the parameters are not valid form encoding".to_string())?;
        let mut seen = BTreeSet::new();
        for (k, v) in &pairs {
            if k.contains('\0') || v.contains('\0') {
                return Err(format!("parameter {} {HOLDS_NUL}", k.escape_debug()));
            }
            if k != "resource" && !seen.insert(k.as_str()) {
                return Err(format!("parameter {k} is repeated"));
            }
        }
        Ok(Params(pairs))
    }

    /// A form body's parameters.
    fn from_body(body: &Bytes) -> Result<Params, String> {
        std::str::from_utf8(body).map_err(|_| "the form is not UTF-8".to_string()).and_then(Params::parse)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    fn all(&self, name: &str) -> Vec<String> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).filter(|v| !v.is_empty()).collect()
    }
}

/// A registered client.
#[derive(Debug, Clone)]
struct Client {
    id: String,
    name: Option<String>,
    redirect_uris: Vec<String>,
    grant_types: Vec<String>,
}

async fn find_client(store: &Store, id: &str) -> sqlx::Result<Option<Client>> {
    let row = sqlx::query("SELECT id, name, redirect_uris, grant_types FROM oauth_clients WHERE id = $1")
        .bind(id)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(|r| Client {
        id: r.get(0),
        name: r.get(1),
        redirect_uris: serde_json::from_str(&r.get::<String, _>(2)).unwrap_or_default(),
        grant_types: r.get::<String, _>(3).split_whitespace().map(str::to_string).collect(),
    }))
}

/// A validated authorization request.
#[derive(Debug, Clone)]
struct AuthRequest {
    client: Client,
    redirect_uri: String,
    scopes: BTreeSet<String>,
    state: Option<String>,
    code_challenge: String,
    resources: Vec<String>,
}

/// Why an authorization request fails: shown to the user when the client or redirect URI cannot
/// be trusted, otherwise sent back to the client (RFC 6749 section 4.1.2.1).
enum AuthError {
    Page(StatusCode, String),
    Redirect { redirect_uri: String, state: Option<String>, error: &'static str, description: String },
}

/// Whether a redirect URI may be registered: HTTPS, or HTTP on a loopback host; no fragment.
fn redirect_uri_allowed(uri: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(uri).map_err(|_| format!("{uri} is not an absolute URL"))?;
    if url.fragment().is_some() {
        return Err(format!("{uri} has a fragment"));
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" => match url.host() {
            Some(url::Host::Domain("localhost")) => Ok(()),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(()),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(()),
            _ => Err(format!("{uri}: plain http is allowed only on a loopback host (127.0.0.1, [::1], localhost)")),
        },
        _ => Err(format!("{uri}: a redirect URI is https, or http on a loopback host")),
    }
}

/// `base` with the query parameters added (the authorization response).
fn with_query(base: &str, params: &[(&str, &str)]) -> String {
    match reqwest::Url::parse(base) {
        Ok(mut url) => {
            {
                let mut q = url.query_pairs_mut();
                for (k, v) in params {
                    q.append_pair(k, v);
                }
            }
            url.to_string()
        }
        Err(_) => base.to_string(),
    }
}

fn redirect(status: StatusCode, location: &str) -> Response {
    let mut resp = status.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    pages::secure_headers(resp.headers_mut());
    resp
}

/// The token endpoint's error answer (RFC 6749 section 5.2).
fn token_error(status: StatusCode, error: &str, description: &str) -> Response {
    let mut resp = (status, axum::Json(json!({ "error": error, "error_description": description }))).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"specwright\""));
    }
    resp
}

/// A token- or registration-endpoint error, turned into its JSON answer at the edge.
struct TokenError {
    status: StatusCode,
    error: &'static str,
    description: String,
}

impl TokenError {
    fn bad(error: &'static str, description: impl Into<String>) -> Self {
        TokenError { status: StatusCode::BAD_REQUEST, error, description: description.into() }
    }
}

impl IntoResponse for TokenError {
    fn into_response(self) -> Response {
        token_error(self.status, self.error, &self.description)
    }
}

fn internal(e: impl std::fmt::Display + 'static) -> Response {
    if crate::store::is_transient_cause(&e) {
        // RFC 6749's code for a server that cannot answer for now; the client may retry.
        tracing::warn!(error = %e, "authorization server: storage unavailable");
        let mut resp = token_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            "the server's storage is unavailable for now; nothing was issued; retry shortly",
        );
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(crate::store::RETRY_AFTER_SECONDS));
        return resp;
    }
    tracing::error!(error = %e, "authorization server failure");
    token_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "an internal error occurred; nothing was issued")
}

/// Whether the S256 transform of `verifier` is `challenge` (RFC 7636 section 4.6).
fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    well_formed && sessions::same(&URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())), challenge)
}

impl AuthServer {
    /// The server over `store`, signing with `keys`.
    pub fn new(store: Store, keys: Arc<SigningKeys>, config: Config, catalog: Catalog) -> Self {
        AuthServer {
            store,
            keys,
            config,
            throttle: Arc::default(),
            catalog,
            home: "/".into(),
            documentation: "/".into(),
        }
    }

    /// The same server, naming `path` (a path of this server) as its documentation.
    pub fn with_documentation(mut self, path: &str) -> Self {
        self.documentation = path.to_string();
        self
    }

    /// The same server, landing signed-in users on `home` (a path of this server) when no page
    /// asked for the sign-in.
    pub fn with_home(mut self, home: &str) -> Self {
        self.home = home.to_string();
        self
    }

    fn secure_cookies(&self) -> bool {
        self.config.public_url.starts_with("https://")
    }

    /// The RFC 8414 metadata document.
    pub fn metadata(&self) -> Value {
        let issuer = self.config.issuer();
        let scopes: Vec<&str> = self.catalog.scopes().map(|s| s.name).collect();
        json!({
            "issuer": issuer,
            "authorization_endpoint": self.config.url(AUTHORIZE_PATH),
            "token_endpoint": self.config.url(TOKEN_PATH),
            "registration_endpoint": self.config.url(REGISTER_PATH),
            "revocation_endpoint": self.config.url(REVOKE_PATH),
            "jwks_uri": self.config.url(JWKS_PATH),
            "scopes_supported": scopes,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
            "protected_resources": self.catalog.resources(&self.config),
            "service_documentation": self.config.url(&self.documentation),
        })
    }

    async fn session(&self, headers: &HeaderMap) -> Option<(String, Session)> {
        match sessions::from_headers(&self.store, headers).await {
            Ok(found) => found,
            Err(e) => {
                tracing::error!(error = %e, "could not read a session");
                None
            }
        }
    }

    /// Checks an authorization request (query of GET, form of POST).
    async fn validate(&self, p: &Params) -> Result<AuthRequest, AuthError> {
        let page = |m: String| AuthError::Page(StatusCode::BAD_REQUEST, m);
        let client_id = p.get("client_id").ok_or_else(|| page("The request names no client (client_id).".into()))?;
        let client = find_client(&self.store, client_id)
            .await
            .map_err(|e| {
                AuthError::Page(StatusCode::INTERNAL_SERVER_ERROR, format!("Could not look the client up: {e}"))
            })?
            .ok_or_else(|| page(format!("No client {client_id} is registered here.")))?;
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
        if let Some(unknown) = requested.iter().find(|s| self.catalog.scopes().all(|i| i.name != **s)) {
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
        Ok(AuthRequest { client, redirect_uri, scopes, state, code_challenge, resources })
    }

    /// The audience of a token whose request named no resource: the resources its scopes reach.
    fn default_resources(&self, scopes: &BTreeSet<String>) -> Vec<String> {
        self.catalog.resources_for_scopes(&self.config, scopes)
    }

    fn error_response(&self, e: AuthError) -> Response {
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
    async fn consented(&self, user: &str, req: &AuthRequest) -> sqlx::Result<bool> {
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
    async fn grant(&self, status: StatusCode, session: &Session, req: &AuthRequest) -> Response {
        let code = crate::tokens::random_secret();
        let result = sqlx::query(
            "INSERT INTO oauth_codes (hash, client_id, user_id, tenant_id, redirect_uri, scope, resource, code_challenge, family_id, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
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

    fn consent_page(&self, session: &Session, req: &AuthRequest, p: &Params) -> Response {
        let lines: Vec<pages::ScopeLine<'_>> = req
            .scopes
            .iter()
            .filter_map(|s| self.catalog.scopes().find(|i| i.name == s))
            .map(|i| pages::ScopeLine { name: i.name, description: i.description })
            .collect();
        let mut hidden: Vec<(String, String)> =
            p.0.iter().filter(|(k, _)| k != "decision" && k != "csrf").cloned().collect();
        hidden.push(("csrf".into(), session.csrf.clone()));
        pages::consent(
            &self.config.path(AUTHORIZE_PATH),
            req.client.name.as_deref().unwrap_or(&req.client.id),
            &req.client.id,
            &req.redirect_uri,
            &session.user,
            &lines,
            &req.resources,
            &hidden,
        )
    }
}

/// Registers (or updates) the documentation page's client, so "Authorize" in Swagger UI runs the
/// authorization-code flow with PKCE against this server. Skipped when the public URL is neither
/// HTTPS nor loopback (such a redirect URI is not allowed).
pub async fn register_docs_client(store: &Store, config: &Config) -> sqlx::Result<bool> {
    let redirect = config.url(DOCS_REDIRECT_PATH);
    if redirect_uri_allowed(&redirect).is_err() {
        return Ok(false);
    }
    sqlx::query(
        "INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, scope, created_at) VALUES ($1, $2, $3, $4, NULL, $5) \
         ON CONFLICT (id) DO UPDATE SET redirect_uris = excluded.redirect_uris, name = excluded.name",
    )
    .bind(DOCS_CLIENT_ID)
    .bind("Specwright API documentation")
    .bind(serde_json::to_string(&[redirect]).unwrap_or_default())
    .bind("authorization_code refresh_token")
    .bind(now_ms())
    .execute(store.pool())
    .await?;
    Ok(true)
}

/// `GET /oauth/authorize`: sign in first, then consent (unless given before), then the code.
async fn authorize_get(State(s): State<Arc<AuthServer>>, RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
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
        let next = format!("{AUTHORIZE_PATH}?{query}");
        return redirect(StatusCode::FOUND, &with_query(&s.config.url(LOGIN_PATH), &[("next", &next)]));
    };
    match s.consented(&session.user, &req).await {
        Ok(true) => s.grant(StatusCode::FOUND, &session, &req).await,
        Ok(false) => s.consent_page(&session, &req, &p),
        Err(e) => pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not read consents: {e}")),
    }
}

/// `POST /oauth/authorize`: the consent form's answer.
async fn authorize_post(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
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
        "INSERT INTO oauth_consents (user_id, client_id, scope, granted_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (user_id, client_id, scope) DO UPDATE SET granted_at = excluded.granted_at",
    )
    .bind(&session.user)
    .bind(&req.client.id)
    .bind(&scope)
    .bind(now_ms())
    .execute(s.store.pool())
    .await;
    if let Err(e) = stored {
        return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not record the consent: {e}"));
    }
    s.grant(StatusCode::SEE_OTHER, &session, &req).await
}

/// Whether the request's media type (parameters aside) is `mime`.
fn content_type_is(headers: &HeaderMap, mime: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(mime))
}

/// The form of a token-endpoint request (RFC 6749 requires form encoding).
fn form(headers: &HeaderMap, body: &Bytes) -> Result<Params, TokenError> {
    if !content_type_is(headers, "application/x-www-form-urlencoded") {
        return Err(TokenError::bad("invalid_request", "send application/x-www-form-urlencoded"));
    }
    Params::from_body(body).map_err(|e| TokenError::bad("invalid_request", e))
}

/// What a grant yields: who, what, for which audience, in which refresh family.
struct Grant {
    client_id: String,
    user: String,
    tenant: String,
    scope: String,
    resources: Vec<String>,
    family: String,
}

impl AuthServer {
    /// Mints the access token and a new refresh token for `grant` (access scope `scope`,
    /// audience `audience`), and answers with them.
    async fn issue(&self, grant: &Grant, scope: &str, audience: Vec<String>) -> Response {
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
        let refresh = crate::tokens::random_secret();
        let now_ms = now_ms();
        let stored = sqlx::query(
            "INSERT INTO oauth_refresh_tokens (hash, family_id, client_id, user_id, tenant_id, scope, resource, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
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
        .execute(self.store.pool())
        .await;
        if let Err(e) = stored {
            return internal(e);
        }
        let mut resp = axum::Json(json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TTL_SECONDS,
            "scope": scope,
            "refresh_token": refresh,
        }))
        .into_response();
        resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        resp.headers_mut().insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        resp
    }

    async fn revoke_family(&self, family: &str) {
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
    async fn use_once(
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
    fn audience(&self, p: &Params, granted: &[String]) -> Result<Vec<String>, TokenError> {
        let asked: Vec<String> = p.all("resource").into_iter().map(|r| r.trim_end_matches('/').to_string()).collect();
        if asked.is_empty() {
            return Ok(granted.to_vec());
        }
        match asked.iter().find(|r| !granted.contains(r)) {
            Some(r) => Err(TokenError::bad("invalid_target", format!("{r} was not granted"))),
            None => Ok(asked),
        }
    }

    async fn authorization_code(&self, p: &Params, client: &Client) -> Response {
        let Some(code) = p.get("code") else {
            return token_error(StatusCode::BAD_REQUEST, "invalid_request", "code is required");
        };
        let code_hash = hash(code);
        let row = match sqlx::query(
            "SELECT client_id, user_id, tenant_id, redirect_uri, scope, resource, code_challenge, family_id, expires_at, used_at \
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
        };
        let audience = match self.audience(p, &grant.resources) {
            Ok(a) => a,
            Err(r) => return r.into_response(),
        };
        let scope = grant.scope.clone();
        self.issue(&grant, &scope, audience).await
    }

    async fn refresh_token(&self, p: &Params, client: &Client) -> Response {
        let Some(token) = p.get("refresh_token") else {
            return token_error(StatusCode::BAD_REQUEST, "invalid_request", "refresh_token is required");
        };
        let token_hash = hash(token);
        let row = match sqlx::query(
            "SELECT family_id, client_id, user_id, tenant_id, scope, resource, expires_at, rotated_at, revoked_at \
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
async fn token(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
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
    let Some(client_id) = p.get("client_id") else {
        return token_error(StatusCode::UNAUTHORIZED, "invalid_client", "client_id is required");
    };
    let client = match find_client(&s.store, client_id).await {
        Ok(Some(c)) => c,
        Ok(None) => return token_error(StatusCode::UNAUTHORIZED, "invalid_client", "no such client is registered"),
        Err(e) => return internal(e),
    };
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
async fn revoke(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
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

fn registration_error(error: &'static str, description: &str) -> Response {
    TokenError::bad(error, description).into_response()
}

/// `POST /oauth/register` (RFC 7591): public clients with loopback or HTTPS redirect URIs.
async fn register(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
    if !content_type_is(&headers, "application/json") {
        return registration_error("invalid_client_metadata", "send the client metadata as application/json");
    }
    let Ok(Value::Object(meta)) = serde_json::from_slice::<Value>(&body) else {
        return registration_error("invalid_client_metadata", "the body is not a JSON object");
    };
    let nul = meta.iter().find_map(|(k, v)| if k.contains('\0') { Some(k.clone()) } else { support::nul_at(k, v) });
    if let Some(at) = nul {
        return registration_error("invalid_client_metadata", &format!("{} {HOLDS_NUL}", at.escape_debug()));
    }
    let strings = |name: &str| -> Result<Option<Vec<String>>, TokenError> {
        match meta.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>().map(Some).ok_or_else(
                    || TokenError::bad("invalid_client_metadata", format!("{name} must be an array of strings")),
                )
            }
            Some(_) => Err(TokenError::bad("invalid_client_metadata", format!("{name} must be an array of strings"))),
        }
    };
    let redirect_uris = match strings("redirect_uris") {
        Ok(Some(u)) if !u.is_empty() && u.len() <= 10 => u,
        Ok(_) => return registration_error("invalid_redirect_uri", "redirect_uris must list 1 to 10 URIs"),
        Err(r) => return r.into_response(),
    };
    for uri in &redirect_uris {
        if uri.len() > 2000 {
            return registration_error("invalid_redirect_uri", "a redirect URI is at most 2000 characters");
        }
        if let Err(why) = redirect_uri_allowed(uri) {
            return registration_error("invalid_redirect_uri", &why);
        }
    }
    let grant_types = match strings("grant_types") {
        Ok(g) => g.unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]),
        Err(r) => return r.into_response(),
    };
    if let Some(g) = grant_types.iter().find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token")) {
        return registration_error("invalid_client_metadata", &format!("grant type {g} is not supported"));
    }
    match strings("response_types") {
        Ok(None) => {}
        Ok(Some(r)) if r.iter().all(|t| t == "code") => {}
        Ok(Some(_)) => return registration_error("invalid_client_metadata", "the only response type is code"),
        Err(r) => return r.into_response(),
    }
    let text = |name: &str, max: usize| -> Result<Option<String>, TokenError> {
        match meta.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(v)) if v.chars().count() <= max => Ok(Some(v.clone())),
            Some(_) => Err(TokenError::bad(
                "invalid_client_metadata",
                format!("{name} must be a string of at most {max} characters"),
            )),
        }
    };
    let (name, scope) = match (text("client_name", 200), text("scope", 500)) {
        (Ok(n), Ok(sc)) => (n, sc),
        (Err(r), _) | (_, Err(r)) => return r.into_response(),
    };
    if let Some(unknown) =
        scope.iter().flat_map(|sc| sc.split_whitespace()).find(|x| s.catalog.scopes().all(|i| i.name != *x))
    {
        return registration_error("invalid_client_metadata", &format!("unknown scope {unknown}"));
    }
    let id = format!("swc_{}", uuid::Uuid::new_v4().simple());
    let now = now_ms();
    let stored = sqlx::query(
        "INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, scope, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&id)
    .bind(Nullable(name.as_deref()))
    .bind(serde_json::to_string(&redirect_uris).unwrap_or_default())
    .bind(grant_types.join(" "))
    .bind(Nullable(scope.as_deref()))
    .bind(now)
    .execute(s.store.pool())
    .await;
    if let Err(e) = stored {
        return internal(e);
    }
    let mut doc = json!({
        "client_id": id,
        "client_id_issued_at": now / 1000,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(n) = name {
        doc["client_name"] = json!(n);
    }
    if let Some(sc) = scope {
        doc["scope"] = json!(sc);
    }
    let mut resp = (StatusCode::CREATED, axum::Json(doc)).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// Where to go after signing in: a path of this server only (never another site), relative to the
/// public URL (`/console/`, `/oauth/authorize?…`); the redirect puts the public URL's path before it.
fn local_path(next: Option<&str>, home: &str) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.starts_with("/\\") && !n.contains(['\r', '\n']) => {
            n.to_string()
        }
        _ => home.to_string(),
    }
}

/// `GET /login`.
async fn login_page(State(s): State<Arc<AuthServer>>, RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
    let p = Params::parse(&query.unwrap_or_default()).unwrap_or(Params(Vec::new()));
    let next = local_path(p.get("next"), &s.home);
    if s.session(&headers).await.is_some() {
        return redirect(StatusCode::FOUND, &s.config.path(&next));
    }
    pages::login(&s.config.path(LOGIN_PATH), &next, None, "")
}

/// `POST /login`: checks the password, starts a session, sets the cookie. Failures are counted
/// per user and client address (behind trusted proxies, the client they name).
async fn login(
    State(s): State<Arc<AuthServer>>,
    client: Option<axum::Extension<crate::client_address::ClientAddress>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let address = client.map(|c| c.0.to_string()).unwrap_or_default();
    if sessions::cross_site(&headers, &s.config.origin()) {
        return pages::error(StatusCode::FORBIDDEN, "Sign in from this server's own sign-in page.");
    }
    let p = match Params::from_body(&body) {
        Ok(p) => p,
        Err(e) => return pages::error(StatusCode::BAD_REQUEST, &e),
    };
    let next = local_path(p.get("next"), &s.home);
    let user = p.get("username").unwrap_or_default();
    let action = s.config.path(LOGIN_PATH);
    if let Some(wait) = s.throttle.blocked(&address, user) {
        tracing::warn!(client = %address, "sign-in refused: too many failed attempts from this client");
        let mut resp = pages::login(
            &action,
            &next,
            Some(&format!("Too many failed sign-ins; try again in {} minutes.", wait.div_ceil(60))),
            user,
        );
        *resp.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(wait));
        return resp;
    }
    let found = match users::verify(&s.store, user, p.get("password").unwrap_or_default()).await {
        Ok(u) => u,
        Err(e) => {
            return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not check the password: {e}"));
        }
    };
    let Some(found) = found else {
        s.throttle.failed(&address, user);
        tracing::info!(client = %address, "failed sign-in");
        return pages::login(&action, &next, Some("Wrong user name or password."), user);
    };
    s.throttle.succeeded(&address, user);
    let secret = match sessions::create(&s.store, &found.id, &found.tenant).await {
        Ok((secret, _)) => secret,
        Err(e) => return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not start a session: {e}")),
    };
    let mut resp = redirect(StatusCode::SEE_OTHER, &s.config.path(&next));
    let cookie = sessions::set_cookie(Some(&secret), s.secure_cookies(), &s.config.cookie_path());
    resp.headers_mut().insert(header::SET_COOKIE, cookie);
    resp
}

/// `POST /logout`: ends the session (the form carries its CSRF token).
async fn logout(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
    let p = Params::from_body(&body).unwrap_or(Params(Vec::new()));
    if let Some((secret, session)) = s.session(&headers).await {
        if !sessions::csrf_ok(&Method::POST, &headers, &session, &s.config.origin(), p.get("csrf")) {
            return pages::error(StatusCode::FORBIDDEN, "Sign out from this server's own pages.");
        }
        if let Err(e) = sessions::delete(&s.store, &secret).await {
            return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not end the session: {e}"));
        }
    }
    let mut resp = redirect(StatusCode::SEE_OTHER, &s.config.path(LOGIN_PATH));
    let cookie = sessions::set_cookie(None, s.secure_cookies(), &s.config.cookie_path());
    resp.headers_mut().insert(header::SET_COOKIE, cookie);
    resp
}

/// The authorization server's routes (metadata, authorize, token, register, revoke, sign-in).
pub fn router(server: Arc<AuthServer>) -> Router {
    let metadata = server.metadata().to_string();
    let base = server.config.base_path();
    let doc = move || {
        let metadata = metadata.clone();
        async move {
            ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "public, max-age=300")], metadata)
        }
    };
    // Browser-based clients call these from their own origin; no cookies are involved.
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::Any)
        .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
        .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION])
        .max_age(std::time::Duration::from_secs(3600));
    let mut machine = Router::new()
        // No OpenID discovery document: this server issues no ID tokens, and a document without
        // the fields OpenID Connect requires makes clients that fall back to it fail (issue 13).
        .route(METADATA_PATH, get(doc.clone()));
    if !base.is_empty() {
        // RFC 8414 section 3.1: an issuer with a path publishes its metadata at the well-known
        // path followed by the issuer's path (a proxy forwards it here unchanged, README).
        machine = machine.route(&format!("{METADATA_PATH}{base}"), get(doc));
    }
    let machine = machine
        .route(TOKEN_PATH, post(token))
        .route(REGISTER_PATH, post(register))
        .route(REVOKE_PATH, post(revoke))
        .layer(cors);
    Router::new()
        .route(AUTHORIZE_PATH, get(authorize_get).post(authorize_post))
        .route(LOGIN_PATH, get(login_page).post(login))
        .route(LOGOUT_PATH, post(logout))
        .merge(machine)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(server)
}
