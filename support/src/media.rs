//! Media types: which are JSON, and which are media types at all.

/// Whether `media` is an RFC 9110 media type, parameters too (`text/csv; charset=utf-8`), and no
/// range (`*/*`, `image/*`).
pub fn is_media_type(media: &str) -> bool {
    let token = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
    let mut parts = media.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    let params_ok = parts.all(|p| p.split_once('=').is_some_and(|(k, v)| token(k.trim()) && !v.trim().is_empty()));
    params_ok && essence.split_once('/').is_some_and(|(kind, sub)| token(kind) && token(sub))
}

/// Whether a media type is read and written as JSON: `application/json`, `text/json`, any
/// `+json` structured type (`application/merge-patch+json`, `application/vnd.acme.v2+json`) and
/// the family `application/*+json`, with or without parameters (`; charset=utf-8`).
pub fn is_json_media(media: &str) -> bool {
    let m = media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let Some((kind, sub)) = m.split_once('/') else { return false };
    let token = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-*".contains(&b));
    token(kind) && token(sub) && (m == "application/json" || m == "text/json" || sub.ends_with("+json"))
}
