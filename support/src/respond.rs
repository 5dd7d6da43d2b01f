//! Answers: an operation's [`Success`] in its service's wire format, with its status, headers,
//! entity tag and ranges; errors and tool failures; 405 with `Allow`.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header, request::Parts};
use axum::response::Response;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::conditional::Conditional;
use crate::file::File;
use crate::json_text::JsonText;
use crate::paging::{Paged, Paging};
use crate::problem::{OperationError, Problem, error_body, error_response, request_id, status_of};
use crate::table::{ErrorFormat, Operation, ServiceInfo, SuccessFormat};
use crate::validate::Rejection;

fn finish(parts: &Parts, op: &'static Operation, resp: Response) -> Response {
    finish_as(parts, op, op.success_status, resp)
}

/// [`finish`] with the status of the answer the implementation chose.
fn finish_as(parts: &Parts, op: &'static Operation, status: u16, mut resp: Response) -> Response {
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    if !op.answer_types.is_empty() && resp.headers().get(header::CONTENT_TYPE).is_some_and(|v| v == "application/json")
    {
        // Of the JSON types the operation lists (its other formats were chosen before).
        let json: Vec<&str> = op.answer_types.iter().copied().filter(|t| crate::media::is_json_media(t)).collect();
        let chosen = answer_type(&json, parts.headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()));
        if let Ok(v) = HeaderValue::from_str(chosen) {
            resp.headers_mut().insert(header::CONTENT_TYPE, v);
        }
    }
    if op.answer_types.len() > 1 {
        // The answer depends on `Accept`: caches keep one per value.
        resp.headers_mut().insert(header::VARY, HeaderValue::from_static("accept"));
    }
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

/// Of the media types a JSON answer may have, the one an `Accept` header asks for: the first of
/// its ranges (in its order, `q=0` skipped) that one of them fits; else `application/json` when
/// listed, else the first listed.
pub fn answer_type<'a>(types: &[&'a str], accept: Option<&str>) -> &'a str {
    let essence = |m: &str| m.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let fallback = (types.iter().copied().find(|t| essence(t) == "application/json"))
        .or_else(|| types.iter().copied().find(|t| crate::media::is_json_media(t)))
        .or(types.first().copied());
    for range in accept.unwrap_or_default().split(',') {
        let refused = range.split(';').skip(1).any(|p| {
            let p = p.replace(' ', "");
            p == "q=0" || p == "q=0.0" || p == "q=0.00" || p == "q=0.000"
        });
        let want = essence(range);
        if refused || want.is_empty() {
            continue;
        }
        if want == "*/*" {
            break;
        }
        let fits = |t: &str| {
            let t = essence(t);
            t == want || want.strip_suffix("/*").is_some_and(|k| t.starts_with(&format!("{k}/")))
        };
        if let Some(t) = types.iter().copied().find(|t| fits(t)) {
            return t;
        }
    }
    fallback.unwrap_or("application/json")
}

/// The JSON text of one `T`, rendered once and handed over as it is: what an implementation
/// keeps when rendering an output costs more than keeping it (the items of a large page, kept
/// rendered per version of each item). Only a `T` makes one ([`Rendered::of`]), so the answer is
/// what serialising the `T` would give, byte for byte; clones share the text.
pub struct Rendered<T> {
    text: std::sync::Arc<str>,
    of: std::marker::PhantomData<fn() -> T>,
}

impl<T: Serialize> Rendered<T> {
    /// The compact JSON text of `value`, as [`Success::one`] would write it.
    pub fn of(value: &T) -> Rendered<T> {
        Rendered { text: JsonText::of(value).0.into(), of: std::marker::PhantomData }
    }
}

impl<T> Rendered<T> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl<T> Clone for Rendered<T> {
    fn clone(&self) -> Self {
        Rendered { text: self.text.clone(), of: std::marker::PhantomData }
    }
}

impl<T> std::fmt::Debug for Rendered<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Rendered").field(&&*self.text).finish()
    }
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
    One(JsonText),
    /// An answer, and how to render its body in the operation's other formats.
    Formats {
        /// The answer as JSON.
        inner: Box<Success>,
        /// Its renderer in the other formats.
        other: crate::formats::Other,
    },
    /// One page of a list.
    Page {
        /// This page's items (a JSON array).
        items: JsonText,
        /// Items matching the request over all pages.
        total: u64,
        /// The page asked for.
        paging: Paging,
    },
    /// Another success answer than the operation's main one (an update's `201` when it created,
    /// beside its `200`): the status the implementation chose.
    Status {
        /// The status.
        status: u16,
        /// The answer.
        inner: Box<Success>,
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
        Success::One(JsonText::of(value))
    }

    /// This answer, whose body `other` renders in the operation's other formats than JSON.
    pub(crate) fn with_formats(self, other: crate::formats::Other) -> Self {
        Success::Formats { inner: Box::new(self), other }
    }

    /// A page of a list operation.
    pub fn page<T: Serialize>(page: &Paged<T>, paging: Paging) -> Self {
        Success::Page { items: JsonText::of(&page.items), total: page.total, paging }
    }

    /// The output of an operation, already rendered.
    pub fn rendered<T>(value: &Rendered<T>) -> Self {
        Success::One(JsonText(value.as_str().to_owned()))
    }

    /// A page of a list operation whose items are already rendered: the same text as
    /// [`Success::page`] writes for the items they were rendered from.
    pub fn rendered_page<T>(page: &Paged<Rendered<T>>, paging: Paging) -> Self {
        let mut items = String::with_capacity(2 + page.items.iter().map(|i| i.as_str().len() + 1).sum::<usize>());
        items.push('[');
        for (n, item) in page.items.iter().enumerate() {
            if n > 0 {
                items.push(',');
            }
            items.push_str(item.as_str());
        }
        items.push(']');
        Success::Page { items: JsonText(items), total: page.total, paging }
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

    /// This answer with another status than the operation's main one.
    pub fn status(self, status: u16) -> Self {
        Success::Status { status, inner: Box::new(self) }
    }

    /// The answer without its declared headers and status, those headers, and that status.
    fn split(self) -> (Success, Vec<(HeaderName, HeaderValue)>, Option<u16>) {
        match self {
            Success::Headed { inner, mut headers } => {
                let (inner, more, status) = inner.split();
                headers.extend(more);
                (inner, headers, status)
            }
            Success::Status { status, inner } => {
                let (inner, headers, _) = inner.split();
                (inner, headers, Some(status))
            }
            Success::Formats { inner, other } => {
                let (inner, headers, status) = inner.split();
                (Success::Formats { inner: Box::new(inner), other }, headers, status)
            }
            other => (other, Vec::new(), None),
        }
    }

    /// The entity tag of this answer: the digest of its output (of a page: its items, total and
    /// paging); `None` for no content.
    fn etag(&self) -> Option<String> {
        match self {
            Success::Empty | Success::File(_) | Success::Streamed(_) => None,
            Success::One(v) => Some(crate::conditional::etag_of_text(v.as_str())),
            Success::Page { items, total, paging } => Some(crate::conditional::etag_of_text(&format!(
                "{{\"items\":{items},\"total\":{total},\"page\":{},\"per_page\":{}}}",
                paging.page, paging.per_page
            ))),
            Success::Headed { inner, .. } | Success::Status { inner, .. } | Success::Formats { inner, .. } => {
                inner.etag()
            }
        }
    }

    /// The envelope format's body: `{"data": …}`, a page with its `meta`; `None` for no content.
    fn enveloped(self) -> Option<JsonText> {
        match self {
            Success::Empty | Success::File(_) | Success::Streamed(_) => None,
            Success::Headed { inner, .. } | Success::Status { inner, .. } | Success::Formats { inner, .. } => {
                inner.enveloped()
            }
            Success::One(v) => Some(JsonText(format!("{{\"data\":{v}}}"))),
            Success::Page { items, total, paging } => Some(JsonText(format!(
                "{{\"data\":{items},\"meta\":{{\"total\":{total},\"page\":{},\"per_page\":{}}}}}",
                paging.page, paging.per_page
            ))),
        }
    }

    /// What an MCP call of the operation answers: its file as it is, else
    /// [`Success::into_tool_body`].
    pub fn into_tool_answer(self, service: &ServiceInfo) -> ToolAnswer {
        match self.split().0 {
            Success::File(file) => ToolAnswer::File(file),
            other => ToolAnswer::Json(other.into_tool_body(service)),
        }
    }

    /// The body an MCP tool result carries as its structured content (always an object, as MCP
    /// requires): the REST body in the envelope format; the output when bare, a list as
    /// `{"items"}`, a scalar as `{"value"}` and a page as `{"items", "total", "page",
    /// "per_page"}`; `{}` for no content.
    pub fn into_tool_body(self, service: &ServiceInfo) -> Value {
        let success = match self.split().0 {
            Success::Formats { inner, .. } => *inner,
            other => other,
        };
        match (success, service.wire.success) {
            (Success::One(v), SuccessFormat::Bare) => match v.value() {
                v @ Value::Array(_) => json!({ "items": v }),
                v @ Value::Object(_) => v,
                v => json!({ "value": v }),
            },
            (Success::Page { items, total, paging }, SuccessFormat::Bare) => {
                json!({ "items": items.value(), "total": total, "page": paging.page, "per_page": paging.per_page })
            }
            (success, _) => success.enveloped().map_or_else(|| Value::Object(Map::new()), |text| text.value()),
        }
    }
}

/// A time as a header value: RFC 3339 in UTC, as its JSON form writes it (`2025-10-15T13:51:05.914Z`).
pub fn time_header(time: &chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

impl<T> crate::formats::Formats<T> {
    /// The [`Success`] of this answer: `json` makes its JSON answer (its status, headers and body)
    /// from the value, and the renderer, given the value, writes its body in another format where
    /// the request asks for one.
    pub fn answer(self, json: impl FnOnce(&T) -> Success) -> Success
    where
        T: Send + 'static,
    {
        let inner = json(&self.value);
        let crate::formats::Formats { value, render } = self;
        let other = crate::formats::Other(Box::new(move |media: &str| render.and_then(|r| r(&value, media))));
        inner.with_formats(other)
    }
}

/// A list of values as one header value: comma-separated, as RFC 9110 section 5.6.1 writes lists.
pub fn comma_list<T: std::fmt::Display>(values: &[T]) -> String {
    values.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// The success response of an operation, in its service's wire format.
pub fn respond(parts: &Parts, op: &'static Operation, success: Success) -> Response {
    let (success, headers, status) = success.split();
    let status = status.unwrap_or(op.success_status);
    let etag = op.conditional.and_then(|_| success.etag());
    if let Some(tag) = &etag
        && op.conditional == Some(Conditional::Read)
        && crate::conditional::not_modified(&parts.headers, tag)
    {
        let mut resp = finish(parts, op, Response::new(Body::empty()));
        *resp.status_mut() = StatusCode::NOT_MODIFIED;
        return with_headers(resp, etag, headers);
    }
    // Another format than JSON, where `Accept` prefers one the operation lists and the
    // implementation renders the body; else the JSON answer.
    let success = match success {
        Success::Formats { inner, other } => {
            let chosen = answer_type(op.answer_types, parts.headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()));
            let bodied = !matches!(*inner, Success::Empty);
            match (bodied && !crate::media::is_json_media(chosen), HeaderValue::from_str(chosen)) {
                (true, Ok(media)) => match (other.0)(chosen) {
                    Some(bytes) => {
                        let mut resp = Response::new(Body::from(bytes));
                        resp.headers_mut().insert(header::CONTENT_TYPE, media);
                        if let Success::Page { total, paging, .. } = *inner {
                            // A page in another format keeps its place in the list in headers.
                            page_headers(&mut resp, parts, total, paging);
                        }
                        return with_headers(finish_as(parts, op, status, resp), etag, headers);
                    }
                    None => *inner,
                },
                _ => *inner,
            }
        }
        other => other,
    };
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
        (Success::One(v), SuccessFormat::Bare) => v.into_response(),
        (Success::Page { items, total, paging }, SuccessFormat::Bare) => {
            let mut resp = items.into_response();
            page_headers(&mut resp, parts, total, paging);
            resp
        }
        (success, _) => success.enveloped().map_or_else(|| Response::new(Body::empty()), JsonText::into_response),
    };
    with_headers(finish_as(parts, op, status, resp), etag, headers)
}

/// A page's place in its list: `X-Total-Count` and the `Link`s to the other pages.
fn page_headers(resp: &mut Response, parts: &Parts, total: u64, paging: Paging) {
    resp.headers_mut().insert("x-total-count", HeaderValue::from(total));
    if let Ok(link) = HeaderValue::from_str(&page_links(parts.uri.query(), total, paging)) {
        resp.headers_mut().insert(header::LINK, link);
    }
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

/// What an MCP call of an operation (a tool call, a resource read, a completion's listing)
/// answers on success.
#[derive(Debug)]
pub enum ToolAnswer {
    /// The JSON body ([`Success::into_tool_body`]).
    Json(Value),
    /// The file the operation answers, as it is.
    File(crate::file::File),
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

/// What [`crate::Endpoint::call`] answers: the success, which the service's wire format writes, or the
/// operation's error `E`.
pub type Reply<E> = Result<Success, E>;

#[cfg(test)]
mod tests {
    use super::answer_type;

    #[test]
    fn the_accept_header_chooses_among_the_documented_json_types() {
        let types = ["text/plain+json", "application/json", "text/json"];
        assert_eq!(answer_type(&types, None), "application/json");
        assert_eq!(answer_type(&types, Some("*/*")), "application/json");
        assert_eq!(answer_type(&types, Some("text/json")), "text/json");
        assert_eq!(answer_type(&types, Some("text/json;q=0, text/*")), "text/plain+json");
        assert_eq!(answer_type(&types, Some("application/xml")), "application/json");
        assert_eq!(answer_type(&["application/vnd.x+json"], Some("application/json")), "application/vnd.x+json");
    }
}
