//! Logs: the process's subscriber (`text` or `json`, by `--log-format`), and the request log, one
//! span per request and one line when its response is ready.
//!
//! The request line carries the request id, the client address, the method, the path (never the
//! query string, which may hold codes or other secrets), the operation id and tenant (recorded by
//! the gate in the span's empty fields once it knows them), the status and the latency. No token, header value
//! or body is ever logged.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;
use tracing::field::Empty;

use crate::client_address::ClientAddress;

/// How log lines are written to standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Text on a terminal, JSON otherwise (a container runtime or a log collector).
    #[default]
    Auto,
    /// Human-readable lines.
    Text,
    /// One JSON object per line, the span's fields included.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(LogFormat::Auto),
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("unknown log format {other:?}: use text, json or auto")),
        }
    }
}

/// Installs the process's subscriber: `RUST_LOG` filters (default `info`), lines go to standard
/// error in `format`.
pub fn init(format: LogFormat) {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let json = match format {
        LogFormat::Auto => !terminal,
        LogFormat::Text => false,
        LogFormat::Json => true,
    };
    // A second initialisation (tests that start several servers in one process) keeps the first.
    let _ = if json {
        builder.json().with_current_span(true).with_span_list(false).try_init()
    } else {
        builder.with_ansi(terminal).try_init()
    };
}

/// The request log: runs the request in a span naming it and logs its outcome.
pub async fn layer(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let client = request.extensions().get::<ClientAddress>().map(ToString::to_string).unwrap_or_default();
    let span = tracing::info_span!(
        "request",
        request_id = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or_default(),
        client = %client,
        method = %request.method(),
        path = request.uri().path(),
        operation = Empty,
        tenant = Empty,
    );
    async move {
        let response = next.run(request).await;
        let status = response.status().as_u16();
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        if response.status().is_server_error() {
            tracing::warn!(status, latency_ms, "request");
        } else {
            tracing::info!(status, latency_ms, "request");
        }
        response
    }
    .instrument(span)
    .await
}
