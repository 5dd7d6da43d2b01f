//! Tasks as protocol revision 2025-11-25 has them (experimental there, in the core protocol), for
//! the clients of that revision; the same tasks, in the same store ([`crate::tasks`]), as the
//! `io.modelcontextprotocol/tasks` extension of 2026-07-28 serves through rmcp.
//!
//! What differs on this revision's wire:
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
//!   its JSON-RPC error); within a session, input the task asks for once in the background is
//!   asked on that request's stream, each request naming the task;
//! - a tool's error result is a `failed` task (its text the status message), as this revision
//!   says.
//!
//! rmcp speaks only the extension, so [`serve`], a layer in front of it, translates: it declares
//! the capability and the tools' task support in the answers, marks a call with what its client
//! asked ([`Asked`]) and declares the extension in a task call's `_meta` so that rmcp runs it the
//! extension's way, turns that answer into this revision's, and hands `tasks/get` and
//! `tasks/cancel` on under names rmcp leaves to the handler. Every request still goes through
//! rmcp (its host, origin and session checks, and a session's idle timer); the handler answers
//! the task methods with [`answer`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use rmcp::model::{DetailedTask, TaskPayload, TaskStatus};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::{Value, json};

use super::jsonrpc::Parsed;
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

/// The names under which this revision's `tasks/get` and `tasks/cancel` reach the handler: rmcp
/// reads those two methods as the extension's. (A client sending these names gets the same
/// answers.)
const GET: &str = "tasks/get@2025-11-25";
const CANCEL: &str = "tasks/cancel@2025-11-25";

/// A `tools/call` of this revision: whether its client asked for a task.
#[derive(Debug, Clone, Copy)]
pub(super) struct Asked(pub(super) bool);

/// What the layer needs.
#[derive(Clone)]
pub(super) struct Legacy {
    tasks: Tasks,
    /// Each task tool's `execution`, as its generated descriptor has it (rmcp's tool has no such
    /// field, so the list it answers lacks it).
    executions: Arc<HashMap<String, Value>>,
}

impl Legacy {
    pub(super) fn new(tools_json: &str, tasks: Tasks) -> anyhow::Result<Legacy> {
        let tools: Vec<Value> = serde_json::from_str(tools_json)?;
        let executions = tools
            .into_iter()
            .filter_map(|tool| Some((tool.get("name")?.as_str()?.to_string(), tool.get("execution")?.clone())))
            .collect();
        Ok(Legacy { tasks, executions: Arc::new(executions) })
    }
}

/// Whether a request speaks this revision (the header every request after `initialize` carries).
pub(super) fn of_revision(parts: &axum::http::request::Parts) -> bool {
    parts.headers.get("mcp-protocol-version").is_some_and(|v| v.as_bytes() == REVISION.as_bytes())
}

/// The layer (see the module's documentation); any other request passes untouched.
pub(super) async fn serve(State(legacy): State<Legacy>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    // This layer is the parsed message's last reader: it takes it.
    let Some(Parsed(mut message)) = parts.extensions.remove::<Parsed>() else {
        return next.run(Request::from_parts(parts, body)).await;
    };
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default().to_string();
    let (Some(id), true) = (message.get("id").cloned(), method == "initialize" || of_revision(&parts)) else {
        return next.run(Request::from_parts(parts, body)).await;
    };
    match method.as_str() {
        "initialize" if message.pointer("/params/protocolVersion").and_then(Value::as_str) == Some(REVISION) => {
            let answered = next.run(Request::from_parts(parts, body)).await;
            rewrite(answered, id, |result| async move { Ok(declare_tasks(result)) }).await
        }
        "tools/list" => {
            let executions = legacy.executions.clone();
            let listed = next.run(Request::from_parts(parts, body)).await;
            rewrite(listed, id, move |result| async move { Ok(task_support(&executions, result)) }).await
        }
        "tools/call" => {
            let asked = message.pointer("/params/task").is_some_and(|t| !t.is_null());
            parts.extensions.insert(Asked(asked));
            let caller = parts.extensions.get::<Caller>().cloned();
            let (Some(caller), true) = (caller, asked) else {
                return next.run(Request::from_parts(parts, body)).await;
            };
            let tool = message.pointer("/params/name").and_then(Value::as_str).unwrap_or_default().to_string();
            declare_extension(&mut message);
            let called = next.run(again(parts, &message)).await;
            let tasks = legacy.tasks.clone();
            // The call became a task, or ended before it could: either way this revision's
            // answer is a task.
            rewrite(called, id, move |result| async move {
                let task = match result.get("taskId").and_then(Value::as_str) {
                    Some(task) => tasks.get(&caller, task).await,
                    None => tasks.ended(&caller, &tool, End::Completed(result)).await,
                };
                task.map(|t| json!({ "task": wire_task(&t) })).map_err(|e| serde_json::to_value(e).unwrap_or_default())
            })
            .await
        }
        "tasks/get" | "tasks/cancel" => {
            message["method"] = json!(if method == "tasks/get" { GET } else { CANCEL });
            next.run(again(parts, &message)).await
        }
        _ => next.run(Request::from_parts(parts, body)).await,
    }
}

/// The request of `parts` with `message` as its body.
fn again(mut parts: axum::http::request::Parts, message: &Value) -> Request {
    parts.headers.remove(header::CONTENT_LENGTH);
    Request::from_parts(parts, Body::from(message.to_string()))
}

/// The handler's answer to this revision's task method `method` (`None`: not one), for `caller`;
/// `peer` is the session's, where the request has one (input a task waits for is asked of it).
pub(super) async fn answer(
    tasks: &Tasks,
    caller: &Caller,
    (method, params): (&str, Option<&Value>),
    wait: Duration,
    peer: Option<&Peer<RoleServer>>,
) -> Result<Option<Value>, McpError> {
    let task_id = || {
        params
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("`taskId` is required", None))
    };
    let answer = match method {
        GET => wire_task(&tasks.get(caller, task_id()?).await?),
        CANCEL => cancel(tasks, caller, task_id()?).await?,
        "tasks/result" => result(tasks, caller, task_id()?, wait, peer).await?,
        "tasks/list" => list(tasks, caller, params.and_then(|p| p.get("cursor"))).await?,
        _ => return Ok(None),
    };
    Ok(Some(answer))
}

/// A task's refusal when its client asks for a task of `tool` (`asked`) that its support does
/// not allow: `-32601`, as this revision says.
pub(super) fn refusal(tool: &str, support: support::TaskSupport, Asked(asked): Asked) -> Option<McpError> {
    let message = match (support, asked) {
        (support::TaskSupport::Never, true) => format!("tool {tool} does not run as a task: call it without `task`"),
        (support::TaskSupport::Required, false) => format!("tool {tool} runs only as a task: call it with `task`"),
        _ => return None,
    };
    Some(McpError::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, message, None))
}

async fn cancel(tasks: &Tasks, caller: &Caller, id: &str) -> Result<Value, McpError> {
    let before = tasks.get(caller, id).await?;
    if before.status().is_terminal() {
        return Err(terminal(&before));
    }
    tasks.cancel(caller, id).await?;
    let after = tasks.get(caller, id).await?;
    // It ended on its own before the cancellation reached it.
    if after.status() != TaskStatus::Cancelled {
        return Err(terminal(&after));
    }
    Ok(wire_task(&after))
}

/// `tasks/result`: waits for task `id` to end (within `wait`) and answers what its call would
/// have. Within a session (`peer`), input the task waits for is asked of the client on this
/// request's stream, each request naming the task, and each answer goes to the task.
async fn result(
    tasks: &Tasks,
    caller: &Caller,
    id: &str,
    wait: Duration,
    peer: Option<&Peer<RoleServer>>,
) -> Result<Value, McpError> {
    let started = Instant::now();
    let still = |status: TaskStatus| {
        let message = format!(
            "task {id} is still {} after {} seconds: poll tasks/get, then ask for its result again",
            word(status),
            wait.as_secs()
        );
        let data = json!({ "taskId": id, "status": word(status) });
        McpError::new(rmcp::model::ErrorCode(-32001), message, Some(data))
    };
    let mut asked = std::collections::BTreeSet::new();
    let task = loop {
        let task = tasks.get(caller, id).await?;
        if task.status().is_terminal() {
            break task;
        }
        if let (Some(peer), TaskPayload::InputRequired { input_requests }) = (peer, &task.payload) {
            let mut relayed = false;
            let new: Vec<_> = input_requests.iter().filter(|(key, _)| !asked.contains(*key)).collect();
            for (key, request) in new {
                let mut request = serde_json::to_value(request).unwrap_or_default();
                if let Some(params) = request.get_mut("params").and_then(Value::as_object_mut) {
                    let meta = params.entry("_meta").or_insert_with(|| json!({}));
                    if let Some(meta) = meta.as_object_mut() {
                        meta.insert(RELATED_TASK.into(), json!({ "taskId": id }));
                    }
                }
                let left = wait.saturating_sub(started.elapsed());
                let answer = match tokio::time::timeout(left, crate::inputs::send(peer, None, request)).await {
                    Err(_) => return Err(still(task.status())),
                    Ok(answer) => answer.map_err(|e| {
                        McpError::internal_error(format!("the client did not answer the task's request: {e}"), None)
                    })?,
                };
                // Each answer goes to the task as it comes: none is lost to a later failure.
                tasks.update(caller, id, [(key.clone(), answer)].into()).await?;
                asked.insert(key.clone());
                relayed = true;
            }
            if relayed {
                continue;
            }
        }
        if started.elapsed() >= wait {
            return Err(still(task.status()));
        }
        tokio::time::sleep(RESULT_POLL).await;
    };
    match task.payload {
        TaskPayload::Completed { mut result } => {
            // As the call would have answered this revision (which has no `resultType`).
            result.remove("resultType");
            let meta = result.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(RELATED_TASK.into(), json!({ "taskId": id }));
            }
            Ok(Value::Object(result))
        }
        TaskPayload::Failed { error } => Err(serde_json::from_value(Value::Object(error))
            .unwrap_or_else(|_| McpError::internal_error("the task failed", None))),
        _ => Err(McpError::invalid_params(
            format!("task {id} was cancelled: it has no result"),
            Some(json!({ "taskId": id })),
        )),
    }
}

async fn list(tasks: &Tasks, caller: &Caller, cursor: Option<&Value>) -> Result<Value, McpError> {
    let after = match cursor.filter(|c| !c.is_null()) {
        None => None,
        Some(cursor) => Some(read_cursor(cursor).ok_or_else(|| {
            McpError::invalid_params(format!("unknown cursor {cursor}: pass one tasks/list gave"), None)
        })?),
    };
    let mut page = tasks.list(caller, after, PAGE + 1).await?;
    let more = page.len() > PAGE;
    page.truncate(PAGE);
    let next = page.last().filter(|_| more).map(|(created, task)| format!("{created}.{}", task.task.task_id));
    let listed: Vec<Value> = page.iter().map(|(_, task)| wire_task(task)).collect();
    let mut result = json!({ "tasks": listed });
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    Ok(result)
}

/// A cursor of [`list`]: the last task's creation time and id.
fn read_cursor(cursor: &Value) -> Option<(i64, String)> {
    let (created, id) = cursor.as_str()?.split_once('.')?;
    uuid::Uuid::parse_str(id).ok()?;
    Some((created.parse().ok()?, id.to_string()))
}

/// A status as the protocol writes it (`input_required`, `completed`, …).
fn word(status: TaskStatus) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn terminal(task: &DetailedTask) -> McpError {
    let status = word(wire_status(task).0);
    McpError::invalid_params(
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

/// `initialize`'s answer declaring this revision's task capability.
fn declare_tasks(mut result: Value) -> Value {
    if result.get("protocolVersion").and_then(Value::as_str) == Some(REVISION)
        && let Some(capabilities) = result.get_mut("capabilities").and_then(Value::as_object_mut)
    {
        capabilities
            .insert("tasks".into(), json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }));
    }
    result
}

/// `tools/list`'s answer saying which tools may, or must, run as a task.
fn task_support(executions: &HashMap<String, Value>, mut result: Value) -> Value {
    for tool in result.get_mut("tools").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(execution) = tool.get("name").and_then(Value::as_str).and_then(|name| executions.get(name)) {
            tool["execution"] = execution.clone();
        }
    }
    result
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

/// `response` with `edit` applied to the result answering request `id` (its error, when `edit`
/// fails), in a JSON body or in the events of a stream: every other event passes on at once, as
/// it comes (a question or progress before the answer reaches the client while the call runs).
async fn rewrite<F, Fut>(response: Response, id: Value, edit: F) -> Response
where
    F: FnOnce(Value) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Value, Value>> + Send + 'static,
{
    let kind = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let stream = kind.starts_with("text/event-stream");
    if !stream && !kind.starts_with("application/json") {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut edit = Some(edit);
    if !stream {
        let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
            return Response::from_parts(parts, Body::empty());
        };
        let edited = edit_message(&bytes, &id, &mut edit).await;
        return Response::from_parts(parts, Body::from(edited.map_or(bytes, Bytes::from)));
    }
    // Line by line: an event's `data:` line holds one message.
    let lines = futures_util::stream::unfold(
        (body.into_data_stream(), Vec::<u8>::new(), edit, id, false),
        |(mut body, mut pending, mut edit, id, ended)| async move {
            loop {
                if let Some(end) = pending.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    let out = match line.strip_prefix(b"data:") {
                        Some(data) => match edit_message(data.trim_ascii(), &id, &mut edit).await {
                            Some(edited) => format!("data: {edited}\n").into_bytes(),
                            None => line,
                        },
                        None => line,
                    };
                    return Some((Ok(Bytes::from(out)), (body, pending, edit, id, ended)));
                }
                if ended {
                    return None;
                }
                match body.next().await {
                    Some(Ok(chunk)) => pending.extend_from_slice(&chunk),
                    Some(Err(e)) => return Some((Err(e), (body, Vec::new(), edit, id, true))),
                    None if pending.is_empty() => return None,
                    None => {
                        let rest = Bytes::from(std::mem::take(&mut pending));
                        return Some((Ok::<Bytes, axum::Error>(rest), (body, pending, edit, id, true)));
                    }
                }
            }
        },
    );
    Response::from_parts(parts, Body::from_stream(lines))
}

/// `text` (one JSON-RPC message) with `edit` applied, when it is the result answering `id` and
/// `edit` is still unused.
async fn edit_message<F, Fut>(text: &[u8], id: &Value, edit: &mut Option<F>) -> Option<String>
where
    F: FnOnce(Value) -> Fut,
    Fut: Future<Output = Result<Value, Value>>,
{
    let mut message: Value = serde_json::from_slice(text).ok()?;
    if edit.is_none() || message.get("id") != Some(id) {
        return None;
    }
    let result = message.as_object_mut()?.remove("result")?;
    match (edit.take()?)(result).await {
        Ok(result) => message["result"] = result,
        Err(error) => message["error"] = error,
    }
    Some(message.to_string())
}
