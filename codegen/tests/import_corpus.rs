//! Every document of the import corpus imports with a report that names each of its operations,
//! the spec it gives loads and generates, and the OpenAPI document generated from that spec says
//! what the source says of each imported operation: the same path and method, its parameters
//! (name, place, required), its JSON request and success bodies (properties and required ones,
//! through `$ref` and `allOf`), its success status and its response headers, and an OAuth scope.
//!
//! The corpus is Specwright's own documents (always) and every 3.0 and 3.1 document of the npm
//! package `@readme/oas-examples` (the version `.ci/package.json` pins), read from
//! `SPECWRIGHT_OAS_EXAMPLES` or `target/ci-node/node_modules/@readme/oas-examples`; without it
//! the test says it skipped that part.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use codegen::import::{self, McpSelection, Options, Outcome};
use serde_json::Value;

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The corpus's folder; where `SPECWRIGHT_OAS_EXAMPLES` names one, it must be there.
fn corpus() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SPECWRIGHT_OAS_EXAMPLES").map(PathBuf::from) {
        assert!(dir.join("3.1").is_dir(), "SPECWRIGHT_OAS_EXAMPLES={} holds no 3.1 folder", dir.display());
        return Some(dir);
    }
    let dir = workspace().join("target/ci-node/node_modules/@readme/oas-examples");
    dir.join("3.1").is_dir().then_some(dir)
}

fn documents(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            documents(&p, out);
        } else if p.extension().is_some_and(|e| e == "json" || e == "yaml") {
            out.push(p);
        }
    }
}

/// Follows local `$ref`s.
fn resolve<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..32 {
        match v.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => v = doc.pointer(pointer).unwrap_or(&Value::Null),
            None => break,
        }
    }
    v
}

/// What the comparison reads of a schema: its kind, an object's properties and required ones
/// (through `allOf`), an array's items, a union's number of members.
fn shape(doc: &Value, schema: &Value, depth: u8) -> Value {
    let s = resolve(doc, schema);
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        let (mut props, mut required) = (BTreeSet::new(), BTreeSet::new());
        for member in std::iter::once(s).chain(all.iter().map(|m| resolve(doc, m))) {
            props.extend(
                member.get("properties").and_then(Value::as_object).into_iter().flatten().map(|(k, _)| k.clone()),
            );
            required.extend(
                member
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
        }
        return serde_json::json!({"object": props, "required": required});
    }
    if s.get("oneOf").or(s.get("anyOf")).is_some() {
        // A union: how many members it has, a member that is a union lending its own, and alike
        // members once (`oneOf: [string, Pet, string]` is one of a string and a `Pet`).
        let mut members = BTreeSet::new();
        union_members(doc, s, &mut members);
        if members.len() == 1 {
            let only = s.get("oneOf").or(s.get("anyOf")).and_then(Value::as_array).into_iter().flatten();
            let only = only.map(|m| resolve(doc, m)).find(|m| m.get("type") != Some(&Value::from("null")));
            return only.map_or(Value::Null, |m| shape(doc, m, depth));
        }
        return serde_json::json!({"union": members.len()});
    }
    let ty = match s.get("type") {
        Some(Value::Array(types)) => {
            types.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("any").to_string()
        }
        Some(Value::String(t)) => t.clone(),
        _ if s.get("properties").is_some() => "object".into(),
        _ => "any".into(),
    };
    match ty.as_str() {
        "object" if s.get("properties").is_some() => {
            let required: BTreeSet<&str> =
                s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            // A required member without a schema is a member of any value: declared or not, the
            // same object.
            let mut props: BTreeSet<&str> = s["properties"].as_object().unwrap().keys().map(String::as_str).collect();
            props.extend(required.iter().copied());
            serde_json::json!({"object": props, "required": required})
        }
        "array" if depth > 0 => {
            serde_json::json!({"array": shape(doc, s.get("items").unwrap_or(&Value::Null), depth - 1)})
        }
        "integer" => "number".into(),
        other => other.into(),
    }
}

/// The members of union `s` told apart by their schema (as text; a `$ref` by what it names),
/// its members' members for those that are unions, `null` left out.
fn union_members(doc: &Value, s: &Value, out: &mut BTreeSet<String>) {
    let members = s.get("oneOf").or(s.get("anyOf")).and_then(Value::as_array).into_iter().flatten();
    for m in members.filter(|m| resolve(doc, m).get("type") != Some(&Value::from("null"))) {
        let resolved = resolve(doc, m);
        if resolved.get("oneOf").or(resolved.get("anyOf")).is_some() {
            union_members(doc, resolved, out);
        } else {
            // Without its words: `{type: string, title: …}` and `{type: string}` are one member.
            let mut plain = resolved.clone();
            if let Some(o) = plain.as_object_mut() {
                o.retain(|k, _| !["title", "description", "example", "examples"].contains(&k.as_str()));
            }
            out.insert(m.get("$ref").map_or_else(|| plain.to_string(), |r| r.to_string()));
        }
    }
}

fn json_content(v: &Value) -> Option<&Value> {
    v.get("content")?
        .as_object()?
        .iter()
        .find(|(m, _)| m.contains("json"))
        .map(|(_, c)| c.get("schema").unwrap_or(&Value::Null))
}

/// Parameters of an operation (its own and its path's): `(place, lowercased name for headers) → required`.
fn parameters(doc: &Value, item: &Value, op: &Value) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    for p in op.get("parameters").into_iter().chain(item.get("parameters")).flat_map(|v| v.as_array()).flatten() {
        let p = resolve(doc, p);
        let place = p["in"].as_str().unwrap_or_default().to_string();
        let mut name = p["name"].as_str().unwrap_or_default().to_string();
        if place == "header" {
            name = name.to_ascii_lowercase();
        }
        if !out.iter().any(|(pl, n, _)| *pl == place && *n == name) {
            out.push((place.clone(), name, p.get("required") == Some(&Value::Bool(true)) || place == "path"));
        }
    }
    out
}

/// Headers the platform answers or reads itself, per its features.
const PLATFORM_HEADERS: [&str; 14] = [
    "if-match",
    "if-none-match",
    "if-range",
    "range",
    "etag",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "retry-after",
    "x-request-id",
    "deprecation",
    "sunset",
    "x-total-count",
    "link",
];

/// The differences between what `source` and `emitted` say of one operation.
fn differences(
    source: &Value,
    emitted: &Value,
    path: &str,
    method: &str,
    notes: &[String],
    errors_kept: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    // A path parameter's name is not on the wire: the emitted path is the one of the same shape.
    let blank =
        |p: &str| p.split('/').map(|seg| if seg.contains('{') { "{}" } else { seg }).collect::<Vec<_>>().join("/");
    let e_path = emitted["paths"]
        .as_object()
        .and_then(|ps| ps.keys().find(|k| *k == path).or_else(|| ps.keys().find(|k| blank(k) == blank(path))))
        .cloned()
        .unwrap_or_default();
    let (s_item, e_item) = (&source["paths"][path], &emitted["paths"][e_path.as_str()]);
    let (s_op, e_op) = (&s_item[method], &e_item[method]);
    if !e_op.is_object() {
        return vec![format!("the emitted document has no {method} {path}")];
    }
    let emitted_params = parameters(emitted, e_item, e_op);
    for (place, name, required) in parameters(source, s_item, s_op) {
        // OpenAPI: header parameters named `Accept`, `Content-Type` or `Authorization` are ignored.
        let ignored = place == "header"
            && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str());
        if ignored
            || place == "path"
            || PLATFORM_HEADERS.contains(&name.as_str())
            || (place == "query" && (name == "page" || name == "per_page"))
        {
            continue;
        }
        match emitted_params.iter().find(|(p, n, _)| *p == place && *n == name) {
            None => out.push(format!("parameter `{name}` in {place} is missing")),
            Some((_, _, r)) if *r != required => out.push(format!("parameter `{name}` required: {required} → {r}")),
            _ => {}
        }
    }
    let s_body = s_op.get("requestBody").map(|b| resolve(source, b));
    let e_body = e_op.get("requestBody");
    if s_body.is_some() != e_body.is_some() {
        out.push(format!("request body: {} → {}", s_body.is_some(), e_body.is_some()));
    }
    if let (Some(s), Some(e)) = (s_body.and_then(json_content), e_body.and_then(json_content)) {
        let (s, e) = (shape(source, s, 2), shape(emitted, e, 2));
        if s != e && s != "any" {
            out.push(format!("request body schema {s} → {e}"));
        }
    }
    let responses = |doc: &Value, op: &Value| -> Vec<(u16, Value)> {
        let all = op["responses"].as_object();
        // `default` beside no success is the success (imported as `status_documented = "default"`).
        let lone = !all.into_iter().flatten().any(|(k, _)| k.starts_with(['1', '2', '3']));
        all.into_iter()
            .flatten()
            .filter_map(|(k, v)| {
                let status = if k == "default" && lone { 200 } else { k.parse::<u16>().ok()? };
                Some((status, resolve(doc, v).clone()))
            })
            .filter(|(s, _)| (200..400).contains(s) && *s != 206 && *s != 304)
            .collect()
    };
    let (s_resp, e_resp) = (responses(source, s_op), responses(emitted, e_op));
    let Some((e_status, e_r)) = e_resp.first() else {
        // A source that states no success is kept so (`status_documented = "none"`).
        if !s_resp.is_empty() {
            out.push("the emitted operation has no success answer".into());
        }
        return out;
    };
    match s_resp.first() {
        None if *e_status == 204 && notes.iter().any(|n| n.contains("states no success answer")) => {}
        None => out.push(format!("success status: none → {e_status}")),
        Some((s_status, s_r)) => {
            if s_status != e_status {
                out.push(format!("success status {s_status} → {e_status}"));
            }
            if let (Some(s), Some(e)) = (json_content(s_r), json_content(e_r)) {
                let (s, e) = (shape(source, s, 2), shape(emitted, e, 2));
                if s != e && s != "any" {
                    out.push(format!("success body {s} → {e}"));
                }
            }
            let e_headers: BTreeSet<String> = e_r
                .get("headers")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(k, _)| k.to_ascii_lowercase())
                .collect();
            for h in
                s_r.get("headers").and_then(Value::as_object).into_iter().flatten().map(|(k, _)| k.to_ascii_lowercase())
            {
                if !PLATFORM_HEADERS.contains(&h.as_str()) && !e_headers.contains(&h) {
                    out.push(format!("response header `{h}` is missing"));
                }
            }
        }
    }
    // Where the import kept the document's error format, each error answer it describes is the same.
    for (status, s_r) in s_op["responses"].as_object().into_iter().flatten() {
        // `429` comes with `[rate_limits]`, which no document states (the report says so).
        if !errors_kept || !status.parse::<u16>().is_ok_and(|s| s >= 400 && s != 429) {
            continue;
        }
        let s_r = resolve(source, s_r);
        let Some((media, s_c)) = s_r.get("content").and_then(Value::as_object).and_then(|c| c.iter().next()) else {
            continue;
        };
        let e_c = &resolve(emitted, &e_op["responses"][status])["content"][media];
        if !e_c.is_object() {
            out.push(format!("error {status} in {media} is missing"));
            continue;
        }
        let (s, e) = (shape(source, &s_c["schema"], 1), shape(emitted, &e_c["schema"], 1));
        // Problem details may carry members of their own (RFC 9457 section 3.2): the platform's
        // (`code`, `request_id`, the details) are added, and it writes no `instance`.
        let members = |v: &Value| -> BTreeSet<String> {
            v["object"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
        };
        let problem_kept = media.ends_with("problem+json")
            && members(&s).iter().filter(|m| *m != "instance").all(|m| members(&e).contains(m));
        if s != e && !problem_kept {
            out.push(format!("error {status} body {s} → {e}"));
        }
    }
    let scoped = e_op["security"].as_array().into_iter().flatten().any(|req| {
        req.as_object().into_iter().flatten().any(|(_, scopes)| scopes.as_array().is_some_and(|s| !s.is_empty()))
    });
    // `security: []` is a public operation, and stays one.
    let public = |op: &Value| op["security"].as_array().is_some_and(Vec::is_empty);
    if public(s_op) && !public(e_op) {
        out.push("the public operation needs a token".into());
    } else if !scoped && !public(s_op) {
        out.push("the emitted operation names no OAuth scope".into());
    }
    out
}

/// The differences between what `source` says of its webhook `event` and what `emitted` says of
/// it as `name`: the payload (the body, or its `data` where the body is `{type, timestamp, data}`).
fn webhook_differences(source: &Value, emitted: &Value, event: &str, name: &str) -> Vec<String> {
    let hooks = |doc: &Value| doc.get("webhooks").or_else(|| doc.get("x-webhooks")).cloned().unwrap_or_default();
    let body = |doc: &Value, hook: &Value| -> Value {
        let schema = resolve(doc, &hook["post"]["requestBody"]["content"]["application/json"]["schema"]).clone();
        let data = &schema["properties"]["data"];
        if schema["properties"]["type"].is_object() && data.is_object() {
            shape(doc, data, 1)
        } else {
            shape(doc, &schema, 1)
        }
    };
    let (s, e) = (&hooks(source)[event], &hooks(emitted)[name]);
    if !e.is_object() {
        return vec![format!("the emitted document has no webhook {name}")];
    }
    let (s, e) = (body(source, s), body(emitted, e));
    if s != e { vec![format!("payload {s} → {e}")] } else { Vec::new() }
}

/// Imports `path` and checks the report and the round trip; the problems found.
fn check(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let source = import::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let options = Options {
        scope_by_method: Some(("api:read".into(), "api:write".into())),
        mcp: McpSelection::All,
        ..Options::default()
    };
    let imported = match import::import(&source, &options) {
        Ok(i) => i,
        Err(e) => return vec![format!("import failed: {e}")],
    };
    let report = &imported.report;
    let mut problems = Vec::new();
    // No silent drops: every operation of the document has its line in the report.
    for (p, item) in source["paths"].as_object().into_iter().flatten() {
        for m in METHODS.iter().filter(|m| item.get(**m).is_some()) {
            let label = format!("{} {p}", m.to_ascii_uppercase());
            match report.entries.iter().find(|e| e.operation == label) {
                None => problems.push(format!("{label} is not in the report")),
                Some(e) => {
                    if let Outcome::NotImported(why) = &e.outcome
                        && (why.is_empty() || why.iter().any(|(c, at)| c.is_empty() || !at.starts_with('/')))
                    {
                        problems.push(format!("{label}: a drop without its construct and pointer: {why:?}"));
                    }
                }
            }
        }
    }
    for (event, item) in
        source.get("webhooks").or_else(|| source.get("x-webhooks")).and_then(Value::as_object).into_iter().flatten()
    {
        for m in METHODS.iter().filter(|m| item.get(**m).is_some()) {
            let label = if *m == "post" {
                format!("WEBHOOK {event}")
            } else {
                format!("WEBHOOK {event} {}", m.to_ascii_uppercase())
            };
            if !report.entries.iter().any(|e| e.operation == label) {
                problems.push(format!("{label} is not in the report"));
            }
        }
    }
    let file = format!("{}.toml", imported.name);
    let files = match codegen::generate(&[(file.as_str(), imported.toml.as_str())]) {
        Ok(f) => f,
        Err(e) => return vec![format!("the imported spec does not generate: {e}")],
    };
    let emitted: Value = serde_json::from_str(
        &files.iter().find(|f| f.path == format!("openapi/{}.json", imported.name)).expect("a 3.1 document").text,
    )
    .unwrap();
    let errors_kept = report
        .service
        .iter()
        .any(|n| n.starts_with("errors are") && !n.starts_with("errors are written in Specwright's error envelope"));
    for e in &report.entries {
        let notes = match &e.outcome {
            Outcome::Exact => Vec::new(),
            Outcome::Normalised(n) => n.clone(),
            Outcome::NotImported(_) => continue,
        };
        let (method, p) = e.operation.split_once(' ').unwrap();
        if method == "WEBHOOK" {
            problems.extend(
                webhook_differences(&source, &emitted, p, &e.id).into_iter().map(|d| format!("{}: {d}", e.operation)),
            );
            continue;
        }
        for d in differences(&source, &emitted, p, &method.to_ascii_lowercase(), &notes, errors_kept) {
            problems.push(format!("{}: {d}", e.operation));
        }
    }
    problems
}

fn run(paths: &[PathBuf]) {
    let mut failures = Vec::new();
    for p in paths {
        let problems = check(p);
        if !problems.is_empty() {
            failures.push(format!("{}:\n  {}", p.display(), problems.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} documents:\n{}", failures.len(), paths.len(), failures.join("\n"));
}

#[test]
fn specwrights_own_documents_import_back_to_the_same_contract() {
    let root = workspace();
    run(&[
        root.join("generated/vault/openapi/vault.json"),
        root.join("generated/prospector/openapi/prospector.json"),
        root.join("generated/notes/openapi/notes.json"),
        root.join("generated/notes/openapi/notes.3.0.json"),
    ]);
}

#[test]
fn the_oas_examples_corpus_imports_with_every_operation_reported_and_the_same_contract() {
    let Some(dir) = corpus() else {
        eprintln!(
            "skipped: the @readme/oas-examples corpus (install .ci/package.json into target/ci-node, or set \
             SPECWRIGHT_OAS_EXAMPLES)"
        );
        return;
    };
    let mut paths = Vec::new();
    documents(&dir.join("3.0"), &mut paths);
    documents(&dir.join("3.1"), &mut paths);
    assert!(paths.len() > 50, "the corpus holds its documents: {}", paths.len());
    run(&paths);
}

/// Importing the document Specwright wrote of a service gives back that service's contract, as
/// the contract diff reads it, but for what no OpenAPI document carries: its rate-limit plans,
/// the stored tokens it accepts and its prompts (which no document describes; its tools come back
/// from `x-mcp-tool`, `x-mcp-task` and `x-mcp-asks-input`, its resources from
/// `x-mcp-resource`), and for what the notes
/// showcase's document names differently: its unions' variant models and the variants of an
/// untagged union (no document names them), and a file's size limit (a description says it).
#[test]
fn specwrights_own_documents_import_back_to_their_contract() {
    let root = workspace();
    let carried_by_no_document = ["plan-stricter", "security-scheme-changed", "prompt-removed"];
    for (spec, doc, name, also) in [
        ("spec/vault/vault.toml", "generated/vault/openapi/vault.json", "vault", &[][..]),
        ("spec/prospector/prospector.toml", "generated/prospector/openapi/prospector.json", "prospector", &[][..]),
        (
            "spec/notes/notes.toml",
            "generated/notes/openapi/notes.json",
            "notes",
            &["union-variant-removed", "union-variant-added", "input-field-narrowed", "input-field-loosened"][..],
        ),
    ] {
        let old = codegen::load(spec, &std::fs::read_to_string(root.join(spec)).unwrap()).unwrap();
        let source = import::parse(&std::fs::read_to_string(root.join(doc)).unwrap()).unwrap();
        let options = Options { name: Some(name.into()), ..Options::default() };
        let imported = import::import(&source, &options).unwrap_or_else(|e| panic!("{doc}: {e}"));
        assert!(!imported.report.partial(), "{doc}:\n{}", imported.report);
        let new = codegen::load(&format!("{name}.toml"), &imported.toml).unwrap_or_else(|e| panic!("{e}"));
        let report = codegen::diff::compare(&[old], &[new]);
        let unexpected: Vec<String> = report
            .changes
            .iter()
            .filter(|c| !carried_by_no_document.contains(&c.rule) && !also.contains(&c.rule))
            .map(ToString::to_string)
            .collect();
        assert!(unexpected.is_empty(), "{doc} imports back with other changes:\n{}", unexpected.join("\n"));
    }
}
