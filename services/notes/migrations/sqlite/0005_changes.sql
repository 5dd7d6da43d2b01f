-- Every change of a tenant's notes, in order: what `GET /notes/changes` streams and resumes
-- from. `note_feed` holds each tenant's last number; taking the next one locks its row until the
-- change commits, so numbers commit in order and a reader never skips one.
CREATE TABLE note_feed (
    tenant_id TEXT PRIMARY KEY,
    seq BIGINT NOT NULL
);

CREATE TABLE note_changes (
    tenant_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    note_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, seq)
);
