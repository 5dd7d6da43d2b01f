//! Rate-limit checks per second, in process and through Redis.
//!
//! `cargo run --release -p specwright-runtime --example ratelimit_bench [redis://127.0.0.1:6379]`
//! Runs 32 concurrent tasks, each checking its own token, for a fixed number of checks, and
//! prints checks/second for each backend (Redis is skipped when no URL answers).

use std::sync::Arc;
use std::time::Instant;

use runtime::ratelimit::{RateLimiter, SystemClock};

const TASKS: usize = 32;

async fn run(limiter: Arc<RateLimiter>, per_task: usize) -> f64 {
    // A plan no run can exhaust, so every check does the full work.
    static PLAN: support::PlanInfo =
        support::PlanInfo { name: "bench", title: "Bench", per_minute: u32::MAX, per_day: u32::MAX };
    let start = Instant::now();
    let handles: Vec<_> = (0..TASKS)
        .map(|t| {
            let limiter = limiter.clone();
            tokio::spawn(async move {
                let key = format!("bench-{}-{t}", std::process::id());
                for _ in 0..per_task {
                    limiter.check(&key, &PLAN).await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("task");
    }
    (TASKS * per_task) as f64 / start.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let local = Arc::new(RateLimiter::local(Arc::new(SystemClock)));
    println!("| limiter | checks | checks/s |\n|---|---|---|");
    println!("| in process | {} | {:.0} |", TASKS * 100_000, run(local, 100_000).await);
    let url = std::env::args().nth(1).unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    match RateLimiter::redis(&url, 1, Arc::new(SystemClock)).await {
        Ok(r) => {
            let r = Arc::new(r);
            let rate = run(r.clone(), 2_000).await;
            println!("| Redis ({url}, one Lua script per check) | {} | {rate:.0} |", TASKS * 2_000);
            assert_eq!(r.fallbacks(), 0, "every check went to Redis");
        }
        Err(e) => println!("| Redis | skipped: {e} | |"),
    }
    Ok(())
}
