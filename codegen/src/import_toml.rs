//! Writes a [`Spec`] as the TOML a person writes: sections in the usual order, each field and
//! each operation's small values on one line as an inline table, defaults left out.

use std::fmt::Write;

use serde_json::Value;

use crate::spec::{BodyFormat, FieldDef, Location, ModelDef, OperationDef, Spec};

/// A TOML string literal (basic string, escaped).
fn s(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A TOML value of a JSON value (examples, defaults); `None` for `null`, which TOML has not.
fn value(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(t) => s(t),
        Value::Array(items) => format!("[{}]", items.iter().filter_map(value).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => {
            let members: Vec<String> =
                m.iter().filter_map(|(k, v)| Some(format!("{} = {}", key(k), value(v)?))).collect();
            format!("{{ {} }}", members.join(", "))
        }
    })
}

/// A JSON value as TOML can hold it, as [`value`] writes it: `null` members and items left out;
/// `None` for `null` itself.
pub(crate) fn writable(v: &Value) -> Option<Value> {
    Some(match v {
        Value::Null => return None,
        Value::Array(items) => Value::Array(items.iter().filter_map(writable).collect()),
        Value::Object(m) => Value::Object(m.iter().filter_map(|(k, v)| Some((k.clone(), writable(v)?))).collect()),
        other => other.clone(),
    })
}

/// A bare key when it can be one, else quoted.
fn key(k: &str) -> String {
    if !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        k.to_string()
    } else {
        s(k)
    }
}

/// A number as TOML writes it: integers without `.0`; a whole number too large for an exact
/// integer with an exponent (`-9.223372036854776e18`), which TOML reads as the float it is
/// (written out in digits, it would read as an integer beyond 64 bits).
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else if n.fract() == 0.0 {
        format!("{n:e}")
    } else {
        n.to_string()
    }
}

/// One field as an inline table.
fn field(f: &FieldDef) -> String {
    let mut parts = vec![format!("type = {}", s(&f.ty))];
    match f.location {
        Location::Body => {}
        Location::Path => parts.push("in = \"path\"".into()),
        Location::Query => parts.push("in = \"query\"".into()),
        Location::Header => parts.push("in = \"header\"".into()),
        Location::Payload => parts.push("in = \"payload\"".into()),
    }
    if f.optional {
        parts.push("optional = true".into());
    }
    if let Some(r) = &f.rust {
        parts.push(format!("rust = {}", s(r)));
    }
    if !f.one_of.is_empty() {
        parts.push(format!("one_of = [{}]", f.one_of.iter().map(|t| s(t)).collect::<Vec<_>>().join(", ")));
    }
    if f.nullable_items {
        parts.push("nullable_items = true".into());
    }
    if f.nullable {
        parts.push("nullable = true".into());
    }
    for (name, v) in [("minimum", f.minimum), ("maximum", f.maximum)] {
        if let Some(v) = v {
            parts.push(format!("{name} = {}", number(v)));
        }
    }
    for (name, v) in [
        ("min_length", f.min_length),
        ("max_length", f.max_length),
        ("min_items", f.min_items),
        ("max_items", f.max_items),
    ] {
        if let Some(v) = v {
            parts.push(format!("{name} = {v}"));
        }
    }
    if let Some(p) = &f.pattern {
        parts.push(format!("pattern = {}", s(p)));
    }
    if let Some(fmt) = f.format {
        parts.push(format!("format = {}", s(fmt.as_str())));
    }
    if let Some(d) = f.default.as_ref().and_then(value) {
        parts.push(format!("default = {d}"));
    }
    if let Some(e) = f.example.as_ref().and_then(value) {
        parts.push(format!("example = {e}"));
    }
    if f.deprecated {
        parts.push("deprecated = true".into());
    }
    if !f.media_types.is_empty() {
        parts.push(format!("media_types = [{}]", f.media_types.iter().map(|m| s(m)).collect::<Vec<_>>().join(", ")));
    }
    for (name, v) in [
        ("exclusive_minimum", f.exclusive_minimum),
        ("exclusive_maximum", f.exclusive_maximum),
        ("multiple_of", f.multiple_of),
    ] {
        if let Some(v) = v {
            parts.push(format!("{name} = {}", number(v)));
        }
    }
    if !f.values.is_empty() {
        parts.extend(value(&Value::Array(f.values.clone())).map(|v| format!("values = {v}")));
    }
    if f.style != support::ListStyle::Repeated {
        parts.push(format!("style = {}", s(f.style.as_str())));
    }
    if let Some(media) = &f.content {
        parts.push(format!("content = {}", s(media)));
    }
    if let Some(wire) = &f.name {
        parts.push(format!("name = {}", s(wire)));
    }
    if let Some(m) = f.max_size {
        parts.push(format!("max_size = {m}"));
    }
    parts.push(format!("description = {}", s(&f.description)));
    format!("{{ {} }}", parts.join(", "))
}

fn model(out: &mut String, name: &str, m: &ModelDef) {
    let _ = writeln!(out, "\n[models.{name}]");
    let _ = writeln!(out, "description = {}", s(&m.description));
    if m.fields.is_empty() {
        let _ = writeln!(out, "fields = {{}}");
    }
    for (fname, f) in &m.fields {
        let _ = writeln!(out, "fields.{} = {}", key(fname), field(f));
    }
    if let Some(a) = &m.additional {
        let _ = writeln!(out, "additional = {}", field(a));
    }
    if let Some(r) = &m.requires {
        let (exactly_one, groups) = r.rule();
        let groups: Vec<String> =
            groups.iter().map(|g| format!("[{}]", g.iter().map(|n| s(n)).collect::<Vec<_>>().join(", "))).collect();
        let rule = if exactly_one { "one_of" } else { "any_of" };
        let _ = writeln!(out, "requires = {{ {rule} = [{}] }}", groups.join(", "));
    }
}

fn operation(out: &mut String, op: &OperationDef) {
    let _ = writeln!(out, "\n[operations.{}]", op.id);
    let _ = writeln!(out, "route = {}", s(&format!("{} {}", op.method().as_str(), op.path)));
    if op.public {
        let _ = writeln!(out, "public = true");
    }
    if let Some(scope) = &op.scope {
        let _ = writeln!(out, "scope = {}", s(scope));
    }
    let _ = writeln!(out, "summary = {}", s(&op.summary));
    if !op.description.is_empty() {
        let _ = writeln!(out, "description = {}", s(&op.description));
    }
    if !op.tags.is_empty() {
        let _ = writeln!(out, "tags = [{}]", op.tags.iter().map(|t| s(t)).collect::<Vec<_>>().join(", "));
    }
    if let Some(i) = &op.input {
        let _ = writeln!(out, "input = {}", s(i));
    }
    if let Some(o) = &op.output {
        let _ = writeln!(out, "output = {}", s(o));
    }
    if !op.media_types.is_empty() {
        let _ = writeln!(out, "media_types = [{}]", op.media_types.iter().map(|m| s(m)).collect::<Vec<_>>().join(", "));
    }
    match op.body {
        BodyFormat::Json => {}
        BodyFormat::Form => {
            let _ = writeln!(out, "body = \"form\"");
        }
        BodyFormat::Multipart => {
            let _ = writeln!(out, "body = \"multipart\"");
        }
        BodyFormat::Raw => {
            let _ = writeln!(out, "body = \"raw\"");
        }
    }
    if op.paginated {
        let _ = writeln!(out, "paginated = true");
    }
    match op.stream {
        Some(support::StreamFormat::Sse) => {
            let _ = writeln!(out, "stream = \"sse\"");
        }
        Some(support::StreamFormat::Ndjson) => {
            let _ = writeln!(out, "stream = \"ndjson\"");
        }
        None => {}
    }
    match op.conditional {
        Some(crate::spec::ConditionalDef::On(true)) => {
            let _ = writeln!(out, "conditional = true");
        }
        Some(crate::spec::ConditionalDef::Mode(_)) => {
            let _ = writeln!(out, "conditional = \"required\"");
        }
        _ => {}
    }
    if op.ranges {
        let _ = writeln!(out, "ranges = true");
    }
    if op.get_body {
        let _ = writeln!(out, "get_body = true");
    }
    if op.no_store {
        let _ = writeln!(out, "no_store = true");
    }
    if let Some(d) = &op.deprecated {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(d.since.as_deref().map(|x| format!("since = {}", s(x))));
        parts.extend(d.sunset.as_deref().map(|x| format!("sunset = {}", s(x))));
        if !d.instead.is_empty() {
            parts.push(format!("instead = {}", s(&d.instead)));
        }
        if parts.is_empty() {
            let _ = writeln!(out, "deprecated = true");
        } else {
            let _ = writeln!(out, "deprecated = {{ {} }}", parts.join(", "));
        }
    }
    for (key, list) in [("request_types", &op.request_types), ("answer_types", &op.answer_types)] {
        if !list.is_empty() {
            let _ = writeln!(out, "{key} = [{}]", list.iter().map(|m| s(m)).collect::<Vec<_>>().join(", "));
        }
    }
    if !op.request_models.is_empty() {
        let each = op.request_models.iter().map(|(m, model)| format!("{} = {}", s(m), s(model)));
        let _ = writeln!(out, "request_models = {{ {} }}", each.collect::<Vec<_>>().join(", "));
    }
    if !op.status_documented.is_exact() {
        let _ = writeln!(out, "status_documented = {}", s(op.status_documented.key()));
    }
    if let Some(status) = op.status {
        let _ = writeln!(out, "status = {status}");
    }
    if !op.alternatives.is_empty() {
        let each = op.alternatives.iter().map(|a| {
            let mut parts = vec![format!("status = {}", a.status)];
            parts.extend(a.output.as_deref().map(|o| format!("output = {}", s(o))));
            if !a.description.is_empty() {
                parts.push(format!("description = {}", s(&a.description)));
            }
            format!("  {{ {} }},", parts.join(", "))
        });
        let _ = writeln!(out, "alternatives = [\n{}\n]", each.collect::<Vec<_>>().join("\n"));
    }
    if !op.errors.is_empty() {
        let _ = writeln!(out, "errors = [{}]", op.errors.iter().map(|e| s(e)).collect::<Vec<_>>().join(", "));
    }
    if let Some(t) = &op.mcp {
        let mut parts = vec![
            format!("name = {}", s(&t.name)),
            format!("title = {}", s(&t.title)),
            format!("description = {}", s(&t.description)),
        ];
        if let Some(task) = t.task {
            let task = match task {
                crate::spec::TaskSupportDef::Optional => "optional",
                crate::spec::TaskSupportDef::Required => "required",
            };
            parts.push(format!("task = {}", s(task)));
        }
        if let Some(code) = &t.asks_input {
            parts.push(format!("asks_input = {}", s(code)));
        }
        let _ = writeln!(out, "mcp = {{ {} }}", parts.join(", "));
    }
    if let Some(r) = &op.resource {
        let mut parts = vec![format!("name = {}", s(&r.name))];
        if let Some(title) = &r.title {
            parts.push(format!("title = {}", s(title)));
        }
        parts.push(format!("description = {}", s(&r.description)));
        if let Some(uri) = &r.uri {
            parts.push(format!("uri = {}", s(uri)));
        }
        let _ = writeln!(out, "resource = {{ {} }}", parts.join(", "));
    }
}

/// The spec's TOML text.
pub fn write(spec: &Spec) -> String {
    let mut out = String::new();
    let sv = &spec.service;
    let _ = writeln!(out, "# Imported from an OpenAPI document by `specwright-codegen import`.");
    let _ = writeln!(out, "[service]");
    let _ = writeln!(out, "name = {}", s(&sv.name));
    let _ = writeln!(out, "title = {}", s(&sv.title));
    let _ = writeln!(out, "version = {}", s(&sv.version));
    let _ = writeln!(out, "description = {}", s(&sv.description));
    let _ = writeln!(out, "base_path = {}", s(&sv.base_path));
    if let Some(p) = &sv.mcp_path {
        let _ = writeln!(out, "mcp_path = {}", s(p));
    }
    if !sv.tags.is_empty() {
        let _ = writeln!(out, "tags = [");
        for t in &sv.tags {
            let _ = writeln!(out, "  {{ name = {}, description = {} }},", s(&t.name), s(&t.description));
        }
        let _ = writeln!(out, "]");
    }
    let _ = writeln!(out, "\n[security]\nscopes = [");
    for sc in &spec.security.scopes {
        let implies = if sc.implies.is_empty() {
            String::new()
        } else {
            format!(", implies = [{}]", sc.implies.iter().map(|i| s(i)).collect::<Vec<_>>().join(", "))
        };
        let _ = writeln!(out, "  {{ name = {}, description = {}{implies} }},", s(&sc.name), s(&sc.description));
    }
    let _ = writeln!(out, "]");
    let _ = match spec.wire.success {
        crate::spec::SuccessFormat::Bare => writeln!(
            out,
            "\n# Bodies as the document writes them: the output itself, no envelope.\n[wire]\nsuccess = \"bare\""
        ),
        crate::spec::SuccessFormat::Envelope => writeln!(
            out,
            "\n# Bodies as the document writes them: `{{\"data\": …}}`, a page with `meta`.\n[wire]\nsuccess = \"envelope\""
        ),
    };
    match &spec.wire.errors {
        crate::spec::ErrorFormat::Envelope => {}
        crate::spec::ErrorFormat::Problem => {
            let _ = writeln!(out, "errors = \"problem\"");
        }
        crate::spec::ErrorFormat::Model(m) => {
            let roles: Vec<String> = m.roles().iter().map(|(role, path)| format!("{role} = {}", s(path))).collect();
            let _ = writeln!(out, "errors = {{ model = {}, {} }}", s(&m.model), roles.join(", "));
        }
    }
    if let Some(types) = &spec.wire.problem_types {
        let _ = writeln!(out, "problem_types = {}", s(types));
    }
    let p = &spec.pagination;
    if (p.default_per_page, p.max_per_page) != (20, 100) {
        let _ = writeln!(
            out,
            "\n[pagination]\ndefault_per_page = {}\nmax_per_page = {}",
            p.default_per_page, p.max_per_page
        );
    }
    let roles = serde_json::to_value(&spec.error_roles).unwrap_or_default();
    let defaults = serde_json::to_value(crate::spec::ErrorRoles::default()).unwrap_or_default();
    let changed: Vec<String> = roles
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| defaults.get(k.as_str()) != Some(v))
        .map(|(k, v)| match v {
            serde_json::Value::Array(codes) => format!(
                "{k} = [{}]",
                codes.iter().filter_map(serde_json::Value::as_str).map(s).collect::<Vec<_>>().join(", ")
            ),
            other => format!("{k} = {}", s(other.as_str().unwrap_or_default())),
        })
        .collect();
    if !changed.is_empty() {
        let _ = writeln!(
            out,
            "\n# The codes the platform answers for its own refusals and faults (`service_wide`: every operation's).\n[error_roles]\n{}",
            changed.join("\n")
        );
    }
    for (code, e) in &spec.errors {
        let _ = writeln!(out, "\n[errors.{}]", key(code));
        let _ = writeln!(out, "status = {}", e.status);
        let _ = writeln!(out, "message = {}", s(&e.message));
        let _ = writeln!(out, "description = {}", s(&e.description));
    }
    for (name, e) in &spec.enums {
        let _ = writeln!(out, "\n[enums.{name}]");
        let _ = writeln!(out, "description = {}", s(&e.description));
        let values: Vec<String> = e
            .values
            .iter()
            .map(|v| match &v.rust {
                Some(r) => format!("{{ name = {}, description = {}, rust = {} }}", s(&v.name), s(&v.description), s(r)),
                None => format!("{{ name = {}, description = {} }}", s(&v.name), s(&v.description)),
            })
            .collect();
        let _ = writeln!(out, "values = [{}]", values.join(", "));
    }
    for (name, u) in &spec.unions {
        let _ = writeln!(out, "\n[unions.{name}]");
        let _ = writeln!(out, "description = {}", s(&u.description));
        if let Some(tag) = &u.tag {
            let _ = writeln!(out, "tag = {}", s(tag));
        }
        let variants: Vec<String> = u.variants.iter().map(|(k, m)| format!("{} = {}", key(k), s(m))).collect();
        let _ = writeln!(out, "variants = {{ {} }}", variants.join(", "));
    }
    for (name, m) in &spec.models {
        model(&mut out, name, m);
    }
    for op in &spec.operations {
        operation(&mut out, op);
    }
    for (event, w) in &spec.webhooks {
        let _ = writeln!(out, "\n[webhooks.{}]", key(event));
        let _ = writeln!(out, "summary = {}", s(&w.summary));
        if !w.description.is_empty() {
            let _ = writeln!(out, "description = {}", s(&w.description));
        }
        let _ = writeln!(out, "payload = {}", s(&w.payload));
        if !w.tags.is_empty() {
            let _ = writeln!(out, "tags = [{}]", w.tags.iter().map(|t| s(t)).collect::<Vec<_>>().join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_number_reads_back_as_itself() {
        for n in [0.0, -3.0, 1.5, 9.2e15, -9.223372036854776e18, 1.0e300, 1.0e-9] {
            let text = format!("x = {}", super::number(n));
            let v: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back = v["x"].as_float().or(v["x"].as_integer().map(|i| i as f64)).unwrap();
            assert_eq!(back, n, "{text}");
        }
    }
}
