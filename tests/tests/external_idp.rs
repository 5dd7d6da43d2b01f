//! External identity provider mode: a second Specwright server plays the provider (its embedded
//! authorization server publishes RFC 8414 metadata and a JWK Set); the resource server, started
//! with `external_issuer`, runs no authorization server of its own and accepts the provider's
//! tokens, following its key rotation.

mod common;

use serde_json::{Value, json};

async fn pair() -> (common::TestServer, common::TestServer) {
    let idp = common::TestServer::start().await;
    let issuer = idp.base.clone();
    let rs = common::TestServer::start_configured(common::Backend::Sqlite, |c, _| c.external_issuer = Some(issuer))
        .await
        .unwrap();
    rs.tenant("acme", "alice").await;
    (idp, rs)
}

/// A token minted by the provider for the resource server's resources.
fn idp_token(
    idp_keys: &runtime::keys::SigningKeys,
    idp: &common::TestServer,
    rs: &common::TestServer,
    scope: &str,
) -> String {
    let c = &rs.state.config;
    let claims =
        runtime::keys::claims(&idp.base, "alice", "acme", scope, specwright::catalog().resources(c), 600, None);
    idp_keys.mint(&claims).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resource_server_accepts_the_external_issuers_tokens_only() {
    let (idp, rs) = pair().await;
    // No embedded authorization server, sign-in or console on the resource server.
    for path in [
        "/.well-known/oauth-authorization-server",
        "/oauth/authorize",
        "/login",
        "/console/session",
        "/.well-known/jwks.json",
    ] {
        let status = reqwest::get(rs.url(path)).await.unwrap().status();
        assert_eq!(status, 404, "{path}");
    }
    let status = reqwest::Client::new().post(rs.url("/oauth/token")).send().await.unwrap().status();
    assert_eq!(status, 404);
    // Its resource metadata sends clients to the provider.
    let prm: Value =
        reqwest::get(rs.url("/.well-known/oauth-protected-resource/api/mcp")).await.unwrap().json().await.unwrap();
    assert_eq!(prm["authorization_servers"], json!([idp.base]));

    let good = idp_token(&idp.state.keys, &idp, &rs, "vault:read");
    let (status, body) = rs.call("GET", "/api/v1/credentials", &good, None).await;
    assert_eq!(status, 200, "{body}");
    // Scopes still apply to the provider's tokens.
    let (status, _) = rs.call("POST", "/api/v1/credentials", &good, Some(json!({ "key": "k", "value": "v" }))).await;
    assert_eq!(status, 403);

    // The resource server's own key (the embedded issuer it no longer runs) is not trusted.
    let own = rs.token_for("alice", "acme", "vault:read");
    let (status, _) = rs.call("GET", "/api/v1/credentials", &own, None).await;
    assert_eq!(status, 401);
    // Nor a token of the right issuer signed with another key, or for another audience.
    let c = &rs.state.config;
    let forged = common::foreign_keys()
        .mint(&runtime::keys::claims(
            &idp.base,
            "alice",
            "acme",
            "vault:read",
            specwright::catalog().resources(c),
            600,
            None,
        ))
        .unwrap();
    let (status, _) = rs.call("GET", "/api/v1/credentials", &forged, None).await;
    assert_eq!(status, 401);
    let elsewhere = idp
        .state
        .keys
        .mint(&runtime::keys::claims(
            &idp.base,
            "alice",
            "acme",
            "vault:read",
            vec!["https://other.example/api".into()],
            600,
            None,
        ))
        .unwrap();
    let (status, body) = rs.call("GET", "/api/v1/credentials", &elsewhere, None).await;
    assert_eq!(status, 401, "{body}");
    // A token without the tenant claim says so.
    let mut claims =
        runtime::keys::claims(&idp.base, "alice", "", "vault:read", specwright::catalog().resources(c), 600, None);
    claims.tenant = String::new();
    let (status, body) = rs.call("GET", "/api/v1/credentials", &idp.state.keys.mint(&claims).unwrap(), None).await;
    assert_eq!(status, 401);
    assert!(body.to_string().contains("tenant"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotation_at_the_provider_is_followed_without_restart() {
    let (idp, rs) = pair().await;
    let before = idp_token(&idp.state.keys, &idp, &rs, "vault:read");
    let (status, _) = rs.call("GET", "/api/v1/credentials", &before, None).await;
    assert_eq!(status, 200);
    // The provider rotates; a token signed with the new key names a kid the resource server has
    // not seen, so it fetches the key set again (it may do so every 10 seconds at most).
    runtime::keys::SigningKeys::rotate(idp.dir.path()).unwrap();
    let rotated = runtime::keys::SigningKeys::load_or_create(idp.dir.path()).unwrap();
    let after = idp_token(&rotated, &idp, &rs, "vault:read");
    tokio::time::sleep(std::time::Duration::from_secs(11)).await;
    for token in [&after, &before] {
        let (status, body) = rs.call("GET", "/api/v1/credentials", token, None).await;
        assert_eq!(status, 200, "{body}");
    }
}
