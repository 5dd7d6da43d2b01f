//! Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, which MCP clients
//! use since the 2025-11-25 revision): a client whose `client_id` is an `https` URL is described
//! by the JSON document at that URL, fetched when the client shows up instead of registered
//! beforehand.
//!
//! - **The URL** is `https`, has a path, no fragment, no credentials and no `.`/`..` segment;
//!   its host must reach a public address (the platform's egress guard, [`crate::egress`]).
//! - **The fetch** follows no redirect, needs a `200`, reads at most [`DOCUMENT_LIMIT`] bytes
//!   within the configured time, and is kept as long as the answer's HTTP caching headers allow
//!   (RFC 9111 `Cache-Control: max-age`, `Age`, `Expires`; `no-store` and `no-cache` keep
//!   nothing; at most a day). Failures are never kept.
//! - **The document** names the same `client_id` (compared as strings), carries no
//!   `client_secret`, lists its `redirect_uris` (matched exactly at authorization), and
//!   authenticates at the token endpoint with `none` (a public client, the default here) or
//!   `private_key_jwt` (RFC 7523 assertions signed by a key of its `jwks` or `jwks_uri`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::http::{HeaderMap, StatusCode, header};
use serde_json::Value;

use super::redirects::{application_type_allows, redirect_uri_allowed};
pub use crate::config::DocumentSettings;

/// Largest client metadata document read, in bytes (the draft's recommended limit).
pub const DOCUMENT_LIMIT: usize = 5 * 1024;
/// Largest key set (`jwks_uri`) read, in bytes.
const KEYS_LIMIT: usize = 64 * 1024;
/// Longest a fetched document is kept, whatever its headers say.
const LONGEST_KEPT: Duration = Duration::from_secs(24 * 3600);
/// Most documents kept at once.
const KEPT_AT_MOST: usize = 1024;

/// How a client described by a document proves itself at the token endpoint.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum DocumentAuth {
    /// A public client: PKCE alone binds the code to it.
    None,
    /// RFC 7523 client assertions, verified with the document's keys.
    PrivateKeyJwt(KeySource),
}

/// Where a document's public keys are.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum KeySource {
    /// In the document (`jwks`).
    Inline(Value),
    /// At a URL of the client's (`jwks_uri`), fetched under the same rules as the document.
    Uri(String),
}

/// A client metadata document, checked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Described {
    pub(super) name: Option<String>,
    pub(super) redirect_uris: Vec<String>,
    pub(super) grant_types: Vec<String>,
    pub(super) auth: DocumentAuth,
}

/// Whether `id` names a client by its metadata document's URL (rather than a registered id).
pub(super) fn is_document_id(id: &str) -> bool {
    id.starts_with("https://") || id.starts_with("http://")
}

/// Checks `id` as a client id URL: `https` (or `http` where private targets are allowed), a path
/// other than `/`, no fragment, no credentials, no `.` or `..` segment, a public host.
pub(super) fn check_id(id: &str, allow_private: bool) -> Result<(), String> {
    let url = crate::egress::check(id, allow_private).map_err(|why| format!("the client id {why}"))?;
    if url.fragment().is_some() || id.contains('#') {
        return Err("the client id must not have a fragment".into());
    }
    let path = id.split_once("://").map_or("", |(_, rest)| rest.find('/').map_or("", |at| &rest[at..]));
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if path.is_empty() || path == "/" {
        return Err("the client id must have a path (https://host/path)".into());
    }
    if path.split('/').any(|segment| segment == "." || segment == "..") {
        return Err("the client id must not have a . or .. path segment".into());
    }
    Ok(())
}

/// Checks a fetched document for the client id `id`.
pub(super) fn describe(id: &str, doc: &Value, allow_private: bool) -> Result<Described, String> {
    let Value::Object(meta) = doc else { return Err("the document is not a JSON object".into()) };
    match meta.get("client_id") {
        Some(Value::String(named)) if named == id => {}
        Some(Value::String(named)) => return Err(format!("the document's client_id is {named}, not its own URL")),
        _ => return Err("the document has no client_id".into()),
    }
    if meta.contains_key("client_secret") || meta.contains_key("client_secret_expires_at") {
        return Err("the document carries a client secret, which a metadata document must not".into());
    }
    let strings = |name: &str| -> Result<Option<Vec<String>>, String> {
        match meta.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| format!("{name} must be an array of strings")),
            Some(_) => Err(format!("{name} must be an array of strings")),
        }
    };
    let redirect_uris = match strings("redirect_uris")? {
        Some(u) if !u.is_empty() && u.len() <= 10 => u,
        _ => return Err("redirect_uris must list 1 to 10 URIs".into()),
    };
    let application_type = match meta.get("application_type") {
        None | Some(Value::Null) => None,
        Some(Value::String(kind)) if matches!(kind.as_str(), "native" | "web") => Some(kind.as_str()),
        Some(_) => return Err("application_type is native or web".into()),
    };
    for uri in &redirect_uris {
        redirect_uri_allowed(uri).and_then(|()| application_type_allows(application_type, uri))?;
    }
    let grant_types =
        strings("grant_types")?.unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
    if let Some(g) = grant_types.iter().find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token")) {
        return Err(format!("grant type {g} is not supported"));
    }
    if strings("response_types")?.is_some_and(|r| r.iter().any(|t| t != "code")) {
        return Err("the only response type is code".into());
    }
    let name = match meta.get("client_name") {
        None | Some(Value::Null) => None,
        Some(Value::String(n)) if n.chars().count() <= 200 => Some(n.clone()),
        Some(_) => return Err("client_name must be a string of at most 200 characters".into()),
    };
    let auth = match meta.get("token_endpoint_auth_method").map(|m| (m, m.as_str())) {
        None | Some((Value::Null, _)) | Some((_, Some("none"))) => DocumentAuth::None,
        Some((_, Some("private_key_jwt"))) => match (meta.get("jwks"), meta.get("jwks_uri")) {
            (Some(keys @ Value::Object(_)), None) => DocumentAuth::PrivateKeyJwt(KeySource::Inline(keys.clone())),
            (None, Some(Value::String(uri))) => {
                crate::egress::check(uri, allow_private).map_err(|why| format!("jwks_uri {why}"))?;
                DocumentAuth::PrivateKeyJwt(KeySource::Uri(uri.clone()))
            }
            _ => return Err("private_key_jwt needs the client's keys: jwks or jwks_uri (one of them)".into()),
        },
        _ => return Err("token_endpoint_auth_method is none or private_key_jwt".into()),
    };
    Ok(Described { name, redirect_uris, grant_types, auth })
}

/// A fetched body kept until it goes stale.
struct Kept {
    body: Arc<Value>,
    until: Instant,
}

/// Fetches client metadata documents and key sets, keeping them as their caching headers allow.
pub(super) struct Documents {
    settings: DocumentSettings,
    http: reqwest::Client,
    kept: Mutex<HashMap<String, Kept>>,
}

impl std::fmt::Debug for Documents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Documents").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Documents {
    pub(super) fn new(settings: DocumentSettings) -> Self {
        let http = crate::egress::client(
            settings.timeout,
            concat!("Specwright-OAuth/", env!("CARGO_PKG_VERSION")),
            settings.allow_private,
        );
        Documents { settings, http, kept: Mutex::default() }
    }

    pub(super) fn enabled(&self) -> bool {
        self.settings.enabled
    }

    /// The client `id` describes, from its document.
    pub(super) async fn client(&self, id: &str) -> Result<Described, String> {
        check_id(id, self.settings.allow_private)?;
        let doc = self.fetch(id, DOCUMENT_LIMIT).await?;
        describe(id, &doc, self.settings.allow_private)
    }

    /// The key set of a client that signs its assertions.
    pub(super) async fn keys(&self, source: &KeySource) -> Result<Arc<Value>, String> {
        match source {
            KeySource::Inline(keys) => Ok(Arc::new(keys.clone())),
            KeySource::Uri(uri) => {
                crate::egress::check(uri, self.settings.allow_private).map_err(|why| format!("jwks_uri {why}"))?;
                self.fetch(uri, KEYS_LIMIT).await
            }
        }
    }

    fn kept(&self, url: &str) -> Option<Arc<Value>> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.get(url).filter(|k| k.until > Instant::now()).map(|k| k.body.clone())
    }

    fn keep(&self, url: &str, body: Arc<Value>, fresh_for: Duration) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if kept.len() >= KEPT_AT_MOST {
            kept.retain(|_, k| k.until > now);
        }
        if kept.len() >= KEPT_AT_MOST
            && let Some(soonest) = kept.iter().min_by_key(|(_, k)| k.until).map(|(u, _)| u.clone())
        {
            kept.remove(&soonest);
        }
        kept.insert(url.to_string(), Kept { body, until: now + fresh_for });
    }

    /// The JSON at `url`, from the cache while fresh.
    async fn fetch(&self, url: &str, limit: usize) -> Result<Arc<Value>, String> {
        if let Some(body) = self.kept(url) {
            return Ok(body);
        }
        let mut resp = self
            .http
            .get(url)
            .header(header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("fetching {url}: {}", crate::egress::describe(&e)))?;
        if resp.status().is_redirection() {
            return Err(format!("{url} answered {} (redirects are not followed)", resp.status()));
        }
        if resp.status() != StatusCode::OK {
            return Err(format!("{url} answered {}", resp.status()));
        }
        if resp.content_length().is_some_and(|n| n > limit as u64) {
            return Err(format!("{url} is larger than {limit} bytes"));
        }
        let mut body = Vec::new();
        while let Some(chunk) =
            resp.chunk().await.map_err(|e| format!("reading {url}: {}", crate::egress::describe(&e)))?
        {
            if body.len() + chunk.len() > limit {
                return Err(format!("{url} is larger than {limit} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        let doc: Value = serde_json::from_slice(&body).map_err(|e| format!("{url} is not JSON: {e}"))?;
        let doc = Arc::new(doc);
        if let Some(fresh_for) = freshness(resp.headers(), SystemTime::now()) {
            self.keep(url, doc.clone(), fresh_for);
        }
        Ok(doc)
    }
}

/// How long an answer with `headers`, received at `now`, may be reused (RFC 9111 section 4.2):
/// `max-age` less `Age`, else `Expires` less `Date`; nothing under `no-store` or `no-cache`
/// (which asks for a revalidation this cache does not make); at most [`LONGEST_KEPT`].
fn freshness(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let directives: Vec<String> = headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|d| d.trim().to_ascii_lowercase())
        .collect();
    if directives.iter().any(|d| d == "no-store" || d == "no-cache" || d.starts_with("no-cache=")) {
        return None;
    }
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let lifetime = match directives.iter().find_map(|d| d.strip_prefix("max-age=")) {
        Some(seconds) => Duration::from_secs(seconds.trim_matches('"').parse().ok()?),
        None => {
            let expires = httpdate::parse_http_date(text(header::EXPIRES)?).ok()?;
            let date = text(header::DATE).and_then(|d| httpdate::parse_http_date(d).ok()).unwrap_or(now);
            expires.duration_since(date).ok()?
        }
    };
    let age = Duration::from_secs(text(header::AGE).and_then(|a| a.parse().ok()).unwrap_or(0));
    let fresh_for = lifetime.checked_sub(age)?.min(LONGEST_KEPT);
    (!fresh_for.is_zero()).then_some(fresh_for)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use serde_json::json;

    const ID: &str = "https://app.example.com/oauth/client.json";

    #[test]
    fn a_client_id_url_is_https_with_a_path_and_nothing_that_hides_where_it_points() {
        assert_eq!(check_id(ID, false), Ok(()));
        assert_eq!(
            check_id("https://app.example.com/client?v=2", false),
            Ok(()),
            "a query is discouraged, not refused"
        );
        for (id, why) in [
            ("http://app.example.com/client.json", "the client id must be https"),
            ("https://app.example.com", "the client id must have a path (https://host/path)"),
            ("https://app.example.com/", "the client id must have a path (https://host/path)"),
            ("https://app.example.com/a#b", "the client id must not have a fragment"),
            ("https://app.example.com/a/../b", "the client id must not have a . or .. path segment"),
            ("https://app.example.com/./b", "the client id must not have a . or .. path segment"),
            ("https://me:pw@app.example.com/c", "the client id must not carry credentials"),
            ("https://127.0.0.1/c.json", "the client id names a private, loopback or link-local address"),
            ("https://[fe80::1]/c.json", "the client id names a private, loopback or link-local address"),
            (
                "https://169.254.169.254/latest/meta-data",
                "the client id names a private, loopback or link-local address",
            ),
        ] {
            assert_eq!(check_id(id, false), Err(why.to_string()), "{id}");
        }
        assert_eq!(check_id("http://127.0.0.1:9/c.json", true), Ok(()), "development and tests");
    }

    #[test]
    fn a_document_names_itself_lists_its_redirects_and_carries_no_secret() {
        let doc = json!({ "client_id": ID, "client_name": "App", "redirect_uris": ["http://127.0.0.1:3000/cb"] });
        let described = describe(ID, &doc, false).unwrap();
        assert_eq!(described.name.as_deref(), Some("App"));
        assert_eq!(described.auth, DocumentAuth::None);
        assert_eq!(described.grant_types, ["authorization_code", "refresh_token"]);
        let refused = |change: Value| {
            let mut d = doc.clone();
            for (k, v) in change.as_object().unwrap() {
                if v.is_null() {
                    d.as_object_mut().unwrap().remove(k);
                } else {
                    d[k] = v.clone();
                }
            }
            describe(ID, &d, false).expect_err("refused")
        };
        assert_eq!(
            refused(json!({ "client_id": "https://other.example/c" })),
            "the document's client_id is https://other.example/c, not its own URL"
        );
        assert_eq!(refused(json!({ "client_id": null })), "the document has no client_id");
        assert!(refused(json!({ "client_secret": "s3cret" })).contains("client secret"));
        assert_eq!(refused(json!({ "redirect_uris": [] })), "redirect_uris must list 1 to 10 URIs");
        assert!(refused(json!({ "redirect_uris": ["http://evil.example/cb"] })).contains("loopback"));
        assert_eq!(
            refused(json!({ "token_endpoint_auth_method": "client_secret_basic" })),
            "token_endpoint_auth_method is none or private_key_jwt"
        );
        assert!(refused(json!({ "token_endpoint_auth_method": "private_key_jwt" })).contains("jwks or jwks_uri"));
        assert!(
            refused(json!({ "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "https://10.0.0.1/k" }))
                .starts_with("jwks_uri names a private")
        );
        assert_eq!(
            refused(json!({ "grant_types": ["client_credentials"] })),
            "grant type client_credentials is not supported"
        );
        let signed = json!({ "client_id": ID, "redirect_uris": ["https://app.example.com/cb"],
            "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "https://app.example.com/jwks.json" });
        assert_eq!(
            describe(ID, &signed, false).unwrap().auth,
            DocumentAuth::PrivateKeyJwt(KeySource::Uri("https://app.example.com/jwks.json".into()))
        );
        assert!(describe(ID, &json!([1]), false).is_err());
    }

    #[test]
    fn a_document_is_kept_as_long_as_its_caching_headers_say() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let with = |pairs: &[(&str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.append(header::HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
            }
            freshness(&h, now)
        };
        assert_eq!(with(&[]), None, "no freshness information: fetched every time");
        assert_eq!(with(&[("cache-control", "public, max-age=300")]), Some(Duration::from_secs(300)));
        assert_eq!(with(&[("cache-control", "max-age=300"), ("age", "100")]), Some(Duration::from_secs(200)));
        assert_eq!(with(&[("cache-control", "max-age=300"), ("age", "400")]), None);
        assert_eq!(with(&[("cache-control", "max-age=300, no-store")]), None);
        assert_eq!(
            with(&[
                ("cache-control", "no-cache"),
                ("expires", &httpdate::fmt_http_date(now + Duration::from_secs(60)))
            ]),
            None
        );
        assert_eq!(with(&[("cache-control", "max-age=9999999")]), Some(LONGEST_KEPT));
        let date = httpdate::fmt_http_date(now);
        let expires = httpdate::fmt_http_date(now + Duration::from_secs(120));
        assert_eq!(with(&[("date", &date), ("expires", &expires)]), Some(Duration::from_secs(120)));
        assert_eq!(with(&[("date", &expires), ("expires", &date)]), None, "already expired");
        assert_eq!(with(&[("expires", "0")]), None, "an invalid date means expired");
    }
}
