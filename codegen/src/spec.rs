//! The spec format: what a `spec/<service>.toml` file may say, as serde + schemars types.
//!
//! These types are the single definition of the format: the loader deserializes into them and
//! `codegen/spec.schema.json` is emitted from them, so editors and the generator agree.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One service: its routes, MCP tools, scopes, errors, models and limits.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Who the service is and where it is served.
    pub service: Service,
    /// The OAuth 2.0 security scheme and its scope catalog.
    pub security: Security,
    /// Pagination rules applied to every operation marked `paginated` (default: 20 per page, at
    /// most 100).
    #[serde(default)]
    pub pagination: Pagination,
    /// Rate-limit plans. Omit for a service without per-plan limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limits: Option<RateLimits>,
    /// The error catalog: error code → HTTP status and default message. A code an error role
    /// points at that the catalog lacks comes from the prelude (`unauthenticated`
    /// 401, `invalid_token` 401, `insufficient_scope` 403, `malformed` 400, `validation` 422,
    /// `payload_too_large` 413, `unsupported_media_type` 415, `not_found` 404,
    /// `method_not_allowed` 405, `rate_limited` 429, `internal` 500, `request_timeout` 408,
    /// `unavailable` 503, and `not_implemented` 501 when `service_wide` lists it); declare a code
    /// here to give it your own message, or add codes of your own.
    #[serde(default)]
    pub errors: IndexMap<String, ErrorDef>,
    /// Which catalog code the runtime uses for each failure it detects itself. Each role
    /// defaults to the prelude code of the same name; set one to use a code of your own.
    #[serde(default)]
    pub error_roles: ErrorRoles,
    /// How bodies are written on the wire; every answer of the service follows it, the
    /// platform's own refusals (401, 403, 404, 405, 413, 415, 422, 429, 503) included.
    #[serde(default, skip_serializing_if = "Wire::is_default")]
    pub wire: Wire,
    /// Closed sets of string values, optionally with a state machine.
    #[serde(default)]
    pub enums: IndexMap<String, EnumDef>,
    /// Request and response payloads.
    #[serde(default)]
    pub models: IndexMap<String, ModelDef>,
    /// Values of one of several models: tagged by a field naming the variant, or told apart by
    /// the required fields each variant alone has.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub unions: IndexMap<String, UnionDef>,
    /// Every route (and the MCP tool that shares it), in order: either an array of tables
    /// (`[[operations]]`, each with its `id`) or a table keyed by id (`[operations.list_things]`).
    #[serde(default, deserialize_with = "operations_in_either_form")]
    #[schemars(with = "OperationsForm")]
    pub operations: Vec<OperationDef>,
    /// Events the service sends to the URLs its subscribers register (OpenAPI 3.1 `webhooks`),
    /// keyed by event type (`note.changed`). Each delivery is signed as the Standard Webhooks
    /// specification says and retried with backoff until the receiver answers 2xx.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub webhooks: IndexMap<String, WebhookDef>,
    /// MCP prompts (`prompts/list`, `prompts/get`): messages of text, images and embedded
    /// resources, filled in from the caller's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<PromptDef>,
}

/// An event a service sends to its subscribers.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookDef {
    /// One-line summary.
    pub summary: String,
    /// Longer description (Markdown): when the event is sent.
    #[serde(default)]
    pub description: String,
    /// The model of the event's `data`.
    pub payload: String,
    /// OpenAPI tags.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// How a service writes its bodies.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Wire {
    /// How success bodies are written: `envelope` (the default: `{"data": …}`, a page with
    /// `meta`) or `bare` (the output as it is; a page is the array of its items, with
    /// `X-Total-Count` and an RFC 8288 `Link` header).
    pub success: SuccessFormat,
    /// How errors are written: `envelope` (the default), `problem`, or an error model of the
    /// service's own (`{ model = "ApiError", code = "code", message = "message" }`).
    pub errors: ErrorFormat,
    /// With `errors = "problem"`: the base URI of the problem types, an absolute `http(s)` URI
    /// ending in `/`. Each problem's `type` is this followed by its code, and its `title` the
    /// code's catalog message. Without it, `type` is `about:blank` and `title` the status's
    /// reason phrase (RFC 9457 section 4.2.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem_types: Option<String>,
}

impl Wire {
    pub(crate) fn is_default(&self) -> bool {
        *self == Wire::default()
    }
}

/// How an operation's documents state its success status, from the most precise to the least: a
/// client reads any status the documents allow as a success, so moving down this list breaks it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusDocumented {
    /// The status itself (`200`).
    #[default]
    Exact,
    /// Its class only: `2XX` where the status would be (as many documents write it, Microsoft
    /// Graph's every one).
    Range,
    /// `default` where the status would be (as documents converted from Swagger 2 often write
    /// their only answer).
    Default,
    /// Not at all: the documents list only the errors, as documents that describe nothing but
    /// their failures do.
    None,
}

impl StatusDocumented {
    /// Whether the documents state the status itself (what a spec need not say).
    pub fn is_exact(&self) -> bool {
        *self == Self::Exact
    }

    /// How a spec writes it (`"range"`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Range => "range",
            Self::Default => "default",
            Self::None => "none",
        }
    }
}

/// How a service writes its success bodies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SuccessFormat {
    /// `{"data": output}`; a page is `{"data": [items], "meta": {"total", "page", "per_page"}}`.
    #[default]
    Envelope,
    /// The output as it is; a page is the array of its items, with `X-Total-Count` and a `Link`
    /// header (RFC 8288: `first`, `prev`, `next`, `last`).
    Bare,
}

/// How a service writes its errors: `"envelope"`, `"problem"`, or a table naming an error model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(into = "ErrorsForm")]
#[schemars(with = "ErrorsForm")]
pub enum ErrorFormat {
    /// `{"error": {"code", "message", "details", "request_id"}}` as `application/json`.
    #[default]
    Envelope,
    /// RFC 9457 problem details as `application/problem+json`: `type`, `title`, `status`,
    /// `detail`, and the extension members `code`, `request_id` and each detail of the error.
    Problem,
    /// A model of the spec, as `application/json`.
    Model(ErrorModel),
}

/// How `errors` is written in the TOML.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
enum ErrorsForm {
    /// `"envelope"` (the default) or `"problem"`.
    Named(ErrorFormatName),
    /// The service's own error model.
    Model(ErrorModel),
}

/// The error formats the platform defines.
#[derive(Debug, Clone, PartialEq, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ErrorFormatName {
    /// `{"error": {"code", "message", "details", "request_id"}}`.
    Envelope,
    /// RFC 9457 problem details.
    Problem,
}

/// A name reads as the format it names; a table as an error model, with the model's own
/// messages for what is wrong in it (an unknown or missing key).
impl<'de> Deserialize<'de> for ErrorFormat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = ErrorFormat;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(r#""envelope", "problem", or an error model like { model = "ApiError", code = "code", message = "message" }"#)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ErrorFormat, E> {
                match v {
                    "envelope" => Ok(ErrorFormat::Envelope),
                    "problem" => Ok(ErrorFormat::Problem),
                    other => Err(E::unknown_variant(other, &["envelope", "problem"])),
                }
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<ErrorFormat, A::Error> {
                ErrorModel::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(ErrorFormat::Model)
            }
        }
        d.deserialize_any(Visit)
    }
}

impl From<ErrorFormat> for ErrorsForm {
    fn from(format: ErrorFormat) -> Self {
        match format {
            ErrorFormat::Envelope => ErrorsForm::Named(ErrorFormatName::Envelope),
            ErrorFormat::Problem => ErrorsForm::Named(ErrorFormatName::Problem),
            ErrorFormat::Model(m) => ErrorsForm::Model(m),
        }
    }
}

/// An error model of the service's own: which of its fields carry what the platform knows of an
/// error. Each is a field name, or names joined by `.` through nested models (`error.code`).
/// Every other field of the models on those paths must be optional: nothing fills it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorModel {
    /// The model (of `[models]`) every error is written as.
    pub model: String,
    /// The string field that carries the catalog code.
    pub code: String,
    /// The string field that carries the message.
    pub message: String,
    /// The integer field that carries the HTTP status, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The `json` (or `map<json>`) field that carries the details (`field`, `value`, `required`,
    /// `retry_after`, …), if any; without it they are not written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// The string field that carries the request's `X-Request-Id`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl ErrorModel {
    /// Each role with its path and the type its field must have, in a fixed order.
    pub fn roles(&self) -> Vec<(&'static str, &str)> {
        let mut out = vec![("code", self.code.as_str()), ("message", self.message.as_str())];
        for (role, path) in [("status", &self.status), ("details", &self.details), ("request_id", &self.request_id)] {
            if let Some(p) = path {
                out.push((role, p.as_str()));
            }
        }
        out
    }
}

/// Service identity.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// Short snake_case name; names the generated module and the OpenAPI file.
    pub name: String,
    /// Human title of the API.
    pub title: String,
    /// Version of the API document (semver).
    pub version: String,
    /// What the service does (Markdown).
    pub description: String,
    /// Path prefix under which every operation path is served, e.g. `/api/v1`.
    pub base_path: String,
    /// Path of the MCP endpoint when the service exposes MCP tools, e.g. `/api/mcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_path: Option<String>,
    /// Paths where the Protected Resource Metadata (RFC 9728) of the REST API is served besides the
    /// path RFC 9728 derives from `base_path` (`/.well-known/oauth-protected-resource/api/v1`),
    /// which is always served. Challenges announce the first of these, else the derived one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metadata_paths: Vec<String>,
    /// As `metadata_paths`, for the MCP endpoint's document (needs `mcp_path`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_metadata_paths: Vec<String>,
    /// What MCP clients are told when they connect (`instructions` of the initialize result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_instructions: Option<String>,
    /// Whether every scoped operation leaves a row in the platform's audit log: allowed, denied
    /// (scope) and failed (refused input, errors, timeouts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub audit: bool,
    /// OpenAPI tags, in display order.
    #[serde(default)]
    pub tags: Vec<TagDef>,
}

/// An OpenAPI tag.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagDef {
    /// Tag name as used by operations.
    pub name: String,
    /// What the operations under this tag are about.
    pub description: String,
}

/// OAuth 2.0 security scheme.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Security {
    /// Authorization endpoint, relative to the issuer (documentation of the OAuth flow); the
    /// embedded authorization server's `/oauth/authorize` unless set.
    #[serde(default = "default_authorization_url")]
    pub authorization_url: String,
    /// Token endpoint, relative to the issuer; the embedded authorization server's
    /// `/oauth/token` unless set.
    #[serde(default = "default_token_url")]
    pub token_url: String,
    /// The scope catalog, lowest tier first.
    pub scopes: Vec<ScopeDef>,
    /// Kinds of stored (opaque, hashed) tokens the REST API accepts besides the issuer's JWTs:
    /// `personal` (personal access tokens, `swp_…`) and `api` (API tokens with a rate-limit plan,
    /// `prs_…`). Tokens of a kind are minted for the REST APIs that accept it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_tokens: Vec<StoredToken>,
}

fn default_authorization_url() -> String {
    "/oauth/authorize".into()
}

fn default_token_url() -> String {
    "/oauth/token".into()
}

/// A kind of stored token the platform keeps (hashed) and checks on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoredToken {
    /// Personal access tokens of a user (`swp_…`).
    Personal,
    /// API tokens carrying a rate-limit plan (`prs_…`).
    Api,
}

impl StoredToken {
    /// The name the runtime reads.
    pub fn as_str(self) -> &'static str {
        match self {
            StoredToken::Personal => "personal",
            StoredToken::Api => "api",
        }
    }
}

/// One OAuth scope.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeDef {
    /// Scope name as it appears in tokens, e.g. `orders:read`.
    pub name: String,
    /// What the scope grants, shown on consent screens and in the OpenAPI scheme.
    pub description: String,
    /// Scopes this one includes (a token carrying this scope satisfies them too).
    #[serde(default)]
    pub implies: Vec<String>,
}

/// Pagination rules; each defaults to the prelude's (20 per page, at most 100).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Pagination {
    /// `per_page` used when the request gives none.
    pub default_per_page: u32,
    /// Largest accepted `per_page`; larger values are a validation error, never clamped.
    pub max_per_page: u32,
}

impl Default for Pagination {
    fn default() -> Self {
        Pagination { default_per_page: 20, max_per_page: 100 }
    }
}

/// Rate-limit plans, applied per token.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimits {
    /// Plan used when a token names none.
    pub default_plan: String,
    /// Plans by name.
    pub plans: IndexMap<String, PlanDef>,
}

/// One rate-limit plan.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanDef {
    /// Display name, e.g. `Starter`.
    pub title: String,
    /// Requests allowed per minute.
    pub per_minute: u32,
    /// Requests allowed per day.
    pub per_day: u32,
}

/// One entry of the error catalog.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorDef {
    /// HTTP status answered with this code.
    pub status: u16,
    /// Default human message.
    pub message: String,
    /// When this error happens.
    pub description: String,
}

/// The standard error catalog every spec inherits: (code, status, message, description), each
/// code but the last also the name of the [`ErrorRoles`] role that defaults to it. A spec that
/// leaves a role at its default and does not declare the code gets this definition of it; the
/// last, `not_implemented`, is there for a spec that lists it in `service_wide` while its
/// operations are being written (`cargo xtask new-service` starts that way).
pub const PRELUDE: [(&str, u16, &str, &str); 17] = [
    ("unauthenticated", 401, "Authentication required.", "No credentials were sent."),
    (
        "invalid_token",
        401,
        "The token is invalid.",
        "The token is malformed, expired, revoked or issued for another audience.",
    ),
    ("insufficient_scope", 403, "The token's scope is too low.", "The token lacks the operation's scope."),
    ("malformed", 400, "The body is not valid JSON.", "The request body could not be parsed."),
    ("validation", 422, "Invalid input.", "A field or parameter is invalid; the details name it."),
    ("payload_too_large", 413, "The body is too large.", "The request body exceeds the server's limit."),
    ("unsupported_media_type", 415, "Send JSON.", "The request body is not `application/json`."),
    ("not_found", 404, "Not found.", "No route matches, or the object does not exist for this caller."),
    ("method_not_allowed", 405, "Method not allowed.", "The path does not accept this method."),
    ("rate_limited", 429, "Slow down.", "The caller's rate limit is exhausted; `Retry-After` says when to retry."),
    ("internal", 500, "Internal error.", "An unexpected fault."),
    (
        "request_timeout",
        408,
        "The request took too long.",
        "The request was not complete within the server's time limit.",
    ),
    (
        "unavailable",
        503,
        "Temporarily unavailable.",
        "The server's storage is unreachable; `Retry-After` says when to retry.",
    ),
    (
        "precondition_failed",
        412,
        "The resource changed since the version If-Match names.",
        "`If-Match` names another version than the current one: read it again (its `ETag`), then retry.",
    ),
    (
        "precondition_required",
        428,
        "Send If-Match.",
        "The operation changes a resource only with `If-Match` naming the version read (its `ETag`).",
    ),
    (
        "range_not_satisfiable",
        416,
        "No byte of the file is in the range asked for.",
        "The `Range` starts past the file's end; `Content-Range` gives its length.",
    ),
    (
        UNWRITTEN,
        501,
        "Not implemented yet.",
        "The operation is in the spec but its implementation is not written yet; nothing was changed.",
    ),
];

/// The prelude's code for an operation whose implementation is not written yet (501): what every
/// method of a new implementation answers, and what an imported spec lists among its
/// service-wide errors.
pub const UNWRITTEN: &str = "not_implemented";

/// The catalog codes the runtime uses for failures it detects before or around a handler. Every
/// role defaults to the prelude code of its name.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ErrorRoles {
    /// No credentials were sent (401).
    pub unauthenticated: String,
    /// Credentials were sent but are invalid, expired, revoked or for another audience (401).
    pub invalid_token: String,
    /// The token's scopes do not reach the operation's required scope (403).
    pub insufficient_scope: String,
    /// The body is not valid JSON (400).
    pub malformed: String,
    /// A field or parameter has a wrong type, is unknown, or breaks a constraint (422).
    pub validation: String,
    /// The body is larger than the limit (413).
    pub payload_too_large: String,
    /// The body is not `application/json` (415).
    pub unsupported_media_type: String,
    /// No route matches the path, or the object does not exist for this caller (404).
    pub not_found: String,
    /// The path exists but not with this method (405).
    pub method_not_allowed: String,
    /// The caller's rate limit is exhausted (429).
    pub rate_limited: String,
    /// An unexpected server fault (500).
    pub internal: String,
    /// The request (body included) took longer than the server allows (408).
    pub request_timeout: String,
    /// The server's storage is unreachable or full; retry later (503, with `Retry-After`).
    pub unavailable: String,
    /// A code with status 409 that an operation declaring it answers when a concurrent request
    /// took the unique key it would create (two creates of the same key at once): the runtime
    /// maps the database's unique-key violation to it. Omit it when no operation creates
    /// anything under a unique key; an operation that does should list this code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
    /// Codes every operation may answer besides the ones it declares (default: `internal`,
    /// `request_timeout`, `unavailable`).
    pub service_wide: Vec<String>,
    /// A conditional write's `If-Match` names another version (412). The prelude declares it
    /// when an operation is a conditional write, and adds it to that operation's errors.
    pub precondition_failed: String,
    /// A write that requires `If-Match` came without one (428). The prelude declares it when an
    /// operation requires `If-Match`, and adds it to that operation's errors.
    pub precondition_required: String,
    /// A `Range` asks for no byte of the file (416). The prelude declares it when an operation
    /// answers ranges, and adds it to that operation's errors.
    pub range_not_satisfiable: String,
}

impl Default for ErrorRoles {
    fn default() -> Self {
        let code = |role: &str| role.to_string();
        ErrorRoles {
            unauthenticated: code("unauthenticated"),
            invalid_token: code("invalid_token"),
            insufficient_scope: code("insufficient_scope"),
            malformed: code("malformed"),
            validation: code("validation"),
            payload_too_large: code("payload_too_large"),
            unsupported_media_type: code("unsupported_media_type"),
            not_found: code("not_found"),
            method_not_allowed: code("method_not_allowed"),
            rate_limited: code("rate_limited"),
            internal: code("internal"),
            request_timeout: code("request_timeout"),
            unavailable: code("unavailable"),
            conflict: None,
            service_wide: ["internal", "request_timeout", "unavailable"].map(code).to_vec(),
            precondition_failed: code("precondition_failed"),
            precondition_required: code("precondition_required"),
            range_not_satisfiable: code("range_not_satisfiable"),
        }
    }
}

impl ErrorRoles {
    /// Each role's name and the code it points at.
    pub fn assigned(&self) -> [(&'static str, &String); 13] {
        [
            ("unauthenticated", &self.unauthenticated),
            ("invalid_token", &self.invalid_token),
            ("insufficient_scope", &self.insufficient_scope),
            ("malformed", &self.malformed),
            ("validation", &self.validation),
            ("payload_too_large", &self.payload_too_large),
            ("unsupported_media_type", &self.unsupported_media_type),
            ("not_found", &self.not_found),
            ("method_not_allowed", &self.method_not_allowed),
            ("rate_limited", &self.rate_limited),
            ("internal", &self.internal),
            ("request_timeout", &self.request_timeout),
            ("unavailable", &self.unavailable),
        ]
    }
}

impl Spec {
    /// Adds the [`PRELUDE`] definition of every code a role points at, or `service_wide` lists,
    /// that the catalog does not declare and that is the prelude's own code (a code of the
    /// spec's own must be declared; the loader says so).
    pub fn with_prelude(mut self) -> Spec {
        let mut wanted: Vec<String> = self.error_roles.assigned().iter().map(|(_, code)| code.to_string()).collect();
        wanted.extend(self.error_roles.service_wide.iter().cloned());
        let writes = self.operations.iter().filter(|op| !op.method().is_safe());
        for op in writes {
            match op.conditional {
                Some(ConditionalDef::On(true)) => wanted.push(self.error_roles.precondition_failed.clone()),
                Some(ConditionalDef::Mode(ConditionalMode::Required)) => wanted.extend([
                    self.error_roles.precondition_failed.clone(),
                    self.error_roles.precondition_required.clone(),
                ]),
                _ => {}
            }
        }
        if self.operations.iter().any(|op| op.ranges) {
            wanted.push(self.error_roles.range_not_satisfiable.clone());
        }
        for code in wanted {
            if self.errors.contains_key(&code) {
                continue;
            }
            if let Some((_, status, message, description)) = PRELUDE.iter().find(|(c, ..)| *c == code) {
                let def =
                    ErrorDef { status: *status, message: message.to_string(), description: description.to_string() };
                self.errors.insert(code, def);
            }
        }
        self
    }
}

/// A closed set of string values.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnumDef {
    /// What the values mean.
    pub description: String,
    /// The values, each with its meaning.
    pub values: Vec<EnumValue>,
    /// For a status: the state a new object starts in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial: Option<String>,
    /// For a status: allowed moves, from → list of targets. Values absent here are terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transitions: Option<IndexMap<String, Vec<String>>>,
}

/// One enum value.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnumValue {
    /// The wire value, as the API writes it (`draft`, `in-progress`, `1.0`); its Rust variant is
    /// derived (`Draft`, `InProgress`, `V10`).
    pub name: String,
    /// What it means.
    pub description: String,
    /// Its Rust variant, where the derived one is another value's (`id` and `ID`, `id asc` and
    /// `id_asc`, as documents list them): PascalCase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rust: Option<String>,
}

impl EnumValue {
    /// A value named `name`, described by `description`, with its derived Rust variant.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        EnumValue { name: name.into(), description: description.into(), rust: None }
    }

    /// Its Rust variant: the one given, or the one derived from its name.
    pub fn variant(&self) -> String {
        self.rust.clone().unwrap_or_else(|| crate::names::rust_variant_name(&self.name))
    }
}

/// A value that is one of several models (`oneOf`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnionDef {
    /// What the value is.
    pub description: String,
    /// The field naming the variant (OpenAPI's `discriminator`): each value carries it beside its
    /// model's fields, set to the variant's name. Without it the union is untagged: each variant
    /// must have a required field no other variant declares, which tells it apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Variant name (the tag's value, as the wire writes it) → the model it holds, in order.
    pub variants: IndexMap<String, String>,
}

/// A payload model: an object with named fields.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelDef {
    /// What the object is.
    pub description: String,
    /// Fields in wire order.
    pub fields: IndexMap<String, FieldDef>,
    /// Keys beside the fields: any other key of the object holds a value of this type (JSON
    /// Schema's `additionalProperties` beside `properties`), checked as a field of it would be.
    /// The Rust struct holds them in `additional`, a map flattened into the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional: Option<FieldDef>,
    /// Groups of optional body fields of which a request gives at least one in full
    /// (`any_of`), or exactly one (`one_of`): JSON Schema's `anyOf`/`oneOf` of `required`
    /// lists, as GitHub's "give `state` or `assignees`" bodies say it. The platform checks it
    /// on an operation's input; on an output it documents what the implementation answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<RequiresDef>,
}

/// Which groups of fields an object must give in full: one list of groups, under the rule that
/// applies to them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequiresDef {
    /// At least one of these groups is given in full.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<Vec<String>>,
    /// Exactly one of these groups is given in full.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<Vec<String>>,
}

impl RequiresDef {
    /// Whether exactly one group may be given (else at least one), and the groups.
    pub fn rule(&self) -> (bool, &[Vec<String>]) {
        if self.one_of.is_empty() { (false, &self.any_of) } else { (true, &self.one_of) }
    }
}

/// Where an operation input field travels over REST: the one definition, in `support`.
pub use support::Location;

/// One field of a model.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldDef {
    /// Type expression: `string`, `integer`, `number`, `boolean`, `datetime`, `date`, `json`, an
    /// enum, model or union name, `T[]` for a list, `map<T>` for an object with string keys.
    #[serde(rename = "type")]
    pub ty: String,
    /// What the field holds.
    pub description: String,
    /// The field may be omitted (absent in output, not required in input).
    #[serde(default)]
    pub optional: bool,
    /// Its Rust name, where the derived one is another field's (`+1` and `1`, `a_b` and `aB`):
    /// snake_case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rust: Option<String>,
    /// For a `json` field: the types its value is one of (`["number", "string"]`,
    /// `["string", "Customer"]`, `["Shape", "Shape[]"]`): a document's union of scalars, lists and
    /// models. The decoder checks the value is one of them; the documents say `oneOf`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<String>,
    /// For a list: its items may be `null` (`Vec<Option<T>>` in Rust).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nullable_items: bool,
    /// The field may be `null` (e.g. to clear a value in a PATCH).
    #[serde(default)]
    pub nullable: bool,
    /// For operation inputs: where the field travels over REST.
    #[serde(default, rename = "in")]
    pub location: Location,
    /// Smallest accepted number (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Largest accepted number (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// A number must be greater than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<f64>,
    /// A number must be less than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<f64>,
    /// A number must be a whole multiple of this (greater than 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<f64>,
    /// For an `integer`, a `number` or `json` field (or a list of them): the only values accepted
    /// (an enum of numbers, or of values of several types, as documents write them; an enum of
    /// strings is an `[enums]` type).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<serde_json::Value>,
    /// Shortest accepted string, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// Longest accepted string, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// Fewest accepted list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u32>,
    /// Most accepted list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u32>,
    /// Regular expression a string must match (anchored; the JSON Schema / Rust regex subset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The value is a secret: documented as such, marked `writeOnly` in requests.
    #[serde(default)]
    pub secret: bool,
    /// An example value (documentation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<serde_json::Value>,
    /// For a string: the format the decoder checks and the documents state (`uuid`, `email`,
    /// `uri`, `ipv4`, `ipv6`, `hostname`, `byte`: base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<support::Format>,
    /// The field is deprecated: the documents mark it, and the description says what to use.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
    /// For an optional field of an operation's input: the value it holds when the request leaves
    /// it out. The handler sees the value (the field's Rust type is not an `Option`); the
    /// documents state it. A scalar, an enum value, or a list of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    /// For a `file` field: the media types accepted (`image/png`, or a family: `image/*`); a part
    /// or raw body of another type is refused with 415. Empty accepts any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media_types: Vec<String>,
    /// For a `file` field: its largest accepted size in bytes (default 10 MiB); a larger one is
    /// refused with 413, and nothing of it is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u64>,
    /// For a query list: how its items travel. `repeated` (the default) is a parameter per item
    /// (`?tag=a&tag=b`); `comma` one parameter with the items separated by commas (`?tag=a,b`,
    /// OpenAPI's `explode: false`); `space` and `pipe` by spaces or `|` (`spaceDelimited`,
    /// `pipeDelimited`).
    #[serde(default, skip_serializing_if = "is_repeated")]
    pub style: support::ListStyle,
    /// For a path, query or header parameter: its value is the text of this JSON media type
    /// (`content = "application/json"`: `?filter={"state":"open"}`, OpenAPI's `content` in place
    /// of a style), so it may be of any type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// For a query or header parameter: the name it travels under, where its key cannot be that
    /// name (a body field has it: `fields.active_filter = { in = "query", name = "active" }`).
    /// Its key stays its Rust name and its MCP argument's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn is_repeated(style: &support::ListStyle) -> bool {
    *style == support::ListStyle::Repeated
}

impl FieldDef {
    /// Its Rust name, for a field whose wire name is `wire`: the spec's `rust`, or the derived one.
    pub fn rust_name(&self, wire: &str) -> String {
        self.rust.clone().unwrap_or_else(|| crate::names::rust_field_name(wire))
    }

    /// A required body field of type `ty` with no constraint: where generated fields start.
    pub fn new(ty: &str, description: impl Into<String>) -> Self {
        FieldDef {
            ty: ty.to_string(),
            description: description.into(),
            optional: false,
            nullable: false,
            location: Location::Body,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            multiple_of: None,
            values: Vec::new(),
            nullable_items: false,
            one_of: Vec::new(),
            rust: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
            pattern: None,
            secret: false,
            example: None,
            format: None,
            deprecated: false,
            default: None,
            media_types: Vec::new(),
            max_size: None,
            style: support::ListStyle::Repeated,
            content: None,
            name: None,
        }
    }
}

/// When and why an operation was deprecated: `deprecated = { since = "2026-11-26", … }`, or
/// `deprecated = true` where the day is not known (many documents mark an operation deprecated
/// without one: the documents say so, and no `Deprecation` header is sent, which needs a date).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Deprecated {
    /// The day it was deprecated (`2026-11-26`); the `Deprecation` header's date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The day after which it may be removed (`2027-05-31`); the `Sunset` header's date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sunset: Option<String>,
    /// What to use instead (Markdown), added to the operation's description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub instead: String,
}

impl Deprecated {
    /// ` since 2026-11-26`, or nothing on no known day: what a sentence about it adds.
    pub fn since_words(&self) -> String {
        self.since.as_deref().map(|d| format!(" since {d}")).unwrap_or_default()
    }
}

/// How `deprecated` is written, for the schema.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "describes the TOML for spec.schema.json; never built")]
#[serde(untagged)]
enum DeprecatedForm {
    /// `true`: deprecated, on no known day.
    Flag(bool),
    /// The day, the sunset and what to use instead.
    Table(Deprecated),
}

/// Reads `deprecated = true` or `deprecated = { since = … }`, keeping the table's own messages.
fn deprecated_in_either_form<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Deprecated>, D::Error> {
    struct Visitor;
    impl<'de> serde::de::Visitor<'de> for Visitor {
        type Value = Option<Deprecated>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("`true`, or a table with `since`, `sunset` and `instead`")
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
            if v {
                Ok(Some(Deprecated::default()))
            } else {
                Err(E::custom("write `deprecated = true`, or leave it out"))
            }
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Deprecated::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }
    d.deserialize_any(Visitor)
}

/// HTTP method of an operation: the one definition, in `support`.
pub use support::{BodyFormat, Method, StreamFormat};

/// The two ways to write `operations`, for the schema (the loader reads both in order).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "describes the TOML for spec.schema.json; never built")]
#[serde(untagged)]
enum OperationsForm {
    /// `[[operations]]`, each with its `id`.
    List(Vec<OperationDef>),
    /// `[operations.ID]`: the key is the id.
    Table(IndexMap<String, OperationDef>),
}

/// Reads `operations` as an array of tables or as a table keyed by id, keeping each entry's own
/// error messages (and so their positions in the file).
fn operations_in_either_form<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<OperationDef>, D::Error> {
    struct Either;
    impl<'de> serde::de::Visitor<'de> for Either {
        type Value = Vec<OperationDef>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("[[operations]] entries, or [operations.ID] tables")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(op) = seq.next_element::<OperationDef>()? {
                out.push(op);
            }
            Ok(out)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(id) = map.next_key::<String>()? {
                let mut op: OperationDef = map.next_value()?;
                if !op.id.is_empty() && op.id != id {
                    return Err(serde::de::Error::custom(format!(
                        "[operations.{id}] sets `id = \"{}\"`; the key is the id, so leave `id` out",
                        op.id
                    )));
                }
                op.id = id;
                out.push(op);
            }
            Ok(out)
        }
    }
    d.deserialize_any(Either)
}

/// One route, optionally also an MCP tool.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationDef {
    /// snake_case operation id, unique in the service; names the trait method. In the table
    /// form (`[operations.ID]`) the key is the id and this is left out.
    #[serde(default)]
    pub id: String,
    /// `METHOD /path`, e.g. `GET /things/{id}`: the method and path in one, instead of `method`
    /// and `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// HTTP method (or give `route`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    /// Path relative to the service base path, with `{name}` parameters (or give `route`).
    #[serde(default)]
    pub path: String,
    /// Minimum scope a Bearer caller needs. Required unless the operation is `public`: the
    /// validator names operations without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Served without a token (a status page, a catalogue, GitHub's `/meta`): no scope, still
    /// rate-limited (by client address) and audited as an anonymous caller; a token sent is still
    /// checked, and names the caller.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
    /// One-line summary.
    pub summary: String,
    /// Longer description (Markdown).
    #[serde(default)]
    pub description: String,
    /// OpenAPI tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Input model: its fields say where each travels (`in`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Output model (`Model[]` for a list of them, `file` for a file streamed as it is), or any
    /// other type the answer is (`integer`, `string[]`, `map<integer>`, an enum, a union);
    /// omitted for operations that answer 204 with no body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// How the request body travels: `json` (the default), `form`
    /// (`application/x-www-form-urlencoded`), `multipart` (`multipart/form-data`, where `file`
    /// fields are file parts), or `raw` (the body is the input's one `file` field).
    #[serde(default, skip_serializing_if = "is_json_body")]
    pub body: BodyFormat,
    /// The operation answers a stream of `output` values as they happen: `sse` (Server-Sent
    /// Events, each event's `data` one value, its `id` the event's) or `ndjson` (one value per
    /// line). The method returns `support::Events`; heartbeats keep an idle stream open, and no
    /// request timeout cuts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamFormat>,
    /// A `GET` with body fields, as some APIs define one (Elasticsearch's search, a query too large
    /// for a URL). RFC 9110 gives a `GET`'s content no meaning and some proxies and caches drop
    /// it, so the loader refuses body fields on a `GET` unless this says the API means them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub get_body: bool,
    /// The media types a JSON request body may be sent as, each read as JSON (`text/json`,
    /// `application/merge-patch+json`): what the documents list. Empty: `application/json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_types: Vec<String>,
    /// Request media types whose body is another shape than the input's, each with the model the
    /// documents describe it by: a multipart form holding the file a JSON body carries in base64,
    /// a CSV upload beside a JSON list. Each is listed in `request_types`; the platform hands such
    /// a body to the implementation (`read_body`), which reads it into the input's fields.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub request_models: IndexMap<String, String>,
    /// The media types a JSON success body may be answered as, each the same JSON, as the
    /// request's `Accept` chooses (`application/json` when it names none, or else the first).
    /// Empty: `application/json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_types: Vec<String>,
    /// For `output = "file"`: the media types the file may have (`text/csv`, `image/png`,
    /// `application/octet-stream`, …); the implementation says which one each answer has.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media_types: Vec<String>,
    /// The output is a page of `output` items (adds `page` and `per_page`).
    #[serde(default)]
    pub paginated: bool,
    /// Success status; defaults to 200 (204 when there is no output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// How the documents state the success status (`status_documented = "range"`): as it is, by
    /// its class, as `default`, or not at all. The platform answers `status` whichever it is.
    #[serde(default, skip_serializing_if = "StatusDocumented::is_exact")]
    pub status_documented: StatusDocumented,
    /// Other success answers the implementation may give instead of `status` and `output` (an
    /// update that answers `200` with the item, or `201` when it created it, or `204` when nothing
    /// changed): the method returns an enum with one variant per answer, so the type says which.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<AlternativeDef>,
    /// Error codes this operation may answer, besides the service-wide ones.
    #[serde(default)]
    pub errors: Vec<String>,
    /// The response carries a secret: sent with `Cache-Control: no-store`.
    #[serde(default)]
    pub no_store: bool,
    /// The operation counts against the caller's rate limit.
    #[serde(default = "default_true")]
    pub rate_limited: bool,
    /// For `output = "file"`: a client may ask for a part of the file with `Range`
    /// (`bytes=0-1023`, `bytes=1024-`, `bytes=-512`) and gets `206 Partial Content`, to resume a
    /// download or seek in a video; `If-Range` with the file's `ETag` makes sure the parts are of
    /// one version. The implementation gives the file a reader of parts (`File::ranges`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ranges: bool,
    /// The implementation returns its output already rendered as JSON (`support::Rendered<T>`,
    /// which only a `T` makes; a page of them when paginated): for an output it keeps rendered
    /// because rendering costs more than keeping it, such as the items of a large page kept per
    /// version of each item. The answer and the documents are the same as without it. For an
    /// output that is one model without header fields, or a page of a model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prerendered: bool,
    /// The operation changes nothing, so it runs in a read-only transaction that never waits for
    /// writers (and its audit row is group-committed). Defaults to true for `GET`, false
    /// otherwise; set it on a `POST` that only reads (a reveal, a search with a body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Input fields naming what the call touches, in this order: the `targets` of its audit row
    /// (where the service turns audit on), taken from the decoded input before the
    /// implementation runs, so a call that fails keeps them too. Each names a field of the
    /// input that is a string, an optional string or a list of strings; the implementation may
    /// report more (an identifier it creates) through its context.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit_targets: Vec<String>,
    /// The operation is deprecated: the documents say so, and every answer carries a
    /// `Deprecation` header (RFC 9745) when it gives the day and, with a sunset, a `Sunset`
    /// header (RFC 8594).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "deprecated_in_either_form")]
    #[schemars(with = "Option<DeprecatedForm>")]
    pub deprecated: Option<Deprecated>,
    /// Conditional requests (RFC 9110 section 13). On a `GET`, `true`: the answer carries an
    /// `ETag` (a digest of the output) and `If-None-Match` with the current tag is answered
    /// `304 Not Modified`. On a write, `true`: the implementation receives `If-Match` in its
    /// input's `if_match` and checks it against the current representation in its transaction
    /// (`412` on a mismatch), and the answer carries the new `ETag`; `"required"`: a write
    /// without `If-Match` is refused with `428` first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditional: Option<ConditionalDef>,
    /// The MCP tool that calls this operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpToolDef>,
    /// The MCP resource this `GET` reads (`resources/read`): a resource template when its URI
    /// has variables (the path parameters), a resource of its own otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceDef>,
}

/// A success answer an operation may give instead of its main one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlternativeDef {
    /// Its status: a 2xx other than the operation's `status` and its other alternatives'.
    pub status: u16,
    /// What it answers: a model without header fields, `Model[]`, or any other type an output may
    /// be; omitted for no body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// When the implementation answers it (the documents' description of the response).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// An operation's part in conditional requests: `true`, or `"required"` on a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ConditionalDef {
    /// `true`: conditional when the request asks (`false` is the same as leaving it out).
    On(bool),
    /// `"required"`: a write must send `If-Match`.
    Mode(ConditionalMode),
}

/// The one word a conditional write may give instead of `true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConditionalMode {
    /// Refuse a write without `If-Match` (`428 Precondition Required`).
    Required,
}

fn is_json_body(b: &BodyFormat) -> bool {
    *b == BodyFormat::Json
}

fn default_true() -> bool {
    true
}

impl OperationDef {
    /// The type expressions the operation names: its input, its output and its alternatives', and
    /// the models of its other request bodies.
    pub fn types(&self) -> impl Iterator<Item = &String> {
        let outputs = self.output.iter().chain(self.alternatives.iter().filter_map(|a| a.output.as_ref()));
        self.input.iter().chain(outputs).chain(self.request_models.values())
    }

    /// The operation's part in conditional requests: a `GET` reads, any other method writes.
    pub fn conditional(&self) -> Option<support::Conditional> {
        let required = match self.conditional? {
            ConditionalDef::On(false) => return None,
            ConditionalDef::On(true) => false,
            ConditionalDef::Mode(ConditionalMode::Required) => true,
        };
        Some(match self.method() {
            Method::Get => support::Conditional::Read,
            _ => support::Conditional::Write { required },
        })
    }

    /// HTTP method; the loader refuses an operation without one, so `GET` is never a guess.
    pub fn method(&self) -> Method {
        self.method.unwrap_or(Method::Get)
    }

    /// Moves `route` into `method` and `path`; the problem and its fix when it cannot.
    pub fn resolve_route(&mut self) -> Result<(), (String, String)> {
        let example = "write `route = \"GET /things/{id}\"`, or `method` and `path`";
        match self.route.take() {
            Some(route) if self.method.is_some() || !self.path.is_empty() => {
                self.route = Some(route);
                Err(("has both `route` and `method`/`path`".into(), "keep `route`, or `method` and `path`".into()))
            }
            Some(route) => {
                let parsed = route.split_once(' ').and_then(|(m, p)| {
                    let method = Method::ALL.iter().find(|x| x.as_str() == m)?;
                    Some((*method, p.trim()))
                });
                match parsed {
                    Some((method, path)) if path.starts_with('/') => {
                        self.method = Some(method);
                        self.path = path.to_string();
                        Ok(())
                    }
                    _ => {
                        let problem =
                            format!("route `{route}` is not a method (GET, POST, PUT, PATCH, DELETE) and a path");
                        self.route = Some(route);
                        Err((problem, example.into()))
                    }
                }
            }
            None if self.method.is_none() || self.path.is_empty() => Err(("has no route".into(), example.into())),
            None => Ok(()),
        }
    }
}

/// An MCP tool bound to an operation.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpToolDef {
    /// Tool name, e.g. `orders.list_orders`.
    pub name: String,
    /// Human title.
    pub title: String,
    /// Description for the model; the `SCOPE:` line is appended by the generator.
    pub description: String,
    /// Overrides the `destructiveHint` derived from the method (DELETE, PUT, PATCH: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Overrides the `idempotentHint` derived from the method (GET, PUT, DELETE: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The result's content, block by block, from the fields of the JSON output (its
    /// `structuredContent` stays the whole output). Default: the output as one JSON text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentDef>,
    /// The operation may ask its MCP client for input mid-call (`cx.input`: a form or a URL for
    /// the user, a message from the client's model, the client's roots). Names the error code,
    /// one the operation declares, that a REST call answers, since nothing there can answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks_input: Option<String>,
    /// The call may run as an MCP task (the `io.modelcontextprotocol/tasks` extension): from its
    /// `cx.background()` on, a client that declared the extension gets a task it polls.
    /// `required`: a client that did not is refused (`-32021`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskSupportDef>,
}

/// Whether a tool may, or must, run as an MCP task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupportDef {
    /// As a task for a client that declared the extension, in the call for any other.
    Optional,
    /// Only as a task.
    Required,
}

/// One block of a tool result's content, from a field of the operation's output: exactly one of
/// `text`, `image`, `audio`, `resource` and `link`. A block whose field is absent is left out.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContentDef {
    /// A string field, as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A string field holding base64 data, as an image of `mime_type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// A string field holding base64 data, as audio of `mime_type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<String>,
    /// A field embedded as a resource at `uri`: a string as its text, any other value as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// A link to a resource: its URI, with `{field}` placeholders of the output's fields
    /// (`notes://notes/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// With `resource`: its URI, with `{field}` placeholders of the output's fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The media type of an image, audio or embedded resource (an embedded resource's default:
    /// `text/plain` for a string, `application/json` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// An MCP resource read by a `GET` operation: `resources/read` of its URI calls the operation
/// with the URI's variables as its path parameters, with the operation's scope, tenancy, rate
/// limit and audit, and answers its JSON output as text (`application/json`) or its file as it
/// is (text, or base64 `blob`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceDef {
    /// Its name, unique among the service's resources (`note`).
    pub name: String,
    /// Human title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds, for the model.
    pub description: String,
    /// Its URI, or URI template (RFC 6570 level 1) whose variables are the path parameters.
    /// Default: the service's name as scheme and the operation's path (`notes://notes/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Where `completion/complete` finds values of a variable, by variable name. A variable
    /// whose path parameter is an enum offers its values without this.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub complete: IndexMap<String, CompletionDef>,
}

/// Where the values an argument may take come from, for `completion/complete`: offered are those
/// starting with what the user typed (case-insensitive), at most 100.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompletionDef {
    /// A listing operation of this service (a `GET` without required input) called as the
    /// caller: its output's keys (a map), items (a list of strings), or the `field` of its items
    /// (a list or page of models). A caller without its scope is offered nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// With `operation`: the field of each listed item (`id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// An enum of this spec: its values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enum_name: Option<String>,
    /// The values themselves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// An MCP prompt: a template of messages a client offers its user (a slash command).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptDef {
    /// Its name, unique in the service (`summarize_note`).
    pub name: String,
    /// Human title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    pub description: String,
    /// The scope `prompts/get` needs. Default: the highest scope of the resources its messages
    /// embed (each read as the caller), or the lowest tier when it embeds none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Its arguments, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgumentDef>,
    /// Its messages, in order; `{name}` in a text or a resource URI is the argument's value.
    pub messages: Vec<PromptMessageDef>,
    /// What the prompt asks its client's user before it is given (MCP 2026-07-28 input
    /// requests), each a form of text fields; `{ask.field}` in a message is the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asks: Vec<PromptAskDef>,
}

/// A form a prompt asks its client's user to fill in before it is given.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptAskDef {
    /// Its key among the prompt's asks (`user_context`).
    pub name: String,
    /// What the user is asked.
    pub message: String,
    /// Its text fields, each required.
    pub fields: Vec<PromptAskFieldDef>,
}

/// One text field of a prompt's form.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptAskFieldDef {
    /// Its name (`context`).
    pub name: String,
    /// What to give.
    pub description: String,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptArgumentDef {
    /// Its name (`id`).
    pub name: String,
    /// Human title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What to give.
    pub description: String,
    /// Whether `prompts/get` must be given it (default `true`); an optional one left out is
    /// the empty string in the messages.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub required: bool,
    /// Where its values are completed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<CompletionDef>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// One message of a prompt: text, an image, or an embedded resource (exactly one).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptMessageDef {
    /// Who says it.
    #[serde(default)]
    pub role: PromptRole,
    /// Text, with `{argument}` placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The URI of a resource of this service (placeholders allowed, or one argument that is the
    /// whole URI: `{uri}`), read as the caller and embedded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The URI of a resource of this service whose content is an image (`image/*`), read as the
    /// caller and given as an image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// Who says a prompt's message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PromptRole {
    /// The user.
    #[default]
    User,
    /// The model.
    Assistant,
}
