//! Operations: each path item's operations into spec operations: route, scope, input (parameters
//! and body), pagination and MCP tool.

use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::{BodyFormat, ErrorDef, FieldDef, Location, Method, ModelDef, OperationDef, Pagination, ScopeDef};

use super::readings::untyped_as_text;
use super::settle::key_apart;
use super::*;

impl OpCx<'_, '_> {
    pub(super) fn drop(&mut self, construct: impl Into<String>, pointer: &str) {
        let drop = (construct.into(), pointer.to_string());
        if !self.drops.contains(&drop) {
            self.drops.push(drop);
        }
    }

    #[allow(clippy::too_many_arguments, reason = "one operation's whole context")]
    pub(super) fn operation(
        &mut self,
        id: &str,
        method: Method,
        path: &str,
        item: &Value,
        op: &Value,
        pointer: &str,
        options: &Options,
        scopes: &mut Vec<ScopeDef>,
        errors: &mut IndexMap<String, ErrorDef>,
    ) -> Option<OperationDef> {
        self.template = path.to_string();
        let text = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let summary = match text("summary") {
            s if s.is_empty() => {
                let s = text("description").lines().next().unwrap_or_default().to_string();
                if s.is_empty() { id.replace('_', " ") } else { s }
            }
            s => s,
        };
        let mut def = OperationDef {
            id: id.to_string(),
            route: None,
            method: Some(method),
            path: named_apart(path, self.cx.path_names.get(path)),
            scope: None,
            public: false,
            summary,
            description: text("description"),
            tags: op
                .get("tags")
                .and_then(Value::as_array)
                .map(|t| t.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
            input: None,
            output: None,
            body: BodyFormat::Json,
            stream: None,
            get_body: false,
            request_types: Vec::new(),
            request_models: IndexMap::new(),
            answer_types: Vec::new(),
            media_types: Vec::new(),
            paginated: false,
            status: None,
            status_documented: Default::default(),
            alternatives: Vec::new(),
            errors: Vec::new(),
            no_store: false,
            rate_limited: true,
            read_only: None,
            deprecated: None,
            conditional: None,
            mcp: None,
            resource: None,
            ranges: false,
            prerendered: false,
            audit_targets: Vec::new(),
        };
        if op.get("deprecated").and_then(Value::as_bool) == Some(true) {
            // The day of a deprecation (its `Deprecation` header) is what a document Specwright
            // wrote gives in its description; other documents give none.
            match deprecation_of(&def.description) {
                Some((deprecated, rest)) => {
                    def.deprecated = Some(deprecated);
                    def.description = rest;
                }
                None => def.deprecated = Some(crate::spec::Deprecated::default()),
            }
        }
        // `security: []` (on the operation, or for the whole document): served without a token.
        let security = op.get("security").or_else(|| self.cx.doc.get("security"));
        if security.and_then(Value::as_array).is_some_and(Vec::is_empty) {
            def.public = true;
        } else {
            def.scope = self.scope(op, method, pointer, options, scopes);
        }
        let input = self.input(id, item, op, pointer, &mut def);
        def.input = input;
        self.responses(id, op, pointer, &mut def, errors);
        self.pages(&mut def);
        for p in std::mem::take(&mut self.platform_params) {
            let served = match p.header.as_str() {
                "if-none-match" => def.conditional() == Some(support::Conditional::Read),
                "if-match" => matches!(def.conditional(), Some(support::Conditional::Write { .. })),
                _ => def.ranges,
            };
            if !served {
                // Without the answers that make it the platform's (304, 412, 206), the header is
                // the implementation's to read, as any other.
                self.header_for_implementation(id, &p, &mut def);
            }
        }
        if self.rate_limited {
            self.cx.rate_limit_headers = true;
        }
        def.no_store |= self.no_store;
        if let Some(tool) = self.tool(id, op, &def, options) {
            def.mcp = Some(tool);
        }
        // The MCP resource a `GET` reads, as Specwright's documents state it.
        if let Some(r) = op.get("x-mcp-resource").filter(|_| method == Method::Get) {
            let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
            if let (Some(name), Some(description)) = (text("name"), text("description")) {
                let (title, uri, complete) = (text("title"), text("uri"), Default::default());
                def.resource = Some(crate::spec::ResourceDef { name, title, description, uri, complete });
            }
        }
        Some(def)
    }

    /// The scope the operation needs: its OAuth requirement's first scope, else by method.
    pub(super) fn scope(
        &mut self,
        op: &Value,
        method: Method,
        pointer: &str,
        options: &Options,
        scopes: &mut Vec<ScopeDef>,
    ) -> Option<String> {
        let requirements = op.get("security").or_else(|| self.cx.doc.get("security")).and_then(Value::as_array);
        let schemes = self.cx.doc.pointer("/components/securitySchemes").cloned().unwrap_or_default();
        let mut found: Option<String> = None;
        for req in requirements.into_iter().flatten() {
            for (scheme, list) in req.as_object().into_iter().flatten() {
                let kind = schemes.get(scheme).and_then(|s| s.get("type")).and_then(Value::as_str).unwrap_or_default();
                let names: Vec<&str> = list.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                if matches!(kind, "oauth2" | "openIdConnect") && !names.is_empty() && found.is_none() {
                    if names.len() > 1 {
                        self.notes.push(format!(
                            "needs scope `{}` only, where the document asks for all of {}",
                            names[0],
                            names.join(", ")
                        ));
                    }
                    found = Some(names[0].to_string());
                }
            }
        }
        let scope = match (found, &options.scope_by_method) {
            (Some(s), _) => s,
            (None, Some((read, write))) => {
                let (want, other) = if method.is_safe() { (read, None) } else { (write, Some(read)) };
                if !scopes.iter().any(|s| &s.name == read) {
                    scopes.push(ScopeDef { name: read.clone(), description: "Read.".into(), implies: Vec::new() });
                }
                if other.is_some() && !scopes.iter().any(|s| &s.name == write) {
                    scopes.push(ScopeDef {
                        name: write.clone(),
                        description: "Change.".into(),
                        implies: vec![read.clone()],
                    });
                }
                self.notes.push(format!("needs scope `{want}` (by its method: the document names no OAuth scope)"));
                return Some(want.clone());
            }
            (None, None) => {
                self.drop(
                    "no OAuth scope (pass --scope-by-method read:write to give one by method)",
                    &format!("{pointer}/security"),
                );
                return None;
            }
        };
        if !scopes.iter().any(|s| s.name == scope) {
            let description = self
                .cx
                .doc
                .pointer("/components/securitySchemes")
                .and_then(Value::as_object)
                .and_then(|m| {
                    m.values().find_map(|s| {
                        s.get("flows")?
                            .as_object()?
                            .values()
                            .find_map(|f| f.get("scopes")?.get(&scope)?.as_str().map(str::to_string))
                    })
                })
                .unwrap_or_else(|| format!("The `{scope}` scope."));
            scopes.push(ScopeDef { name: scope.clone(), description, implies: Vec::new() });
        }
        Some(scope)
    }

    /// The input model: parameters and the request body.
    pub(super) fn input(
        &mut self,
        id: &str,
        item: &Value,
        op: &Value,
        pointer: &str,
        def: &mut OperationDef,
    ) -> Option<String> {
        let mut fields: IndexMap<String, FieldDef> = IndexMap::new();
        // OpenAPI: an operation's parameter overrides the path's of the same name and place.
        let key = |p: &Value| {
            let p = self.cx.resolve(p).ok()?;
            let name = p.get("name").and_then(Value::as_str)?;
            let at = p.get("in").and_then(Value::as_str)?;
            Some((if at == "header" { name.to_ascii_lowercase() } else { name.to_string() }, at.to_string()))
        };
        let overridden: Vec<(String, String)> =
            op.get("parameters").and_then(Value::as_array).into_iter().flatten().filter_map(key).collect();
        let params: Vec<(Value, String)> = item
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, p)| key(p).is_none_or(|k| !overridden.contains(&k)))
            .map(|(i, p)| {
                (p.clone(), format!("{}/parameters/{i}", pointer.rsplit_once('/').map(|x| x.0).unwrap_or(pointer)))
            })
            .chain(
                op.get("parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, p)| (p.clone(), format!("{pointer}/parameters/{i}"))),
            )
            .collect();
        for (raw, at) in params {
            let p = match self.cx.resolve(&raw) {
                Ok(p) => p.clone(),
                Err(e) => {
                    self.drop(e, &at);
                    continue;
                }
            };
            let mut name = p.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            let location = match p.get("in").and_then(Value::as_str) {
                Some("path") => {
                    let template = self.template.clone();
                    if let Some(apart) = self.cx.path_names.get(&template).and_then(|n| n.get(&name)) {
                        let why = match apart.strip_prefix("path_").and_then(|n| n.strip_prefix(name.as_str())) {
                            Some(rest) if rest.is_empty() || rest.starts_with('_') => {
                                format!("apart from the field `{name}`")
                            }
                            _ => "as the paths sharing its prefix name it".to_string(),
                        };
                        self.notes.push(format!(
                            "the path parameter `{name}` is named `{apart}`, {why} (its place in the path, and so \
                             every request, is the same)"
                        ));
                        name = apart.clone();
                    }
                    Location::Path
                }
                Some("query") => Location::Query,
                Some("header") => Location::Header,
                other => {
                    self.drop(format!("a parameter in {}", other.unwrap_or("nowhere")), &at);
                    continue;
                }
            };
            // OpenAPI: a header parameter named `Accept`, `Content-Type` or `Authorization` "SHALL be
            // ignored" (the media types and the security scheme say them).
            if location == Location::Header
                && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str())
            {
                self.notes.push(format!("the header parameter `{name}` at {at} is not imported (OpenAPI ignores it)"));
                continue;
            }
            // `Accept-Encoding` is the transport's: the platform negotiates the answer's coding
            // (RFC 9110 section 12.5.3), and a client's HTTP library sets it of its own.
            if location == Location::Header && name.eq_ignore_ascii_case("accept-encoding") {
                self.notes.push(format!(
                    "the header parameter `{name}` at {at} is not imported (the platform negotiates the answer's coding)"
                ));
                continue;
            }
            if location == Location::Path && !def.path.contains(&format!("{{{name}}}")) {
                // No request can carry it: the document's slip, reported and left out.
                self.notes.push(format!("the path parameter `{name}` at {at} is not in the path: left out"));
                continue;
            }
            // `content` in place of a schema: the value is that media type's text. JSON text is
            // read as such; any other is not imported.
            let content = p.get("content").and_then(Value::as_object);
            let json_content = match content.map(|c| c.iter().collect::<Vec<_>>()).as_deref() {
                None => None,
                Some([(media, c)]) if support::is_json_media(media) => Some((media.to_string(), c.get("schema"))),
                Some(_) => {
                    self.drop("a parameter with `content` other than one JSON media type", &format!("{at}/content"));
                    continue;
                }
            };
            // Request headers the platform reads for a feature the responses show (`conditional`,
            // `ranges`): checked once the responses are read.
            if location == Location::Header && PLATFORM_REQUEST_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                self.platform_params.push(PlatformParam {
                    header: name.to_ascii_lowercase(),
                    name: name.clone(),
                    at: at.clone(),
                    description: p.get("description").and_then(Value::as_str).unwrap_or_default().to_string(),
                    required: p.get("required").and_then(Value::as_bool) == Some(true),
                });
                continue;
            }
            // A header whose name its field's key cannot say (`api_key`, which a snake_case key
            // would send as `Api-Key`): a key of its own, and the header's name as written.
            let verbatim = location == Location::Header
                && header_field(&name).is_none()
                && crate::ir::is_header_token(&name)
                && crate::ir::is_wire_name(&name);
            let field_name = match location {
                Location::Header if verbatim => Some(format!("{}_header", name.to_snake_case())),
                Location::Header => header_field(&name),
                _ => Some(name.clone()),
            };
            if name.is_empty() && location != Location::Path {
                // A parameter without a name (exported from a tool that left it blank): no request
                // can send it, so it is no part of the API.
                self.notes.push(format!("the parameter at {at} has no name, which no request can send: left out"));
                continue;
            }
            let Some(field_name) = field_name.filter(|n| crate::ir::is_wire_name(n)) else {
                self.drop(format!("the parameter name `{name}`"), &at);
                continue;
            };
            let any = Value::Object(Default::default());
            let schema = match &json_content {
                // JSON text of no stated schema: any value.
                Some((_, schema)) => schema.unwrap_or(&any),
                None => match p.get("schema") {
                    Some(schema) => schema,
                    None => {
                        self.drop("a parameter without a schema", &at);
                        continue;
                    }
                },
            };
            let hint = format!("{id}_{name}");
            let schema = match self.text_union(schema) {
                Some((read, why)) => {
                    self.notes.push(format!("the parameter `{name}` at {at}: {why}"));
                    read
                }
                None => schema.clone(),
            };
            // A parameter sent as text (not JSON text) whose schema, or whose items', states no
            // type: text, as whatever the parameter carries is.
            let schema = match (&json_content, untyped_as_text(&schema)) {
                (None, Some(text)) => {
                    self.notes.push(format!("the parameter `{name}` at {at} states no type: text"));
                    text
                }
                _ => schema,
            };
            let Some(mut typed) = self.typed(&schema, &hint, &format!("{at}/schema")) else { continue };
            typed.def.location = location;
            if verbatim {
                typed.def.name = Some(name.clone());
            }
            typed.def.optional =
                !(p.get("required").and_then(Value::as_bool) == Some(true) || location == Location::Path);
            if let Some(d) = p.get("description").and_then(Value::as_str) {
                typed.def.description = d.to_string();
            }
            if p.get("deprecated").and_then(Value::as_bool) == Some(true) {
                typed.def.deprecated = true;
            }
            // JSON text is written as the media type says, whatever a style would say.
            typed.def.content = json_content.map(|(media, _)| media);
            let style = p.get("style").and_then(Value::as_str).filter(|_| typed.def.content.is_none());
            let list = typed.ty.ends_with("[]");
            let object = self.cx.models.contains_key(&typed.ty) || typed.ty.starts_with("map<") || typed.ty == "json";
            if location == Location::Query && object {
                // An object: its members under their own names (`form`, exploded: the default) or
                // as `name[member]` (`deepObject`).
                let explode = p.get("explode").and_then(Value::as_bool).unwrap_or(true);
                typed.def.style = match (style.unwrap_or("form"), explode) {
                    ("deepObject", _) => support::ListStyle::Deep,
                    ("form", true) => support::ListStyle::Repeated,
                    (other, explode) => {
                        let how = if explode { "" } else { ", not exploded" };
                        self.drop(format!("parameter style `{other}`{how} for an object"), &format!("{at}/style"));
                        continue;
                    }
                };
            } else if location == Location::Query && list {
                // OpenAPI: `explode` is true for `form` (the default style), false for the others.
                let explode = p.get("explode").and_then(Value::as_bool).unwrap_or(matches!(style, None | Some("form")));
                typed.def.style = match (style.unwrap_or("form"), explode) {
                    (_, true) => support::ListStyle::Repeated,
                    ("form", false) => support::ListStyle::Comma,
                    ("spaceDelimited", false) => support::ListStyle::Space,
                    ("pipeDelimited", false) => support::ListStyle::Pipe,
                    (other, _) => {
                        self.drop(format!("parameter style `{other}`"), &format!("{at}/style"));
                        support::ListStyle::Repeated
                    }
                };
            } else if let Some(style) = style {
                let default = if matches!(location, Location::Query) { "form" } else { "simple" };
                if style != default {
                    self.drop(format!("parameter style `{style}`"), &format!("{at}/style"));
                }
            }
            if fields.contains_key(&field_name) {
                // One name in two places (a query parameter and a header `id`): this one's key is
                // named apart, and it travels under its name.
                let Some(key) = key_apart(&fields, &field_name, location) else {
                    self.drop(format!("the field `{field_name}` twice"), &at);
                    continue;
                };
                self.notes.push(format!("the parameter `{name}` is field `{key}`: another field has its name"));
                // A header's name as written; a query parameter's is its key's.
                typed.def.name = Some(if location == Location::Header { name.clone() } else { field_name });
                fields.insert(key, typed.def);
                continue;
            }
            fields.insert(field_name, typed.def);
        }
        // Several free-form objects in the query (`sort_by`, `filter`), each of which would take
        // every parameter no field names in the form style: no request could tell them apart, so
        // each travels as `name[key]` (`deepObject`), as such documents describe them.
        let free: Vec<String> = fields
            .iter()
            .filter(|(_, f)| {
                f.location == Location::Query && f.style == support::ListStyle::Repeated && f.ty.starts_with("map<")
            })
            .map(|(k, _)| k.clone())
            .collect();
        if free.len() > 1 {
            self.notes.push(format!(
                "the free-form query objects {free:?} travel as `name[key]` (deepObject): in the form style no request \
                 tells them apart"
            ));
            for k in free {
                if let Some(f) = fields.get_mut(&k) {
                    f.style = support::ListStyle::Deep;
                }
            }
        }
        // A parameter the path names that the document does not declare (OpenAPI requires each):
        // a required string, as a path segment is.
        for name in support::template_params(&def.path) {
            if !fields.contains_key(name) {
                let mut f = FieldDef::new("string", "");
                f.location = Location::Path;
                self.notes.push(format!("the path parameter `{name}` is not declared: a string"));
                fields.insert(name.to_string(), f);
            }
        }
        if let Some(raw) = op.get("requestBody") {
            let at = format!("{pointer}/requestBody");
            match self.cx.resolve(raw) {
                Ok(body) if def.method().takes_no_body() && self.no_fields(body) => {
                    // An optional body of no fields on a GET (as Stripe's description gives each
                    // one): nothing to send, so no body.
                    self.notes.push(format!("the optional {} body of no fields is left out", def.method().as_str()));
                }
                Ok(body) => {
                    let body = body.clone();
                    self.body(id, &body, &at, def, &mut fields);
                    // A GET the document gives a body of fields (a search too large for a URL).
                    def.get_body = def.method() == Method::Get;
                }
                Err(e) => self.drop(e, &at),
            }
        }
        if fields.is_empty() {
            return None;
        }
        let name = self.cx.fresh(&format!("{id}_input"));
        let description = format!("The input of `{id}`.");
        let requires = self.input_requires.take();
        self.cx.models.insert(name.clone(), ModelDef { description, fields, additional: None, requires });
        Some(name)
    }

    /// Whether `body` is optional and each of its media types an object of no properties (or no
    /// schema at all).
    fn no_fields(&self, body: &Value) -> bool {
        let optional = body.get("required").and_then(Value::as_bool) != Some(true);
        let content = body.get("content").and_then(Value::as_object);
        optional
            && content.into_iter().flatten().all(|(_, c)| {
                let schema = c.get("schema").map(|s| self.cx.resolve(s).ok().cloned().unwrap_or(Value::Null));
                schema.is_none_or(|s| {
                    let empty = s.get("properties").and_then(Value::as_object).is_none_or(|p| p.is_empty());
                    let closed = s.get("additionalProperties").is_none_or(|a| a == &Value::Bool(false));
                    is_object(&s) && empty && closed && s.get("allOf").is_none() && !is_union(&s)
                })
            })
    }

    /// The properties of an object schema as fields at `location`.
    pub(super) fn object_fields(
        &mut self,
        schema: &Value,
        hint: &str,
        at: &str,
        fields: &mut IndexMap<String, FieldDef>,
        location: Location,
    ) {
        let required: Vec<&str> =
            schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        for (prop, s) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
            let pat = format!("{at}/properties/{}", escape(prop));
            if !crate::ir::is_wire_name(prop) {
                self.drop(format!("the property name `{prop}`"), &pat);
                continue;
            }
            let Some(mut typed) = self.typed(s, &format!("{hint}_{prop}"), &pat) else { continue };
            typed.def.location = location;
            typed.def.optional = !required.contains(&prop.as_str());
            let held = fields.get(prop).map(|f| f.location);
            if let Some(at @ (Location::Query | Location::Header)) = held
                && let Some(key) = key_apart(fields, prop, at)
                && let Some(mut param) = fields.shift_remove(prop)
            {
                // A body field named like a query or header parameter: the parameter's key is
                // named apart, and it travels under its name.
                self.notes.push(format!("the parameter `{prop}` is field `{key}`: a body field has its name"));
                // The name it travels under: a header's as its key would have sent it.
                let wire = if at == Location::Header { crate::ir::header_name(prop) } else { prop.clone() };
                param.name.get_or_insert(wire);
                fields.insert(key, param);
            }
            if fields.contains_key(prop) {
                self.drop(format!("the field `{prop}` twice"), &pat);
                continue;
            }
            fields.insert(prop.clone(), typed.def);
        }
        // A required member the document does not describe: present, with any value (what
        // JSON Schema's `required` alone asks).
        let described = schema.get("properties").and_then(Value::as_object);
        for name in required.iter().filter(|n| !described.is_some_and(|p| p.contains_key(**n))) {
            if !crate::ir::is_wire_name(name) || fields.contains_key(*name) {
                continue;
            }
            let mut def = FieldDef::new("json", "");
            def.location = location;
            self.notes.push(format!("`{name}` is required at {at} without a schema: a field of any JSON value"));
            fields.insert(name.to_string(), def);
        }
    }

    /// `p` as an ordinary header field of the operation's input (made when it has none).
    fn header_for_implementation(&mut self, id: &str, p: &PlatformParam, def: &mut OperationDef) {
        let Some(field) = header_field(&p.name) else {
            self.drop(format!("the parameter name `{}`", p.name), &p.at);
            return;
        };
        let mut f = FieldDef::new("string", p.description.clone());
        f.location = Location::Header;
        f.optional = !p.required;
        let input = match def.input.clone() {
            Some(input) => input,
            None => {
                let name = self.cx.fresh(&format!("{id}_input"));
                self.cx.models.insert(
                    name.clone(),
                    ModelDef { description: String::new(), fields: IndexMap::new(), additional: None, requires: None },
                );
                def.input = Some(name.clone());
                self.validation_error(def);
                name
            }
        };
        match self.cx.models.get_mut(&input) {
            Some(model) if !model.fields.contains_key(&field) => {
                model.fields.insert(field, f);
            }
            _ => self.drop(format!("the field `{field}` twice"), &p.at),
        }
        self.notes.push(format!(
            "`{}` is a header the implementation reads (the document gives none of the answers the platform's \
             conditional requests and ranges give)",
            p.name
        ));
    }

    /// A list answered with a page's headers, taking `page` and `per_page`, is a paginated
    /// operation: the pagination rules add those two, and the answer is the page's items.
    pub(super) fn pages(&mut self, def: &mut OperationDef) {
        let Some(item) = def.output.as_deref().and_then(|o| o.strip_suffix("[]")).map(str::to_string) else { return };
        if !self.paged || def.method() != Method::Get || !self.cx.models.contains_key(&item) {
            return;
        }
        let Some(input) = def.input.clone() else { return };
        let Some(model) = self.cx.models.get_mut(&input) else { return };
        let query =
            |m: &ModelDef, n: &str| m.fields.get(n).is_some_and(|f| f.location == Location::Query && f.ty == "integer");
        if !query(model, "page") || !query(model, "per_page") {
            return;
        }
        let per_page = model.fields.shift_remove("per_page");
        model.fields.shift_remove("page");
        let (default, max) =
            per_page.map(|f| (f.default.and_then(|d| d.as_u64()), f.maximum.map(|m| m as u64))).unwrap_or_default();
        let rules = Pagination {
            default_per_page: default
                .and_then(|d| u32::try_from(d).ok())
                .unwrap_or(Pagination::default().default_per_page),
            max_per_page: max.and_then(|m| u32::try_from(m).ok()).unwrap_or(Pagination::default().max_per_page),
        };
        match &self.cx.pagination {
            Some(seen)
                if (seen.default_per_page, seen.max_per_page) != (rules.default_per_page, rules.max_per_page) =>
            {
                self.notes.push(format!(
                    "pages by the service's rules ({} per page, at most {}), not this operation's",
                    seen.default_per_page, seen.max_per_page
                ));
            }
            Some(_) => {}
            None => self.cx.pagination = Some(rules),
        }
        def.paginated = true;
        def.output = Some(item);
    }

    /// The MCP tool, when the options select this operation and it can travel over MCP.
    pub(super) fn tool(
        &mut self,
        id: &str,
        op: &Value,
        def: &OperationDef,
        options: &Options,
    ) -> Option<crate::spec::McpToolDef> {
        let original = op.get("operationId").and_then(Value::as_str).unwrap_or_default();
        // The tool a document names (as Specwright's own documents do) is one unless a selection
        // says otherwise, and keeps its name.
        let named = op.get("x-mcp-tool").and_then(Value::as_str).filter(|n| !n.is_empty());
        let chosen = match &options.mcp {
            McpSelection::None => named.is_some(),
            McpSelection::All => true,
            McpSelection::Tags(tags) => def.tags.iter().any(|t| tags.contains(t)),
            McpSelection::Operations(ids) => ids.iter().any(|i| i == id || i == original),
        };
        if !chosen {
            return None;
        }
        let file_in = def
            .input
            .as_ref()
            .and_then(|i| self.cx.models.get(i))
            .is_some_and(|m| m.fields.values().any(|f| f.ty == "file"));
        if def.output.as_deref() == Some("file") || def.body != BodyFormat::Json || file_in {
            self.notes.push("no MCP tool: a file cannot travel in a tool call".into());
            return None;
        }
        let title = def.summary.clone();
        let description = if def.description.is_empty() { def.summary.clone() } else { def.description.clone() };
        // As Specwright's documents state them: whether it runs as a task, and the error a REST
        // call answers where the tool would ask for input (one the operation declares).
        let task = op.get("x-mcp-task").and_then(|t| serde_json::from_value(t.clone()).ok());
        let asks = op.get("x-mcp-asks-input").and_then(Value::as_str);
        let asks_input = asks.filter(|code| def.errors.iter().any(|e| e == code)).map(str::to_string);
        if let (Some(code), None) = (asks, &asks_input) {
            self.notes
                .push(format!("`x-mcp-asks-input` names `{code}`, which the operation does not answer: left out"));
        }
        Some(crate::spec::McpToolDef {
            name: named.unwrap_or(id).to_string(),
            title,
            description,
            destructive: None,
            idempotent: None,
            content: Vec::new(),
            asks_input,
            task,
        })
    }
}
