-- The platform's tables: tenants, the audit log, stored tokens, users, the embedded
-- authorization server's clients, consents, codes and refresh tokens, and sign-in sessions.
-- Every row is scoped by tenant_id; timestamps are epoch milliseconds (UTC). `IF NOT EXISTS`
-- throughout: databases of releases before per-owner migrations already hold these tables
-- (created by the single migration set those releases ran) and adopt them unchanged.

CREATE TABLE IF NOT EXISTS tenants (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS audit_events (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    occurred_at INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    actor TEXT NOT NULL,
    auth_method TEXT NOT NULL,
    token_id TEXT,
    scope TEXT NOT NULL,
    operation TEXT NOT NULL,
    targets TEXT NOT NULL,
    outcome TEXT NOT NULL,
    status INTEGER NOT NULL,
    error_code TEXT,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX IF NOT EXISTS audit_newest_first ON audit_events (tenant_id, occurred_at, id);

CREATE TABLE IF NOT EXISTS personal_tokens (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    last_used_at INTEGER,
    revoked_at INTEGER
);

CREATE INDEX IF NOT EXISTS personal_tokens_by_user ON personal_tokens (tenant_id, user_id);

-- API tokens: shown once, stored as a SHA-256 hash, with a rate-limit plan.
CREATE TABLE IF NOT EXISTS api_tokens (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    last_used_at INTEGER,
    revoked_at INTEGER
);

CREATE INDEX IF NOT EXISTS api_tokens_by_user ON api_tokens (tenant_id, user_id);

CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    password_changed_at INTEGER NOT NULL
);

-- Clients registered dynamically (RFC 7591): public clients, PKCE required.
CREATE TABLE IF NOT EXISTS oauth_clients (
    id TEXT PRIMARY KEY,
    name TEXT,
    redirect_uris TEXT NOT NULL,
    grant_types TEXT NOT NULL,
    scope TEXT,
    created_at INTEGER NOT NULL
);

-- What a user approved for a client: one row per (user, client, scope set).
CREATE TABLE IF NOT EXISTS oauth_consents (
    user_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id, scope)
);

-- Authorization codes: single use, short-lived, bound to client, redirect URI and PKCE challenge.
CREATE TABLE IF NOT EXISTS oauth_codes (
    hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    family_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
);

-- Refresh tokens, rotated on use. A family is every token descended from one authorization code;
-- presenting a rotated token again revokes the whole family (OAuth 2.1, section 4.3.1).
CREATE TABLE IF NOT EXISTS oauth_refresh_tokens (
    hash TEXT PRIMARY KEY,
    family_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    rotated_at INTEGER,
    revoked_at INTEGER
);

CREATE INDEX IF NOT EXISTS oauth_refresh_by_family ON oauth_refresh_tokens (family_id);

-- Signed-in browser sessions (the console, and cookie requests to the REST APIs).
CREATE TABLE IF NOT EXISTS sessions (
    hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user_id);
