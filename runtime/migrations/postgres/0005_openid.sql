-- OpenID Connect: the nonce of the authorization request an ID token echoes, and when the user
-- signed in (auth_time), carried from the code to every refresh token of its family.
ALTER TABLE oauth_codes ADD COLUMN nonce TEXT;
ALTER TABLE oauth_codes ADD COLUMN auth_time BIGINT;
ALTER TABLE oauth_refresh_tokens ADD COLUMN auth_time BIGINT;
