//! No acknowledged write is lost: the notes binary is killed (SIGKILL, no shutdown) while
//! concurrent clients create notes, then started again on the same data, and every note whose
//! creation was answered 201, with its audit row, is there. On SQLite the writes go through the
//! group commit (many requests' transactions in one commit), so this holds the rule that no
//! response leaves before the commit carrying it; on PostgreSQL, each request's own commit.

mod notes_server;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use notes_server::Server;
use serde_json::{Value, json};

/// Concurrent writers, each with a tenant of its own (the rate limit is per tenant).
const WRITERS: usize = 24;

/// Acknowledged creates after which the server is killed (or after 20 s, whichever is first).
const KILL_AFTER: usize = 400;

async fn crash_under_write_load(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let run = uuid::Uuid::new_v4().simple().to_string();
    let tenants: Vec<String> = (0..WRITERS).map(|k| format!("crash-{}-{k}", &run[..12])).collect();
    let acked = Arc::new(AtomicUsize::new(0));
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let writers: Vec<_> = tenants
        .iter()
        .map(|tenant| {
            let (client, acked) = (client.clone(), acked.clone());
            let (url, token) = (s.url("/api/v1/notes"), s.token(tenant, "notes:write"));
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for n in 0.. {
                    let sent = client.post(&url).bearer_auth(&token).json(&json!({"title": format!("n{n}")})).send();
                    let Ok(resp) = sent.await else { break }; // the server is gone
                    match resp.status().as_u16() {
                        201 => {}
                        429 => break, // this tenant's plan is spent
                        other => panic!("create answered {other}"),
                    }
                    let Ok(body) = resp.json::<Value>().await else { break };
                    ids.push(body["id"].as_str().expect("a created note has an id").to_string());
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                ids
            })
        })
        .collect();
    for _ in 0..400 {
        if acked.load(Ordering::SeqCst) >= KILL_AFTER {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let s = s.kill_and_restart().await;
    let mut acknowledged = BTreeSet::new();
    for w in writers {
        acknowledged.extend(w.await.unwrap());
    }
    assert!(acknowledged.len() >= 100, "only {} creates were acknowledged before the kill", acknowledged.len());

    // Every acknowledged note is there after the restart, through the API and in the database.
    let stored = stored(&s, database_url, &tenants).await;
    let missing: Vec<_> = acknowledged.iter().filter(|id| !stored.notes.contains(*id)).collect();
    assert!(missing.is_empty(), "{} of {} acknowledged notes lost: {missing:?}", missing.len(), acknowledged.len());
    let unaudited: Vec<_> = acknowledged.iter().filter(|id| !stored.audited.contains(*id)).collect();
    assert!(unaudited.is_empty(), "acknowledged notes without their audit row: {unaudited:?}");
    let first = acknowledged.iter().next().unwrap();
    let owner = tenants.iter().find(|t| stored.owners.get(first) == Some(*t)).unwrap();
    let resp = client.get(s.url(&format!("/api/v1/notes/{first}"))).bearer_auth(s.token(owner, "notes:read"));
    assert_eq!(resp.send().await.unwrap().status(), 200, "the restarted server serves what it acknowledged");
}

/// What the database holds for the test's tenants.
struct Stored {
    notes: BTreeSet<String>,
    owners: std::collections::HashMap<String, String>,
    /// Note ids named by an `allowed` audit row of `create_note`.
    audited: BTreeSet<String>,
}

async fn stored(s: &Server, database_url: Option<&str>, tenants: &[String]) -> Stored {
    use sqlx::Row;
    sqlx::any::install_default_drivers();
    let url = database_url.map_or_else(
        || format!("sqlite://{}", s.config.data_dir.join(runtime::store::DATABASE_FILE).display()),
        str::to_string,
    );
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let (mut notes, mut owners, mut audited) = (BTreeSet::new(), std::collections::HashMap::new(), BTreeSet::new());
    for tenant in tenants {
        let rows =
            sqlx::query("SELECT id FROM notes WHERE tenant_id = $1").bind(tenant).fetch_all(&pool).await.unwrap();
        for r in rows {
            let id: String = r.get(0);
            owners.insert(id.clone(), tenant.clone());
            notes.insert(id);
        }
        let rows = sqlx::query(
            "SELECT targets FROM audit_events WHERE tenant_id = $1 AND operation = 'create_note' AND outcome = 'allowed'",
        )
        .bind(tenant)
        .fetch_all(&pool)
        .await
        .unwrap();
        for r in rows {
            let targets: Vec<String> = serde_json::from_str(&r.get::<String, _>(0)).unwrap();
            audited.extend(targets);
        }
    }
    Stored { notes, owners, audited }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_under_write_load_keeps_every_acknowledged_write_on_sqlite() {
    crash_under_write_load(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_under_write_load_keeps_every_acknowledged_write_on_postgres() {
    if let Some(url) = notes_server::postgres("the crash test") {
        crash_under_write_load(Some(&url)).await;
    }
}

/// An export whose process stopped before finishing it (its row pending, its lease run out) is
/// finished by the next start of the server; one whose lease runs out while the server runs is
/// taken over when its status is read.
async fn exports_survive_a_stopped_process(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let tenant = format!("resume-{}", uuid::Uuid::now_v7().simple());
    let token = s.token(&tenant, "notes:write");
    let notes = s.url("/api/v1/notes");
    for title in ["one", "two"] {
        client.post(&notes).bearer_auth(&token).json(&json!({"title": title})).send().await.unwrap();
    }
    let started: Value = client
        .post(s.url("/api/v1/exports"))
        .bearer_auth(&token)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = format!("{}/{}", s.url("/api/v1/exports"), started["id"].as_str().unwrap());
    assert_eq!(notes_server::export_finished(&client, &url, &token).await["state"], "done");
    // As its process would have left it, killed mid-way: pending, its lease run out, no file.
    let orphan = |pool: sqlx::AnyPool, id: String| async move {
        sqlx::query(
            "UPDATE note_exports SET state = 'pending', claimed_until = 0, blob_id = NULL, notes = NULL WHERE id = $1",
        )
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
    };
    orphan(notes_server::pool(&s, database_url).await, started["id"].as_str().unwrap().to_string()).await;
    let s = s.kill_and_restart().await;
    let resumed = notes_server::export_finished(&client, &url, &token).await;
    assert_eq!((resumed["state"].as_str(), resumed["notes"].as_i64()), (Some("done"), Some(2)), "{resumed}");
    let file = client.get(format!("{url}/file")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(file.status(), 200);
    assert_eq!(file.text().await.unwrap().lines().count(), 3);

    // While the server runs: the first read of its status after the lease takes it over.
    orphan(notes_server::pool(&s, database_url).await, started["id"].as_str().unwrap().to_string()).await;
    assert_eq!(notes_server::export_finished(&client, &url, &token).await["state"], "done");
}

on_both_backends!(exports_survive_a_stopped_process: an_unfinished_export_is_finished_after_a_restart_on_sqlite, an_unfinished_export_is_finished_after_a_restart_on_postgres, "notes export resume");
