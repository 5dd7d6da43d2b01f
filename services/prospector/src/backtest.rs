//! Backtest metrics: how well the current and a proposed scoring configuration rank and
//! calibrate historical leads with a known outcome. Pure and deterministic: the report depends
//! only on the set of cases, never on their order, and takes O(n log n) time.
//!
//! Definitions (one configuration at a time, then compared):
//!
//! - **Ranking**: composite descending, ties by lead id ascending (then by the remaining fields of
//!   the case, so even duplicate ids rank the same whatever the input order).
//! - **sample**: leads, won, lost, `base_win_rate = won / leads`, and the period from the
//!   earliest to the latest `found_at`; rate and period absent for an empty sample.
//! - **roc_auc**: the Mann–Whitney statistic: the share of (won, lost) pairs in which the won
//!   lead has the higher composite, a tie counting ½. Absent without wins or without losses.
//! - **roc_auc_ci_low / high**: `auc ± 1.959964 · √var` clipped to 0..1, with DeLong's variance
//!   `var = S10 / n_won + S01 / n_lost`, where S10 and S01 are the sample variances (denominator
//!   m − 1; 0 for a group of one) of the structural components: for a won lead, the share of lost
//!   leads it beats (ties ½); for a lost lead, the share of won leads that beat it (ties ½). Both
//!   come from midranks over tie groups in one pass. A variance of 0 gives bounds equal to the AUC.
//! - **precision_at_k**: won leads among the first `min(top_k, leads)` ranked leads, divided by
//!   that number; absent for an empty sample (or `top_k` 0).
//! - **brier_score**: mean of `(composite / 100 − won)²`, won being 1 or 0; absent when empty.
//! - **tiers**: the ranking cut into `tiers` consecutive groups whose sizes differ by at most one
//!   (earlier tiers take the extra leads); then every tier-1 lead whose confidence is below that
//!   configuration's `top_tier_min_confidence` counts in tier 2 (with at least 2 tiers). Each
//!   tier reports its lowest and highest composite (0 and 0 when empty), leads, won and win rate
//!   (absent when empty); exactly `tiers` entries, tier 1 first.
//! - **delta**: proposed − current for ROC-AUC, precision@k, Brier score and the tier-1 win rate,
//!   computed from unrounded values; absent when either side is absent.
//! - **ranking_change.spearman**: Pearson correlation of the average ranks (ties share their mean
//!   rank) of the current and the proposed composites; absent for fewer than 2 leads or when
//!   either side ranks every lead equal (zero rank variance).
//! - **ranking_change.tier_change_share**: share of leads whose tier (after the confidence rule)
//!   differs between the configurations; 0 for an empty sample.
//! - **warnings**: fewer than 1,000 leads; fewer than 120 wins; no wins or no losses (AUC
//!   unavailable); per configuration, tier win rates that rise anywhere from tier 1 down (over
//!   non-empty tiers). Sorted.
//!
//! Every reported fraction is rounded to 4 decimals by [`round_to`] after all computation.
//! Composites are read as given, a non-finite one as 0 and others clamped to 0..=100;
//! a non-finite confidence reads as 0.

use chrono::{DateTime, Utc};
use prospector_api::prospector::models::{
    BacktestDelta, BacktestMetrics, BacktestReport, BacktestSample, RankingChange, TierStat,
};

use crate::engine::{FRACTION_DECIMALS, round_to};

/// Below this many leads a backtest warns that its metrics are noisy.
pub const MIN_LEADS: usize = 1_000;
/// Below this many won leads a backtest warns that its metrics are noisy.
pub const MIN_WINS: usize = 120;
/// The two-sided 95% quantile of the standard normal distribution.
const Z_95: f64 = 1.959964;

/// A lead's score under one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Composite score, 0 to 100.
    pub composite: f64,
    /// Confidence, 0 to 1.
    pub confidence: f64,
}

/// One historical lead with a known outcome, scored under both configurations.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The lead id: breaks ranking ties (shared with the kept parsed lead).
    pub id: std::sync::Arc<str>,
    pub won: bool,
    /// When the lead was found: the sample's period.
    pub found_at: DateTime<Utc>,
    pub current: Point,
    pub proposed: Point,
}

/// What a backtest measures with.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The k of precision@k.
    pub top_k: usize,
    /// Number of rank tiers (0 is read as 1).
    pub tiers: usize,
    /// `top_tier_min_confidence` of the current configuration.
    pub current_min_confidence: f64,
    /// `top_tier_min_confidence` of the proposed configuration.
    pub proposed_min_confidence: f64,
    /// Version of the current configuration, reported back.
    pub current_config_version: i64,
}

/// The backtest report of `cases` (see the module documentation for every definition).
pub fn evaluate(cases: &[Case], settings: &Settings) -> BacktestReport {
    let n = cases.len();
    let tiers = settings.tiers.max(1);
    let won: Vec<bool> = cases.iter().map(|c| c.won).collect();
    let wins = won.iter().filter(|w| **w).count();
    let lost = n - wins;
    let canon = canonical_positions(cases);
    // The two configurations are analysed on two threads: each is a sort of every case.
    let (current, proposed) = std::thread::scope(|scope| {
        let proposed = scope.spawn(|| {
            analyse(&Side::of(cases, |c| c.proposed), settings.proposed_min_confidence, &won, &canon, settings, tiers)
        });
        let current =
            analyse(&Side::of(cases, |c| c.current), settings.current_min_confidence, &won, &canon, settings, tiers);
        (current, proposed.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });

    let diff = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| round(b - a));
    let delta = BacktestDelta {
        roc_auc: diff(current.auc.map(|a| a.0), proposed.auc.map(|a| a.0)),
        precision_at_k: diff(current.precision, proposed.precision),
        brier_score: diff(current.brier, proposed.brier),
        top_tier_win_rate: diff(current.tiers[0].win_rate(), proposed.tiers[0].win_rate()),
    };
    let changed = current.tier_of.iter().zip(&proposed.tier_of).filter(|(a, b)| a != b).count();
    let ranking_change = RankingChange {
        spearman: spearman(&current.midrank, &proposed.midrank).map(round),
        tier_change_share: if n == 0 { 0.0 } else { round(changed as f64 / n as f64) },
    };

    let mut warnings = Vec::new();
    if n < MIN_LEADS {
        warnings.push(format!("The sample has {n} leads, fewer than 1,000: the metrics are noisy."));
    }
    if wins < MIN_WINS {
        warnings.push(format!("The sample has {wins} won leads, fewer than 120: the metrics are noisy."));
    }
    if wins == 0 || lost == 0 {
        let missing = match (wins, lost) {
            (0, 0) => "no won and no lost leads",
            (0, _) => "no won leads",
            _ => "no lost leads",
        };
        warnings.push(format!("The sample has {missing}, so ROC-AUC is unavailable."));
    }
    for (name, a) in [("current", &current), ("proposed", &proposed)] {
        let rates: Vec<f64> = a.tiers.iter().filter_map(Tier::win_rate).collect();
        if rates.windows(2).any(|w| w[1] > w[0]) {
            let shown: Vec<String> = rates.iter().map(|r| round(*r).to_string()).collect();
            warnings.push(format!(
                "The {name} configuration's tier win rates do not fall monotonically from tier 1 ({}).",
                shown.join(", ")
            ));
        }
    }
    warnings.sort();

    BacktestReport {
        current_config_version: settings.current_config_version,
        top_k: i64::try_from(settings.top_k).unwrap_or(i64::MAX),
        tiers: i64::try_from(tiers).unwrap_or(i64::MAX),
        sample: BacktestSample {
            leads: n as i64,
            won: wins as i64,
            lost: lost as i64,
            base_win_rate: (n > 0).then(|| round(wins as f64 / n as f64)),
            period_start: cases.iter().map(|c| c.found_at).min(),
            period_end: cases.iter().map(|c| c.found_at).max(),
        },
        current: current.metrics(),
        proposed: proposed.metrics(),
        delta,
        ranking_change,
        warnings,
    }
}

/// The one rounding of reported fractions.
fn round(x: f64) -> f64 {
    round_to(x, FRACTION_DECIMALS)
}

/// Each case's position in a total order of all its fields (id first): the ranking's tie-break,
/// making the report independent of the input order.
fn canonical_positions(cases: &[Case]) -> Vec<u32> {
    // Sorting (id, index) pairs reads each key in place; the other fields are compared only
    // between cases that share an id.
    let mut idx: Vec<(&str, u32)> = cases.iter().enumerate().map(|(i, c)| (&*c.id, i as u32)).collect();
    idx.sort_unstable_by(|(ida, a), (idb, b)| {
        ida.cmp(idb).then_with(|| {
            let (a, b) = (&cases[*a as usize], &cases[*b as usize]);
            a.won
                .cmp(&b.won)
                .then(a.found_at.cmp(&b.found_at))
                .then(a.current.composite.total_cmp(&b.current.composite))
                .then(a.current.confidence.total_cmp(&b.current.confidence))
                .then(a.proposed.composite.total_cmp(&b.proposed.composite))
                .then(a.proposed.confidence.total_cmp(&b.proposed.confidence))
        })
    });
    let mut pos = vec![0; cases.len()];
    for (p, (_, i)) in idx.into_iter().enumerate() {
        pos[i as usize] = p as u32;
    }
    pos
}

/// One configuration's composites and confidences, sanitised.
struct Side {
    score: Vec<f64>,
    confidence: Vec<f64>,
}

impl Side {
    fn of(cases: &[Case], point: impl Fn(&Case) -> Point) -> Side {
        let (score, confidence) = cases
            .iter()
            .map(|c| {
                let p = point(c);
                // `== 0.0` also folds −0 into 0, so equal scores compare equal in `total_cmp`.
                let s = if p.composite.is_finite() && p.composite != 0.0 { p.composite.clamp(0.0, 100.0) } else { 0.0 };
                let k = if p.confidence.is_finite() { p.confidence } else { 0.0 };
                (s, k)
            })
            .unzip();
        Side { score, confidence }
    }
}

/// One tier before rounding.
#[derive(Clone, Default)]
struct Tier {
    leads: usize,
    won: usize,
    min: f64,
    max: f64,
}

impl Tier {
    fn win_rate(&self) -> Option<f64> {
        (self.leads > 0).then(|| self.won as f64 / self.leads as f64)
    }
}

/// A tie group of the ranking: how many won and lost leads share one composite, and how many
/// won and lost leads score below it.
struct Group {
    won: usize,
    lost: usize,
    won_below: usize,
    lost_below: usize,
}

/// One configuration's unrounded results.
struct Analysis {
    /// ROC-AUC and DeLong's variance of it.
    auc: Option<(f64, f64)>,
    precision: Option<f64>,
    brier: Option<f64>,
    tiers: Vec<Tier>,
    /// Per case (input index): its tier, 0-based, after the confidence rule.
    tier_of: Vec<usize>,
    /// Per case (input index): its average rank, 1-based, lowest composite first.
    midrank: Vec<f64>,
}

impl Analysis {
    fn metrics(&self) -> BacktestMetrics {
        let ci =
            |sign: f64| self.auc.map(|(auc, var)| round((auc + sign * Z_95 * var.max(0.0).sqrt()).clamp(0.0, 1.0)));
        BacktestMetrics {
            roc_auc: self.auc.map(|(auc, _)| round(auc)),
            roc_auc_ci_low: ci(-1.0),
            roc_auc_ci_high: ci(1.0),
            precision_at_k: self.precision.map(round),
            brier_score: self.brier.map(round),
            win_rate_by_tier: self
                .tiers
                .iter()
                .enumerate()
                .map(|(t, x)| TierStat {
                    tier: t as i64 + 1,
                    min_score: round(x.min),
                    max_score: round(x.max),
                    leads: x.leads as i64,
                    won: x.won as i64,
                    win_rate: x.win_rate().map(round),
                })
                .collect(),
        }
    }
}

fn analyse(
    side: &Side,
    min_confidence: f64,
    won: &[bool],
    canon: &[u32],
    settings: &Settings,
    tiers: usize,
) -> Analysis {
    let n = won.len();
    let s = &side.score;
    // Composite descending, then canonical position: one packed key per case, sorted in place.
    // Sanitised composites are finite and not negative (−0 folded), so their bits order as they do.
    let mut keys: Vec<(u64, u32, u32)> = (0..n).map(|i| (!s[i].to_bits(), canon[i], i as u32)).collect();
    keys.sort_unstable();
    let order: Vec<usize> = keys.into_iter().map(|(_, _, i)| i as usize).collect();

    // Tie groups from the lowest composite up; average ranks on the way.
    let mut midrank = vec![0.0; n];
    let mut groups: Vec<Group> = Vec::new();
    let (mut won_below, mut lost_below) = (0, 0);
    let mut end = n;
    while end > 0 {
        let mut start = end - 1;
        while start > 0 && s[order[start - 1]] == s[order[end - 1]] {
            start -= 1;
        }
        let members = &order[start..end];
        let mid = (n - end) as f64 + (members.len() as f64 + 1.0) / 2.0;
        let mut w = 0;
        for &i in members {
            midrank[i] = mid;
            w += usize::from(won[i]);
        }
        let group = Group { won: w, lost: members.len() - w, won_below, lost_below };
        won_below += group.won;
        lost_below += group.lost;
        groups.push(group);
        end = start;
    }
    let (wins, losses) = (won_below, lost_below);
    let auc = (wins > 0 && losses > 0).then(|| delong(&groups, wins, losses));

    let k = settings.top_k.min(n);
    let precision = (k > 0).then(|| order[..k].iter().filter(|&&i| won[i]).count() as f64 / k as f64);
    let brier = (n > 0).then(|| {
        s.iter().zip(won).map(|(s, w)| (s / 100.0 - if *w { 1.0 } else { 0.0 }).powi(2)).sum::<f64>() / n as f64
    });

    // Tiers by rank, then the confidence rule.
    let mut tier_of = vec![0; n];
    let (base, extra) = (n / tiers, n % tiers);
    let mut position = 0;
    for t in 0..tiers {
        let size = base + usize::from(t < extra);
        for &i in &order[position..position + size] {
            tier_of[i] = t;
        }
        position += size;
    }
    if tiers >= 2 {
        for (t, c) in tier_of.iter_mut().zip(&side.confidence) {
            if *t == 0 && *c < min_confidence {
                *t = 1;
            }
        }
    }
    let mut stats = vec![Tier::default(); tiers];
    for &i in &order {
        let tier = &mut stats[tier_of[i]];
        if tier.leads == 0 {
            (tier.min, tier.max) = (s[i], s[i]);
        } else {
            tier.min = tier.min.min(s[i]);
            tier.max = tier.max.max(s[i]);
        }
        tier.leads += 1;
        tier.won += usize::from(won[i]);
    }
    Analysis { auc, precision, brier, tiers: stats, tier_of, midrank }
}

/// ROC-AUC and DeLong's variance from the tie groups. A won lead in a group beats
/// `lost_below + lost/2` lost leads (its structural component V10 is that over the losses); a
/// lost lead is beaten by `won_above + won/2` won leads (V01, over the wins). The AUC is the mean
/// of either.
fn delong(groups: &[Group], wins: usize, losses: usize) -> (f64, f64) {
    let (n1, n0) = (wins as f64, losses as f64);
    let beats = |g: &Group| g.lost_below as f64 + g.lost as f64 / 2.0;
    let beaten = |g: &Group| (wins - g.won_below - g.won) as f64 + g.won as f64 / 2.0;
    let auc = groups.iter().map(|g| g.won as f64 * beats(g)).sum::<f64>() / (n1 * n0);
    let (mut s10, mut s01) = (0.0, 0.0);
    for g in groups {
        s10 += g.won as f64 * (beats(g) / n0 - auc).powi(2);
        s01 += g.lost as f64 * (beaten(g) / n1 - auc).powi(2);
    }
    let s10 = if wins > 1 { s10 / (n1 - 1.0) } else { 0.0 };
    let s01 = if losses > 1 { s01 / (n0 - 1.0) } else { 0.0 };
    (auc.clamp(0.0, 1.0), s10 / n1 + s01 / n0)
}

/// Pearson correlation of two rank vectors of the same cases; `None` for fewer than 2 cases or a
/// side without rank variance.
fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len();
    if n < 2 {
        return None;
    }
    // Average ranks always sum to n(n+1)/2, so both means are (n+1)/2.
    let mean = (n as f64 + 1.0) / 2.0;
    let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        let (dx, dy) = (x - mean, y - mean);
        cov += dx * dy;
        va += dx * dx;
        vb += dy * dy;
    }
    (va > 0.0 && vb > 0.0).then(|| (cov / (va.sqrt() * vb.sqrt())).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn day(d: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap() + Duration::days(d)
    }

    fn case(id: &str, won: bool, current: (f64, f64), proposed: (f64, f64), d: i64) -> Case {
        Case {
            id: id.into(),
            won,
            found_at: day(d),
            current: Point { composite: current.0, confidence: current.1 },
            proposed: Point { composite: proposed.0, confidence: proposed.1 },
        }
    }

    fn settings(top_k: usize, tiers: usize) -> Settings {
        Settings { top_k, tiers, current_min_confidence: 0.5, proposed_min_confidence: 0.5, current_config_version: 4 }
    }

    /// Six leads; `b` has low confidence under the current configuration.
    fn six() -> Vec<Case> {
        vec![
            case("a", true, (90.0, 0.9), (80.0, 0.9), 3),
            case("b", false, (80.0, 0.3), (90.0, 0.9), 1),
            case("c", true, (70.0, 0.9), (70.0, 0.9), 5),
            case("d", false, (70.0, 0.9), (40.0, 0.9), 2),
            case("e", true, (40.0, 0.9), (60.0, 0.9), 9),
            case("f", false, (20.0, 0.9), (20.0, 0.9), 4),
        ]
    }

    fn tier(tier: i64, min: f64, max: f64, leads: i64, won: i64, rate: Option<f64>) -> TierStat {
        TierStat { tier, min_score: min, max_score: max, leads, won, win_rate: rate }
    }

    #[test]
    fn six_cases_by_hand_two_tiers() {
        let r = evaluate(&six(), &settings(2, 2));
        assert_eq!(r.current_config_version, 4);
        assert_eq!((r.top_k, r.tiers), (2, 2));
        assert_eq!(
            r.sample,
            BacktestSample {
                leads: 6,
                won: 3,
                lost: 3,
                base_win_rate: Some(0.5),
                period_start: Some(day(1)),
                period_end: Some(day(9)),
            }
        );

        // Current ranking: a 90, b 80, c 70, d 70 (tie: c before d by id), e 40, f 20.
        // AUC: pairs (won, lost) = a: beats b, d, f → 3; c: loses to b, ties d (½), beats f → 1.5;
        //   e: beats f → 1. (3 + 1.5 + 1) / 9 = 0.61111 → 0.6111.
        // DeLong: V10 (won) = 3/3, 1.5/3, 1/3 = 1, 0.5, 0.3333; V01 (lost, won leads above it):
        //   b: a → 1/3; d: a + ½c → 0.5; f: 3/3 = 1. Deviations from 11/18 are ±7/18, −2/18,
        //   −5/18 on both sides: S10 = S01 = (49 + 4 + 25) / 324 / 2 = 13/108;
        //   var = 13/108 / 3 + 13/108 / 3 = 13/162 = 0.080247; √var = 0.283279;
        //   ±1.959964 × 0.283279 = ±0.555217 → [0.055894, 1.166328] → clipped [0.0559, 1].
        // precision@2: a won, b lost → 0.5.
        // Brier: (0.9−1)² + 0.8² + (0.7−1)² + 0.7² + (0.4−1)² + 0.2² = 0.01 + 0.64 + 0.09 + 0.49
        //   + 0.36 + 0.04 = 1.63; / 6 = 0.271667 → 0.2717.
        // Tiers (3 + 3): {a, b, c}, {d, e, f}; b (confidence 0.3 < 0.5) moves to tier 2:
        //   tier 1 = a, c: 2 won of 2, scores 70..90; tier 2 = b, d, e, f: 1 won of 4, 20..80.
        assert_eq!(
            r.current,
            BacktestMetrics {
                roc_auc: Some(0.6111),
                roc_auc_ci_low: Some(0.0559),
                roc_auc_ci_high: Some(1.0),
                precision_at_k: Some(0.5),
                brier_score: Some(0.2717),
                win_rate_by_tier: vec![tier(1, 70.0, 90.0, 2, 2, Some(1.0)), tier(2, 20.0, 80.0, 4, 1, Some(0.25))],
            }
        );

        // Proposed ranking: b 90, a 80, c 70, e 60, d 40, f 20.
        // AUC: a beats d, f → 2; c → 2; e → 2: 6/9 = 0.6667.
        // DeLong: V10 = 2/3 for every won lead → S10 = 0; V01: b 0, d 1, f 1 → deviations −2/3,
        //   1/3, 1/3: S01 = (4/9 + 1/9 + 1/9) / 2 = 1/3; var = 0 + (1/3)/3 = 1/9; √var = 1/3;
        //   ±1.959964/3 = ±0.653321 → [0.013345, 1.319988] → [0.0133, 1].
        // precision@2: b lost, a won → 0.5.
        // Brier: 0.04 + 0.81 + 0.09 + 0.16 + 0.16 + 0.04 = 1.3; / 6 = 0.216667 → 0.2167.
        // Tiers: {b, a, c} 2 of 3, 70..90; {e, d, f} 1 of 3, 20..60. Nobody is demoted.
        assert_eq!(
            r.proposed,
            BacktestMetrics {
                roc_auc: Some(0.6667),
                roc_auc_ci_low: Some(0.0133),
                roc_auc_ci_high: Some(1.0),
                precision_at_k: Some(0.5),
                brier_score: Some(0.2167),
                win_rate_by_tier: vec![
                    tier(1, 70.0, 90.0, 3, 2, Some(0.6667)),
                    tier(2, 20.0, 60.0, 3, 1, Some(0.3333))
                ],
            }
        );

        // Delta: AUC 6/9 − 5.5/9 = 0.0556; precision 0; Brier (1.3 − 1.63) / 6 = −0.055;
        //   tier 1: 2/3 − 1 = −0.3333.
        assert_eq!(
            r.delta,
            BacktestDelta {
                roc_auc: Some(0.0556),
                precision_at_k: Some(0.0),
                brier_score: Some(-0.055),
                top_tier_win_rate: Some(-0.3333),
            }
        );

        // Spearman on average ranks (lowest first):
        //   current:  f 1, e 2, c 3.5, d 3.5, b 5, a 6;  proposed: f 1, d 2, e 3, c 4, a 5, b 6.
        //   Deviations from 3.5: current a 2.5, b 1.5, c 0, d 0, e −1.5, f −2.5;
        //                       proposed a 1.5, b 2.5, c 0.5, d −1.5, e −0.5, f −2.5.
        //   cov = 3.75 + 3.75 + 0 + 0 + 0.75 + 6.25 = 14.5; var 17 and 17.5;
        //   14.5 / √(17 × 17.5) = 14.5 / 17.248188 = 0.840668 → 0.8407.
        // Tier change: current a1 b2 c1 d2 e2 f2, proposed a1 b1 c1 d2 e2 f2: only b → 1/6.
        assert_eq!(r.ranking_change, RankingChange { spearman: Some(0.8407), tier_change_share: 0.1667 });

        assert_eq!(
            r.warnings,
            vec![
                "The sample has 3 won leads, fewer than 120: the metrics are noisy.".to_string(),
                "The sample has 6 leads, fewer than 1,000: the metrics are noisy.".to_string(),
            ]
        );
    }

    #[test]
    fn six_cases_by_hand_three_tiers() {
        let r = evaluate(&six(), &settings(3, 3));
        // precision@3: current a, b, c (c wins the 70 tie with d by id) → 2/3; proposed b, a, c → 2/3.
        assert_eq!(r.current.precision_at_k, Some(0.6667));
        assert_eq!(r.proposed.precision_at_k, Some(0.6667));
        // Current tiers (2 + 2 + 2): {a, b}, {c, d}, {e, f}; b demoted to tier 2:
        //   tier 1 = a: 1 of 1, 90..90; tier 2 = b, c, d: 1 of 3, 70..80; tier 3 = e, f: 1 of 2,
        //   20..40. The rate rises from tier 2 to 3 → a warning.
        assert_eq!(
            r.current.win_rate_by_tier,
            vec![
                tier(1, 90.0, 90.0, 1, 1, Some(1.0)),
                tier(2, 70.0, 80.0, 3, 1, Some(0.3333)),
                tier(3, 20.0, 40.0, 2, 1, Some(0.5)),
            ]
        );
        // Proposed: {b, a} 1 of 2, 80..90; {c, e} 2 of 2, 60..70; {d, f} 0 of 2, 20..40:
        //   rises from tier 1 to 2 → a warning.
        assert_eq!(
            r.proposed.win_rate_by_tier,
            vec![
                tier(1, 80.0, 90.0, 2, 1, Some(0.5)),
                tier(2, 60.0, 70.0, 2, 2, Some(1.0)),
                tier(3, 20.0, 40.0, 2, 0, Some(0.0)),
            ]
        );
        // Tier-1 delta: 0.5 − 1 = −0.5.
        assert_eq!(r.delta.top_tier_win_rate, Some(-0.5));
        // Tier change: current a1 b2 c2 d2 e3 f3, proposed a1 b1 c2 d3 e2 f3: b, d, e → 3/6.
        assert_eq!(r.ranking_change, RankingChange { spearman: Some(0.8407), tier_change_share: 0.5 });
        assert_eq!(
            r.warnings,
            vec![
                "The current configuration's tier win rates do not fall monotonically from tier 1 (1, 0.3333, 0.5)."
                    .to_string(),
                "The proposed configuration's tier win rates do not fall monotonically from tier 1 (0.5, 1, 0)."
                    .to_string(),
                "The sample has 3 won leads, fewer than 120: the metrics are noisy.".to_string(),
                "The sample has 6 leads, fewer than 1,000: the metrics are noisy.".to_string(),
            ]
        );
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// `n` cases with many ties (composites on a coarse grid), outcomes loosely following them.
    fn random_cases(n: usize, seed: u64) -> Vec<Case> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|i| {
                let cur = (rng.below(21) * 5) as f64;
                let prop = (rng.below(41) as f64 * 2.5).min(100.0);
                let won = rng.below(100) < (cur as u64 + prop as u64) / 3;
                let conf = |r: &mut Rng| r.below(101) as f64 / 100.0;
                case(
                    &format!("lead-{:05}", i),
                    won,
                    (cur, conf(&mut rng)),
                    (prop, conf(&mut rng)),
                    rng.below(90) as i64,
                )
            })
            .collect()
    }

    #[test]
    fn shuffled_input_gives_an_identical_report() {
        let cases = random_cases(500, 7);
        let mut shuffled = cases.clone();
        let mut rng = Rng(99);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i as u64 + 1) as usize);
        }
        shuffled.reverse();
        // Two leads with the same id and score, differing otherwise: still order-independent.
        let twin_a = case("twin", true, (50.0, 0.9), (10.0, 0.9), 1);
        let twin_b = case("twin", false, (50.0, 0.9), (90.0, 0.9), 1);
        let mut with_twins = cases.clone();
        with_twins.extend([twin_a.clone(), twin_b.clone()]);
        let mut shuffled_twins = shuffled.clone();
        shuffled_twins.splice(0..0, [twin_b, twin_a]);
        for (a, b) in [(&cases, &shuffled), (&with_twins, &shuffled_twins)] {
            for tiers in [2, 4, 10] {
                let s = settings(25, tiers);
                let x = serde_json::to_string(&evaluate(a, &s)).unwrap();
                let y = serde_json::to_string(&evaluate(b, &s)).unwrap();
                assert_eq!(x, y);
            }
        }
    }

    #[test]
    fn auc_and_delong_variance_match_the_pairwise_definition() {
        for (n, seed) in [(2, 1), (3, 2), (40, 3), (301, 4)] {
            let cases = random_cases(n, seed);
            let side = Side::of(&cases, |c| c.current);
            let won: Vec<bool> = cases.iter().map(|c| c.won).collect();
            let canon = canonical_positions(&cases);
            let got = analyse(&side, 0.0, &won, &canon, &settings(5, 2), 2);
            let pos: Vec<f64> = cases.iter().filter(|c| c.won).map(|c| c.current.composite).collect();
            let neg: Vec<f64> = cases.iter().filter(|c| !c.won).map(|c| c.current.composite).collect();
            if pos.is_empty() || neg.is_empty() {
                assert!(got.auc.is_none());
                continue;
            }
            let psi = |x: f64, y: f64| {
                if x > y {
                    1.0
                } else if x == y {
                    0.5
                } else {
                    0.0
                }
            };
            let v10: Vec<f64> =
                pos.iter().map(|x| neg.iter().map(|y| psi(*x, *y)).sum::<f64>() / neg.len() as f64).collect();
            let v01: Vec<f64> =
                neg.iter().map(|y| pos.iter().map(|x| psi(*x, *y)).sum::<f64>() / pos.len() as f64).collect();
            let auc = v10.iter().sum::<f64>() / pos.len() as f64;
            let var = |v: &[f64]| {
                if v.len() < 2 { 0.0 } else { v.iter().map(|x| (x - auc).powi(2)).sum::<f64>() / (v.len() - 1) as f64 }
            };
            let variance = var(&v10) / pos.len() as f64 + var(&v01) / neg.len() as f64;
            let (a, v) = got.auc.unwrap();
            assert!((a - auc).abs() < 1e-12, "n {n}: {a} vs {auc}");
            assert!((v - variance).abs() < 1e-12, "n {n}: {v} vs {variance}");
        }
    }

    #[test]
    fn empty_sample() {
        let r = evaluate(&[], &settings(25, 4));
        assert_eq!(
            r.sample,
            BacktestSample { leads: 0, won: 0, lost: 0, base_win_rate: None, period_start: None, period_end: None }
        );
        for m in [&r.current, &r.proposed] {
            assert_eq!((m.roc_auc, m.roc_auc_ci_low, m.roc_auc_ci_high), (None, None, None));
            assert_eq!((m.precision_at_k, m.brier_score), (None, None));
            let expected: Vec<TierStat> = (1..=4).map(|t| tier(t, 0.0, 0.0, 0, 0, None)).collect();
            assert_eq!(m.win_rate_by_tier, expected);
        }
        assert_eq!(
            r.delta,
            BacktestDelta { roc_auc: None, precision_at_k: None, brier_score: None, top_tier_win_rate: None }
        );
        assert_eq!(r.ranking_change, RankingChange { spearman: None, tier_change_share: 0.0 });
        assert_eq!(
            r.warnings,
            vec![
                "The sample has 0 leads, fewer than 1,000: the metrics are noisy.".to_string(),
                "The sample has 0 won leads, fewer than 120: the metrics are noisy.".to_string(),
                "The sample has no won and no lost leads, so ROC-AUC is unavailable.".to_string(),
            ]
        );
    }

    #[test]
    fn all_won_sample() {
        let cases: Vec<Case> =
            (0..5).map(|i| case(&format!("w{i}"), true, (i as f64 * 20.0, 0.9), (50.0, 0.9), i)).collect();
        let r = evaluate(&cases, &settings(3, 2));
        assert_eq!((r.sample.won, r.sample.lost, r.sample.base_win_rate), (5, 0, Some(1.0)));
        assert_eq!((r.current.roc_auc, r.current.roc_auc_ci_low, r.current.roc_auc_ci_high), (None, None, None));
        assert_eq!(r.current.precision_at_k, Some(1.0));
        // Brier: composites 0, 20, 40, 60, 80 → (1 + 0.64 + 0.36 + 0.16 + 0.04) / 5 = 0.44.
        assert_eq!(r.current.brier_score, Some(0.44));
        assert_eq!(r.proposed.brier_score, Some(0.25));
        assert_eq!(r.delta.roc_auc, None);
        assert_eq!(r.delta.brier_score, Some(-0.19));
        // Every proposed composite is equal: no rank variance, no Spearman.
        assert_eq!(r.ranking_change.spearman, None);
        assert!(r.warnings.contains(&"The sample has no lost leads, so ROC-AUC is unavailable.".to_string()));
    }

    #[test]
    fn low_confidence_leaves_tier_one_for_tier_two() {
        // Four leads, two tiers of two. Current: x and y are ranked into tier 1; y (confidence
        // 0.49 < 0.5) counts in tier 2. Proposed has the same scores and threshold 0.4: y stays.
        let cases = vec![
            case("x", true, (95.0, 0.5), (95.0, 0.5), 0),
            case("y", false, (90.0, 0.49), (90.0, 0.49), 0),
            case("z", true, (30.0, 0.1), (30.0, 0.1), 0),
            case("w", false, (10.0, 1.0), (10.0, 1.0), 0),
        ];
        let s = Settings { proposed_min_confidence: 0.4, ..settings(2, 2) };
        let r = evaluate(&cases, &s);
        assert_eq!(
            r.current.win_rate_by_tier,
            vec![tier(1, 95.0, 95.0, 1, 1, Some(1.0)), tier(2, 10.0, 90.0, 3, 1, Some(0.3333))]
        );
        assert_eq!(
            r.proposed.win_rate_by_tier,
            vec![tier(1, 90.0, 95.0, 2, 1, Some(0.5)), tier(2, 10.0, 30.0, 2, 1, Some(0.5))]
        );
        // Demotion only affects tier 1: z (confidence 0.1) stays in tier 2. Precision is by rank.
        assert_eq!(r.current.precision_at_k, Some(0.5));
        assert_eq!(r.ranking_change.tier_change_share, 0.25);
        assert_eq!(r.delta.top_tier_win_rate, Some(-0.5));

        // Everyone under the threshold: tier 1 is empty and its win rate absent.
        let s = Settings { current_min_confidence: 1.1, ..settings(2, 2) };
        let r = evaluate(&cases, &s);
        assert_eq!(r.current.win_rate_by_tier[0], tier(1, 0.0, 0.0, 0, 0, None));
        assert_eq!(r.current.win_rate_by_tier[1].leads, 4);
        assert_eq!(r.delta.top_tier_win_rate, None);
    }

    #[test]
    fn delong_interval_on_a_perfectly_separated_sample() {
        // Every won lead above every lost lead: each V10 and V01 is 1, the variance 0, the
        // interval [1, 1]. Reversed, the AUC is 0 and so is the interval.
        let cases: Vec<Case> = (0..10)
            .map(|i| {
                let won = i >= 5;
                case(&format!("l{i}"), won, (i as f64 * 10.0, 1.0), (100.0 - i as f64 * 10.0, 1.0), i)
            })
            .collect();
        let r = evaluate(&cases, &settings(5, 2));
        assert_eq!(
            (r.current.roc_auc, r.current.roc_auc_ci_low, r.current.roc_auc_ci_high),
            (Some(1.0), Some(1.0), Some(1.0))
        );
        assert_eq!(
            (r.proposed.roc_auc, r.proposed.roc_auc_ci_low, r.proposed.roc_auc_ci_high),
            (Some(0.0), Some(0.0), Some(0.0))
        );
        assert_eq!(r.current.precision_at_k, Some(1.0));
        assert_eq!(r.delta.roc_auc, Some(-1.0));
        assert_eq!(r.ranking_change.spearman, Some(-1.0));
        assert_eq!(r.ranking_change.tier_change_share, 1.0);
    }

    #[test]
    fn tiers_split_evenly_earlier_tiers_take_the_extra() {
        // 10 leads in 4 tiers: 3, 3, 2, 2; confidence 1 so nobody is demoted.
        let cases: Vec<Case> =
            (0..10).map(|i| case(&format!("l{i}"), i % 2 == 0, (i as f64, 1.0), (i as f64, 1.0), 0)).collect();
        let r = evaluate(&cases, &settings(25, 4));
        let sizes: Vec<i64> = r.current.win_rate_by_tier.iter().map(|t| t.leads).collect();
        assert_eq!(sizes, vec![3, 3, 2, 2]);
        assert_eq!(r.current.win_rate_by_tier[0], tier(1, 7.0, 9.0, 3, 1, Some(0.3333)));
        assert_eq!(r.current.precision_at_k, Some(0.5));
        assert_eq!(r.ranking_change, RankingChange { spearman: Some(1.0), tier_change_share: 0.0 });
    }

    #[test]
    fn odd_inputs_stay_finite() {
        let cases = vec![
            case("a", true, (f64::NAN, f64::NAN), (-0.0, 0.2), 0),
            case("b", false, (0.0, 0.2), (f64::INFINITY, 0.2), 0),
            case("c", true, (250.0, 0.9), (0.0, 0.9), 0),
        ];
        for s in [settings(0, 0), settings(usize::MAX, 1), settings(1, 10)] {
            let r = evaluate(&cases, &s);
            let json = serde_json::to_string(&r).unwrap();
            assert!(!json.contains("null"), "{json}");
            assert_eq!(r.current.win_rate_by_tier.len(), s.tiers.max(1));
        }
    }
}
