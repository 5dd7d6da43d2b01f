//! Files kept in the platform's database, streamed in and out in chunks: what a service stores
//! for an upload or an export, on either backend, with memory flat whatever the size.
//!
//! A blob is written chunk by chunk ([`CHUNK`] bytes each), every chunk in a short transaction
//! of its own, so a slow upload never holds SQLite's one writer for its whole length. A new
//! blob is *pending*: the service [`keep`](Blobs::keep)s it in the transaction that records it
//! (the attachment row, the finished export), so a request that fails in between leaves no
//! file anyone can reach, and [`sweep`](Blobs::sweep) deletes pending blobs older than
//! [`PENDING_FOR`]. Reading streams one chunk at a time, as the client takes them.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::body::Bytes;
use futures_util::{Stream, StreamExt};
use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::store::{Store, Tx, now_ms};

/// Bytes per stored chunk.
pub const CHUNK: usize = 256 * 1024;

/// How long a blob may stay pending (written, not yet kept) before [`Blobs::sweep`] deletes it.
pub const PENDING_FOR: std::time::Duration = std::time::Duration::from_secs(3600);

/// A stored blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// Its id (`blob_…`).
    pub id: String,
    /// Its length in bytes.
    pub size: u64,
    /// Its SHA-256 digest, lowercase hex.
    pub sha256: String,
}

/// Why a blob was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The content is longer than the limit given; nothing was kept.
    #[error("the content is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// The source failed (a client that went away mid-upload); nothing was kept.
    #[error("reading the content failed: {0}")]
    Source(String),
    /// The database failed; nothing was kept.
    #[error(transparent)]
    Storage(#[from] sqlx::Error),
}

/// The platform's blob store over its database.
#[derive(Debug, Clone)]
pub struct Blobs {
    store: Store,
    /// When the last sweep started (epoch ms), so writes sweep at most once per interval.
    swept: Arc<AtomicI64>,
}

impl Blobs {
    /// The blob store of `store` (its tables are the platform's).
    pub fn new(store: Store) -> Self {
        Blobs { store, swept: Arc::default() }
    }

    /// Writes `content` into a new pending blob of `tenant`, at most `limit` bytes. Call it
    /// outside any transaction (each chunk commits on its own); then [`keep`](Self::keep) it in
    /// the transaction that records it. On any failure the chunks written so far are deleted.
    pub async fn write<S, E>(&self, tenant: &str, content: S, limit: u64) -> Result<Blob, WriteError>
    where
        S: Stream<Item = Result<Bytes, E>> + Send,
        E: std::fmt::Display,
    {
        self.sweep_now_and_then().await;
        let id = format!("blob_{}", uuid::Uuid::now_v7().simple());
        let mut tx = self.store.begin().await?;
        sqlx::query("INSERT INTO blobs (id, tenant_id, size, sha256, created_at, kept) VALUES ($1, $2, 0, '', $3, 0)")
            .bind(id.as_str())
            .bind(tenant)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        match self.fill(&id, content, limit).await {
            Ok(blob) => Ok(blob),
            Err(e) => {
                // What was written is unreachable; delete it now rather than at the next sweep.
                if let Err(cleanup) = self.remove(&id).await {
                    tracing::warn!(blob = id, "deleting a blob whose write failed: {cleanup}");
                }
                Err(e)
            }
        }
    }

    async fn fill<S, E>(&self, id: &str, content: S, limit: u64) -> Result<Blob, WriteError>
    where
        S: Stream<Item = Result<Bytes, E>> + Send,
        E: std::fmt::Display,
    {
        let mut content = std::pin::pin!(content);
        let mut digest = Sha256::new();
        let mut pending: Vec<u8> = Vec::with_capacity(CHUNK);
        let (mut size, mut seq) = (0u64, 0i64);
        loop {
            let next = content.next().await.transpose().map_err(|e| WriteError::Source(e.to_string()))?;
            let done = next.is_none();
            if let Some(bytes) = next {
                size += bytes.len() as u64;
                if size > limit {
                    return Err(WriteError::TooLarge { limit });
                }
                digest.update(&bytes);
                pending.extend_from_slice(&bytes);
            }
            while pending.len() >= CHUNK || (done && !pending.is_empty()) {
                let rest = pending.split_off(pending.len().min(CHUNK));
                let chunk = std::mem::replace(&mut pending, rest);
                let mut tx = self.store.begin().await?;
                sqlx::query("INSERT INTO blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)")
                    .bind(id)
                    .bind(seq)
                    .bind(chunk)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                seq += 1;
            }
            if done {
                break;
            }
        }
        let sha256 = digest.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>();
        let mut tx = self.store.begin().await?;
        sqlx::query("UPDATE blobs SET size = $1, sha256 = $2 WHERE id = $3")
            .bind(i64::try_from(size).unwrap_or(i64::MAX))
            .bind(sha256.as_str())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Blob { id: id.to_string(), size, sha256 })
    }

    /// Keeps blob `id` of `tenant`, in `tx` (the transaction that records it): from its commit
    /// on, no sweep deletes it. `false` when there is no such pending blob (swept already, or
    /// another tenant's).
    pub async fn keep(tx: &mut Tx, tenant: &str, id: &str) -> Result<bool, sqlx::Error> {
        let done = sqlx::query("UPDATE blobs SET kept = 1 WHERE id = $1 AND tenant_id = $2 AND kept = 0")
            .bind(id)
            .bind(tenant)
            .execute(&mut **tx)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes blob `id` of `tenant` in `tx` (with the row that referred to it).
    pub async fn delete(tx: &mut Tx, tenant: &str, id: &str) -> Result<(), sqlx::Error> {
        let owned = sqlx::query("DELETE FROM blobs WHERE id = $1 AND tenant_id = $2")
            .bind(id)
            .bind(tenant)
            .execute(&mut **tx)
            .await?;
        if owned.rows_affected() == 1 {
            sqlx::query("DELETE FROM blob_chunks WHERE blob_id = $1").bind(id).execute(&mut **tx).await?;
        }
        Ok(())
    }

    /// The content of blob `id` of `tenant`, one chunk at a time, each read when the consumer
    /// asks for it (a client that reads slowly holds one chunk in memory, not the file); `None`
    /// when the tenant has no such blob. A storage failure mid-way ends the stream with an
    /// error, which cuts the response short (the client sees a truncated body, never a wrong one).
    pub async fn read(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<(u64, impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static)>, sqlx::Error> {
        let Some(blob) = self.find(tenant, id).await? else { return Ok(None) };
        Ok(Some((blob.size, chunks(self.store.clone(), blob.id, 0, blob.size))))
    }

    /// Blob `id` of `tenant` as the file an operation answers: of `media_type`, tagged with its
    /// digest, streamed chunk by chunk, and able to answer a part (`Range`) by reading only the
    /// chunks the part spans. `None` when the tenant has no such blob.
    pub async fn file(&self, tenant: &str, id: &str, media_type: &str) -> Result<Option<support::File>, sqlx::Error> {
        let Some(blob) = self.find(tenant, id).await? else { return Ok(None) };
        let whole = chunks(self.store.clone(), blob.id.clone(), 0, blob.size);
        let (store, blob_id) = (self.store.clone(), blob.id);
        let file = support::File::stream(media_type, Some(blob.size), whole)
            .tagged(&blob.sha256[..blob.sha256.len().min(32)])
            .ranges(move |start, end| chunks(store, blob_id, start, end + 1 - start));
        Ok(Some(file))
    }

    /// Blob `id` of `tenant`, when there is one.
    async fn find(&self, tenant: &str, id: &str) -> Result<Option<Blob>, sqlx::Error> {
        let row = sqlx::query("SELECT size, sha256 FROM blobs WHERE id = $1 AND tenant_id = $2")
            .bind(id)
            .bind(tenant)
            .fetch_optional(self.store.readers())
            .await?;
        Ok(row.map(|row| Blob {
            id: id.to_string(),
            size: u64::try_from(row.get::<i64, _>(0)).unwrap_or(0),
            sha256: row.get(1),
        }))
    }

    /// Deletes pending blobs older than [`PENDING_FOR`]; how many.
    pub async fn sweep(&self) -> Result<u64, sqlx::Error> {
        let before = now_ms() - i64::try_from(PENDING_FOR.as_millis()).unwrap_or(i64::MAX);
        let stale: Vec<String> = sqlx::query("SELECT id FROM blobs WHERE kept = 0 AND created_at < $1 LIMIT 100")
            .bind(before)
            .fetch_all(self.store.readers())
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        for id in &stale {
            self.remove(id).await?;
        }
        Ok(stale.len() as u64)
    }

    /// Sweeps at most once per [`PENDING_FOR`] / 4, from whichever write comes first.
    async fn sweep_now_and_then(&self) {
        let now = now_ms();
        let last = self.swept.load(Ordering::Relaxed);
        let every = i64::try_from(PENDING_FOR.as_millis() / 4).unwrap_or(i64::MAX);
        if now - last < every || self.swept.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            return;
        }
        match self.sweep().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "swept pending blobs never kept"),
            Err(e) => tracing::warn!("sweeping pending blobs: {e}"),
        }
    }

    /// Deletes blob `id` whatever its tenant, in a transaction of its own.
    async fn remove(&self, id: &str) -> Result<(), sqlx::Error> {
        let mut tx = self.store.begin().await?;
        sqlx::query("DELETE FROM blob_chunks WHERE blob_id = $1").bind(id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM blobs WHERE id = $1").bind(id).execute(&mut *tx).await?;
        tx.commit().await
    }
}

/// `len` bytes of blob `id` from byte `start`, reading one chunk when the consumer asks for the
/// next: only the chunks the bytes span, the first and last cut to them.
fn chunks(
    store: Store,
    id: String,
    start: u64,
    len: u64,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let chunk = CHUNK as u64;
    let first = i64::try_from(start / chunk).unwrap_or(i64::MAX);
    futures_util::stream::unfold((first, start % chunk, len), move |(seq, skip, remaining)| {
        let (store, id) = (store.clone(), id.clone());
        async move {
            if remaining == 0 {
                return None;
            }
            let row = sqlx::query("SELECT data FROM blob_chunks WHERE blob_id = $1 AND seq = $2")
                .bind(id.as_str())
                .bind(seq)
                .fetch_optional(store.readers())
                .await;
            match row {
                Ok(Some(row)) => {
                    let data = Bytes::from(row.get::<Vec<u8>, _>(0));
                    let from = usize::try_from(skip).unwrap_or(usize::MAX).min(data.len());
                    let to = usize::try_from(skip.saturating_add(remaining)).unwrap_or(usize::MAX).min(data.len());
                    let taken = (to - from) as u64;
                    Some((Ok(data.slice(from..to)), (seq + 1, 0, remaining - taken.min(remaining))))
                }
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!(blob = id, seq, "reading a blob chunk failed: {e}");
                    Some((Err(std::io::Error::other(e)), (seq, 0, 0)))
                }
            }
        }
    })
}
