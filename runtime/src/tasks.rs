//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a tool call that goes on
//! in the background after its operation calls `cx.background()`, for a client that declared the
//! extension. The client gets a `CreateTaskResult` at once and polls `tasks/get`; it answers the
//! task's input requests with `tasks/update` and stops it with `tasks/cancel`.
//!
//! Each task is a row of the platform's database (`mcp_tasks`), so every replica answers for it
//! and its outcome survives a restart: its status with what goes with it (the result, the error,
//! or the input requests it waits for), the answers delivered and not yet taken, and its
//! runner's heartbeat. A task whose runner stopped beating (its server stopped or crashed while
//! it ran) is failed when next read. A task belongs to the caller (tenant and subject) that
//! started it: to anyone else, and after its `ttlMs`, its id is unknown (`-32602`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::{Value, json};
use sqlx::Row;

use crate::caller::Caller;
use crate::store::{Store, now_ms};

/// How long a task stays readable after it starts.
pub const TTL_MS: u64 = 60 * 60 * 1000;

/// How often a client is told to poll.
pub const POLL_MS: u64 = 500;

/// How often a running task's runner says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(2);

/// A running task whose runner has not beaten for this long has lost its server.
const STALE_MS: i64 = 15_000;

/// How often a task waiting for answers looks for them.
const ANSWER_POLL: Duration = Duration::from_millis(200);

/// The tasks of one service.
#[derive(Clone)]
pub(crate) struct Tasks {
    store: Store,
    service: &'static str,
    /// The tasks this process runs, to stop one at once when it is cancelled here.
    running: Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>>,
}

/// How a task ended.
pub(crate) enum End {
    /// The tool ran (its result may be an error result).
    Completed(Value),
    /// A protocol-level failure: the JSON-RPC error.
    Failed(Value),
}

impl End {
    /// How a tool call that became a task ended: its result, or its JSON-RPC error.
    fn of_call(answer: Result<rmcp::model::CallToolResponse, McpError>) -> End {
        let failed = |e: McpError| End::Failed(serde_json::to_value(e).unwrap_or(Value::Null));
        match answer {
            Ok(rmcp::model::CallToolResponse::Complete(result)) => match serde_json::to_value(result) {
                Ok(result) => End::Completed(result),
                Err(e) => failed(McpError::internal_error(format!("the result: {e}"), None)),
            },
            Ok(_) => failed(McpError::internal_error("the task's call answered no result", None)),
            Err(e) => failed(e),
        }
    }
}

/// One row.
struct Record {
    id: String,
    status: String,
    status_message: Option<String>,
    payload: Option<String>,
    created_at: i64,
    updated_at: i64,
    heartbeat_at: i64,
    ttl_ms: i64,
}

const COLUMNS: &str = "id, status, status_message, payload, created_at, updated_at, heartbeat_at, ttl_ms";

fn record(row: &sqlx::any::AnyRow) -> Result<Record, sqlx::Error> {
    Ok(Record {
        id: row.try_get("id")?,
        status: row.try_get("status")?,
        status_message: row.try_get("status_message")?,
        payload: row.try_get("payload")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        heartbeat_at: row.try_get("heartbeat_at")?,
        ttl_ms: row.try_get("ttl_ms")?,
    })
}

fn status_of(word: &str) -> TaskStatus {
    match word {
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        _ => TaskStatus::Working,
    }
}

fn time(ms: i64) -> String {
    crate::store::to_time(ms).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn unknown(id: &str) -> McpError {
    McpError::invalid_params(format!("unknown task {id:?}"), Some(json!({ "taskId": id })))
}

fn storage(e: impl std::fmt::Display) -> McpError {
    McpError::internal_error(format!("the task store: {e}"), None)
}

impl Record {
    /// Whether the task still runs by its row but its runner went silent: it will never finish,
    /// its server stopped.
    fn stale(&self) -> bool {
        matches!(self.status.as_str(), "working" | "input_required") && now_ms() - self.heartbeat_at > STALE_MS
    }

    fn task(&self) -> Task {
        let mut task =
            Task::new(self.id.clone(), status_of(&self.status), time(self.created_at), time(self.updated_at))
                .with_ttl_ms(u64::try_from(self.ttl_ms).unwrap_or(TTL_MS));
        task.status_message = self.status_message.clone();
        task.poll_interval_ms = Some(POLL_MS);
        task
    }

    fn payload(&self) -> Option<Value> {
        self.payload.as_deref().and_then(|p| serde_json::from_str(p).ok())
    }

    fn detailed(&self) -> DetailedTask {
        let object = |v: Option<Value>| -> JsonObject {
            match v {
                Some(Value::Object(o)) => o,
                _ => JsonObject::new(),
            }
        };
        let payload = match status_of(&self.status) {
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: self
                    .payload()
                    .and_then(|p| serde_json::from_value::<InputRequests>(p).ok())
                    .unwrap_or_default(),
            },
            TaskStatus::Completed => TaskPayload::Completed { result: object(self.payload()) },
            TaskStatus::Failed => TaskPayload::Failed { error: object(self.payload()) },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        DetailedTask::new(self.task(), payload)
    }
}

/// Runs `work` on a task of its own: the store refuses a connection to a task that holds an
/// operation's transaction, and a task's bookkeeping is never part of that transaction.
async fn apart<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> Result<T, McpError> {
    tokio::spawn(work).await.map_err(|e| McpError::internal_error(format!("the task store: {e}"), None))
}

impl Tasks {
    pub(crate) fn new(store: Store, service: &'static str) -> Tasks {
        Tasks { store, service, running: Default::default() }
    }

    /// Records a new task of `tool` for `caller`, working: from now on `tasks/get` finds it.
    pub(crate) async fn create(&self, caller: &Caller, tool: &str) -> Result<Task, McpError> {
        Ok(self.insert(caller, tool, None).await?.task())
    }

    /// A task of `tool` for `caller` that has already ended as `end`, for a call that ended before
    /// it went to the background when its client asked for a task (the protocol revisions where
    /// the client, not the operation, decides that a call is a task).
    pub(crate) async fn ended(&self, caller: &Caller, tool: &str, end: End) -> Result<DetailedTask, McpError> {
        Ok(self.insert(caller, tool, Some(end)).await?.detailed())
    }

    /// One new row: working, or ended as `end`.
    async fn insert(&self, caller: &Caller, tool: &str, end: Option<End>) -> Result<Record, McpError> {
        let (store, service) = (self.store.clone(), self.service);
        let (tenant, subject, tool) = (caller.tenant.clone(), caller.subject.clone(), tool.to_string());
        let (status, payload) = match end {
            None => ("working", None),
            Some(End::Completed(result)) => ("completed", Some(result.to_string())),
            Some(End::Failed(error)) => ("failed", Some(error.to_string())),
        };
        apart(async move {
            let now = now_ms();
            // Expired tasks go as new ones come.
            sqlx::query("DELETE FROM mcp_tasks WHERE expires_at < $1").bind(now).execute(store.pool()).await?;
            let ttl = i64::try_from(TTL_MS).unwrap_or(i64::MAX);
            let id = uuid::Uuid::new_v4().to_string();
            sqlx::query(
                "INSERT INTO mcp_tasks (id, service, tenant_id, subject, tool, status, payload, answers, created_at, \
                 updated_at, heartbeat_at, ttl_ms, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, '{}', $8, $8, $8, $9, $10)",
            )
            .bind(&id)
            .bind(service)
            .bind(tenant)
            .bind(subject)
            .bind(tool)
            .bind(status)
            .bind(payload.clone())
            .bind(now)
            .bind(ttl)
            .bind(now.saturating_add(ttl))
            .execute(store.pool())
            .await?;
            let record = Record {
                id,
                status: status.into(),
                status_message: None,
                payload,
                created_at: now,
                updated_at: now,
                heartbeat_at: now,
                ttl_ms: ttl,
            };
            Ok::<_, sqlx::Error>(record)
        })
        .await?
        .map_err(storage)
    }

    /// The caller's task `id`, unexpired, if it exists (read beside the writer: a poll never
    /// waits for a write).
    async fn find(&self, caller: &Caller, id: &str) -> Result<Record, McpError> {
        let record = self.read(caller, id).await?;
        if !record.stale() {
            return Ok(record);
        }
        let error = json!({ "code": -32603, "message": "the server running this task stopped before it finished" });
        self.finish(id, End::Failed(error)).await;
        self.read(caller, id).await
    }

    /// The row of [`Tasks::find`], as stored.
    async fn read(&self, caller: &Caller, id: &str) -> Result<Record, McpError> {
        let select = format!(
            "SELECT {COLUMNS} FROM mcp_tasks WHERE id = $1 AND service = $2 AND tenant_id = $3 AND subject = $4 \
             AND expires_at >= $5"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(select))
            .bind(id)
            .bind(self.service)
            .bind(&caller.tenant)
            .bind(&caller.subject)
            .bind(now_ms())
            .fetch_optional(self.store.readers())
            .await
            .map_err(storage)?;
        row.as_ref().map(record).transpose().map_err(storage)?.ok_or_else(|| unknown(id))
    }

    /// `tasks/get`.
    pub(crate) async fn get(&self, caller: &Caller, id: &str) -> Result<DetailedTask, McpError> {
        Ok(self.find(caller, id).await?.detailed())
    }

    /// The caller's unexpired tasks, newest first, `limit` at most, after the one `after` names
    /// (its creation time and id, as the previous page's last task gives them).
    pub(crate) async fn list(
        &self,
        caller: &Caller,
        after: Option<(i64, String)>,
        limit: usize,
    ) -> Result<Vec<(i64, DetailedTask)>, McpError> {
        let page = if after.is_some() { " AND (created_at < $5 OR (created_at = $5 AND id < $6))" } else { "" };
        let select = format!(
            "SELECT {COLUMNS} FROM mcp_tasks WHERE service = $1 AND tenant_id = $2 AND subject = $3 \
             AND expires_at >= $4{page} ORDER BY created_at DESC, id DESC LIMIT {limit}"
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(select))
            .bind(self.service)
            .bind(&caller.tenant)
            .bind(&caller.subject)
            .bind(now_ms());
        if let Some((created, id)) = after {
            query = query.bind(created).bind(id);
        }
        let rows = query.fetch_all(self.store.readers()).await.map_err(storage)?;
        let mut tasks = Vec::with_capacity(rows.len());
        for row in &rows {
            let record = record(row).map_err(storage)?;
            // A task whose runner went silent is failed as `tasks/get` would find it.
            let record = match record.stale() {
                // (Gone meanwhile, expired: then it is no longer listed.)
                true => match self.find(caller, &record.id).await {
                    Ok(record) => record,
                    Err(_) => continue,
                },
                false => record,
            };
            tasks.push((record.created_at, record.detailed()));
        }
        Ok(tasks)
    }

    /// `tasks/cancel`: a running task is cancelled (its runner stops), a finished one stays.
    pub(crate) async fn cancel(&self, caller: &Caller, id: &str) -> Result<(), McpError> {
        self.find(caller, id).await?;
        sqlx::query(
            "UPDATE mcp_tasks SET status = 'cancelled', payload = NULL, updated_at = $1 \
             WHERE id = $2 AND status IN ('working', 'input_required')",
        )
        .bind(now_ms())
        .bind(id)
        .execute(self.store.pool())
        .await
        .map_err(storage)?;
        if let Some(running) = self.running.lock().unwrap_or_else(|e| e.into_inner()).remove(id) {
            running.abort();
        }
        Ok(())
    }

    /// `tasks/update`: answers to the task's pending input requests (other keys are ignored).
    pub(crate) async fn update(&self, caller: &Caller, id: &str, responses: InputResponses) -> Result<(), McpError> {
        self.find(caller, id).await?;
        let mut tx = self.store.begin().await.map_err(storage)?;
        let select = format!("SELECT status, payload, answers FROM mcp_tasks WHERE id = $1{}", self.store.for_update());
        let row = sqlx::query(sqlx::AssertSqlSafe(select)).bind(id).fetch_one(&mut *tx).await.map_err(storage)?;
        let status: String = row.try_get("status").map_err(storage)?;
        if status != "input_required" {
            return tx.rollback().await.map_err(storage);
        }
        let payload: Option<String> = row.try_get("payload").map_err(storage)?;
        let answers: String = row.try_get("answers").map_err(storage)?;
        let mut pending: BTreeMap<String, Value> =
            payload.as_deref().and_then(|p| serde_json::from_str(p).ok()).unwrap_or_default();
        let mut answers: BTreeMap<String, Value> = serde_json::from_str(&answers).unwrap_or_default();
        for (key, answer) in responses {
            if pending.remove(&key).is_some() {
                answers.insert(key, answer);
            }
        }
        let (status, payload) = match pending.is_empty() {
            true => ("working", None),
            false => ("input_required", Some(json!(pending).to_string())),
        };
        sqlx::query("UPDATE mcp_tasks SET status = $1, payload = $2, answers = $3, updated_at = $4 WHERE id = $5")
            .bind(status)
            .bind(payload)
            .bind(json!(answers).to_string())
            .bind(now_ms())
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        tx.commit().await.map_err(storage)
    }

    /// Records how task `id` ended, unless it already has (a cancelled task stays cancelled).
    pub(crate) async fn finish(&self, id: &str, end: End) {
        self.running.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        let (status, payload) = match end {
            End::Completed(result) => ("completed", result),
            End::Failed(error) => ("failed", error),
        };
        let done = sqlx::query(
            "UPDATE mcp_tasks SET status = $1, payload = $2, updated_at = $3 \
             WHERE id = $4 AND status IN ('working', 'input_required')",
        )
        .bind(status)
        .bind(payload.to_string())
        .bind(now_ms())
        .bind(id)
        .execute(self.store.pool())
        .await;
        if let Err(e) = done {
            tracing::error!(task = id, error = %e, "could not record how a task ended");
        }
    }

    /// Supervises task `id`, whose work is `work` (already running): beats its heartbeat, stops
    /// it once it is cancelled, records how it ended.
    pub(crate) fn supervise(
        &self,
        id: String,
        mut work: tokio::task::JoinHandle<Result<rmcp::model::CallToolResponse, McpError>>,
    ) {
        self.running.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), work.abort_handle());
        let tasks = self.clone();
        tokio::spawn(async move {
            let mut beat = tokio::time::interval(HEARTBEAT);
            loop {
                tokio::select! {
                    ended = &mut work => {
                        let end = match ended {
                            Ok(answer) => End::of_call(answer),
                            // Aborted: cancelled, and recorded so.
                            Err(e) if e.is_cancelled() => break,
                            Err(_) => End::Failed(json!({ "code": -32603, "message": "the operation failed unexpectedly (it panicked)" })),
                        };
                        tasks.finish(&id, end).await;
                        break;
                    }
                    _ = beat.tick() => {
                        if !tasks.beat(&id).await {
                            work.abort();
                        }
                    }
                }
            }
            tasks.running.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
        });
    }

    /// Says task `id` is alive; `false` once it should stop (cancelled, or gone).
    async fn beat(&self, id: &str) -> bool {
        let done = sqlx::query(
            "UPDATE mcp_tasks SET heartbeat_at = $1 WHERE id = $2 AND status IN ('working', 'input_required')",
        )
        .bind(now_ms())
        .bind(id)
        .execute(self.store.pool())
        .await;
        // A storage fault is no reason to stop the work: the next beat may pass.
        done.map(|d| d.rows_affected() > 0).unwrap_or(true)
    }

    /// Asks the client `requests` (by key) through task `id` and waits for every answer.
    pub(crate) async fn ask(
        &self,
        id: &str,
        requests: BTreeMap<String, Value>,
    ) -> Result<BTreeMap<String, Value>, String> {
        let tasks = self.clone();
        let id = id.to_string();
        apart(async move { tasks.ask_here(&id, requests).await }).await.map_err(|e| e.message.to_string())?
    }

    async fn ask_here(&self, id: &str, requests: BTreeMap<String, Value>) -> Result<BTreeMap<String, Value>, String> {
        let keys: Vec<String> = requests.keys().cloned().collect();
        sqlx::query(
            "UPDATE mcp_tasks SET status = 'input_required', payload = $1, updated_at = $2 \
             WHERE id = $3 AND status IN ('working', 'input_required')",
        )
        .bind(json!(requests).to_string())
        .bind(now_ms())
        .bind(id)
        .execute(self.store.pool())
        .await
        .map_err(|e| e.to_string())?;
        loop {
            tokio::time::sleep(ANSWER_POLL).await;
            let mut tx = self.store.begin().await.map_err(|e| e.to_string())?;
            let select = format!("SELECT status, answers FROM mcp_tasks WHERE id = $1{}", self.store.for_update());
            let row = sqlx::query(sqlx::AssertSqlSafe(select))
                .bind(id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(|e| e.to_string())?
                .ok_or("the task is gone")?;
            let status: String = row.try_get("status").map_err(|e| e.to_string())?;
            if !matches!(status.as_str(), "working" | "input_required") {
                let _ = tx.rollback().await;
                return Err(format!("the task is {status}"));
            }
            let answers: String = row.try_get("answers").map_err(|e| e.to_string())?;
            let mut answers: BTreeMap<String, Value> = serde_json::from_str(&answers).unwrap_or_default();
            if !keys.iter().all(|k| answers.contains_key(k)) {
                let _ = tx.rollback().await;
                continue;
            }
            let taken: BTreeMap<String, Value> = keys.iter().filter_map(|k| answers.remove_entry(k)).collect();
            sqlx::query("UPDATE mcp_tasks SET answers = $1, updated_at = $2 WHERE id = $3")
                .bind(json!(answers).to_string())
                .bind(now_ms())
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(|e| e.to_string())?;
            tx.commit().await.map_err(|e| e.to_string())?;
            return Ok(taken);
        }
    }
}

tokio::task_local! {
    /// The tool call in flight that may go on as a task: where its task goes, and who waits for it.
    static BACKGROUND: Slot;
}

/// What a call needs to become a task.
#[derive(Clone)]
pub(crate) struct Slot {
    tasks: Tasks,
    caller: Caller,
    tool: String,
    /// The request, waiting for the task (taken when it is created).
    waiting: Arc<Mutex<Option<tokio::sync::oneshot::Sender<Task>>>>,
    /// Whether the call became a task.
    became: Arc<std::sync::atomic::AtomicBool>,
    /// The task it became.
    id: Arc<std::sync::OnceLock<String>>,
}

impl Slot {
    /// A call of `tool` by `caller` that may become a task of `tasks`, announced on `waiting`.
    pub(crate) fn new(tasks: Tasks, caller: Caller, tool: String, waiting: tokio::sync::oneshot::Sender<Task>) -> Slot {
        Slot {
            tasks,
            caller,
            tool,
            waiting: Arc::new(Mutex::new(Some(waiting))),
            became: Default::default(),
            id: Default::default(),
        }
    }

    /// Runs `call` as this call.
    pub(crate) async fn scope<F: Future>(self, call: F) -> F::Output {
        BACKGROUND.scope(self, call).await
    }
}

impl crate::context::Context {
    /// From here on the call may go on in the background: a client that declared the MCP tasks
    /// extension gets its task now and polls it (its input requests, answered with `tasks/update`,
    /// reach `cx.input` as before); any other caller keeps waiting on the call. Call it before the
    /// transaction begins: a task's work outlives the request, and a transaction is the
    /// request's. Calling it again, or where the call cannot become a task, does nothing.
    /// Whether the call is now a task: an operation may then wait for work it would otherwise
    /// leave running after its answer.
    pub async fn background(&mut self) -> bool {
        let Ok(slot) = BACKGROUND.try_with(Clone::clone) else { return false };
        let Some(waiting) = slot.waiting.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            // Asked before: a task when the first time made one.
            return slot.became.load(std::sync::atomic::Ordering::Acquire);
        };
        if self.tx.is_begun() {
            tracing::warn!(operation = self.op.id, "background() inside a transaction: the call stays in the request");
            return false;
        }
        match slot.tasks.create(&slot.caller, &slot.tool).await {
            Ok(task) => {
                let (tasks, id) = (slot.tasks.clone(), task.task_id.clone());
                crate::inputs::through_task(Arc::new(move |requests| {
                    let (tasks, id) = (tasks.clone(), id.clone());
                    Box::pin(async move { tasks.ask(&id, requests).await })
                }));
                slot.became.store(true, std::sync::atomic::Ordering::Release);
                let _ = slot.id.set(task.task_id.clone());
                let _ = waiting.send(task);
                true
            }
            Err(e) => {
                tracing::warn!(operation = self.op.id, error = %e.message, "no task: the call stays in the request");
                false
            }
        }
    }
}

/// Shows `message` as the status message of the task the call in flight became, if it did.
pub(crate) async fn report(message: String) {
    let Ok(slot) = BACKGROUND.try_with(Clone::clone) else { return };
    let Some(id) = slot.id.get().cloned() else { return };
    let store = slot.tasks.store.clone();
    let updated = apart(async move {
        sqlx::query(
            "UPDATE mcp_tasks SET status_message = $1, updated_at = $2 \
             WHERE id = $3 AND status IN ('working', 'input_required')",
        )
        .bind(message)
        .bind(now_ms())
        .bind(id)
        .execute(store.pool())
        .await
    })
    .await;
    if let Ok(Err(e)) = updated {
        tracing::warn!(error = %e, "could not show a task's progress");
    }
}
