//! Bad input on every prospector write route: the error envelope of its product requirements with
//! a clear code, never a 500, and nothing changed.

mod common;

use common::concrete_path;
use serde_json::{Value, json};

/// What a user would notice changing: every list the prospector offers, and the configuration.
async fn snapshot(server: &common::TestServer, token: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for path in [
        "/v1/prospector/leads?per_page=100&sort=score",
        "/v1/prospector/leads?status=archived",
        "/v1/prospector/proposals?per_page=100",
        "/v1/prospector/contracts?per_page=100",
        "/v1/prospector/scoring/config",
        "/v1/prospector/tokens",
    ] {
        let (s, b) = server.call("GET", path, token, None).await;
        assert_eq!(s, 200, "{path}: {b}");
        out.push(b["data"].clone());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_on_every_prospector_write_route_is_refused_cleanly_and_changes_nothing() {
    let server = common::TestServer::start().await;
    let token = server.team_token("pat", "acme");
    let (s, _) = server.call("POST", "/v1/prospector/leads/scan", &token, Some(json!({}))).await;
    assert_eq!(s, 200);
    let (_, leads) = server.call("GET", "/v1/prospector/leads?per_page=1", &token, None).await;
    let lead = leads["data"][0]["id"].as_str().unwrap().to_string();
    let (s, p) = server.call("POST", "/v1/prospector/proposals", &token, Some(json!({"lead_id": lead}))).await;
    assert_eq!(s, 201, "{p}");
    let before = snapshot(&server, &token).await;

    let client = server.client();
    let writes: Vec<_> = prospector_api::prospector::OPERATIONS.iter().filter(|o| o.has_body).collect();
    assert!(writes.len() >= 9, "every body-taking prospector route is covered");
    for op in writes {
        let url = server.url(&concrete_path(op));
        let method = reqwest::Method::from_bytes(op.method.as_str().as_bytes()).unwrap();
        let send = |body: Vec<u8>, ct: &'static str| {
            client.request(method.clone(), &url).bearer_auth(&token).header("content-type", ct).body(body).send()
        };
        let huge = format!("{{\"draft_text\":\"{}\"}}", "a".repeat(1_100_000)).into_bytes();
        let cases: Vec<(&str, Vec<u8>, &str, u16, &str)> = vec![
            ("malformed JSON", b"{\"a\":".to_vec(), "application/json", 400, "bad_request"),
            ("invalid UTF-8", b"{\"a\": \"\xc3\x28\"}".to_vec(), "application/json", 400, "bad_request"),
            (
                "duplicate keys",
                b"{\"status\": \"new\", \"status\": \"won\"}".to_vec(),
                "application/json",
                400,
                "bad_request",
            ),
            ("not an object", b"[1,2]".to_vec(), "application/json", 422, "validation_error"),
            ("unknown field", b"{\"tenant_id\": \"globex\"}".to_vec(), "application/json", 422, "validation_error"),
            ("wrong content type", b"{}".to_vec(), "text/plain", 415, "unsupported_media_type"),
            ("huge body", huge, "application/json", 413, "payload_too_large"),
        ];
        for (what, body, ct, status, code) in cases {
            let resp = send(body, ct).await.unwrap();
            let got = resp.status().as_u16();
            let b: Value = resp.json().await.unwrap_or(Value::Null);
            assert_eq!((got, b["error"]["code"].as_str()), (status, Some(code)), "{} {what}: {b}", op.id);
            assert!(b["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{} {what}: {b}", op.id);
            assert!(b["error"]["details"].is_object(), "{} {what}: {b}", op.id);
        }
        // Wrong types: every body field given a value of the wrong shape.
        let wrong: serde_json::Map<String, Value> = op
            .input
            .iter()
            .filter(|f| f.location == support::Location::Body)
            .map(|f| {
                (f.name.to_string(), if matches!(f.kind, support::Kind::String) { json!(12) } else { json!({"x": 1}) })
            })
            .collect();
        if !wrong.is_empty() {
            let resp = send(serde_json::to_vec(&wrong).unwrap(), "application/json").await.unwrap();
            let got = resp.status().as_u16();
            let b: Value = resp.json().await.unwrap_or(Value::Null);
            assert_eq!(
                (got, b["error"]["code"].as_str()),
                (422, Some("validation_error")),
                "{} wrong types: {b}",
                op.id
            );
            assert!(b["error"]["details"]["field"].is_string(), "{} names the field: {b}", op.id);
            assert!(b["error"]["details"].get("value").is_some(), "{} echoes the value: {b}", op.id);
        }
    }
    // Semantically wrong values on real objects.
    for (method, path, body, status) in [
        ("PATCH", format!("/v1/prospector/leads/{lead}"), json!({"status": "won"}), 409),
        ("PATCH", format!("/v1/prospector/leads/{lead}"), json!({"tags": vec!["x"; 51]}), 422),
        ("POST", "/v1/prospector/proposals".to_string(), json!({"lead_id": lead, "bid_amount": -5}), 422),
        ("POST", "/v1/prospector/proposals".to_string(), json!({"lead_id": lead, "currency": "usd"}), 422),
        (
            "POST",
            "/v1/prospector/proposals".to_string(),
            json!({"lead_id": lead, "instructions": "x".repeat(2001)}),
            422,
        ),
        ("POST", "/v1/prospector/proposals".to_string(), json!({"lead_id": "lead_of_someone_else"}), 404),
        ("POST", "/v1/prospector/leads/scan".to_string(), json!({"sources": []}), 422),
        ("PUT", "/v1/prospector/scoring/config".to_string(), json!({"weights": {}, "parameters": {}}), 422),
    ] {
        let (s, b) = server.call(method, &path, &token, Some(body.clone())).await;
        assert_eq!(s, status, "{method} {path} {body}: {b}");
    }
    assert_eq!(snapshot(&server, &token).await, before, "state unchanged by refused requests");
}
