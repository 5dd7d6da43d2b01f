//! The platform and the server builder: `Server::builder(&platform).service(api)….build()` serves
//! every registered service's generated router behind its gate, its MCP endpoint, the metadata
//! documents, the OpenAPI documents and Swagger UI (`docs`), the embedded authorization server,
//! health, and the request-id, client-address, rate-limit and time-limit layers.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use support::{Problem, ServiceInfo, error_response, request_id};
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{DefaultPredicate, Predicate};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::api::ServiceApi;
use crate::auth::{BearerGate, Resource};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::keys::SigningKeys;
use crate::meter::Metered;
use crate::prm::{self, Surface};
use crate::ratelimit::{Clock, RateLimiter, SystemClock};
use crate::store::Store;

/// What the platform shares with every registered service: settings, the signing keys, the
/// database, the rate limiter and, when configured, the external identity provider. Opened first;
/// services are built from it and registered with [`Server::builder`].
#[derive(Debug, Clone)]
pub struct Platform {
    /// Settings.
    pub config: Config,
    /// The embedded authorization server's signing key.
    pub keys: Arc<SigningKeys>,
    /// The database.
    pub store: Store,
    /// Rate limits (in process, or in Redis with `REDIS_URL`).
    pub limiter: Arc<RateLimiter>,
    /// The external identity provider, when one replaces the embedded authorization server.
    pub external: Option<Arc<crate::idp::ExternalIssuer>>,
    /// The webhook outbox: a service with `[webhooks]` queues its events here and starts the
    /// deliverer.
    pub webhooks: crate::webhooks::Webhooks,
    /// Turns `true` when [`Platform::run`] is told to stop, for what streams until then.
    stopping: tokio::sync::watch::Sender<bool>,
    /// Each service's news of changes for its MCP subscribers ([`Platform::changes`]), by name.
    changes: Arc<std::sync::Mutex<std::collections::HashMap<&'static str, crate::changes::Changes>>>,
    /// Where changes are announced to the other replicas (PostgreSQL only).
    announcer: Option<crate::changes::Announcer>,
}

impl Platform {
    /// Loads (or creates) what the data directory holds and opens (and migrates) the database.
    pub async fn open(config: Config) -> anyhow::Result<Self> {
        Self::open_with_clock(config, Arc::new(SystemClock)).await
    }

    /// As [`Platform::open`], with the clock rate limits read (tests move it by hand).
    pub async fn open_with_clock(config: Config, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        crate::config::parse_public_url(&config.public_url).map_err(|e| anyhow::anyhow!("--public-url: {e}"))?;
        if config.metrics_addr.is_some() {
            crate::metrics::install()?;
        }
        let keys = Arc::new(SigningKeys::load_or_create(&config.data_dir)?);
        let store = Store::open_with(config.database_url.as_deref(), &config.data_dir, config.pool).await?;
        let limiter = Arc::new(match &config.redis_url {
            Some(url) => RateLimiter::redis(url, config.replicas, clock).await?,
            None => RateLimiter::local(clock),
        });
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
        let webhooks = crate::webhooks::Webhooks::new(store.clone(), config.webhooks.clone());
        let stopping = tokio::sync::watch::Sender::new(false);
        let announcer = (store.backend() == crate::store::Backend::Postgres)
            .then(|| crate::changes::Announcer::start(store.clone()));
        Ok(Platform { config, keys, store, limiter, external, webhooks, stopping, changes: Arc::default(), announcer })
    }

    /// The news of `service`'s changes for its MCP resources' subscribers: what its calls that
    /// may change data publish once committed, and what its own work outside a call (a job that
    /// ends in the background) publishes with [`crate::changes::Changes::committed`], naming the
    /// operation whose route addresses what changed. One handle per service, shared by every
    /// clone of the platform; on PostgreSQL it announces to the other replicas too, for a service
    /// with resources to subscribe to.
    pub fn changes(&self, service: &'static ServiceInfo) -> crate::changes::Changes {
        let mut all = self.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let changes = all.entry(service.name).or_insert_with(|| {
            let changes = crate::changes::Changes::default();
            match &self.announcer {
                Some(announcer) if crate::mcp::has_resources(service) => changes.announced_by(announcer.clone()),
                _ => changes,
            }
        });
        changes.clone()
    }

    /// The gate of one protected resource: tokens of the configured issuer, and the stored tokens
    /// of every kind some registered service accepts (each admitted only where its resource is an
    /// accepted audience); scope denials and refused inputs are audited when the service's spec
    /// turns audit on. Whatever rate-limit plans the service's spec declares, it enforces (a
    /// service declaring none is not limited).
    /// Runs a server process: serves `app` on `listener` and, when the platform's settings name a
    /// metrics address, `GET /metrics` there (with the same connection limits) until SIGTERM or
    /// SIGINT; then drains both (see [`crate::server::serve`]) and closes the database.
    pub async fn run(&self, listener: tokio::net::TcpListener, app: Router) -> anyhow::Result<()> {
        let limits = self.config.http;
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let metrics = match self.config.metrics_addr {
            Some(addr) => {
                let (store, limiter) = (self.store.clone(), self.limiter.clone());
                let router = crate::metrics::router(move || {
                    let (open, idle) = store.pool_size();
                    crate::metrics::pool(open, idle);
                    crate::metrics::fallbacks(limiter.fallbacks());
                })?;
                let bound = tokio::net::TcpListener::bind(addr).await;
                let metrics = bound.map_err(|e| anyhow::anyhow!("--metrics-addr {addr}: {e}"))?;
                tracing::info!(addr = %metrics.local_addr()?, "metrics at http://{}/metrics", metrics.local_addr()?);
                let mut stopped = stopped.clone();
                let until = async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                };
                Some(tokio::spawn(crate::server::serve(metrics, router, limits, until)))
            }
            None => None,
        };
        let shutdown = async {
            crate::server::shutdown_signal().await;
            // Streams that would otherwise hold the drain until its deadline end now.
            self.stopping.send_replace(true);
        };
        let served = crate::server::serve(listener, app, limits, shutdown).await;
        let _ = stop.send(true);
        if let Some(task) = metrics {
            let _ = task.await;
        }
        self.store.close().await;
        Ok(served?)
    }

    fn gate(&self, resource: Resource, catalog: &Catalog) -> BearerGate {
        let stored = [crate::tokens::Kind::Personal, crate::tokens::Kind::Api]
            .into_iter()
            .flat_map(|kind| {
                catalog.stored_token_audiences(&self.config, kind.name()).into_iter().map(move |a| (kind, a))
            })
            .collect();
        let audit = resource.service.audit.then(|| self.store.clone());
        BearerGate::new(self.keys.clone(), self.config.issuer(), resource, self.config.body_limit, audit)
            .with_external(self.external.clone())
            .with_stored_tokens(self.store.clone(), stored)
            .with_blobs(self.store.clone())
            .with_database(self.store.clone())
            .with_limiter(self.limiter.clone())
    }

    /// The protected-resource description of `surface`.
    fn resource(&self, surface: &Surface) -> Resource {
        let also_accepts = if surface.mcp && self.config.mcp_accepts_rest_tokens {
            // Tokens for the REST audience are refused at the MCP endpoint unless the operator opts in.
            vec![Catalog::rest_resource(&self.config, surface.service)]
        } else {
            Vec::new()
        };
        Resource {
            id: surface.resource(&self.config),
            metadata_url: self.config.url(&surface.announced_path()),
            service: surface.service,
            also_accepts,
        }
    }
}

/// Serves registered services with everything the platform gives each of them.
#[derive(Debug)]
pub struct Server;

impl Server {
    /// A server over `platform`, to which services are added with [`ServerBuilder::service`].
    pub fn builder(platform: &Platform) -> ServerBuilder {
        ServerBuilder {
            platform: platform.clone(),
            services: Vec::new(),
            routes: Router::new(),
            home: crate::docs::DOCS_PATH.to_string(),
        }
    }
}

/// Collects the services a server serves; [`ServerBuilder::build`] makes the application.
#[derive(Debug)]
pub struct ServerBuilder {
    platform: Platform,
    services: Vec<ServiceApi>,
    routes: Router,
    home: String,
}

impl ServerBuilder {
    /// Registers a service: `NAME_api::NAME::api(implementation)`. Its REST API, its MCP
    /// endpoint (when its spec declares one), their metadata documents, its OpenAPI documents,
    /// its scopes at the authorization server, rate limits (when it declares plans) and audit
    /// (when it turns audit on) are served from its spec.
    pub fn service(mut self, api: ServiceApi) -> Self {
        self.services.push(api);
        self
    }

    /// The platform the services are registered over.
    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    /// Adds routes of the application's own (pages of its own, say), served beside the services
    /// with the same request ids, client address and time limit.
    pub fn routes(mut self, routes: Router) -> Self {
        self.routes = self.routes.merge(routes);
        self
    }

    /// Where sign-in lands when no page asked for it (a path of this server; the API docs unless
    /// set).
    pub fn home(mut self, path: &str) -> Self {
        self.home = path.to_string();
        self
    }

    /// The descriptions of the services registered so far, in order.
    pub fn catalog(&self) -> Catalog {
        Catalog::new(self.services.iter().map(|s| s.info()))
    }

    /// The complete application. Fails when two services claim the same name or path.
    pub fn build(self) -> anyhow::Result<Router> {
        let catalog = self.catalog();
        let routes: Vec<(&'static str, &'static str)> =
            self.services.iter().flat_map(|a| a.operations().iter().map(|op| (a.info().name, op.full_path))).collect();
        check_paths(&self.platform.config, &catalog, &routes)?;
        let measured = self.platform.config.metrics_addr.is_some().then(|| {
            let operations = self.services.iter().flat_map(|a| a.operations().iter().copied());
            let mcp = catalog.services().filter(|s| s.mcp_path.is_some()).map(|s| s.name);
            Arc::new(crate::metrics::Requests::new(operations, mcp))
        });
        let state = &self.platform;
        let origin = state.config.origin();
        let mut metered = Metered::default();
        let mut app = Router::new();
        let mut announcing = Vec::new();
        for api in self.services {
            let api = Arc::new(api);
            let info = api.info();
            // A service with resources to subscribe to publishes its calls to its MCP subscribers
            // whichever surface made them, and (on PostgreSQL) hears the other replicas' calls.
            let changes = crate::mcp::has_resources(info).then(|| state.changes(info));
            if let (Some(changes), Some(_)) = (&changes, &state.announcer) {
                announcing.push((api.operations(), changes.clone()));
            }
            for surface in Surface::all(&Catalog::new([info])) {
                let mut gate = state.gate(state.resource(&surface), &catalog);
                if let Some(changes) = &changes {
                    gate = gate.with_changes(changes.clone());
                }
                if surface.mcp {
                    let gate = Arc::new(gate);
                    let mcp = crate::mcp::router(
                        api.clone(),
                        gate.clone(),
                        &state.config,
                        state.config.body_limit,
                        state.stopping.subscribe(),
                    )?;
                    if let Some(mcp) = mcp {
                        app = app.merge(mcp);
                        metered.add(surface.path, &gate);
                    }
                } else {
                    // Browsers of the console call the REST APIs with the session cookie.
                    let gate = Arc::new(gate.with_sessions(state.store.clone(), origin.clone()));
                    app = app.merge(api.router(gate.clone()).layer(catch_panics(info)));
                    // Every surface of a service whose spec declares plans is metered: its base path
                    // and its MCP endpoint, each by its own gate, into one bucket per service and token.
                    metered.add(surface.path, &gate);
                }
            }
        }
        if let (Some(url), false) = (&state.config.database_url, announcing.is_empty()) {
            tokio::spawn(crate::changes::relay(url.clone(), announcing, state.stopping.subscribe()));
        }
        let app = app
            .merge(prm::router(&state.config, &catalog))
            .merge(crate::docs::router(&state.config, &catalog))
            .merge(embedded_issuer(state, &catalog, &self.home))
            .merge(self.routes);
        let mut app = app
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(
                (state.config.http.request_timeout, catalog.clone()),
                request_timeout,
            ))
            // Outside the time limit, so a 408 carries the rate-limit headers too.
            .layer(middleware::from_fn_with_state(Arc::new(metered), crate::meter::meter));
        if let Some(requests) = measured {
            // Outside the time limit and the meter, so 408s and 429s are counted too.
            app = app.layer(middleware::from_fn_with_state(requests, crate::metrics::layer));
        }
        Ok(app
            // The request log's span holds everything inside it, so every line of a request names it.
            .layer(middleware::from_fn(crate::logging::layer))
            // Outside the meter and the log, which read the client address.
            .layer(middleware::from_fn_with_state(
                Arc::new(state.config.trusted_proxies.clone()),
                crate::client_address::layer,
            ))
            .layer(middleware::from_fn(request_ids))
            .layer(axum::Extension(catalog))
            // JSON responses, compressed when the client asks (`Accept-Encoding: gzip`); event
            // streams (MCP) never, as the default predicate excludes them.
            .layer(CompressionLayer::new().compress_when(DefaultPredicate::new().and(json_only)))
            // The probes, outside the per-request layers: an orchestrator asks every few seconds,
            // and a log line, a request id and a time limit per probe are noise (a failed
            // readiness check logs its cause itself).
            .route("/healthz", get(|| async { ([(header::CONTENT_TYPE, "application/json")], r#"{"status":"ok"}"#) }))
            .route("/readyz", get(readiness).with_state(state.clone()))
            .layer(SetResponseHeaderLayer::overriding(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            )))
    }
}

/// Whether a response is JSON (`application/json` or a `+json` type), the kind compressed.
fn json_only(
    _: axum::http::StatusCode,
    _: axum::http::Version,
    headers: &axum::http::HeaderMap,
    _: &axum::http::Extensions,
) -> bool {
    // Runs for every response: compares in place, no allocation.
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| {
        let essence = t.split(';').next().unwrap_or_default().trim();
        let suffix = essence.len().checked_sub(5).and_then(|at| essence.get(at..));
        essence.eq_ignore_ascii_case("application/json") || suffix.is_some_and(|s| s.eq_ignore_ascii_case("+json"))
    })
}

/// Readiness: whether this process can serve requests now. 503 when its database does not answer
/// (within the pool's acquire timeout, as a request would wait, plus two seconds for the query).
/// Redis, when rate limits are shared through it, is reported but does not make the process
/// unready: without it limits are counted in process (see the README's "Rate limits"), and taking
/// every replica out of rotation for it would turn a degraded limiter into an outage. Causes go to
/// the log, not to this public answer. `/healthz` stays the liveness probe (the process runs).
async fn readiness(axum::extract::State(platform): axum::extract::State<Platform>) -> Response {
    const QUERY: std::time::Duration = std::time::Duration::from_secs(2);
    let database = probe("database", platform.config.pool.acquire_timeout + QUERY, platform.store.ping()).await;
    let redis = match platform.limiter.ping() {
        Some(ping) => Some(probe("redis", QUERY, ping).await),
        None => None,
    };
    let word = |up: bool| if up { "ok" } else { "down" };
    let mut checks = serde_json::json!({ "database": word(database) });
    if let Some(up) = redis {
        checks["redis"] = word(up).into();
    }
    let (status, state) = match (database, redis) {
        (false, _) => (axum::http::StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        (true, Some(false)) => (axum::http::StatusCode::OK, "degraded"),
        (true, _) => (axum::http::StatusCode::OK, "ready"),
    };
    let mut response = (status, axum::Json(serde_json::json!({ "status": state, "checks": checks }))).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Whether `check` succeeds within `wait`; a failure's cause goes to the log.
async fn probe<T, E: std::fmt::Display>(
    name: &str,
    wait: std::time::Duration,
    check: impl std::future::Future<Output = Result<T, E>>,
) -> bool {
    let cause = match tokio::time::timeout(wait, check).await {
        Ok(Ok(_)) => return true,
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!("no answer within {} ms", wait.as_millis()),
    };
    tracing::warn!(check = name, %cause, "readiness check failed");
    false
}

/// Services must not be registered twice, nor share a base or MCP path, a route, a metadata
/// document path, or a path the platform serves itself: each such mistake is a clear error here
/// rather than a panic inside the router.
fn check_paths(config: &Config, catalog: &Catalog, operations: &[(&'static str, &'static str)]) -> anyhow::Result<()> {
    let mut names = std::collections::BTreeSet::new();
    for s in catalog.services() {
        anyhow::ensure!(names.insert(s.name), "the service {} is registered twice", s.name);
    }
    let mut seen: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    let mut claim = |what: String, owner: String| match seen.insert(what.clone(), owner.clone()) {
        Some(other) if other != owner => anyhow::bail!("{what} is claimed by both {other} and {owner}"),
        _ => Ok(()),
    };
    let platform = "the platform";
    for path in [
        "/healthz",
        "/readyz",
        "/docs",
        crate::docs::DOCS_PATH,
        crate::oauth::JWKS_PATH,
        crate::oauth::METADATA_PATH,
        crate::oauth::AUTHORIZE_PATH,
        crate::oauth::TOKEN_PATH,
        crate::oauth::REGISTER_PATH,
        crate::oauth::REVOKE_PATH,
        crate::oauth::LOGIN_PATH,
        crate::oauth::LOGOUT_PATH,
    ] {
        claim(format!("the path {path}"), platform.into())?;
    }
    for s in catalog.services() {
        claim(format!("the path {}", s.base_path), s.name.into())?;
        claim(format!("the path {}", crate::docs::document_path(s)), s.name.into())?;
        if let Some(p) = s.mcp_path {
            claim(format!("the path {p}"), s.name.into())?;
        }
    }
    for (service, path) in operations {
        claim(format!("the path {path}"), service.to_string())?;
    }
    for surface in Surface::all(catalog) {
        for p in surface.paths(config) {
            claim(format!("the path {p}"), surface.service.name.into())?;
        }
    }
    Ok(())
}

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

/// A path no route answers: the 404 envelope of the service whose paths hold it (by prefix), or
/// of the first registered service.
async fn not_found(axum::Extension(catalog): axum::Extension<Catalog>, req: Request) -> Response {
    let (parts, _) = req.into_parts();
    let message = format!("no route for {} {}", parts.method, parts.uri.path());
    match catalog.for_path(parts.uri.path()) {
        Some(service) => error_response(service, service.roles.not_found, Problem::new(message), request_id(&parts)),
        None => (axum::http::StatusCode::NOT_FOUND, message).into_response(),
    }
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
fn embedded_issuer(state: &Platform, catalog: &Catalog, home: &str) -> Router {
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
    let server =
        crate::oauth::AuthServer::new(state.store.clone(), state.keys.clone(), state.config.clone(), catalog.clone())
            .with_home(home)
            .with_documentation(crate::docs::DOCS_PATH);
    crate::oauth::router(Arc::new(server))
        .route(crate::oauth::JWKS_PATH, get(jwks).layer(crate::cors::public_documents()))
}

/// A request (its body included) that is not answered within the limit gets the service's 408
/// envelope; dropping the handler rolls back its transaction, so nothing is half-written.
async fn request_timeout(
    axum::extract::State((limit, catalog)): axum::extract::State<(std::time::Duration, Catalog)>,
    mut req: Request,
    next: Next,
) -> Response {
    // Kept before the request moves on (no copy of the path), and the slot the gate marks.
    let (service, id) = (catalog.for_path(req.uri().path()), req.headers().get("x-request-id").cloned());
    let admitted = crate::auth::Admitted::default();
    req.extensions_mut().insert(admitted.clone());
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(response) => response,
        Err(_) => {
            let Some(service) = service else {
                return (axum::http::StatusCode::REQUEST_TIMEOUT, "request timeout").into_response();
            };
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
