//! The gate: 401 with a bad token, the vault's 403 body exactly as its API contract specifies it,
//! admission at the required tier or above for every operation of both services. (The conformance
//! kit, `conformance.rs`, checks every operation's 401 without a token and 403 one tier below.)

mod common;

use common::{TestServer, all_operations, foreign_keys, request, unsigned};

#[tokio::test]
async fn the_vault_403_body_is_exactly_the_seed_shape() {
    let server = TestServer::start().await;
    let resp = server
        .client()
        .post(server.url("/api/v1/credentials"))
        .bearer_auth(server.token("vault:read"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "auth/insufficient-scope");
    assert_eq!(body["error"]["details"], serde_json::json!({ "required": "vault:write" }));
}

#[tokio::test]
async fn the_required_tier_and_every_higher_tier_pass_the_gate() {
    let server = TestServer::start().await;
    let client = server.client();
    for op in all_operations() {
        for scope in op.satisfied_by {
            // Lower tiers need not be listed: a lone higher scope is enough.
            let resp = request(&client, &server, op).bearer_auth(server.token(scope)).send().await.unwrap();
            let status = resp.status().as_u16();
            let body: serde_json::Value = resp.json().await.unwrap_or_default();
            let code = body["error"]["code"].as_str().unwrap_or_default();
            // RBAC may still deny (auth/forbidden): that is the second gate, not the scope gate.
            let roles = &op.service.roles;
            let refused = [roles.unauthenticated, roles.invalid_token, roles.insufficient_scope].contains(&code);
            assert!(
                status != 401 && !refused,
                "{} with {scope} should pass the scope gate, got {status} {body}",
                op.id
            );
        }
    }
}

#[tokio::test]
async fn bad_tokens_get_401_invalid_token() {
    let server = TestServer::start().await;
    let good = server.claims("vault:admin prospector");
    let mut expired = good.clone();
    expired.exp = chrono::Utc::now().timestamp() - 120;
    expired.iat = expired.exp - 600;
    let mut wrong_issuer = good.clone();
    wrong_issuer.iss = "https://idp.example".into();
    let mut vault_only = good.clone();
    vault_only.aud = vec![server.state.config.url(vault_api::vault::SERVICE.base_path)];
    let mut prospector_only = good.clone();
    prospector_only.aud = vec![server.state.config.url(prospector_api::prospector::SERVICE.base_path)];
    let cases: Vec<(&str, String, &str)> = vec![
        ("expired", server.sign(&expired), "both"),
        ("wrongly signed", foreign_keys().mint(&good).unwrap(), "both"),
        ("alg none", unsigned(&good), "both"),
        ("wrong issuer", server.sign(&wrong_issuer), "both"),
        ("audience of the prospector only", server.sign(&prospector_only), "vault"),
        ("audience of the vault only", server.sign(&vault_only), "prospector"),
        ("garbage", "not-a-jwt".into(), "both"),
        // RFC 9068 section 4: only access-token types are accepted (an ID token may name our audience).
        ("typ JWT", server.state.keys.sign_typed(&good, Some("JWT")).unwrap(), "both"),
        ("typ id_token+jwt", server.state.keys.sign_typed(&good, Some("id_token+jwt")).unwrap(), "both"),
        ("no typ", server.state.keys.sign_typed(&good, None).unwrap(), "both"),
        // The tenant scopes every query: it must be a name `tenant create` would accept.
        ("empty tenant", server.sign(&runtime::keys::Claims { tenant: String::new(), ..good.clone() }), "both"),
        (
            "5,000-character tenant",
            server.sign(&runtime::keys::Claims { tenant: "t".repeat(5000), ..good.clone() }),
            "both",
        ),
        (
            "tenant ../../x y<>",
            server.sign(&runtime::keys::Claims { tenant: "../../x y<>".into(), ..good.clone() }),
            "both",
        ),
    ];
    let targets = [
        ("vault", "/api/v1/credentials", "auth/invalid-token"),
        ("prospector", "/v1/prospector/leads", "authentication_error"),
    ];
    for (what, token, applies) in &cases {
        for (service, path, code) in targets {
            if *applies != "both" && *applies != service {
                continue;
            }
            let resp = server.client().get(server.url(path)).bearer_auth(token).send().await.unwrap();
            assert_eq!(resp.status(), 401, "{what} token on {path}");
            let challenge = resp.headers()["www-authenticate"].to_str().unwrap().to_string();
            assert!(challenge.starts_with(r#"Bearer error="invalid_token""#), "{what}: {challenge}");
            let body: serde_json::Value = resp.json().await.unwrap();
            assert_eq!(body["error"]["code"], code, "{what} on {path}: {body}");
        }
        // The third resource, the MCP endpoint, applies the same rules.
        let resp = server
            .client()
            .post(server.url("/api/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "{what} token at /api/mcp");
        let challenge = resp.headers()["www-authenticate"].to_str().unwrap().to_string();
        assert!(challenge.starts_with(r#"Bearer error="invalid_token""#), "{what} at /api/mcp: {challenge}");
    }
    // The other registered access-token type is accepted.
    let typed = server.state.keys.sign_typed(&good, Some("application/at+jwt")).unwrap();
    let resp = server.client().get(server.url("/api/v1/credentials")).bearer_auth(typed).send().await.unwrap();
    assert_ne!(resp.status(), 401, "typ application/at+jwt is an access token");
    // A non-Bearer scheme is not a token.
    let resp = server
        .client()
        .get(server.url("/api/v1/credentials"))
        .header("authorization", "Basic YWxpY2U6cHc=")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}
