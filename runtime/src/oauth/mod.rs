//! The embedded OAuth 2.1 authorization server: metadata (RFC 8414), dynamic client registration
//! (RFC 7591), the authorization endpoint with sign-in and a consent screen (PKCE S256 required,
//! `iss` in responses per RFC 9207, `resource` per RFC 8707), the token endpoint (authorization
//! code and rotating refresh tokens), revocation (RFC 7009), the sign-in session, and a minimal
//! OpenID Provider (discovery, ID tokens for the `openid` scope, userinfo).

mod assertion;
mod authorize;
mod clients;
mod documents;
mod errors;
pub mod grants;
pub mod pages;
mod params;
mod redirects;
pub mod sessions;
mod signin;
mod throttle;
mod token;
mod userinfo;
pub mod users;

use authorize::*;
pub use clients::register_docs_client;
use clients::*;
pub use documents::{DOCUMENT_LIMIT, DocumentSettings};
use errors::*;
use params::*;
use signin::*;
use throttle::*;
use token::*;
use userinfo::*;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::keys::SigningKeys;
use crate::store::Store;

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
/// OpenID Connect Discovery 1.0: the same metadata, where OpenID relying parties look.
pub const OPENID_CONFIGURATION_PATH: &str = "/.well-known/openid-configuration";
/// OpenID Connect userinfo endpoint.
pub const USERINFO_PATH: &str = "/oauth/userinfo";
/// The scope that asks for an ID token (OpenID Connect Core 1.0 section 3.1.2.1).
pub const OPENID_SCOPE: &str = "openid";
/// What the consent screen says the `openid` scope grants.
const OPENID_SCOPE_DESCRIPTION: &str = "Learn who you are: your user name and tenant, in a signed ID token.";

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

/// The authorization server's shared state.
#[derive(Debug, Clone)]
pub struct AuthServer {
    store: Store,
    keys: Arc<SigningKeys>,
    config: Config,
    throttle: Arc<Throttle>,
    /// Client metadata documents fetched and kept.
    documents: Arc<documents::Documents>,
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

fn redirect(status: StatusCode, location: &str) -> Response {
    let mut resp = status.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    pages::secure_headers(resp.headers_mut());
    resp
}

impl AuthServer {
    /// The server over `store`, signing with `keys`.
    pub fn new(store: Store, keys: Arc<SigningKeys>, config: Config, catalog: Catalog) -> Self {
        let documents = Arc::new(documents::Documents::new(config.client_documents.clone()));
        AuthServer {
            store,
            keys,
            config,
            throttle: Arc::default(),
            documents,
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
        let scopes: Vec<&str> = self.catalog.scopes().map(|s| s.name).chain([OPENID_SCOPE]).collect();
        let mut doc = json!({
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
            // OpenID Connect Discovery 1.0 section 3: what an OpenID Provider states besides.
            "userinfo_endpoint": self.config.url(USERINFO_PATH),
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "tenant"],
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
            "prompt_values_supported": ["none", "login", "consent"],
        });
        if !self.config.dynamic_registration
            && let Some(fields) = doc.as_object_mut()
        {
            fields.shift_remove("registration_endpoint");
        }
        if self.documents.enabled() {
            // Clients may name themselves by their metadata document's URL; such a client may
            // authenticate with a signed assertion instead of being public.
            doc["client_id_metadata_document_supported"] = json!(true);
            doc["token_endpoint_auth_methods_supported"] = json!(["none", "private_key_jwt"]);
            let algorithms: Vec<Value> =
                assertion::ALGORITHMS.iter().filter_map(|a| serde_json::to_value(a).ok()).collect();
            doc["token_endpoint_auth_signing_alg_values_supported"] = json!(algorithms);
        }
        doc
    }
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
    // RFC 8414 metadata and the OpenID Provider Configuration are one document, at the
    // issuer's path-appended locations and (for a proxy that forwards them unchanged) the
    // path-inserted ones RFC 8414 section 3.1 describes for an issuer with a path.
    let mut machine = Router::new()
        .route(METADATA_PATH, get(doc.clone()))
        .route(OPENID_CONFIGURATION_PATH, get(doc.clone()))
        .route(USERINFO_PATH, get(userinfo).post(userinfo));
    if !base.is_empty() {
        machine = machine
            .route(&format!("{METADATA_PATH}{base}"), get(doc.clone()))
            .route(&format!("{OPENID_CONFIGURATION_PATH}{base}"), get(doc));
    }
    if server.config.dynamic_registration {
        machine = machine.route(REGISTER_PATH, post(register));
    }
    let machine = machine.route(TOKEN_PATH, post(token)).route(REVOKE_PATH, post(revoke)).layer(cors);
    Router::new()
        .route(AUTHORIZE_PATH, get(authorize_get).post(authorize_post))
        .route(LOGIN_PATH, get(login_page).post(login))
        .route(LOGOUT_PATH, post(logout))
        .merge(machine)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(server)
}
