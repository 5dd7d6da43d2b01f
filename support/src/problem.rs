//! Errors: the [`Problem`] every failure carries, the per-operation error enums
//! (`operation_errors!`), and the error bodies in each service's format.

use axum::http::{HeaderValue, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::table::ErrorModel;
use crate::table::{ErrorFormat, PROBLEM_MEMBERS, ServiceInfo};

/// A failure with its message and structured details; the code comes from the enum variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Human message.
    pub message: String,
    /// Structured context.
    pub details: Map<String, Value>,
}

/// A call stopped because it asked its MCP client for input it does not have yet (a user's answer
/// to a form, a message from the client's model, the client's roots). Over MCP the platform
/// answers the request with those input requests and runs the call again with the answers; over
/// REST, where nothing can answer, the operation fails with the code its spec names for it
/// (`mcp.asks_input`): the generated error enum of such an operation converts from this.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequired {
    /// What the call waits for, for the error a caller that cannot answer receives.
    pub message: String,
}

impl InputRequired {
    /// The problem a caller that cannot answer receives.
    pub fn into_problem(self) -> Problem {
        Problem::new(self.message)
    }
}

impl Problem {
    /// A problem with a message and no details.
    pub fn new(message: impl Into<String>) -> Self {
        Problem { message: message.into(), details: Map::new() }
    }

    /// The problem of a server fault, which says nothing of its cause (the log does).
    pub fn internal() -> Self {
        Problem::new("Internal error; nothing was changed and no secret was returned.")
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

/// An operation's error once its type is erased: its catalog code and problem. What the shared
/// handler carries from the service's method to the answer, so that the code every operation
/// goes through (admission, the end of its transaction, its audit row, the answer) is compiled
/// once per service, not once per operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Catalog code.
    pub code: &'static str,
    /// What went wrong.
    pub problem: Problem,
}

impl Failure {
    /// The failure an operation's error stands for.
    pub fn of<E: OperationError>(err: E) -> Self {
        Failure { code: err.code(), problem: err.into_problem() }
    }
}

impl OperationError for Failure {
    fn code(&self) -> &'static str {
        self.code
    }
    fn into_problem(self) -> Problem {
        self.problem
    }
}

/// A server fault met while ending a call (committing its transaction, writing its audit row),
/// as the runtime classified it: what the operation answers instead of its result. Each
/// operation turns it into its own error ([`Fault::into_error`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// A defect: the operation's internal error (500).
    Internal(Problem),
    /// Storage unreachable or full for now: the unavailable error (503, `Retry-After`).
    Unavailable(Problem),
    /// A unique key taken by a concurrent request: the operation's conflict error where it
    /// declares one (409), else its internal error.
    Conflict(Problem),
}

impl Fault {
    /// The error of an operation whose error enum is `E`.
    pub fn into_error<E: InternalError>(self) -> E {
        match self {
            Fault::Internal(p) => E::internal(p),
            Fault::Unavailable(p) => E::unavailable(p),
            Fault::Conflict(p) => E::conflict(p).unwrap_or_else(|| E::internal(Problem::internal())),
        }
    }
}

/// A fault is what the runtime's fault reporter classifies into before any operation's error.
impl InternalError for Fault {
    fn internal(problem: Problem) -> Self {
        Fault::Internal(problem)
    }
    fn unavailable(problem: Problem) -> Self {
        Fault::Unavailable(problem)
    }
    fn conflict(problem: Problem) -> Option<Self> {
        Some(Fault::Conflict(problem))
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

/// The catalog status of `code`, else `fallback`.
pub(crate) fn status_of(service: &ServiceInfo, code: &str, fallback: u16) -> u16 {
    service.error(code).map(|e| e.status).unwrap_or(fallback)
}

impl ErrorModel {
    /// The body of one error.
    pub(crate) fn body(&self, code: &str, status: u16, problem: Problem, request_id: Option<&str>) -> Value {
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

#[cfg(test)]
mod tests {
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
