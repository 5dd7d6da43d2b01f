//! `specwright`: run the server, or mint a token from its embedded authorization server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use runtime::config::{Config, DEFAULT_ADDR, DEFAULT_DATA_DIR};
use runtime::keys;

#[derive(Parser)]
#[command(name = "specwright", version, about = "Serve the Specwright vault and prospector APIs.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// Public base URL clients use (token issuer and resource identifiers); default http://<addr>.
    #[arg(long, env = "SPECWRIGHT_PUBLIC_URL")]
    public_url: Option<String>,
    /// Directory for keys and data (created on first run).
    #[arg(long, env = "SPECWRIGHT_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    data_dir: PathBuf,
    /// Address to listen on.
    #[arg(long, env = "SPECWRIGHT_ADDR", default_value = DEFAULT_ADDR)]
    addr: SocketAddr,
}

impl Common {
    fn config(&self) -> Config {
        Config::new(self.addr, self.public_url.clone(), self.data_dir.clone())
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
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let state = runtime::AppState::open(config.clone())?;
    let app = runtime::build(&state);
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    tracing::info!(addr = %config.addr, public_url = %config.public_url, "serving: REST {0}/api/v1, {0}/v1/prospector; docs {0}/docs/", config.public_url);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve { common } => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(serve(common.config()))),
        Command::Token { common, sub, tenant, scope, ttl, plan, audience } => (|| {
            let config = common.config();
            if ttl <= 0 {
                anyhow::bail!("--ttl must be a positive number of seconds");
            }
            let keys = keys::SigningKeys::load_or_create(&config.data_dir)?;
            let audience = if audience.is_empty() { config.all_resources() } else { audience };
            let claims = keys::claims(&config.issuer(), &sub, &tenant, &scope, audience, ttl, plan);
            println!("{}", keys.mint(&claims)?);
            Ok(())
        })(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
