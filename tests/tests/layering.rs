//! The layering ARCHITECTURE.md draws, enforced on the sources:
//! - no crate's modules import one another in a circle (a module that reaches itself through
//!   the modules it uses), at the granularity of files, seen through glob imports too (a name a
//!   file calls or names as a type, reached through `use super::*`, is an import of the module
//!   defining it);
//! - in `support` and in every service, no module imports back up from the crate root (or a
//!   parent module): what modules share lives in a module of its own, and the root only
//!   declares, re-exports and registers;
//! - no service binary links the generator: `specwright-codegen` is not among the dependencies
//!   of a crate under `services/` (it may be a build dependency, which runs at build time only);
//! - every hand-written source file over 700 lines is listed, with its reason, in
//!   ARCHITECTURE.md's "Files over about 700 lines".

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    xtask::workspace_root()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    tests::files(dir, &["rs"])
}

/// A module's path in its crate (`""` for the root, `oauth::clients`, …).
type Module = String;

/// The module a source file under `src` defines: `lib.rs`/`main.rs` the root, `a/mod.rs` `a`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts.join("::")
}

fn parent(module: &str) -> Module {
    module.rsplit_once("::").map_or(String::new(), |(p, _)| p.to_string())
}

/// Whether `ancestor` is `module` or contains it.
fn is_ancestor(ancestor: &str, module: &str) -> bool {
    ancestor.is_empty() || module == ancestor || module.starts_with(&format!("{ancestor}::"))
}

/// The paths a line names after `crate::` or `super::` (groups `{…}` spread out, nested ones
/// too), each as its segments with the prefix first.
fn paths_in(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for prefix in ["crate", "super"] {
        for (at, _) in line.match_indices(&format!("{prefix}::")) {
            // `crate::` ending an identifier (`my_crate::`) is not a path of this crate, nor is a
            // macro's `$crate::` (its caller's path to this crate's root re-exports).
            if at > 0 && line[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let mut rest = &line[at + prefix.len() + 2..];
            tree(&mut rest, vec![prefix.to_string()], &mut out);
        }
    }
    out
}

/// Reads one use tree from the start of `rest` (`a::b`, `a::{b, c::{d}}`, `a::*`), adding each
/// path it names, behind `base`, to `out`.
fn tree(rest: &mut &str, mut base: Vec<String>, out: &mut Vec<Vec<String>>) {
    loop {
        *rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            *rest = group;
            loop {
                tree(rest, base.clone(), out);
                *rest = rest.trim_start();
                if let Some(next) = rest.strip_prefix(',') {
                    *rest = next;
                    if rest.trim_start().starts_with('}') {
                        continue;
                    }
                } else {
                    break;
                }
                if rest.trim_start().is_empty() {
                    break;
                }
            }
            *rest = rest.trim_start().strip_prefix('}').unwrap_or(rest);
            return;
        }
        let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if word.is_empty() {
            // `*`, `}` or the end: the path so far.
            *rest = rest.strip_prefix('*').unwrap_or(rest);
            out.push(base);
            return;
        }
        *rest = &rest[word.len()..];
        base.push(word);
        match rest.strip_prefix("::") {
            Some(next) => *rest = next,
            None => {
                out.push(base);
                return;
            }
        }
    }
}

/// The module `path` (as written in module `from`) lands in: the deepest known module it names.
fn resolve(path: &[String], from: &str, known: &BTreeSet<Module>) -> Module {
    let mut base = match path[0].as_str() {
        "crate" => String::new(),
        _ => parent(from),
    };
    let mut rest = &path[1..];
    // `super::super::x`
    while rest.first().map(String::as_str) == Some("super") {
        base = parent(&base);
        rest = &rest[1..];
    }
    for seg in rest {
        let next = if base.is_empty() { seg.clone() } else { format!("{base}::{seg}") };
        if known.contains(&next) {
            base = next;
        } else {
            break;
        }
    }
    base
}

/// One crate's module graph: for each module, the modules it uses, split into those not above it
/// and its arrows up (to the root or to a module containing it).
struct Graph {
    uses: BTreeMap<Module, BTreeSet<Module>>,
    up: BTreeMap<Module, BTreeSet<Module>>,
}

fn graph(src: &Path) -> Graph {
    // Unit-test modules (`tests.rs`) read what they test, wherever it is.
    let files: Vec<PathBuf> = rust_files(src).into_iter().filter(|f| !f.ends_with("tests.rs")).collect();
    let known: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    // Unit tests (`#[cfg(test)] mod tests` at the end of a file) see their parent's items.
    let code: Vec<(Module, String)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            (module_of(src, f), text.split("#[cfg(test)]").next().unwrap_or_default().to_string())
        })
        .collect();
    let defined = definitions(&code);
    let mut g = Graph { uses: BTreeMap::new(), up: BTreeMap::new() };
    let add = |g: &mut Graph, module: &Module, target: Module| {
        if target == *module {
            return;
        }
        let edges = if is_ancestor(&target, module) { &mut g.up } else { &mut g.uses };
        edges.entry(module.clone()).or_default().insert(target);
    };
    for (module, text) in &code {
        g.uses.entry(module.clone()).or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
        for line in &lines {
            for path in paths_in(line) {
                add(&mut g, module, resolve(&path, module, &known));
            }
        }
        // A glob import (`use super::*`, `use crate::*`, `use child::*`) brings in what its
        // module defines and what that module glob-imports in turn: each such name the file
        // uses is an import of the module defining it.
        let own = &defined.1[module];
        let joined = lines.join("\n");
        let used = words(&joined);
        for target in globs(&lines, module, &known) {
            for (name, owner) in visible(&target, &code, &defined, &known, &mut BTreeSet::new()) {
                if used.contains(name.as_str()) && !own.contains(&name) {
                    add(&mut g, module, owner);
                }
            }
        }
    }
    g
}

/// The modules of this crate that `lines` (module `module`'s code) glob-import: `use super::*`,
/// `use crate::x::*`, `use self::x::*`, `use child::*`.
fn globs(lines: &[&str], module: &str, known: &BTreeSet<Module>) -> Vec<Module> {
    let mut out = Vec::new();
    for line in lines {
        let line = line.trim();
        let Some(path) = line.strip_prefix("pub use ").or_else(|| line.strip_prefix("use ")) else { continue };
        let Some(path) = path.strip_suffix("::*;") else { continue };
        let segs: Vec<String> = path.split("::").map(str::to_string).collect();
        let within = |m: &str, seg: &str| if m.is_empty() { seg.to_string() } else { format!("{m}::{seg}") };
        let target = match segs[0].as_str() {
            "crate" | "super" => resolve(&segs, module, known),
            // `self::x` and `x` (a child module) are both relative to this module.
            first => {
                let relative = if first == "self" { &segs[1..] } else { &segs[..] };
                if first != "self" && !known.contains(&within(module, first)) {
                    continue; // another crate's glob
                }
                relative.iter().fold(module.to_string(), |m, seg| within(&m, seg))
            }
        };
        if known.contains(&target) || target.is_empty() {
            out.push(target);
        }
    }
    out
}

/// Every name module `target` makes visible to a glob import of it: its own items, and those
/// of the modules it glob-imports, each with the module defining it.
fn visible(
    target: &str,
    code: &[(Module, String)],
    defined: &Definitions,
    known: &BTreeSet<Module>,
    seen: &mut BTreeSet<Module>,
) -> Vec<(String, Module)> {
    if !seen.insert(target.to_string()) {
        return Vec::new();
    }
    let mut out: Vec<(String, Module)> =
        defined.1.get(target).into_iter().flatten().map(|n| (n.clone(), target.to_string())).collect();
    if let Some((_, text)) = code.iter().find(|(m, _)| m == target) {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
        for inner in globs(&lines, target, known) {
            out.extend(visible(&inner, code, defined, known, seen));
        }
    }
    out
}

/// The items each module defines at its top level (functions, types, traits, constants,
/// statics, macros): by name, the modules defining it; by module, its names.
type Definitions = (BTreeMap<String, BTreeSet<Module>>, BTreeMap<Module, BTreeSet<String>>);

fn definitions(code: &[(Module, String)]) -> Definitions {
    let mut by_name: BTreeMap<String, BTreeSet<Module>> = BTreeMap::new();
    let mut by_module: BTreeMap<Module, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in code {
        let names = by_module.entry(module.clone()).or_default();
        for line in text.lines() {
            // Top-level items only: an indented one is a method or a nested item.
            let mut rest = line;
            for prefix in ["pub(crate) ", "pub(super) ", "pub ", "async ", "const ", "unsafe "] {
                rest = rest.strip_prefix(prefix).unwrap_or(rest);
            }
            let name = ["fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "macro_rules! "]
                .iter()
                .find_map(|k| rest.strip_prefix(k))
                .map(|r| r.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>());
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                names.insert(name.clone());
                by_name.entry(name).or_default().insert(module.clone());
            }
        }
    }
    (by_name, by_module)
}

/// The names `code` refers to, string literals left out: a type or constant (capitalised)
/// wherever it stands, a function or macro where it is called (`name(`, `name!`), not a method
/// (`.name(`) nor a local binding of the same spelling.
fn words(code: &str) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    let mut in_string = false;
    let mut start = None;
    let mut prev = ' ';
    let bytes = code.as_bytes();
    for (i, c) in code.char_indices().chain(std::iter::once((code.len(), ' '))) {
        if c == '"' && prev != '\\' {
            in_string = !in_string;
        }
        let ident = !in_string && (c.is_alphanumeric() || c == '_');
        match (ident, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let word = &code[s..i];
                let method = s > 0 && bytes[s - 1] == b'.';
                let called = matches!(c, '(' | '!');
                if word.starts_with(|c: char| c.is_ascii_uppercase()) || (called && !method) {
                    out.insert(word);
                }
                start = None;
            }
            _ => {}
        }
        prev = c;
    }
    out
}

/// Every circle among the modules: each as `a -> b -> a`.
fn cycles(uses: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let mut found = Vec::new();
    for start in uses.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(Module, Vec<Module>)> = vec![(start.clone(), vec![start.clone()])];
        while let Some((node, path)) = stack.pop() {
            for next in uses.get(&node).into_iter().flatten() {
                // An edge into a module's own descendants is its declaration's, not a circle.
                if next == start {
                    found.push(format!("{} -> {start}", path.join(" -> ")));
                } else if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    found
}

/// The source folder of every crate whose layering is held: the platform, the generator, the
/// kit, the binary and every service.
fn crates() -> Vec<PathBuf> {
    let root = workspace();
    let mut dirs: Vec<PathBuf> = ["support", "runtime", "codegen", "conformance", "specwright", "xtask"]
        .iter()
        .map(|c| root.join(c).join("src"))
        .collect();
    for service in std::fs::read_dir(root.join("services")).unwrap() {
        dirs.push(service.unwrap().path().join("src"));
    }
    dirs
}

#[test]
fn no_crate_has_modules_that_import_each_other_in_a_circle() {
    let mut circles = Vec::new();
    for src in crates() {
        let g = graph(&src);
        assert!(!g.uses.is_empty(), "expected modules under {}", src.display());
        for c in cycles(&g.uses) {
            circles.push(format!("{}: {c}", src.display()));
        }
    }
    assert!(circles.is_empty(), "modules that import each other in a circle:\n{}", circles.join("\n"));
}

#[test]
fn support_and_the_services_import_nothing_back_up_from_their_root() {
    let root = workspace();
    let mut dirs = vec![root.join("support/src")];
    for service in std::fs::read_dir(root.join("services")).unwrap() {
        dirs.push(service.unwrap().path().join("src"));
    }
    let mut up = Vec::new();
    for src in dirs {
        for (module, targets) in graph(&src).up {
            let targets: Vec<String> =
                targets.into_iter().map(|t| if t.is_empty() { "the crate root".into() } else { t }).collect();
            up.push(format!("{}: {module} -> {}", src.display(), targets.join(", ")));
        }
    }
    assert!(
        up.is_empty(),
        "modules importing back up (move what they share into a module of its own):\n{}",
        up.join("\n")
    );
}

#[test]
fn the_checks_see_a_circle_and_an_arrow_up() {
    // The parser on the forms the sources use: a group, `super`, an item of the root.
    let known: BTreeSet<Module> = ["a", "b", "b::c"].iter().map(|s| s.to_string()).collect();
    let paths = paths_in("use crate::{a::thing, b::c::{X, Y}}; let _ = super::Vault::new(); my_crate::x();");
    let resolved: Vec<Module> = paths.iter().map(|p| resolve(p, "b::c", &known)).collect();
    assert_eq!(resolved, ["a", "b::c", "b::c", "b"], "{paths:?}");
    assert!(is_ancestor(&resolved[3], "b::c") && is_ancestor("", "b::c") && !is_ancestor("a", "b::c"));
    let uses: BTreeMap<Module, BTreeSet<Module>> = [
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["a".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
    ]
    .into();
    assert_eq!(cycles(&uses), ["a -> b -> a", "b -> a -> b"]);
    // Through a glob: the names a file calls or names as types, not its locals or methods.
    let seen: Vec<&str> = words("let token = x; check(1); Kind::new(); s.method(); m!(\"f(\")").into_iter().collect();
    assert_eq!(seen, ["Kind", "check", "m", "new"]);
    let known: BTreeSet<Module> = ["a", "a::b", "c"].iter().map(|s| s.to_string()).collect();
    let lines = ["use super::*;", "use crate::c::*;", "use b::*;", "use std::collections::*;"];
    assert_eq!(globs(&lines, "a", &known), ["", "c", "a::b"]);
}

/// The workspace's crates by package name: each one's manifest, read.
fn manifests() -> BTreeMap<String, toml::Table> {
    let root = workspace();
    let workspace: toml::Table = std::fs::read_to_string(root.join("Cargo.toml")).unwrap().parse().unwrap();
    let members = workspace["workspace"]["members"].as_array().unwrap();
    members
        .iter()
        .map(|m| {
            let manifest: toml::Table =
                std::fs::read_to_string(root.join(m.as_str().unwrap()).join("Cargo.toml")).unwrap().parse().unwrap();
            (manifest["package"]["name"].as_str().unwrap().to_string(), manifest)
        })
        .collect()
}

/// The package names `manifest` depends on (normal dependencies), workspace aliases resolved to
/// the package they stand for.
fn dependencies(manifest: &toml::Table, aliases: &BTreeMap<String, String>) -> Vec<String> {
    manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .into_iter()
        .flat_map(|t| t.keys())
        .map(|k| aliases.get(k).cloned().unwrap_or_else(|| k.clone()))
        .collect()
}

#[test]
fn no_service_binary_links_the_generator() {
    let root = workspace();
    let workspace: toml::Table = std::fs::read_to_string(root.join("Cargo.toml")).unwrap().parse().unwrap();
    // `codegen = { path = …, package = "specwright-codegen" }`: the alias a manifest writes.
    let aliases: BTreeMap<String, String> = workspace["workspace"]["dependencies"]
        .as_table()
        .unwrap()
        .iter()
        .filter_map(|(alias, d)| Some((alias.clone(), d.get("package")?.as_str()?.to_string())))
        .collect();
    let manifests = manifests();
    let mut checked = 0;
    for service in std::fs::read_dir(root.join("services")).unwrap() {
        let text = std::fs::read_to_string(service.unwrap().path().join("Cargo.toml")).unwrap();
        let manifest: toml::Table = text.parse().unwrap();
        let name = manifest["package"]["name"].as_str().unwrap().to_string();
        checked += 1;
        // Every crate it links, through workspace crates.
        let mut linked = BTreeSet::new();
        let mut todo = dependencies(&manifest, &aliases);
        while let Some(dep) = todo.pop() {
            if linked.insert(dep.clone())
                && let Some(m) = manifests.get(&dep)
            {
                todo.extend(dependencies(m, &aliases));
            }
        }
        assert!(linked.contains("specwright-runtime"), "{name}: expected its dependencies, found {linked:?}");
        assert!(!linked.contains("specwright-codegen"), "{name} links the generator: {linked:?}");
    }
    assert!(checked >= 3, "expected the services' crates, checked {checked}");
    // A project `new-service` lays out runs the generator at build time only, if at all.
    let (_, text) = codegen::scaffold::standalone("pantry", None)
        .unwrap()
        .into_iter()
        .find(|(path, _)| path == "Cargo.toml")
        .unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    assert!(!dependencies(&manifest, &BTreeMap::new()).iter().any(|d| d.contains("codegen")), "{text}");
}

/// Lines of `text` before its unit tests (`#[cfg(test)]`), as ARCHITECTURE.md counts them.
fn lines_without_tests(text: &str) -> usize {
    text.split("\n#[cfg(test)]").next().unwrap_or_default().lines().count()
}

#[test]
fn every_source_file_over_700_lines_is_listed_in_architecture_with_its_reason() {
    let root = workspace();
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let section = architecture
        .split("## Files over about 700 lines")
        .nth(1)
        .expect("ARCHITECTURE.md has a section \"Files over about 700 lines\"");
    let section = section.split("\n## ").next().unwrap_or_default();
    // Hand-written sources: every crate's src/ (generated crates and snapshots are output).
    let mut dirs = crates();
    dirs.extend([root.join("codegen/cli/src"), root.join("tests/src"), root.join("xtask/bench/reference/src")]);
    let mut sources: Vec<PathBuf> = dirs.iter().flat_map(|d| rust_files(d)).collect();
    for extra in ["specwright/src/console"] {
        for e in std::fs::read_dir(root.join(extra)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "js" || x == "css" || x == "html") {
                sources.push(p);
            }
        }
    }
    let mut unlisted = Vec::new();
    let mut long = 0;
    for file in sources {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = lines_without_tests(&text);
        if lines <= 700 {
            continue;
        }
        long += 1;
        let rel = file.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
        // Listed as "- `path` (about N): reason".
        let listed = section.lines().find(|l| l.contains(&format!("`{rel}`")));
        match listed {
            Some(line) if line.split_once("):").is_some_and(|(_, why)| why.trim().len() > 10) => {}
            _ => unlisted.push(format!("{rel} ({lines} lines)")),
        }
    }
    assert!(long > 0, "expected some long files (the spec format, the feeds)");
    assert!(
        unlisted.is_empty(),
        "source files over 700 lines that ARCHITECTURE.md's \"Files over about 700 lines\" does not list with \
         their reason (`- `path` (about N): why`), split them or list them:\n{}",
        unlisted.join("\n")
    );
}
