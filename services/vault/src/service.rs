//! The generated `VaultService` implemented: each operation hands its input to the resource that
//! owns it. The audit targets each reports come from the spec (`audit_targets`), read from the
//! input by the platform before the call.

use support::{Paged, Paging};
use vault_api::vault::{VaultService, errors, models, operations as ops};

use runtime::Context;

use crate::state::Vault;
use crate::{credential_list, credentials, folders, grants, leases, records, tags, tokens};

impl VaultService for Vault {
    type Context = Context;

    async fn list_credentials(
        &self,
        cx: &mut Context,
        input: models::ListCredentialsInput,
        paging: Paging,
    ) -> Result<Paged<models::CredentialSummary>, errors::ListCredentialsError> {
        credential_list::list(self, cx, input, paging).await
    }

    async fn store_credential(
        &self,
        cx: &mut Context,
        input: models::StoreCredentialInput,
    ) -> Result<models::Credential, errors::StoreCredentialError> {
        credentials::store(self, cx, input).await
    }

    async fn get_credential(
        &self,
        cx: &mut Context,
        input: models::CredentialRef,
    ) -> Result<models::Credential, errors::GetCredentialError> {
        credentials::get(self, cx, input).await
    }

    async fn update_credential(
        &self,
        cx: &mut Context,
        input: models::UpdateCredentialInput,
    ) -> Result<models::Credential, errors::UpdateCredentialError> {
        credentials::update(self, cx, input).await
    }

    async fn reveal_credential(
        &self,
        cx: &mut Context,
        input: models::RevealCredentialInput,
    ) -> Result<models::RevealedSecret, errors::RevealCredentialError> {
        credentials::reveal(self, &cx.caller, input).await
    }

    async fn archive_credential(
        &self,
        cx: &mut Context,
        input: models::ArchiveCredentialInput,
    ) -> Result<models::Credential, errors::ArchiveCredentialError> {
        credentials::set_state(self, cx, &ops::ARCHIVE_CREDENTIAL, &input.key, models::CredentialState::Archived).await
    }

    async fn restore_credential(
        &self,
        cx: &mut Context,
        input: models::RestoreCredentialInput,
    ) -> Result<models::Credential, errors::RestoreCredentialError> {
        credentials::set_state(self, cx, &ops::RESTORE_CREDENTIAL, &input.key, models::CredentialState::Active).await
    }

    async fn rotate_credential(
        &self,
        cx: &mut Context,
        input: models::RotateCredentialInput,
    ) -> Result<models::Credential, errors::RotateCredentialError> {
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
        folders::update(self, cx, input).await
    }

    async fn delete_folder(
        &self,
        cx: &mut Context,
        input: models::DeleteFolderInput,
    ) -> Result<(), errors::DeleteFolderError> {
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
        tags::rename(self, cx, input).await
    }

    async fn merge_tags(
        &self,
        cx: &mut Context,
        input: models::MergeTagsInput,
    ) -> Result<models::Tag, errors::MergeTagsError> {
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
        leases::issue(self, cx, input).await
    }

    async fn redeem_lease(
        &self,
        cx: &mut Context,
        input: models::RedeemLeaseInput,
    ) -> Result<models::LeasedSecret, errors::RedeemLeaseError> {
        leases::redeem(self, cx, input).await
    }

    async fn revoke_lease(
        &self,
        cx: &mut Context,
        input: models::RevokeLeaseInput,
    ) -> Result<models::Lease, errors::RevokeLeaseError> {
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
        grants::delete(self, cx, None, &input.grant_id).await
    }

    async fn list_credential_grants(
        &self,
        cx: &mut Context,
        input: models::ListCredentialGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListCredentialGrantsError> {
        grants::list(self, cx, grants::Filter::On(models::GrantTarget::Credential, input.key), paging).await
    }

    async fn create_credential_grant(
        &self,
        cx: &mut Context,
        input: models::CreateCredentialGrantInput,
    ) -> Result<models::Grant, errors::CreateCredentialGrantError> {
        grants::create(self, cx, models::GrantTarget::Credential, input.key, input.principal, input.permissions).await
    }

    async fn delete_credential_grant(
        &self,
        cx: &mut Context,
        input: models::DeleteCredentialGrantInput,
    ) -> Result<(), errors::DeleteCredentialGrantError> {
        grants::delete(self, cx, Some((models::GrantTarget::Credential, &input.key)), &input.grant_id).await
    }

    async fn list_folder_grants(
        &self,
        cx: &mut Context,
        input: models::ListFolderGrantsInput,
        paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListFolderGrantsError> {
        grants::list(self, cx, grants::Filter::On(models::GrantTarget::Folder, input.id), paging).await
    }

    async fn create_folder_grant(
        &self,
        cx: &mut Context,
        input: models::CreateFolderGrantInput,
    ) -> Result<models::Grant, errors::CreateFolderGrantError> {
        grants::create(self, cx, models::GrantTarget::Folder, input.id, input.principal, input.permissions).await
    }

    async fn delete_folder_grant(
        &self,
        cx: &mut Context,
        input: models::DeleteFolderGrantInput,
    ) -> Result<(), errors::DeleteFolderGrantError> {
        grants::delete(self, cx, Some((models::GrantTarget::Folder, &input.id)), &input.grant_id).await
    }

    async fn list_role_assignments(
        &self,
        cx: &mut Context,
        input: models::ListRoleAssignmentsInput,
        paging: Paging,
    ) -> Result<Paged<models::RoleAssignment>, errors::ListRoleAssignmentsError> {
        grants::list_roles(self, cx, input, paging).await
    }

    async fn assign_role(
        &self,
        cx: &mut Context,
        input: models::AssignRoleInput,
    ) -> Result<models::RoleAssignment, errors::AssignRoleError> {
        grants::assign_role(self, cx, input).await
    }

    async fn remove_role_assignment(
        &self,
        cx: &mut Context,
        input: models::RemoveRoleAssignmentInput,
    ) -> Result<(), errors::RemoveRoleAssignmentError> {
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
        tokens::revoke(self, cx, input).await
    }
}
