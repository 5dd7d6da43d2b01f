//! `notes`: serves the example notes service alone, with everything the platform gives it (the
//! embedded authorization server, PRM, MCP, docs, rate limits, audit). Settings come from the
//! environment: `NOTES_ADDR` (default 127.0.0.1:8090), `NOTES_DATA_DIR` (default `notes-data`),
//! `NOTES_PUBLIC_URL`, `DATABASE_URL` (PostgreSQL; default SQLite in the data directory) and
//! `REDIS_URL` (shared rate limits), `NOTES_METRICS_ADDR` (Prometheus metrics, off when unset),
//! `NOTES_LOG_FORMAT` (`text`, `json`, or `auto`: text on a terminal, JSON otherwise). SIGTERM or SIGINT stops it after the requests in flight finish.
//! `notes token TENANT SCOPE` prints a token of the data directory's signing key for trying it
//! out; `notes conformance --url URL` checks a running notes server against the spec (the
//! conformance kit, with tokens of `NOTES_DATA_DIR`'s signing key).

use std::process::ExitCode;

fn config() -> anyhow::Result<runtime::Config> {
    runtime::Config::from_env("NOTES", "127.0.0.1:8090", "notes-data")
}

/// A token for `tenant` with `scope`, signed with the data directory's key, for this service.
fn token(tenant: &str, scope: &str) -> anyhow::Result<String> {
    let config = config()?;
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir)?;
    let audience = runtime::Catalog::new([&notes::SERVICE]).resources(&config);
    keys.mint(&runtime::keys::claims(&config.issuer(), "developer", tenant, scope, audience, 3600, None))
}

async fn serve() -> anyhow::Result<()> {
    let config = config()?;
    let platform = runtime::Platform::open(config.clone()).await?;
    let app = notes::server(&platform).await?;
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    tracing::info!(
        "serving: REST {}; MCP {}; docs {}",
        config.url(notes::SERVICE.base_path),
        config.url(notes::SERVICE.mcp_path.unwrap_or_default()),
        config.url(runtime::docs::DOCS_PATH)
    );
    platform.run(listener, app).await
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(exit) = conformance::command(&args, [&notes::SERVICE], || Ok(config()?.data_dir)) {
        return exit;
    }
    if let [_, command, tenant, scope] = args.as_slice()
        && command == "token"
    {
        return match token(tenant, scope) {
            Ok(t) => {
                println!("{t}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    let format = std::env::var("NOTES_LOG_FORMAT").ok().filter(|v| !v.is_empty()).map(|v| v.parse());
    match format.transpose() {
        Ok(format) => runtime::logging::init(format.unwrap_or_default()),
        Err(e) => {
            eprintln!("error: NOTES_LOG_FORMAT: {e}");
            return ExitCode::FAILURE;
        }
    }
    match tokio::runtime::Runtime::new().map_err(anyhow::Error::from).and_then(|rt| rt.block_on(serve())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
