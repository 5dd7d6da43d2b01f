//! Changes to a tenant's folder tree made at the same time, on SQLite and on PostgreSQL: each is
//! decided on the tree as the one before it left it, as one at a time would be. Two folders moved
//! into each other at once never form a cycle; a folder deleted while something is created in it
//! never leaves an orphan behind.

mod common;

use std::collections::HashMap;

use serde_json::{Value, json};
use sqlx::Row;

const ROUNDS: usize = 4;

/// Every folder's parent.
async fn parents(server: &common::TestServer) -> HashMap<String, Option<String>> {
    sqlx::query("SELECT id, parent_id FROM folders WHERE tenant_id = 'acme'")
        .fetch_all(server.state.store.pool())
        .await
        .expect("folders")
        .iter()
        .map(|r| (r.get::<String, _>(0), r.get::<Option<String>, _>(1)))
        .collect()
}

/// Asserts that every folder's parents lead to the top, through folders that exist.
async fn the_tree_is_whole(server: &common::TestServer, what: &str) {
    let tree = parents(server).await;
    for id in tree.keys() {
        let mut seen = vec![id.clone()];
        let mut cur = tree[id].clone();
        while let Some(p) = cur {
            assert!(tree.contains_key(&p), "{what}: folder {id} sits under {p}, which does not exist: {tree:?}");
            assert!(!seen.contains(&p), "{what}: a cycle through {seen:?}: {tree:?}");
            seen.push(p.clone());
            cur = tree[&p].clone();
        }
    }
    let orphans: i64 = sqlx::query(
        "SELECT COUNT(*) FROM credentials c WHERE c.tenant_id = 'acme' AND c.folder_id IS NOT NULL \
         AND NOT EXISTS (SELECT 1 FROM folders f WHERE f.tenant_id = c.tenant_id AND f.id = c.folder_id)",
    )
    .fetch_one(server.state.store.pool())
    .await
    .expect("orphans")
    .get(0);
    assert_eq!(orphans, 0, "{what}: credentials in a folder that does not exist");
}

async fn folder(server: &common::TestServer, admin: &str, body: Value) -> String {
    let (s, f) = server.call("POST", "/api/v1/folders", admin, Some(body)).await;
    assert_eq!(s, 201, "{f}");
    f["data"]["id"].as_str().unwrap().to_string()
}

on_both_backends!(tree_changes_at_once_are_decided_one_after_another, |server| {
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let admin = admin.as_str();
    for round in 0..ROUNDS {
        // Two folders moved into each other at once: one move applies, the other would close a cycle.
        let a = folder(&server, admin, json!({"name": format!("a-{round}")})).await;
        let b = folder(&server, admin, json!({"name": format!("b-{round}")})).await;
        let (to_a, to_b) = (format!("/api/v1/folders/{a}"), format!("/api/v1/folders/{b}"));
        let (ab, ba) = tokio::join!(
            server.call("PATCH", &to_a, admin, Some(json!({"parent_id": b}))),
            server.call("PATCH", &to_b, admin, Some(json!({"parent_id": a}))),
        );
        let mut statuses = [ab.0, ba.0];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "moves into each other: {ab:?} {ba:?}");
        the_tree_is_whole(&server, "after two moves into each other").await;

        // A folder deleted while a subfolder and a credential are created in it.
        let p = folder(&server, admin, json!({"name": format!("p-{round}")})).await;
        let delete = format!("/api/v1/folders/{p}");
        let (deleted, sub, stored) = tokio::join!(
            server.call("DELETE", &delete, admin, None),
            server.call("POST", "/api/v1/folders", admin, Some(json!({"name": "sub", "parent_id": p}))),
            server.call(
                "POST",
                "/api/v1/credentials",
                admin,
                Some(json!({"key": format!("in-{round}"), "value": "v", "folder_id": p}))
            ),
        );
        for (what, (s, b)) in [("delete", &deleted), ("subfolder", &sub), ("credential", &stored)] {
            assert!(*s < 500, "{what}: {s} {b}");
        }
        match deleted.0 {
            204 | 200 => {
                assert_eq!((sub.0, stored.0), (404, 404), "created in a deleted folder: {sub:?} {stored:?}");
            }
            _ => assert_eq!(deleted.1["error"]["code"], "folder/not-empty", "{deleted:?}"),
        }
        the_tree_is_whole(&server, "after a delete and creates at once").await;
    }
});
