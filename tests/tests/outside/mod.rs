//! Crates outside this workspace as a test builds and runs them: pinned to this workspace's lock
//! file and profiles, built offline into its target folder (sharing its dependencies), and their
//! binaries served on a free port until dropped.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// The workspace's target folder, where outside crates build too.
pub fn target() -> PathBuf {
    workspace().join("target")
}

/// `manifest` with this workspace's `[profile]` sections appended, and its lock file copied
/// beside it into `dir` (so the crate builds offline with the versions tested here).
pub fn pin(dir: &Path, manifest: &str) -> String {
    let root = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    format!("{manifest}\n{}", &root[root.find("[profile").expect("the workspace's profiles")..])
}

/// The manifest of a standalone project (as `specwright-codegen new-service` writes it) with the
/// published Specwright crates pointed at this workspace (they are not on the registry this
/// machine reaches), pinned as [`pin`] does.
pub fn local_manifest(dir: &Path, manifest: &str) -> String {
    for package in ["specwright-support", "specwright-runtime", "specwright-conformance"] {
        assert!(
            manifest.contains(&format!("package = \"{package}\", ")),
            "expected a dependency on {package}:\n{manifest}"
        );
    }
    pin(dir, &local_paths(manifest))
}

/// `manifest` with every published Specwright crate it depends on pointed at this workspace.
pub fn local_paths(manifest: &str) -> String {
    let mut text = manifest.to_string();
    for (package, folder) in [
        ("specwright-support", "support"),
        ("specwright-runtime", "runtime"),
        ("specwright-codegen", "codegen"),
        ("specwright-conformance", "conformance"),
    ] {
        let from = format!("package = \"{package}\", ");
        text = text.replace(&from, &format!("{from}path = \"{}\", ", workspace().join(folder).display()));
    }
    text
}

/// A standalone project (what `specwright-codegen new-service` writes: [`codegen::scaffold::standalone`]
/// with `files` in place of its own where they share a path) written into `root` with the
/// published crates pointed at this workspace, and its API generated into `generated/`.
pub fn lay_out(root: &Path, files: Vec<(String, String)>) {
    for (path, text) in files {
        let full = root.join(&path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        let text = match path.as_str() {
            "Cargo.toml" => local_manifest(root, &text),
            "generated/Cargo.toml" => local_paths(&text),
            _ => text,
        };
        std::fs::write(full, text).unwrap();
    }
    codegen::project::generate(&root.join("spec"), &root.join("generated"), None).unwrap();
}

/// `cargo build --offline --quiet` (plus `args`) of the crate or workspace at `dir`, into
/// [`target`]: whether it succeeded, and its stderr.
pub fn build(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet"])
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `127.0.0.1:PORT` with a port free a moment ago.
pub fn free_addr() -> String {
    format!("127.0.0.1:{}", std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port())
}

/// `BIN token TENANT SCOPE` of a service binary whose settings are `{env}_ADDR` and
/// `{env}_DATA_DIR` (as `runtime::Config::from_env` reads them): a token of its data
/// directory's signing key.
pub fn token(bin: &Path, env: &str, addr: &str, data: &Path, tenant: &str, scope: &str) -> String {
    let out = Command::new(bin)
        .args(["token", tenant, scope])
        .env(format!("{env}_ADDR"), addr)
        .env(format!("{env}_DATA_DIR"), data)
        .output()
        .expect("run the binary's token command");
    assert!(
        out.status.success(),
        "expected `{} token` to succeed: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}
