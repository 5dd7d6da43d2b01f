//! Scoring and backtest throughput on synthetic history.
//!
//! `cargo run --release -p prospector --example backtest_bench`
//!
//! Builds deterministic synthetic postings (a seeded xorshift generator) for 100,000 and
//! 1,000,000 leads, with a won/lost outcome drawn from a hidden quality that follows the signals
//! (the freelancer's real skills, budget, client, competition, freshness, plus noise). Then times
//! (a) scoring every posting's scoring input under the current configuration (the defaults,
//! which configure no skills) and a proposed one (skills configured, other weights) with
//! `engine::Points` (the score without its explanation sentences), on one thread per core (at most
//! four) as the server does, and (b) `backtest::evaluate` of the two, and prints one table row
//! per size.

use std::time::Instant;

use chrono::{TimeZone, Utc};
use prospector::backtest::{self, Case, Point, Settings};
use prospector::engine;
use prospector::posting::Posting;
use prospector::scoring;
use prospector_api::prospector::models::SignalWeights;

#[path = "support/synthetic.rs"]
mod synthetic;

use synthetic::{MINE, Rng, synthetic};

fn main() {
    let as_of = Utc.with_ymd_and_hms(2025, 6, 1, 0, 0, 0).unwrap();
    let (current_w, current_p) = scoring::defaults();
    let proposed_w =
        SignalWeights { skill_match: 40.0, budget: 20.0, client_history: 20.0, competition: 12.0, timeline: 8.0 };
    let mut proposed_p = current_p.clone();
    proposed_p.skills = MINE.iter().map(|s| s.to_string()).collect();
    proposed_p.budget_target = 5_000.0;
    let settings = Settings {
        top_k: 25,
        tiers: 4,
        current_min_confidence: current_p.top_tier_min_confidence,
        proposed_min_confidence: proposed_p.top_tier_min_confidence,
        current_config_version: 1,
    };

    println!(
        "| N | won | scoring ms (2 configs) | wall µs/score | evaluate ms | total ms | AUC current | AUC proposed |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in [100_000usize, 1_000_000] {
        let mut rng = Rng(0x5EED_0000_0000_0001 ^ n as u64);
        let history: Vec<(Posting, bool)> = (0..n).map(|i| synthetic(i, &mut rng, as_of)).collect();

        // What a backtest reads of each stored lead: its scoring input, not the whole posting.
        let inputs: Vec<_> = history.iter().map(|(p, _)| p.scoring_input()).collect();
        // One scorer per core (at most four), as the server scores a backtest's chunks.
        let scorers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
        let start = Instant::now();
        let points: Vec<(Point, Point)> = std::thread::scope(|scope| {
            let handles: Vec<_> = inputs
                .chunks(n.div_ceil(scorers))
                .map(|part| {
                    let (current_w, current_p, proposed_w, proposed_p) =
                        (&current_w, &current_p, &proposed_w, &proposed_p);
                    scope.spawn(move || {
                        let point = |(composite, confidence): (f64, f64)| Point { composite, confidence };
                        let current = engine::Points::new(current_w, current_p);
                        let proposed = engine::Points::new(proposed_w, proposed_p);
                        part.iter()
                            .map(|p| (point(current.of(p, as_of)), point(proposed.of(p, as_of))))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("a scorer panicked")).collect()
        });
        let scoring_ms = start.elapsed().as_secs_f64() * 1e3;

        let cases: Vec<Case> = history
            .iter()
            .zip(&points)
            .map(|((p, won), (current, proposed))| Case {
                id: p.id.as_str().into(),
                won: *won,
                found_at: as_of,
                current: *current,
                proposed: *proposed,
            })
            .collect();
        // Freed after the timings: glibc consolidates millions of freed chunks at the next large
        // allocation, which would land in `evaluate` and be no part of it.
        let history = (history, inputs);

        let start = Instant::now();
        let report = backtest::evaluate(&cases, &settings);
        let evaluate_ms = start.elapsed().as_secs_f64() * 1e3;

        drop(history);
        let auc = |x: Option<f64>| x.map_or("-".to_string(), |a| format!("{a:.4}"));
        println!(
            "| {n} | {} | {scoring_ms:.0} | {:.2} | {evaluate_ms:.0} | {:.0} | {} | {} |",
            report.sample.won,
            scoring_ms * 1e3 / (2 * n) as f64,
            scoring_ms + evaluate_ms,
            auc(report.current.roc_auc),
            auc(report.proposed.roc_auc),
        );
        if n == 100_000 {
            let rates = |m: &prospector_api::prospector::models::BacktestMetrics| {
                m.win_rate_by_tier.iter().map(|t| format!("{:.3}", t.win_rate.unwrap_or(0.0))).collect::<Vec<_>>()
            };
            eprintln!(
                "  n={n}: base win rate {:?}; tier win rates current {:?}, proposed {:?}; spearman {:?}; warnings {:?}",
                report.sample.base_win_rate,
                rates(&report.current),
                rates(&report.proposed),
                report.ranking_change.spearman,
                report.warnings
            );
        }
    }
}
