//! Developer tasks behind `cargo xtask`: regenerate every service's API crate from its spec
//! (`spec/NAME/` → `generated/NAME/`), or check that it is up to date.

pub mod import_corpus;
pub mod new_service;
pub mod sdk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use codegen::project;
pub use codegen::project::Drift;

/// The workspace root (the folder holding `spec/`, `generated/` and `services/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Every spec folder of the workspace and the crate folder its output goes to: one per service
/// (`spec/NAME/` → `generated/NAME/`, as `new-service` writes it), in name order.
pub fn projects(root: &Path) -> Vec<(String, String)> {
    let mut services: Vec<String> = std::fs::read_dir(root.join(SPEC_DIR))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir() && root.join(GENERATED_DIR).join(e.file_name()).join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    services.sort();
    services.into_iter().map(|s| (format!("{SPEC_DIR}/{s}"), format!("{GENERATED_DIR}/{s}"))).collect()
}

/// The folder holding one spec folder per service (each with its `released/` contract).
pub const SPEC_DIR: &str = "spec";
/// The folder holding one generated API crate per service.
pub const GENERATED_DIR: &str = "generated";
/// The JSON Schema of the spec format, written beside the specs.
pub const SCHEMA_PATH: &str = "spec/spec.schema.json";

/// Runs the generator over every project's `*.toml` specs ([`projects`]) and returns every output
/// file, keyed by its path relative to `root`, Rust files formatted with the workspace's rustfmt
/// settings.
pub fn render(root: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    for (spec, output) in projects(root) {
        let files = render_project(root, &spec)?;
        out.extend(files.into_iter().map(|(path, text)| (Path::new(&output).join(path), text)));
    }
    out.insert(PathBuf::from(SCHEMA_PATH), codegen::spec_schema());
    Ok(out)
}

/// The output of the spec folder `spec` (relative to `root`), formatted with the workspace's
/// rustfmt settings, keyed by path relative to its output folder.
fn render_project(root: &Path, spec: &str) -> Result<BTreeMap<PathBuf, String>> {
    project::render(&root.join(spec), spec, Some(&root.join("rustfmt.toml")))
}

/// Every file currently under the generator's output folders, relative to `root`.
fn existing(root: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    for (_, output) in projects(root) {
        let files = project::existing(&root.join(&output))?;
        out.extend(files.into_iter().map(|(path, text)| (Path::new(&output).join(path), text)));
    }
    let schema = root.join(SCHEMA_PATH);
    if schema.exists() {
        out.insert(PathBuf::from(SCHEMA_PATH), std::fs::read_to_string(schema)?);
    }
    Ok(out)
}

fn median(mut v: Vec<std::time::Duration>) -> std::time::Duration {
    v.sort();
    v[v.len() / 2]
}

/// Times generation and sizes its output; prints a Markdown report for BENCHMARKS.md.
pub fn bench_generate(root: &Path, runs: usize) -> Result<String> {
    use std::time::Instant;
    let mut texts = Vec::new();
    for (spec, output) in projects(root) {
        texts.extend(project::spec_texts(&root.join(&spec), &spec)?.into_iter().map(|(n, t)| (n, t, output.clone())));
    }
    let mut pure = Vec::new();
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        for (name, text, _) in &texts {
            codegen::generate(&[(name.as_str(), text.as_str())]).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        pure.push(t.elapsed());
    }
    let mut full = Vec::new();
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        render(root)?;
        full.push(t.elapsed());
    }
    let files = render(root)?;
    let mut out = format!(
        "| measure | median of {runs} runs |\n|---|---|\n| `codegen::generate` (every spec, in process) | {:.1} ms |\n| `render` = generate + rustfmt of every `.rs` file | {:.1} ms |\n\n",
        median(pure).as_secs_f64() * 1e3,
        median(full).as_secs_f64() * 1e3
    );
    out.push_str("| service | operations | Rust lines | Rust lines / operation | OpenAPI 3.1 lines | MCP descriptor lines |\n|---|---|---|---|---|---|\n");
    for (name, text, output) in &texts {
        let api = codegen::load(name, text).map_err(|e| anyhow::anyhow!("{e}"))?;
        let svc = api.name().to_string();
        let count = |prefix: &str| -> usize {
            files.iter().filter(|(p, _)| p.to_string_lossy().starts_with(prefix)).map(|(_, t)| t.lines().count()).sum()
        };
        let rust = count(&format!("{output}/src/{svc}/"));
        let ops = api.operations.len();
        out.push_str(&format!(
            "| {svc} | {ops} | {rust} | {} | {} | {} |\n",
            rust / ops.max(1),
            count(&format!("{output}/openapi/{svc}.json")),
            count(&format!("{output}/mcp/{svc}.tools.json"))
        ));
    }
    Ok(out)
}

/// Writes the generator's output under `root`, removing stale files. Returns how many files
/// were written.
pub fn generate(root: &Path) -> Result<usize> {
    let mut written = 0;
    for (spec, output) in projects(root) {
        let files = render_project(root, &spec)?;
        written += project::write(&root.join(output), &files)?;
    }
    let schema = codegen::spec_schema();
    if std::fs::read_to_string(root.join(SCHEMA_PATH)).ok() != Some(schema.clone()) {
        std::fs::write(root.join(SCHEMA_PATH), schema)?;
    }
    Ok(written + 1)
}

/// Regenerates in memory and compares the whole output tree with the committed one.
pub fn check(root: &Path) -> Result<Drift> {
    Ok(Drift::between(&render(root)?, &existing(root)?))
}
