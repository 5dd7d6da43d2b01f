//! Every operation of both services, run for real by four tenants at once on a server whose
//! database pool holds ONE connection, on SQLite and on PostgreSQL.
//!
//! Two classes of defect fail here:
//! - **A connection acquired while a transaction is held.** On a one-connection pool that waits
//!   for itself; the store refuses it at once (a 500), and any other wait for a connection ends
//!   in a 503 after the short acquire timeout. Every call must answer its success status.
//! - **An optional value bound as a NULL of the wrong type.** PostgreSQL prepares a statement with
//!   the parameter types of its first execution on a connection; a NULL typed differently from the
//!   value bound later makes every later call with a value fail. So every operation with optional
//!   fields is called with all of them absent first, and later with all of them present, on the
//!   same (single) connection; among them a proposal created with only `lead_id` and then given a
//!   bid, and a lead feed whose first posting has no budget.
//!
//! The test also checks its own coverage: the operations it called are exactly the operation
//! tables of both services, and each operation with optional fields was called both ways, so a new
//! operation or field without a workload here fails it.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::{Location, Operation};

/// One call as the coverage check sees it.
#[derive(Debug, Clone)]
struct Call {
    op: &'static str,
    /// The optional fields (body, query or header) the request carried.
    optional: BTreeSet<&'static str>,
    /// Completion order over every tenant.
    seq: usize,
}

/// A tenant's client: sends requests, requires each to succeed, and records what it called.
#[derive(Clone)]
struct Client {
    server: Arc<common::TestServer>,
    calls: Arc<Mutex<Vec<Call>>>,
    seq: Arc<AtomicUsize>,
}

/// The operation `method path` (query ignored) routes to; literal segments win over parameters.
fn operation_of(method: &str, path: &str) -> &'static Operation {
    let segments: Vec<&str> = path.split('/').collect();
    common::all_operations()
        .into_iter()
        .filter(|op| op.method.as_str() == method)
        .filter_map(|op| {
            let template: Vec<&str> = op.full_path.split('/').collect();
            if template.len() != segments.len() {
                return None;
            }
            let mut literal = 0;
            for (t, s) in template.iter().zip(&segments) {
                if t.starts_with('{') {
                    continue;
                }
                if t != s {
                    return None;
                }
                literal += 1;
            }
            Some((literal, op))
        })
        .max_by_key(|(literal, _)| *literal)
        .map(|(_, op)| op)
        .unwrap_or_else(|| panic!("no operation serves {method} {path}"))
}

/// The optional input fields of `op` that can be left out (path parameters never can).
fn optional_fields(op: &Operation) -> BTreeSet<&'static str> {
    op.input.iter().filter(|f| !f.required && f.location != Location::Path).map(|f| f.name).collect()
}

impl Client {
    /// Sends `method path` with `token`, an optional JSON body and an optional `Idempotency-Key`;
    /// asserts the operation's success status and returns the body (`null` when empty).
    async fn send(&self, method: &str, path: &str, token: &str, body: Option<Value>, key: Option<&str>) -> Value {
        let (route, query) = path.split_once('?').unwrap_or((path, ""));
        let op = operation_of(method, route);
        let query_names: BTreeSet<String> =
            serde_urlencoded::from_str::<Vec<(String, String)>>(query).unwrap().into_iter().map(|(k, _)| k).collect();
        let optional = op
            .input
            .iter()
            .filter(|f| !f.required)
            .filter(|f| match f.location {
                Location::Body => body.as_ref().is_some_and(|b| b.get(f.name).is_some()),
                Location::Query => query_names.contains(f.name),
                Location::Header => key.is_some() && f.name == "idempotency_key",
                Location::Payload => body.is_some(),
                Location::Path => false,
            })
            .map(|f| f.name)
            .collect();
        let server = &self.server;
        let mut rb = server
            .client()
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), server.url(path))
            .bearer_auth(token);
        if let Some(b) = &body {
            rb = rb.json(b);
        }
        if let Some(k) = key {
            rb = rb.header("idempotency-key", k);
        }
        let resp = rb.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        let answer = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(
            status, op.success_status,
            "{} ({method} {path}, body {body:?}) must answer {}; a 500 is a connection asked for inside a \
             transaction or a NULL bound with the wrong type, a 503 a wait for the pool's one connection: {text}",
            op.id, op.success_status
        );
        let seq = self.seq.fetch_add(1, Ordering::SeqCst);
        self.calls.lock().unwrap().push(Call { op: op.id, optional, seq });
        answer
    }

    async fn get(&self, path: &str, token: &str) -> Value {
        self.send("GET", path, token, None, None).await
    }

    async fn post(&self, path: &str, token: &str, body: Value) -> Value {
        self.send("POST", path, token, Some(body), None).await
    }

    async fn patch(&self, path: &str, token: &str, body: Value) -> Value {
        self.send("PATCH", path, token, Some(body), None).await
    }

    async fn delete(&self, path: &str, token: &str) -> Value {
        self.send("DELETE", path, token, None, None).await
    }
}

fn id(v: &Value) -> String {
    v["data"]["id"].as_str().unwrap_or_else(|| panic!("no data.id in {v}")).to_string()
}

/// A moment one day from now, as RFC 3339.
fn tomorrow() -> String {
    (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Every vault operation for `tenant`: optional fields absent first, then present.
async fn vault(c: &Client, tenant: &str) {
    c.server.tenant(tenant, "alice").await;
    let admin = c.server.token_for("alice", tenant, "vault:admin");

    // Folders.
    let prod = id(&c.post("/api/v1/folders", &admin, json!({"name": "prod"})).await);
    let db = id(&c.post("/api/v1/folders", &admin, json!({"name": "db", "parent_id": prod})).await);
    let scratch = id(&c.post("/api/v1/folders", &admin, json!({"name": "tmp"})).await);
    c.get("/api/v1/folders", &admin).await;
    c.get(&format!("/api/v1/folders?parent_id={prod}&page=1&per_page=10"), &admin).await;
    c.patch(&format!("/api/v1/folders/{scratch}"), &admin, json!({})).await;
    c.patch(&format!("/api/v1/folders/{scratch}"), &admin, json!({"name": "scratch", "parent_id": prod})).await;

    // Credentials.
    c.post("/api/v1/credentials", &admin, json!({"key": "root-key", "value": "s1"})).await;
    let full = json!({"key": "db-pass", "value": "s2", "kind": "password", "folder_id": db, "description": "main db",
                      "username": "app", "url": "https://db.example", "tags": ["prod", "db"]});
    c.post("/api/v1/credentials", &admin, full).await;
    c.get("/api/v1/credentials", &admin).await;
    c.get(
        &format!("/api/v1/credentials?folder_id={db}&tag=prod&kind=password&state=all&q=db&page=1&per_page=10"),
        &admin,
    )
    .await;
    c.get("/api/v1/credentials/db-pass", &admin).await;
    c.patch("/api/v1/credentials/root-key", &admin, json!({})).await;
    let edit = json!({"description": "legacy", "username": "root", "url": "https://x.example", "tags": ["old"],
                      "folder_id": prod});
    c.patch("/api/v1/credentials/root-key", &admin, edit).await;
    c.post("/api/v1/credentials/db-pass/reveal", &admin, json!({})).await;
    c.post("/api/v1/credentials/db-pass/reveal", &admin, json!({"version": 1})).await;
    c.post("/api/v1/credentials/db-pass/rotate", &admin, json!({"value": "s3"})).await;
    c.post("/api/v1/credentials/db-pass/rotate", &admin, json!({"value": "s4", "expected_version": 2})).await;

    // Tags, with an archived credential for prune to find.
    c.get("/api/v1/tags", &admin).await;
    c.get("/api/v1/tags?prefix=p&page=1&per_page=10", &admin).await;
    c.patch("/api/v1/tags/db", &admin, json!({"new_name": "database"})).await;
    c.post("/api/v1/tags/merge", &admin, json!({"sources": ["old"], "target": "legacy"})).await;
    c.send("POST", "/api/v1/credentials/root-key/archive", &admin, None, None).await;
    c.post("/api/v1/tags/prune", &admin, json!({})).await;
    c.post("/api/v1/tags/prune", &admin, json!({"dry_run": true})).await;
    c.send("POST", "/api/v1/credentials/root-key/restore", &admin, None, None).await;

    // Leases.
    let l1 = id(&c.post("/api/v1/leases", &admin, json!({"credential_key": "db-pass"})).await);
    let l2 = id(&c
        .post(
            "/api/v1/leases",
            &admin,
            json!({"credential_key": "db-pass", "ttl_seconds": 60, "version": 1, "purpose": "deploy"}),
        )
        .await);
    c.get("/api/v1/leases", &admin).await;
    c.get("/api/v1/leases?state=active&credential_key=db-pass&page=1&per_page=10", &admin).await;
    c.post("/api/v1/leases/read", &admin, json!({"lease_id": l1})).await;
    c.delete(&format!("/api/v1/leases/{l2}"), &admin).await;

    // Grants.
    let read = json!({"principal": "bob", "permissions": ["canRead"]});
    let g1 = id(&c.post("/api/v1/credentials/db-pass/grants", &admin, read).await);
    let reveal = json!({"principal": "bob", "permissions": ["canReveal"]});
    let g2 = id(&c.post(&format!("/api/v1/folders/{db}/grants"), &admin, reveal).await);
    let store = json!({"principal": "carol", "permissions": ["canStore"]});
    let g3 = id(&c.post(&format!("/api/v1/folders/{prod}/grants"), &admin, store).await);
    c.get("/api/v1/grants", &admin).await;
    c.get("/api/v1/grants?principal=bob&target=folder&page=1&per_page=10", &admin).await;
    c.get("/api/v1/credentials/db-pass/grants", &admin).await;
    c.get("/api/v1/credentials/db-pass/grants?page=1&per_page=10", &admin).await;
    c.get(&format!("/api/v1/folders/{db}/grants"), &admin).await;
    c.get(&format!("/api/v1/folders/{db}/grants?page=1&per_page=10"), &admin).await;
    // Bob reaches the credential through his grants.
    let bob = c.server.token_for("bob", tenant, "vault:read");
    c.get("/api/v1/credentials/db-pass", &bob).await;
    c.delete(&format!("/api/v1/credentials/db-pass/grants/{g1}"), &admin).await;
    c.delete(&format!("/api/v1/folders/{db}/grants/{g2}"), &admin).await;
    c.delete(&format!("/api/v1/grants/{g3}"), &admin).await;

    // Role assignments.
    let roles = format!("/api/v1/tenants/{tenant}/role-assignments");
    c.send("PUT", &format!("{roles}/bob"), &admin, Some(json!({"role": "auditor"})), None).await;
    c.get(&roles, &admin).await;
    c.get(&format!("{roles}?page=1&per_page=10"), &admin).await;
    c.delete(&format!("{roles}/bob"), &admin).await;

    // Personal tokens; the second one authenticates a request.
    let t1 = id(&c.post("/api/v1/tokens", &admin, json!({"name": "ci", "scopes": ["vault:read"]})).await);
    let t2 = c
        .post("/api/v1/tokens", &admin, json!({"name": "cd", "scopes": ["vault:read"], "expires_at": tomorrow()}))
        .await;
    c.get("/api/v1/tokens", &admin).await;
    c.get("/api/v1/tokens?include_revoked=true&page=1&per_page=10", &admin).await;
    c.delete(&format!("/api/v1/tokens/{t1}"), &admin).await;
    c.get("/api/v1/credentials/db-pass", t2["data"]["token"].as_str().unwrap()).await;

    // An empty folder is deleted.
    let empty = id(&c.post("/api/v1/folders", &admin, json!({"name": "empty"})).await);
    c.delete(&format!("/api/v1/folders/{empty}"), &admin).await;

    // The audit log.
    c.get("/api/v1/audit", &admin).await;
    c.get(
        "/api/v1/audit?actor=alice&operation=store_credential&outcome=allowed&target=db-pass\
         &since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00Z&page=1&per_page=10",
        &admin,
    )
    .await;
}

fn weights() -> Value {
    json!({"skill_match": 30, "budget": 25, "client_history": 20, "competition": 15, "timeline": 10})
}

fn parameters() -> Value {
    json!({"skills": ["rust", "postgresql"], "budget_floor": 200, "budget_target": 3000, "currency": "USD",
           "max_competition": 50, "stale_after_days": 14, "evidence_prior": 5, "top_tier_min_confidence": 0.5})
}

/// Every prospector operation for `tenant`: optional fields absent first, then present.
async fn prospector(c: &Client, tenant: &str) {
    let token = c.server.team_token("pat", tenant);
    let p = "/v1/prospector";

    // Scans: the feed `first` (a posting without a budget) runs before the sample feed.
    c.post(&format!("{p}/leads/scan"), &token, json!({})).await;
    let again = json!({"sources": ["first", "sample"]});
    let scan_key = format!("scan-{tenant}");
    let report = c.send("POST", &format!("{p}/leads/scan"), &token, Some(again.clone()), Some(&scan_key)).await;
    let replay = c.send("POST", &format!("{p}/leads/scan"), &token, Some(again), Some(&scan_key)).await;
    assert_eq!(replay, report, "a retry with the same key replays the report");

    // Leads.
    c.get(&format!("{p}/leads"), &token).await;
    c.get(
        &format!("{p}/leads?min_score=0&sort=-budget&status=new&platform=upwork&tag=rust&q=rust&page=1&per_page=5"),
        &token,
    )
    .await;
    let list = c.get(&format!("{p}/leads?per_page=10"), &token).await;
    let leads: Vec<String> =
        list["data"].as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap().to_string()).collect();
    assert!(leads.len() >= 4, "the scans found leads: {list}");
    c.get(&format!("{p}/leads/{}", leads[0]), &token).await;
    c.patch(&format!("{p}/leads/{}", leads[0]), &token, json!({})).await;
    c.patch(&format!("{p}/leads/{}", leads[0]), &token, json!({"status": "reviewing", "tags": ["rust", "priority"]}))
        .await;

    // Proposals: the first has no bid, so its NULL bid is the first one bound on the connection.
    let p1 = id(&c.post(&format!("{p}/proposals"), &token, json!({"lead_id": leads[0]})).await);
    let p1_path = format!("{p}/proposals/{p1}");
    c.patch(&p1_path, &token, json!({})).await;
    c.patch(&p1_path, &token, json!({"draft_text": "Hello, I can help."})).await;
    c.patch(&p1_path, &token, json!({"bid_amount": 100})).await;
    c.patch(
        &p1_path,
        &token,
        json!({"draft_text": "Hello again.", "bid_amount": 150, "currency": "EUR", "status": "ready"}),
    )
    .await;
    let full = json!({"lead_id": leads[1], "tone": "friendly", "instructions": "Mention my crate.", "bid_amount": 2400,
                      "currency": "USD"});
    let create_key = format!("create-{tenant}");
    let p2 = id(&c.send("POST", &format!("{p}/proposals"), &token, Some(full.clone()), Some(&create_key)).await);
    let replay = c.send("POST", &format!("{p}/proposals"), &token, Some(full), Some(&create_key)).await;
    assert_eq!(id(&replay), p2, "a retry with the same key returns the first proposal");
    let p3 = id(&c.post(&format!("{p}/proposals"), &token, json!({"lead_id": leads[2]})).await);
    let p4 = id(&c.post(&format!("{p}/proposals"), &token, json!({"lead_id": leads[3]})).await);
    for ready in [&p2, &p3, &p4] {
        c.patch(&format!("{p}/proposals/{ready}"), &token, json!({"status": "ready"})).await;
    }
    c.get(&format!("{p}/proposals"), &token).await;
    c.get(&format!("{p}/proposals?status=ready&lead_id={}&page=1&per_page=10", leads[0]), &token).await;
    c.get(&p1_path, &token).await;
    c.send("POST", &format!("{p1_path}/submit"), &token, None, None).await;
    let submit_key = format!("submit-{tenant}");
    let sent = c.send("POST", &format!("{p}/proposals/{p2}/submit"), &token, None, Some(&submit_key)).await;
    let replay = c.send("POST", &format!("{p}/proposals/{p2}/submit"), &token, None, Some(&submit_key)).await;
    assert_eq!(replay, sent, "a retry with the same key returns the first result");
    c.send("POST", &format!("{p}/proposals/{p3}/submit"), &token, None, None).await;
    // Withdrawing a submitted proposal records the withdrawal for the platform.
    c.send("POST", &format!("{p}/proposals/{p4}/submit"), &token, None, None).await;
    c.patch(&format!("{p}/proposals/{p4}"), &token, json!({"status": "withdrawn"})).await;

    // Outcomes: rejected (no contract), accepted with the fewest terms, accepted with all of them.
    c.post(&format!("{p1_path}/outcome"), &token, json!({"outcome": "rejected"})).await;
    let few = json!({"outcome": "accepted", "contract": {"milestones": [{"title": "Build", "amount": 900}]}});
    c.post(&format!("{p}/proposals/{p3}/outcome"), &token, few).await;
    let all = json!({"outcome": "accepted", "contract": {"title": "API work", "client_name": "Acme", "platform_reference": "C-1",
        "currency": "USD", "milestones": [{"title": "Design", "amount": 1000},
                                          {"title": "Build", "amount": 1400, "due_on": "2027-01-31T00:00:00Z"}]}});
    let accepted = c.post(&format!("{p}/proposals/{p2}/outcome"), &token, all).await;

    // Contracts and milestones.
    let contract = accepted["data"]["contract_id"].as_str().unwrap().to_string();
    c.get(&format!("{p}/contracts"), &token).await;
    c.get(&format!("{p}/contracts?status=active&page=1&per_page=10"), &token).await;
    let detail = c.get(&format!("{p}/contracts/{contract}"), &token).await;
    let milestone = detail["data"]["milestones"][0]["id"].as_str().unwrap().to_string();
    let m_path = format!("{p}/contracts/{contract}/milestones/{milestone}");
    c.patch(&m_path, &token, json!({"status": "in_progress"})).await;

    // Scoring configuration (an update rescores every lead) and a backtest over the decided leads.
    let config = c.get(&format!("{p}/scoring/config"), &token).await;
    let update = json!({"weights": weights(), "parameters": parameters()});
    let v2 = c.send("PUT", &format!("{p}/scoring/config"), &token, Some(update), None).await;
    assert_eq!(v2["data"]["version"].as_i64(), config["data"]["version"].as_i64().map(|v| v + 1), "{v2}");
    let update = json!({"weights": weights(), "parameters": parameters(), "expected_version": v2["data"]["version"]});
    c.send("PUT", &format!("{p}/scoring/config"), &token, Some(update), None).await;
    c.post(&format!("{p}/scoring/backtest"), &token, json!({"weights": weights(), "parameters": parameters()})).await;
    let full = json!({"weights": weights(), "parameters": parameters(), "top_k": 5, "tiers": 2,
                      "since": "2000-01-01T00:00:00Z", "until": "2100-01-01T00:00:00Z"});
    c.post(&format!("{p}/scoring/backtest"), &token, full).await;

    // API tokens; the second one authenticates a request.
    c.get(&format!("{p}/tokens"), &token).await;
    c.get(&format!("{p}/tokens?page=1&per_page=10"), &token).await;
    let t1 = id(&c.post(&format!("{p}/tokens"), &token, json!({"name": "ci", "scopes": ["prospector"]})).await);
    let t2 = c
        .post(
            &format!("{p}/tokens"),
            &token,
            json!({"name": "cd", "scopes": ["prospector"], "plan": "team", "expires_at": tomorrow()}),
        )
        .await;
    c.delete(&format!("{p}/tokens/{t1}"), &token).await;
    c.get(&format!("{p}/proposals/{p2}"), t2["data"]["token"].as_str().unwrap()).await;
}

/// Checks the calls cover every operation, and each operation with optional fields both ways.
fn assert_coverage(calls: &[Call]) {
    let called: BTreeSet<&str> = calls.iter().map(|c| c.op).collect();
    let table: BTreeSet<&str> = common::all_operations().iter().map(|op| op.id).collect();
    let missing: Vec<_> = table.difference(&called).collect();
    assert!(missing.is_empty(), "operations this test never ran (add them to its workload): {missing:?}");
    assert_eq!(called, table, "the operations run are exactly the operation tables");

    let mut by_op: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
    for call in calls {
        by_op.entry(call.op).or_default().push(call);
    }
    let mut gaps = Vec::new();
    for op in common::all_operations() {
        let optional = optional_fields(op);
        if optional.is_empty() {
            continue;
        }
        let ops = &by_op[op.id];
        let first_absent = ops.iter().filter(|c| c.optional.is_empty()).map(|c| c.seq).min();
        let present_after =
            first_absent.is_some_and(|first| ops.iter().any(|c| c.optional == optional && c.seq > first));
        if !present_after {
            gaps.push(format!("{}: optional {optional:?}", op.id));
        }
    }
    assert!(
        gaps.is_empty(),
        "operations not called with every optional field absent and later with every one present: {gaps:#?}"
    );
}

async fn run(backend: common::Backend) {
    let feeds = tempfile::tempdir().unwrap();
    let first = feeds.path().join("first.json");
    let posting = json!([{"id": "first-1", "platform": "upwork", "title": "Rust job without a stated budget",
                          "description": "A posting that states no budget.", "skills": ["rust"]}]);
    std::fs::write(&first, posting.to_string()).unwrap();
    let Some(server) = common::TestServer::start_configured(backend, |config, settings| {
        // A wait that never ends (a task waiting for the connection it holds) fails after the
        // timeout; honest waits in this workload stay near a second (a scan) on a loaded machine.
        config.pool = runtime::store::PoolSettings { max_connections: Some(1), ..Default::default() };
        settings.prospector.lead_sources = vec![format!("first={}", first.display()), "sample=sample".into()];
    })
    .await
    else {
        return;
    };
    let client = Client { server: Arc::new(server), calls: Arc::default(), seq: Arc::new(AtomicUsize::new(0)) };
    let workloads: Vec<_> = (0..4)
        .map(|i| {
            let c = client.clone();
            tokio::spawn(async move {
                let tenant = format!("tenant{i}");
                tokio::join!(vault(&c, &tenant), prospector(&c, &tenant));
            })
        })
        .collect();
    for w in workloads {
        if let Err(e) = w.await {
            std::panic::resume_unwind(e.into_panic());
        }
    }
    assert_coverage(&client.calls.lock().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_operation_on_a_one_connection_pool_sqlite() {
    run(common::Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_operation_on_a_one_connection_pool_postgres() {
    run(common::Backend::Postgres).await;
}

/// The mechanism under the second class: every type the store binds as optional sends its NULL
/// with the type of its values, so the statement PostgreSQL prepares for the NULL also takes the
/// values. (sqlx 0.9 sends the NULL of a bare `Option<f64>` as `real`.)
#[tokio::test]
async fn typed_nulls_postgres() {
    use runtime::store::Nullable;
    let Some(server) = common::TestServer::start_on(common::Backend::Postgres).await else { return };
    let pool = server.state.store.pool();
    // Not persistent: each execution is prepared anew, so each reports the type it was sent with.
    let sent_as = |q: sqlx::query::QueryScalar<'static, sqlx::Any, String, sqlx::any::AnyArguments>| async move {
        q.persistent(false).fetch_one(pool).await.expect("pg_typeof")
    };
    let sql = "SELECT pg_typeof($1)::text";
    let pairs = [
        ("f64", sqlx::query_scalar(sql).bind(Nullable::<f64>(None)), sqlx::query_scalar(sql).bind(Nullable(Some(1.5)))),
        (
            "i64",
            sqlx::query_scalar(sql).bind(Nullable::<i64>(None)),
            sqlx::query_scalar(sql).bind(Nullable(Some(7i64))),
        ),
        (
            "String",
            sqlx::query_scalar(sql).bind(Nullable::<String>(None)),
            sqlx::query_scalar(sql).bind(Nullable(Some("x".to_string()))),
        ),
        (
            "&str",
            sqlx::query_scalar(sql).bind(Nullable::<&str>(None)),
            sqlx::query_scalar(sql).bind(Nullable(Some("x"))),
        ),
    ];
    for (what, null, value) in pairs {
        let (null, value) = (sent_as(null).await, sent_as(value).await);
        assert_eq!(null, value, "Nullable::<{what}>(None) must be sent as {value}, like its values, not as {null}");
    }
}
