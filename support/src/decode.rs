//! Request decoding: path, query, headers and body (or MCP tool arguments) into one typed input,
//! strictly parsed and validated; the input and paging types it yields.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::http::{header, request::Parts};
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::conditional::Conditional;
use crate::fields::{Kind, Location, OTHER_KEYS, fill_defaults};
use crate::gate::Gate;
use crate::paging::Paging;
use crate::paths::QueryItem;
use crate::problem::{Problem, error_response, request_id, status_of};
use crate::respond::ToolFailure;
use crate::strict::{StrictJson, number};
use crate::table::{Operation, ServiceInfo};
use crate::upload::{BodyFormat, essence, too_large};
use crate::validate::coerce;
use crate::validate::{Rejection, check_object, check_requires, invalid};

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

/// Every check of a decoded input, for REST and MCP alike: each field, then the groups of fields
/// the operation requires.
fn check_input(op: &Operation, obj: &Map<String, Value>) -> Result<(), Rejection> {
    check_object(op.service, op.input, "", obj)?;
    match op.requires {
        Some(r) => check_requires(op.service, r, obj),
        None => Ok(()),
    }
}

/// The operation's input from the object of its fields; a value of the wrong shape is refused
/// naming its place.
pub(crate) fn deserialize<I: DeserializeOwned>(service: &ServiceInfo, obj: Map<String, Value>) -> Result<I, Rejection> {
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
    arguments: Value,
) -> Result<(I, Paging), Rejection> {
    let (fields, paging) = argument_fields(op, arguments)?;
    Ok((deserialize(op.service, fields)?, paging))
}

/// MCP tool arguments checked against the operation's fields, defaults filled in, its page
/// taken out: the object its input deserializes from.
pub fn argument_fields(
    op: &'static Operation,
    mut arguments: Value,
) -> Result<(Map<String, Value>, Paging), Rejection> {
    let service = op.service;
    whole_numbers(&mut arguments);
    let mut obj = match arguments {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => return Err(invalid(service, "", other, "arguments must be an object".into())),
    };
    check_input(op, &obj)?;
    fill_defaults(op.input, &mut obj);
    let paging = take_paging(op, &mut obj);
    Ok((obj, paging))
}

pub(crate) fn is_json(parts: &Parts) -> bool {
    parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(crate::media::is_json_media)
}

/// Reads a request body sent in one of its operation's other formats
/// ([`Operation::read_types`]: XML, plain text, a form of another shape) of the given media type
/// (as the operation lists it; `multipart/form-data` as the request's `Content-Type` gives it,
/// with the `boundary` its parts are read by) into the JSON value its fields are then decoded and
/// checked from, as the service's implementation reads them.
pub type ReadBody<'a> = &'a (dyn Fn(&str, &[u8]) -> BodyRead + Sync);

/// What reading a body in another format gives: the JSON value its fields are decoded from,
/// why it is malformed (answered as malformed JSON is), or `None` where the implementation reads
/// no body of that format (answered 415, or 501 while the service is being written).
pub type BodyRead = Option<Result<Value, String>>;

/// A [`ReadBody`] that reads no other format.
pub fn reads_nothing(_: &str, _: &[u8]) -> BodyRead {
    None
}

/// Decodes a REST request (path, query and JSON body) into the operation input.
pub async fn decode_request<G: Gate, I: DeserializeOwned>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    parts: &mut Parts,
    body: Body,
) -> Result<(I, Paging), Rejection> {
    let (fields, paging) = request_fields(gate, caller, op, parts, body, &reads_nothing).await?;
    Ok((deserialize(op.service, fields)?, paging))
}

/// A REST request's path, query, headers and body read into one object of the operation's
/// fields, checked against their specs, defaults filled in, its page taken out: the object its
/// input deserializes from. Not generic over the input, so compiled once per gate.
pub async fn request_fields<G: Gate>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    parts: &mut Parts,
    body: Body,
    read: ReadBody<'_>,
) -> Result<(Map<String, Value>, Paging), Rejection> {
    let service = op.service;
    let roles = &service.roles;
    let limit = gate.body_limit();
    let mut obj = Map::new();
    // Path parameters.
    if op.input.iter().any(|f| f.location == Location::Path) {
        let params = RawPathParams::from_request_parts(parts, &())
            .await
            .map_err(|e| invalid(service, "path", Value::Null, format!("the path is not valid: {e}")))?;
        for (routed, raw) in params.iter() {
            // A parameter sharing its segment with text or others (`{id}.json`,
            // `{name}-{version}.zip`): the route matched the whole segment, split here; a value
            // without that text is no path of this operation.
            let Some(values) = crate::paths::param_values(op.full_path, routed, raw) else {
                let problem = Problem::new(format!("no route matches {}", parts.uri.path()));
                return Err(Rejection { code: roles.not_found, problem });
            };
            for (name, value) in values {
                if let Some(f) = op.input.iter().find(|f| f.name == name && f.location == Location::Path) {
                    obj.insert(name.to_string(), simple_value(service, f, value)?);
                }
            }
        }
    }
    // Query string: repeated keys build lists; unknown keys are refused.
    if let Some(q) = parts.uri.query() {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(q).map_err(|e| {
            invalid(service, "query", Value::String(q.to_string()), format!("the query string is not valid: {e}"))
        })?;
        let items = crate::paths::query_items(op.path);
        for (k, raw) in pairs {
            // A name the path's query part gives: a path parameter written there (`?city={city}`),
            // or a value the route checked (`?Action=Run`) that no field takes.
            let item = items.iter().find(|i| matches!(i, QueryItem::Value(n, _) | QueryItem::Param(n, _) if *n == k));
            let query_field = op.input.iter().any(|f| f.location == Location::Query && f.wire == k);
            match item {
                Some(QueryItem::Param(_, param)) if !query_field => {
                    if let Some(f) = op.input.iter().find(|f| f.name == *param && f.location == Location::Path) {
                        obj.insert(f.name.to_string(), simple_value(service, f, &raw)?);
                        continue;
                    }
                }
                Some(QueryItem::Value(..)) if !query_field => continue,
                _ => {}
            }
            crate::query::query_pair(op, k, raw, &mut obj)?;
        }
    }
    // Headers: `idempotency_key` travels as `Idempotency-Key` (header names ignore case).
    for f in op.input.iter().filter(|f| f.location == Location::Header) {
        let name = f.http_header();
        if let Some(v) = parts.headers.get(name.as_str()) {
            let s = v
                .to_str()
                .map_err(|_| invalid(service, f.name, Value::Null, format!("header {name} must be visible ASCII")))?;
            obj.insert(f.name.to_string(), simple_value(service, f, s)?);
        }
    }
    // Body, in the format the operation declares.
    let sent = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).and_then(BodyFormat::of_media);
    let format = match sent {
        Some(f) if op.body == BodyFormat::Json && op.body_forms.contains(&f) => f,
        _ => op.body,
    };
    let uploads = match format {
        BodyFormat::Json => {
            json_body(op, parts, body, limit, read, &mut obj).await?;
            Vec::new()
        }
        BodyFormat::Form => crate::upload::form(gate, caller, op, parts, body, limit, &mut obj).await?,
        BodyFormat::Multipart => crate::upload::multipart(gate, caller, op, parts, body, limit, &mut obj).await?,
        BodyFormat::Raw => crate::upload::raw(gate, caller, op, parts, body).await?,
    };
    check_input(op, &obj)?;
    crate::upload::insert(op, uploads, &mut obj)?;
    fill_defaults(op.input, &mut obj);
    if let Some(Conditional::Write { required }) = op.conditional {
        // The input's `if_match` (no field spec: it is the platform's, and REST's alone).
        match crate::conditional::joined(&parts.headers, header::IF_MATCH) {
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
    Ok((obj, paging))
}

/// The arguments an MCP resource read calls `op` with: each of the URI's variables (a path
/// parameter, as text) read as the REST route reads its path segment.
pub fn path_arguments(op: &'static Operation, values: &[(String, String)]) -> Result<Value, ToolFailure> {
    let mut obj = Map::new();
    for (name, raw) in values {
        if let Some(f) = op.input.iter().find(|f| f.name == name && f.location == Location::Path) {
            let value = simple_value(op.service, f, raw).map_err(|r| ToolFailure::rejected(op, r))?;
            obj.insert(name.clone(), value);
        }
    }
    Ok(Value::Object(obj))
}

/// A path parameter's or a header's value as its field says: a number, a boolean, or a list
/// written comma-separated (OpenAPI's `simple` style, RFC 9110's list syntax for headers:
/// `/items/1,2,3`); a string as it is.
fn simple_value(service: &ServiceInfo, f: &crate::fields::FieldSpec, raw: &str) -> Result<Value, Rejection> {
    if f.json_text {
        return crate::query::json_text(service, f, raw);
    }
    match &f.kind {
        Kind::List(inner) => {
            let items = raw.split(',').map(str::trim).filter(|i| !i.is_empty());
            Ok(Value::Array(items.map(|i| coerce(service, f, inner, i)).collect::<Result<_, _>>()?))
        }
        kind => coerce(service, f, kind, raw),
    }
}

/// A JSON body: an object whose members are the operation's body fields (sent as JSON, or in
/// one of the operation's other formats, which `read` turns into JSON).
async fn json_body(
    op: &'static Operation,
    parts: &Parts,
    body: Body,
    limit: usize,
    read: ReadBody<'_>,
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
        let sent = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let other = sent.and_then(|s| read_type(op, s));
        if op.has_body && !is_json(parts) && other.is_none() {
            return Err(unsupported(op));
        }
        let body: Value = match other {
            // Another format the operation lists: the implementation reads it, or it is refused.
            // Multipart parts cannot be read without the `boundary` the request gives.
            Some(media) => {
                match read(if essence(media) == "multipart/form-data" { sent.unwrap_or(media) } else { media }, &bytes)
                {
                    Some(Ok(value)) => value,
                    Some(Err(why)) => {
                        let problem = Problem::new(format!("the request body is not valid {media}: {why}"));
                        return Err(Rejection { code: roles.malformed, problem });
                    }
                    None => return Err(unread(op, media)),
                }
            }
            None if has_bytes => serde_json::from_slice::<StrictJson>(&bytes).map(|v| v.0).map_err(|e| Rejection {
                code: roles.malformed,
                problem: Problem::new(format!("the request body is not valid JSON: {e}")),
            })?,
            None => Value::Object(Map::new()),
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

/// The media type of `sent` (a `Content-Type`) where it is one of `op`'s other formats, as the
/// operation lists it (compared without parameters and case).
fn read_type(op: &'static Operation, sent: &str) -> Option<&'static str> {
    let sent = essence(sent);
    op.read_types.iter().copied().find(|m| essence(m) == sent)
}

/// A body in one of `op`'s other formats that its implementation reads none of: `501` while the
/// service is being written (its catalog holds `not_implemented`, as a new service's does until
/// every method is), since its documents promise that format; else the 415 of a format not taken.
fn unread(op: &'static Operation, media: &str) -> Rejection {
    const UNWRITTEN: &str = "not_implemented";
    match op.service.error(UNWRITTEN) {
        Some(e) => Rejection {
            code: e.code,
            problem: Problem::new(format!(
                "this service does not read {media} bodies yet: its implementation is not written"
            )),
        },
        None => unsupported(op),
    }
}

/// The 415 of a body in a format `op` does not take (or whose implementation reads none).
fn unsupported(op: &'static Operation) -> Rejection {
    let also = op.body_forms.iter().map(|f| match f {
        BodyFormat::Form => " (or application/x-www-form-urlencoded)",
        BodyFormat::Multipart => " (or multipart/form-data)",
        _ => "",
    });
    let text =
        format!("the request body must be JSON: send Content-Type: application/json{}", also.collect::<String>());
    Rejection { code: op.service.roles.unsupported_media_type, problem: Problem::new(text) }
}

/// How an operation's checked fields become its input (`T`), or the refusal of a value of the
/// wrong shape.
pub type Prepare<T> = fn(&'static Operation, Map<String, Value>) -> Result<T, Rejection>;

/// Splits a request, asks the gate to admit it and decodes its fields, which `prepare` turns
/// into the operation's input. A refused input is answered here, and the gate is told of it
/// ([`Gate::refused`]).
pub async fn admit<G: Gate, T>(
    gate: &G,
    op: &'static Operation,
    req: Request,
    prepare: Prepare<T>,
    read: ReadBody<'_>,
) -> Result<(Parts, G::Caller, T, Paging), Response> {
    let (mut parts, body) = req.into_parts();
    let caller = gate.admit(&mut parts, op).await?;
    let decoded = request_fields(gate, &caller, op, &mut parts, body, read).await;
    match decoded.and_then(|(fields, paging)| Ok((prepare(op, fields)?, paging))) {
        Ok((input, paging)) => Ok((parts, caller, input, paging)),
        Err(r) => {
            gate.refused(&caller, op, r.code, status_of(op.service, r.code, 422)).await;
            Err(error_response(op.service, r.code, r.problem, request_id(&parts)))
        }
    }
}

/// Decodes MCP tool arguments for `op` into the fields `prepare` turns into its input; a refused
/// input is reported to the gate ([`Gate::refused`]) and becomes the tool failure.
pub async fn admit_arguments<G: Gate, T>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    arguments: Value,
    prepare: Prepare<T>,
) -> Result<(T, Paging), ToolFailure> {
    match argument_fields(op, arguments).and_then(|(fields, paging)| Ok((prepare(op, fields)?, paging))) {
        Ok(decoded) => Ok(decoded),
        Err(r) => {
            let failure = ToolFailure::rejected(op, r);
            gate.refused(caller, op, failure.code, failure.status).await;
            Err(failure)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::FieldSpec;

    static READ_INPUT: [FieldSpec; 1] = [FieldSpec::body("title", Kind::String).required()];
    static READ: Operation = Operation {
        id: "read",
        input: &READ_INPUT,
        read_types: &["application/xml", "multipart/form-data"],
        ..crate::tests::OP
    };

    /// The media type the implementation's reader is given for a body sent as `content_type`,
    /// told back as the title it reads.
    fn given(content_type: &str) -> Value {
        let req = axum::http::Request::post("/t/op").header("content-type", content_type);
        let mut parts = req.body(()).unwrap().into_parts().0;
        let read = |media: &str, _: &[u8]| Some(Ok(serde_json::json!({ "title": media })));
        let fields = request_fields(&crate::tests::Open, &"caller", &READ, &mut parts, Body::from("x"), &read);
        crate::tests::block_on(fields).expect("read").0["title"].clone()
    }

    #[test]
    fn the_reader_is_given_the_listed_type_and_multipart_its_boundary() {
        assert_eq!(given("Application/XML; charset=utf-8"), "application/xml");
        assert_eq!(given("multipart/form-data; boundary=b"), "multipart/form-data; boundary=b");
    }
}
