//! Prometheus metrics, served at `GET /metrics` on their own listener (`--metrics-addr`), never on
//! the public port: the figures name every operation and their rates, which an operator's network
//! reaches and the internet does not, and a scraper then needs no token to hold and rotate.
//!
//! Off until a metrics address is configured: then [`install`] sets the process's recorder and
//! [`Server::build`](crate::Server) adds the request layer. Every registered service is measured
//! from its operation table, with no name written here:
//!
//! | metric | labels | what |
//! |---|---|---|
//! | `specwright_http_requests_total` | service, operation, status_class | responses, by class (`2xx` … `5xx`) |
//! | `specwright_http_request_duration_seconds` | service, operation | time to the response's head |
//! | `specwright_rate_limited_total` | service, operation | requests refused with 429 |
//! | `specwright_mcp_tool_calls_total` | service, tool, outcome | MCP `tools/call`: `ok`, `error`, `denied` |
//! | `specwright_mcp_tool_call_duration_seconds` | service, tool | time to run a tool |
//! | `specwright_mcp_reads_total` | service, method, operation, outcome | MCP `resources/read` (and prompts' embedded reads), and the listings `completion/complete` reads: `ok`, `error` |
//! | `specwright_mcp_read_duration_seconds` | service, method | time to read |
//! | `specwright_audit_batch_rows` | | audit rows made durable by one commit |
//! | `specwright_audit_commit_duration_seconds` | | time of a commit carrying audit rows |
//! | `specwright_audit_commit_failures_total` | | commits of audit rows that failed |
//! | `specwright_db_rows_waiting` | | rows (audit rows of failures) waiting for an unavailable database |
//! | `specwright_db_rows_dropped_total` | | rows dropped because too many already waited |
//! | `specwright_db_transaction_wait_seconds` | | time to get a pooled connection and open a transaction (on SQLite, the write lock's wait included) |
//! | `specwright_db_acquire_timeouts_total` | | transactions refused because no connection came within the acquire timeout |
//! | `specwright_db_pool_connections` | state (`idle`, `in_use`) | the pool, read at each scrape |
//! | `specwright_rate_limit_local_fallbacks_total` | | rate-limit checks counted in process because Redis did not answer |
//! | `specwright_build_info` | version | 1 |
//!
//! Probes are not counted. A request that reaches no operation (a document, the authorization
//! server, an unknown path, an MCP message) has an empty `operation`, and an empty `service` unless it was under a
//! service's MCP endpoint.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use support::Operation;

const REQUESTS: &str = "specwright_http_requests_total";
const REQUEST_SECONDS: &str = "specwright_http_request_duration_seconds";
const RATE_LIMITED: &str = "specwright_rate_limited_total";
const TOOL_CALLS: &str = "specwright_mcp_tool_calls_total";
const TOOL_SECONDS: &str = "specwright_mcp_tool_call_duration_seconds";
const MCP_READS: &str = "specwright_mcp_reads_total";
const MCP_READ_SECONDS: &str = "specwright_mcp_read_duration_seconds";
const AUDIT_ROWS: &str = "specwright_audit_batch_rows";
const AUDIT_SECONDS: &str = "specwright_audit_commit_duration_seconds";
const AUDIT_FAILURES: &str = "specwright_audit_commit_failures_total";
const TX_WAIT: &str = "specwright_db_transaction_wait_seconds";
const ACQUIRE_TIMEOUTS: &str = "specwright_db_acquire_timeouts_total";
const POOL: &str = "specwright_db_pool_connections";
const ROWS_WAITING: &str = "specwright_db_rows_waiting";
const ROWS_DROPPED: &str = "specwright_db_rows_dropped_total";
const FALLBACKS: &str = "specwright_rate_limit_local_fallbacks_total";

/// Latency buckets, in seconds: 0.5 ms to 10 s.
const SECONDS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
/// Rows per audit commit.
const ROWS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Sets the process's metrics recorder (once; later calls return the same handle) and starts its
/// upkeep (histograms are drained every few seconds, so memory stays bounded between scrapes).
pub fn install() -> anyhow::Result<PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)?
        .set_buckets_for_metric(Matcher::Full(AUDIT_ROWS.into()), ROWS)?
        .build_recorder();
    let handle = recorder.handle();
    if metrics::set_global_recorder(recorder).is_err() {
        // Another thread won the race; its recorder is the one that counts.
        return HANDLE.get().cloned().ok_or_else(|| anyhow::anyhow!("another metrics recorder is installed"));
    }
    let _ = HANDLE.set(handle.clone());
    let upkeep = handle.clone();
    std::thread::Builder::new().name("metrics-upkeep".into()).spawn(move || {
        loop {
            std::thread::sleep(Duration::from_secs(5));
            upkeep.run_upkeep();
        }
    })?;
    metrics::gauge!("specwright_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    Ok(handle)
}

/// Whether the recorder is installed (handles registered before it would count into nothing).
pub fn enabled() -> bool {
    HANDLE.get().is_some()
}

/// The `/metrics` router, to serve on the metrics listener. `sample` runs before each scrape, to
/// set the gauges read at that moment (see [`pool`] and [`fallbacks`]).
pub fn router(sample: impl Fn() + Clone + Send + Sync + 'static) -> anyhow::Result<Router> {
    let handle = install()?;
    Ok(Router::new().route(
        "/metrics",
        get(move || {
            sample();
            let mut response = (StatusCode::OK, handle.render()).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            std::future::ready(response)
        }),
    ))
}

/// The database pool now: `open` connections, `idle` among them.
pub fn pool(open: u32, idle: usize) {
    metrics::gauge!(POOL, "state" => "idle").set(idle as f64);
    metrics::gauge!(POOL, "state" => "in_use").set((open as usize).saturating_sub(idle) as f64);
}

/// How many rate-limit checks were counted in process because Redis did not answer, so far.
pub fn fallbacks(total: u64) {
    metrics::counter!(FALLBACKS).absolute(total);
}

/// The request's service and operation, filled in by whoever learns them (the gate, the MCP
/// layer) and read by the request layer once the response is ready.
#[derive(Debug, Clone, Default)]
pub struct Labels(Arc<OnceLock<(&'static str, &'static str)>>);

/// Names the operation a request runs (first naming wins).
pub fn name_operation(extensions: &axum::http::Extensions, op: &Operation) {
    if let Some(labels) = extensions.get::<Labels>() {
        let _ = labels.0.set((op.service.name, op.id));
    }
}

/// Names the service whose MCP endpoint a request reached.
pub fn name_service(extensions: &axum::http::Extensions, service: &'static str) {
    if let Some(labels) = extensions.get::<Labels>() {
        let _ = labels.0.set((service, ""));
    }
}

/// One label set's counters (by status class) and latency histogram, registered on first use (so
/// a scrape lists what happened, not every operation times every class at zero) and then reused.
#[derive(Debug)]
struct Handles {
    service: &'static str,
    operation: &'static str,
    by_class: [OnceLock<Counter>; 5],
    latency: OnceLock<Histogram>,
}

impl Handles {
    fn new(service: &'static str, operation: &'static str) -> Self {
        Handles { service, operation, by_class: Default::default(), latency: OnceLock::new() }
    }

    fn record(&self, status: StatusCode, took: Duration) {
        const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];
        let class = usize::from(status.as_u16() / 100).clamp(1, 5) - 1;
        let (service, operation) = (self.service, self.operation);
        self.by_class[class]
            .get_or_init(|| {
                let class = CLASSES[class];
                metrics::counter!(REQUESTS, "service" => service, "operation" => operation, "status_class" => class)
            })
            .increment(1);
        self.latency
            .get_or_init(|| metrics::histogram!(REQUEST_SECONDS, "service" => service, "operation" => operation))
            .record(took.as_secs_f64());
    }
}

/// Every registered operation's handles, looked up by (service, operation).
#[derive(Debug)]
pub struct Requests {
    table: HashMap<(&'static str, &'static str), Handles>,
    other: Handles,
}

impl Requests {
    /// A table for every one of `operations` and every service of `mcp_services` (its MCP
    /// endpoint's requests).
    pub fn new(
        operations: impl IntoIterator<Item = &'static Operation>,
        mcp_services: impl IntoIterator<Item = &'static str>,
    ) -> Self {
        let mut table = HashMap::new();
        for op in operations {
            table.insert((op.service.name, op.id), Handles::new(op.service.name, op.id));
        }
        for service in mcp_services {
            table.insert((service, ""), Handles::new(service, ""));
        }
        Requests { table, other: Handles::new("", "") }
    }
}

/// The request layer: counts each response by its operation and status class and records its
/// latency.
pub async fn layer(State(requests): State<Arc<Requests>>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let labels = Labels::default();
    request.extensions_mut().insert(labels.clone());
    let response = next.run(request).await;
    let handles = labels.0.get().and_then(|key| requests.table.get(key)).unwrap_or(&requests.other);
    handles.record(response.status(), started.elapsed());
    response
}

/// A request refused by its rate limit.
pub fn rate_limited(extensions: &axum::http::Extensions, service: &'static str) {
    let operation = extensions.get::<Labels>().and_then(|l| l.0.get()).map(|(_, op)| *op).unwrap_or_default();
    metrics::counter!(RATE_LIMITED, "service" => service, "operation" => operation).increment(1);
}

/// An MCP tool call's outcome (`ok`, `error` or `denied`) and, when it ran, how long it took.
pub fn tool_call(service: &'static str, tool: &'static str, outcome: &'static str, took: Option<Duration>) {
    metrics::counter!(TOOL_CALLS, "service" => service, "tool" => tool, "outcome" => outcome).increment(1);
    if let Some(took) = took {
        metrics::histogram!(TOOL_SECONDS, "service" => service, "tool" => tool).record(took.as_secs_f64());
    }
}

/// An MCP read (`resources/read`, or the listing a `completion/complete` calls) of an
/// operation: its outcome (`ok`, `error`) and how long it took.
pub fn mcp_read(
    service: &'static str,
    method: &'static str,
    operation: &'static str,
    outcome: &'static str,
    took: Duration,
) {
    metrics::counter!(MCP_READS, "service" => service, "method" => method, "operation" => operation, "outcome" => outcome)
        .increment(1);
    metrics::histogram!(MCP_READ_SECONDS, "service" => service, "method" => method).record(took.as_secs_f64());
}

/// A handle registered on first use and reused (a lookup by name per call would take the
/// registry's lock; some of these are recorded while the request holds the database).
macro_rules! cached {
    ($make:ident, $kind:ident, $name:expr) => {{
        static HANDLE: OnceLock<metrics::$kind> = OnceLock::new();
        HANDLE.get_or_init(|| metrics::$make!($name))
    }};
}

/// A commit carrying `rows` audit rows, how long it took and whether it succeeded.
pub fn audit_commit(rows: usize, took: Duration, committed: bool) {
    if !enabled() {
        return;
    }
    if committed {
        cached!(histogram, Histogram, AUDIT_ROWS).record(rows as f64);
        cached!(histogram, Histogram, AUDIT_SECONDS).record(took.as_secs_f64());
    } else {
        cached!(counter, Counter, AUDIT_FAILURES).increment(1);
    }
}

/// Rows queued for an unavailable database (`+1`), or written or given up (`-1`).
pub fn rows_waiting(change: i8) {
    if enabled() {
        metrics::gauge!(ROWS_WAITING).increment(f64::from(change));
    }
}

/// A row dropped because too many already waited for the database.
pub fn rows_dropped() {
    if enabled() {
        metrics::counter!(ROWS_DROPPED).increment(1);
    }
}

/// How long opening a transaction waited, or that it timed out waiting for a connection.
pub fn transaction_wait(took: Duration, timed_out: bool) {
    if !enabled() {
        return;
    }
    if timed_out {
        cached!(counter, Counter, ACQUIRE_TIMEOUTS).increment(1);
    } else {
        cached!(histogram, Histogram, TX_WAIT).record(took.as_secs_f64());
    }
}
