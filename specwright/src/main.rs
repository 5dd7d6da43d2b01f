//! `specwright`: run the server, or mint a token from its embedded authorization server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use runtime::config::{Config, DEFAULT_ADDR, DEFAULT_DATA_DIR};
use runtime::keys;

#[derive(Parser)]
#[command(
    name = "specwright",
    version,
    propagate_version = true,
    about = "Serve the Specwright vault and prospector APIs."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// Public base URL clients use: the token issuer and the base of every URL the server emits.
    /// May have a path (https://example.com/sw behind a proxy that strips /sw). Default
    /// http://<addr>.
    #[arg(long, env = "SPECWRIGHT_PUBLIC_URL", value_parser = runtime::config::parse_public_url)]
    public_url: Option<String>,
    /// Reverse proxies (CIDRs or addresses, comma-separated) believed when they name the client in
    /// Forwarded or X-Forwarded-For: the client address of anonymous rate limits, sign-in
    /// throttling and logs. Default: none (the TCP peer is the client).
    #[arg(long, env = "SPECWRIGHT_TRUSTED_PROXIES", value_delimiter = ',', value_parser = runtime::client_address::parse_network)]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// Directory for keys and data (created on first run).
    #[arg(long, env = "SPECWRIGHT_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    data_dir: PathBuf,
    /// Address to listen on.
    #[arg(long, env = "SPECWRIGHT_ADDR", default_value = DEFAULT_ADDR)]
    addr: SocketAddr,
    /// PostgreSQL URL (`postgres://…`); default: the SQLite file `specwright.db` in the data directory.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
    /// The services' own options.
    #[command(flatten)]
    services: specwright::Settings,
    /// Accept tokens issued for a service's REST API (and its stored tokens) at its MCP endpoint too.
    #[arg(long, env = "SPECWRIGHT_MCP_ACCEPT_REST_TOKENS")]
    mcp_accept_rest_tokens: bool,
    /// A browser origin besides the public URL's that may call the MCP endpoint (repeatable;
    /// comma-separated in the variable), e.g. the MCP Inspector's `http://localhost:6274`: its
    /// requests pass the DNS-rebinding check and get CORS answers.
    #[arg(long = "mcp-allowed-origin", env = "SPECWRIGHT_MCP_ALLOWED_ORIGINS", value_delimiter = ',', value_parser = runtime::config::parse_origin)]
    mcp_allowed_origins: Vec<String>,
    /// A `Host` name besides the public URL's host and the loopback names that the MCP endpoint
    /// answers (repeatable; comma-separated in the variable).
    #[arg(long = "mcp-allowed-host", env = "SPECWRIGHT_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    mcp_allowed_hosts: Vec<String>,
    /// Whether clients may register themselves with the embedded authorization server (RFC 7591
    /// Dynamic Client Registration, deprecated by MCP's 2026-07-28 revision): `false` leaves
    /// `registration_endpoint` out of its metadata and answers the path 404.
    #[arg(long, env = "SPECWRIGHT_DYNAMIC_REGISTRATION", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    dynamic_registration: bool,
    /// Whether clients may name themselves by the `https` URL of a Client ID Metadata Document
    /// (fetched when they sign in, as MCP clients do since the 2025-11-25 revision): `false`
    /// accepts registered clients only.
    #[arg(long, env = "SPECWRIGHT_CLIENT_METADATA_DOCUMENTS", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    client_metadata_documents: bool,
    /// Fetch client metadata documents from `http` URLs and private or loopback addresses too:
    /// for development and tests only (anyone could make the server send requests into its own
    /// network).
    #[arg(long, env = "SPECWRIGHT_CLIENT_METADATA_ALLOW_PRIVATE")]
    client_metadata_allow_private: bool,
    /// Redis URL for rate-limit counters shared by several server processes; default: in process.
    #[arg(long, env = "REDIS_URL")]
    redis_url: Option<String>,
    /// How many server processes share the Redis counters (each keeps its share if Redis fails).
    #[arg(long, env = "SPECWRIGHT_REPLICAS", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    replicas: u32,
    /// An external identity provider's issuer URL: turns the embedded authorization server, its
    /// sign-in and the console off, and accepts that issuer's tokens (keys found through its
    /// RFC 8414 or OpenID metadata).
    #[arg(long, env = "SPECWRIGHT_ISSUER")]
    issuer: Option<String>,
    /// The claim of the external issuer's tokens that names the user's tenant.
    #[arg(long, env = "SPECWRIGHT_TENANT_CLAIM", default_value = "tenant")]
    tenant_claim: String,
    /// Largest number of database connections; default 1 on SQLite (one writer), 16 on PostgreSQL.
    #[arg(long, env = "SPECWRIGHT_DB_MAX_CONNECTIONS", value_parser = clap::value_parser!(u32).range(1..=1000))]
    db_max_connections: Option<u32>,
    /// SQLite: connections for read-only transactions beside the one writer (WAL lets them read
    /// while it writes); default 4.
    #[arg(long, env = "SPECWRIGHT_DB_READERS", value_parser = clap::value_parser!(u32).range(1..=256))]
    db_readers: Option<u32>,
    /// Longest wait, in seconds, for a database connection before a request answers 503.
    #[arg(long, env = "SPECWRIGHT_DB_ACQUIRE_TIMEOUT", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=300))]
    db_acquire_timeout: u64,
    /// Seconds a client has to send a request's headers before the connection is closed.
    #[arg(long, env = "SPECWRIGHT_HEADER_READ_TIMEOUT", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    header_read_timeout: u64,
    /// Seconds a kept-alive connection may sit idle between requests before it is closed.
    #[arg(long, env = "SPECWRIGHT_IDLE_TIMEOUT", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    idle_timeout: u64,
    /// Seconds a whole request (body included) may take before it answers 408.
    #[arg(long, env = "SPECWRIGHT_REQUEST_TIMEOUT", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    request_timeout: u64,
    /// Seconds requests in flight may take to finish after SIGTERM or SIGINT before they are cut off.
    #[arg(long, env = "SPECWRIGHT_SHUTDOWN_TIMEOUT", default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=3600))]
    shutdown_timeout: u64,
    /// Log lines on standard error: `text`, `json`, or `auto` (text on a terminal, JSON otherwise).
    #[arg(long, env = "SPECWRIGHT_LOG_FORMAT", default_value = "auto")]
    log_format: runtime::logging::LogFormat,
    /// Serve Prometheus metrics (`GET /metrics`) on this address, apart from the public port; off
    /// when unset.
    #[arg(long, env = "SPECWRIGHT_METRICS_ADDR")]
    metrics_addr: Option<std::net::SocketAddr>,
    /// Most open client connections; at the cap the longest-idle one is closed for a new one.
    /// Default: the open-file limit less a reserve for the database and files.
    #[arg(long, env = "SPECWRIGHT_MAX_CONNECTIONS", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: Option<u32>,
}

impl Common {
    /// Opens (and migrates) the database these settings name.
    async fn store(&self) -> anyhow::Result<runtime::store::Store> {
        let config = self.config();
        if config.database_url.is_none() {
            specwright::adopt_legacy_database(&config.data_dir)?;
        }
        let store =
            runtime::store::Store::open_with(config.database_url.as_deref(), &config.data_dir, config.pool).await?;
        specwright::migrate(&store).await?;
        Ok(store)
    }

    fn config(&self) -> Config {
        let mut c = Config::new(self.addr, self.public_url.clone(), self.data_dir.clone());
        c.trusted_proxies = self.trusted_proxies.iter().copied().collect();
        c.database_url = self.database_url.clone();
        c.mcp_accepts_rest_tokens = self.mcp_accept_rest_tokens;
        c.mcp_allowed_origins = self.mcp_allowed_origins.clone();
        c.mcp_allowed_hosts = self.mcp_allowed_hosts.clone();
        c.dynamic_registration = self.dynamic_registration;
        c.client_documents.enabled = self.client_metadata_documents;
        c.client_documents.allow_private = self.client_metadata_allow_private;
        c.redis_url = self.redis_url.clone();
        c.replicas = self.replicas;
        c.external_issuer = self.issuer.clone();
        c.tenant_claim = self.tenant_claim.clone();
        c.pool = runtime::store::PoolSettings {
            max_connections: self.db_max_connections,
            max_readers: self.db_readers,
            acquire_timeout: Duration::from_secs(self.db_acquire_timeout),
        };
        c.http = runtime::server::HttpLimits {
            header_read_timeout: Duration::from_secs(self.header_read_timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
            request_timeout: Duration::from_secs(self.request_timeout),
            max_connections: self.max_connections.map(|n| n as usize),
            shutdown_timeout: Duration::from_secs(self.shutdown_timeout),
        };
        c.metrics_addr = self.metrics_addr;
        c
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server.
    Serve {
        #[command(flatten)]
        common: Common,
    },
    /// Print an access token signed by the embedded authorization server.
    Token {
        #[command(flatten)]
        common: Common,
        /// The user the token is for.
        #[arg(long)]
        sub: String,
        /// The user's tenant.
        #[arg(long)]
        tenant: String,
        /// Space-separated scopes, e.g. "vault:read vault:write" or "prospector".
        #[arg(long)]
        scope: String,
        /// Lifetime in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: i64,
        /// Prospector rate-limit plan.
        #[arg(long, value_parser = ["starter", "pro", "team"])]
        plan: Option<String>,
        /// Narrow the audience to these resource URLs (repeatable); default: every resource served.
        #[arg(long)]
        audience: Vec<String>,
    },
    /// Manage tenants.
    Tenant {
        #[command(subcommand)]
        command: TenantCommand,
    },
    /// Manage the users who sign in to the embedded authorization server and the console.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage keys: the authorization server's signing keys, and the keys of secrets at rest.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Check that a running server enforces the spec (every challenge, scope tier, PRM document,
    /// the OpenAPI documents, MCP tools, rate-limit headers); prints a pass/fail table and exits 1
    /// on any failure. Tokens are minted with the data directory's signing key.
    Conformance {
        #[command(flatten)]
        options: conformance::Options,
        /// Check against the specs in this folder (as the generator reads them) instead of the
        /// services compiled into the binary.
        #[arg(long)]
        spec: Option<PathBuf>,
    },
    /// Print a completion script for a shell, e.g. `specwright completions bash > /etc/bash_completion.d/specwright`.
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum TenantCommand {
    /// Create a tenant and its first administrator.
    Create {
        #[command(flatten)]
        common: Common,
        /// The tenant's id (tokens name it in their `tenant` claim).
        tenant: String,
        /// The user who becomes the tenant's first administrator.
        #[arg(long)]
        admin: String,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user in a tenant (or set a new password), reading the password from the terminal,
    /// from standard input, or from SPECWRIGHT_USER_PASSWORD. Stored as an argon2id hash.
    Add {
        #[command(flatten)]
        common: Common,
        /// The user's name (the `sub` of their tokens).
        user: String,
        /// The tenant they belong to (create it first with `specwright tenant create`).
        #[arg(long)]
        tenant: String,
    },
    /// Remove a user: their password, sessions, consents and refresh tokens.
    Remove {
        #[command(flatten)]
        common: Common,
        /// The user's name.
        user: String,
    },
}

/// The new user's password: the environment variable, else a no-echo prompt on a terminal, else
/// the first line of standard input.
fn read_password() -> anyhow::Result<String> {
    if let Ok(p) = std::env::var("SPECWRIGHT_USER_PASSWORD") {
        return Ok(p);
    }
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        let first = rpassword::prompt_password("password: ")?;
        let again = rpassword::prompt_password("again: ")?;
        anyhow::ensure!(first == again, "the two passwords differ");
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

#[derive(Subcommand)]
enum KeysCommand {
    /// New token-signing keys for the embedded authorization server (the access-token key and the
    /// ID token key). The old keys keep verifying (and stay in the JWKS) until retired, so live
    /// tokens stay valid; running servers pick the new keys up within seconds.
    RotateSigning {
        #[command(flatten)]
        common: Common,
    },
    /// Stop publishing and accepting a previous signing key, an access-token or an ID token key
    /// (tokens it signed stop working).
    RetireSigning {
        #[command(flatten)]
        common: Common,
        /// The key id (`kid`) to retire, as `rotate-signing` printed it.
        kid: String,
    },
}

async fn serve(config: Config, settings: specwright::Settings) -> anyhow::Result<()> {
    if config.database_url.is_none() {
        specwright::adopt_legacy_database(&config.data_dir)?;
    }
    let platform = runtime::Platform::open(config.clone()).await?;
    let app = specwright::app(&platform, &settings).await?;
    let rest: Vec<String> =
        specwright::catalog().services().map(|s| runtime::Catalog::rest_resource(&config, s)).collect();
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    let proxies: Vec<String> = config.trusted_proxies.networks().iter().map(ToString::to_string).collect();
    tracing::info!(
        addr = %config.addr,
        public_url = %config.public_url,
        trusted_proxies = %proxies.join(","),
        "serving: REST {}; docs {}",
        rest.join(", "),
        config.url(runtime::docs::DOCS_PATH),
    );
    platform.run(listener, app).await
}

impl Command {
    /// The settings every command but `completions` and `conformance` takes.
    fn common(&self) -> Option<&Common> {
        Some(match self {
            Command::Completions { .. } | Command::Conformance { .. } => return None,
            Command::Serve { common }
            | Command::Token { common, .. }
            | Command::Tenant { command: TenantCommand::Create { common, .. } }
            | Command::User { command: UserCommand::Add { common, .. } | UserCommand::Remove { common, .. } }
            | Command::Keys {
                command: KeysCommand::RotateSigning { common } | KeysCommand::RetireSigning { common, .. },
            } => common,
        })
    }
}

fn block_on<F: std::future::Future<Output = anyhow::Result<()>>>(f: F) -> anyhow::Result<()> {
    tokio::runtime::Runtime::new()?.block_on(f)
}

/// mimalloc rather than glibc's allocator: a request allocates and frees many small objects
/// (JSON values, rows), and glibc spent a tenth of a busy server's time consolidating them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A module's own command (`keys rotate`, `api-token create`), over the migrated database.
fn run_module_command(module: &dyn runtime::Module, path: &[String], args: &clap::ArgMatches) -> anyhow::Result<()> {
    let common = Common::from_arg_matches(args)?;
    runtime::logging::init(common.log_format);
    block_on(async move {
        let store = common.store().await?;
        let config = common.config();
        module.run_command(path, args, runtime::module::CommandContext { store: &store, config: &config }).await
    })
}

/// Transparent huge pages off for this process. mimalloc asks the kernel for them on the memory
/// it maps, and the first touch of each 2 MiB region then zeroes all of it at once: a backtest
/// that parses 100,000 stored leads into fresh memory spent half of its time in the kernel
/// zeroing pages (first run 0.42–0.49 s with them, 0.27–0.31 s without; throughput of small
/// requests is the same either way, see BENCHMARKS.md). The flag is the process's own
/// (`PR_SET_THP_DISABLE`); the machine's setting is untouched.
fn without_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE only sets a flag of this process; no memory is passed.
        let refused = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) } != 0;
        if refused {
            eprintln!("note: transparent huge pages stay on: {}", std::io::Error::last_os_error());
        }
    }
}

fn main() -> ExitCode {
    without_transparent_huge_pages();
    // The services' own commands join the binary's: each module brings its own.
    let modules = specwright::modules(&specwright::Settings::default());
    let line = runtime::module::CommandLine::new(Cli::command(), &modules, Common::augment_args);
    let matches = line.command.clone().get_matches();
    if let Some((index, path, args)) = line.owner(&matches) {
        return exit(run_module_command(modules[index].as_ref(), &path, args));
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let Some(common) = cli.command.common() {
        runtime::logging::init(common.log_format);
    }
    let result = match cli.command {
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut line.command.clone(), "specwright", &mut std::io::stdout());
            Ok(())
        }
        Command::Conformance { options, spec } => {
            let data_dir =
                std::env::var_os("SPECWRIGHT_DATA_DIR").map_or_else(|| PathBuf::from(DEFAULT_DATA_DIR), PathBuf::from);
            return match spec {
                Some(dir) => options.check(|| specwright::spec_contract::spec_contract(&dir), &data_dir),
                None => options.run(specwright::catalog().services(), &data_dir),
            };
        }
        Command::Serve { common } => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(serve(common.config(), common.services))),
        Command::Token { common, sub, tenant, scope, ttl, plan, audience } => (|| {
            let config = common.config();
            if !config.embedded_issuer() {
                anyhow::bail!("with --issuer, tokens come from that identity provider, not from this server");
            }
            if ttl <= 0 {
                anyhow::bail!("--ttl must be a positive number of seconds");
            }
            if !runtime::names::tenant_ok(&tenant) {
                anyhow::bail!("--tenant: {}", runtime::names::TENANT_RULE);
            }

            let keys = keys::SigningKeys::load_or_create(&config.data_dir)?;
            let audience = if audience.is_empty() { specwright::catalog().resources(&config) } else { audience };
            let claims = keys::claims(&config.issuer(), &sub, &tenant, &scope, audience, ttl, plan);
            println!("{}", keys.mint(&claims)?);
            Ok(())
        })(),
        Command::Tenant { command: TenantCommand::Create { common, tenant, admin } } => block_on(async move {
            let store = common.store().await?;
            specwright::create_tenant(&store, &tenant, &admin).await?;
            println!("created tenant {tenant} with administrator {admin}");
            Ok(())
        }),
        Command::User { command: UserCommand::Add { common, user, tenant } } => block_on(async move {
            let password = read_password()?;
            let store = common.store().await?;
            if runtime::oauth::users::add(&store, &user, &tenant, &password).await? {
                println!("created user {user} in tenant {tenant}");
            } else {
                println!("set a new password for {user} (their sessions are signed out)");
            }
            Ok(())
        }),
        Command::User { command: UserCommand::Remove { common, user } } => block_on(async move {
            let store = common.store().await?;
            anyhow::ensure!(runtime::oauth::users::remove(&store, &user).await?, "there is no user {user}");
            println!("removed user {user}; their sessions and refresh tokens are revoked");
            Ok(())
        }),
        Command::Keys { command: KeysCommand::RotateSigning { common } } => keys::SigningKeys::rotate(&common.data_dir)
            .map(|r| {
                println!("new signing key {}; previous key {} still verifies until retired", r.active, r.previous);
                println!(
                    "new ID token key {}; previous key {} stays published until retired",
                    r.id_active, r.id_previous
                );
            }),
        Command::Keys { command: KeysCommand::RetireSigning { common, kid } } => {
            keys::SigningKeys::retire(&common.data_dir, &kid).map(|()| println!("retired signing key {kid}"))
        }
    };
    exit(result)
}

/// The exit status of a command's result, its error printed.
fn exit(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
