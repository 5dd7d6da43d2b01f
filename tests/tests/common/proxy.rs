//! A reverse proxy in front of a test server, set up the way an operator would put Specwright
//! under a path of a shared host (nginx: `location /sw/ { proxy_pass http://backend/; }`):
//!
//! - `/<prefix>/…` is forwarded with the prefix stripped;
//! - the RFC 8414 and RFC 9728 well-known documents of the prefix
//!   (`/.well-known/oauth-authorization-server/<prefix>`,
//!   `/.well-known/oauth-protected-resource/<prefix>/…`) are forwarded unchanged, since clients look
//!   for them there and not under the prefix;
//!   (unless the proxy routes only the prefix, [`Proxy::prefix_only`], the common ingress rule);
//! - anything else belongs to other sites of the host: 404 from the proxy itself.
//!
//! The `Host` header is kept, the client's address is appended to `X-Forwarded-For`, and
//! redirects are passed back untouched (never followed).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// A bound, not yet forwarding, proxy: its address is known before the server behind it starts
/// (the server's public URL names it).
pub struct Proxy {
    listener: tokio::net::TcpListener,
    prefix: String,
    /// Whether the well-known documents of the prefix at the host's root are forwarded too.
    well_known: bool,
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
}

struct Forwarder {
    backend: String,
    prefix: String,
    well_known: bool,
    http: reqwest::Client,
    /// Headers added to forwarded requests that lack them (an operator's proxy that
    /// authenticates on the client's behalf): each request gets the next set, in turn.
    added: Vec<HeaderMap>,
    turn: std::sync::atomic::AtomicUsize,
}

/// Headers that describe one connection, not the message (RFC 9110 section 7.6.1).
const HOP_BY_HOP: [&str; 8] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "content-length"];

fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in headers {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

impl Proxy {
    /// Binds a loopback port for a proxy serving the server under `prefix` (e.g. `/sw`).
    pub async fn bind(prefix: &str) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let origin = format!("http://{}", listener.local_addr().expect("proxy address"));
        Proxy { listener, prefix: prefix.to_string(), origin, well_known: true }
    }

    /// The same proxy routing only the prefix (the common ingress rule): the well-known documents
    /// at the host's root belong to other sites too and answer 404.
    pub fn prefix_only(mut self) -> Proxy {
        self.well_known = false;
        self
    }

    /// The public URL of the server behind this proxy: `http://127.0.0.1:<port>/<prefix>`.
    pub fn public_url(&self) -> String {
        format!("{}{}", self.origin, self.prefix)
    }

    /// Starts forwarding to `backend` (`http://127.0.0.1:<port>` of the real server).
    pub fn start(self, backend: &str) {
        self.start_adding(backend, vec![HeaderMap::new()])
    }

    /// Starts forwarding to `backend`, adding to each request the headers it lacks of the next
    /// set of `added`, in turn (several tokens spread a long run over their rate limits).
    pub fn start_adding(self, backend: &str, added: Vec<HeaderMap>) {
        let forwarder = Arc::new(Forwarder {
            added,
            turn: Default::default(),
            backend: backend.trim_end_matches('/').to_string(),
            well_known: self.well_known,
            prefix: self.prefix,
            http: reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client"),
        });
        let app = axum::Router::new().fallback(forward).with_state(forwarder);
        let listener = self.listener;
        tokio::spawn(async move {
            axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.expect("proxy");
        });
    }
}

/// A SQLite server whose public URL is `prefix` on a path-stripping proxy in front of it, and that
/// public URL; `configure` adjusts the rest of its configuration.
pub async fn serve_behind(prefix: &str, configure: impl FnOnce(&mut runtime::Config)) -> (super::TestServer, String) {
    serve_behind_proxy(Proxy::bind(prefix).await, configure).await
}

/// [`serve_behind`] with a proxy that routes only the prefix.
pub async fn serve_behind_prefix_only(
    prefix: &str,
    configure: impl FnOnce(&mut runtime::Config),
) -> (super::TestServer, String) {
    serve_behind_proxy(Proxy::bind(prefix).await.prefix_only(), configure).await
}

async fn serve_behind_proxy(proxy: Proxy, configure: impl FnOnce(&mut runtime::Config)) -> (super::TestServer, String) {
    let public = proxy.public_url();
    let server = super::TestServer::start_configured(super::Backend::Sqlite, |c, _| {
        c.public_url = public.clone();
        configure(c);
    })
    .await
    .expect("SQLite always works");
    proxy.start(&server.base);
    (server, public)
}

/// Where a request goes on the backend, if this proxy forwards it.
pub fn target(prefix: &str, path_and_query: &str) -> Option<String> {
    let path = path_and_query.split('?').next().unwrap_or_default();
    if let Some(rest) = path_and_query.strip_prefix(prefix)
        && (rest.is_empty() || rest.starts_with('/') || rest.starts_with('?'))
    {
        return Some(if rest.starts_with('/') { rest.to_string() } else { format!("/{rest}") });
    }
    let well_known = [
        format!("/.well-known/oauth-authorization-server{prefix}"),
        format!("/.well-known/oauth-protected-resource{prefix}"),
        format!("/.well-known/openid-configuration{prefix}"),
    ];
    well_known.iter().any(|w| path == w || path.starts_with(&format!("{w}/"))).then(|| path_and_query.to_string())
}

async fn forward(
    State(p): State<Arc<Forwarder>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    let path_and_query = request.uri().path_and_query().map_or("/", |pq| pq.as_str()).to_string();
    let routed = target(&p.prefix, &path_and_query).filter(|_| p.well_known || path_and_query.starts_with(&p.prefix));
    let Some(target) = routed else {
        return (StatusCode::NOT_FOUND, "not proxied: another site of this host").into_response();
    };
    let (parts, body) = request.into_parts();
    let mut headers = end_to_end(&parts.headers);
    let chain = match headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        Some(before) => format!("{before}, {}", peer.ip()),
        None => peer.ip().to_string(),
    };
    headers.insert("x-forwarded-for", HeaderValue::from_str(&chain).expect("address list"));
    let turn = p.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % p.added.len().max(1);
    for (name, value) in p.added.get(turn).into_iter().flatten() {
        if !headers.contains_key(name) {
            headers.insert(name.clone(), value.clone());
        }
    }
    let body = axum::body::to_bytes(body, 16 * 1024 * 1024).await.expect("request body");
    let sent = p.http.request(parts.method, format!("{}{target}", p.backend)).headers(headers).body(body).send().await;
    let upstream = match sent {
        Ok(r) => r,
        Err(e) => return (StatusCode::BAD_GATEWAY, format!("the backend did not answer: {e}")).into_response(),
    };
    let status = upstream.status();
    let headers = end_to_end(upstream.headers());
    // Passed on as it arrives, as a proxy in front of event streams must: a stream whose server
    // waits for the client's answer to a message on it would never end if it were buffered.
    let chunks = futures_util::stream::unfold(Some(upstream), |upstream| async move {
        let mut upstream = upstream?;
        match upstream.chunk().await {
            Ok(Some(chunk)) => Some((Ok::<_, reqwest::Error>(chunk), Some(upstream))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    });
    let mut resp = Response::new(Body::from_stream(chunks));
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    resp
}
