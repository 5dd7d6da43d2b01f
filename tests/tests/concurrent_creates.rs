//! Requests that create the same thing at the same time, on SQLite and on PostgreSQL: for every
//! operation that writes under a caller-chosen key or a unique field, several identical requests
//! sent at once answer what one at a time would (one success and the operation's conflict for
//! the rest, or a success for each where the operation replaces or reuses what exists), never a
//! 500, and leave one stored row.
//!
//! On PostgreSQL two transactions both see the key free and both insert it; the second breaks
//! the unique key. That violation is mapped once, by the runtime's fault reporter, to the
//! service's `conflict` error role, and operations whose meaning is "replace" or "reuse" write
//! in one statement (`ON CONFLICT`). The coverage check at the end keeps the list here complete:
//! an operation that declares its service's conflict error is either raced here or named, with
//! its reason, as one that changes state without creating under a unique key.

mod common;

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// Identical requests sent at once.
const AT_ONCE: usize = 4;
/// Rounds per case: the window is narrow on a fast machine, so each case races several keys.
const ROUNDS: usize = 4;

/// Sends `requests` (a path and a body each, all with `method`) at the same time; their
/// statuses (sorted) and bodies. None may answer 5xx.
async fn at_once(
    server: &common::TestServer,
    token: &str,
    method: &str,
    requests: Vec<(String, Option<Value>)>,
    idempotency_key: Option<&str>,
) -> (Vec<u16>, Vec<Value>) {
    let sends = requests.into_iter().map(|(path, body)| {
        let mut rb = server
            .client()
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), server.url(&path))
            .bearer_auth(token);
        if let Some(b) = &body {
            rb = rb.json(b);
        }
        if let Some(k) = idempotency_key {
            rb = rb.header("idempotency-key", k);
        }
        async move {
            let resp = rb.send().await.expect("an answer");
            let status = resp.status().as_u16();
            let body = resp.json::<Value>().await.unwrap_or(Value::Null);
            assert!(status < 500, "{method} {path}: {status} {body}");
            (status, body)
        }
    });
    let mut answers = futures_util::future::join_all(sends).await;
    answers.sort_by_key(|(s, _)| *s);
    answers.into_iter().unzip()
}

/// Sends `AT_ONCE` identical requests at the same time.
async fn race(
    server: &common::TestServer,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
    idempotency_key: Option<&str>,
) -> (Vec<u16>, Vec<Value>) {
    at_once(server, token, method, vec![(path.to_string(), body); AT_ONCE], idempotency_key).await
}

/// Asserts one success (`ok`) and the service's conflict (`code`) for every other request.
fn one_wins(what: &str, (statuses, bodies): &(Vec<u16>, Vec<Value>), ok: u16, code: &str) {
    let mut expected = vec![ok];
    expected.extend(std::iter::repeat_n(409, AT_ONCE - 1));
    assert_eq!(statuses, &expected, "{what}: one success, a conflict for the rest: {bodies:?}");
    for body in &bodies[1..] {
        assert_eq!(body["error"]["code"], code, "{what}: {body}");
    }
}

/// Asserts that every request succeeded with `ok`.
fn all_succeed(what: &str, (statuses, bodies): &(Vec<u16>, Vec<Value>), ok: u16) {
    assert_eq!(statuses, &vec![ok; AT_ONCE], "{what}: each request succeeds: {bodies:?}");
}

async fn count(server: &common::TestServer, sql: &'static str, args: &[&str]) -> i64 {
    use sqlx::Row;
    let mut q = sqlx::query(sql);
    for a in args {
        q = q.bind(a.to_string());
    }
    q.fetch_one(server.state.store.pool()).await.expect("count").get::<i64, _>(0)
}

async fn vault(server: &common::TestServer) {
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let admin = admin.as_str();
    let call = |method: &'static str, path: String, body: Value| {
        let (server, admin) = (server, admin.to_string());
        async move {
            let (s, b) = server.call(method, &path, &admin, Some(body)).await;
            assert!(s < 300, "{method} {path}: {s} {b}");
            b
        }
    };
    for round in 0..ROUNDS {
        // store_credential: the key is the caller's.
        let key = format!("db-{round}");
        let answers =
            race(server, admin, "POST", "/api/v1/credentials", Some(json!({"key": key, "value": "s3cret"})), None)
                .await;
        one_wins("store_credential", &answers, 201, "resource/conflict");
        let rows =
            count(server, "SELECT COUNT(*) FROM credentials WHERE tenant_id = $1 AND key = $2", &["acme", &key]).await;
        assert_eq!(rows, 1, "one credential {key}");

        // create_folder: sibling names are unique.
        let name = format!("team-{round}");
        let answers = race(server, admin, "POST", "/api/v1/folders", Some(json!({"name": name})), None).await;
        one_wins("create_folder", &answers, 201, "resource/conflict");
        let rows =
            count(server, "SELECT COUNT(*) FROM folders WHERE tenant_id = $1 AND name = $2", &["acme", &name]).await;
        assert_eq!(rows, 1, "one folder {name}");

        // update_folder: different folders renamed to one free name at once.
        let mut ids = Vec::new();
        for i in 0..AT_ONCE {
            let f = call("POST", "/api/v1/folders".into(), json!({"name": format!("old-{round}-{i}")})).await;
            ids.push(f["data"]["id"].as_str().unwrap().to_string());
        }
        let new = format!("renamed-{round}");
        let renames = ids.iter().map(|id| (format!("/api/v1/folders/{id}"), Some(json!({"name": new})))).collect();
        one_wins("update_folder", &at_once(server, admin, "PATCH", renames, None).await, 200, "resource/conflict");

        // rename_tag: different tags renamed to one free name at once.
        for i in 0..AT_ONCE {
            let body = json!({"key": format!("tagged-{round}-{i}"), "value": "v", "tags": [format!("t-{round}-{i}")]});
            call("POST", "/api/v1/credentials".into(), body).await;
        }
        let target = format!("merged-{round}");
        let renames =
            (0..AT_ONCE).map(|i| (format!("/api/v1/tags/t-{round}-{i}"), Some(json!({"new_name": target})))).collect();
        one_wins("rename_tag", &at_once(server, admin, "PATCH", renames, None).await, 200, "resource/conflict");

        // update_credential with a tag nobody has yet: each credential gets it.
        let shared = format!("shared-{round}");
        let updates = (0..AT_ONCE)
            .map(|i| (format!("/api/v1/credentials/tagged-{round}-{i}"), Some(json!({"tags": [shared]}))))
            .collect();
        all_succeed("update_credential with a new tag", &at_once(server, admin, "PATCH", updates, None).await, 200);
        let rows =
            count(server, "SELECT COUNT(*) FROM credential_tags WHERE tenant_id = $1 AND tag = $2", &["acme", &shared])
                .await;
        assert_eq!(rows, AT_ONCE as i64, "every credential carries {shared}");

        // assign_role (PUT): replacing is idempotent.
        let user = format!("user-{round}");
        let path = format!("/api/v1/tenants/acme/role-assignments/{user}");
        all_succeed(
            "assign_role",
            &race(server, admin, "PUT", &path, Some(json!({"role": "member"})), None).await,
            200,
        );
        let rows = count(
            server,
            "SELECT COUNT(*) FROM role_assignments WHERE tenant_id = $1 AND user_id = $2",
            &["acme", &user],
        )
        .await;
        assert_eq!(rows, 1, "one role assignment for {user}");

        // Grants: one per principal and target; granting again replaces the permissions.
        let folder = &ids[0];
        for path in [format!("/api/v1/credentials/{key}/grants"), format!("/api/v1/folders/{folder}/grants")] {
            let body = json!({"principal": user, "permissions": ["canRead"]});
            let answers = race(server, admin, "POST", &path, Some(body), None).await;
            all_succeed(&format!("POST {path}"), &answers, 201);
            let granted: BTreeSet<&str> = answers.1.iter().map(|b| b["data"]["id"].as_str().unwrap()).collect();
            assert_eq!(granted.len(), 1, "POST {path}: one grant, answered to each request: {granted:?}");
            let rows =
                count(server, "SELECT COUNT(*) FROM grants WHERE tenant_id = $1 AND principal = $2", &["acme", &user])
                    .await;
            assert!(rows <= 2, "one grant per target for {user}");
        }
    }
}

async fn prospector(server: &common::TestServer) {
    // The first requests of a new tenant store its default scoring configuration at once.
    let token = server.team_token("pat", "acme");
    let answers = race(server, &token, "GET", "/v1/prospector/scoring/config", None, None).await;
    all_succeed("get_scoring_config on a new tenant", &answers, 200);
    let config = answers.1[0]["data"].clone();

    // update_scoring_config: without expected_version each update stores a version of its own;
    // with the same expected_version one wins.
    let body = json!({"weights": config["weights"], "parameters": config["parameters"]});
    let answers = race(server, &token, "PUT", "/v1/prospector/scoring/config", Some(body.clone()), None).await;
    all_succeed("update_scoring_config", &answers, 200);
    let versions: BTreeSet<i64> = answers.1.iter().map(|b| b["data"]["version"].as_i64().unwrap()).collect();
    assert_eq!(versions.len(), AT_ONCE, "a version per update: {versions:?}");
    for _ in 0..ROUNDS {
        let (_, now) = server.call("GET", "/v1/prospector/scoring/config", &token, None).await;
        let mut body = body.clone();
        body["expected_version"] = now["data"]["version"].clone();
        let answers = race(server, &token, "PUT", "/v1/prospector/scoring/config", Some(body), None).await;
        one_wins("update_scoring_config with expected_version", &answers, 200, "conflict");
    }

    // scan_leads: one scan of a tenant at a time, and no lead twice.
    let (statuses, bodies) = race(server, &token, "POST", "/v1/prospector/leads/scan", Some(json!({})), None).await;
    assert!(statuses.contains(&200) && statuses.iter().all(|s| [200, 409].contains(s)), "{statuses:?} {bodies:?}");
    let dups = count(
        server,
        "SELECT COUNT(*) FROM (SELECT platform, external_id FROM leads WHERE tenant_id = $1 GROUP BY platform, external_id HAVING COUNT(*) > 1) d",
        &["acme"],
    ).await;
    assert_eq!(dups, 0, "no lead stored twice");
    let (_, list) = server.call("GET", "/v1/prospector/leads?per_page=20", &token, None).await;
    let leads: Vec<String> =
        list["data"].as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap().to_string()).collect();

    for (round, lead) in leads.iter().take(ROUNDS).enumerate() {
        // create_proposal with one Idempotency-Key: one proposal, each answer names it or is
        // told the first request is still running.
        let key = format!("create-{round}");
        let ask = json!({"lead_id": lead});
        let (statuses, bodies) = race(server, &token, "POST", "/v1/prospector/proposals", Some(ask), Some(&key)).await;
        assert!(statuses.iter().all(|s| [201, 409].contains(s)) && statuses[0] == 201, "{statuses:?} {bodies:?}");
        let made =
            count(server, "SELECT COUNT(*) FROM proposals WHERE tenant_id = $1 AND lead_id = $2", &["acme", lead])
                .await;
        assert_eq!(made, 1, "one proposal for the key {key}");
        let id = bodies[0]["data"]["id"].as_str().unwrap().to_string();

        // submit_proposal with one Idempotency-Key: submitted once.
        let path = format!("/v1/prospector/proposals/{id}");
        let (s, b) = server.call("PATCH", &path, &token, Some(json!({"status": "ready"}))).await;
        assert_eq!(s, 200, "{b}");
        let submit = format!("{path}/submit");
        let (statuses, bodies) =
            race(server, &token, "POST", &submit, Some(json!({})), Some(&format!("s-{round}"))).await;
        assert!(statuses.iter().all(|s| [200, 409].contains(s)) && statuses[0] == 200, "{statuses:?} {bodies:?}");
        let sent = count(server, "SELECT COUNT(*) FROM platform_outbox WHERE proposal_id = $1", &[&id]).await;
        assert_eq!(sent, 1, "submitted once");

        // record_proposal_outcome: a proposal is accepted once, with one contract.
        let terms = json!({"outcome": "accepted", "contract": {"platform_reference": format!("C-{round}"),
            "milestones": [{"title": "All", "amount": 100}]}});
        let answers = race(server, &token, "POST", &format!("{path}/outcome"), Some(terms), None).await;
        one_wins("record_proposal_outcome", &answers, 200, "conflict");
        let contracts = count(server, "SELECT COUNT(*) FROM contracts WHERE proposal_id = $1", &[&id]).await;
        assert_eq!(contracts, 1, "one contract for {id}");
    }

    // Two different decisions at once: one applies, the other is a conflict, never both (a
    // rejected proposal with a contract).
    for (round, lead) in leads.iter().enumerate().skip(ROUNDS).take(ROUNDS) {
        let (s, b) = server.call("POST", "/v1/prospector/proposals", &token, Some(json!({"lead_id": lead}))).await;
        assert_eq!(s, 201, "{b}");
        let id = b["data"]["id"].as_str().unwrap().to_string();
        let path = format!("/v1/prospector/proposals/{id}");
        let (s, b) = server.call("PATCH", &path, &token, Some(json!({"status": "ready"}))).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = server.call("POST", &format!("{path}/submit"), &token, Some(json!({}))).await;
        assert_eq!(s, 200, "{b}");
        let accept = json!({"outcome": "accepted", "contract": {"platform_reference": format!("D-{round}"),
            "milestones": [{"title": "All", "amount": 100}]}});
        let outcome = format!("{path}/outcome");
        let (a, r) = tokio::join!(
            server.call("POST", &outcome, &token, Some(accept)),
            server.call("POST", &outcome, &token, Some(json!({"outcome": "rejected"}))),
        );
        let mut statuses = [a.0, r.0];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "accepted and rejected at once: {a:?} {r:?}");
        let (_, now) = server.call("GET", &path, &token, None).await;
        let contracts = count(server, "SELECT COUNT(*) FROM contracts WHERE proposal_id = $1", &[&id]).await;
        let expected = if a.0 == 200 { ("accepted", 1) } else { ("rejected", 0) };
        assert_eq!((now["data"]["status"].as_str().unwrap(), contracts), expected, "{now}");
    }
}

on_both_backends!(identical_creates_at_once_answer_as_one_at_a_time_would, |server| {
    vault(&server).await;
    prospector(&server).await;
});

/// Operations that declare their service's conflict error but create nothing under a unique key
/// (their 409 is a state the object is in), with the reason; every other one is raced above.
const STATE_CONFLICTS: [(&str, &str); 8] = [
    ("archive_credential", "archives an existing credential: its state, no new key"),
    ("restore_credential", "restores an existing credential: its state, no new key"),
    ("remove_role_assignment", "deletes; refuses to remove the last administrator"),
    ("update_lead", "moves a lead through its states with a conditional update"),
    ("update_proposal", "edits or moves a proposal with a conditional update"),
    ("update_milestone", "moves a milestone with a conditional update"),
    ("submit_proposal", "claims the proposal with a conditional update (raced above by its key)"),
    ("scan_leads", "one scan per tenant through an ON CONFLICT lock (raced above)"),
];

/// Writes by their method that store nothing, so have no conflict to race, with the reason.
const STORES_NOTHING: [(&str, &str); 1] = [(
    "touch_watched",
    "the conformance service's: tells the watched resource's subscribers it changed; it stores nothing",
)];

/// Raced in [`vault`] and [`prospector`].
const RACED: [&str; 8] = [
    "store_credential",
    "create_folder",
    "update_folder",
    "rename_tag",
    "assign_role",
    "create_proposal",
    "record_proposal_outcome",
    "update_scoring_config",
];

#[test]
fn every_operation_that_declares_its_conflict_error_is_raced_or_explained() {
    let root = xtask::workspace_root();
    let apis: Vec<_> = xtask::projects(&root)
        .into_iter()
        .flat_map(|(spec, _)| codegen::project::load_dir(&root.join(&spec), &spec).expect("the specs load"))
        // The notes example answers its conflicts (state transitions, preconditions) in its own
        // tests (`notes_statuses.rs`); this file races the platform services.
        .filter(|api| api.name() != "notes")
        .collect();
    let mut seen = 0;
    for api in &apis {
        // A service that changes nothing (the MCP conformance service) has no conflicts to race.
        let Some(conflict) = api.spec.error_roles.conflict.as_deref() else {
            let stores = |op: &&codegen::ir::Operation| !STORES_NOTHING.iter().any(|(id, _)| *id == op.id());
            let writes = api.operations.iter().filter(|op| !op.method().is_safe()).filter(stores).count();
            assert_eq!(writes, 0, "{} changes data: name its conflict error role", api.name());
            continue;
        };
        for op in api.operations.iter().filter(|op| op.def.errors.iter().any(|c| c == conflict)) {
            seen += 1;
            assert!(
                RACED.contains(&op.id()) || STATE_CONFLICTS.iter().any(|(id, _)| *id == op.id()),
                "{} declares {conflict}: race it in this file, or name it in STATE_CONFLICTS with its reason",
                op.id()
            );
        }
    }
    assert_eq!(seen, RACED.len() + STATE_CONFLICTS.len(), "no entry here names an operation the specs do not");
}
