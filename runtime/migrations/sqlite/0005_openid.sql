-- OpenID Connect: the nonce of the authorization request an ID token echoes, and when the user
-- signed in (auth_time), carried from the code to every refresh token of its family.
ALTER TABLE oauth_codes ADD COLUMN nonce TEXT;
ALTER TABLE oauth_codes ADD COLUMN auth_time INTEGER;
ALTER TABLE oauth_refresh_tokens ADD COLUMN auth_time INTEGER;

-- The name a client gave when the user approved it (a client named by its metadata document is
-- registered nowhere): what the console lists under "Connected applications".
ALTER TABLE oauth_consents ADD COLUMN client_name TEXT;
