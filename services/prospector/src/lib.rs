//! The lead-prospecting API: the generated `ProspectorService` implemented on the Specwright
//! platform ([`Prospector`]), registered with a binary as a [`Module`].

pub mod api_tokens;
pub mod backtest;
pub mod connector;
pub mod contracts;
pub mod engine;
pub mod idempotency;
pub mod lead_list;
pub mod leads;
pub mod posting;
pub mod proposals;
pub mod replay;
pub mod scans;
pub mod scoring;
mod service;
pub mod sources;
mod state;

pub use state::Prospector;

/// Applies the prospector's own migrations (its tables beside the platform's), then fills what
/// the migrations leave to the service: the replay records of leads stored before them.
pub async fn migrate(store: &runtime::store::Store) -> anyhow::Result<()> {
    store.migrate("prospector", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await?;
    let filled = leads::fill_replays(store).await?;
    if filled > 0 {
        tracing::info!(filled, "wrote the replay records of leads stored before them");
    }
    Ok(())
}

impl Prospector {
    /// The prospector over the platform's database, its own tables migrated (see
    /// [`Prospector::new`] for the rest).
    pub async fn open(
        platform: &runtime::Platform,
        sources: &[String],
        connector_url: Option<&str>,
    ) -> anyhow::Result<Self> {
        migrate(&platform.store).await?;
        Self::new(platform.store.clone(), sources, connector_url)
    }
}

/// The prospector as a binary registers it: its migrations, its catalog entry, the service,
/// scanning `lead_sources` (`NAME=LOCATION` each; the embedded sample feed when empty) and
/// submitting proposals through the platform connector at `platform_connector` (the recording
/// outbox when `None`), and the command that issues API tokens (`api-token create`).
#[derive(Debug, Clone, Default, clap::Args)]
#[group(id = "prospector")]
pub struct Module {
    /// A prospector lead source, `NAME=LOCATION` (repeatable; comma-separated in the variable):
    /// a JSON/NDJSON/RSS/Atom/JSON Feed file, a folder of them, an http(s) feed URL, or `sample`.
    /// Default: the embedded sample feed.
    #[arg(long = "lead-source", env = "SPECWRIGHT_LEAD_SOURCES", value_delimiter = ',')]
    pub lead_sources: Vec<String>,
    /// Base URL of the platform's proposal API (POST {url}/proposals); default: record
    /// submissions in the outbox table.
    #[arg(long, env = "SPECWRIGHT_PLATFORM_CONNECTOR")]
    pub platform_connector: Option<String>,
}

impl runtime::Module for Module {
    fn info(&self) -> &'static support::ServiceInfo {
        &prospector_api::prospector::SERVICE
    }

    fn migrate<'a>(&'a self, store: &'a runtime::store::Store) -> runtime::module::BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(migrate(store))
    }

    fn open<'a>(
        &'a self,
        platform: &'a runtime::Platform,
    ) -> runtime::module::BoxFuture<'a, anyhow::Result<runtime::ServiceApi>> {
        Box::pin(async move {
            let prospector =
                Prospector::new(platform.store.clone(), &self.lead_sources, self.platform_connector.as_deref())?;
            Ok(prospector_api::prospector::api(prospector))
        })
    }

    fn commands(&self) -> Vec<clap::Command> {
        use clap::Args as _;
        vec![
            clap::Command::new("api-token").about("Manage prospector API tokens").subcommand(
                CreateApiToken::augment_args(clap::Command::new("create"))
                    .about("Create an API token for the prospector and print it (shown once; only its hash is kept)"),
            ),
        ]
    }

    fn run_command<'a>(
        &'a self,
        path: &'a [String],
        args: &'a clap::ArgMatches,
        cx: runtime::module::CommandContext<'a>,
    ) -> runtime::module::BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            use clap::FromArgMatches as _;
            anyhow::ensure!(path == ["api-token", "create"], "`{}` is not a command of the prospector", path.join(" "));
            let CreateApiToken { sub, tenant, name, plan, scopes, expires_in_days } =
                CreateApiToken::from_arg_matches(args)?;
            let plan = prospector_api::prospector::models::Plan::parse(&plan)
                .ok_or_else(|| anyhow::anyhow!("unknown plan {plan}"))?;
            let expires_at = expires_in_days.map(|d| runtime::store::now_ms() + d * 86_400_000);
            let new = api_tokens::NewToken { tenant, user: sub, name, scopes, plan, expires_at };
            let created = api_tokens::insert(cx.store, new).await?;
            eprintln!(
                "created {} ({}, plan {}); store it now, it is not shown again:",
                created.id, created.prefix, created.plan
            );
            println!("{}", created.token);
            Ok(())
        })
    }
}

/// `api-token create`'s arguments.
#[derive(clap::Args)]
struct CreateApiToken {
    /// The user the token acts for.
    #[arg(long)]
    sub: String,
    /// The user's tenant.
    #[arg(long)]
    tenant: String,
    /// What the token is for.
    #[arg(long)]
    name: String,
    /// Rate-limit plan.
    #[arg(long, default_value = "starter", value_parser = ["starter", "pro", "team"])]
    plan: String,
    /// Scopes (repeatable); the prospector needs `prospector`.
    #[arg(long = "scope", default_values_t = vec!["prospector".to_string()])]
    scopes: Vec<String>,
    /// Days until it expires; never when absent.
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..=3650))]
    expires_in_days: Option<i64>,
}
