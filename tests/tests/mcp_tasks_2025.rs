//! Tasks as protocol revision 2025-11-25 has them, against notes' export: declared at
//! `initialize` and on the tool, asked for by the client with `task`, answered as that
//! revision's `CreateTaskResult`, polled with `tasks/get`, read with `tasks/result`, listed page
//! by page with `tasks/list`, for their caller alone. The 2026-07-28 wire keeps its own form
//! (`tasks/result` and `tasks/list` are not methods there). Cancelling, and the tasks of a
//! service that keeps sessions on this revision, are in `everything.rs`.

mod mcp_wire;
mod notes_server;

use notes_server::Server;
use serde_json::{Value, json};

const REVISION: &str = "2025-11-25";

/// A request of revision 2025-11-25 (stateless: notes keeps no sessions) and its answer.
async fn rpc(s: &Server, token: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let answer: Value = notes_server::mcp_of(s, token, REVISION, body).await.json().await.unwrap();
    assert_eq!(answer["id"], 7, "{answer}");
    answer
}

async fn call(s: &Server, token: &str, tool: &str, arguments: Value, task: Option<Value>) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments});
    if let Some(task) = task {
        params["task"] = task;
    }
    rpc(s, token, "tools/call", params).await
}

/// Polls task `id` until it has ended; its last state.
async fn ended(s: &Server, token: &str, id: &str) -> Value {
    for _ in 0..100 {
        let got = rpc(s, token, "tasks/get", json!({"taskId": id})).await;
        if !matches!(got["result"]["status"].as_str(), Some("working" | "input_required")) {
            return got["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("task {id} never ended");
}

/// A task as this revision writes it.
fn assert_task(task: &Value) {
    for field in ["taskId", "status", "createdAt", "lastUpdatedAt"] {
        assert!(task[field].is_string(), "{field}: {task}");
    }
    assert!(task["ttl"].as_u64().is_some() && task["pollInterval"].as_u64().is_some(), "{task}");
    assert!(task.get("ttlMs").is_none() && task.get("resultType").is_none(), "{task}");
}

#[tokio::test]
async fn an_export_runs_as_a_task_of_revision_2025_11_25() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let args = json!({"title": "Exported", "tags": []});
    call(&s, &token, "notes.create", args, None).await;

    // Declared at initialize, and on the tools that may run as one.
    let init = json!({"protocolVersion": REVISION, "capabilities": {"tasks": {}},
        "clientInfo": {"name": "t", "version": "1"}});
    let init = rpc(&s, &token, "initialize", init).await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    let tools = rpc(&s, &token, "tools/list", json!({})).await;
    let tool = |name: &str| tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned();
    assert_eq!(tool("notes.export").unwrap()["execution"], json!({"taskSupport": "optional"}), "{tools}");
    assert!(tool("notes.create").unwrap().get("execution").is_none());

    // Asked for, a task; polled to its end; its result what the call would have answered.
    let created = call(&s, &token, "notes.export", json!({}), Some(json!({"ttl": 60000}))).await;
    let task = &created["result"]["task"];
    assert_task(task);
    let id = task["taskId"].as_str().unwrap().to_string();
    let done = ended(&s, &token, &id).await;
    assert_task(&done);
    assert_eq!(done["status"], "completed", "{done}");
    let result = rpc(&s, &token, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["structuredContent"]["state"], "done", "{result}");
    assert!(result["result"].get("resultType").is_none(), "{result}");
    assert_eq!(result["result"]["_meta"]["io.modelcontextprotocol/related-task"], json!({"taskId": id}));

    // A finished task cannot be cancelled; another tenant's, or no task, is unknown.
    let cancel = rpc(&s, &token, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancel["error"]["code"], -32602, "{cancel}");
    assert!(cancel["error"]["message"].as_str().unwrap().contains("completed"), "{cancel}");
    let stranger = s.token("globex", "notes:write");
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let foreign = rpc(&s, &stranger, method, json!({"taskId": id})).await;
        assert_eq!(foreign["error"]["code"], -32602, "{method}: {foreign}");
    }
    let listed = rpc(&s, &stranger, "tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");

    // A call refused before its work began is a task already failed, its error the message; the
    // result is the error result the call answered.
    let refused = call(&s, &token, "notes.export", json!({"state": "lost"}), Some(json!({}))).await;
    let refused = &refused["result"]["task"];
    assert_eq!(refused["status"], "failed", "{refused}");
    assert!(refused["statusMessage"].as_str().is_some_and(|m| !m.is_empty()), "{refused}");
    let failed_id = refused["taskId"].as_str().unwrap();
    let result = rpc(&s, &token, "tasks/result", json!({"taskId": failed_id})).await;
    assert_eq!(result["result"]["isError"], true, "{result}");

    // Only a tool that may be a task is one.
    let wrong = call(&s, &token, "notes.create", json!({"title": "x"}), Some(json!({}))).await;
    assert_eq!(wrong["error"]["code"], -32601, "{wrong}");

    // Listed newest first, a page at a time.
    for _ in 0..50 {
        call(&s, &token, "notes.export", json!({"state": "lost"}), Some(json!({}))).await;
    }
    let first = rpc(&s, &token, "tasks/list", json!({})).await;
    let page = first["result"]["tasks"].as_array().unwrap();
    assert_eq!(page.len(), 50, "{first}");
    page.iter().for_each(assert_task);
    let cursor = first["result"]["nextCursor"].as_str().unwrap();
    let second = rpc(&s, &token, "tasks/list", json!({"cursor": cursor})).await;
    let rest: Vec<&str> =
        second["result"]["tasks"].as_array().unwrap().iter().filter_map(|t| t["taskId"].as_str()).collect();
    assert_eq!(rest.len(), 2, "{second}");
    assert!(rest.contains(&id.as_str()) && second["result"].get("nextCursor").is_none(), "{second}");
    let bad = rpc(&s, &token, "tasks/list", json!({"cursor": "nonsense"})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    // Only a JSON-RPC message the endpoint accepts reaches a task: a body sent as text is refused.
    let text = reqwest::Client::new()
        .post(s.url("/api/mcp"))
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "text/plain")
        .header("mcp-protocol-version", REVISION)
        .body(json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "params": {"taskId": id}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), 415);
    // A client of 2025-06-18, whose revision has no tasks, is not served them.
    let older = json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/result", "params": {"taskId": id}});
    let older: Value = notes_server::mcp(&s, &token, older).await.json().await.unwrap();
    assert_eq!(older["error"]["code"], -32601, "{older}");
}

/// The 2026-07-28 wire is unchanged: `tasks/result` and `tasks/list` are not its methods.
#[tokio::test]
async fn the_2026_wire_keeps_its_own_task_methods() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    for method in ["tasks/result", "tasks/list"] {
        let mut params = json!({"taskId": "x"});
        params["_meta"] = mcp_wire::stateless_meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
        let resp =
            mcp_wire::stateless_request(&s.url("/api/mcp"), &token, method, "x", 1, params).send().await.unwrap();
        let answer = mcp_wire::last_message(resp).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
}
