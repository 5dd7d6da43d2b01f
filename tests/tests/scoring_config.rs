//! The prospector's scoring configuration: defaults, validated updates, versions, optimistic
//! concurrency and tenant isolation, on SQLite and PostgreSQL.

mod common;

use serde_json::{Value, json};

fn body(weights: Value, parameters: Value) -> Value {
    json!({"weights": weights, "parameters": parameters})
}

fn weights(s: f64) -> Value {
    json!({"skill_match": s, "budget": 20, "client_history": 20, "competition": 20, "timeline": 10})
}

fn parameters(floor: f64) -> Value {
    json!({"skills": ["rust"], "budget_floor": floor, "budget_target": 3000, "currency": "USD", "max_competition": 50,
           "stale_after_days": 14, "evidence_prior": 5, "top_tier_min_confidence": 0.5})
}

on_both_backends!(scoring_config_is_versioned_validated_and_per_tenant, |server| {
    let token = |tenant: &str| server.team_token("pat", tenant);
    let acme = token("acme");
    let (s, cfg) = server.call("GET", "/v1/prospector/scoring/config", &acme, None).await;
    assert_eq!((s, cfg["data"]["version"].as_i64()), (200, Some(1)), "defaults as version 1: {cfg}");
    assert_eq!(cfg["data"]["weights"]["skill_match"], 30.0);
    let (s, v2) = server
        .call(
            "PUT",
            "/v1/prospector/scoring/config",
            &acme,
            Some(json!({"weights": weights(40.0), "parameters": parameters(100.0), "expected_version": 1})),
        )
        .await;
    assert_eq!((s, v2["data"]["version"].as_i64()), (200, Some(2)), "{v2}");
    assert_eq!(v2["data"]["weights"]["skill_match"], 40.0);
    let (s, stale) = server
        .call(
            "PUT",
            "/v1/prospector/scoring/config",
            &acme,
            Some(json!({"weights": weights(50.0), "parameters": parameters(100.0), "expected_version": 1})),
        )
        .await;
    assert_eq!((s, stale["error"]["code"].as_str()), (409, Some("conflict")), "{stale}");
    assert_eq!(stale["error"]["details"]["current_version"], 2);
    for (what, b, field) in [
        (
            "all-zero weights",
            body(
                json!({"skill_match": 0, "budget": 0, "client_history": 0, "competition": 0, "timeline": 0}),
                parameters(100.0),
            ),
            "weights",
        ),
        ("floor above target", body(weights(10.0), parameters(5000.0)), "parameters.budget_floor"),
        ("negative weight", body(weights(-1.0), parameters(100.0)), "weights.skill_match"),
        (
            "unknown signal",
            body(
                json!({"skill_match": 1, "budget": 1, "client_history": 1, "competition": 1, "timeline": 1, "vibes": 1}),
                parameters(100.0),
            ),
            "weights.vibes",
        ),
    ] {
        let (s, e) = server.call("PUT", "/v1/prospector/scoring/config", &acme, Some(b)).await;
        assert_eq!((s, e["error"]["code"].as_str()), (422, Some("validation_error")), "{what}: {e}");
        assert_eq!(e["error"]["details"]["field"], field, "{what}: {e}");
    }
    let (_, now) = server.call("GET", "/v1/prospector/scoring/config", &acme, None).await;
    assert_eq!(now["data"]["version"], 2, "refused updates changed nothing");
    let (_, other) = server.call("GET", "/v1/prospector/scoring/config", &token("globex"), None).await;
    assert_eq!(
        (other["data"]["version"].as_i64(), other["data"]["weights"]["skill_match"].as_f64()),
        (Some(1), Some(30.0)),
        "another tenant keeps its own"
    );
});
