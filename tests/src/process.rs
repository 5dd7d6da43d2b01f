//! A server process a test starts: one way to start it, wait for it and stop it, for every
//! binary the black-box tests run (so a server that does not come up always says why).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a server may take to answer `/healthz` after it starts: generous, because a debug
/// build on a busy two-core machine can take seconds to open and migrate its database.
const START_LIMIT: Duration = Duration::from_secs(60);

/// A server process, killed and reaped when dropped. Dropping it fails the test when the
/// server's log shows a panic anywhere (a handler, a background task): a black-box test sees
/// only answers, and a task that panicked in the background answers nothing.
pub struct Process {
    /// The running process (tests signal it or wait for its exit).
    pub child: Child,
    log: PathBuf,
}

impl Process {
    /// Starts `cmd` with its standard output discarded and its standard error appended to `log`,
    /// and waits until `http://{addr}/healthz` answers 200. Fails the test, with the log, when the
    /// process exits first or does not answer within a minute.
    pub async fn start(mut cmd: Command, addr: &str, log: &Path) -> Process {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("open the server log");
        let child = cmd.stdout(Stdio::null()).stderr(file).spawn().unwrap_or_else(|e| panic!("start {cmd:?}: {e}"));
        let mut process = Process { child, log: log.to_path_buf() };
        let started = Instant::now();
        loop {
            if healthy(addr).await {
                return process;
            }
            if let Some(status) = process.child.try_wait().expect("poll the server process") {
                panic!("{cmd:?} exited ({status}) before serving:\n{}", process.log());
            }
            if started.elapsed() > START_LIMIT {
                panic!("{cmd:?} did not answer /healthz on {addr} within {START_LIMIT:?}:\n{}", process.log());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// What the server wrote to standard error so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            return;
        }
        let log = self.log();
        if let Some(at) = log.find("panicked at") {
            let end = log[at..].find("\nstack backtrace").map_or(log.len(), |e| at + e);
            panic!("the server panicked: {}", &log[at..end.min(at + 2000)]);
        }
    }
}

/// Whether `GET /healthz` on `addr` answers 200 within two seconds.
async fn healthy(addr: &str) -> bool {
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.ok()?;
        Some(&head == b"HTTP/1.1 200")
    };
    tokio::time::timeout(Duration::from_secs(2), ask).await.ok().flatten().unwrap_or(false)
}
