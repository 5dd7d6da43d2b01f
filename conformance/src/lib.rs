//! The conformance kit: a black-box check that a running server enforces what its spec says.
//!
//! A [`Contract`] is what the spec promises, read from a binary's registered services
//! ([`Contract::from_services`]) or from a spec folder ([`Contract::from_spec_dir`]). [`run`] sends
//! requests to a server at its public URL, with tokens minted from the data directory's signing
//! key the way `specwright token` mints them, and returns a [`Report`] of every check:
//!
//! - every scoped operation: no token → 401 with the exact challenge and the service's
//!   `unauthenticated` code (in its wire format), and for a deprecated operation its exact
//!   `Deprecation` and `Sunset` headers (none for the others); a token one tier below → 403 with
//!   the exact `insufficient_scope` challenge, code and `details.required`;
//! - every Protected Resource Metadata document of the REST API and the MCP endpoint (each path
//!   the spec declares and the RFC 9728 one, also at the origin under a public URL with a path);
//! - the served OpenAPI documents (3.1 and 3.0) equal to the generated ones but for the server's
//!   own URLs;
//! - for MCP services: the endpoint's 401 challenge, `tools/list` equal to the spec's tools, each
//!   description's `SCOPE:` line, and every `tools/call` one tier below refused like REST;
//! - where the service declares plans, the rate-limit headers on every answer of a metered
//!   operation;
//! - with [`Target::with_admission`] (`--admission`), every operation and tool sent with a token of
//!   its own tier is admitted by the gate (this runs them).
//!
//! [`Options`] is the command line (`specwright conformance --url URL`) any service binary can
//! mount.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// The well-known prefix of RFC 9728.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
/// The MCP revision the kit speaks (stateless requests, no session needed).
const MCP_REVISION: &str = "2025-11-25";
/// The tenant and subject of the kit's tokens (the scope gate answers before any tenant lookup).
const TENANT: &str = "conformance";
const RATE_HEADERS: [&str; 3] = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];

/// What a spec promises, per service.
#[derive(Debug, Clone)]
pub struct Contract {
    /// The services, in the order checked.
    pub services: Vec<Service>,
}

/// One service's promises.
#[derive(Debug, Clone)]
pub struct Service {
    /// snake_case name (the OpenAPI documents are served at `/openapi/<name>.json`).
    pub name: String,
    /// Path prefix of every operation: the REST resource.
    pub base_path: String,
    /// The MCP endpoint, when the service has tools.
    pub mcp_path: Option<String>,
    /// Declared PRM paths of the REST API (the first is announced in challenges).
    pub metadata_paths: Vec<String>,
    /// Declared PRM paths of the MCP endpoint.
    pub mcp_metadata_paths: Vec<String>,
    /// Scope catalog, lowest tier first: each name with the scopes it implies.
    pub scopes: Vec<(String, Vec<String>)>,
    /// The error code of a request without credentials.
    pub unauthenticated: String,
    /// The error code of a token whose scope is too low.
    pub insufficient_scope: String,
    /// How its errors are written (`[wire] errors`).
    pub errors: ErrorShape,
    /// Rate-limit plans: name, per minute, per day.
    pub plans: Vec<(String, u32, u32)>,
    /// The plan of tokens that name none.
    pub default_plan: Option<String>,
    /// The generated OpenAPI 3.1 document.
    pub openapi: Value,
    /// The generated OpenAPI 3.0 document.
    pub openapi_30: Value,
    /// The generated MCP tool descriptors.
    pub tools: Vec<Value>,
    /// Every operation.
    pub operations: Vec<Op>,
}

/// How a service writes its errors, as the kit checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorShape {
    /// `{"error": {"code", "message", "details", "request_id"}}`.
    Envelope,
    /// RFC 9457 problem details.
    Problem,
    /// A model of the service's own: where it carries the code, message, details and request id
    /// (dotted paths).
    Model {
        /// Path of the code.
        code: String,
        /// Path of the message.
        message: String,
        /// Path of the details object, if the model carries them.
        details: Option<String>,
        /// Path of the request id, if the model carries it.
        request_id: Option<String>,
    },
}

/// One operation's promises.
#[derive(Debug, Clone)]
pub struct Op {
    /// snake_case id.
    pub id: String,
    /// HTTP method.
    pub method: String,
    /// Full path template (base path included).
    pub path: String,
    /// Required scope; empty for a public operation.
    pub scope: String,
    /// MCP tool name.
    pub tool: Option<String>,
    /// Whether it takes a JSON body.
    pub has_body: bool,
    /// Whether it counts against the caller's plan.
    pub rate_limited: bool,
    /// When deprecated: the `Deprecation` and `Sunset` headers every answer of it carries.
    pub deprecation: Option<(String, Option<String>)>,
}

fn parse_json(text: &str, what: &str) -> anyhow::Result<Value> {
    serde_json::from_str(text).with_context(|| format!("{what} is not JSON"))
}

impl Contract {
    /// The contract of services compiled into a binary (their generated tables and documents).
    pub fn from_services<'a>(services: impl IntoIterator<Item = &'a support::ServiceInfo>) -> anyhow::Result<Self> {
        let services = services
            .into_iter()
            .map(|s| {
                let tools: Value = parse_json(s.tools_json, "the tool descriptors")?;
                Ok(Service {
                    name: s.name.into(),
                    base_path: s.base_path.into(),
                    mcp_path: s.mcp_path.map(Into::into),
                    metadata_paths: s.metadata_paths.iter().map(|p| p.to_string()).collect(),
                    mcp_metadata_paths: s.mcp_metadata_paths.iter().map(|p| p.to_string()).collect(),
                    scopes: s
                        .scopes
                        .iter()
                        .map(|sc| (sc.name.to_string(), sc.implies.iter().map(|i| i.to_string()).collect()))
                        .collect(),
                    unauthenticated: s.roles.unauthenticated.into(),
                    insufficient_scope: s.roles.insufficient_scope.into(),
                    errors: match s.wire.errors {
                        support::ErrorFormat::Envelope => ErrorShape::Envelope,
                        support::ErrorFormat::Problem { .. } => ErrorShape::Problem,
                        support::ErrorFormat::Model(m) => ErrorShape::Model {
                            code: m.code.into(),
                            message: m.message.into(),
                            details: m.details.map(Into::into),
                            request_id: m.request_id.map(Into::into),
                        },
                    },
                    plans: s.plans.iter().map(|p| (p.name.to_string(), p.per_minute, p.per_day)).collect(),
                    default_plan: s.default_plan.map(Into::into),
                    openapi: parse_json(s.openapi_json, "the OpenAPI document")?,
                    openapi_30: parse_json(s.openapi_30_json, "the OpenAPI 3.0 document")?,
                    tools: tools.as_array().cloned().unwrap_or_default(),
                    operations: (s.operations)()
                        .iter()
                        .map(|op| Op {
                            id: op.id.into(),
                            method: op.method.as_str().into(),
                            path: op.full_path.into(),
                            scope: op.scope.into(),
                            tool: op.tool.map(Into::into),
                            has_body: op.has_body,
                            rate_limited: op.rate_limited,
                            deprecation: op.deprecation.map(|d| (d.deprecation.into(), d.sunset.map(Into::into))),
                        })
                        .collect(),
                })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Contract { services })
    }

    /// The contract of the specs in folder `dir`, generated as `cargo xtask generate` would.
    pub fn from_spec_dir(dir: &Path) -> anyhow::Result<Self> {
        let apis = codegen::project::load_dir(dir, &dir.to_string_lossy())?;
        let services = apis
            .iter()
            .map(|api| {
                let s = &api.spec;
                let openapi = codegen::openapi::document(api);
                let has_tools = api.operations.iter().any(|o| o.def.mcp.is_some());
                let tools = if has_tools { codegen::mcp::descriptors(api, &openapi) } else { json!([]) };
                Service {
                    name: s.service.name.clone(),
                    base_path: s.service.base_path.clone(),
                    mcp_path: s.service.mcp_path.clone(),
                    metadata_paths: s.service.metadata_paths.clone(),
                    mcp_metadata_paths: s.service.mcp_metadata_paths.clone(),
                    scopes: s.security.scopes.iter().map(|sc| (sc.name.clone(), sc.implies.clone())).collect(),
                    unauthenticated: s.error_roles.unauthenticated.clone(),
                    insufficient_scope: s.error_roles.insufficient_scope.clone(),
                    errors: match &s.wire.errors {
                        codegen::spec::ErrorFormat::Envelope => ErrorShape::Envelope,
                        codegen::spec::ErrorFormat::Problem => ErrorShape::Problem,
                        codegen::spec::ErrorFormat::Model(m) => ErrorShape::Model {
                            code: m.code.clone(),
                            message: m.message.clone(),
                            details: m.details.clone(),
                            request_id: m.request_id.clone(),
                        },
                    },
                    plans: s
                        .rate_limits
                        .iter()
                        .flat_map(|rl| rl.plans.iter())
                        .map(|(n, p)| (n.clone(), p.per_minute, p.per_day))
                        .collect(),
                    default_plan: s.rate_limits.as_ref().map(|r| r.default_plan.clone()),
                    openapi_30: codegen::downgrade::to_openapi_30(&openapi),
                    openapi,
                    tools: tools.as_array().cloned().unwrap_or_default(),
                    operations: api
                        .operations
                        .iter()
                        .map(|op| Op {
                            id: op.id().into(),
                            method: op.method().as_str().into(),
                            path: format!("{}{}", s.service.base_path, op.def.path),
                            scope: op.def.scope.clone().unwrap_or_default(),
                            tool: op.def.mcp.as_ref().map(|t| t.name.clone()),
                            has_body: op.has_body,
                            rate_limited: op.def.rate_limited,
                            deprecation: op.def.deprecated.as_ref().map(codegen::rust::deprecation_headers),
                        })
                        .collect(),
                }
            })
            .collect();
        Ok(Contract { services })
    }
}

impl Service {
    /// Every scope `scope` grants, itself included.
    fn closure(&self, scope: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![scope.to_string()];
        while let Some(s) = todo.pop() {
            if seen.insert(s.clone())
                && let Some((_, implies)) = self.scopes.iter().find(|(n, _)| *n == s)
            {
                todo.extend(implies.iter().cloned());
            }
        }
        seen
    }

    /// The strongest scope of this service that does not grant `scope` (the tier just below), or
    /// `""` (a token with no scope of this service) when `scope` is its lowest tier.
    fn one_tier_below(&self, scope: &str) -> String {
        self.scopes
            .iter()
            .map(|(n, _)| n)
            .filter(|n| !self.closure(n).contains(scope))
            .max_by_key(|n| self.closure(n).len())
            .cloned()
            .unwrap_or_default()
    }

    /// Every scope of the service, as one token's scope.
    fn all_scopes(&self) -> String {
        self.scopes.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" ")
    }

    /// The resources (REST, MCP) and the declared PRM paths of each, with the one challenges
    /// announce: the first declared, else the one RFC 9728 derives.
    fn surfaces(&self) -> Vec<Surface> {
        let rest = Surface { label: "REST", path: self.base_path.clone(), declared: self.metadata_paths.clone() };
        let mcp = self.mcp_path.as_ref().map(|p| Surface {
            label: "MCP",
            path: p.clone(),
            declared: self.mcp_metadata_paths.clone(),
        });
        std::iter::once(rest).chain(mcp).collect()
    }

    fn plan_limits(&self) -> Option<(u32, u32)> {
        let name = self.default_plan.as_ref()?;
        self.plans.iter().find(|(n, _, _)| n == name).map(|(_, m, d)| (*m, *d))
    }
}

/// A protected resource of a service.
struct Surface {
    label: &'static str,
    path: String,
    declared: Vec<String>,
}

impl Surface {
    fn announced(&self) -> String {
        self.declared.first().cloned().unwrap_or_else(|| format!("{WELL_KNOWN}{}", self.path))
    }
}

/// A concrete path for a template: every `{parameter}` filled with a placeholder.
fn concrete(template: &str) -> String {
    template.split('/').map(|seg| if seg.starts_with('{') { "conformance" } else { seg }).collect::<Vec<_>>().join("/")
}

/// One check and its outcome.
#[derive(Debug, Clone)]
pub struct Check {
    /// The service checked.
    pub service: String,
    /// What was checked (`401 without a token`, `PRM document`, …).
    pub check: &'static str,
    /// What it was checked on (an operation, a tool, a path).
    pub subject: String,
    /// Why it failed; `None` when it passed.
    pub failure: Option<String>,
}

/// Every check of a run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// In the order run.
    pub checks: Vec<Check>,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Report {
    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.failure.is_some())
    }

    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.failures().next().is_none()
    }

    /// How many checks ran for `service`.
    pub fn count(&self, service: &str) -> usize {
        self.checks.iter().filter(|c| c.service == service).count()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = |get: fn(&Check) -> usize| self.checks.iter().map(get).max().unwrap_or(0);
        let (ws, wc) = (width(|c| c.service.len()), width(|c| c.check.len()));
        writeln!(f, "{:<4}  {:<ws$}  {:<wc$}  SUBJECT", "", "SERVICE", "CHECK")?;
        for c in &self.checks {
            let verdict = if c.failure.is_some() { "FAIL" } else { "pass" };
            writeln!(f, "{verdict:<4}  {:<ws$}  {:<wc$}  {}", c.service, c.check, c.subject)?;
            if let Some(why) = &c.failure {
                for line in why.lines() {
                    writeln!(f, "      {line}")?;
                }
            }
        }
        let mut services: Vec<&str> = self.checks.iter().map(|c| c.service.as_str()).collect();
        services.dedup();
        let per: Vec<String> = services.iter().map(|s| format!("{s} {}", self.count(s))).collect();
        let failed = self.failures().count();
        write!(
            f,
            "{} checks ({}): {} passed, {failed} failed, in {} ms",
            self.checks.len(),
            per.join(", "),
            self.checks.len() - failed,
            self.elapsed.as_millis()
        )
    }
}

/// The server checked, and how the kit makes its tokens.
pub struct Target {
    /// The server's public URL, without a trailing `/` (its token issuer, and the base of every
    /// URL it announces).
    pub url: String,
    keys: runtime::keys::SigningKeys,
    client: reqwest::Client,
    /// Whether every operation and tool is also sent with a token of its own tier.
    admission: bool,
}

impl Target {
    /// The server at public URL `url` whose data directory `data_dir` holds its signing key.
    pub fn new(url: &str, data_dir: &Path) -> anyhow::Result<Self> {
        let parsed = reqwest::Url::parse(url).with_context(|| format!("--url {url} is not a URL"))?;
        anyhow::ensure!(matches!(parsed.scheme(), "http" | "https"), "--url {url} is not an http(s) URL");
        let keys = runtime::keys::SigningKeys::load(data_dir)?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Target { url: url.trim_end_matches('/').to_string(), keys, client, admission: false })
    }

    /// Also sends every operation and tool with a token of exactly its tier and requires the gate
    /// to admit it: not 401, not 403 `insufficient_scope`, and no 5xx (other refusals, such as a
    /// 404 for the placeholder id, an RBAC 403 or a 422 for the empty body, are the operation's
    /// own). This runs the operations, for tenant `conformance`: use a deployment you may write to.
    pub fn with_admission(mut self) -> Self {
        self.admission = true;
        self
    }

    fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// A token with `scope` for every resource of `service`, as `specwright token` mints it.
    fn token(&self, service: &Service, scope: &str) -> Result<String, String> {
        let audience = service.surfaces().iter().map(|s| self.at(&s.path)).collect();
        let claims = runtime::keys::claims(&self.url, TENANT, TENANT, scope, audience, 600, None);
        self.keys.mint(&claims).map_err(|e| format!("could not mint a token: {e:#}"))
    }
}

impl Target {
    /// Sends `rb` with a token of `scope` for `service`, or with none when `scope` is `None`.
    async fn send_as(
        &self,
        rb: reqwest::RequestBuilder,
        service: &Service,
        scope: Option<&str>,
    ) -> Result<Answer, String> {
        match scope {
            Some(scope) => send(rb.bearer_auth(self.token(service, scope)?)).await,
            None => send(rb).await,
        }
    }
}

/// How a row names the tier of its token: the scope, or `no scope`.
fn tier(scope: &str) -> &str {
    if scope.is_empty() { "no scope" } else { scope }
}

/// An answer, read whole.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Requires `name` to be exactly `expected`.
    fn exact_header(&self, name: &str, expected: &str) -> Result<(), String> {
        match self.header(name) {
            Some(v) if v == expected => Ok(()),
            Some(v) => Err(format!("{name} is\n  {v}\nexpected\n  {expected}")),
            None => Err(format!("no {name} header; expected\n  {expected}")),
        }
    }

    fn status(&self, expected: u16) -> Result<(), String> {
        if self.status == expected {
            return Ok(());
        }
        Err(format!("answered {}{}, expected {expected}: {}", self.status, self.hint(), short(&self.body)))
    }

    /// What a 429 means for the run.
    fn hint(&self) -> String {
        if self.status == 429 {
            format!(" (rate limited: run again after {} s)", self.header("retry-after").unwrap_or("a minute"))
        } else {
            String::new()
        }
    }
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.len() > 300 { format!("{}…", &text[..text.floor_char_boundary(300)]) } else { text }
}

/// How long a stream's answer (Server-Sent Events, NDJSON) is read: a stream of events may never
/// end, and its status and headers are what the checks look at.
const STREAM_READ: std::time::Duration = std::time::Duration::from_secs(2);

async fn send(rb: reqwest::RequestBuilder) -> Result<Answer, String> {
    let mut resp = rb.send().await.map_err(|e| format!("request failed: {e}"))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let sse = content_type.starts_with("text/event-stream");
    let text = if sse || content_type.starts_with("application/x-ndjson") {
        // What arrives within the limit (an MCP answer's stream ends after its message).
        let deadline = tokio::time::Instant::now() + STREAM_READ;
        let mut bytes = Vec::new();
        while let Ok(chunk) = tokio::time::timeout_at(deadline, resp.chunk()).await {
            match chunk.map_err(|e| format!("reading the answer: {e}"))? {
                Some(c) => bytes.extend_from_slice(&c),
                None => break,
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        resp.text().await.map_err(|e| format!("reading the answer: {e}"))?
    };
    // An MCP answer may come as server-sent events: the message is the last `data:` event.
    let text = if sse {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or("")
            .to_string()
    } else {
        text
    };
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok(Answer { status, headers, body })
}

/// Collects the checks of a run.
struct Run<'a> {
    target: &'a Target,
    report: Report,
}

impl Run<'_> {
    fn record(&mut self, service: &Service, check: &'static str, subject: String, outcome: Result<(), String>) {
        self.report.checks.push(Check { service: service.name.clone(), check, subject, failure: outcome.err() });
    }

    fn request(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
        self.target.client.request(method, self.target.at(path))
    }

    /// A deprecated operation's answers carry exactly its `Deprecation` and `Sunset` headers; the
    /// others carry neither.
    fn deprecation_headers(op: &Op, a: &Answer) -> Result<(), String> {
        let (deprecation, sunset) = match &op.deprecation {
            Some((d, s)) => (Some(d.as_str()), s.as_deref()),
            None => (None, None),
        };
        for (name, want) in [("deprecation", deprecation), ("sunset", sunset)] {
            if a.header(name) != want {
                return Err(format!("{name} is {:?}, expected {want:?}", a.header(name)));
            }
        }
        Ok(())
    }

    /// The rate-limit headers of an answer from a metered operation of a service with plans.
    fn rate_headers(service: &Service, metered: bool, a: &Answer) -> Result<(), String> {
        let Some((per_minute, per_day)) = service.plan_limits().filter(|_| metered) else {
            return Ok(());
        };
        for name in RATE_HEADERS {
            match a.header(name).map(str::parse::<u64>) {
                Some(Ok(_)) => {}
                Some(Err(_)) => return Err(format!("{name} is not a whole number")),
                None => return Err(format!("no {name} header, though the service declares plans")),
            }
        }
        let limit: u64 = a.header(RATE_HEADERS[0]).and_then(|v| v.parse().ok()).unwrap_or_default();
        if limit != u64::from(per_minute) && limit != u64::from(per_day) {
            return Err(format!(
                "x-ratelimit-limit is {limit}, not a limit of the default plan ({per_minute}/min, {per_day}/day)"
            ));
        }
        Ok(())
    }

    /// The service's error body in its wire format: the code, a message, details exactly
    /// `{"required": scope}` when a scope is given, and the answer's `X-Request-Id` as the
    /// request id; where each is depends on the format: the envelope's `error.code`,
    /// `error.message`, `error.details` and `error.request_id`; problem details (as
    /// `application/problem+json`, with `type`, `title` and `status` equal to the answer's) with
    /// `code`, `detail`, a `required` member and `request_id`; or the paths of the service's own
    /// error model (as far as it carries details and the request id).
    fn error_body(service: &Service, a: &Answer, code: &str, required: Option<&str>) -> Result<(), String> {
        // Where each part is: code, message, required scope (with its expected value), request id.
        let scope = |at: &str, whole: bool| {
            required.map(|s| (at.to_string(), if whole { json!({ "required": s }) } else { json!(s) }))
        };
        let (code_at, message_at, scope_at, id_at) = match &service.errors {
            ErrorShape::Envelope => (
                "error.code".to_string(),
                "error.message".to_string(),
                scope("error.details", true),
                Some("error.request_id".to_string()),
            ),
            ErrorShape::Problem => {
                let ct = a.header("content-type").unwrap_or_default();
                if ct != "application/problem+json" {
                    return Err(format!("content-type is {ct:?}, expected application/problem+json"));
                }
                for member in ["type", "title"] {
                    if a.body[member].as_str().is_none_or(str::is_empty) {
                        return Err(format!("{member} is {}, expected a string: {}", a.body[member], short(&a.body)));
                    }
                }
                if a.body["status"].as_u64() != Some(u64::from(a.status)) {
                    return Err(format!("status is {}, the answer's is {}", a.body["status"], a.status));
                }
                ("code".to_string(), "detail".to_string(), scope("required", false), Some("request_id".to_string()))
            }
            ErrorShape::Model { code, message, details, request_id } => {
                (code.clone(), message.clone(), details.as_deref().and_then(|d| scope(d, true)), request_id.clone())
            }
        };
        let at = |path: &str| path.split('.').fold(&a.body, |v, segment| &v[segment]);
        if at(&code_at).as_str() != Some(code) {
            return Err(format!("{code_at} is {}, expected {code:?}: {}", at(&code_at), short(&a.body)));
        }
        if at(&message_at).as_str().is_none_or(str::is_empty) {
            return Err(format!("{message_at} is {}, expected a sentence", at(&message_at)));
        }
        if let Some((path, expected)) = scope_at
            && *at(&path) != expected
        {
            return Err(format!("{path} is {}, expected {expected}", at(&path)));
        }
        if let (Some(path), Some(id)) = (id_at, a.header("x-request-id"))
            && *at(&path) != json!(id)
        {
            return Err(format!("{path} is {}, the answer's X-Request-Id {id:?}", at(&path)));
        }
        Ok(())
    }

    async fn operations(&mut self, service: &Service) {
        let rest = &service.surfaces()[0];
        let prm = self.target.at(&rest.announced());
        for op in service.operations.iter().filter(|op| !op.scope.is_empty()) {
            let subject = format!("{} {} ({})", op.method, op.path, op.id);
            let build = |run: &Self| {
                let rb = run.request(&op.method, &concrete(&op.path));
                if op.has_body { rb.header("content-type", "application/json").body("{}") } else { rb }
            };

            let challenge = format!(r#"Bearer resource_metadata="{prm}", scope="{}""#, op.scope);
            let outcome = self.target.send_as(build(self), service, None).await.and_then(|a| {
                a.status(401)?;
                a.exact_header("www-authenticate", &challenge)?;
                Self::error_body(service, &a, &service.unauthenticated, Some(&op.scope))?;
                Self::deprecation_headers(op, &a)?;
                Self::rate_headers(service, op.rate_limited, &a)
            });
            self.record(service, "401 without a token", subject.clone(), outcome);

            let lower = service.one_tier_below(&op.scope);
            let outcome = self.target.send_as(build(self), service, Some(&lower)).await.and_then(|a| {
                Self::insufficient(&op.scope, &prm, &a)?;
                Self::error_body(service, &a, &service.insufficient_scope, Some(&op.scope))?;
                Self::rate_headers(service, op.rate_limited, &a)
            });
            self.record(service, "403 one tier below", format!("{subject} with {}", tier(&lower)), outcome);

            if self.target.admission {
                let outcome = (self.target.send_as(build(self), service, Some(&op.scope)).await)
                    .and_then(|a| Self::admitted(service, &a, a.body.pointer("/error/code")));
                self.record(service, "admitted at its tier", format!("{subject} with {}", op.scope), outcome);
            }
        }
    }

    /// The gate let the request through: whatever the operation answered, it was not the gate's
    /// refusal (401, 403 `insufficient_scope`), a rate limit or a server failure. `code` is the
    /// error code the answer carries, if any.
    fn admitted(service: &Service, a: &Answer, code: Option<&Value>) -> Result<(), String> {
        let refused = a.status == 401 || (a.status == 403 && code == Some(&json!(service.insufficient_scope)));
        if refused || a.status == 429 || a.status >= 500 {
            return Err(format!(
                "answered {}{}, expected the gate to admit it: {}",
                a.status,
                a.hint(),
                short(&a.body)
            ));
        }
        Ok(())
    }

    /// A 403 with the exact `insufficient_scope` challenge for `scope`.
    fn insufficient(scope: &str, prm: &str, a: &Answer) -> Result<(), String> {
        a.status(403)?;
        let challenge = format!(r#"Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{prm}""#);
        a.exact_header("www-authenticate", &challenge)
    }

    async fn metadata(&mut self, service: &Service) {
        let scopes: Vec<&str> = service.scopes.iter().map(|(n, _)| n.as_str()).collect();
        // Under a public URL with a path (`https://example.com/sw`), RFC 9728 section 3.1 also puts
        // each document at the origin, after the well-known prefix and the resource's whole path.
        let (origin, base) = match reqwest::Url::parse(&self.target.url) {
            Ok(u) => (u.origin().ascii_serialization(), u.path().trim_end_matches('/').to_string()),
            Err(_) => (self.target.url.clone(), String::new()),
        };
        for surface in service.surfaces() {
            let mut urls: Vec<(String, String)> = surface
                .declared
                .iter()
                .chain([&format!("{WELL_KNOWN}{}", surface.path)])
                .map(|p| (p.clone(), self.target.at(p)))
                .collect();
            if !base.is_empty() {
                let path = format!("{WELL_KNOWN}{base}{}", surface.path);
                urls.push((format!("{path} (at the origin)"), format!("{origin}{path}")));
            }
            let mut seen = BTreeSet::new();
            urls.retain(|(label, _)| seen.insert(label.clone()));
            for (label, url) in urls {
                let outcome = send(self.target.client.get(url)).await.and_then(|a| {
                    a.status(200)?;
                    self.prm_document(&a, &surface, &scopes)
                });
                self.record(service, "PRM document", format!("{} {label}", surface.label), outcome);
            }
        }
    }

    fn prm_document(&self, a: &Answer, surface: &Surface, scopes: &[&str]) -> Result<(), String> {
        let doc = &a.body;
        let ct = a.header("content-type").unwrap_or_default();
        if !ct.starts_with("application/json") {
            return Err(format!("content-type is {ct:?}, expected application/json"));
        }
        let resource = self.target.at(&surface.path);
        if doc["resource"] != json!(resource) {
            return Err(format!("resource is {}, expected {resource:?}", doc["resource"]));
        }
        if doc["scopes_supported"] != json!(scopes) {
            return Err(format!("scopes_supported is {}, expected {}", doc["scopes_supported"], json!(scopes)));
        }
        // The kit's tokens are the embedded authorization server's, whose issuer is the public URL.
        let servers = doc["authorization_servers"].as_array().map(Vec::as_slice).unwrap_or_default();
        if !servers.contains(&json!(self.target.url)) {
            return Err(format!(
                "authorization_servers is {}, expected it to list {:?} (the embedded authorization server)",
                doc["authorization_servers"], self.target.url
            ));
        }
        let methods = &doc["bearer_methods_supported"];
        if !methods.is_null() && !methods.as_array().is_some_and(|m| m.contains(&json!("header"))) {
            return Err(format!("bearer_methods_supported is {methods}, which leaves out header"));
        }
        Ok(())
    }

    async fn openapi(&mut self, service: &Service) {
        for (path, generated) in [
            (format!("/openapi/{}.json", service.name), &service.openapi),
            (format!("/openapi/{}.3.0.json", service.name), &service.openapi_30),
        ] {
            let outcome = send(self.target.client.get(self.target.at(&path))).await.and_then(|a| {
                a.status(200)?;
                self.same_document(service, a.body, generated)
            });
            self.record(service, "OpenAPI as generated", path, outcome);
        }
    }

    /// `served` is `generated` but for `servers` (the base path under the public URL) and the
    /// OAuth flows' endpoints (absolute URLs of the server's authorization server).
    fn same_document(&self, service: &Service, mut served: Value, generated: &Value) -> Result<(), String> {
        let servers = json!([{ "url": self.target.at(&service.base_path) }]);
        if served["servers"] != servers {
            return Err(format!("servers is {}, expected {servers}", served["servers"]));
        }
        served["servers"] = generated["servers"].clone();
        let schemes = generated.pointer("/components/securitySchemes").and_then(Value::as_object);
        for (scheme, def) in schemes.into_iter().flatten() {
            for (flow, fields) in def.get("flows").and_then(Value::as_object).into_iter().flatten() {
                for field in ["authorizationUrl", "tokenUrl", "refreshUrl"] {
                    let pointer = format!("/components/securitySchemes/{scheme}/flows/{flow}/{field}");
                    let (Some(want), Some(got)) = (fields.get(field), served.pointer_mut(&pointer)) else {
                        continue;
                    };
                    // The embedded authorization server's endpoints are served under the public
                    // URL; an external one's stay as generated.
                    let under_url = want.as_str().filter(|w| w.starts_with('/')).map(|w| json!(self.target.at(w)));
                    if *got != *want && Some(&*got) != under_url.as_ref() {
                        let expected = under_url.map_or_else(|| want.to_string(), |u| format!("{u} or {want}"));
                        return Err(format!("{pointer} is {got}, expected {expected}"));
                    }
                    *got = want.clone();
                }
            }
        }
        match first_difference(&served, generated, String::new()) {
            None => Ok(()),
            Some((at, got, want)) => {
                Err(format!("differs at {}: served {got}, generated {want}", if at.is_empty() { "/" } else { &at }))
            }
        }
    }

    async fn mcp(&mut self, service: &Service) {
        let Some(mcp) = service.surfaces().into_iter().find(|s| s.label == "MCP") else {
            return;
        };
        let prm = self.target.at(&mcp.announced());
        let post = |run: &Self, message: &Value| {
            run.target
                .client
                .post(run.target.at(&mcp.path))
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", MCP_REVISION)
                .json(message)
        };

        // Without a token, the endpoint challenges like the REST API, for the lowest tier (what it
        // takes to connect and list).
        let lowest = service.scopes.first().map(|(n, _)| n.as_str()).unwrap_or_default();
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let challenge = format!(r#"Bearer resource_metadata="{prm}", scope="{lowest}""#);
        let outcome = self.target.send_as(post(self, &ping), service, None).await.and_then(|a| {
            a.status(401)?;
            a.exact_header("www-authenticate", &challenge)?;
            Self::error_body(service, &a, &service.unauthenticated, Some(lowest))?;
            Self::rate_headers(service, true, &a)
        });
        self.record(service, "MCP 401 without a token", mcp.path.clone(), outcome);

        // tools/list is the spec's tools, in order, every page of them.
        let listed = self.list_tools(service, |m| post(self, m)).await;
        let outcome = listed.as_ref().map_err(Clone::clone).and_then(|tools| same_tools(tools, &service.tools));
        self.record(service, "tools/list as generated", mcp.path.clone(), outcome);

        for op in service.operations.iter().filter(|op| op.tool.is_some() && !op.scope.is_empty()) {
            let name = op.tool.clone().unwrap_or_default();
            let line = format!("SCOPE: {}", op.scope);
            let outcome = match &listed {
                Ok(tools) => match tools.iter().find(|t| t["name"] == json!(name)) {
                    Some(t) if t["description"].as_str().is_some_and(|d| d.lines().any(|l| l == line)) => Ok(()),
                    Some(t) => Err(format!("the description has no line `{line}`: {}", t["description"])),
                    None => Err("tools/list does not list it".into()),
                },
                Err(_) => Err("tools/list failed".into()),
            };
            self.record(service, "tool SCOPE line", name.clone(), outcome);

            let lower = service.one_tier_below(&op.scope);
            let call =
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": {}}});
            let outcome = self.target.send_as(post(self, &call), service, Some(&lower)).await.and_then(|a| {
                Self::insufficient(&op.scope, &prm, &a)?;
                Self::jsonrpc_refusal(service, &op.scope, &a)?;
                Self::rate_headers(service, op.rate_limited, &a)
            });
            self.record(service, "tools/call one tier below", format!("{name} with {}", tier(&lower)), outcome);

            if self.target.admission {
                let outcome = self.target.send_as(post(self, &call), service, Some(&op.scope)).await.and_then(|a| {
                    Self::admitted(service, &a, a.body.pointer("/error/data/code"))?;
                    a.status(200)
                });
                self.record(service, "tools/call admitted at its tier", format!("{name} with {}", op.scope), outcome);
            }
        }
    }

    /// A JSON-RPC error (numeric code) whose data is the REST envelope's code, scope and id.
    fn jsonrpc_refusal(service: &Service, scope: &str, a: &Answer) -> Result<(), String> {
        let want = json!({
            "code": service.insufficient_scope,
            "required": scope,
            "request_id": a.header("x-request-id"),
        });
        if a.body["error"]["data"] != want || !a.body["error"]["code"].is_i64() {
            return Err(format!(
                "the JSON-RPC error is {}, expected a numeric code and data {want}",
                short(&a.body["error"])
            ));
        }
        Ok(())
    }

    /// Every tool `tools/list` gives, following `nextCursor`.
    /// (With a token of every scope of `service`.)
    async fn list_tools(
        &self,
        service: &Service,
        post: impl Fn(&Value) -> reqwest::RequestBuilder,
    ) -> Result<Vec<Value>, String> {
        let all = service.all_scopes();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for page in 0..100 {
            let mut message = json!({"jsonrpc": "2.0", "id": 10 + page, "method": "tools/list"});
            if let Some(c) = &cursor {
                message["params"] = json!({ "cursor": c });
            }
            let a = self.target.send_as(post(&message), service, Some(&all)).await?;
            a.status(200)?;
            let result = &a.body["result"];
            let page = result["tools"].as_array().ok_or_else(|| format!("no result.tools: {}", short(&a.body)))?;
            tools.extend(page.iter().cloned());
            match result["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return Ok(tools),
            }
        }
        Err("tools/list gave more than 100 pages".into())
    }
}

/// The listed tools are the generated ones, in order.
fn same_tools(listed: &[Value], generated: &[Value]) -> Result<(), String> {
    let names =
        |tools: &[Value]| tools.iter().map(|t| t["name"].as_str().unwrap_or("?").to_string()).collect::<Vec<_>>();
    if names(listed) != names(generated) {
        return Err(format!("lists {:?}, the spec has {:?}", names(listed), names(generated)));
    }
    for (got, want) in listed.iter().zip(generated) {
        if let Some((at, g, w)) = first_difference(got, want, String::new()) {
            return Err(format!("{} differs at {at}: served {g}, generated {w}", want["name"]));
        }
    }
    Ok(())
}

/// The first place two JSON values differ: its JSON pointer and both values there (shortened).
fn first_difference(got: &Value, want: &Value, at: String) -> Option<(String, String, String)> {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let keys: BTreeSet<&String> = g.keys().chain(w.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (gv, wv) = (g.get(k).unwrap_or(&Value::Null), w.get(k).unwrap_or(&Value::Null));
                let escaped = k.replace('~', "~0").replace('/', "~1");
                if g.contains_key(k) != w.contains_key(k) {
                    let show = |present: bool, v: &Value| if present { short(v) } else { "(absent)".into() };
                    return Some((format!("{at}/{escaped}"), show(g.contains_key(k), gv), show(w.contains_key(k), wv)));
                }
                first_difference(gv, wv, format!("{at}/{escaped}"))
            })
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => {
            g.iter().zip(w).enumerate().find_map(|(i, (gv, wv))| first_difference(gv, wv, format!("{at}/{i}")))
        }
        _ if got == want => None,
        _ => Some((at, short(got), short(want))),
    }
}

/// Runs every check of `contract` against `target`.
pub async fn run(contract: &Contract, target: &Target) -> Report {
    let started = Instant::now();
    let mut run = Run { target, report: Report::default() };
    for service in &contract.services {
        run.metadata(service).await;
        run.openapi(service).await;
        run.operations(service).await;
        run.mcp(service).await;
    }
    run.report.elapsed = started.elapsed();
    run.report
}

/// `conformance`: check a running server against the services of this binary or of a spec folder.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    about = "Check that a running server enforces its spec: challenges, scopes, PRM, OpenAPI, MCP tools and rate-limit headers."
)]
pub struct Options {
    /// The server's public URL (its token issuer), e.g. http://127.0.0.1:8080.
    #[arg(long)]
    pub url: String,
    /// The server's data directory, whose signing key mints the kit's tokens; default: the
    /// binary's own.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Check against the specs in this folder instead of the services compiled into the binary.
    #[arg(long)]
    pub spec: Option<PathBuf>,
    /// Check only these services (repeatable); default: all.
    #[arg(long = "service")]
    pub services: Vec<String>,
    /// Also send every operation and tool with a token of its own tier and require the gate to
    /// admit it. This runs the operations (for tenant `conformance`): use a deployment you may
    /// write to.
    #[arg(long)]
    pub admission: bool,
}

/// The `conformance` command of a service binary that reads its own arguments: when `args` (the
/// process's, program first) name it, runs it against `registered` (with the data directory
/// `data_dir` gives unless `--data-dir` names one) and says how the process should exit; `None`
/// when they name another command. A mistake in its options prints the usage and exits 2.
pub fn command<'a>(
    args: &[String],
    registered: impl IntoIterator<Item = &'a support::ServiceInfo>,
    data_dir: impl FnOnce() -> anyhow::Result<PathBuf>,
) -> Option<ExitCode> {
    if args.get(1).map(String::as_str) != Some("conformance") {
        return None;
    }
    let program = Path::new(&args[0]).file_name().map_or_else(|| args[0].clone(), |n| n.to_string_lossy().into_owned());
    let options = <Options as clap::Parser>::parse_from(
        std::iter::once(format!("{program} conformance")).chain(args[2..].iter().cloned()),
    );
    let data_dir = match options.data_dir.clone().map_or_else(data_dir, Ok) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Some(ExitCode::from(2));
        }
    };
    Some(options.run(registered, &data_dir))
}

impl Options {
    /// Runs the checks, prints the table and says how the command should exit: 0 when every check
    /// passed, 1 when one failed, 2 when the checks could not run. `registered` are the binary's
    /// services and `data_dir` its data directory when `--data-dir` is not given.
    pub fn run<'a>(&self, registered: impl IntoIterator<Item = &'a support::ServiceInfo>, data_dir: &Path) -> ExitCode {
        let outcome = (|| {
            let mut contract = match &self.spec {
                Some(dir) => Contract::from_spec_dir(dir)?,
                None => Contract::from_services(registered)?,
            };
            if !self.services.is_empty() {
                let known: Vec<String> = contract.services.iter().map(|s| s.name.clone()).collect();
                if let Some(unknown) = self.services.iter().find(|s| !known.contains(s)) {
                    anyhow::bail!("--service {unknown}: no such service (there are: {})", known.join(", "));
                }
                contract.services.retain(|s| self.services.contains(&s.name));
            }
            let mut target = Target::new(&self.url, self.data_dir.as_deref().unwrap_or(data_dir))?;
            if self.admission {
                target = target.with_admission();
            }
            tokio::runtime::Runtime::new()?.block_on(async {
                // A server that cannot be reached fails every check the same way: say so once.
                if let Err(e) = target.client.get(&target.url).send().await {
                    anyhow::bail!("cannot reach {}: {e}", target.url);
                }
                Ok(run(&contract, &target).await)
            })
        })();
        match outcome {
            Ok(report) => {
                println!("{report}");
                if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(scopes: &[(&str, &[&str])]) -> Service {
        Service {
            name: "s".into(),
            base_path: "/v1".into(),
            mcp_path: None,
            metadata_paths: vec![],
            mcp_metadata_paths: vec![],
            scopes: scopes.iter().map(|(n, i)| (n.to_string(), i.iter().map(|s| s.to_string()).collect())).collect(),
            unauthenticated: "unauthenticated".into(),
            insufficient_scope: "insufficient_scope".into(),
            errors: ErrorShape::Envelope,
            plans: vec![],
            default_plan: None,
            openapi: json!({}),
            openapi_30: json!({}),
            tools: vec![],
            operations: vec![],
        }
    }

    #[test]
    fn a_deprecated_operation_must_carry_its_exact_headers_and_the_others_none() {
        let op = |deprecation: Option<(&str, Option<&str>)>| Op {
            id: "x".into(),
            method: "GET".into(),
            path: "/x".into(),
            scope: "r".into(),
            tool: None,
            has_body: false,
            rate_limited: false,
            deprecation: deprecation.map(|(d, s)| (d.into(), s.map(Into::into))),
        };
        let answer = |headers: &[(&'static str, &'static str)]| Answer {
            status: 401,
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (reqwest::header::HeaderName::from_static(k), reqwest::header::HeaderValue::from_static(v))
                })
                .collect(),
            body: json!({}),
        };
        let deprecated = op(Some(("@1795651200", Some("Tue, 01 Jun 2027 00:00:00 GMT"))));
        let marked = answer(&[("deprecation", "@1795651200"), ("sunset", "Tue, 01 Jun 2027 00:00:00 GMT")]);
        assert_eq!(Run::deprecation_headers(&deprecated, &marked), Ok(()));
        assert_eq!(
            Run::deprecation_headers(&deprecated, &answer(&[])),
            Err("deprecation is None, expected Some(\"@1795651200\")".into())
        );
        assert!(Run::deprecation_headers(&op(None), &marked).is_err(), "an operation that is not deprecated");
        assert_eq!(Run::deprecation_headers(&op(None), &answer(&[])), Ok(()));
    }

    #[test]
    fn one_tier_below_is_the_strongest_scope_that_does_not_grant_it() {
        let tiers = service(&[("r", &[]), ("w", &["r"]), ("a", &["w"])]);
        assert_eq!(tiers.one_tier_below("a"), "w");
        assert_eq!(tiers.one_tier_below("w"), "r");
        assert_eq!(tiers.one_tier_below("r"), "", "the lowest tier: a token without the service's scopes");
        // Side by side scopes: the other one.
        let apart = service(&[("leads", &[]), ("billing", &[])]);
        assert_eq!(apart.one_tier_below("billing"), "leads");
    }

    #[test]
    fn the_first_difference_names_its_pointer() {
        let a = json!({"paths": {"/a/b": {"get": {"x": 1}}}, "list": [1, 2]});
        let b = json!({"paths": {"/a/b": {"get": {"x": 2}}}, "list": [1, 2]});
        assert_eq!(
            first_difference(&a, &b, String::new()),
            Some(("/paths/~1a~1b/get/x".into(), "1".into(), "2".into()))
        );
        assert_eq!(first_difference(&a, &a, String::new()), None);
        let c = json!({"only": true});
        assert_eq!(
            first_difference(&c, &json!({}), String::new()),
            Some(("/only".into(), "true".into(), "(absent)".into()))
        );
    }
}
