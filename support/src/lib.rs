//! What every generated service shares: the `Operation` table types, the `Gate` trait, the error
//! envelope, request decoding and validation, and response envelopes.
//!
//! Generated crates depend on this crate (they never copy it), so the types a runtime implements
//! (`Gate`) and reads (`Operation`, `ServiceInfo`) are the same types in every crate.

use std::borrow::Cow;
use std::future::Future;
use std::sync::OnceLock;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::http::{HeaderName, HeaderValue, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

pub mod conditional;
pub mod events;
pub mod file;
pub mod upload;
pub mod webhooks;
pub use conditional::{Conditional, IfMatch, etag};
pub use events::{Event, EventSender, Events, StreamFormat};
pub use file::File;
pub use upload::{BodyFormat, StoreError, Stored, Upload, UploadStream};

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
}

impl Method {
    /// Every method, in this order.
    pub const ALL: [Method; 5] = [Method::Get, Method::Post, Method::Put, Method::Patch, Method::Delete];

    /// Upper-case wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
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
    /// Success status.
    pub success_status: u16,
    /// The input has JSON body fields.
    pub has_body: bool,
    /// The response carries a secret (`Cache-Control: no-store`).
    pub no_store: bool,
    /// Counts against the caller's rate limit.
    pub rate_limited: bool,
    /// Changes nothing: runs in a read-only transaction, which never waits for the write lock
    /// (every `GET`, and whatever else the spec marks `read_only`).
    pub read_only: bool,
    /// Takes `page`/`per_page` and answers a page.
    pub paginated: bool,
    /// The MCP tool bound to this operation.
    pub tool: Option<&'static str>,
    /// Input fields (path, query and body), for decoding and validation.
    pub input: &'static [FieldSpec],
    /// Set when the operation is deprecated: the headers every answer of it carries.
    pub deprecation: Option<&'static Deprecation>,
    /// How the request body travels (JSON unless the spec says otherwise).
    pub body: BodyFormat,
    /// Set when the operation takes part in conditional requests (`ETag`, `If-None-Match`,
    /// `If-Match`).
    pub conditional: Option<Conditional>,
    /// The file it answers may be asked for in parts (`Range`, `206 Partial Content`).
    pub ranges: bool,
    /// The service the operation belongs to.
    pub service: &'static ServiceInfo,
}

impl Operation {
    /// Whether a token carrying `scopes` may call this operation.
    pub fn allows<'a>(&self, scopes: impl IntoIterator<Item = &'a str>) -> bool {
        scopes.into_iter().any(|s| self.satisfied_by.contains(&s))
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
    /// `Deprecation` (RFC 9745): `@` and the Unix time it was deprecated.
    pub deprecation: &'static str,
    /// `Sunset` (RFC 8594): the HTTP-date from which it may be removed.
    pub sunset: Option<&'static str>,
}

impl Deprecation {
    /// Puts the headers on an answer.
    pub fn mark(&self, resp: &mut Response) {
        let headers = resp.headers_mut();
        headers.insert("deprecation", HeaderValue::from_static(self.deprecation));
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

impl ErrorModel {
    /// The body of one error.
    fn body(&self, code: &str, status: u16, problem: Problem, request_id: Option<&str>) -> Value {
        let mut body = Value::Object(Map::new());
        put(&mut body, self.code, Value::String(code.to_string()));
        put(&mut body, self.message, Value::String(problem.message));
        if let Some(path) = self.status {
            put(&mut body, path, Value::from(status));
        }
        if let Some(path) = self.details {
            put(&mut body, path, Value::Object(problem.details));
        }
        if let (Some(path), Some(id)) = (self.request_id, request_id) {
            put(&mut body, path, Value::String(id.to_string()));
        }
        body
    }
}

/// Sets the member at dotted `path` of `target`, making the objects on the way.
fn put(target: &mut Value, path: &str, value: Value) {
    let mut at = target;
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        let Value::Object(map) = at else { return };
        if segments.peek().is_none() {
            map.insert(segment.to_string(), value);
            return;
        }
        at = map.entry(segment.to_string()).or_insert_with(|| Value::Object(Map::new()));
    }
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

/// The shape of a field's values.
#[derive(Debug)]
pub enum Kind {
    /// UTF-8 string; the decoder refuses one holding U+0000 (NUL).
    String,
    /// Integer (i64).
    Integer,
    /// Number (f64).
    Number,
    /// Boolean.
    Boolean,
    /// RFC 3339 timestamp string.
    DateTime,
    /// RFC 3339 full date (`2026-11-26`).
    Date,
    /// Any JSON.
    Json,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An object with these fields.
    Model(&'static [FieldSpec]),
    /// A list.
    List(&'static Kind),
    /// An object with string keys.
    Map(&'static Kind),
    /// An object of one of several models.
    Union(&'static UnionSpec),
    /// An uploaded file (a multipart part, or a raw body), stored as it arrives; never JSON.
    File {
        /// Media types accepted (`image/png`, or `image/*`); empty accepts any.
        media_types: &'static [&'static str],
        /// Largest accepted size in bytes.
        max_size: u64,
    },
}

/// A union's variants, for validation: which model a value holds, by its tag or by the required
/// fields only its variant has.
#[derive(Debug)]
pub struct UnionSpec {
    /// The field naming the variant; `None` for an untagged union.
    pub tag: Option<&'static str>,
    /// Each variant's name (the tag's value) and its model's fields, in spec order.
    pub variants: &'static [(&'static str, &'static [FieldSpec])],
}

impl UnionSpec {
    /// The required fields of `fields` no other variant declares: what tells an untagged value
    /// of that variant apart (the generator makes sure each variant has one).
    fn own<'a>(&'a self, fields: &'a [FieldSpec]) -> impl Iterator<Item = &'a FieldSpec> + 'a {
        fields.iter().filter(move |f| {
            f.required
                && !self
                    .variants
                    .iter()
                    .any(|(_, other)| !std::ptr::eq(*other, fields) && other.iter().any(|g| g.name == f.name))
        })
    }

    /// Checks an object of this union: the variant it names (or the one whose own fields it
    /// has), then that variant's fields.
    fn check(&self, service: &ServiceInfo, path: &str, obj: &Map<String, Value>) -> Result<(), Rejection> {
        let names = || self.variants.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
        if let Some(tag) = self.tag {
            let at = join(path, tag);
            let Some(value) = obj.get(tag) else {
                return Err(invalid(service, &at, Value::Null, format!("{at} is required: one of {}", names())));
            };
            let Some((_, fields)) = value.as_str().and_then(|t| self.variants.iter().find(|(n, _)| *n == t)) else {
                return Err(invalid(service, &at, value.clone(), format!("{at} must be one of: {}", names())));
            };
            let mut rest = obj.clone();
            rest.remove(tag);
            return check_object(service, fields, path, &rest);
        }
        let matching: Vec<&(&str, &[FieldSpec])> =
            self.variants.iter().filter(|(_, fields)| self.own(fields).any(|f| obj.contains_key(f.name))).collect();
        match matching.as_slice() {
            [(_, fields)] => check_object(service, fields, path, obj),
            [] => {
                let shapes: Vec<String> = self
                    .variants
                    .iter()
                    .map(|(n, fields)| {
                        let own: Vec<&str> = self.own(fields).map(|f| f.name).collect();
                        format!("{n} (with {})", own.join(" or "))
                    })
                    .collect();
                let at = if path.is_empty() { "the body" } else { path };
                Err(invalid(
                    service,
                    path,
                    Value::Object(obj.clone()),
                    format!("{at} must be one of: {}", shapes.join(", ")),
                ))
            }
            several => {
                let both: Vec<&str> = several.iter().map(|(n, _)| *n).collect();
                let at = if path.is_empty() { "the body" } else { path };
                Err(invalid(
                    service,
                    path,
                    Value::Object(obj.clone()),
                    format!("{at} mixes the fields of {}: it must be one of them", both.join(" and ")),
                ))
            }
        }
    }
}

// The one definition: the generator reads it from spec files (feature `spec`), field specs hold it.
/// Where an operation input field travels over REST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "lowercase"))]
pub enum Location {
    /// In the JSON request body.
    #[default]
    Body,
    /// A `{name}` segment of the path.
    Path,
    /// A query-string parameter.
    Query,
    /// A request header; the field `idempotency_key` is the header `Idempotency-Key`.
    Header,
    /// The whole JSON request body (an array, a scalar, a map or a model): what Smithy calls the
    /// payload. An input has at most one, and then no `body` field.
    Payload,
}

/// A string format the decoder checks (JSON Schema's `format`, which the documents state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "lowercase"))]
pub enum Format {
    /// An RFC 9562 UUID in its hyphenated form (`0190c3e8-…`), any case.
    Uuid,
    /// An email address as HTML's `type=email` accepts it (WHATWG: `local@domain`, no quoting).
    Email,
    /// An absolute URI (RFC 3986: a scheme, `:`, then URI characters only).
    Uri,
    /// An IPv4 address in dotted-quad form (RFC 2673 section 3.2).
    Ipv4,
    /// An IPv6 address (RFC 4291 section 2.2).
    Ipv6,
    /// A host name (RFC 1123: labels of letters, digits and `-`, at most 253 characters).
    Hostname,
    /// Bytes in base64 (RFC 4648 section 4: the standard alphabet, padded), as OpenAPI's
    /// `format: byte` carries binary data inside JSON.
    Byte,
}

impl Format {
    /// The name JSON Schema and the spec give it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::Uuid => "uuid",
            Format::Email => "email",
            Format::Uri => "uri",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Hostname => "hostname",
            Format::Byte => "byte",
        }
    }

    /// Whether `s` is in this format.
    pub fn accepts(self, s: &str) -> bool {
        match self {
            Format::Uuid => {
                let b = s.as_bytes();
                b.len() == 36
                    && b.iter()
                        .enumerate()
                        .all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { *c == b'-' } else { c.is_ascii_hexdigit() })
            }
            Format::Email => {
                let Some((local, domain)) = s.split_once('@') else { return false };
                let local_ok = !local.is_empty()
                    && local.bytes().all(|c| c.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&c));
                local_ok && domain.split('.').all(is_host_label)
            }
            Format::Uri => {
                let Some((scheme, rest)) = s.split_once(':') else { return false };
                let scheme_ok = scheme.bytes().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && scheme.bytes().all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c));
                scheme_ok && uri_chars(rest)
            }
            Format::Ipv4 => s.parse::<std::net::Ipv4Addr>().is_ok(),
            Format::Ipv6 => s.parse::<std::net::Ipv6Addr>().is_ok(),
            Format::Hostname => !s.is_empty() && s.len() <= 253 && s.split('.').all(is_host_label),
            Format::Byte => {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD.decode(s).is_ok()
            }
        }
    }
}

/// Whether `s` is an RFC 3339 timestamp (`2026-11-26T04:59:57Z`).
pub fn is_datetime(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

/// Whether `s` is an RFC 3339 full date (`2026-11-26`).
pub fn is_date(s: &str) -> bool {
    s.len() == 10 && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// One label of a host name: 1 to 63 letters, digits and `-`, not starting or ending with `-`.
fn is_host_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && !label.starts_with('-')
        && !label.ends_with('-')
        && label.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
}

/// Only characters a URI may hold (RFC 3986: unreserved, reserved, and `%` with two hex digits).
fn uri_chars(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit) && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
            continue;
        }
        if !(c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c)) {
            return false;
        }
        i += 1;
    }
    true
}

/// The name of the field spec that stands for every key a model does not name, in a model with
/// a map beside its fields (JSON Schema's `additionalProperties` beside `properties`).
pub const OTHER_KEYS: &str = "*";

/// One field and its constraints, for validation without reflection.
#[derive(Debug)]
pub struct FieldSpec {
    /// Wire name.
    pub name: &'static str,
    /// Where it travels.
    pub location: Location,
    /// Value shape.
    pub kind: Kind,
    /// Must be present.
    pub required: bool,
    /// May be `null`.
    pub nullable: bool,
    /// Inclusive lower bound (numbers).
    pub minimum: Option<f64>,
    /// Inclusive upper bound (numbers).
    pub maximum: Option<f64>,
    /// Fewest characters (strings).
    pub min_length: Option<usize>,
    /// Most characters (strings).
    pub max_length: Option<usize>,
    /// Fewest items (lists).
    pub min_items: Option<usize>,
    /// Most items (lists).
    pub max_items: Option<usize>,
    /// Pattern (strings).
    pub pattern: Option<&'static str>,
    /// The value is a secret: never echoed in error details.
    pub secret: bool,
    /// The string format the value must have.
    pub format: Option<Format>,
    /// What an absent optional field holds, as JSON text: the decoder puts it in before the
    /// operation sees the input.
    pub default: Option<&'static str>,
    /// The compiled pattern, built on first use.
    pub compiled: OnceLock<regex::Regex>,
}

impl FieldSpec {
    /// An optional, non-nullable field of `kind` at `location` with no constraint: the start of
    /// every generated field spec, which adds only the constraints the spec declares.
    pub const fn new(name: &'static str, location: Location, kind: Kind) -> Self {
        FieldSpec {
            name,
            location,
            kind,
            required: false,
            nullable: false,
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
            pattern: None,
            secret: false,
            format: None,
            default: None,
            compiled: OnceLock::new(),
        }
    }

    /// A body field.
    pub const fn body(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Body, kind)
    }

    /// A path parameter.
    pub const fn path(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Path, kind)
    }

    /// A query parameter.
    pub const fn query(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Query, kind)
    }

    /// A request header.
    pub const fn header(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Header, kind)
    }

    /// The whole request body.
    pub const fn payload(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Payload, kind)
    }

    /// Must be present.
    pub const fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// May be `null`.
    pub const fn nullable(mut self) -> Self {
        self.nullable = true;
        self
    }

    /// Never echoed in error details.
    pub const fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// Inclusive lower bound.
    pub const fn minimum(mut self, v: f64) -> Self {
        self.minimum = Some(v);
        self
    }

    /// Inclusive upper bound.
    pub const fn maximum(mut self, v: f64) -> Self {
        self.maximum = Some(v);
        self
    }

    /// Fewest characters.
    pub const fn min_length(mut self, n: usize) -> Self {
        self.min_length = Some(n);
        self
    }

    /// Most characters.
    pub const fn max_length(mut self, n: usize) -> Self {
        self.max_length = Some(n);
        self
    }

    /// Fewest items.
    pub const fn min_items(mut self, n: usize) -> Self {
        self.min_items = Some(n);
        self
    }

    /// Most items.
    pub const fn max_items(mut self, n: usize) -> Self {
        self.max_items = Some(n);
        self
    }

    /// Pattern the value must match.
    pub const fn pattern(mut self, p: &'static str) -> Self {
        self.pattern = Some(p);
        self
    }

    /// A string format.
    pub const fn format(mut self, f: Format) -> Self {
        self.format = Some(f);
        self
    }

    /// The value of an absent field, as JSON text.
    pub const fn default(mut self, json: &'static str) -> Self {
        self.default = Some(json);
        self
    }
}

/// Puts the default of each absent field that has one into a validated input. `null` for a
/// field that is not nullable is its absence (what the documents say of an optional field).
fn fill_defaults(fields: &[FieldSpec], obj: &mut Map<String, Value>) {
    for f in fields {
        let absent = match obj.get(f.name) {
            None => true,
            Some(Value::Null) => !f.nullable,
            Some(_) => false,
        };
        if let Some(text) = f.default
            && absent
            && let Ok(value) = serde_json::from_str::<Value>(text)
        {
            obj.insert(f.name.to_string(), value);
        }
    }
}

/// A failure with its message and structured details; the code comes from the enum variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Human message.
    pub message: String,
    /// Structured context.
    pub details: Map<String, Value>,
}

impl Problem {
    /// A problem with a message and no details.
    pub fn new(message: impl Into<String>) -> Self {
        Problem { message: message.into(), details: Map::new() }
    }

    /// Adds one detail. `key` may not be one of [`PROBLEM_MEMBERS`]: a service answering in
    /// problem details flattens details among those members.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        debug_assert!(!PROBLEM_MEMBERS.contains(&key), "detail {key:?} would overwrite a problem details member");
        self.details.insert(key.to_string(), value.into());
        self
    }
}

/// A per-operation error enum: each variant is one catalog code.
pub trait OperationError: std::fmt::Debug + Send {
    /// The catalog code of this error.
    fn code(&self) -> &'static str;
    /// The message and details.
    fn into_problem(self) -> Problem;
}

/// Every per-operation error enum can carry the service's internal error (a server fault) and
/// its unavailable error (storage unreachable or full: retry later).
pub trait InternalError {
    /// The internal-error variant with this problem.
    fn internal(problem: Problem) -> Self;
    /// The unavailable variant with this problem (`details.retry_after` becomes `Retry-After`).
    fn unavailable(problem: Problem) -> Self;
    /// The service's conflict variant (its spec's `conflict` error role) with this problem, when
    /// this operation declares it: what a write answers when a concurrent request took the unique
    /// key it would create. `None` when the operation cannot answer it.
    fn conflict(problem: Problem) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = problem;
        None
    }
}

/// How the runtime plugs into the generated routers: admit a request for an operation (yielding
/// the caller) or reject it (yielding the response to send).
pub trait Gate: Send + Sync + 'static {
    /// Who is calling, as the service implementation sees it.
    type Caller: Send + Sync + 'static;

    /// Authenticates, checks the scope and the rate limit of one request.
    fn admit(
        &self,
        parts: &mut Parts,
        op: &'static Operation,
    ) -> impl Future<Output = Result<Self::Caller, Response>> + Send;

    /// Told when a request this gate admitted is refused before it reaches the service, because
    /// its input does not decode or validate (REST or MCP): `code` and `status` are what the
    /// caller is answered. Every admitted request reaches the service or this method, so a runtime
    /// that records requests (an audit log) records these too.
    fn refused(
        &self,
        caller: &Self::Caller,
        op: &'static Operation,
        code: &'static str,
        status: u16,
    ) -> impl Future<Output = ()> + Send;

    /// Largest request body accepted, in bytes (of a JSON or form body, and of each text part of
    /// a multipart body; a file has its own limit, from the spec).
    fn body_limit(&self) -> usize;

    /// Stores the content of a file uploaded by `caller`, as it arrives, at most `limit` bytes:
    /// the stored file is what the operation receives ([`Upload`]). A runtime that keeps no
    /// files refuses every upload, which is this default.
    fn store_upload(
        &self,
        caller: &Self::Caller,
        content: UploadStream,
        limit: u64,
    ) -> impl Future<Output = Result<Stored, StoreError>> + Send {
        let _ = (caller, content, limit);
        async { Err(StoreError::Unavailable("this server keeps no uploaded files".into())) }
    }
}

/// Declares the closed error enums of a service's operations: each variant carries a
/// [`Problem`] and names its catalog code; `internal` and `unavailable` name the variants of the
/// service-wide codes every operation has, and `conflict` (optional) the catalog code of the
/// service's conflict error, which an operation that declares it answers when a concurrent
/// request took a unique key first ([`InternalError::conflict`]). The generated `errors.rs` of
/// every service is one call.
#[macro_export]
macro_rules! operation_errors {
    (
        internal: $internal:ident, unavailable: $unavailable:ident;
        $($enums:tt)*
    ) => {
        $crate::operation_errors! { @enums $internal, $unavailable, ::core::option::Option::None; $($enums)* }
    };
    (
        internal: $internal:ident, unavailable: $unavailable:ident, conflict: $conflict:literal;
        $($enums:tt)*
    ) => {
        $crate::operation_errors! { @enums $internal, $unavailable, ::core::option::Option::Some($conflict); $($enums)* }
    };
    (
        @enums $internal:ident, $unavailable:ident, $conflict:expr;
        $( $(#[$meta:meta])* $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $code:literal ),* $(,)? } )*
    ) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, PartialEq)]
            pub enum $name { $( $(#[$vmeta])* $variant($crate::Problem), )* }

            impl $crate::OperationError for $name {
                fn code(&self) -> &'static str {
                    match self { $( Self::$variant(_) => $code, )* }
                }
                fn into_problem(self) -> $crate::Problem {
                    match self { $( Self::$variant(p) )|* => p }
                }
            }

            impl $crate::InternalError for $name {
                fn internal(problem: $crate::Problem) -> Self {
                    Self::$internal(problem)
                }
                fn unavailable(problem: $crate::Problem) -> Self {
                    Self::$unavailable(problem)
                }
                fn conflict(problem: $crate::Problem) -> ::core::option::Option<Self> {
                    let code: ::core::option::Option<&'static str> = $conflict;
                    match code? {
                        $( $code => ::core::option::Option::Some(Self::$variant(problem)), )*
                        _ => ::core::option::Option::None,
                    }
                }
            }
        )*
    };
}

/// The input of an operation that takes none: only `{}` or an empty body is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

/// Deserializes a field that is optional *and* nullable: absent → `None`, `null` → `Some(None)`.
pub fn double_option<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

/// One page of a list: the items and the total over all pages.
#[derive(Debug, Clone, PartialEq)]
pub struct Paged<T> {
    /// This page's items.
    pub items: Vec<T>,
    /// Items matching the request over all pages.
    pub total: u64,
}

/// The page a list request asks for (already validated against the pagination rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    /// Page number, from 1.
    pub page: u32,
    /// Items per page.
    pub per_page: u32,
}

impl Paging {
    /// Items to skip.
    pub fn offset(&self) -> u64 {
        u64::from(self.page.saturating_sub(1)) * u64::from(self.per_page)
    }
}

/// The request id the runtime assigned (header `x-request-id`).
pub fn request_id(parts: &Parts) -> Option<&str> {
    parts.headers.get("x-request-id").and_then(|v| v.to_str().ok())
}

/// The standard error envelope, with the status of `code` in `service`'s catalog.
pub fn error_response(service: &ServiceInfo, code: &str, problem: Problem, request_id: Option<&str>) -> Response {
    let status = status_of(service, code, 500);
    let retry_after = problem.details.get("retry_after").and_then(Value::as_u64);
    let body = error_body(service, code, status, problem, request_id);
    let content_type = match service.wire.errors {
        ErrorFormat::Envelope | ErrorFormat::Model(_) => "application/json",
        ErrorFormat::Problem { .. } => PROBLEM_JSON,
    };
    let mut resp = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body.to_string(),
    )
        .into_response();
    if let Some(id) = request_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        resp.headers_mut().insert("x-request-id", id);
    }
    // Whatever answer says when to retry (429, 503) says it in the header clients read too.
    if let Some(seconds) = retry_after {
        resp.headers_mut().insert("retry-after", HeaderValue::from(seconds.max(1)));
    }
    resp
}

/// The media type of RFC 9457 problem details.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The body of an error of `service` in its wire format: what a REST answer carries and what an
/// MCP tool result carries as its structured content.
pub fn error_body(service: &ServiceInfo, code: &str, status: u16, problem: Problem, request_id: Option<&str>) -> Value {
    match service.wire.errors {
        ErrorFormat::Model(model) => model.body(code, status, problem, request_id),
        ErrorFormat::Envelope => json!({
            "error": {
                "code": code,
                "message": problem.message,
                "details": Value::Object(problem.details),
                "request_id": request_id,
            }
        }),
        ErrorFormat::Problem { types } => {
            let (kind, title) = match types {
                Some(base) => (format!("{base}{code}"), service.error(code).map_or("", |e| e.message).to_string()),
                None => {
                    let phrase = StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason());
                    ("about:blank".to_string(), phrase.unwrap_or("Error").to_string())
                }
            };
            let mut body = Map::new();
            body.insert("type".into(), Value::String(kind));
            body.insert("title".into(), Value::String(title));
            body.insert("status".into(), Value::from(status));
            body.insert("detail".into(), Value::String(problem.message));
            body.insert("code".into(), Value::String(code.to_string()));
            body.insert("request_id".into(), request_id.map_or(Value::Null, |id| Value::String(id.to_string())));
            // A detail named like a member never overwrites it (`Problem::with` refuses such a
            // detail in debug builds, so tests find it).
            for (key, value) in problem.details {
                body.entry(key).or_insert(value);
            }
            Value::Object(body)
        }
    }
}

/// A request the decoder refused, with the role of the error to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// Catalog code.
    pub code: &'static str,
    /// What was wrong.
    pub problem: Problem,
}

pub(crate) fn invalid(service: &ServiceInfo, field: &str, value: Value, message: String) -> Rejection {
    Rejection {
        code: service.roles.validation,
        problem: Problem::new(message).with("field", field).with("value", value),
    }
}

fn describe(kind: &Kind) -> Cow<'static, str> {
    match kind {
        Kind::String => "a string".into(),
        Kind::Integer => "an integer".into(),
        Kind::Number => "a number".into(),
        Kind::Boolean => "a boolean".into(),
        Kind::DateTime => "an RFC 3339 timestamp".into(),
        Kind::Date => "an RFC 3339 date (YYYY-MM-DD)".into(),
        Kind::Json => "any JSON value".into(),
        Kind::Enum(values) => format!("one of: {}", values.join(", ")).into(),
        Kind::Model(_) | Kind::Map(_) | Kind::Union(_) => "an object".into(),
        Kind::List(_) => "a list".into(),
        Kind::File { .. } => "a file (a part of a multipart body)".into(),
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") }
}

fn bound(v: f64) -> String {
    if v.fract() == 0.0 { format!("{}", v as i64) } else { v.to_string() }
}

/// Refuses a string holding U+0000 (NUL). PostgreSQL text cannot store it (the insert fails, so
/// a request carrying one would end in a server error on one backend and succeed on the other),
/// and no legitimate input needs it. Every string the decoder accepts passes through here (field
/// values of every location, list and map items, map keys, strings anywhere inside a JSON field),
/// so none that holds a NUL can reach an operation, whichever surface it came through.
fn nul_free(service: &ServiceInfo, path: &str, s: &str) -> Result<(), Rejection> {
    if s.contains('\0') {
        return Err(invalid(
            service,
            path,
            Value::String(s.to_string()),
            format!("{path} must not contain U+0000 (NUL)"),
        ));
    }
    Ok(())
}

/// Where the first string or object key inside `v` that holds U+0000 (NUL) is, as a field path
/// under `path` (`path` itself, `path.key`, `path[2]`…); `None` when no string holds one. The
/// decoder refuses such a value (see [`nul_free`]); the runtime checks text that reaches storage
/// by other ways (OAuth client metadata, lead feeds) with the same function.
pub fn nul_at(path: &str, v: &Value) -> Option<String> {
    match v {
        Value::String(s) => s.contains('\0').then(|| path.to_string()),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| nul_at(&format!("{path}[{i}]"), item)),
        Value::Object(map) => map.iter().find_map(|(k, item)| {
            let at = join(path, k);
            if k.contains('\0') { Some(at) } else { nul_at(&at, item) }
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// Checks one value against its field spec; a secret field's value is never echoed back.
fn check_value(service: &ServiceInfo, spec: &FieldSpec, kind: &Kind, path: &str, v: &Value) -> Result<(), Rejection> {
    check_plain(service, spec, kind, path, v).map_err(|mut r| {
        if spec.secret {
            r.problem.details.insert("value".into(), Value::String("[redacted]".into()));
        }
        r
    })
}

fn check_plain(service: &ServiceInfo, spec: &FieldSpec, kind: &Kind, path: &str, v: &Value) -> Result<(), Rejection> {
    let wrong = || invalid(service, path, v.clone(), format!("{path} must be {}", describe(kind)));
    match kind {
        // A file never travels as JSON: the decoder puts it in after this check.
        Kind::File { .. } => return Err(wrong()),
        Kind::String | Kind::DateTime | Kind::Date => {
            let s = v.as_str().ok_or_else(wrong)?;
            nul_free(service, path, s)?;
            if (matches!(kind, Kind::DateTime) && !is_datetime(s)) || (matches!(kind, Kind::Date) && !is_date(s)) {
                return Err(wrong());
            }
            if let Some(format) = spec.format.filter(|f| !f.accepts(s)) {
                let what = match format {
                    Format::Uuid => "a UUID",
                    Format::Email => "an email address",
                    Format::Uri => "an absolute URI",
                    Format::Ipv4 => "an IPv4 address",
                    Format::Ipv6 => "an IPv6 address",
                    Format::Hostname => "a host name",
                    Format::Byte => "base64 (RFC 4648, padded)",
                };
                return Err(invalid(service, path, v.clone(), format!("{path} must be {what}")));
            }
            let n = s.chars().count();
            if let Some(min) = spec.min_length.filter(|m| n < *m) {
                return Err(invalid(
                    service,
                    path,
                    v.clone(),
                    format!("{path} must be at least {min} characters long"),
                ));
            }
            if let Some(max) = spec.max_length.filter(|m| n > *m) {
                return Err(invalid(service, path, v.clone(), format!("{path} must be at most {max} characters long")));
            }
            if let Some(p) = spec.pattern {
                let re = spec.compiled.get_or_init(|| {
                    regex::Regex::new(p).unwrap_or_else(|_| regex::Regex::new("$^").expect("fallback regex"))
                });
                if !re.is_match(s) {
                    return Err(invalid(service, path, v.clone(), format!("{path} must match the pattern {p}")));
                }
            }
        }
        Kind::Integer | Kind::Number => {
            let n = if matches!(kind, Kind::Integer) { v.as_i64().map(|i| i as f64) } else { v.as_f64() };
            let n = n.ok_or_else(wrong)?;
            let out_of_range = spec.minimum.is_some_and(|m| n < m) || spec.maximum.is_some_and(|m| n > m);
            if out_of_range {
                let msg = match (spec.minimum, spec.maximum) {
                    (Some(lo), Some(hi)) => format!("{path} must be between {} and {}", bound(lo), bound(hi)),
                    (Some(lo), None) => format!("{path} must be at least {}", bound(lo)),
                    (None, Some(hi)) => format!("{path} must be at most {}", bound(hi)),
                    (None, None) => unreachable!("out of range needs a bound"),
                };
                return Err(invalid(service, path, v.clone(), msg));
            }
        }
        Kind::Boolean => {
            v.as_bool().ok_or_else(wrong)?;
        }
        Kind::Json => {
            if let Some(at) = nul_at(path, v) {
                return Err(invalid(service, &at, v.clone(), format!("{at} must not contain U+0000 (NUL)")));
            }
        }
        Kind::Enum(values) => {
            let s = v.as_str().ok_or_else(wrong)?;
            nul_free(service, path, s)?;
            if !values.contains(&s) {
                return Err(wrong());
            }
        }
        Kind::Model(fields) => {
            let obj = v.as_object().ok_or_else(wrong)?;
            check_object(service, fields, path, obj)?;
        }
        Kind::Union(union) => {
            let obj = v.as_object().ok_or_else(wrong)?;
            union.check(service, path, obj)?;
        }
        Kind::List(inner) => {
            let items = v.as_array().ok_or_else(wrong)?;
            if let Some(min) = spec.min_items.filter(|m| items.len() < *m) {
                return Err(invalid(service, path, v.clone(), format!("{path} must have at least {min} items")));
            }
            if let Some(max) = spec.max_items.filter(|m| items.len() > *m) {
                return Err(invalid(
                    service,
                    path,
                    Value::from(items.len()),
                    format!("{path} must have at most {max} items"),
                ));
            }
            for (i, item) in items.iter().enumerate() {
                check_item(service, spec, inner, &format!("{path}[{i}]"), item)?;
            }
        }
        Kind::Map(inner) => {
            let obj = v.as_object().ok_or_else(wrong)?;
            for (k, item) in obj {
                let at = join(path, k);
                nul_free(service, &at, k)?;
                check_item(service, spec, inner, &at, item)?;
            }
        }
    }
    Ok(())
}

/// List and map items share their field's string constraints but not its list constraints.
fn check_item(service: &ServiceInfo, spec: &FieldSpec, kind: &Kind, path: &str, v: &Value) -> Result<(), Rejection> {
    // `null` is a JSON value like any other where any is allowed.
    if v.is_null() && !matches!(kind, Kind::Json) {
        return Err(invalid(service, path, Value::Null, format!("{path} must be {}", describe(kind))));
    }
    check_value(service, spec, kind, path, v)
}

/// Checks an object against its fields: unknown fields, missing required fields, each value.
pub(crate) fn check_object(
    service: &ServiceInfo,
    fields: &[FieldSpec],
    prefix: &str,
    obj: &Map<String, Value>,
) -> Result<(), Rejection> {
    for (k, v) in obj.iter().filter(|(k, _)| !fields.iter().any(|f| f.name == *k)) {
        let path = join(prefix, k);
        // Looked for only when a key is not a field: most objects have none.
        match fields.iter().find(|f| f.name == OTHER_KEYS) {
            // A model with a map beside its fields: every other key holds a value of that map.
            Some(spec) => {
                nul_free(service, &path, k)?;
                check_item(service, spec, &spec.kind, &path, v)?;
            }
            None => return Err(invalid(service, &path, v.clone(), format!("unknown field {path}"))),
        }
    }
    for f in fields {
        let path = join(prefix, f.name);
        match obj.get(f.name) {
            // A required file is looked for once the uploads are in (`upload::required_files`).
            None if f.required && !matches!(f.kind, Kind::File { .. }) => {
                return Err(invalid(service, &path, Value::Null, format!("{path} is required")));
            }
            None => {}
            Some(Value::Null) if f.nullable || !f.required => {}
            Some(v) => check_value(service, f, &f.kind, &path, v)?,
        }
    }
    Ok(())
}

/// A JSON value parsed strictly: an object that names a key twice is refused (RFC 8259 leaves
/// the meaning open, and parsers disagree on which one wins), instead of silently keeping one.
struct StrictJson(Value);

impl<'de> serde::Deserialize<'de> for StrictJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StrictJson;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StrictJson, E> {
                Ok(StrictJson(number(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<StrictJson, E> {
                Ok(StrictJson(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<StrictJson, A::Error> {
                let mut items = Vec::new();
                while let Some(StrictJson(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(StrictJson(Value::Array(items)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<StrictJson, A::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let StrictJson(v) = map.next_value()?;
                    if out.insert(key.clone(), v).is_some() {
                        return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
                    }
                }
                Ok(StrictJson(Value::Object(out)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses `bytes` as JSON, refusing an object that names a member twice (the error says which).
/// Whole floats come back as integers, as request bodies are read.
pub fn parse_json_strict(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice::<StrictJson>(bytes).map(|v| v.0)
}

/// A JSON number: a whole one (`1.0`) as an integer, since JSON Schema counts it as one and
/// integer fields must accept it; others as floats.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// Rewrites whole floats as integers throughout `v` (arguments that did not go through
/// [`StrictJson`]).
fn whole_numbers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64() {
                *v = number(f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// Turns a path or query string into the JSON value its field expects.
pub(crate) fn coerce(service: &ServiceInfo, f: &FieldSpec, kind: &Kind, raw: &str) -> Result<Value, Rejection> {
    let bad =
        || invalid(service, f.name, Value::String(raw.to_string()), format!("{} must be {}", f.name, describe(kind)));
    Ok(match kind {
        Kind::Integer => Value::from(raw.trim().parse::<i64>().map_err(|_| bad())?),
        // A whole number stays an integer, so errors echo the value as it was sent (`150`, not `150.0`).
        Kind::Number if raw.trim().parse::<i64>().is_ok() => Value::from(raw.trim().parse::<i64>().map_err(|_| bad())?),
        Kind::Number => {
            let n = raw.trim().parse::<f64>().ok().filter(|n| n.is_finite()).ok_or_else(bad)?;
            serde_json::Number::from_f64(n).map(Value::Number).ok_or_else(bad)?
        }
        Kind::Boolean => match raw {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(bad()),
        },
        _ => Value::String(raw.to_string()),
    })
}

/// Splits `page`/`per_page` off a validated object of a paginated operation and applies the
/// service's pagination rules; another operation's `page` is a field of its own input.
fn take_paging(op: &Operation, obj: &mut Map<String, Value>) -> Paging {
    let service = op.service;
    if !op.paginated {
        return Paging { page: 1, per_page: service.default_per_page };
    }
    // Validation bounds both; out-of-range values saturate rather than wrap.
    let get = |v: Option<Value>, default: u32| {
        v.and_then(|v| v.as_u64()).map(|n| u32::try_from(n).unwrap_or(u32::MAX).max(1)).unwrap_or(default)
    };
    Paging { page: get(obj.remove("page"), 1), per_page: get(obj.remove("per_page"), service.default_per_page) }
}

fn deserialize<I: DeserializeOwned>(service: &ServiceInfo, obj: Map<String, Value>) -> Result<I, Rejection> {
    let value = Value::Object(obj);
    serde_path_to_error::deserialize::<_, I>(&value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let rejected = value.pointer(&format!("/{}", path.replace('.', "/"))).cloned().unwrap_or(Value::Null);
        invalid(service, &path, rejected, format!("{path}: {}", e.inner()))
    })
}

/// Decodes MCP tool arguments (one flat object of every input field) into the operation input.
pub fn decode_arguments<I: DeserializeOwned>(
    op: &'static Operation,
    mut arguments: Value,
) -> Result<(I, Paging), Rejection> {
    let service = op.service;
    whole_numbers(&mut arguments);
    let mut obj = match arguments {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => return Err(invalid(service, "", other, "arguments must be an object".into())),
    };
    check_object(service, op.input, "", &obj)?;
    fill_defaults(op.input, &mut obj);
    let paging = take_paging(op, &mut obj);
    Ok((deserialize(service, obj)?, paging))
}

pub(crate) fn is_json(parts: &Parts) -> bool {
    parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| {
            let m = m.trim().to_ascii_lowercase();
            m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
        })
        .unwrap_or(false)
}

/// Decodes a REST request (path, query and JSON body) into the operation input.
pub async fn decode_request<G: Gate, I: DeserializeOwned>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    parts: &mut Parts,
    body: Body,
) -> Result<(I, Paging), Rejection> {
    let service = op.service;
    let roles = &service.roles;
    let limit = gate.body_limit();
    let mut obj = Map::new();
    // Path parameters.
    if op.input.iter().any(|f| f.location == Location::Path) {
        let params = RawPathParams::from_request_parts(parts, &())
            .await
            .map_err(|e| invalid(service, "path", Value::Null, format!("the path is not valid: {e}")))?;
        for (name, raw) in params.iter() {
            if let Some(f) = op.input.iter().find(|f| f.name == name && f.location == Location::Path) {
                obj.insert(name.to_string(), coerce(service, f, &f.kind, raw)?);
            }
        }
    }
    // Query string: repeated keys build lists; unknown keys are refused.
    if let Some(q) = parts.uri.query() {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(q).map_err(|e| {
            invalid(service, "query", Value::String(q.to_string()), format!("the query string is not valid: {e}"))
        })?;
        for (k, raw) in pairs {
            add_pair(op, Location::Query, k, raw, &mut obj)?;
        }
    }
    // Headers: `idempotency_key` travels as `Idempotency-Key` (header names ignore case).
    for f in op.input.iter().filter(|f| f.location == Location::Header) {
        let name = f.name.replace('_', "-");
        if let Some(v) = parts.headers.get(name.as_str()) {
            let s = v
                .to_str()
                .map_err(|_| invalid(service, f.name, Value::Null, format!("header {name} must be visible ASCII")))?;
            obj.insert(f.name.to_string(), Value::String(s.to_string()));
        }
    }
    // Body, in the format the operation declares.
    let uploads = match op.body {
        BodyFormat::Json => {
            json_body(op, parts, body, limit, &mut obj).await?;
            Vec::new()
        }
        BodyFormat::Form => {
            upload::form(op, parts, body, limit, &mut obj).await?;
            Vec::new()
        }
        BodyFormat::Multipart => upload::multipart(gate, caller, op, parts, body, limit, &mut obj).await?,
        BodyFormat::Raw => upload::raw(gate, caller, op, parts, body).await?,
    };
    check_object(service, op.input, "", &obj)?;
    upload::insert(op, uploads, &mut obj)?;
    fill_defaults(op.input, &mut obj);
    if let Some(Conditional::Write { required }) = op.conditional {
        // The input's `if_match` (no field spec: it is the platform's, and REST's alone).
        match conditional::joined(&parts.headers, header::IF_MATCH) {
            Some(raw) => {
                obj.insert("if_match".into(), Value::String(raw));
            }
            None if required => {
                return Err(Rejection {
                    code: roles.precondition_required.unwrap_or(roles.validation),
                    problem: Problem::new(
                        "this change needs If-Match: send the ETag of the version you read, so a concurrent \
                         change is not overwritten",
                    ),
                });
            }
            None => {}
        }
    }
    let paging = take_paging(op, &mut obj);
    Ok((deserialize(service, obj)?, paging))
}

/// One `key=value` pair of a query string or a form body into the fields at `location`: a
/// repeated key builds a list, an unknown key or a second value of a single field is refused.
pub(crate) fn add_pair(
    op: &'static Operation,
    location: Location,
    k: String,
    raw: String,
    obj: &mut Map<String, Value>,
) -> Result<(), Rejection> {
    let service = op.service;
    let Some(f) = op.input.iter().find(|f| f.name == k && f.location == location) else {
        let place = if location == Location::Query { "query parameter" } else { "field" };
        return Err(invalid(service, &k, Value::String(raw), format!("unknown {place} {k}")));
    };
    match &f.kind {
        Kind::List(inner) => {
            let v = coerce(service, f, inner, &raw)?;
            if let Value::Array(a) = obj.entry(k).or_insert_with(|| Value::Array(Vec::new())) {
                a.push(v);
            }
        }
        kind => {
            if obj.contains_key(&k) {
                return Err(invalid(service, &k, Value::String(raw), format!("{k} is given more than once")));
            }
            let v = coerce(service, f, kind, &raw)?;
            obj.insert(k, v);
        }
    }
    Ok(())
}

/// A JSON body: an object whose members are the operation's body fields.
async fn json_body(
    op: &'static Operation,
    parts: &Parts,
    body: Body,
    limit: usize,
    obj: &mut Map<String, Value>,
) -> Result<(), Rejection> {
    let (service, roles) = (op.service, &op.service.roles);
    let bytes: Bytes = axum::body::to_bytes(body, limit).await.map_err(|_| too_large(op, limit as u64, None))?;
    let has_bytes = !bytes.iter().all(u8::is_ascii_whitespace);
    // An optional payload may be left out altogether: no body, so no media type to check.
    let no_payload = !has_bytes
        && parts.headers.get(header::CONTENT_TYPE).is_none()
        && op.input.iter().any(|f| f.location == Location::Payload && !f.required);
    if (op.has_body || has_bytes) && !no_payload {
        if op.has_body && !is_json(parts) {
            return Err(Rejection {
                code: roles.unsupported_media_type,
                problem: Problem::new("the request body must be JSON: send Content-Type: application/json"),
            });
        }
        let body: Value = if has_bytes {
            serde_json::from_slice::<StrictJson>(&bytes).map(|v| v.0).map_err(|e| Rejection {
                code: roles.malformed,
                problem: Problem::new(format!("the request body is not valid JSON: {e}")),
            })?
        } else {
            Value::Object(Map::new())
        };
        // A payload field is the body itself, whatever its shape; its checks name the field.
        if let Some(payload) = op.input.iter().find(|f| f.location == Location::Payload) {
            if has_bytes {
                obj.insert(payload.name.to_string(), body);
            } else if payload.required {
                let text = format!("the request body ({}) is required", payload.name);
                return Err(invalid(service, payload.name, Value::Null, text));
            }
            return Ok(());
        }
        let Value::Object(body) = body else {
            return Err(invalid(service, "", body, "the request body must be a JSON object".into()));
        };
        for (k, v) in body {
            let named = |name: &str| op.input.iter().any(|f| f.name == name && f.location == Location::Body);
            if !named(&k) && !named(OTHER_KEYS) {
                return Err(invalid(service, &k, v, format!("unknown field {k}")));
            }
            obj.insert(k, v);
        }
    }
    Ok(())
}

/// The operation's `413`: the body (or the file `field`) is larger than `limit` bytes.
pub(crate) fn too_large(op: &'static Operation, limit: u64, field: Option<&str>) -> Rejection {
    let problem = match field {
        Some(f) => Problem::new(format!("{f} is larger than {limit} bytes")).with("field", f),
        None => Problem::new(format!("the request body is larger than {limit} bytes")),
    };
    Rejection { code: op.service.roles.payload_too_large, problem: problem.with("limit", limit) }
}

/// Splits a request, asks the gate to admit it and decodes its input. A refused input is
/// answered here, and the gate is told of it ([`Gate::refused`]).
pub async fn admit<G: Gate, I: DeserializeOwned>(
    gate: &G,
    op: &'static Operation,
    req: Request,
) -> Result<(Parts, G::Caller, I, Paging), Response> {
    let (mut parts, body) = req.into_parts();
    let caller = gate.admit(&mut parts, op).await?;
    match decode_request::<G, I>(gate, &caller, op, &mut parts, body).await {
        Ok((input, paging)) => Ok((parts, caller, input, paging)),
        Err(r) => {
            gate.refused(&caller, op, r.code, status_of(op.service, r.code, 422)).await;
            Err(error_response(op.service, r.code, r.problem, request_id(&parts)))
        }
    }
}

/// Decodes MCP tool arguments for `op`; a refused input is reported to the gate
/// ([`Gate::refused`]) and becomes the tool failure.
pub async fn admit_arguments<G: Gate, I: DeserializeOwned>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    arguments: Value,
) -> Result<(I, Paging), ToolFailure> {
    match decode_arguments::<I>(op, arguments) {
        Ok(decoded) => Ok(decoded),
        Err(r) => {
            let failure = ToolFailure::rejected(op, r);
            gate.refused(caller, op, failure.code, failure.status).await;
            Err(failure)
        }
    }
}

/// The catalog status of `code`, else `fallback`.
fn status_of(service: &ServiceInfo, code: &str, fallback: u16) -> u16 {
    service.error(code).map(|e| e.status).unwrap_or(fallback)
}

fn finish(parts: &Parts, op: &'static Operation, mut resp: Response) -> Response {
    *resp.status_mut() = StatusCode::from_u16(op.success_status).unwrap_or(StatusCode::OK);
    if let Some(d) = op.deprecation {
        d.mark(&mut resp);
    }
    if op.no_store {
        resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if let Some(id) = request_id(parts).and_then(|id| HeaderValue::from_str(id).ok()) {
        resp.headers_mut().insert("x-request-id", id);
    }
    resp
}

/// What an operation answers on success, before the service's wire format writes it.
#[derive(Debug)]
pub enum Success {
    /// A file, streamed as it is (the wire format writes JSON bodies only).
    File(File),
    /// A stream of events, already a response (`Events::into_response`).
    Streamed(Response),
    /// No content.
    Empty,
    /// The operation's output.
    One(Value),
    /// One page of a list.
    Page {
        /// This page's items (a JSON array).
        items: Value,
        /// Items matching the request over all pages.
        total: u64,
        /// The page asked for.
        paging: Paging,
    },
    /// An answer with headers the operation's output declares (`Location`, `Retry-After`, …).
    Headed {
        /// The answer.
        inner: Box<Success>,
        /// The headers, in the order the output declares them.
        headers: Vec<(HeaderName, HeaderValue)>,
    },
}

impl Success {
    /// The output of an operation.
    pub fn one<T: Serialize>(value: &T) -> Self {
        Success::One(serde_json::to_value(value).unwrap_or(Value::Null))
    }

    /// A page of a list operation.
    pub fn page<T: Serialize>(page: &Paged<T>, paging: Paging) -> Self {
        Success::Page { items: serde_json::to_value(&page.items).unwrap_or(Value::Null), total: page.total, paging }
    }

    /// This answer with one more header; a value that cannot be a header value (a control
    /// character, a line break) is left out rather than sent broken.
    pub fn header(self, name: &'static str, value: impl std::fmt::Display) -> Self {
        let value = HeaderValue::from_str(&value.to_string());
        let (inner, mut headers) = match self {
            Success::Headed { inner, headers } => (inner, headers),
            other => (Box::new(other), Vec::new()),
        };
        if let Ok(value) = value {
            headers.push((HeaderName::from_static(name), value));
        }
        Success::Headed { inner, headers }
    }

    /// The answer without its declared headers, and those headers.
    fn split(self) -> (Success, Vec<(HeaderName, HeaderValue)>) {
        match self {
            Success::Headed { inner, headers } => (*inner, headers),
            other => (other, Vec::new()),
        }
    }

    /// The entity tag of this answer: the digest of its output (of a page: its items, total and
    /// paging); `None` for no content.
    fn etag(&self) -> Option<String> {
        match self {
            Success::Empty | Success::File(_) | Success::Streamed(_) => None,
            Success::One(v) => Some(conditional::etag_of(v)),
            Success::Page { items, total, paging } => Some(conditional::etag_of(
                &json!({ "items": items, "total": total, "page": paging.page, "per_page": paging.per_page }),
            )),
            Success::Headed { inner, .. } => inner.etag(),
        }
    }

    /// The envelope format's body: `{"data": …}`, a page with its `meta`; `None` for no content.
    fn enveloped(self) -> Option<Value> {
        match self {
            Success::Empty | Success::File(_) | Success::Streamed(_) => None,
            Success::Headed { inner, .. } => inner.enveloped(),
            Success::One(v) => Some(json!({ "data": v })),
            Success::Page { items, total, paging } => Some(json!({
                "data": items, "meta": { "total": total, "page": paging.page, "per_page": paging.per_page }
            })),
        }
    }

    /// The body an MCP tool result carries as its structured content (always an object, as MCP
    /// requires): the REST body in the envelope format; the output when bare, a list as
    /// `{"items"}`, a scalar as `{"value"}` and a page as `{"items", "total", "page",
    /// "per_page"}`; `{}` for no content.
    pub fn into_tool_body(self, service: &ServiceInfo) -> Value {
        match (self.split().0, service.wire.success) {
            (Success::One(v @ Value::Array(_)), SuccessFormat::Bare) => json!({ "items": v }),
            (Success::One(v @ Value::Object(_)), SuccessFormat::Bare) => v,
            (Success::One(v), SuccessFormat::Bare) => json!({ "value": v }),
            (Success::Page { items, total, paging }, SuccessFormat::Bare) => {
                json!({ "items": items, "total": total, "page": paging.page, "per_page": paging.per_page })
            }
            (success, _) => success.enveloped().unwrap_or_else(|| Value::Object(Map::new())),
        }
    }
}

/// The success response of an operation, in its service's wire format.
pub fn respond(parts: &Parts, op: &'static Operation, success: Success) -> Response {
    let json = |v: &Value| axum::Json(v).into_response();
    let (success, headers) = success.split();
    let etag = op.conditional.and_then(|_| success.etag());
    if let Some(tag) = &etag
        && op.conditional == Some(Conditional::Read)
        && conditional::not_modified(&parts.headers, tag)
    {
        let mut resp = finish(parts, op, Response::new(Body::empty()));
        *resp.status_mut() = StatusCode::NOT_MODIFIED;
        return with_headers(resp, etag, headers);
    }
    let resp = match (success, op.service.wire.success) {
        (Success::File(file), _) if op.ranges => match file.into_ranged_response(&parts.headers) {
            // A part keeps its 206 (`finish` sets the declared status of a whole answer).
            Ok(resp) if resp.status() == StatusCode::PARTIAL_CONTENT => {
                let mut resp = finish(parts, op, resp);
                *resp.status_mut() = StatusCode::PARTIAL_CONTENT;
                return with_headers(resp, etag, headers);
            }
            Ok(resp) => resp,
            Err(length) => return range_not_satisfiable(parts, op, length),
        },
        (Success::File(file), _) => file.into_response(),
        (Success::Streamed(resp), _) => resp,
        (Success::One(v), SuccessFormat::Bare) => json(&v),
        (Success::Page { items, total, paging }, SuccessFormat::Bare) => {
            let mut resp = json(&items);
            resp.headers_mut().insert("x-total-count", HeaderValue::from(total));
            if let Ok(link) = HeaderValue::from_str(&page_links(parts.uri.query(), total, paging)) {
                resp.headers_mut().insert(header::LINK, link);
            }
            resp
        }
        (success, _) => success.enveloped().map_or_else(|| Response::new(Body::empty()), |v| json(&v)),
    };
    with_headers(finish(parts, op, resp), etag, headers)
}

/// The `416` of a `Range` no byte of a file of `length` bytes falls in, with the
/// `Content-Range: bytes */length` that tells the client the file's length.
fn range_not_satisfiable(parts: &Parts, op: &'static Operation, length: u64) -> Response {
    let code = op.service.roles.range_not_satisfiable.unwrap_or(op.service.roles.validation);
    let problem =
        Problem::new(format!("no byte of the {length}-byte file is in the range asked for")).with("length", length);
    let mut resp = error_response(op.service, code, problem, request_id(parts));
    if let Ok(v) = HeaderValue::from_str(&format!("bytes */{length}")) {
        resp.headers_mut().insert(header::CONTENT_RANGE, v);
    }
    if let Some(d) = op.deprecation {
        d.mark(&mut resp);
    }
    resp
}

/// Puts an answer's `ETag` and its declared headers on it.
fn with_headers(mut resp: Response, etag: Option<String>, headers: Vec<(HeaderName, HeaderValue)>) -> Response {
    if let Some(tag) = etag.and_then(|t| HeaderValue::from_str(&t).ok()) {
        resp.headers_mut().insert(header::ETAG, tag);
    }
    for (name, value) in headers {
        resp.headers_mut().append(name, value);
    }
    resp
}

/// The `Link` header of a page (RFC 8288): `first`, `prev` (after the first page), `next` (before
/// the last) and `last`, each the request's own query with `page` and `per_page` set. The targets
/// are query-only references, which resolve against the request's own URL (RFC 3986 section
/// 5.2), so they stay right behind a proxy that serves the API under another path.
pub fn page_links(query: Option<&str>, total: u64, paging: Paging) -> String {
    let kept: Vec<(String, String)> = query
        .and_then(|q| serde_urlencoded::from_str::<Vec<(String, String)>>(q).ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| k != "page" && k != "per_page")
        .collect();
    let per_page = u64::from(paging.per_page.max(1));
    let last = total.div_ceil(per_page).max(1);
    let page = u64::from(paging.page);
    let target = |page: u64| {
        let mut pairs = kept.clone();
        pairs.push(("page".into(), page.to_string()));
        pairs.push(("per_page".into(), per_page.to_string()));
        format!("?{}", serde_urlencoded::to_string(&pairs).unwrap_or_default())
    };
    let mut links = vec![(1, "first")];
    if page > 1 {
        links.push((page.min(last + 1) - 1, "prev"));
    }
    if page < last {
        links.push((page + 1, "next"));
    }
    links.push((last, "last"));
    links.iter().map(|(p, rel)| format!("<{}>; rel=\"{rel}\"", target(*p))).collect::<Vec<_>>().join(", ")
}

/// The error response of an operation.
pub fn respond_error<E: OperationError>(parts: &Parts, op: &'static Operation, err: E) -> Response {
    let code = err.code();
    let mut resp = error_response(op.service, code, err.into_problem(), request_id(parts));
    if let Some(d) = op.deprecation {
        d.mark(&mut resp);
    }
    resp
}

/// A failure of an MCP tool call: the catalog code, its HTTP status and the problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    /// Catalog code.
    pub code: &'static str,
    /// HTTP status the REST route would have answered.
    pub status: u16,
    /// What went wrong.
    pub problem: Problem,
}

impl ToolFailure {
    /// From a decoder rejection.
    pub fn rejected(op: &'static Operation, r: Rejection) -> Self {
        let status = status_of(op.service, r.code, 422);
        ToolFailure { code: r.code, status, problem: r.problem }
    }

    /// From an operation error.
    pub fn from_error<E: OperationError>(op: &'static Operation, err: E) -> Self {
        let code = err.code();
        let status = op.service.error(code).map(|e| e.status).unwrap_or(500);
        ToolFailure { code, status, problem: err.into_problem() }
    }

    /// The tool result's structured content: the service's error body, which in the envelope
    /// format also names the HTTP status the REST route would have answered.
    pub fn into_body(self, service: &ServiceInfo, request_id: Option<&str>) -> Value {
        let (code, status) = (self.code, self.status);
        let mut body = error_body(service, code, status, self.problem, request_id);
        if service.wire.errors == ErrorFormat::Envelope
            && let Some(Value::Object(error)) = body.get_mut("error")
        {
            error.shift_insert(1, "status".into(), Value::from(status));
        }
        body
    }
}

/// Answers 405 with the error envelope for a path served under other methods.
pub fn method_not_allowed(service: &'static ServiceInfo, parts: &Parts, allowed: &'static str) -> Response {
    let problem = Problem::new(format!("{} is not allowed here; use {allowed}", parts.method)).with("allowed", allowed);
    let mut resp = error_response(service, service.roles.method_not_allowed, problem, request_id(parts));
    resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allowed));
    resp
}

/// A path's [`MethodRouter`](axum::routing::MethodRouter) before its methods are added: any
/// other method is answered 405 with the error envelope and an `Allow` header naming `allowed`.
pub fn methods<St: Clone + Send + Sync + 'static>(
    service: &'static ServiceInfo,
    allowed: &'static str,
) -> axum::routing::MethodRouter<St> {
    axum::routing::MethodRouter::new().fallback(move |req: Request| async move {
        let (parts, _) = req.into_parts();
        method_not_allowed(service, &parts, allowed)
    })
}

/// One operation of service implementation `S` (whose callers are `C`), as the generic REST
/// handler [`rest`] and MCP dispatch [`tool`] call it. Generated per operation.
pub trait Endpoint<S, C>: 'static {
    /// The decoded input ([`NoInput`] when the operation takes none).
    type Input: DeserializeOwned + Send;
    /// The operation's closed error enum.
    type Error: OperationError;
    /// The operation's table entry.
    const OP: &'static Operation;
    /// Calls the service's method: what it answers on success, or its error.
    fn call(
        service: &S,
        caller: &C,
        input: Self::Input,
        paging: Paging,
    ) -> impl Future<Output = Reply<Self::Error>> + Send;
}

/// What [`Endpoint::call`] answers: the success, which the service's wire format writes, or the
/// operation's error `E`.
pub type Reply<E> = Result<Success, E>;

/// The router state of a generated service: its implementation and the gate admitting callers.
pub struct App<S, G> {
    /// The implementation.
    pub service: std::sync::Arc<S>,
    /// The gate.
    pub gate: std::sync::Arc<G>,
}

/// The axum handler of every operation `E`: admits and decodes the request, calls the service,
/// and answers the success body or the error envelope.
pub async fn rest<E, S, G>(
    axum::extract::State(app): axum::extract::State<std::sync::Arc<App<S, G>>>,
    req: Request,
) -> Response
where
    S: Send + Sync + 'static,
    G: Gate,
    E: Endpoint<S, G::Caller>,
{
    let op = E::OP;
    let (parts, caller, input, paging) = match admit::<G, E::Input>(&*app.gate, op, req).await {
        Ok(v) => v,
        Err(mut rejected) => {
            // Refusals of a deprecated operation say so too: a client learns it from any answer.
            if let Some(d) = op.deprecation {
                d.mark(&mut rejected);
            }
            return rejected;
        }
    };
    match E::call(&app.service, &caller, input, paging).await {
        Ok(body) => respond(&parts, op, body),
        Err(e) => respond_error(&parts, op, e),
    }
}

/// The MCP call of operation `E` for a caller the gate admitted: decodes the arguments and
/// answers the REST route's success body (`{}` for an empty one) or the failure.
pub async fn tool<E, S, G>(service: &S, gate: &G, caller: &G::Caller, arguments: Value) -> Result<Value, ToolFailure>
where
    G: Gate,
    E: Endpoint<S, G::Caller>,
{
    let (input, paging) = admit_arguments::<G, E::Input>(gate, caller, E::OP, arguments).await?;
    match E::call(service, caller, input, paging).await {
        Ok(success) => Ok(success.into_tool_body(E::OP.service)),
        Err(e) => Err(ToolFailure::from_error(E::OP, e)),
    }
}

/// What a tool call answers: `None` when the service has no tool of that name, else the same JSON
/// body the REST route answers or the failure.
pub type ToolOutcome = Option<Result<Value, ToolFailure>>;

/// A boxed tool call borrowing the gate, the caller and the name for `'a`.
pub type ToolCall<'a> = std::pin::Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// The MCP dispatch of one service: decodes a tool's arguments into its operation's input and
/// calls the same trait method as the REST route. Generated per service; the runtime calls it
/// through [`Api::call_tool`].
pub trait Tools<G: Gate>: Send + Sync + 'static {
    /// Calls tool `name` for a caller `gate` admitted.
    fn call<'a>(&'a self, gate: &'a G, caller: &'a G::Caller, name: &'a str, arguments: Value) -> ToolCall<'a>;
}

type RouterFactory<G> = Box<dyn Fn(std::sync::Arc<G>) -> axum::Router + Send + Sync>;

/// One generated service with its implementation, as one value a runtime serves without knowing
/// its types: its description ([`ServiceInfo`]: paths, scopes, plans, error catalog, documents),
/// its operation table, its router (built for the gate the runtime supplies) and, when the spec
/// declares an MCP endpoint, its tools and their dispatch. Made by the generated `api` function
/// of each service (`generated::<service>::api(implementation)`).
pub struct Api<G: Gate> {
    info: &'static ServiceInfo,
    operations: &'static [&'static Operation],
    router: RouterFactory<G>,
    tools: &'static [(&'static str, &'static Operation)],
    dispatch: Option<Box<dyn Tools<G>>>,
}

impl<G: Gate> std::fmt::Debug for Api<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("service", &self.info.name)
            .field("operations", &self.operations.len())
            .field("tools", &self.tools.len())
            .finish()
    }
}

impl<G: Gate> Api<G> {
    /// A service without MCP tools: its description, operation table and router factory.
    pub fn new(
        info: &'static ServiceInfo,
        operations: &'static [&'static Operation],
        router: impl Fn(std::sync::Arc<G>) -> axum::Router + Send + Sync + 'static,
    ) -> Self {
        Api { info, operations, router: Box::new(router), tools: &[], dispatch: None }
    }

    /// The same service with its MCP tools (name → operation) and their dispatch.
    pub fn with_tools(mut self, tools: &'static [(&'static str, &'static Operation)], dispatch: impl Tools<G>) -> Self {
        self.tools = tools;
        self.dispatch = Some(Box::new(dispatch));
        self
    }

    /// The service's description.
    pub fn info(&self) -> &'static ServiceInfo {
        self.info
    }

    /// Every operation, in spec order.
    pub fn operations(&self) -> &'static [&'static Operation] {
        self.operations
    }

    /// Tool name → operation, in spec order (empty without MCP).
    pub fn tools(&self) -> &'static [(&'static str, &'static Operation)] {
        self.tools
    }

    /// The operation of tool `name`.
    pub fn tool(&self, name: &str) -> Option<&'static Operation> {
        self.tools.iter().find(|(n, _)| *n == name).map(|(_, op)| *op)
    }

    /// Whether the service has MCP tools to serve (its spec declares an MCP path and tools).
    pub fn has_mcp(&self) -> bool {
        self.info.mcp_path.is_some() && self.dispatch.is_some()
    }

    /// The axum router of every operation, each admitted by `gate`.
    pub fn router(&self, gate: std::sync::Arc<G>) -> axum::Router {
        (self.router)(gate)
    }

    /// Calls tool `name` for a caller `gate` admitted; `None` when there is no such tool.
    pub fn call_tool<'a>(
        &'a self,
        gate: &'a G,
        caller: &'a G::Caller,
        name: &'a str,
        arguments: Value,
    ) -> ToolCall<'a> {
        match &self.dispatch {
            Some(d) => d.call(gate, caller, name, arguments),
            None => Box::pin(std::future::ready(None)),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The decoder's string rule on a hand-built operation covering every kind that holds strings.

    use super::*;

    const ROLES: ErrorRoles = ErrorRoles {
        unauthenticated: "unauthenticated",
        invalid_token: "invalid_token",
        insufficient_scope: "insufficient_scope",
        malformed: "malformed",
        validation: "invalid",
        payload_too_large: "too_large",
        unsupported_media_type: "media_type",
        not_found: "not_found",
        method_not_allowed: "method",
        rate_limited: "rate_limited",
        internal: "internal",
        request_timeout: "timeout",
        unavailable: "unavailable",
        precondition_failed: Some("stale"),
        precondition_required: Some("unconditional"),
        range_not_satisfiable: None,
    };

    static SERVICE: ServiceInfo = SERVICE_FIELDS;

    const SERVICE_FIELDS: ServiceInfo = ServiceInfo {
        name: "test",
        title: "Test",
        base_path: "/t",
        mcp_path: None,
        metadata_paths: &[],
        mcp_metadata_paths: &[],
        mcp_instructions: None,
        audit: false,
        stored_tokens: &[],
        scopes: &[],
        errors: &[ErrorInfo { code: "invalid", status: 422, message: "Invalid." }],
        roles: ROLES,
        wire: Wire::ENVELOPE,
        default_per_page: 20,
        max_per_page: 100,
        plans: &[],
        default_plan: None,
        openapi_json: "{}",
        openapi_30_json: "{}",
        tools_json: "[]",
        operations: || &[],
    };

    const fn field(name: &'static str, kind: Kind, secret: bool) -> FieldSpec {
        let f = FieldSpec::body(name, kind);
        if secret { f.secret() } else { f }
    }

    static INNER: [FieldSpec; 1] = [field("title", Kind::String, false)];

    static INPUT: [FieldSpec; 8] = [
        field("name", Kind::String, false),
        field("value", Kind::String, true),
        field("at", Kind::DateTime, false),
        field("mode", Kind::Enum(&["a", "b"]), false),
        field("tags", Kind::List(&Kind::String), false),
        field("inner", Kind::List(&Kind::Model(&INNER)), false),
        field("labels", Kind::Map(&Kind::String), false),
        field("extra", Kind::Json, false),
    ];

    static OP: Operation = Operation {
        id: "op",
        method: Method::Post,
        path: "/op",
        full_path: "/t/op",
        scope: "s",
        satisfied_by: &["s"],
        success_status: 200,
        has_body: true,
        no_store: false,
        rate_limited: false,
        read_only: false,
        paginated: false,
        deprecation: None,
        conditional: None,
        ranges: false,
        body: BodyFormat::Json,
        tool: None,
        input: &INPUT,
        service: &SERVICE,
    };

    /// `PUT /t/things`, requiring `If-Match`, and `GET` of the same, tagged.
    static GUARDED: Operation = Operation {
        id: "put",
        method: Method::Put,
        path: "/things",
        full_path: "/t/things",
        has_body: false,
        read_only: false,
        conditional: Some(Conditional::Write { required: true }),
        input: &[],
        ..OP
    };
    static TAGGED: Operation =
        Operation { id: "get", method: Method::Get, read_only: true, conditional: Some(Conditional::Read), ..GUARDED };

    #[derive(Debug, serde::Deserialize)]
    struct Guarded {
        #[serde(default)]
        if_match: IfMatch,
    }

    fn request(method: &str, headers: &[(&str, &str)]) -> Parts {
        let mut b = Request::builder().method(method).uri("/t/things");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap().into_parts().0
    }

    /// `{"total": …}` and any other key holding a positive integer.
    static COUNTS: [FieldSpec; 2] =
        [FieldSpec::body("total", Kind::Integer).required(), FieldSpec::body(OTHER_KEYS, Kind::Integer).minimum(1.0)];

    /// `POST /t/find`: a `page` of its own (not paginated), a flag with a default, any JSON.
    static FIND_INPUT: [FieldSpec; 3] = [
        FieldSpec::body("page", Kind::Integer),
        FieldSpec::body("hidden", Kind::Boolean).default("true"),
        FieldSpec::body("extra", Kind::Map(&Kind::Json)),
    ];
    static FIND: Operation = Operation { id: "find", input: &FIND_INPUT, ..OP };

    #[derive(Debug, serde::Deserialize)]
    struct Find {
        page: Option<i64>,
        hidden: bool,
        extra: Option<std::collections::BTreeMap<String, Value>>,
    }

    /// `PUT /t/tags`: an optional array as the whole body.
    static TAGS_INPUT: [FieldSpec; 1] = [FieldSpec::payload("tags", Kind::List(&Kind::String))];
    static TAGS: Operation = Operation { id: "tags", input: &TAGS_INPUT, ..OP };

    #[derive(Debug, serde::Deserialize)]
    struct Tags {
        tags: Option<Vec<String>>,
    }

    fn decode_json<I: DeserializeOwned>(op: &'static Operation, body: Option<&str>) -> Result<(I, Paging), Rejection> {
        let mut b = Request::builder().method("POST").uri("/t/op");
        if body.is_some() {
            b = b.header("content-type", "application/json");
        }
        let body = body.map_or_else(Body::empty, |t| Body::from(t.to_string()));
        let mut parts = b.body(()).unwrap().into_parts().0;
        block_on(decode_request::<Open, I>(&Open, &"caller", op, &mut parts, body))
    }

    #[test]
    fn null_for_an_optional_field_is_its_absence_and_gets_its_default() {
        let (find, _) = decode_json::<Find>(&FIND, Some(r#"{"hidden": null}"#)).expect("null is absent");
        assert!(find.hidden, "the default");
        let (find, _) = decode_json::<Find>(&FIND, Some(r#"{"hidden": false}"#)).unwrap();
        assert!(!find.hidden);
    }

    #[test]
    fn an_operation_that_is_not_paginated_keeps_a_page_field_of_its_own() {
        let (find, paging) = decode_json::<Find>(&FIND, Some(r#"{"page": 7}"#)).expect("its own field");
        assert_eq!((find.page, paging.page), (Some(7), 1));
    }

    #[test]
    fn any_json_value_may_be_null() {
        let (find, _) =
            decode_json::<Find>(&FIND, Some(r#"{"extra": {"a": null, "b": [null]}}"#)).expect("null is JSON");
        assert_eq!(find.extra.unwrap()["a"], Value::Null);
    }

    #[test]
    fn an_optional_payload_may_be_left_out_with_no_body_at_all() {
        let (tags, _) = decode_json::<Tags>(&TAGS, None).expect("no body, no media type to check");
        assert_eq!(tags.tags, None);
        let (tags, _) = decode_json::<Tags>(&TAGS, Some(r#"["a"]"#)).unwrap();
        assert_eq!(tags.tags, Some(vec!["a".to_string()]));
    }

    #[test]
    fn keys_beside_the_fields_are_checked_as_the_map_says() {
        let check = |v: Value| check_object(&SERVICE, &COUNTS, "", v.as_object().unwrap());
        assert!(check(json!({"total": 3, "draft": 2, "archived": 1})).is_ok());
        assert!(check(json!({"total": 0})).is_ok(), "no other key");
        let refused = check(json!({"total": 3, "draft": "two"})).expect_err("a string");
        assert_eq!(refused.problem.details["field"], "draft");
        let refused = check(json!({"total": 3, "draft": 0})).expect_err("below the minimum");
        assert_eq!(refused.problem.details["field"], "draft");
        assert!(check(json!({"total": 3, "draft": null})).is_err(), "a value, not null");
        assert!(check(json!({"draft": 1})).is_err(), "the named fields are still required");
        assert!(check(json!({"total": 3, "a\u{0}b": 1})).is_err(), "no NUL in a key");
    }

    #[test]
    fn a_write_that_requires_if_match_is_refused_without_it_and_receives_it_with_it() {
        let decode = |headers: &[(&str, &str)]| {
            let mut parts = request("PUT", headers);
            block_on(decode_request::<Open, Guarded>(&Open, &"caller", &GUARDED, &mut parts, Body::empty()))
        };
        let refused = decode(&[]).expect_err("no If-Match");
        assert_eq!(refused.code, "unconditional", "the service's precondition_required code");
        let (input, _) = decode(&[("if-match", "\"v1\""), ("if-match", "\"v2\"")]).expect("two lines, one list");
        assert_eq!(input.if_match, IfMatch::parse("\"v1\", \"v2\""));
        assert!(input.if_match.check(&json!("anything")).is_err(), "neither names the current version");
        let (garbage, _) = decode(&[("if-match", "v1")]).expect("present: the condition is the implementation's");
        assert!(garbage.if_match.check(&json!("anything")).is_err(), "not an entity tag: it matches no version");
    }

    #[test]
    fn a_tagged_read_answers_its_etag_and_304_when_the_client_holds_it() {
        let body = json!({"id": "t1"});
        let tag = etag(&body);
        let fresh = respond(&request("GET", &[]), &TAGGED, Success::One(body.clone()));
        assert_eq!((fresh.status().as_u16(), fresh.headers()["etag"].to_str().unwrap()), (200, tag.as_str()));
        let held = respond(&request("GET", &[("if-none-match", &tag)]), &TAGGED, Success::One(body.clone()));
        assert_eq!((held.status().as_u16(), held.headers()["etag"].to_str().unwrap()), (304, tag.as_str()));
        let written = respond(&request("PUT", &[("if-none-match", &tag)]), &GUARDED, Success::One(body));
        assert_eq!(written.status().as_u16(), 200, "a write answers its tag but never 304");
        assert_eq!(written.headers()["etag"].to_str().unwrap(), tag);
        let untagged = respond(&request("GET", &[]), &OP, Success::One(json!({})));
        assert!(untagged.headers().get("etag").is_none(), "only conditional operations are tagged");
    }

    #[test]
    fn declared_headers_reach_the_answer_and_broken_values_are_left_out() {
        let answer =
            Success::Empty.header("location", "https://example.com/x").header("retry-after", 5).header("x-bad", "a\nb");
        let resp = respond(&request("POST", &[]), &OP, answer);
        assert_eq!(resp.headers()["location"], "https://example.com/x");
        assert_eq!(resp.headers()["retry-after"], "5");
        assert!(resp.headers().get("x-bad").is_none());
    }

    /// The field the decoder names when it refuses `arguments`, and the value it echoes.
    fn refused(arguments: Value) -> (String, Value) {
        let r = decode_arguments::<Value>(&OP, arguments).expect_err("a NUL is refused");
        assert_eq!(r.code, "invalid", "the service's validation error: {r:?}");
        assert!(r.problem.message.contains("must not contain U+0000 (NUL)"), "the message says why: {r:?}");
        let field = r.problem.details["field"].as_str().unwrap_or_default().to_string();
        (field, r.problem.details["value"].clone())
    }

    #[test]
    fn a_nul_anywhere_in_a_string_is_refused_naming_where() {
        let cases = [
            (json!({"name": "a\u{0}b"}), "name"),
            (json!({"at": "2030-01-01T00:00:00Z\u{0}"}), "at"),
            (json!({"mode": "a\u{0}"}), "mode"),
            (json!({"tags": ["ok", "\u{0}"]}), "tags[1]"),
            (json!({"inner": [{"title": "t"}, {"title": "t\u{0}"}]}), "inner[1].title"),
            (json!({"labels": {"k": "v\u{0}"}}), "labels.k"),
            (json!({"labels": {"k\u{0}": "v"}}), "labels.k\u{0}"),
            (json!({"extra": {"k": [1, "x\u{0}"]}}), "extra.k[1]"),
            (json!({"extra": {"k\u{0}": true}}), "extra.k\u{0}"),
            (json!({"extra": "\u{0}"}), "extra"),
        ];
        for (arguments, want) in cases {
            let (field, _) = refused(arguments.clone());
            assert_eq!(field, want, "for {arguments}");
        }
    }

    #[test]
    fn a_refused_secret_is_still_not_echoed() {
        assert_eq!(refused(json!({"value": "s3cret\u{0}"})), ("value".to_string(), json!("[redacted]")));
    }

    #[test]
    fn strings_without_a_nul_pass() {
        let arguments = json!({"name": "a b", "value": "v", "at": "2030-01-01T00:00:00Z", "mode": "a", "tags": ["x"],
                               "inner": [{"title": "t"}], "labels": {"k": "v"}, "extra": {"k": ["\\u0000 spelled out"]}});
        let (input, _) = decode_arguments::<Value>(&OP, arguments.clone()).expect("accepted");
        assert_eq!(input, arguments);
    }

    /// A gate admitting everyone as `"caller"`.
    struct Open;

    impl Gate for Open {
        type Caller = &'static str;

        async fn admit(&self, _: &mut Parts, _: &'static Operation) -> Result<Self::Caller, Response> {
            Ok("caller")
        }

        async fn refused(&self, _: &Self::Caller, _: &'static Operation, _: &'static str, _: u16) {}

        fn body_limit(&self) -> usize {
            1024
        }
    }

    /// Echoes the tool name and the caller, as a generated dispatch calls its trait method.
    struct Echo;

    impl Tools<Open> for Echo {
        fn call<'a>(&'a self, _: &'a Open, caller: &'a &'static str, name: &'a str, arguments: Value) -> ToolCall<'a> {
            Box::pin(
                async move { (name == "test.op").then(|| Ok(json!({ "caller": caller, "arguments": arguments }))) },
            )
        }
    }

    static TOOLS: [(&str, &Operation); 1] = [("test.op", &OP)];
    static OPERATIONS: [&Operation; 1] = [&OP];

    fn block_on<F: Future>(f: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut f = std::pin::pin!(f);
        loop {
            if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    #[test]
    fn an_api_without_tools_serves_no_mcp_and_calls_no_tool() {
        let api: Api<Open> = Api::new(&SERVICE, &OPERATIONS, |_| axum::Router::new());
        assert_eq!(api.info().name, "test");
        assert_eq!(api.operations().len(), 1);
        assert!(!api.has_mcp() && api.tools().is_empty() && api.tool("test.op").is_none());
        assert_eq!(block_on(api.call_tool(&Open, &"caller", "test.op", json!({}))), None);
    }

    #[test]
    fn an_api_with_tools_finds_their_operations_and_dispatches_calls() {
        let api: Api<Open> = Api::new(&SERVICE, &OPERATIONS, |_| axum::Router::new()).with_tools(&TOOLS, Echo);
        assert_eq!(api.tool("test.op").map(|op| op.id), Some("op"));
        assert!(api.tool("test.other").is_none());
        // The service declares no MCP path, so there is no endpoint to serve the tools at.
        assert!(!api.has_mcp());
        let answer = block_on(api.call_tool(&Open, &"caller", "test.op", json!({ "a": 1 })));
        assert_eq!(answer, Some(Ok(json!({ "caller": "caller", "arguments": { "a": 1 } }))));
        assert_eq!(block_on(api.call_tool(&Open, &"caller", "nope", json!({}))), None);
    }

    static TIERED: ServiceInfo = ServiceInfo {
        scopes: &[
            ScopeInfo { name: "r", description: "", implies: &[] },
            ScopeInfo { name: "w", description: "", implies: &["r"] },
            ScopeInfo { name: "a", description: "", implies: &["w"] },
        ],
        ..SERVICE_FIELDS
    };

    #[test]
    fn scopes_satisfy_what_they_imply_and_nothing_above() {
        assert!(TIERED.satisfies(["a"], "r") && TIERED.satisfies(["w"], "w") && TIERED.satisfies(["r"], "r"));
        assert!(!TIERED.satisfies(["r"], "w") && !TIERED.satisfies(["w"], "a") && !TIERED.satisfies([], "r"));
        assert!(!TIERED.satisfies(["unknown"], "r"));
    }

    const PROBLEM_FIELDS: ServiceInfo = ServiceInfo {
        errors: &[
            ErrorInfo { code: "invalid", status: 422, message: "Invalid." },
            ErrorInfo { code: "rate_limited", status: 429, message: "Too many requests." },
        ],
        wire: Wire { success: SuccessFormat::Envelope, errors: ErrorFormat::Problem { types: None } },
        ..SERVICE_FIELDS
    };

    static PROBLEMS: ServiceInfo = PROBLEM_FIELDS;

    #[test]
    fn each_format_accepts_its_values_and_nothing_else() {
        let cases: [(Format, &[&str], &[&str]); 7] = [
            (
                Format::Uuid,
                &["0190c3e8-5b7a-7cc0-9d1e-2f3a4b5c6d7e", "0190C3E8-5B7A-7CC0-9D1E-2F3A4B5C6D7E"],
                &[
                    "0190c3e85b7a7cc09d1e2f3a4b5c6d7e",
                    "0190c3e8-5b7a-7cc0-9d1e-2f3a4b5c6d7",
                    "g190c3e8-5b7a-7cc0-9d1e-2f3a4b5c6d7e",
                ],
            ),
            (
                Format::Email,
                &["ann@example.com", "a.b+c@mail.example.org", "x@localhost"],
                &["ann", "@example.com", "ann@", "ann@exa mple.com", "ann@-example.com", "\"a b\"@example.com"],
            ),
            (
                Format::Uri,
                &["https://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:ann@example.com", "https://x/%20"],
                &["/relative/path", "example.com", "https://exa mple.com", "1http://x", "https://x/%2", "https://x/é"],
            ),
            (Format::Ipv4, &["192.0.2.1", "0.0.0.0"], &["192.0.2", "256.0.0.1", "192.0.2.1/24", "::1"]),
            (Format::Ipv6, &["::1", "2001:db8::8a2e:370:7334"], &["192.0.2.1", "2001:db8:::1", "fe80::1%eth0"]),
            (
                Format::Hostname,
                &["example.com", "a-b.example", "localhost"],
                &["", "-a.example", "a_b.example", "example..com", &"a".repeat(64)],
            ),
            (Format::Byte, &["", "aGk=", "iVBORw0KGgo="], &["aGk", "aGk==", "a-b_", "aGk= ", "****"]),
        ];
        for (format, good, bad) in cases {
            for v in good {
                assert!(format.accepts(v), "{} should accept {v:?}", format.as_str());
            }
            for v in bad {
                assert!(!format.accepts(v), "{} should refuse {v:?}", format.as_str());
            }
        }
    }

    static OWN_MODEL: ServiceInfo = ServiceInfo {
        wire: Wire {
            success: SuccessFormat::Bare,
            errors: ErrorFormat::Model(&ErrorModel {
                code: "error.code",
                message: "error.message",
                status: Some("error.status"),
                details: Some("error.details"),
                request_id: Some("trace_id"),
            }),
        },
        ..PROBLEM_FIELDS
    };

    #[tokio::test]
    async fn an_error_model_of_the_service_own_carries_each_role_at_its_path() {
        let problem = Problem::new("Bad title.").with("field", "title");
        let (status, headers, body) = answer(&OWN_MODEL, "invalid", problem).await;
        assert_eq!((status.as_u16(), &headers["content-type"]), (422, &HeaderValue::from_static("application/json")));
        assert_eq!(
            body,
            json!({"error": {"code": "invalid", "message": "Bad title.", "status": 422, "details": {"field": "title"}},
                   "trace_id": "req-1"})
        );
        // Without a request id, the member is left out rather than null.
        let body = error_body(&OWN_MODEL, "invalid", 422, Problem::new("x"), None);
        assert!(body.get("trace_id").is_none(), "{body}");
    }

    #[test]
    fn page_links_keep_the_query_and_name_the_pages_around_this_one() {
        let at = |page, per_page| Paging { page, per_page };
        assert_eq!(
            page_links(Some("tag=a%20b&page=2&per_page=10&tag=c"), 35, at(2, 10)),
            "<?tag=a+b&tag=c&page=1&per_page=10>; rel=\"first\", <?tag=a+b&tag=c&page=1&per_page=10>; rel=\"prev\", \
             <?tag=a+b&tag=c&page=3&per_page=10>; rel=\"next\", <?tag=a+b&tag=c&page=4&per_page=10>; rel=\"last\""
        );
        // No items: one (empty) page, which is the first and the last.
        assert_eq!(
            page_links(None, 0, at(1, 20)),
            "<?page=1&per_page=20>; rel=\"first\", <?page=1&per_page=20>; rel=\"last\""
        );
        // Past the end: the previous page is the last one, and there is no next.
        assert_eq!(
            page_links(None, 5, at(9, 2)),
            "<?page=1&per_page=2>; rel=\"first\", <?page=3&per_page=2>; rel=\"prev\", <?page=3&per_page=2>; rel=\"last\""
        );
    }

    static TYPED_PROBLEMS: ServiceInfo = ServiceInfo {
        wire: Wire {
            success: SuccessFormat::Envelope,
            errors: ErrorFormat::Problem { types: Some("https://api.example.com/problems/") },
        },
        ..PROBLEM_FIELDS
    };

    async fn answer(service: &ServiceInfo, code: &str, problem: Problem) -> (StatusCode, axum::http::HeaderMap, Value) {
        let resp = error_response(service, code, problem, Some("req-1"));
        let (status, headers) = (resp.status(), resp.headers().clone());
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        (status, headers, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn the_envelope_format_answers_as_it_always_has() {
        let problem = Problem::new("Bad title.").with("field", "title");
        let (status, headers, body) = answer(&SERVICE, "invalid", problem).await;
        assert_eq!(status, 422);
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(
            body,
            json!({"error": {"code": "invalid", "message": "Bad title.", "details": {"field": "title"}, "request_id": "req-1"}})
        );
    }

    #[tokio::test]
    async fn problem_details_carry_the_rfc_members_the_code_and_each_detail() {
        let problem = Problem::new("Bad title.").with("field", "title").with("value", 3);
        let (status, headers, body) = answer(&PROBLEMS, "invalid", problem.clone()).await;
        assert_eq!(status, 422);
        assert_eq!(headers["content-type"], PROBLEM_JSON);
        assert_eq!(headers["x-request-id"], "req-1");
        // Without a base URI of problem types, `about:blank` and the status phrase (RFC 9457 4.2.1).
        assert_eq!(
            body,
            json!({"type": "about:blank", "title": "Unprocessable Entity", "status": 422, "detail": "Bad title.",
                   "code": "invalid", "request_id": "req-1", "field": "title", "value": 3})
        );
        let (_, _, typed) = answer(&TYPED_PROBLEMS, "invalid", problem).await;
        assert_eq!(typed["type"], "https://api.example.com/problems/invalid");
        assert_eq!(typed["title"], "Invalid.", "the catalog message titles a typed problem");
    }

    #[tokio::test]
    async fn a_problem_that_says_when_to_retry_says_it_in_the_header_too() {
        let (status, headers, body) =
            answer(&PROBLEMS, "rate_limited", Problem::new("Slow down.").with("retry_after", 7)).await;
        assert_eq!((status.as_u16(), &headers["retry-after"]), (429, &HeaderValue::from(7)));
        assert_eq!(body["retry_after"], 7);
    }

    #[tokio::test]
    async fn a_detail_never_overwrites_a_member_of_the_problem() {
        let mut problem = Problem::new("Bad.");
        problem.details.insert("status".into(), json!("forged"));
        let (_, _, body) = answer(&PROBLEMS, "invalid", problem).await;
        assert_eq!(body["status"], 422);
    }

    #[test]
    #[should_panic(expected = "would overwrite a problem details member")]
    fn a_detail_named_like_a_member_is_refused_where_it_is_built() {
        let _ = Problem::new("Bad.").with("type", "x");
    }

    #[test]
    fn a_tool_failure_carries_the_service_error_body() {
        let failure = ToolFailure { code: "invalid", status: 422, problem: Problem::new("Bad.") };
        let body = failure.clone().into_body(&SERVICE, Some("r"));
        assert_eq!(
            body,
            json!({"error": {"code": "invalid", "status": 422, "message": "Bad.", "details": {}, "request_id": "r"}})
        );
        let problem = failure.clone().into_body(&PROBLEMS, Some("r"));
        assert_eq!((problem["status"].as_u64(), problem["code"].as_str()), (Some(422), Some("invalid")));
        // A model of the service's own is written as it is declared, nothing added.
        let own = failure.into_body(&OWN_MODEL, Some("r"));
        assert_eq!(
            own,
            json!({"error": {"code": "invalid", "message": "Bad.", "status": 422, "details": {}}, "trace_id": "r"})
        );
    }
}

#[cfg(test)]
mod conflict_role {
    //! `operation_errors!`'s `conflict`: the variant of the service's conflict code, in the enums
    //! that have it.

    use super::{InternalError, OperationError, Problem};

    mod with_role {
        crate::operation_errors! {
            internal: Internal, unavailable: Unavailable, conflict: "exists";
            Create { Exists = "exists", Internal = "internal", Unavailable = "unavailable" }
            Read { Missing = "missing", Internal = "internal", Unavailable = "unavailable" }
        }
    }

    mod without_role {
        crate::operation_errors! {
            internal: Internal, unavailable: Unavailable;
            Create { Exists = "exists", Internal = "internal", Unavailable = "unavailable" }
        }
    }

    #[test]
    fn the_conflict_variant_exists_only_where_the_operation_declares_the_code() {
        let made = with_role::Create::conflict(Problem::new("taken")).expect("Create declares it");
        assert_eq!(made.code(), "exists");
        assert_eq!(made.into_problem().message, "taken");
        assert_eq!(with_role::Read::conflict(Problem::new("taken")), None, "Read does not declare it");
        assert_eq!(without_role::Create::conflict(Problem::new("taken")), None, "no role: never mapped");
    }
}
