//! Conditional requests (RFC 9110 section 13), declared per operation in the spec.
//!
//! An entity tag is a digest of the output's JSON (the value the operation answers, before the
//! service's wire format wraps it), so a read and the check a write makes inside its
//! transaction compute the same tag for the same representation, and no column has to keep one.
//!
//! - A conditional read answers `ETag`, and `304 Not Modified` (no body) when `If-None-Match`
//!   names the current tag (weak comparison) or is `*`.
//! - A conditional write receives the request's `If-Match` as [`IfMatch`] in its input; the
//!   implementation checks it against the current representation, in the transaction that
//!   changes it ([`IfMatch::check`]), so no concurrent write slips between check and change.
//!   A mismatch is `412`; with `required`, a request without `If-Match` is `428` before the
//!   implementation runs. Its success answer carries the new `ETag`.

use axum::http::{HeaderMap, header};
use base64::Engine;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::json_text::JsonText;
use crate::problem::Problem;

pub use crate::table::Conditional;

/// The strong entity tag of a JSON value: a quoted base64url SHA-256 digest (128 bits) of its
/// compact text.
pub fn etag_of(value: &Value) -> String {
    etag_of_text(&value.to_string())
}

/// The strong entity tag of a value's compact JSON text (as [`etag_of`] its value).
pub fn etag_of_text(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!("\"{}\"", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..16]))
}

/// The entity tag a conditional operation answers for `output`: the same digest the REST answer's
/// `ETag` carries.
pub fn etag<T: Serialize>(output: &T) -> String {
    etag_of_text(JsonText::of(output).as_str())
}

/// One `If-Match` / `If-None-Match` list: `*`, or entity tags (`"x"`, weak `W/"x"`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tags {
    Any,
    List(Vec<String>),
}

/// Parses a list of entity tags; `None` when it is not one.
fn parse(raw: &str) -> Option<Tags> {
    let raw = raw.trim();
    if raw == "*" {
        return Some(Tags::Any);
    }
    let mut tags = Vec::new();
    for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let opaque = part.strip_prefix("W/").unwrap_or(part);
        let inner = opaque.strip_prefix('"').and_then(|t| t.strip_suffix('"'))?;
        // etagc: %x21 / %x23-7E (obs-text, which no tag of ours holds, is refused too).
        if inner.bytes().any(|b| b == b'"' || !(0x21..0x7f).contains(&b)) {
            return None;
        }
        tags.push(part.to_string());
    }
    (!tags.is_empty()).then_some(Tags::List(tags))
}

/// The `If-Match` of a conditional write, as its implementation receives it in the input. The
/// decoder puts the header's text in the input's `if_match`; absent, it is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IfMatch(Option<Tags>);

impl<'de> serde::Deserialize<'de> for IfMatch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match <Option<String> as serde::Deserialize>::deserialize(d)? {
            None => Ok(IfMatch(None)),
            Some(raw) => Ok(IfMatch::parse(&raw)),
        }
    }
}

/// Every `name` header line of a request joined with commas (a list header's lines are one list,
/// RFC 9110 section 5.3); `None` when there is none. Bytes outside visible ASCII are kept (as
/// U+FFFD), so such a value is refused as malformed rather than taken for an absent header.
pub fn joined(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    let lines: Vec<String> =
        headers.get_all(name).iter().map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()).collect();
    (!lines.is_empty()).then(|| lines.join(","))
}

impl IfMatch {
    /// Reads an `If-Match` value (several header lines joined with commas). A value that is not
    /// a list of entity tags names no version, so it matches none: the write is refused with
    /// `412`, as for a tag of another version (RFC 9110 section 13.1.1 evaluates the condition;
    /// it does not make a malformed one a client error).
    pub fn parse(raw: &str) -> Self {
        IfMatch(Some(parse(raw).unwrap_or(Tags::List(Vec::new()))))
    }

    /// Whether a write may go ahead on the resource whose current representation is `current`:
    /// there is no `If-Match`, it is `*`, or it names `current`'s tag (strong comparison, as RFC
    /// 9110 section 13.1.1 asks: a weak tag never matches). Otherwise the problem to answer
    /// with the operation's `412` code; it names the current tag.
    pub fn check<T: Serialize>(&self, current: &T) -> Result<(), Problem> {
        let Some(Tags::List(tags)) = &self.0 else { return Ok(()) };
        let now = etag(current);
        if tags.contains(&now) {
            return Ok(());
        }
        Err(Problem::new("it changed since the version If-Match names: read it again, then retry").with("etag", now))
    }

    /// As [`check`](Self::check), for a resource that does not exist: only an absent `If-Match`
    /// lets the write go ahead (`*` asks for an existing one).
    pub fn check_absent(&self) -> Result<(), Problem> {
        match self.0 {
            None => Ok(()),
            Some(_) => Err(Problem::new("If-Match names a version, but there is none")),
        }
    }
}

/// Whether a read's `If-None-Match` matches `etag` (weak comparison), so the answer is `304`.
/// A header that is not a list of entity tags is ignored.
pub fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    let Some(raw) = joined(headers, header::IF_NONE_MATCH) else { return false };
    let weak = |t: &str| t.strip_prefix("W/").unwrap_or(t).to_string();
    match parse(&raw) {
        Some(Tags::Any) => true,
        Some(Tags::List(tags)) => tags.iter().any(|t| weak(t) == weak(etag)),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use serde_json::json;

    fn headers(name: header::HeaderName, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn the_tag_is_the_digest_of_the_output_and_changes_with_it() {
        let a = etag(&json!({"id": "n1", "title": "a"}));
        assert_eq!(a, etag(&json!({"id": "n1", "title": "a"})));
        assert_ne!(a, etag(&json!({"id": "n1", "title": "b"})));
        assert!(a.starts_with('"') && a.ends_with('"') && a.len() == 24, "{a}");
    }

    #[test]
    fn if_match_compares_strongly_and_names_the_current_tag_when_it_fails() {
        let note = json!({"title": "a"});
        let tag = etag(&note);
        let matched = IfMatch::parse(&format!("\"other\", {tag}"));
        assert_eq!(matched.check(&note), Ok(()));
        let weak = IfMatch::parse(&format!("W/{tag}"));
        let refused = weak.check(&note).unwrap_err();
        assert_eq!(refused.details["etag"], json!(tag));
        let any = IfMatch::parse("*");
        assert_eq!((any.check(&note), any.check_absent().is_err()), (Ok(()), true));
        assert_eq!(IfMatch::default().check(&note), Ok(()));
        for garbage in ["abc", "\"a\"b\"", "", "0"] {
            assert!(IfMatch::parse(garbage).check(&note).is_err(), "{garbage:?} names no version");
        }
    }

    #[test]
    fn if_none_match_compares_weakly_and_ignores_garbage() {
        let tag = etag(&json!(1));
        assert!(not_modified(&headers(header::IF_NONE_MATCH, &format!("W/{tag}")), &tag));
        assert!(not_modified(&headers(header::IF_NONE_MATCH, "*"), &tag));
        assert!(!not_modified(&headers(header::IF_NONE_MATCH, "\"x\""), &tag));
        assert!(!not_modified(&headers(header::IF_NONE_MATCH, "garbage"), &tag));
        assert!(!not_modified(&HeaderMap::new(), &tag));
    }
}
