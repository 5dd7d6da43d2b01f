//! The `specwright` application: the credential vault and the lead-prospecting API, each built on
//! the platform exactly as a user's own service would be, registered with one line each.

pub mod console;

use runtime::{Catalog, Platform, Server, ServerBuilder};

/// The services' own settings (the platform's are in [`runtime::Config`]).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Lease lifetimes of the vault (default and cap).
    pub leases: vault::LeasePolicy,
    /// Lead sources of the prospector, `NAME=LOCATION` each (a file, a folder, an http(s) feed URL
    /// or `sample`); the embedded sample feed when empty.
    pub lead_sources: Vec<String>,
    /// Base URL of the platform's proposal API; `None` records submissions in the outbox table.
    pub platform_connector: Option<String>,
}

/// The services this application serves, registered with the builder over `platform`, in order
/// (the vault first: it answers paths no service claims). Opens what each service keeps.
pub async fn services(platform: &Platform, settings: &Settings) -> anyhow::Result<ServerBuilder> {
    let vault = vault::Vault::open(platform, settings.leases).await?;
    let prospector = prospector::prospector::Prospector::open(
        platform,
        &settings.lead_sources,
        settings.platform_connector.as_deref(),
    )
    .await?;
    let mut builder =
        Server::builder(platform).service(generated::vault::api(vault)).service(generated::prospector::api(prospector));
    if platform.config.embedded_issuer() {
        // The console: the signed-in user's pages over both APIs, where sign-in lands.
        builder = builder.routes(console::router(platform)).home(console::HOME);
    }
    Ok(builder)
}

/// Applies every service's own migrations to `store` (what commands that work on the database
/// without serving, like `tenant create`, need).
pub async fn migrate(store: &runtime::store::Store) -> anyhow::Result<()> {
    vault::migrate(store).await?;
    prospector::migrate(store).await
}

/// The complete application over `platform`.
pub async fn app(platform: &Platform, settings: &Settings) -> anyhow::Result<axum::Router> {
    services(platform, settings).await?.build()
}

/// The services' descriptions (resources, scopes), as the `token` command and tests read them.
pub fn catalog() -> Catalog {
    Catalog::new([&generated::vault::SERVICE, &generated::prospector::SERVICE])
}
