//! The vault for real, on SQLite and on PostgreSQL: versions, archive/restore, leases, folders,
//! tags, personal tokens, tenant isolation, concurrency, encryption and fail-closed audit.

mod common;

use serde_json::{Value, json};

/// Tenant `acme` with admin `alice` and a folder `prod`; returns (admin write token, folder id).
async fn acme(server: &common::TestServer) -> (String, String) {
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (s, f) = server.call("POST", "/api/v1/folders", &admin, Some(json!({"name": "prod"}))).await;
    assert_eq!(s, 201, "create folder: {f}");
    (admin, f["data"]["id"].as_str().unwrap().to_string())
}

/// Grants `principal` `permissions` on `folder`; the created grant.
async fn grant_on_folder(
    server: &common::TestServer,
    admin: &str,
    folder: &str,
    principal: &str,
    permissions: Value,
) -> Value {
    let body = json!({"principal": principal, "permissions": permissions});
    let (s, g) = server.call("POST", &format!("/api/v1/folders/{folder}/grants"), admin, Some(body)).await;
    assert_eq!(s, 201, "{g}");
    g
}

async fn store(server: &common::TestServer, token: &str, key: &str, value: &str, folder: &str) -> Value {
    let (s, b) = server
        .call(
            "POST",
            "/api/v1/credentials",
            token,
            Some(json!({"key": key, "value": value, "folder_id": folder, "tags": ["prod"]})),
        )
        .await;
    assert_eq!(s, 201, "store {key}: {b}");
    b
}

on_both_backends!(versions_archive_and_restore, |server| {
    let (admin, folder) = acme(&server).await;
    let created = store(&server, &admin, "db", "v1-secret", &folder).await;
    assert_eq!(created["data"]["current_version"], 1);
    assert!(created["data"].get("value").is_none(), "metadata never carries the secret");
    for n in 2..=3 {
        let (s, b) = server
            .call(
                "POST",
                "/api/v1/credentials/db/rotate",
                &admin,
                Some(json!({"value": format!("v{n}-secret"), "expected_version": n - 1})),
            )
            .await;
        assert_eq!(s, 200, "rotate to {n}: {b}");
        assert_eq!(b["data"]["current_version"], n);
    }
    let (s, b) = server
        .call("POST", "/api/v1/credentials/db/rotate", &admin, Some(json!({"value": "stale", "expected_version": 1})))
        .await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("credential/version-conflict")), "{b}");
    assert_eq!(b["error"]["details"]["current_version"], 3);
    let (_, meta) = server.call("GET", "/api/v1/credentials/db", &admin, None).await;
    let versions: Vec<i64> =
        meta["data"]["versions"].as_array().unwrap().iter().map(|v| v["version"].as_i64().unwrap()).collect();
    assert_eq!(versions, vec![3, 2, 1], "history newest first");
    for (v, want) in [(1, "v1-secret"), (3, "v3-secret")] {
        let (s, b) = server.call("POST", "/api/v1/credentials/db/reveal", &admin, Some(json!({"version": v}))).await;
        assert_eq!((s, b["data"]["value"].as_str()), (200, Some(want)), "old versions stay readable");
    }
    // Archive: not revealable, not leasable, not rotatable; listed only when asked for.
    let (s, b) = server.call("POST", "/api/v1/credentials/db/archive", &admin, None).await;
    assert_eq!((s, b["data"]["state"].as_str()), (200, Some("archived")));
    for (path, body) in [
        ("/api/v1/credentials/db/reveal", json!({})),
        ("/api/v1/leases", json!({"credential_key": "db"})),
        ("/api/v1/credentials/db/rotate", json!({"value": "x"})),
    ] {
        let (s, b) = server.call("POST", path, &admin, Some(body)).await;
        assert_eq!((s, b["error"]["code"].as_str()), (409, Some("credential/archived")), "{path}: {b}");
    }
    let (_, active) = server.call("GET", "/api/v1/credentials", &admin, None).await;
    assert_eq!(active["meta"]["total"], 0);
    let (_, archived) = server.call("GET", "/api/v1/credentials?state=archived", &admin, None).await;
    assert_eq!(archived["meta"]["total"], 1);
    let (s, b) = server.call("POST", "/api/v1/credentials/db/restore", &admin, None).await;
    assert_eq!((s, b["data"]["state"].as_str()), (200, Some("active")));
    let (s, b) = server.call("POST", "/api/v1/credentials/db/reveal", &admin, Some(json!({}))).await;
    assert_eq!((s, b["data"]["value"].as_str()), (200, Some("v3-secret")));
});

on_both_backends!(leases_are_single_use_and_capped, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "api", "s3cret", &folder).await;
    let (s, lease) = server
        .call(
            "POST",
            "/api/v1/leases",
            &admin,
            Some(json!({"credential_key": "api", "ttl_seconds": 86400, "purpose": "deploy"})),
        )
        .await;
    assert_eq!(s, 201, "{lease}");
    assert_eq!(lease["data"]["ttl_seconds"], 3600, "TTL capped by the server maximum");
    let id = lease["data"]["id"].as_str().unwrap().to_string();
    let (s, secret) = server.call("POST", "/api/v1/leases/read", &admin, Some(json!({"lease_id": id}))).await;
    assert_eq!((s, secret["data"]["value"].as_str()), (200, Some("s3cret")));
    let (s, again) = server.call("POST", "/api/v1/leases/read", &admin, Some(json!({"lease_id": id}))).await;
    assert_eq!((s, again["error"]["code"].as_str()), (410, Some("lease/unavailable")), "second redeem: {again}");
    // Another user of the same tenant cannot redeem or even see it.
    let (_, l2) = server.call("POST", "/api/v1/leases", &admin, Some(json!({"credential_key": "api"}))).await;
    let id2 = l2["data"]["id"].as_str().unwrap().to_string();
    let bob = server.token_for("bob", "acme", "vault:admin");
    let (s, _) = server.call("POST", "/api/v1/leases/read", &bob, Some(json!({"lease_id": id2}))).await;
    assert_eq!(s, 404);
    let (s, revoked) = server.call("DELETE", &format!("/api/v1/leases/{id2}"), &admin, None).await;
    assert_eq!((s, revoked["data"]["state"].as_str()), (200, Some("revoked")));
    let (s, _) = server.call("POST", "/api/v1/leases/read", &admin, Some(json!({"lease_id": id2}))).await;
    assert_eq!(s, 410, "revoked leases cannot be redeemed");
    let (_, mine) = server.call("GET", "/api/v1/leases?state=redeemed", &admin, None).await;
    assert_eq!(mine["meta"]["total"], 1);
});

on_both_backends!(fifty_concurrent_redeems_give_exactly_one_secret, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "race", "only-once", &folder).await;
    let (_, lease) = server.call("POST", "/api/v1/leases", &admin, Some(json!({"credential_key": "race"}))).await;
    let id = lease["data"]["id"].as_str().unwrap().to_string();
    let server = std::sync::Arc::new(server);
    let handles: Vec<_> = (0..50)
        .map(|_| {
            let (server, admin, id) = (server.clone(), admin.clone(), id.clone());
            tokio::spawn(async move {
                server.call("POST", "/api/v1/leases/read", &admin, Some(json!({"lease_id": id}))).await
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for h in handles {
        let (s, b) = h.await.unwrap();
        if s == 200 {
            assert_eq!(b["data"]["value"], "only-once");
        }
        statuses.push(s);
    }
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "exactly one redeem succeeds: {statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 410).count(), 49, "the others get 410: {statuses:?}");
});

on_both_backends!(ten_concurrent_rotations_give_contiguous_versions, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "hot", "v1", &folder).await;
    let server = std::sync::Arc::new(server);
    let handles: Vec<_> = (0..10)
        .map(|i| {
            let (server, admin) = (server.clone(), admin.clone());
            tokio::spawn(async move {
                server
                    .call("POST", "/api/v1/credentials/hot/rotate", &admin, Some(json!({"value": format!("r{i}")})))
                    .await
            })
        })
        .collect();
    for h in handles {
        let (s, b) = h.await.unwrap();
        assert_eq!(s, 200, "{b}");
    }
    let (_, meta) = server.call("GET", "/api/v1/credentials/hot", &admin, None).await;
    let versions: Vec<i64> =
        meta["data"]["versions"].as_array().unwrap().iter().map(|v| v["version"].as_i64().unwrap()).collect();
    assert_eq!(versions, (1..=11).rev().collect::<Vec<_>>(), "no lost update, no gap");
    // With expected_version, concurrent writers race: one wins, the rest get 409.
    let handles: Vec<_> = (0..5)
        .map(|i| {
            let (server, admin) = (server.clone(), admin.clone());
            tokio::spawn(async move {
                server
                    .call(
                        "POST",
                        "/api/v1/credentials/hot/rotate",
                        &admin,
                        Some(json!({"value": format!("c{i}"), "expected_version": 11})),
                    )
                    .await
                    .0
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for h in handles {
        statuses.push(h.await.unwrap());
    }
    statuses.sort_unstable();
    assert_eq!(statuses, vec![200, 409, 409, 409, 409]);
});

on_both_backends!(tenants_are_isolated, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "shared-name", "acme-secret", &folder).await;
    server.tenant("globex", "gina").await;
    let gina = server.token_for("gina", "globex", "vault:admin");
    for (method, path, body) in [
        ("GET", "/api/v1/credentials/shared-name".to_string(), None),
        ("POST", "/api/v1/credentials/shared-name/reveal".to_string(), Some(json!({}))),
        ("POST", "/api/v1/credentials/shared-name/rotate".to_string(), Some(json!({"value": "pwned"}))),
        ("PATCH", format!("/api/v1/folders/{folder}"), Some(json!({"name": "mine"}))),
        ("POST", "/api/v1/leases".to_string(), Some(json!({"credential_key": "shared-name"}))),
        ("GET", "/api/v1/tenants/acme/role-assignments".to_string(), None),
    ] {
        let (s, b) = server.call(method, &path, &gina, body).await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (404, Some("resource/not-found")),
            "{method} {path} from another tenant: {b}"
        );
    }
    let (_, list) = server.call("GET", "/api/v1/credentials", &gina, None).await;
    assert_eq!(list["meta"]["total"], 0, "totals count only the caller's tenant");
    let (_, mine) = server.call("POST", "/api/v1/credentials/shared-name/reveal", &admin, Some(json!({}))).await;
    assert_eq!(mine["data"]["value"], "acme-secret", "the victim's secret is unchanged");
});

on_both_backends!(grants_decide_what_members_reach, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "in-folder", "x", &folder).await;
    let bob = server.token_for("bob", "acme", "vault:write");
    // Deny by default: invisible, and storing into the folder needs canStore even with vault:write.
    let (s, _) = server.call("GET", "/api/v1/credentials/in-folder", &bob, None).await;
    assert_eq!(s, 404);
    let (s, b) = server
        .call("POST", "/api/v1/credentials", &bob, Some(json!({"key": "bobs", "value": "v", "folder_id": folder})))
        .await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("auth/forbidden")), "{b}");
    let g = grant_on_folder(&server, &admin, &folder, "bob", json!(["canRead"])).await;
    let (s, _) = server.call("GET", "/api/v1/credentials/in-folder", &bob, None).await;
    assert_eq!(s, 200, "a folder grant covers what the folder holds");
    let (s, b) = server.call("POST", "/api/v1/credentials/in-folder/reveal", &bob, Some(json!({}))).await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("auth/forbidden")), "canRead does not reveal");
    let (s, _) = server
        .call(
            "POST",
            &format!("/api/v1/folders/{folder}/grants"),
            &admin,
            Some(json!({"principal": "bob", "permissions": ["canStore", "canReveal"]})),
        )
        .await;
    assert_eq!(s, 201);
    let (s, _) = server
        .call("POST", "/api/v1/credentials", &bob, Some(json!({"key": "bobs", "value": "v", "folder_id": folder})))
        .await;
    assert_eq!(s, 201, "canStore on the folder lets bob store there");
    // Revoking the grant takes effect on the very next request.
    let grant_id = g["data"]["id"].as_str().unwrap();
    let (s, _) = server.call("DELETE", &format!("/api/v1/folders/{folder}/grants/{grant_id}"), &admin, None).await;
    assert_eq!(s, 204);
    let (s, _) = server.call("GET", "/api/v1/credentials/in-folder", &bob, None).await;
    assert_eq!(s, 404);
    let (s, b) = server.call("GET", "/api/v1/grants", &bob, None).await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("auth/insufficient-scope")), "{b}");
});

on_both_backends!(folders_and_tags, |server| {
    let (admin, folder) = acme(&server).await;
    let (s, sub) =
        server.call("POST", "/api/v1/folders", &admin, Some(json!({"name": "db", "parent_id": folder}))).await;
    assert_eq!((s, sub["data"]["path"].as_str()), (201, Some("/prod/db")));
    let sub_id = sub["data"]["id"].as_str().unwrap().to_string();
    let (s, _) = server.call("POST", "/api/v1/folders", &admin, Some(json!({"name": "db", "parent_id": folder}))).await;
    assert_eq!(s, 409, "sibling names are unique");
    let (s, b) =
        server.call("PATCH", &format!("/api/v1/folders/{folder}"), &admin, Some(json!({"parent_id": sub_id}))).await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("resource/conflict")), "no cycles: {b}");
    store(&server, &admin, "pg", "x", &sub_id).await;
    let (s, b) = server.call("DELETE", &format!("/api/v1/folders/{sub_id}"), &admin, None).await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("folder/not-empty")), "{b}");
    // Tags: rename, merge, prune.
    let (s, _) = server.call("PATCH", "/api/v1/credentials/pg", &admin, Some(json!({"tags": ["db", "legacy"]}))).await;
    assert_eq!(s, 200);
    let (s, t) = server.call("PATCH", "/api/v1/tags/legacy", &admin, Some(json!({"new_name": "old"}))).await;
    assert_eq!(
        (s, t["data"]["name"].as_str(), t["data"]["credential_count"].as_i64()),
        (200, Some("old"), Some(1)),
        "{t}"
    );
    let (s, t) = server
        .call("POST", "/api/v1/tags/merge", &admin, Some(json!({"sources": ["old", "db"], "target": "database"})))
        .await;
    assert_eq!((s, t["data"]["credential_count"].as_i64()), (200, Some(1)), "{t}");
    let (_, meta) = server.call("GET", "/api/v1/credentials/pg", &admin, None).await;
    assert_eq!(meta["data"]["tags"], json!(["database"]));
    let (_, dry) = server.call("POST", "/api/v1/tags/prune", &admin, Some(json!({"dry_run": true}))).await;
    assert_eq!(dry["data"]["removed"], json!(["prod"]), "`prod` is on no credential any more: {dry}");
});

on_both_backends!(personal_tokens_work_once_created_and_die_when_revoked, |server| {
    let (admin, _) = acme(&server).await;
    let (s, created) =
        server.call("POST", "/api/v1/tokens", &admin, Some(json!({"name": "ci", "scopes": ["vault:read"]}))).await;
    assert_eq!(s, 201, "{created}");
    let secret = created["data"]["token"].as_str().unwrap().to_string();
    let id = created["data"]["id"].as_str().unwrap().to_string();
    let (s, _) = server.call("GET", "/api/v1/credentials", &secret, None).await;
    assert_eq!(s, 200, "the personal token authenticates");
    let (s, b) = server.call("POST", "/api/v1/folders", &secret, Some(json!({"name": "x"}))).await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("auth/insufficient-scope")), "its scopes apply");
    let (_, listed) = server.call("GET", "/api/v1/tokens", &admin, None).await;
    assert!(listed["data"][0].get("token").is_none(), "the secret is shown only once");
    let reader = server.token_for("alice", "acme", "vault:read");
    let (s, b) =
        server.call("POST", "/api/v1/tokens", &reader, Some(json!({"name": "up", "scopes": ["vault:admin"]}))).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (403, Some("auth/forbidden")),
        "no escalation beyond the caller's scopes"
    );
    let (s, _) = server.call("DELETE", &format!("/api/v1/tokens/{id}"), &admin, None).await;
    assert_eq!(s, 204);
    let (s, b) = server.call("GET", "/api/v1/credentials", &secret, None).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (401, Some("auth/invalid-token")),
        "revoked: 401 on the very next request"
    );
    let expired_at = (chrono::Utc::now() + chrono::Duration::seconds(1)).to_rfc3339();
    let (_, short) = server
        .call(
            "POST",
            "/api/v1/tokens",
            &admin,
            Some(json!({"name": "short", "scopes": ["vault:read"], "expires_at": expired_at})),
        )
        .await;
    let short = short["data"]["token"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (s, _) = server.call("GET", "/api/v1/credentials", &short, None).await;
    assert_eq!(s, 401, "expired: 401");
});

on_both_backends!(every_operation_is_audited_allowed_or_denied, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "k", "v", &folder).await;
    let reader = server.token_for("alice", "acme", "vault:read");
    let (s, _) = server.call("POST", "/api/v1/credentials/k/rotate", &reader, Some(json!({"value": "w"}))).await;
    assert_eq!(s, 403);
    let (s, _) = server.call("GET", "/api/v1/credentials/missing", &admin, None).await;
    assert_eq!(s, 404);
    let (_, audit) = server.call("GET", "/api/v1/audit?per_page=100", &admin, None).await;
    let rows = audit["data"].as_array().unwrap();
    let find = |op: &str, outcome: &str| rows.iter().find(|r| r["operation"] == op && r["outcome"] == outcome).cloned();
    let denied = find("rotate_credential", "denied").expect("scope denial audited");
    assert_eq!(denied["error_code"], "auth/insufficient-scope");
    assert_eq!(denied["status"], 403);
    assert!(find("get_credential", "failed").is_some(), "a 404 is audited as failed");
    let stored = find("store_credential", "allowed").expect("store audited");
    assert_eq!(stored["targets"], json!(["k"]));
    assert_eq!(stored["actor"], "alice");
    assert_eq!(stored["auth_method"], "jwt");
    assert!(!stored["request_id"].as_str().unwrap().is_empty());
    // Newest first.
    // Compared as instants: RFC 3339 leaves out a fraction of zero (`…:33Z` after `…:33.004Z`).
    let times: Vec<chrono::DateTime<chrono::FixedOffset>> = rows
        .iter()
        .map(|r| chrono::DateTime::parse_from_rfc3339(r["occurred_at"].as_str().unwrap()).unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");
});

on_both_backends!(audit_rows_name_the_inputs_the_spec_declares_as_targets, |server| {
    // The spec's `audit_targets`: several fields in order, a list spread out, kept on refusals too.
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "pg", "x", &folder).await;
    let (s, _) = server.call("PATCH", "/api/v1/credentials/pg", &admin, Some(json!({"tags": ["db", "legacy"]}))).await;
    assert_eq!(s, 200);
    let (s, _) = server.call("PATCH", "/api/v1/tags/legacy", &admin, Some(json!({"new_name": "old"}))).await;
    assert_eq!(s, 200);
    let merge = json!({"sources": ["old", "db"], "target": "database"});
    let (s, _) = server.call("POST", "/api/v1/tags/merge", &admin, Some(merge)).await;
    assert_eq!(s, 200);
    let grant = grant_on_folder(&server, &admin, &folder, "bob", json!(["canReveal"])).await;
    let grant_id = grant["data"]["id"].as_str().unwrap();
    let (s, _) = server.call("DELETE", &format!("/api/v1/credentials/pg/grants/{grant_id}"), &admin, None).await;
    assert_eq!(s, 404, "a folder's grant is not the credential's");
    let (_, audit) = server.call("GET", "/api/v1/audit?per_page=100", &admin, None).await;
    let rows = audit["data"].as_array().unwrap();
    let targets = |op: &str| {
        rows.iter().find(|r| r["operation"] == op).unwrap_or_else(|| panic!("{op} audited: {audit}"))["targets"].clone()
    };
    assert_eq!(targets("update_credential"), json!(["pg"]));
    assert_eq!(targets("rename_tag"), json!(["legacy", "old"]));
    assert_eq!(targets("merge_tags"), json!(["old", "db", "database"]));
    let created = targets("create_folder_grant");
    assert_eq!(created.as_array().unwrap()[..2], [json!(folder), json!("bob")], "{created}");
    assert_eq!(targets("delete_credential_grant"), json!(["pg", grant_id]), "a refused call keeps its targets");
});

on_both_backends!(a_failed_audit_write_fails_the_operation_and_returns_no_secret, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "guarded", "TOP-SECRET-VALUE", &folder).await;
    server.state.store.fail_next_audit_writes(1);
    let resp = server
        .client()
        .post(server.url("/api/v1/credentials/guarded/reveal"))
        .bearer_auth(&admin)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 500);
    let text = resp.text().await.unwrap();
    assert!(!text.contains("TOP-SECRET-VALUE"), "no plaintext in the error: {text}");
    assert!(text.contains("server/internal"), "{text}");
    // A write whose audit row fails leaves nothing behind.
    server.state.store.fail_next_audit_writes(1);
    let (s, _) = server
        .call("POST", "/api/v1/credentials", &admin, Some(json!({"key": "ghost", "value": "g", "folder_id": folder})))
        .await;
    assert_eq!(s, 500);
    let (s, _) = server.call("GET", "/api/v1/credentials/ghost", &admin, None).await;
    assert_eq!(s, 404, "nothing committed");
    // A redeem whose audit row fails does not spend the lease.
    let (_, lease) = server.call("POST", "/api/v1/leases", &admin, Some(json!({"credential_key": "guarded"}))).await;
    let id = lease["data"]["id"].as_str().unwrap().to_string();
    server.state.store.fail_next_audit_writes(1);
    let (s, _) = server.call("POST", "/api/v1/leases/read", &admin, Some(json!({"lease_id": id}))).await;
    assert_eq!(s, 500);
    let (s, b) = server.call("POST", "/api/v1/leases/read", &admin, Some(json!({"lease_id": id}))).await;
    assert_eq!((s, b["data"]["value"].as_str()), (200, Some("TOP-SECRET-VALUE")), "the lease is still redeemable");
});

on_both_backends!(a_ciphertext_moved_to_another_row_does_not_decrypt, |server| {
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "a", "secret-a", &folder).await;
    store(&server, &admin, "b", "secret-b", &folder).await;
    server.tenant("globex", "gina").await;
    let gina = server.token_for("gina", "globex", "vault:admin");
    let (_, gf) = server.call("POST", "/api/v1/folders", &gina, Some(json!({"name": "g"}))).await;
    store(&server, &gina, "a", "secret-g", gf["data"]["id"].as_str().unwrap()).await;
    let pool = server.state.store.pool();
    let copy = |from_tenant: &'static str, from_key: &'static str, to_tenant: &'static str, to_key: &'static str| async move {
        let row = sqlx::query(
            "SELECT sealed, data_key_id FROM credential_versions WHERE tenant_id = $1 AND key = $2 AND version = 1",
        )
        .bind(from_tenant)
        .bind(from_key)
        .fetch_one(pool)
        .await
        .unwrap();
        let sealed: Vec<u8> = sqlx::Row::get(&row, 0);
        let dk: String = sqlx::Row::get(&row, 1);
        sqlx::query("UPDATE credential_versions SET sealed = $1, data_key_id = $2 WHERE tenant_id = $3 AND key = $4 AND version = 1")
            .bind(sealed)
            .bind(dk)
            .bind(to_tenant)
            .bind(to_key)
            .execute(pool)
            .await
            .unwrap();
    };
    copy("acme", "a", "acme", "b").await; // to another credential
    copy("acme", "a", "globex", "a").await; // to another tenant, same key
    for (token, key) in [(&admin, "b"), (&gina, "a")] {
        let resp = server
            .client()
            .post(server.url(&format!("/api/v1/credentials/{key}/reveal")))
            .bearer_auth(token)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 500, "moved ciphertext must not decrypt");
        let text = resp.text().await.unwrap();
        assert!(!text.contains("secret-a"), "{text}");
    }
});

on_both_backends!(key_rotation_keeps_every_old_version_readable, |server| {
    let (admin, folder) = acme(&server).await;
    for i in 0..20 {
        store(&server, &admin, &format!("k{i}"), &format!("value-{i}"), &folder).await;
    }
    let before: String = sqlx::Row::get(
        &sqlx::query("SELECT data_key_id FROM credential_versions WHERE key = 'k0'")
            .fetch_one(server.state.store.pool())
            .await
            .unwrap(),
        0,
    );
    let report = vault::crypto::rotate(&server.state.store, server.dir.path()).await.expect("rotate");
    assert!(report.rewrapped >= 1);
    // The running server keeps serving old versions and writes new ones under the new key.
    for i in 0..20 {
        let (s, b) = server.call("POST", &format!("/api/v1/credentials/k{i}/reveal"), &admin, Some(json!({}))).await;
        assert_eq!((s, b["data"]["value"].as_str()), (200, Some(format!("value-{i}").as_str())));
    }
    store(&server, &admin, "after", "new", &folder).await;
    let after: String = sqlx::Row::get(
        &sqlx::query("SELECT data_key_id FROM credential_versions WHERE key = 'after'")
            .fetch_one(server.state.store.pool())
            .await
            .unwrap(),
        0,
    );
    assert_ne!(before, after, "new writes use the new data key");
    assert_eq!(after, report.data_key);
});

// Every scoped operation records an audit row, as the vault's product requirements state. A request
// the gate admitted and the decoder then refused (bad key, unknown enum value, malformed JSON,
// unknown field) never reaches the vault, yet it is audited: one `failed` row with the status and
// code it was answered.
on_both_backends!(requests_refused_as_invalid_after_the_gate_leave_one_failed_audit_row, |server| {
    let (admin, _) = acme(&server).await;
    let client = server.client();
    let post = |body: &'static str| {
        client
            .post(server.url("/api/v1/credentials"))
            .bearer_auth(&admin)
            .header("content-type", "application/json")
            .body(body)
    };
    let cases = [
        (
            "a key with a space",
            post(r#"{"key": "bad key!", "value": "v"}"#),
            "store_credential",
            422,
            "request/invalid",
        ),
        (
            "an unknown kind",
            client.get(server.url("/api/v1/credentials?kind=bogus")).bearer_auth(&admin),
            "list_credentials",
            422,
            "request/invalid",
        ),
        ("malformed JSON", post(r#"{"key": "#), "store_credential", 400, "request/malformed"),
        (
            "an unknown field",
            post(r#"{"key": "k2", "value": "v", "tenant_id": "globex"}"#),
            "store_credential",
            422,
            "request/invalid",
        ),
    ];
    let mut sent = Vec::new();
    for (i, (what, rb, op, status, code)) in cases.into_iter().enumerate() {
        let id = format!("invalid-input-{i}");
        let resp = rb.header("x-request-id", &id).send().await.unwrap();
        let got = resp.status().as_u16();
        let b: Value = resp.json().await.unwrap();
        assert_eq!((got, b["error"]["code"].as_str()), (status, Some(code)), "{what}: {b}");
        sent.push((what, id, op, status, code));
    }
    let (s, audit) = server.call("GET", "/api/v1/audit?per_page=100", &admin, None).await;
    assert_eq!(s, 200, "{audit}");
    let rows = audit["data"].as_array().unwrap();
    for (what, id, op, status, code) in sent {
        let mine: Vec<&Value> = rows.iter().filter(|r| r["request_id"] == id.as_str()).collect();
        assert_eq!(mine.len(), 1, "{what}: exactly one audit row for request {id}: {rows:?}");
        let row = mine[0];
        assert_eq!(
            (&row["operation"], &row["outcome"], &row["status"], &row["error_code"]),
            (&json!(op), &json!("failed"), &json!(status), &json!(code)),
            "{what}: {row}"
        );
        assert_eq!((&row["actor"], &row["auth_method"]), (&json!("alice"), &json!("jwt")), "{what}: {row}");
        assert_eq!(row["targets"], json!([]), "{what}: invalid input names no target");
    }
});

/// A request the gate admitted and the whole-request deadline then cut off (its body trickled
/// in) answers 408 and still leaves its `failed` audit row, like any request past the gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_timed_out_after_the_gate_leaves_a_failed_audit_row() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |c, _| {
        c.http.request_timeout = std::time::Duration::from_secs(1);
    })
    .await
    .unwrap();
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let mut stream = tokio::net::TcpStream::connect(server.base.trim_start_matches("http://")).await.unwrap();
    let head = format!(
        "POST /api/v1/credentials HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin}\r\nX-Request-Id: slow-1\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut answer)).await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&answer[..n]).to_string();
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    // The 408 does not wait for its audit row (the deadline has passed): it follows at once.
    let mut audit = Value::Null;
    for _ in 0..50 {
        let (s, page) = server.call("GET", "/api/v1/audit?per_page=100", &admin, None).await;
        assert_eq!(s, 200, "{page}");
        audit = page;
        if audit["data"].as_array().unwrap().iter().any(|r| r["request_id"] == "slow-1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let rows: Vec<&Value> = audit["data"].as_array().unwrap().iter().filter(|r| r["request_id"] == "slow-1").collect();
    assert_eq!(rows.len(), 1, "one audit row for the request cut off: {audit}");
    assert_eq!(
        (&rows[0]["operation"], &rows[0]["outcome"], &rows[0]["status"], &rows[0]["error_code"]),
        (&json!("store_credential"), &json!("failed"), &json!(408), &json!("request/timeout")),
        "{}",
        rows[0]
    );
}

on_both_backends!(reveal_decides_from_one_read_of_access_credential_and_version, |server| {
    // A reveal reads the caller's role, grants and folders, the credential and the version in
    // one statement: each way access is decided must still hold.
    let (admin, folder) = acme(&server).await;
    let (s, sub) =
        server.call("POST", "/api/v1/folders", &admin, Some(json!({"name": "db", "parent_id": folder}))).await;
    assert_eq!(s, 201, "{sub}");
    let sub = sub["data"]["id"].as_str().unwrap().to_string();
    store(&server, &admin, "deep", "first", &sub).await;
    let (s, b) = server.call("POST", "/api/v1/credentials/deep/rotate", &admin, Some(json!({"value": "second"}))).await;
    assert_eq!(s, 200, "{b}");
    store(&server, &admin, "direct", "plain", &folder).await;
    let reveal = |key: &str, body: Value, token: &str| {
        let (path, token) = (format!("/api/v1/credentials/{key}/reveal"), token.to_string());
        let server = &server;
        async move { server.call("POST", &path, &token, Some(body)).await }
    };
    let bob = server.token_for("bob", "acme", "vault:read");
    let (s, _) = reveal("deep", json!({}), &bob).await;
    assert_eq!(s, 404, "no role and no grant: invisible");
    // A grant on the parent folder reaches a credential in its subfolder; one on another
    // credential is a second grant of the same user.
    for (path, permissions) in [
        (format!("/api/v1/folders/{folder}/grants"), json!(["canReveal"])),
        ("/api/v1/credentials/direct/grants".to_string(), json!(["canRead"])),
    ] {
        let (s, g) =
            server.call("POST", &path, &admin, Some(json!({"principal": "bob", "permissions": permissions}))).await;
        assert_eq!(s, 201, "{g}");
    }
    let (s, b) = reveal("deep", json!({}), &bob).await;
    assert_eq!((s, b["data"]["value"].as_str(), b["data"]["version"].as_i64()), (200, Some("second"), Some(2)), "{b}");
    let (s, b) = reveal("deep", json!({"version": 1}), &bob).await;
    assert_eq!((s, b["data"]["value"].as_str()), (200, Some("first")), "an older version: {b}");
    let (s, b) = reveal("deep", json!({"version": 9}), &bob).await;
    assert_eq!(
        (s, b["error"]["code"].as_str(), b["error"]["details"]["version"].as_i64()),
        (404, Some("resource/not-found"), Some(9)),
        "{b}"
    );
    // `direct` is in the granted folder too: its folder's canReveal covers it beside its own canRead.
    let (s, b) = reveal("direct", json!({}), &bob).await;
    assert_eq!((s, b["data"]["value"].as_str()), (200, Some("plain")), "{b}");
    let carol = server.token_for("carol", "acme", "vault:read");
    let (s, b) = server
        .call(
            "POST",
            "/api/v1/credentials/direct/grants",
            &admin,
            Some(json!({"principal": "carol", "permissions": ["canRead"]})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = reveal("direct", json!({}), &carol).await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("auth/forbidden")), "canRead alone does not reveal: {b}");
    let (s, _) = reveal("deep", json!({}), &carol).await;
    assert_eq!(s, 404, "a grant on another credential reaches nothing else");
    let (s, b) = reveal("nope", json!({}), &admin).await;
    assert_eq!((s, b["error"]["code"].as_str()), (404, Some("resource/not-found")), "{b}");
    let (s, _) = server.call("POST", "/api/v1/credentials/deep/archive", &admin, Some(json!({}))).await;
    assert_eq!(s, 200);
    let (s, b) = reveal("deep", json!({}), &admin).await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("credential/archived")), "{b}");
    let (s, _) = server.call("POST", "/api/v1/credentials/deep/restore", &admin, Some(json!({}))).await;
    assert_eq!(s, 200);
    // A second server over the same data has no data key cached: its first reveal loads it.
    let beside = server.beside().await;
    let admin2 = beside.token_for("alice", "acme", "vault:admin");
    let (s, b) = beside.call("POST", "/api/v1/credentials/deep/reveal", &admin2, Some(json!({}))).await;
    assert_eq!((s, b["data"]["value"].as_str()), (200, Some("second")), "{b}");
    let (_, audit) = server.call("GET", "/api/v1/audit?operation=reveal_credential&per_page=100", &admin, None).await;
    let outcomes: Vec<(&str, i64)> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["outcome"].as_str().unwrap(), e["status"].as_i64().unwrap()))
        .collect();
    for expected in [("allowed", 200), ("denied", 403), ("failed", 404), ("failed", 409)] {
        assert!(outcomes.contains(&expected), "every reveal is audited with its outcome: {expected:?} in {outcomes:?}");
    }
});

on_both_backends!(master_keys_that_are_not_the_databases_stop_the_start, |server| {
    // A data directory whose master key file is not the one this database's data keys were
    // wrapped by (a lost or swapped file, the wrong volume) must not start and then answer 500
    // to every request that seals or opens a secret: it refuses to start, and says why.
    let (admin, folder) = acme(&server).await;
    store(&server, &admin, "kept", "v", &folder).await;
    let file = server.dir.path().join(vault::crypto::MASTER_KEY_FILE);
    let original = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    let refused = server.try_beside().await.err().expect("a start with a new master key is refused").to_string();
    assert!(refused.contains("cannot be unwrapped with the master keys of"), "{refused}");
    // The file back, a second server starts and reveals what the first stored.
    std::fs::write(&file, original).unwrap();
    let beside = server.beside().await;
    let admin2 = beside.token_for("alice", "acme", "vault:admin");
    let (s, b) = beside.call("POST", "/api/v1/credentials/kept/reveal", &admin2, Some(json!({}))).await;
    assert_eq!((s, b["data"]["value"].as_str()), (200, Some("v")), "{b}");
});

on_both_backends!(lists_show_what_each_caller_may_read, |server| {
    // Lists show exactly what the caller may read, decided from the access read with the page (in
    // the page's own statement for an administrator): an administrator's, a member's by grant,
    // and after a change of role.
    let (admin, folder) = acme(&server).await;
    for key in ["a1", "a2", "a3"] {
        store(&server, &admin, key, "v", &folder).await;
    }
    // The page arrives as one JSON document built by the database: any text survives it.
    let description = "quotes \" and \\ backslash, \u{1f} \u{1e} separators, tab\t, é 😀 <b>&amp;</b>";
    let (s, b) = server
        .call(
            "POST",
            "/api/v1/credentials",
            &admin,
            Some(json!({"key": "root", "value": "v", "description": description})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (_, b) = server.call("GET", "/api/v1/credentials?q=backslash", &admin, None).await;
    assert_eq!(b["data"][0]["description"].as_str(), Some(description), "{b}");
    assert_eq!(b["data"][0]["folder_id"], Value::Null, "no folder: {b}");
    assert_eq!(b["data"][0]["tags"], json!([]), "no tags: {b}");
    assert_eq!(
        (b["data"][0]["current_version"].as_i64(), b["data"][0]["state"].as_str()),
        (Some(1), Some("active")),
        "{b}"
    );
    assert!(b["data"][0]["updated_at"].as_str().is_some_and(|t| t.starts_with("20")), "{b}");
    let keys = |b: &Value| {
        b["data"].as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let (s, b) = server.call("GET", "/api/v1/credentials?per_page=2", &admin, None).await;
    assert_eq!((s, keys(&b), b["meta"]["total"].as_i64()), (200, vec!["a1".to_string(), "a2".into()], Some(4)), "{b}");
    assert_eq!(b["data"][0]["tags"], json!(["prod"]), "{b}");
    let (s, b) = server.call("GET", "/api/v1/credentials?per_page=2&page=9", &admin, None).await;
    assert_eq!((s, keys(&b).len(), b["meta"]["total"].as_i64()), (200, 0, Some(4)), "past the end: {b}");
    let (_, b) = server.call("GET", "/api/v1/credentials?q=zzz", &admin, None).await;
    assert_eq!((keys(&b).len(), b["meta"]["total"].as_i64()), (0, Some(0)), "nothing matches: {b}");
    // Tags given in any order list sorted; credentials stored out of order list by key.
    for key in ["m-last", "m-first"] {
        let tags = json!(["zeta", "alpha", "mid-1", "mid.2", "mid_0", "9"]);
        let (s, b) = server
            .call("POST", "/api/v1/credentials", &admin, Some(json!({"key": key, "value": "v", "tags": tags})))
            .await;
        assert_eq!(s, 201, "{b}");
    }
    let (_, b) = server.call("GET", "/api/v1/credentials?q=m-", &admin, None).await;
    assert_eq!(keys(&b), vec!["m-first".to_string(), "m-last".into()], "{b}");
    let (_, stored) = server.call("GET", "/api/v1/credentials/m-first", &admin, None).await;
    assert_eq!(b["data"][0]["tags"], stored["data"]["tags"], "the list and the credential agree on the order: {b}");
    let (_, b) = server.call("GET", "/api/v1/credentials?q=m-&per_page=1&page=2", &admin, None).await;
    assert_eq!(keys(&b), vec!["m-last".to_string()], "{b}");
    for key in ["m-first", "m-last"] {
        let (s, _) = server.call("POST", &format!("/api/v1/credentials/{key}/archive"), &admin, Some(json!({}))).await;
        assert_eq!(s, 200);
    }
    // A member sees nothing until granted, then exactly the granted folder.
    let (s, _) =
        server.call("PUT", "/api/v1/tenants/acme/role-assignments/bob", &admin, Some(json!({"role": "member"}))).await;
    assert!(s == 200 || s == 201, "{s}");
    let bob = server.token_for("bob", "acme", "vault:read");
    let (_, b) = server.call("GET", "/api/v1/credentials", &bob, None).await;
    assert_eq!((keys(&b).len(), b["meta"]["total"].as_i64()), (0, Some(0)), "{b}");
    grant_on_folder(&server, &admin, &folder, "bob", json!(["canRead"])).await;
    let (_, b) = server.call("GET", "/api/v1/credentials", &bob, None).await;
    assert_eq!(
        (keys(&b), b["meta"]["total"].as_i64()),
        (vec!["a1".to_string(), "a2".into(), "a3".into()], Some(3)),
        "{b}"
    );
    // Promoted, bob sees everything on the next request; demoted, the folder again.
    for (role, expected) in [("admin", 4), ("member", 3)] {
        let (s, _) =
            server.call("PUT", "/api/v1/tenants/acme/role-assignments/bob", &admin, Some(json!({"role": role}))).await;
        assert!(s == 200 || s == 201, "{s}");
        let (_, b) = server.call("GET", "/api/v1/credentials", &bob, None).await;
        assert_eq!(b["meta"]["total"].as_i64(), Some(expected), "as {role}: {b}");
        assert_eq!(keys(&b).len() as i64, expected, "as {role}: {b}");
    }
});
