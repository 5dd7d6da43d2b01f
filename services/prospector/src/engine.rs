//! The scoring engine: turns a posting and a scoring configuration into a lead's score and its
//! full, reproducible breakdown. Pure and deterministic: no I/O, no clock (the caller passes the
//! moment the posting was fetched), the same input always gives the same output.
//!
//! Five signals, each 0 (unfavourable) to 1 (favourable) and either available (the posting has
//! the data) or not:
//!
//! - **skill_match**: share of the job's skills that match a configured skill (case-insensitive,
//!   trimmed). Available when the job lists skills and skills are configured.
//! - **budget**: the amount (the maximum, else the minimum; hourly rates × 40 hours) placed on
//!   the ramp from `budget_floor` (0) to `budget_target` (1). Available when the posting states
//!   an amount in the configured currency; no exchange rate is guessed.
//! - **client_history**: mean of the client facts the platform shows: payment verified (1/0),
//!   hire rate `min(1, hires / jobs_posted)` (when the client posted jobs), spend
//!   `min(1, log10(1 + total_spent) / 5)` (so 100,000 USD counts fully) and `rating / 5`.
//!   Available when the platform shows the client.
//! - **competition**: `max(0, 1 − proposals / max_competition)`. Available when the proposal
//!   count is known.
//! - **timeline**: `clamp(1 − age_days / stale_after_days, 0, 1)`, the age measured at `as_of`
//!   (a posting dated after `as_of` counts as brand new). Available when the posting date is
//!   known.
//!
//! With `W_avail` the weights of the available signals and `W_total` all weights:
//! `composite = 100 × Σ(w·v) / W_avail` (0 when `W_avail` is 0), `contribution = 100 × w·v /
//! W_avail`, `coverage = W_avail / W_total`, `evidence = 0.5 + 0.5 × n / (n + k)` (n the
//! client's jobs, k the evidence prior; 1 when k is 0, 0.5 without a client), and
//! `confidence = coverage × evidence`.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use prospector_api::prospector::models::{
    self, BudgetKind, LeadClient, ScoreBreakdown, ScoreSignals, ScoringParameters, SignalBreakdown, SignalDetail,
    SignalWeights,
};

use crate::posting::{Posting, ScoringInput};

/// Hours a week an hourly rate is multiplied by to compare it with the budget floor and target.
pub const HOURS_PER_BUDGET: f64 = 40.0;
/// Decades of spend (log10 of USD) that make the spend component 1: 10^5 = 100,000 USD.
pub const SPEND_DECADES: f64 = 5.0;
/// Decimals of the composite score.
pub const COMPOSITE_DECIMALS: i32 = 2;
/// Decimals of every other reported fraction (signal values, contributions, coverage, evidence,
/// confidence) and of backtest metrics.
pub const FRACTION_DECIMALS: i32 = 4;

/// A lead's score and the derivation behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub score: models::LeadScore,
    pub breakdown: models::ScoreBreakdown,
}

/// Rounds `x` to `decimals` places (half away from zero); a non-finite value becomes 0. The one
/// rounding helper of the engine and the backtest.
pub fn round_to(x: f64, decimals: i32) -> f64 {
    if !x.is_finite() {
        return 0.0;
    }
    let scale = 10f64.powi(decimals);
    let r = (x * scale).round() / scale;
    if r.is_finite() { r } else { x }
}

/// `x` kept within `lo..=hi` (NaN reads as `lo`) and rounded to `decimals`.
fn bounded(x: f64, lo: f64, hi: f64, decimals: i32) -> f64 {
    let x = if x.is_nan() { lo } else { x.clamp(lo, hi) };
    round_to(x, decimals).clamp(lo, hi)
}

/// A weight as the engine uses it: negative or non-finite weights (an invalid configuration)
/// count as 0.
fn usable_weight(w: f64) -> f64 {
    if w.is_finite() && w > 0.0 { w } else { 0.0 }
}

/// One signal before weighting.
struct Signal {
    available: bool,
    value: f64,
    explanation: Cow<'static, str>,
}

impl Signal {
    fn available(value: f64, explanation: Cow<'static, str>) -> Signal {
        let value = if value.is_nan() { 0.0 } else { value.clamp(0.0, 1.0) };
        Signal { available: true, value, explanation }
    }

    fn unavailable(explanation: impl Into<Cow<'static, str>>) -> Signal {
        Signal { available: false, value: 0.0, explanation: explanation.into() }
    }
}

/// An explanation sentence, formatted only when `explain` (a backtest reads none of them).
macro_rules! say {
    ($explain:expr, $($fmt:tt)*) => {
        if $explain { Cow::Owned(format!($($fmt)*)) } else { Cow::Borrowed("") }
    };
}

/// Scores `posting` under the configuration (`weights`, `params`, stored as `config_version`).
///
/// `as_of`: the moment the posting was fetched; the timeline signal measures the posting's age at
/// that moment. `breakdown.scored_at` is `as_of` (callers may overwrite it).
///
/// Never panics: an invalid configuration (all weights zero, `budget_floor` above
/// `budget_target`, non-positive `max_competition` or `stale_after_days`, negative
/// `evidence_prior`) still gives finite values within their bounds (composite 0 when no weight
/// applies).
pub fn score(
    posting: &Posting,
    weights: &SignalWeights,
    params: &ScoringParameters,
    config_version: i64,
    as_of: DateTime<Utc>,
) -> Scored {
    score_with(&posting.scoring_input(), weights, params, config_version, as_of, true)
}

/// The composite score and confidence of [`score`], without the explanation sentences and the
/// breakdown: what a backtest needs of each of up to millions of historical leads (the sentences
/// and the breakdown are most of the cost of a score). The same arithmetic ([`Weighted`]), so the
/// same figures.
pub fn point(
    input: &ScoringInput,
    weights: &SignalWeights,
    params: &ScoringParameters,
    as_of: DateTime<Utc>,
) -> (f64, f64) {
    Points::new(weights, params).of(input, as_of)
}

/// [`point`] under one configuration for many inputs: what depends on the configuration alone
/// (its skills, trimmed) is worked out once.
pub struct Points<'a> {
    weights: &'a SignalWeights,
    params: &'a ScoringParameters,
    mine: Vec<&'a str>,
}

impl<'a> Points<'a> {
    pub fn new(weights: &'a SignalWeights, params: &'a ScoringParameters) -> Self {
        Points { weights, params, mine: configured_skills(params) }
    }

    /// The composite and confidence of `input` as of `as_of`.
    pub fn of(&self, input: &ScoringInput, as_of: DateTime<Utc>) -> (f64, f64) {
        let weighted = Weighted::of(self.weights, &signals(input, self.params, &self.mine, as_of, false));
        (weighted.composite(), weighted.confidence(evidence(input.client.as_ref(), self.params.evidence_prior)))
    }
}

/// The configured skills a job's are matched against: trimmed, the empty ones left out.
fn configured_skills(params: &ScoringParameters) -> Vec<&str> {
    params.skills.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect()
}

/// The five signals of `posting`, in the order of [`SignalWeights`]'s fields (`mine`: the
/// configured skills, [`configured_skills`]).
fn signals(
    posting: &ScoringInput,
    params: &ScoringParameters,
    mine: &[&str],
    as_of: DateTime<Utc>,
    explain: bool,
) -> [Signal; 5] {
    [
        skill_match(posting, mine, explain),
        budget(posting, params, explain),
        client_history(posting, explain),
        competition(posting, params, explain),
        timeline(posting, params, as_of, explain),
    ]
}

/// The weights of a score and the sums its figures are derived from.
struct Weighted {
    /// The usable weights, in the order of the signals.
    w: [f64; 5],
    /// `W_total`: every weight.
    total: f64,
    /// `W_avail`: the weights of the available signals.
    available: f64,
    /// `Σ(w·v)` over the available signals.
    sum: f64,
}

impl Weighted {
    fn of(weights: &SignalWeights, signals: &[Signal; 5]) -> Weighted {
        let w = [weights.skill_match, weights.budget, weights.client_history, weights.competition, weights.timeline]
            .map(usable_weight);
        let total: f64 = w.iter().sum();
        let available: f64 = w.iter().zip(signals).filter(|(_, s)| s.available).map(|(w, _)| *w).sum();
        let sum: f64 = w.iter().zip(signals).filter(|(_, s)| s.available).map(|(w, s)| w * s.value).sum();
        Weighted { w, total, available, sum }
    }

    /// `x` as a share of the available weight, in percent (0 when no weight is available).
    fn share(&self, x: f64) -> f64 {
        if self.available > 0.0 { 100.0 * x / self.available } else { 0.0 }
    }

    fn composite(&self) -> f64 {
        bounded(self.share(self.sum), 0.0, 100.0, COMPOSITE_DECIMALS)
    }

    fn coverage(&self) -> f64 {
        if self.total > 0.0 { self.available / self.total } else { 0.0 }
    }

    fn confidence(&self, evidence: f64) -> f64 {
        bounded(self.coverage() * evidence, 0.0, 1.0, FRACTION_DECIMALS)
    }
}

fn score_with(
    posting: &ScoringInput,
    weights: &SignalWeights,
    params: &ScoringParameters,
    config_version: i64,
    as_of: DateTime<Utc>,
    explain: bool,
) -> Scored {
    let signals = signals(posting, params, &configured_skills(params), as_of, explain);
    let weighted = Weighted::of(weights, &signals);
    let composite = weighted.composite();
    let coverage = weighted.coverage();
    let evidence = evidence(posting.client.as_ref(), params.evidence_prior);
    let confidence = weighted.confidence(evidence);

    let [skill_match, budget, client_history, competition, timeline] = {
        let mut i = 0;
        signals.map(|s| {
            let weight = weighted.w[i];
            i += 1;
            let contribution = if s.available { weighted.share(weight * s.value) } else { 0.0 };
            SignalDetail {
                value: bounded(s.value, 0.0, 1.0, FRACTION_DECIMALS),
                available: s.available,
                weight,
                contribution: bounded(contribution, 0.0, 100.0, FRACTION_DECIMALS),
                explanation: s.explanation.into_owned(),
            }
        })
    };
    let signals = ScoreSignals {
        skill_match: skill_match.value,
        budget: budget.value,
        client_history: client_history.value,
        competition: competition.value,
        timeline: timeline.value,
    };
    Scored {
        score: models::LeadScore { composite, confidence, signals },
        breakdown: ScoreBreakdown {
            config_version,
            scored_at: as_of,
            coverage: bounded(coverage, 0.0, 1.0, FRACTION_DECIMALS),
            evidence: bounded(evidence, 0.5, 1.0, FRACTION_DECIMALS),
            signals: SignalBreakdown { skill_match, budget, client_history, competition, timeline },
        },
    }
}

/// Strength of the client's track record, 0.5 to 1: 0.5 without a client; else
/// `0.5 + 0.5 × n / (n + k)` for n jobs posted (negative counts read as 0) and k the evidence
/// prior; 1 when k is 0 (a negative k, invalid, reads as 0).
pub fn evidence(client: Option<&LeadClient>, evidence_prior: i64) -> f64 {
    let Some(client) = client else { return 0.5 };
    if evidence_prior <= 0 {
        return 1.0;
    }
    let n = client.jobs_posted.max(0) as f64;
    0.5 + 0.5 * n / (n + evidence_prior as f64)
}

/// A number for an explanation: at most two decimals, no trailing zeros.
fn num(x: f64) -> String {
    format!("{}", round_to(x, 2))
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// Case-insensitive equality of two trimmed skills, without allocating for ASCII. Equal under
/// ASCII case folding implies equal lowercased (other bytes must be identical), and most pairs
/// differ in length, which `eq_ignore_ascii_case` checks first.
fn same_skill(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b) || (!(a.is_ascii() && b.is_ascii()) && a.to_lowercase() == b.to_lowercase())
}

fn skill_match(posting: &ScoringInput, mine: &[&str], explain: bool) -> Signal {
    let asked = || posting.skills.iter().map(|s| s.trim()).filter(|s| !s.is_empty());
    let n = asked().count();
    match (n == 0, mine.is_empty()) {
        (true, true) => return Signal::unavailable("The job lists no skills and no skills are configured."),
        (true, false) => return Signal::unavailable("The job lists no skills to match."),
        (false, true) => {
            return Signal::unavailable(say!(
                explain,
                "No skills are configured to match the job's {n} {}.",
                plural(n, "skill", "skills")
            ));
        }
        (false, false) => {}
    }
    let matched = || asked().filter(|a| mine.iter().any(|m| same_skill(a, m)));
    let hits = matched().count();
    let explanation = if hits == 0 {
        say!(explain, "0 of {n} required {} {}.", plural(n, "skill", "skills"), plural(n, "matches", "match"))
    } else {
        say!(
            explain,
            "{hits} of {n} required {} {} ({}).",
            plural(n, "skill", "skills"),
            plural(n, "matches", "match"),
            matched().collect::<Vec<_>>().join(", ")
        )
    };
    Signal::available(hits as f64 / n as f64, explanation)
}

/// 0 at or below `floor`, 1 at or above `target`, linear between. When `floor >= target` (equal,
/// or an invalid configuration) the target decides: 1 at or above it, else 0.
fn ramp(x: f64, floor: f64, target: f64) -> f64 {
    if x >= target {
        1.0
    } else if x <= floor || floor >= target {
        0.0
    } else {
        (x - floor) / (target - floor)
    }
}

fn budget(posting: &ScoringInput, params: &ScoringParameters, explain: bool) -> Signal {
    let Some(b) = &posting.budget else { return Signal::unavailable("The job states no budget.") };
    if !b.currency.trim().eq_ignore_ascii_case(params.currency.trim()) {
        return Signal::unavailable(say!(
            explain,
            "The budget is in {}, not {}; no exchange rate is guessed, so the budget signal is left out.",
            b.currency,
            params.currency
        ));
    }
    let finite = |x: Option<f64>| x.filter(|v| v.is_finite());
    let Some(amount) = finite(b.max).or(finite(b.min)) else {
        return Signal::unavailable("The budget states no amount.");
    };
    let (floor, target) = (params.budget_floor, params.budget_target);
    let total = match b.kind {
        BudgetKind::Fixed => amount,
        BudgetKind::Hourly => amount * HOURS_PER_BUDGET,
    };
    let value = ramp(total, floor, target);
    if !explain {
        return Signal::available(value, Cow::Borrowed(""));
    }
    let stated = match b.kind {
        BudgetKind::Fixed => format!("Fixed budget of {} {}", num(amount), b.currency),
        BudgetKind::Hourly => {
            format!("Hourly rate of {} {} × 40 hours = {} {}", num(amount), b.currency, num(total), b.currency)
        }
    };
    let place = if total >= target {
        format!("at or above the target of {}", num(target))
    } else if value == 0.0 {
        format!("at or below the floor of {}", num(floor))
    } else {
        format!("between the floor of {} and the target of {}", num(floor), num(target))
    };
    Signal::available(value, Cow::Owned(format!("{stated}, {place}.")))
}

fn client_history(posting: &ScoringInput, explain: bool) -> Signal {
    let Some(c) = &posting.client else { return Signal::unavailable("The platform shows nothing about the client.") };
    // Up to four facts, each a value and (when explaining) its words; no allocation otherwise.
    let mut parts: [(f64, Cow<'static, str>); 4] = Default::default();
    let mut n = 0;
    let mut fact = |value: f64, words: Cow<'static, str>| {
        parts[n] = (value, words);
        n += 1;
    };
    fact(
        if c.payment_verified { 1.0 } else { 0.0 },
        Cow::Borrowed(if c.payment_verified { "payment verified" } else { "payment not verified" }),
    );
    if c.jobs_posted > 0 {
        let hires = c.hires.max(0);
        let rate = (hires as f64 / c.jobs_posted as f64).min(1.0);
        fact(rate, say!(explain, "{hires} hires from {} jobs", c.jobs_posted));
    }
    if let Some(spent) = c.total_spent.filter(|s| s.is_finite()) {
        let spent = spent.max(0.0);
        fact(((1.0 + spent).log10() / SPEND_DECADES).min(1.0), say!(explain, "{} USD spent", num(spent)));
    }
    if let Some(rating) = c.rating.filter(|r| r.is_finite()) {
        fact((rating / 5.0).clamp(0.0, 1.0), say!(explain, "rated {} of 5", num(rating)));
    }
    let parts = &parts[..n];
    let value = parts.iter().map(|(v, _)| v).sum::<f64>() / n as f64;
    let explanation = if explain {
        let facts: Vec<&str> = parts.iter().map(|(_, s)| s.as_ref()).collect();
        Cow::Owned(format!("Mean of {n} client {}: {}.", plural(n, "fact", "facts"), facts.join(", ")))
    } else {
        Cow::Borrowed("")
    };
    Signal::available(value, explanation)
}

fn competition(posting: &ScoringInput, params: &ScoringParameters, explain: bool) -> Signal {
    let Some(count) = posting.proposals_count else {
        return Signal::unavailable("The number of proposals already sent is unknown.");
    };
    let max = params.max_competition;
    let value = if max <= 0 || count >= max { 0.0 } else { 1.0 - count.max(0) as f64 / max as f64 };
    Signal::available(
        value,
        say!(
            explain,
            "{count} {} already sent; the signal reaches 0 at {max}.",
            plural(count.unsigned_abs() as usize, "proposal", "proposals")
        ),
    )
}

fn timeline(posting: &ScoringInput, params: &ScoringParameters, as_of: DateTime<Utc>, explain: bool) -> Signal {
    let Some(posted) = posting.posted_at else { return Signal::unavailable("The posting date is unknown.") };
    let age = as_of.signed_duration_since(posted);
    let age_days = (age.num_milliseconds() as f64 / 86_400_000.0).max(0.0);
    let stale = params.stale_after_days;
    let value = if stale <= 0 || age_days >= stale as f64 { 0.0 } else { 1.0 - age_days / stale as f64 };
    if !explain {
        return Signal::available(value, Cow::Borrowed(""));
    }
    let when = if age.num_milliseconds() < 0 {
        "Dated after it was fetched, so counted as just posted".to_string()
    } else {
        let days = num(age_days);
        format!("Posted {days} {} before it was fetched", if days == "1" { "day" } else { "days" })
    };
    Signal::available(value, Cow::Owned(format!("{when}; the signal reaches 0 at {stale} days.")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::defaults;
    use chrono::{Duration, TimeZone};
    use proptest::prelude::*;
    use prospector_api::prospector::models::Budget;

    fn as_of() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).unwrap()
    }

    fn config() -> (SignalWeights, ScoringParameters) {
        let (w, mut p) = defaults();
        p.skills = ["rust", "postgresql", "docker", "rest", "go"].map(String::from).to_vec();
        (w, p)
    }

    fn client(verified: bool, jobs: i64, hires: i64, spent: Option<f64>, rating: Option<f64>) -> LeadClient {
        LeadClient {
            name: None,
            country: None,
            payment_verified: verified,
            jobs_posted: jobs,
            hires,
            total_spent: spent,
            rating,
        }
    }

    fn fixed(min: Option<f64>, max: Option<f64>, currency: &str) -> Budget {
        Budget { kind: BudgetKind::Fixed, min, max, currency: currency.into() }
    }

    /// The hand-computed posting (see `hand_computed_example`).
    fn example() -> Posting {
        Posting {
            id: "job-1".into(),
            platform: "upwork".into(),
            title: "Rust backend".into(),
            url: None,
            description: None,
            skills: ["Rust", " PostgreSQL ", "docker", "REST", "kubernetes"].map(String::from).to_vec(),
            budget: Some(fixed(Some(1000.0), Some(1600.0), "USD")),
            client: Some(client(true, 10, 5, Some(9999.0), Some(4.5))),
            proposals_count: Some(10),
            posted_at: Some(as_of() - Duration::days(7)),
        }
    }

    fn run(p: &Posting) -> Scored {
        let (w, params) = config();
        score(p, &w, &params, 3, as_of())
    }

    fn contributions(s: &Scored) -> f64 {
        let b = &s.breakdown.signals;
        [&b.skill_match, &b.budget, &b.client_history, &b.competition, &b.timeline].iter().map(|d| d.contribution).sum()
    }

    fn details(s: &Scored) -> [&SignalDetail; 5] {
        let b = &s.breakdown.signals;
        [&b.skill_match, &b.budget, &b.client_history, &b.competition, &b.timeline]
    }

    #[test]
    fn hand_computed_example() {
        // skill_match: Rust, PostgreSQL, docker, REST match (case-insensitive, trimmed); kubernetes
        //   does not: 4 / 5 = 0.8.
        // budget: max 1600 USD (fixed) on the ramp 200 → 3000: (1600 − 200) / 2800 = 0.5.
        // client_history: verified 1; hire rate 5 / 10 = 0.5; spend log10(1 + 9999) / 5 = 4 / 5
        //   = 0.8; rating 4.5 / 5 = 0.9; mean (1 + 0.5 + 0.8 + 0.9) / 4 = 0.8.
        // competition: 1 − 10 / 50 = 0.8.
        // timeline: 7 days old, stale after 14: 1 − 7 / 14 = 0.5.
        // Weights 30, 25, 20, 15, 10 (sum 100, all available):
        //   Σ w·v = 24 + 12.5 + 16 + 12 + 5 = 69.5 → composite 69.5; contributions 24, 12.5, 16,
        //   12, 5; coverage 100 / 100 = 1.
        // evidence: n = 10, k = 5: 0.5 + 0.5 × 10 / 15 = 0.8333…; confidence 1 × 0.8333 = 0.8333.
        let s = run(&example());
        assert_eq!(s.score.composite, 69.5);
        assert_eq!(s.score.confidence, 0.8333);
        assert_eq!(
            s.score.signals,
            ScoreSignals { skill_match: 0.8, budget: 0.5, client_history: 0.8, competition: 0.8, timeline: 0.5 }
        );
        let got: Vec<(f64, f64)> = details(&s).iter().map(|d| (d.weight, d.contribution)).collect();
        assert_eq!(got, vec![(30.0, 24.0), (25.0, 12.5), (20.0, 16.0), (15.0, 12.0), (10.0, 5.0)]);
        assert!(details(&s).iter().all(|d| d.available));
        assert_eq!(s.breakdown.coverage, 1.0);
        assert_eq!(s.breakdown.evidence, 0.8333);
        assert_eq!(s.breakdown.config_version, 3);
        assert_eq!(s.breakdown.scored_at, as_of());
        assert_eq!(
            s.breakdown.signals.skill_match.explanation,
            "4 of 5 required skills match (Rust, PostgreSQL, docker, REST)."
        );
        assert_eq!(
            s.breakdown.signals.budget.explanation,
            "Fixed budget of 1600 USD, between the floor of 200 and the target of 3000."
        );
        assert_eq!(
            s.breakdown.signals.client_history.explanation,
            "Mean of 4 client facts: payment verified, 5 hires from 10 jobs, 9999 USD spent, rated 4.5 of 5."
        );
        assert_eq!(
            s.breakdown.signals.competition.explanation,
            "10 proposals already sent; the signal reaches 0 at 50."
        );
        assert_eq!(
            s.breakdown.signals.timeline.explanation,
            "Posted 7 days before it was fetched; the signal reaches 0 at 14 days."
        );
    }

    #[test]
    fn missing_client_lowers_coverage_evidence_and_composite_by_hand() {
        // Without the client: W_avail = 80, Σ w·v = 24 + 12.5 + 12 + 5 = 53.5, composite
        // 100 × 53.5 / 80 = 66.875 → 66.88; coverage 0.8; evidence 0.5; confidence 0.4.
        let s = run(&Posting { client: None, ..example() });
        assert_eq!(s.score.composite, 66.88);
        assert_eq!(s.breakdown.coverage, 0.8);
        assert_eq!(s.breakdown.evidence, 0.5);
        assert_eq!(s.score.confidence, 0.4);
        let c = &s.breakdown.signals.client_history;
        assert!(!c.available);
        assert_eq!((c.value, c.weight, c.contribution), (0.0, 20.0, 0.0));
        assert_eq!(s.breakdown.signals.skill_match.contribution, 30.0);
    }

    /// A posting on which every signal is 1: leaving any one out keeps the composite at 100 but
    /// lowers coverage and confidence.
    fn perfect() -> Posting {
        Posting {
            skills: vec!["rust".into()],
            budget: Some(fixed(None, Some(5000.0), "USD")),
            client: Some(client(true, 10, 10, Some(1e6), Some(5.0))),
            proposals_count: Some(0),
            posted_at: Some(as_of()),
            ..example()
        }
    }

    #[test]
    fn each_unavailable_signal_lowers_coverage_and_confidence_not_the_composite() {
        let full = run(&perfect());
        assert_eq!((full.score.composite, full.breakdown.coverage, full.score.confidence), (100.0, 1.0, 0.8333));
        let (weights, _) = config();
        let cases: [(usize, f64, Posting); 5] = [
            (0, weights.skill_match, Posting { skills: vec![], ..perfect() }),
            (1, weights.budget, Posting { budget: None, ..perfect() }),
            // Without a client the evidence falls to 0.5 too.
            (2, weights.client_history, Posting { client: None, ..perfect() }),
            (3, weights.competition, Posting { proposals_count: None, ..perfect() }),
            (4, weights.timeline, Posting { posted_at: None, ..perfect() }),
        ];
        for (i, w, p) in cases {
            let s = run(&p);
            let d = details(&s)[i];
            assert!(!d.available, "signal {i}");
            assert_eq!((d.value, d.contribution, d.weight), (0.0, 0.0, w), "signal {i}");
            assert!(!d.explanation.is_empty());
            assert_eq!(s.score.composite, 100.0, "signal {i}");
            assert_eq!(s.breakdown.coverage, round_to((100.0 - w) / 100.0, 4), "signal {i}");
            assert!(s.score.confidence < full.score.confidence, "signal {i}");
            assert!((contributions(&s) - s.score.composite).abs() <= 0.01);
        }
        // No skills configured leaves skill_match out just like a job without skills.
        let (w, mut p) = config();
        p.skills.clear();
        let s = score(&perfect(), &w, &p, 1, as_of());
        assert!(!s.breakdown.signals.skill_match.available);
        assert_eq!(s.breakdown.coverage, 0.7);
        assert!(s.breakdown.signals.skill_match.explanation.contains("No skills are configured"));
    }

    #[test]
    fn nothing_available_scores_zero() {
        let p =
            Posting { skills: vec![], budget: None, client: None, proposals_count: None, posted_at: None, ..example() };
        let s = run(&p);
        assert_eq!((s.score.composite, s.score.confidence, s.breakdown.coverage), (0.0, 0.0, 0.0));
        assert_eq!(s.breakdown.evidence, 0.5);
    }

    #[test]
    fn hourly_budget_is_rate_times_40() {
        // 50 USD/h × 40 = 2000 → (2000 − 200) / 2800 = 0.642857… → 0.6429.
        let budget = Budget { kind: BudgetKind::Hourly, min: Some(30.0), max: Some(50.0), currency: "USD".into() };
        let s = run(&Posting { budget: Some(budget), ..example() });
        assert_eq!(s.score.signals.budget, 0.6429);
        assert_eq!(
            s.breakdown.signals.budget.explanation,
            "Hourly rate of 50 USD × 40 hours = 2000 USD, between the floor of 200 and the target of 3000."
        );
        // 80 USD/h × 40 = 3200 is above the target.
        let budget = Budget { kind: BudgetKind::Hourly, min: Some(80.0), max: None, currency: "USD".into() };
        assert_eq!(run(&Posting { budget: Some(budget), ..example() }).score.signals.budget, 1.0);
    }

    #[test]
    fn budget_ramp_edges() {
        let value = |b: Budget| run(&Posting { budget: Some(b), ..example() }).breakdown.signals.budget;
        // The maximum decides; the minimum only when there is no maximum.
        assert_eq!(value(fixed(Some(100.0), Some(3000.0), "USD")).value, 1.0);
        assert_eq!(value(fixed(Some(1600.0), None, "USD")).value, 0.5);
        assert_eq!(value(fixed(Some(200.0), None, "USD")).value, 0.0);
        assert_eq!(value(fixed(Some(10.0), None, "USD")).value, 0.0);
        assert!(value(fixed(Some(10.0), None, "USD")).explanation.contains("at or below the floor of 200"));
        let none = value(fixed(None, None, "USD"));
        assert!(!none.available);
        assert_eq!(none.explanation, "The budget states no amount.");
        // floor == target: a step at the target.
        let (w, mut p) = config();
        p.budget_floor = 1000.0;
        p.budget_target = 1000.0;
        let at = |x: f64| {
            score(&Posting { budget: Some(fixed(Some(x), None, "USD")), ..example() }, &w, &p, 1, as_of())
                .score
                .signals
                .budget
        };
        assert_eq!((at(999.99), at(1000.0), at(1000.01)), (0.0, 1.0, 1.0));
    }

    #[test]
    fn currency_mismatch_leaves_budget_out() {
        let s = run(&Posting { budget: Some(fixed(Some(5000.0), Some(9000.0), "EUR")), ..example() });
        let b = &s.breakdown.signals.budget;
        assert!(!b.available);
        assert_eq!((b.value, b.contribution, b.weight), (0.0, 0.0, 25.0));
        assert!(b.explanation.contains("EUR, not USD"), "{}", b.explanation);
        assert!(b.explanation.contains("no exchange rate is guessed"), "{}", b.explanation);
        assert_eq!(s.breakdown.coverage, 0.75);
        // Without budget: Σ w·v = 24 + 16 + 12 + 5 = 57 over 75 → 76.
        assert_eq!(s.score.composite, 76.0);
        let no_budget = run(&Posting { budget: None, ..example() });
        assert_eq!(no_budget.score, s.score);
    }

    #[test]
    fn contributions_sum_to_the_composite() {
        let thirds = Posting {
            skills: ["rust", "elm", "zig"].map(String::from).to_vec(),
            budget: Some(fixed(Some(1133.33), None, "USD")),
            proposals_count: Some(17),
            posted_at: Some(as_of() - Duration::hours(77)),
            ..example()
        };
        for p in [example(), perfect(), thirds, Posting { client: None, ..example() }] {
            let s = run(&p);
            assert!((contributions(&s) - s.score.composite).abs() <= 0.01, "{s:?}");
        }
    }

    #[test]
    fn evidence_formula() {
        let with_jobs = |n: i64| client(true, n, 0, None, None);
        assert_eq!(evidence(None, 5), 0.5);
        assert_eq!(evidence(None, 0), 0.5);
        assert_eq!(evidence(Some(&with_jobs(0)), 5), 0.5);
        assert_eq!(evidence(Some(&with_jobs(5)), 5), 0.75);
        assert_eq!(evidence(Some(&with_jobs(15)), 5), 0.875);
        assert_eq!(evidence(Some(&with_jobs(0)), 0), 1.0);
        assert_eq!(evidence(Some(&with_jobs(3)), 0), 1.0);
        assert_eq!(evidence(Some(&with_jobs(3)), -4), 1.0);
        // Through score: k = 0 makes the confidence equal the coverage.
        let (w, mut p) = config();
        p.evidence_prior = 0;
        let s = score(&example(), &w, &p, 1, as_of());
        assert_eq!((s.breakdown.evidence, s.score.confidence), (1.0, 1.0));
    }

    #[test]
    fn client_components_present_only_when_shown() {
        let value = |c: LeadClient| run(&Posting { client: Some(c), ..example() }).breakdown.signals.client_history;
        // Only verification: 0.
        let v = value(client(false, 0, 0, None, None));
        assert_eq!(v.value, 0.0);
        assert_eq!(v.explanation, "Mean of 1 client fact: payment not verified.");
        // Verified, more hires than jobs (capped at 1), 100,000 USD spent: (1 + 1 + 1) / 3.
        assert_eq!(value(client(true, 2, 5, Some(99_999.0), None)).value, 1.0);
        // Unverified, rating 2.5: (0 + 0.5) / 2.
        assert_eq!(value(client(false, 0, 0, None, Some(2.5))).value, 0.25);
    }

    #[test]
    fn competition_and_timeline_edges() {
        let s = |p: Posting| run(&p).score.signals;
        assert_eq!(s(Posting { proposals_count: Some(0), ..example() }).competition, 1.0);
        assert_eq!(s(Posting { proposals_count: Some(50), ..example() }).competition, 0.0);
        assert_eq!(s(Posting { proposals_count: Some(80), ..example() }).competition, 0.0);
        let future = s(Posting { posted_at: Some(as_of() + Duration::days(2)), ..example() });
        assert_eq!(future.timeline, 1.0);
        assert_eq!(s(Posting { posted_at: Some(as_of() - Duration::days(14)), ..example() }).timeline, 0.0);
        assert_eq!(s(Posting { posted_at: Some(as_of() - Duration::days(400)), ..example() }).timeline, 0.0);
        // 36 hours = 1.5 days: 1 − 1.5 / 14 = 0.892857… → 0.8929.
        assert_eq!(s(Posting { posted_at: Some(as_of() - Duration::hours(36)), ..example() }).timeline, 0.8929);
    }

    #[test]
    fn invalid_configurations_never_panic() {
        let zero =
            SignalWeights { skill_match: 0.0, budget: 0.0, client_history: 0.0, competition: 0.0, timeline: 0.0 };
        let (_, p) = config();
        let s = score(&example(), &zero, &p, 1, as_of());
        assert_eq!((s.score.composite, s.score.confidence, s.breakdown.coverage), (0.0, 0.0, 0.0));
        assert!(details(&s).iter().all(|d| d.contribution == 0.0 && d.weight == 0.0));

        let odd = SignalWeights { skill_match: f64::NAN, budget: -5.0, client_history: f64::INFINITY, ..zero };
        let bad = ScoringParameters {
            budget_floor: 5000.0,
            budget_target: 100.0,
            max_competition: 0,
            stale_after_days: -3,
            evidence_prior: -1,
            ..p
        };
        let weird = Posting {
            budget: Some(fixed(Some(f64::NAN), Some(-4.0), "USD")),
            client: Some(client(true, -3, -9, Some(f64::NEG_INFINITY), Some(f64::NAN))),
            proposals_count: Some(-2),
            ..example()
        };
        for w in [zero, odd] {
            let s = score(&weird, &w, &bad, 1, as_of());
            let json = serde_json::to_string(&(&s.score, &s.breakdown)).unwrap();
            assert!(!json.contains("null"), "{json}");
            assert!((0.0..=100.0).contains(&s.score.composite));
            assert!((0.0..=1.0).contains(&s.score.confidence));
        }
    }

    // ----- properties -----

    const VOCABULARY: [&str; 8] = ["rust", "Go", " python", "docker ", "PostgreSQL", "k8s", "React", "élixir"];

    fn skill() -> impl Strategy<Value = String> {
        prop::sample::select(VOCABULARY.to_vec()).prop_map(String::from)
    }

    fn currency() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["USD", "EUR"]).prop_map(String::from)
    }

    fn budget_strategy() -> impl Strategy<Value = Budget> {
        (
            prop::sample::select(vec![BudgetKind::Fixed, BudgetKind::Hourly]),
            prop::option::of(0.0..20_000.0f64),
            prop::option::of(0.0..20_000.0f64),
            currency(),
        )
            .prop_map(|(kind, min, max, currency)| Budget { kind, min, max, currency })
    }

    fn client_strategy() -> impl Strategy<Value = LeadClient> {
        (any::<bool>(), 0..200i64, 0..200i64, prop::option::of(0.0..2e6f64), prop::option::of(0.0..=5.0f64))
            .prop_map(|(v, jobs, hires, spent, rating)| client(v, jobs, hires, spent, rating))
    }

    /// Age at `as_of()` in seconds; negative ages are postings dated in the future.
    fn posting_strategy() -> impl Strategy<Value = Posting> {
        (
            prop::collection::vec(skill(), 0..6),
            prop::option::of(budget_strategy()),
            prop::option::of(client_strategy()),
            prop::option::of(0..300i64),
            prop::option::of(-86_400i64..60 * 86_400),
        )
            .prop_map(|(skills, budget, client, proposals_count, age)| Posting {
                skills,
                budget,
                client,
                proposals_count,
                posted_at: age.map(|s| as_of() - Duration::seconds(s)),
                ..example()
            })
    }

    /// A configuration `scoring::check` accepts, within the schema's bounds.
    fn config_strategy() -> impl Strategy<Value = (SignalWeights, ScoringParameters)> {
        let weight = || prop_oneof![Just(0.0), 0.0..=100.0f64];
        let weights = (weight(), weight(), weight(), weight(), weight()).prop_map(|(a, b, c, d, e)| SignalWeights {
            skill_match: a,
            budget: b,
            client_history: c,
            competition: d,
            timeline: e,
        });
        let params = (
            prop::collection::vec(skill(), 0..5),
            0.0..10_000.0f64,
            0.0..10_000.0f64,
            currency(),
            1..=1000i64,
            1..=365i64,
            0..=100i64,
            0.0..=1.0f64,
        )
            .prop_map(
                |(skills, a, b, currency, max_competition, stale_after_days, evidence_prior, min_conf)| {
                    ScoringParameters {
                        skills,
                        budget_floor: a.min(b),
                        budget_target: a.max(b),
                        currency,
                        max_competition,
                        stale_after_days,
                        evidence_prior,
                        top_tier_min_confidence: min_conf,
                    }
                },
            );
        (weights, params).prop_filter("a valid configuration", |(w, p)| crate::scoring::check(w, p).is_ok())
    }

    fn composite(p: &Posting, (w, params): &(SignalWeights, ScoringParameters)) -> f64 {
        score(p, w, params, 1, as_of()).score.composite
    }

    proptest! {
        #[test]
        fn scores_stay_within_bounds(p in posting_strategy(), c in config_strategy()) {
            let s = score(&p, &c.0, &c.1, 1, as_of());
            prop_assert!((0.0..=100.0).contains(&s.score.composite));
            prop_assert!((0.0..=1.0).contains(&s.score.confidence));
            prop_assert!((0.0..=1.0).contains(&s.breakdown.coverage));
            prop_assert!((0.5..=1.0).contains(&s.breakdown.evidence));
            for d in details(&s) {
                prop_assert!((0.0..=1.0).contains(&d.value));
                prop_assert!((0.0..=100.0).contains(&d.contribution));
                prop_assert!(d.available || (d.value == 0.0 && d.contribution == 0.0));
            }
            prop_assert!((contributions(&s) - s.score.composite).abs() <= 0.01);
        }

        #[test]
        fn the_backtest_point_is_the_score_without_its_sentences(p in posting_strategy(), c in config_strategy()) {
            let scored = score(&p, &c.0, &c.1, 1, as_of());
            prop_assert_eq!(point(&p.scoring_input(), &c.0, &c.1, as_of()), (scored.score.composite, scored.score.confidence));
        }

        /// A lead replayed from its stored record scores as its posting does, to the bit.
        #[test]
        fn a_replayed_lead_scores_as_its_posting(p in posting_strategy(), c in config_strategy()) {
            let record = crate::replay::encode("lead_x", 0, 0, &p.scoring_input());
            let replayed = crate::replay::records(&record).next().unwrap().unwrap();
            let scored = score(&p, &c.0, &c.1, 1, as_of());
            let points = Points::new(&c.0, &c.1);
            prop_assert_eq!(points.of(&replayed.input, as_of()), (scored.score.composite, scored.score.confidence));
        }

        #[test]
        fn same_input_same_output(p in posting_strategy(), c in config_strategy()) {
            let a = score(&p, &c.0, &c.1, 7, as_of());
            let b = score(&p.clone(), &c.0.clone(), &c.1.clone(), 7, as_of());
            prop_assert_eq!(serde_json::to_string(&a.score).unwrap(), serde_json::to_string(&b.score).unwrap());
            prop_assert_eq!(
                serde_json::to_string(&a.breakdown).unwrap(),
                serde_json::to_string(&b.breakdown).unwrap()
            );
        }

        #[test]
        fn more_matching_skills_never_lower_the_composite(
            p in posting_strategy(), c in config_strategy(), first in skill(), pick in any::<prop::sample::Index>()
        ) {
            // Availability fixed: the job lists skills and some are configured.
            let p = Posting { skills: if p.skills.is_empty() { vec![first.clone()] } else { p.skills }, ..p };
            let mut c = c;
            if c.1.skills.is_empty() {
                c.1.skills.push("cobol".into());
            }
            let mut more = c.clone();
            more.1.skills.push(pick.get(&p.skills).clone());
            prop_assert!(composite(&p, &more) >= composite(&p, &c));
        }

        #[test]
        fn a_higher_budget_never_lowers_the_composite(
            p in posting_strategy(), c in config_strategy(), kind in prop::sample::select(vec![BudgetKind::Fixed, BudgetKind::Hourly]),
            amount in 0.0..20_000.0f64, raise in 0.0..10_000.0f64
        ) {
            let at = |x: f64| Posting { budget: Some(Budget { kind, min: None, max: Some(x), currency: c.1.currency.clone() }), ..p.clone() };
            prop_assert!(composite(&at(amount + raise), &c) >= composite(&at(amount), &c));
        }

        #[test]
        fn fewer_proposals_never_lower_the_composite(
            p in posting_strategy(), c in config_strategy(), n in 0..2000i64, fewer in 0..2000i64
        ) {
            let with = |n: i64| Posting { proposals_count: Some(n), ..p.clone() };
            prop_assert!(composite(&with((n - fewer).max(0)), &c) >= composite(&with(n), &c));
        }

        #[test]
        fn a_more_recent_posting_never_lowers_the_composite(
            p in posting_strategy(), c in config_strategy(), age in -86_400i64..400 * 86_400, newer in 0..30 * 86_400i64
        ) {
            let aged = |s: i64| Posting { posted_at: Some(as_of() - Duration::seconds(s)), ..p.clone() };
            prop_assert!(composite(&aged(age - newer), &c) >= composite(&aged(age), &c));
        }

        #[test]
        fn a_better_client_rating_never_lowers_the_composite(
            p in posting_strategy(), c in config_strategy(), base in client_strategy(),
            rating in 0.0..=5.0f64, better in 0.0..=5.0f64
        ) {
            let rated = |r: f64| Posting { client: Some(LeadClient { rating: Some(r), ..base.clone() }), ..p.clone() };
            prop_assert!(composite(&rated((rating + better).min(5.0)), &c) >= composite(&rated(rating), &c));
        }
    }
}
