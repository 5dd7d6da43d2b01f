//! The operation table: what a generated service says of itself and of each operation (routes, scopes,
//! statuses, error catalog and roles, wire format, plans), read by the runtime and the generated routers.

use axum::http::HeaderValue;
use axum::response::Response;

use crate::fields::FieldSpec;

// The one definition: the generator reads it from spec files (feature `spec`), generated tables hold it.
/// HTTP method of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "UPPERCASE"))]
pub enum Method {
    /// Read.
    Get,
    /// Create or act.
    Post,
    /// Replace.
    Put,
    /// Partial update.
    Patch,
    /// Remove.
    Delete,
    /// The headers a `GET` would answer, without its body (an existence check, a size).
    Head,
    /// What the target allows (RFC 9110, 9.3.7), as the operation answers it.
    Options,
}

impl Method {
    /// Every method, in this order.
    pub const ALL: [Method; 7] =
        [Method::Get, Method::Post, Method::Put, Method::Patch, Method::Delete, Method::Head, Method::Options];

    /// Whether it reads and changes nothing (RFC 9110, 9.2.1): a read-only transaction, a read
    /// scope.
    pub fn is_safe(self) -> bool {
        matches!(self, Method::Get | Method::Head | Method::Options)
    }

    /// Whether a request of it carries no body: `GET` and `HEAD`, whose content proxies and
    /// caches drop (an `OPTIONS` may carry one, RFC 9110, 9.3.7).
    pub fn takes_no_body(self) -> bool {
        matches!(self, Method::Get | Method::Head)
    }

    /// Upper-case wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
        }
    }
}

/// Whether an operation's MCP tool runs as a task (the `io.modelcontextprotocol/tasks` extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Always in the call.
    #[default]
    Never,
    /// As a task for a client that declared the extension, from the operation's `background()`.
    Optional,
    /// Only as a task: a client without the extension is refused.
    Required,
}

/// One route (and MCP tool) of a service: everything per-operation layers need, with no strings
/// to match on paths.
#[derive(Debug)]
pub struct Operation {
    /// snake_case operation id (the OpenAPI operationId).
    pub id: &'static str,
    /// HTTP method.
    pub method: Method,
    /// Path relative to the service base path, with `{name}` parameters.
    pub path: &'static str,
    /// Base path + path, as served.
    pub full_path: &'static str,
    /// Minimum scope a Bearer caller needs.
    pub scope: &'static str,
    /// Every scope that satisfies `scope` (it and the tiers above it).
    pub satisfied_by: &'static [&'static str],
    /// Served without a token: `scope` is empty, and any caller, or none, is admitted.
    pub public: bool,
    /// Success status.
    pub success_status: u16,
    /// The input has JSON body fields.
    pub has_body: bool,
    /// The response carries a secret (`Cache-Control: no-store`).
    pub no_store: bool,
    /// The media types a JSON success body is answered as, as the request's `Accept` chooses
    /// (`application/json` when it names none of them, or else the first); empty: only
    /// `application/json`.
    pub answer_types: &'static [&'static str],
    /// Counts against the caller's rate limit.
    pub rate_limited: bool,
    /// Changes nothing: runs in a read-only transaction, which never waits for the write lock
    /// (every `GET`, and whatever else the spec marks `read_only`).
    pub read_only: bool,
    /// Takes `page`/`per_page` and answers a page.
    pub paginated: bool,
    /// The MCP tool bound to this operation.
    pub tool: Option<&'static str>,
    /// Whether it may ask its MCP client for input mid-call (`cx.input`), so the MCP endpoint
    /// keeps sessions for clients of revisions that answer such requests on a session's stream.
    pub asks_input: bool,
    /// Whether its MCP tool may, or must, run as a task.
    pub task: TaskSupport,
    /// Its OpenAPI tags (what per-operation layers may select by).
    pub tags: &'static [&'static str],
    /// Input fields (path, query and body), for decoding and validation.
    pub input: &'static [FieldSpec],
    /// Set when the operation is deprecated: the headers every answer of it carries.
    pub deprecation: Option<&'static Deprecation>,
    /// How the request body travels (JSON unless the spec says otherwise).
    pub body: BodyFormat,
    /// The other formats a JSON body may come in (a form, multipart), each decoded as itself
    /// into the same fields, as the request's `Content-Type` says.
    pub body_forms: &'static [BodyFormat],
    /// The other media types a JSON body may come in (XML, plain text), which the implementation
    /// reads into the JSON its fields are decoded from ([`crate::ReadBody`]).
    pub read_types: &'static [&'static str],
    /// Set when the operation takes part in conditional requests (`ETag`, `If-None-Match`,
    /// `If-Match`).
    pub conditional: Option<Conditional>,
    /// The file it answers may be asked for in parts (`Range`, `206 Partial Content`).
    pub ranges: bool,
    /// Groups of optional body fields a request gives in full, checked after the fields.
    pub requires: Option<&'static Requires>,
    /// The service the operation belongs to.
    pub service: &'static ServiceInfo,
}

/// Groups of body fields of which a request gives at least one in full, or exactly one (JSON
/// Schema's `anyOf`/`oneOf` of `required` lists).
#[derive(Debug)]
pub struct Requires {
    /// Exactly one group is given in full (else at least one).
    pub exactly_one: bool,
    /// Each group's fields, by wire name.
    pub groups: &'static [&'static [&'static str]],
}

impl Operation {
    /// Whether a token carrying `scopes` may call this operation.
    pub fn allows<'a>(&self, scopes: impl IntoIterator<Item = &'a str>) -> bool {
        self.public || scopes.into_iter().any(|s| self.satisfied_by.contains(&s))
    }
}

/// A service as a whole.
#[derive(Debug)]
pub struct ServiceInfo {
    /// snake_case name.
    pub name: &'static str,
    /// Human title.
    pub title: &'static str,
    /// Path prefix of every operation.
    pub base_path: &'static str,
    /// MCP endpoint path, when the service has tools.
    pub mcp_path: Option<&'static str>,
    /// Where the REST API's Protected Resource Metadata is served besides the RFC 9728 path
    /// derived from `base_path`; challenges announce the first, else the derived one.
    pub metadata_paths: &'static [&'static str],
    /// As `metadata_paths`, for the MCP endpoint.
    pub mcp_metadata_paths: &'static [&'static str],
    /// What MCP clients are told when they connect.
    pub mcp_instructions: Option<&'static str>,
    /// Whether every scoped operation leaves a row in the runtime's audit log.
    pub audit: bool,
    /// Kinds of stored tokens (`personal`, `api`) the REST API accepts besides JWTs.
    pub stored_tokens: &'static [&'static str],
    /// Scope catalog, lowest tier first.
    pub scopes: &'static [ScopeInfo],
    /// Error catalog.
    pub errors: &'static [ErrorInfo],
    /// Which code the runtime uses for each failure it detects.
    pub roles: ErrorRoles,
    /// How success bodies and errors are written on the wire.
    pub wire: Wire,
    /// `per_page` when none is given.
    pub default_per_page: u32,
    /// Largest accepted `per_page`.
    pub max_per_page: u32,
    /// Rate-limit plans (empty when the service has none).
    pub plans: &'static [PlanInfo],
    /// Plan for tokens that name none.
    pub default_plan: Option<&'static str>,
    /// The OpenAPI 3.1 document.
    pub openapi_json: &'static str,
    /// The same document as OpenAPI 3.0.3.
    pub openapi_30_json: &'static str,
    /// MCP tool descriptors (a JSON array), `[]` when the service has no tools.
    pub tools_json: &'static str,
    /// The MCP catalog beyond tools (a JSON object: resources, resource templates, prompts, their
    /// messages and completion sources), `{}` when the service has none.
    pub mcp_catalog_json: &'static str,
    /// Every operation, in spec order (the same table the service's `Api` serves). A function: the
    /// operations point at their service, and a static table here would make that a cycle.
    pub operations: fn() -> &'static [&'static Operation],
}

impl ServiceInfo {
    /// The catalog entry of `code`.
    pub fn error(&self, code: &str) -> Option<&'static ErrorInfo> {
        self.errors.iter().find(|e| e.code == code)
    }

    /// Whether holding any of `have` satisfies a requirement of `want` under the scope hierarchy
    /// (a scope satisfies itself and everything it implies, transitively).
    pub fn satisfies<'a>(&self, have: impl IntoIterator<Item = &'a str>, want: &str) -> bool {
        have.into_iter().any(|h| self.implies(h, want, 0))
    }

    fn implies(&self, scope: &str, want: &str, depth: u8) -> bool {
        // The generator refuses cycles; the depth bound only guards against a hand-built table.
        scope == want
            || (depth < 16
                && self
                    .scopes
                    .iter()
                    .find(|s| s.name == scope)
                    .is_some_and(|s| s.implies.iter().any(|i| self.implies(i, want, depth + 1))))
    }

    /// The rate-limit plan named `name`.
    pub fn plan(&self, name: &str) -> Option<&'static PlanInfo> {
        self.plans.iter().find(|p| p.name == name)
    }
}

/// One scope of the catalog.
#[derive(Debug)]
pub struct ScopeInfo {
    /// Name as in tokens.
    pub name: &'static str,
    /// What it grants.
    pub description: &'static str,
    /// Scopes it includes directly.
    pub implies: &'static [&'static str],
}

/// One entry of the error catalog.
#[derive(Debug)]
pub struct ErrorInfo {
    /// Stable code.
    pub code: &'static str,
    /// HTTP status.
    pub status: u16,
    /// Default message.
    pub message: &'static str,
}

/// The headers of a deprecated operation's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deprecation {
    /// `Deprecation` (RFC 9745): `@` and the Unix time it was deprecated; none where the spec
    /// gives no day (the header needs one; the documents still mark the operation).
    pub deprecation: Option<&'static str>,
    /// `Sunset` (RFC 8594): the HTTP-date from which it may be removed.
    pub sunset: Option<&'static str>,
}

impl Deprecation {
    /// Puts the headers on an answer.
    pub fn mark(&self, resp: &mut Response) {
        let headers = resp.headers_mut();
        if let Some(deprecation) = self.deprecation {
            headers.insert("deprecation", HeaderValue::from_static(deprecation));
        }
        if let Some(sunset) = self.sunset {
            headers.insert("sunset", HeaderValue::from_static(sunset));
        }
    }
}

/// How a service writes its bodies: every answer of the service, the platform's own refusals
/// included, follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    /// How success bodies are written.
    pub success: SuccessFormat,
    /// How error bodies are written.
    pub errors: ErrorFormat,
}

impl Wire {
    /// `{"data": …}` bodies and `{"error": {…}}` errors.
    pub const ENVELOPE: Wire = Wire { success: SuccessFormat::Envelope, errors: ErrorFormat::Envelope };
}

/// How a service writes its success bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuccessFormat {
    /// `{"data": output}`; a page is `{"data": [items], "meta": {"total", "page", "per_page"}}`.
    Envelope,
    /// The output as it is; a page is the array of its items, with `X-Total-Count` and a `Link`
    /// header (RFC 8288: `first`, `prev`, `next`, `last`). Over MCP, whose structured content
    /// is an object, a page is `{"items", "total", "page", "per_page"}`.
    Bare,
}

/// How an operation takes part in conditional requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conditional {
    /// A read: `ETag` on the answer, `If-None-Match` → `304`.
    Read,
    /// A write: `If-Match` handed to the implementation, `ETag` on the answer.
    Write {
        /// A request without `If-Match` is refused with `428 Precondition Required`.
        required: bool,
    },
}

/// How an operation's request body travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "snake_case"))]
pub enum BodyFormat {
    /// A JSON object of the body fields (`application/json`).
    #[default]
    Json,
    /// `application/x-www-form-urlencoded`: the body fields as `key=value` pairs, as an HTML
    /// form posts them (scalars, and lists as repeated keys).
    Form,
    /// `multipart/form-data`: each body field a part; a `file` field's part is its content.
    Multipart,
    /// The body is the content of the input's one `file` field, of one of its media types.
    Raw,
}

impl BodyFormat {
    /// The format a media type names: a form, multipart, or JSON (any JSON media type).
    pub fn of_media(media: &str) -> Option<BodyFormat> {
        match media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase().as_str() {
            "application/x-www-form-urlencoded" => Some(BodyFormat::Form),
            "multipart/form-data" => Some(BodyFormat::Multipart),
            _ if crate::media::is_json_media(media) => Some(BodyFormat::Json),
            _ => None,
        }
    }
}

/// How a service writes its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorFormat {
    /// `{"error": {"code", "message", "details", "request_id"}}` as `application/json`.
    Envelope,
    /// RFC 9457 problem details as `application/problem+json`: `type`, `title`, `status`,
    /// `detail`, and as extension members `code`, `request_id` and each detail.
    Problem {
        /// Base URI of the problem types: `type` is this followed by the code. Without one,
        /// `type` is `about:blank` and `title` the status's reason phrase, as RFC 9457 asks.
        types: Option<&'static str>,
    },
    /// A model of the service's own, as `application/json`.
    Model(&'static ErrorModel),
}

/// Where an error model of the service's own carries what the platform knows of an error: each a
/// field name, or names joined by `.` through nested objects (`error.code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorModel {
    /// The catalog code.
    pub code: &'static str,
    /// The message.
    pub message: &'static str,
    /// The HTTP status.
    pub status: Option<&'static str>,
    /// The details object (without it, details are not written).
    pub details: Option<&'static str>,
    /// The request's `X-Request-Id`.
    pub request_id: Option<&'static str>,
}

/// Members of a problem details body that are the RFC's or the platform's: a detail may not
/// use these names, because flattened among the members it would overwrite one.
pub const PROBLEM_MEMBERS: [&str; 7] = ["type", "title", "status", "detail", "instance", "code", "request_id"];

/// Catalog codes for failures the runtime detects itself.
#[derive(Debug)]
pub struct ErrorRoles {
    /// No credentials (401).
    pub unauthenticated: &'static str,
    /// Bad, expired, revoked or foreign-audience credentials (401).
    pub invalid_token: &'static str,
    /// Scope too low (403).
    pub insufficient_scope: &'static str,
    /// Body is not JSON (400).
    pub malformed: &'static str,
    /// Bad field or parameter (422).
    pub validation: &'static str,
    /// Body too large (413).
    pub payload_too_large: &'static str,
    /// Body not `application/json` (415).
    pub unsupported_media_type: &'static str,
    /// Nothing here (404).
    pub not_found: &'static str,
    /// Wrong method (405).
    pub method_not_allowed: &'static str,
    /// Rate limit exhausted (429).
    pub rate_limited: &'static str,
    /// Server fault (500).
    pub internal: &'static str,
    /// Request took too long (408).
    pub request_timeout: &'static str,
    /// Storage unreachable or full; retry later (503).
    pub unavailable: &'static str,
    /// `If-Match` names another version (412); set when an operation is a conditional write.
    pub precondition_failed: Option<&'static str>,
    /// `If-Match` is missing where the operation requires it (428); set when one does.
    pub precondition_required: Option<&'static str>,
    /// A `Range` no byte of the file falls in (416); set when an operation answers ranges.
    pub range_not_satisfiable: Option<&'static str>,
}

/// One rate-limit plan.
#[derive(Debug)]
pub struct PlanInfo {
    /// Name as in tokens (`starter`).
    pub name: &'static str,
    /// Display name.
    pub title: &'static str,
    /// Requests per minute.
    pub per_minute: u32,
    /// Requests per day.
    pub per_day: u32,
}
