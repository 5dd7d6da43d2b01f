//! Webhook signatures as the Standard Webhooks specification defines them: what the platform
//! signs every delivery with, and what a receiver (in Rust) checks.
//!
//! A delivery carries three headers: `webhook-id` (the message id, the same on every retry, so
//! a receiver can drop duplicates), `webhook-timestamp` (Unix seconds of this attempt) and
//! `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` under the
//! subscription's secret. The secret is `whsec_` and base64 of its key bytes; several signatures
//! may be given, space-separated, while a secret is rotated.

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a Standard Webhooks secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// How far a delivery's timestamp may be from the receiver's clock before [`verify`] refuses it
/// (a replay of an old message), as the specification recommends.
pub const TOLERANCE_SECONDS: i64 = 5 * 60;

/// One event a service sends: its type (`note.changed`, a key of the spec's `webhooks`) and its
/// payload as JSON. The generated `webhooks` module of a service builds them, typed by the
/// payload's model; the runtime stores and delivers them.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The event type.
    pub event_type: &'static str,
    /// The payload (the event's `data`).
    pub data: serde_json::Value,
}

impl Event {
    /// Event `event_type` carrying `data`.
    pub fn new<T: serde::Serialize>(event_type: &'static str, data: &T) -> Self {
        Event { event_type, data: serde_json::to_value(data).unwrap_or(serde_json::Value::Null) }
    }
}

/// Why a delivery was not accepted as genuine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyError {
    /// The secret is not `whsec_` followed by base64.
    BadSecret,
    /// A header the specification requires is missing or not text: its name.
    MissingHeader(&'static str),
    /// `webhook-timestamp` is not a number of seconds.
    BadTimestamp,
    /// The timestamp is further than the tolerance from now: a replay, or a clock far off.
    Expired,
    /// No `v1` signature in `webhook-signature` matches the body.
    NoMatch,
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::BadSecret => f.write_str("the secret is not whsec_ followed by base64"),
            VerifyError::MissingHeader(h) => write!(f, "the delivery has no {h} header"),
            VerifyError::BadTimestamp => f.write_str("webhook-timestamp is not a number of seconds"),
            VerifyError::Expired => f.write_str("webhook-timestamp is too far from now (a replay?)"),
            VerifyError::NoMatch => f.write_str("no signature matches the body"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// The key bytes of a secret (`whsec_…`).
fn key(secret: &str) -> Result<Vec<u8>, VerifyError> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).ok_or(VerifyError::BadSecret)?;
    STANDARD.decode(encoded).map_err(|_| VerifyError::BadSecret)
}

/// A secret for `key` bytes: `whsec_` and their base64.
pub fn secret_of(key: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The `webhook-signature` value of message `id` sent at `timestamp` with `body`:
/// `v1,{base64 HMAC-SHA256}`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, VerifyError> {
    let mac = mac(&key(secret)?, id, timestamp, body);
    Ok(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

fn mac(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC accepts any key length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// Checks a delivery a receiver got: its `headers` and raw `body` (the bytes as received, not
/// re-serialized JSON) against `secret`, with `now` in Unix seconds. Comparison is in constant
/// time; any `v1` signature of the space-separated list may match.
pub fn verify(secret: &str, headers: &HeaderMap, body: &[u8], now: i64) -> Result<(), VerifyError> {
    let key = key(secret)?;
    let text =
        |name: &'static str| headers.get(name).and_then(|v| v.to_str().ok()).ok_or(VerifyError::MissingHeader(name));
    let (id, timestamp, signatures) = (text("webhook-id")?, text("webhook-timestamp")?, text("webhook-signature")?);
    let timestamp: i64 = timestamp.trim().parse().map_err(|_| VerifyError::BadTimestamp)?;
    if (now - timestamp).abs() > TOLERANCE_SECONDS {
        return Err(VerifyError::Expired);
    }
    let matches = signatures
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .any(|sig| STANDARD.decode(sig).is_ok_and(|bytes| mac(&key, id, timestamp, body).verify_slice(&bytes).is_ok()));
    if matches { Ok(()) } else { Err(VerifyError::NoMatch) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    /// The example of the Standard Webhooks specification's reference libraries.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TIMESTAMP: i64 = 1614265330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn headers(signature: &str, timestamp: i64) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("webhook-id", HeaderValue::from_static(ID));
        h.insert("webhook-timestamp", HeaderValue::from_str(&timestamp.to_string()).unwrap());
        h.insert("webhook-signature", HeaderValue::from_str(signature).unwrap());
        h
    }

    #[test]
    fn signatures_match_the_specification_example() {
        assert_eq!(sign(SECRET, ID, TIMESTAMP, BODY).unwrap(), SIGNATURE);
        assert_eq!(verify(SECRET, &headers(SIGNATURE, TIMESTAMP), BODY, TIMESTAMP + 10), Ok(()));
    }

    #[test]
    fn a_changed_body_an_old_timestamp_or_another_secret_is_refused() {
        let h = headers(SIGNATURE, TIMESTAMP);
        assert_eq!(verify(SECRET, &h, br#"{"test": 1}"#, TIMESTAMP), Err(VerifyError::NoMatch));
        assert_eq!(verify(SECRET, &h, BODY, TIMESTAMP + TOLERANCE_SECONDS + 1), Err(VerifyError::Expired));
        assert_eq!(verify(&secret_of(b"another key"), &h, BODY, TIMESTAMP), Err(VerifyError::NoMatch));
        assert_eq!(verify("not-a-secret", &h, BODY, TIMESTAMP), Err(VerifyError::BadSecret));
        let rotated = headers(&format!("v1,bm90IGl0 {SIGNATURE}"), TIMESTAMP);
        assert_eq!(verify(SECRET, &rotated, BODY, TIMESTAMP), Ok(()), "one of several signatures");
        let mut missing = h.clone();
        missing.remove("webhook-id");
        assert_eq!(verify(SECRET, &missing, BODY, TIMESTAMP), Err(VerifyError::MissingHeader("webhook-id")));
    }
}
