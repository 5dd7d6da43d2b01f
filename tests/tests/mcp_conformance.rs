//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, npm, pinned in
//! `.ci/package.json`) against the conformance service `everything` (the suite's fixtures as a
//! spec), the vault's and the prospector's MCP endpoints and the notes service's, each served as
//! its binary serves it,
//! with each of the suite's frozen requirement sets (`--requirements 2025-11-25` and
//! `2026-07-28`), and against `everything` the tasks extension's scenarios too. `.ci/run`
//! installs it with the Node it needs and names the command in `SPECWRIGHT_MCP_CONFORMANCE`;
//! elsewhere the tests say they skipped.
//!
//! The suite's client sends no credentials, so each endpoint is reached through a proxy that adds
//! a valid Bearer token (as an operator's authenticating proxy would) and keeps `Host` and
//! `Origin` as sent: the DNS-rebinding scenario's forged `Host` reaches the server unchanged. What
//! a run does not pass is listed in `tests/mcp_conformance/SERVICE-REVISION.yaml`, each entry with
//! the reason (for the vault, the prospector and notes, the suite's own fixtures they do not
//! have); the suite
//! fails on a listed scenario that passes as much as on an unlisted one that fails.

mod common;

use axum::http::{HeaderMap, HeaderValue};

/// The suite's frozen requirement sets, each run on its own wire: 2025-11-25's stateful one and
/// 2026-07-28's stateless one.
const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// The tasks extension's scenarios (`io.modelcontextprotocol/tasks`): in no requirement set's
/// score, run one by one.
const TASKS: [&str; 10] = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
];

/// Runs the suite against `url` with `selection` (`--requirements R` or `--scenario S`) and the
/// expected failures in `baseline`.
async fn suite(command: &str, url: &str, selection: [&str; 2], baseline: &str) -> (bool, String) {
    let baseline = xtask::workspace_root().join("tests/mcp_conformance").join(baseline).display().to_string();
    // Each check's result is kept in `SPECWRIGHT_CONFORMANCE_OUT` when set (`checks.json` per
    // scenario), for reading what a run did not pass.
    let dir = tempfile::tempdir().unwrap();
    let out_dir = std::env::var("SPECWRIGHT_CONFORMANCE_OUT").unwrap_or_else(|_| dir.path().display().to_string());
    let mut args: Vec<String> = vec!["server".into(), "--url".into(), url.into()];
    args.extend(selection.map(String::from));
    args.extend(["--expected-failures".into(), baseline, "--output-dir".into(), out_dir]);
    let command = command.to_string();
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(&command).args(&args).output().expect("run the conformance suite");
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    })
    .await
    .unwrap()
}

/// Both requirement sets against `service`'s endpoint at `url`, each with its baseline
/// (`SERVICE-REVISION.yaml`); every failing run is reported, not only the first.
async fn requirement_sets(command: &str, url: &str, service: &str) {
    let mut failed = Vec::new();
    for revision in REVISIONS {
        let (ok, out) = suite(command, url, ["--requirements", revision], &format!("{service}-{revision}.yaml")).await;
        if !ok {
            failed.push(format!("--requirements {revision}:\n{out}"));
        }
    }
    assert!(failed.is_empty(), "the conformance suite failed against {service}:\n{}", failed.join("\n"));
}

/// `Authorization: Bearer` with each of `tokens`, for the proxy to use in turn: a run of the suite
/// is more requests than one token's plan allows a minute.
fn bearers(tokens: impl IntoIterator<Item = String>) -> Vec<HeaderMap> {
    tokens
        .into_iter()
        .map(|token| {
            let mut added = HeaderMap::new();
            added.insert("authorization", HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
            added
        })
        .collect()
}

/// The `specwright` binary's services behind a proxy that adds the tokens `tokens` makes, its
/// public URL the proxy's: that URL, and the server.
async fn specwright_behind_proxy(
    tokens: impl FnOnce(&common::TestServer) -> Vec<String>,
) -> (String, common::TestServer) {
    let proxy = common::proxy::Proxy::bind("").await;
    let public = proxy.origin.clone();
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |c, _| c.public_url = public.clone())
        .await
        .unwrap();
    proxy.start_adding(&server.base, bearers(tokens(&server)));
    (public, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vault_mcp_endpoint_passes_the_official_conformance_suite() {
    let Some(command) = tests::tool("SPECWRIGHT_MCP_CONFORMANCE") else { return };
    let (public, server) =
        specwright_behind_proxy(|s| (0..4).map(|_| s.token_for("alice", "acme", "vault:admin")).collect()).await;
    server.tenant("acme", "alice").await;
    requirement_sets(&command, &format!("{public}/api/mcp"), "vault").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prospector_mcp_endpoint_passes_the_official_conformance_suite() {
    let Some(command) = tests::tool("SPECWRIGHT_MCP_CONFORMANCE") else { return };
    let users = ["alice", "bob", "carol", "dave"];
    let (public, _server) = specwright_behind_proxy(|s| users.map(|user| s.team_token(user, "acme")).to_vec()).await;
    requirement_sets(&command, &format!("{public}/v1/prospector/mcp"), "prospector").await;
}

/// Serves the app `server` makes of a platform whose public URL is a proxy's, behind that proxy
/// adding tokens of `scope` for `service`; the endpoint's public URL (and the data directory).
async fn behind_proxy(
    service: &'static support::ServiceInfo,
    scope: &str,
    server: impl AsyncFnOnce(&runtime::Platform) -> anyhow::Result<axum::Router>,
) -> (String, tempfile::TempDir) {
    let proxy = common::proxy::Proxy::bind("").await;
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config =
        runtime::Config::new(listener.local_addr().unwrap(), Some(proxy.origin.clone()), dir.path().to_path_buf());
    let platform = runtime::Platform::open(config.clone()).await.unwrap();
    let app = server(&platform).await.unwrap();
    let backend = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { platform.run(listener, app).await });
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir).unwrap();
    let audience = runtime::Catalog::new([service]).resources(&config);
    let tokens = (0..4).map(|_| {
        let claims = runtime::keys::claims(&config.issuer(), "ann", "acme", scope, audience.clone(), 3600, None);
        keys.mint(&claims).unwrap()
    });
    let url = format!("{}{}", proxy.origin, service.mcp_path.unwrap_or_default());
    proxy.start_adding(&backend, bearers(tokens));
    (url, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notes_mcp_endpoint_passes_the_official_conformance_suite() {
    let Some(command) = tests::tool("SPECWRIGHT_MCP_CONFORMANCE") else { return };
    let (url, _dir) = behind_proxy(&notes::SERVICE, "notes:write", async |p| notes::server(p).await).await;
    requirement_sets(&command, &url, "notes").await;
}

/// The conformance service declares the suite's fixtures; what the platform cannot express yet is
/// its baseline, each with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_service_passes_the_official_conformance_suite() {
    let Some(command) = tests::tool("SPECWRIGHT_MCP_CONFORMANCE") else { return };
    let (url, _dir) =
        behind_proxy(&everything::SERVICE, "everything:write", async |p| everything::server(p).await).await;
    requirement_sets(&command, &url, "everything").await;
    let mut failed = Vec::new();
    for scenario in TASKS {
        let (ok, out) = suite(&command, &url, ["--scenario", scenario], "everything-tasks.yaml").await;
        if !ok {
            failed.push(format!("--scenario {scenario}:\n{out}"));
        }
    }
    assert!(failed.is_empty(), "the tasks scenarios failed against everything:\n{}", failed.join("\n"));
}
