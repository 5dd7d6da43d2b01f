//! Requests cancelled at any moment (their client gone, as when a load generator stops or a
//! client times out) leave no connection of the pool inside a transaction. On PostgreSQL every
//! transaction begins on a task of its own (`store::begin_whole`), so a `BEGIN` in flight always
//! completes and is rolled back; before that, a request cancelled during `BEGIN` returned its
//! connection inside a transaction sqlx did not know it had opened, and the next user of that
//! connection failed (a reveal's audit row written inside a leftover read-only transaction: 500).
//! On SQLite the pool's clean-up closes such a connection. Both backends: after a storm of
//! cancelled reads and writes every request that follows succeeds; and a begin abandoned in flight
//! leaves its PostgreSQL connection clean.

mod common;

use std::time::Duration;

use serde_json::json;

on_both_backends!(cancelled_requests_leave_no_connection_inside_a_transaction, |server| {
    server.tenant("acme", "alice").await;
    let token = server.token_for("alice", "acme", "vault:admin");
    let client = server.client();
    for i in 0..20 {
        let resp = client
            .post(server.url("/api/v1/credentials"))
            .bearer_auth(&token)
            .json(&json!({"key": format!("seed-{i}"), "value": "s3cret"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
    }

    // Thousands of requests, each abandoned after 0.1 to 5 ms: many are cut off inside the
    // server, some of them while a transaction begins. (Without begin_whole, one such storm left
    // a PostgreSQL session inside a transaction in about one run of three; hence three.)
    let mut storm = tokio::task::JoinSet::new();
    for i in 0..3600u64 {
        if i % 500 == 0 {
            server.next_rate_window(); // the vault's plan would answer most of them 429
        }
        let (client, token) = (client.clone(), token.clone());
        let (list, reveal, store) = (
            server.url("/api/v1/credentials?per_page=20"),
            server.url(&format!("/api/v1/credentials/seed-{}/reveal", i % 20)),
            server.url("/api/v1/credentials"),
        );
        storm.spawn(async move {
            let request = match i % 3 {
                0 => client.get(list),
                1 => client.post(reveal).json(&json!({})),
                _ => client.post(store).json(&json!({"key": format!("storm-{i}"), "value": "v"})),
            };
            let _ =
                tokio::time::timeout(Duration::from_micros(100 + (i * 397) % 4900), request.bearer_auth(token).send())
                    .await;
        });
        if storm.len() >= 24 {
            storm.join_next().await;
        }
    }
    while storm.join_next().await.is_some() {}
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.next_rate_window();

    // Every connection the pool hands out next is clean: writes, reveals (whose audit rows are
    // writes) and lists all succeed.
    for i in 0..40 {
        let stored = client
            .post(server.url("/api/v1/credentials"))
            .bearer_auth(&token)
            .json(&json!({"key": format!("after-{i}"), "value": "v"}))
            .send()
            .await
            .unwrap();
        assert_eq!(stored.status(), 201, "store after the storm: {}", stored.text().await.unwrap_or_default());
        let revealed = client
            .post(server.url(&format!("/api/v1/credentials/seed-{}/reveal", i % 20)))
            .bearer_auth(&token)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(revealed.status(), 200, "reveal after the storm: {}", revealed.text().await.unwrap_or_default());
        let listed = client.get(server.url("/api/v1/credentials?per_page=5")).bearer_auth(&token).send().await.unwrap();
        assert_eq!(listed.status(), 200, "list after the storm");
    }
});

/// The defect itself, aimed at: sqlx counts a PostgreSQL transaction as begun only once the
/// server has answered its `BEGIN`, and its guard against cancellation rolls back only counted
/// ones; so a `BEGIN` abandoned in flight left its connection inside an uncounted read-only
/// transaction, where the next writer's statements failed. With one connection in the pool,
/// every abandoned read transaction is followed by a write on that same connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transaction_abandoned_while_it_begins_leaves_the_connection_clean() {
    let Some(server) =
        common::TestServer::start_configured(common::Backend::Postgres, |c, _| c.pool.max_connections = Some(1)).await
    else {
        return;
    };
    let store = server.state.store.clone();
    let mut abandoned = 0;
    for i in 0..1500u64 {
        if tokio::time::timeout(Duration::from_micros(i % 250), store.begin_read()).await.is_err() {
            abandoned += 1;
        }
        let mut tx = store.begin().await.unwrap();
        let wrote = sqlx::query("CREATE TABLE IF NOT EXISTS abandoned_begin_probe (n INT)").execute(&mut *tx).await;
        assert!(
            wrote.is_ok(),
            "after {abandoned} abandoned begins, a write ran inside a leftover read-only transaction: {wrote:?}"
        );
        tx.commit().await.unwrap();
    }
    assert!(abandoned > 10, "expected begins abandoned in flight, got {abandoned}");
}
