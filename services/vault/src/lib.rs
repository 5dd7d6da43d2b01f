//! The credential vault: the generated `VaultService` implemented on the Specwright platform,
//! registered with the server builder as `vault_api::vault::api(Vault::open(…))`.
//!
//! Every operation runs in one transaction with its audit row: the change and the row commit
//! together, or neither does. A failed or denied operation rolls back and is audited in a
//! transaction of its own. A reveal, which changes nothing, reads in one statement (one snapshot)
//! and needs no transaction; its audit row, like every read's, is durable before it answers.
//! Every query is scoped by the caller's tenant.

mod credential_list;
mod credentials;
pub mod crypto;
mod folders;
mod grants;
mod leases;
mod problems;
pub mod rbac;
mod records;
mod service;
mod state;
mod tags;
mod tokens;

use runtime::module::BoxFuture;
use runtime::store::{Store, Tx};

pub use state::{LeasePolicy, Vault};

/// Applies the vault's own migrations (its tables beside the platform's).
pub async fn migrate(store: &Store) -> anyhow::Result<()> {
    store.migrate("vault", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await
}

impl Vault {
    /// The vault over the platform's database, its keyring loaded (or created) from the data
    /// directory's master key, granting leases by `leases`.
    pub async fn open(platform: &runtime::Platform, leases: LeasePolicy) -> anyhow::Result<Self> {
        migrate(&platform.store).await?;
        Self::open_migrated(platform, leases).await
    }
}

/// The vault as a binary registers it: its migrations, its catalog entry, the service granting
/// leases by `leases`, a new tenant's first administrator (the `admin` role) and the command that
/// rotates the keys of secrets at rest (`keys rotate`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
#[group(id = "vault")]
pub struct Module {
    /// Largest lease lifetime granted, in seconds.
    #[arg(
        long = "max-lease-ttl",
        id = "max_lease_ttl",
        value_name = "MAX_LEASE_TTL",
        env = "SPECWRIGHT_MAX_LEASE_TTL",
        default_value = "3600",
        value_parser = LeasePolicy::capped
    )]
    pub leases: LeasePolicy,
}

impl runtime::Module for Module {
    fn info(&self) -> &'static support::ServiceInfo {
        &vault_api::vault::SERVICE
    }

    fn migrate<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(migrate(store))
    }

    fn open<'a>(&'a self, platform: &'a runtime::Platform) -> BoxFuture<'a, anyhow::Result<runtime::ServiceApi>> {
        Box::pin(async move { Ok(vault_api::vault::api(Vault::open_migrated(platform, self.leases).await?)) })
    }

    /// The tenant's first administrator: the `admin` role, assigned by `bootstrap`.
    fn tenant_created<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a str,
        admin: &'a str,
    ) -> BoxFuture<'a, Result<(), sqlx::Error>> {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO role_assignments (tenant_id, user_id, role, assigned_at, assigned_by) \
                 VALUES ($1, $2, 'admin', $3, 'bootstrap')",
            )
            .bind(tenant)
            .bind(admin)
            .bind(runtime::store::now_ms())
            .execute(&mut **tx)
            .await?;
            Ok(())
        })
    }

    fn commands(&self) -> Vec<clap::Command> {
        vec![
            clap::Command::new("keys").about("Manage the encryption keys of secrets at rest").subcommand(
                clap::Command::new("rotate")
                    .about("New master key and data key; re-wraps every data key. Running servers keep working"),
            ),
        ]
    }

    fn run_command<'a>(
        &'a self,
        path: &'a [String],
        _: &'a clap::ArgMatches,
        cx: runtime::module::CommandContext<'a>,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            anyhow::ensure!(path == ["keys", "rotate"], "`{}` is not a command of the vault", path.join(" "));
            // Progress on standard error, so standard output keeps the one-line report.
            let report = crypto::rotate_with_progress(cx.store, &cx.config.data_dir, |done, total| {
                eprintln!("re-wrapping data keys: {done} of {total}");
            })
            .await?;
            println!(
                "new master key {}, new data key {}, {} data keys re-wrapped",
                report.master_key, report.data_key, report.rewrapped
            );
            Ok(())
        })
    }
}
