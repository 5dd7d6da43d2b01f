//! Rate limits per token and plan: a per-minute and a per-day window (fixed, aligned to the UTC
//! minute and day), exact under concurrency.
//!
//! In-process counters by default. With `REDIS_URL`, counters live in Redis and one Lua script per
//! check reads, decides and increments atomically, so several server processes share one limit.
//!
//! The plan is a promise across a Redis outage too. This process remembers, per token and window,
//! the last count Redis reported. When Redis is unreachable it keeps limiting in process *from that
//! count*: it may admit its share (`1 / replicas`) of what was left of the window when it last heard
//! from Redis, so one process never admits more than the plan's limit in a window. What it admits
//! meanwhile is kept as pending; when Redis answers again the pending count is added to Redis's
//! (INCRBY), and Redis's count is raised to at least the count this process knows (a restarted,
//! empty Redis does not start the window again from 0). The key's next check does this in the same
//! script that decides, and a background task does it for every other key within a second (and,
//! when Redis has lost its data, restores every count this process knows). It logs and counts
//! every fallback; it never runs unlimited. The bound for N replicas is in the README.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue};
use support::PlanInfo;

/// Where "now" comes from; tests move it by hand.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock tests set and advance.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock reading `ms`.
    pub fn at(ms: i64) -> Self {
        ManualClock(AtomicI64::new(ms))
    }

    /// Moves the clock forward.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// The system clock, moved forward by hand: a test starts fresh windows without waiting for
/// them, and otherwise sees time pass as it does.
#[derive(Debug, Default)]
pub struct ShiftedClock(AtomicI64);

impl ShiftedClock {
    /// Moves the clock forward.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Moves the clock to the start of the next UTC minute.
    pub fn next_minute(&self) {
        self.advance(60_000 - self.now_ms().rem_euclid(60_000));
    }
}

impl Clock for ShiftedClock {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.0.load(Ordering::SeqCst)
    }
}

/// The outcome of one check, with what the `X-RateLimit-*` headers report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The request may proceed.
    pub allowed: bool,
    /// The limit of the reported window.
    pub limit: u32,
    /// Requests left in the reported window.
    pub remaining: u32,
    /// When the reported window resets, UTC epoch seconds.
    pub reset: i64,
    /// Seconds to wait (at least 1) when refused.
    pub retry_after: Option<i64>,
}

impl Decision {
    /// Writes `X-RateLimit-Limit`, `-Remaining`, `-Reset` and, when refused, `Retry-After`.
    pub fn write_headers(&self, headers: &mut HeaderMap) {
        headers.insert("x-ratelimit-limit", HeaderValue::from(self.limit));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(self.remaining));
        headers.insert("x-ratelimit-reset", HeaderValue::from(self.reset));
        if let Some(s) = self.retry_after {
            headers.insert("retry-after", HeaderValue::from(s));
        }
    }
}

const MINUTE: i64 = 60;
const DAY: i64 = 86_400;

/// The start (epoch seconds) of the minute and the day `now_ms` falls in.
fn window_starts(now_ms: i64) -> (i64, i64) {
    let now = now_ms.div_euclid(1000);
    (now - now.rem_euclid(MINUTE), now - now.rem_euclid(DAY))
}

/// Decides from the counts already spent in the current windows (before this request): refused
/// once a window's count reaches its cap (the plan's limit, or less while limiting in process for
/// a share). The headers report the plan's limit of the window that will refuse first.
fn decide(plan: (u32, u32), caps: (u32, u32), spent: (u32, u32), now_ms: i64) -> Decision {
    let now = now_ms.div_euclid(1000);
    let (minute_start, day_start) = window_starts(now_ms);
    let (minute_reset, day_reset) = (minute_start + MINUTE, day_start + DAY);
    let refuse = |limit, reset: i64| Decision {
        allowed: false,
        limit,
        remaining: 0,
        reset,
        retry_after: Some((reset - now).max(1)),
    };
    if spent.0 >= caps.0 {
        return refuse(plan.0, minute_reset);
    }
    if spent.1 >= caps.1 {
        return refuse(plan.1, day_reset);
    }
    let minute_left = caps.0 - spent.0 - 1;
    let day_left = caps.1 - spent.1 - 1;
    if day_left < minute_left {
        Decision { allowed: true, limit: plan.1, remaining: day_left, reset: day_reset, retry_after: None }
    } else {
        Decision { allowed: true, limit: plan.0, remaining: minute_left, reset: minute_reset, retry_after: None }
    }
}

/// What this process knows of one token's window.
#[derive(Debug, Default, Clone, Copy)]
struct Window {
    /// Start of the window, epoch seconds.
    start: i64,
    /// The window's count as best known here: Redis's last report plus what was admitted since.
    count: u32,
    /// Redis's count when this process last heard from it (0 without Redis).
    base: u32,
    /// Admitted in process while Redis was unreachable, not yet added to Redis's count.
    pending: u32,
}

impl Window {
    /// Forgets a window that is over.
    fn roll(&mut self, start: i64) {
        if self.start != start {
            *self = Window { start, ..Window::default() };
        }
    }

    /// The count this process may let the window reach on its own: what Redis had counted plus
    /// this process's share of the rest (all of it for one process; always `limit` without Redis).
    fn cap(&self, limit: u32, replicas: u32) -> u32 {
        self.base.saturating_add(limit.saturating_sub(self.base) / replicas.max(1))
    }

    /// Redis reported `seen` (this request's admission included).
    fn heard(&mut self, seen: u32) {
        self.count = self.count.max(seen);
        self.base = self.base.max(seen);
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    minute: Window,
    day: Window,
}

/// What one Redis call must settle for a key before deciding: the pending admissions to add, and
/// the count this process knows (Redis's count is raised to at least that).
#[derive(Debug, Default, Clone, Copy)]
struct Settle {
    minute_start: i64,
    day_start: i64,
    minute_pending: u32,
    minute_known: u32,
    day_pending: u32,
    day_known: u32,
}

/// In-process counters: all of them without Redis; with Redis, the last counts it reported and
/// what was admitted while it was unreachable.
#[derive(Debug, Default)]
struct Local {
    counts: Mutex<HashMap<String, Counts>>,
    /// Some key holds pending admissions (saves the reconcile task a walk of the map).
    any_pending: AtomicBool,
}

impl Local {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Counts>> {
        match self.counts.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The key's windows as of `now_ms`, rolled over when they are over.
    fn entry<'a>(map: &'a mut HashMap<String, Counts>, key: &str, now_ms: i64) -> &'a mut Counts {
        let (minute_start, day_start) = window_starts(now_ms);
        // Forget windows that are over (keeps memory bounded by active tokens); keep any whose
        // pending admissions Redis has not heard of yet.
        if map.len() > 100_000 {
            map.retain(|_, c| c.day.start == day_start || c.day.pending > 0);
        }
        let c = map.entry(key.to_string()).or_default();
        c.minute.roll(minute_start);
        c.day.roll(day_start);
        c
    }

    /// Decides in process. `outage` marks admissions as pending for Redis.
    fn check(&self, key: &str, plan: (u32, u32), replicas: u32, now_ms: i64, outage: bool) -> Decision {
        let mut map = self.lock();
        let c = Self::entry(&mut map, key, now_ms);
        let caps = (c.minute.cap(plan.0, replicas), c.day.cap(plan.1, replicas));
        let d = decide(plan, caps, (c.minute.count, c.day.count), now_ms);
        if d.allowed {
            c.minute.count += 1;
            c.day.count += 1;
            if outage {
                c.minute.pending += 1;
                c.day.pending += 1;
                self.any_pending.store(true, Ordering::Relaxed);
            }
        }
        d
    }

    /// Takes the key's pending admissions (to send to Redis) with the counts known here.
    fn take(&self, key: &str, now_ms: i64) -> Settle {
        let mut map = self.lock();
        let c = Self::entry(&mut map, key, now_ms);
        let s = Settle {
            minute_start: c.minute.start,
            day_start: c.day.start,
            minute_pending: c.minute.pending,
            minute_known: c.minute.count,
            day_pending: c.day.pending,
            day_known: c.day.count,
        };
        c.minute.pending = 0;
        c.day.pending = 0;
        s
    }

    /// Puts back what [`Local::take`] took when Redis did not get it.
    fn untake(&self, key: &str, s: &Settle) {
        if s.minute_pending == 0 && s.day_pending == 0 {
            return;
        }
        let mut map = self.lock();
        let Some(c) = map.get_mut(key) else { return };
        if c.minute.start == s.minute_start {
            c.minute.pending += s.minute_pending;
        }
        if c.day.start == s.day_start {
            c.day.pending += s.day_pending;
        }
        self.any_pending.store(true, Ordering::Relaxed);
    }

    /// Redis answered for `key`: these are its counts of the windows of `s`.
    fn heard(&self, key: &str, s: &Settle, minute: u32, day: u32) {
        let mut map = self.lock();
        let Some(c) = map.get_mut(key) else { return };
        if c.minute.start == s.minute_start {
            c.minute.heard(minute);
        }
        if c.day.start == s.day_start {
            c.day.heard(day);
        }
    }

    /// Every key with a count in the current day (pending admissions included).
    fn known_keys(&self, now_ms: i64) -> Vec<String> {
        self.any_pending.store(false, Ordering::Relaxed);
        let (_, day_start) = window_starts(now_ms);
        self.lock()
            .iter()
            .filter(|(_, c)| c.day.start == day_start && c.day.count > 0)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Keys holding pending admissions.
    fn pending_keys(&self) -> Vec<String> {
        if !self.any_pending.swap(false, Ordering::Relaxed) {
            return Vec::new();
        }
        self.lock().iter().filter(|(_, c)| c.minute.pending > 0 || c.day.pending > 0).map(|(k, _)| k.clone()).collect()
    }
}

/// Lua: brings a window's count in Redis up to date with what this process admitted while Redis
/// was away (`pending`, added) and what it knows the count to be (`known`, a floor: a restarted
/// Redis may have lost the count).
macro_rules! settle_lua {
    () => {
        r"
local function settle(key, pending, known, ttl)
  local stored = tonumber(redis.call('GET', key) or '0')
  local count = stored + tonumber(pending)
  if count < tonumber(known) then count = tonumber(known) end
  if count ~= stored then redis.call('SET', key, count, 'EX', ttl) end
  return count
end
local m = settle(KEYS[1], ARGV[5], ARGV[6], ARGV[3])
local d = settle(KEYS[2], ARGV[7], ARGV[8], ARGV[4])
"
    };
}

/// Settles both windows, then reads, refuses or increments both, atomically.
const CHECK: &str = concat!(
    settle_lua!(),
    r"
if m >= tonumber(ARGV[1]) or d >= tonumber(ARGV[2]) then
  return {0, m, d}
end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return {1, m, d}
"
);

/// Settles both windows only (the reconcile task).
const SETTLE: &str = concat!(settle_lua!(), "return {1, m, d}\n");

/// Where Redis keeps the epoch of its data: set once by whichever process finds it missing, so a
/// new value means Redis lost what it held.
const EPOCH_KEY: &str = "specwright:rl:epoch";

/// Sets the epoch if it is missing; returns it.
const EPOCH: &str = "redis.call('SET', KEYS[1], ARGV[1], 'NX')\nreturn redis.call('GET', KEYS[1])\n";

static EPOCH_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(EPOCH));
static CHECK_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(CHECK));
static SETTLE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(SETTLE));

/// Redis keys of `key`'s windows.
fn redis_keys(key: &str, s: &Settle) -> (String, String) {
    (format!("specwright:rl:{key}:m:{}", s.minute_start), format!("specwright:rl:{key}:d:{}", s.day_start))
}

/// Runs `script` for `key` with the plan's limits and what `s` settles; Redis's counts back.
async fn invoke(
    conn: &mut redis::aio::ConnectionManager,
    script: &redis::Script,
    key: &str,
    limits: (u32, u32),
    s: &Settle,
) -> redis::RedisResult<(i64, i64, i64)> {
    let (minute_key, day_key) = redis_keys(key, s);
    script
        .key(minute_key)
        .key(day_key)
        .arg(limits.0)
        .arg(limits.1)
        .arg(MINUTE + 5)
        .arg(DAY + 60)
        .arg(s.minute_pending)
        .arg(s.minute_known)
        .arg(s.day_pending)
        .arg(s.day_known)
        .invoke_async(conn)
        .await
}

fn count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// The limiter shared by a server's gates.
#[derive(Debug)]
pub struct RateLimiter {
    clock: Arc<dyn Clock>,
    local: Arc<Local>,
    redis: Option<redis::aio::ConnectionManager>,
    /// Server processes sharing the limit, for the fallback share.
    replicas: u32,
    fallbacks: AtomicU64,
    /// After Redis fails, checks go straight to the in-process counters until this moment
    /// (milliseconds since `started`), so requests do not each wait on a reconnection attempt.
    redis_down_until: Arc<AtomicI64>,
    started: std::time::Instant,
}

/// How long checks skip Redis after it failed, before one of them tries it again.
const RETRY_REDIS_AFTER_MS: i64 = 1000;

impl RateLimiter {
    /// In-process counters only.
    pub fn local(clock: Arc<dyn Clock>) -> Self {
        RateLimiter {
            clock,
            local: Arc::default(),
            redis: None,
            replicas: 1,
            fallbacks: AtomicU64::new(0),
            redis_down_until: Arc::default(),
            started: std::time::Instant::now(),
        }
    }

    /// Counters in Redis at `url`, shared by `replicas` server processes. Starts the task that
    /// hands Redis what was admitted in process while it was unreachable.
    pub async fn redis(url: &str, replicas: u32, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let client = redis::Client::open(url)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(Duration::from_millis(500)))
            .set_number_of_retries(1);
        let manager = redis::aio::ConnectionManager::new_with_config(client, config).await?;
        let local = Arc::<Local>::default();
        let redis_down_until = Arc::<AtomicI64>::default();
        tokio::spawn(reconcile(Arc::downgrade(&local), manager.clone(), clock.clone(), redis_down_until.clone()));
        Ok(RateLimiter {
            clock,
            local,
            redis: Some(manager),
            replicas: replicas.max(1),
            fallbacks: AtomicU64::new(0),
            redis_down_until,
            started: std::time::Instant::now(),
        })
    }

    fn elapsed_ms(&self) -> i64 {
        i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX)
    }

    /// A `PING` to Redis (answered within the connection's response timeout); `None` when limits
    /// are kept in process.
    pub fn ping(&self) -> Option<impl std::future::Future<Output = redis::RedisResult<String>> + use<>> {
        let mut manager = self.redis.clone()?;
        Some(async move { redis::cmd("PING").query_async::<String>(&mut manager).await })
    }

    /// How many checks fell back to in-process counters because Redis failed.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// Counts one request of `key` (a service and a token) under `plan`.
    pub async fn check(&self, key: &str, plan: &PlanInfo) -> Decision {
        let now_ms = self.clock.now_ms();
        let limits = (plan.per_minute, plan.per_day);
        let Some(manager) = &self.redis else {
            return self.local.check(key, limits, 1, now_ms, false);
        };
        if self.elapsed_ms() < self.redis_down_until.load(Ordering::Relaxed) {
            self.fallbacks.fetch_add(1, Ordering::Relaxed);
            return self.local.check(key, limits, self.replicas, now_ms, true);
        }
        let settle = self.local.take(key, now_ms);
        let mut conn = manager.clone();
        match invoke(&mut conn, &CHECK_SCRIPT, key, limits, &settle).await {
            Ok((allowed, m, d)) => {
                let (m, d) = (count(m), count(d));
                let admitted = u32::from(allowed == 1);
                self.local.heard(key, &settle, m + admitted, d + admitted);
                decide(limits, limits, (m, d), now_ms)
            }
            Err(e) => {
                self.local.untake(key, &settle);
                self.redis_down_until.store(self.elapsed_ms() + RETRY_REDIS_AFTER_MS, Ordering::Relaxed);
                let n = self.fallbacks.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::warn!(error = %e, fallbacks = n, "Redis unreachable: limiting in process from the last counts Redis reported, at this server's share of the rest");
                self.local.check(key, limits, self.replicas, now_ms, true)
            }
        }
    }
}

/// Every second, while this limiter lives, brings Redis up to date with this process: the
/// pending admissions of every key (so other replicas see them even if this process gets no
/// further request for the key), and, when Redis has lost its data (restarted without
/// persistence: the epoch it holds is new), the counts this process knows for every key of the
/// day, so no window starts again from 0. A tick that reaches Redis also lets checks use it again.
async fn reconcile(
    local: Weak<Local>,
    manager: redis::aio::ConnectionManager,
    clock: Arc<dyn Clock>,
    redis_down_until: Arc<AtomicI64>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut epoch: Option<String> = None;
    loop {
        tick.tick().await;
        let Some(local) = local.upgrade() else { return };
        let mut conn = manager.clone();
        let fresh = uuid::Uuid::new_v4().to_string();
        let Ok(current) = EPOCH_SCRIPT.key(EPOCH_KEY).arg(fresh).invoke_async::<String>(&mut conn).await else {
            continue; // still away
        };
        redis_down_until.store(0, Ordering::Relaxed);
        let now_ms = clock.now_ms();
        let resync = epoch.as_deref() != Some(current.as_str());
        let keys = if resync { local.known_keys(now_ms) } else { local.pending_keys() };
        let mut settled = true;
        for key in keys {
            let settle = local.take(&key, now_ms);
            match invoke(&mut conn, &SETTLE_SCRIPT, &key, (u32::MAX, u32::MAX), &settle).await {
                Ok((_, m, d)) => local.heard(&key, &settle, count(m), count(d)),
                Err(_) => {
                    // Away again: keep this key's and the rest for the next tick.
                    local.untake(&key, &settle);
                    local.any_pending.store(true, Ordering::Relaxed);
                    settled = false;
                    break;
                }
            }
        }
        if settled {
            epoch = Some(current);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(per_minute: u32, per_day: u32) -> PlanInfo {
        PlanInfo { name: "t", title: "T", per_minute, per_day }
    }

    #[tokio::test]
    async fn sixty_pass_in_a_minute_then_the_window_resets() {
        let clock = Arc::new(ManualClock::at(1_700_000_000_000));
        let rl = RateLimiter::local(clock.clone());
        let p = plan(60, 5000);
        for i in 0..60 {
            let d = rl.check("tok", &p).await;
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 59 - i, "remaining counts down");
        }
        let refused = rl.check("tok", &p).await;
        assert!(!refused.allowed);
        assert!(refused.retry_after.unwrap() >= 1);
        assert!(rl.check("other", &p).await.allowed, "another token is untouched");
        clock.advance(60_000);
        assert!(rl.check("tok", &p).await.allowed, "the next minute starts afresh");
    }

    #[test]
    fn the_fallback_continues_from_the_count_redis_reported_at_its_share_of_the_rest() {
        let now = 1_700_000_010_000;
        for (replicas, seen, admits) in [(1, 50, 10), (2, 20, 20), (2, 40, 10), (3, 0, 20), (1, 60, 0)] {
            let local = Local::default();
            let s = local.take("k", now);
            local.heard("k", &s, seen, seen);
            let mut admitted = 0;
            for _ in 0..100 {
                if local.check("k", (60, 5000), replicas, now, true).allowed {
                    admitted += 1;
                }
            }
            assert_eq!(admitted, admits, "{replicas} replicas, Redis had {seen}");
            let s = local.take("k", now);
            assert_eq!((s.minute_pending, s.minute_known), (admits, seen + admits), "pending for Redis, and known");
            assert_eq!(local.take("k", now).minute_pending, 0, "taken once");
        }
    }

    #[tokio::test]
    async fn the_daily_quota_holds_across_minutes() {
        let clock = Arc::new(ManualClock::at(0));
        let rl = RateLimiter::local(clock.clone());
        let p = plan(60, 100);
        let mut allowed = 0;
        for _ in 0..10 {
            for _ in 0..60 {
                if rl.check("tok", &p).await.allowed {
                    allowed += 1;
                }
            }
            clock.advance(60_000);
        }
        assert_eq!(allowed, 100, "exactly the daily quota");
        let d = rl.check("tok", &p).await;
        assert_eq!((d.allowed, d.limit, d.reset), (false, 100, DAY), "refused until the next UTC day");
    }
}
