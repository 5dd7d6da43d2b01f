//! Rate limits across a Redis outage in the middle of a window, against a real `redis-server` of
//! the test's own (on a free port; the shared one is never touched) that is killed and started
//! again. The plan is a promise: one process admits at most the plan's limit per window, however
//! Redis comes and goes, and once Redis is back it holds what was admitted while it was away.
//! Skipped (with a notice) without a `redis-server` binary; required under `SPECWRIGHT_CI=1`.

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use runtime::ratelimit::{ManualClock, RateLimiter};
use support::PlanInfo;

/// 10 s into a UTC minute, so no test crosses a window by accident.
const T0: i64 = 1_767_225_600_000 + 10_000;

fn starter() -> &'static PlanInfo {
    prospector_api::prospector::SERVICE.plan("starter").expect("the prospector declares starter")
}

/// The `redis-server` binary, or `None` (after a notice) when this machine has none.
fn redis_server() -> Option<String> {
    let bin = std::env::var("REDIS_SERVER_BIN").unwrap_or_else(|_| "redis-server".into());
    if Command::new(&bin).arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success()) {
        return Some(bin);
    }
    assert!(std::env::var("SPECWRIGHT_CI").is_err(), "SPECWRIGHT_CI is set but there is no {bin} binary");
    eprintln!("SKIPPED (rate limits across a Redis outage): no {bin} binary");
    None
}

/// One `redis-server` of this test, killed when dropped.
struct Redis {
    bin: String,
    port: u16,
    dir: tempfile::TempDir,
    /// Keep the data across a restart (append-only file, fsync on every write)?
    durable: bool,
    child: Option<Child>,
}

impl Redis {
    fn start(bin: &str, durable: bool) -> Redis {
        let mut r = Redis {
            bin: bin.to_string(),
            port: common::free_port(),
            dir: tempfile::tempdir().unwrap(),
            durable,
            child: None,
        };
        r.up();
        r
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn up(&mut self) {
        let port = self.port.to_string();
        let dir = self.dir.path().to_str().unwrap().to_string();
        let appendonly = if self.durable { "yes" } else { "no" };
        let child = Command::new(&self.bin)
            .args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--dir", &dir])
            .args(["--appendonly", appendonly, "--appendfsync", "always"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_for(self.port, true);
    }

    /// Kills the server (SIGKILL: no goodbye, no final save).
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        wait_for(self.port, false);
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

fn wait_for(port: u16, listening: bool) {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    for _ in 0..100 {
        if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok() == listening {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("redis-server on port {port} did not {}", if listening { "start" } else { "stop" });
}

/// Checks `n` requests of `key`; returns how many were admitted.
async fn spend(limiter: &RateLimiter, key: &str, n: u32) -> u32 {
    let mut admitted = 0;
    for _ in 0..n {
        if limiter.check(key, starter()).await.allowed {
            admitted += 1;
        }
    }
    admitted
}

/// Checks `key` until one check reaches Redis (the fallback count stops growing); returns how many
/// of those checks were admitted.
async fn until_redis_answers(limiter: &RateLimiter, key: &str) -> u32 {
    let mut admitted = 0;
    for _ in 0..100 {
        let before = limiter.fallbacks();
        if limiter.check(key, starter()).await.allowed {
            admitted += 1;
        }
        if limiter.fallbacks() == before {
            return admitted;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the limiter never reached the restarted Redis");
}

/// What Redis holds for `key`'s current minute, read by a fresh process that knows nothing else
/// (its check, under a plan of 1,000 a minute, reports 1,000 − count − 1 remaining).
async fn count_in_redis(url: &str, clock: Arc<ManualClock>, key: &str) -> u32 {
    let fresh = RateLimiter::redis(url, 1, clock).await.unwrap();
    let wide = PlanInfo { name: "wide", title: "Wide", per_minute: 1_000, per_day: 1_000_000 };
    let d = fresh.check(key, &wide).await;
    assert_eq!((d.allowed, d.limit), (true, 1_000), "the fresh process reached Redis");
    999 - d.remaining
}

/// Redis lost after 50 of a Starter token's 60 in a minute, and back, empty,
/// within the same minute. Before: 60 more admitted in process during the outage (110) and Redis
/// counting from 0 on its return. Now: 10 during the outage, none after; 60 in all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_process_admits_at_most_the_plan_in_a_window_across_a_redis_restart() {
    let Some(bin) = redis_server() else { return };
    let mut redis = Redis::start(&bin, false);
    let clock = Arc::new(ManualClock::at(T0));
    let limiter = RateLimiter::redis(&redis.url(), 1, clock.clone()).await.unwrap();
    let key = "prospector:token:outage";
    assert_eq!(spend(&limiter, key, 50).await, 50, "50 through Redis");
    assert_eq!(limiter.fallbacks(), 0);

    redis.kill();
    clock.advance(10_000);
    let during = spend(&limiter, key, 60).await;
    assert!(limiter.fallbacks() > 0, "the checks fell back to in-process counters");
    assert_eq!(during, 10, "the fallback starts from the 50 Redis had counted, not from 0");

    redis.up(); // without persistence: Redis has lost every count
    clock.advance(10_000);
    let after = until_redis_answers(&limiter, key).await + spend(&limiter, key, 20).await;
    assert_eq!(after, 0, "Redis's count was raised to what this process admitted, not restarted from 0");
    assert_eq!(50 + during + after, 60, "exactly the plan's limit in the window");
    assert_eq!(count_in_redis(&redis.url(), clock.clone(), key).await, 60, "Redis now holds the window's count");

    clock.advance(60_000);
    assert_eq!(spend(&limiter, key, 61).await, 60, "the next minute admits the plan again, through Redis");
}

/// Two replicas (`--replicas 2`) and a Redis that keeps its data across the restart (an
/// append-only file): while it is away each replica admits its half of what was left when it last
/// heard from Redis, and on its return each adds what it admitted (INCRBY), so Redis's count is
/// exact again and the total stays within the bound the README states.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_keep_their_share_and_redis_learns_every_admission_on_its_return() {
    let Some(bin) = redis_server() else { return };
    let mut redis = Redis::start(&bin, true);
    let clock = Arc::new(ManualClock::at(T0));
    let a = RateLimiter::redis(&redis.url(), 2, clock.clone()).await.unwrap();
    let b = RateLimiter::redis(&redis.url(), 2, clock.clone()).await.unwrap();
    let key = "prospector:token:replicas";
    // A admits 20, then B 20: A last saw 20, B saw 40.
    assert_eq!(spend(&a, key, 20).await + spend(&b, key, 20).await, 40);

    redis.kill();
    let (during_a, during_b) = (spend(&a, key, 60).await, spend(&b, key, 60).await);
    assert_eq!(during_a, (60 - 20) / 2, "A: half of what was left when it last saw Redis");
    assert_eq!(during_b, (60 - 40) / 2, "B: half of what was left when it last saw Redis");

    redis.up(); // with its data: the 40
    let after = until_redis_answers(&a, key).await + until_redis_answers(&b, key).await;
    let total = 40 + during_a + during_b + after;
    assert_eq!(after, 0, "Redis's count includes both replicas' outage admissions");
    assert_eq!(count_in_redis(&redis.url(), clock.clone(), key).await, total, "Redis holds exactly what was admitted");
    // The README's bound for N replicas: at most limit × (2 − 1/N) in the window of the outage.
    assert!(total <= 60 * 3 / 2, "within the stated bound for two replicas: {total}");
}

/// A Redis that restarts empty gets back the counts the replicas know, even those of a replica
/// that gets no further request for the token (its reconcile task notices the new epoch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_redis_gets_back_what_every_replica_knows() {
    let Some(bin) = redis_server() else { return };
    let mut redis = Redis::start(&bin, false);
    let clock = Arc::new(ManualClock::at(T0));
    let a = RateLimiter::redis(&redis.url(), 2, clock.clone()).await.unwrap();
    let b = RateLimiter::redis(&redis.url(), 2, clock.clone()).await.unwrap();
    let key = "prospector:token:epoch";
    // Each reconcile task runs once at start, then every second; let the first runs end, so
    // neither task reads Redis in the middle of the spending below (under load a late first run
    // let B learn part of A's 40 and admit less during the outage than this test states).
    tokio::time::sleep(Duration::from_millis(200)).await;
    // B admits 10, then A 40: A last saw 50, B 10.
    assert_eq!(spend(&b, key, 10).await + spend(&a, key, 40).await, 50);

    redis.kill();
    let during = spend(&b, key, 60).await;
    assert_eq!(during, (60 - 10) / 2, "B: half of what was left when it last saw Redis");

    redis.up(); // without persistence: the 50 are gone
    // A gets no request for the token; both reconcile tasks run within a second or two.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let held = count_in_redis(&redis.url(), clock.clone(), key).await;
    assert!(held >= 50, "Redis holds at least what A knew (50), not only B's view: {held}");
    let total = 50 + during + spend(&a, key, 60).await + spend(&b, key, 60).await;
    assert!(total <= 60 * 3 / 2, "within the stated bound for two replicas: {total}");
}

/// Readiness with shared limits: Redis is reported, and its outage leaves the process ready but
/// degraded (limits go on in process), never unready; back to ready when Redis returns.
#[tokio::test]
async fn readiness_reports_a_redis_outage_as_degraded_not_unavailable() {
    let Some(bin) = redis_server() else { return };
    let mut redis = Redis::start(&bin, false);
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let data = dir.path().to_str().unwrap();
    let url = redis.url();
    let log = dir.path().join("server.log");
    let _server = common::serve(&addr, &["--data-dir", data, "--redis-url", &url], &log).await;
    let client = reqwest::Client::new();
    let base = format!("http://{addr}");
    let ready = || async {
        let resp = client.get(format!("{base}/readyz")).send().await.unwrap();
        (resp.status().as_u16(), resp.json::<serde_json::Value>().await.unwrap())
    };
    let up = serde_json::json!({"status": "ready", "checks": {"database": "ok", "redis": "ok"}});
    assert_eq!(ready().await, (200, up.clone()));
    redis.kill();
    let degraded = serde_json::json!({"status": "degraded", "checks": {"database": "ok", "redis": "down"}});
    assert_eq!(ready().await, (200, degraded));
    redis.up();
    let mut last = ready().await;
    for _ in 0..40 {
        if last.1 == up {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        last = ready().await;
    }
    assert_eq!(last, (200, up), "ready again once Redis is back");
}
