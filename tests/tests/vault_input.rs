//! Bad input on every vault write route: a clear error envelope, never a 500, and nothing
//! changed.

mod common;

use common::concrete_path;
use serde_json::{Value, json};

/// What a user would notice changing: every list the vault offers.
async fn snapshot(server: &common::TestServer, token: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for path in [
        "/api/v1/credentials?state=all",
        "/api/v1/folders",
        "/api/v1/tags",
        "/api/v1/leases",
        "/api/v1/grants",
        "/api/v1/tokens?include_revoked=true",
        "/api/v1/tenants/acme/role-assignments",
    ] {
        let (s, b) = server.call("GET", path, token, None).await;
        assert_eq!(s, 200, "{path}: {b}");
        out.push(b["data"].clone());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_on_every_write_route_is_refused_cleanly_and_changes_nothing() {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (_, f) = server.call("POST", "/api/v1/folders", &admin, Some(json!({"name": "f"}))).await;
    let folder = f["data"]["id"].as_str().unwrap().to_string();
    let (s, _) = server
        .call("POST", "/api/v1/credentials", &admin, Some(json!({"key": "x1", "value": "v", "folder_id": folder})))
        .await;
    assert_eq!(s, 201);
    let before = snapshot(&server, &admin).await;
    let client = server.client();
    let writes: Vec<_> = vault_api::vault::OPERATIONS.iter().filter(|o| o.has_body).collect();
    assert!(writes.len() >= 15, "every body-taking vault route is covered");
    for op in writes {
        let url = server.url(&concrete_path(op));
        let method = reqwest::Method::from_bytes(op.method.as_str().as_bytes()).unwrap();
        let send = |body: Vec<u8>, ct: &'static str| {
            client.request(method.clone(), &url).bearer_auth(&admin).header("content-type", ct).body(body).send()
        };
        let huge = format!("{{\"value\":\"{}\"}}", "a".repeat(1_100_000)).into_bytes();
        let cases: Vec<(&str, Vec<u8>, &str, u16, &str)> = vec![
            ("malformed JSON", b"{\"a\":".to_vec(), "application/json", 400, "request/malformed"),
            ("invalid UTF-8", b"{\"a\": \"\xc3\x28\"}".to_vec(), "application/json", 400, "request/malformed"),
            ("not an object", b"[1,2]".to_vec(), "application/json", 422, "request/invalid"),
            ("unknown field", b"{\"tenant_id\": \"globex\"}".to_vec(), "application/json", 422, "request/invalid"),
            ("wrong content type", b"{}".to_vec(), "text/plain", 415, "request/unsupported-media-type"),
            ("huge body", huge, "application/json", 413, "request/too-large"),
        ];
        for (what, body, ct, status, code) in cases {
            let resp = send(body, ct).await.unwrap();
            let got = resp.status().as_u16();
            let b: Value = resp.json().await.unwrap_or(Value::Null);
            assert_eq!((got, b["error"]["code"].as_str()), (status, Some(code)), "{} {what}: {b}", op.id);
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
        let resp = send(serde_json::to_vec(&wrong).unwrap(), "application/json").await.unwrap();
        let got = resp.status().as_u16();
        let b: Value = resp.json().await.unwrap_or(Value::Null);
        assert_eq!(got, 422, "{} wrong types: {b}", op.id);
        assert!(b["error"]["details"]["field"].is_string(), "{} names the field: {b}", op.id);
        // Oversized names: strings far beyond any max_length.
        let long: serde_json::Map<String, Value> = op
            .input
            .iter()
            .filter(|f| {
                f.location == support::Location::Body
                    && f.max_length.is_some()
                    && matches!(f.kind, support::Kind::String)
            })
            .map(|f| (f.name.to_string(), json!("n".repeat(70_000))))
            .collect();
        if !long.is_empty() {
            let resp = send(serde_json::to_vec(&long).unwrap(), "application/json").await.unwrap();
            assert_eq!(resp.status(), 422, "{} oversized strings", op.id);
        }
    }
    // Foreign and unknown ids in paths answer 404 and change nothing.
    for (method, path, body) in [
        ("POST", "/api/v1/credentials/nope/rotate", json!({"value": "x"})),
        ("PATCH", "/api/v1/folders/fld_nope", json!({"name": "y"})),
        ("POST", "/api/v1/folders/fld_nope/grants", json!({"principal": "bob", "permissions": ["canRead"]})),
        ("PUT", "/api/v1/tenants/globex/role-assignments/bob", json!({"role": "admin"})),
    ] {
        let (s, b) = server.call(method, path, &admin, Some(body)).await;
        assert_eq!(s, 404, "{method} {path}: {b}");
    }
    assert_eq!(snapshot(&server, &admin).await, before, "state unchanged by refused requests");
}

#[tokio::test]
async fn a_rejected_secret_is_never_echoed() {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let secret = format!("S3CRET-{}", "z".repeat(70_000));
    let (s, b) = server.call("POST", "/api/v1/credentials", &admin, Some(json!({"key": "k", "value": secret}))).await;
    assert_eq!(s, 422);
    assert_eq!(b["error"]["details"]["field"], "value");
    assert_eq!(b["error"]["details"]["value"], "[redacted]", "secret fields are redacted in errors");
}

/// What the documents promise a client may send, the server accepts: a whole number written
/// `1.0` is an integer (JSON Schema counts it as one), and `null` for an optional body field
/// means the field is absent (the request schemas say so). Found by schemathesis.
#[tokio::test]
async fn whole_floats_count_as_integers_and_null_optional_fields_as_absent() {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (s, b) = server
        .call(
            "POST",
            "/api/v1/credentials",
            &admin,
            Some(json!({"key": "db", "value": "v1", "folder_id": null, "tags": null})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = server
        .call("POST", "/api/v1/credentials/db/rotate", &admin, Some(json!({"value": "v2", "expected_version": 1.0})))
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = server.call("POST", "/api/v1/credentials/db/reveal", &admin, Some(json!({"version": 1.0}))).await;
    assert_eq!((s, b["data"]["value"].as_str()), (200, Some("v1")), "{b}");
    let (s, b) =
        server.call("POST", "/api/v1/leases", &admin, Some(json!({"credential_key": "db", "ttl_seconds": 60.0}))).await;
    assert_eq!(s, 201, "{b}");
    // A fraction is still not an integer.
    let (s, b) = server.call("POST", "/api/v1/credentials/db/reveal", &admin, Some(json!({"version": 1.5}))).await;
    assert_eq!((s, b["error"]["details"]["field"].as_str()), (422, Some("version")), "{b}");
}

/// A page number past the documented bound is a 422 naming it, never a dropped connection (found
/// by schemathesis: `page=4294967296` wrapped the page counter to 0 and the handler panicked).
#[tokio::test]
async fn page_numbers_beyond_the_bound_are_refused() {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    for page in ["4294967296", "1000001", "18446744073709551616"] {
        let (s, b) = server.call("GET", &format!("/api/v1/tokens?page={page}"), &admin, None).await;
        assert_eq!((s, b["error"]["details"]["field"].as_str()), (422, Some("page")), "{page}: {b}");
    }
    let (s, b) = server.call("GET", "/api/v1/tokens?page=1000000", &admin, None).await;
    assert_eq!((s, b["data"].as_array().map(Vec::len)), (200, Some(0)), "{b}");
}
