//! The HTTP server: accepts connections and serves the application on each, with the limits a
//! server facing the open internet needs. A client gets `header_read_timeout` to send a request's
//! headers once it has started, a kept-alive connection is closed after `idle_timeout` without a
//! request, and at most `max_connections` are open: at the cap the longest-idle connection is
//! closed to make room, so idle or slow clients can never starve a normal request of a socket or
//! of file descriptors. The whole-request timeout (408) is a layer of the application
//! ([`crate::app`]), since its answer is the service's error envelope.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tower::ServiceExt;

/// Connection limits of the HTTP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Longest time from the first byte of a request to its last header byte.
    pub header_read_timeout: Duration,
    /// Longest time a connection may stay open with no request in progress.
    pub idle_timeout: Duration,
    /// Longest time a whole request (body and handler) may take; then 408.
    pub request_timeout: Duration,
    /// Most open connections; `None`: the open-file limit less [`FD_RESERVE`].
    pub max_connections: Option<usize>,
    /// After the shutdown signal, how long requests in flight may take to finish.
    pub shutdown_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(30),
            max_connections: None,
            shutdown_timeout: Duration::from_secs(30),
        }
    }
}

/// File descriptors kept for everything but client connections (database, logs, key files,
/// outbound HTTP) when the connection cap is derived from the open-file limit.
pub const FD_RESERVE: usize = 128;

impl HttpLimits {
    /// The connection cap in force: the configured one, else the process's open-file limit less
    /// [`FD_RESERVE`] (at least 16).
    pub fn connection_cap(&self) -> usize {
        self.max_connections.unwrap_or_else(|| {
            let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit writes the limit into the struct we own; nothing else is touched.
            let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
            let files = if ok { usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX) } else { 1024 };
            files.saturating_sub(FD_RESERVE).clamp(16, 1_000_000)
        })
    }
}

/// One open connection, as the watchdog and the cap see it.
#[derive(Debug)]
struct Conn {
    /// Requests being handled now.
    in_flight: AtomicUsize,
    /// When (ms since the server started) the connection last had no request in progress.
    idle_since: AtomicU64,
    /// When the first byte of the next request arrived while idle (0: none yet).
    head_started: AtomicU64,
    /// Told to stop: to close, or to finish in-flight requests and close.
    signal: Notify,
    /// Already told to close (so the cap does not count on it twice).
    closing: std::sync::atomic::AtomicBool,
    /// Told to finish its requests and close (the server is shutting down).
    draining: std::sync::atomic::AtomicBool,
}

impl Conn {
    fn close(&self) {
        if !self.closing.swap(true, Ordering::AcqRel) {
            self.signal.notify_one();
        }
    }

    fn drain(&self) {
        if !self.draining.swap(true, Ordering::AcqRel) {
            self.signal.notify_one();
        }
    }
}

/// Every open connection, with the server's clock.
#[derive(Debug)]
struct Registry {
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    started: Instant,
    /// Milliseconds since `started` (at least 1), as of the last tick of the sweeper or the
    /// last accepted connection: the deadlines it serves are seconds long, and a request reads
    /// it twice, so it is kept coarse rather than read from the system clock each time.
    clock: AtomicU64,
    /// Signalled when a connection ends.
    ended: Notify,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            conns: Mutex::new(HashMap::new()),
            started: Instant::now(),
            clock: AtomicU64::new(1),
            ended: Notify::new(),
        }
    }

    /// Reads the system clock into the coarse one.
    fn tick(&self) -> u64 {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX).max(1);
        self.clock.fetch_max(now, Ordering::AcqRel).max(now)
    }

    fn now(&self) -> u64 {
        self.clock.load(Ordering::Acquire)
    }

    /// Open connections not already told to close.
    fn len(&self) -> usize {
        self.conns.lock().map(|c| c.values().filter(|c| !c.closing.load(Ordering::Acquire)).count()).unwrap_or(0)
    }

    /// Closes the connection idle the longest; false when every connection is busy.
    fn evict_idle(&self) -> bool {
        let Ok(conns) = self.conns.lock() else { return false };
        let idle = conns
            .values()
            .filter(|c| c.in_flight.load(Ordering::Acquire) == 0 && !c.closing.load(Ordering::Acquire))
            .min_by_key(|c| c.idle_since.load(Ordering::Acquire));
        match idle {
            Some(c) => {
                c.close();
                true
            }
            None => false,
        }
    }

    /// Closes connections past their header-read or idle deadline.
    fn sweep(&self, limits: &HttpLimits) {
        let now = self.tick();
        let header = u64::try_from(limits.header_read_timeout.as_millis()).unwrap_or(u64::MAX);
        let idle = u64::try_from(limits.idle_timeout.as_millis()).unwrap_or(u64::MAX);
        let Ok(conns) = self.conns.lock() else { return };
        for c in conns.values() {
            if c.in_flight.load(Ordering::Acquire) > 0 {
                continue;
            }
            let head = c.head_started.load(Ordering::Acquire);
            let expired = if head > 0 {
                now.saturating_sub(head) > header
            } else {
                now.saturating_sub(c.idle_since.load(Ordering::Acquire)) > idle
            };
            if expired {
                c.close();
            }
        }
    }
}

/// A socket that records when the first byte of a request arrives on an idle connection.
struct Tracked {
    stream: TcpStream,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl AsyncRead for Tracked {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before
            && self.conn.in_flight.load(Ordering::Acquire) == 0
            && self.conn.head_started.load(Ordering::Acquire) == 0
        {
            let now = self.registry.now();
            self.conn.head_started.store(now, Ordering::Release);
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// Counts a request in progress on its connection until dropped (also when the client goes away
/// mid-request and the handler future is dropped).
struct InFlight {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl InFlight {
    fn new(conn: Arc<Conn>, registry: Arc<Registry>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        conn.head_started.store(0, Ordering::Release);
        InFlight { conn, registry }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.conn.idle_since.store(self.registry.now(), Ordering::Release);
        self.conn.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted in progress until it is sent or dropped.
struct Guarded {
    body: axum::body::Body,
    _guard: InFlight,
}

impl http_body::Body for Guarded {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A request body that records when it has been read to its end.
struct Watched {
    body: hyper::body::Incoming,
    ended: Arc<std::sync::atomic::AtomicBool>,
}

impl http_body::Body for Watched {
    type Data = axum::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let frame = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(frame, Poll::Ready(None)) || self.body.is_end_stream() {
            self.ended.store(true, Ordering::Relaxed);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// An HTTP/1 response to a request whose body was not read to its end (a 401 answered before the
/// body arrived, say) says `Connection: close`: hyper closes such a connection rather than read
/// an unbounded body, and a client told nothing would reuse it and see it vanish under its next
/// request.
fn close_if_unread(
    version: axum::http::Version,
    ended: &std::sync::atomic::AtomicBool,
    response: &mut axum::response::Response,
) {
    if version <= axum::http::Version::HTTP_11 && !ended.load(Ordering::Relaxed) {
        response.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    }
}

/// Completes when the process is asked to stop: SIGTERM (what container runtimes and service
/// managers send) or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let signal = received_signal().await;
    tracing::info!(signal, "shutting down: no new connections, draining requests in flight");
}

/// Waits for SIGTERM or SIGINT and names it; where SIGTERM cannot be listened for, Ctrl-C only.
async fn received_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => {
                return tokio::select! {
                    _ = term.recv() => "SIGTERM",
                    _ = int.recv() => "SIGINT",
                };
            }
            (Err(e), _) | (_, Err(e)) => tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops"),
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    "SIGINT"
}

/// Serves `app` on `listener` with `limits` until `shutdown` completes; then stops accepting,
/// lets in-flight requests finish and closes idle connections.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> std::io::Result<()> {
    // Handlers become routes, with their layers, once here rather than on every request (a
    // router given no state otherwise converts each handler it calls, as `axum::serve` avoids
    // the same way).
    let app = app.with_state::<()>(());
    let cap = limits.connection_cap();
    let registry = Arc::new(Registry::new());
    let sweeper = {
        let registry = registry.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                registry.sweep(&limits);
            }
        })
    };
    let mut shutdown = std::pin::pin!(shutdown);
    let mut next_id = 0u64;
    loop {
        // At the cap, make room by closing the longest-idle connection; when every connection
        // is busy, wait for one to end (new clients wait in the listen backlog meanwhile).
        while registry.len() >= cap && !registry.evict_idle() {
            tokio::select! {
                _ = registry.ended.notified() => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors (EMFILE/ENFILE) or a connection reset before
                    // accept: free an idle connection's descriptor and go on.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    registry.evict_idle();
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let id = next_id;
        let conn = Arc::new(Conn {
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(registry.tick()),
            head_started: AtomicU64::new(0),
            signal: Notify::new(),
            closing: std::sync::atomic::AtomicBool::new(false),
            draining: std::sync::atomic::AtomicBool::new(false),
        });
        if let Ok(mut conns) = registry.conns.lock() {
            conns.insert(id, conn.clone());
        }
        let io = TokioIo::new(Tracked { stream, conn: conn.clone(), registry: registry.clone() });
        let service = {
            let (app, conn, registry) = (app.clone(), conn.clone(), registry.clone());
            tower::service_fn(move |mut request: axum::http::Request<hyper::body::Incoming>| {
                let guard = InFlight::new(conn.clone(), registry.clone());
                request.extensions_mut().insert(ConnectInfo(peer));
                let app = app.clone();
                let version = request.version();
                // A request without a body (most) has nothing left unread to watch for.
                let (request, ended) = match http_body::Body::is_end_stream(request.body()) {
                    true => (request.map(axum::body::Body::new), None),
                    false => {
                        let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
                        (request.map(|body| axum::body::Body::new(Watched { body, ended: ended.clone() })), Some(ended))
                    }
                };
                async move {
                    // The request stays in progress until its response body is sent (a stream may
                    // run long after the handler returned), so no deadline cuts a live response.
                    let mut response = app.oneshot(request).await?;
                    if let Some(ended) = ended {
                        close_if_unread(version, &ended, &mut response);
                    }
                    Ok::<_, std::convert::Infallible>(
                        response.map(|body| axum::body::Body::new(Guarded { body, _guard: guard })),
                    )
                }
            })
        };
        let registry = registry.clone();
        tokio::spawn(async move {
            let builder = auto::Builder::new(TokioExecutor::new());
            let connection = builder.serve_connection_with_upgrades(io, TowerToHyperService::new(service));
            let mut connection = std::pin::pin!(connection);
            // One signal to watch besides the connection (each wake-up polls both).
            let mut draining = false;
            loop {
                tokio::select! {
                    biased;
                    _ = connection.as_mut() => break,
                    _ = conn.signal.notified() => {
                        if conn.closing.load(Ordering::Acquire) {
                            break;
                        }
                        if conn.draining.load(Ordering::Acquire) && !draining {
                            draining = true;
                            connection.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
            if let Ok(mut conns) = registry.conns.lock() {
                conns.remove(&id);
            }
            registry.ended.notify_waiters();
        });
    }
    let addr = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    drop(listener);
    if let Ok(conns) = registry.conns.lock() {
        conns.values().for_each(|c| c.drain());
    }
    // Requests in flight get a bounded time to finish (a streaming response may never end).
    let deadline = Instant::now() + limits.shutdown_timeout;
    while registry.conns.lock().map(|c| !c.is_empty()).unwrap_or(false) && Instant::now() < deadline {
        // Connections that were idle when the signal came close at once; busy ones finish.
        registry.evict_idle();
        tokio::select! {
            _ = registry.ended.notified() => {}
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
    sweeper.abort();
    match registry.len() {
        0 => tracing::info!(%addr, "every request in flight finished; stopped"),
        n => {
            tracing::warn!(%addr, connections = n, "the shutdown deadline passed with requests in flight; they are cut off")
        }
    }
    Ok(())
}
