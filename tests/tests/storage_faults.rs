//! Storage faults heal without a restart: a full disk under SQLite, a network partition from
//! PostgreSQL, and a PostgreSQL database refusing connections or writes answer 503 with
//! `Retry-After` and the envelope while they last, and the first request after they clear
//! succeeds. During a partition each request waits for the database once at most, however many
//! wait at once.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// `None` when this process may not mount (not root); under `SPECWRIGHT_CI` that fails.
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            assert!(std::env::var("SPECWRIGHT_CI").is_err(), "SPECWRIGHT_CI is set but a tmpfs cannot be mounted");
            eprintln!("SKIPPED (disk-full fault test): mounting a tmpfs needs root");
            return None;
        }
        Some(Tmpfs { dir })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

async fn store_credential(server: &common::TestServer, token: &str, key: &str) -> (u16, Option<String>, Value) {
    let resp = server
        .client()
        .post(server.url("/api/v1/credentials"))
        .bearer_auth(token)
        .json(&json!({"key": key, "value": "v".repeat(60_000)}))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let retry = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_string);
    (status, retry, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_disk_answers_503_and_the_first_request_after_space_returns_succeeds() {
    let Some(fs) = Tmpfs::mount("24m") else { return };
    let data = fs.dir.path().to_path_buf();
    let server =
        common::TestServer::start_configured(common::Backend::Sqlite, |c, _| c.data_dir = data.clone()).await.unwrap();
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (status, _, body) = store_credential(&server, &admin, "before").await;
    assert_eq!(status, 201, "{body}");

    // Fill the file system, then store until the database cannot grow.
    let filler = data.join("filler");
    {
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0u8; 256 * 1024];
        while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
    }
    let mut refused = None;
    for i in 0..400 {
        let (status, retry, body) = store_credential(&server, &admin, &format!("k{i}")).await;
        assert_ne!(status, 500, "a full disk is not an internal error: {body}");
        if status != 201 {
            refused = Some((status, retry, body));
            break;
        }
    }
    let (status, retry, body) = refused.expect("the database filled the disk");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "server/unavailable", "{body}");
    assert_eq!(retry.as_deref(), Some("5"), "Retry-After on the 503");

    // Space returns: the very next request works, without a restart.
    std::fs::remove_file(&filler).unwrap();
    let (status, _, body) = store_credential(&server, &admin, "after").await;
    assert_eq!(status, 201, "the first request after the fault clears: {body}");
    let (status, body) = server.call("GET", "/api/v1/credentials/after", &admin, None).await;
    assert_eq!(status, 200, "{body}");
}

/// A TCP relay to PostgreSQL that can be cut (bytes held, nothing forwarded, like a partition).
struct Relay {
    addr: std::net::SocketAddr,
    cut: Arc<AtomicBool>,
}

impl Relay {
    async fn start(target: String) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = Arc::new(AtomicBool::new(false));
        let flag = cut.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(upstream) = tokio::net::TcpStream::connect(&target).await else { continue };
                let (cr, cw) = client.into_split();
                let (ur, uw) = upstream.into_split();
                tokio::spawn(pipe(cr, uw, flag.clone()));
                tokio::spawn(pipe(ur, cw, flag.clone()));
            }
        });
        Relay { addr, cut }
    }
}

async fn pipe(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf, cut: Arc<AtomicBool>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        // While cut, hold the bytes: the peer sees silence, as in a partition.
        while cut.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// The PostgreSQL server the tests use (as the harness does).
fn pg_url() -> String {
    std::env::var("DATABASE_URL_TEST").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// How long a request may wait for a connection in these tests.
const ACQUIRE: Duration = Duration::from_secs(2);

/// A PostgreSQL server reaching its database through a [`Relay`] the test can cut.
async fn behind_a_relay() -> Option<(common::TestServer, Relay)> {
    let target =
        url::Url::parse(&pg_url()).ok().and_then(|u| Some(format!("{}:{}", u.host_str()?, u.port().unwrap_or(5432))));
    let relay = Relay::start(target.unwrap_or_else(|| "127.0.0.1:5432".into())).await;
    let relay_addr = relay.addr;
    let server = common::TestServer::start_configured(common::Backend::Postgres, move |c, _| {
        let mut url = url::Url::parse(c.database_url.as_deref().unwrap()).unwrap();
        url.set_port(Some(relay_addr.port())).unwrap();
        url.set_host(Some("127.0.0.1")).unwrap();
        c.database_url = Some(url.to_string());
        c.pool.acquire_timeout = ACQUIRE;
    })
    .await?;
    Some((server, relay))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partition_from_postgresql_answers_503_quickly_and_heals() {
    let Some((server, relay)) = behind_a_relay().await else { return };
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (status, body) = server.call("GET", "/api/v1/credentials", &admin, None).await;
    assert_eq!(status, 200, "{body}");
    let ready = |expected: u16| {
        let server = &server;
        async move {
            let resp = server.client().get(server.url("/readyz")).timeout(Duration::from_secs(20)).send().await;
            let resp = resp.expect("/readyz answers, not hangs");
            assert_eq!(resp.status(), expected);
            assert_eq!(resp.headers()["cache-control"], "no-store");
            resp.json::<Value>().await.unwrap()
        }
    };
    assert_eq!(ready(200).await, json!({"status": "ready", "checks": {"database": "ok"}}));

    relay.cut.store(true, Ordering::SeqCst);
    // Readiness says the database is down (and not why: the cause goes to the log).
    assert_eq!(ready(503).await, json!({"status": "unavailable", "checks": {"database": "down"}}));
    for path in ["/api/v1/credentials", "/v1/prospector/leads"] {
        let token = if path.starts_with("/v1") { server.team_token("alice", "acme") } else { admin.clone() };
        let resp = server
            .client()
            .get(server.url(path))
            .bearer_auth(&token)
            .timeout(Duration::from_secs(20))
            .send()
            .await
            .expect("an answer, not a hang");
        assert_eq!(resp.status(), 503, "{path} while the database is unreachable");
        assert_eq!(resp.headers()["retry-after"], "5", "{path}");
        let body: Value = resp.json().await.unwrap();
        let expected = if path.starts_with("/v1") { "service_unavailable" } else { "server/unavailable" };
        assert_eq!(body["error"]["code"], expected, "{body}");
    }

    // The authorization server answers RFC 6749's temporarily_unavailable the same way.
    let resp = server
        .client()
        .post(server.url("/oauth/token"))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", "x"), ("client_id", "some-client")])
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("an answer, not a hang");
    assert_eq!(resp.status(), 503, "the token endpoint while the database is unreachable");
    assert_eq!(resp.headers()["retry-after"], "5");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"], "temporarily_unavailable", "{body}");

    relay.cut.store(false, Ordering::SeqCst);
    let (status, body) = server.call("GET", "/api/v1/credentials", &admin, None).await;
    assert_eq!(status, 200, "the first request after the partition heals: {body}");
    assert_eq!(ready(200).await["status"], "ready", "ready again once the partition heals");
}

/// During a partition every request waits for the database once at most: `n` reveals sent at
/// once all answer 503 within the acquire timeout and a second, however many wait (their audit
/// rows are not waited for again: they are written once the database answers), and every one of
/// those rows is there after the partition heals.
async fn partitioned_reveals(n: usize) {
    let Some((server, relay)) = behind_a_relay().await else { return };
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (s, b) = server.call("POST", "/api/v1/credentials", &admin, Some(json!({"key": "db", "value": "pw"}))).await;
    assert_eq!(s, 201, "{b}");
    relay.cut.store(true, Ordering::SeqCst);
    let started = std::time::Instant::now();
    let reveals = (0..n).map(|i| {
        let rb = server
            .client()
            .post(server.url("/api/v1/credentials/db/reveal"))
            .bearer_auth(&admin)
            .header("x-request-id", format!("cut-{i}"))
            .json(&json!({}))
            .timeout(Duration::from_secs(30));
        async move {
            let resp = rb.send().await.expect("an answer, not a hang");
            let status = resp.status().as_u16();
            let retry = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_string);
            (status, retry, started.elapsed())
        }
    });
    let answers = futures_util::future::join_all(reveals).await;
    let limit = ACQUIRE + Duration::from_secs(1);
    let slowest = answers.iter().map(|(_, _, took)| *took).max().unwrap_or_default();
    eprintln!("{n} reveals during a partition (acquire timeout {ACQUIRE:?}): the slowest answered after {slowest:?}");
    for (status, retry, took) in &answers {
        assert_eq!((*status, retry.as_deref()), (503, Some("5")), "{n} reveals during a partition");
        assert!(*took <= limit, "{n} reveals during a partition: one answered after {took:?} (limit {limit:?})");
    }

    relay.cut.store(false, Ordering::SeqCst);
    let mut failed = 0;
    for _ in 0..100 {
        let (s, page) =
            server.call("GET", "/api/v1/audit?operation=reveal_credential&per_page=100", &admin, None).await;
        assert_eq!(s, 200, "{page}");
        let rows = page["data"].as_array().unwrap();
        failed = rows.iter().filter(|r| r["request_id"].as_str().is_some_and(|id| id.starts_with("cut-"))).count();
        if failed == n {
            for r in rows.iter().filter(|r| r["request_id"].as_str().is_some_and(|id| id.starts_with("cut-"))) {
                assert_eq!((&r["outcome"], &r["status"]), (&json!("failed"), &json!(503)), "{r}");
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(failed, n, "every reveal refused during the partition is audited once the database is back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_requests_during_a_partition_each_wait_once() {
    partitioned_reveals(8).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_requests_during_a_partition_each_wait_once() {
    partitioned_reveals(64).await;
}

/// Runs `sql` on the PostgreSQL server as its administrator (outside the server's database).
async fn as_administrator(sql: &str) {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(&pg_url()).await.expect("the administrator connects");
    sqlx::query(sqlx::AssertSqlSafe(sql.to_string())).execute(&mut c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The database's name and a statement closing its server's connections, so the next request
/// opens new ones.
fn database_of(server: &common::TestServer) -> (String, String) {
    let url = url::Url::parse(server.state.config.database_url.as_deref().unwrap()).unwrap();
    let name = url.path().trim_start_matches('/').to_string();
    let close = format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()"
    );
    (name, close)
}

async fn vault_status(
    server: &common::TestServer,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Option<String>, Value) {
    let mut rb = server
        .client()
        .request(method.parse().unwrap(), server.url(path))
        .bearer_auth(token)
        .timeout(Duration::from_secs(20));
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    let resp = rb.send().await.expect("an answer, not a hang");
    let status = resp.status().as_u16();
    let retry = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_string);
    (status, retry, resp.json().await.unwrap_or(Value::Null))
}

/// A PostgreSQL server (requests wait [`ACQUIRE`] at most for a connection) with the tenant
/// `acme` and its administrator's vault token.
async fn administered() -> Option<(common::TestServer, String)> {
    let server = common::TestServer::start_configured(common::Backend::Postgres, |c, _| {
        c.pool.acquire_timeout = ACQUIRE;
    })
    .await?;
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    Some((server, admin))
}

/// A database that refuses connections (an operator's `ALLOW_CONNECTIONS false`, a restore:
/// SQLSTATE 55000) or accepts only reads (a standby after a failover: 25006) answers 503 with
/// `Retry-After`, like an unreachable one, and the first request after it accepts again succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_refusing_connections_or_writes_answers_503_and_heals() {
    let Some((server, admin)) = administered().await else { return };
    let (name, close) = database_of(&server);
    let unavailable = |(status, retry, body): (u16, Option<String>, Value), what: &str| {
        assert_eq!((status, retry.as_deref()), (503, Some("5")), "{what}: {body}");
        assert_eq!(body["error"]["code"], "server/unavailable", "{what}: {body}");
    };

    as_administrator(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS false")).await;
    as_administrator(&close).await;
    unavailable(vault_status(&server, &admin, "GET", "/api/v1/credentials", None).await, "not accepting connections");
    as_administrator(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true")).await;
    let (s, _, b) = vault_status(&server, &admin, "GET", "/api/v1/credentials", None).await;
    assert_eq!(s, 200, "accepting connections again: {b}");

    as_administrator(&format!("ALTER DATABASE {name} SET default_transaction_read_only = on")).await;
    as_administrator(&close).await;
    let store = json!({"key": "db", "value": "pw"});
    unavailable(vault_status(&server, &admin, "POST", "/api/v1/credentials", Some(store.clone())).await, "read only");
    as_administrator(&format!("ALTER DATABASE {name} RESET default_transaction_read_only")).await;
    as_administrator(&close).await;
    let (s, _, b) = vault_status(&server, &admin, "POST", "/api/v1/credentials", Some(store)).await;
    assert_eq!(s, 201, "writable again: {b}");
}

/// PostgreSQL connections are pinged before use only when idle for a while or after a lost one,
/// so the pool must heal the other ways when the server closes every connection (a restart, a
/// failover, an operator): a transaction whose `BEGIN` meets a closed connection begins again on
/// a checked one; the requests that draw a closed connection before the first loss is seen
/// answer 503 with `Retry-After` (never a 500, never a hang); and from then on every connection
/// is checked, so when the server closes them all again every request succeeds, reads and writes,
/// however many arrive at once. A connection that dies inside a transaction is never handed out
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connections_closed_by_the_server_heal_at_once() {
    let Some((server, admin)) = administered().await else { return };
    let (_, close) = database_of(&server);
    let store = &server.state.store;

    // Busy connections, back in the pool, closed by the server: the next transaction begins.
    let warm = (0..4).map(|_| async {
        let mut tx = store.begin_read().await.unwrap();
        sqlx::query("SELECT pg_sleep(0.05)").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
    });
    futures_util::future::join_all(warm).await;
    as_administrator(&close).await;
    let tx = store.begin().await.expect("a transaction begins on a live connection");
    tx.commit().await.unwrap();

    let burst = |round: usize| {
        let (server, admin) = (&server, &admin);
        futures_util::future::join_all((0..16).map(move |i| async move {
            match i % 2 {
                0 => vault_status(server, admin, "GET", "/api/v1/credentials", None).await,
                _ => {
                    let body = json!({"key": format!("k{round}-{i}"), "value": "pw"});
                    vault_status(server, admin, "POST", "/api/v1/credentials", Some(body)).await
                }
            }
        }))
    };
    let succeeded = |(status, _, _): &(u16, Option<String>, Value)| *status == 200 || *status == 201;
    for answer in burst(0).await {
        assert!(succeeded(&answer), "{answer:?}");
    }
    as_administrator(&close).await;
    for answer in burst(1).await {
        let (status, retry, body) = &answer;
        assert!(
            succeeded(&answer) || (*status, retry.as_deref()) == (503, Some("5")),
            "right after the connections closed: {status} {body}"
        );
    }
    for round in 2..=3 {
        as_administrator(&close).await;
        for answer in burst(round).await {
            assert!(succeeded(&answer), "round {round}, closed again after a loss was seen: {answer:?}");
        }
    }

    // A connection that dies inside a transaction: the statement fails, and the pool does not
    // hand that connection out again.
    let mut tx = store.begin_read().await.unwrap();
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *tx).await.unwrap();
    as_administrator(&format!("SELECT pg_terminate_backend({pid})")).await;
    let failed = sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(&mut *tx).await;
    assert!(failed.is_err(), "a statement on a terminated connection fails");
    drop(tx);
    for _ in 0..20 {
        let mut tx = store.begin_read().await.expect("a transaction begins on a live connection");
        let other: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *tx).await.unwrap();
        assert_ne!(other, pid, "the dead connection was handed out again");
    }
}
