-- The vault's tables: role assignments, folders, credentials and their versions, tags,
-- leases, grants and the wrapped data keys.
-- Every row is scoped by tenant_id; timestamps are epoch milliseconds (UTC). `IF NOT EXISTS`
-- throughout: databases of releases before per-owner migrations already hold these tables
-- (created by the single migration set those releases ran) and adopt them unchanged.

CREATE TABLE IF NOT EXISTS role_assignments (
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    assigned_at BIGINT NOT NULL,
    assigned_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);

CREATE TABLE IF NOT EXISTS folders (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    parent_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX IF NOT EXISTS folders_sibling_names ON folders (tenant_id, COALESCE(parent_id, ''), name);

CREATE TABLE IF NOT EXISTS credentials (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    folder_id TEXT,
    description TEXT,
    username TEXT,
    url TEXT,
    state TEXT NOT NULL,
    current_version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    archived_at BIGINT,
    PRIMARY KEY (tenant_id, key)
);

CREATE INDEX IF NOT EXISTS credentials_by_folder ON credentials (tenant_id, folder_id);

CREATE TABLE IF NOT EXISTS credential_versions (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    version BIGINT NOT NULL,
    data_key_id TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, key, version)
);

CREATE TABLE IF NOT EXISTS tags (
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS credential_tags (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (tenant_id, key, tag)
);

CREATE INDEX IF NOT EXISTS credential_tags_by_tag ON credential_tags (tenant_id, tag);

CREATE TABLE IF NOT EXISTS leases (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    credential_key TEXT NOT NULL,
    version BIGINT NOT NULL,
    issued_to TEXT NOT NULL,
    purpose TEXT,
    ttl_seconds BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    redeemed_at BIGINT,
    revoked_at BIGINT,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX IF NOT EXISTS leases_by_user ON leases (tenant_id, issued_to, created_at);

CREATE TABLE IF NOT EXISTS grants (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    target TEXT NOT NULL,
    target_id TEXT NOT NULL,
    principal TEXT NOT NULL,
    permissions TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX IF NOT EXISTS grants_one_per_principal ON grants (tenant_id, target, target_id, principal);

CREATE INDEX IF NOT EXISTS grants_by_principal ON grants (tenant_id, principal);

CREATE TABLE IF NOT EXISTS data_keys (
    id TEXT PRIMARY KEY,
    master_key_id TEXT NOT NULL,
    wrapped BYTEA NOT NULL,
    active BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
