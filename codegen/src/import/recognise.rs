//! What a document says once for all its operations, recognised as the spec's own settings: the
//! success envelope, the error format and the error catalog with its roles.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::{ErrorDef, Method};

use super::*;

/// The catalog code of an error status: the prelude's where it has one, else `http_{status}`.
pub(super) fn error_code(status: u16) -> String {
    match status {
        400 => "bad_request".into(),
        401 => "unauthenticated".into(),
        403 => "forbidden".into(),
        404 => "not_found".into(),
        405 => "method_not_allowed".into(),
        408 => "request_timeout".into(),
        409 => "conflict".into(),
        410 => "gone".into(),
        412 => "precondition_failed".into(),
        413 => "payload_too_large".into(),
        415 => "unsupported_media_type".into(),
        422 => "validation".into(),
        429 => "rate_limited".into(),
        500 => "internal".into(),
        501 => "not_implemented".into(),
        503 => "unavailable".into(),
        s => format!("http_{s}"),
    }
}

/// The reason phrase of a status (RFC 9110), as an error's default message.
pub(super) fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad request.",
        402 => "Payment required.",
        404 => "Not found.",
        406 => "Not acceptable.",
        409 => "Conflict.",
        410 => "Gone.",
        412 => "Precondition failed.",
        416 => "Range not satisfiable.",
        423 => "Locked.",
        424 => "Failed dependency.",
        428 => "Precondition required.",
        501 => "Not implemented.",
        502 => "Bad gateway.",
        504 => "Gateway timeout.",
        _ => "Error.",
    }
}

/// The document's error format, when every error answer it describes has one: RFC 9457 problem
/// details (`application/problem+json`), Specwright's envelope (`{"error": {"code", "message"}}`),
/// or one model of its own with a string code and message; else Specwright's envelope. With the
/// base URI of problem types where the document states it, and the report's note.
pub(super) fn error_format(cx: &mut Cx, doc: &Value) -> (crate::spec::ErrorFormat, Option<String>, String) {
    use crate::spec::{ErrorFormat, ErrorModel};
    let tail = "input that breaks the schema is answered 422 (`validation`) whatever status the document gives it";
    let fallback = |why: &str| {
        (ErrorFormat::Envelope, None, format!("errors are written in Specwright's error envelope ({why}), and {tail}"))
    };
    // Every error answer with content: its JSON media type (of those it offers) and schema.
    let mut answers: Vec<(String, Value)> = Vec::new();
    let mut others: BTreeSet<String> = BTreeSet::new();
    let Some(errors) = answers_of(cx, doc, |s| s >= 400) else {
        return fallback("an error answer's `$ref` does not resolve");
    };
    for (_, resp) in errors {
        let Some(content) = resp.get("content").and_then(Value::as_object).filter(|c| !c.is_empty()) else {
            continue;
        };
        match content.iter().find(|(m, _)| support::is_json_media(m)) {
            Some((media, c)) => {
                answers.push((media.clone(), c.get("schema").cloned().unwrap_or(Value::Null)));
                others.extend(content.keys().filter(|m| *m != media).cloned());
            }
            None => return fallback("the document's error bodies are not all JSON"),
        }
    }
    if answers.is_empty() {
        return fallback("the document describes no error body");
    }
    if answers.iter().all(|(m, _)| m == "application/problem+json") {
        // The base of the problem types, where a description names it (`https://…/problems/`).
        let types = answers.iter().find_map(|(_, schema)| {
            let schema = cx.resolve(schema).ok()?;
            let text = schema.pointer("/properties/type/description")?.as_str()?;
            text.split('`')
                .find(|t| (t.starts_with("https://") || t.starts_with("http://")) && t.ends_with('/'))
                .map(str::to_string)
        });
        let also = if others.is_empty() {
            String::new()
        } else {
            format!(" (in JSON only; the document also offers {others:?})")
        };
        return (
            ErrorFormat::Problem,
            types,
            format!("errors are RFC 9457 problem details, as the document's{also}; {tail}"),
        );
    }
    if !answers.iter().all(|(m, _)| support::is_json_media(m)) {
        return fallback("the document's error bodies are not all JSON");
    }
    let resolved: Vec<Value> = answers.iter().filter_map(|(_, s)| cx.resolve(s).ok().cloned()).collect();
    let envelope = |s: &Value| {
        let props = s.get("properties").and_then(Value::as_object);
        let inner = props.filter(|p| p.len() == 1).and_then(|p| p.get("error")).and_then(|e| cx.resolve(e).ok());
        inner.is_some_and(|e| e.pointer("/properties/code").is_some() && e.pointer("/properties/message").is_some())
    };
    if resolved.len() == answers.len() && resolved.iter().all(envelope) {
        return (
            ErrorFormat::Envelope,
            None,
            format!("errors are Specwright's error envelope, as the document's; {tail}"),
        );
    }
    // One component of the document's own for every error.
    let names: BTreeSet<&str> = answers
        .iter()
        .filter_map(|(_, s)| s.get("$ref").and_then(Value::as_str))
        .filter_map(|r| r.strip_prefix("#/components/schemas/"))
        .collect();
    let [name] = names.into_iter().collect::<Vec<_>>()[..] else {
        return fallback("the document's error answers do not share one schema");
    };
    if answers
        .iter()
        .any(|(_, s)| s.get("$ref").and_then(Value::as_str) != Some(&format!("#/components/schemas/{name}")))
    {
        return fallback("the document's error answers do not share one schema");
    }
    let schema = resolved[0].clone();
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let typed = |key: &str, ty: &str| {
        props.get(key).and_then(|p| cx.resolve(p).ok()).and_then(|p| p.get("type")).is_some_and(|t| t == ty)
    };
    let pick = |keys: &[&str], ty: &str| keys.iter().find(|k| typed(k, ty)).map(|k| k.to_string());
    let (Some(code), Some(message)) = (
        pick(&["code", "error", "errorCode", "error_code", "type"], "string"),
        pick(&["message", "detail", "error_description", "title"], "string"),
    ) else {
        return fallback(&format!("`{name}` has no string code and message"));
    };
    let model = ErrorModel {
        model: String::new(),
        status: pick(&["status", "statusCode", "status_code"], "integer"),
        details: ["details", "errors"].iter().find(|k| typed(k, "object")).map(|k| k.to_string()),
        request_id: pick(&["request_id", "requestId", "trace_id", "traceId"], "string"),
        code,
        message,
    };
    let filled: Vec<&str> = model.roles().iter().map(|(_, path)| *path).collect();
    if let Some(unfilled) = required.iter().find(|r| !filled.contains(r)) {
        return fallback(&format!("`{name}` requires `{unfilled}`, which the platform cannot fill"));
    }
    let mut ox = OpCx::new(cx);
    match ox.component(name, &schema) {
        Some(ours) if ox.drops.is_empty() && ox.cx.models.contains_key(&ours) => (
            ErrorFormat::Model(ErrorModel { model: ours.clone(), ..model }),
            None,
            format!("errors are written as the document's `{name}` (the model `{ours}`); {tail}"),
        ),
        _ => fallback(&format!("`{name}` could not be imported")),
    }
}

/// Whether every JSON success body of the document is Specwright's envelope: an object of
/// `data` (required) and, for a page, `meta`, and nothing else.
pub(super) fn success_envelope(cx: &Cx, doc: &Value) -> bool {
    let mut seen = false;
    let Some(successes) = answers_of(cx, doc, |s| (200..300).contains(&s)) else { return false };
    for (_, resp) in successes {
        for (media, content) in resp.get("content").and_then(Value::as_object).into_iter().flatten() {
            if !support::is_json_media(media) {
                continue;
            }
            let Ok(schema) = cx.resolve(content.get("schema").unwrap_or(&Value::Null)) else { return false };
            let keys: BTreeSet<&str> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let required = schema.get("required").and_then(Value::as_array).is_some_and(|r| r.contains(&"data".into()));
            if !keys.contains("data") || !keys.iter().all(|k| *k == "data" || *k == "meta") || !required {
                return false;
            }
            seen = true;
        }
    }
    seen
}

/// The codes an error answer's description names as Specwright writes them
/// (`` `not_found`: No such note. `gone`: … ``), each with its text.
pub(super) fn codes_of(description: &str) -> Vec<(String, String)> {
    let parts: Vec<&str> = description.split('`').collect();
    let mut out = Vec::new();
    // `parts` alternates text and quoted names; a code is a name followed by `: `.
    for i in (1..parts.len()).step_by(2) {
        let (name, after) = (parts[i], parts.get(i + 1).copied().unwrap_or_default());
        if let Some(text) = after.strip_prefix(": ")
            && !name.is_empty()
            && !name.contains(char::is_whitespace)
        {
            // The text runs to the next code (or the end), quoted names inside it included.
            let mut text = text.to_string();
            let mut j = i + 2;
            while j < parts.len() && !parts.get(j + 1).is_some_and(|a| a.starts_with(": ")) {
                text.push('`');
                text.push_str(parts[j]);
                text.push('`');
                text.push_str(parts.get(j + 1).copied().unwrap_or_default());
                j += 2;
            }
            out.push((name.to_string(), text.trim().to_string()));
        }
    }
    out
}

/// The document's catalog, where every error answer names its codes as Specwright writes them:
/// each code with its status and text, and the platform's roles given to the codes of their
/// statuses (`401`: unauthenticated, then invalid token; `403`: insufficient scope; …).
pub(super) fn catalog(cx: &Cx, doc: &Value) -> Option<(IndexMap<String, ErrorDef>, crate::spec::ErrorRoles)> {
    let mut codes: IndexMap<String, ErrorDef> = IndexMap::new();
    let mut by_status: BTreeMap<u16, Vec<String>> = BTreeMap::new();
    for (status, resp) in answers_of(cx, doc, |s| s >= 400)? {
        let found = codes_of(resp.get("description").and_then(Value::as_str).unwrap_or_default());
        if found.is_empty() {
            return None;
        }
        for (code, text) in found {
            let message = text.split_inclusive(". ").next().unwrap_or(&text).trim().to_string();
            codes.entry(code.clone()).or_insert(ErrorDef { status, message, description: text });
            let list = by_status.entry(status).or_default();
            if !list.contains(&code) {
                list.push(code);
            }
        }
    }
    if codes.is_empty() {
        return None;
    }
    let mut roles = crate::spec::ErrorRoles::default();
    let first = |s: u16, n: usize| by_status.get(&s).and_then(|c| c.get(n)).cloned();
    let slots: [(&mut String, u16, usize); 15] = [
        (&mut roles.unauthenticated, 401, 0),
        (&mut roles.invalid_token, 401, 1),
        (&mut roles.insufficient_scope, 403, 0),
        (&mut roles.malformed, 400, 0),
        (&mut roles.not_found, 404, 0),
        (&mut roles.method_not_allowed, 405, 0),
        (&mut roles.request_timeout, 408, 0),
        (&mut roles.precondition_failed, 412, 0),
        (&mut roles.payload_too_large, 413, 0),
        (&mut roles.unsupported_media_type, 415, 0),
        (&mut roles.range_not_satisfiable, 416, 0),
        (&mut roles.validation, 422, 0),
        (&mut roles.precondition_required, 428, 0),
        (&mut roles.rate_limited, 429, 0),
        (&mut roles.internal, 500, 0),
    ];
    for (slot, status, n) in slots {
        if let Some(code) = first(status, n) {
            *slot = code;
        }
    }
    if let Some(code) = first(503, 0) {
        roles.unavailable = code;
    }
    roles.service_wide = vec![roles.internal.clone(), roles.request_timeout.clone(), roles.unavailable.clone()];
    Some((codes, roles))
}

/// The codes the platform answers for every operation by itself (its roles for the gate, the
/// body, the limits and the faults), which an operation does not list.
pub(super) fn automatic_codes(roles: &crate::spec::ErrorRoles) -> Vec<String> {
    let mut out = vec![
        roles.unauthenticated.clone(),
        roles.invalid_token.clone(),
        roles.insufficient_scope.clone(),
        roles.malformed.clone(),
        roles.payload_too_large.clone(),
        roles.unsupported_media_type.clone(),
        roles.method_not_allowed.clone(),
        roles.rate_limited.clone(),
        roles.precondition_failed.clone(),
        roles.precondition_required.clone(),
        roles.range_not_satisfiable.clone(),
        roles.validation.clone(),
    ];
    out.extend(roles.service_wide.iter().cloned());
    out
}

/// Every answer of every operation of `doc` whose status `keep` takes, resolved, with its
/// status; `None` when one of them is a `$ref` that does not resolve.
pub(super) fn answers_of<'d>(cx: &'d Cx, doc: &'d Value, keep: impl Fn(u16) -> bool) -> Option<Vec<(u16, &'d Value)>> {
    let mut out = Vec::new();
    for item in doc.get("paths").and_then(Value::as_object).into_iter().flatten().map(|(_, i)| i) {
        for op in Method::ALL.iter().filter_map(|m| item.get(m.as_str().to_ascii_lowercase())) {
            for (status, raw) in op.get("responses").and_then(Value::as_object).into_iter().flatten() {
                if let Some(status) = status.parse::<u16>().ok().filter(|s| keep(*s)) {
                    out.push((status, cx.resolve(raw).ok()?));
                }
            }
        }
    }
    Some(out)
}

/// The name of the input field a whole request body is: openapi-generator's
/// `x-codegen-request-body-name` where the document gives one, else `body`.
pub(super) fn body_name(body: &Value) -> String {
    body.get("x-codegen-request-body-name")
        .and_then(Value::as_str)
        .filter(|n| crate::ir::is_wire_name(n))
        .unwrap_or("body")
        .to_string()
}
