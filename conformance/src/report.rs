//! The pass/fail table a run prints, one line per check.

use std::fmt;
use std::time::Duration;

/// One check and its outcome.
#[derive(Debug, Clone)]
pub struct Check {
    /// The service checked.
    pub service: String,
    /// What was checked (`401 without a token`, `PRM document`, …).
    pub check: &'static str,
    /// What it was checked on (an operation, a tool, a path).
    pub subject: String,
    /// Why it failed; `None` when it passed.
    pub failure: Option<String>,
}

/// Every check of a run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// In the order run.
    pub checks: Vec<Check>,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Report {
    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.failure.is_some())
    }

    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.failures().next().is_none()
    }

    /// How many checks ran for `service`.
    pub fn count(&self, service: &str) -> usize {
        self.checks.iter().filter(|c| c.service == service).count()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = |get: fn(&Check) -> usize| self.checks.iter().map(get).max().unwrap_or(0);
        let (ws, wc) = (width(|c| c.service.len()), width(|c| c.check.len()));
        writeln!(f, "{:<4}  {:<ws$}  {:<wc$}  SUBJECT", "", "SERVICE", "CHECK")?;
        for c in &self.checks {
            let verdict = if c.failure.is_some() { "FAIL" } else { "pass" };
            writeln!(f, "{verdict:<4}  {:<ws$}  {:<wc$}  {}", c.service, c.check, c.subject)?;
            if let Some(why) = &c.failure {
                for line in why.lines() {
                    writeln!(f, "      {line}")?;
                }
            }
        }
        let mut services: Vec<&str> = self.checks.iter().map(|c| c.service.as_str()).collect();
        services.dedup();
        let per: Vec<String> = services.iter().map(|s| format!("{s} {}", self.count(s))).collect();
        let failed = self.failures().count();
        write!(
            f,
            "{} checks ({}): {} passed, {failed} failed, in {} ms",
            self.checks.len(),
            per.join(", "),
            self.checks.len() - failed,
            self.elapsed.as_millis()
        )
    }
}
