//! Developer tasks behind `cargo xtask`: regenerate `generated/` from `spec/`, or check that it
//! is up to date.

pub mod sdk;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// The workspace root (the folder holding `spec/` and `generated/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Folders of an output folder that are entirely generator output.
const OUTPUT_DIRS: &[&str] = &["src", "openapi", "mcp"];

/// Every spec folder of the workspace and the crate folder its output goes to: the platform's own
/// two services, and the example service built on the platform as a user's would be (its spec and
/// its generated crate beside its implementation).
pub const PROJECTS: &[(&str, &str)] = &[("spec", "generated"), ("services/notes/spec", "services/notes/api")];
/// The JSON Schema of the spec format, written beside the specs.
const SCHEMA_PATH: &str = "spec/spec.schema.json";

/// Runs the generator over every project's `*.toml` specs ([`PROJECTS`]) and returns every output
/// file, keyed by its path relative to `root`, Rust files formatted with the workspace's rustfmt
/// settings.
pub fn render(root: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    for (spec, output) in PROJECTS {
        let texts = spec_texts(root, spec)?;
        let specs: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        let files = codegen::generate(&specs).map_err(|e| anyhow::anyhow!("the spec in {spec}/ is invalid:\n{e}"))?;
        for f in files {
            let text = if f.path.ends_with(".rs") { rustfmt(root, &f.text)? } else { f.text };
            out.insert(PathBuf::from(output).join(&f.path), text);
        }
    }
    out.insert(PathBuf::from(SCHEMA_PATH), codegen::spec_schema());
    Ok(out)
}

fn rustfmt(root: &Path, text: &str) -> Result<String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout", "--config-path"])
        .arg(root.join("rustfmt.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running rustfmt (install it with `rustup component add rustfmt`)")?;
    child.stdin.take().context("rustfmt stdin")?.write_all(text.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("rustfmt failed on generated code: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// Every file currently under the generator's output folders, relative to `root`.
fn existing(root: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> =
        PROJECTS.iter().flat_map(|(_, output)| OUTPUT_DIRS.iter().map(move |d| root.join(output).join(d))).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root)?.to_path_buf();
                out.insert(rel, std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    let schema = root.join(SCHEMA_PATH);
    if schema.exists() {
        out.insert(PathBuf::from(SCHEMA_PATH), std::fs::read_to_string(schema)?);
    }
    Ok(out)
}

/// Every `*.toml` file of the spec folder `dir` (relative to `root`) as (path relative to `root`,
/// text), in name order.
fn spec_texts(root: &Path, dir: &str) -> Result<Vec<(String, String)>> {
    let spec_dir = root.join(dir);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&spec_dir)
        .with_context(|| format!("reading {}", spec_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            Ok((p.strip_prefix(root).unwrap_or(p).display().to_string(), text))
        })
        .collect()
}

fn median(mut v: Vec<std::time::Duration>) -> std::time::Duration {
    v.sort();
    v[v.len() / 2]
}

/// Times generation and sizes its output; prints a Markdown report for BENCHMARKS.md.
pub fn bench_generate(root: &Path, runs: usize) -> Result<String> {
    use std::time::Instant;
    let texts = spec_texts(root, PROJECTS[0].0)?;
    let specs: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let mut pure = Vec::new();
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        codegen::generate(&specs).map_err(|e| anyhow::anyhow!("{e}"))?;
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
        "| measure | median of {runs} runs |\n|---|---|\n| `codegen::generate` (both specs, in process) | {:.1} ms |\n| `render` = generate + rustfmt of every `.rs` file | {:.1} ms |\n\n",
        median(pure).as_secs_f64() * 1e3,
        median(full).as_secs_f64() * 1e3
    );
    out.push_str("| service | operations | Rust lines | Rust lines / operation | OpenAPI 3.1 lines | MCP descriptor lines |\n|---|---|---|---|---|---|\n");
    for (name, text) in &texts {
        let api = codegen::load(name, text).map_err(|e| anyhow::anyhow!("{e}"))?;
        let svc = api.name().to_string();
        let count = |prefix: &str| -> usize {
            files.iter().filter(|(p, _)| p.to_string_lossy().starts_with(prefix)).map(|(_, t)| t.lines().count()).sum()
        };
        let rust = count(&format!("generated/src/{svc}/"));
        let ops = api.operations.len();
        out.push_str(&format!(
            "| {svc} | {ops} | {rust} | {} | {} | {} |\n",
            rust / ops.max(1),
            count(&format!("generated/openapi/{svc}.json")),
            count(&format!("generated/mcp/{svc}.tools.json"))
        ));
    }
    Ok(out)
}

/// Writes the generator's output under `root`, removing stale files. Returns how many files
/// were written.
pub fn generate(root: &Path) -> Result<usize> {
    let files = render(root)?;
    for stale in existing(root)?.keys().filter(|p| !files.contains_key(*p)) {
        std::fs::remove_file(root.join(stale))?;
    }
    for (path, text) in &files {
        let full = root.join(path);
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::read_to_string(&full).ok().as_deref() != Some(text) {
            std::fs::write(&full, text)?;
        }
    }
    Ok(files.len())
}

/// How the committed output differs from a fresh generation.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Drift {
    /// Files the generator would add.
    pub added: Vec<PathBuf>,
    /// Files the generator would remove.
    pub removed: Vec<PathBuf>,
    /// Files whose contents would change.
    pub changed: Vec<PathBuf>,
}

impl Drift {
    /// Nothing differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (what, list) in [("added", &self.added), ("removed", &self.removed), ("changed", &self.changed)] {
            for p in list {
                writeln!(f, "  {what}: {}", p.display())?;
            }
        }
        Ok(())
    }
}

/// Regenerates into a temporary folder and compares the whole output tree with the committed one.
pub fn check(root: &Path) -> Result<Drift> {
    let fresh = render(root)?;
    // Write the fresh tree out, as a reviewer can inspect it, then compare file by file.
    let tmp = tempfile::tempdir()?;
    for (path, text) in &fresh {
        let full = tmp.path().join(path);
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(full, text)?;
    }
    let committed = existing(root)?;
    let mut drift = Drift::default();
    for (path, text) in &fresh {
        let written = std::fs::read_to_string(tmp.path().join(path))?;
        debug_assert_eq!(&written, text);
        match committed.get(path) {
            None => drift.added.push(path.clone()),
            Some(old) if old != &written => drift.changed.push(path.clone()),
            Some(_) => {}
        }
    }
    drift.removed = committed.keys().filter(|p| !fresh.contains_key(*p)).cloned().collect();
    Ok(drift)
}
