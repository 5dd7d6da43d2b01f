//! The change stream against the notes binary, on both backends: Server-Sent Events typed by
//! `NoteChange`, in order, resumed after `Last-Event-ID`, per tenant; and, on a server whose
//! request timeout is short, a stream that outlives it.

mod notes_server;

use std::time::Duration;

use notes_server::Server;
use serde_json::{Value, json};

/// An open event stream and what was read of it.
struct Stream {
    resp: reqwest::Response,
    text: String,
}

impl Stream {
    async fn open(client: &reqwest::Client, url: &str, token: &str, last_event_id: Option<&str>) -> Stream {
        let mut req = client.get(url).bearer_auth(token).header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200, "{url}");
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        assert_eq!(resp.headers()["cache-control"], "no-cache");
        Stream { resp, text: String::new() }
    }

    /// The next `n` events as (id, data), or fewer if `wait` passes first.
    async fn events(&mut self, n: usize, wait: Duration) -> Vec<(String, Value)> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut out = Vec::new();
        while out.len() < n {
            while let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let field = |name: &str| block.lines().find_map(|l| l.strip_prefix(name)).map(str::to_string);
                if let (Some(id), Some(data)) = (field("id: "), field("data: ")) {
                    out.push((id, serde_json::from_str(&data).unwrap()));
                }
            }
            if out.len() >= n {
                break;
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(chunk))) => self.text.push_str(&String::from_utf8_lossy(&chunk)),
                _ => break,
            }
        }
        out
    }
}

fn kinds(events: &[(String, Value)]) -> Vec<String> {
    events.iter().map(|(_, e)| e["kind"].as_str().unwrap().to_string()).collect()
}

async fn changes(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let tenant = format!("watch-{}", uuid::Uuid::now_v7().simple());
    let write = s.token(&tenant, "notes:write");
    let (notes, changes) = (s.url("/api/v1/notes"), s.url("/api/v1/notes/changes"));
    let mut live = Stream::open(&client, &changes, &write, None).await;

    let created = client.post(&notes).bearer_auth(&write).json(&json!({"title": "watched"})).send().await.unwrap();
    let id = created.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    client.patch(format!("{notes}/{id}")).bearer_auth(&write).json(&json!({"title": "changed"})).send().await.unwrap();
    client.delete(format!("{notes}/{id}")).bearer_auth(&write).send().await.unwrap();
    let seen = live.events(3, Duration::from_secs(5)).await;
    assert_eq!(kinds(&seen), ["created", "updated", "deleted"], "{seen:?}");
    assert!(seen.iter().all(|(_, e)| e["note_id"] == id.as_str()));
    let ids: Vec<i64> = seen.iter().map(|(i, _)| i.parse().unwrap()).collect();
    assert_eq!(ids, [ids[0], ids[0] + 1, ids[0] + 2], "numbered in order");
    assert!(seen.iter().all(|(i, e)| e["seq"].as_i64().unwrap().to_string() == *i), "the id is the seq");

    // Reconnecting after the first: the rest, at once.
    let mut resumed = Stream::open(&client, &changes, &write, Some(&seen[0].0)).await;
    assert_eq!(kinds(&resumed.events(2, Duration::from_secs(5)).await), ["updated", "deleted"]);
    let mut all = Stream::open(&client, &format!("{changes}?since=0"), &write, None).await;
    assert_eq!(kinds(&all.events(3, Duration::from_secs(5)).await), ["created", "updated", "deleted"]);

    // Another tenant sees none of it, and its own changes alone.
    let other = s.token(&format!("watch-other-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let mut theirs = Stream::open(&client, &format!("{changes}?since=0"), &other, None).await;
    assert!(theirs.events(1, Duration::from_millis(300)).await.is_empty(), "nothing of another tenant's");
    client.post(&notes).bearer_auth(&other).json(&json!({"title": "mine"})).send().await.unwrap();
    let mine = theirs.events(1, Duration::from_secs(5)).await;
    assert_eq!((kinds(&mine), mine[0].0.as_str()), (vec!["created".to_string()], "1"));

    // An empty Last-Event-ID names no event (as the SSE standard says): a stream from now.
    let empty = client.get(&changes).bearer_auth(&write).header("last-event-id", "").send().await.unwrap();
    assert_eq!(empty.status(), 200);
    // A Last-Event-ID that is no id of this stream is refused, naming it.
    let bad = client.get(&changes).bearer_auth(&write).header("last-event-id", "abc").send().await.unwrap();
    assert_eq!(bad.status(), 422);
    assert_eq!(bad.json::<Value>().await.unwrap()["field"], "last_event_id");

    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let content = &doc["paths"]["/notes/changes"]["get"]["responses"]["200"]["content"]["text/event-stream"];
    assert_eq!(content["x-item-schema"]["$ref"], "#/components/schemas/NoteChange", "{content}");
}

on_both_backends!(changes: changes_stream_in_order_and_resume_on_sqlite, changes_stream_in_order_and_resume_on_postgres, "notes change stream");

/// On a server whose request timeout is 300 ms, a stream opened before a change made a second
/// later still carries it: the timeout bounds the handler, not the stream it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_outlives_the_request_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut config = runtime::Config::new(listener.local_addr().unwrap(), None, dir.path().to_path_buf());
    config.http.request_timeout = Duration::from_millis(300);
    let platform = runtime::Platform::open(config.clone()).await.unwrap();
    let app = notes::server(&platform).await.unwrap();
    tokio::spawn(async move { platform.run(listener, app).await });
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir).unwrap();
    let audience = runtime::Catalog::new([&notes::SERVICE]).resources(&config);
    let claims = runtime::keys::claims(&config.issuer(), "ann", "acme", "notes:write", audience, 600, None);
    let token = keys.mint(&claims).unwrap();
    let client = reqwest::Client::new();
    let mut stream = Stream::open(&client, &config.url("/api/v1/notes/changes"), &token, None).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let created =
        client.post(config.url("/api/v1/notes")).bearer_auth(&token).json(&json!({"title": "late"})).send().await;
    assert_eq!(created.unwrap().status(), 201);
    assert_eq!(kinds(&stream.events(1, Duration::from_secs(5)).await), ["created"]);
}
