//! The prospector over MCP: its scan and its backtest go on as tasks with progress for a client
//! that polls tasks and answer what REST answers, a refused input is answered in the call, and
//! any other client gets the answer in the call; on SQLite and PostgreSQL.

mod common;
mod mcp_wire;

use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A 2026-07-28 request to the prospector's MCP endpoint: its answer.
async fn rpc(
    server: &common::TestServer,
    token: &str,
    method: &str,
    name: &str,
    mut params: Value,
    tasks: bool,
) -> Value {
    let capabilities = if tasks { json!({ "extensions": { TASKS: {} } }) } else { json!({}) };
    params["_meta"] = mcp_wire::stateless_meta(capabilities);
    let url = server.url("/v1/prospector/mcp");
    let resp = mcp_wire::stateless_request(&url, token, method, name, 1, params).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{method} {name}");
    mcp_wire::last_message(resp).await
}

async fn call(server: &common::TestServer, token: &str, tool: &str, arguments: Value, tasks: bool) -> Value {
    rpc(server, token, "tools/call", tool, json!({"name": tool, "arguments": arguments}), tasks).await
}

/// Polls task `id` until it has ended: the last `tasks/get` result.
async fn ended(server: &common::TestServer, token: &str, id: &str) -> Value {
    for _ in 0..200 {
        let got = rpc(server, token, "tasks/get", id, json!({"taskId": id}), true).await;
        if got["result"]["status"] != "working" {
            return got["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("task {id} never ended");
}

fn task_id(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"].as_str().unwrap().to_string()
}

on_both_backends!(a_scan_and_a_backtest_are_tasks_with_progress_for_a_client_that_polls_tasks, |server| {
    let token = server.team_token("alice", "acme");
    let listed = rpc(&server, &token, "tools/list", "", json!({}), false).await;
    let tools: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["leads.list", "leads.get", "leads.scan", "scoring.backtest"]);

    // The scan as a task: it ends with the scan's report, its last progress its status message.
    let id = task_id(&call(&server, &token, "leads.scan", json!({}), true).await);
    let done = ended(&server, &token, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["statusMessage"], "every source scanned", "{done}");
    // Structured as REST answers it, in the service's envelope.
    let report = &done["result"]["structuredContent"]["data"];
    assert_eq!(report["sources"][0]["name"], "sample", "{done}");
    let found = report["totals"]["new"].as_i64().unwrap();
    assert!(found > 0, "{report}");
    let (status, leads) = server.call("GET", "/v1/prospector/leads?per_page=1", &token, None).await;
    assert_eq!((status, leads["meta"]["total"].as_i64()), (200, Some(found)), "the leads are stored");

    // Without the extension, the same tool answers in the call: the feed again, all duplicates.
    let again = call(&server, &token, "leads.scan", json!({}), false).await;
    let totals = &again["result"]["structuredContent"]["data"]["totals"];
    assert_eq!((totals["new"].as_i64(), totals["duplicates"].as_i64()), (Some(0), Some(found)), "{again}");

    // The backtest as a task answers what REST answers for the same proposal.
    let proposed = json!({
        "weights": {"skill_match": 10, "budget": 40, "client_history": 20, "competition": 20, "timeline": 10},
        "parameters": {"skills": ["go"], "budget_floor": 50, "budget_target": 500, "currency": "USD",
            "max_competition": 50, "stale_after_days": 14, "evidence_prior": 5, "top_tier_min_confidence": 0.5},
    });
    let id = task_id(&call(&server, &token, "scoring.backtest", proposed.clone(), true).await);
    let done = ended(&server, &token, &id).await;
    assert_eq!(
        (done["status"].as_str(), done["statusMessage"].as_str()),
        (Some("completed"), Some("computing the metrics"))
    );
    let (status, rest) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(proposed.clone())).await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(done["result"]["structuredContent"], rest);

    // A refused proposal is answered in the call, never as a task.
    let mut wrong = proposed.clone();
    wrong["since"] = json!("2026-01-02T00:00:00Z");
    wrong["until"] = json!("2026-01-01T00:00:00Z");
    let refused = call(&server, &token, "scoring.backtest", wrong, true).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_ne!(refused["result"]["resultType"], "task");
});

/// Makes a prospector API token as `token`'s holder.
async fn api_token(server: &common::TestServer, token: &str) -> String {
    let body = json!({"name": "agent", "scopes": ["prospector"]});
    let (status, created) = server.call("POST", "/v1/prospector/tokens", token, Some(body)).await;
    assert_eq!(status, 201, "{created}");
    created["data"]["token"].as_str().unwrap().to_string()
}

async fn list_status(server: &common::TestServer, token: &str) -> u16 {
    let url = server.url("/v1/prospector/mcp");
    let params = json!({"_meta": mcp_wire::stateless_meta(json!({}))});
    let resp = mcp_wire::stateless_request(&url, token, "tools/list", "", 1, params).send().await.unwrap();
    resp.status().as_u16()
}

#[tokio::test]
async fn api_tokens_reach_the_mcp_endpoint_only_where_the_operator_lets_rest_tokens_in() {
    let server = common::TestServer::start().await;
    let api = api_token(&server, &server.team_token("alice", "acme")).await;
    assert_eq!(list_status(&server, &api).await, 401);
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |c, _| c.mcp_accepts_rest_tokens = true)
        .await
        .unwrap();
    let api = api_token(&server, &server.team_token("alice", "acme")).await;
    assert_eq!(list_status(&server, &api).await, 200);
}

#[tokio::test]
async fn a_cancelled_scan_task_releases_the_accounts_scan_lock() {
    // A source that never answers keeps the scan working until it is cancelled.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let slow = axum::Router::new().route(
        "/jobs.json",
        axum::routing::get(|| async {
            tokio::time::sleep(std::time::Duration::from_secs(600)).await;
            "[]"
        }),
    );
    tokio::spawn(async move { axum::serve(listener, slow).await.unwrap() });
    let sources = vec![format!("slow=http://{addr}/jobs.json"), "sample=sample".into()];
    let server =
        common::TestServer::start_configured(common::Backend::Sqlite, |_, s| s.prospector.lead_sources = sources)
            .await
            .unwrap();
    let token = server.team_token("alice", "acme");
    let id = task_id(&call(&server, &token, "leads.scan", json!({"sources": ["slow"]}), true).await);
    let only_sample = json!({"sources": ["sample"]});
    let (status, _) = server.call("POST", "/v1/prospector/leads/scan", &token, Some(only_sample.clone())).await;
    assert_eq!(status, 409, "one scan at a time");
    let cancelled = rpc(&server, &token, "tasks/cancel", &id, json!({"taskId": id}), true).await;
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    assert_eq!(ended(&server, &token, &id).await["status"], "cancelled");
    // The lock goes with the cancelled scan (released in the background, so asked a few times).
    let mut status = 0;
    for _ in 0..50 {
        status = server.call("POST", "/v1/prospector/leads/scan", &token, Some(only_sample.clone())).await.0;
        if status != 409 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "the account scans again");
}
