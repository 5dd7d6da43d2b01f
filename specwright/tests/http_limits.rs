//! The real binary's connection limits, as docs/operating.md ("Slow and idle clients") states them:
//! idle, slow-header and slow-body clients are closed or answered 408, and idle sockets past the
//! open-file limit cannot keep a normal request from being answered.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{BIN, Process, free_port, run_ok, serve};

/// Whether the server closed `stream` within `within` (EOF or reset), sending `drip` bytes one at
/// a time every `every` meanwhile when given.
fn closed_within(stream: &mut TcpStream, within: Duration, drip: Option<(&[u8], Duration)>) -> bool {
    let start = Instant::now();
    stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut sent = 0;
    let mut last = Instant::now();
    let mut buf = [0u8; 4096];
    while start.elapsed() < within {
        if let Some((bytes, every)) = drip
            && last.elapsed() >= every
        {
            if sent < bytes.len() && stream.write_all(&bytes[sent..=sent]).is_err() {
                return true;
            }
            sent += 1;
            last = Instant::now();
        }
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn idle_slow_header_and_slow_body_clients_are_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let limits = ["--header-read-timeout", "2", "--idle-timeout", "3", "--request-timeout", "3"];
    let args = [&["--data-dir", dir.path().to_str().unwrap()][..], &limits].concat();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _server = rt.block_on(serve(&addr, &args, &dir.path().join("server.log")));

    // A socket that never sends a byte is closed after the idle timeout.
    let mut idle = TcpStream::connect(&addr).unwrap();
    assert!(closed_within(&mut idle, Duration::from_secs(10), None), "an idle connection is closed");

    // A kept-alive connection is closed when idle after its request.
    let mut kept = TcpStream::connect(&addr).unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut head = [0u8; 12];
    kept.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    assert!(closed_within(&mut kept, Duration::from_secs(10), None), "an idle kept-alive connection is closed");

    // Slowloris: a header byte every 500 ms never completes; the header deadline closes it.
    let mut slow = TcpStream::connect(&addr).unwrap();
    let request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    assert!(
        closed_within(&mut slow, Duration::from_secs(10), Some((request, Duration::from_millis(500)))),
        "a client trickling its headers is closed"
    );

    // A body trickled at 2 bytes/s: the whole-request deadline answers the 408 envelope.
    let token = run_ok(&[
        "token",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--addr",
        &addr,
        "--sub",
        "alice",
        "--tenant",
        "acme",
        "--scope",
        "vault:write",
    ]);
    let mut trickle = TcpStream::connect(&addr).unwrap();
    let head = format!(
        "POST /api/v1/credentials HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    );
    trickle.write_all(head.as_bytes()).unwrap();
    trickle.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let start = Instant::now();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < Duration::from_secs(15) {
        let _ = trickle.write_all(b" ");
        match trickle.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(_) if !answer.is_empty() && answer.windows(4).any(|w| w == b"\r\n\r\n") => {
                if String::from_utf8_lossy(&answer).contains("request/timeout") {
                    break;
                }
            }
            Err(_) => {}
        }
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "a trickled body gets 408: {text}");
    assert!(text.contains(r#""code":"request/timeout""#), "the vault's envelope: {text}");
}

#[test]
fn idle_sockets_past_the_file_limit_leave_a_normal_request_answered() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    // The server runs under `ulimit -n 1024`; 1,100 idle sockets would exhaust its descriptors.
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(r#"ulimit -n 1024 && exec "$0" serve "$@""#).arg(BIN).args([
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--addr",
        &addr,
    ]);
    let base = format!("http://{addr}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _server = rt.block_on(Process::start(cmd, &addr, &dir.path().join("server.log")));
    let idle: Vec<TcpStream> = (0..1100).filter_map(|_| TcpStream::connect(&addr).ok()).collect();
    assert!(idle.len() >= 1000, "opened {} idle sockets", idle.len());
    rt.block_on(async {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
        let resp = client.get(format!("{base}/healthz")).send().await.expect("a normal request is answered");
        assert_eq!(resp.status(), 200);
    });
    drop(idle);
}
