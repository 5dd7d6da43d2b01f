//! Request bodies: the body's fields in the format its media type says (JSON, a form, multipart,
//! raw bytes), with the other media types a JSON body is also sent as.

use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::{BodyFormat, FieldDef, Location, OperationDef};

use super::*;

impl OpCx<'_, '_> {
    /// The request body's fields, in the body format its media type says.
    pub(super) fn body(
        &mut self,
        id: &str,
        body: &Value,
        at: &str,
        def: &mut OperationDef,
        fields: &mut IndexMap<String, FieldDef>,
    ) {
        let content = body.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        let required = body.get("required").and_then(Value::as_bool) == Some(true);
        let json = first_json(&content);
        let chosen = json.clone().or_else(|| content.keys().next().cloned());
        let Some(media) = chosen else {
            self.drop("a request body without content", at);
            return;
        };
        // Raw bodies of several media types: one file of any of them.
        let raw = |m: &String| {
            !support::is_json_media(m) && m != "multipart/form-data" && m != "application/x-www-form-urlencoded"
        };
        if content.len() > 1 && content.keys().all(raw) {
            def.body = BodyFormat::Raw;
            let mut f = FieldDef::new(
                "file",
                body.get("description").and_then(Value::as_str).unwrap_or("The request body.").to_string(),
            );
            f.media_types = content.keys().cloned().collect();
            f.max_size = Some(crate::rust::DEFAULT_MAX_FILE);
            self.notes.push(format!("the body is at most {} bytes", crate::rust::DEFAULT_MAX_FILE));
            fields.insert(body_name(body), f);
            return;
        }
        if content.len() > 1 && !support::is_json_media(&media) {
            let others: Vec<&String> = content.keys().filter(|k| **k != media).collect();
            self.drop(
                format!("a request body in several media types ({media} imported; not {others:?})"),
                &format!("{at}/content"),
            );
            return;
        }
        // A form or multipart alternative of a JSON object body, of the same schema (or none):
        // taken as itself into the same fields, where they are all ones a form carries.
        let mut forms: Vec<String> = Vec::new();
        // Other formats of the same body (XML, plain text), which the implementation reads.
        let mut reads: Vec<String> = Vec::new();
        if support::is_json_media(&media) {
            let (listed, mut others) = json_alternatives(&content, &media);
            def.request_types = listed;
            let schema = content[&media].get("schema");
            others.retain(|m| {
                let form = matches!(
                    support::BodyFormat::of_media(m),
                    Some(support::BodyFormat::Form | support::BodyFormat::Multipart)
                );
                let same = content[m].get("schema").is_none_or(|s| Some(s) == schema);
                if form && same {
                    forms.push(m.clone());
                }
                !(form && same)
            });
            // A body of another shape (a multipart form with the file a JSON body has in base64):
            // described by a model of its own, read by the implementation.
            let mut own = Vec::new();
            for m in std::mem::take(&mut others) {
                let other = content[&m].get("schema").filter(|s| Some(*s) != schema);
                let pointer = format!("{at}/content/{}/schema", escape(&m));
                match other.and_then(|o| self.own_shape(o, id, &m, &pointer)) {
                    Some(model) => own.push((m, model)),
                    None => others.push(m),
                }
            }
            let (mut read, left): (Vec<String>, Vec<String>) = others.into_iter().partition(|m| {
                support::is_media_type(m) && support::BodyFormat::of_media(m).is_none() && !is_stream(m)
            });
            if !left.is_empty() {
                self.notes.push(format!("takes its JSON media types only (the document also accepts {left:?})"));
            }
            for (m, model) in own {
                self.notes.push(format!(
                    "its implementation reads `{m}` bodies, described by model `{model}`, into the input's fields (`read_body`)"
                ));
                def.request_models.insert(m.clone(), model);
                read.push(m);
            }
            reads = read;
        }
        let mat = format!("{at}/content/{}", escape(&media));
        let schema = content[&media].get("schema").cloned().unwrap_or(Value::Null);
        let sat = format!("{mat}/schema");
        match media.as_str() {
            m if support::is_json_media(m) => {
                // An object becomes the input's body fields; anything else is the payload.
                let resolved = self.cx.resolve(&schema).cloned().unwrap_or(Value::Null);
                let resolved = if resolved.get("allOf").is_some() && !is_union(&resolved) {
                    let Some(merged) = self.merge_all_of(&resolved, &sat) else { return };
                    merged
                } else {
                    resolved
                };
                // An object with properties of its own; a free-form object or a union is a payload.
                let has_fields = resolved.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
                if is_object(&resolved)
                    && !is_union(&resolved)
                    && has_fields
                    && resolved.get("additionalProperties").is_none_or(|a| a == &Value::Bool(false))
                {
                    if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
                        self.notes.push(format!(
                            "the body schema `{}` is the input's body fields",
                            name.rsplit('/').next().unwrap_or(name)
                        ));
                    }
                    self.object_fields(&resolved, id, &sat, fields, Location::Body);
                    match self.requires_of(&resolved, fields, &sat) {
                        Some(requires) => self.input_requires = requires,
                        None => return,
                    }
                    if !forms.is_empty() {
                        self.take_forms(&media, forms, def);
                    }
                    if !required {
                        self.notes.push("the request body is required (the document makes it optional)".into());
                    }
                } else {
                    let Some(mut typed) = self.typed(&schema, &format!("{id}_body"), &sat) else { return };
                    typed.def.location = Location::Payload;
                    typed.def.optional = !required;
                    if typed.def.description.is_empty() {
                        typed.def.description =
                            body.get("description").and_then(Value::as_str).unwrap_or("The request body.").to_string();
                    }
                    fields.insert(body_name(body), typed.def);
                    if !forms.is_empty() {
                        self.take_forms(&media, forms, def);
                    }
                }
            }
            "multipart/form-data" | "application/x-www-form-urlencoded" => {
                let resolved = self.cx.resolve(&schema).cloned().unwrap_or(Value::Null);
                if !is_object(&resolved) {
                    self.drop("a form body that is not an object", &sat);
                    return;
                }
                if resolved.get("additionalProperties").is_some_and(|a| a != &Value::Bool(false)) {
                    self.drop("additional properties in a form", &format!("{sat}/additionalProperties"));
                    return;
                }
                def.body = if media == "multipart/form-data" { BodyFormat::Multipart } else { BodyFormat::Form };
                self.object_fields(&resolved, id, &sat, fields, Location::Body);
            }
            other => {
                def.body = BodyFormat::Raw;
                let mut f = FieldDef::new(
                    "file",
                    body.get("description").and_then(Value::as_str).unwrap_or("The request body.").to_string(),
                );
                if other != "application/octet-stream" {
                    f.media_types = vec![other.to_string()];
                }
                f.max_size = Some(crate::rust::DEFAULT_MAX_FILE);
                self.notes.push(format!("the `{other}` body is at most {} bytes", crate::rust::DEFAULT_MAX_FILE));
                fields.insert(body_name(body), f);
            }
        }
        if !reads.is_empty() && def.body == BodyFormat::Json {
            if def.request_types.is_empty() {
                def.request_types.push(media.clone());
            }
            self.notes.push(format!("its implementation reads {reads:?} bodies into the same fields (`read_body`)"));
            def.request_types.extend(reads);
        }
    }

    /// The model describing a request body of media type `m` in a shape of its own (`schema`),
    /// where the schema is one of an object the importer can read; none, and nothing dropped,
    /// where it is not.
    fn own_shape(&mut self, schema: &Value, id: &str, m: &str, at: &str) -> Option<String> {
        if is_stream(m) || !support::is_media_type(m) || !is_object(self.cx.resolve(schema).ok()?) {
            return None;
        }
        let word = match support::BodyFormat::of_media(m) {
            Some(support::BodyFormat::Multipart) => "multipart".to_string(),
            Some(support::BodyFormat::Form) => "form".to_string(),
            // `application/ld+json` → `ld_json`.
            _ => {
                let subtype = m.split(';').next().unwrap_or(m).split('/').nth(1).unwrap_or(m);
                subtype.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
            }
        };
        let (drops, notes) = (self.drops.len(), self.notes.len());
        let typed = self.typed(schema, &format!("{id}_{word}_body"), at);
        let model = typed.map(|t| t.ty).filter(|t| self.cx.models.contains_key(t) && !t.ends_with("[]"));
        if model.is_none() || self.drops.len() > drops {
            self.drops.truncate(drops);
            self.notes.truncate(notes);
            return None;
        }
        model
    }

    /// Lists `forms` beside the JSON `media` in the operation's request types: decoded by the
    /// platform where it can carry every body field, else read by the implementation, as the
    /// loader decides (`load::bodies::read_types`) and the report then says ([`note_read_forms`]).
    fn take_forms(&mut self, media: &str, forms: Vec<String>, def: &mut OperationDef) {
        if def.request_types.is_empty() {
            def.request_types.push(media.to_string());
        }
        def.request_types.extend(forms);
    }
}

/// Whether `m` is a stream's media type, which no request body is sent as.
fn is_stream(m: &str) -> bool {
    m == "text/event-stream" || m == "application/x-ndjson"
}
