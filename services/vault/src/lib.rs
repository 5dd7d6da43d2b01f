//! The credential vault: the generated `VaultService` implemented on the Specwright platform,
//! registered with the server builder as `vault_api::vault::api(Vault::open(…))`.
//!
//! Every operation runs in one transaction with its audit row: the change and the row commit
//! together, or neither does. A failed or denied operation rolls back and is audited in a
//! transaction of its own. A reveal, which changes nothing, reads in one statement (one snapshot)
//! and needs no transaction; its audit row, like every read's, is durable before it answers.
//! Every query is scoped by the caller's tenant.

mod credentials;
pub mod crypto;
mod folders;
mod grants;
mod leases;
pub mod rbac;
mod records;
mod tags;
mod tokens;

use std::sync::Arc;

use runtime::module::BoxFuture;

use support::{InternalError, Operation, Paged, Paging, Problem};
use vault_api::vault::{VaultService, errors, models, operations as ops};

use crate::crypto::Keyring;
use crate::rbac::Access;
use runtime::Context;
use runtime::caller::Caller;
use runtime::fault;
use runtime::sql::{Arg, Sql, contains_pattern};
use runtime::store::{Store, Tx};

/// Applies the vault's own migrations (its tables beside the platform's).
pub async fn migrate(store: &Store) -> anyhow::Result<()> {
    store.migrate("vault", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await
}

/// Lease lifetimes.
#[derive(Debug, Clone, Copy)]
pub struct LeasePolicy {
    /// TTL when the request gives none, in seconds.
    pub default_ttl: i64,
    /// Largest TTL granted, in seconds; longer requests are capped.
    pub max_ttl: i64,
}

impl Default for LeasePolicy {
    fn default() -> Self {
        LeasePolicy { default_ttl: 300, max_ttl: 3600 }
    }
}

impl LeasePolicy {
    /// The default policy capped at `max_ttl` seconds (1 to 86,400): the command line's
    /// `--max-lease-ttl`.
    pub fn capped(max_ttl: &str) -> Result<Self, String> {
        let max_ttl: i64 = max_ttl.parse().map_err(|_| format!("`{max_ttl}` is not a number of seconds"))?;
        if !(1..=86_400).contains(&max_ttl) {
            return Err(format!("{max_ttl} is not in 1..=86400"));
        }
        let default = LeasePolicy::default();
        Ok(LeasePolicy { max_ttl, default_ttl: default.default_ttl.min(max_ttl) })
    }
}

/// The vault.
#[derive(Debug, Clone)]
pub struct Vault {
    store: Store,
    keyring: Arc<Keyring>,
    leases: LeasePolicy,
}

/// `resource/not-found` problem for `what` `id`.
fn not_found(what: &str, id: &str) -> Problem {
    Problem::new(format!("No {what} {id}.")).with("id", id)
}

/// `auth/forbidden` problem naming the missing permission.
fn forbidden(needed: &str, what: &str) -> Problem {
    Problem::new(format!("You need {needed} on {what}.")).with("required_permission", needed)
}

impl Vault {
    /// A vault over `store`, sealing with `keyring`.
    pub fn new(store: Store, keyring: Arc<Keyring>, leases: LeasePolicy) -> Self {
        Vault { store, keyring, leases }
    }

    /// The vault over the platform's database, its keyring loaded (or created) from the data
    /// directory's master key, granting leases by `leases`.
    pub async fn open(platform: &runtime::Platform, leases: LeasePolicy) -> anyhow::Result<Self> {
        migrate(&platform.store).await?;
        Self::open_migrated(platform, leases).await
    }

    /// [`Vault::open`] over a database whose migrations are applied (as a registered module's is).
    async fn open_migrated(platform: &runtime::Platform, leases: LeasePolicy) -> anyhow::Result<Self> {
        let source = crate::crypto::master_key_source(&platform.config.data_dir)?;
        let keyring = Arc::new(Keyring::load(&platform.store, source).await?);
        Ok(Vault::new(platform.store.clone(), keyring, leases))
    }

    async fn access<E: InternalError>(&self, tx: &mut Tx, op: &Operation, caller: &Caller) -> Result<Access, E> {
        Access::load(tx, &caller.tenant, &caller.subject).await.map_err(|e| fault(op.id, "loading grants", e))
    }
}

impl VaultService for Vault {
    type Context = Context;

    async fn list_credentials(
        &self,
        cx: &mut Context,
        input: models::ListCredentialsInput,
        paging: Paging,
    ) -> Result<Paged<models::CredentialSummary>, errors::ListCredentialsError> {
        credentials::list(self, cx, input, paging).await
    }

    async fn store_credential(
        &self,
        cx: &mut Context,
        input: models::StoreCredentialInput,
    ) -> Result<models::Credential, errors::StoreCredentialError> {
        cx.target(input.key.clone());
        credentials::store(self, cx, input).await
    }

    async fn get_credential(
        &self,
        cx: &mut Context,
        input: models::CredentialRef,
    ) -> Result<models::Credential, errors::GetCredentialError> {
        cx.target(input.key.clone());
        credentials::get(self, cx, input).await
    }

    async fn update_credential(
        &self,
        cx: &mut Context,
        input: models::UpdateCredentialInput,
    ) -> Result<models::Credential, errors::UpdateCredentialError> {
        cx.target(input.key.clone());
        credentials::update(self, cx, input).await
    }

    async fn reveal_credential(
        &self,
        cx: &mut Context,
        input: models::RevealCredentialInput,
    ) -> Result<models::RevealedSecret, errors::RevealCredentialError> {
        cx.target(input.key.clone());
        credentials::reveal(self, &cx.caller, input).await
    }

    async fn archive_credential(
        &self,
        cx: &mut Context,
        input: models::ArchiveCredentialInput,
    ) -> Result<models::Credential, errors::ArchiveCredentialError> {
        cx.target(input.key.clone());
        credentials::set_state(self, cx, &ops::ARCHIVE_CREDENTIAL, &input.key, models::CredentialState::Archived).await
    }

    async fn restore_credential(
        &self,
        cx: &mut Context,
        input: models::RestoreCredentialInput,
    ) -> Result<models::Credential, errors::RestoreCredentialError> {
        cx.target(input.key.clone());
        credentials::set_state(self, cx, &ops::RESTORE_CREDENTIAL, &input.key, models::CredentialState::Active).await
    }

    async fn rotate_credential(
        &self,
        cx: &mut Context,
        input: models::RotateCredentialInput,
    ) -> Result<models::Credential, errors::RotateCredentialError> {
        cx.target(input.key.clone());
        credentials::rotate(self, cx, input).await
    }

    async fn list_folders(
        &self,
        cx: &mut Context,
        input: models::ListFoldersInput,
        paging: Paging,
    ) -> Result<Paged<models::Folder>, errors::ListFoldersError> {
        folders::list(self, cx, input, paging).await
    }

    async fn create_folder(
        &self,
        cx: &mut Context,
        input: models::CreateFolderInput,
    ) -> Result<models::Folder, errors::CreateFolderError> {
        folders::create(self, cx, input).await
    }

    async fn update_folder(
        &self,
        cx: &mut Context,
        input: models::UpdateFolderInput,
    ) -> Result<models::Folder, errors::UpdateFolderError> {
        cx.target(input.id.clone());
        folders::update(self, cx, input).await
    }

    async fn delete_folder(
        &self,
        cx: &mut Context,
        input: models::DeleteFolderInput,
    ) -> Result<(), errors::DeleteFolderError> {
        cx.target(input.id.clone());
        folders::delete(self, cx, input).await
    }

    async fn list_tags(
        &self,
        cx: &mut Context,
        input: models::ListTagsInput,
        paging: Paging,
    ) -> Result<Paged<models::Tag>, errors::ListTagsError> {
        tags::list(self, cx, input, paging).await
    }

    async fn rename_tag(
        &self,
        cx: &mut Context,
        input: models::RenameTagInput,
    ) -> Result<models::Tag, errors::RenameTagError> {
        cx.target(input.name.clone());
        cx.target(input.new_name.clone());
        tags::rename(self, cx, input).await
    }

    async fn merge_tags(
        &self,
        cx: &mut Context,
        input: models::MergeTagsInput,
    ) -> Result<models::Tag, errors::MergeTagsError> {
        cx.targets.extend(input.sources.iter().cloned());
        cx.target(input.target.clone());
        tags::merge(self, cx, input).await
    }

    async fn prune_tags(
        &self,
        cx: &mut Context,
        input: models::PruneTagsInput,
    ) -> Result<models::PruneReport, errors::PruneTagsError> {
        tags::prune(self, cx, input).await
    }

    async fn list_leases(
        &self,
        cx: &mut Context,
        input: models::ListLeasesInput,
        paging: Paging,
    ) -> Result<Paged<models::Lease>, errors::ListLeasesError> {
        leases::list(self, cx, input, paging).await
    }

    async fn issue_lease(
        &self,
        cx: &mut Context,
        input: models::IssueLeaseInput,
    ) -> Result<models::Lease, errors::IssueLeaseError> {
        cx.target(input.credential_key.clone());
        leases::issue(self, cx, input).await
    }

    async fn redeem_lease(
        &self,
        cx: &mut Context,
        input: models::RedeemLeaseInput,
    ) -> Result<models::LeasedSecret, errors::RedeemLeaseError> {
        cx.target(input.lease_id.clone());
        leases::redeem(self, cx, input).await
    }

    async fn revoke_lease(
        &self,
        cx: &mut Context,
        input: models::RevokeLeaseInput,
    ) -> Result<models::Lease, errors::RevokeLeaseError> {
        cx.target(input.id.clone());
        leases::revoke(self, cx, input).await
    }

    async fn list_grants(
        &self,
        cx: &mut Context,
        input: models::ListGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListGrantsError> {
        grants::list(self, cx, grants::Filter::Tenant(input), paging).await
    }

    async fn delete_grant(
        &self,
        cx: &mut Context,
        input: models::DeleteGrantInput,
    ) -> Result<(), errors::DeleteGrantError> {
        cx.target(input.grant_id.clone());
        grants::delete(self, cx, None, &input.grant_id).await
    }

    async fn list_credential_grants(
        &self,
        cx: &mut Context,
        input: models::ListCredentialGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListCredentialGrantsError> {
        cx.target(input.key.clone());
        grants::list(self, cx, grants::Filter::On(models::GrantTarget::Credential, input.key), paging).await
    }

    async fn create_credential_grant(
        &self,
        cx: &mut Context,
        input: models::CreateCredentialGrantInput,
    ) -> Result<models::Grant, errors::CreateCredentialGrantError> {
        cx.target(input.key.clone());
        cx.target(input.principal.clone());
        grants::create(self, cx, models::GrantTarget::Credential, input.key, input.principal, input.permissions).await
    }

    async fn delete_credential_grant(
        &self,
        cx: &mut Context,
        input: models::DeleteCredentialGrantInput,
    ) -> Result<(), errors::DeleteCredentialGrantError> {
        cx.target(input.key.clone());
        cx.target(input.grant_id.clone());
        grants::delete(self, cx, Some((models::GrantTarget::Credential, &input.key)), &input.grant_id).await
    }

    async fn list_folder_grants(
        &self,
        cx: &mut Context,
        input: models::ListFolderGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListFolderGrantsError> {
        cx.target(input.id.clone());
        grants::list(self, cx, grants::Filter::On(models::GrantTarget::Folder, input.id), paging).await
    }

    async fn create_folder_grant(
        &self,
        cx: &mut Context,
        input: models::CreateFolderGrantInput,
    ) -> Result<models::Grant, errors::CreateFolderGrantError> {
        cx.target(input.id.clone());
        cx.target(input.principal.clone());
        grants::create(self, cx, models::GrantTarget::Folder, input.id, input.principal, input.permissions).await
    }

    async fn delete_folder_grant(
        &self,
        cx: &mut Context,
        input: models::DeleteFolderGrantInput,
    ) -> Result<(), errors::DeleteFolderGrantError> {
        cx.target(input.id.clone());
        cx.target(input.grant_id.clone());
        grants::delete(self, cx, Some((models::GrantTarget::Folder, &input.id)), &input.grant_id).await
    }

    async fn list_role_assignments(
        &self,
        cx: &mut Context,
        input: models::ListRoleAssignmentsInput,
        paging: Paging,
    ) -> Result<Paged<models::RoleAssignment>, errors::ListRoleAssignmentsError> {
        cx.target(input.tenant_id.clone());
        grants::list_roles(self, cx, input, paging).await
    }

    async fn assign_role(
        &self,
        cx: &mut Context,
        input: models::AssignRoleInput,
    ) -> Result<models::RoleAssignment, errors::AssignRoleError> {
        cx.target(input.tenant_id.clone());
        cx.target(input.user_id.clone());
        grants::assign_role(self, cx, input).await
    }

    async fn remove_role_assignment(
        &self,
        cx: &mut Context,
        input: models::RemoveRoleAssignmentInput,
    ) -> Result<(), errors::RemoveRoleAssignmentError> {
        cx.target(input.tenant_id.clone());
        cx.target(input.user_id.clone());
        grants::remove_role(self, cx, input).await
    }

    async fn list_audit(
        &self,
        cx: &mut Context,
        input: models::ListAuditInput,
        paging: Paging,
    ) -> Result<Paged<models::AuditEvent>, errors::ListAuditError> {
        records::list(self, cx, input, paging).await
    }

    async fn list_tokens(
        &self,
        cx: &mut Context,
        input: models::ListTokensInput,
        paging: Paging,
    ) -> Result<Paged<models::PersonalAccessToken>, errors::ListTokensError> {
        tokens::list(self, cx, input, paging).await
    }

    async fn create_token(
        &self,
        cx: &mut Context,
        input: models::CreateTokenInput,
    ) -> Result<models::CreatedToken, errors::CreateTokenError> {
        tokens::create(self, cx, input).await
    }

    async fn revoke_token(
        &self,
        cx: &mut Context,
        input: models::RevokeTokenInput,
    ) -> Result<(), errors::RevokeTokenError> {
        cx.target(input.token_id.clone());
        tokens::revoke(self, cx, input).await
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
