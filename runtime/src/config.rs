//! Server configuration: where to listen, the public URL tokens and metadata name, the data
//! directory. Every setting has a default that needs no setup.

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
    /// Public base URL (scheme, host, port, no trailing slash): the token issuer and the base of
    /// every resource identifier.
    pub public_url: String,
    /// Where keys and databases live.
    pub data_dir: PathBuf,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// `postgres://…` to use PostgreSQL; `None` for the SQLite file in the data directory.
    pub database_url: Option<String>,
    /// Lease lifetimes (default and cap).
    pub leases: crate::vault::LeasePolicy,
    /// Accept tokens issued for the vault REST API at the MCP endpoint too (off by default).
    pub mcp_accepts_rest_tokens: bool,
    /// `redis://…` to share rate-limit counters between server processes; `None` for in-process.
    pub redis_url: Option<String>,
    /// Server processes sharing one Redis (each keeps `limit / replicas` if Redis is unreachable).
    pub replicas: u32,
    /// Lead sources of the prospector, `NAME=LOCATION` each (a file, a folder, an http(s) feed URL
    /// or `sample`); the embedded sample feed when empty.
    pub lead_sources: Vec<String>,
    /// Base URL of the platform's proposal API; `None` records submissions in the outbox table.
    pub platform_connector: Option<String>,
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
}

impl Config {
    /// Settings from the given values; the public URL defaults to `http://<addr>`.
    pub fn new(addr: SocketAddr, public_url: Option<String>, data_dir: PathBuf) -> Self {
        let public_url = public_url.unwrap_or_else(|| format!("http://{addr}"));
        Config {
            addr,
            public_url: public_url.trim_end_matches('/').to_string(),
            data_dir,
            body_limit: DEFAULT_BODY_LIMIT,
            database_url: None,
            leases: crate::vault::LeasePolicy::default(),
            mcp_accepts_rest_tokens: false,
            redis_url: None,
            replicas: 1,
            lead_sources: Vec::new(),
            platform_connector: None,
            oauth_code_ttl_seconds: 60,
            external_issuer: None,
            tenant_claim: "tenant".into(),
            pool: crate::store::PoolSettings::default(),
            http: crate::server::HttpLimits::default(),
        }
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

    /// Resource identifier of the vault REST API.
    pub fn vault_rest_resource(&self) -> String {
        format!("{}{}", self.public_url, generated::vault::SERVICE.base_path)
    }

    /// Resource identifier of the vault MCP endpoint.
    pub fn vault_mcp_resource(&self) -> String {
        format!("{}{}", self.public_url, generated::vault::SERVICE.mcp_path.unwrap_or("/api/mcp"))
    }

    /// Resource identifier of the prospector API.
    pub fn prospector_resource(&self) -> String {
        format!("{}{}", self.public_url, generated::prospector::SERVICE.base_path)
    }

    /// Every resource this server serves (the default audience of minted tokens).
    pub fn all_resources(&self) -> Vec<String> {
        vec![self.vault_rest_resource(), self.vault_mcp_resource(), self.prospector_resource()]
    }
}
