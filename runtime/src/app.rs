//! Assembles the HTTP application: both generated routers behind their gates, the metadata
//! documents, the OpenAPI documents and Swagger UI (`docs`), health, and the request-id and
//! client-address layers.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use generated::support::{Problem, ServiceInfo, error_response, request_id};

use crate::auth::{BearerGate, Metered, Resource};
use crate::config::Config;
use crate::crypto::{self, Keyring};
use crate::keys::SigningKeys;
use crate::prm;
use crate::ratelimit::{Clock, RateLimiter, SystemClock};
use crate::services::prospector::Prospector;
use crate::store::Store;
use crate::vault::Vault;

/// Everything a running server shares.
#[derive(Debug, Clone)]
pub struct AppState {
    /// Settings.
    pub config: Config,
    /// The embedded authorization server's signing key.
    pub keys: Arc<SigningKeys>,
    /// The database.
    pub store: Store,
    /// The vault.
    pub vault: Arc<Vault>,
    /// Rate limits (in process, or in Redis with `REDIS_URL`).
    pub limiter: Arc<RateLimiter>,
    /// The prospector.
    pub prospector: Arc<Prospector>,
    /// The external identity provider, when one replaces the embedded authorization server.
    pub external: Option<Arc<crate::idp::ExternalIssuer>>,
}

impl AppState {
    /// Loads (or creates) what the data directory holds and opens (and migrates) the database.
    pub async fn open(config: Config) -> anyhow::Result<Self> {
        Self::open_with_clock(config, Arc::new(SystemClock)).await
    }

    /// As [`AppState::open`], with the clock rate limits read (tests move it by hand).
    pub async fn open_with_clock(config: Config, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        crate::config::parse_public_url(&config.public_url).map_err(|e| anyhow::anyhow!("--public-url: {e}"))?;
        let keys = Arc::new(SigningKeys::load_or_create(&config.data_dir)?);
        let store = Store::open_with(config.database_url.as_deref(), &config.data_dir, config.pool).await?;
        let keyring = Arc::new(Keyring::load(&store, crypto::master_key_source(&config.data_dir)?).await?);
        let vault = Arc::new(Vault::new(store.clone(), keyring, config.leases));
        let limiter = Arc::new(match &config.redis_url {
            Some(url) => RateLimiter::redis(url, config.replicas, clock).await?,
            None => RateLimiter::local(clock),
        });
        let prospector =
            Arc::new(Prospector::new(store.clone(), &config.lead_sources, config.platform_connector.as_deref())?);
        let external = match &config.external_issuer {
            Some(issuer) => {
                let external = Arc::new(crate::idp::ExternalIssuer::new(issuer, &config.tenant_claim)?);
                // Not fatal: the provider may come up later; requests retry the fetch.
                if let Err(e) = external.warm_up().await {
                    tracing::warn!(issuer, error = %format!("{e:#}"), "the external issuer's keys are not reachable yet");
                }
                Some(external)
            }
            None => None,
        };
        if config.embedded_issuer() {
            crate::oauth::register_docs_client(&store, &config).await?;
        }
        Ok(AppState { config, keys, store, vault, limiter, prospector, external })
    }

    /// The protected-resource description of the vault REST API.
    pub fn vault_rest(&self) -> Resource {
        Resource {
            id: self.config.vault_rest_resource(),
            metadata_url: self.config.url(prm::VAULT_REST_PATHS[0]),
            service: &generated::vault::SERVICE,
            also_accepts: Vec::new(),
        }
    }

    /// The protected-resource description of the vault MCP endpoint.
    pub fn vault_mcp(&self) -> Resource {
        Resource {
            id: self.config.vault_mcp_resource(),
            metadata_url: self.config.url(prm::VAULT_MCP_PATHS[1]),
            service: &generated::vault::SERVICE,
            // Tokens for the REST audience are refused here unless the operator opts in.
            also_accepts: if self.config.mcp_accepts_rest_tokens {
                vec![self.config.vault_rest_resource()]
            } else {
                Vec::new()
            },
        }
    }

    /// The protected-resource description of the prospector API.
    pub fn prospector(&self) -> Resource {
        Resource {
            id: self.config.prospector_resource(),
            metadata_url: self.config.url(prm::PROSPECTOR_PATH),
            service: &generated::prospector::SERVICE,
            also_accepts: Vec::new(),
        }
    }

    /// The gate for `resource`: tokens of the configured issuer, and the stored tokens of every
    /// kind (each admitted only where its resource is an accepted audience); scope denials are
    /// audited in `audit` when given. Whatever rate-limit plans the resource's spec declares, it
    /// enforces (a service declaring none is not limited).
    fn gate(&self, resource: Resource, audit: Option<Store>) -> BearerGate {
        let stored = vec![
            (crate::tokens::Kind::Personal, self.config.vault_rest_resource()),
            (crate::tokens::Kind::Api, self.config.prospector_resource()),
        ];
        BearerGate::new(self.keys.clone(), self.config.issuer(), resource, self.config.body_limit, audit)
            .with_external(self.external.clone())
            .with_stored_tokens(self.store.clone(), stored)
            .with_limiter(self.limiter.clone())
    }
}

/// Where the embedded authorization server publishes its signing keys.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// Keeps a well-formed inbound `X-Request-Id` (so callers can correlate), replaces anything
/// else with a fresh UUID, and echoes it on the response.
async fn request_ids(mut req: Request, next: Next) -> Response {
    let inbound = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).filter(|v| {
        !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    });
    let id = inbound.map(str::to_string).unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let value = HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("invalid"));
    req.headers_mut().insert("x-request-id", value.clone());
    let mut resp = next.run(req).await;
    resp.headers_mut().entry("x-request-id").or_insert(value);
    resp
}

/// The service whose catalog answers for `path` (prospector paths use its codes).
fn service_for(path: &str) -> &'static ServiceInfo {
    if path.starts_with(generated::prospector::SERVICE.base_path) {
        &generated::prospector::SERVICE
    } else {
        &generated::vault::SERVICE
    }
}

async fn not_found(req: Request) -> Response {
    let (parts, _) = req.into_parts();
    let service = service_for(parts.uri.path());
    let problem = Problem::new(format!("no route for {} {}", parts.method, parts.uri.path()));
    error_response(service, service.roles.not_found, problem, request_id(&parts))
}

/// A safety net: a handler that panics answers the service's 500 envelope (and the panic is
/// logged) instead of dropping the connection. Tests treat any 500 as a defect to fix.
fn catch_panics(
    service: &'static ServiceInfo,
) -> tower_http::catch_panic::CatchPanicLayer<impl Fn(Box<dyn std::any::Any + Send + 'static>) -> Response + Clone> {
    tower_http::catch_panic::CatchPanicLayer::custom(move |panic: Box<dyn std::any::Any + Send + 'static>| {
        let what = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        tracing::error!(panic = what, "a request handler panicked");
        let problem = Problem::new("Internal error; nothing was changed. Quote the request id.");
        error_response(service, service.roles.internal, problem, None)
    })
}

/// The embedded authorization server (metadata, endpoints, sign-in) and its public key set
/// (RFC 7517, read per request since rotation adds keys while the server runs); nothing when an
/// external issuer is configured.
fn embedded_issuer(state: &AppState) -> Router {
    if !state.config.embedded_issuer() {
        return Router::new();
    }
    let keys = state.keys.clone();
    let jwks = move || {
        let keys = keys.clone();
        async move {
            (
                [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "public, max-age=300")],
                keys.jwks().to_string(),
            )
        }
    };
    let server = crate::oauth::AuthServer::new(state.store.clone(), state.keys.clone(), state.config.clone());
    crate::oauth::router(Arc::new(server)).route(JWKS_PATH, get(jwks))
}

/// The complete application.
pub fn build(state: &AppState) -> Router {
    let mcp_gate = Arc::new(state.gate(state.vault_mcp(), Some(state.store.clone())));
    let mcp = crate::mcp::router(
        state.vault.clone(),
        mcp_gate.clone(),
        state.store.clone(),
        &state.config,
        state.config.body_limit,
    )
    .unwrap_or_else(|e| {
        // The descriptors are generated and checked by tests; failing to parse them is a build defect.
        panic!("generated MCP tool descriptors do not parse: {e}")
    });
    let origin = state.config.origin();
    let vault_gate = Arc::new(
        state.gate(state.vault_rest(), Some(state.store.clone())).with_sessions(state.store.clone(), origin.clone()),
    );
    let vault = generated::vault::router(state.vault.clone(), vault_gate.clone())
        .layer(catch_panics(&generated::vault::SERVICE));
    let prospector_gate = Arc::new(state.gate(state.prospector(), None).with_sessions(state.store.clone(), origin));
    let prospector = generated::prospector::router(state.prospector.clone(), prospector_gate.clone())
        .layer(catch_panics(&generated::prospector::SERVICE));
    // Every surface of a service whose spec declares plans is metered: its base path and its
    // MCP endpoint, each by its own gate, into one bucket per service and token.
    let mut metered = Metered::default();
    metered.add(generated::vault::SERVICE.base_path, &vault_gate);
    metered.add(crate::mcp::path(), &mcp_gate);
    metered.add(generated::prospector::SERVICE.base_path, &prospector_gate);
    let mut app = Router::new()
        .merge(vault)
        .merge(prospector)
        .merge(mcp)
        .merge(prm::router(&state.config))
        .merge(crate::docs::router(&state.config))
        .route("/healthz", get(|| async { axum::Json(serde_json::json!({ "status": "ok" })) }))
        .merge(embedded_issuer(state));
    if state.config.embedded_issuer() {
        app = app.merge(crate::console::router(state));
    }
    app.fallback(not_found)
        .layer(middleware::from_fn_with_state(state.config.http.request_timeout, request_timeout))
        // Outside the time limit, so a 408 carries the rate-limit headers too.
        .layer(middleware::from_fn_with_state(Arc::new(metered), crate::auth::meter))
        // Outside the meter, which buckets anonymous callers by the client address.
        .layer(middleware::from_fn_with_state(
            Arc::new(state.config.trusted_proxies.clone()),
            crate::client_address::layer,
        ))
        .layer(middleware::from_fn(request_ids))
}

/// A request (its body included) that is not answered within the limit gets the service's 408
/// envelope; dropping the handler rolls back its transaction, so nothing is half-written.
async fn request_timeout(
    axum::extract::State(limit): axum::extract::State<std::time::Duration>,
    mut req: Request,
    next: Next,
) -> Response {
    // Kept before the request moves on (no copy of the path), and the slot the gate marks.
    let (service, id) = (service_for(req.uri().path()), req.headers().get("x-request-id").cloned());
    let admitted = crate::auth::Admitted::default();
    req.extensions_mut().insert(admitted.clone());
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(response) => response,
        Err(_) => {
            // The handler was dropped (its transaction rolled back); its audit row is written here.
            admitted.audit_failure(service.roles.request_timeout, 408).await;
            let id = id.as_ref().and_then(|v| v.to_str().ok());
            let problem = Problem::new(format!(
                "The request was not complete within {} seconds; nothing was changed.",
                limit.as_secs()
            ))
            .with("limit_seconds", limit.as_secs());
            let mut resp = error_response(service, service.roles.request_timeout, problem, id);
            // The client may still be sending; do not read the rest of it on this connection.
            resp.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            resp
        }
    }
}
