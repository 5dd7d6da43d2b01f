//! The platform's invariants, enforced rather than only written down (ARCHITECTURE.md):
//! - the runtime names no service: not a service's name, scope or plan, anywhere in its source,
//!   migrations or manifest (every feature reaches a service through what it registers);
//! - the runtime depends on no service, generated crate or application;
//! - (its modules form no cycle: `layering.rs`, for every crate).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use tests::files;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The services this workspace builds on the platform.
fn services() -> [&'static support::ServiceInfo; 3] {
    [&vault_api::vault::SERVICE, &prospector_api::prospector::SERVICE, &notes::SERVICE]
}

/// What names a service: its name (as a word, any case), its scopes, its plans (as string
/// literals: plan names are common words).
fn names() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in services() {
        out.push((s.name.to_lowercase(), format!("the service name {}", s.name)));
        for scope in s.scopes {
            out.push((scope.name.to_lowercase(), format!("the scope {} of {}", scope.name, s.name)));
        }
        for plan in s.plans {
            out.push((format!("\"{}\"", plan.name), format!("the plan {} of {}", plan.name, s.name)));
        }
    }
    out
}

/// `text` holds `needle` as a whole word (not inside a longer identifier or word).
fn holds_word(text: &str, needle: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(needle).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + needle.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

#[test]
fn the_platform_crates_name_no_service() {
    let runtime = workspace().join("runtime");
    let mut sources = files(&runtime.join("src"), &["rs", "html", "css", "js"]);
    sources.extend(files(&runtime.join("migrations"), &["sql"]));
    sources.extend(files(&runtime.join("examples"), &["rs"]));
    sources.push(runtime.join("Cargo.toml"));
    // What a service's generated code builds on, and the generator.
    for platform in ["support", "codegen"] {
        sources.extend(files(&workspace().join(platform).join("src"), &["rs"]));
        sources.push(workspace().join(platform).join("Cargo.toml"));
    }
    let mut found = Vec::new();
    for path in &sources {
        let text = std::fs::read_to_string(path).unwrap().to_lowercase();
        for (needle, what) in names() {
            // The example service's name is also a word (the importer's notes on a document, a
            // file name in a test): outside the runtime only its scopes and plans name it.
            if needle == "notes" && !path.starts_with(&runtime) {
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                if holds_word(line, &needle) {
                    found.push(format!("{}:{}: {what}", path.strip_prefix(workspace()).unwrap().display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the platform must reach services only through what they register, but its source names them:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_runtime_depends_on_no_service_or_generated_crate() {
    let manifest = std::fs::read_to_string(workspace().join("runtime/Cargo.toml")).unwrap();
    let manifest: toml::Table = manifest.parse().unwrap();
    let mut deps = BTreeSet::new();
    for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(t) = manifest.get(section).and_then(|v| v.as_table()) {
            deps.extend(t.keys().cloned());
        }
    }
    // Every crate of a service (its implementation and its generated API) and the binary.
    let mut forbidden = vec!["specwright".to_string()];
    for folder in ["services", "generated"] {
        for dir in std::fs::read_dir(workspace().join(folder)).unwrap() {
            let manifest = dir.unwrap().path().join("Cargo.toml");
            let manifest: toml::Table = std::fs::read_to_string(manifest).unwrap().parse().unwrap();
            forbidden.push(manifest["package"]["name"].as_str().unwrap().to_string());
        }
    }
    assert!(forbidden.len() >= 7, "expected the three services' crates, found {forbidden:?}");
    for name in &forbidden {
        assert!(!deps.contains(name), "runtime depends on {name}: {deps:?}");
    }
}

#[tokio::test]
async fn the_builder_refuses_two_services_on_one_path() {
    // The vault and the notes example both serve under /api/v1: one server cannot hold both.
    let dir = tempfile::tempdir().unwrap();
    let config = runtime::Config::new("127.0.0.1:0".parse().unwrap(), None, dir.path().to_path_buf());
    let platform = runtime::Platform::open(config).await.unwrap();
    let vault = vault::Vault::open(&platform, vault::LeasePolicy::default()).await.unwrap();
    let notes = notes::Notes::open(&platform).await.unwrap();
    let built =
        runtime::Server::builder(&platform).service(vault_api::vault::api(vault)).service(notes::api(notes)).build();
    assert_eq!(built.expect_err("a conflict").to_string(), "the path /api/v1 is claimed by both vault and notes");
}
