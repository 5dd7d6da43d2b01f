-- Scoring configuration, versioned per tenant: every update adds a version; leads name theirs.
CREATE TABLE scoring_configs (
    tenant_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    weights TEXT NOT NULL,
    parameters TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, version)
);
