//! Deterministic synthetic job postings with a won/lost outcome, shared by the benchmarks
//! (`backtest_bench`, `seed_leads`). A hidden quality follows the signals the scoring engine reads
//! (the freelancer's real skills, budget, client, competition, freshness) plus noise.

#![allow(dead_code, reason = "each example uses a different part")]

use chrono::{DateTime, Duration, Utc};
use prospector::posting::Posting;
use prospector_api::prospector::models::{Budget, BudgetKind, LeadClient};

pub const SKILLS: [&str; 20] = [
    "rust",
    "postgresql",
    "docker",
    "rest",
    "go",
    "python",
    "react",
    "typescript",
    "kubernetes",
    "aws",
    "graphql",
    "redis",
    "java",
    "php",
    "wordpress",
    "figma",
    "swift",
    "kotlin",
    "excel",
    "seo",
];
/// The skills the freelancer really has: what the hidden outcome rewards.
pub const MINE: [&str; 6] = ["rust", "postgresql", "docker", "rest", "go", "kubernetes"];

/// xorshift64*: small, fast and deterministic.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Log-uniform in [lo, hi).
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
}

/// One synthetic posting and whether it was won.
pub fn synthetic(i: usize, rng: &mut Rng, as_of: DateTime<Utc>) -> (Posting, bool) {
    let n_skills = 1 + rng.below(6) as usize;
    let mut skills: Vec<String> = Vec::with_capacity(n_skills);
    while skills.len() < n_skills {
        // Half the draws come from the freelancer's field, so matches are common.
        let s = if rng.chance(0.5) { MINE[rng.below(6) as usize] } else { SKILLS[rng.below(20) as usize] };
        if !skills.iter().any(|k| k == s) {
            skills.push(s.to_string());
        }
    }
    let budget = rng.chance(0.85).then(|| {
        let currency = if rng.chance(0.85) { "USD" } else { "EUR" }.to_string();
        if rng.chance(0.7) {
            let max = rng.log_uniform(50.0, 20_000.0);
            Budget { kind: BudgetKind::Fixed, min: rng.chance(0.5).then_some(max * 0.6), max: Some(max), currency }
        } else {
            let rate = rng.log_uniform(10.0, 150.0);
            Budget { kind: BudgetKind::Hourly, min: Some(rate), max: rng.chance(0.6).then_some(rate * 1.5), currency }
        }
    });
    let client = rng.chance(0.85).then(|| {
        let jobs = rng.below(200) as i64;
        LeadClient {
            name: None,
            country: None,
            payment_verified: rng.chance(0.75),
            jobs_posted: jobs,
            hires: (jobs as f64 * rng.unit()) as i64,
            total_spent: rng.chance(0.8).then(|| rng.log_uniform(1.0, 500_000.0)),
            rating: rng.chance(0.6).then(|| 3.0 + 2.0 * rng.unit()),
        }
    });
    let proposals_count = rng.chance(0.9).then(|| rng.below(80) as i64);
    let posted_at = rng.chance(0.95).then(|| as_of - Duration::seconds(rng.below(30 * 86_400) as i64));

    // Hidden quality from the true drivers of a win, then a logistic draw (~15% base rate).
    let fit = skills.iter().filter(|s| MINE.contains(&s.as_str())).count() as f64 / skills.len() as f64;
    let money = budget.as_ref().map_or(0.3, |b| {
        let amount = b.max.or(b.min).unwrap_or(0.0) * if b.kind == BudgetKind::Hourly { 40.0 } else { 1.0 };
        (amount / 5_000.0).min(1.0)
    });
    let trust = client.as_ref().map_or(0.3, |c| {
        let verified = if c.payment_verified { 1.0 } else { 0.0 };
        (verified + c.rating.unwrap_or(3.5) / 5.0) / 2.0
    });
    let crowd = 1.0 - proposals_count.map_or(30.0, |n| n as f64) / 80.0;
    let fresh = posted_at.map_or(0.5, |t| 1.0 - (as_of - t).num_seconds() as f64 / (30.0 * 86_400.0));
    let quality = 0.4 * fit + 0.2 * money + 0.15 * trust + 0.15 * crowd + 0.1 * fresh + 0.25 * (rng.unit() - 0.5);
    let p_win = 1.0 / (1.0 + (-9.0 * (quality - 0.72)).exp());
    let won = rng.chance(p_win);

    let posting = Posting {
        id: format!("lead-{i:08}"),
        platform: "upwork".into(),
        title: format!("Job {i}"),
        url: None,
        description: None,
        skills,
        budget,
        client,
        proposals_count,
        posted_at,
    };
    (posting, won)
}
