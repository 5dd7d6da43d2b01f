//! Answers: an operation's success (model, list, value, file, stream, redirect) with its status and
//! headers, and its error statuses.

use heck::ToSnakeCase;
use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::{ErrorDef, FieldDef, Location, Method, ModelDef, OperationDef, StatusDocumented};

use super::*;

impl OpCx<'_, '_> {
    /// The operation answers the catalog's validation error: every input can fail validation,
    /// and the platform answers it.
    pub(super) fn validation_error(&self, def: &mut OperationDef) {
        let validation = self.cx.catalog.as_ref().map_or("validation".to_string(), |(_, r)| r.validation.clone());
        if !def.errors.contains(&validation) {
            def.errors.push(validation);
        }
    }

    /// The success answer and the error codes.
    pub(super) fn responses(
        &mut self,
        id: &str,
        op: &Value,
        pointer: &str,
        def: &mut OperationDef,
        errors: &mut IndexMap<String, ErrorDef>,
    ) {
        let responses = op.get("responses").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut success: Vec<(u16, Value, String)> = Vec::new();
        // How the success is documented: as a class (`2XX`), answered as 200 (204 without
        // content); or, where no success is listed but `default`, that is the success (answered
        // the same), as documents converted from Swagger 2 write their only answer.
        let success_listed = responses.keys().any(|k| k.starts_with(['1', '2', '3']));
        let mut documented = StatusDocumented::Exact;
        // Answers the platform gives for a feature the spec declares: a conditional write's
        // refusals, where the operation documents the `If-Match` it reads (a `412` alone is a
        // refusal of the implementation's, as any other).
        let (mut precondition, mut required_precondition) = (false, false);
        let if_match = self.platform_params.iter().any(|p| p.header == "if-match");
        for (status, raw) in &responses {
            let at = format!("{pointer}/responses/{}", escape(status));
            let resp = match self.cx.resolve(raw) {
                Ok(r) => r.clone(),
                Err(e) => {
                    self.drop(e, &at);
                    continue;
                }
            };
            let described = resp.get("description").and_then(Value::as_str).unwrap_or_default();
            if let (Some((_, roles)), Ok(s)) = (&self.cx.catalog, status.parse::<u16>())
                && s >= 400
            {
                // The document's own codes: those the platform answers by itself are its roles.
                let automatic = automatic_codes(roles);
                for (code, _) in codes_of(described) {
                    if !automatic.contains(&code) && !def.errors.contains(&code) {
                        def.errors.push(code);
                    }
                }
                precondition |= s == 412 && if_match;
                required_precondition |= s == 428 && if_match;
                continue;
            }
            match status.parse::<u16>() {
                _ if status.eq_ignore_ascii_case("2XX") => {
                    documented = StatusDocumented::Range;
                    success.push((200, resp, at));
                }
                _ if status.eq_ignore_ascii_case("4XX") || status.eq_ignore_ascii_case("5XX") => self.notes.push(format!(
                    "the `{status}` response is not stated (errors answer the platform's envelope, with each status it \
                     answers)"
                )),
                Ok(s) if (200..300).contains(&s) || (300..400).contains(&s) => success.push((s, resp, at)),
                // Refusals the platform answers itself: documented for every operation.
                Ok(401 | 403 | 405 | 408 | 413 | 415 | 416 | 422 | 429 | 500 | 503) => {}
                // A conditional write's refusals (`conditional`), answered by the platform.
                Ok(412) if if_match => precondition = true,
                Ok(428) if if_match => required_precondition = true,
                Ok(s) if (400..600).contains(&s) => {
                    let code = error_code(s);
                    let description = resp.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
                    errors.entry(code.clone()).or_insert_with(|| ErrorDef {
                        status: s,
                        message: reason(s).to_string(),
                        description: if description.is_empty() { reason(s).to_string() } else { description },
                    });
                    if !def.errors.contains(&code) {
                        def.errors.push(code);
                    }
                }
                _ if status == "default" && !success_listed => {
                    documented = StatusDocumented::Default;
                    success.push((200, resp, at));
                }
                _ if status == "default" => self
                    .notes
                    .push("the `default` response is not stated (errors answer the platform's envelope)".into()),
                _ => {
                    self.drop(format!("the response status `{status}`"), &at);
                }
            }
        }
        if def.input.is_some() {
            self.validation_error(def);
        }
        success.sort_by_key(|(s, ..)| *s);
        // `304` to `If-None-Match` is a conditional read's; `206` a file's ranges where the main
        // answer is a file, else an answer the implementation gives (a partial result).
        let not_modified = success.iter().any(|(s, ..)| *s == 304);
        let file_like = |r: &Value| {
            let content = r.get("content").and_then(Value::as_object);
            content.is_some_and(|c| {
                !c.is_empty()
                    && !c
                        .keys()
                        .any(|m| support::is_json_media(m) || m == "text/event-stream" || m == "application/x-ndjson")
            })
        };
        let main_file = success.iter().find(|(s, ..)| !matches!(s, 206 | 304)).is_some_and(|(_, r, _)| file_like(r));
        let partial = main_file && success.iter().any(|(s, ..)| *s == 206);
        success.retain(|(s, ..)| *s != 304 && !(*s == 206 && main_file));
        // A read answering JSON is a conditional read; any other `304` the implementation answers.
        let json = |(_, r, _): &(u16, Value, String)| {
            r.get("content").and_then(Value::as_object).is_some_and(|c| c.keys().any(|m| support::is_json_media(m)))
        };
        if not_modified && def.method() == Method::Get && success.first().is_some_and(json) {
            def.conditional = Some(crate::spec::ConditionalDef::On(true));
        } else if not_modified && !success.is_empty() {
            let at = format!("{pointer}/responses/304");
            success.push((304, Value::Object(Default::default()), at));
        }
        if (precondition || required_precondition) && def.method() != Method::Get {
            def.conditional = Some(if required_precondition {
                crate::spec::ConditionalDef::Mode(crate::spec::ConditionalMode::Required)
            } else {
                crate::spec::ConditionalDef::On(true)
            });
            // The platform hands `If-Match` to the implementation itself.
            if let Some(input) = def.input.clone().and_then(|i| self.cx.models.get_mut(&i)) {
                input.fields.shift_remove("if_match");
            }
        }
        let Some((status, resp, at)) = success.first().cloned() else {
            // Nothing says what success answers: the empty answer, which the documents keep
            // unstated as the source does.
            self.notes.push("the document states no success answer: it answers 204 without content".into());
            def.status_documented = StatusDocumented::None;
            return;
        };
        if !crate::load::is_success_status(status) {
            self.drop(format!("the success status {status}"), &at);
            return;
        }
        if success.len() > 1 && !self.alternatives(id, def, &success[1..], documented == StatusDocumented::Range) {
            return;
        }
        let Some(headers) = self.response_headers(&resp, &at) else { return };
        let mut content = resp.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        if matches!(status, 204 | 205) && !content.is_empty() {
            // RFC 9110: a 204 (or 205) answer has no content, whatever the document gives it.
            self.notes.push(format!("the {status} answer has no content (RFC 9110), so its schema is left out"));
            content.clear();
        }
        if def.method() == Method::Head && !content.is_empty() {
            // RFC 9110, 9.3.2: the answer to HEAD has no content either.
            self.notes.push("the answer to HEAD has no content (RFC 9110), so its schema is left out".into());
            content.clear();
        }
        def.status = (status != 200).then_some(status);
        def.status_documented = documented;
        let mut headers = headers;
        if (300..400).contains(&status) && status != 304 {
            // A redirect: its `Location`, required (beside a body, where it has one).
            redirect_location(&mut headers, status, &mut self.notes);
        }
        if content.is_empty() {
            if headers.is_empty() && !(300..400).contains(&status) {
                // An empty answer: `status` says which (204 is the default without an output,
                // and what a `2XX` without content answers).
                def.status = (status != 204 && documented.is_exact()).then_some(status);
                return;
            }
            if (300..400).contains(&status) {
                // A redirect without a body answers its `Location`, required, and nothing else.
                if !(headers.len() == 1 && headers.contains_key("location")) {
                    self.drop(
                        "a redirect without a `Location` header, or with other headers",
                        &format!("{at}/headers"),
                    );
                    return;
                }
            }
            // An answer of headers alone: a model of them, and no body.
            let name = self.cx.fresh(&format!("{id}_output"));
            let description = resp.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            self.cx
                .models
                .insert(name.clone(), ModelDef { description, fields: headers, additional: None, requires: None });
            def.output = Some(name);
            return;
        }
        let json = first_json(&content);
        match json {
            Some(media) => {
                // Content negotiation among JSON types (the same body under each), and with another
                // format: the JSON ones.
                let (listed, others) = json_alternatives(&content, &media);
                def.answer_types = listed;
                let Some(typed) = self.json_body(&content, &media, &at, &format!("{id}_output")) else { return };
                if typed.ty == "file" {
                    // Bytes under a JSON media type too (`format: binary` under each): a file in
                    // every type listed.
                    def.answer_types.clear();
                    return self.file_answer(def, &content, &headers, &at, partial);
                }
                // The other formats of the answer (XML, HTML, CSV, …), which the implementation
                // renders for each answer with a body, so where every other answer with a body
                // lists the same media types (the documents list them for each); a stream or a
                // range of types is none.
                // A union of values (`one_of`) is a field's: the answer is a model whose payload
                // it is.
                let union = !typed.def.one_of.is_empty();
                let types = |r: &Value| -> BTreeSet<String> {
                    r.get("content").and_then(Value::as_object).into_iter().flatten().map(|(m, _)| m.clone()).collect()
                };
                let main_types: BTreeSet<String> = content.keys().cloned().collect();
                let alike = success[1..].iter().all(|(s, r, _)| {
                    let t = types(r);
                    t.is_empty() || matches!(s, 204 | 205 | 304) || t == main_types
                });
                let rendered = alike && typed.ty != "file";
                let (formats, left): (Vec<String>, Vec<String>) = others.into_iter().partition(|m| {
                    let stream = m == "text/event-stream" || m == "application/x-ndjson";
                    rendered && support::is_media_type(m) && !support::is_json_media(m) && !stream
                });
                if !left.is_empty() {
                    self.notes.push(format!("answers its JSON media types only (the document also offers {left:?})"));
                }
                if headers.is_empty() && !union {
                    def.output = Some(typed.ty);
                    add_formats(def, &media, formats);
                    return;
                }
                // Headers beside the body: one output model of the body's fields and the headers;
                // a body that is not an object (a list, a string) is the model's payload field.
                let name = self.cx.fresh(&format!("{id}_output"));
                let Some(body) = self.cx.models.get(&typed.ty).cloned() else {
                    let mut payload = typed.def.clone();
                    payload.location = Location::Payload;
                    payload.optional = false;
                    if headers.contains_key("body") {
                        self.drop("the header field `body`, also the body's", &format!("{at}/headers"));
                        return;
                    }
                    let mut fields = IndexMap::from([("body".to_string(), payload)]);
                    let what = if union { format!("one of {:?}", typed.def.one_of) } else { format!("`{}`", typed.ty) };
                    let and = if headers.is_empty() { "" } else { " and the response headers" };
                    self.notes.push(format!("the answer is `{name}`: its body ({what}){and}"));
                    fields.extend(headers);
                    let description = resp.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
                    self.cx
                        .models
                        .insert(name.clone(), ModelDef { description, fields, additional: None, requires: None });
                    def.output = Some(name);
                    add_formats(def, &media, formats);
                    return;
                };
                let mut fields = body.fields.clone();
                for (k, mut f) in headers {
                    // A header named like a body field (`Location` beside a body's `location`):
                    // a field of its own key, sent under the header's name.
                    let key = match fields.contains_key(&k) {
                        true => super::settle::key_apart(&fields, &k, Location::Header),
                        false => Some(k.clone()),
                    };
                    let Some(key) = key else {
                        self.drop(format!("the header field `{k}`, also a body field"), &format!("{at}/headers"));
                        return;
                    };
                    if key != k {
                        let header = f.name.clone().unwrap_or_else(|| crate::ir::header_name(&k));
                        self.notes.push(format!("the header `{header}` is the field `{key}` (the body has a `{k}`)"));
                        f.name = Some(header);
                    }
                    fields.insert(key, f);
                }
                self.notes
                    .push(format!("the answer is `{name}`: the fields of `{}` and the response headers", typed.ty));
                self.cx.models.insert(
                    name.clone(),
                    ModelDef { description: body.description, fields, additional: None, requires: None },
                );
                def.output = Some(name);
                add_formats(def, &media, formats);
            }
            None => {
                if let Some(media) = content.keys().find(|m| *m == "text/event-stream" || *m == "application/x-ndjson")
                {
                    // A stream of one model per event: OpenAPI 3.2's `itemSchema` (or the
                    // `x-item-schema` extension that carries it in 3.1) names it.
                    let mat = format!("{at}/content/{}", escape(media));
                    let item =
                        content[media].get("itemSchema").or_else(|| content[media].get("x-item-schema")).cloned();
                    let Some(item) = item.filter(|i| i.get("$ref").is_some()) else {
                        self.drop("a stream whose events have no item schema (`itemSchema`)", &mat);
                        return;
                    };
                    let Some(typed) = self.typed(&item, &format!("{id}_event"), &format!("{mat}/itemSchema")) else {
                        return;
                    };
                    if !self.cx.models.contains_key(&typed.ty) || content.len() > 1 || !headers.is_empty() {
                        self.drop("a stream of other than one model per event", &mat);
                        return;
                    }
                    def.stream = Some(if media == "text/event-stream" {
                        support::StreamFormat::Sse
                    } else {
                        support::StreamFormat::Ndjson
                    });
                    def.output = Some(typed.ty);
                    return;
                }
                self.file_answer(def, &content, &headers, &at, partial);
            }
        }
    }

    /// A file answer in the media types of `content`.
    fn file_answer(
        &mut self,
        def: &mut OperationDef,
        content: &serde_json::Map<String, Value>,
        headers: &IndexMap<String, FieldDef>,
        at: &str,
        partial: bool,
    ) {
        def.media_types = content.keys().cloned().collect();
        def.ranges = partial;
        // What a file answer sends of its own (its type and length) is no field of it.
        let own = |k: &String, f: &FieldDef| {
            let name = f.name.clone().unwrap_or_else(|| crate::ir::header_name(k)).to_ascii_lowercase();
            matches!(name.as_str(), "content-type" | "content-length")
        };
        let headers: IndexMap<String, FieldDef> =
            headers.iter().filter(|(k, f)| !own(k, f)).map(|(k, f)| (k.clone(), f.clone())).collect();
        if headers.is_empty() {
            def.output = Some("file".into());
            return;
        }
        // Response headers beside the file: a model of the file (its payload) and the headers.
        let Some(key) = ["content", "file", "body"].into_iter().find(|k| !headers.contains_key(*k)) else {
            self.drop("response headers beside a file, named like its body", &format!("{at}/headers"));
            return;
        };
        let name = self.cx.fresh(&format!("{}_output", def.id));
        let payload = FieldDef { location: Location::Payload, ..FieldDef::new("file", "The file.") };
        let mut fields = IndexMap::from([(key.to_string(), payload)]);
        fields.extend(headers);
        self.notes.push(format!("the answer is `{name}`: the file and its response headers"));
        let description = format!("What `{}` answers: a file and its response headers.", def.id);
        self.cx.models.insert(name.clone(), ModelDef { description, fields, additional: None, requires: None });
        def.output = Some(name);
    }

    /// The type of a JSON success body (in the envelope, what its `data` holds; its `meta` says
    /// it is a page); `None`, with the operation dropped, when it cannot be an output.
    fn json_body(
        &mut self,
        content: &serde_json::Map<String, Value>,
        media: &str,
        at: &str,
        name: &str,
    ) -> Option<Typed> {
        let schema = content[media].get("schema").cloned().unwrap_or(Value::Null);
        let mut sat = format!("{at}/content/{}/schema", escape(media));
        let schema = match self.cx.envelope {
            true => {
                let whole = self.cx.resolve(&schema).cloned().unwrap_or(Value::Null);
                self.paged |= whole.pointer("/properties/meta").is_some();
                sat.push_str("/properties/data");
                whole.pointer("/properties/data").cloned().unwrap_or(Value::Null)
            }
            false => schema,
        };
        let typed = self.typed(&schema, name, &sat)?;
        if typed.def.nullable {
            // The implementation answers a value; a `null` success is an empty answer's.
            self.notes.push(format!("the success body at {sat} is answered, never `null`"));
        }
        Some(typed)
    }

    /// The success answers after the first, as the operation's alternatives: each a 2xx with a
    /// JSON body or none. False, with the operation dropped, when one cannot be.
    fn alternatives(
        &mut self,
        id: &str,
        def: &mut OperationDef,
        others: &[(u16, Value, String)],
        ranged: bool,
    ) -> bool {
        let listed = |all: &[(u16, Value, String)]| all.iter().map(|(s, ..)| s.to_string()).collect::<Vec<_>>();
        for (status, resp, at) in others {
            if ranged || !(crate::load::is_success_status(*status) || matches!(status, 304 | 206)) {
                self.drop(format!("several success statuses ({})", listed(others).join(", ")), at);
                return false;
            }
            let headers = resp.get("headers").and_then(Value::as_object).cloned().unwrap_or_default();
            let redirect = (300..400).contains(status) && *status != 304;
            if headers.keys().any(|h| !(redirect && h.eq_ignore_ascii_case("location"))) {
                self.notes.push(format!("the headers of the {status} answer are not stated"));
            }
            if redirect && !headers.keys().any(|h| h.eq_ignore_ascii_case("location")) {
                self.notes.push(format!("the {status} answer carries the `Location` it redirects to"));
            }
            let content = resp.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
            let output = if content.is_empty() || matches!(status, 204 | 205 | 304) {
                None
            } else {
                let Some(media) = first_json(&content) else {
                    self.drop(format!("a {status} answer that is not JSON beside another success"), at);
                    return false;
                };
                let Some(typed) = self.json_body(&content, &media, at, &format!("{id}_output_{status}")) else {
                    return false;
                };
                if !typed.def.one_of.is_empty() {
                    // An alternative's output is a type, not a field: it cannot say `one_of`.
                    let text =
                        "a success body that is a union of other than objects told apart by a field, beside another";
                    self.drop(text, at);
                    return false;
                }
                Some(typed.ty)
            };
            let description = resp.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            def.alternatives.push(crate::spec::AlternativeDef { status: *status, output, description });
        }
        true
    }

    /// A response's headers as output fields (`in = "header"`, snake_case names): strings or
    /// integers, as the spec language carries them.
    pub(super) fn response_headers(&mut self, resp: &Value, at: &str) -> Option<IndexMap<String, FieldDef>> {
        let mut fields = IndexMap::new();
        for (name, raw) in resp.get("headers").and_then(Value::as_object).into_iter().flatten() {
            let hat = format!("{at}/headers/{}", escape(name));
            // Headers the platform sends for what the spec declares elsewhere (rate limits, the
            // request id, deprecation, tags, pages, files), not fields of the answer.
            let lower = name.to_ascii_lowercase();
            if PLATFORM_HEADERS.contains(&lower.as_str()) {
                if lower == "cache-control" {
                    self.no_store = true;
                    if !raw.to_string().contains("no-store") {
                        self.notes.push("`Cache-Control` is answered `no-store`".into());
                    }
                }
                if lower.starts_with("x-ratelimit") {
                    self.rate_limited = true;
                }
                if lower == "x-total-count" || lower == "link" {
                    self.paged = true;
                }
                continue;
            }
            let h = match self.cx.resolve(raw) {
                Ok(h) => h.clone(),
                Err(e) => {
                    self.drop(e, &hat);
                    return None;
                }
            };
            let Some(field) = header_field(name) else {
                self.drop(format!("the response header `{name}`"), &hat);
                return None;
            };
            let schema = h.get("schema").cloned().unwrap_or(serde_json::json!({"type": "string"}));
            let typed = self.typed(&schema, &format!("{field}_header"), &format!("{hat}/schema"))?;
            // An enum only where the header is optional (the loader's rule).
            let optional = h.get("required").and_then(Value::as_bool) != Some(true);
            let scalar = |t: &str| {
                matches!(t, "string" | "integer" | "number" | "boolean" | "datetime" | "date")
                    || (optional && self.cx.enums.contains_key(t))
            };
            if !scalar(&typed.ty) && !typed.ty.strip_suffix("[]").is_some_and(scalar) {
                self.drop(format!("the response header `{name}` of type `{}`", typed.ty), &hat);
                return None;
            }
            let mut def = typed.def;
            def.location = Location::Header;
            def.optional = h.get("required").and_then(Value::as_bool) != Some(true);
            def.description = h.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            fields.insert(field, def);
        }
        Some(fields)
    }
}

/// The deprecation a description states as Specwright writes it (`**Deprecated** since
/// 2026-11-26; it may be removed from 2027-06-01. Use …`), and the description without it.
pub(super) fn deprecation_of(description: &str) -> Option<(crate::spec::Deprecated, String)> {
    let start = description.find("**Deprecated** since ")?;
    let after = &description[start + "**Deprecated** since ".len()..];
    let since = after.get(..10).filter(|d| support::is_date(d))?.to_string();
    let mut rest = &after[10..];
    let mut sunset = None;
    if let Some(r) = rest.strip_prefix("; it may be removed from ") {
        sunset = Some(r.get(..10).filter(|d| support::is_date(d))?.to_string());
        rest = &r[10..];
    }
    let instead = rest.strip_prefix('.').unwrap_or(rest).trim().to_string();
    let before = description[..start].trim_end().to_string();
    Some((crate::spec::Deprecated { since: Some(since), sunset, instead }, before))
}

/// The field a header named `name` becomes: snake case where the platform's Train-Case spelling of
/// it is the same header (`X-Request-Id` → `x_request_id`), else the header's own name
/// (`X-RateLimit-Limit`); `None` for what is no HTTP header name.
pub(super) fn header_field(name: &str) -> Option<String> {
    if !crate::ir::is_header_token(name) {
        return None;
    }
    let snake = name.to_snake_case();
    if !snake.is_empty() && crate::ir::header_name(&snake).eq_ignore_ascii_case(name) {
        return Some(snake);
    }
    // A snake_case field is sent in Train-Case, so `api_key` cannot name the header `api_key`.
    let read_as_snake = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    (!read_as_snake).then(|| name.to_string())
}

/// `formats`, the other formats an answer is rendered in, after its JSON media types (`json`, the
/// first, where none was listed).
fn add_formats(def: &mut OperationDef, json: &str, formats: Vec<String>) {
    if !formats.is_empty() {
        if def.answer_types.is_empty() {
            def.answer_types.push(json.to_string());
        }
        def.answer_types.extend(formats);
    }
}

/// A redirect's `Location` among its headers, required; one the document does not state is still
/// sent (RFC 9110 section 15.4: the redirect's target).
fn redirect_location(headers: &mut IndexMap<String, FieldDef>, status: u16, notes: &mut Vec<String>) {
    match headers.get_mut("location") {
        Some(location) => {
            if location.optional {
                notes.push("the redirect's `Location` is required".into());
            }
            location.optional = false;
        }
        None => {
            let mut location = FieldDef::new("string", "Where the redirect leads.");
            location.location = Location::Header;
            headers.insert("location".into(), location);
            notes.push(format!("the {status} redirect answers a `Location`, which the document does not state"));
        }
    }
}
