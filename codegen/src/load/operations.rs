//! Operations: routes and their parameters, inputs, pages, statuses, error roles, conditional requests, and paths no two operations could both answer.

use std::collections::{BTreeSet, HashMap};

use indexmap::IndexMap;

use crate::ir::{Field, Model, Operation, Ty, path_params};
use crate::spec::{FieldDef, Location, Method, OperationDef, Spec, StatusDocumented};

use super::*;

pub(super) fn pagination_field(name: &str, spec: &Spec) -> Field {
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
        one_of: Vec::new(),
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
pub(super) fn can_fail_validation(model: &Model) -> bool {
    !model.fields.is_empty()
}

pub(super) fn check_operations(c: &mut Collector, spec: &Spec, models: &mut IndexMap<String, Model>) -> Vec<Operation> {
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut routes: HashMap<(Method, String, String), (String, String)> = HashMap::new();
    let mut tools = BTreeSet::new();
    let mut input_users: HashMap<&str, &str> = HashMap::new();
    let roles = &spec.error_roles;
    let mut out = Vec::new();
    for (index, op) in spec.operations.iter().enumerate() {
        let place = Place::Operation(op.id.clone());
        if let Some(d) = &op.deprecated {
            for (what, day) in d.since.iter().map(|s| ("since", s)).chain(d.sunset.iter().map(|s| ("sunset", s))) {
                if !support::is_date(day) {
                    c.push(&place, format!("deprecated {what} `{day}` is not a date"), "write it like `2026-11-26`");
                }
            }
            if let (Some(sunset), Some(since)) = (&d.sunset, &d.since)
                && support::is_date(sunset)
                && support::is_date(since)
                && sunset <= since
            {
                c.push(
                    &place,
                    format!("deprecated sunset `{sunset}` is not after since `{since}`"),
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
        if routed && !op.path.starts_with('/') {
            c.push(&place, format!("path `{}` must start with `/`", op.path), "write it like `/credentials/{key}`");
        }
        if routed && let Some((a, b)) = support::adjacent_params(&op.path) {
            c.push(
                &place,
                format!(
                    "path `{}` holds `{{{a}}}` and `{{{b}}}` with no text between them, which no request tells apart",
                    op.path
                ),
                format!("put text between them (`{{{a}}}-{{{b}}}`), or give each a segment of its own"),
            );
        }
        if routed {
            check_query_part(c, &place, &op.path);
        }
        // Operations on one path and method are told apart by what their query parts ask.
        let query_field = |n: &str| {
            op.input
                .as_ref()
                .and_then(|i| models.get(i))
                .is_some_and(|m| m.fields_in(Location::Query).any(|f| f.wire() == n))
        };
        let asks: Vec<String> = support::query_conditions(&op.path, query_field)
            .iter()
            .map(|(name, value)| format!("{name}={}", value.unwrap_or("*")))
            .collect();
        let route = (op.method(), normalize_path(&op.path), asks.join("&"));
        if routed && let Some((other, other_path)) = routes.insert(route, (op.id.clone(), op.path.clone())) {
            let m = op.method().as_str();
            let mixed = |p: &str| support::route_path(p) != p;
            let queried = |p: &str| support::path_part(p) != p;
            let problem = if other_path == op.path {
                format!("{m} {} is also the route of operation `{other}`", op.path)
            } else if queried(&op.path) || queried(&other_path) {
                format!(
                    "{m} {} and {m} {other_path} of operation `{other}` ask the same of a request's query, so no \
                     request tells them apart (a name alone asks for a query parameter only where an input field \
                     is sent under it)",
                    op.path
                )
            } else if mixed(&op.path) || mixed(&other_path) {
                format!(
                    "{m} {} and {m} {other_path} of operation `{other}` are one route to the router (a parameter \
                     beside text matches its whole segment)",
                    op.path
                )
            } else {
                format!(
                    "{m} {} is the same route as {m} {other_path} of operation `{other}` (parameter names do not tell routes apart)",
                    op.path
                )
            };
            c.push(&place, problem, "change the method or path of one of them");
        }
        match &op.scope {
            Some(s) if op.public => c.push(
                &place,
                format!("a public operation needs no scope, but it names `{s}`"),
                "remove `scope`, or `public`",
            ),
            None if op.public => {}
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
        check_file_output(c, spec, &place, op, file_payload(op, models));
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
                Some(m) if m.fields.iter().any(|f| matches!(f.location(), Location::Path | Location::Query)) => {
                    c.push(
                    &place,
                    format!("output model `{out_name}` has path or query fields"),
                    "only input models may set `in = \"path\"` or `\"query\"`; an output's fields travel in the body, as the body itself (`in = \"payload\"`) or, with `in = \"header\"`, as response headers",
                    );
                }
                Some(m) => {
                    check_output_payload(c, &place, op, m);
                    let headers: Vec<&Field> = m.fields_in(Location::Header).collect();
                    if !headers.is_empty() && (op.paginated || op.output.as_deref().is_some_and(|o| o.ends_with("[]"))) {
                        c.push(
                            &place,
                            format!("output model `{out_name}` has header fields, which a list or a page cannot carry"),
                            "answer the model alone, or move its header fields to the body",
                        );
                    }
                    for f in headers {
                        if matches!(f.ty, Ty::Enum(_)) && f.required() {
                            // The model's struct leaves header fields out of its JSON, so each
                            // needs a value to stand in when it is read back: an enum has none.
                            c.push(
                                &place,
                                format!("response header field `{out_name}.{}` is a required enum", f.name),
                                "make it optional, or a string",
                            );
                        } else if !f.ty.is_header_value() {
                            c.push(
                                &place,
                                format!(
                                    "response header field `{out_name}.{}` is not a string, a number, a boolean, a \
                                     time, a date, an enum or a list of those",
                                    f.name
                                ),
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
        check_prerendered(c, &place, op, models);
        check_audit_targets(c, &place, op, models);
        check_conditional(c, &place, op, spec, models);
        if op.paginated && (op.output.is_none() || op.input.is_none() || op.method() != Method::Get) {
            c.push(
                &place,
                "paginated operations need GET, an input model and an output model",
                "add `input` and `output`, or drop `paginated`",
            );
        }
        if let Some(tool) = &op.mcp {
            if !super::mcp::is_mcp_name(&tool.name) {
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
        if let Some(model) = op.input.as_ref().and_then(|name| models.get(name)) {
            for f in model.fields_in(Location::Query) {
                check_query_field(c, &place, model, f, models);
            }
            check_wire_names(c, &place, model);
        }
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
                                // A scalar, or a list of scalars written comma-separated
                                // (`/items/1,2,3`, OpenAPI's `simple` style).
                                if !f.ty.is_plain() && f.def.content.is_none() {
                                    wrong.push("make its type a scalar or a list of scalars");
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
                            Location::Header if !f.ty.is_plain() && f.def.content.is_none() => c.push(
                                &place,
                                format!("header field `{name}.{}` is not a scalar or a list of scalars", f.name),
                                "make it a string, a number, a boolean, an enum or a list of them",
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
                    // A DELETE may carry a body (RFC 9110 gives it no meaning, and APIs give it
                    // one: the items to delete), an OPTIONS too; a GET's (or HEAD's) is lost by
                    // proxies and caches.
                    if has_body && op.method().takes_no_body() && !(op.get_body && op.method() == Method::Get) {
                        let fix = if op.method() == Method::Get {
                            "set `in = \"query\"` on the input fields, use POST, or set `get_body = true` where the \
                             API takes a GET's body (clients then have to send it)"
                        } else {
                            "set `in = \"query\"` on the input fields, or use POST"
                        };
                        c.push(&place, format!("{} operations cannot take body fields", op.method().as_str()), fix);
                    }
                    if op.get_body && (op.method() != Method::Get || !has_body) {
                        c.push(&place, "`get_body` is for a GET with body fields", "remove `get_body`");
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
        // A public operation still checks a token that is sent: only `invalid_token` is left.
        let mut auto = match op.public {
            true => vec![&roles.invalid_token],
            false => vec![&roles.unauthenticated, &roles.invalid_token, &roles.insufficient_scope],
        };
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
        // A segment of a parameter and text (`{id}.json`) is routed whole: one without the text
        // is no path of the operation.
        if support::route_path(&op.path) != op.path {
            auto.push(&roles.not_found);
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
        check_json_types(c, &place, op, has_body && op.body == support::BodyFormat::Json, models);
        check_other_formats(c, &place, op, models);
        // `Model[]`: the IR names the model and says it is a list; `file`: no model.
        let mut def = op.clone();
        let list_output = def.output.as_deref().is_some_and(|o| o.ends_with("[]"));
        if list_output {
            def.output = def.output.map(|o| o.trim_end_matches("[]").to_string());
        }
        // A file alone, or a model of a file (its payload) beside response headers.
        let file_payload = file_payload(op, models);
        let file_output = def.output.as_deref() == Some(FILE) || file_payload;
        let value_output = value_output(op, spec, models);
        if def.output.as_deref() == Some(FILE) || value_output.is_some() {
            def.output = None;
        }
        let alternatives = alternatives(c, &place, op, spec, models);
        let output_payload = def
            .output
            .as_deref()
            .filter(|_| !list_output)
            .filter(|_| !file_payload)
            .and_then(|o| models.get(o)?.fields_in(Location::Payload).next())
            .map(|f| f.ty.clone());
        let read_types = read_types(&def, models);
        out.push(Operation {
            def,
            read_types,
            errors,
            status,
            has_body,
            list_output,
            file_output,
            value_output,
            output_payload,
            alternatives,
        });
    }
    out
}

/// Two paths a request could match both ways: each has a parameter where the other has a fixed
/// segment (`/notes/exports/{id}` and `/notes/{id}/open` both match `/notes/exports/open`).
/// Routers break the tie by their own rules and OpenAPI leaves it undefined, so a client's
/// generated code could call the other operation. A fixed segment against a parameter on one side
/// only (`/notes/due` and `/notes/{id}`) is fine: the fixed path wins, as OpenAPI says.
pub(super) fn check_ambiguous_paths(c: &mut Collector, spec: &Spec) {
    // The paths are put to the router the service is served with, as the generated code will
    // (one route per path): whatever it refuses is refused here, with the fix, and nothing else
    // is. It gives a fixed segment priority over a parameter (`/codespaces/secrets/{name}` beside
    // `/codespaces/{id}/machines`), as real servers route.
    let mut router = matchit::Router::new();
    // Route (a parameter beside text routed as the parameter alone) → the first operation on it.
    let mut owners: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for op in &spec.operations {
        let route = support::route_path(&op.path);
        if op.path.is_empty() || owners.contains_key(&route) {
            // Another method of the route (two of one method were reported with the route above).
            continue;
        }
        owners.insert(route.clone(), &op.id);
        match router.insert(route.as_str(), ()) {
            Ok(()) => {}
            Err(matchit::InsertError::Conflict { with }) => {
                let other = owners.get(&with).copied().unwrap_or_default();
                let same_method = |route: &str| {
                    spec.operations.iter().any(|o| support::route_path(&o.path) == route && o.method() == op.method())
                };
                if same_method(&with) {
                    // Reported with the operation's route above.
                    continue;
                }
                c.push(
                    Place::Operation(op.id.clone()),
                    format!(
                        "path `{}` is path `{with}` of operation `{other}` with its parameters named apart: one route \
                         to a router",
                        op.path
                    ),
                    "name the parameters of the two paths alike",
                );
            }
            Err(e) => c.push(
                Place::Operation(op.id.clone()),
                format!("path `{}` cannot be routed: {e}", op.path),
                "write each segment's parameters apart by text, like `/files/{name}` or `/files/{name}-{version}.zip`",
            ),
        }
    }
}

/// A path's query or fragment part (`?Action=Run&Version=2`, `?city={city}`, `#name`) holds
/// `&`-separated items of a name, a name and a value, or a name and a `{parameter}`.
fn check_query_part(c: &mut Collector, place: &Place, path: &str) {
    let Some(at) = path.find(['?', '#']) else { return };
    for item in support::query_items(path) {
        let (name, value) = match item {
            support::QueryItem::Value(n, v) => (n, v),
            support::QueryItem::Param(n, _) | support::QueryItem::Name(n) => (n, ""),
        };
        if name.is_empty() || name.contains(['{', '}', '?', '#', '=']) || value.contains(['{', '}', '?', '#']) {
            c.push(
                place,
                format!("the query part `{}` of path `{path}` is not `name`, `name=value` or `name={{param}}` items", &path[at..]),
                "write the path's own parameters before the `?`, and in the query part items like `Action=Run` or `city={city}`, joined by `&`",
            );
            return;
        }
    }
}

/// `/a/{x}/b` and `/a/{y}/b` are the same route.
pub(super) fn normalize_path(path: &str) -> String {
    // As the router serves it: a parameter beside text (`{id}.json`) matches the whole segment.
    let route = support::route_path(path);
    route.split('/').map(|seg| if seg.starts_with('{') { "{}" } else { seg }).collect::<Vec<_>>().join("/")
}

pub(super) fn check_status(
    c: &mut Collector,
    place: &Place,
    op: &OperationDef,
    spec: &Spec,
    models: &IndexMap<String, Model>,
) {
    let documented = op.status_documented;
    if !documented.is_exact() && !(200..300).contains(&op.status.unwrap_or(200)) {
        c.push(
            place,
            format!("`status_documented = \"{}\"` is for a 2xx success", documented.key()),
            "remove it, or answer a 2xx status",
        );
    }
    if documented == StatusDocumented::None && op.output.is_some() {
        // What the documents leave out, no client could read.
        c.push(
            place,
            "`status_documented = \"none\"` leaves the success out of the documents, so it answers no output",
            "remove the output, or document the status",
        );
    }
    let output = op.output.as_deref().and_then(|o| models.get(o.trim_end_matches("[]")));
    let body = op.output.as_deref() == Some(FILE)
        || value_output(op, spec, models).is_some()
        || output.is_some_and(|m| {
            m.fields_in(Location::Body).next().is_some() || m.fields_in(Location::Payload).next().is_some()
        });
    if body && op.method() == Method::Head {
        // RFC 9110, 9.3.2: the answer to HEAD is the headers a GET would send, without content.
        c.push(
            place,
            "HEAD answers no body, but the output has body fields",
            "give an output whose fields are all `in = \"header\"`, or none",
        );
    }
    let Some(status) = op.status else { return };
    if !is_success_status(status) {
        c.push(
            place,
            format!("success status {status} is not one an operation may declare"),
            format!("use {SUCCESS_STATUSES_TEXT}"),
        );
    } else if matches!(status, 204 | 205) && body {
        c.push(
            place,
            format!("success status {status} answers no body, but the output has body fields"),
            "use 200, or give an output whose fields are all `in = \"header\"`",
        );
    } else if (300..400).contains(&status) {
        // RFC 9110 section 15.4: a redirect names its target in `Location`; a body beside it
        // (a note, the target's description) is the output's other fields.
        let location = output
            .and_then(|m| m.fields_in(Location::Header).find(|f| f.http_header().eq_ignore_ascii_case("location")));
        if !location.is_some_and(|f| f.required()) {
            c.push(
                place,
                format!("a {status} redirect needs an output with a required `location` header"),
                "declare an output model with `fields.location = { type = \"string\", in = \"header\", ... }`",
            );
        }
    }
}

pub(super) fn check_conditional(
    c: &mut Collector,
    place: &Place,
    op: &OperationDef,
    spec: &Spec,
    models: &IndexMap<String, Model>,
) {
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
