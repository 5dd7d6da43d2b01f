//! Prospector API tokens: created through the API, shown once, scoped, planned, and dead on the
//! very next request after revocation or expiry.

mod common;

use serde_json::json;

#[tokio::test]
async fn api_tokens_authenticate_carry_their_plan_and_die_when_revoked() {
    let server = common::TestServer::start().await;
    let c = &server.state.config;
    let account = server
        .state
        .keys
        .mint(&runtime::keys::claims(
            &c.issuer(),
            "pat",
            "acme",
            "prospector",
            specwright::catalog().resources(c),
            600,
            Some("pro".into()),
        ))
        .unwrap();
    let (s, created) = server
        .call(
            "POST",
            "/v1/prospector/tokens",
            &account,
            Some(json!({"name": "ci", "scopes": ["prospector"], "plan": "pro"})),
        )
        .await;
    assert_eq!(s, 201, "{created}");
    let secret = created["data"]["token"].as_str().unwrap().to_string();
    assert!(secret.starts_with("prs_"));
    let id = created["data"]["id"].as_str().unwrap().to_string();
    // The token authenticates and its plan sets the limits.
    let resp = server.client().get(server.url("/v1/prospector/leads")).bearer_auth(&secret).send().await.unwrap();
    assert_ne!(resp.status(), 401);
    assert_eq!(resp.headers()["x-ratelimit-limit"], "120", "Pro: 120 a minute");
    // Listed without its secret.
    let (_, listed) = server.call("GET", "/v1/prospector/tokens", &account, None).await;
    assert_eq!(listed["meta"]["total"], 1);
    assert!(listed["data"][0].get("token").is_none());
    // Rules: no plan above the account's, no token minted by a token, scopes must exist.
    let (s, b) = server
        .call(
            "POST",
            "/v1/prospector/tokens",
            &account,
            Some(json!({"name": "x", "scopes": ["prospector"], "plan": "team"})),
        )
        .await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("forbidden")), "{b}");
    let (s, b) = server
        .call("POST", "/v1/prospector/tokens", &secret, Some(json!({"name": "x", "scopes": ["prospector"]})))
        .await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("forbidden")), "{b}");
    let (s, b) = server
        .call("POST", "/v1/prospector/tokens", &account, Some(json!({"name": "x", "scopes": ["vault:admin"]})))
        .await;
    assert_eq!((s, b["error"]["code"].as_str()), (422, Some("validation_error")), "{b}");
    // Revoked: 401 authentication_error on the very next request.
    let (s, _) = server.call("DELETE", &format!("/v1/prospector/tokens/{id}"), &account, None).await;
    assert_eq!(s, 204);
    let (s, b) = server.call("GET", "/v1/prospector/leads", &secret, None).await;
    assert_eq!((s, b["error"]["code"].as_str()), (401, Some("authentication_error")));
}

#[tokio::test]
async fn a_token_without_the_prospector_scope_is_forbidden_and_an_expired_one_is_refused() {
    let server = common::TestServer::start().await;
    let c = &server.state.config;
    let account = server
        .state
        .keys
        .mint(&runtime::keys::claims(
            &c.issuer(),
            "pat",
            "acme",
            "prospector",
            specwright::catalog().resources(c),
            600,
            None,
        ))
        .unwrap();
    let new = |scopes: Vec<String>, expires_at: Option<i64>| prospector::api_tokens::NewToken {
        tenant: "acme".into(),
        user: "pat".into(),
        name: "t".into(),
        scopes,
        plan: prospector_api::prospector::models::Plan::Starter,
        expires_at,
    };
    let other = prospector::api_tokens::insert(&server.state.store, new(vec!["reports".into()], None)).await.unwrap();
    let (s, b) = server.call("GET", "/v1/prospector/leads", &other.token, None).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "a token must include the prospector scope: {b}"
    );
    let expired = prospector::api_tokens::insert(
        &server.state.store,
        new(vec!["prospector".into()], Some(runtime::store::now_ms() - 1)),
    )
    .await
    .unwrap();
    let (s, b) = server.call("GET", "/v1/prospector/leads", &expired.token, None).await;
    assert_eq!((s, b["error"]["code"].as_str()), (401, Some("authentication_error")), "{b}");
    let (s, b) = server
        .call(
            "POST",
            "/v1/prospector/tokens",
            &account,
            Some(json!({"name": "x", "scopes": ["prospector"], "expires_at": "2020-01-01T00:00:00Z"})),
        )
        .await;
    assert_eq!((s, b["error"]["details"]["field"].as_str()), (422, Some("expires_at")), "{b}");
    // A vault personal token is not a prospector token.
    let (s, _) = server.call("GET", "/v1/prospector/leads", "swp_notatoken", None).await;
    assert_eq!(s, 401);
}
