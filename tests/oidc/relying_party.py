"""An OpenID Connect relying party built on Authlib (pinned in .ci/requirements.txt), run by
tests/tests/oidc.rs against a live server after a person signed in and consented.

It does what an RP does with a code: discovers the provider at the OpenID location, checks the
document with Authlib's OpenID Provider Metadata rules, redeems the code with PKCE, validates the
ID token (signature from the published keys, iss, aud, exp, iat, nonce, at_hash, auth_time) and
reads userinfo. Prints one JSON object with what it found; exits non-zero on any failure.

usage: relying_party.py DISCOVERY_URL CLIENT_ID REDIRECT_URI CODE CODE_VERIFIER NONCE
"""

import json
import sys

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken
from authlib.oidc.discovery import OpenIDProviderMetadata


def main() -> None:
    discovery_url, client_id, redirect_uri, code, verifier, nonce = sys.argv[1:7]
    doc = requests.get(discovery_url, timeout=10)
    doc.raise_for_status()
    metadata = OpenIDProviderMetadata(doc.json())
    # Authlib's checks of OpenID Connect Discovery 1.0 section 3 (required fields, their forms,
    # RS256 among the ID token algorithms). They require https URLs; the test server listens on
    # plain http on a loopback address, so the checks see that one origin as https, nothing else.
    origin = "/".join(metadata["issuer"].split("/")[:3])
    if origin.startswith("http://127.0.0.1:"):
        as_https = json.loads(json.dumps(doc.json()).replace(origin, "https" + origin[4:]))
        OpenIDProviderMetadata(as_https).validate()
    else:
        metadata.validate()

    session = OAuth2Session(
        client_id,
        redirect_uri=redirect_uri,
        token_endpoint_auth_method="none",
        code_challenge_method="S256",
    )
    token = session.fetch_token(
        metadata["token_endpoint"],
        grant_type="authorization_code",
        code=code,
        code_verifier=verifier,
        redirect_uri=redirect_uri,
    )

    keys = JsonWebKey.import_key_set(requests.get(metadata["jwks_uri"], timeout=10).json())
    claims = jwt.decode(
        token["id_token"],
        keys,
        claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": metadata["issuer"]}},
        claims_params={"nonce": nonce, "client_id": client_id, "access_token": token["access_token"]},
    )
    claims.validate(leeway=5)

    info = requests.get(
        metadata["userinfo_endpoint"],
        headers={"Authorization": f"Bearer {token['access_token']}"},
        timeout=10,
    )
    info.raise_for_status()
    userinfo = info.json()
    if userinfo["sub"] != claims["sub"]:
        raise SystemExit(f"userinfo names {userinfo['sub']}, the ID token {claims['sub']}")
    print(json.dumps({"issuer": metadata["issuer"], "sub": claims["sub"], "nonce": claims["nonce"],
                      "auth_time": claims["auth_time"], "alg": "RS256", "userinfo": userinfo}))


if __name__ == "__main__":
    main()
