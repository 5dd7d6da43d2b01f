//! `import`: an OpenAPI 3.0 or 3.1 document in, a spec a person would have written out, with a
//! report of what was imported exactly, what with a stated normalisation, and what not (the
//! construct and its JSON pointer). Nothing is dropped without a line in the report.
//!
//! The document's own names are kept: models after its schemas, operations after their
//! `operationId`, fields after their properties (camelCase stays camelCase on the wire). Bodies
//! are bare, as the document's are. What the spec language cannot say yet is reported, and the
//! operation that needs it is left out, so what is imported serves exactly what it documents.

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase, ToUpperCamelCase};
use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::{
    BodyFormat, EnumDef, EnumValue, ErrorDef, FieldDef, Location, Method, ModelDef, OperationDef, Pagination, ScopeDef,
    Security, Service, Spec, SuccessFormat, TagDef, Wire,
};

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The service's snake_case name; from the document's title when `None`.
    pub name: Option<String>,
    /// Scopes for operations whose security names no OAuth scope: `(read, write)`; `GET` takes the
    /// first, every other method the second (which implies the first).
    pub scope_by_method: Option<(String, String)>,
    /// Which operations get an MCP tool.
    pub mcp: McpSelection,
    /// Every operation answers `501 not_implemented` until its method is written (a new
    /// service's implementation): the code is service-wide.
    pub unwritten: bool,
    /// Where to serve it, in place of the path of the document's first server URL.
    pub base_path: Option<String>,
}

/// Which operations become MCP tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum McpSelection {
    /// None.
    #[default]
    None,
    /// Every operation that can travel over MCP.
    All,
    /// Those with one of these tags.
    Tags(Vec<String>),
    /// Those with one of these operation ids (as the document writes them, or as imported).
    Operations(Vec<String>),
}

/// What happened to one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Imported as the document says.
    Exact,
    /// Imported, with these stated normalisations.
    Normalised(Vec<String>),
    /// Not imported: the constructs the spec language cannot say yet, each with its JSON pointer.
    NotImported(Vec<(String, String)>),
}

/// One line of the report: an operation (`METHOD /path`) and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `GET /pets/{petId}`.
    pub operation: String,
    /// Its id in the spec (imported or not).
    pub id: String,
    /// What happened.
    pub outcome: Outcome,
}

/// The import's report: one entry per operation of the document, and notes on the service as a
/// whole (its base path, its scopes, its error format).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Per operation, in document order.
    pub entries: Vec<Entry>,
    /// Service-wide normalisations.
    pub service: Vec<String>,
}

impl Report {
    /// Whether some operation was not imported.
    pub fn partial(&self) -> bool {
        self.entries.iter().any(|e| matches!(e.outcome, Outcome::NotImported(_)))
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for note in &self.service {
            writeln!(f, "service: normalised: {note}")?;
        }
        for e in &self.entries {
            match &e.outcome {
                Outcome::Exact => writeln!(f, "{} ({}): imported", e.operation, e.id)?,
                Outcome::Normalised(notes) => {
                    writeln!(f, "{} ({}): imported, normalised:", e.operation, e.id)?;
                    for n in notes {
                        writeln!(f, "  - {n}")?;
                    }
                }
                Outcome::NotImported(why) => {
                    writeln!(f, "{} ({}): NOT imported:", e.operation, e.id)?;
                    for (construct, pointer) in why {
                        writeln!(f, "  - {construct} at {pointer}")?;
                    }
                }
            }
        }
        let count = |want: fn(&Outcome) -> bool| self.entries.iter().filter(|e| want(&e.outcome)).count();
        writeln!(
            f,
            "{} operations: {} exact, {} normalised, {} not imported",
            self.entries.len(),
            count(|o| *o == Outcome::Exact),
            count(|o| matches!(o, Outcome::Normalised(_))),
            count(|o| matches!(o, Outcome::NotImported(_))),
        )
    }
}

/// The imported spec (as TOML text, and as the loader reads it back) and the report.
#[derive(Debug)]
pub struct Imported {
    /// The spec file's text.
    pub toml: String,
    /// The service's name (the spec file is `{name}.toml`).
    pub name: String,
    /// What happened to each operation.
    pub report: Report,
}

/// Why nothing could be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The text is neither JSON nor YAML, or not an OpenAPI 3 document.
    #[error("{0}")]
    NotOpenApi(String),
    /// The imported spec does not load: a construct the importer let through by mistake.
    #[error("the imported spec does not load (please report it): {0}")]
    Invalid(String),
}

/// Reads a document's text: JSON, or YAML.
pub fn parse(text: &str) -> Result<Value, ImportError> {
    let doc: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => {
            yaml_serde::from_str(text).map_err(|e| ImportError::NotOpenApi(format!("neither JSON nor YAML: {e}")))?
        }
    };
    match doc.get("openapi").and_then(Value::as_str) {
        Some(v) if v.starts_with("3.0") || v.starts_with("3.1") => Ok(doc),
        Some(v) => Err(ImportError::NotOpenApi(format!("OpenAPI {v}: only 3.0 and 3.1 are imported"))),
        None => Err(ImportError::NotOpenApi("no `openapi` version: not an OpenAPI 3 document".into())),
    }
}

/// Imports `doc` as `options` say.
pub fn import(doc: &Value, options: &Options) -> Result<Imported, ImportError> {
    let mut cx = Cx {
        doc,
        models: IndexMap::new(),
        enums: IndexMap::new(),
        unions: IndexMap::new(),
        pagination: None,
        rate_limit_headers: false,
        envelope: false,
        catalog: None,
        names: BTreeMap::new(),
        taken: BTreeSet::new(),
    };
    cx.envelope = success_envelope(&cx, doc);
    cx.catalog = catalog(&cx, doc);
    let title = doc.pointer("/info/title").and_then(Value::as_str).unwrap_or("API").to_string();
    let name = options.name.clone().unwrap_or_else(|| service_name(&title));
    let mut report = Report::default();
    let base_path = match &options.base_path {
        Some(path) => path.clone(),
        None => base_path(doc, &mut report.service),
    };

    let mut scopes: Vec<ScopeDef> = Vec::new();
    let mut operations = Vec::new();
    let mut errors: IndexMap<String, ErrorDef> = IndexMap::new();
    let mut ids = BTreeSet::new();
    let paths = doc.get("paths").and_then(Value::as_object).cloned().unwrap_or_default();
    for (path, item) in &paths {
        for method in Method::ALL {
            let key = method.as_str().to_ascii_lowercase();
            let Some(op) = item.get(&key) else { continue };
            let pointer = format!("/paths/{}/{key}", escape(path));
            let id = operation_id(op, method, path, &mut ids);
            let label = format!("{} {path}", method.as_str());
            // What a left-out operation made (its models, enums, codes, scopes) goes with it.
            let saved = (cx.models.clone(), cx.enums.clone(), cx.unions.clone(), cx.names.clone(), cx.taken.clone());
            let (saved_errors, saved_scopes) = (errors.clone(), scopes.clone());
            let mut ox = OpCx::new(&mut cx);
            let built = ox.operation(&id, method, path, item, op, &pointer, options, &mut scopes, &mut errors);
            let outcome = match (built, ox.drops.is_empty()) {
                (Some(def), true) => {
                    let notes = std::mem::take(&mut ox.notes);
                    operations.push(def);
                    if notes.is_empty() { Outcome::Exact } else { Outcome::Normalised(notes) }
                }
                _ => {
                    let drops = std::mem::take(&mut ox.drops);
                    (cx.models, cx.enums, cx.unions, cx.names, cx.taken) = saved;
                    (errors, scopes) = (saved_errors, saved_scopes);
                    Outcome::NotImported(drops)
                }
            };
            report.entries.push(Entry { operation: label, id, outcome });
        }
    }
    let webhooks = import_webhooks(&mut cx, doc, &mut report);
    for other in ["head", "options", "trace"] {
        for (path, item) in &paths {
            if item.get(other).is_some() {
                report.entries.push(Entry {
                    operation: format!("{} {path}", other.to_ascii_uppercase()),
                    id: String::new(),
                    outcome: Outcome::NotImported(vec![(
                        format!("the method {}", other.to_ascii_uppercase()),
                        format!("/paths/{}/{other}", escape(path)),
                    )]),
                });
            }
        }
    }
    let (error_format, problem_types, error_note) = error_format(&mut cx, doc);
    if let Some((codes, _)) = &cx.catalog {
        // The document's catalog, whole: what the operations name and what the roles point at.
        errors = codes.clone();
    }
    if scopes.is_empty() {
        // A spec needs a scope catalog even when nothing was imported.
        scopes.push(ScopeDef { name: format!("{name}:read"), description: "Read.".into(), implies: Vec::new() });
    }
    let tags = doc
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(|t| {
                    let name = t.get("name")?.as_str()?.to_string();
                    let description = t.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
                    Some(TagDef { name, description })
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    // Tags operations and webhooks use that the document does not declare.
    let mut tags = tags;
    for t in operations.iter().flat_map(|o| &o.tags).chain(webhooks.values().flat_map(|w| &w.tags)) {
        if !tags.iter().any(|d| &d.name == t) {
            tags.push(TagDef { name: t.clone(), description: String::new() });
        }
    }
    let spec = Spec {
        service: Service {
            name: name.clone(),
            title,
            version: doc.pointer("/info/version").and_then(Value::as_str).unwrap_or("1.0.0").to_string(),
            description: doc.pointer("/info/description").and_then(Value::as_str).unwrap_or_default().to_string(),
            // The service's own MCP endpoint, under its base path like its routes.
            mcp_path: operations.iter().any(|o| o.mcp.is_some()).then(|| format!("{base_path}/mcp")),
            base_path,
            metadata_paths: Vec::new(),
            mcp_metadata_paths: Vec::new(),
            mcp_instructions: None,
            audit: false,
            tags,
        },
        security: Security {
            authorization_url: "/oauth/authorize".into(),
            token_url: "/oauth/token".into(),
            scopes,
            stored_tokens: Vec::new(),
        },
        pagination: cx.pagination.clone().unwrap_or_default(),
        rate_limits: None,
        errors,
        error_roles: {
            let mut roles = cx.catalog.as_ref().map(|(_, r)| r.clone()).unwrap_or_default();
            if options.unwritten {
                roles.service_wide.push(crate::scaffold::UNWRITTEN.into());
            }
            roles
        },
        wire: Wire {
            success: if cx.envelope { SuccessFormat::Envelope } else { SuccessFormat::Bare },
            errors: error_format,
            problem_types,
        },
        enums: cx.enums,
        models: cx.models,
        unions: cx.unions,
        operations,
        webhooks,
    };
    if spec.operations.is_empty() && !report.entries.is_empty() && spec.security.scopes.len() == 1 {
        report.service.push("no operation could be imported".into());
    }
    if cx.rate_limit_headers {
        report.service.push(
            "the `X-RateLimit-*` headers are sent once `[rate_limits]` declares the plans (the document gives no limits)"
                .into(),
        );
    }
    report.service.push(error_note);
    let mut spec = spec;
    settle_defaults(&mut spec, &mut report);
    // What the loader refuses of an operation, or of a model, enum or union, leaves out the
    // operations that use it, with the loader's words; anything else is the importer's mistake.
    loop {
        keep_used(&mut spec);
        let toml = crate::import_toml::write(&spec);
        let errors = match crate::load(&format!("{name}.toml"), &toml) {
            Ok(_) => return Ok(Imported { toml, name, report }),
            Err(e) => e,
        };
        let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in &errors.0 {
            let named = |kind: &str| e.place.strip_prefix(kind).and_then(|p| p.split('`').next()).map(str::to_string);
            if let Some(event) = named("webhook `")
                && spec.webhooks.shift_remove(&event).is_some()
            {
                for entry in report.entries.iter_mut().filter(|e| e.operation.starts_with("WEBHOOK ") && e.id == event)
                {
                    let source = entry.operation.trim_start_matches("WEBHOOK ").to_string();
                    let pointer = format!("/webhooks/{}", escape(&source));
                    entry.outcome = Outcome::NotImported(vec![(format!("{}; {}", e.problem, e.fix), pointer)]);
                }
                continue;
            }
            let users: Vec<String> = if let Some(id) = named("operation `") {
                spec.operations.iter().filter(|o| o.id == id).map(|o| o.id.clone()).collect()
            } else if let Some(ty) = named("model `").or_else(|| named("enum `")).or_else(|| named("union `")) {
                spec.operations.iter().filter(|o| uses(&spec, o).contains(&ty)).map(|o| o.id.clone()).collect()
            } else {
                Vec::new()
            };
            if users.is_empty() {
                return Err(ImportError::Invalid(errors.to_string()));
            }
            for id in users {
                let problem = if e.place.starts_with("operation `") {
                    format!("{}; {}", e.problem, e.fix)
                } else {
                    format!("{}: {}; {}", e.place, e.problem, e.fix)
                };
                refused.entry(id).or_default().push(problem);
            }
        }
        spec.operations.retain(|o| !refused.contains_key(&o.id));
        for entry in report.entries.iter_mut() {
            if let Some(problems) = refused.get(&entry.id) {
                let (method, path) = entry.operation.split_once(' ').unwrap_or_default();
                let pointer = format!("/paths/{}/{}", escape(path), method.to_ascii_lowercase());
                entry.outcome = Outcome::NotImported(problems.iter().map(|p| (p.clone(), pointer.clone())).collect());
            }
        }
    }
}

/// The snake_case name of a title: `Swagger Petstore` → `swagger_petstore`.
fn service_name(title: &str) -> String {
    let s: String =
        title.chars().filter(|c| c.is_ascii_alphanumeric() || c.is_whitespace() || *c == '_' || *c == '-').collect();
    let s = s.to_snake_case();
    match s.chars().next() {
        Some(c) if c.is_ascii_lowercase() => s,
        _ => format!("api_{s}").trim_end_matches('_').to_string(),
    }
}

/// The path of the first server URL, as the base path; `/api` when it has none.
fn base_path(doc: &Value, notes: &mut Vec<String>) -> String {
    let url = doc.pointer("/servers/0/url").and_then(Value::as_str).unwrap_or_default();
    let path = match url.find("://") {
        Some(i) => url[i + 3..].find('/').map(|j| &url[i + 3 + j..]).unwrap_or(""),
        None => url,
    };
    let path = path.trim_end_matches('/');
    let ok = path.starts_with('/') && !path.contains('{') && path.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        path.to_string()
    } else {
        notes.push(format!(
            "served under `/api` (the document's server `{url}` gives no base path, and the platform's own routes \
             live at the root)"
        ));
        "/api".into()
    }
}

/// A JSON pointer token: `~` and `/` escaped (RFC 6901).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The operation's snake_case id: its `operationId`, else the method and the path's words;
/// unique in the service.
fn operation_id(op: &Value, method: Method, path: &str, taken: &mut BTreeSet<String>) -> String {
    let base = match op.get("operationId").and_then(Value::as_str) {
        Some(id) => id.to_snake_case(),
        None => {
            let words: Vec<String> = path
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_matches(|c| c == '{' || c == '}').to_string())
                .collect();
            format!("{}_{}", method.as_str().to_ascii_lowercase(), words.join("_")).to_snake_case()
        }
    };
    let base = if base.starts_with(|c: char| c.is_ascii_lowercase()) { base } else { format!("op_{base}") };
    let mut id = base.clone();
    let mut n = 2;
    while !taken.insert(id.clone()) {
        id = format!("{base}_{n}");
        n += 1;
    }
    id
}

/// The document and what has been imported of its schemas so far.
struct Cx<'a> {
    doc: &'a Value,
    models: IndexMap<String, ModelDef>,
    enums: IndexMap<String, EnumDef>,
    unions: IndexMap<String, crate::spec::UnionDef>,
    /// The page rules of the first paginated operation.
    pagination: Option<Pagination>,
    /// Some answer shows rate-limit headers.
    rate_limit_headers: bool,
    /// Every success body is Specwright's envelope: `{"data": …}`, a page with `meta`.
    envelope: bool,
    /// The error catalog and roles, where every error answer names its codes as Specwright
    /// writes them (`` `not_found`: No such note. ``).
    catalog: Option<(IndexMap<String, ErrorDef>, crate::spec::ErrorRoles)>,
    /// Component schema name → the spec name given to it.
    names: BTreeMap<String, String>,
    /// Every model and enum name given.
    taken: BTreeSet<String>,
}

impl Cx<'_> {
    /// A fresh PascalCase name for `hint`.
    fn fresh(&mut self, hint: &str) -> String {
        let mut base = hint.to_upper_camel_case();
        if !base.starts_with(|c: char| c.is_ascii_uppercase()) {
            base = format!("T{base}");
        }
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    /// Follows a local `$ref` (`#/components/...`).
    fn resolve<'v>(&'v self, v: &'v Value) -> Result<&'v Value, String> {
        let mut v = v;
        for _ in 0..16 {
            match v.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let pointer = r.strip_prefix('#').ok_or_else(|| format!("a $ref to another file ({r})"))?;
                    v = self.doc.pointer(pointer).ok_or_else(|| format!("a $ref to nothing ({r})"))?;
                }
                None => return Ok(v),
            }
        }
        Err("a cycle of $refs".into())
    }
}

/// One operation being imported: what it normalised and what it could not say.
struct OpCx<'c, 'a> {
    cx: &'c mut Cx<'a>,
    notes: Vec<String>,
    drops: Vec<(String, String)>,
    /// The document shows rate-limit headers on its answers.
    rate_limited: bool,
    /// The document shows a page's headers (`X-Total-Count`, `Link`).
    paged: bool,
    /// The document shows `Cache-Control` on the success answer: the platform's `no-store`.
    no_store: bool,
    /// Request headers the platform reads (`If-Match`, …), and where each was.
    platform_params: Vec<(String, String)>,
}

impl<'c, 'a> OpCx<'c, 'a> {
    /// Nothing normalised or left out yet.
    fn new(cx: &'c mut Cx<'a>) -> Self {
        OpCx {
            cx,
            notes: Vec::new(),
            drops: Vec::new(),
            rate_limited: false,
            no_store: false,
            paged: false,
            platform_params: Vec::new(),
        }
    }
}

/// Request headers the platform reads itself for conditional requests and ranges.
const PLATFORM_REQUEST_HEADERS: &[&str] = &["if-match", "if-none-match", "range", "if-range"];

/// Response headers the platform sends itself, from what a spec declares otherwise.
const PLATFORM_HEADERS: &[&str] = &[
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-request-id",
    "deprecation",
    "sunset",
    "etag",
    "cache-control",
    "content-disposition",
    "content-range",
    "accept-ranges",
    "x-content-type-options",
    "x-total-count",
    "link",
];

/// A field's type and its constraints, from a schema.
struct Typed {
    ty: String,
    def: FieldDef,
}

impl OpCx<'_, '_> {
    fn drop(&mut self, construct: impl Into<String>, pointer: &str) {
        self.drops.push((construct.into(), pointer.to_string()));
    }

    #[allow(clippy::too_many_arguments, reason = "one operation's whole context")]
    fn operation(
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
            path: path.to_string(),
            scope: None,
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
            media_types: Vec::new(),
            paginated: false,
            status: None,
            errors: Vec::new(),
            no_store: false,
            rate_limited: true,
            read_only: None,
            deprecated: None,
            conditional: None,
            mcp: None,
            ranges: false,
        };
        if op.get("deprecated").and_then(Value::as_bool) == Some(true) {
            // The spec language dates a deprecation (its `Deprecation` header): the date a
            // document Specwright wrote gives in its description, else none to be had.
            match deprecation_of(&def.description) {
                Some((deprecated, rest)) => {
                    def.deprecated = Some(deprecated);
                    def.description = rest;
                }
                None => self.drop(
                    "a deprecated operation without a date (the spec language asks for one)",
                    &format!("{pointer}/deprecated"),
                ),
            }
        }
        def.scope = self.scope(op, method, pointer, options, scopes);
        let input = self.input(id, item, op, pointer, &mut def);
        def.input = input;
        self.responses(id, op, pointer, &mut def, errors);
        self.pages(&mut def);
        for (header, at) in std::mem::take(&mut self.platform_params) {
            let served = match header.as_str() {
                "if-none-match" => def.conditional() == Some(support::Conditional::Read),
                "if-match" => matches!(def.conditional(), Some(support::Conditional::Write { .. })),
                _ => def.ranges,
            };
            if !served {
                self.drop(
                    format!("the request header `{header}` without the answers that go with it (304, 412, 206)"),
                    &at,
                );
            }
        }
        if self.rate_limited {
            self.cx.rate_limit_headers = true;
        }
        def.no_store |= self.no_store;
        if let Some(tool) = self.tool(id, op, &def, options) {
            def.mcp = Some(tool);
        }
        Some(def)
    }

    /// The scope the operation needs: its OAuth requirement's first scope, else by method.
    fn scope(
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
                let (want, other) = if method == Method::Get { (read, None) } else { (write, Some(read)) };
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
    fn input(&mut self, id: &str, item: &Value, op: &Value, pointer: &str, def: &mut OperationDef) -> Option<String> {
        let mut fields: IndexMap<String, FieldDef> = IndexMap::new();
        let params: Vec<(Value, String)> = item
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
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
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            let location = match p.get("in").and_then(Value::as_str) {
                Some("path") => Location::Path,
                Some("query") => Location::Query,
                Some("header") => Location::Header,
                other => {
                    self.drop(format!("a parameter in {}", other.unwrap_or("nowhere")), &at);
                    continue;
                }
            };
            if p.get("content").is_some() {
                self.drop("a parameter with `content` (not a schema)", &at);
                continue;
            }
            // Request headers the platform reads for a feature the responses show (`conditional`,
            // `ranges`): checked once the responses are read.
            if location == Location::Header && PLATFORM_REQUEST_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                self.platform_params.push((name.to_ascii_lowercase(), at.clone()));
                continue;
            }
            let field_name = if location == Location::Header { header_field(&name) } else { Some(name.clone()) };
            let Some(field_name) = field_name.filter(|n| crate::ir::is_wire_name(n)) else {
                self.drop(format!("the parameter name `{name}`"), &at);
                continue;
            };
            let Some(schema) = p.get("schema") else {
                self.drop("a parameter without a schema", &at);
                continue;
            };
            let hint = format!("{id}_{name}");
            let Some(mut typed) = self.typed(schema, &hint, &format!("{at}/schema")) else { continue };
            typed.def.location = location;
            typed.def.optional =
                !(p.get("required").and_then(Value::as_bool) == Some(true) || location == Location::Path);
            if let Some(d) = p.get("description").and_then(Value::as_str) {
                typed.def.description = d.to_string();
            }
            if p.get("deprecated").and_then(Value::as_bool) == Some(true) {
                typed.def.deprecated = true;
            }
            if let Some(style) = p.get("style").and_then(Value::as_str) {
                let default = if matches!(location, Location::Query) { "form" } else { "simple" };
                if style != default {
                    self.drop(format!("parameter style `{style}`"), &format!("{at}/style"));
                }
            }
            if location == Location::Query
                && typed.ty.ends_with("[]")
                && p.get("explode").and_then(Value::as_bool) == Some(false)
            {
                self.drop("a list parameter with `explode: false` (comma-separated)", &format!("{at}/explode"));
            }
            fields.insert(field_name, typed.def);
        }
        if let Some(raw) = op.get("requestBody") {
            let at = format!("{pointer}/requestBody");
            match self.cx.resolve(raw) {
                Ok(body) => {
                    let body = body.clone();
                    self.body(id, &body, &at, def, &mut fields);
                }
                Err(e) => self.drop(e, &at),
            }
        }
        if fields.is_empty() {
            return None;
        }
        let name = self.cx.fresh(&format!("{id}_input"));
        let description = format!("The input of `{id}`.");
        self.cx.models.insert(name.clone(), ModelDef { description, fields, additional: None });
        Some(name)
    }

    /// The request body's fields, in the body format its media type says.
    fn body(
        &mut self,
        id: &str,
        body: &Value,
        at: &str,
        def: &mut OperationDef,
        fields: &mut IndexMap<String, FieldDef>,
    ) {
        let content = body.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        let required = body.get("required").and_then(Value::as_bool) == Some(true);
        let json = content.keys().find(|m| is_json(m)).cloned();
        let chosen = json.clone().or_else(|| content.keys().next().cloned());
        let Some(media) = chosen else {
            self.drop("a request body without content", at);
            return;
        };
        // Raw bodies of several media types: one file of any of them.
        let raw = |m: &String| !is_json(m) && m != "multipart/form-data" && m != "application/x-www-form-urlencoded";
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
        if content.len() > 1 && !is_json(&media) {
            let others: Vec<&String> = content.keys().filter(|k| **k != media).collect();
            self.drop(
                format!("a request body in several media types ({media} imported; not {others:?})"),
                &format!("{at}/content"),
            );
            return;
        }
        if content.len() > 1 {
            let others: Vec<&String> = content.keys().filter(|k| **k != media).collect();
            self.notes.push(format!("takes `{media}` only (the document also accepts {others:?})"));
        }
        let mat = format!("{at}/content/{}", escape(&media));
        let schema = content[&media].get("schema").cloned().unwrap_or(Value::Null);
        let sat = format!("{mat}/schema");
        match media.as_str() {
            m if is_json(m) => {
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
                if other != "application/octet-stream" && other != "*/*" {
                    f.media_types = vec![other.to_string()];
                }
                f.max_size = Some(crate::rust::DEFAULT_MAX_FILE);
                self.notes.push(format!("the `{other}` body is at most {} bytes", crate::rust::DEFAULT_MAX_FILE));
                fields.insert(body_name(body), f);
            }
        }
    }

    /// The properties of an object schema as fields at `location`.
    fn object_fields(
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
            if fields.contains_key(prop) {
                self.drop(format!("the field `{prop}` twice"), &pat);
                continue;
            }
            fields.insert(prop.clone(), typed.def);
        }
    }

    /// The type of `schema` (with its constraints), naming what it creates after `hint`.
    fn typed(&mut self, schema: &Value, hint: &str, at: &str) -> Option<Typed> {
        let (schema, nullable) = self.unnull(schema);
        // A reference to a component schema: its model or enum (created on first use).
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let description = String::new();
            let Some(name) = r.strip_prefix("#/components/schemas/") else {
                self.drop(format!("a $ref outside components/schemas ({r})"), at);
                return None;
            };
            let name = name.replace("~1", "/").replace("~0", "~");
            let target = self.cx.doc.pointer(&format!("/components/schemas/{}", escape(&name))).cloned();
            let Some(target) = target else {
                self.drop(format!("a $ref to nothing ({r})"), at);
                return None;
            };
            let named = if is_object(&target) || is_string_enum(&target) || is_union(&target) {
                self.component(&name, &target)?
            } else {
                // An alias of a scalar, a list or a map: its type inline.
                let mut t = self.typed(&target, &name, &format!("/components/schemas/{}", escape(&name)))?;
                t.def.nullable |= nullable;
                return Some(t);
            };
            let mut def = FieldDef::new(&named, description);
            def.nullable = nullable;
            return Some(Typed { ty: named, def });
        }
        if let Some((kw, members)) = one_of(&schema) {
            // `null` among the members is nullability; one member left is that member.
            let others: Vec<Value> =
                members.iter().filter(|m| m.get("type").and_then(Value::as_str) != Some("null")).cloned().collect();
            let nullable = nullable || others.len() < members.len();
            if others.len() == 1 {
                let mut t = self.typed(&others[0], hint, &format!("{at}/{kw}/0"))?;
                t.def.nullable |= nullable;
                return Some(t);
            }
            let name = self.cx.fresh(hint);
            let union = self.union_of(&schema, &name, at)?;
            self.cx.unions.insert(name.clone(), union);
            let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            let mut def = FieldDef::new(&name, description);
            def.nullable = nullable;
            return Some(Typed { ty: name, def });
        }
        for unsupported in ["not", "if", "const", "prefixItems", "patternProperties"] {
            if schema.get(unsupported).is_some() {
                self.drop(format!("`{unsupported}` in a schema (not imported yet)"), &format!("{at}/{unsupported}"));
                return None;
            }
        }
        let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
        // One member beside annotations (OpenAPI 3.0's way to give a `$ref` a default or a
        // description): that member, annotated.
        if let Some([only]) = schema.get("allOf").and_then(Value::as_array).map(Vec::as_slice)
            && schema.get("properties").is_none()
        {
            let mut t = self.typed(only, hint, &format!("{at}/allOf/0"))?;
            t.def.nullable |= nullable;
            if !description.is_empty() {
                t.def.description = description;
            }
            if let Some(d) = schema.get("default") {
                t.def.default = Some(d.clone());
            }
            if schema.get("deprecated").and_then(Value::as_bool) == Some(true) {
                t.def.deprecated = true;
            }
            return Some(t);
        }
        if schema.get("allOf").is_some() {
            let merged = self.merge_all_of(&schema, at)?;
            self.notes.push(format!("`allOf` at {at} is one model with every member's fields"));
            let name = self.cx.fresh(hint);
            let model = self.model_of(&merged, &name, at)?;
            self.cx.models.insert(name.clone(), model);
            let mut def = FieldDef::new(&name, description);
            def.nullable = nullable;
            return Some(Typed { ty: name, def });
        }
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or(if schema.get("properties").is_some() {
            "object"
        } else {
            ""
        });
        let mut def = FieldDef::new("", description);
        def.nullable = nullable;
        let number = |k: &str| schema.get(k).and_then(Value::as_f64);
        let count = |k: &str| schema.get(k).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        let ty = match ty {
            "string" => {
                def.min_length = count("minLength");
                def.max_length = count("maxLength");
                def.pattern = schema.get("pattern").and_then(Value::as_str).map(str::to_string);
                if let Some(values) = schema.get("enum") {
                    let name = self.enum_of(values, hint, &def.description, at)?;
                    def.min_length = None;
                    def.max_length = None;
                    name
                } else if schema.get("contentMediaType").is_some() && schema.get("contentEncoding").is_none() {
                    // 3.1's file: a string of a media type's bytes (3.0 says `format: binary`).
                    "file".into()
                } else {
                    match schema.get("format").and_then(Value::as_str) {
                        Some("date-time") => "datetime".into(),
                        Some("date") => "date".into(),
                        Some("binary") => "file".into(),
                        Some(f) => {
                            let known = [
                                ("uuid", support::Format::Uuid),
                                ("email", support::Format::Email),
                                ("uri", support::Format::Uri),
                                ("ipv4", support::Format::Ipv4),
                                ("ipv6", support::Format::Ipv6),
                                ("hostname", support::Format::Hostname),
                                ("byte", support::Format::Byte),
                            ];
                            match known.iter().find(|(n, _)| *n == f) {
                                Some((_, format)) => def.format = Some(*format),
                                None => {
                                    self.notes.push(format!("format `{f}` at {at} is documented as a plain string"))
                                }
                            }
                            "string".into()
                        }
                        None => "string".into(),
                    }
                }
            }
            "integer" | "number" | "boolean" => {
                def.minimum = number("minimum");
                def.maximum = number("maximum");
                for (k, word) in [("exclusiveMinimum", "exclusive minimum"), ("exclusiveMaximum", "exclusive maximum")]
                {
                    if schema.get(k).is_some() {
                        self.drop(format!("an {word}"), &format!("{at}/{k}"));
                        return None;
                    }
                }
                if schema.get("multipleOf").is_some() {
                    self.drop("`multipleOf`", &format!("{at}/multipleOf"));
                    return None;
                }
                if schema.get("enum").is_some() {
                    self.drop("an enum of numbers", &format!("{at}/enum"));
                    return None;
                }
                ty.to_string()
            }
            "array" => {
                def.min_items = count("minItems");
                def.max_items = count("maxItems");
                if schema.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
                    self.notes.push(format!("`uniqueItems` at {at} is not checked"));
                }
                let items = schema.get("items").cloned().unwrap_or(Value::Null);
                let inner = self.typed(&items, &format!("{hint}_item"), &format!("{at}/items"))?;
                if inner.def.nullable {
                    self.drop("a list of nullable items", &format!("{at}/items"));
                    return None;
                }
                // The items' string constraints are the field's (a list's items share them).
                def.pattern = def.pattern.or(inner.def.pattern);
                def.min_length = inner.def.min_length;
                def.max_length = inner.def.max_length;
                def.format = inner.def.format;
                def.minimum = inner.def.minimum;
                def.maximum = inner.def.maximum;
                format!("{}[]", inner.ty)
            }
            "object" => {
                let props = schema.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
                match (props, schema.get("additionalProperties")) {
                    (false, Some(Value::Object(inner))) if !inner.is_empty() => {
                        let inner = self.typed(
                            &Value::Object(inner.clone()),
                            &format!("{hint}_value"),
                            &format!("{at}/additionalProperties"),
                        )?;
                        format!("map<{}>", inner.ty)
                    }
                    // A free-form object: any keys, any values.
                    (false, _) => "map<json>".into(),
                    (true, _) => {
                        let name = self.cx.fresh(hint);
                        let model = self.model_of(&schema, &name, at)?;
                        self.cx.models.insert(name.clone(), model);
                        name
                    }
                }
            }
            "" => "json".into(),
            other => {
                self.drop(format!("the type `{other}`"), &format!("{at}/type"));
                return None;
            }
        };
        def.ty = ty.clone();
        def.example = schema.get("example").cloned().or_else(|| schema.pointer("/examples/0").cloned());
        if schema.get("deprecated").and_then(Value::as_bool) == Some(true) {
            def.deprecated = true;
        }
        if let Some(d) = schema.get("default") {
            def.default = Some(d.clone());
        }
        for k in ["readOnly", "writeOnly"] {
            if schema.get(k).and_then(Value::as_bool) == Some(true) {
                self.notes.push(format!("`{k}` at {at} is not stated (the field travels both ways)"));
            }
        }
        Some(Typed { ty, def })
    }

    /// `schema` without its nullability: 3.0's `nullable`, or 3.1's `null` in `type`.
    fn unnull(&self, schema: &Value) -> (Value, bool) {
        let mut s = schema.clone();
        let mut nullable = false;
        if let Value::Object(m) = &mut s {
            if m.remove("nullable") == Some(Value::Bool(true)) {
                nullable = true;
            }
            if let Some(Value::Array(types)) = m.get("type").cloned() {
                let rest: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
                nullable |= rest.len() < types.len();
                if rest.len() == 1 {
                    m.insert("type".into(), rest[0].clone());
                }
            }
        }
        (s, nullable)
    }

    /// The model or enum of component schema `name`, made on first use.
    fn component(&mut self, name: &str, schema: &Value) -> Option<String> {
        if let Some(done) = self.cx.names.get(name) {
            return Some(done.clone());
        }
        let ours = self.cx.fresh(name);
        if ours != name {
            self.notes.push(format!("schema `{name}` is the model `{ours}`"));
        }
        self.cx.names.insert(name.to_string(), ours.clone());
        let at = format!("/components/schemas/{}", escape(name));
        if is_string_enum(schema) {
            let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            let values = schema.get("enum").cloned().unwrap_or_default();
            self.cx.taken.remove(&ours);
            let made = self.enum_named(&ours, &values, &description, &at);
            if made.is_none() {
                self.cx.names.remove(name);
            }
            return made;
        }
        if is_union(schema) {
            match self.union_of(schema, &ours, &at) {
                Some(u) => {
                    self.cx.unions.insert(ours.clone(), u);
                    return Some(ours);
                }
                None => {
                    self.cx.names.remove(name);
                    return None;
                }
            }
        }
        // Placed first, so a model that refers to itself finds its name.
        self.cx
            .models
            .insert(ours.clone(), ModelDef { description: String::new(), fields: IndexMap::new(), additional: None });
        match self.model_of(schema, &ours, &at) {
            Some(model) => {
                self.cx.models.insert(ours.clone(), model);
                Some(ours)
            }
            None => {
                self.cx.models.shift_remove(&ours);
                self.cx.names.remove(name);
                None
            }
        }
    }

    /// A model from an object schema.
    fn model_of(&mut self, schema: &Value, name: &str, at: &str) -> Option<ModelDef> {
        let schema = if schema.get("allOf").is_some() { self.merge_all_of(schema, at)? } else { schema.clone() };
        let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
        let mut fields = IndexMap::new();
        let before = self.drops.len();
        self.object_fields(&schema, name, at, &mut fields, Location::Body);
        let additional = match schema.get("additionalProperties") {
            Some(Value::Object(inner)) if !inner.is_empty() => {
                let t = self.typed(
                    &Value::Object(inner.clone()),
                    &format!("{name}_value"),
                    &format!("{at}/additionalProperties"),
                )?;
                let mut def = t.def;
                def.description = if def.description.is_empty() { "Any other key.".into() } else { def.description };
                Some(def)
            }
            _ => None,
        };
        if self.drops.len() > before {
            return None;
        }
        Some(ModelDef { description, fields, additional })
    }

    /// A union of object schemas: tagged by the discriminator's property (each variant a model of
    /// the member's other fields, named after the union and its tag value), else untagged (each
    /// variant the member's model, told apart by a required field only it has).
    fn union_of(&mut self, schema: &Value, name: &str, at: &str) -> Option<crate::spec::UnionDef> {
        let (kw, members) = one_of(schema)?;
        let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
        let tag = schema.pointer("/discriminator/propertyName").and_then(Value::as_str).map(str::to_string);
        let mapping: Vec<(String, String)> = schema
            .pointer("/discriminator/mapping")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
            .unwrap_or_default();
        if kw == "anyOf" {
            self.notes.push(format!("`anyOf` at {at} is read as `oneOf`: a value is one of the members"));
        }
        let mut variants: IndexMap<String, String> = IndexMap::new();
        // Untagged: each variant's key, required fields and every field.
        let mut shapes: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let mat = format!("{at}/{kw}/{i}");
            let Some(r) = member.get("$ref").and_then(Value::as_str) else {
                self.drop("a union member that is not a $ref to an object schema", &mat);
                return None;
            };
            let component = r.strip_prefix("#/components/schemas/").unwrap_or(r).replace("~1", "/").replace("~0", "~");
            let target = match self.cx.resolve(member) {
                Ok(t) => t.clone(),
                Err(e) => {
                    self.drop(e, &mat);
                    return None;
                }
            };
            let target = if target.get("allOf").is_some() { self.merge_all_of(&target, &mat)? } else { target };
            if !is_object(&target) {
                self.drop("a union member that is not an object", &mat);
                return None;
            }
            match &tag {
                Some(tag) => {
                    let value = mapping
                        .iter()
                        .find(|(_, to)| to == r)
                        .map(|(k, _)| k.clone())
                        .unwrap_or_else(|| component.clone());
                    if !crate::ir::is_wire_name(&value) {
                        self.drop(format!("the tag value `{value}`"), &mat);
                        return None;
                    }
                    // The tag is written beside the variant's fields: the member without it.
                    let mut stripped = target.clone();
                    if let Some(Value::Object(props)) = stripped.get_mut("properties") {
                        props.remove(tag);
                    }
                    if let Some(Value::Array(req)) = stripped.get_mut("required") {
                        req.retain(|x| x.as_str() != Some(tag.as_str()));
                    }
                    let model_name = self.cx.fresh(&format!("{name}_{value}"));
                    let model = self.model_of(&stripped, &model_name, &mat)?;
                    self.cx.models.insert(model_name.clone(), model);
                    variants.insert(value, model_name);
                }
                None => {
                    let model = self.component(&component, &target)?;
                    let key = component.to_snake_case();
                    let names = |k: &str| -> Vec<String> {
                        match target.get(k) {
                            Some(Value::Object(m)) => m.keys().cloned().collect(),
                            Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
                            _ => Vec::new(),
                        }
                    };
                    shapes.push((key.clone(), names("required"), names("properties")));
                    variants.insert(key, model);
                }
            }
        }
        if let Some(tag) = &tag {
            self.notes.push(format!("the union at {at} is tagged by `{tag}`, written beside each variant's fields"));
        }
        for (key, required, _) in &shapes {
            let own = required.iter().any(|f| !shapes.iter().any(|(k, _, fields)| k != key && fields.contains(f)));
            if !own {
                self.drop(
                    format!(
                        "an untagged union whose variant `{key}` has no required field of its own (no discriminator)"
                    ),
                    at,
                );
                return None;
            }
        }
        Some(crate::spec::UnionDef { description, tag, variants })
    }

    /// One object of every `allOf` member's properties and required names.
    fn merge_all_of(&mut self, schema: &Value, at: &str) -> Option<Value> {
        let mut properties = serde_json::Map::new();
        let mut required: Vec<Value> = Vec::new();
        let mut description = schema.get("description").cloned();
        let members = schema.get("allOf").and_then(Value::as_array).cloned().unwrap_or_default();
        let own = {
            let mut own = schema.clone();
            if let Value::Object(m) = &mut own {
                m.remove("allOf");
            }
            own
        };
        for (i, member) in members.iter().chain(std::iter::once(&own)).enumerate() {
            let m = match self.cx.resolve(member) {
                Ok(m) => m.clone(),
                Err(e) => {
                    self.drop(e, &format!("{at}/allOf/{i}"));
                    return None;
                }
            };
            let mat = format!("{at}/allOf/{i}");
            if m.get("type").is_some_and(|t| t != "object") || is_union(&m) {
                self.drop("an allOf member that is not an object schema", &mat);
                return None;
            }
            let m = if m.get("allOf").is_some() { self.merge_all_of(&m, &mat)? } else { m };
            for (k, v) in m.get("properties").and_then(Value::as_object).into_iter().flatten() {
                properties.insert(k.clone(), v.clone());
            }
            required.extend(m.get("required").and_then(Value::as_array).cloned().unwrap_or_default());
            if description.is_none() {
                description = m.get("description").cloned();
            }
        }
        let mut out = serde_json::json!({"type": "object", "properties": properties, "required": required});
        if let Some(d) = description {
            out["description"] = d;
        }
        Some(out)
    }

    /// An enum for an inline string enum, named after `hint`.
    fn enum_of(&mut self, values: &Value, hint: &str, description: &str, at: &str) -> Option<String> {
        let name = self.cx.fresh(hint);
        self.cx.taken.remove(&name);
        self.enum_named(&name, values, description, at)
    }

    fn enum_named(&mut self, name: &str, values: &Value, description: &str, at: &str) -> Option<String> {
        let list: Vec<&str> = values.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if let Some(bad) = list.iter().find(|v| !crate::ir::is_enum_value(v)) {
            self.drop(format!("the enum value `{bad}`"), &format!("{at}/enum"));
            return None;
        }
        let mut rust = std::collections::HashMap::new();
        if let Some((bad, other)) =
            list.iter().find_map(|v| rust.insert(crate::ir::rust_variant_name(v), *v).map(|o| (*v, o)))
        {
            self.drop(format!("the enum values `{other}` and `{bad}`, which Rust spells alike"), &format!("{at}/enum"));
            return None;
        }
        // The same values under the same name: one enum.
        if let Some(existing) = self.cx.enums.get(name)
            && existing.values.iter().map(|v| v.name.as_str()).eq(list.iter().copied())
        {
            return Some(name.to_string());
        }
        self.cx.taken.insert(name.to_string());
        let values = list.iter().map(|v| EnumValue { name: v.to_string(), description: String::new() }).collect();
        self.cx.enums.insert(
            name.to_string(),
            EnumDef { description: description.to_string(), values, initial: None, transitions: None },
        );
        Some(name.to_string())
    }

    /// A list answered with a page's headers, taking `page` and `per_page`, is a paginated
    /// operation: the pagination rules add those two, and the answer is the page's items.
    fn pages(&mut self, def: &mut OperationDef) {
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

    /// The success answer and the error codes.
    fn responses(
        &mut self,
        id: &str,
        op: &Value,
        pointer: &str,
        def: &mut OperationDef,
        errors: &mut IndexMap<String, ErrorDef>,
    ) {
        let responses = op.get("responses").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut success: Vec<(u16, Value, String)> = Vec::new();
        // Answers the platform gives for a feature the spec declares.
        let (mut precondition, mut required_precondition) = (false, false);
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
                precondition |= s == 412;
                required_precondition |= s == 428;
                continue;
            }
            match status.parse::<u16>() {
                Ok(s) if (200..300).contains(&s) || (300..400).contains(&s) => success.push((s, resp, at)),
                // Refusals the platform answers itself: documented for every operation.
                Ok(401 | 403 | 405 | 408 | 413 | 415 | 416 | 422 | 429 | 500 | 503) => {}
                // A conditional write's refusals (`conditional`), answered by the platform.
                Ok(412) => precondition = true,
                Ok(428) => required_precondition = true,
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
                _ if status == "default" => self
                    .notes
                    .push("the `default` response is not stated (errors answer the platform's envelope)".into()),
                _ => {
                    self.drop(format!("the response status `{status}`"), &at);
                }
            }
        }
        // Every input can fail validation: the platform answers it.
        let validation = self.cx.catalog.as_ref().map_or("validation".to_string(), |(_, r)| r.validation.clone());
        if def.input.is_some() && !def.errors.contains(&validation) {
            def.errors.push(validation);
        }
        success.sort_by_key(|(s, ..)| *s);
        // `304` to `If-None-Match` is a conditional read's; `206` a file's ranges.
        let not_modified = success.iter().any(|(s, ..)| *s == 304);
        let partial = success.iter().any(|(s, ..)| *s == 206);
        success.retain(|(s, ..)| *s != 304 && *s != 206);
        if not_modified && def.method() == Method::Get {
            def.conditional = Some(crate::spec::ConditionalDef::On(true));
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
            // Nothing says what success answers: the empty answer.
            self.notes.push("the document states no success answer: it answers 204 without content".into());
            return;
        };
        if !crate::load::SUCCESS_STATUSES.contains(&status) {
            self.drop(format!("the success status {status}"), &at);
            return;
        }
        if success.len() > 1 {
            let others: Vec<String> = success[1..].iter().map(|(s, ..)| s.to_string()).collect();
            self.drop(
                format!("several success statuses ({status} and {})", others.join(", ")),
                &format!("{pointer}/responses"),
            );
            return;
        }
        let Some(headers) = self.response_headers(&resp, &at) else { return };
        let content = resp.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        def.status = (status != 200).then_some(status);
        if content.is_empty() {
            if headers.is_empty() && !(300..400).contains(&status) {
                // An empty answer: `status` says which (204 is the default without an output).
                def.status = (status != 204).then_some(status);
                return;
            }
            let mut headers = headers;
            if (300..400).contains(&status) {
                // A redirect answers its `Location`, required, and nothing else.
                let alone = headers.len() == 1;
                match headers.get_mut("location") {
                    Some(location) if alone => {
                        if location.optional {
                            self.notes.push("the redirect's `Location` is required".into());
                        }
                        location.optional = false;
                    }
                    _ => {
                        self.drop(
                            "a redirect without a `Location` header, or with other headers",
                            &format!("{at}/headers"),
                        );
                        return;
                    }
                }
            }
            // An answer of headers alone: a model of them, and no body.
            let name = self.cx.fresh(&format!("{id}_output"));
            let description = resp.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            self.cx.models.insert(name.clone(), ModelDef { description, fields: headers, additional: None });
            def.output = Some(name);
            return;
        }
        let json = content.keys().find(|m| is_json(m)).cloned();
        match json {
            Some(media) => {
                if content.len() > 1 {
                    // Content negotiation between JSON and another format: the JSON one.
                    let others: Vec<&String> = content.keys().filter(|k| **k != media).collect();
                    self.notes.push(format!("answers `{media}` only (the document also offers {others:?})"));
                }
                let schema = content[&media].get("schema").cloned().unwrap_or(Value::Null);
                let mut sat = format!("{at}/content/{}/schema", escape(&media));
                // In the envelope, the output is what `data` holds; `meta` says it is a page.
                let schema = match self.cx.envelope {
                    true => {
                        let whole = self.cx.resolve(&schema).cloned().unwrap_or(Value::Null);
                        self.paged |= whole.pointer("/properties/meta").is_some();
                        sat.push_str("/properties/data");
                        whole.pointer("/properties/data").cloned().unwrap_or(Value::Null)
                    }
                    false => schema,
                };
                let Some(typed) = self.typed(&schema, &format!("{id}_output"), &sat) else { return };
                if typed.def.nullable {
                    self.drop("a nullable success body", &sat);
                    return;
                }
                if headers.is_empty() {
                    def.output = Some(typed.ty);
                    return;
                }
                // Headers beside the body: one output model of the body's fields and the headers.
                let Some(body) = self.cx.models.get(&typed.ty).cloned() else {
                    self.drop("response headers beside a body that is not an object", &format!("{at}/headers"));
                    return;
                };
                let name = self.cx.fresh(&format!("{id}_output"));
                let mut fields = body.fields.clone();
                for (k, f) in headers {
                    if fields.contains_key(&k) {
                        self.drop(format!("the header field `{k}`, also a body field"), &format!("{at}/headers"));
                        return;
                    }
                    fields.insert(k, f);
                }
                self.notes
                    .push(format!("the answer is `{name}`: the fields of `{}` and the response headers", typed.ty));
                self.cx
                    .models
                    .insert(name.clone(), ModelDef { description: body.description, fields, additional: None });
                def.output = Some(name);
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
                if !headers.is_empty() {
                    self.drop("response headers beside a file", &format!("{at}/headers"));
                    return;
                }
                def.output = Some("file".into());
                def.media_types = content.keys().cloned().collect();
                def.ranges = partial;
            }
        }
    }

    /// A response's headers as output fields (`in = "header"`, snake_case names): strings or
    /// integers, as the spec language carries them.
    fn response_headers(&mut self, resp: &Value, at: &str) -> Option<IndexMap<String, FieldDef>> {
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
            if typed.ty != "string" && typed.ty != "integer" {
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

    /// The MCP tool, when the options select this operation and it can travel over MCP.
    fn tool(&mut self, id: &str, op: &Value, def: &OperationDef, options: &Options) -> Option<crate::spec::McpToolDef> {
        let original = op.get("operationId").and_then(Value::as_str).unwrap_or_default();
        let chosen = match &options.mcp {
            McpSelection::None => false,
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
        Some(crate::spec::McpToolDef { name: id.to_string(), title, description, destructive: None, idempotent: None })
    }
}

/// The deprecation a description states as Specwright writes it (`**Deprecated** since
/// 2026-11-26; it may be removed from 2027-06-01. Use …`), and the description without it.
fn deprecation_of(description: &str) -> Option<(crate::spec::Deprecated, String)> {
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
    Some((crate::spec::Deprecated { since, sunset, instead }, before))
}

/// The catalog code of an error status: the prelude's where it has one, else `http_{status}`.
fn error_code(status: u16) -> String {
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
fn reason(status: u16) -> &'static str {
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

fn is_json(media: &str) -> bool {
    let m = media.split(';').next().unwrap_or_default().trim();
    m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
}

fn is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        || (schema.get("type").is_none() && (schema.get("properties").is_some() || schema.get("allOf").is_some()))
}

fn is_union(schema: &Value) -> bool {
    one_of(schema).is_some()
}

/// The members of a `oneOf` (or `anyOf`), and which keyword held them.
fn one_of(schema: &Value) -> Option<(&'static str, Vec<Value>)> {
    ["oneOf", "anyOf"].into_iter().find_map(|kw| Some((kw, schema.get(kw)?.as_array()?.clone())))
}

fn is_string_enum(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("string") && schema.get("enum").is_some()
}

/// The field a header named `name` becomes: snake case where the platform's Train-Case spelling of
/// it is the same header (`X-Request-Id` → `x_request_id`), else the header's own name
/// (`X-RateLimit-Limit`); `None` for what is no HTTP header name.
fn header_field(name: &str) -> Option<String> {
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

/// The models, enums and unions a type text names (`map<Note[]>` → `Note`).
fn type_names(ty: &str) -> impl Iterator<Item = &str> {
    ty.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Every model, enum and union `op` reaches through its input and output.
fn uses(spec: &Spec, op: &OperationDef) -> BTreeSet<String> {
    reach(spec, op.input.iter().chain(&op.output).flat_map(|t| type_names(t).map(str::to_string)).collect())
}

/// Every model, enum and union reached from the named ones.
fn reach(spec: &Spec, mut stack: Vec<String>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(m) = spec.models.get(&name) {
            for f in m.fields.values().chain(&m.additional) {
                stack.extend(type_names(&f.ty).map(str::to_string));
            }
        }
        if let Some(u) = spec.unions.get(&name) {
            stack.extend(u.variants.values().cloned());
        }
    }
    seen
}

/// Leaves out the models, enums and unions no operation uses (what left-out operations made).
fn keep_used(spec: &mut Spec) {
    let mut used: BTreeSet<String> = spec.operations.iter().flat_map(|o| uses(spec, o)).collect();
    if let crate::spec::ErrorFormat::Model(m) = &spec.wire.errors {
        used.extend(reach(spec, vec![m.model.clone()]));
    }
    used.extend(reach(spec, spec.webhooks.values().map(|w| w.payload.clone()).collect()));
    spec.models.retain(|n, _| used.contains(n));
    spec.enums.retain(|n, _| used.contains(n));
    spec.unions.retain(|n, _| used.contains(n));
}

/// A default stays where the platform fills it, on an optional, non-null field of an operation's
/// own input; elsewhere (an answer's model, a required field) it documents nothing the platform
/// does, and the report says it was left out.
fn settle_defaults(spec: &mut Spec, report: &mut Report) {
    let inputs: BTreeSet<String> = spec.operations.iter().filter_map(|o| o.input.clone()).collect();
    let mut nested: BTreeSet<String> = spec
        .models
        .values()
        .flat_map(|m| m.fields.values().flat_map(|f| type_names(&f.ty).map(str::to_string).collect::<Vec<_>>()))
        .collect();
    nested.extend(spec.unions.values().flat_map(|u| u.variants.values().cloned()));
    let mut left = Vec::new();
    let enums = spec.enums.clone();
    for (name, m) in spec.models.iter_mut() {
        let input = inputs.contains(name) && !nested.contains(name);
        for (field, f) in m.fields.iter_mut() {
            let fits = f.default.as_ref().is_some_and(|d| default_fits(d, &f.ty, &enums));
            if f.default.is_some() && !(input && f.optional && !f.nullable && fits) {
                f.default = None;
                left.push(format!("`{name}.{field}`"));
            }
        }
    }
    if !left.is_empty() {
        report.service.push(format!(
            "defaults are kept where the platform fills them in (an operation input's optional fields) and where they \
             are values of their field's type; left out on {}",
            left.join(", ")
        ));
    }
}

/// The document's error format, when every error answer it describes has one: RFC 9457 problem
/// details (`application/problem+json`), Specwright's envelope (`{"error": {"code", "message"}}`),
/// or one model of its own with a string code and message; else Specwright's envelope. With the
/// base URI of problem types where the document states it, and the report's note.
fn error_format(cx: &mut Cx, doc: &Value) -> (crate::spec::ErrorFormat, Option<String>, String) {
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
        match content.iter().find(|(m, _)| is_json(m)) {
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
    if !answers.iter().all(|(m, _)| is_json(m)) {
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
fn success_envelope(cx: &Cx, doc: &Value) -> bool {
    let mut seen = false;
    let Some(successes) = answers_of(cx, doc, |s| (200..300).contains(&s)) else { return false };
    for (_, resp) in successes {
        for (media, content) in resp.get("content").and_then(Value::as_object).into_iter().flatten() {
            if !is_json(media) {
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
fn codes_of(description: &str) -> Vec<(String, String)> {
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
fn catalog(cx: &Cx, doc: &Value) -> Option<(IndexMap<String, ErrorDef>, crate::spec::ErrorRoles)> {
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
fn automatic_codes(roles: &crate::spec::ErrorRoles) -> Vec<String> {
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

/// The name of the input field a whole request body is: openapi-generator's
/// `x-codegen-request-body-name` where the document gives one, else `body`.
fn body_name(body: &Value) -> String {
    body.get("x-codegen-request-body-name")
        .and_then(Value::as_str)
        .filter(|n| crate::ir::is_wire_name(n))
        .unwrap_or("body")
        .to_string()
}

/// The document's webhooks (3.1 `webhooks`, 3.0 `x-webhooks`), each a `POST` to the subscriber
/// with a JSON body: the event's payload model, with a line in the report for each.
fn import_webhooks(cx: &mut Cx, doc: &Value, report: &mut Report) -> IndexMap<String, crate::spec::WebhookDef> {
    let mut out = IndexMap::new();
    let (key, hooks) = match (doc.get("webhooks"), doc.get("x-webhooks")) {
        (Some(Value::Object(h)), _) => ("webhooks", h.clone()),
        (_, Some(Value::Object(h))) => ("x-webhooks", h.clone()),
        _ => return out,
    };
    for (event, item) in &hooks {
        let at = format!("/{key}/{}", escape(event));
        let saved = (cx.models.clone(), cx.enums.clone(), cx.unions.clone(), cx.names.clone(), cx.taken.clone());
        let mut ox = OpCx::new(cx);
        let built = ox.webhook(event, item, &at);
        let mut id = event.clone();
        let outcome = match (built, ox.drops.is_empty()) {
            (Some((name, def)), true) => {
                id = name.clone();
                out.insert(name, def);
                if ox.notes.is_empty() { Outcome::Exact } else { Outcome::Normalised(std::mem::take(&mut ox.notes)) }
            }
            _ => {
                let drops = std::mem::take(&mut ox.drops);
                (cx.models, cx.enums, cx.unions, cx.names, cx.taken) = saved;
                Outcome::NotImported(drops)
            }
        };
        report.entries.push(Entry { operation: format!("WEBHOOK {event}"), id, outcome });
        // A webhook is a POST to the subscriber: another method of it is its own line.
        for method in Method::ALL.iter().filter(|m| **m != Method::Post) {
            let lower = method.as_str().to_ascii_lowercase();
            if item.get(&lower).is_some() {
                report.entries.push(Entry {
                    operation: format!("WEBHOOK {event} {}", method.as_str()),
                    id: event.clone(),
                    outcome: Outcome::NotImported(vec![(
                        format!("a webhook sent as {} (a webhook is a POST)", method.as_str()),
                        format!("{at}/{lower}"),
                    )]),
                });
            }
        }
    }
    out
}

impl OpCx<'_, '_> {
    /// One webhook: its event type (dotted snake_case) and its definition.
    fn webhook(&mut self, event: &str, item: &Value, at: &str) -> Option<(String, crate::spec::WebhookDef)> {
        let post = item.get("post")?;
        let at = format!("{at}/post");
        let name = event.split('.').map(|w| w.to_snake_case()).collect::<Vec<_>>().join(".");
        if name.split('.').any(str::is_empty) {
            self.drop(format!("the event type `{event}`"), &at);
            return None;
        }
        if name != event {
            self.notes.push(format!("the event type `{event}` is `{name}` (dotted snake_case)"));
        }
        let Some(body) = post.get("requestBody").and_then(|b| self.cx.resolve(b).ok()).cloned() else {
            self.drop("a webhook without a body", &at);
            return None;
        };
        let content = body.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        let Some((media, c)) = content.iter().find(|(m, _)| is_json(m)) else {
            self.drop("a webhook body that is not JSON", &format!("{at}/requestBody"));
            return None;
        };
        let mut sat = format!("{at}/requestBody/content/{}/schema", escape(media));
        let schema = self.cx.resolve(c.get("schema").unwrap_or(&Value::Null)).cloned().unwrap_or(Value::Null);
        // Specwright sends `{type, timestamp, data}` (Standard Webhooks): the payload is `data`.
        let standard =
            ["type", "timestamp", "data"].iter().all(|k| schema.pointer(&format!("/properties/{k}")).is_some());
        let data = if standard {
            sat.push_str("/properties/data");
            schema.pointer("/properties/data").cloned().unwrap_or(Value::Null)
        } else {
            self.notes
                .push("the body is the event's `data`, sent as `{type, timestamp, data}` (Standard Webhooks)".into());
            c.get("schema").cloned().unwrap_or(Value::Null)
        };
        let typed = self.typed(&data, &format!("{name}_payload").replace('.', "_"), &sat)?;
        if !self.cx.models.contains_key(&typed.ty) {
            self.drop("a webhook payload that is not an object schema", &sat);
            return None;
        }
        let text = |k: &str| post.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let tags = post
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let summary = if text("summary").is_empty() { format!("The event `{name}`.") } else { text("summary") };
        Some((name, crate::spec::WebhookDef { summary, description: text("description"), payload: typed.ty, tags }))
    }
}

/// Whether `default` is a value of the type `ty` (`"3"` is no integer, `1.5` no string).
fn default_fits(default: &Value, ty: &str, enums: &IndexMap<String, EnumDef>) -> bool {
    if let Some(item) = ty.strip_suffix("[]") {
        return default.as_array().is_some_and(|a| a.iter().all(|v| default_fits(v, item, enums)));
    }
    match ty {
        "integer" => default.as_i64().is_some(),
        "number" => default.is_number(),
        "boolean" => default.is_boolean(),
        "string" | "datetime" | "date" => default.is_string(),
        other => match enums.get(other) {
            Some(e) => default.as_str().is_some_and(|v| e.values.iter().any(|x| x.name == v)),
            None => false,
        },
    }
}

/// Every answer of every operation of `doc` whose status `keep` takes, resolved, with its
/// status; `None` when one of them is a `$ref` that does not resolve.
fn answers_of<'d>(cx: &'d Cx, doc: &'d Value, keep: impl Fn(u16) -> bool) -> Option<Vec<(u16, &'d Value)>> {
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
