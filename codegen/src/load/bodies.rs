//! What travels in bodies and headers: header models, form, multipart and raw bodies, streams, file answers.

use std::collections::HashMap;

use indexmap::IndexMap;

use crate::ir::{Field, Model, Ty};
use crate::spec::{Location, Method, OperationDef, Spec};

use super::*;

/// A model with header fields is an operation's input or output: nested in another model or in a
/// union, its headers would have nowhere to travel.
pub(super) fn check_header_models(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
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
                    Place::Field(m.name.clone(), f.name.clone()),
                    format!("model `{inner}` has header fields, so it cannot be a field's type"),
                    format!("give `{}` a model without `in = \"header\"` fields", f.name),
                );
            }
        }
    }
    // A payload is the body of the operation whose input or output holds it: no other model may
    // hold one.
    let inputs: Vec<&str> = spec.operations.iter().filter_map(|o| o.input.as_deref()).collect();
    let outputs: Vec<&str> = spec.operations.iter().filter_map(|o| o.output.as_deref()).collect();
    for m in models.values().filter(|m| m.fields_in(Location::Payload).next().is_some()) {
        if !inputs.contains(&m.name.as_str()) && !outputs.contains(&m.name.as_str()) {
            c.push(
                Place::Model(m.name.clone()),
                "has a payload field but is no operation's input or output",
                "only an operation's input or output may set `in = \"payload\"`",
            );
        }
    }
    for m in models.values() {
        for f in &m.fields {
            let payloaded = |n: &str| models.get(n).is_some_and(|m| m.fields_in(Location::Payload).next().is_some());
            if let Some(inner) = named(&f.ty).filter(|n| payloaded(n)) {
                c.push(
                    Place::Field(m.name.clone(), f.name.clone()),
                    format!("model `{inner}` has a payload field, so it cannot be a field's type"),
                    format!("give `{}` a model without `in = \"payload\"` fields", f.name),
                );
            }
        }
    }
    // A file is an operation's input, or an output's payload (the answer's body), not nested.
    let filed = |name: &str| {
        models.get(name).is_some_and(|m| m.fields.iter().any(|f| f.ty == Ty::File && f.location() != Location::Payload))
    };
    let bodies: Vec<&str> =
        spec.operations.iter().flat_map(|o| o.request_models.values()).map(String::as_str).collect();
    for m in models
        .values()
        .filter(|m| filed(&m.name) && !inputs.contains(&m.name.as_str()) && !bodies.contains(&m.name.as_str()))
    {
        c.push(
            Place::Model(m.name.clone()),
            "has a file field but is no operation's input or request body",
            "answer a file with `output = \"file\"`; take one in an input's body",
        );
    }
    for (name, u) in &spec.unions {
        for model in u.variants.values().filter(|v| headed(v)) {
            c.push(
                Place::Union(name.clone()),
                format!("variant model `{model}` has header fields, so it cannot be a union's variant"),
                "use a model without `in = \"header\"` fields",
            );
        }
    }
}

/// What a body format allows: a form carries any value but a union, a file field's bytes as its
/// value ([`form_carries`]); multipart also files in parts; a raw body is one file; a file
/// travels nowhere else.
pub(super) fn check_body_format(c: &mut Collector, place: &Place, op: &OperationDef, models: &IndexMap<String, Model>) {
    use crate::spec::BodyFormat;
    let Some(input) = op.input.as_deref().and_then(|i| models.get(i)) else {
        if op.body != BodyFormat::Json {
            c.push(place, "a body format without an input model", "add `input`, or drop `body`");
        }
        return;
    };
    let body: Vec<&Field> = input.fields_in(Location::Body).collect();
    let files = body.iter().filter(|f| f.ty == Ty::File).count();
    let name = &input.name;
    match op.body {
        BodyFormat::Json if files > 0 => c.push(
            place,
            format!("input model `{name}` has a file field, which a JSON body cannot carry"),
            "set `body = \"multipart\"` (or `\"raw\"` for a body that is the file)",
        ),
        BodyFormat::Form => {
            // A file field's value is its bytes; a file deeper has no key of its own.
            for f in body.iter().filter(|f| f.ty != Ty::File && !form_carries(&f.ty, models)) {
                c.push(
                    place,
                    format!("form field `{name}.{}` holds a file or a union, which a form cannot carry", f.name),
                    "use `body = \"multipart\"` for files, or JSON for unions",
                );
            }
        }
        BodyFormat::Multipart => {
            // A file is a part; a scalar or a list of them parts of text; anything else a part of
            // JSON text, which holds no file.
            let holds_file = |t: &Ty| matches!(t, Ty::List(i) | Ty::Map(i) if **i == Ty::File);
            for f in body.iter().filter(|f| holds_file(&f.ty)) {
                c.push(
                    place,
                    format!("multipart field `{name}.{}` holds files in a list or map", f.name),
                    "give each file a field of its own",
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
    // A JSON body that may also come as a form or multipart: the platform decodes it where its
    // fields are ones a form carries, else the implementation reads it (`read_types`).
    if let Some(p) = input.fields_in(Location::Payload).next()
        && op.body != BodyFormat::Json
    {
        c.push(
            place,
            format!("payload field `{name}.{}` is a JSON body, but the operation's body is not JSON", p.name),
            "drop `body` (a payload is JSON), or make the field a body field",
        );
    }
    if op.body != BodyFormat::Json && op.method().takes_no_body() && !op.get_body {
        let method = op.method().as_str();
        c.push(place, format!("{method} operations take no body"), "use POST, PUT, PATCH or DELETE");
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
pub(super) fn check_stream(c: &mut Collector, place: &Place, op: &OperationDef) {
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

/// What a prerendered output needs: one model (or a page of one) whose fields are all in the body.
pub(super) fn check_prerendered(c: &mut Collector, place: &Place, op: &OperationDef, models: &IndexMap<String, Model>) {
    if !op.prerendered {
        return;
    }
    let model = op.output.as_deref().and_then(|o| models.get(o));
    match model {
        None => c.push(
            place,
            "`prerendered` is for an output that is one model or a page of one",
            "remove `prerendered`, or answer a model",
        ),
        Some(m) if op.stream.is_some() || m.fields_in(Location::Header).next().is_some() => {
            c.push(place, "a prerendered output is one JSON body: no stream, no header fields", "remove `prerendered`")
        }
        Some(_) => {}
    }
}

/// What `audit_targets` names: fields of the input that are strings, optional strings or lists of
/// strings, each once.
pub(super) fn check_audit_targets(
    c: &mut Collector,
    place: &Place,
    op: &OperationDef,
    models: &IndexMap<String, Model>,
) {
    if op.audit_targets.is_empty() {
        return;
    }
    let Some(input) = op.input.as_deref().and_then(|i| models.get(i)) else {
        return c.push(
            place,
            "`audit_targets` names input fields, but the operation has no input model",
            "remove `audit_targets`, or add `input`",
        );
    };
    for (i, name) in op.audit_targets.iter().enumerate() {
        if op.audit_targets[..i].contains(name) {
            c.push(place, format!("`audit_targets` names `{name}` twice"), "name each field once");
            continue;
        }
        match input.fields.iter().find(|f| f.name == *name && !f.injected) {
            None => c.push(
                place,
                format!("`audit_targets` names `{name}`, which is not a field of `{}`", input.name),
                format!("use one of: {}", input.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")),
            ),
            Some(f)
                if f.def.nullable_items
                    || (!matches!(&f.ty, Ty::String) && !matches!(&f.ty, Ty::List(t) if **t == Ty::String)) =>
            {
                c.push(
                    place,
                    format!(
                        "`audit_targets` names `{}.{name}`, which is not a string or a list of strings",
                        input.name
                    ),
                    "name a string field (an identifier the call touches)",
                )
            }
            Some(_) => {}
        }
    }
}

/// The type of an output that is a JSON value but not a model or a list of models (a scalar, a
/// list of scalars, a map, an enum, a union); `None` for a model, `Model[]`, a file or no output.
pub(super) fn value_output(op: &OperationDef, spec: &Spec, models: &IndexMap<String, Model>) -> Option<Ty> {
    let output = op.output.as_deref().filter(|o| *o != FILE)?;
    if models.contains_key(output.strip_suffix("[]").unwrap_or(output)) {
        return None;
    }
    Ty::parse(output, spec)
        .ok()
        .filter(|t| !matches!(t, Ty::File) && !matches!(t, Ty::List(i) | Ty::Map(i) if **i == Ty::File))
}

/// What a file output needs: its media types, and no feature that needs a JSON body.
/// Whether the output is a model whose payload is a file: the file, beside response headers.
pub(super) fn file_payload(op: &OperationDef, models: &IndexMap<String, Model>) -> bool {
    let payload = op.output.as_deref().and_then(|o| models.get(o)?.fields_in(Location::Payload).next());
    payload.is_some_and(|f| f.ty == Ty::File)
}

pub(super) fn check_file_output(c: &mut Collector, spec: &Spec, place: &Place, op: &OperationDef, payload: bool) {
    let file = op.output.as_deref() == Some(FILE) || payload;
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
        // RFC 9110's media type, parameters too (`text/csv; charset=utf-8`), or a range a
        // document offers (`image/*`, `*/*`).
        let (essence, params) = m.split_once(';').map_or((m.as_str(), String::new()), |(e, p)| (e, format!(";{p}")));
        let essence = essence.trim();
        let range = match essence.strip_suffix("/*") {
            Some("*") => support::is_media_type(&format!("x/x{params}")),
            Some(kind) => support::is_media_type(&format!("{kind}/x{params}")),
            None => false,
        };
        if !(range || support::is_media_type(m)) {
            c.push(place, format!("media type `{m}` is not `type/subtype`"), "write it like `text/csv`");
        }
    }
    for (set, what) in [
        (op.ranges && op.method() != Method::Get, "answered in ranges unless read with GET"),
        (op.conditional.is_some(), "a conditional request (its tag is a digest of JSON)"),
    ] {
        if set {
            c.push(place, format!("a file output cannot be {what}"), "answer a model, or drop it");
        }
    }
}

/// The other success answers of `op`, resolved and checked: each a 2xx or a redirect of its own,
/// with a body a value output could have (a model only of body fields) or none, beside a main
/// answer that is one JSON document, a file or none.
pub(super) fn alternatives(
    c: &mut Collector,
    place: &Place,
    op: &OperationDef,
    spec: &Spec,
    models: &IndexMap<String, Model>,
) -> Vec<crate::ir::Alternative> {
    if op.alternatives.is_empty() {
        return Vec::new();
    }
    let main = op.status.unwrap_or(if op.output.is_some() { 200 } else { 204 });
    let beside = [
        (op.stream.is_some(), "a stream"),
        (op.prerendered, "a prerendered output"),
        (!op.status_documented.is_exact(), "a status not documented as itself (`status_documented`)"),
    ];
    for (set, what) in beside {
        if set {
            c.push(
                place,
                format!("`alternatives` beside {what}"),
                "answer one JSON document (or none) on the main answer, or drop the alternatives",
            );
        }
    }
    let mut seen = vec![main];
    let mut out = Vec::new();
    for alt in &op.alternatives {
        let status = alt.status;
        // `304` as the implementation decides (a document's "not modified" to a write), where a
        // conditional read's is the platform's; `206` likewise (a partial result of its own),
        // where the file's ranges (`ranges`) are not the platform's.
        let own = status == 304 || (status == 206 && !op.ranges);
        if !is_success_status(status) && !own {
            c.push(
                place,
                format!("alternative status {status} is not a success an operation may answer beside another"),
                "use a 2xx, 304, or a redirect (301, 302, 303, 307, 308)",
            );
            continue;
        }
        if seen.contains(&status) {
            c.push(place, format!("success status {status} is answered twice"), "give each answer its own status");
            continue;
        }
        seen.push(status);
        let output = match alt.output.as_deref() {
            None => None,
            Some(_) if matches!(status, 204 | 205 | 304) => {
                c.push(
                    place,
                    format!("alternative status {status} answers no body, but it has an output"),
                    "remove its `output`, or use 200",
                );
                continue;
            }
            Some(expr) => match Ty::parse(expr, spec) {
                Err((problem, fix)) => {
                    c.push(place, format!("alternative {status}: {problem}"), fix);
                    continue;
                }
                Ok(ty) => Some(ty),
            },
        };
        let holds = |ty: &Ty, f: &dyn Fn(&Ty) -> bool| f(ty) || matches!(ty, Ty::List(i) | Ty::Map(i) if f(i));
        if let Some(ty) = &output {
            if holds(ty, &|t| *t == Ty::File) {
                c.push(place, format!("alternative {status} answers a file"), "answer a file on the main answer alone");
                continue;
            }
            let not_body = |t: &Ty| match t {
                Ty::Model(m) => models.get(m).is_some_and(|m| m.fields.iter().any(|f| f.location() != Location::Body)),
                _ => false,
            };
            if holds(ty, &not_body) {
                c.push(
                    place,
                    format!("alternative {status} answers a model with fields outside the body"),
                    "answer a model whose fields all travel in the body",
                );
                continue;
            }
        }
        let alt = crate::ir::Alternative { status, output, description: alt.description.clone() };
        if alt.redirect() && op.mcp.is_some() {
            c.push(
                place,
                format!("alternative {status} is a redirect, which a tool result cannot follow"),
                "remove the operation's `mcp`, or the redirect",
            );
        }
        out.push(alt);
    }
    out
}

/// A query field: a scalar or a list of them, or an object whose members are (a model's fields
/// of such types, a map of them, or `json`), each member a parameter of its own name or, with
/// `style = "deep"`, `field[member]`. What a parameter belongs to must be plain: no member of
/// a model named like another parameter, and one map or `json` object at most taking the
/// parameters no field names.
pub(super) fn check_query_field(
    c: &mut Collector,
    place: &Place,
    input: &Model,
    f: &Field,
    models: &IndexMap<String, Model>,
) {
    let name = &input.name;
    let deep = f.def.style == support::ListStyle::Deep;
    match &f.ty {
        // JSON text holds any value.
        _ if f.def.content.is_some() => {}
        t if t.is_plain() => {}
        Ty::Json => {}
        Ty::Map(inner) if inner.is_plain() || **inner == Ty::Json => {}
        Ty::Model(m) => {
            let members = models.get(m).map(|m| m.fields.as_slice()).unwrap_or_default();
            if let Some(member) = members.iter().find(|m| !m.ty.is_plain() || m.location() != Location::Body) {
                c.push(
                    place,
                    format!(
                        "query field `{name}.{}` is a model whose field `{}` is not a scalar or a list of scalars",
                        f.name, member.name
                    ),
                    "make each of its fields a scalar or a list of scalars, or move the field to the body",
                );
            }
            let others = input.fields_in(Location::Query).filter(|o| o.name != f.name);
            let exploded = |o: &Field| match (&o.ty, o.def.style) {
                (Ty::Model(m), support::ListStyle::Repeated) if o.def.content.is_none() => {
                    models.get(m).map(|m| m.fields.iter().map(|x| x.name.clone()).collect()).unwrap_or_default()
                }
                _ => vec![o.wire().to_string()],
            };
            let taken: Vec<String> = others.flat_map(exploded).collect();
            if let Some(clash) = members.iter().find(|m| !deep && taken.contains(&m.name)) {
                c.push(
                    place,
                    format!(
                        "query field `{name}.{}`: its member `{}` travels as a parameter another field names",
                        f.name, clash.name
                    ),
                    "set `style = \"deep\"` on it (`field[member]`), or rename one",
                );
            }
        }
        _ => c.push(
            place,
            format!("query field `{name}.{}` is not a scalar, a list of scalars or an object of them", f.name),
            "move it to the body",
        ),
    }
    // An object of JSON text is one parameter, and takes no other.
    let open = |o: &Field| {
        matches!(o.ty, Ty::Map(_) | Ty::Json) && o.def.style == support::ListStyle::Repeated && o.def.content.is_none()
    };
    if open(f) && input.fields_in(Location::Query).filter(|o| open(o)).count() > 1 {
        c.push(
            place,
            format!("query field `{name}.{}` takes the parameters no field names, as another field does", f.name),
            "set `style = \"deep\"` on one of them (`field[key]`)",
        );
    }
}

/// No two parameters of `input` travel under one name: a query parameter's name (`name`, or its
/// key) is one field's, and a header's (compared without case) too.
pub(super) fn check_wire_names(c: &mut Collector, place: &Place, input: &Model) {
    for location in [Location::Query, Location::Header] {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for f in input.fields_in(location) {
            let wire = match location {
                Location::Header => f.http_header().to_ascii_lowercase(),
                _ => f.wire().to_string(),
            };
            if let Some(other) = seen.insert(wire.clone(), &f.name) {
                c.push(
                    place,
                    format!(
                        "input model `{}` fields `{other}` and `{}` travel under one name, `{wire}`",
                        input.name, f.name
                    ),
                    "give one of them another `name`",
                );
            }
        }
    }
}

/// An output model whose body is one value beside its response headers (`in = "payload"`): that
/// field alone, answered as one JSON document.
pub(super) fn check_output_payload(c: &mut Collector, place: &Place, op: &OperationDef, m: &Model) {
    let payloads: Vec<&Field> = m.fields_in(Location::Payload).collect();
    let Some(payload) = payloads.first() else { return };
    let out_name = &m.name;
    if payloads.len() > 1 || m.fields_in(Location::Body).next().is_some() {
        c.push(
            place,
            format!("output model `{out_name}` has a payload field beside other body fields"),
            "keep one `in = \"payload\"` field (the body), the others `in = \"header\"`",
        );
    }
    let beside = [
        (op.paginated, "a page"),
        (op.output.as_deref().is_some_and(|o| o.ends_with("[]")), "a list"),
        (op.stream.is_some(), "a stream"),
        (op.prerendered, "a prerendered output"),
        // A file's answers are read once, as sent: the alternatives' enum holds it as it is.
        (!op.alternatives.is_empty() && payload.ty != Ty::File, "alternatives"),
    ];
    for (set, what) in beside {
        if set {
            c.push(
                place,
                format!("output model `{out_name}` has a payload field, which {what} cannot answer"),
                "answer the model alone",
            );
        }
    }
    if !payload.required() {
        c.push(
            place,
            format!("output field `{out_name}.{}` is the body: a required value or file", payload.name),
            "make it required",
        );
    }
}
