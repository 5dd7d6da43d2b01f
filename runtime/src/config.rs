//! Server configuration: where to listen, the public URL tokens and metadata name, the data
//! directory. Every setting has a default that needs no setup.
//!
//! Every URL the server emits (identifiers, metadata, links and form actions of its pages,
//! redirects, cookie paths, the documents' `servers`) comes from the public URL through
//! [`Config::url`] (absolute) or [`Config::path`] (the path a page links to), so a public URL
//! with a path (`https://example.com/sw`, behind a proxy that strips `/sw`) holds everywhere. What
//! a browser's `Origin` is compared with is [`Config::origin`]: scheme, host and port, no path.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Default listen address.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";
/// Default data directory (relative to the working directory).
pub const DEFAULT_DATA_DIR: &str = "specwright-data";
/// Default largest request body, in bytes (secrets are capped at 64 KiB by the spec).
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

/// Runtime settings shared by every component.
#[derive(Debug, Clone)]
pub struct Config {
    /// Socket to listen on.
    pub addr: SocketAddr,
    /// Public base URL (scheme, host, port and an optional path, no trailing slash): the token
    /// issuer and the base of every URL the server emits (see [`Config::url`]).
    pub public_url: String,
    /// Peers believed when they name the client in `Forwarded` / `X-Forwarded-For` (none by
    /// default).
    pub trusted_proxies: crate::client_address::TrustedProxies,
    /// Where keys and databases live.
    pub data_dir: PathBuf,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// `postgres://…` to use PostgreSQL; `None` for the SQLite file in the data directory.
    pub database_url: Option<String>,
    /// Accept tokens issued for a service's REST API at its MCP endpoint too (off by default).
    pub mcp_accepts_rest_tokens: bool,
    /// `redis://…` to share rate-limit counters between server processes; `None` for in-process.
    pub redis_url: Option<String>,
    /// Server processes sharing one Redis (each keeps `limit / replicas` if Redis is unreachable).
    pub replicas: u32,
    /// Lifetime of an authorization code, in seconds.
    pub oauth_code_ttl_seconds: i64,
    /// An external identity provider's issuer URL: turns the embedded authorization server off
    /// and accepts that issuer's tokens instead.
    pub external_issuer: Option<String>,
    /// The claim of external tokens that names the tenant.
    pub tenant_claim: String,
    /// Database pool: connections and how long a request waits for one.
    pub pool: crate::store::PoolSettings,
    /// Connection timeouts and the connection cap of the HTTP server.
    pub http: crate::server::HttpLimits,
    /// Where Prometheus metrics are served (`GET /metrics`); `None` (the default) measures nothing.
    pub metrics_addr: Option<SocketAddr>,
    /// How webhook deliveries are made: which URLs, the retry schedule, the timeout.
    pub webhooks: crate::webhooks::WebhookSettings,
    /// Browser origins (`https://app.example.com`) besides the public URL's that may call the MCP
    /// endpoints: their `Origin` passes the DNS-rebinding check and their requests get CORS
    /// answers. None by default: only the server's own origin.
    pub mcp_allowed_origins: Vec<String>,
    /// `Host` names besides the public URL's host and the loopback names the MCP endpoints
    /// answer (a name a proxy forwards unchanged).
    pub mcp_allowed_hosts: Vec<String>,
    /// Whether clients of the embedded authorization server may register themselves (RFC 7591
    /// Dynamic Client Registration, which MCP's 2026-07-28 revision deprecates). On by default;
    /// off, the metadata has no `registration_endpoint` and its path answers 404.
    pub dynamic_registration: bool,
    /// Whether clients of the embedded authorization server may name themselves by the URL of a
    /// Client ID Metadata Document, and how it is fetched.
    pub client_documents: DocumentSettings,
}

/// Whether and how the authorization server accepts Client ID Metadata Documents.
#[derive(Debug, Clone)]
pub struct DocumentSettings {
    /// Accept `https` client ids described by a metadata document (on by default).
    pub enabled: bool,
    /// Fetch from `http` URLs and private, loopback and link-local addresses (development and
    /// tests only: it lets anyone make the server send requests inside its own network).
    pub allow_private: bool,
    /// How long a fetch may take.
    pub timeout: std::time::Duration,
}

impl Default for DocumentSettings {
    fn default() -> Self {
        DocumentSettings { enabled: true, allow_private: false, timeout: std::time::Duration::from_secs(5) }
    }
}

impl Config {
    /// Settings from the given values; the public URL defaults to `http://<addr>`.
    pub fn new(addr: SocketAddr, public_url: Option<String>, data_dir: PathBuf) -> Self {
        let public_url = public_url.unwrap_or_else(|| format!("http://{addr}"));
        Config {
            addr,
            public_url: public_url.trim_end_matches('/').to_string(),
            trusted_proxies: crate::client_address::TrustedProxies::none(),
            data_dir,
            body_limit: DEFAULT_BODY_LIMIT,
            database_url: None,
            mcp_accepts_rest_tokens: false,
            redis_url: None,
            replicas: 1,
            oauth_code_ttl_seconds: 60,
            external_issuer: None,
            tenant_claim: "tenant".into(),
            pool: crate::store::PoolSettings::default(),
            http: crate::server::HttpLimits::default(),
            metrics_addr: None,
            webhooks: crate::webhooks::WebhookSettings::default(),
            mcp_allowed_origins: Vec::new(),
            mcp_allowed_hosts: Vec::new(),
            dynamic_registration: true,
            client_documents: DocumentSettings::default(),
        }
    }

    /// Settings of a service's own binary from the environment: `{PREFIX}_ADDR` (else
    /// `default_addr`), `{PREFIX}_PUBLIC_URL`, `{PREFIX}_DATA_DIR` (else `default_data_dir`),
    /// `DATABASE_URL` (PostgreSQL; SQLite in the data directory when unset), `REDIS_URL` (shared
    /// rate limits), `{PREFIX}_METRICS_ADDR` (Prometheus metrics, off when unset), and for
    /// webhooks `{PREFIX}_WEBHOOKS_RETRY_SECONDS` (the waits before each retry, comma-separated),
    /// `{PREFIX}_WEBHOOKS_TIMEOUT_SECONDS` and `{PREFIX}_WEBHOOKS_ALLOW_PRIVATE=1` (deliveries to
    /// `http` and private addresses: development and tests only), and for the MCP endpoint
    /// `{PREFIX}_MCP_ALLOWED_ORIGINS` and `{PREFIX}_MCP_ALLOWED_HOSTS` (comma-separated), and
    /// `{PREFIX}_DYNAMIC_REGISTRATION=0` to turn client self-registration off,
    /// `{PREFIX}_CLIENT_METADATA_DOCUMENTS=0` to refuse clients named by a metadata document's
    /// URL and `{PREFIX}_CLIENT_METADATA_ALLOW_PRIVATE=1` to fetch such documents from `http` and
    /// private addresses (development and tests only). An empty
    /// variable counts as unset; a malformed one is an error naming it.
    pub fn from_env(prefix: &str, default_addr: &str, default_data_dir: &str) -> anyhow::Result<Config> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let named = |suffix: &str| format!("{prefix}_{suffix}");
        let addr = var(&named("ADDR")).unwrap_or_else(|| default_addr.into());
        let addr = addr.parse().map_err(|e| anyhow::anyhow!("{}: {e}", named("ADDR")))?;
        let public_url = var(&named("PUBLIC_URL")).map(|u| parse_public_url(&u)).transpose();
        let public_url = public_url.map_err(|e| anyhow::anyhow!("{}: {e}", named("PUBLIC_URL")))?;
        let data_dir = var(&named("DATA_DIR")).unwrap_or_else(|| default_data_dir.into());
        let mut config = Config::new(addr, public_url, data_dir.into());
        config.database_url = var("DATABASE_URL");
        config.redis_url = var("REDIS_URL");
        let metrics_addr = var(&named("METRICS_ADDR")).map(|a| a.parse()).transpose();
        config.metrics_addr = metrics_addr.map_err(|e| anyhow::anyhow!("{}: {e}", named("METRICS_ADDR")))?;
        if let Some(list) = var(&named("WEBHOOKS_RETRY_SECONDS")) {
            let waits: Result<Vec<std::time::Duration>, _> =
                list.split(',').map(|n| n.trim().parse::<u64>().map(std::time::Duration::from_secs)).collect();
            config.webhooks.schedule =
                waits.map_err(|e| anyhow::anyhow!("{}: {e}", named("WEBHOOKS_RETRY_SECONDS")))?;
        }
        if let Some(n) = var(&named("WEBHOOKS_TIMEOUT_SECONDS")) {
            let n: u64 = n.parse().map_err(|e| anyhow::anyhow!("{}: {e}", named("WEBHOOKS_TIMEOUT_SECONDS")))?;
            anyhow::ensure!(n > 0, "{}: must be at least 1", named("WEBHOOKS_TIMEOUT_SECONDS"));
            config.webhooks.timeout = std::time::Duration::from_secs(n);
        }
        let list = |suffix: &str| -> Vec<String> {
            var(&named(suffix)).map_or_else(Vec::new, |v| {
                v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
            })
        };
        config.mcp_allowed_origins = list("MCP_ALLOWED_ORIGINS")
            .iter()
            .map(|o| parse_origin(o))
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow::anyhow!("{}: {e}", named("MCP_ALLOWED_ORIGINS")))?;
        config.mcp_allowed_hosts = list("MCP_ALLOWED_HOSTS");
        let flag = |suffix: &str, default: bool| -> anyhow::Result<bool> {
            match var(&named(suffix)).as_deref() {
                None => Ok(default),
                Some("1" | "true") => Ok(true),
                Some("0" | "false") => Ok(false),
                Some(other) => anyhow::bail!("{}: `{other}` is not 1 or 0", named(suffix)),
            }
        };
        config.webhooks.allow_private = flag("WEBHOOKS_ALLOW_PRIVATE", config.webhooks.allow_private)?;
        config.dynamic_registration = flag("DYNAMIC_REGISTRATION", true)?;
        config.client_documents.enabled = flag("CLIENT_METADATA_DOCUMENTS", true)?;
        config.client_documents.allow_private = flag("CLIENT_METADATA_ALLOW_PRIVATE", false)?;
        Ok(config)
    }

    /// The token issuer: the external identity provider when configured, else the embedded
    /// authorization server at the public URL.
    pub fn issuer(&self) -> String {
        self.external_issuer
            .as_deref()
            .map(|i| i.trim_end_matches('/').to_string())
            .unwrap_or_else(|| self.public_url.clone())
    }

    /// Whether the embedded authorization server (and its sign-in) runs.
    pub fn embedded_issuer(&self) -> bool {
        self.external_issuer.is_none()
    }

    /// The absolute URL of `path` (a path of this server, `/…`) as clients reach it: the public URL
    /// followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.public_url)
    }

    /// The path of `path` (a path of this server, `/…`) as browsers see it: the public URL's path
    /// followed by `path`. What pages link to, forms post to and redirects lead to.
    pub fn path(&self, path: &str) -> String {
        format!("{}{path}", self.base_path())
    }

    /// The public URL's path without a trailing slash (`/sw`), empty at the root of a host.
    pub fn base_path(&self) -> String {
        match url::Url::parse(&self.public_url) {
            Ok(u) => u.path().trim_end_matches('/').to_string(),
            Err(_) => String::new(),
        }
    }

    /// The `Path` of the session cookie: the public URL's path (the cookie is never sent to other
    /// applications of a shared host), `/` at the root.
    pub fn cookie_path(&self) -> String {
        match self.base_path() {
            p if p.is_empty() => "/".into(),
            p => p,
        }
    }

    /// The public URL's origin, which browsers send in `Origin` from this server's pages.
    pub fn origin(&self) -> Origin {
        Origin::of(&self.public_url)
    }
}

/// An origin (RFC 6454): scheme, host and port, serialised as browsers send it in `Origin`
/// (`https://example.com`, `http://127.0.0.1:8080`; never a path). Its own type, so a URL cannot
/// be passed where an origin is compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin(String);

impl Origin {
    /// The origin of `url` (the URL itself when it does not parse, which then matches nothing a
    /// browser sends).
    pub fn of(url: &str) -> Origin {
        match url::Url::parse(url) {
            Ok(u) if u.origin().is_tuple() => Origin(u.origin().ascii_serialization()),
            _ => Origin(url.to_string()),
        }
    }

    /// The serialised origin.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The origin with its port always written (`https://example.com:443`), for matchers that
    /// read a missing port as "any port".
    pub fn with_port(&self) -> String {
        match url::Url::parse(&self.0) {
            Ok(u) => match (u.host_str(), u.port_or_known_default()) {
                (Some(host), Some(port)) => format!("{}://{host}:{port}", u.scheme()),
                _ => self.0.clone(),
            },
            Err(_) => self.0.clone(),
        }
    }

    /// Whether an `Origin` header's value is this origin (scheme and host compare without case).
    pub fn matches(&self, header: &str) -> bool {
        header.eq_ignore_ascii_case(&self.0)
    }
}

/// Checks a public URL (`--public-url`): absolute `http` or `https` with a host, no query,
/// fragment or credentials. Returns it without trailing slashes.
pub fn parse_public_url(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| format!("{text} is not an absolute URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!("{text}: the public URL is http(s)://host[:port][/path]"));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{text}: the public URL has no query, fragment or credentials"));
    }
    // The path is spliced into routes, HTML and headers: letters, digits, `-._~` and
    // percent-escapes only.
    let given = text.trim_end_matches('/');
    let given_path = given.split_once("://").and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..])).unwrap_or("");
    let path = url.path().trim_end_matches('/');
    if given_path != path || !path.bytes().all(|b| b.is_ascii_alphanumeric() || b"/-._~%".contains(&b)) {
        return Err(format!("{text}: the public URL's path may hold letters, digits, -._~ and %-escapes only"));
    }
    Ok(given.to_string())
}

/// Checks a browser origin (`--mcp-allowed-origin`): `http(s)://host[:port]` as the `Origin`
/// header carries it, with no path, query or credentials (RFC 6454 section 6.1). Returns its
/// serialization (lowercase host, no default port, no trailing slash).
pub fn parse_origin(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| format!("{text} is not an origin ({e})"))?;
    let origin = url.origin();
    if !matches!(url.scheme(), "http" | "https") || !origin.is_tuple() {
        return Err(format!("{text}: an origin is http(s)://host[:port]"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(format!("{text}: an origin is http(s)://host[:port], with no path, query or credentials"));
    }
    Ok(origin.ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowed_origin_is_scheme_host_and_port_only() {
        assert_eq!(parse_origin("https://App.Example.com/").as_deref(), Ok("https://app.example.com"));
        assert_eq!(parse_origin("https://app.example.com:443").as_deref(), Ok("https://app.example.com"));
        assert_eq!(parse_origin("http://localhost:6274").as_deref(), Ok("http://localhost:6274"));
        for refused in
            ["https://app.example.com/path", "app.example.com", "ftp://app.example.com", "https://u@a.example", "*"]
        {
            assert!(parse_origin(refused).is_err(), "{refused}");
        }
    }

    fn config(public: &str) -> Config {
        Config::new("127.0.0.1:8080".parse().unwrap(), Some(public.into()), "data".into())
    }

    #[test]
    fn every_url_derives_from_the_public_url_and_origins_have_no_path() {
        let c = config("https://Example.com/sw/");
        assert_eq!(c.public_url, "https://Example.com/sw");
        assert_eq!(c.url("/oauth/authorize"), "https://Example.com/sw/oauth/authorize");
        assert_eq!(c.path("/login"), "/sw/login");
        assert_eq!(c.base_path(), "/sw");
        assert_eq!(c.cookie_path(), "/sw");
        assert_eq!(c.origin().as_str(), "https://example.com");
        assert!(c.origin().matches("https://example.com") && c.origin().matches("HTTPS://EXAMPLE.COM"));
        assert!(!c.origin().matches("https://example.com/sw") && !c.origin().matches("https://example.com:8443"));
        assert_eq!(c.url("/api/mcp"), "https://Example.com/sw/api/mcp");

        let root = Config::new("127.0.0.1:8080".parse().unwrap(), None, "data".into());
        assert_eq!(root.path("/login"), "/login");
        assert_eq!(root.cookie_path(), "/");
        assert_eq!(root.origin().as_str(), "http://127.0.0.1:8080");
        assert_eq!(config("https://example.com:443/a/b").origin().as_str(), "https://example.com");
        assert_eq!(config("http://[::1]:9000/x").origin().as_str(), "http://[::1]:9000");
        assert_eq!(config("http://[::1]:9000/x").path("/docs/"), "/x/docs/");
        assert_eq!(config("https://example.com/sw").origin().with_port(), "https://example.com:443");
        assert_eq!(config("http://[::1]:9000/x").origin().with_port(), "http://[::1]:9000");
    }

    #[test]
    fn public_urls_are_absolute_http_without_query_or_credentials() {
        assert_eq!(parse_public_url("https://example.com/sw/").unwrap(), "https://example.com/sw");
        assert_eq!(parse_public_url("http://127.0.0.1:8080").unwrap(), "http://127.0.0.1:8080");
        for bad in [
            "example.com",
            "/sw",
            "ftp://example.com",
            "https://example.com/?a=1",
            "https://example.com/#x",
            "https://u:p@example.com",
            "https://example.com/a:b",
            "https://example.com/a*",
            "https://example.com/a b",
            "https://example.com/./a",
        ] {
            assert!(parse_public_url(bad).is_err(), "{bad}");
        }
    }
}
