//! Shared plumbing of the tests that run the real `specwright` binary.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_specwright");

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Server processes, killed when dropped.
pub struct Servers(pub Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs `specwright <args>` and returns its trimmed stdout, failing with its stderr.
pub fn run_ok(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(out.status.success(), "specwright {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Starts `specwright serve <args>` with stdout and stderr discarded.
pub fn serve(args: &[&str]) -> Child {
    Command::new(BIN).arg("serve").args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
}

/// Waits until `base/healthz` answers (at most 5 s).
pub async fn wait_healthy(client: &reqwest::Client, base: &str) {
    for _ in 0..100 {
        if client.get(format!("{base}/healthz")).send().await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{base} did not start");
}
