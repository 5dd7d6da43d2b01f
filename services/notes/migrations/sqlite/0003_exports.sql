-- Exports of a tenant's notes as CSV: a job row whose file is a platform blob once done.
-- `claimed_until` is the lease of the process writing it: past it, another may take it over.
CREATE TABLE note_exports (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    state TEXT NOT NULL,
    only_state TEXT,
    created_at BIGINT NOT NULL,
    finished_at BIGINT,
    claimed_until BIGINT NOT NULL,
    notes BIGINT,
    size BIGINT,
    blob_id TEXT,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX note_exports_pending ON note_exports (state, claimed_until);
