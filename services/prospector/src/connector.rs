//! The HTTP platform connector: submits proposals to a platform's API and withdraws them.
//!
//! `POST {base}/proposals` with an `Idempotency-Key` (the proposal id) on every attempt, so the
//! platform can de-duplicate our retries; `DELETE {base}/proposals/{reference}` to withdraw.
//! Connect errors, timeouts, 408, 429 and 5xx are retried with a doubling backoff (honouring
//! `Retry-After`); any other 4xx is a rejection and is not retried. Proposal text is never logged.

use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde::Serialize;

/// A proposal to send to a platform.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub proposal_id: String,
    pub tenant: String,
    pub platform: String,
    /// The posting id on the platform.
    pub job_id: String,
    pub job_url: Option<String>,
    pub text: String,
    pub bid_amount: Option<f64>,
    pub currency: Option<String>,
}

/// What the platform answered to an accepted submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The platform's reference of the proposal (used to withdraw it).
    pub reference: String,
}

/// Why a platform call failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    /// The platform could not be reached or did not answer usefully; trying later may work.
    #[error("the platform is unavailable: {0}")]
    Unavailable(String),
    /// The platform refused the request; retrying the same request will not help.
    #[error("the platform rejected the request: {0}")]
    Rejected(String),
}

/// Timeout of one attempt.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest backoff between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);
/// Most of a response body read (successful answers and rejection excerpts).
const MAX_ANSWER: usize = 1024 * 1024;
/// Longest body excerpt in a rejection.
const MAX_EXCERPT: usize = 200;

/// A connector to a platform's proposal API over HTTP.
#[derive(Debug, Clone)]
pub struct HttpConnector {
    base: Url,
    client: reqwest::Client,
    attempts: u32,
    backoff: Duration,
}

/// The JSON body of a submission (the tenant stays with us).
#[derive(Serialize)]
struct SubmitBody<'a> {
    proposal_id: &'a str,
    platform: &'a str,
    job_id: &'a str,
    job_url: Option<&'a str>,
    text: &'a str,
    bid_amount: Option<f64>,
    currency: Option<&'a str>,
}

impl HttpConnector {
    /// A connector to the API at `base_url` (http or https); 3 attempts, 200 ms first backoff.
    pub fn new(base_url: &str) -> Result<HttpConnector, String> {
        let base = Url::parse(base_url.trim()).map_err(|e| format!("the connector URL is not valid ({e})"))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err("the connector URL must use http or https".into());
        }
        if base.host_str().is_none_or(str::is_empty) {
            return Err("the connector URL has no host".into());
        }
        let client = reqwest::Client::builder()
            .timeout(ATTEMPT_TIMEOUT)
            // A redirected POST would silently become a GET; a platform API does not redirect.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("specwright/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("the HTTP client could not be built ({e})"))?;
        Ok(HttpConnector { base, client, attempts: 3, backoff: Duration::from_millis(200) })
    }

    /// Sets the number of attempts (at least 1) and the first backoff (doubling, at most 2 s).
    pub fn with_retry(mut self, attempts: u32, first_backoff: Duration) -> Self {
        self.attempts = attempts.max(1);
        self.backoff = first_backoff;
        self
    }

    /// `{base}/proposals[/{reference}]`, the reference percent-encoded as one path segment.
    fn url(&self, reference: Option<&str>) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push("proposals");
            if let Some(r) = reference {
                segments.push(r);
            }
        }
        url
    }

    /// Submits a proposal. 2xx with a string `reference` → the receipt.
    pub async fn submit(&self, s: &Submission) -> Result<Receipt, ConnectorError> {
        let body = SubmitBody {
            proposal_id: &s.proposal_id,
            platform: &s.platform,
            job_id: &s.job_id,
            job_url: s.job_url.as_deref(),
            text: &s.text,
            bid_amount: s.bid_amount,
            currency: s.currency.as_deref(),
        };
        let url = self.url(None);
        let response = self
            .call(
                "submit",
                &s.proposal_id,
                |_| false,
                || self.client.post(url.clone()).header("Idempotency-Key", &s.proposal_id).json(&body),
            )
            .await?;
        let status = response.status();
        let answer = read_limited(response).await.map_err(|e| {
            ConnectorError::Unavailable(format!("the platform's answer (HTTP {status}) could not be read: {e}"))
        })?;
        let reference = serde_json::from_slice::<serde_json::Value>(&answer)
            .ok()
            .and_then(|v| v.get("reference").and_then(|r| r.as_str()).map(str::trim).map(str::to_string))
            .filter(|r| !r.is_empty());
        match reference {
            Some(reference) => Ok(Receipt { reference }),
            None => Err(ConnectorError::Unavailable(format!(
                "the platform answered HTTP {status} without a string `reference` in a JSON body"
            ))),
        }
    }

    /// Withdraws a proposal: Ok(true) when withdrawn, Ok(false) when the platform answers 404
    /// or 405 (unknown proposal, or withdrawal not supported).
    pub async fn withdraw(&self, reference: &str) -> Result<bool, ConnectorError> {
        let url = self.url(Some(reference));
        let not_there = |s: StatusCode| s == StatusCode::NOT_FOUND || s == StatusCode::METHOD_NOT_ALLOWED;
        let response = self.call("withdraw", reference, not_there, || self.client.delete(url.clone())).await?;
        Ok(response.status().is_success())
    }

    /// Sends the request made by `make` until it gets a final answer: a 2xx or a status for
    /// which `final_status` holds is returned; retryable failures are retried; other statuses
    /// are errors.
    async fn call(
        &self,
        operation: &'static str,
        subject: &str,
        final_status: impl Fn(StatusCode) -> bool,
        make: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ConnectorError> {
        let mut backoff = self.backoff;
        let mut last = String::new();
        for attempt in 1..=self.attempts {
            let mut retry_after = None;
            match make().send().await {
                Ok(response) => {
                    let status = response.status();
                    if status.is_success() || final_status(status) {
                        return Ok(response);
                    }
                    if retryable(status) {
                        retry_after = retry_after_of(response.headers());
                        last = format!("HTTP {status}");
                    } else if status.is_client_error() {
                        let excerpt = excerpt(read_limited(response).await.unwrap_or_default());
                        let detail = if excerpt.is_empty() {
                            format!("HTTP {status}")
                        } else {
                            format!("HTTP {status}: {excerpt}")
                        };
                        return Err(ConnectorError::Rejected(detail));
                    } else {
                        return Err(ConnectorError::Unavailable(format!("the platform answered HTTP {status}")));
                    }
                }
                Err(e) => last = transport_error(&e),
            }
            if attempt == self.attempts {
                break;
            }
            let wait = retry_after.map(|d: Duration| d.min(MAX_RETRY_AFTER)).unwrap_or(backoff);
            tracing::warn!(
                operation,
                subject,
                attempt,
                attempts = self.attempts,
                wait_ms = wait.as_millis() as u64,
                reason = %last,
                "platform call failed; retrying"
            );
            tokio::time::sleep(wait).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
        let tries = if self.attempts == 1 { "1 attempt".to_string() } else { format!("{} attempts", self.attempts) };
        Err(ConnectorError::Unavailable(format!("{last} (after {tries})")))
    }
}

fn retryable(status: StatusCode) -> bool {
    status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// `Retry-After` in seconds (the HTTP-date form is ignored: the backoff applies).
fn retry_after_of(headers: &HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds))
}

/// A transport failure as a short sentence without the URL.
fn transport_error(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("the platform did not answer within {} s", ATTEMPT_TIMEOUT.as_secs());
    }
    let cause = crate::sources::root_cause(e);
    if e.is_connect() {
        format!("could not connect to the platform ({cause})")
    } else {
        format!("the request to the platform failed ({cause})")
    }
}

/// Reads at most [`MAX_ANSWER`] bytes of a body.
async fn read_limited(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(&e))? {
        let room = MAX_ANSWER - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ANSWER {
            break;
        }
    }
    Ok(body)
}

/// The first [`MAX_EXCERPT`] characters of a body, blanks collapsed.
fn excerpt(body: Vec<u8>) -> String {
    let text = String::from_utf8_lossy(&body);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(MAX_EXCERPT) {
        Some((i, _)) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use axum::Router;
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{HeaderMap, Method, Uri};
    use axum::response::{IntoResponse, Response};

    use super::*;

    /// One request as the test platform saw it.
    #[derive(Debug, Clone)]
    struct Seen {
        method: Method,
        path: String,
        idempotency_key: Option<String>,
        body: Option<serde_json::Value>,
    }

    /// One scripted answer: status, extra headers, body.
    type Reply = (u16, Vec<(&'static str, &'static str)>, &'static str);

    #[derive(Default)]
    struct Platform {
        seen: Mutex<Vec<Seen>>,
        /// Answers in order; the last one repeats.
        script: Mutex<VecDeque<Reply>>,
    }

    async fn answer(
        State(p): State<Arc<Platform>>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        p.seen.lock().unwrap().push(Seen {
            method,
            path: uri.path().to_string(),
            idempotency_key: headers.get("idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_string),
            body: serde_json::from_slice(&body).ok(),
        });
        let (status, extra, body) = {
            let mut script = p.script.lock().unwrap();
            if script.len() > 1 { script.pop_front().unwrap() } else { script.front().cloned().unwrap() }
        };
        let mut response = (StatusCode::from_u16(status).unwrap(), body).into_response();
        response.headers_mut().insert("content-type", "application/json".parse().unwrap());
        for (name, value) in extra {
            response.headers_mut().insert(name, value.parse().unwrap());
        }
        response
    }

    /// A platform on 127.0.0.1 answering `script`; returns its state and a connector with
    /// short backoffs.
    async fn platform(script: Vec<Reply>, attempts: u32) -> (Arc<Platform>, HttpConnector) {
        let state = Arc::new(Platform { seen: Mutex::default(), script: Mutex::new(script.into()) });
        let router = Router::new().fallback(answer).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        let connector = HttpConnector::new(&format!("http://{addr}/api/v1/"))
            .unwrap()
            .with_retry(attempts, Duration::from_millis(5));
        (state, connector)
    }

    fn submission() -> Submission {
        Submission {
            proposal_id: "prop_01HXYZ".into(),
            tenant: "tenant-a".into(),
            platform: "upwork".into(),
            job_id: "upw-100234".into(),
            job_url: Some("https://www.upwork.com/jobs/~01100234".into()),
            text: "Hello, I have built async Rust market data services before.".into(),
            bid_amount: Some(85.0),
            currency: Some("USD".into()),
        }
    }

    fn seen(p: &Platform) -> Vec<Seen> {
        p.seen.lock().unwrap().clone()
    }

    #[test]
    fn new_accepts_only_http_urls() {
        assert!(HttpConnector::new("https://platform.example.com").is_ok());
        assert!(HttpConnector::new("http://127.0.0.1:8080/api").is_ok());
        assert!(HttpConnector::new("ftp://platform.example.com").is_err());
        assert!(HttpConnector::new("not a url").is_err());
        let c = HttpConnector::new("https://platform.example.com/api/").unwrap();
        assert_eq!(c.url(None).as_str(), "https://platform.example.com/api/proposals");
        assert_eq!(c.url(Some("a/b c")).as_str(), "https://platform.example.com/api/proposals/a%2Fb%20c");
    }

    #[tokio::test]
    async fn submit_succeeds_first_time() {
        let (p, c) = platform(vec![(201, vec![], r#"{"reference": "ref-42"}"#)], 3).await;
        let receipt = c.submit(&submission()).await.unwrap();
        assert_eq!(receipt, Receipt { reference: "ref-42".into() });
        let seen = seen(&p);
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].method, Method::POST);
        assert_eq!(seen[0].path, "/api/v1/proposals");
        assert_eq!(seen[0].idempotency_key.as_deref(), Some("prop_01HXYZ"));
        let body = seen[0].body.as_ref().unwrap();
        assert_eq!(
            body,
            &serde_json::json!({
                "proposal_id": "prop_01HXYZ",
                "platform": "upwork",
                "job_id": "upw-100234",
                "job_url": "https://www.upwork.com/jobs/~01100234",
                "text": "Hello, I have built async Rust market data services before.",
                "bid_amount": 85.0,
                "currency": "USD",
            })
        );
    }

    #[tokio::test]
    async fn submit_retries_two_503s_then_succeeds() {
        let script = vec![(503, vec![], "{}"), (503, vec![], "{}"), (200, vec![], r#"{"reference": "third"}"#)];
        let (p, c) = platform(script, 3).await;
        assert_eq!(c.submit(&submission()).await.unwrap().reference, "third");
        let seen = seen(&p);
        assert_eq!(seen.len(), 3);
        assert!(seen.iter().all(|s| s.idempotency_key.as_deref() == Some("prop_01HXYZ")));
    }

    #[tokio::test]
    async fn submit_gives_up_after_all_attempts() {
        let (p, c) = platform(vec![(500, vec![], r#"{"error": "down"}"#)], 4).await;
        let e = c.submit(&submission()).await.unwrap_err();
        assert!(matches!(&e, ConnectorError::Unavailable(m) if m.contains("500") && m.contains("4 attempts")), "{e}");
        assert_eq!(seen(&p).len(), 4);
    }

    #[tokio::test]
    async fn submit_rejected_without_retry() {
        let long = Box::leak(format!(r#"{{"error": "job closed", "pad": "{}"}}"#, "x".repeat(500)).into_boxed_str());
        let (p, c) = platform(vec![(400, vec![], long)], 3).await;
        let e = c.submit(&submission()).await.unwrap_err();
        match &e {
            ConnectorError::Rejected(m) => {
                assert!(m.starts_with("HTTP 400 Bad Request: {\"error\": \"job closed\""), "{m}");
                assert!(m.chars().count() <= "HTTP 400 Bad Request: ".len() + MAX_EXCERPT, "{m}");
            }
            other => panic!("expected a rejection, got {other:?}"),
        }
        assert_eq!(seen(&p).len(), 1);
    }

    #[tokio::test]
    async fn submit_without_reference_is_unavailable() {
        for body in [r#"{"id": "ref-1"}"#, r#"{"reference": 7}"#, "not json"] {
            let (p, c) = platform(vec![(200, vec![], body)], 3).await;
            let e = c.submit(&submission()).await.unwrap_err();
            assert!(matches!(&e, ConnectorError::Unavailable(m) if m.contains("reference")), "{body}: {e}");
            assert_eq!(seen(&p).len(), 1, "a 2xx is not retried");
        }
    }

    #[tokio::test]
    async fn submit_honours_retry_after() {
        let script = vec![(429, vec![("retry-after", "1")], "{}"), (200, vec![], r#"{"reference": "later"}"#)];
        let (p, c) = platform(script, 3).await;
        let started = Instant::now();
        assert_eq!(c.submit(&submission()).await.unwrap().reference, "later");
        assert!(started.elapsed() >= Duration::from_millis(950), "waited {:?}", started.elapsed());
        assert_eq!(seen(&p).len(), 2);
    }

    #[tokio::test]
    async fn submit_retries_408() {
        let script = vec![(408, vec![], "{}"), (200, vec![], r#"{"reference": "ok"}"#)];
        let (p, c) = platform(script, 2).await;
        assert_eq!(c.submit(&submission()).await.unwrap().reference, "ok");
        assert_eq!(seen(&p).len(), 2);
    }

    #[tokio::test]
    async fn withdraw_answers() {
        let (p, c) = platform(vec![(204, vec![], "")], 3).await;
        assert!(c.withdraw("ref-42").await.unwrap());
        let s = seen(&p);
        assert_eq!((s.len(), &s[0].method, s[0].path.as_str()), (1, &Method::DELETE, "/api/v1/proposals/ref-42"));

        let (p, c) = platform(vec![(404, vec![], r#"{"error": "unknown"}"#)], 3).await;
        assert!(!c.withdraw("ref-42").await.unwrap());
        assert_eq!(seen(&p).len(), 1);

        let (_, c) = platform(vec![(405, vec![], "")], 3).await;
        assert!(!c.withdraw("ref-42").await.unwrap());

        let (p, c) = platform(vec![(502, vec![], ""), (200, vec![], "{}")], 3).await;
        assert!(c.withdraw("ref-42").await.unwrap());
        assert_eq!(seen(&p).len(), 2);

        let (_, c) = platform(vec![(403, vec![], "forbidden")], 3).await;
        assert!(matches!(c.withdraw("ref-42").await, Err(ConnectorError::Rejected(m)) if m.contains("403")));
    }

    #[tokio::test]
    async fn unreachable_platform_is_unavailable() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let c = HttpConnector::new(&format!("http://{addr}")).unwrap().with_retry(2, Duration::from_millis(5));
        let e = c.submit(&submission()).await.unwrap_err();
        assert!(matches!(&e, ConnectorError::Unavailable(m) if m.contains("could not connect")), "{e}");
        let e = c.withdraw("ref").await.unwrap_err();
        assert!(matches!(e, ConnectorError::Unavailable(_)));
    }
}
