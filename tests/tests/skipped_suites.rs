//! A report, printed on every `cargo test`, of the optional suites this machine cannot run:
//! the PostgreSQL half of the storage suites, Redis-shared rate limits (and a Redis outage), and every suite needing
//! a tool of `tests::OPTIONAL_TOOLS` (validators, schemathesis, MCP clients, the browser, SDKs). Each skipping test
//! also returns early on its own; this report makes the skips visible (libtest hides the output of
//! passing tests). Under `SPECWRIGHT_CI=1` any skip is a failure.

use std::process::ExitCode;

fn postgres_reachable(url: &str) -> bool {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return false };
    rt.block_on(async {
        use sqlx::Connection;
        matches!(
            tokio::time::timeout(std::time::Duration::from_secs(3), sqlx::PgConnection::connect(url)).await,
            Ok(Ok(_))
        )
    })
}

fn main() -> ExitCode {
    let pg = std::env::var("DATABASE_URL_TEST").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let mut skipped = Vec::new();
    if !postgres_reachable(&pg) {
        skipped.push(format!(
            "PostgreSQL halves of the storage suites (tests/tests/vault.rs `postgres`): no server at {pg}"
        ));
    }
    let redis = std::env::var("REDIS_URL_TEST").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let redis_addr = redis.trim_start_matches("redis://").split('/').next().unwrap_or_default().to_string();
    let redis_up = redis_addr
        .parse()
        .is_ok_and(|a| std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(2)).is_ok());
    if !redis_up {
        skipped.push(format!(
            "rate limits shared through Redis (specwright/tests/shared_limits.rs): no server at {redis}"
        ));
    }
    let root = std::process::Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if !root {
        skipped.push("the disk-full fault test (storage_faults.rs): mounting a tmpfs needs root".into());
    }
    // specwright/tests/redis_outage.rs starts (and kills) a `redis-server` of its own.
    let server_bin = std::env::var("REDIS_SERVER_BIN").unwrap_or_else(|_| "redis-server".into());
    let has_server = std::process::Command::new(&server_bin)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_server {
        skipped.push(format!(
            "rate limits across a Redis outage (specwright/tests/redis_outage.rs): no {server_bin} binary"
        ));
    }
    // The same table `common::tool` reads, so no suite can skip without a line here.
    for t in tests::OPTIONAL_TOOLS {
        if std::env::var(t.var).is_err() {
            skipped.push(format!("{}: {} is not set (.ci/run installs {})", t.suite, t.var, t.what));
        }
    }
    if skipped.is_empty() {
        println!("optional suites: none skipped (PostgreSQL, Redis and every tool of tests::OPTIONAL_TOOLS available)");
        return ExitCode::SUCCESS;
    }
    for s in &skipped {
        println!("SKIPPED: {s}");
    }
    println!("(bash .ci/run installs and starts all of them)");
    if std::env::var("SPECWRIGHT_CI").is_ok() {
        eprintln!("SPECWRIGHT_CI is set: no suite may be skipped");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
