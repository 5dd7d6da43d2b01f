-- Files attached to notes, by name; the content is a platform blob.
CREATE TABLE note_attachments (
    tenant_id TEXT NOT NULL,
    note_id TEXT NOT NULL,
    name TEXT NOT NULL,
    blob_id TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    caption TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, note_id, name)
);
