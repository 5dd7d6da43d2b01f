//! MCP tasks (the `io.modelcontextprotocol/tasks` extension) on the conformance service, on both
//! storage backends: a call that goes to the background answers a task at once; the task is
//! polled to its outcome (a result, an error result, a JSON-RPC error), asks its input through
//! `tasks/get` and `tasks/update`, is cancelled, belongs to its caller alone, survives a restart
//! of its server, and fails once its server stopped while it ran. A client without the extension
//! gets the call's own answer, or `-32021` for a tool that runs only as a task.

mod common;
mod mcp_wire;

use std::time::Duration;

use common::Backend;
use serde_json::{Value, json};

struct Served {
    base: String,
    ann: String,
    bob: String,
}

/// The conformance service over `data_dir` and `database_url`, and tokens of two users.
async fn serve(data_dir: &std::path::Path, database_url: Option<String>) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut config = runtime::Config::new(listener.local_addr().unwrap(), None, data_dir.to_path_buf());
    config.database_url = database_url;
    let platform = runtime::Platform::open(config.clone()).await.unwrap();
    let app = everything::server(&platform).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { platform.run(listener, app).await });
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir).unwrap();
    let audience = runtime::Catalog::new([&everything::SERVICE]).resources(&config);
    let token = |user: &str| {
        let claims =
            runtime::keys::claims(&config.issuer(), user, "acme", "everything:read", audience.clone(), 600, None);
        keys.mint(&claims).unwrap()
    };
    Served { base, ann: token("ann"), bob: token("bob") }
}

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn capabilities(tasks: bool) -> Value {
    match tasks {
        true => json!({ "elicitation": {}, "extensions": { TASKS: {} } }),
        false => json!({ "elicitation": {} }),
    }
}

impl Served {
    /// A 2026-07-28 request by the holder of `token`: the HTTP status and the answer.
    async fn rpc(&self, token: &str, method: &str, name: &str, mut params: Value, tasks: bool) -> (u16, Value) {
        params["_meta"] = mcp_wire::stateless_meta(capabilities(tasks));
        let url = format!("{}/mcp", self.base);
        let resp = mcp_wire::stateless_request(&url, token, method, name, 1, params).send().await.unwrap();
        (resp.status().as_u16(), mcp_wire::last_message(resp).await)
    }

    async fn call(&self, tool: &str, arguments: Value, tasks: bool) -> Value {
        self.rpc(&self.ann, "tools/call", tool, json!({"name": tool, "arguments": arguments}), tasks).await.1
    }

    async fn get(&self, token: &str, id: &str) -> Value {
        self.rpc(token, "tasks/get", id, json!({"taskId": id}), true).await.1
    }

    /// Polls task `id` until its status is `until` (10 s at most).
    async fn until(&self, id: &str, until: &str) -> Value {
        for _ in 0..100 {
            let got = self.get(&self.ann, id).await;
            if got["result"]["status"] == until {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("task {id} never became {until}: {}", self.get(&self.ann, id).await);
    }
}

/// A task's id, from the answer that created it.
fn created(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "task", "{answer}");
    assert!(result["ttlMs"].as_u64().is_some() && result["pollIntervalMs"].as_u64().is_some(), "{answer}");
    assert!(result.get("requestState").is_none(), "{answer}");
    result["taskId"].as_str().unwrap().to_string()
}

async fn tasks_run_to_their_outcome_for_their_caller_alone_and_outlive_their_server(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (url, _database) = match backend {
        Backend::Sqlite => (None, None),
        Backend::Postgres => match common::postgres_database().await {
            Some((url, guard)) => (Some(url), Some(guard)),
            None => return,
        },
    };
    let s = serve(dir.path(), url.clone()).await;

    // Work in the background: polled to its result.
    let id = created(&s.call("slow_compute", json!({"seconds": 1, "label": "a"}), true).await);
    let done = s.until(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Computed for 1 s (a).", "{done}");
    // Another user's, or no task, is unknown.
    assert_eq!(s.get(&s.bob, &id).await["error"]["code"], -32602);
    assert_eq!(s.get(&s.ann, "no-such-task").await["error"]["code"], -32602);

    // A tool's error result completes the task; a server fault fails it with a JSON-RPC error.
    let failing = created(&s.call("failing_job", json!({}), true).await);
    let failed = s.until(&failing, "completed").await;
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    let broken = created(&s.call("protocol_error_job", json!({}), true).await);
    let broken = s.until(&broken, "failed").await;
    assert_eq!(broken["error"]["code"], -32603, "{broken}");
    assert!(broken.get("result").is_none());

    // Cancelled while it works: it stays cancelled; cancelling again is the same empty answer.
    let long = created(&s.call("slow_compute", json!({"seconds": 60}), true).await);
    for _ in 0..2 {
        let (_, ack) = s.rpc(&s.ann, "tasks/cancel", &long, json!({"taskId": long}), true).await;
        assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    }
    s.until(&long, "cancelled").await;

    // Input through the task: asked on tasks/get, answered with tasks/update.
    let confirm = created(&s.call("confirm_delete", json!({"filename": "a.txt"}), true).await);
    let waiting = s.until(&confirm, "input_required").await;
    let request = &waiting["inputRequests"]["confirm"];
    assert_eq!(request["params"]["message"], "Delete a.txt?", "{waiting}");
    let answer =
        json!({"taskId": confirm, "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}});
    let (_, ack) = s.rpc(&s.ann, "tasks/update", &confirm, answer, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = s.until(&confirm, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt.", "{done}");

    // Without the extension: the call's own answer, or -32021 for a tool that is only a task.
    let inline = s.call("slow_compute", json!({"seconds": 0}), false).await;
    assert_eq!(inline["result"]["content"][0]["text"], "Computed for 0 s ().", "{inline}");
    let (status, refused) =
        s.rpc(&s.ann, "tools/call", "failing_job", json!({"name": "failing_job", "arguments": {}}), false).await;
    assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32021)), "{refused}");
    assert_eq!(refused["error"]["data"]["requiredCapabilities"]["extensions"], json!({ TASKS: {} }));

    // A restarted server answers for the tasks of the one before.
    let again = serve(dir.path(), url).await;
    let kept = again.get(&again.ann, &id).await;
    assert_eq!(kept["result"]["status"], "completed", "{kept}");
    assert_eq!(kept["result"]["result"]["content"][0]["text"], "Computed for 1 s (a).");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_run_to_their_outcome_for_their_caller_alone_and_outlive_their_server_on_sqlite() {
    tasks_run_to_their_outcome_for_their_caller_alone_and_outlive_their_server(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_run_to_their_outcome_for_their_caller_alone_and_outlive_their_server_on_postgres() {
    tasks_run_to_their_outcome_for_their_caller_alone_and_outlive_their_server(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_server_stopped_beating_has_failed() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), None).await;
    let id = created(&s.call("slow_compute", json!({"seconds": 60}), true).await);
    s.until(&id, "working").await;
    // As if its server had stopped a minute ago: its heartbeat is old.
    // (Its runner, still alive here, beats every 2 s: a beat between the two steps is retried.)
    let store = runtime::store::Store::open(None, dir.path()).await.unwrap();
    let mut failed = Value::Null;
    for _ in 0..5 {
        sqlx::query("UPDATE mcp_tasks SET heartbeat_at = heartbeat_at - 60000 WHERE id = $1")
            .bind(&id)
            .execute(store.pool())
            .await
            .unwrap();
        failed = s.get(&s.ann, &id).await;
        if failed["result"]["status"] != "working" {
            break;
        }
    }
    assert_eq!(failed["result"]["status"], "failed", "{failed}");
    assert!(failed["result"]["error"]["message"].as_str().unwrap().contains("stopped"), "{failed}");
}
