//! The credential vault: the runtime implementation of the generated `VaultService`.
//!
//! Every operation runs in one transaction with its audit row: the change and the row commit
//! together, or neither does. A failed or denied operation rolls back and is audited in a
//! transaction of its own. Every query is scoped by the caller's tenant.

mod credentials;
mod folders;
mod grants;
mod leases;
mod records;
mod tags;
mod tokens;

use std::sync::Arc;

use generated::support::{InternalError, Operation, OperationError, Paged, Paging, Problem};
use generated::vault::{VaultService, errors, models, operations as ops};

use crate::audit::{self, Entry, Outcome};
use crate::auth::Caller;
use crate::crypto::Keyring;
use crate::rbac::Access;
use crate::services::fault;
use crate::store::{Store, Tx};

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

    async fn begin<E: InternalError>(&self, op: &Operation) -> Result<Tx, E> {
        self.store.begin().await.map_err(|e| fault(op.id, "starting a transaction", e))
    }

    async fn access<E: InternalError>(&self, tx: &mut Tx, op: &Operation, caller: &Caller) -> Result<Access, E> {
        Access::load(tx, &caller.tenant, &caller.subject).await.map_err(|e| fault(op.id, "loading grants", e))
    }

    /// Commits `result` with its audit row, or rolls back and audits the failure.
    async fn finish<T, E: OperationError + InternalError>(
        &self,
        mut tx: Tx,
        caller: &Caller,
        op: &'static Operation,
        targets: &[String],
        result: Result<T, E>,
    ) -> Result<T, E> {
        match result {
            Ok(value) => {
                let entry = Entry {
                    caller,
                    op,
                    targets,
                    outcome: Outcome::Allowed,
                    status: op.success_status,
                    error_code: None,
                };
                if let Err(e) = audit::write(&self.store, &mut tx, entry).await {
                    // Fail closed: no audit row, no change and no secret.
                    return Err(fault(op.id, "writing the audit row", e));
                }
                tx.commit().await.map_err(|e| fault(op.id, "committing", e))?;
                Ok(value)
            }
            Err(err) => {
                drop(tx);
                let code = err.code();
                let status = op.service.error(code).map(|e| e.status).unwrap_or(500);
                let outcome = if status == 403 { Outcome::Denied } else { Outcome::Failed };
                let entry = Entry { caller, op, targets, outcome, status, error_code: Some(code) };
                let recorded = async {
                    let mut tx = self.store.begin().await?;
                    audit::write(&self.store, &mut tx, entry).await?;
                    tx.commit().await
                };
                if let Err(e) = recorded.await {
                    tracing::error!(operation = op.id, error = %e, "could not audit a failed operation");
                }
                Err(err)
            }
        }
    }
}

/// Dynamic SQL with `$N` placeholders and their values, for filters known only at run time.
#[derive(Debug, Default)]
struct Sql {
    text: String,
    args: Vec<Arg>,
}

#[derive(Debug, Clone)]
enum Arg {
    Text(String),
    Int(i64),
}

impl Sql {
    fn new(text: &str) -> Sql {
        Sql { text: text.to_string(), args: Vec::new() }
    }

    /// Appends `text`, where `?` stands for the next value.
    fn push(&mut self, text: &str, value: Arg) -> &mut Sql {
        self.args.push(value);
        let n = self.args.len();
        self.text.push_str(&text.replacen('?', &format!("${n}"), 1));
        self
    }

    fn raw(&mut self, text: &str) -> &mut Sql {
        self.text.push_str(text);
        self
    }

    /// `column IN (…)` over `values`; an empty list matches nothing.
    fn push_in(&mut self, column: &str, values: &[String]) -> &mut Sql {
        if values.is_empty() {
            return self.raw(" 1 = 0");
        }
        self.raw(&format!(" {column} IN ("));
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.raw(", ");
            }
            self.push("?", Arg::Text(v.clone()));
        }
        self.raw(")")
    }

    fn query(&self) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments> {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(self.text.clone()));
        for a in &self.args {
            q = match a {
                Arg::Text(s) => q.bind(s.clone()),
                Arg::Int(i) => q.bind(*i),
            };
        }
        q
    }
}

/// `LIKE` pattern matching `text` anywhere, with `%`, `_` and `\` escaped (use `ESCAPE '\'`).
fn contains_pattern(text: &str) -> String {
    let escaped: String =
        text.chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
    format!("%{}%", escaped.to_lowercase())
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
        run!(self, caller, ops::REVEAL_CREDENTIAL, vec![input.key.clone()], |tx, targets| credentials::reveal(
            self, &mut tx, caller, input
        )
        .await)
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
    if !crate::names::tenant_ok(tenant) {
        anyhow::bail!("{}", crate::names::TENANT_RULE);
    }
    if !crate::names::user_ok(admin) {
        anyhow::bail!("{}", crate::names::USER_RULE);
    }
    let mut tx = store.begin().await?;
    let exists =
        sqlx::query("SELECT 1 FROM tenants WHERE id = $1").bind(tenant).fetch_optional(&mut *tx).await?.is_some();
    if exists {
        anyhow::bail!("tenant {tenant} already exists");
    }
    let now = crate::store::now_ms();
    sqlx::query("INSERT INTO tenants (id, created_at) VALUES ($1, $2)")
        .bind(tenant)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO role_assignments (tenant_id, user_id, role, assigned_at, assigned_by) VALUES ($1, $2, 'admin', $3, 'bootstrap')")
        .bind(tenant)
        .bind(admin)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
