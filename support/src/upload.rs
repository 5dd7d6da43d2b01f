//! Request bodies that are not JSON: `application/x-www-form-urlencoded` forms,
//! `multipart/form-data` with file parts, and raw bodies that are one file. A file is handed to
//! the gate's storage ([`Gate::store_upload`]) chunk by chunk as it arrives, so memory holds a
//! chunk, not the file; the operation receives what was stored ([`Upload`]), to keep (in the
//! transaction that records it) or to leave, for the runtime to sweep.

use axum::body::Body;
use axum::http::{header, request::Parts};
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::fields::{FieldSpec, Kind, Location};
use crate::gate::Gate;
use crate::problem::Problem;
use crate::query::{add_pair, members, put};
use crate::table::Operation;
use crate::validate::{Rejection, invalid};

pub use crate::gate::{StoreError, Stored, UploadStream};
pub use crate::table::BodyFormat;

/// A file the request carried, as the operation receives it: stored already, pending until the
/// operation keeps it (`runtime::blobs::Blobs::keep` in the transaction that records it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Upload {
    /// The stored content (a blob id).
    pub id: String,
    /// Its length in bytes.
    pub size: u64,
    /// Its SHA-256 digest, lowercase hex.
    pub sha256: String,
    /// Its media type, as the client declared it and the spec accepts (parameters dropped).
    pub media_type: String,
    /// The file name the client gave, without any directory part; `None` for a raw body.
    pub filename: Option<String>,
}

/// The media type of a `Content-Type` value, lowercase, without parameters.
pub(crate) fn essence(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// Whether `media_type` is one of `accepted` (`type/subtype`, or `type/*`); an empty list
/// accepts any.
fn accepts(accepted: &[&str], media_type: &str) -> bool {
    accepted.is_empty()
        || accepted.iter().any(|a| {
            let a = a.to_ascii_lowercase();
            if a == "*/*" {
                return true;
            }
            match a.strip_suffix("/*") {
                Some(family) => media_type.split('/').next() == Some(family),
                None => a == media_type,
            }
        })
}

fn unsupported(op: &'static Operation, field: &str, got: &str, accepted: &[&str]) -> Rejection {
    Rejection {
        code: op.service.roles.unsupported_media_type,
        problem: Problem::new(format!("{field} must be one of: {}; it is {got}", accepted.join(", ")))
            .with("field", field)
            .with("value", got)
            .with("accepted", accepted.to_vec()),
    }
}

fn file_spec(f: &FieldSpec) -> Option<(&'static [&'static str], u64)> {
    match f.kind {
        Kind::File { media_types, max_size } => Some((media_types, max_size)),
        _ => None,
    }
}

/// Stores one file through the gate, mapping its failures to the operation's refusals.
async fn store<G: Gate>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    field: &str,
    content: UploadStream,
    limit: u64,
) -> Result<Stored, Rejection> {
    let roles = &op.service.roles;
    gate.store_upload(caller, content, limit).await.map_err(|e| match e {
        StoreError::TooLarge => too_large(op, limit, Some(field)),
        StoreError::Source(why) => Rejection {
            code: roles.malformed,
            problem: Problem::new(format!("{field} could not be read: {why}")).with("field", field),
        },
        StoreError::Unavailable(why) => Rejection {
            code: roles.unavailable,
            problem: Problem::new(format!("the file could not be stored for now ({why}); nothing was changed"))
                .with("retry_after", 2),
        },
    })
}

/// An `application/x-www-form-urlencoded` body into the body fields: a scalar or a list of them
/// under its field's name, a nested value in bracket notation ([`put`]), a file field's bytes as
/// its value percent-encodes them (stored as a multipart file is). Answers the stored files by
/// field name, for [`insert`].
pub(crate) async fn form<G: Gate>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    parts: &Parts,
    body: Body,
    limit: usize,
    obj: &mut Map<String, Value>,
) -> Result<Vec<(&'static str, Upload)>, Rejection> {
    let (service, roles) = (op.service, &op.service.roles);
    let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(essence);
    if content_type.as_deref() != Some("application/x-www-form-urlencoded") {
        return Err(Rejection {
            code: roles.unsupported_media_type,
            problem: Problem::new(
                "the request body must be a form: send Content-Type: application/x-www-form-urlencoded",
            ),
        });
    }
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| too_large(op, limit as u64, None))?;
    let body = || op.input.iter().filter(|f| f.location == Location::Body);
    let mut uploads: Vec<(&'static str, Upload)> = Vec::new();
    for (k, value) in form_pairs(&bytes) {
        let k = String::from_utf8(k).map_err(|_| Rejection {
            code: roles.malformed,
            problem: Problem::new("the request body is not a valid form: a name is not UTF-8 text"),
        })?;
        let file = body().find(|f| f.wire == k).and_then(|f| Some((f, file_spec(f)?)));
        if let Some((f, (accepted, max_size))) = file {
            // A file's bytes as the value: it has no media type or name of its own.
            let content = axum::body::Bytes::from(value);
            let content: UploadStream = Box::pin(futures_util::stream::once(async move { Ok(content) }));
            let file = Sent { media_type: "application/octet-stream".into(), filename: None, content };
            keep_file(gate, caller, op, f, (accepted, max_size), file, &mut uploads).await?;
            continue;
        }
        let raw = String::from_utf8(value)
            .map_err(|_| invalid(service, &k, Value::Null, format!("{k} must be UTF-8 text")))?;
        // `name[member]`, `name[0][member]`, `name[]`: a nested value in bracket notation.
        let nested =
            k.split_once('[').and_then(|(base, rest)| Some((body().find(|f| f.wire == base)?, members(rest)?)));
        match nested {
            Some((f, path)) if !body().any(|f| f.wire == k) => {
                let slot = obj.entry(f.name.to_string()).or_insert(Value::Null);
                let sent = raw.clone();
                let unknown = || invalid(service, &k, Value::String(sent.clone()), format!("unknown field {k}"));
                put(service, f, &f.kind, slot, &path, raw)
                    .map_err(|e| e.rejection(service, &k, sent.clone(), unknown))?;
            }
            _ => add_pair(op, Location::Body, k, raw, obj)?,
        }
    }
    Ok(uploads)
}

/// The `name=value` pairs of a form as bytes, `+` read as a space and `%XX` as its byte (the
/// WHATWG `application/x-www-form-urlencoded` parser's steps, before any text decoding).
fn form_pairs(body: &[u8]) -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> + '_ {
    let decode = |s: &[u8]| -> Vec<u8> {
        let spaced: Vec<u8> = s.iter().map(|b| if *b == b'+' { b' ' } else { *b }).collect();
        percent_encoding::percent_decode(&spaced).collect()
    };
    body.split(|b| *b == b'&').filter(|pair| !pair.is_empty()).map(move |pair| {
        let (k, v) = match pair.iter().position(|b| *b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &pair[pair.len()..]),
        };
        (decode(k), decode(v))
    })
}

/// A `multipart/form-data` body: text parts into the body fields, file parts stored as they
/// arrive. Answers the stored files by field name, for [`insert`].
pub(crate) async fn multipart<G: Gate>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    parts: &Parts,
    body: Body,
    limit: usize,
    obj: &mut Map<String, Value>,
) -> Result<Vec<(&'static str, Upload)>, Rejection> {
    let (service, roles) = (op.service, &op.service.roles);
    let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let boundary = (essence(content_type) == "multipart/form-data")
        .then(|| multer::parse_boundary(content_type).ok())
        .flatten()
        .ok_or_else(|| Rejection {
            code: roles.unsupported_media_type,
            problem: Problem::new("the request body must be multipart/form-data, with its boundary"),
        })?;
    // The whole body: every file at its largest, and the text parts within the body limit.
    let files: u64 = op.input.iter().filter_map(file_spec).map(|(_, max)| max).sum();
    let whole = files.saturating_add(limit as u64);
    let constraints = multer::Constraints::new().size_limit(multer::SizeLimit::new().whole_stream(whole));
    let mut form = multer::Multipart::with_constraints(body.into_data_stream(), boundary, constraints);
    let refused = |e: multer::Error| match e {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            too_large(op, whole, None)
        }
        other => Rejection {
            code: roles.malformed,
            problem: Problem::new(format!("the multipart body is not valid: {other}")),
        },
    };
    let mut uploads: Vec<(&'static str, Upload)> = Vec::new();
    while let Some(part) = form.next_field().await.map_err(refused)? {
        let name = part.name().unwrap_or_default().to_string();
        let Some(f) = op.input.iter().find(|f| f.name == name && f.location == Location::Body) else {
            return Err(invalid(service, &name, Value::Null, format!("unknown field {name}")));
        };
        let Some((accepted, max_size)) = file_spec(f) else {
            // A text part: read whole (within the body limit), then as a form value.
            let declared = part.content_type().map(|m| essence(m.as_ref()));
            let mut text = Vec::new();
            let mut part = part;
            while let Some(chunk) = part.chunk().await.map_err(refused)? {
                text.extend_from_slice(&chunk);
                if text.len() > limit {
                    return Err(too_large(op, limit as u64, Some(f.name)));
                }
            }
            let text = String::from_utf8(text)
                .map_err(|_| invalid(service, f.name, Value::Null, format!("{} must be UTF-8 text", f.name)))?;
            if json_part(f) {
                add_json_part(service, f, declared.as_deref(), text, obj)?;
                continue;
            }
            add_pair(op, Location::Body, name, text, obj)?;
            continue;
        };
        let media_type = part.content_type().map(|m| essence(m.as_ref())).unwrap_or("application/octet-stream".into());
        // The name without the directory part some browsers send (`C:\fakepath\photo.png`).
        let filename = part
            .file_name()
            .map(|n| n.rsplit(['/', '\\']).next().unwrap_or_default().chars().take(255).collect::<String>())
            .filter(|n| !n.is_empty());
        let content: UploadStream = Box::pin(part.map(|chunk| chunk.map_err(|e| e.to_string())));
        keep_file(gate, caller, op, f, (accepted, max_size), Sent { media_type, filename, content }, &mut uploads)
            .await?;
    }
    Ok(uploads)
}

/// A file part or a form's file value as it arrives: its declared media type, its name, its bytes.
struct Sent {
    media_type: String,
    filename: Option<String>,
    content: UploadStream,
}

/// Stores file field `f` of a form or multipart body (given once, of a type it accepts, within
/// its size) and adds it to `uploads`.
async fn keep_file<G: Gate>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    f: &'static FieldSpec,
    (accepted, max_size): (&'static [&'static str], u64),
    sent: Sent,
    uploads: &mut Vec<(&'static str, Upload)>,
) -> Result<(), Rejection> {
    if uploads.iter().any(|(n, _)| *n == f.name) {
        return Err(invalid(op.service, f.name, Value::Null, format!("{} is given more than once", f.name)));
    }
    if !accepts(accepted, &sent.media_type) {
        return Err(unsupported(op, f.name, &sent.media_type, accepted));
    }
    let stored = store(gate, caller, op, f.name, sent.content, max_size).await?;
    let (id, size, sha256) = (stored.id, stored.size, stored.sha256);
    uploads.push((f.name, Upload { id, size, sha256, media_type: sent.media_type, filename: sent.filename }));
    Ok(())
}

/// A raw body: the content of the input's one file field.
pub(crate) async fn raw<G: Gate>(
    gate: &G,
    caller: &G::Caller,
    op: &'static Operation,
    parts: &Parts,
    body: Body,
) -> Result<Vec<(&'static str, Upload)>, Rejection> {
    let Some((f, (accepted, max_size))) =
        op.input.iter().filter(|f| f.location == Location::Body).find_map(|f| file_spec(f).map(|s| (f, s)))
    else {
        return Ok(Vec::new());
    };
    let media_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(essence)
        .unwrap_or_else(|| "application/octet-stream".into());
    if !accepts(accepted, &media_type) {
        return Err(unsupported(op, f.name, &media_type, accepted));
    }
    // A declared length over the limit is refused before a byte is stored.
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_size) {
        return Err(too_large(op, max_size, Some(f.name)));
    }
    let content: UploadStream = Box::pin(body.into_data_stream().map(|chunk| chunk.map_err(|e| e.to_string())));
    let stored = store(gate, caller, op, f.name, content, max_size).await?;
    Ok(vec![(f.name, Upload { id: stored.id, size: stored.size, sha256: stored.sha256, media_type, filename: None })])
}

/// Puts the stored files into the input, after the other fields were checked, and refuses a
/// request without a required one.
pub(crate) fn insert(
    op: &'static Operation,
    uploads: Vec<(&'static str, Upload)>,
    obj: &mut Map<String, Value>,
) -> Result<(), Rejection> {
    for (name, upload) in uploads {
        obj.insert(name.to_string(), serde_json::to_value(upload).unwrap_or(Value::Null));
    }
    for f in op.input.iter().filter(|f| f.required && file_spec(f).is_some()) {
        if !obj.contains_key(f.name) {
            return Err(invalid(op.service, f.name, Value::Null, format!("{} is required", f.name)));
        }
    }
    Ok(())
}

/// A part of JSON text for field `f` into the fields in `obj`: an object (or a list of them)
/// travels as JSON, as OpenAPI's default `contentType` for such a part says; a part of any value
/// is JSON where its `Content-Type` (`declared`) says so, else its text. A list's parts add
/// items; any value given twice is the list of both.
fn add_json_part(
    service: &crate::table::ServiceInfo,
    f: &'static FieldSpec,
    declared: Option<&str>,
    text: String,
    obj: &mut Map<String, Value>,
) -> Result<(), Rejection> {
    let any = matches!(f.kind, Kind::Json);
    let json = !any || declared.is_some_and(crate::media::is_json_media);
    let value = if json { crate::query::json_text(service, f, &text)? } else { Value::String(text) };
    match obj.get_mut(f.name) {
        None if matches!(f.kind, Kind::List(_)) && !value.is_array() => {
            obj.insert(f.name.to_string(), Value::Array(vec![value]));
        }
        None => {
            obj.insert(f.name.to_string(), value);
        }
        Some(Value::Array(items)) if (any || matches!(f.kind, Kind::List(_))) && !value.is_array() => items.push(value),
        Some(first) if any => {
            let first = std::mem::take(first);
            obj.insert(f.name.to_string(), Value::Array(vec![first, value]));
        }
        Some(_) => {
            let text = format!("{} is given more than once", f.name);
            return Err(invalid(service, f.name, Value::Null, text));
        }
    }
    Ok(())
}

/// Whether field `f` of a multipart body is a part of JSON text: an object, a union, any JSON,
/// or a list of those (a scalar, or a list of scalars, is a part of text per value).
fn json_part(f: &FieldSpec) -> bool {
    let object = |k: &Kind| matches!(k, Kind::Model(_) | Kind::Map(_) | Kind::Json | Kind::Union(_));
    object(&f.kind) || matches!(&f.kind, Kind::List(inner) if object(inner) || matches!(inner, Kind::List(_)))
}

/// The operation's `413`: the body (or the file `field`) is larger than `limit` bytes.
pub(crate) fn too_large(op: &'static Operation, limit: u64, field: Option<&str>) -> Rejection {
    let problem = match field {
        Some(f) => Problem::new(format!("{f} is larger than {limit} bytes")).with("field", f),
        None => Problem::new(format!("the request body is larger than {limit} bytes")),
    };
    Rejection { code: op.service.roles.payload_too_large, problem: problem.with("limit", limit) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_match_exactly_or_by_family() {
        assert!(accepts(&["image/*", "application/pdf"], "image/png"));
        assert!(accepts(&["image/*", "application/pdf"], "application/pdf"));
        assert!(!accepts(&["image/*", "application/pdf"], "text/html"));
        assert!(!accepts(&["image/png"], "image/pngx"));
        assert!(accepts(&[], "anything/at-all"));
        assert!(accepts(&["*/*"], "anything/at-all"));
        assert_eq!(essence("Text/CSV; charset=utf-8"), "text/csv");
    }

    /// `POST /t/op` as multipart: a text part, and an object as a part of JSON text.
    static PARTS_INPUT: [FieldSpec; 2] =
        [FieldSpec::body("title", Kind::String).required(), FieldSpec::body("meta", Kind::Map(&Kind::Integer))];
    static PARTS: Operation =
        Operation { id: "parts", input: &PARTS_INPUT, body: BodyFormat::Multipart, ..crate::tests::OP };

    fn read(meta: &str) -> Result<Map<String, Value>, Rejection> {
        let body = format!(
            "--b\r\ncontent-disposition: form-data; name=\"title\"\r\n\r\nhello\r\n--b\r\n\
             content-disposition: form-data; name=\"meta\"\r\ncontent-type: application/json\r\n\r\n{meta}\r\n--b--\r\n"
        );
        let req = axum::http::Request::post("/t/op").header("content-type", "multipart/form-data; boundary=b");
        let parts = req.body(()).unwrap().into_parts().0;
        let mut obj = Map::new();
        let gate = crate::tests::Open;
        crate::tests::block_on(multipart(&gate, &"caller", &PARTS, &parts, Body::from(body), 1 << 20, &mut obj))?;
        Ok(obj)
    }

    /// `POST /t/op` as a form: nested values in bracket notation.
    static LINE: [FieldSpec; 2] =
        [FieldSpec::body("sku", Kind::String).required(), FieldSpec::body("count", Kind::Integer)];
    static NESTED_INPUT: [FieldSpec; 4] = [
        FieldSpec::body("name", Kind::String).required(),
        FieldSpec::body("lines", Kind::List(&Kind::Model(&LINE))),
        FieldSpec::body("metadata", Kind::Map(&Kind::String)),
        FieldSpec::body("extra", Kind::Json),
    ];
    static NESTED: Operation =
        Operation { id: "nested", input: &NESTED_INPUT, body: BodyFormat::Form, ..crate::tests::OP };

    use serde_json::json;

    fn form_fields(body: &str) -> Result<Map<String, Value>, Rejection> {
        let req = axum::http::Request::post("/t/op").header("content-type", "application/x-www-form-urlencoded");
        let mut parts = req.body(()).unwrap().into_parts().0;
        let read = crate::tests::block_on(crate::request_fields(
            &crate::tests::Open,
            &"caller",
            &NESTED,
            &mut parts,
            Body::from(body.to_string()),
            &crate::reads_nothing,
        ));
        read.map(|(fields, _)| fields)
    }

    #[test]
    fn a_form_carries_nested_values_in_bracket_notation() {
        let indexed =
            "name=n&lines[0][sku]=a&lines[0][count]=2&lines[1][sku]=b&metadata[k]=v&extra[x][y]=1&extra[t][]=p";
        let read = form_fields(indexed).expect("indexed items");
        assert_eq!(
            Value::Object(read),
            json!({"name": "n", "lines": [{"sku": "a", "count": 2}, {"sku": "b"}],
                "metadata": {"k": "v"}, "extra": {"x": {"y": "1"}, "t": ["p"]}})
        );
        // `[]` starts an item where the last one has the member already, as Rails reads it.
        let appended = form_fields("name=n&lines[][sku]=a&lines[][count]=1&lines[][sku]=b").expect("appended items");
        assert_eq!(appended["lines"], json!([{"sku": "a", "count": 1}, {"sku": "b"}]));
        let refused = |body: &str| form_fields(body).expect_err(body).problem.message;
        assert!(refused("name=n&lines[0][count]=x").contains("count must be"), "members are read as their type");
        assert!(refused("name=n&lines[0][colour]=red").contains("unknown field lines[0][colour]"));
        assert!(refused("name=n&lines[2][sku]=a").contains("unknown field"), "no index beyond the next item");
        assert!(refused("name=n&lines[0][count]=1").contains("sku"), "a nested model's required member");
        assert!(refused("name=n&metadata[k]=a&metadata[k]=b").contains("more than once"));
        assert!(refused("name[x]=n").contains("unknown field"), "a scalar has no members");
        let deep = format!("name=n&extra{}=1", "[a]".repeat(40));
        assert!(refused(&deep).contains("unknown field"), "nesting has a bound");
    }

    /// A gate keeping each upload's bytes, to show what was stored.
    struct Keeps;

    impl Gate for Keeps {
        type Caller = &'static str;
        type Context = &'static str;

        fn context(&self, caller: Self::Caller, _: &'static Operation, _: crate::Touched) -> Self::Context {
            caller
        }

        async fn admit(&self, _: &mut Parts, _: &'static Operation) -> Result<Self::Caller, axum::response::Response> {
            Ok("caller")
        }

        async fn refused(&self, _: &Self::Caller, _: &'static Operation, _: &'static str, _: u16) {}

        fn body_limit(&self) -> usize {
            1024
        }

        async fn store_upload(
            &self,
            _: &Self::Caller,
            content: UploadStream,
            limit: u64,
        ) -> Result<Stored, StoreError> {
            let chunks: Vec<_> = content.collect().await;
            let bytes: Vec<u8> = chunks.into_iter().flat_map(|c| c.unwrap().to_vec()).collect();
            if bytes.len() as u64 > limit {
                return Err(StoreError::TooLarge);
            }
            // The bytes themselves as the id, to show what arrived.
            Ok(Stored { id: format!("{bytes:?}"), size: bytes.len() as u64, sha256: String::new() })
        }
    }

    static SIGNED_INPUT: [FieldSpec; 2] = [
        FieldSpec::body("client", Kind::String).required(),
        FieldSpec::body("hmac", Kind::File { media_types: &[], max_size: 8 }).required(),
    ];
    static SIGNED: Operation =
        Operation { id: "signed", input: &SIGNED_INPUT, body: BodyFormat::Form, ..crate::tests::OP };

    fn signed(body: &'static str) -> Result<Map<String, Value>, Rejection> {
        let req = axum::http::Request::post("/t/op").header("content-type", "application/x-www-form-urlencoded");
        let mut parts = req.body(()).unwrap().into_parts().0;
        let read =
            crate::request_fields(&Keeps, &"caller", &SIGNED, &mut parts, Body::from(body), &crate::reads_nothing);
        crate::tests::block_on(read).map(|(fields, _)| fields)
    }

    #[test]
    fn a_file_in_a_form_is_its_value_s_bytes_stored_as_an_upload() {
        let read = signed("client=a+b&hmac=%00%FF+%2B").expect("stored");
        assert_eq!(read["client"], "a b", "text is decoded as a form writes it");
        assert_eq!(read["hmac"]["id"], "[0, 255, 32, 43]", "the bytes as sent, not text: {read:?}");
        assert_eq!(
            (&read["hmac"]["size"], &read["hmac"]["media_type"]),
            (&json!(4), &json!("application/octet-stream"))
        );
        let refused = |body: &'static str| signed(body).expect_err(body).problem.message;
        assert!(refused("client=a&hmac=123456789").contains("hmac is larger than 8 bytes"));
        assert!(refused("client=a").contains("hmac is required"));
        assert!(refused("client=a&hmac=1&hmac=2").contains("more than once"));
        assert!(refused("client=%FF&hmac=1").contains("client must be UTF-8 text"), "text is never read lossily");
    }

    #[test]
    fn an_object_in_a_multipart_body_is_a_part_of_json_text() {
        let obj = read(r#"{"a": 1}"#).expect("read");
        assert_eq!(Value::Object(obj), serde_json::json!({"title": "hello", "meta": {"a": 1}}));
        let refused = read("{not json").expect_err("not JSON");
        assert!(refused.problem.message.contains("meta must be JSON text"), "{}", refused.problem.message);
    }
}
