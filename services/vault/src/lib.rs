//! The credential vault: the generated `VaultService` implemented on the Specwright platform,
//! registered with the server builder as `generated::vault::api(Vault::open(…))`.
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

use generated::vault::{VaultService, errors, models, operations as ops};
use support::{InternalError, Operation, OperationError, Paged, Paging, Problem};

use crate::crypto::Keyring;
use crate::rbac::Access;
use runtime::audit;
use runtime::auth::Caller;
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
        let source = crate::crypto::master_key_source(&platform.config.data_dir)?;
        let keyring = Arc::new(Keyring::load(&platform.store, source).await?);
        Ok(Vault::new(platform.store.clone(), keyring, leases))
    }

    async fn begin<E: InternalError>(&self, op: &Operation) -> Result<Tx, E> {
        self.store.begin_for(op).await.map_err(|e| fault(op.id, "starting a transaction", e))
    }

    async fn access<E: InternalError>(&self, tx: &mut Tx, op: &Operation, caller: &Caller) -> Result<Access, E> {
        Access::load(tx, &caller.tenant, &caller.subject).await.map_err(|e| fault(op.id, "loading grants", e))
    }

    /// Commits `result` with its audit row, or rolls back and audits the failure.
    async fn finish<T, E: OperationError + InternalError>(
        &self,
        tx: Tx,
        caller: &Caller,
        op: &'static Operation,
        targets: &[String],
        result: Result<T, E>,
    ) -> Result<T, E> {
        audit::finish(&self.store, tx, caller, op, targets, result).await
    }
}

macro_rules! run {
    ($self:ident, $caller:ident, $op:expr, $targets:expr, |$tx:ident, $targets_var:ident| $body:expr) => {{
        let op = &$op;
        let mut $tx = match $self.begin(op).await {
            Ok(tx) => tx,
            Err(e) => return Err(e),
        };
        let mut $targets_var: Vec<String> = $targets;
        let result = $body;
        let _ = &mut $targets_var;
        $self.finish($tx, $caller, op, &$targets_var, result).await
    }};
}

impl VaultService for Vault {
    type Caller = Caller;

    async fn list_credentials(
        &self,
        caller: &Caller,
        input: models::ListCredentialsInput,
        paging: Paging,
    ) -> Result<Paged<models::CredentialSummary>, errors::ListCredentialsError> {
        run!(self, caller, ops::LIST_CREDENTIALS, vec![], |tx, targets| credentials::list(
            self,
            &mut tx,
            caller,
            input,
            paging,
            &mut targets
        )
        .await)
    }
    async fn store_credential(
        &self,
        caller: &Caller,
        input: models::StoreCredentialInput,
    ) -> Result<models::Credential, errors::StoreCredentialError> {
        run!(self, caller, ops::STORE_CREDENTIAL, vec![input.key.clone()], |tx, targets| credentials::store(
            self,
            &mut tx,
            caller,
            input,
            &mut targets
        )
        .await)
    }
    async fn get_credential(
        &self,
        caller: &Caller,
        input: models::CredentialRef,
    ) -> Result<models::Credential, errors::GetCredentialError> {
        run!(self, caller, ops::GET_CREDENTIAL, vec![input.key.clone()], |tx, targets| credentials::get(
            self, &mut tx, caller, input
        )
        .await)
    }
    async fn update_credential(
        &self,
        caller: &Caller,
        input: models::UpdateCredentialInput,
    ) -> Result<models::Credential, errors::UpdateCredentialError> {
        run!(self, caller, ops::UPDATE_CREDENTIAL, vec![input.key.clone()], |tx, targets| credentials::update(
            self,
            &mut tx,
            caller,
            input,
            &mut targets
        )
        .await)
    }
    async fn reveal_credential(
        &self,
        caller: &Caller,
        input: models::RevealCredentialInput,
    ) -> Result<models::RevealedSecret, errors::RevealCredentialError> {
        // One statement, no transaction (see credentials::reveal).
        let targets = [input.key.clone()];
        let result = credentials::reveal(self, caller, input).await;
        audit::finish_read(&self.store, caller, &ops::REVEAL_CREDENTIAL, &targets, result).await
    }
    async fn archive_credential(
        &self,
        caller: &Caller,
        input: models::ArchiveCredentialInput,
    ) -> Result<models::Credential, errors::ArchiveCredentialError> {
        run!(self, caller, ops::ARCHIVE_CREDENTIAL, vec![input.key.clone()], |tx, targets| credentials::set_state(
            self,
            &mut tx,
            caller,
            &ops::ARCHIVE_CREDENTIAL,
            &input.key,
            models::CredentialState::Archived,
            &mut targets
        )
        .await)
    }
    async fn restore_credential(
        &self,
        caller: &Caller,
        input: models::RestoreCredentialInput,
    ) -> Result<models::Credential, errors::RestoreCredentialError> {
        run!(self, caller, ops::RESTORE_CREDENTIAL, vec![input.key.clone()], |tx, targets| credentials::set_state(
            self,
            &mut tx,
            caller,
            &ops::RESTORE_CREDENTIAL,
            &input.key,
            models::CredentialState::Active,
            &mut targets
        )
        .await)
    }
    async fn rotate_credential(
        &self,
        caller: &Caller,
        input: models::RotateCredentialInput,
    ) -> Result<models::Credential, errors::RotateCredentialError> {
        run!(self, caller, ops::ROTATE_CREDENTIAL, vec![input.key.clone()], |tx, targets| credentials::rotate(
            self, &mut tx, caller, input
        )
        .await)
    }
    async fn list_folders(
        &self,
        caller: &Caller,
        input: models::ListFoldersInput,
        paging: Paging,
    ) -> Result<Paged<models::Folder>, errors::ListFoldersError> {
        run!(self, caller, ops::LIST_FOLDERS, vec![], |tx, targets| folders::list(self, &mut tx, caller, input, paging)
            .await)
    }
    async fn create_folder(
        &self,
        caller: &Caller,
        input: models::CreateFolderInput,
    ) -> Result<models::Folder, errors::CreateFolderError> {
        run!(self, caller, ops::CREATE_FOLDER, vec![], |tx, targets| folders::create(
            self,
            &mut tx,
            caller,
            input,
            &mut targets
        )
        .await)
    }
    async fn update_folder(
        &self,
        caller: &Caller,
        input: models::UpdateFolderInput,
    ) -> Result<models::Folder, errors::UpdateFolderError> {
        run!(self, caller, ops::UPDATE_FOLDER, vec![input.id.clone()], |tx, targets| folders::update(
            self, &mut tx, caller, input
        )
        .await)
    }
    async fn delete_folder(
        &self,
        caller: &Caller,
        input: models::DeleteFolderInput,
    ) -> Result<(), errors::DeleteFolderError> {
        run!(self, caller, ops::DELETE_FOLDER, vec![input.id.clone()], |tx, targets| folders::delete(
            self, &mut tx, caller, input
        )
        .await)
    }
    async fn list_tags(
        &self,
        caller: &Caller,
        input: models::ListTagsInput,
        paging: Paging,
    ) -> Result<Paged<models::Tag>, errors::ListTagsError> {
        run!(self, caller, ops::LIST_TAGS, vec![], |tx, targets| tags::list(self, &mut tx, caller, input, paging).await)
    }
    async fn rename_tag(
        &self,
        caller: &Caller,
        input: models::RenameTagInput,
    ) -> Result<models::Tag, errors::RenameTagError> {
        run!(self, caller, ops::RENAME_TAG, vec![input.name.clone(), input.new_name.clone()], |tx, targets| {
            tags::rename(self, &mut tx, caller, input).await
        })
    }
    async fn merge_tags(
        &self,
        caller: &Caller,
        input: models::MergeTagsInput,
    ) -> Result<models::Tag, errors::MergeTagsError> {
        let mut t = input.sources.clone();
        t.push(input.target.clone());
        run!(self, caller, ops::MERGE_TAGS, t, |tx, targets| tags::merge(self, &mut tx, caller, input).await)
    }
    async fn prune_tags(
        &self,
        caller: &Caller,
        input: models::PruneTagsInput,
    ) -> Result<models::PruneReport, errors::PruneTagsError> {
        run!(self, caller, ops::PRUNE_TAGS, vec![], |tx, targets| tags::prune(
            self,
            &mut tx,
            caller,
            input,
            &mut targets
        )
        .await)
    }
    async fn list_leases(
        &self,
        caller: &Caller,
        input: models::ListLeasesInput,
        paging: Paging,
    ) -> Result<Paged<models::Lease>, errors::ListLeasesError> {
        run!(self, caller, ops::LIST_LEASES, vec![], |tx, targets| leases::list(self, &mut tx, caller, input, paging)
            .await)
    }
    async fn issue_lease(
        &self,
        caller: &Caller,
        input: models::IssueLeaseInput,
    ) -> Result<models::Lease, errors::IssueLeaseError> {
        run!(self, caller, ops::ISSUE_LEASE, vec![input.credential_key.clone()], |tx, targets| leases::issue(
            self,
            &mut tx,
            caller,
            input,
            &mut targets
        )
        .await)
    }
    async fn redeem_lease(
        &self,
        caller: &Caller,
        input: models::RedeemLeaseInput,
    ) -> Result<models::LeasedSecret, errors::RedeemLeaseError> {
        run!(self, caller, ops::REDEEM_LEASE, vec![input.lease_id.clone()], |tx, targets| leases::redeem(
            self,
            &mut tx,
            caller,
            input,
            &mut targets
        )
        .await)
    }
    async fn revoke_lease(
        &self,
        caller: &Caller,
        input: models::RevokeLeaseInput,
    ) -> Result<models::Lease, errors::RevokeLeaseError> {
        run!(self, caller, ops::REVOKE_LEASE, vec![input.id.clone()], |tx, targets| leases::revoke(
            self, &mut tx, caller, input
        )
        .await)
    }
    async fn list_grants(
        &self,
        caller: &Caller,
        input: models::ListGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListGrantsError> {
        run!(self, caller, ops::LIST_GRANTS, vec![], |tx, targets| grants::list(
            self,
            &mut tx,
            caller,
            grants::Filter::Tenant(input),
            paging
        )
        .await)
    }
    async fn delete_grant(
        &self,
        caller: &Caller,
        input: models::DeleteGrantInput,
    ) -> Result<(), errors::DeleteGrantError> {
        run!(self, caller, ops::DELETE_GRANT, vec![input.grant_id.clone()], |tx, targets| grants::delete(
            self,
            &mut tx,
            caller,
            None,
            &input.grant_id
        )
        .await)
    }
    async fn list_credential_grants(
        &self,
        caller: &Caller,
        input: models::ListCredentialGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListCredentialGrantsError> {
        run!(self, caller, ops::LIST_CREDENTIAL_GRANTS, vec![input.key.clone()], |tx, targets| grants::list(
            self,
            &mut tx,
            caller,
            grants::Filter::On(models::GrantTarget::Credential, input.key),
            paging
        )
        .await)
    }
    async fn create_credential_grant(
        &self,
        caller: &Caller,
        input: models::CreateCredentialGrantInput,
    ) -> Result<models::Grant, errors::CreateCredentialGrantError> {
        run!(
            self,
            caller,
            ops::CREATE_CREDENTIAL_GRANT,
            vec![input.key.clone(), input.principal.clone()],
            |tx, targets| grants::create(
                self,
                &mut tx,
                caller,
                models::GrantTarget::Credential,
                input.key,
                input.principal,
                input.permissions,
                &mut targets
            )
            .await
        )
    }
    async fn delete_credential_grant(
        &self,
        caller: &Caller,
        input: models::DeleteCredentialGrantInput,
    ) -> Result<(), errors::DeleteCredentialGrantError> {
        run!(
            self,
            caller,
            ops::DELETE_CREDENTIAL_GRANT,
            vec![input.key.clone(), input.grant_id.clone()],
            |tx, targets| grants::delete(
                self,
                &mut tx,
                caller,
                Some((models::GrantTarget::Credential, &input.key)),
                &input.grant_id
            )
            .await
        )
    }
    async fn list_folder_grants(
        &self,
        caller: &Caller,
        input: models::ListFolderGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListFolderGrantsError> {
        run!(self, caller, ops::LIST_FOLDER_GRANTS, vec![input.id.clone()], |tx, targets| grants::list(
            self,
            &mut tx,
            caller,
            grants::Filter::On(models::GrantTarget::Folder, input.id),
            paging
        )
        .await)
    }
    async fn create_folder_grant(
        &self,
        caller: &Caller,
        input: models::CreateFolderGrantInput,
    ) -> Result<models::Grant, errors::CreateFolderGrantError> {
        run!(self, caller, ops::CREATE_FOLDER_GRANT, vec![input.id.clone(), input.principal.clone()], |tx, targets| {
            grants::create(
                self,
                &mut tx,
                caller,
                models::GrantTarget::Folder,
                input.id,
                input.principal,
                input.permissions,
                &mut targets,
            )
            .await
        })
    }
    async fn delete_folder_grant(
        &self,
        caller: &Caller,
        input: models::DeleteFolderGrantInput,
    ) -> Result<(), errors::DeleteFolderGrantError> {
        run!(self, caller, ops::DELETE_FOLDER_GRANT, vec![input.id.clone(), input.grant_id.clone()], |tx, targets| {
            grants::delete(self, &mut tx, caller, Some((models::GrantTarget::Folder, &input.id)), &input.grant_id).await
        })
    }
    async fn list_role_assignments(
        &self,
        caller: &Caller,
        input: models::ListRoleAssignmentsInput,
        paging: Paging,
    ) -> Result<Paged<models::RoleAssignment>, errors::ListRoleAssignmentsError> {
        run!(self, caller, ops::LIST_ROLE_ASSIGNMENTS, vec![input.tenant_id.clone()], |tx, targets| grants::list_roles(
            self, &mut tx, caller, input, paging
        )
        .await)
    }
    async fn assign_role(
        &self,
        caller: &Caller,
        input: models::AssignRoleInput,
    ) -> Result<models::RoleAssignment, errors::AssignRoleError> {
        run!(self, caller, ops::ASSIGN_ROLE, vec![input.tenant_id.clone(), input.user_id.clone()], |tx, targets| {
            grants::assign_role(self, &mut tx, caller, input).await
        })
    }
    async fn remove_role_assignment(
        &self,
        caller: &Caller,
        input: models::RemoveRoleAssignmentInput,
    ) -> Result<(), errors::RemoveRoleAssignmentError> {
        run!(
            self,
            caller,
            ops::REMOVE_ROLE_ASSIGNMENT,
            vec![input.tenant_id.clone(), input.user_id.clone()],
            |tx, targets| grants::remove_role(self, &mut tx, caller, input).await
        )
    }
    async fn list_audit(
        &self,
        caller: &Caller,
        input: models::ListAuditInput,
        paging: Paging,
    ) -> Result<Paged<models::AuditEvent>, errors::ListAuditError> {
        run!(self, caller, ops::LIST_AUDIT, vec![], |tx, targets| records::list(self, &mut tx, caller, input, paging)
            .await)
    }
    async fn list_tokens(
        &self,
        caller: &Caller,
        input: models::ListTokensInput,
        paging: Paging,
    ) -> Result<Paged<models::PersonalAccessToken>, errors::ListTokensError> {
        run!(self, caller, ops::LIST_TOKENS, vec![], |tx, targets| tokens::list(self, &mut tx, caller, input, paging)
            .await)
    }
    async fn create_token(
        &self,
        caller: &Caller,
        input: models::CreateTokenInput,
    ) -> Result<models::CreatedToken, errors::CreateTokenError> {
        run!(self, caller, ops::CREATE_TOKEN, vec![], |tx, targets| tokens::create(
            self,
            &mut tx,
            caller,
            input,
            &mut targets
        )
        .await)
    }
    async fn revoke_token(
        &self,
        caller: &Caller,
        input: models::RevokeTokenInput,
    ) -> Result<(), errors::RevokeTokenError> {
        run!(self, caller, ops::REVOKE_TOKEN, vec![input.token_id.clone()], |tx, targets| tokens::revoke(
            self, &mut tx, caller, input
        )
        .await)
    }
}

/// `specwright tenant create <tenant> --admin <user>`: creates a tenant and its first
/// administrator, so a new installation can start from nothing. Fails if the tenant exists.
pub async fn create_tenant(store: &Store, tenant: &str, admin: &str) -> anyhow::Result<()> {
    if !runtime::names::tenant_ok(tenant) {
        anyhow::bail!("{}", runtime::names::TENANT_RULE);
    }
    if !runtime::names::user_ok(admin) {
        anyhow::bail!("{}", runtime::names::USER_RULE);
    }
    let mut tx = store.begin().await?;
    runtime::tenants::create(&mut tx, tenant).await?;
    sqlx::query("INSERT INTO role_assignments (tenant_id, user_id, role, assigned_at, assigned_by) VALUES ($1, $2, 'admin', $3, 'bootstrap')")
        .bind(tenant)
        .bind(admin)
        .bind(runtime::store::now_ms())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
