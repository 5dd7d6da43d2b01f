//! Shared plumbing of the tests that run the real `specwright` binary.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::Path;
use std::process::Command;

pub use tests::process::Process;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_specwright");

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs `specwright <args>` and returns its trimmed stdout, failing with its stderr.
pub fn run_ok(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(out.status.success(), "specwright {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Starts `specwright serve --addr ADDR <args>` with its log in `log`, and waits until it
/// answers `/healthz` (failing the test with the log when it does not).
pub async fn serve(addr: &str, args: &[&str], log: &Path) -> Process {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve").args(["--addr", addr]).args(args);
    Process::start(cmd, addr, log).await
}
