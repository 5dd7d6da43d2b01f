//! The prospector's pipeline end to end: proposal generation (deterministic), editing and its
//! state machine, idempotent submission through the recording outbox and through the HTTP
//! connector against a local platform (retries, failures, concurrency), the client's decision,
//! contracts and milestones; plus HTTP feed sources against a local feed server.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{delete, get, post};
use serde_json::{Value, json};
use sqlx::Row;

async fn post_with_key(
    server: &common::TestServer,
    token: &str,
    path: &str,
    key: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let mut rb = server.client().post(server.url(path)).bearer_auth(token).json(&body);
    if let Some(k) = key {
        rb = rb.header("idempotency-key", k);
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Scans the sample feed and returns the best lead's id.
async fn best_lead(server: &common::TestServer, token: &str) -> String {
    let (s, r) = post_with_key(server, token, "/v1/prospector/leads/scan", None, json!({})).await;
    assert_eq!(s, 200, "{r}");
    let (_, list) = server.call("GET", "/v1/prospector/leads?per_page=1", token, None).await;
    list["data"][0]["id"].as_str().unwrap().to_string()
}

async fn outbox_rows(server: &common::TestServer, proposal: &str) -> Vec<String> {
    sqlx::query("SELECT action FROM platform_outbox WHERE proposal_id = $1 ORDER BY created_at")
        .bind(proposal)
        .fetch_all(server.state.store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>(0))
        .collect()
}

on_both_backends!(proposal_to_contract_through_the_outbox, |server| {
    let token = server.team_token("pat", "acme");
    let lead = best_lead(&server, &token).await;

    // Generation is deterministic and uses the lead's data.
    let ask = json!({"lead_id": lead, "tone": "friendly", "bid_amount": 2400, "instructions": "Mention my open-source crate."});
    let (s, a) = post_with_key(&server, &token, "/v1/prospector/proposals", None, ask.clone()).await;
    assert_eq!(s, 201, "{a}");
    let (_, b) = post_with_key(&server, &token, "/v1/prospector/proposals", None, ask.clone()).await;
    assert_eq!(a["data"]["draft_text"], b["data"]["draft_text"], "same input, same draft");
    let (_, detail) = server.call("GET", &format!("/v1/prospector/leads/{lead}"), &token, None).await;
    let text = a["data"]["draft_text"].as_str().unwrap();
    assert!(text.contains(detail["data"]["job_title"].as_str().unwrap()), "{text}");
    assert!(text.contains("Mention my open-source crate."));
    assert!(text.contains("2400"), "{text}");
    assert_eq!((a["data"]["status"].as_str(), a["data"]["tone"].as_str()), (Some("draft"), Some("friendly")));
    let id = a["data"]["id"].as_str().unwrap().to_string();

    // Idempotent creation.
    let (s, k1) = post_with_key(&server, &token, "/v1/prospector/proposals", Some("create-1"), ask.clone()).await;
    assert_eq!(s, 201);
    let (s, k2) = post_with_key(&server, &token, "/v1/prospector/proposals", Some("create-1"), ask.clone()).await;
    assert_eq!((s, &k2["data"]["id"]), (201, &k1["data"]["id"]), "a retry returns the first proposal");
    let (s, e) =
        post_with_key(&server, &token, "/v1/prospector/proposals", Some("create-1"), json!({"lead_id": lead})).await;
    assert_eq!((s, e["error"]["code"].as_str()), (409, Some("conflict")), "{e}");
    let (s, e) =
        post_with_key(&server, &token, "/v1/prospector/proposals", None, json!({"lead_id": "lead_nope"})).await;
    assert_eq!((s, e["error"]["code"].as_str()), (404, Some("not_found")));

    // Listing with the status filter.
    let (_, drafts) = server.call("GET", "/v1/prospector/proposals?status=draft", &token, None).await;
    assert_eq!(drafts["meta"]["total"], 3);
    let (_, for_lead) =
        server.call("GET", &format!("/v1/prospector/proposals?lead_id={lead}&per_page=2"), &token, None).await;
    assert_eq!((for_lead["meta"]["total"].as_i64(), for_lead["data"].as_array().unwrap().len()), (Some(3), 2));
    let (s, e) = server.call("GET", "/v1/prospector/proposals?status=maybe", &token, None).await;
    assert_eq!((s, e["error"]["details"]["field"].as_str()), (422, Some("status")));

    // Edit, then the state machine.
    let path = format!("/v1/prospector/proposals/{id}");
    let (s, edited) = server
        .call("PATCH", &path, &token, Some(json!({"draft_text": "Hello, I can help.", "bid_amount": null})))
        .await;
    assert_eq!(s, 200, "{edited}");
    assert_eq!(edited["data"]["draft_text"], "Hello, I can help.");
    assert!(edited["data"].get("bid_amount").is_none(), "null removes the bid: {edited}");
    let submit = |key: Option<&'static str>| {
        let (server, token, path) = (&server, token.clone(), format!("/v1/prospector/proposals/{id}/submit"));
        async move { post_with_key(server, &token, &path, key, json!({})).await }
    };
    let (s, e) = submit(None).await;
    assert_eq!((s, e["error"]["code"].as_str()), (409, Some("conflict")), "a draft is not submitted: {e}");
    for (status, code) in [("submitted", 409), ("accepted", 409), ("ready", 200)] {
        let (s, e) = server.call("PATCH", &path, &token, Some(json!({"status": status}))).await;
        assert_eq!(s, code, "{status}: {e}");
    }
    let (s, sent) = submit(Some("submit-1")).await;
    assert_eq!(s, 200, "{sent}");
    assert_eq!(sent["data"]["status"], "submitted");
    assert!(sent["data"]["submitted_at"].is_string() && sent["data"]["platform_reference"].is_string());
    let (s, again) = submit(Some("submit-1")).await;
    assert_eq!((s, &again["data"]), (200, &sent["data"]), "a retry returns the first result");
    let (s, e) = submit(Some("submit-2")).await;
    assert_eq!((s, e["error"]["code"].as_str()), (409, Some("conflict")), "already submitted: {e}");
    assert_eq!(outbox_rows(&server, &id).await, vec!["submit"], "submitted exactly once");
    let (_, l) = server.call("GET", &format!("/v1/prospector/leads/{lead}"), &token, None).await;
    assert_eq!(l["data"]["status"], "proposal_sent");
    let (s, e) = server.call("PATCH", &path, &token, Some(json!({"draft_text": "changed"}))).await;
    assert_eq!((s, e["error"]["code"].as_str()), (409, Some("conflict")), "submitted text is frozen");

    // The client's decision: validation, then acceptance creates the contract.
    let outcome = format!("/v1/prospector/proposals/{id}/outcome");
    let (s, e) = server.call("POST", &outcome, &token, Some(json!({"outcome": "accepted"}))).await;
    assert_eq!((s, e["error"]["details"]["field"].as_str()), (422, Some("contract")), "{e}");
    let terms = json!({"outcome": "accepted", "contract": {"platform_reference": "C-77", "milestones": [
        {"title": "Design", "amount": 1000}, {"title": "Build", "amount": 1400, "due_on": "2027-01-31T00:00:00Z"}]}});
    let (s, accepted) = server.call("POST", &outcome, &token, Some(terms.clone())).await;
    assert_eq!(s, 200, "{accepted}");
    assert_eq!(accepted["data"]["status"], "accepted");
    let contract = accepted["data"]["contract_id"].as_str().unwrap().to_string();
    let (s, e) = server.call("POST", &outcome, &token, Some(terms)).await;
    assert_eq!(s, 409, "decided once: {e}");
    let (_, l) = server.call("GET", &format!("/v1/prospector/leads/{lead}"), &token, None).await;
    assert_eq!(l["data"]["status"], "won");

    // Contracts and milestones.
    let (_, list) = server.call("GET", "/v1/prospector/contracts?status=active", &token, None).await;
    assert_eq!(list["meta"]["total"], 1);
    let c = &list["data"][0];
    assert_eq!(
        (c["id"].as_str(), c["total_amount"].as_f64(), c["status"].as_str()),
        (Some(contract.as_str()), Some(2400.0), Some("active"))
    );
    assert_eq!(c["title"], l["data"]["job_title"]);
    let ms: Vec<&str> = c["milestones"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ms.len(), 2);
    let (m1, m2) = (ms[0].to_string(), ms[1].to_string());
    let mpath = |m: &str| format!("/v1/prospector/contracts/{contract}/milestones/{m}");
    let (s, e) = server.call("PATCH", &mpath(&m1), &token, Some(json!({"status": "paid"}))).await;
    assert_eq!((s, e["error"]["code"].as_str()), (409, Some("conflict")), "pending cannot jump to paid: {e}");
    assert_eq!(e["error"]["details"]["allowed"], json!(["in_progress", "cancelled"]));
    for st in ["in_progress", "submitted", "approved", "paid"] {
        let (s, r) = server.call("PATCH", &mpath(&m1), &token, Some(json!({"status": st}))).await;
        assert_eq!(s, 200, "{st}: {r}");
    }
    let (s, e) = server.call("PATCH", &mpath("ms_99"), &token, Some(json!({"status": "in_progress"}))).await;
    assert_eq!((s, e["error"]["code"].as_str()), (404, Some("not_found")));
    let (s, e) = server.call("PATCH", &mpath(&m2), &token, Some(json!({"status": "done"}))).await;
    assert_eq!((s, e["error"]["details"]["field"].as_str()), (422, Some("status")));
    let (s, done) = server.call("PATCH", &mpath(&m2), &token, Some(json!({"status": "cancelled"}))).await;
    assert_eq!(s, 200);
    assert_eq!(done["data"]["status"], "completed", "every milestone closed, one paid: {done}");
    assert!(done["data"]["completed_at"].is_string());
    let (s, e) = server.call("PATCH", &mpath(&m1), &token, Some(json!({"status": "cancelled"}))).await;
    assert_eq!(s, 409, "a completed contract is closed: {e}");
    let (_, completed) = server.call("GET", "/v1/prospector/contracts?status=completed", &token, None).await;
    assert_eq!(completed["meta"]["total"], 1);

    // Another tenant sees none of it.
    let other = server.team_token("bob", "globex");
    for path in [format!("/v1/prospector/proposals/{id}"), format!("/v1/prospector/contracts/{contract}")] {
        let (s, _) = server.call("GET", &path, &other, None).await;
        assert_eq!(s, 404, "{path}");
    }
    let (s, _) = server.call("PATCH", &mpath(&m2), &other, Some(json!({"status": "in_progress"}))).await;
    assert_eq!(s, 404);
    let (s, _) =
        post_with_key(&server, &other, &format!("/v1/prospector/proposals/{id}/submit"), None, json!({})).await;
    assert_eq!(s, 404);
    let (_, theirs) = server.call("GET", "/v1/prospector/contracts", &other, None).await;
    assert_eq!(theirs["meta"]["total"], 0);

    // A rejected proposal loses the lead; withdrawing a submitted one records the withdrawal.
    let lead2 = {
        let (_, list) = server.call("GET", "/v1/prospector/leads?per_page=2&status=new", &token, None).await;
        list["data"][0]["id"].as_str().unwrap().to_string()
    };
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (_, p) = post_with_key(&server, &token, "/v1/prospector/proposals", None, json!({"lead_id": lead2})).await;
        let pid = p["data"]["id"].as_str().unwrap().to_string();
        server
            .call("PATCH", &format!("/v1/prospector/proposals/{pid}"), &token, Some(json!({"status": "ready"})))
            .await;
        let (s, r) =
            post_with_key(&server, &token, &format!("/v1/prospector/proposals/{pid}/submit"), None, json!({})).await;
        assert_eq!(s, 200, "{r}");
        ids.push(pid);
    }
    let (s, w) = server
        .call("PATCH", &format!("/v1/prospector/proposals/{}", ids[0]), &token, Some(json!({"status": "withdrawn"})))
        .await;
    assert_eq!((s, w["data"]["status"].as_str()), (200, Some("withdrawn")));
    assert_eq!(outbox_rows(&server, &ids[0]).await, vec!["submit", "withdraw"]);
    let (s, r) = server
        .call(
            "POST",
            &format!("/v1/prospector/proposals/{}/outcome", ids[1]),
            &token,
            Some(json!({"outcome": "rejected"})),
        )
        .await;
    assert_eq!((s, r["data"]["status"].as_str()), (200, Some("rejected")), "{r}");
    let (_, l2) = server.call("GET", &format!("/v1/prospector/leads/{lead2}"), &token, None).await;
    assert_eq!(l2["data"]["status"], "lost");
});

/// A local stand-in for a platform's proposal API: counts submissions per proposal (by its
/// Idempotency-Key) and fails the first `fail_first` calls with 503.
#[derive(Default)]
struct Platform {
    calls: AtomicUsize,
    fail_first: AtomicUsize,
    keys: std::sync::Mutex<Vec<String>>,
}

async fn platform_server(platform: Arc<Platform>) -> String {
    let p = platform.clone();
    let app = axum::Router::new()
        .route(
            "/proposals",
            post(move |headers: HeaderMap, Json(body): Json<Value>| {
                let p = p.clone();
                async move {
                    let n = p.calls.fetch_add(1, Ordering::SeqCst);
                    if n < p.fail_first.load(Ordering::SeqCst) {
                        return StatusCode::SERVICE_UNAVAILABLE.into_response();
                    }
                    let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
                    assert_eq!(body["proposal_id"].as_str(), Some(key.as_str()), "the key is the proposal id");
                    p.keys.lock().unwrap().push(key.clone());
                    // Tiny delay so concurrent submits overlap.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    Json(json!({"reference": format!("PLT-{key}")})).into_response()
                }
            }),
        )
        .route("/proposals/{reference}", delete(|| async { StatusCode::NO_CONTENT }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

on_both_backends!(http_connector_submits_once_with_retries, |server| {
    // The test server is started with the default outbox; this test needs its own with the HTTP
    // connector, on the same backend.
    let platform = Arc::new(Platform::default());
    let url = platform_server(platform.clone()).await;
    let backend = if server.state.store.backend() == runtime::store::Backend::Postgres {
        common::Backend::Postgres
    } else {
        common::Backend::Sqlite
    };
    drop(server);
    let server =
        common::TestServer::start_configured(backend, |_, s| s.prospector.platform_connector = Some(url.clone()))
            .await
            .unwrap();
    let token = server.team_token("pat", "acme");
    let lead = best_lead(&server, &token).await;
    let ready = || async {
        let (_, p) = post_with_key(&server, &token, "/v1/prospector/proposals", None, json!({"lead_id": lead})).await;
        let id = p["data"]["id"].as_str().unwrap().to_string();
        server.call("PATCH", &format!("/v1/prospector/proposals/{id}"), &token, Some(json!({"status": "ready"}))).await;
        id
    };

    // Two 503s, then success: the connector retries, one submission lands.
    let id = ready().await;
    platform.fail_first.store(2, Ordering::SeqCst);
    let (s, r) =
        post_with_key(&server, &token, &format!("/v1/prospector/proposals/{id}/submit"), Some("k1"), json!({})).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["data"]["platform_reference"], format!("PLT-{id}"));
    assert_eq!(platform.calls.load(Ordering::SeqCst), 3);

    // Ten concurrent submits of one proposal (same key, and no key): the platform sees one.
    let id2 = ready().await;
    platform.calls.store(0, Ordering::SeqCst);
    platform.fail_first.store(0, Ordering::SeqCst);
    let path = format!("/v1/prospector/proposals/{id2}/submit");
    let mut tasks = Vec::new();
    for i in 0..10 {
        let (client, url, token) = (server.client(), server.url(&path), token.clone());
        tasks.push(tokio::spawn(async move {
            let mut rb = client.post(url).bearer_auth(token).json(&json!({}));
            if i % 2 == 0 {
                rb = rb.header("idempotency-key", "same");
            }
            rb.send().await.unwrap().status().as_u16()
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    assert!(statuses.iter().all(|s| *s == 200 || *s == 409), "{statuses:?}");
    assert!(statuses.contains(&200), "{statuses:?}");
    let submitted = platform.keys.lock().unwrap().iter().filter(|k| **k == id2).count();
    assert_eq!(submitted, 1, "the platform saw exactly one submission: {statuses:?}");

    // A platform that keeps failing: 502, the proposal stays ready and the key is reusable.
    let id3 = ready().await;
    platform.calls.store(0, Ordering::SeqCst);
    platform.fail_first.store(100, Ordering::SeqCst);
    let path3 = format!("/v1/prospector/proposals/{id3}/submit");
    let (s, e) = post_with_key(&server, &token, &path3, Some("k3"), json!({})).await;
    assert_eq!((s, e["error"]["code"].as_str()), (502, Some("upstream_unavailable")), "{e}");
    let (_, p) = server.call("GET", &format!("/v1/prospector/proposals/{id3}"), &token, None).await;
    assert_eq!(p["data"]["status"], "ready", "nothing changed");
    platform.fail_first.store(0, Ordering::SeqCst);
    let (s, r) = post_with_key(&server, &token, &path3, Some("k3"), json!({})).await;
    assert_eq!(
        (s, r["data"]["status"].as_str()),
        (200, Some("submitted")),
        "the retry with the same key succeeds: {r}"
    );
    let (s, w) = server
        .call("PATCH", &format!("/v1/prospector/proposals/{id3}"), &token, Some(json!({"status": "withdrawn"})))
        .await;
    assert_eq!((s, w["data"]["status"].as_str()), (200, Some("withdrawn")));
});

#[tokio::test]
async fn http_feed_sources_are_scanned() {
    let served = Arc::new(AtomicUsize::new(0));
    let hits = served.clone();
    let feed = axum::Router::new()
        .route(
            "/jobs.json",
            get(move || {
                let hits = hits.clone();
                async move {
                    hits.fetch_add(1, Ordering::SeqCst);
                    Json(json!({"jobs": [
                        {"id": "j-1", "platform": "acmejobs", "title": "Rust backend for payments", "skills": ["rust", "postgresql"],
                         "budget": {"kind": "fixed", "min": 4000, "currency": "USD"}, "proposals_count": 3,
                         "client": {"payment_verified": true, "jobs_posted": 12, "hires": 9, "total_spent": 50000, "rating": 4.9}},
                        {"id": "j-2", "platform": "acmejobs", "title": "Landing page", "budget": {"kind": "fixed", "max": 150, "currency": "USD"}},
                        {"id": "", "platform": "acmejobs", "title": "broken"}
                    ]}))
                }
            }),
        )
        .route(
            "/feed.rss",
            get(|| async {
                (
                    [("content-type", "application/rss+xml")],
                    r#"<?xml version="1.0"?><rss version="2.0"><channel><title>Jobs</title>
<item><title>Data pipeline in Python</title><link>https://jobs.example/r-1</link><guid>r-1</guid>
<pubDate>Sun, 22 Nov 2026 08:00:00 +0000</pubDate>
<description><![CDATA[Build an ETL.<br/><b>Budget</b>: $2,500<br/><b>Skills</b>: Python, Airflow]]></description></item>
</channel></rss>"#,
                )
            }),
        )
        .route("/down", get(|| async { StatusCode::INTERNAL_SERVER_ERROR }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, feed).await.unwrap() });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.ndjson"),
        "{\"id\":\"f-1\",\"platform\":\"local\",\"title\":\"Go CLI tool\",\"skills\":[\"go\"]}\nnot json\n",
    )
    .unwrap();
    let sources = vec![
        format!("acme=http://{addr}/jobs.json"),
        format!("rss=http://{addr}/feed.rss"),
        format!("down=http://{addr}/down"),
        format!("files={}", dir.path().display()),
    ];
    let server =
        common::TestServer::start_configured(common::Backend::Sqlite, |_, s| s.prospector.lead_sources = sources)
            .await
            .unwrap();
    let token = server.team_token("pat", "acme");
    let (s, r) = post_with_key(&server, &token, "/v1/prospector/leads/scan", None, json!({})).await;
    assert_eq!(s, 200, "{r}");
    let by_name = |n: &str| r["data"]["sources"].as_array().unwrap().iter().find(|x| x["name"] == n).unwrap().clone();
    let acme = by_name("acme");
    assert_eq!(
        (acme["fetched"].as_i64(), acme["new"].as_i64(), acme["failed"].as_i64()),
        (Some(3), Some(2), Some(1)),
        "{r}"
    );
    assert_eq!(by_name("rss")["new"], 1, "{r}");
    let down = by_name("down");
    assert!(down["error"].as_str().unwrap().contains("500"), "a failing source is reported, not fatal: {r}");
    let files = by_name("files");
    assert_eq!((files["new"].as_i64(), files["failed"].as_i64()), (Some(1), Some(1)), "{r}");
    assert_eq!(r["data"]["totals"]["new"], 4);
    assert_eq!(served.load(Ordering::SeqCst), 1);

    // Sources can be chosen; the RSS item was parsed into skills and budget.
    let (s, r) = post_with_key(&server, &token, "/v1/prospector/leads/scan", None, json!({"sources": ["acme"]})).await;
    assert_eq!((s, r["data"]["totals"]["duplicates"].as_i64()), (200, Some(2)), "{r}");
    assert_eq!(r["data"]["sources"].as_array().unwrap().len(), 1);
    let (_, rss) = server.call("GET", "/v1/prospector/leads?platform=rss", &token, None).await;
    let lead = &rss["data"][0];
    assert_eq!(lead["job_title"], "Data pipeline in Python", "{rss}");
    assert_eq!(lead["skills"], json!(["python", "airflow"]));
    assert_eq!(lead["budget"]["max"].as_f64().or(lead["budget"]["min"].as_f64()), Some(2500.0));
    let (_, best) = server.call("GET", "/v1/prospector/leads?platform=acmejobs", &token, None).await;
    assert_eq!(best["data"][0]["job_title"], "Rust backend for payments", "the strong posting outranks the thin one");
}

// A PATCH giving a bid to a proposal with no currency read the scoring configuration
// through a second connection while its transaction held the only one (SQLite): 500 after 30 s,
// and every other request of the server waited meanwhile. It now reads it in its transaction.
on_both_backends!(a_bid_on_a_proposal_without_currency_takes_the_configured_currency, |server| {
    let token = server.team_token("pat", "acme");
    best_lead(&server, &token).await;
    let (_, leads) = server.call("GET", "/v1/prospector/leads?per_page=100", &token, None).await;
    let mut bare = None;
    for lead in leads["data"].as_array().unwrap() {
        let (s, p) =
            post_with_key(&server, &token, "/v1/prospector/proposals", None, json!({"lead_id": lead["id"]})).await;
        assert_eq!(s, 201, "{p}");
        if p["data"]["currency"].is_null() {
            bare = Some(p["data"]["id"].as_str().unwrap().to_string());
            break;
        }
    }
    let id = bare.expect("the sample feed has a lead without a budget currency");
    let (_, config) = server.call("GET", "/v1/prospector/scoring/config", &token, None).await;
    let currency = config["data"]["parameters"]["currency"].clone();
    let admin = server.token_for("alice", "acme", "vault:admin");
    server.tenant("acme", "alice").await;
    let path = format!("/v1/prospector/proposals/{id}");
    let patch = server.call("PATCH", &path, &token, Some(json!({"bid_amount": 100})));
    let other = server.call("GET", "/api/v1/credentials", &admin, None);
    let ((status, edited), (other_status, _)) = tokio::join!(patch, other);
    assert_eq!(status, 200, "{edited}");
    assert_eq!(edited["data"]["bid_amount"], 100.0);
    assert_eq!(edited["data"]["currency"], currency, "the configured currency: {edited}");
    assert_eq!(other_status, 200, "an unrelated request beside it is answered");
});
