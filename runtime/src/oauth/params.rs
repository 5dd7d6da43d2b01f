//! Request parameters of the authorization server: form and query parameters (each name once),
//! redirect URLs with their query, and PKCE.

use std::collections::BTreeSet;

use axum::body::Bytes;
use axum::http::{HeaderMap, header};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::*;

/// Form or query parameters; every name at most once (RFC 6749 section 3.1) except `resource`.
#[derive(Debug)]
pub(super) struct Params(pub(super) Vec<(String, String)>);

/// Why a text is refused: it holds U+0000 (NUL), which PostgreSQL text cannot store. Every
/// parameter and every string of client metadata is checked before it reaches a query, as the
/// generated decoder does for the APIs.
pub(super) const HOLDS_NUL: &str = "holds U+0000 (NUL), which no parameter may";

impl Params {
    pub(super) fn parse(text: &str) -> Result<Params, String> {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(text).map_err(|_| "the parameters are not valid form encoding".to_string())?;
        let mut seen = BTreeSet::new();
        for (k, v) in &pairs {
            if k.contains('\0') || v.contains('\0') {
                return Err(format!("parameter {} {HOLDS_NUL}", k.escape_debug()));
            }
            if k != "resource" && !seen.insert(k.as_str()) {
                return Err(format!("parameter {k} is repeated"));
            }
        }
        Ok(Params(pairs))
    }

    /// A form body's parameters.
    pub(super) fn from_body(body: &Bytes) -> Result<Params, String> {
        std::str::from_utf8(body).map_err(|_| "the form is not UTF-8".to_string()).and_then(Params::parse)
    }

    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    pub(super) fn all(&self, name: &str) -> Vec<String> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).filter(|v| !v.is_empty()).collect()
    }
}

/// Whether the request's media type (parameters aside) is `mime`.
pub(super) fn content_type_is(headers: &HeaderMap, mime: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(mime))
}

/// The form of a token-endpoint request (RFC 6749 requires form encoding).
pub(super) fn form(headers: &HeaderMap, body: &Bytes) -> Result<Params, TokenError> {
    if !content_type_is(headers, "application/x-www-form-urlencoded") {
        return Err(TokenError::bad("invalid_request", "send application/x-www-form-urlencoded"));
    }
    Params::from_body(body).map_err(|e| TokenError::bad("invalid_request", e))
}

/// `base` with the query parameters added (the authorization response).
pub(super) fn with_query(base: &str, params: &[(&str, &str)]) -> String {
    match reqwest::Url::parse(base) {
        Ok(mut url) => {
            {
                let mut q = url.query_pairs_mut();
                for (k, v) in params {
                    q.append_pair(k, v);
                }
            }
            url.to_string()
        }
        Err(_) => base.to_string(),
    }
}

/// Whether the S256 transform of `verifier` is `challenge` (RFC 7636 section 4.6).
pub(super) fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    well_formed && sessions::same(&URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())), challenge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_comes_once_except_resource_and_empty_values_are_absent() {
        let p = Params::parse("client_id=c&resource=https%3A%2F%2Fa&resource=https%3A%2F%2Fb&state=").unwrap();
        assert_eq!(p.get("client_id"), Some("c"));
        assert_eq!(p.all("resource"), ["https://a", "https://b"]);
        assert_eq!(p.get("state"), None, "an empty value is no value");
        assert_eq!(Params::parse("scope=a&scope=b").err().as_deref(), Some("parameter scope is repeated"));
    }

    #[test]
    fn a_nul_in_a_name_or_a_value_is_refused() {
        assert!(Params::parse("state=a%00b").unwrap_err().contains("U+0000"));
        assert!(Params::parse("st%00ate=a").unwrap_err().contains("U+0000"));
        assert!(Params::from_body(&Bytes::from_static(b"\xff=1")).is_err(), "not UTF-8");
    }

    #[test]
    fn pkce_s256_matches_the_rfc_7636_example() {
        // RFC 7636, appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(pkce_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!pkce_matches(
            "another-verifier-of-sufficient-length-0123456789",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
    }

    #[test]
    fn the_response_parameters_join_the_redirect_uris_own_query() {
        assert_eq!(
            with_query("https://app.example/cb?x=1", &[("code", "a b"), ("state", "s")]),
            "https://app.example/cb?x=1&code=a+b&state=s"
        );
    }

    #[test]
    fn a_token_request_must_be_a_form() {
        let mut headers = HeaderMap::new();
        assert!(form(&headers, &Bytes::from_static(b"grant_type=x")).is_err());
        headers.insert(header::CONTENT_TYPE, "application/x-www-form-urlencoded; charset=utf-8".parse().unwrap());
        assert_eq!(
            form(&headers, &Bytes::from_static(b"grant_type=x"))
                .ok()
                .and_then(|p| p.get("grant_type").map(str::to_string))
                .as_deref(),
            Some("x")
        );
    }
}
