//! A tool call: in the request, within its input round ([`crate::inputs`]), or as a task
//! ([`crate::tasks`]) from the operation's `cx.background()`; its answer turned into the tool's
//! result (structured content, declared content blocks, a file as content of its type, an error
//! result).

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use support::{Operation, ToolAnswer};

use super::{ToolServer, fill_from, reads};
use crate::caller::Caller;

impl ToolServer {
    /// A tool's file answer as its content ([`reads::file_content`]): under the URI of the resource
    /// its operation reads, else of the REST route that serves it, filled in from the arguments.
    async fn file_result(&self, op: &'static Operation, arguments: &Value, file: support::File) -> CallToolResult {
        let media_type = file.media_type.clone();
        let Ok(bytes) = axum::body::to_bytes(file.body, reads::CONTENT_LIMIT).await else {
            let limit = reads::CONTENT_LIMIT;
            let text = format!("the answer is larger than the {limit} bytes a tool result carries");
            return CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)]);
        };
        let resource = self.catalog.uri_of(op.id);
        let uri = match resource {
            Some(template) => fill_from(template, arguments),
            None => format!("{}{}", self.public, fill_from(op.full_path, arguments)),
        };
        CallToolResult::success(vec![reads::file_content(&uri, resource.is_some(), &media_type, &bytes)])
    }

    /// Runs `call` (the tool call or prompt `binding` names) within its request's input round
    /// ([`crate::inputs`]) when it `asks` for input: on 2026-07-28 rounds of `responses` and
    /// `state`; before that, asked directly within a session, and otherwise it cannot be. A call
    /// that asks nothing simply runs.
    pub(super) async fn in_round<F: Future<Output: crate::inputs::Succeeded>>(
        &self,
        context: &RequestContext<RoleServer>,
        binding: crate::inputs::Binding<'_>,
        asks: bool,
        (responses, state): (Option<rmcp::model::InputResponses>, Option<&str>),
        call: F,
    ) -> Result<crate::inputs::Outcome<F::Output>, McpError> {
        if !asks {
            return Ok(crate::inputs::Outcome::Done(call.await));
        }
        if context.meta.protocol_version().is_none() {
            let parts = context.extensions.get::<axum::http::request::Parts>();
            let session = self.sessions && parts.is_some_and(|p| p.headers.contains_key("mcp-session-id"));
            return match session {
                true => crate::inputs::live(context.peer.clone(), context.id.clone(), call)
                    .await
                    .map(crate::inputs::Outcome::Done),
                false => Ok(crate::inputs::Outcome::Done(call.await)),
            };
        }
        let inputs = crate::inputs::Inputs::new(self.gate.keys())?;
        inputs.run(binding, context.meta.client_capabilities(), responses, state, call).await
    }

    pub(super) fn task_store(&self) -> Result<&crate::tasks::Tasks, McpError> {
        self.tasks.as_ref().ok_or_else(|| McpError::internal_error("this server keeps no tasks", None))
    }

    /// Calls tool `op` for a client that declared the tasks extension: in the request until the
    /// operation goes to the background (`cx.background()`), then as a task, answered at once.
    pub(super) async fn call_as_task(
        &self,
        tasks: crate::tasks::Tasks,
        op: &'static Operation,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        caller: Caller,
    ) -> Result<CallToolResponse, McpError> {
        let (waiting, created) = tokio::sync::oneshot::channel();
        let slot = crate::tasks::Slot::new(tasks.clone(), caller.clone(), request.name.to_string(), waiting);
        let server = self.clone();
        let mut work = tokio::spawn(slot.scope(async move { server.call(op, request, &context, caller).await }));
        let mut created = std::pin::pin!(created);
        tokio::select! {
            // A task created is the answer, even when its work has already ended (or broken).
            biased;
            Ok(task) = &mut created => {
                let id = task.task_id.clone();
                tasks.supervise(id, work);
                Ok(CallToolResponse::Task(rmcp::model::CreateTaskResult::new(task)))
            }
            done = &mut work => done.unwrap_or_else(|_| {
                Err(McpError::internal_error("the operation failed unexpectedly (it panicked)", None))
            }),
        }
    }

    /// Calls tool `op` in the request.
    pub(super) async fn call(
        &self,
        op: &'static Operation,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        caller: Caller,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let given = arguments.clone();
        let started = std::time::Instant::now();
        let request_id = caller.request_id.clone();
        let reporter = crate::progress::Reporter::of(context);
        let run = reporter.scope(self.api.call_operation(&self.gate, caller.clone(), op, arguments));
        let binding =
            crate::inputs::Binding { caller: &caller, method: "tools/call", name: &request.name, arguments: &given };
        let answers = (request.input_responses, request.request_state.as_deref());
        let round = self.in_round(context, binding, op.asks_input, answers, run);
        let called = match round.await? {
            crate::inputs::Outcome::Done(called) => called,
            crate::inputs::Outcome::InputRequired(asked) => {
                let name = op.tool.unwrap_or(op.id);
                crate::metrics::tool_call(self.api.info().name, name, "input_required", Some(started.elapsed()));
                return Ok(asked.into());
            }
        };
        if let Some(outcome) = &called {
            let word = if outcome.is_ok() { "ok" } else { "error" };
            crate::metrics::tool_call(self.api.info().name, op.tool.unwrap_or(op.id), word, Some(started.elapsed()));
        }
        match called {
            None => Err(McpError::invalid_params(format!("unknown tool: {}", request.name), None)),
            Some(Ok(ToolAnswer::Json(value))) => {
                let blocks = self.catalog.tool_content(&request.name).map(|blocks| {
                    // The output's fields: the body itself, or inside a success envelope.
                    let enveloped = self.api.info().wire.success != support::SuccessFormat::Bare;
                    let output = if enveloped { value.get("data").unwrap_or(&Value::Null) } else { &value };
                    reads::declared_content(blocks, output)
                });
                let mut result = CallToolResult::structured(value);
                if let Some(blocks) = blocks {
                    result.content = blocks;
                }
                Ok(result.into())
            }
            Some(Ok(ToolAnswer::File(file))) => Ok(self.file_result(op, &given, file).await.into()),
            Some(Err(failure)) => {
                let body = failure.into_body(self.api.info(), Some(&request_id));
                Ok(CallToolResult::structured_error(body).into())
            }
        }
    }
}
