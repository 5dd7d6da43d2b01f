//! `everything`: serves the MCP conformance service with everything the platform gives it (the
//! embedded authorization server, PRM, MCP at `/mcp`, docs, metrics). Settings come from the
//! environment: `EVERYTHING_ADDR` (default 127.0.0.1:8091), `EVERYTHING_DATA_DIR` (default `everything-data`),
//! `EVERYTHING_PUBLIC_URL`, `DATABASE_URL` (PostgreSQL; default SQLite in the data directory),
//! `REDIS_URL` (shared rate limits), `EVERYTHING_METRICS_ADDR` (Prometheus metrics, off when unset).
//! `everything token TENANT SCOPE` prints a token of the data directory's signing key for trying
//! it out (`everything:write` admits every operation); `everything conformance --url URL` checks a
//! running server against the spec (every challenge, scope tier, PRM document, the OpenAPI
//! documents, MCP tools).
//! SIGTERM or SIGINT stops it after the requests in flight finish.

use std::process::ExitCode;

fn config() -> anyhow::Result<runtime::Config> {
    runtime::Config::from_env("EVERYTHING", "127.0.0.1:8091", "everything-data")
}

/// A token for `tenant` with `scope`, signed with the data directory's key, for this service.
fn token(tenant: &str, scope: &str) -> anyhow::Result<String> {
    let config = config()?;
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir)?;
    let audience = runtime::Catalog::new([&everything::SERVICE]).resources(&config);
    keys.mint(&runtime::keys::claims(&config.issuer(), "developer", tenant, scope, audience, 3600, None))
}

async fn serve() -> anyhow::Result<()> {
    let config = config()?;
    let platform = runtime::Platform::open(config.clone()).await?;
    let app = everything::server(&platform).await?;
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    tracing::info!(
        "serving: REST {}; MCP {}; docs {}",
        config.url(everything::SERVICE.base_path),
        config.url(everything::SERVICE.mcp_path.unwrap_or_default()),
        config.url(runtime::docs::DOCS_PATH)
    );
    platform.run(listener, app).await
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(exit) = conformance::command(&args, [&everything::SERVICE], || Ok(config()?.data_dir)) {
        return exit;
    }
    let result = match args.iter().skip(1).map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["token", tenant, scope] => token(tenant, scope).map(|t| println!("{t}")),
        [] => {
            runtime::logging::init(Default::default());
            tokio::runtime::Runtime::new().map_err(anyhow::Error::from).and_then(|rt| rt.block_on(serve()))
        }
        _ => {
            eprintln!("usage: everything [token TENANT SCOPE | conformance --url URL]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
