//! What an operation reports while it runs: its progress (`cx.progress(done, total, message)`)
//! and log messages (`cx.log(level, message)`). Over MCP they reach the client that called it,
//! as `notifications/progress` when the call carried a progress token and as
//! `notifications/message` at or above the level the client asked for (2026-07-28: the request's
//! `logLevel`, none without one; earlier revisions: `info`, as a stateless server remembers no
//! `logging/setLevel`), on the call's own response stream. Every report also goes to the request
//! log. A call that became an MCP task shows its progress as the task's status message. A REST
//! call reports to the log only.

// MCP's log notifications are deprecated in its draft (SEP-2577) but are part of every revision
// clients speak today, the 2026-07-28 one included.
#![allow(deprecated, reason = "MCP logging is deprecated in the draft, not in the revisions served")]

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};

use crate::context::Context;

tokio::task_local! {
    /// The MCP call in flight on this task, and where its reports go.
    static REPORTER: Reporter;
}

/// The severity of a log message, lowest first (RFC 5424's, as MCP names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at.
    Warning,
    /// A failure.
    Error,
}

impl LogLevel {
    fn mcp(self) -> LoggingLevel {
        match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
        }
    }
}

/// Where one MCP call's reports go: the client, its progress token, the lowest level it reads.
#[derive(Clone)]
pub(crate) struct Reporter {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    level: Option<LoggingLevel>,
}

/// How severe each MCP level is, to compare them (rmcp's enum is in that order).
fn rank(level: LoggingLevel) -> u8 {
    level as u8
}

impl Reporter {
    /// The reports of the request `context` is for.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Reporter {
        let level = match context.meta.log_level() {
            Some(level) => Some(level),
            // The stateless revision sends logs only to a request that asks for them.
            None if context.meta.protocol_version().is_some() => None,
            None => Some(LoggingLevel::Info),
        };
        Reporter { peer: context.peer.clone(), token: context.meta.get_progress_token(), level }
    }

    /// Runs `call` with its reports going to this client.
    pub(crate) async fn scope<F: Future>(self, call: F) -> F::Output {
        REPORTER.scope(self, call).await
    }
}

impl Context {
    /// Reports that the call has done `done` of `total` (when known), with a message: to an MCP
    /// client that asked for progress, and to the request log.
    pub async fn progress(&mut self, done: f64, total: Option<f64>, message: Option<&str>) {
        tracing::debug!(operation = self.op.id, done, total, message, "progress");
        // A call that became a task shows it as the task's status message.
        let shown = match (message, total) {
            (Some(m), _) => m.to_string(),
            (None, Some(total)) => format!("{done} of {total}"),
            (None, None) => format!("{done} done"),
        };
        crate::tasks::report(shown).await;
        let Ok(reporter) = REPORTER.try_with(Clone::clone) else { return };
        let Some(token) = reporter.token else { return };
        let mut param = ProgressNotificationParam::new(token, done);
        param.total = total;
        param.message = message.map(str::to_string);
        // A client gone is no failure of the call: it learns the outcome or never will.
        let _ = reporter.peer.notify_progress(param).await;
    }

    /// Logs `message` at `level`: to an MCP client reading that level, and to the request log.
    pub async fn log(&mut self, level: LogLevel, message: &str) {
        match level {
            LogLevel::Debug => tracing::debug!(operation = self.op.id, "{message}"),
            LogLevel::Info | LogLevel::Notice => tracing::info!(operation = self.op.id, "{message}"),
            LogLevel::Warning => tracing::warn!(operation = self.op.id, "{message}"),
            LogLevel::Error => tracing::error!(operation = self.op.id, "{message}"),
        }
        let Ok(reporter) = REPORTER.try_with(Clone::clone) else { return };
        match reporter.level {
            Some(lowest) if rank(level.mcp()) >= rank(lowest) => {
                let mut param = LoggingMessageNotificationParam::new(level.mcp(), serde_json::json!(message));
                param.logger = Some(self.op.id.to_string());
                let _ = reporter.peer.notify_logging_message(param).await;
            }
            _ => {}
        }
    }
}
