//! Rate limits per token and plan: a per-minute and a per-day window (fixed, aligned to the UTC
//! minute and day), exact under concurrency.
//!
//! In-process counters by default. With `REDIS_URL`, counters live in Redis and one Lua script per
//! check reads, decides and increments atomically, so several server processes share one limit.
//! When Redis is unreachable the server keeps limiting with in-process counters at its share of
//! the limit (`limit / replicas`), logs it and counts it; it never runs unlimited.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue};
use generated::support::PlanInfo;

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

/// Decides from the counts already spent in the current windows (before this request).
fn decide(plan: (u32, u32), spent: (u32, u32), now_ms: i64) -> Decision {
    let (per_minute, per_day) = plan;
    let (minute, day) = spent;
    let now = now_ms.div_euclid(1000);
    let minute_reset = now - now.rem_euclid(MINUTE) + MINUTE;
    let day_reset = now - now.rem_euclid(DAY) + DAY;
    let refuse = |limit, reset: i64| Decision {
        allowed: false,
        limit,
        remaining: 0,
        reset,
        retry_after: Some((reset - now).max(1)),
    };
    if minute >= per_minute {
        return refuse(per_minute, minute_reset);
    }
    if day >= per_day {
        return refuse(per_day, day_reset);
    }
    let minute_left = per_minute - minute - 1;
    let day_left = per_day - day - 1;
    // Report the window that will refuse first.
    if day_left < minute_left {
        Decision { allowed: true, limit: per_day, remaining: day_left, reset: day_reset, retry_after: None }
    } else {
        Decision { allowed: true, limit: per_minute, remaining: minute_left, reset: minute_reset, retry_after: None }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    minute_start: i64,
    minute: u32,
    day_start: i64,
    day: u32,
}

/// In-process counters.
#[derive(Debug, Default)]
struct Local {
    counts: Mutex<HashMap<String, Counts>>,
}

impl Local {
    fn check(&self, key: &str, plan: (u32, u32), now_ms: i64) -> Decision {
        let now = now_ms.div_euclid(1000);
        let (minute_start, day_start) = (now - now.rem_euclid(MINUTE), now - now.rem_euclid(DAY));
        let mut map = match self.counts.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Forget windows that are over (keeps memory bounded by active tokens).
        if map.len() > 100_000 {
            map.retain(|_, c| c.day_start == day_start);
        }
        let c = map.entry(key.to_string()).or_default();
        if c.minute_start != minute_start {
            c.minute_start = minute_start;
            c.minute = 0;
        }
        if c.day_start != day_start {
            c.day_start = day_start;
            c.day = 0;
        }
        let d = decide(plan, (c.minute, c.day), now_ms);
        if d.allowed {
            c.minute += 1;
            c.day += 1;
        }
        d
    }
}

/// Reads both windows, refuses or increments both, atomically.
const SCRIPT: &str = r"
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
if m >= tonumber(ARGV[1]) or d >= tonumber(ARGV[2]) then
  return {0, m, d}
end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return {1, m, d}
";

/// The limiter shared by a server's gates.
#[derive(Debug)]
pub struct RateLimiter {
    clock: Arc<dyn Clock>,
    local: Local,
    redis: Option<redis::aio::ConnectionManager>,
    /// Server processes sharing the limit, for the fallback share.
    replicas: u32,
    fallbacks: AtomicU64,
}

impl RateLimiter {
    /// In-process counters only.
    pub fn local(clock: Arc<dyn Clock>) -> Self {
        RateLimiter { clock, local: Local::default(), redis: None, replicas: 1, fallbacks: AtomicU64::new(0) }
    }

    /// Counters in Redis at `url`, shared by `replicas` server processes.
    pub async fn redis(url: &str, replicas: u32, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let client = redis::Client::open(url)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(Duration::from_millis(500)))
            .set_number_of_retries(1);
        let manager = redis::aio::ConnectionManager::new_with_config(client, config).await?;
        Ok(RateLimiter {
            clock,
            local: Local::default(),
            redis: Some(manager),
            replicas: replicas.max(1),
            fallbacks: AtomicU64::new(0),
        })
    }

    /// How many checks fell back to in-process counters because Redis failed.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// Counts one request of `key` (a token id) under `plan`.
    pub async fn check(&self, key: &str, plan: &PlanInfo) -> Decision {
        let now_ms = self.clock.now_ms();
        let limits = (plan.per_minute, plan.per_day);
        let Some(manager) = &self.redis else {
            return self.local.check(key, limits, now_ms);
        };
        let now = now_ms.div_euclid(1000);
        let (minute_start, day_start) = (now - now.rem_euclid(MINUTE), now - now.rem_euclid(DAY));
        let mut conn = manager.clone();
        let result: redis::RedisResult<(i64, i64, i64)> = redis::Script::new(SCRIPT)
            .key(format!("specwright:rl:{key}:m:{minute_start}"))
            .key(format!("specwright:rl:{key}:d:{day_start}"))
            .arg(plan.per_minute)
            .arg(plan.per_day)
            .arg(MINUTE + 5)
            .arg(DAY + 60)
            .invoke_async(&mut conn)
            .await;
        match result {
            Ok((_, m, d)) => decide(limits, (m.max(0) as u32, d.max(0) as u32), now_ms),
            Err(e) => {
                let n = self.fallbacks.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::warn!(error = %e, fallbacks = n, "Redis unreachable: limiting in process at this server's share of the limit");
                let share = |l: u32| (l / self.replicas).max(1);
                self.local.check(key, (share(plan.per_minute), share(plan.per_day)), now_ms)
            }
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
