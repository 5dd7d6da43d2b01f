//! The notes service's state, which every operation shares.

use runtime::store::Store;

/// The notes service over the platform's database.
#[derive(Debug, Clone)]
pub struct Notes {
    pub(crate) store: Store,
    pub(crate) blobs: runtime::blobs::Blobs,
    /// Woken when a change of a note commits: the change streams of this process look at once.
    pub(crate) changes: std::sync::Arc<tokio::sync::Notify>,
    /// The platform's webhook outbox, which delivers `note.changed` to subscribers.
    pub(crate) webhooks: runtime::webhooks::Webhooks,
    /// The platform's news of this service's changes for MCP resource subscribers: an export
    /// that ends in the background is announced here (a call's changes are by the platform).
    pub(crate) mcp_changes: runtime::changes::Changes,
}
