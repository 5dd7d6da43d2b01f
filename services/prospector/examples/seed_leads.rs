//! Seeds a tenant with synthetic closed leads (won or lost, scored with the default
//! configuration) for the list and backtest benchmarks (`xtask/bench/prospector.sh`).
//!
//! `cargo run --release -p prospector --example seed_leads -- DATA_DIR TENANT COUNT`
//! (`DATABASE_URL` selects PostgreSQL, as for the server.)

#[path = "support/synthetic.rs"]
mod synthetic;

use std::time::Instant;

use chrono::{Duration, Utc};
use prospector::{engine, leads, scoring};
use prospector_api::prospector::models::LeadStatus;
use runtime::store::Store;
use synthetic::{Rng, synthetic};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, tenant, count] = args.as_slice() else {
        anyhow::bail!("usage: seed_leads DATA_DIR TENANT COUNT");
    };
    let count: usize = count.parse()?;
    let url = std::env::var("DATABASE_URL").ok();
    let store = Store::open(url.as_deref(), std::path::Path::new(dir)).await?;
    prospector::migrate(&store).await?;
    let (w, p) = scoring::defaults();
    let version = scoring::current(&store, tenant).await?.version;
    let now = Utc::now();
    let mut rng = Rng(0x5EED_0000_0000_0001 ^ count as u64);
    let start = Instant::now();
    // Oldest first, as a service finds them: an index in creation order then fills its pages as
    // it does in use (newest first, every insert lands before the last and splits a page in
    // half, which leaves such an index twice its size).
    for chunk in (0..count).rev().collect::<Vec<_>>().chunks(5_000) {
        let mut tx = store.begin().await?;
        for &i in chunk {
            // Found over the last 180 days, fetched when found.
            let found = now - Duration::seconds((i as i64 * 15_552_000) / count as i64);
            let (posting, won) = synthetic(i, &mut rng, found);
            let scored = engine::score(&posting, &w, &p, version, found);
            let status = if won { LeadStatus::Won } else { LeadStatus::Lost };
            leads::insert(&mut tx, tenant, "seed", &posting, &scored, version, found, status, found.timestamp_millis())
                .await?;
        }
        tx.commit().await?;
    }
    eprintln!("seeded {count} leads for {tenant} in {:.1} s", start.elapsed().as_secs_f64());
    // What autovacuum does shortly after a bulk load: planner statistics, and on PostgreSQL the
    // visibility map that lets counts use index-only scans.
    let analyze = match store.backend() {
        runtime::store::Backend::Postgres => "VACUUM ANALYZE leads",
        runtime::store::Backend::Sqlite => "ANALYZE",
    };
    sqlx::query(analyze).execute(store.pool()).await?;
    Ok(())
}
