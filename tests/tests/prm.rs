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
