//! The notes service writes its errors as RFC 9457 problem details (`[wire] errors = "problem"`):
//! every refusal of the platform (400, 401, 403, 404, 405, 413, 415, 422, 429, 503) and every error
//! of the service itself, over REST and as an MCP tool result, against its own binary on SQLite
//! and, when `DATABASE_URL_TEST` is set, PostgreSQL.

mod notes_server;

use notes_server::Server;
use serde_json::{Value, json};

const TYPES: &str = "https://notes.example.com/problems/";

/// Checks one answer is the problem of `code` with `status`, and returns its body.
async fn problem(resp: reqwest::Response, status: u16, code: &str) -> Value {
    let what = format!("{} {code}", resp.url());
    assert_eq!(resp.status(), status, "{what}");
    let headers = resp.headers().clone();
    assert_eq!(headers["content-type"], "application/problem+json", "{what}");
    let body: Value = resp.json().await.unwrap();
    let catalog = notes::SERVICE.error(code).unwrap_or_else(|| panic!("{code} is in the catalog"));
    assert_eq!(body["type"], format!("{TYPES}{code}"), "{what}: {body}");
    assert_eq!(body["title"], catalog.message, "{what}: {body}");
    assert_eq!(body["status"], status, "{what}: {body}");
    assert_eq!(body["code"], code, "{what}: {body}");
    assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{what}: {body}");
    assert_eq!(body["request_id"], headers["x-request-id"].to_str().unwrap(), "{what}: {body}");
    assert!(body.get("error").is_none() && body.get("message").is_none(), "no envelope: {body}");
    body
}

async fn every_refusal(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let (read, write) = (s.token("problems", "notes:read"), s.token("problems", "notes:write"));
    let notes = s.url("/api/v1/notes");

    // 401: no credentials, and credentials that are not a token of this server.
    let body = problem(client.get(&notes).send().await.unwrap(), 401, "unauthenticated").await;
    assert_eq!(body["required"], "notes:read", "the scope the operation needs is a member");
    problem(client.get(&notes).bearer_auth("not-a-token").send().await.unwrap(), 401, "invalid_token").await;
    // 403: a scope too low; the challenge headers do not change with the format.
    let resp = client.post(&notes).bearer_auth(&read).json(&json!({"title": "x"})).send().await.unwrap();
    assert!(resp.headers()["www-authenticate"].to_str().unwrap().contains("insufficient_scope"));
    let body = problem(resp, 403, "insufficient_scope").await;
    assert_eq!(body["required"], "notes:write");
    // 404: no such route, and no such note (an error of the service's own).
    problem(client.get(s.url("/api/v1/nowhere")).bearer_auth(&read).send().await.unwrap(), 404, "not_found").await;
    let resp = client.get(s.url("/api/v1/notes/note_missing")).bearer_auth(&read).send().await.unwrap();
    let body = problem(resp, 404, "not_found").await;
    assert_eq!(body["title"], "Not found.", "the service's own message for the code titles it");
    // 405, with `Allow`.
    let resp = client.put(&notes).bearer_auth(&write).send().await.unwrap();
    assert_eq!(resp.headers()["allow"], "GET, POST");
    let body = problem(resp, 405, "method_not_allowed").await;
    assert_eq!(body["allowed"], "GET, POST");
    // 400, 413, 415: bodies the decoder cannot read.
    let post = |body: Vec<u8>, content_type: &str| {
        client.post(&notes).bearer_auth(&write).header("content-type", content_type).body(body).send()
    };
    problem(post(b"{\"title\":".to_vec(), "application/json").await.unwrap(), 400, "malformed").await;
    let huge = format!("{{\"title\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)).into_bytes();
    problem(post(huge, "application/json").await.unwrap(), 413, "payload_too_large").await;
    problem(post(b"title=x".to_vec(), "text/plain").await.unwrap(), 415, "unsupported_media_type").await;
    // 422: the field and the refused value are members.
    let body = problem(post(br#"{"title": ""}"#.to_vec(), "application/json").await.unwrap(), 422, "validation").await;
    assert_eq!((body["field"].as_str(), &body["value"]), (Some("title"), &json!("")));

    // An MCP tool's error is the same problem, as the tool result's structured content.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "notes.get", "arguments": {"id": "note_missing"}}});
    let answer: Value = notes_server::mcp(&s, &read, call).await.json().await.unwrap();
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    let content = &result["structuredContent"];
    assert_eq!(
        (content["type"].as_str(), content["status"].as_u64()),
        (Some(&*format!("{TYPES}not_found")), Some(404))
    );
    assert_eq!(content["code"], "not_found", "{answer}");

    // 429 once the plan's minute is spent, with `Retry-After` and the same seconds as a member.
    let plan = notes::SERVICE.plan("basic").expect("the basic plan");
    let limited = s.token("problems-limited", "notes:read");
    let mut last = None;
    for _ in 0..=plan.per_minute {
        let resp = client.get(&notes).bearer_auth(&limited).send().await.unwrap();
        if resp.status() == 429 {
            last = Some(resp);
            break;
        }
        assert_eq!(resp.status(), 200);
    }
    let resp = last.expect("the plan's limit is reached");
    let retry: u64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    let body = problem(resp, 429, "rate_limited").await;
    assert_eq!(body["retry_after"], retry);
}

on_both_backends!(every_refusal: every_refusal_is_a_problem_details_document_on_sqlite, every_refusal_is_a_problem_details_document_on_postgres, "notes problem details");

/// 503 while the disk is full (a tmpfs the test fills), as a problem with `Retry-After`; the
/// first write after space returns succeeds without a restart.
#[tokio::test]
async fn a_full_disk_answers_a_503_problem_and_heals() {
    let dir = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(std::env::var("SPECWRIGHT_CI").is_err(), "SPECWRIGHT_CI is set but a tmpfs cannot be mounted");
        eprintln!("SKIPPED (notes 503 problem on a full disk): mounting a tmpfs needs root");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(dir.path().to_path_buf());
    let filler = dir.path().join("filler");
    let s = Server::start_in(dir, None).await;
    let client = reqwest::Client::new();
    let write = s.token("full", "notes:write");
    let create = |title: String| client.post(s.url("/api/v1/notes")).bearer_auth(&write).json(&json!({"title": title}));
    assert_eq!(create("before".into()).send().await.unwrap().status(), 201);

    {
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0u8; 256 * 1024];
        while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
    }
    let title = "t".repeat(200);
    let mut refused = None;
    for _ in 0..2000 {
        let resp = create(title.clone()).send().await.unwrap();
        assert_ne!(resp.status(), 500, "a full disk is not an internal error");
        if resp.status() != 201 {
            refused = Some(resp);
            break;
        }
    }
    let resp = refused.expect("the database filled the disk");
    assert!(resp.headers().contains_key("retry-after"));
    problem(resp, 503, "unavailable").await;

    std::fs::remove_file(&filler).unwrap();
    assert_eq!(create("after".into()).send().await.unwrap().status(), 201, "healed without a restart");
}
