//! Bad input gets a clear JSON error naming what is wrong, never axum's plain-text rejections.

mod common;

use common::TestServer;
use serde_json::{Value, json};

async fn post_raw(server: &TestServer, path: &str, content_type: Option<&str>, body: Vec<u8>) -> (u16, Value) {
    let mut rb = server.client().post(server.url(path)).bearer_auth(server.token("vault:write")).body(body);
    if let Some(ct) = content_type {
        rb = rb.header("content-type", ct);
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

const STORE: &str = "/api/v1/credentials";

#[tokio::test]
async fn malformed_json_is_400_with_the_envelope() {
    let server = TestServer::start().await;
    let (status, body) = post_raw(&server, STORE, Some("application/json"), b"{\"key\": ".to_vec()).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "request/malformed");
    let (status, body) = post_raw(&server, STORE, Some("application/json"), b"{\"key\": \"\xff\xfe\"}".to_vec()).await;
    assert_eq!(status, 400, "invalid UTF-8: {body}");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_415() {
    let server = TestServer::start().await;
    let (status, body) = post_raw(&server, STORE, Some("text/plain"), b"key=x".to_vec()).await;
    assert_eq!(status, 415);
    assert_eq!(body["error"]["code"], "request/unsupported-media-type");
    let (status, _) = post_raw(&server, STORE, None, b"{}".to_vec()).await;
    assert_eq!(status, 415, "no Content-Type at all");
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let server = TestServer::start().await;
    let huge = format!("{{\"key\":\"k\",\"value\":\"{}\"}}", "a".repeat(2 * 1024 * 1024));
    let (status, body) = post_raw(&server, STORE, Some("application/json"), huge.into_bytes()).await;
    assert_eq!(status, 413);
    assert_eq!(body["error"]["code"], "request/too-large");
    assert_eq!(body["error"]["details"]["limit"], 1024 * 1024);
}

#[tokio::test]
async fn field_errors_name_the_field_and_the_rejected_value() {
    let server = TestServer::start().await;
    let cases = [
        (json!({"key": "k", "value": "v", "owner": "mallory"}), "owner", json!("mallory"), "unknown field owner"),
        (json!({"key": 42, "value": "v"}), "key", json!(42), "key must be a string"),
        (json!({"value": "v"}), "key", Value::Null, "key is required"),
        (json!({"key": "bad key!", "value": "v"}), "key", json!("bad key!"), "key must match the pattern"),
        (json!({"key": "k", "value": "v", "kind": "wand"}), "kind", json!("wand"), "kind must be one of: password"),
        (json!({"key": "k", "value": "v", "tags": ["ok", "Not Ok"]}), "tags[1]", json!("Not Ok"), "tags[1] must match"),
        (json!({"key": "k", "value": ""}), "value", json!("[redacted]"), "value must be at least 1 characters long"),
        (json!(["key"]), "", json!(["key"]), "the request body must be a JSON object"),
    ];
    for (input, field, value, message) in cases {
        let (status, body) =
            post_raw(&server, STORE, Some("application/json"), serde_json::to_vec(&input).unwrap()).await;
        assert_eq!(status, 422, "{input}: {body}");
        assert_eq!(body["error"]["code"], "request/invalid", "{input}");
        assert_eq!(body["error"]["details"]["field"], field, "{input}: {body}");
        assert_eq!(body["error"]["details"]["value"], value, "{input}: {body}");
        let got = body["error"]["message"].as_str().unwrap();
        assert!(got.starts_with(message), "{input}: message {got:?} should start with {message:?}");
    }
}

#[tokio::test]
async fn out_of_range_and_unknown_query_parameters_are_422() {
    let server = TestServer::start().await;
    let token = server.token("vault:read");
    for (query, field) in [
        ("per_page=0", "per_page"),
        ("per_page=101", "per_page"),
        ("per_page=abc", "per_page"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=1&page=2", "page"),
        ("state=gone", "state"),
        ("colour=red", "colour"),
    ] {
        let resp = server
            .client()
            .get(server.url(&format!("/api/v1/credentials?{query}")))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 422, "{query}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["details"]["field"], field, "{query}: {body}");
    }
    let ok = server
        .client()
        .get(server.url("/api/v1/credentials?per_page=100&page=3&tag=a&tag=b"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_ne!(ok.status(), 422, "per_page=100 and repeated list parameters are accepted");
}

#[tokio::test]
async fn min_score_outside_0_to_100_is_a_validation_error_naming_the_range() {
    let server = TestServer::start().await;
    let token = server.token("prospector");
    for raw in ["150", "-1", "100.5"] {
        let resp = server
            .client()
            .get(server.url(&format!("/v1/prospector/leads?min_score={raw}")))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 422, "min_score={raw}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "validation_error");
        assert_eq!(body["error"]["message"], "min_score must be between 0 and 100");
        assert_eq!(body["error"]["details"]["field"], "min_score");
        assert_eq!(body["error"]["details"]["value"], raw.parse::<f64>().unwrap());
    }
}

#[tokio::test]
async fn request_ids_are_kept_when_well_formed_and_echoed_in_error_bodies() {
    let server = TestServer::start().await;
    let resp = server
        .client()
        .get(server.url("/api/v1/credentials"))
        .header("x-request-id", "trace-123")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-request-id"], "trace-123");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["request_id"], "trace-123");
    let resp = server
        .client()
        .get(server.url("/api/v1/credentials"))
        .header("x-request-id", "bad id\twith spaces")
        .send()
        .await
        .unwrap();
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_string();
    assert_ne!(id, "bad id\twith spaces", "a malformed inbound id is replaced");
    assert_eq!(id.len(), 36, "replaced with a UUID: {id}");
}
