//! Authentication and the scope gate: turns a request into a [`Caller`] for one operation, or
//! into the exact 401/403 answer RFC 6750 and the MCP authorization rules ask for.

use std::sync::Arc;

use axum::http::{HeaderValue, header, request::Parts};
use axum::response::Response;
use support::{Gate, Operation, Problem, ServiceInfo, error_response, request_id};

use crate::keys::SigningKeys;
use crate::ratelimit::{Decision, RateLimiter};
use crate::store::Store;
use crate::tokens;

use crate::caller::{AuthMethod, Caller};
use crate::slot::{RateSlot, Slot};

/// One protected resource (a REST API or the MCP endpoint): its identifier, where its Protected
/// Resource Metadata lives, and the error catalog its answers use.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The resource identifier tokens must name in `aud`.
    pub id: String,
    /// URL of its PRM document, named in every challenge.
    pub metadata_url: String,
    /// The service whose error catalog and scopes apply.
    pub service: &'static ServiceInfo,
    /// Other audiences accepted here by configuration (e.g. the REST API's at the MCP endpoint).
    pub also_accepts: Vec<String>,
}

/// The Gate for Bearer callers: verifies the token, then the operation's scope tier.
#[derive(Debug, Clone)]
pub struct BearerGate {
    keys: Arc<SigningKeys>,
    issuer: String,
    resource: Resource,
    body_limit: usize,
    /// Where scope denials and refused inputs are audited (services whose spec turns audit on).
    store: Option<Store>,
    /// Per-token, per-plan rate limits, for a service whose spec declares plans.
    limiter: Option<Arc<RateLimiter>>,
    /// Stored tokens accepted here: where they live and, per kind, the resource that kind is
    /// minted for (its audience, checked like a JWT's `aud`).
    stored_tokens: Option<(Store, Vec<(tokens::Kind, String)>)>,
    /// Where sign-in sessions live, and this server's origin, when cookie requests are accepted.
    sessions: Option<(Store, crate::config::Origin)>,
    /// The external identity provider whose tokens are accepted instead of the embedded ones.
    external: Option<Arc<crate::idp::ExternalIssuer>>,
    /// Where uploaded files are kept (pending until the operation keeps them).
    blobs: Option<crate::blobs::Blobs>,
    /// Where operations' transactions run ([`crate::context::Transaction`]).
    database: Option<Store>,
    /// Where calls that may have changed data are published: the service's, shared by its
    /// surfaces.
    changes: Option<crate::changes::Changes>,
}

/// Filled by an auditing gate with the request it admitted (where it is audited, who made it,
/// which operation), read by the request-timeout layer: a request cut off after the gate still
/// leaves its `failed` audit row (every request that passed the gate records one).
pub type Admitted = Slot<(Store, Caller, &'static Operation)>;

impl Admitted {
    /// Audits the admitted request, if any, as failed with `code` and `status`, without waiting
    /// for the database: the request's deadline has passed (the row is written once it can be).
    pub async fn audit_failure(&self, code: &str, status: u16) {
        let Some((store, caller, op)) = self.take() else { return };
        let failed = (crate::audit::Outcome::Failed, code, status);
        if let Err(e) = crate::audit::record_refusal(&store, &caller, op, failed, crate::audit::Waited::Yes).await {
            tracing::error!(operation = op.id, error = %e, "could not audit a request that timed out");
        }
    }
}

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// No credentials were sent.
    Missing,
    /// Credentials were sent but are not acceptable; the text says why (never the token).
    Invalid(&'static str),
    /// The token is valid but its scopes do not reach the operation's.
    InsufficientScope,
    /// A session cookie came with a state-changing request that lacks the CSRF proof.
    CrossSite,
    /// The credential could not be checked because the storage is unavailable (503, not 401).
    Unavailable,
}

impl BearerGate {
    /// A gate for `resource`, accepting tokens from `issuer` signed with `keys`.
    pub fn new(
        keys: Arc<SigningKeys>,
        issuer: String,
        resource: Resource,
        body_limit: usize,
        store: Option<Store>,
    ) -> Self {
        BearerGate {
            keys,
            issuer,
            resource,
            body_limit,
            store,
            limiter: None,
            stored_tokens: None,
            sessions: None,
            external: None,
            blobs: None,
            database: None,
            changes: None,
        }
    }

    /// The same gate, publishing the calls that may have changed data on `changes` (its
    /// service's, which every surface of the service shares).
    pub fn with_changes(mut self, changes: crate::changes::Changes) -> Self {
        self.changes = Some(changes);
        self
    }

    /// Where this gate publishes the calls that may have changed data, if it does.
    pub fn changes(&self) -> Option<&crate::changes::Changes> {
        self.changes.as_ref()
    }

    /// The same gate, running operations' transactions in `store`.
    pub fn with_database(mut self, store: Store) -> Self {
        self.database = Some(store);
        self
    }

    /// The same gate, keeping uploaded files in `store`'s blobs.
    pub fn with_blobs(mut self, store: Store) -> Self {
        self.blobs = Some(crate::blobs::Blobs::new(store));
        self
    }

    /// The same gate, verifying JWTs with an external issuer's keys instead of the embedded ones.
    pub fn with_external(mut self, external: Option<Arc<crate::idp::ExternalIssuer>>) -> Self {
        self.external = external;
        self
    }

    /// The same gate, also accepting the sign-in session cookie from `origin`; a session meets RBAC
    /// and tenant isolation, not scopes, as the product requires of the console.
    pub fn with_sessions(mut self, store: Store, origin: crate::config::Origin) -> Self {
        self.sessions = Some((store, origin));
        self
    }

    /// The same gate, also accepting the stored tokens (personal or API tokens) of `kinds` kept
    /// in `store`, each kind paired with the resource it is minted for. A kind is admitted only
    /// where that resource is one of the audiences this gate accepts, as for JWTs.
    pub fn with_stored_tokens(mut self, store: Store, kinds: Vec<(tokens::Kind, String)>) -> Self {
        self.stored_tokens = Some((store, kinds));
        self
    }

    /// The same gate, also enforcing the rate-limit plans its service's spec declares (nothing
    /// changes for a service that declares none).
    pub fn with_limiter(mut self, limiter: Arc<RateLimiter>) -> Self {
        if !self.resource.service.plans.is_empty() {
            self.limiter = Some(limiter);
        }
        self
    }

    /// Audits a request refused for its scope as a `denied` row, where this gate audits (REST
    /// operations and MCP tool calls alike).
    pub async fn audit_scope_denial(&self, caller: &Caller, op: &'static Operation) {
        let Some(store) = &self.store else { return };
        let code = self.resource.service.roles.insufficient_scope;
        // A denial that cannot be audited is still a denial; log the audit failure.
        let denied = crate::audit::Outcome::Denied;
        let denied = (denied, code, 403);
        if let Err(e) = crate::audit::record_refusal(store, caller, op, denied, crate::audit::Waited::No).await {
            tracing::error!(operation = op.id, error = %e, "could not audit a scope denial");
        }
    }

    /// Whether this gate enforces rate-limit plans.
    pub fn is_metered(&self) -> bool {
        self.limiter.is_some()
    }

    /// Counts the request against its token (or, unauthenticated, its client address) under the
    /// plan the token names or the service's default; records the decision for the headers.
    async fn count(&self, parts: &Parts, op: &Operation, caller: Option<&Caller>) -> Option<Decision> {
        if !op.rate_limited {
            // Not counted, and not to be counted as an unrouted request either.
            if let Some(slot) = parts.extensions.get::<RateSlot>() {
                slot.put(None);
            }
            return None;
        }
        self.meter(parts, caller).await
    }

    /// Counts one request of this service against the caller's bucket (one per service and
    /// token; every surface of the service, REST and MCP, shares it), and records the decision
    /// for [`meter`] to put in the response headers. `None` when the service declares no plans.
    pub async fn meter(&self, parts: &Parts, caller: Option<&Caller>) -> Option<Decision> {
        let limiter = self.limiter.as_ref()?;
        let service = self.resource.service;
        let plan_name = caller.and_then(|c| c.plan.as_deref()).or(service.default_plan)?;
        let plan = service.plan(plan_name).or_else(|| service.default_plan.and_then(|p| service.plan(p)))?;
        let key = match caller {
            Some(c) => format!("{}:token:{}", service.name, c.token_id.as_deref().unwrap_or(&c.subject)),
            // Behind trusted proxies, the client they name (crate::client_address).
            None => match parts.extensions.get::<crate::client_address::ClientAddress>() {
                Some(client) => format!("{}:anonymous:{client}", service.name),
                None => format!("{}:anonymous:unknown", service.name),
            },
        };
        let decision = limiter.check(&key, plan).await;
        if let Some(slot) = parts.extensions.get::<RateSlot>() {
            slot.put(Some(decision));
        }
        Some(decision)
    }

    /// Authenticates the request (JWT for this resource, or a personal access token).
    pub async fn authenticate(&self, parts: &Parts) -> Result<Caller, Denial> {
        let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
            return self.session(parts).await;
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim())
            .filter(|t| !t.is_empty())
            .ok_or(Denial::Invalid("the Authorization header is not `Bearer <token>`"))?;
        let request_id = request_id(parts).unwrap_or_default().to_string();
        let mut audiences = vec![self.resource.id.clone()];
        audiences.extend(self.resource.also_accepts.iter().cloned());
        if let Some(kind) = tokens::Kind::of(token) {
            let (store, minted_for) = self
                .stored_tokens
                .as_ref()
                .and_then(|(store, kinds)| kinds.iter().find(|(k, _)| *k == kind).map(|(_, aud)| (store, aud)))
                .ok_or(Denial::Invalid("this kind of token is not accepted here"))?;
            if !audiences.contains(minted_for) {
                return Err(Denial::Invalid("the token is not issued for this resource"));
            }
            let t = tokens::authenticate(store, kind, token).await.map_err(|r| match r {
                tokens::Refusal::Invalid(why) => Denial::Invalid(why),
                tokens::Refusal::Unavailable => Denial::Unavailable,
            })?;
            let method = if kind == tokens::Kind::Personal { AuthMethod::PersonalToken } else { AuthMethod::ApiToken };
            return Ok(Caller {
                subject: t.user_id,
                tenant: t.tenant_id,
                scopes: t.scopes,
                plan: t.plan,
                method,
                token_id: Some(t.id),
                request_id,
            });
        }
        let claims = match &self.external {
            Some(external) => external.verify(token, &audiences).await,
            None => self.keys.verify(token, &self.issuer, &audiences),
        }
        .map_err(Denial::Invalid)?;
        // The tenant scopes every query: a token must name one `tenant create` would accept.
        if !crate::names::tenant_ok(&claims.tenant) {
            return Err(Denial::Invalid("the token's tenant claim is not a valid tenant name"));
        }
        let scopes: Vec<String> = claims.scope.split_whitespace().map(str::to_string).collect();
        Ok(Caller {
            subject: claims.sub,
            tenant: claims.tenant,
            scopes,
            plan: claims.plan,
            method: AuthMethod::Jwt,
            token_id: Some(claims.jti),
            request_id,
        })
    }

    /// The caller a session cookie names, when sessions are accepted here. A state-changing
    /// request must also come from this origin and echo the session's CSRF token.
    async fn session(&self, parts: &Parts) -> Result<Caller, Denial> {
        use crate::oauth::sessions;
        let Some((store, origin)) = &self.sessions else { return Err(Denial::Missing) };
        let session = match sessions::from_headers(store, &parts.headers).await {
            Ok(Some((_, s))) => s,
            Ok(None) => return Err(Denial::Missing),
            Err(e) => {
                tracing::warn!(error = %e, "could not read a session");
                return Err(Denial::Unavailable);
            }
        };
        if !sessions::csrf_ok(&parts.method, &parts.headers, &session, origin, None) {
            return Err(Denial::CrossSite);
        }
        Ok(Caller {
            subject: session.user,
            tenant: session.tenant,
            scopes: Vec::new(),
            plan: None,
            method: AuthMethod::Session,
            token_id: None,
            request_id: request_id(parts).unwrap_or_default().to_string(),
        })
    }

    /// The database operations run their transactions in, when the server has one.
    pub(crate) fn database(&self) -> Option<&Store> {
        self.database.as_ref()
    }

    /// The signing keys the gate verifies the embedded authorization server's tokens with.
    pub(crate) fn keys(&self) -> &SigningKeys {
        &self.keys
    }

    /// The resource this gate protects.
    pub fn resource(&self) -> &Resource {
        &self.resource
    }

    /// The response for a denial: status, `WWW-Authenticate` challenge and error envelope.
    pub fn deny(&self, parts: &Parts, op: &Operation, denial: Denial) -> Response {
        challenge(&self.resource, request_id(parts), op.scope, denial)
    }
}

/// Builds the 401/403 answer for `resource`: RFC 6750 challenge plus the error envelope.
pub fn challenge(resource: &Resource, request_id: Option<&str>, scope: &str, denial: Denial) -> Response {
    let service = resource.service;
    let roles = &service.roles;
    let meta = &resource.metadata_url;
    let (code, header_value, problem) = match denial {
        Denial::Missing => (
            roles.unauthenticated,
            format!(r#"Bearer resource_metadata="{meta}", scope="{scope}""#),
            Problem::new("Authentication required: send `Authorization: Bearer <token>`.").with("required", scope),
        ),
        Denial::Invalid(why) => (
            roles.invalid_token,
            format!(
                r#"Bearer error="invalid_token", error_description="{why}", resource_metadata="{meta}", scope="{scope}""#
            ),
            Problem::new(format!("The token is invalid: {why}.")).with("required", scope),
        ),
        Denial::CrossSite => (
            roles.unauthenticated,
            format!(r#"Bearer resource_metadata="{meta}", scope="{scope}""#),
            Problem::new(
                "A signed-in session's state-changing request must come from this server's own pages and send the \
                 session's CSRF token in X-CSRF-Token.",
            )
            .with("required", scope),
        ),
        Denial::Unavailable => {
            // Nothing is known about the credential: no challenge, a retry later may pass.
            let seconds = crate::store::RETRY_AFTER_SECONDS;
            let problem = Problem::new(format!(
                "The credential could not be checked: the service's storage is unavailable for now. Retry in \
                 {seconds} seconds."
            ))
            .with("retry_after", seconds);
            return error_response(service, roles.unavailable, problem, request_id);
        }
        Denial::InsufficientScope => (
            roles.insufficient_scope,
            format!(r#"Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{meta}""#),
            Problem::new(format!("This operation requires scope {scope}.")).with("required", scope),
        ),
    };
    let mut resp = error_response(service, code, problem, request_id);
    if let Ok(v) = HeaderValue::from_str(&header_value) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp
}

impl Gate for BearerGate {
    type Caller = Caller;
    type Context = crate::context::Context;

    fn context(&self, caller: Caller, op: &'static Operation, touched: support::Touched) -> Self::Context {
        let mut cx = crate::context::Context::new(caller, op, self.database.clone());
        cx.targets = touched.targets;
        cx.path = touched.path;
        cx
    }

    /// Commits or rolls back the call's transaction and, where this gate audits, records it.
    async fn conclude(&self, cx: Self::Context, outcome: Result<(), &'static str>) -> Result<(), support::Fault> {
        crate::context::conclude(self.store.as_ref(), self.changes.as_ref(), cx, outcome).await
    }

    async fn admit(&self, parts: &mut Parts, op: &'static Operation) -> Result<Caller, Response> {
        // Authenticate once: the rate limit, the scope check and the audit all use the result.
        crate::metrics::name_operation(&parts.extensions, op);
        let authenticated = match self.authenticate(parts).await {
            // A public operation admits a request without credentials; one with bad ones is
            // still told so.
            Err(Denial::Missing) if op.public => Ok(Caller::anonymous(request_id(parts).unwrap_or_default())),
            other => other,
        };
        let span = tracing::Span::current();
        span.record("operation", op.id);
        if let Ok(caller) = &authenticated {
            span.record("tenant", caller.tenant.as_str());
        }
        // An anonymous caller is counted by its client address, as an unauthenticated one is.
        let counted = authenticated.as_ref().ok().filter(|c| !c.is_anonymous());
        if let Some(d) = self.count(parts, op, counted).await.filter(|d| !d.allowed) {
            return Err(self.limited(parts, &d));
        }
        let caller = authenticated.map_err(|denial| self.deny(parts, op, denial))?;
        // Scopes bind Bearer callers (OAuth 2.0, RFC 6750); a signed-in browser session meets RBAC
        // and tenant isolation only, as the product requires of the console.
        if caller.method == AuthMethod::Session || op.allows(caller.scopes.iter().map(String::as_str)) {
            if let (Some(store), Some(slot)) = (&self.store, parts.extensions.get::<Admitted>()) {
                slot.put((store.clone(), caller.clone(), op));
            }
            return Ok(caller);
        }
        self.audit_scope_denial(&caller, op).await;
        Err(self.deny(parts, op, Denial::InsufficientScope))
    }

    /// Audits the refused input as a `failed` row, where this gate audits.
    async fn refused(&self, caller: &Caller, op: &'static Operation, code: &'static str, status: u16) {
        let Some(store) = &self.store else { return };
        let failed = (crate::audit::Outcome::Failed, code, status);
        // The answer stands whether or not it is audited; log the audit failure.
        if let Err(e) = crate::audit::record_refusal(store, caller, op, failed, crate::audit::Waited::No).await {
            tracing::error!(operation = op.id, error = %e, "could not audit a refused input");
        }
    }

    fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// Writes the file into a pending blob of the caller's tenant, chunk by chunk.
    async fn store_upload(
        &self,
        caller: &Caller,
        content: support::UploadStream,
        limit: u64,
    ) -> Result<support::Stored, support::StoreError> {
        use crate::blobs::WriteError;
        let Some(blobs) = &self.blobs else {
            return Err(support::StoreError::Unavailable("this gate keeps no uploaded files".into()));
        };
        match blobs.write(&caller.tenant, content, limit).await {
            Ok(b) => Ok(support::Stored { id: b.id, size: b.size, sha256: b.sha256 }),
            Err(WriteError::TooLarge { .. }) => Err(support::StoreError::TooLarge),
            Err(WriteError::Source(why)) => Err(support::StoreError::Source(why)),
            Err(WriteError::Storage(e)) => {
                tracing::warn!("storing an upload: {e}");
                Err(support::StoreError::Unavailable("storage failed".into()))
            }
        }
    }
}

impl BearerGate {
    /// The 429 answer for a refused decision: the service's envelope, `Retry-After` and the
    /// `X-RateLimit-*` headers.
    pub fn limited(&self, parts: &Parts, d: &Decision) -> Response {
        let service = self.resource.service;
        crate::metrics::rate_limited(&parts.extensions, service.name);
        let problem = rate_limited_problem(d);
        let mut resp = error_response(service, service.roles.rate_limited, problem, request_id(parts));
        d.write_headers(resp.headers_mut());
        resp
    }
}

/// What a refused request is told: the limit and the seconds to wait (`details.limit`,
/// `details.retry_after`).
pub fn rate_limited_problem(d: &Decision) -> Problem {
    let retry = d.retry_after.unwrap_or(1);
    Problem::new(format!("Rate limit of {} requests exceeded; retry in {retry} seconds.", d.limit))
        .with("limit", d.limit)
        .with("retry_after", retry)
}
