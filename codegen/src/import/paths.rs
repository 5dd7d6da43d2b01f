//! Path parameters named apart: a parameter's name is not on the wire, so the importer may give
//! it another where the spec language or the router needs one, and every request stays the same.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::spec::Method;

use super::*;

/// The path parameters named apart, per path template (a parameter's name is not on the wire, so
/// the requests stay the same): one that an operation of the path also has a query, header or
/// top-level body field of (`id` beside a body's `id`) becomes `path_id`, in every path, so that
/// routes sharing a prefix keep naming it alike; and a parameter where another path, earlier in
/// the document, has one under the same prefix takes that one's name, as the router asks of
/// routes that share a prefix (`/a/{id}` and `/a/{thing}/b`).
pub(super) fn path_names(cx: &Cx, doc: &Value) -> BTreeMap<String, BTreeMap<String, String>> {
    let resolve = |v: &Value| cx.resolve(v).ok().cloned().unwrap_or(Value::Null);
    let paths: Vec<(&String, &Value)> =
        doc.get("paths").and_then(Value::as_object).into_iter().flat_map(|p| p.iter()).collect();
    // Per path: its parameters' names, and the other fields' names of its operations.
    let mut others: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut clashing: BTreeSet<String> = BTreeSet::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for (template, item) in &paths {
        for method in Method::ALL {
            let Some(op) = item.get(method.as_str().to_ascii_lowercase()) else { continue };
            let mut path = BTreeSet::new();
            let mut other = BTreeSet::new();
            let params = item.get("parameters").and_then(Value::as_array).into_iter().flatten();
            for p in params.chain(op.get("parameters").and_then(Value::as_array).into_iter().flatten()) {
                let p = resolve(p);
                let Some(name) = p.get("name").and_then(Value::as_str) else { continue };
                match p.get("in").and_then(Value::as_str) {
                    Some("path") => path.insert(name.to_string()),
                    Some("header") => other.insert(responses::header_field(name).unwrap_or_default()),
                    _ => other.insert(name.to_string()),
                };
            }
            let body = op.get("requestBody").map(&resolve).unwrap_or(Value::Null);
            for media in body.get("content").and_then(Value::as_object).into_iter().flat_map(|c| c.values()) {
                let schema = media.get("schema").map(&resolve).unwrap_or(Value::Null);
                property_names(&schema, &resolve, 8, &mut other);
            }
            clashing.extend(path.intersection(&other).cloned());
            taken.extend(path.iter().cloned().chain(other.iter().cloned()));
            others.entry(template.as_str()).or_default().extend(other);
        }
    }
    let apart: BTreeMap<String, String> = clashing
        .into_iter()
        .filter_map(|name| {
            // `path_{name}`, or the first of `path_{name}_2`, `_3`, … the document leaves free.
            let apart = std::iter::once(format!("path_{name}"))
                .chain((2..100).map(|n| format!("path_{name}_{n}")))
                .find(|a| !taken.contains(a))?;
            Some((name, apart))
        })
        .collect();
    // The name each prefix's parameter has (the prefix up to it, parameters blanked).
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (template, _) in &paths {
        let fields = others.get(template.as_str()).cloned().unwrap_or_default();
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        let params = support::template_params(template);
        let mut prefix = String::new();
        for segment in template.split('/').filter(|s| !s.is_empty()) {
            // A segment that is one parameter; one of several, or beside text, names none here.
            let whole = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')).filter(|n| !n.contains(['{', '}']));
            let Some(name) = whole else {
                prefix.push('/');
                prefix.push_str(segment);
                continue;
            };
            let own = apart.get(name).cloned().unwrap_or_else(|| name.to_string());
            // A name this path's other parameters have, as written or as set apart.
            let held = |n: &String| params.iter().any(|p| p == n || apart.get(*p).is_some_and(|a| a == n));
            let used = |n: &String| names.values().any(|v| v == n) || fields.contains(n) || held(n);
            let chosen = match first.get(&prefix) {
                Some(f) if *f != own && *f != name && !used(f) => f.clone(),
                Some(_) => own,
                None => {
                    first.insert(prefix.clone(), own.clone());
                    own
                }
            };
            if chosen != name {
                names.insert(name.to_string(), chosen);
            }
            prefix.push_str("/{}");
        }
        if !names.is_empty() {
            out.insert(template.to_string(), names);
        }
    }
    out
}

/// The names of `schema`'s properties, its `allOf` members' (what import merges into one model)
/// and its union members' too, `depth` references deep at most.
fn property_names(schema: &Value, resolve: &dyn Fn(&Value) -> Value, depth: usize, out: &mut BTreeSet<String>) {
    out.extend(schema.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.keys().cloned()));
    if depth == 0 {
        return;
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for member in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            property_names(&resolve(member), resolve, depth - 1, out);
        }
    }
}

/// `path` with its parameters renamed as `names` says (`/things/{id}` → `/things/{path_id}`).
pub(super) fn named_apart(path: &str, names: Option<&BTreeMap<String, String>>) -> String {
    let mut out = path.to_string();
    for (name, apart) in names.into_iter().flatten() {
        out = out.replace(&format!("{{{name}}}"), &format!("{{{apart}}}"));
    }
    out
}
