//! The crates a user's project builds on (specwright-support, specwright-runtime,
//! specwright-codegen, specwright-conformance) and the generator's command (specwright-codegen-cli)
//! package for crates.io: `cargo package` accepts them without a metadata
//! warning, and each packaged manifest depends on the others by version, never by path.

use std::path::Path;
use std::process::Command;

const CRATES: [&str; 5] = [
    "specwright-support",
    "specwright-runtime",
    "specwright-codegen",
    "specwright-codegen-cli",
    "specwright-conformance",
];

#[test]
fn the_platform_crates_package_with_versioned_dependencies_and_full_metadata() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = tempfile::tempdir().unwrap();
    let mut args = vec!["package", "--no-verify", "--offline", "--allow-dirty"];
    for c in CRATES {
        args.extend(["-p", c]);
    }
    let out = Command::new(env!("CARGO"))
        .args(&args)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target.path())
        .output()
        .expect("run cargo package");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "expected cargo package to succeed, got:\n{stderr}");
    // Its only warnings are that codegen's tests, which read the workspace, stay out of the package.
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && !l.contains("is not included in the published package"))
        .collect();
    assert!(warnings.is_empty(), "expected no packaging warning, got:\n{}", warnings.join("\n"));

    for c in CRATES {
        let file = target.path().join(format!("package/{c}-{}.crate", env!("CARGO_PKG_VERSION")));
        let manifest = Command::new("tar")
            .arg("-xzOf")
            .arg(&file)
            .arg(format!("{c}-{}/Cargo.toml", env!("CARGO_PKG_VERSION")))
            .output()
            .expect("run tar");
        let manifest = String::from_utf8(manifest.stdout).unwrap();
        let parsed: toml::Table = manifest.parse().unwrap_or_else(|e| panic!("{c}: packaged Cargo.toml: {e}"));
        let package = &parsed["package"];
        for key in ["description", "license", "readme", "documentation", "keywords", "categories", "rust-version"] {
            assert!(package.get(key).is_some(), "expected {c}'s packaged manifest to have `{key}`");
        }
        for section in ["dependencies", "build-dependencies"] {
            for (name, dep) in parsed.get(section).and_then(|d| d.as_table()).into_iter().flatten() {
                assert!(
                    dep.get("path").is_none() && (dep.is_str() || dep.get("version").is_some()),
                    "expected {c}'s {section}.{name} to be a versioned registry dependency, got {dep}"
                );
            }
        }
    }
}
