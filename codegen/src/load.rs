//! Loading and validating a spec: TOML text in, a checked [`Api`] or every problem found out.
//!
//! Each problem names the file, the place (operation, model, field, table) and the fix, so a
//! spec author never has to read generator code to learn what is wrong.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use indexmap::IndexMap;

use crate::ir::{Api, Field, Model, Operation, Ty, path_params};
use crate::spec::{FieldDef, Location, Method, OperationDef, PRELUDE, Spec};

/// One problem in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The spec file.
    pub file: String,
    /// Where in the file: ``operation `store_credential` ``, ``model `Lead` field `score` ``, …
    pub place: String,
    /// What is wrong.
    pub problem: String,
    /// What to do about it.
    pub fix: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}; fix: {}", self.file, self.place, self.problem, self.fix)
    }
}

/// Every problem found in one spec, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}

struct Collector<'a> {
    file: &'a str,
    errors: Vec<SpecError>,
}

impl Collector<'_> {
    fn push(&mut self, place: impl Into<String>, problem: impl Into<String>, fix: impl Into<String>) {
        self.errors.push(SpecError {
            file: self.file.to_string(),
            place: place.into(),
            problem: problem.into(),
            fix: fix.into(),
        });
    }
}

fn is_snake(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z')) && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn is_pascal(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('A'..='Z')) && chars.all(|c| c.is_ascii_alphanumeric())
}

const PAGE: &str = "page";
const PER_PAGE: &str = "per_page";
/// The highest page number a list accepts.
const MAX_PAGE: u32 = 1_000_000;

/// Parses and validates one spec file. `file` is used in messages only.
pub fn load(file: &str, text: &str) -> Result<Api, SpecErrors> {
    let spec: Spec = toml::from_str(text).map_err(|e| {
        let (place, fix) = match e.span() {
            Some(r) => {
                let before = &text[..r.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
                (
                    format!("line {line}, column {column}"),
                    "correct the TOML at that position; spec/spec.schema.json lists every key",
                )
            }
            None => ("file".to_string(), "correct the TOML; spec/spec.schema.json lists every key"),
        };
        SpecErrors(vec![SpecError {
            file: file.to_string(),
            place,
            problem: e.message().trim().to_string(),
            fix: fix.into(),
        }])
    })?;
    let mut spec = spec;
    let mut c = Collector { file, errors: Vec::new() };
    for (index, op) in spec.operations.iter_mut().enumerate() {
        if let Err((problem, fix)) = op.resolve_route() {
            let place = if op.id.is_empty() {
                format!("[[operations]] entry #{}", index + 1)
            } else {
                format!("operation `{}`", op.id)
            };
            c.push(place, problem, fix);
        }
    }
    // After the routes: which prelude codes a service needs depends on its methods.
    let spec = spec.with_prelude();
    check_service(&mut c, &spec);
    check_scopes(&mut c, &spec);
    check_errors(&mut c, &spec);
    check_enums(&mut c, &spec);
    let mut models = resolve_models(&mut c, &spec);
    check_unions(&mut c, &spec, &models);
    if let crate::spec::ErrorFormat::Model(m) = &spec.wire.errors {
        check_error_model(&mut c, m, &models);
    }
    let operations = check_operations(&mut c, &spec, &mut models);
    check_default_places(&mut c, &spec, &models);
    check_finite(&mut c, &models);
    check_header_models(&mut c, &spec, &models);
    check_ambiguous_paths(&mut c, &spec);
    check_webhooks(&mut c, &spec, &models);
    if c.errors.is_empty() {
        Ok(Api { file: file.to_string(), spec, models, operations })
    } else {
        Err(SpecErrors(c.errors))
    }
}

/// An event type is dotted snake_case words (`note.changed`), and its payload a model of body
/// fields: a receiver reads it as the JSON a response would be.
fn check_webhooks(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
    for (name, w) in &spec.webhooks {
        let place = format!("webhook `{name}`");
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

fn check_service(c: &mut Collector, spec: &Spec) {
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

fn check_wire(c: &mut Collector, wire: &crate::spec::Wire) {
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
fn check_error_model(c: &mut Collector, m: &crate::spec::ErrorModel, models: &IndexMap<String, Model>) {
    let place = "[wire] errors";
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

fn check_scopes(c: &mut Collector, spec: &Spec) {
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

fn check_errors(c: &mut Collector, spec: &Spec) {
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

fn check_enums(c: &mut Collector, spec: &Spec) {
    for (name, e) in &spec.enums {
        let place = format!("enum `{name}`");
        if !is_pascal(name) {
            c.push(&place, "name is not PascalCase", "rename it, e.g. `LeadStatus`");
        }
        if spec.models.contains_key(name) {
            c.push(&place, "a model has the same name", "rename one of them");
        }
        if e.values.is_empty() {
            c.push(&place, "has no values", "list at least one value");
        }
        let mut seen = BTreeSet::new();
        let mut rust: HashMap<String, &str> = HashMap::new();
        for v in &e.values {
            if !crate::ir::is_enum_value(&v.name) {
                c.push(&place, format!("value `{}` is too long or holds a control character", v.name), WIRE_NAME_FIX);
            } else if !seen.insert(v.name.as_str()) {
                c.push(&place, format!("value `{}` is listed twice", v.name), "remove the duplicate");
            } else if let Some(other) = rust.insert(crate::ir::rust_variant_name(&v.name), &v.name) {
                c.push(
                    &place,
                    format!("value `{}` has the Rust name of value `{other}`", v.name),
                    "rename one of them",
                );
            }
        }
        let known = |v: &str| e.values.iter().any(|x| x.name == v);
        if let Some(init) = &e.initial
            && !known(init)
        {
            c.push(&place, format!("initial state `{init}` is not a value"), "name one of the enum's values");
        }
        for (from, tos) in e.transitions.iter().flatten() {
            for v in std::iter::once(from).chain(tos) {
                if !known(v) {
                    c.push(&place, format!("transition names unknown state `{v}`"), "use the enum's values only");
                }
            }
        }
    }
}

/// What to do about a wire name the loader refuses.
const WIRE_NAME_FIX: &str = "write the name as the wire spells it, without control characters, in at most 256 bytes";

/// A union's variants are models of body fields; a tagged union's tag is none of their fields,
/// and an untagged union's variants each have a required field no other variant declares (what
/// tells a value's variant apart, on the wire and in `oneOf`).
fn check_unions(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
    for (name, u) in &spec.unions {
        let place = format!("union `{name}`");
        if !is_pascal(name) {
            c.push(&place, "name is not PascalCase", "rename it, e.g. `NoteContent`");
        }
        if spec.models.contains_key(name) || spec.enums.contains_key(name) {
            c.push(&place, "a model or enum has the same name", "rename one of them");
        }
        if u.variants.len() < 2 {
            c.push(&place, "has fewer than two variants", "list at least two, or use the model itself");
        }
        if let Some(tag) = &u.tag
            && !crate::ir::is_wire_name(tag)
        {
            c.push(&place, format!("tag `{tag}` is empty, too long or holds a control character"), WIRE_NAME_FIX);
        }
        let mut held: Vec<&Model> = Vec::new();
        let mut rust: HashMap<String, &str> = HashMap::new();
        for (variant, model) in &u.variants {
            if !crate::ir::is_wire_name(variant) {
                c.push(
                    &place,
                    format!("variant `{variant}` is empty, too long or holds a control character"),
                    WIRE_NAME_FIX,
                );
            } else if let Some(other) = rust.insert(crate::ir::rust_variant_name(variant), variant) {
                c.push(
                    &place,
                    format!("variant `{variant}` has the Rust name of variant `{other}`"),
                    "rename one of them",
                );
            }
            let Some(m) = models.get(model) else {
                c.push(
                    &place,
                    format!("variant `{variant}` holds `{model}`, which is not a model"),
                    "name a model declared under [models]",
                );
                continue;
            };
            if held.iter().any(|h| h.name == m.name) {
                c.push(
                    &place,
                    format!("model `{model}` is held by two variants"),
                    "give each variant a model of its own",
                );
            }
            if m.fields.iter().any(|f| f.location() != Location::Body) {
                c.push(
                    &place,
                    format!("variant `{variant}`: model `{model}` has fields outside the body"),
                    "a union's models hold body fields only",
                );
            }
            if m.additional.is_some() {
                c.push(
                    &place,
                    format!("variant `{variant}`: model `{model}` has additional keys, which would hide which variant a value is"),
                    "a union's models name all their fields",
                );
            }
            if let Some(tag) = &u.tag
                && m.fields.iter().any(|f| &f.name == tag)
            {
                c.push(
                    &place,
                    format!("variant `{variant}`: model `{model}` has a field `{tag}`, the union's tag"),
                    "rename the field or the tag: the tag is written beside the model's fields",
                );
            }
            held.push(m);
        }
        if u.tag.is_none() && held.len() == u.variants.len() {
            for (m, variant) in held.iter().zip(u.variants.keys()) {
                let own = m.fields.iter().any(|f| {
                    f.required() && !held.iter().any(|o| o.name != m.name && o.fields.iter().any(|g| g.name == f.name))
                });
                if !own {
                    c.push(
                        &place,
                        format!("variant `{variant}` has no required field that the other variants lack, so a value cannot be told apart"),
                        "give it such a field, or set `tag` to tag the union",
                    );
                }
            }
        }
    }
}

/// The Rust name of the map a model's additional keys are held in.
const ADDITIONAL: &str = "additional";

fn resolve_models(c: &mut Collector, spec: &Spec) -> IndexMap<String, Model> {
    let mut out = IndexMap::new();
    for (name, m) in &spec.models {
        if !is_pascal(name) {
            c.push(format!("model `{name}`"), "name is not PascalCase", "rename it, e.g. `CredentialMetadata`");
        }
        let mut fields = Vec::new();
        let mut rust_names: HashMap<String, &str> = HashMap::new();
        for (fname, f) in &m.fields {
            let place = format!("model `{name}` field `{fname}`");
            // The wire name is the API's; the Rust field is its snake case.
            if !crate::ir::is_wire_name(fname) {
                c.push(&place, "name is empty, too long or holds a control character", WIRE_NAME_FIX);
            } else if f.location == Location::Header && !crate::ir::is_header_token(&crate::ir::header_name(fname)) {
                c.push(
                    &place,
                    "a header field's name is no HTTP header name",
                    "write `request_id` for `Request-Id`, or the header's name (`X-RateLimit-Limit`)",
                );
            } else if let Some(other) = rust_names.insert(crate::ir::rust_field_name(fname), fname) {
                c.push(&place, format!("its Rust name is that of field `{other}`"), "rename one of them");
            }
            match Ty::parse(&f.ty, spec) {
                Ok(ty) => {
                    check_constraints(c, &place, f, &ty, spec);
                    fields.push(Field { name: fname.clone(), def: f.clone(), ty, injected: false });
                }
                Err((problem, fix)) => c.push(&place, problem, fix),
            }
        }
        let additional = m.additional.as_ref().and_then(|f| {
            let place = format!("model `{name}` additional keys");
            if m.fields.contains_key(ADDITIONAL) {
                c.push(
                    &place,
                    format!("field `{ADDITIONAL}` is also the name of the map that holds the other keys"),
                    "rename the field",
                );
            }
            let set: Vec<&str> = [
                (f.optional, "optional"),
                (f.nullable, "nullable"),
                (f.default.is_some(), "default"),
                (f.location != Location::Body, "in"),
                (f.deprecated, "deprecated"),
            ]
            .iter()
            .filter_map(|(on, what)| on.then_some(*what))
            .collect();
            if !set.is_empty() {
                c.push(
                    &place,
                    format!("sets {}, which only a named field may have", set.join(", ")),
                    "give the additional keys a type, a description and value constraints only",
                );
            }
            match Ty::parse(&f.ty, spec) {
                Ok(Ty::File) => {
                    c.push(&place, "a file cannot be a key's value", "give each file a field of its own");
                    None
                }
                Ok(ty) => {
                    check_constraints(c, &place, f, &ty, spec);
                    Some(Field { name: ADDITIONAL.into(), def: f.clone(), ty, injected: false })
                }
                Err((problem, fix)) => {
                    c.push(&place, problem, fix);
                    None
                }
            }
        });
        out.insert(name.clone(), Model { name: name.clone(), description: m.description.clone(), fields, additional });
    }
    out
}

fn check_constraints(c: &mut Collector, place: &str, f: &FieldDef, ty: &Ty, spec: &Spec) {
    let file = *ty == Ty::File;
    if !file && (!f.media_types.is_empty() || f.max_size.is_some()) {
        c.push(place, "`media_types` and `max_size` are for `file` fields", "remove them, or make the field a `file`");
    }
    if matches!(ty, Ty::List(t) | Ty::Map(t) if **t == Ty::File) {
        c.push(place, "a file cannot be in a list or a map", "give each file a field of its own");
    }
    if file && f.location != Location::Body {
        c.push(place, "a file travels in the body", "remove `in`");
    }
    if file && f.max_size == Some(0) {
        c.push(place, "`max_size` is 0", "give the largest size accepted, in bytes");
    }
    for m in &f.media_types {
        let token =
            |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
        if !m.split_once('/').is_some_and(|(t, s)| token(t) && (s == "*" || token(s))) {
            c.push(place, format!("media type `{m}` is not `type/subtype` or `type/*`"), "write it like `image/png`");
        }
    }
    let numeric = matches!(ty, Ty::Integer | Ty::Number);
    // String constraints on a list apply to each item.
    let stringy = matches!(ty, Ty::String) || matches!(ty, Ty::List(t) if **t == Ty::String);
    let listy = matches!(ty, Ty::List(_));
    if (f.minimum.is_some() || f.maximum.is_some()) && !numeric {
        c.push(place, "minimum/maximum apply to numbers only", "remove them or change the type");
    }
    if (f.min_length.is_some() || f.max_length.is_some() || f.pattern.is_some()) && !stringy {
        c.push(
            place,
            "min_length/max_length/pattern apply to strings and string lists only",
            "remove them or change the type",
        );
    }
    if (f.min_items.is_some() || f.max_items.is_some()) && !listy {
        c.push(place, "min_items/max_items apply to lists only", "remove them or change the type");
    }
    if let (Some(lo), Some(hi)) = (f.minimum, f.maximum)
        && lo > hi
    {
        c.push(place, format!("minimum {lo} exceeds maximum {hi}"), "swap or fix the bounds");
    }
    if let Some(p) = &f.pattern
        && let Err(e) = regex::Regex::new(p)
    {
        c.push(place, format!("pattern does not compile: {e}"), "write a valid regular expression");
    }
    if f.format.is_some() && !stringy {
        c.push(place, "format applies to strings and string lists only", "remove it or change the type");
    }
    if let Some(value) = &f.default {
        if !f.optional || f.nullable {
            c.push(
                place,
                "a default is for an optional field that is not nullable",
                "make the field optional and not nullable, or remove the default",
            );
        }
        if let Err(why) = fits(value, f, ty, spec) {
            c.push(place, format!("default {value} {why}"), "give a default the field itself accepts");
        }
    }
}

/// A model whose required, non-null model fields lead back to it has no finite value: a
/// `TreeNode` whose `parent` is a required `TreeNode` would need parents forever.
fn check_finite(c: &mut Collector, models: &IndexMap<String, Model>) {
    fn needs(m: &Model) -> impl Iterator<Item = (&str, &str)> {
        m.fields.iter().filter(|f| f.required() && !f.def.nullable).filter_map(|f| match &f.ty {
            Ty::Model(target) => Some((f.name.as_str(), target.as_str())),
            _ => None,
        })
    }
    for (name, m) in models {
        // The models a value of `name` must hold, with the first field that leads to each.
        let mut stack: Vec<(&str, &str)> = needs(m).collect();
        let mut seen = BTreeSet::new();
        while let Some((via, target)) = stack.pop() {
            if target == name {
                c.push(
                    format!("model `{name}` field `{via}`"),
                    format!("every `{name}` must hold another `{name}` through required fields, so no value is finite"),
                    "make a field on the way optional or nullable",
                );
                break;
            }
            if seen.insert(target)
                && let Some(next) = models.get(target)
            {
                stack.extend(needs(next).map(|(_, t)| (via, t)));
            }
        }
    }
}

/// Defaults are filled where the decoder reads a request: in the fields of an operation's input,
/// not in models nested in other models or unions (their Rust fields could not be plain values).
fn check_default_places(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
    fn nested_in(ty: &Ty, out: &mut BTreeSet<String>) {
        match ty {
            Ty::Model(m) => {
                out.insert(m.clone());
            }
            Ty::List(inner) | Ty::Map(inner) => nested_in(inner, out),
            _ => {}
        }
    }
    let inputs: BTreeSet<&str> = spec.operations.iter().filter_map(|o| o.input.as_deref()).collect();
    let mut nested = BTreeSet::new();
    for m in models.values() {
        m.fields.iter().for_each(|f| nested_in(&f.ty, &mut nested));
    }
    nested.extend(spec.unions.values().flat_map(|u| u.variants.values().cloned()));
    for m in models.values() {
        let Some(f) = m.fields.iter().find(|f| f.def.default.is_some()) else { continue };
        let place = format!("model `{}` field `{}`", m.name, f.name);
        if !inputs.contains(m.name.as_str()) || nested.contains(&m.name) {
            c.push(
                place,
                "has a default, but the model is not only an operation's input (defaults are filled where the \
                 decoder reads a request)",
                "move the default to an input field, or remove it",
            );
        }
    }
}

/// Whether `value` is one the decoder would accept for a field `f` of type `ty`: `Err` says why
/// not. Defaults are scalars, enum values or lists of them.
fn fits(value: &serde_json::Value, f: &FieldDef, ty: &Ty, spec: &Spec) -> Result<(), String> {
    use serde_json::Value;
    match (ty, value) {
        (Ty::List(inner), Value::Array(items)) => {
            if f.min_items.is_some_and(|m| items.len() < m as usize)
                || f.max_items.is_some_and(|m| items.len() > m as usize)
            {
                return Err("has a number of items outside min_items/max_items".into());
            }
            items.iter().try_for_each(|item| fits(item, f, inner, spec))
        }
        (Ty::String, Value::String(s)) => {
            let n = s.chars().count() as u32;
            if f.min_length.is_some_and(|m| n < m) || f.max_length.is_some_and(|m| n > m) {
                return Err("is outside min_length/max_length".into());
            }
            if let Some(p) = &f.pattern
                && regex::Regex::new(p).is_ok_and(|re| !re.is_match(s))
            {
                return Err(format!("does not match the pattern {p}"));
            }
            match f.format {
                Some(format) if !format.accepts(s) => Err(format!("is not in the format {}", format.as_str())),
                _ => Ok(()),
            }
        }
        (Ty::Integer, Value::Number(n)) if n.is_i64() => in_range(n.as_f64().unwrap_or_default(), f),
        (Ty::Number, Value::Number(n)) => in_range(n.as_f64().unwrap_or_default(), f),
        (Ty::Boolean, Value::Bool(_)) => Ok(()),
        (Ty::DateTime, Value::String(s)) if support::is_datetime(s) => Ok(()),
        (Ty::Date, Value::String(s)) if support::is_date(s) => Ok(()),
        (Ty::Enum(e), Value::String(v)) => match spec.enums[e].values.iter().any(|x| &x.name == v) {
            true => Ok(()),
            false => Err(format!("is not a value of enum {e}")),
        },
        (Ty::Model(_) | Ty::Union(_) | Ty::Map(_) | Ty::Json, _) => {
            Err("is not allowed: defaults are scalars, enum values or lists of them".into())
        }
        _ => Err(format!("is not a value of type {}", f.ty)),
    }
}

fn in_range(n: f64, f: &FieldDef) -> Result<(), String> {
    if f.minimum.is_some_and(|m| n < m) || f.maximum.is_some_and(|m| n > m) {
        return Err("is outside minimum/maximum".into());
    }
    Ok(())
}

fn pagination_field(name: &str, spec: &Spec) -> Field {
    let p = &spec.pagination;
    let (description, max) = if name == PAGE {
        // Bounded so it always fits the decoder's page counter (and no one asks for page 2^32).
        (format!("Page number, 1 to {MAX_PAGE}."), Some(f64::from(MAX_PAGE)))
    } else {
        (
            format!("Items per page, 1 to {} (default {}).", p.max_per_page, p.default_per_page),
            Some(f64::from(p.max_per_page)),
        )
    };
    Field {
        name: name.to_string(),
        ty: Ty::Integer,
        injected: true,
        def: FieldDef {
            optional: true,
            location: Location::Query,
            minimum: Some(1.0),
            maximum: max,
            ..FieldDef::new("integer", description)
        },
    }
}

/// Whether decoding this input can fail on a well-formed request (so it needs a validation error).
/// Any field can: a body, query or header field can be missing or of the wrong shape, a path
/// segment can fail to parse, and every string, even an unconstrained path segment, is refused
/// when it holds U+0000 (NUL).
fn can_fail_validation(model: &Model) -> bool {
    !model.fields.is_empty()
}

fn check_operations(c: &mut Collector, spec: &Spec, models: &mut IndexMap<String, Model>) -> Vec<Operation> {
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut routes: HashMap<(Method, String), (String, String)> = HashMap::new();
    let mut tools = BTreeSet::new();
    let mut input_users: HashMap<&str, &str> = HashMap::new();
    let roles = &spec.error_roles;
    let mut out = Vec::new();
    for (index, op) in spec.operations.iter().enumerate() {
        let place = format!("operation `{}`", op.id);
        if let Some(d) = &op.deprecated {
            for (what, day) in std::iter::once(("since", &d.since)).chain(d.sunset.iter().map(|s| ("sunset", s))) {
                if !support::is_date(day) {
                    c.push(&place, format!("deprecated {what} `{day}` is not a date"), "write it like `2026-11-26`");
                }
            }
            if let Some(sunset) = &d.sunset
                && support::is_date(sunset)
                && support::is_date(&d.since)
                && sunset <= &d.since
            {
                c.push(
                    &place,
                    format!("deprecated sunset `{sunset}` is not after since `{}`", d.since),
                    "give a later sunset",
                );
            }
        }
        if !is_snake(&op.id) {
            c.push(&place, "id is not snake_case", "use lowercase letters, digits and `_`, e.g. `list_credentials`");
        }
        match ids.get(op.id.as_str()) {
            Some(first) => c.push(
                &place,
                format!("[[operations]] entry #{} repeats the id of entry #{first}", index + 1),
                "give each [[operations]] entry a unique `id`",
            ),
            None => {
                ids.insert(op.id.as_str(), index + 1);
            }
        }
        // An operation whose route could not be read was reported by `resolve_route`.
        let routed = op.route.is_none() && op.method.is_some() && !op.path.is_empty();
        if routed && (!op.path.starts_with('/') || (op.path.len() > 1 && op.path.ends_with('/'))) {
            c.push(
                &place,
                format!("path `{}` must start with `/` and not end with one", op.path),
                "write it like `/credentials/{key}`",
            );
        }
        let route = (op.method(), normalize_path(&op.path));
        if routed && let Some((other, other_path)) = routes.insert(route, (op.id.clone(), op.path.clone())) {
            let m = op.method().as_str();
            let problem = if other_path == op.path {
                format!("{m} {} is also the route of operation `{other}`", op.path)
            } else {
                format!(
                    "{m} {} is the same route as {m} {other_path} of operation `{other}` (parameter names do not tell routes apart)",
                    op.path
                )
            };
            c.push(&place, problem, "change the method or path of one of them");
        }
        match &op.scope {
            None if op.mcp.is_some() => c.push(
                &place,
                format!("tool `{}` has no scope", op.mcp.as_ref().map(|t| t.name.as_str()).unwrap_or_default()),
                format!("add `scope = \"...\"`, one of: {}", scope_names(spec)),
            ),
            None => c.push(&place, "has no scope", format!("add `scope = \"...\"`, one of: {}", scope_names(spec))),
            Some(s) if !spec.security.scopes.iter().any(|d| &d.name == s) => c.push(
                &place,
                format!("unknown scope `{s}`"),
                format!("use one of: {}, or declare it under [[security.scopes]]", scope_names(spec)),
            ),
            Some(_) => {}
        }
        for code in &op.errors {
            if !spec.errors.contains_key(code) {
                c.push(
                    &place,
                    format!("undeclared error code `{code}`"),
                    format!(
                        "declare [errors.\"{code}\"] or use one of: {}",
                        spec.errors.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
        for tag in &op.tags {
            if !spec.service.tags.iter().any(|t| &t.name == tag) {
                c.push(&place, format!("unknown tag `{tag}`"), "declare it under [[service.tags]]");
            }
        }
        check_file_output(c, spec, &place, op);
        if let Some(out_name) = op.output.as_deref().filter(|o| *o != FILE).map(|o| o.strip_suffix("[]").unwrap_or(o)) {
            if op.paginated && op.output.as_deref().is_some_and(|o| o.ends_with("[]")) {
                c.push(
                    &place,
                    "a paginated output is a page of a model, not of a list",
                    "write the model's name alone",
                );
            }
            match models.get(out_name) {
                None if value_output(op, spec, models).is_some() => {
                    for (set, what) in [(op.paginated, "paginated"), (op.stream.is_some(), "a stream")] {
                        if set {
                            c.push(
                                &place,
                                format!("output `{}` is not a model, so it cannot be {what}", op.output.as_deref().unwrap_or_default()),
                                "answer a model",
                            );
                        }
                    }
                }
                None => c.push(
                    &place,
                    format!("output `{}` is neither a declared model nor a type", op.output.as_deref().unwrap_or_default()),
                    "declare the model under [models], or write a type: string, integer, number, boolean, date, datetime, json, T[], map<T>, an enum or a union",
                ),
                Some(m)
                    if m.fields.iter().any(|f| matches!(f.location(), Location::Path | Location::Query | Location::Payload)) =>
                {
                    c.push(
                    &place,
                    format!("output model `{out_name}` has path, query or payload fields"),
                    "only input models may set `in = \"path\"`, `\"query\"` or `\"payload\"`; an output's fields travel in the body or, with `in = \"header\"`, as response headers",
                    );
                }
                Some(m) => {
                    let headers: Vec<&Field> = m.fields_in(Location::Header).collect();
                    if !headers.is_empty() && (op.paginated || op.output.as_deref().is_some_and(|o| o.ends_with("[]"))) {
                        c.push(
                            &place,
                            format!("output model `{out_name}` has header fields, which a list or a page cannot carry"),
                            "answer the model alone, or move its header fields to the body",
                        );
                    }
                    for f in headers {
                        if !matches!(f.ty, Ty::String | Ty::Integer) {
                            c.push(
                                &place,
                                format!("response header field `{out_name}.{}` is not a string or an integer", f.name),
                                "make it a string or an integer",
                            );
                        }
                    }
                }
            }
        }
        check_status(c, &place, op, spec, models);
        check_body_format(c, &place, op, models);
        check_stream(c, &place, op);
        check_conditional(c, &place, op, spec, models);
        if op.paginated && (op.output.is_none() || op.input.is_none() || op.method() != Method::Get) {
            c.push(
                &place,
                "paginated operations need GET, an input model and an output model",
                "add `input` and `output`, or drop `paginated`",
            );
        }
        if let Some(tool) = &op.mcp {
            let ok = !tool.name.is_empty()
                && tool.name.len() <= 64
                && tool.name.chars().all(|ch| ch.is_ascii_alphanumeric() || "_.-".contains(ch));
            if !ok {
                c.push(
                    &place,
                    format!("tool name `{}` is not 1–64 characters of [A-Za-z0-9_.-]", tool.name),
                    "rename the tool",
                );
            }
            if !tools.insert(tool.name.clone()) {
                c.push(&place, format!("tool `{}` is declared twice", tool.name), "give each tool a unique name");
            }
        }

        let params = path_params(&op.path);
        let mut has_body = false;
        match &op.input {
            None => {
                for p in &params {
                    c.push(
                        &place,
                        format!("path parameter `{p}` has no model field"),
                        format!("add an `input` model with field `{p}` and `in = \"path\"`"),
                    );
                }
            }
            Some(name) => match models.get_mut(name) {
                None => c.push(&place, format!("input model `{name}` is not declared"), "declare it under [models]"),
                Some(model) => {
                    if let Some(other) = input_users.insert(name, &op.id) {
                        c.push(
                            &place,
                            format!("input model `{name}` is also the input of `{other}`"),
                            "give each operation its own input model",
                        );
                    }
                    for p in &params {
                        match model.fields.iter().find(|f| &f.name == p) {
                            Some(f) => {
                                let mut wrong = Vec::new();
                                if f.location() != Location::Path {
                                    wrong.push("set `in = \"path\"`");
                                }
                                if !f.required() {
                                    wrong.push("remove `optional`");
                                }
                                if !f.ty.is_scalar() {
                                    wrong.push("make its type a scalar");
                                }
                                if !wrong.is_empty() {
                                    c.push(
                                        &place,
                                        format!(
                                            "path parameter `{p}` maps to field `{name}.{p}`, which cannot carry it"
                                        ),
                                        format!("on `{name}.{p}`: {}", wrong.join(", ")),
                                    );
                                }
                            }
                            None => c.push(
                                &place,
                                format!("path parameter `{p}` has no model field"),
                                format!("add field `{p}` with `in = \"path\"` to model `{name}`"),
                            ),
                        }
                    }
                    for f in &model.fields {
                        match f.location() {
                            Location::Path if routed && !params.contains(&f.name) => c.push(
                                &place,
                                format!(
                                    "field `{name}.{}` says `in = \"path\"` but the path has no `{{{}}}`",
                                    f.name, f.name
                                ),
                                "add the parameter to the path or move the field",
                            ),
                            Location::Query => {
                                let scalar = f.ty.is_scalar() || matches!(&f.ty, Ty::List(t) if t.is_scalar());
                                if !scalar {
                                    c.push(
                                        &place,
                                        format!("query field `{name}.{}` is not a scalar or a list of scalars", f.name),
                                        "move it to the body",
                                    );
                                }
                            }
                            Location::Header if f.ty != Ty::String => c.push(
                                &place,
                                format!("header field `{name}.{}` is not a string", f.name),
                                "make it a string",
                            ),
                            Location::Body | Location::Payload => has_body = true,
                            _ => {}
                        }
                    }
                    // Keys beside the fields travel in the JSON body object.
                    if model.additional.is_some() {
                        has_body = true;
                        if op.body != crate::spec::BodyFormat::Json
                            || model.fields_in(Location::Payload).next().is_some()
                        {
                            c.push(
                                &place,
                                format!(
                                    "input model `{name}` has additional keys, which only a JSON body object carries"
                                ),
                                "drop `additional`, or take a JSON body without a payload field",
                            );
                        }
                    }
                    let payloads: Vec<&Field> = model.fields_in(Location::Payload).collect();
                    if payloads.len() > 1 {
                        let names = payloads.iter().map(|f| format!("`{}`", f.name)).collect::<Vec<_>>().join(", ");
                        c.push(
                            &place,
                            format!("input model `{name}` has more than one payload field ({names})"),
                            "keep one field with `in = \"payload\"`: it is the whole body",
                        );
                    }
                    if let Some(p) = payloads.first()
                        && let Some(other) = model.fields_in(Location::Body).next()
                    {
                        c.push(
                            &place,
                            format!(
                                "input model `{name}` has payload field `{}` and body field `{}`, but the payload is the whole body",
                                p.name, other.name
                            ),
                            "move the other field to the path, query or headers, or make the payload a model holding both",
                        );
                    }
                    if has_body && matches!(op.method(), Method::Get | Method::Delete) {
                        c.push(
                            &place,
                            format!("{} operations cannot take body fields", op.method().as_str()),
                            "set `in = \"query\"` on the input fields",
                        );
                    }
                    if op.paginated {
                        if model.fields.iter().any(|f| f.name == PAGE || f.name == PER_PAGE) {
                            c.push(
                                &place,
                                "paginated input declares `page`/`per_page` itself",
                                "remove them; the [pagination] rules add them",
                            );
                        } else {
                            model.fields.push(pagination_field(PAGE, spec));
                            model.fields.push(pagination_field(PER_PAGE, spec));
                        }
                    }
                    if can_fail_validation(model) && !op.errors.contains(&roles.validation) {
                        c.push(
                            &place,
                            "its input can fail validation but it declares no validation error",
                            format!("add `{}` to `errors`", roles.validation),
                        );
                    }
                }
            },
        }

        let mut errors: Vec<String> = op.errors.clone();
        let mut auto = vec![&roles.unauthenticated, &roles.invalid_token, &roles.insufficient_scope];
        if let Some(support::Conditional::Write { required }) = op.conditional() {
            auto.push(&roles.precondition_failed);
            if required {
                auto.push(&roles.precondition_required);
            }
        }
        if has_body {
            auto.extend([&roles.malformed, &roles.payload_too_large, &roles.unsupported_media_type]);
        }
        if op.ranges {
            auto.push(&roles.range_not_satisfiable);
        }
        if op.rate_limited && spec.rate_limits.is_some() {
            auto.push(&roles.rate_limited);
        }
        auto.extend(roles.service_wide.iter());
        for code in auto {
            if !errors.contains(code) {
                errors.push(code.clone());
            }
        }
        // Catalog order keeps enums and documents stable whatever order the author wrote.
        errors.retain(|e| spec.errors.contains_key(e));
        errors.sort_by_key(|e| spec.errors.get_index_of(e));
        let status = op.status.unwrap_or(if op.output.is_some() { 200 } else { 204 });
        // `Model[]`: the IR names the model and says it is a list; `file`: no model.
        let mut def = op.clone();
        let list_output = def.output.as_deref().is_some_and(|o| o.ends_with("[]"));
        if list_output {
            def.output = def.output.map(|o| o.trim_end_matches("[]").to_string());
        }
        let file_output = def.output.as_deref() == Some(FILE);
        let value_output = value_output(op, spec, models);
        if file_output || value_output.is_some() {
            def.output = None;
        }
        out.push(Operation { def, errors, status, has_body, list_output, file_output, value_output });
    }
    out
}

/// Two paths a request could match both ways: each has a parameter where the other has a fixed
/// segment (`/notes/exports/{id}` and `/notes/{id}/open` both match `/notes/exports/open`).
/// Routers break the tie by their own rules and OpenAPI leaves it undefined, so a client's
/// generated code could call the other operation. A fixed segment against a parameter on one side
/// only (`/notes/due` and `/notes/{id}`) is fine: the fixed path wins, as OpenAPI says.
fn check_ambiguous_paths(c: &mut Collector, spec: &Spec) {
    let mut paths: Vec<(&str, &str)> = Vec::new();
    for op in &spec.operations {
        if !paths.iter().any(|(p, _)| *p == op.path) && !op.path.is_empty() {
            paths.push((&op.path, &op.id));
        }
    }
    let param = |s: &str| s.starts_with('{');
    for (i, (a, a_op)) in paths.iter().enumerate() {
        for (b, b_op) in &paths[i + 1..] {
            let (sa, sb): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
            if sa.len() != sb.len() {
                continue;
            }
            let fits = sa.iter().zip(&sb).all(|(x, y)| x == y || param(x) || param(y));
            let a_wider = sa.iter().zip(&sb).any(|(x, y)| param(x) && !param(y));
            let b_wider = sa.iter().zip(&sb).any(|(x, y)| !param(x) && param(y));
            if fits && a_wider && b_wider {
                c.push(
                    format!("operation `{b_op}`"),
                    format!("path `{b}` and path `{a}` of operation `{a_op}` can match the same request"),
                    "give one of them a fixed segment where the other has none, or move one under another prefix",
                );
            }
        }
    }
}

/// A model with header fields is an operation's input or output: nested in another model or in a
/// union, its headers would have nowhere to travel.
fn check_header_models(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
    fn named(ty: &Ty) -> Option<&str> {
        match ty {
            Ty::Model(n) => Some(n),
            Ty::List(t) | Ty::Map(t) => named(t),
            _ => None,
        }
    }
    let headed = |name: &str| models.get(name).is_some_and(|m| m.fields_in(Location::Header).next().is_some());
    for m in models.values() {
        for f in &m.fields {
            if let Some(inner) = named(&f.ty).filter(|n| headed(n)) {
                c.push(
                    format!("model `{}`, field `{}`", m.name, f.name),
                    format!("model `{inner}` has header fields, so it cannot be a field's type"),
                    format!("give `{}` a model without `in = \"header\"` fields", f.name),
                );
            }
        }
    }
    // A payload is the body of the operation whose input holds it: no other model may hold one.
    let inputs: Vec<&str> = spec.operations.iter().filter_map(|o| o.input.as_deref()).collect();
    for m in models.values().filter(|m| m.fields_in(Location::Payload).next().is_some()) {
        if !inputs.contains(&m.name.as_str()) {
            c.push(
                format!("model `{}`", m.name),
                "has a payload field but is no operation's input",
                "only an operation's input may set `in = \"payload\"`",
            );
        }
    }
    for m in models.values() {
        for f in &m.fields {
            let payloaded = |n: &str| models.get(n).is_some_and(|m| m.fields_in(Location::Payload).next().is_some());
            if let Some(inner) = named(&f.ty).filter(|n| payloaded(n)) {
                c.push(
                    format!("model `{}`, field `{}`", m.name, f.name),
                    format!("model `{inner}` has a payload field, so it cannot be a field's type"),
                    format!("give `{}` a model without `in = \"payload\"` fields", f.name),
                );
            }
        }
    }
    // A file is an operation's input alone: not an output's, not nested.
    let filed = |name: &str| models.get(name).is_some_and(|m| m.fields.iter().any(|f| f.ty == Ty::File));
    for m in models.values().filter(|m| filed(&m.name) && !inputs.contains(&m.name.as_str())) {
        c.push(
            format!("model `{}`", m.name),
            "has a file field but is no operation's input",
            "answer a file with `output = \"file\"`; take one in an input's body",
        );
    }
    for (name, u) in &spec.unions {
        for model in u.variants.values().filter(|v| headed(v)) {
            c.push(
                format!("union `{name}`"),
                format!("variant model `{model}` has header fields, so it cannot be a union's variant"),
                "use a model without `in = \"header\"` fields",
            );
        }
    }
}

/// What a body format allows: a form carries scalars and lists of them; multipart also files; a
/// raw body is one file; a file travels nowhere else.
fn check_body_format(c: &mut Collector, place: &str, op: &OperationDef, models: &IndexMap<String, Model>) {
    use crate::spec::BodyFormat;
    let Some(input) = op.input.as_deref().and_then(|i| models.get(i)) else {
        if op.body != BodyFormat::Json {
            c.push(place, "a body format without an input model", "add `input`, or drop `body`");
        }
        return;
    };
    let body: Vec<&Field> = input.fields_in(Location::Body).collect();
    let files = body.iter().filter(|f| f.ty == Ty::File).count();
    let scalar = |f: &Field| f.ty.is_scalar() || matches!(&f.ty, Ty::List(t) if t.is_scalar());
    let name = &input.name;
    match op.body {
        BodyFormat::Json if files > 0 => c.push(
            place,
            format!("input model `{name}` has a file field, which a JSON body cannot carry"),
            "set `body = \"multipart\"` (or `\"raw\"` for a body that is the file)",
        ),
        BodyFormat::Form => {
            for f in body.iter().filter(|f| !scalar(f)) {
                c.push(
                    place,
                    format!("form field `{name}.{}` is not a scalar or a list of scalars", f.name),
                    "use `body = \"multipart\"` for files, or JSON for nested values",
                );
            }
        }
        BodyFormat::Multipart => {
            for f in body.iter().filter(|f| !scalar(f) && f.ty != Ty::File) {
                c.push(
                    place,
                    format!("multipart field `{name}.{}` is not a file, a scalar or a list of scalars", f.name),
                    "make it a scalar (a text part), or use a JSON body",
                );
            }
        }
        BodyFormat::Raw if body.len() != 1 || files != 1 => c.push(
            place,
            format!("a raw body is one file, but input model `{name}` has {} body field(s)", body.len()),
            "give the input one `file` body field (the rest in the path, query or headers)",
        ),
        _ => {}
    }
    if let Some(p) = input.fields_in(Location::Payload).next()
        && op.body != BodyFormat::Json
    {
        c.push(
            place,
            format!("payload field `{name}.{}` is a JSON body, but the operation's body is not JSON", p.name),
            "drop `body` (a payload is JSON), or make the field a body field",
        );
    }
    if op.body != BodyFormat::Json && matches!(op.method(), Method::Get | Method::Delete) {
        c.push(place, format!("{} operations take no body", op.method().as_str()), "use POST, PUT or PATCH");
    }
    if files > 0 && op.mcp.is_some() {
        c.push(
            place,
            "takes a file, which an MCP tool call cannot carry (its arguments are JSON)",
            "remove `mcp`, or take the content another way",
        );
    }
}

/// What a stream needs: events of a model, read with `GET`, and nothing that needs one body.
fn check_stream(c: &mut Collector, place: &str, op: &OperationDef) {
    if op.stream.is_none() {
        return;
    }
    let output = op.output.as_deref();
    if output.is_none() || output == Some(FILE) || output.is_some_and(|o| o.ends_with("[]")) {
        c.push(place, "a stream's events need an output model", "set `output` to the model of one event");
    }
    if op.method() != Method::Get {
        c.push(place, "a stream is read with GET", "use GET");
    }
    for (set, what) in [
        (op.paginated, "paginated"),
        (op.mcp.is_some(), "an MCP tool (a tool call answers once)"),
        (op.conditional.is_some(), "conditional (a stream has no version)"),
        (op.status.is_some_and(|s| s != 200), "answered with another status than 200"),
    ] {
        if set {
            c.push(place, format!("a stream cannot be {what}"), "drop it, or answer a single output");
        }
    }
}

/// The output that is a file, not a model.
const FILE: &str = "file";

/// The type of an output that is a JSON value but not a model or a list of models (a scalar, a
/// list of scalars, a map, an enum, a union); `None` for a model, `Model[]`, a file or no output.
fn value_output(op: &OperationDef, spec: &Spec, models: &IndexMap<String, Model>) -> Option<Ty> {
    let output = op.output.as_deref().filter(|o| *o != FILE)?;
    if models.contains_key(output.strip_suffix("[]").unwrap_or(output)) {
        return None;
    }
    Ty::parse(output, spec)
        .ok()
        .filter(|t| !matches!(t, Ty::File) && !matches!(t, Ty::List(i) | Ty::Map(i) if **i == Ty::File))
}

/// What a file output needs: its media types, and no feature that needs a JSON body.
fn check_file_output(c: &mut Collector, spec: &Spec, place: &str, op: &OperationDef) {
    let file = op.output.as_deref() == Some(FILE);
    if !file {
        if !op.media_types.is_empty() {
            c.push(place, "`media_types` is for `output = \"file\"`", "remove `media_types`, or answer a file");
        }
        if op.ranges {
            c.push(place, "`ranges` is for `output = \"file\"`", "remove `ranges`, or answer a file");
        }
        return;
    }
    if op.ranges {
        check_role(c, spec, "range_not_satisfiable", &spec.error_roles.range_not_satisfiable, 416);
    }
    if op.media_types.is_empty() {
        c.push(
            place,
            "a file output declares no media type",
            "add `media_types = [\"text/csv\"]` (the types it may have)",
        );
    }
    for m in &op.media_types {
        let token =
            |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
        if !m.split_once('/').is_some_and(|(t, s)| token(t) && token(s)) {
            c.push(place, format!("media type `{m}` is not `type/subtype`"), "write it like `text/csv`");
        }
    }
    for (set, what) in [
        (op.ranges && op.method() != Method::Get, "answered in ranges unless read with GET"),
        (op.paginated, "a page"),
        (op.mcp.is_some(), "an MCP tool (a tool result's structured content is JSON)"),
        (op.conditional.is_some(), "a conditional request (its tag is a digest of JSON)"),
    ] {
        if set {
            c.push(place, format!("a file output cannot be {what}"), "answer a model, or drop it");
        }
    }
}

/// The success statuses an operation may declare, and what each needs of its output.
pub(crate) const SUCCESS_STATUSES: [u16; 14] = [200, 201, 202, 203, 204, 205, 207, 208, 226, 301, 302, 303, 307, 308];

fn check_status(c: &mut Collector, place: &str, op: &OperationDef, spec: &Spec, models: &IndexMap<String, Model>) {
    let Some(status) = op.status else { return };
    let output = op.output.as_deref().and_then(|o| models.get(o.trim_end_matches("[]")));
    let body = op.output.as_deref() == Some(FILE)
        || value_output(op, spec, models).is_some()
        || output.is_some_and(|m| m.fields_in(Location::Body).next().is_some());
    let listed = SUCCESS_STATUSES.iter().map(u16::to_string).collect::<Vec<_>>().join(", ");
    if !SUCCESS_STATUSES.contains(&status) {
        c.push(
            place,
            format!("success status {status} is not one an operation may declare"),
            format!("use one of {listed}"),
        );
    } else if matches!(status, 204 | 205) && body {
        c.push(
            place,
            format!("success status {status} answers no body, but the output has body fields"),
            "use 200, or give an output whose fields are all `in = \"header\"`",
        );
    } else if (300..400).contains(&status) {
        let location = output.and_then(|m| m.fields.iter().find(|f| f.name == "location"));
        if !location.is_some_and(|f| f.location() == Location::Header && f.required()) || body {
            c.push(
                place,
                format!("a {status} redirect needs an output whose only field is a required `location` header"),
                "declare an output model with `fields.location = { type = \"string\", in = \"header\", ... }` and nothing else",
            );
        }
    }
}

/// Error role `role` points at `code`, which the catalog declares with `status`.
fn check_role(c: &mut Collector, spec: &Spec, role: &str, code: &str, status: u16) {
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

fn check_conditional(c: &mut Collector, place: &str, op: &OperationDef, spec: &Spec, models: &IndexMap<String, Model>) {
    let Some(mode) = op.conditional() else { return };
    let roles = &spec.error_roles;
    match mode {
        support::Conditional::Read => {
            if op.conditional == Some(crate::spec::ConditionalDef::Mode(crate::spec::ConditionalMode::Required)) {
                c.push(
                    place,
                    "`conditional = \"required\"` is for writes; a read answers 304 to `If-None-Match`",
                    "write `conditional = true`",
                );
            }
            if op.output.is_none() {
                c.push(place, "a conditional read needs an output to tag", "add `output`, or drop `conditional`");
            }
        }
        support::Conditional::Write { required } => {
            match op.input.as_deref().and_then(|i| models.get(i)) {
                None => c.push(
                    place,
                    "a conditional write needs an input model: its implementation receives `If-Match` there as `if_match`",
                    "add `input` (the model naming what it changes)",
                ),
                Some(m) if m.fields.iter().any(|f| f.name == "if_match") => c.push(
                    place,
                    format!("input model `{}` declares `if_match`, which a conditional write adds itself", m.name),
                    "remove the field; the implementation reads `input.if_match`",
                ),
                Some(_) => {}
            }
            if required && op.mcp.is_some() {
                c.push(
                    place,
                    "requires `If-Match`, which an MCP tool call cannot send (a tool result carries no `ETag` to send back)",
                    "write `conditional = true`, or remove `mcp`",
                );
            }
            let mut wanted = vec![("precondition_failed", &roles.precondition_failed, 412)];
            if required {
                wanted.push(("precondition_required", &roles.precondition_required, 428));
            }
            for (role, code, status) in wanted {
                check_role(c, spec, role, code, status);
            }
        }
    }
}

fn scope_names(spec: &Spec) -> String {
    spec.security.scopes.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// `/a/{x}/b` and `/a/{y}/b` are the same route.
fn normalize_path(path: &str) -> String {
    path.split('/').map(|seg| if seg.starts_with('{') { "{}" } else { seg }).collect::<Vec<_>>().join("/")
}
