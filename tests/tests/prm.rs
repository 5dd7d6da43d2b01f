//! Protected Resource Metadata (RFC 9728): public, JSON, cacheable for five minutes, naming the
//! exact resource and the three vault scopes.

mod common;

use common::TestServer;

#[tokio::test]
async fn every_prm_document_is_public_cacheable_and_names_its_resource() {
    let server = TestServer::start().await;
    let cases = [
        ("/.well-known/oauth-protected-resource", "/api/mcp", vec!["vault:read", "vault:write", "vault:admin"]),
        ("/.well-known/oauth-protected-resource/api/mcp", "/api/mcp", vec!["vault:read", "vault:write", "vault:admin"]),
        ("/api/v1/.well-known/oauth-protected-resource", "/api/v1", vec!["vault:read", "vault:write", "vault:admin"]),
        ("/.well-known/oauth-protected-resource/api/v1", "/api/v1", vec!["vault:read", "vault:write", "vault:admin"]),
        ("/.well-known/oauth-protected-resource/v1/prospector", "/v1/prospector", vec!["prospector"]),
    ];
    for (path, resource, scopes) in cases {
        let resp = server.client().get(server.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path} is public");
        assert_eq!(resp.headers()["content-type"], "application/json", "{path}");
        assert_eq!(resp.headers()["cache-control"], "public, max-age=300", "{path}");
        let doc: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(doc["resource"], server.url(resource), "{path}: {doc}");
        assert_eq!(doc["scopes_supported"], serde_json::json!(scopes), "{path}");
        assert_eq!(doc["authorization_servers"], serde_json::json!([server.base]), "{path}");
        assert_eq!(doc["bearer_methods_supported"], serde_json::json!(["header"]), "{path}");
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
