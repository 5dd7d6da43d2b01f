//! External identity provider mode (`--issuer <url>`): the embedded authorization server is off
//! and tokens are verified against the issuer's published keys. The keys' location comes from the
//! issuer's metadata (RFC 8414, else OpenID discovery); the key set is cached for as long as its
//! `Cache-Control` allows (1 minute to 1 day, 5 minutes by default), re-fetched early when a token
//! names a key id not yet seen (a rotation, at most once per 10 seconds), and the last good set is
//! kept while the provider cannot be reached.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use crate::keys::Claims;

/// Algorithms accepted from an external provider: asymmetric only (never `none` or HMAC).
const ALGORITHMS: [Algorithm; 9] = crate::keys::ASYMMETRIC_ALGORITHMS;
const DEFAULT_TTL: Duration = Duration::from_secs(300);
const MIN_REFRESH: Duration = Duration::from_secs(10);

struct Key {
    decoding: DecodingKey,
    /// The algorithm the JWK is restricted to, if it names one.
    alg: Option<Algorithm>,
    family: jsonwebtoken::AlgorithmFamily,
}

/// What fetching the keys remembers; behind an async lock, so one refresh runs at a time.
#[derive(Default)]
struct Fetcher {
    jwks_uri: Option<String>,
    last_attempt: Option<Instant>,
}

/// The keys by id, and until when they are fresh.
#[derive(Default)]
struct Keys {
    by_id: HashMap<String, std::sync::Arc<Key>>,
    fresh_until: Option<Instant>,
}

/// Tokens of an external issuer, verified with its published keys.
pub struct ExternalIssuer {
    issuer: String,
    tenant_claim: String,
    http: reqwest::Client,
    fetcher: tokio::sync::Mutex<Fetcher>,
    /// Readable without waiting for a refresh in progress.
    keys: Mutex<Keys>,
}

impl std::fmt::Debug for ExternalIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalIssuer").field("issuer", &self.issuer).finish_non_exhaustive()
    }
}

/// Why a token from the external issuer is refused (shown to the caller; never the token).
pub type Refusal = &'static str;

fn algorithm(a: jsonwebtoken::jwk::KeyAlgorithm) -> Option<Algorithm> {
    use jsonwebtoken::jwk::KeyAlgorithm as K;
    Some(match a {
        K::RS256 => Algorithm::RS256,
        K::RS384 => Algorithm::RS384,
        K::RS512 => Algorithm::RS512,
        K::PS256 => Algorithm::PS256,
        K::PS384 => Algorithm::PS384,
        K::PS512 => Algorithm::PS512,
        K::ES256 => Algorithm::ES256,
        K::ES384 => Algorithm::ES384,
        K::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

/// `max-age` of a `Cache-Control` header, clamped to a minute .. a day.
fn max_age(headers: &reqwest::header::HeaderMap) -> Duration {
    headers
        .get(reqwest::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').find_map(|d| d.trim().strip_prefix("max-age=").and_then(|n| n.parse::<u64>().ok())))
        .map(|s| Duration::from_secs(s.clamp(60, 86_400)))
        .unwrap_or(DEFAULT_TTL)
}

/// Where RFC 8414 (then OpenID discovery) puts the metadata of `issuer`.
fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(url) = reqwest::Url::parse(issuer) else { return vec![] };
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let mut urls = vec![format!("{origin}/.well-known/oauth-authorization-server{path}")];
    urls.push(format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/')));
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
    }
    urls
}

impl ExternalIssuer {
    /// Tokens of `issuer`, whose tenant is in the claim `tenant_claim`.
    pub fn new(issuer: &str, tenant_claim: &str) -> Result<Self> {
        let parsed = reqwest::Url::parse(issuer).with_context(|| format!("--issuer {issuer} is not a URL"))?;
        if !matches!(parsed.scheme(), "https" | "http") || parsed.query().is_some() || parsed.fragment().is_some() {
            bail!("--issuer must be an http(s) URL without query or fragment");
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()?;
        Ok(ExternalIssuer {
            issuer: issuer.trim_end_matches('/').to_string(),
            tenant_claim: tenant_claim.to_string(),
            http,
            fetcher: tokio::sync::Mutex::default(),
            keys: Mutex::default(),
        })
    }

    /// The issuer's identifier.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    async fn get_json(&self, url: &str) -> Result<(Value, Duration)> {
        let resp = self.http.get(url).header("accept", "application/json").send().await?;
        if !resp.status().is_success() {
            bail!("{url} answered {}", resp.status());
        }
        let ttl = max_age(resp.headers());
        let bytes = resp.bytes().await?;
        if bytes.len() > 1024 * 1024 {
            bail!("{url} answered more than 1 MiB");
        }
        Ok((serde_json::from_slice(&bytes).with_context(|| format!("{url} did not answer JSON"))?, ttl))
    }

    async fn discover(&self) -> Result<String> {
        let mut problems = Vec::new();
        for url in metadata_urls(&self.issuer) {
            match self.get_json(&url).await {
                Ok((doc, _)) => {
                    // RFC 8414 section 3.3: the document must name the issuer it was fetched for.
                    if doc["issuer"].as_str().map(|i| i.trim_end_matches('/')) != Some(self.issuer.as_str()) {
                        problems.push(format!("{url} names issuer {}", doc["issuer"]));
                        continue;
                    }
                    return doc["jwks_uri"]
                        .as_str()
                        .map(str::to_string)
                        .ok_or_else(|| anyhow!("{url} has no jwks_uri"));
                }
                Err(e) => problems.push(format!("{e:#}")),
            }
        }
        Err(anyhow!("no usable metadata for issuer {}: {}", self.issuer, problems.join("; ")))
    }

    /// Fetches the key set (discovering where it lives first, once).
    async fn refresh(&self, fetcher: &mut Fetcher) -> Result<()> {
        fetcher.last_attempt = Some(Instant::now());
        let uri = match &fetcher.jwks_uri {
            Some(u) => u.clone(),
            None => {
                let u = self.discover().await?;
                fetcher.jwks_uri = Some(u.clone());
                u
            }
        };
        let (doc, ttl) = self.get_json(&uri).await?;
        let set: JwkSet = serde_json::from_value(doc).context("the JWK Set does not parse")?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            let Some(kid) = jwk.common.key_id.clone() else { continue };
            if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_) | AlgorithmParameters::Other(_)) {
                continue;
            }
            let family = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => jsonwebtoken::AlgorithmFamily::Rsa,
                AlgorithmParameters::EllipticCurve(_) => jsonwebtoken::AlgorithmFamily::Ec,
                _ => jsonwebtoken::AlgorithmFamily::Ed,
            };
            match DecodingKey::from_jwk(jwk) {
                Ok(decoding) => {
                    let alg = jwk.common.key_algorithm.and_then(algorithm);
                    keys.insert(kid, std::sync::Arc::new(Key { decoding, alg, family }));
                }
                Err(e) => tracing::warn!(kid, error = %e, "skipping an unusable key of the external issuer"),
            }
        }
        if let Ok(mut k) = self.keys.lock() {
            *k = Keys { by_id: keys, fresh_until: Instant::now().checked_add(ttl) };
        }
        Ok(())
    }

    /// Fetches the metadata and keys now (at start-up), so the first request need not wait.
    pub async fn warm_up(&self) -> Result<()> {
        let mut fetcher = self.fetcher.lock().await;
        self.refresh(&mut fetcher).await
    }

    /// The key `kid` as last fetched, and whether the set is still fresh.
    fn cached(&self, kid: &str) -> (Option<std::sync::Arc<Key>>, bool) {
        match self.keys.lock() {
            Ok(k) => (k.by_id.get(kid).cloned(), k.fresh_until.is_some_and(|until| Instant::now() < until)),
            Err(_) => (None, false),
        }
    }

    /// The key `kid`, refreshing the set when it is stale or does not know the id.
    async fn key(&self, kid: &str) -> Option<std::sync::Arc<Key>> {
        let (known, fresh) = self.cached(kid);
        if fresh && known.is_some() {
            return known;
        }
        // Stale, or an unknown kid: fetch again, unless a fetch was just tried. On failure keep
        // serving with the keys we have, and say why the refresh failed.
        let mut fetcher = self.fetcher.lock().await;
        if fetcher.last_attempt.is_none_or(|t| t.elapsed() >= MIN_REFRESH)
            && let Err(e) = self.refresh(&mut fetcher).await
        {
            tracing::warn!(issuer = %self.issuer, error = %format!("{e:#}"), "could not refresh the external issuer's keys");
        }
        self.cached(kid).0.or(known)
    }

    /// Verifies `token` for one of `audiences` and maps its claims (the tenant from the configured
    /// claim; scopes from `scope` or `scp`).
    pub async fn verify(&self, token: &str, audiences: &[String]) -> Result<Claims, Refusal> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| "the token is malformed")?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err("the token's algorithm is not accepted");
        }
        crate::keys::check_access_token_type(&header)?;
        let kid = header.kid.as_deref().ok_or("the token names no key (kid)")?;
        let key = self.key(kid).await.ok_or("the token is signed with a key the issuer does not publish")?;
        if key.family != header.alg.family() || key.alg.is_some_and(|a| a != header.alg) {
            return Err("the token's algorithm does not match its key");
        }
        let mut v = Validation::new(header.alg);
        v.set_issuer(&[&self.issuer, &format!("{}/", self.issuer)]);
        v.set_audience(audiences);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = 30;
        let data = jsonwebtoken::decode::<Value>(token, &key.decoding, &v).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::InvalidAudience => "the token is not issued for this resource",
                ErrorKind::InvalidIssuer => "the token is not issued by the configured issuer",
                ErrorKind::InvalidSignature => "the token's signature is not valid",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                _ => "the token is malformed",
            }
        })?;
        let c = data.claims;
        let text = |name: &str| c.get(name).and_then(Value::as_str).map(str::to_string);
        let tenant = text(&self.tenant_claim).filter(|t| !t.is_empty()).ok_or("the token carries no tenant claim")?;
        let scope = match (c.get("scope"), c.get("scp")) {
            (Some(Value::String(s)), _) => s.clone(),
            (_, Some(Value::Array(items))) => items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "),
            (_, Some(Value::String(s))) => s.clone(),
            _ => String::new(),
        };
        let aud = match c.get("aud") {
            Some(Value::String(a)) => vec![a.clone()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        };
        Ok(Claims {
            iss: self.issuer.clone(),
            sub: text("sub").ok_or("the token has no subject")?,
            aud,
            exp: c.get("exp").and_then(Value::as_i64).unwrap_or_default(),
            iat: c.get("iat").and_then(Value::as_i64).unwrap_or_default(),
            jti: text("jti").unwrap_or_default(),
            scope,
            tenant,
            plan: text("plan"),
            client_id: text("client_id").or_else(|| text("azp")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_up_where_rfc_8414_and_openid_put_it() {
        assert_eq!(
            metadata_urls("https://idp.example.com"),
            [
                "https://idp.example.com/.well-known/oauth-authorization-server",
                "https://idp.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://idp.example.com/realms/acme"),
            [
                "https://idp.example.com/.well-known/oauth-authorization-server/realms/acme",
                "https://idp.example.com/realms/acme/.well-known/openid-configuration",
                "https://idp.example.com/.well-known/openid-configuration/realms/acme"
            ]
        );
    }

    #[test]
    fn cache_lifetime_follows_max_age_within_bounds() {
        let mut h = reqwest::header::HeaderMap::new();
        assert_eq!(max_age(&h), DEFAULT_TTL);
        h.insert(reqwest::header::CACHE_CONTROL, "public, max-age=600".parse().unwrap());
        assert_eq!(max_age(&h), Duration::from_secs(600));
        h.insert(reqwest::header::CACHE_CONTROL, "max-age=1".parse().unwrap());
        assert_eq!(max_age(&h), Duration::from_secs(60));
    }
}
