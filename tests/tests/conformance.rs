//! The conformance kit (`conformance::run`, what `specwright conformance --admission` prints)
//! against the vault and the prospector in process: it passes with every operation and tool
//! checked (refused without a token and one tier below, admitted at its own tier), on the
//! server's own address and behind a proxy whose public URL has a path. (It replaces this suite's
//! hand-written per-operation 401 and 403 checks, the PRM document checks and the served-OpenAPI
//! comparison; `specwright/tests/conformance.rs` shows it failing on a spec the server does not
//! serve, and `tests/notes.rs` runs it from the notes binary.)

mod common;

use conformance::{Contract, Target};

/// Runs the kit against the public URL `url` of `server`; requires every check to pass and
/// every scoped operation to have its two checks.
async fn passes(server: &common::TestServer, url: &str) -> conformance::Report {
    let contract = Contract::from_services(specwright::catalog().services()).unwrap();
    let target = Target::new(url, server.dir.path()).unwrap().with_admission();
    let report = conformance::run(&contract, &target).await;
    assert!(report.passed(), "{report}");
    for op in common::all_operations() {
        let subject = format!("{} {} ({})", op.method.as_str(), op.full_path, op.id);
        let checks: Vec<&str> =
            report.checks.iter().filter(|c| c.subject.starts_with(&subject)).map(|c| c.check).collect();
        assert_eq!(checks, ["401 without a token", "403 one tier below", "admitted at its tier"], "{subject}");
    }
    report
}

#[tokio::test]
async fn the_vault_and_the_prospector_conform() {
    let server = common::TestServer::start().await;
    let report = passes(&server, &server.base).await;
    // Three per operation and per tool (with admission); each PRM path, both documents, the MCP
    // challenge and list.
    let ops = |s: &support::ServiceInfo| (s.operations)().len();
    let tools = |s: &support::ServiceInfo| (s.operations)().iter().filter(|o| o.tool.is_some()).count();
    let (vault, prospector) = (&vault_api::vault::SERVICE, &prospector_api::prospector::SERVICE);
    assert_eq!(report.count("vault"), 3 * ops(vault) + 3 * tools(vault) + 4 + 2 + 2);
    // The prospector's two PRM paths (REST, MCP), documents, MCP challenge and list.
    assert_eq!(report.count("prospector"), 3 * ops(prospector) + 3 * tools(prospector) + 2 + 2 + 2);
}

#[tokio::test]
async fn they_conform_behind_a_proxy_under_a_path_prefix() {
    let (server, public) = common::proxy::serve_behind("/sw", |_| {}).await;
    let report = passes(&server, &public).await;
    // Each document is also checked where RFC 9728 puts it for a resource under /sw, at the origin.
    let at_origin: Vec<&str> = report
        .checks
        .iter()
        .filter(|c| c.check == "PRM document" && c.subject.ends_with("(at the origin)"))
        .map(|c| c.subject.as_str())
        .collect();
    assert_eq!(
        at_origin,
        [
            "REST /.well-known/oauth-protected-resource/sw/api/v1 (at the origin)",
            "MCP /.well-known/oauth-protected-resource/sw/api/mcp (at the origin)",
            "REST /.well-known/oauth-protected-resource/sw/v1/prospector (at the origin)",
            "MCP /.well-known/oauth-protected-resource/sw/v1/prospector/mcp (at the origin)",
        ]
    );
}
