-- Client assertions (RFC 7523) already used at the token endpoint, kept until they expire so none
-- is accepted twice: the hash of the client id and the assertion's jti.
CREATE TABLE IF NOT EXISTS oauth_client_assertions (
    id TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS oauth_client_assertions_by_expiry ON oauth_client_assertions (expires_at);
