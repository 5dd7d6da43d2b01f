//! The service as a whole: its settings, wire format and error model, scopes, error catalog and roles, and webhooks.

use std::collections::BTreeSet;

use indexmap::IndexMap;

use crate::ir::{Model, Ty};
use crate::spec::{Location, PRELUDE, Spec};

use super::*;

/// An event type is dotted snake_case words (`note.changed`), and its payload a model of body
/// fields: a receiver reads it as the JSON a response would be.
pub(super) fn check_webhooks(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
    for (name, w) in &spec.webhooks {
        let place = Place::Webhook(name.clone());
        if !name.split('.').all(|w| is_snake(w) && !w.is_empty()) {
            c.push(&place, "the event type is not dotted snake_case words", "name it like `note.changed`");
        }
        match models.get(&w.payload) {
            None => {
                c.push(&place, format!("payload model `{}` is not declared", w.payload), "declare it under [models]")
            }
            Some(m) if m.fields.iter().any(|f| f.location() != Location::Body) => c.push(
                &place,
                format!("payload model `{}` has fields outside the body", w.payload),
                "a webhook's payload is a JSON body: use a model of body fields",
            ),
            Some(m) if m.fields.iter().any(|f| f.ty == Ty::File) => c.push(
                &place,
                format!("payload model `{}` has a file field", w.payload),
                "send a link to the file instead",
            ),
            Some(_) => {}
        }
        for tag in &w.tags {
            if !spec.service.tags.iter().any(|t| &t.name == tag) {
                c.push(&place, format!("unknown tag `{tag}`"), "declare it under [[service.tags]]");
            }
        }
    }
}

pub(super) fn check_service(c: &mut Collector, spec: &Spec) {
    let s = &spec.service;
    if !is_snake(&s.name) {
        c.push(
            "[service] name",
            format!("`{}` is not snake_case", s.name),
            "use lowercase letters, digits and `_`, starting with a letter",
        );
    }
    for (what, path) in [("base_path", Some(&s.base_path)), ("mcp_path", s.mcp_path.as_ref())] {
        if let Some(p) = path
            && (!p.starts_with('/') || p.ends_with('/') || p.contains('{'))
        {
            c.push(
                format!("[service] {what}"),
                format!("`{p}` is not an absolute path without a trailing slash or parameters"),
                "write it like `/api/v1`",
            );
        }
    }
    let well_known = "/.well-known/oauth-protected-resource";
    for (what, paths) in [("metadata_paths", &s.metadata_paths), ("mcp_metadata_paths", &s.mcp_metadata_paths)] {
        for p in paths {
            if !p.starts_with('/') || p.ends_with('/') || p.contains('{') || !p.contains(well_known) {
                c.push(
                    format!("[service] {what}"),
                    format!("`{p}` is not an absolute path naming `{well_known}`"),
                    format!("write it like `{well_known}` or `/api/v1{well_known}`"),
                );
            }
        }
    }
    if s.mcp_path.is_none() && (!s.mcp_metadata_paths.is_empty() || s.mcp_instructions.is_some()) {
        c.push(
            "[service]",
            "mcp_metadata_paths and mcp_instructions describe an MCP endpoint, but mcp_path is not set",
            "set mcp_path, or remove them",
        );
    }
    check_wire(c, &spec.wire);
    let p = &spec.pagination;
    if p.default_per_page < 1 || p.default_per_page > p.max_per_page {
        c.push(
            "[pagination]",
            format!("default_per_page {} is outside 1..={}", p.default_per_page, p.max_per_page),
            "pick a default between 1 and max_per_page",
        );
    }
    if let Some(rl) = &spec.rate_limits {
        if !rl.plans.contains_key(&rl.default_plan) {
            c.push(
                "[rate_limits] default_plan",
                format!("plan `{}` is not declared", rl.default_plan),
                format!("use one of: {}", rl.plans.keys().cloned().collect::<Vec<_>>().join(", ")),
            );
        }
        for (name, plan) in &rl.plans {
            if plan.per_minute == 0 || plan.per_day < plan.per_minute {
                c.push(
                    format!("[rate_limits.plans.{name}]"),
                    "per_minute must be at least 1 and per_day at least per_minute",
                    "fix the plan's numbers",
                );
            }
        }
    }
}

pub(super) fn check_wire(c: &mut Collector, wire: &crate::spec::Wire) {
    let Some(base) = &wire.problem_types else { return };
    if wire.errors != crate::spec::ErrorFormat::Problem {
        c.push(
            "[wire] problem_types",
            "names the base URI of problem types, but errors are not written as problem details",
            "set `errors = \"problem\"`, or remove problem_types",
        );
    }
    let absolute = base.starts_with("https://") || base.starts_with("http://");
    if !absolute || !base.ends_with('/') || base.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
        c.push(
            "[wire] problem_types",
            format!("`{base}` is not an absolute http(s) URI ending in `/`"),
            "write it like `https://api.example.com/problems/`; each problem's type is it followed by the code",
        );
    }
}

/// An error model must hold each role it names at a field of the right type (through nested
/// models for a dotted path), and every other field on the way must be optional: the platform
/// writes only what it knows of an error.
pub(super) fn check_error_model(c: &mut Collector, m: &crate::spec::ErrorModel, models: &IndexMap<String, Model>) {
    let place = &Place::WireErrors;
    let Some(root) = models.get(&m.model) else {
        c.push(place, format!("model `{}` is not declared", m.model), "declare it under [models], or name another");
        return;
    };
    // Fields the roles fill, by model name.
    let mut filled: Vec<(String, String)> = Vec::new();
    for (role, path) in m.roles() {
        let mut model = root;
        let segments: Vec<&str> = path.split('.').collect();
        for (i, segment) in segments.iter().enumerate() {
            let Some(field) = model.fields.iter().find(|f| f.name == *segment) else {
                c.push(
                    place,
                    format!("{role} = `{path}`: model `{}` has no field `{segment}`", model.name),
                    format!("name a field of `{}`, or nested fields joined by `.`", model.name),
                );
                break;
            };
            filled.push((model.name.clone(), field.name.clone()));
            let last = i + 1 == segments.len();
            if !last {
                match &field.ty {
                    Ty::Model(inner) if models.contains_key(inner) => model = &models[inner],
                    _ => {
                        c.push(
                            place,
                            format!("{role} = `{path}`: `{}.{segment}` is not a model", model.name),
                            "only a model field can hold nested fields",
                        );
                        break;
                    }
                }
                continue;
            }
            let fits = match role {
                "code" | "message" | "request_id" => field.ty == Ty::String,
                "status" => field.ty == Ty::Integer,
                _ => field.ty == Ty::Json || field.ty == Ty::Map(Box::new(Ty::Json)),
            };
            if !fits {
                let want = match role {
                    "code" | "message" | "request_id" => "string",
                    "status" => "integer",
                    _ => "json or map<json>",
                };
                c.push(
                    place,
                    format!("{role} = `{path}`: field `{}.{segment}` is not of type {want}", model.name),
                    format!("give the field type {want}, or name another"),
                );
            }
        }
    }
    // Every other field of the models on the paths must be optional.
    let mut seen: Vec<&str> = Vec::new();
    for (model_name, _) in &filled {
        if seen.contains(&model_name.as_str()) {
            continue;
        }
        seen.push(model_name);
        for f in &models[model_name].fields {
            if f.required() && !filled.iter().any(|(m, n)| m == model_name && n == &f.name) {
                c.push(
                    place,
                    format!("field `{model_name}.{}` is required, but no role of the error model fills it", f.name),
                    "make it optional, or name it as one of code, message, status, details, request_id",
                );
            }
        }
    }
}

pub(super) fn check_scopes(c: &mut Collector, spec: &Spec) {
    let scopes = &spec.security.scopes;
    if scopes.is_empty() {
        c.push("[security]", "the scope catalog is empty", "declare at least one [[security.scopes]]");
    }
    let mut seen = BTreeSet::new();
    for s in scopes {
        if !seen.insert(&s.name) {
            c.push(format!("scope `{}`", s.name), "declared twice", "remove the duplicate [[security.scopes]] entry");
        }
        for imp in &s.implies {
            if !scopes.iter().any(|d| &d.name == imp) {
                c.push(
                    format!("scope `{}`", s.name),
                    format!("implies unknown scope `{imp}`"),
                    "declare it under [[security.scopes]] or remove it from `implies`",
                );
            }
        }
    }
    // A cycle would make two tiers equal; the hierarchy must be strict.
    for s in scopes {
        let mut stack: Vec<&String> = s.implies.iter().collect();
        let mut visited = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == &s.name {
                c.push(
                    format!("scope `{}`", s.name),
                    "implies itself through a cycle",
                    "make `implies` point only at lower tiers",
                );
                break;
            }
            if visited.insert(n)
                && let Some(d) = scopes.iter().find(|d| &d.name == n)
            {
                stack.extend(d.implies.iter());
            }
        }
    }
}

pub(super) fn check_errors(c: &mut Collector, spec: &Spec) {
    for (code, e) in &spec.errors {
        if !(400..=599).contains(&e.status) {
            c.push(
                format!("error `{code}`"),
                format!("status {} is not an error status", e.status),
                "use a 4xx or 5xx status",
            );
        }
    }
    let r = &spec.error_roles;
    let status_of = |role: &str| PRELUDE.iter().find(|(r, ..)| *r == role).map(|p| p.1).unwrap_or_default();
    for (role, code) in r.assigned() {
        check_role(c, spec, role, code, status_of(role));
    }
    if let Some(code) = &r.conflict {
        check_role(c, spec, "conflict", code, 409);
    }
    for (what, code) in [
        ("internal error", &r.internal),
        ("request timeout", &r.request_timeout),
        ("unavailable error", &r.unavailable),
    ] {
        if !r.service_wide.contains(code) {
            c.push(
                "[error_roles] service_wide",
                format!("does not list the {what} `{code}`"),
                "every operation can answer it (a server fault, a slow request, unreachable storage): add it",
            );
        }
    }
    for code in &r.service_wide {
        if !spec.errors.contains_key(code) {
            c.push(
                "[error_roles] service_wide",
                format!("undeclared error code `{code}`"),
                format!("declare [errors.\"{code}\"] or remove it"),
            );
        }
    }
}

pub(super) fn scope_names(spec: &Spec) -> String {
    spec.security.scopes.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// Error role `role` points at `code`, which the catalog declares with `status`.
pub(super) fn check_role(c: &mut Collector, spec: &Spec, role: &str, code: &str, status: u16) {
    match spec.errors.get(code) {
        None => c.push(
            format!("[error_roles] {role}"),
            format!("undeclared error code `{code}`"),
            format!("declare [errors.\"{code}\"] with status {status}"),
        ),
        Some(e) if e.status != status => c.push(
            format!("[error_roles] {role}"),
            format!("`{code}` answers HTTP {} but this role needs {status}", e.status),
            format!("point the role at a code with status {status}"),
        ),
        Some(_) => {}
    }
}
