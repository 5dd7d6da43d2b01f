//! Generation into a folder: the part that `cargo xtask generate`, the `specwright-codegen`
//! command and a build script share. It reads a spec folder's `*.toml` files, runs
//! [`crate::generate`], formats the Rust files with rustfmt, and writes the output folder
//! (removing what an earlier generation left there and this one does not produce), or compares
//! the folder with a fresh generation.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// The folders of an output folder that hold nothing but generator output: files under them that
/// a generation does not produce are removed. Anything else in the folder (a `Cargo.toml`, a
/// README) is the user's.
pub const OUTPUT_DIRS: &[&str] = &["src", "openapi", "mcp"];

/// Every `*.toml` file of the spec folder `dir`, in name order, as (label, text). A label is
/// `label_dir/NAME.toml`: what the generator's messages name the file by.
pub fn spec_texts(dir: &Path, label_dir: &str) -> Result<Vec<(String, String)>> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the spec folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    if names.is_empty() {
        bail!("the spec folder {} holds no .toml spec", dir.display());
    }
    names
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let label = if label_dir.is_empty() { name } else { format!("{}/{name}", label_dir.trim_end_matches('/')) };
            Ok((label, text))
        })
        .collect()
}

/// What generating from the spec folder `spec_dir` writes into its output folder, keyed by path
/// relative to that folder; Rust files formatted by rustfmt (with `rustfmt_config` when given).
/// `label_dir` prefixes the spec files' names in messages.
pub fn render(spec_dir: &Path, label_dir: &str, rustfmt_config: Option<&Path>) -> Result<BTreeMap<PathBuf, String>> {
    let mut out = unformatted(spec_dir, label_dir)?;
    for (path, text) in out.iter_mut() {
        if path.extension().is_some_and(|x| x == "rs") {
            *text = rustfmt(text, rustfmt_config)?;
        }
    }
    Ok(out)
}

/// As [`render`], without rustfmt: what a build script compiles, where no one reads the text.
pub fn unformatted(spec_dir: &Path, label_dir: &str) -> Result<BTreeMap<PathBuf, String>> {
    let texts = spec_texts(spec_dir, label_dir)?;
    let specs: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let files =
        crate::generate(&specs).map_err(|e| anyhow::anyhow!("the spec in {} is invalid:\n{e}", spec_dir.display()))?;
    Ok(files.into_iter().map(|f| (PathBuf::from(f.path), f.text)).collect())
}

/// Every spec of the folder `dir`, loaded and validated (for [`crate::diff::compare`]).
pub fn load_dir(dir: &Path, label_dir: &str) -> Result<Vec<crate::ir::Api>> {
    spec_texts(dir, label_dir)?
        .iter()
        .map(|(name, text)| {
            crate::load(name, text).map_err(|e| anyhow::anyhow!("the spec in {} is invalid:\n{e}", dir.display()))
        })
        .collect()
}

/// Every contract change from the spec folder `old` to `new` ([`crate::diff::compare`]), each
/// folder named in messages as given.
pub fn diff(old: &Path, new: &Path) -> Result<crate::diff::Report> {
    let (old_apis, new_apis) = (load_dir(old, &old.to_string_lossy())?, load_dir(new, &new.to_string_lossy())?);
    Ok(crate::diff::compare(&old_apis, &new_apis))
}

/// The OpenAPI document at `path` (JSON or YAML, 3.0 or 3.1), with what its `$ref`s name in other
/// files (beside it, or in folders relative to it) brought in ([`crate::bundle`]).
pub fn read_openapi(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc = crate::import::parse(&text)?;
    let label = path.to_string_lossy().replace('\\', "/");
    let mut read = |file: &str| std::fs::read_to_string(file).map_err(|e| e.to_string());
    crate::bundle::bundle(doc, &label, &mut read).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// `text` formatted by rustfmt (edition 2024), with `config` when given.
pub fn rustfmt(text: &str, config: Option<&Path>) -> Result<String> {
    let mut command = Command::new("rustfmt");
    command.args(["--edition", "2024", "--emit", "stdout"]);
    if let Some(config) = config {
        command.arg("--config-path").arg(config);
    }
    let mut child = command
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

/// Every file under the [`OUTPUT_DIRS`] of the output folder `out`, keyed by path relative to it.
pub fn existing(out: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut files = BTreeMap::new();
    let mut stack: Vec<PathBuf> = OUTPUT_DIRS.iter().map(|d| out.join(d)).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(out)?.to_path_buf();
                files.insert(rel, std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    Ok(files)
}

/// Generates from the spec folder `spec_dir` into the output folder `out` ([`render`], then
/// [`write`]): what `specwright-codegen generate` and `new-service` do. Returns how many files it
/// holds.
pub fn generate(spec_dir: &Path, out: &Path, rustfmt_config: Option<&Path>) -> Result<usize> {
    write(out, &render(spec_dir, &spec_dir.display().to_string(), rustfmt_config)?)
}

/// Writes `files` (from [`render`]) into the output folder `out`, removing the files under its
/// [`OUTPUT_DIRS`] that they do not include, and leaving unchanged files untouched (so a build
/// does not see them as modified). Returns how many files `files` holds.
pub fn write(out: &Path, files: &BTreeMap<PathBuf, String>) -> Result<usize> {
    for stale in existing(out)?.keys().filter(|p| !files.contains_key(*p)) {
        std::fs::remove_file(out.join(stale))?;
    }
    for (path, text) in files {
        let full = out.join(path);
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        if std::fs::read_to_string(&full).ok().as_deref() != Some(text) {
            std::fs::write(&full, text).with_context(|| format!("writing {}", full.display()))?;
        }
    }
    Ok(files.len())
}

/// How an output folder differs from a fresh generation.
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
    /// Between `fresh` (what a generation produces) and `present` (what the folder holds), both
    /// keyed by the same relative paths.
    pub fn between(fresh: &BTreeMap<PathBuf, String>, present: &BTreeMap<PathBuf, String>) -> Drift {
        let mut drift = Drift::default();
        for (path, text) in fresh {
            match present.get(path) {
                None => drift.added.push(path.clone()),
                Some(old) if old != text => drift.changed.push(path.clone()),
                Some(_) => {}
            }
        }
        drift.removed = present.keys().filter(|p| !fresh.contains_key(*p)).cloned().collect();
        drift
    }

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
