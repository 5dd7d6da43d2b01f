//! Tasks as protocol revision 2025-11-25 has them (experimental there, in the core protocol), for
//! the clients of that revision; the same tasks, in the same store ([`crate::tasks`]), as the
//! `io.modelcontextprotocol/tasks` extension of 2026-07-28 serves through rmcp.
//!
//! What differs on this revision's wire, and is answered here, in front of rmcp (which speaks
//! only the extension):
//! - `initialize` declares `capabilities.tasks` (`list`, `cancel`, `requests.tools.call`), and
//!   `tools/list` gives each tool that may run as a task its `execution.taskSupport`;
//! - the *client* decides: a `tools/call` with `params.task` is a task, answered
//!   `{ "task": Task }` with `ttl` and `pollInterval`; the operation still says when its work
//!   goes to the background (`cx.background()`), and a call that ends before that is a task
//!   already finished. A task asked of a tool that cannot be one, or a tool that runs only as a
//!   task called without one, is `-32601`;
//! - `tasks/get` and `tasks/cancel` answer the task (a finished task cannot be cancelled:
//!   `-32602`), `tasks/list` pages the caller's tasks, and `tasks/result` waits for the end and
//!   answers exactly what the call would have (its result, with the task named in `_meta`, or
//!   its JSON-RPC error);
//! - a tool's error result is a `failed` task (its text the status message), as this revision
//!   says;
//! - input a task asks for once in the background is asked, within a session, on the stream of
//!   the client's `tasks/result` (each request naming the task in `_meta`); rmcp hands that
//!   request to [`super::ToolServer`], which can send on the session.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{DetailedTask, TaskPayload, TaskStatus};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value, json};
use support::TaskSupport;

use super::jsonrpc::Parsed;
use crate::api::ServiceApi;
use crate::caller::Caller;
use crate::tasks::{End, Tasks};

/// The protocol revision whose tasks these are.
pub(super) const REVISION: &str = "2025-11-25";

/// Where a task's answers name it.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Tasks in one page of `tasks/list`.
const PAGE: usize = 50;

/// How often `tasks/result` looks whether its task has ended.
const RESULT_POLL: Duration = Duration::from_millis(200);

/// What the layer needs.
#[derive(Clone)]
pub(super) struct Legacy {
    api: Arc<ServiceApi>,
    tasks: Tasks,
    /// How long `tasks/result` waits, within the request's time limit.
    wait: Duration,
    /// Each task tool's `execution`, as its generated descriptor has it (rmcp's tool has no
    /// such field, so the list it answers lacks it).
    executions: Arc<HashMap<String, Value>>,
}

impl Legacy {
    pub(super) fn new(api: Arc<ServiceApi>, tasks: Tasks, wait: Duration) -> anyhow::Result<Legacy> {
        let tools: Vec<Value> = serde_json::from_str(api.info().tools_json)?;
        let executions = tools
            .into_iter()
            .filter_map(|tool| Some((tool.get("name")?.as_str()?.to_string(), tool.get("execution")?.clone())))
            .collect();
        Ok(Legacy { api, tasks, wait, executions: Arc::new(executions) })
    }
}

/// The layer: answers this revision's task methods and translates its task-augmented calls; any
/// other request passes untouched.
pub(super) async fn serve(State(legacy): State<Legacy>, request: Request, next: Next) -> Response {
    let Some(Parsed(message)) = request.extensions().get::<Parsed>().cloned() else {
        return next.run(request).await;
    };
    let (Some(method), Some(id)) = (message.get("method").and_then(Value::as_str), message.get("id").cloned()) else {
        return next.run(request).await;
    };
    if method == "initialize" {
        if message.pointer("/params/protocolVersion").and_then(Value::as_str) != Some(REVISION) {
            return next.run(request).await;
        }
        return rewrite(next.run(request).await, &id, declare_tasks).await;
    }
    let revision = request.headers().get("mcp-protocol-version").and_then(|v| v.to_str().ok());
    if revision != Some(REVISION) {
        return next.run(request).await;
    }
    let caller = request.extensions().get::<Caller>().cloned();
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let task_id = params.get("taskId").and_then(Value::as_str).map(str::to_string);
    let answer = match (method, caller, task_id) {
        ("tools/list", ..) => {
            let executions = legacy.executions.clone();
            return rewrite(next.run(request).await, &id, move |result| task_support(&executions, result)).await;
        }
        ("tools/call", Some(caller), _) => return legacy.call(request, next, message, caller).await,
        ("tasks/get", Some(caller), Some(task)) => legacy.tasks.get(&caller, &task).await.map(|t| wire_task(&t)),
        ("tasks/cancel", Some(caller), Some(task)) => legacy.cancel(&caller, &task).await,
        // Within a session the protocol layer answers it: it can ask the client the task's input.
        ("tasks/result", _, _) if request.headers().contains_key("mcp-session-id") => {
            return next.run(request).await;
        }
        ("tasks/result", Some(caller), Some(task)) => result(&legacy.tasks, &caller, &task, legacy.wait, None).await,
        ("tasks/list", Some(caller), _) => legacy.list(&caller, params.get("cursor")).await,
        ("tasks/get" | "tasks/cancel" | "tasks/result", Some(_), None) => {
            Err(rmcp::ErrorData::invalid_params("`taskId` is required", None))
        }
        _ => return next.run(request).await,
    };
    reply(&id, answer.map_err(|e| serde_json::to_value(e).unwrap_or(Value::Null)))
}

impl Legacy {
    /// A `tools/call`: with `task`, run as a task (through the extension's path in rmcp, which
    /// the request is rewritten to declare) and answered as this revision's `CreateTaskResult`.
    async fn call(&self, request: Request, next: Next, mut message: Value, caller: Caller) -> Response {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let name = message.pointer("/params/name").and_then(Value::as_str).unwrap_or_default().to_string();
        let Some(op) = self.api.tool(&name) else { return next.run(request).await };
        let asked = message.pointer("/params/task").is_some_and(|t| !t.is_null());
        let refusal = match (op.task, asked) {
            (TaskSupport::Never, true) => Some(format!("tool {name} does not run as a task: call it without `task`")),
            (TaskSupport::Required, false) => Some(format!("tool {name} runs only as a task: call it with `task`")),
            _ => None,
        };
        if let Some(message) = refusal {
            return reply(&id, Err(json!({ "code": -32601, "message": message })));
        }
        if !asked {
            return next.run(request).await;
        }
        let (mut parts, _) = request.into_parts();
        declare_extension(&mut message);
        let body = Bytes::from(message.to_string());
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.extensions.insert(Parsed(message));
        let response = next.run(Request::from_parts(parts, Body::from(body))).await;
        let (tasks, tool) = (self.tasks.clone(), name);
        let mut created = None;
        let response = rewrite(response, &id, |result| created = Some(result.clone())).await;
        let Some(result) = created else { return response };
        // The call became a task, or ended before it could: either way this revision's answer
        // is a task.
        let task = match result.get("taskId").and_then(Value::as_str) {
            Some(task) => tasks.get(&caller, task).await,
            None => tasks.ended(&caller, &tool, End::Completed(result)).await,
        };
        reply(
            &id,
            task.map(|t| json!({ "task": wire_task(&t) })).map_err(|e| serde_json::to_value(e).unwrap_or(Value::Null)),
        )
    }

    async fn cancel(&self, caller: &Caller, id: &str) -> Result<Value, rmcp::ErrorData> {
        let before = self.tasks.get(caller, id).await?;
        if finished(before.status()) {
            return Err(terminal(&before));
        }
        self.tasks.cancel(caller, id).await?;
        let after = self.tasks.get(caller, id).await?;
        // It ended on its own before the cancellation reached it.
        if after.status() != TaskStatus::Cancelled {
            return Err(terminal(&after));
        }
        Ok(wire_task(&after))
    }

    async fn list(&self, caller: &Caller, cursor: Option<&Value>) -> Result<Value, rmcp::ErrorData> {
        let after = match cursor.filter(|c| !c.is_null()) {
            None => None,
            Some(cursor) => Some(read_cursor(cursor).ok_or_else(|| {
                rmcp::ErrorData::invalid_params(format!("unknown cursor {cursor}: pass one tasks/list gave"), None)
            })?),
        };
        let mut page = self.tasks.list(caller, after, PAGE + 1).await?;
        let more = page.len() > PAGE;
        page.truncate(PAGE);
        let next = page.last().filter(|_| more).map(|(created, task)| format!("{created}.{}", task.task.task_id));
        let tasks: Vec<Value> = page.iter().map(|(_, task)| wire_task(task)).collect();
        let mut result = json!({ "tasks": tasks });
        if let Some(next) = next {
            result["nextCursor"] = json!(next);
        }
        Ok(result)
    }
}

/// `tasks/result`: waits for task `id` to end (within `wait`) and answers what its call would
/// have. Within a session (`peer`), input the task waits for is asked of the client on this
/// request's stream, each request naming the task, and its answers go to the task.
pub(super) async fn result(
    tasks: &Tasks,
    caller: &Caller,
    id: &str,
    wait: Duration,
    peer: Option<&Peer<RoleServer>>,
) -> Result<Value, rmcp::ErrorData> {
    let started = Instant::now();
    let mut asked = std::collections::BTreeSet::new();
    let task = loop {
        let task = tasks.get(caller, id).await?;
        if finished(task.status()) {
            break task;
        }
        if let (Some(peer), TaskPayload::InputRequired { input_requests }) = (peer, &task.payload) {
            let mut answers = rmcp::model::InputResponses::new();
            for (key, request) in input_requests.iter().filter(|(key, _)| !asked.contains(*key)) {
                let mut request = serde_json::to_value(request).unwrap_or(Value::Null);
                request["params"]["_meta"] = json!({ RELATED_TASK: { "taskId": id } });
                let answer = crate::inputs::send(peer, request).await.map_err(|e| {
                    rmcp::ErrorData::internal_error(format!("the client did not answer the task's request: {e}"), None)
                })?;
                answers.insert(key.clone(), answer);
            }
            if !answers.is_empty() {
                asked.extend(answers.keys().cloned());
                tasks.update(caller, id, answers).await?;
                continue;
            }
        }
        if started.elapsed() >= wait {
            let message = format!(
                "task {id} is still {} after {} seconds: poll tasks/get, then ask for its result again",
                word(task.status()),
                wait.as_secs()
            );
            let data = json!({ "taskId": id, "status": word(task.status()) });
            return Err(rmcp::ErrorData::new(rmcp::model::ErrorCode(-32001), message, Some(data)));
        }
        tokio::time::sleep(RESULT_POLL).await;
    };
    match task.payload {
        TaskPayload::Completed { mut result } => {
            let meta = result.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(RELATED_TASK.into(), json!({ "taskId": id }));
            }
            Ok(Value::Object(result))
        }
        TaskPayload::Failed { error } => Err(serde_json::from_value(Value::Object(error))
            .unwrap_or_else(|_| rmcp::ErrorData::internal_error("the task failed", None))),
        _ => Err(rmcp::ErrorData::invalid_params(
            format!("task {id} was cancelled: it has no result"),
            Some(json!({ "taskId": id })),
        )),
    }
}

/// A cursor of [`Legacy::list`]: the last task's creation time and id.
fn read_cursor(cursor: &Value) -> Option<(i64, String)> {
    let (created, id) = cursor.as_str()?.split_once('.')?;
    uuid::Uuid::parse_str(id).ok()?;
    Some((created.parse().ok()?, id.to_string()))
}

fn finished(status: TaskStatus) -> bool {
    matches!(status, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
}

fn word(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "working",
    }
}

fn terminal(task: &DetailedTask) -> rmcp::ErrorData {
    let status = word(wire_status(task).0);
    rmcp::ErrorData::invalid_params(
        format!("Cannot cancel task: already in terminal status '{status}'"),
        Some(json!({ "taskId": task.task.task_id, "status": status })),
    )
}

/// The status this revision shows, and its message: a tool's error result is a failed task.
fn wire_status(task: &DetailedTask) -> (TaskStatus, Option<String>) {
    match &task.payload {
        TaskPayload::Completed { result } if result.get("isError") == Some(&Value::Bool(true)) => {
            let text = result
                .get("content")
                .and_then(Value::as_array)
                .and_then(|blocks| blocks.iter().find_map(|b| b.get("text").and_then(Value::as_str)))
                .map(str::to_string);
            (TaskStatus::Failed, text.or_else(|| Some("the tool answered an error".into())))
        }
        TaskPayload::Failed { error } => {
            let message = error.get("message").and_then(Value::as_str).map(str::to_string);
            (TaskStatus::Failed, message.or_else(|| task.task.status_message.clone()))
        }
        _ => (task.status(), task.task.status_message.clone()),
    }
}

/// A task as this revision's `Task`.
fn wire_task(task: &DetailedTask) -> Value {
    let (status, message) = wire_status(task);
    let t = &task.task;
    let mut wire = json!({
        "taskId": t.task_id,
        "status": word(status),
        "createdAt": t.created_at,
        "lastUpdatedAt": t.last_updated_at,
        "ttl": t.ttl_ms,
    });
    if let Some(poll) = t.poll_interval_ms {
        wire["pollInterval"] = json!(poll);
    }
    if let Some(message) = message {
        wire["statusMessage"] = json!(message);
    }
    wire
}

/// `initialize`'s answer declares this revision's task capability.
fn declare_tasks(result: &mut Value) {
    if result.get("protocolVersion").and_then(Value::as_str) != Some(REVISION) {
        return;
    }
    if let Some(capabilities) = result.get_mut("capabilities").and_then(Value::as_object_mut) {
        capabilities
            .insert("tasks".into(), json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }));
    }
}

/// `tools/list`'s answer says which tools may, or must, run as a task.
fn task_support(executions: &HashMap<String, Value>, result: &mut Value) {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else { return };
    for tool in tools {
        if let Some(execution) = tool.get("name").and_then(Value::as_str).and_then(|name| executions.get(name)) {
            tool["execution"] = execution.clone();
        }
    }
}

/// Declares the tasks extension in the call's `_meta` (and drops `task`), so that rmcp runs the
/// call the way it runs a task of the extension.
fn declare_extension(message: &mut Value) {
    let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) else { return };
    params.remove("task");
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    let Some(meta) = meta.as_object_mut() else { return };
    let capabilities = meta.entry("io.modelcontextprotocol/clientCapabilities").or_insert_with(|| json!({}));
    let Some(capabilities) = capabilities.as_object_mut() else { return };
    let extensions = capabilities.entry("extensions").or_insert_with(|| json!({}));
    if let Some(extensions) = extensions.as_object_mut() {
        extensions.insert(rmcp::model::TASKS_EXTENSION_ID.into(), json!({}));
    }
}

/// A JSON-RPC answer to request `id`.
fn reply(id: &Value, answer: Result<Value, Value>) -> Response {
    let mut body = Map::new();
    body.insert("jsonrpc".into(), json!("2.0"));
    body.insert("id".into(), id.clone());
    match answer {
        Ok(result) => body.insert("result".into(), result),
        Err(error) => body.insert("error".into(), error),
    };
    axum::Json(Value::Object(body)).into_response()
}

/// `response` with `edit` applied to the result answering request `id`, in a JSON body or in
/// the events of a stream (each event's data one message). Anything else passes as it is.
async fn rewrite(response: Response, id: &Value, edit: impl FnOnce(&mut Value)) -> Response {
    let kind = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let stream = kind.starts_with("text/event-stream");
    if !stream && !kind.starts_with("application/json") {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return reply(id, Err(json!({ "code": -32603, "message": "the answer could not be read" })));
    };
    let mut edit = Some(edit);
    let mut apply = |text: &str| -> Option<String> {
        let mut message: Value = serde_json::from_str(text).ok()?;
        if message.get("id") != Some(id) {
            return None;
        }
        let result = message.get_mut("result")?;
        (edit.take()?)(result);
        Some(message.to_string())
    };
    let body = if stream {
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text
            .split('\n')
            .map(|line| match line.strip_prefix("data:") {
                Some(data) => apply(data.trim_start()).map_or_else(|| line.to_string(), |m| format!("data: {m}")),
                None => line.to_string(),
            })
            .collect();
        Bytes::from(lines.join("\n"))
    } else {
        match std::str::from_utf8(&bytes).ok().and_then(&mut apply) {
            Some(edited) => Bytes::from(edited),
            None => bytes,
        }
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}
