//! The `specwright` application: the credential vault and the lead-prospecting API, each built on
//! the platform exactly as a user's own service would be, and registered once ([`modules`]).

pub mod console;
pub mod spec_contract;

use runtime::{Catalog, Platform, Server, ServerBuilder};

/// Every service this application serves, each registered once, in order (the vault first: it
/// answers paths no service claims), with its own settings (the platform's are in
/// [`runtime::Config`]); on the command line, each module's own options.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Settings {
    /// The credential vault.
    #[command(flatten)]
    pub vault: vault::Module,
    /// The lead-prospecting API.
    #[command(flatten)]
    pub prospector: prospector::Module,
}

/// [`Settings`]' services as registered modules: what serving, migrating, the catalog and
/// `tenant create` all read.
pub fn modules(settings: &Settings) -> Vec<Box<dyn runtime::Module>> {
    vec![Box::new(settings.vault), Box::new(settings.prospector.clone())]
}

/// The services this application serves, registered with the builder over `platform`, their
/// migrations applied. Opens what each service keeps.
pub async fn services(platform: &Platform, settings: &Settings) -> anyhow::Result<ServerBuilder> {
    let mut builder = Server::builder(platform).modules(&modules(settings)).await?;
    if platform.config.embedded_issuer() {
        // The console: the signed-in user's pages over both APIs, where sign-in lands.
        builder = builder.routes(console::router(platform)).home(console::HOME);
    }
    Ok(builder)
}

/// Applies every service's own migrations to `store` (what commands that work on the database
/// without serving, like `tenant create`, need).
pub async fn migrate(store: &runtime::store::Store) -> anyhow::Result<()> {
    runtime::module::migrate(store, &modules(&Settings::default())).await
}

/// Creates tenant `tenant` and its first administrator `admin` (`specwright tenant create`): the
/// platform's tenant, then what each service keeps for it.
pub async fn create_tenant(store: &runtime::store::Store, tenant: &str, admin: &str) -> anyhow::Result<()> {
    runtime::module::create_tenant(store, &modules(&Settings::default()), tenant, admin).await
}

/// Data directories of the releases before the platform kept their SQLite database in
/// `vault.db`: renames it (with its `-wal` and `-shm` files) to the platform's file the first time
/// this release opens the directory, so nothing is lost. Nothing to do when the platform's file
/// exists or there is no such database.
pub fn adopt_legacy_database(data_dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let path = data_dir.join(runtime::store::DATABASE_FILE);
    let legacy = data_dir.join("vault.db");
    if path.exists() || !legacy.exists() {
        return Ok(());
    }
    for suffix in ["-wal", "-shm"] {
        let side = data_dir.join(format!("vault.db{suffix}"));
        if side.exists() {
            std::fs::rename(&side, data_dir.join(format!("{}{suffix}", runtime::store::DATABASE_FILE)))?;
        }
    }
    std::fs::rename(&legacy, &path).with_context(|| format!("renaming {} to {}", legacy.display(), path.display()))
}

/// The complete application over `platform`.
pub async fn app(platform: &Platform, settings: &Settings) -> anyhow::Result<axum::Router> {
    services(platform, settings).await?.build()
}

/// The services' descriptions (resources, scopes), as the `token` command and tests read them.
pub fn catalog() -> Catalog {
    runtime::module::catalog(&modules(&Settings::default()))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// A command line with the services' options, as the binary's commands carry them.
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        settings: super::Settings,
    }

    #[test]
    fn each_service_reads_its_own_options_and_keeps_its_defaults_without_them() {
        let line = Line::try_parse_from([
            "specwright",
            "--max-lease-ttl",
            "60",
            "--lead-source",
            "a=sample,b=feeds/",
            "--platform-connector",
            "http://127.0.0.1:9/",
        ])
        .unwrap();
        let (vault, prospector) = (line.settings.vault, line.settings.prospector);
        assert_eq!((vault.leases.max_ttl, vault.leases.default_ttl), (60, 60), "the default lifetime is capped too");
        assert_eq!(prospector.lead_sources, ["a=sample", "b=feeds/"]);
        assert_eq!(prospector.platform_connector.as_deref(), Some("http://127.0.0.1:9/"));

        let defaults = Line::try_parse_from(["specwright"]).unwrap().settings;
        assert_eq!((defaults.vault.leases.max_ttl, defaults.vault.leases.default_ttl), (3600, 300));
        assert!(defaults.prospector.lead_sources.is_empty() && defaults.prospector.platform_connector.is_none());
        for refused in ["0", "86401", "an hour"] {
            assert!(Line::try_parse_from(["specwright", "--max-lease-ttl", refused]).is_err(), "{refused}");
        }
    }
}
