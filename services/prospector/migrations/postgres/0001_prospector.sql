-- The prospector's tables: scoring configurations, leads, idempotency keys, scan locks,
-- proposals, the platform outbox, contracts and milestones.
-- Every row is scoped by tenant_id; timestamps are epoch milliseconds (UTC). `IF NOT EXISTS`
-- throughout: databases of releases before per-owner migrations already hold these tables
-- (created by the single migration set those releases ran) and adopt them unchanged.

-- Scoring configuration, versioned per tenant: every update adds a version; leads name theirs.
CREATE TABLE IF NOT EXISTS scoring_configs (
    tenant_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    weights TEXT NOT NULL,
    parameters TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, version)
);

-- Leads found by scans, with the posting as last fetched (what scores and backtests replay)
-- and the score breakdown it was given. A platform's job is stored once per tenant. `outcome`
-- (won/lost) outlives archiving: it is what backtests replay.
CREATE TABLE IF NOT EXISTS leads (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    source TEXT NOT NULL,
    platform TEXT NOT NULL,
    external_id TEXT NOT NULL,
    job_title TEXT NOT NULL,
    posting TEXT NOT NULL,
    fetched_at BIGINT NOT NULL,
    search_text TEXT NOT NULL,
    budget_value DOUBLE PRECISION,
    posted_at BIGINT,
    status TEXT NOT NULL,
    outcome TEXT,
    tags TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    breakdown TEXT NOT NULL,
    config_version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (tenant_id, platform, external_id)
);

-- Covers the default list (score order, ties by id) and its count (score range, status).
CREATE INDEX IF NOT EXISTS leads_by_score ON leads (tenant_id, score, id, status);

CREATE INDEX IF NOT EXISTS leads_by_created ON leads (tenant_id, created_at, id);

CREATE INDEX IF NOT EXISTS leads_by_status ON leads (tenant_id, status, score);

CREATE INDEX IF NOT EXISTS leads_by_outcome ON leads (tenant_id, outcome, created_at);

-- Idempotency keys of scan, create_proposal and submit_proposal: the request's fingerprint and,
-- once finished, the response replayed to a retry (kept 24 hours).
CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant_id TEXT NOT NULL,
    operation TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    response TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, operation, idem_key)
);

-- One scan at a time per tenant.
CREATE TABLE IF NOT EXISTS scan_locks (
    tenant_id TEXT PRIMARY KEY,
    scan_id TEXT NOT NULL,
    started_at BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS proposals (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    lead_id TEXT NOT NULL REFERENCES leads (id),
    status TEXT NOT NULL,
    draft_text TEXT NOT NULL,
    tone TEXT,
    bid_amount DOUBLE PRECISION,
    currency TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    submitted_at BIGINT,
    platform_reference TEXT,
    contract_id TEXT,
    submitting_since BIGINT
);

CREATE INDEX IF NOT EXISTS proposals_by_updated ON proposals (tenant_id, updated_at, id);

CREATE INDEX IF NOT EXISTS proposals_by_lead ON proposals (tenant_id, lead_id);

-- The recording platform connector: submissions and withdrawals written in the same transaction
-- as the proposal's change, for a relay to deliver (transactional outbox).
CREATE TABLE IF NOT EXISTS platform_outbox (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    proposal_id TEXT NOT NULL,
    action TEXT NOT NULL,
    platform TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    delivered_at BIGINT
);

CREATE INDEX IF NOT EXISTS platform_outbox_pending ON platform_outbox (delivered_at, created_at);

CREATE TABLE IF NOT EXISTS contracts (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    proposal_id TEXT NOT NULL UNIQUE REFERENCES proposals (id),
    lead_id TEXT NOT NULL,
    title TEXT NOT NULL,
    client_name TEXT NOT NULL,
    platform TEXT NOT NULL,
    platform_reference TEXT,
    status TEXT NOT NULL,
    total_amount DOUBLE PRECISION NOT NULL,
    currency TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    completed_at BIGINT,
    updated_at BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS contracts_by_started ON contracts (tenant_id, started_at, id);

CREATE TABLE IF NOT EXISTS milestones (
    contract_id TEXT NOT NULL REFERENCES contracts (id),
    id TEXT NOT NULL,
    position BIGINT NOT NULL,
    title TEXT NOT NULL,
    amount DOUBLE PRECISION NOT NULL,
    due_on BIGINT,
    status TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (contract_id, id)
);
