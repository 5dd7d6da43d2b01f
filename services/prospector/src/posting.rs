//! A job posting as a lead source delivers it: the input of the scoring engine and of scans.
//!
//! Feeds (JSON, NDJSON, the embedded sample) use this layout directly; RSS, Atom and JSON Feed items are mapped onto
//! it. Unknown fields are ignored so platform feeds can carry more than we read.

use chrono::{DateTime, Utc};
use prospector_api::prospector::models::{Budget, LeadClient};
use serde::{Deserialize, Serialize};

/// One job posting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Posting {
    /// The platform's identifier of the job; with `platform`, what de-duplicates scans.
    pub id: String,
    /// Name of the platform, e.g. `upwork`.
    pub platform: String,
    /// Title of the job.
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Skills the job asks for.
    #[serde(default)]
    pub skills: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<LeadClient>,
    /// Proposals other freelancers had sent when the posting was fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposals_count: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_at: Option<DateTime<Utc>>,
}

/// What the scoring engine reads of a posting, and nothing else: what a backtest replays of each
/// historical lead (kept beside the posting as its replay record, [`crate::replay`]). It also
/// parses from a whole posting (other fields are ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoringInput {
    #[serde(default)]
    pub skills: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<LeadClient>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposals_count: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_at: Option<DateTime<Utc>>,
}

/// Field limits a stored posting keeps to; longer text is cut, not refused.
pub const MAX_TITLE: usize = 500;
pub const MAX_DESCRIPTION: usize = 20_000;
pub const MAX_SKILLS: usize = 100;
pub const MAX_SKILL: usize = 64;

impl Posting {
    /// The fields the scoring engine reads.
    pub fn scoring_input(&self) -> ScoringInput {
        ScoringInput {
            skills: self.skills.clone(),
            budget: self.budget.clone(),
            client: self.client.clone(),
            proposals_count: self.proposals_count,
            posted_at: self.posted_at,
        }
    }

    /// Checks what the scoring engine relies on and trims what storage bounds; a posting that
    /// fails is counted as `failed` by the scan, with the reason.
    pub fn normalise(mut self) -> Result<Posting, String> {
        // PostgreSQL text cannot store U+0000; no string of a posting (nested ones included) may
        // hold it, as no string of the APIs' input may.
        if let Some(at) = serde_json::to_value(&self).ok().and_then(|v| support::nul_at("", &v)) {
            return Err(format!("posting {}: {} holds U+0000 (NUL)", self.id.escape_debug(), at.escape_debug()));
        }
        self.id = self.id.trim().to_string();
        self.platform = self.platform.trim().to_lowercase();
        self.title = self.title.trim().to_string();
        if self.id.is_empty() || self.id.len() > 255 {
            return Err("the posting id must be 1 to 255 characters".into());
        }
        if self.platform.is_empty() || self.platform.len() > 64 {
            return Err(format!("posting {}: the platform must be 1 to 64 characters", self.id));
        }
        if self.title.is_empty() {
            return Err(format!("posting {}: the title is empty", self.id));
        }
        self.title = cut(&self.title, MAX_TITLE);
        self.description = self.description.map(|d| cut(d.trim(), MAX_DESCRIPTION)).filter(|d| !d.is_empty());
        let mut skills: Vec<String> = Vec::new();
        for s in self.skills.iter().map(|s| s.trim().to_lowercase()).filter(|s| !s.is_empty()) {
            let s = cut(&s, MAX_SKILL);
            if !skills.contains(&s) {
                skills.push(s);
            }
        }
        skills.truncate(MAX_SKILLS);
        self.skills = skills;
        if let Some(b) = &self.budget {
            let bad = |x: Option<f64>| x.is_some_and(|v| !v.is_finite() || v < 0.0);
            if bad(b.min) || bad(b.max) {
                return Err(format!("posting {}: budget amounts must be finite and not negative", self.id));
            }
            if b.currency.len() != 3 || !b.currency.bytes().all(|c| c.is_ascii_uppercase()) {
                return Err(format!("posting {}: the budget currency must be an ISO 4217 code", self.id));
            }
        }
        if let Some(c) = &self.client {
            if c.jobs_posted < 0 || c.hires < 0 {
                return Err(format!("posting {}: client counts must not be negative", self.id));
            }
            if c.total_spent.is_some_and(|v| !v.is_finite() || v < 0.0)
                || c.rating.is_some_and(|r| !(0.0..=5.0).contains(&r))
            {
                return Err(format!(
                    "posting {}: client spend must not be negative and rating must be 0 to 5",
                    self.id
                ));
            }
        }
        if self.proposals_count.is_some_and(|n| n < 0) {
            return Err(format!("posting {}: proposals_count must not be negative", self.id));
        }
        Ok(self)
    }
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}
