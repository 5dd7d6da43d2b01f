-- Vault storage. Every row is scoped by tenant_id; timestamps are epoch milliseconds (UTC).

CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL
);

CREATE TABLE role_assignments (
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    assigned_at BIGINT NOT NULL,
    assigned_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);

CREATE TABLE folders (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    parent_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX folders_sibling_names ON folders (tenant_id, COALESCE(parent_id, ''), name);

CREATE TABLE credentials (
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
CREATE INDEX credentials_by_folder ON credentials (tenant_id, folder_id);

CREATE TABLE credential_versions (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    version BIGINT NOT NULL,
    data_key_id TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (tenant_id, key, version)
);

CREATE TABLE tags (
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE credential_tags (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (tenant_id, key, tag)
);
CREATE INDEX credential_tags_by_tag ON credential_tags (tenant_id, tag);

CREATE TABLE leases (
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
CREATE INDEX leases_by_user ON leases (tenant_id, issued_to, created_at);

CREATE TABLE grants (
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
CREATE UNIQUE INDEX grants_one_per_principal ON grants (tenant_id, target, target_id, principal);
CREATE INDEX grants_by_principal ON grants (tenant_id, principal);

CREATE TABLE audit_events (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    occurred_at BIGINT NOT NULL,
    request_id TEXT NOT NULL,
    actor TEXT NOT NULL,
    auth_method TEXT NOT NULL,
    token_id TEXT,
    scope TEXT NOT NULL,
    operation TEXT NOT NULL,
    targets TEXT NOT NULL,
    outcome TEXT NOT NULL,
    status BIGINT NOT NULL,
    error_code TEXT,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX audit_newest_first ON audit_events (tenant_id, occurred_at, id);

CREATE TABLE personal_tokens (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    last_used_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX personal_tokens_by_user ON personal_tokens (tenant_id, user_id);

CREATE TABLE data_keys (
    id TEXT PRIMARY KEY,
    master_key_id TEXT NOT NULL,
    wrapped BYTEA NOT NULL,
    active BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
