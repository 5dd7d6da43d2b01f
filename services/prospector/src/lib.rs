//! The lead-prospecting API: the generated `ProspectorService` implemented on the Specwright
//! platform ([`Prospector`]), registered with a binary as a [`Module`].

pub mod api_tokens;
pub mod backtest;
pub mod connector;
pub mod contracts;
pub mod engine;
pub mod idempotency;
pub mod leads;
pub mod posting;
pub mod proposals;
pub mod scans;
pub mod scoring;
mod service;
pub mod sources;

pub use service::Prospector;

/// Applies the prospector's own migrations (its tables beside the platform's).
pub async fn migrate(store: &runtime::store::Store) -> anyhow::Result<()> {
    store.migrate("prospector", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await
}

/// The prospector as a binary registers it: its migrations, its catalog entry and the service,
/// scanning `lead_sources` (`NAME=LOCATION` each; the embedded sample feed when empty) and
/// submitting proposals through the platform connector at `platform_connector` (the recording
/// outbox when `None`).
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// The lead sources.
    pub lead_sources: Vec<String>,
    /// Base URL of the platform's proposal API.
    pub platform_connector: Option<String>,
}

impl runtime::Module for Module {
    fn info(&self) -> &'static support::ServiceInfo {
        &prospector_api::prospector::SERVICE
    }

    fn migrate<'a>(&'a self, store: &'a runtime::store::Store) -> runtime::module::BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(migrate(store))
    }

    fn open<'a>(
        &'a self,
        platform: &'a runtime::Platform,
    ) -> runtime::module::BoxFuture<'a, anyhow::Result<runtime::ServiceApi>> {
        Box::pin(async move {
            let prospector =
                Prospector::new(platform.store.clone(), &self.lead_sources, self.platform_connector.as_deref())?;
            Ok(prospector_api::prospector::api(prospector))
        })
    }
}
