-- The notes of each tenant, and their tags.
CREATE TABLE notes (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    due BIGINT,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE note_tags (
    tenant_id TEXT NOT NULL,
    note_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (tenant_id, note_id, tag),
    FOREIGN KEY (tenant_id, note_id) REFERENCES notes (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX note_tags_by_tag ON note_tags (tenant_id, tag);
