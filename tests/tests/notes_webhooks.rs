//! Webhooks against the notes binary, on both backends: a tenant subscribes a URL, each change
//! of its notes is posted there signed as Standard Webhooks says (checked with
//! `support::webhooks::verify` and the secret answered once), a receiver that fails is retried
//! with the same message id until it answers 2xx, a delivery queued before a crash is made after
//! the restart, and an unsubscribed URL receives nothing more.

mod notes_server;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use notes_server::Server;
use serde_json::{Value, json};

/// One request a receiver got: its headers and its body as sent.
type Delivery = (HeaderMap, Vec<u8>);

/// A receiver on a loopback port: what it was sent, and how many of the next requests it fails.
#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Delivery>>>,
    fail_next: Arc<Mutex<u32>>,
    down: Arc<Mutex<bool>>,
}

impl Receiver {
    async fn start(&self) -> String {
        let me = self.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
                let me = me.clone();
                async move {
                    me.got.lock().unwrap().push((headers, body.to_vec()));
                    let mut fail = me.fail_next.lock().unwrap();
                    if *me.down.lock().unwrap() {
                        return StatusCode::SERVICE_UNAVAILABLE;
                    }
                    if *fail > 0 {
                        *fail -= 1;
                        return StatusCode::INTERNAL_SERVER_ERROR;
                    }
                    StatusCode::NO_CONTENT
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    fn requests(&self) -> Vec<Delivery> {
        self.got.lock().unwrap().clone()
    }

    /// Waits until `n` requests have arrived (at most 20 s); all of them.
    async fn wait_for(&self, n: usize) -> Vec<Delivery> {
        for _ in 0..400 {
            if self.requests().len() >= n {
                return self.requests();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("expected {n} deliveries, got {}", self.requests().len());
    }
}

fn header(h: &HeaderMap, name: &str) -> String {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

async fn webhooks(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let tenant = format!("hooks-{}", uuid::Uuid::now_v7().simple());
    let write = s.token(&tenant, "notes:write");
    let receiver = Receiver::default();
    let url = receiver.start().await;

    // Subscribing answers the secret once, never cached; bad requests name the field.
    let made =
        client.post(s.url("/api/v1/webhooks")).bearer_auth(&write).json(&json!({"url": url})).send().await.unwrap();
    assert_eq!(made.status(), 201);
    assert_eq!(made.headers()["cache-control"], "no-store");
    let sub: Value = made.json().await.unwrap();
    let secret = sub["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{sub}");
    assert_eq!(sub["events"], json!(["note.changed"]), "every event type when none is named");
    let listed: Value =
        client.get(s.url("/api/v1/webhooks")).bearer_auth(&write).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert!(listed[0].get("secret").is_none(), "the secret is shown once: {listed}");
    for (body, field) in [
        (json!({"url": url, "events": ["note.gone"]}), "events[0]"),
        (json!({"url": "ftp://example.com/hook"}), "url"),
        (json!({"url": "not a url"}), "url"),
    ] {
        let refused = client.post(s.url("/api/v1/webhooks")).bearer_auth(&write).json(&body).send().await.unwrap();
        assert_eq!(refused.status(), 422, "{body}");
        assert_eq!(refused.json::<Value>().await.unwrap()["field"], field, "{body}");
    }

    // A change is posted, signed; the receiver checks it with the secret.
    let created =
        client.post(s.url("/api/v1/notes")).bearer_auth(&write).json(&json!({"title": "hooked"})).send().await.unwrap();
    let id = created.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let got = receiver.wait_for(1).await;
    let (headers, body) = &got[0];
    assert_eq!(support::webhooks::verify(&secret, headers, body, now()), Ok(()));
    assert!(support::webhooks::verify("whsec_AAAA", headers, body, now()).is_err(), "another secret does not verify");
    assert_eq!(header(headers, "content-type"), "application/json");
    let event: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(event["type"], "note.changed");
    assert_eq!(
        (event["data"]["kind"].as_str(), event["data"]["note_id"].as_str()),
        (Some("created"), Some(id.as_str()))
    );
    assert!(event["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{event}");

    // A receiver that fails twice gets the same message three times, then it is delivered.
    *receiver.fail_next.lock().unwrap() = 2;
    let patched = client
        .patch(s.url(&format!("/api/v1/notes/{id}")))
        .bearer_auth(&write)
        .json(&json!({"title": "hooked again"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let got = receiver.wait_for(4).await;
    let retried: Vec<String> = got[1..4].iter().map(|(h, _)| header(h, "webhook-id")).collect();
    assert!(retried.iter().all(|m| m == &retried[0] && m.starts_with("msg_")), "one message: {retried:?}");
    assert_ne!(retried[0], header(&got[0].0, "webhook-id"), "another change is another message");
    for (h, b) in &got[1..4] {
        assert_eq!(support::webhooks::verify(&secret, h, b, now()), Ok(()), "each attempt is signed");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.requests().len(), 4, "delivered: no attempt after the 2xx");

    // Another tenant's changes never reach this subscriber.
    let other = s.token("someone-else", "notes:write");
    client.post(s.url("/api/v1/notes")).bearer_auth(&other).json(&json!({"title": "theirs"})).send().await.unwrap();

    // A delivery queued while the receiver is down survives a crash of the server.
    *receiver.down.lock().unwrap() = true;
    let deleted = client.delete(s.url(&format!("/api/v1/notes/{id}"))).bearer_auth(&write).send().await.unwrap();
    assert_eq!(deleted.status(), 204);
    receiver.wait_for(5).await;
    let s = s.kill_and_restart().await;
    *receiver.down.lock().unwrap() = false;
    let before = receiver.requests().len();
    let got = receiver.wait_for(before + 1).await;
    let (h, b) = got.last().unwrap();
    let event: Value = serde_json::from_slice(b).unwrap();
    assert_eq!(
        (event["data"]["kind"].as_str(), event["data"]["note_id"].as_str()),
        (Some("deleted"), Some(id.as_str()))
    );
    assert_eq!(support::webhooks::verify(&secret, h, b, now()), Ok(()));
    assert!(got.iter().all(|(_, b)| !String::from_utf8_lossy(b).contains("theirs")));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let settled = receiver.requests().len();

    // Unsubscribed: nothing more arrives.
    let sub_id = sub["id"].as_str().unwrap();
    let gone = client.delete(s.url(&format!("/api/v1/webhooks/{sub_id}"))).bearer_auth(&write).send().await.unwrap();
    assert_eq!(gone.status(), 204);
    let again = client.delete(s.url(&format!("/api/v1/webhooks/{sub_id}"))).bearer_auth(&write).send().await.unwrap();
    assert_eq!(again.status(), 404);
    client.post(s.url("/api/v1/notes")).bearer_auth(&write).json(&json!({"title": "unheard"})).send().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.requests().len(), settled, "no delivery after unsubscribing");

    // The document describes the event and its signature headers.
    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let hook = &doc["webhooks"]["note.changed"]["post"];
    let schema = &hook["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(schema["properties"]["data"]["$ref"], "#/components/schemas/NoteChange");
    let names: Vec<&str> = hook["parameters"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, ["webhook-id", "webhook-timestamp", "webhook-signature"]);
}

on_both_backends!(webhooks: changes_are_posted_signed_retried_and_kept_across_a_crash_on_sqlite, changes_are_posted_signed_retried_and_kept_across_a_crash_on_postgres, "notes webhooks");

/// Several subscribers of one tenant: each change is one delivery to each, made concurrently.
async fn fan_out(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let write = s.token(&format!("fan-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let receiver = Receiver::default();
    let url = receiver.start().await;
    for i in 0..5 {
        let made = client
            .post(s.url("/api/v1/webhooks"))
            .bearer_auth(&write)
            .json(&json!({"url": format!("{url}?subscriber={i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(made.status(), 201);
    }
    for title in ["one", "two", "three"] {
        let created = client
            .post(s.url("/api/v1/notes"))
            .bearer_auth(&write)
            .json(&json!({"title": title}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
    }
    let got = receiver.wait_for(15).await;
    let ids: std::collections::BTreeSet<String> = got.iter().map(|(h, _)| header(h, "webhook-id")).collect();
    assert_eq!(ids.len(), 3, "one message per change, sent to each subscriber");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.requests().len(), 15, "each delivered once");
}

on_both_backends!(fan_out: each_subscriber_gets_each_change_once_on_sqlite, each_subscriber_gets_each_change_once_on_postgres, "notes webhook fan-out");
