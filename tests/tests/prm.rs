//! Protected Resource Metadata (RFC 9728) beyond what the conformance kit checks (the resource,
//! its scopes and authorization server at every path): cacheable for five minutes, named for its
//! surface; and the JWKS that verifies the issued tokens.

mod common;

use common::TestServer;

/// What the conformance kit leaves out: each document's cache lifetime and its name.
#[tokio::test]
async fn every_prm_document_is_cacheable_and_named_for_its_surface() {
    let server = TestServer::start().await;
    let cases = [
        ("/.well-known/oauth-protected-resource", "Credential Vault MCP server"),
        ("/.well-known/oauth-protected-resource/api/mcp", "Credential Vault MCP server"),
        ("/api/v1/.well-known/oauth-protected-resource", "Credential Vault REST API"),
        ("/.well-known/oauth-protected-resource/api/v1", "Credential Vault REST API"),
        ("/.well-known/oauth-protected-resource/v1/prospector", "Lead Prospecting API"),
        ("/.well-known/oauth-protected-resource/v1/prospector/mcp", "Lead Prospecting API MCP server"),
    ];
    for (path, name) in cases {
        let resp = server.client().get(server.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path} is public");
        assert_eq!(resp.headers()["cache-control"], "public, max-age=300", "{path}");
        let doc: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(doc["resource_name"], name, "{path}: {doc}");
    }
}

#[tokio::test]
async fn the_jwks_publishes_the_key_that_verifies_issued_tokens() {
    let server = TestServer::start().await;
    let resp = server.client().get(server.url("/.well-known/jwks.json")).send().await.unwrap();
    assert_eq!(resp.status(), 200, "public");
    assert_eq!(resp.headers()["cache-control"], "public, max-age=300");
    let jwks: serde_json::Value = resp.json().await.unwrap();
    let key = &jwks["keys"][0];
    assert_eq!(
        (key["kty"].as_str(), key["crv"].as_str(), key["alg"].as_str()),
        (Some("OKP"), Some("Ed25519"), Some("EdDSA"))
    );
    assert!(key.get("d").is_none(), "no private part");
    // A token the server issued verifies with the published key alone, matched by kid.
    let token = server.token("vault:read");
    let header = jsonwebtoken::decode_header(&token).unwrap();
    assert_eq!(header.kid.as_deref(), key["kid"].as_str());
    let decoding = jsonwebtoken::DecodingKey::from_ed_components(key["x"].as_str().unwrap()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::EdDSA);
    validation.set_audience(&[server.url("/api/v1")]);
    validation.set_issuer(&[server.base.as_str()]);
    let claims = jsonwebtoken::decode::<serde_json::Value>(&token, &decoding, &validation).unwrap().claims;
    assert_eq!(claims["scope"], "vault:read");
    // A key from elsewhere does not verify it.
    let other = common::foreign_keys().public_jwk();
    let wrong = jsonwebtoken::DecodingKey::from_ed_components(other["x"].as_str().unwrap()).unwrap();
    assert!(jsonwebtoken::decode::<serde_json::Value>(&token, &wrong, &validation).is_err());
}
