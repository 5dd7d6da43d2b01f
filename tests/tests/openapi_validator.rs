//! Both emitted OpenAPI documents (3.1 and 3.0.3) pass a third-party validator:
//! `openapi-spec-validator` from PyPI. `.ci/run` installs it and sets `SPECWRIGHT_CI=1`, which
//! turns a missing validator into a failure; elsewhere the test says it skipped.

use std::process::Command;

fn validator() -> Option<String> {
    let candidates = [std::env::var("SPECWRIGHT_OPENAPI_VALIDATOR").ok(), Some("openapi-spec-validator".to_string())];
    candidates.into_iter().flatten().find(|c| Command::new(c).arg("--help").output().is_ok_and(|o| o.status.success()))
}

#[test]
fn emitted_documents_pass_openapi_spec_validator() {
    let Some(bin) = validator() else {
        assert!(
            std::env::var("SPECWRIGHT_CI").is_err(),
            "SPECWRIGHT_CI is set but openapi-spec-validator is not installed"
        );
        eprintln!(
            "SKIPPED emitted_documents_pass_openapi_spec_validator: openapi-spec-validator not installed (.ci/run installs it)"
        );
        return;
    };
    let dir = xtask::workspace_root().join("generated/openapi");
    for name in ["vault.json", "vault.3.0.json", "prospector.json", "prospector.3.0.json"] {
        let out = Command::new(&bin).arg(dir.join(name)).output().expect("run validator");
        assert!(
            out.status.success(),
            "{name} fails openapi-spec-validator:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
