//! The credential vault's operations.
//!
//! Every operation still answers 501 `server/not-implemented`: its
//! behaviour is built by its domain issue. This is the only placeholder the project allows, and the
//! README lists the operations that still answer it.

use generated::support::{Paged, Paging};
use generated::vault::{VaultService, errors, models};

use crate::auth::Caller;
use crate::services::not_built;

/// The credential vault.
#[derive(Debug, Default)]
pub struct Vault;

impl VaultService for Vault {
    type Caller = Caller;

    async fn list_credentials(
        &self,
        _caller: &Caller,
        _input: models::ListCredentialsInput,
        _paging: Paging,
    ) -> Result<Paged<models::CredentialSummary>, errors::ListCredentialsError> {
        Err(errors::ListCredentialsError::ServerNotImplemented(not_built("list_credentials")))
    }

    async fn store_credential(
        &self,
        _caller: &Caller,
        _input: models::StoreCredentialInput,
    ) -> Result<models::Credential, errors::StoreCredentialError> {
        Err(errors::StoreCredentialError::ServerNotImplemented(not_built("store_credential")))
    }

    async fn get_credential(
        &self,
        _caller: &Caller,
        _input: models::CredentialRef,
    ) -> Result<models::Credential, errors::GetCredentialError> {
        Err(errors::GetCredentialError::ServerNotImplemented(not_built("get_credential")))
    }

    async fn update_credential(
        &self,
        _caller: &Caller,
        _input: models::UpdateCredentialInput,
    ) -> Result<models::Credential, errors::UpdateCredentialError> {
        Err(errors::UpdateCredentialError::ServerNotImplemented(not_built("update_credential")))
    }

    async fn reveal_credential(
        &self,
        _caller: &Caller,
        _input: models::RevealCredentialInput,
    ) -> Result<models::RevealedSecret, errors::RevealCredentialError> {
        Err(errors::RevealCredentialError::ServerNotImplemented(not_built("reveal_credential")))
    }

    async fn archive_credential(
        &self,
        _caller: &Caller,
        _input: models::ArchiveCredentialInput,
    ) -> Result<models::Credential, errors::ArchiveCredentialError> {
        Err(errors::ArchiveCredentialError::ServerNotImplemented(not_built("archive_credential")))
    }

    async fn restore_credential(
        &self,
        _caller: &Caller,
        _input: models::RestoreCredentialInput,
    ) -> Result<models::Credential, errors::RestoreCredentialError> {
        Err(errors::RestoreCredentialError::ServerNotImplemented(not_built("restore_credential")))
    }

    async fn rotate_credential(
        &self,
        _caller: &Caller,
        _input: models::RotateCredentialInput,
    ) -> Result<models::Credential, errors::RotateCredentialError> {
        Err(errors::RotateCredentialError::ServerNotImplemented(not_built("rotate_credential")))
    }

    async fn list_folders(
        &self,
        _caller: &Caller,
        _input: models::ListFoldersInput,
        _paging: Paging,
    ) -> Result<Paged<models::Folder>, errors::ListFoldersError> {
        Err(errors::ListFoldersError::ServerNotImplemented(not_built("list_folders")))
    }

    async fn create_folder(
        &self,
        _caller: &Caller,
        _input: models::CreateFolderInput,
    ) -> Result<models::Folder, errors::CreateFolderError> {
        Err(errors::CreateFolderError::ServerNotImplemented(not_built("create_folder")))
    }

    async fn update_folder(
        &self,
        _caller: &Caller,
        _input: models::UpdateFolderInput,
    ) -> Result<models::Folder, errors::UpdateFolderError> {
        Err(errors::UpdateFolderError::ServerNotImplemented(not_built("update_folder")))
    }

    async fn delete_folder(
        &self,
        _caller: &Caller,
        _input: models::DeleteFolderInput,
    ) -> Result<(), errors::DeleteFolderError> {
        Err(errors::DeleteFolderError::ServerNotImplemented(not_built("delete_folder")))
    }

    async fn list_tags(
        &self,
        _caller: &Caller,
        _input: models::ListTagsInput,
        _paging: Paging,
    ) -> Result<Paged<models::Tag>, errors::ListTagsError> {
        Err(errors::ListTagsError::ServerNotImplemented(not_built("list_tags")))
    }

    async fn rename_tag(
        &self,
        _caller: &Caller,
        _input: models::RenameTagInput,
    ) -> Result<models::Tag, errors::RenameTagError> {
        Err(errors::RenameTagError::ServerNotImplemented(not_built("rename_tag")))
    }

    async fn merge_tags(
        &self,
        _caller: &Caller,
        _input: models::MergeTagsInput,
    ) -> Result<models::Tag, errors::MergeTagsError> {
        Err(errors::MergeTagsError::ServerNotImplemented(not_built("merge_tags")))
    }

    async fn prune_tags(
        &self,
        _caller: &Caller,
        _input: models::PruneTagsInput,
    ) -> Result<models::PruneReport, errors::PruneTagsError> {
        Err(errors::PruneTagsError::ServerNotImplemented(not_built("prune_tags")))
    }

    async fn list_leases(
        &self,
        _caller: &Caller,
        _input: models::ListLeasesInput,
        _paging: Paging,
    ) -> Result<Paged<models::Lease>, errors::ListLeasesError> {
        Err(errors::ListLeasesError::ServerNotImplemented(not_built("list_leases")))
    }

    async fn issue_lease(
        &self,
        _caller: &Caller,
        _input: models::IssueLeaseInput,
    ) -> Result<models::Lease, errors::IssueLeaseError> {
        Err(errors::IssueLeaseError::ServerNotImplemented(not_built("issue_lease")))
    }

    async fn redeem_lease(
        &self,
        _caller: &Caller,
        _input: models::RedeemLeaseInput,
    ) -> Result<models::LeasedSecret, errors::RedeemLeaseError> {
        Err(errors::RedeemLeaseError::ServerNotImplemented(not_built("redeem_lease")))
    }

    async fn revoke_lease(
        &self,
        _caller: &Caller,
        _input: models::RevokeLeaseInput,
    ) -> Result<models::Lease, errors::RevokeLeaseError> {
        Err(errors::RevokeLeaseError::ServerNotImplemented(not_built("revoke_lease")))
    }

    async fn list_grants(
        &self,
        _caller: &Caller,
        _input: models::ListGrantsInput,
        _paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListGrantsError> {
        Err(errors::ListGrantsError::ServerNotImplemented(not_built("list_grants")))
    }

    async fn delete_grant(
        &self,
        _caller: &Caller,
        _input: models::DeleteGrantInput,
    ) -> Result<(), errors::DeleteGrantError> {
        Err(errors::DeleteGrantError::ServerNotImplemented(not_built("delete_grant")))
    }

    async fn list_credential_grants(
        &self,
        _caller: &Caller,
        _input: models::ListCredentialGrantsInput,
        _paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListCredentialGrantsError> {
        Err(errors::ListCredentialGrantsError::ServerNotImplemented(not_built("list_credential_grants")))
    }

    async fn create_credential_grant(
        &self,
        _caller: &Caller,
        _input: models::CreateCredentialGrantInput,
    ) -> Result<models::Grant, errors::CreateCredentialGrantError> {
        Err(errors::CreateCredentialGrantError::ServerNotImplemented(not_built("create_credential_grant")))
    }

    async fn delete_credential_grant(
        &self,
        _caller: &Caller,
        _input: models::DeleteCredentialGrantInput,
    ) -> Result<(), errors::DeleteCredentialGrantError> {
        Err(errors::DeleteCredentialGrantError::ServerNotImplemented(not_built("delete_credential_grant")))
    }

    async fn list_folder_grants(
        &self,
        _caller: &Caller,
        _input: models::ListFolderGrantsInput,
        _paging: Paging,
    ) -> Result<Paged<models::Grant>, errors::ListFolderGrantsError> {
        Err(errors::ListFolderGrantsError::ServerNotImplemented(not_built("list_folder_grants")))
    }

    async fn create_folder_grant(
        &self,
        _caller: &Caller,
        _input: models::CreateFolderGrantInput,
    ) -> Result<models::Grant, errors::CreateFolderGrantError> {
        Err(errors::CreateFolderGrantError::ServerNotImplemented(not_built("create_folder_grant")))
    }

    async fn delete_folder_grant(
        &self,
        _caller: &Caller,
        _input: models::DeleteFolderGrantInput,
    ) -> Result<(), errors::DeleteFolderGrantError> {
        Err(errors::DeleteFolderGrantError::ServerNotImplemented(not_built("delete_folder_grant")))
    }

    async fn list_role_assignments(
        &self,
        _caller: &Caller,
        _input: models::ListRoleAssignmentsInput,
        _paging: Paging,
    ) -> Result<Paged<models::RoleAssignment>, errors::ListRoleAssignmentsError> {
        Err(errors::ListRoleAssignmentsError::ServerNotImplemented(not_built("list_role_assignments")))
    }

    async fn assign_role(
        &self,
        _caller: &Caller,
        _input: models::AssignRoleInput,
    ) -> Result<models::RoleAssignment, errors::AssignRoleError> {
        Err(errors::AssignRoleError::ServerNotImplemented(not_built("assign_role")))
    }

    async fn remove_role_assignment(
        &self,
        _caller: &Caller,
        _input: models::RemoveRoleAssignmentInput,
    ) -> Result<(), errors::RemoveRoleAssignmentError> {
        Err(errors::RemoveRoleAssignmentError::ServerNotImplemented(not_built("remove_role_assignment")))
    }

    async fn list_audit(
        &self,
        _caller: &Caller,
        _input: models::ListAuditInput,
        _paging: Paging,
    ) -> Result<Paged<models::AuditEvent>, errors::ListAuditError> {
        Err(errors::ListAuditError::ServerNotImplemented(not_built("list_audit")))
    }

    async fn list_tokens(
        &self,
        _caller: &Caller,
        _input: models::ListTokensInput,
        _paging: Paging,
    ) -> Result<Paged<models::PersonalAccessToken>, errors::ListTokensError> {
        Err(errors::ListTokensError::ServerNotImplemented(not_built("list_tokens")))
    }

    async fn create_token(
        &self,
        _caller: &Caller,
        _input: models::CreateTokenInput,
    ) -> Result<models::CreatedToken, errors::CreateTokenError> {
        Err(errors::CreateTokenError::ServerNotImplemented(not_built("create_token")))
    }

    async fn revoke_token(
        &self,
        _caller: &Caller,
        _input: models::RevokeTokenInput,
    ) -> Result<(), errors::RevokeTokenError> {
        Err(errors::RevokeTokenError::ServerNotImplemented(not_built("revoke_token")))
    }
}
