-- The embedded OAuth 2.1 authorization server and console sessions. Secrets (passwords,
-- authorization codes, refresh tokens, session ids) are never stored: passwords as argon2id
-- PHC strings, the others as SHA-256 hashes (they are 256-bit random values).

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    password_changed_at INTEGER NOT NULL
);

-- Clients registered dynamically (RFC 7591): public clients, PKCE required.
CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    name TEXT,
    redirect_uris TEXT NOT NULL,
    grant_types TEXT NOT NULL,
    scope TEXT,
    created_at INTEGER NOT NULL
);

-- What a user approved for a client: one row per (user, client, scope set).
CREATE TABLE oauth_consents (
    user_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id, scope)
);

-- Authorization codes: single use, short-lived, bound to client, redirect URI and PKCE challenge.
CREATE TABLE oauth_codes (
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
CREATE TABLE oauth_refresh_tokens (
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
CREATE INDEX oauth_refresh_by_family ON oauth_refresh_tokens (family_id);

-- Signed-in browser sessions (the console, and cookie requests to the REST APIs).
CREATE TABLE sessions (
    hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_by_user ON sessions (user_id);
