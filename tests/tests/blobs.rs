//! The platform's blob store on both backends: content streamed in comes back byte for byte and
//! chunk by chunk; a write over its limit, or whose source fails, leaves nothing; a blob is
//! another tenant's to nobody; pending blobs are swept, kept ones are not.

mod common;

use axum::body::Bytes;
use futures_util::StreamExt;
use runtime::blobs::{Blobs, CHUNK, WriteError};
use sha2::{Digest, Sha256};

/// `n` bytes of a pattern no two chunks share, in pieces of uneven sizes.
fn content(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8 ^ (i / 7919) as u8).collect()
}

fn pieces(data: &[u8]) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let chunks: Vec<Result<Bytes, std::io::Error>> =
        data.chunks(100_003).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
    futures_util::stream::iter(chunks)
}

async fn count(store: &runtime::store::Store, sql: &str, id: &str) -> i64 {
    use sqlx::Row;
    sqlx::query(sqlx::AssertSqlSafe(sql.to_string())).bind(id).fetch_one(store.pool()).await.unwrap().get(0)
}

on_both_backends!(blobs_stream_in_and_out_whole_and_nothing_is_left_of_a_failed_write, |server| {
    let store = server.state.store.clone();
    let blobs = Blobs::new(store.clone());
    let data = content(3 * CHUNK + 12_345);
    let blob = blobs.write("acme", pieces(&data), 10 * CHUNK as u64).await.unwrap();
    let digest: String = Sha256::digest(&data).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!((blob.size, blob.sha256.as_str()), (data.len() as u64, digest.as_str()));
    assert_eq!(count(&store, "SELECT COUNT(*) FROM blob_chunks WHERE blob_id = $1", &blob.id).await, 4);

    let (size, chunks) = blobs.read("acme", &blob.id).await.unwrap().expect("the tenant's blob");
    assert_eq!(size, data.len() as u64);
    let read: Vec<Bytes> = chunks.map(|c| c.unwrap()).collect().await;
    assert_eq!(read.len(), 4, "one item per stored chunk");
    assert_eq!(read.concat(), data, "byte for byte");
    assert!(blobs.read("other", &blob.id).await.unwrap().is_none(), "another tenant's blob is no blob");

    // Over the limit: refused, and its chunks are gone.
    let refused = blobs.write("acme", pieces(&data), CHUNK as u64).await.unwrap_err();
    assert!(matches!(refused, WriteError::TooLarge { limit } if limit == CHUNK as u64), "{refused}");
    // A source that fails mid-way (a client gone): refused, nothing left.
    let failing = pieces(&data[..2 * CHUNK])
        .chain(futures_util::stream::once(async { Err(std::io::Error::other("connection reset")) }));
    let failed = blobs.write("acme", failing, 10 * CHUNK as u64).await.unwrap_err();
    assert!(matches!(failed, WriteError::Source(ref e) if e.contains("connection reset")), "{failed}");
    let blobs_left: i64 = {
        use sqlx::Row;
        sqlx::query("SELECT COUNT(*) FROM blobs").fetch_one(store.pool()).await.unwrap().get(0)
    };
    assert_eq!(blobs_left, 1, "only the blob written whole");
    let chunks_left: i64 = {
        use sqlx::Row;
        sqlx::query("SELECT COUNT(*) FROM blob_chunks").fetch_one(store.pool()).await.unwrap().get(0)
    };
    assert_eq!(chunks_left, 4);

    // Kept in a transaction, a blob outlives the sweep; a pending one past its hour does not.
    let mut tx = store.begin().await.unwrap();
    assert!(!Blobs::keep(&mut tx, "other", &blob.id).await.unwrap(), "another tenant cannot keep it");
    assert!(Blobs::keep(&mut tx, "acme", &blob.id).await.unwrap());
    tx.commit().await.unwrap();
    let pending = blobs.write("acme", pieces(&data[..10]), 100).await.unwrap();
    assert_eq!(blobs.sweep().await.unwrap(), 0, "a fresh pending blob stays for its hour");
    let hour_ago = runtime::store::now_ms() - 3_600_001;
    sqlx::query("UPDATE blobs SET created_at = $1").bind(hour_ago).execute(store.pool()).await.unwrap();
    assert_eq!(blobs.sweep().await.unwrap(), 1, "the pending one past its hour");
    assert!(blobs.read("acme", &pending.id).await.unwrap().is_none());
    assert_eq!(count(&store, "SELECT COUNT(*) FROM blob_chunks WHERE blob_id = $1", &pending.id).await, 0);
    assert!(blobs.read("acme", &blob.id).await.unwrap().is_some(), "the kept one stays");

    // Deleted with the row that named it.
    let mut tx = store.begin().await.unwrap();
    Blobs::delete(&mut tx, "acme", &blob.id).await.unwrap();
    tx.commit().await.unwrap();
    assert!(blobs.read("acme", &blob.id).await.unwrap().is_none());
    assert_eq!(count(&store, "SELECT COUNT(*) FROM blob_chunks WHERE blob_id = $1", &blob.id).await, 0);
});
