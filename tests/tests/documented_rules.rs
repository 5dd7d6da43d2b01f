//! The OpenAPI documents state every rule the server enforces, so a client learns each refusal from
//! the contract: in the schema where JSON Schema can say it, in the field's description where it
//! cannot. Each case pairs a request the server refuses with 422 with the place in the served
//! document that says why.

mod common;

use serde_json::{Value, json};

/// The schema of `field` of component `model` in the served `document`.
async fn field(server: &common::TestServer, document: &str, model: &str, field: &str) -> Value {
    let doc: Value = reqwest::get(server.url(document)).await.unwrap().json().await.unwrap();
    doc["components"]["schemas"][model]["properties"][field].clone()
}

#[tokio::test]
async fn every_refusal_here_is_stated_by_the_document() {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let team = server.team_token("alice", "acme");
    let admin = server.token_for("alice", "acme", "vault:admin");
    let past = "2001-01-01T00:00:00Z";

    // Prospector token scopes: a closed set, in the schema (the vault's scopes already were).
    let (status, body) =
        server.call("POST", "/v1/prospector/tokens", &team, Some(json!({"name": "x", "scopes": ["bogus"]}))).await;
    assert_eq!(status, 422, "{body}");
    let scopes = field(&server, "/openapi/prospector.json", "CreateApiTokenInput", "scopes").await;
    assert_eq!(scopes["items"]["pattern"], "^prospector$", "{scopes}");

    // Rules between fields or on the clock: in the descriptions.
    let cases: Vec<(&str, &str, Value, &str, &str, &str, &str)> = vec![
        (
            "/v1/prospector/tokens",
            "/openapi/prospector.json",
            json!({"name": "x", "scopes": ["prospector"], "expires_at": past}),
            "CreateApiTokenInput",
            "expires_at",
            "must be in the future",
            "team",
        ),
        (
            "/api/v1/tokens",
            "/openapi/vault.json",
            json!({"name": "x", "scopes": ["vault:read"], "expires_at": past}),
            "CreateTokenInput",
            "expires_at",
            "must be in the future",
            "admin",
        ),
    ];
    for (path, document, request, model, name, rule, who) in cases {
        let token = if who == "team" { &team } else { &admin };
        let (status, body) = server.call("POST", path, token, Some(request)).await;
        assert_eq!((status, &body["error"]["details"]["field"]), (422, &json!(name)), "{path}: {body}");
        let schema = field(&server, document, model, name).await;
        assert!(schema["description"].as_str().unwrap_or_default().contains(rule), "{model}.{name}: {schema}");
    }
    // A valid configuration to start from: the current one.
    let (_, config) = server.call("GET", "/v1/prospector/scoring/config", &team, None).await;
    let (weights, parameters) = (config["data"]["weights"].clone(), config["data"]["parameters"].clone());
    let backtest = json!({
        "weights": weights,
        "parameters": parameters,
        "since": "2026-02-01T00:00:00Z",
        "until": "2026-01-01T00:00:00Z"
    });
    let (status, body) = server.call("POST", "/v1/prospector/scoring/backtest", &team, Some(backtest)).await;
    assert_eq!((status, &body["error"]["details"]["field"]), (422, &json!("since")), "since after until: {body}");
    let since = field(&server, "/openapi/prospector.json", "BacktestInput", "since").await;
    assert!(since["description"].as_str().unwrap().contains("before `until`"), "{since}");
    let mut inverted = parameters.clone();
    inverted["budget_floor"] = json!(5000);
    inverted["budget_target"] = json!(3000);
    let request = json!({"weights": weights, "parameters": inverted});
    let (status, body) = server.call("POST", "/v1/prospector/scoring/backtest", &team, Some(request)).await;
    assert_eq!(status, 422, "floor above target: {body}");
    assert!(body.to_string().contains("budget_floor"), "names the floor: {body}");
    let floor = field(&server, "/openapi/prospector.json", "ScoringParameters", "budget_floor").await;
    assert!(floor["description"].as_str().unwrap().contains("Must not exceed `budget_target`"), "{floor}");
}
