//! The lead-prospecting API's operations, each delegating to its domain module.

use prospector_api::prospector::{ProspectorService, errors, models};
use support::{Paged, Paging};

use runtime::Context;

use crate::state::Prospector;
use crate::{api_tokens, contracts, lead_list, leads, proposals, scans, scoring};

impl ProspectorService for Prospector {
    type Context = Context;

    async fn list_leads(
        &self,
        cx: &mut Context,
        input: models::ListLeadsInput,
        paging: Paging,
    ) -> Result<Paged<support::Rendered<models::Lead>>, errors::ListLeadsError> {
        lead_list::list(&self.store, &self.renderings, cx, input, paging).await
    }

    async fn get_lead(
        &self,
        cx: &mut Context,
        input: models::GetLeadInput,
    ) -> Result<models::LeadDetail, errors::GetLeadError> {
        leads::get(&self.store, cx, &input.id).await
    }

    async fn scan_leads(
        &self,
        cx: &mut Context,
        input: models::ScanLeadsInput,
    ) -> Result<models::ScanReport, errors::ScanLeadsError> {
        scans::scan(cx, &self.store, &self.sources, &self.http, input).await
    }

    async fn update_lead(
        &self,
        cx: &mut Context,
        input: models::UpdateLeadInput,
    ) -> Result<models::Lead, errors::UpdateLeadError> {
        leads::update(cx, input).await
    }

    async fn list_proposals(
        &self,
        cx: &mut Context,
        input: models::ListProposalsInput,
        paging: Paging,
    ) -> Result<Paged<models::Proposal>, errors::ListProposalsError> {
        proposals::list(&self.store, cx, input, paging).await
    }

    async fn get_proposal(
        &self,
        cx: &mut Context,
        input: models::GetProposalInput,
    ) -> Result<models::Proposal, errors::GetProposalError> {
        proposals::get(&self.store, cx, &input.id).await
    }

    async fn create_proposal(
        &self,
        cx: &mut Context,
        input: models::CreateProposalInput,
    ) -> Result<models::Proposal, errors::CreateProposalError> {
        proposals::create(cx, &self.store, input).await
    }

    async fn update_proposal(
        &self,
        cx: &mut Context,
        input: models::UpdateProposalInput,
    ) -> Result<models::Proposal, errors::UpdateProposalError> {
        proposals::update(cx, &self.connector, input).await
    }

    async fn submit_proposal(
        &self,
        cx: &mut Context,
        input: models::SubmitProposalInput,
    ) -> Result<models::Proposal, errors::SubmitProposalError> {
        proposals::submit(cx, &self.store, &self.connector, input).await
    }

    async fn record_proposal_outcome(
        &self,
        cx: &mut Context,
        input: models::RecordOutcomeInput,
    ) -> Result<models::Proposal, errors::RecordProposalOutcomeError> {
        proposals::record_outcome(cx, input).await
    }

    async fn list_contracts(
        &self,
        cx: &mut Context,
        input: models::ListContractsInput,
        paging: Paging,
    ) -> Result<Paged<models::Contract>, errors::ListContractsError> {
        contracts::list(&self.store, cx, input, paging).await
    }

    async fn get_contract(
        &self,
        cx: &mut Context,
        input: models::GetContractInput,
    ) -> Result<models::Contract, errors::GetContractError> {
        contracts::get(cx, &input.id).await
    }

    async fn update_milestone(
        &self,
        cx: &mut Context,
        input: models::UpdateMilestoneInput,
    ) -> Result<models::Contract, errors::UpdateMilestoneError> {
        contracts::update_milestone(cx, input).await
    }

    async fn get_scoring_config(
        &self,
        cx: &mut Context,
    ) -> Result<models::ScoringConfig, errors::GetScoringConfigError> {
        scoring::get(cx).await
    }

    async fn update_scoring_config(
        &self,
        cx: &mut Context,
        input: models::UpdateScoringConfigInput,
    ) -> Result<models::ScoringConfig, errors::UpdateScoringConfigError> {
        let config = scoring::update(cx, input).await?;
        // Open leads follow the new version in the background, once it is committed; each names
        // the version it used.
        let (store, tenant) = (self.store.clone(), cx.caller.tenant.clone());
        cx.on_commit(move || {
            tokio::spawn(async move {
                match leads::rescore(&store, &tenant).await {
                    Ok(n) => tracing::info!(tenant, rescored = n, "leads rescored with the new scoring configuration"),
                    Err(e) => tracing::error!(tenant, "rescoring leads failed (they keep their previous score): {e}"),
                }
            });
        });
        Ok(config)
    }

    async fn run_backtest(
        &self,
        cx: &mut Context,
        input: models::BacktestInput,
    ) -> Result<models::BacktestReport, errors::RunBacktestError> {
        scoring::backtest(cx, &self.store, &self.replays, input).await
    }

    async fn list_api_tokens(
        &self,
        cx: &mut Context,
        _input: models::ListApiTokensInput,
        paging: Paging,
    ) -> Result<Paged<models::ApiToken>, errors::ListApiTokensError> {
        api_tokens::list(&self.store, cx, paging).await
    }

    async fn create_api_token(
        &self,
        cx: &mut Context,
        input: models::CreateApiTokenInput,
    ) -> Result<models::CreatedApiToken, errors::CreateApiTokenError> {
        api_tokens::create(&self.store, cx, input).await
    }

    async fn revoke_api_token(
        &self,
        cx: &mut Context,
        input: models::RevokeApiTokenInput,
    ) -> Result<(), errors::RevokeApiTokenError> {
        api_tokens::revoke(&self.store, cx, input).await
    }
}
