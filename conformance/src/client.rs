//! The HTTP side of a run: the server's public URL, tokens one tier below or at an operation's scope, and the answers read back.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::*;

/// The server checked, and how the kit makes its tokens.
pub struct Target {
    /// The server's public URL, without a trailing `/` (its token issuer, and the base of every
    /// URL it announces).
    pub url: String,
    pub(super) keys: runtime::keys::SigningKeys,
    pub(super) client: reqwest::Client,
    /// Whether every operation and tool is also sent with a token of its own tier.
    pub(super) admission: bool,
}

impl Target {
    /// The server at public URL `url` whose data directory `data_dir` holds its signing key.
    pub fn new(url: &str, data_dir: &Path) -> anyhow::Result<Self> {
        let parsed = reqwest::Url::parse(url).with_context(|| format!("--url {url} is not a URL"))?;
        anyhow::ensure!(matches!(parsed.scheme(), "http" | "https"), "--url {url} is not an http(s) URL");
        let keys = runtime::keys::SigningKeys::load(data_dir)?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Target { url: url.trim_end_matches('/').to_string(), keys, client, admission: false })
    }

    /// Also sends every operation and tool with a token of exactly its tier and requires the gate
    /// to admit it: not 401, not 403 `insufficient_scope`, and no 5xx (other refusals, such as a
    /// 404 for the placeholder id, an RBAC 403 or a 422 for the empty body, are the operation's
    /// own). This runs the operations, for tenant `conformance`: use a deployment you may write to.
    pub fn with_admission(mut self) -> Self {
        self.admission = true;
        self
    }

    pub(super) fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// A token with `scope` for every resource of `service`, as `specwright token` mints it.
    pub(super) fn token(&self, service: &Service, scope: &str) -> Result<String, String> {
        let audience = service.surfaces().iter().map(|s| self.at(&s.path)).collect();
        let claims = runtime::keys::claims(&self.url, TENANT, TENANT, scope, audience, 600, None);
        self.keys.mint(&claims).map_err(|e| format!("could not mint a token: {e:#}"))
    }
}

impl Target {
    /// Sends `rb` with a token of `scope` for `service`, or with none when `scope` is `None`.
    pub(super) async fn send_as(
        &self,
        rb: reqwest::RequestBuilder,
        service: &Service,
        scope: Option<&str>,
    ) -> Result<Answer, String> {
        match scope {
            Some(scope) => send(rb.bearer_auth(self.token(service, scope)?)).await,
            None => send(rb).await,
        }
    }
}

/// How a row names the tier of its token: the scope, or `no scope`.
pub(super) fn tier(scope: &str) -> &str {
    if scope.is_empty() { "no scope" } else { scope }
}

/// An answer, read whole.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) headers: HeaderMap,
    pub(super) body: Value,
}

impl Answer {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Requires `name` to be exactly `expected`.
    pub(super) fn exact_header(&self, name: &str, expected: &str) -> Result<(), String> {
        match self.header(name) {
            Some(v) if v == expected => Ok(()),
            Some(v) => Err(format!("{name} is\n  {v}\nexpected\n  {expected}")),
            None => Err(format!("no {name} header; expected\n  {expected}")),
        }
    }

    pub(super) fn status(&self, expected: u16) -> Result<(), String> {
        if self.status == expected {
            return Ok(());
        }
        Err(format!("answered {}{}, expected {expected}: {}", self.status, self.hint(), short(&self.body)))
    }

    /// What a 429 means for the run.
    pub(super) fn hint(&self) -> String {
        if self.status == 429 {
            format!(" (rate limited: run again after {} s)", self.header("retry-after").unwrap_or("a minute"))
        } else {
            String::new()
        }
    }
}

pub(super) fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.len() > 300 { format!("{}…", &text[..text.floor_char_boundary(300)]) } else { text }
}

/// How long a stream's answer (Server-Sent Events, NDJSON) is read: a stream of events may never
/// end, and its status and headers are what the checks look at.
pub(super) const STREAM_READ: std::time::Duration = std::time::Duration::from_secs(2);

pub(super) async fn send(rb: reqwest::RequestBuilder) -> Result<Answer, String> {
    let mut resp = rb.send().await.map_err(|e| format!("request failed: {e}"))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let sse = content_type.starts_with("text/event-stream");
    let text = if sse || content_type.starts_with("application/x-ndjson") {
        // What arrives within the limit (an MCP answer's stream ends after its message).
        let deadline = tokio::time::Instant::now() + STREAM_READ;
        let mut bytes = Vec::new();
        while let Ok(chunk) = tokio::time::timeout_at(deadline, resp.chunk()).await {
            match chunk.map_err(|e| format!("reading the answer: {e}"))? {
                Some(c) => bytes.extend_from_slice(&c),
                None => break,
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        resp.text().await.map_err(|e| format!("reading the answer: {e}"))?
    };
    // An MCP answer may come as server-sent events: the message is the last `data:` event.
    let text = if sse {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or("")
            .to_string()
    } else {
        text
    };
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok(Answer { status, headers, body })
}
