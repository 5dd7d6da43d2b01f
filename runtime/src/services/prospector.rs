//! The lead-prospecting API's operations.
//!
//! Every operation still answers 501 `not_implemented`: its
//! behaviour is built by its domain issue. This is the only placeholder the project allows, and the
//! README lists the operations that still answer it.

use generated::prospector::{ProspectorService, errors, models};
use generated::support::{Paged, Paging};

use crate::auth::Caller;
use crate::services::{api_tokens, not_built, scoring};

/// The lead-prospecting API.
#[derive(Debug, Clone)]
pub struct Prospector {
    store: crate::store::Store,
}

impl Prospector {
    /// The prospector over `store`.
    pub fn new(store: crate::store::Store) -> Self {
        Prospector { store }
    }
}

impl ProspectorService for Prospector {
    type Caller = Caller;

    async fn list_leads(
        &self,
        _caller: &Caller,
        _input: models::ListLeadsInput,
        _paging: Paging,
    ) -> Result<Paged<models::Lead>, errors::ListLeadsError> {
        Err(errors::ListLeadsError::NotImplemented(not_built("list_leads")))
    }

    async fn get_lead(
        &self,
        _caller: &Caller,
        _input: models::GetLeadInput,
    ) -> Result<models::LeadDetail, errors::GetLeadError> {
        Err(errors::GetLeadError::NotImplemented(not_built("get_lead")))
    }

    async fn scan_leads(
        &self,
        _caller: &Caller,
        _input: models::ScanLeadsInput,
    ) -> Result<models::ScanReport, errors::ScanLeadsError> {
        Err(errors::ScanLeadsError::NotImplemented(not_built("scan_leads")))
    }

    async fn update_lead(
        &self,
        _caller: &Caller,
        _input: models::UpdateLeadInput,
    ) -> Result<models::Lead, errors::UpdateLeadError> {
        Err(errors::UpdateLeadError::NotImplemented(not_built("update_lead")))
    }

    async fn list_proposals(
        &self,
        _caller: &Caller,
        _input: models::ListProposalsInput,
        _paging: Paging,
    ) -> Result<Paged<models::Proposal>, errors::ListProposalsError> {
        Err(errors::ListProposalsError::NotImplemented(not_built("list_proposals")))
    }

    async fn get_proposal(
        &self,
        _caller: &Caller,
        _input: models::GetProposalInput,
    ) -> Result<models::Proposal, errors::GetProposalError> {
        Err(errors::GetProposalError::NotImplemented(not_built("get_proposal")))
    }

    async fn create_proposal(
        &self,
        _caller: &Caller,
        _input: models::CreateProposalInput,
    ) -> Result<models::Proposal, errors::CreateProposalError> {
        Err(errors::CreateProposalError::NotImplemented(not_built("create_proposal")))
    }

    async fn update_proposal(
        &self,
        _caller: &Caller,
        _input: models::UpdateProposalInput,
    ) -> Result<models::Proposal, errors::UpdateProposalError> {
        Err(errors::UpdateProposalError::NotImplemented(not_built("update_proposal")))
    }

    async fn submit_proposal(
        &self,
        _caller: &Caller,
        _input: models::SubmitProposalInput,
    ) -> Result<models::Proposal, errors::SubmitProposalError> {
        Err(errors::SubmitProposalError::NotImplemented(not_built("submit_proposal")))
    }

    async fn record_proposal_outcome(
        &self,
        _caller: &Caller,
        _input: models::RecordOutcomeInput,
    ) -> Result<models::Proposal, errors::RecordProposalOutcomeError> {
        Err(errors::RecordProposalOutcomeError::NotImplemented(not_built("record_proposal_outcome")))
    }

    async fn list_contracts(
        &self,
        _caller: &Caller,
        _input: models::ListContractsInput,
        _paging: Paging,
    ) -> Result<Paged<models::Contract>, errors::ListContractsError> {
        Err(errors::ListContractsError::NotImplemented(not_built("list_contracts")))
    }

    async fn get_contract(
        &self,
        _caller: &Caller,
        _input: models::GetContractInput,
    ) -> Result<models::Contract, errors::GetContractError> {
        Err(errors::GetContractError::NotImplemented(not_built("get_contract")))
    }

    async fn update_milestone(
        &self,
        _caller: &Caller,
        _input: models::UpdateMilestoneInput,
    ) -> Result<models::Contract, errors::UpdateMilestoneError> {
        Err(errors::UpdateMilestoneError::NotImplemented(not_built("update_milestone")))
    }

    async fn get_scoring_config(
        &self,
        caller: &Caller,
    ) -> Result<models::ScoringConfig, errors::GetScoringConfigError> {
        scoring::get(&self.store, caller).await
    }

    async fn update_scoring_config(
        &self,
        caller: &Caller,
        input: models::UpdateScoringConfigInput,
    ) -> Result<models::ScoringConfig, errors::UpdateScoringConfigError> {
        scoring::update(&self.store, caller, input).await
    }

    async fn run_backtest(
        &self,
        _caller: &Caller,
        _input: models::BacktestInput,
    ) -> Result<models::BacktestReport, errors::RunBacktestError> {
        Err(errors::RunBacktestError::NotImplemented(not_built("run_backtest")))
    }

    async fn list_api_tokens(
        &self,
        caller: &Caller,
        _input: models::ListApiTokensInput,
        paging: Paging,
    ) -> Result<Paged<models::ApiToken>, errors::ListApiTokensError> {
        api_tokens::list(&self.store, caller, paging).await
    }

    async fn create_api_token(
        &self,
        caller: &Caller,
        input: models::CreateApiTokenInput,
    ) -> Result<models::CreatedApiToken, errors::CreateApiTokenError> {
        api_tokens::create(&self.store, caller, input).await
    }

    async fn revoke_api_token(
        &self,
        caller: &Caller,
        input: models::RevokeApiTokenInput,
    ) -> Result<(), errors::RevokeApiTokenError> {
        api_tokens::revoke(&self.store, caller, input).await
    }
}
