//! `specwright conformance` against the real binary serving the vault and the prospector: every
//! check passes and covers every operation and tool; checked against a spec the server does not
//! serve, it fails naming what differs; with a data directory that lacks the server's key it stops
//! before any request.

mod common;

use std::path::Path;
use std::process::Command;

use common::{BIN, free_port, serve};

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn conformance(args: &[&str]) -> Outcome {
    let out = Command::new(BIN).arg("conformance").args(args).output().unwrap();
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// The table's rows for `check` whose subject contains `needle`, with their verdicts.
fn rows<'a>(table: &'a str, check: &str, needle: &str) -> Vec<&'a str> {
    table.lines().filter(|l| l.contains(&format!("  {check}  ")) && l.contains(needle)).collect()
}

/// The served services' specs copied into one folder, with `edit` applied to `vault.toml`.
fn edited_spec(into: &Path, edit: impl Fn(String) -> String) {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    for (service, name) in [("vault", "vault.toml"), ("prospector", "prospector.toml")] {
        let text = std::fs::read_to_string(specs.join(service).join(name)).unwrap();
        let text = if name == "vault.toml" { edit(text) } else { text };
        std::fs::write(into.join(name), text).unwrap();
    }
}

/// An edit of the vault spec giving operation `id` (at `route`) scope `to` instead of `from`.
fn rescoped(id: &str, route: &str, from: &str, to: &str) -> impl Fn(String) -> String {
    let head = format!("id = \"{id}\"\nroute = \"{route}\"\nscope = ");
    let (old, new) = (format!("{head}\"{from}\""), format!("{head}\"{to}\""));
    move |text| {
        assert!(text.contains(&old), "the vault spec has {old}");
        text.replacen(&old, &new, 1)
    }
}

#[test]
fn the_served_services_conform_and_a_spec_they_do_not_serve_fails() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let url = format!("http://{addr}");
    let log = dir.path().join("server.log");
    let _server = tokio::runtime::Runtime::new().unwrap().block_on(serve(&addr, &["--data-dir", data], &log));

    // The binary's own services: every check passes, and every operation and tool was checked.
    let ok = conformance(&["--url", &url, "--data-dir", data]);
    assert_eq!(ok.code, Some(0), "{}{}", ok.stdout, ok.stderr);
    let table = ok.stdout;
    assert!(!table.lines().any(|l| l.starts_with("FAIL")), "{table}");
    for op in vault_api::vault::OPERATIONS.iter().chain(&prospector_api::prospector::OPERATIONS) {
        let subject = format!("{} {} ({})", op.method.as_str(), op.full_path, op.id);
        for check in ["401 without a token", "403 one tier below"] {
            assert_eq!(rows(&table, check, &subject).len(), 1, "{check} of {subject}:\n{table}");
        }
        if let Some(tool) = op.tool {
            for check in ["tool SCOPE line", "tools/call one tier below"] {
                assert_eq!(rows(&table, check, tool).len(), 1, "{check} of {tool}:\n{table}");
            }
        }
    }
    for (service, paths) in [
        (
            "vault",
            &[
                "REST /api/v1/.well-known/oauth-protected-resource",
                "REST /.well-known/oauth-protected-resource/api/v1",
                "MCP /.well-known/oauth-protected-resource",
                "MCP /.well-known/oauth-protected-resource/api/mcp",
            ][..],
        ),
        ("prospector", &["REST /.well-known/oauth-protected-resource/v1/prospector"][..]),
    ] {
        for path in paths {
            let found = rows(&table, "PRM document", path).into_iter().filter(|l| l.ends_with(path)).count();
            assert_eq!(found, 1, "{service} {path}:\n{table}");
        }
        for doc in [format!("/openapi/{service}.json"), format!("/openapi/{service}.3.0.json")] {
            assert_eq!(rows(&table, "OpenAPI as generated", &doc).len(), 1, "{doc}:\n{table}");
        }
    }
    assert_eq!(rows(&table, "tools/list as generated", "/api/mcp").len(), 1, "{table}");
    let summary = table.lines().last().unwrap();
    assert!(summary.contains(" passed, 0 failed"), "{summary}");

    // A spec whose list_credentials needs vault:write: the server (which asks for vault:read) fails
    // the challenge, the 403 and the tool's rows for that operation, and nothing else.
    let changed = tempfile::tempdir().unwrap();
    edited_spec(changed.path(), rescoped("list_credentials", "GET /credentials", "vault:read", "vault:write"));
    let spec = changed.path().to_str().unwrap();
    // (Each run's 401 checks count against this host's anonymous limits: the prospector's 60 a
    // minute allow three full runs, so the runs that need one service only name it.)
    let failed = conformance(&["--url", &url, "--data-dir", data, "--spec", spec, "--service", "vault"]);
    assert_eq!(failed.code, Some(1), "{}{}", failed.stdout, failed.stderr);
    let fails: Vec<&str> = failed.stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    let subject = "GET /api/v1/credentials (list_credentials)";
    assert!(fails.iter().any(|l| l.contains("401 without a token") && l.contains(subject)), "{}", failed.stdout);
    assert!(fails.iter().any(|l| l.contains("403 one tier below") && l.contains(subject)), "{}", failed.stdout);
    assert!(fails.iter().any(|l| l.contains("tools/call one tier below") && l.contains("vault.list_credentials")));
    assert!(fails.iter().any(|l| l.contains("tool SCOPE line") && l.contains("vault.list_credentials")));
    // The documents differ too (the operation's security and the tool's description).
    assert!(fails.iter().any(|l| l.contains("OpenAPI as generated") && l.contains("/openapi/vault.json")));
    assert!(fails.iter().any(|l| l.contains("tools/list as generated")));
    assert!(failed.stdout.contains(r#"scope="vault:read""#), "the failure shows what was served:\n{}", failed.stdout);
    assert!(
        fails
            .iter()
            .all(|l| l.contains("list_credentials") || l.contains("/openapi/vault") || l.contains("tools/list")),
        "only what the edit changed fails:\n{}",
        fails.join("\n")
    );
    assert!(failed.stdout.lines().last().unwrap().contains(&format!(" {} failed", fails.len())));

    // A spec whose plan allows 700 a minute: every metered answer's headers name the served 600.
    let changed = tempfile::tempdir().unwrap();
    edited_spec(changed.path(), |text| text.replacen("per_minute = 600", "per_minute = 700", 1));
    let spec = changed.path().to_str().unwrap();
    let failed = conformance(&["--url", &url, "--data-dir", data, "--spec", spec, "--service", "vault"]);
    assert_eq!(failed.code, Some(1), "{}{}", failed.stdout, failed.stderr);
    let limit = "x-ratelimit-limit is 600, not a limit of the default plan (700/min, 100000/day)";
    for op in vault_api::vault::OPERATIONS.iter().filter(|op| op.rate_limited) {
        let subject = format!("{} {} ({})", op.method.as_str(), op.full_path, op.id);
        let row = failed.stdout.lines().position(|l| l.contains("401 without a token") && l.contains(&subject));
        let reason = row.and_then(|i| failed.stdout.lines().nth(i + 1)).unwrap_or_default();
        assert!(reason.contains(limit), "{subject}: {reason}\n{}", failed.stdout);
    }

    // A spec whose store_credential needs only vault:read: the server refuses the kit's vault:read
    // token, so with --admission that operation and its tool fail to be admitted.
    let changed = tempfile::tempdir().unwrap();
    edited_spec(changed.path(), rescoped("store_credential", "POST /credentials", "vault:write", "vault:read"));
    let spec = changed.path().to_str().unwrap();
    let failed = conformance(&["--url", &url, "--data-dir", data, "--spec", spec, "--service", "vault", "--admission"]);
    assert_eq!(failed.code, Some(1), "{}{}", failed.stdout, failed.stderr);
    let fails: Vec<&str> = failed.stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        fails.iter().any(|l| l.contains("admitted at its tier") && l.contains("(store_credential) with vault:read")),
        "{}",
        failed.stdout
    );
    assert!(
        fails.iter().any(|l| l.contains("tools/call admitted at its tier") && l.contains("vault.store_credential"))
    );
    assert!(failed.stdout.contains("answered 403, expected the gate to admit it"), "{}", failed.stdout);

    // The spec as the repository has it conforms through --spec too.
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/prospector");
    let same =
        conformance(&["--url", &url, "--data-dir", data, "--spec", spec.to_str().unwrap(), "--service", "prospector"]);
    assert_eq!(same.code, Some(0), "{}{}", same.stdout, same.stderr);
    assert!(same.stdout.lines().skip(1).all(|l| l.contains("prospector") || l.contains("checks (prospector")));

    // Without the server's key nothing is sent: exit 2 and why.
    let empty = tempfile::tempdir().unwrap();
    let stopped = conformance(&["--url", &url, "--data-dir", empty.path().to_str().unwrap()]);
    assert_eq!(stopped.code, Some(2), "{}", stopped.stderr);
    assert!(stopped.stderr.contains("holds no signing key"), "{}", stopped.stderr);
    assert!(!empty.path().join("signing-key.pem").exists(), "no key is made in the wrong directory");
    let port = free_port();
    let nobody = conformance(&["--url", &format!("http://127.0.0.1:{port}"), "--data-dir", data]);
    assert_eq!(nobody.code, Some(2), "{}", nobody.stdout);
    assert!(nobody.stderr.starts_with(&format!("error: cannot reach http://127.0.0.1:{port}")), "{}", nobody.stderr);
    let unknown = conformance(&["--url", &url, "--data-dir", data, "--service", "billing"]);
    assert_eq!(unknown.code, Some(2));
    assert!(unknown.stderr.contains("--service billing: no such service (there are: vault, prospector)"));
}
