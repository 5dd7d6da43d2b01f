//! The example service: notes, kept per tenant, built on the Specwright platform exactly as a
//! user's own service would be. The spec is `spec/notes.toml`; `cargo xtask generate` writes the
//! `notes-api` crate from it; this crate implements its trait over the platform's database and
//! registers it with the server builder ([`server`]). Every scoped operation is audited (the spec
//! turns audit on): each change commits with its audit row, or not at all.

mod attachments;
mod changes;
mod edits;
mod exports;
mod hooks;
mod labels;
mod rows;
mod service;
mod state;

use runtime::Platform;
use runtime::store::Store;

pub use notes_api::notes::{SERVICE, api};
pub use state::Notes;

/// The application: the notes service registered with the platform's server builder.
pub async fn server(platform: &Platform) -> anyhow::Result<axum::Router> {
    let modules: [Box<dyn runtime::Module>; 1] = [Box::new(Module)];
    runtime::Server::builder(platform).modules(&modules).await?.build()
}

/// Applies the notes service's own migrations (its tables beside the platform's).
pub async fn migrate(store: &Store) -> anyhow::Result<()> {
    store.migrate("notes", sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await
}

/// The notes service as a binary registers it: its migrations, its catalog entry, the service.
#[derive(Debug, Clone, Copy, Default)]
pub struct Module;

impl runtime::Module for Module {
    fn info(&self) -> &'static support::ServiceInfo {
        &SERVICE
    }

    fn migrate<'a>(&'a self, store: &'a Store) -> runtime::module::BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(migrate(store))
    }

    /// The service, its statistics cacheable by the client for ten seconds: a per-operation layer
    /// (any tower layer, here one that sets a header) on the operation it selects.
    fn open<'a>(
        &'a self,
        platform: &'a Platform,
    ) -> runtime::module::BoxFuture<'a, anyhow::Result<runtime::ServiceApi>> {
        Box::pin(async move {
            let cache = tower_http::set_header::SetResponseHeaderLayer::if_not_present(
                axum::http::header::CACHE_CONTROL,
                axum::http::HeaderValue::from_static("private, max-age=10"),
            );
            Ok(api(Notes::open_migrated(platform)).layer(support::Select::Operation("note_stats"), cache))
        })
    }
}

impl Notes {
    /// The service over the platform's database, its own tables migrated.
    pub async fn open(platform: &Platform) -> anyhow::Result<Self> {
        migrate(&platform.store).await?;
        Ok(Self::open_migrated(platform))
    }

    /// [`Notes::open`] over a database whose migrations are applied (as a registered module's is).
    fn open_migrated(platform: &Platform) -> Self {
        let store = platform.store.clone();
        let notes = Notes {
            blobs: runtime::blobs::Blobs::new(store.clone()),
            store,
            changes: Default::default(),
            webhooks: platform.webhooks.clone(),
            mcp_changes: platform.changes(&SERVICE),
        };
        // Deliveries queued before a stop go out now, and new ones as their changes commit.
        notes.webhooks.start();
        // Exports a stopped process left unfinished.
        tokio::spawn(notes.clone().resume_exports());
        notes
    }
}
