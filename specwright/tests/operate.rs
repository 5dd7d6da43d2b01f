//! What an operator sees of the real binary: the request log (one JSON line per request, with
//! its operation, tenant, status and latency, never a token or a query string), graceful shutdown
//! on SIGTERM (requests in flight finish, the process exits 0; a request that outlives the
//! deadline is cut off), readiness, compression of JSON, CORS on the public documents and
//! `nosniff` on every response.

mod common;

use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{BIN, Process, free_port, run_ok};
use serde_json::Value;

struct Running {
    server: Process,
    addr: String,
    data: String,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Running {
    async fn start(extra: &[&str]) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data").to_str().unwrap().to_string();
        let addr = format!("127.0.0.1:{}", free_port());
        let log = dir.path().join("server.log");
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--data-dir", &data, "--addr", &addr, "--log-format", "json"])
            .args(extra)
            .env_remove("RUST_LOG");
        let server = Process::start(cmd, &addr, &log).await;
        Running { server, addr, data, log, _dir: dir }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn log_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {l}")))
            .collect()
    }

    fn terminate(&self) {
        let status = Command::new("kill").args(["-TERM", &self.server.child.id().to_string()]).status().unwrap();
        assert!(status.success());
    }

    /// Waits (at most `limit`) for the process to exit and returns its status.
    fn exit_within(&mut self, limit: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.server.child.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < limit, "the server did not exit within {limit:?} of SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A token request whose body is only half sent: in flight until the rest arrives.
    fn half_sent_request(&self) -> (std::net::TcpStream, &'static [u8]) {
        let body: &'static [u8] = b"grant_type=refresh_token&refresh_token=x&client_id=y";
        let mut stream = std::net::TcpStream::connect(&self.addr).unwrap();
        let head = format!(
            "POST /oauth/token HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&body[..10]).unwrap();
        (stream, &body[10..])
    }
}

fn message(line: &Value) -> &str {
    line["fields"]["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn sigterm_lets_requests_in_flight_finish_then_exits_0() {
    let mut server = Running::start(&[]).await;
    let (mut stream, rest) = server.half_sent_request();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.terminate();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(std::net::TcpStream::connect(&server.addr).is_err(), "no new connection is accepted after SIGTERM");
    assert!(server.server.child.try_wait().unwrap().is_none(), "the process waits for the request in flight");

    stream.write_all(rest).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    // Answered by the authorization server (the client is unknown), not cut off.
    assert!(answer.starts_with("HTTP/1.1 401 "), "the request in flight is answered: {answer}");
    let status = server.exit_within(Duration::from_secs(10));
    assert!(status.success(), "exit status after draining: {status}");

    let lines = server.log_lines();
    let signal = lines.iter().find(|l| message(l).starts_with("shutting down")).expect("the signal is logged");
    assert_eq!(signal["fields"]["signal"], "SIGTERM");
    assert!(lines.iter().any(|l| message(l) == "every request in flight finished; stopped"), "{lines:#?}");
    let token = lines.iter().find(|l| l["span"]["path"] == "/oauth/token").expect("the drained request is logged");
    assert_eq!(token["fields"]["status"], 401);
}

#[tokio::test]
async fn a_request_that_outlives_the_shutdown_deadline_is_cut_off_and_the_process_still_exits_0() {
    let mut server = Running::start(&["--shutdown-timeout", "1"]).await;
    let (_stream, _never_sent) = server.half_sent_request();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    server.terminate();
    let status = server.exit_within(Duration::from_secs(10));
    assert!(status.success(), "{status}: {}", std::fs::read_to_string(&server.log).unwrap());
    assert!(signalled.elapsed() >= Duration::from_millis(900), "the request had its second");
    let lines = server.log_lines();
    let cut = lines.iter().find(|l| message(l).contains("deadline passed")).expect("the cut is logged");
    assert_eq!(cut["level"], "WARN");
    assert_eq!(cut["fields"]["connections"], 1);
}

#[tokio::test]
async fn every_request_is_logged_with_its_operation_tenant_status_and_latency_and_never_its_token() {
    let server = Running::start(&[]).await;
    let data = ["--data-dir", server.data.as_str(), "--addr", server.addr.as_str()];
    run_ok(&[&["tenant", "create", "acme", "--admin", "alice"][..], &data].concat());
    let token =
        run_ok(&[&["token", "--sub", "alice", "--tenant", "acme", "--scope", "vault:admin"][..], &data].concat());
    let client = reqwest::Client::new();
    let resp = client.get(server.url("/api/v1/credentials?per_page=7")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let request_id = resp.headers()["x-request-id"].to_str().unwrap().to_string();
    let resp = client.get(server.url("/api/v1/nowhere")).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    tokio::time::sleep(Duration::from_millis(100)).await;

    let text = std::fs::read_to_string(&server.log).unwrap();
    assert!(!text.contains(&token), "a token reached the log");
    assert!(!text.contains("per_page"), "a query string reached the log");
    let lines = server.log_lines();
    let requests: Vec<&Value> = lines.iter().filter(|l| message(l) == "request").collect();
    let listed = requests.iter().find(|l| l["span"]["request_id"] == request_id.as_str()).expect("the request's line");
    assert_eq!(listed["level"], "INFO");
    assert_eq!(listed["fields"]["status"], 200);
    assert!(listed["fields"]["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{listed}");
    let span = &listed["span"];
    assert_eq!(span["method"], "GET");
    assert_eq!(span["path"], "/api/v1/credentials");
    assert_eq!(span["operation"], "list_credentials");
    assert_eq!(span["tenant"], "acme");
    assert_eq!(span["client"], "127.0.0.1");
    // The start-up wait asked /healthz; probes are not logged.
    assert!(requests.iter().all(|l| l["span"]["path"] != "/healthz"), "a probe was logged");
    let missing = requests.iter().find(|l| l["span"]["path"] == "/api/v1/nowhere").expect("the 404's line");
    assert_eq!(missing["fields"]["status"], 404);
    assert!(missing["span"].get("operation").is_none(), "no operation answered it: {missing}");
}

#[tokio::test]
async fn documents_are_compressed_on_request_readable_cross_origin_and_every_answer_says_nosniff() {
    let server = Running::start(&[]).await;
    let client = reqwest::Client::new();
    let get = |path: &str, headers: &[(&str, &str)]| {
        let mut req = client.get(server.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send()
    };

    let plain = get("/openapi/vault.json", &[]).await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none(), "no compression unless asked");
    let plain = plain.bytes().await.unwrap();
    let gzipped = get("/openapi/vault.json", &[("accept-encoding", "gzip")]).await.unwrap();
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    let gzipped = gzipped.bytes().await.unwrap();
    assert!(
        gzipped.starts_with(&[0x1f, 0x8b]) && gzipped.len() * 4 < plain.len(),
        "{} of {}",
        gzipped.len(),
        plain.len()
    );
    let html = get("/docs/", &[("accept-encoding", "gzip")]).await.unwrap();
    assert!(html.headers().get("content-encoding").is_none(), "only JSON is compressed");

    let origin = [("origin", "https://app.example")];
    for path in [
        "/.well-known/oauth-protected-resource/api/v1",
        "/api/v1/.well-known/oauth-protected-resource",
        "/.well-known/jwks.json",
        "/.well-known/oauth-authorization-server",
        "/openapi/vault.json",
        "/openapi/prospector.3.0.json",
    ] {
        let resp = get(path, &origin).await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(resp.headers()["access-control-allow-origin"], "*", "{path}");
    }
    let api = get("/api/v1/credentials", &origin).await.unwrap();
    assert!(api.headers().get("access-control-allow-origin").is_none(), "the API itself is not opened cross-origin");

    for (path, status) in [
        ("/healthz", 200),
        ("/readyz", 200),
        ("/api/v1/credentials", 401),
        ("/v1/prospector/nowhere", 404),
        ("/docs/", 200),
    ] {
        let resp = get(path, &[]).await.unwrap();
        assert_eq!(resp.status(), status, "{path}");
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff", "{path}");
    }
}

/// A request answered before its body was read (a 401 at the MCP endpoint while the body is still
/// on its way) closes its connection, and says so, so no client reuses a connection the server is
/// closing; a request read to its end keeps the connection open.
#[tokio::test]
async fn an_answer_before_the_body_was_read_says_connection_close() {
    let server = Running::start(&[]).await;
    let answer = |stream: &mut std::net::TcpStream| {
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = vec![0; 65536];
        let n = stream.read(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).to_lowercase()
    };
    let mut stream = std::net::TcpStream::connect(&server.addr).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let head = format!(
        "POST /api/mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let unread = answer(&mut stream);
    assert!(unread.starts_with("http/1.1 401"), "{unread}");
    assert!(unread.contains("\r\nconnection: close\r\n"), "{unread}");

    let mut stream = std::net::TcpStream::connect(&server.addr).unwrap();
    let get = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr);
    stream.write_all(get.as_bytes()).unwrap();
    let read = answer(&mut stream);
    assert!(read.starts_with("http/1.1 200") && !read.contains("connection: close"), "{read}");
    stream.write_all(get.as_bytes()).unwrap();
    assert!(answer(&mut stream).starts_with("http/1.1 200"), "the connection is kept for the next request");
}
