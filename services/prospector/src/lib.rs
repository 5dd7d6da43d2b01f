//! The lead-prospecting API: the generated `ProspectorService` implemented on the Specwright
//! platform, registered with the server builder as `generated::prospector::api(Prospector::open(…))`.

pub mod api_tokens;
pub mod backtest;
pub mod connector;
pub mod contracts;
pub mod engine;
pub mod idempotency;
pub mod leads;
pub mod posting;
pub mod proposals;
pub mod prospector;
pub mod scans;
pub mod scoring;
pub mod sources;

/// Applies the prospector's own migrations (its tables beside the platform's).
pub async fn migrate(store: &runtime::store::Store) -> anyhow::Result<()> {
    store.migrate("prospector", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await
}
