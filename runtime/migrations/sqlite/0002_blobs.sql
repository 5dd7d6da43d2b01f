-- Blobs: files a service keeps (uploads, exports), stored in chunks so they stream in and out
-- with flat memory. A blob is pending (kept = 0) until the transaction that records it keeps
-- it; pending blobs older than an hour are swept.

CREATE TABLE IF NOT EXISTS blobs (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    kept INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS blobs_pending ON blobs (kept, created_at);

CREATE TABLE IF NOT EXISTS blob_chunks (
    blob_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (blob_id, seq)
);
