//! The conformance kit: a black-box check that a running server enforces what its spec says.
//!
//! A [`Contract`] is what the spec promises, read from a binary's registered services
//! ([`Contract::from_services`]) or built by the caller (a binary that carries the generator
//! builds one from a spec folder: `specwright conformance --spec DIR`). [`run`] sends
//! requests to a server at its public URL, with tokens minted from the data directory's signing
//! key the way `specwright token` mints them, and returns a [`Report`] of every check:
//!
//! - every scoped operation: no token → 401 with the exact challenge and the service's
//!   `unauthenticated` code (in its wire format), and for a deprecated operation its exact
//!   `Deprecation` and `Sunset` headers (none for the others); a token one tier below → 403 with
//!   the exact `insufficient_scope` challenge, code and `details.required`;
//! - every Protected Resource Metadata document of the REST API and the MCP endpoint (each path
//!   the spec declares and the RFC 9728 one, also at the origin under a public URL with a path);
//! - the served OpenAPI documents (3.1 and 3.0) equal to the generated ones but for the server's
//!   own URLs;
//! - for MCP services: the endpoint's 401 challenge, `tools/list` equal to the spec's tools, each
//!   description's `SCOPE:` line, and every `tools/call` one tier below refused like REST;
//! - where the service declares plans, the rate-limit headers on every answer of a metered
//!   operation;
//! - with [`Target::with_admission`] (`--admission`), every operation and tool sent with a token of
//!   its own tier is admitted by the gate (this runs them).
//!
//! [`Options`] is the command line (`specwright conformance --url URL`) any service binary can
//! mount.

mod checks;
mod client;
mod contract;
mod report;
use checks::*;
use client::*;
use contract::*;

pub use client::Target;
pub use contract::{Contract, ErrorShape, Op, Service};
pub use report::{Check, Report};

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The well-known prefix of RFC 9728.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
/// The MCP revision the kit speaks (stateless requests, no session needed).
const MCP_REVISION: &str = "2025-11-25";
/// The tenant and subject of the kit's tokens (the scope gate answers before any tenant lookup).
const TENANT: &str = "conformance";
const RATE_HEADERS: [&str; 3] = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];

/// Runs every check of `contract` against `target`.
pub async fn run(contract: &Contract, target: &Target) -> Report {
    let started = Instant::now();
    let mut run = Run { target, report: Report::default() };
    for service in &contract.services {
        run.metadata(service).await;
        run.openapi(service).await;
        run.operations(service).await;
        run.mcp(service).await;
    }
    run.report.elapsed = started.elapsed();
    run.report
}

/// `conformance`: check a running server against the services of this binary.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    about = "Check that a running server enforces its spec: challenges, scopes, PRM, OpenAPI, MCP tools and rate-limit headers."
)]
pub struct Options {
    /// The server's public URL (its token issuer), e.g. http://127.0.0.1:8080.
    #[arg(long)]
    pub url: String,
    /// The server's data directory, whose signing key mints the kit's tokens; default: the
    /// binary's own.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Check only these services (repeatable); default: all.
    #[arg(long = "service")]
    pub services: Vec<String>,
    /// Also send every operation and tool with a token of its own tier and require the gate to
    /// admit it. This runs the operations (for tenant `conformance`): use a deployment you may
    /// write to.
    #[arg(long)]
    pub admission: bool,
}

/// The `conformance` command of a service binary that reads its own arguments: when `args` (the
/// process's, program first) name it, runs it against `registered` (with the data directory
/// `data_dir` gives unless `--data-dir` names one) and says how the process should exit; `None`
/// when they name another command. A mistake in its options prints the usage and exits 2.
pub fn command<'a>(
    args: &[String],
    registered: impl IntoIterator<Item = &'a support::ServiceInfo>,
    data_dir: impl FnOnce() -> anyhow::Result<PathBuf>,
) -> Option<ExitCode> {
    if args.get(1).map(String::as_str) != Some("conformance") {
        return None;
    }
    let program = Path::new(&args[0]).file_name().map_or_else(|| args[0].clone(), |n| n.to_string_lossy().into_owned());
    let options = <Options as clap::Parser>::parse_from(
        std::iter::once(format!("{program} conformance")).chain(args[2..].iter().cloned()),
    );
    let data_dir = match options.data_dir.clone().map_or_else(data_dir, Ok) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Some(ExitCode::from(2));
        }
    };
    Some(options.run(registered, &data_dir))
}

impl Options {
    /// Runs the checks, prints the table and says how the command should exit: 0 when every check
    /// passed, 1 when one failed, 2 when the checks could not run. `registered` are the binary's
    /// services and `data_dir` its data directory when `--data-dir` is not given.
    pub fn run<'a>(&self, registered: impl IntoIterator<Item = &'a support::ServiceInfo>, data_dir: &Path) -> ExitCode {
        self.check(|| Contract::from_services(registered), data_dir)
    }

    /// What [`Options::run`] does, against the contract `contract` makes (for example one a
    /// binary generates from a spec folder, as `specwright conformance --spec DIR` does).
    pub fn check(&self, contract: impl FnOnce() -> anyhow::Result<Contract>, data_dir: &Path) -> ExitCode {
        let outcome = (|| {
            let mut contract = contract()?;
            if !self.services.is_empty() {
                let known: Vec<String> = contract.services.iter().map(|s| s.name.clone()).collect();
                if let Some(unknown) = self.services.iter().find(|s| !known.contains(s)) {
                    anyhow::bail!("--service {unknown}: no such service (there are: {})", known.join(", "));
                }
                contract.services.retain(|s| self.services.contains(&s.name));
            }
            let mut target = Target::new(&self.url, self.data_dir.as_deref().unwrap_or(data_dir))?;
            if self.admission {
                target = target.with_admission();
            }
            tokio::runtime::Runtime::new()?.block_on(async {
                // A server that cannot be reached fails every check the same way: say so once.
                if let Err(e) = target.client.get(&target.url).send().await {
                    anyhow::bail!("cannot reach {}: {e}", target.url);
                }
                Ok(run(&contract, &target).await)
            })
        })();
        match outcome {
            Ok(report) => {
                println!("{report}");
                if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn service(scopes: &[(&str, &[&str])]) -> Service {
        Service {
            name: "s".into(),
            base_path: "/v1".into(),
            mcp_path: None,
            metadata_paths: vec![],
            mcp_metadata_paths: vec![],
            scopes: scopes.iter().map(|(n, i)| (n.to_string(), i.iter().map(|s| s.to_string()).collect())).collect(),
            unauthenticated: "unauthenticated".into(),
            insufficient_scope: "insufficient_scope".into(),
            errors: ErrorShape::Envelope,
            plans: vec![],
            default_plan: None,
            openapi: json!({}),
            openapi_30: json!({}),
            tools: vec![],
            operations: vec![],
        }
    }

    #[test]
    fn a_deprecated_operation_must_carry_its_exact_headers_and_the_others_none() {
        let op = |deprecation: Option<(&str, Option<&str>)>| Op {
            id: "x".into(),
            method: "GET".into(),
            path: "/x".into(),
            scope: "r".into(),
            tool: None,
            has_body: false,
            rate_limited: false,
            deprecation: deprecation.map(|(d, s)| (Some(d.into()), s.map(Into::into))),
        };
        let answer = |headers: &[(&'static str, &'static str)]| Answer {
            status: 401,
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (reqwest::header::HeaderName::from_static(k), reqwest::header::HeaderValue::from_static(v))
                })
                .collect(),
            body: json!({}),
        };
        let deprecated = op(Some(("@1795651200", Some("Tue, 01 Jun 2027 00:00:00 GMT"))));
        let marked = answer(&[("deprecation", "@1795651200"), ("sunset", "Tue, 01 Jun 2027 00:00:00 GMT")]);
        assert_eq!(Run::deprecation_headers(&deprecated, &marked), Ok(()));
        assert_eq!(
            Run::deprecation_headers(&deprecated, &answer(&[])),
            Err("deprecation is None, expected Some(\"@1795651200\")".into())
        );
        assert!(Run::deprecation_headers(&op(None), &marked).is_err(), "an operation that is not deprecated");
        assert_eq!(Run::deprecation_headers(&op(None), &answer(&[])), Ok(()));
    }

    #[test]
    fn one_tier_below_is_the_strongest_scope_that_does_not_grant_it() {
        let tiers = service(&[("r", &[]), ("w", &["r"]), ("a", &["w"])]);
        assert_eq!(tiers.one_tier_below("a"), "w");
        assert_eq!(tiers.one_tier_below("w"), "r");
        assert_eq!(tiers.one_tier_below("r"), "", "the lowest tier: a token without the service's scopes");
        // Side by side scopes: the other one.
        let apart = service(&[("leads", &[]), ("billing", &[])]);
        assert_eq!(apart.one_tier_below("billing"), "leads");
    }

    #[test]
    fn the_first_difference_names_its_pointer() {
        let a = json!({"paths": {"/a/b": {"get": {"x": 1}}}, "list": [1, 2]});
        let b = json!({"paths": {"/a/b": {"get": {"x": 2}}}, "list": [1, 2]});
        assert_eq!(
            first_difference(&a, &b, String::new()),
            Some(("/paths/~1a~1b/get/x".into(), "1".into(), "2".into()))
        );
        assert_eq!(first_difference(&a, &a, String::new()), None);
        let c = json!({"only": true});
        assert_eq!(
            first_difference(&c, &json!({}), String::new()),
            Some(("/only".into(), "true".into(), "(absent)".into()))
        );
    }
}
