//! `import`: an OpenAPI 3.0 or 3.1 document in, a spec a person would have written out, with a
//! report of what was imported exactly, what with a stated normalisation, and what not (the
//! construct and its JSON pointer). Nothing is dropped without a line in the report.
//!
//! The document's own names are kept: models after its schemas, operations after their
//! `operationId`, fields after their properties (camelCase stays camelCase on the wire). Bodies
//! are bare, as the document's are. What the spec language cannot say yet is reported, and the
//! operation that needs it is left out, so what is imported serves exactly what it documents.

mod body;
mod checked;
mod groups;
mod journal;
mod operation;
mod params;
mod paths;
mod readings;
mod recognise;
mod responses;
mod schema;
mod settle;
mod unions;
mod webhooks;

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase, ToUpperCamelCase};
use indexmap::IndexMap;
use serde_json::Value;

use crate::load::Place;
use crate::spec::{
    EnumDef, ErrorDef, FieldDef, Method, ModelDef, Pagination, ScopeDef, Security, Service, Spec, SuccessFormat,
    TagDef, Wire,
};
use checked::{first_difference, note_read_forms};
use groups::*;
use journal::Journaled;
use paths::*;
use recognise::*;
use responses::*;
use schema::*;
use settle::*;
use webhooks::*;

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
        models: Journaled::default(),
        enums: Journaled::default(),
        unions: Journaled::default(),
        pagination: None,
        rate_limit_headers: false,
        envelope: false,
        catalog: None,
        names: Journaled::default(),
        taken: Journaled::default(),
        next: Journaled::default(),
        failed: BTreeMap::new(),
        path_names: BTreeMap::new(),
    };
    cx.path_names = path_names(&cx, doc);
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
    let no_paths = serde_json::Map::new();
    let paths = doc.get("paths").and_then(Value::as_object).unwrap_or(&no_paths);
    for (path, item) in paths {
        for method in Method::ALL {
            let key = method.as_str().to_ascii_lowercase();
            let Some(op) = item.get(&key) else { continue };
            let pointer = format!("/paths/{}/{key}", escape(path));
            let id = operation_id(op, method, path, &mut ids);
            let label = format!("{} {path}", method.as_str());
            // What a left-out operation made (its models, enums, codes, scopes) goes with it.
            cx.checkpoint();
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
                    cx.rollback();
                    (errors, scopes) = (saved_errors, saved_scopes);
                    Outcome::NotImported(drops)
                }
            };
            report.entries.push(Entry { operation: label, id, outcome });
        }
    }
    let webhooks = import_webhooks(&mut cx, doc, &mut report);
    for other in ["trace"] {
        for (path, item) in paths {
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
            mcp_path: operations
                .iter()
                .any(|o| o.mcp.is_some() || o.resource.is_some())
                .then(|| format!("{base_path}/mcp")),
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
                roles.service_wide.push(crate::spec::UNWRITTEN.into());
            }
            roles
        },
        wire: Wire {
            success: if cx.envelope { SuccessFormat::Envelope } else { SuccessFormat::Bare },
            errors: error_format,
            problem_types,
        },
        enums: cx.enums.into_inner(),
        models: cx.models.into_inner(),
        unions: cx.unions.into_inner(),
        operations,
        webhooks,
        prompts: Vec::new(),
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
    // Examples as the written text can hold them (TOML has no `null`), so the text reads back as
    // this spec.
    for f in spec.models.values_mut().flat_map(|m| m.fields.values_mut()) {
        f.example = f.example.as_ref().and_then(crate::import_toml::writable);
    }
    name_fields_apart(&mut spec, &mut report);
    // What the loader refuses of an operation, or of a model, enum or union, leaves out the
    // operations that use it, with the loader's words; anything else is the importer's mistake.
    loop {
        keep_used(&mut spec);
        let errors = match crate::load::check(&format!("{name}.toml"), spec.clone()) {
            Ok(api) => {
                note_read_forms(&api, &mut report);
                break;
            }
            Err(e) => e,
        };
        // A refusal of the service's error body (the document's error model does not fit the
        // platform's roles): errors are written in the platform's envelope instead.
        if let crate::spec::ErrorFormat::Model(m) = &spec.wire.errors
            && let Some(e) = errors.0.iter().find(|e| e.place == Place::WireErrors)
        {
            report.service.push(format!(
                "errors are written in Specwright's error envelope: the document's error model `{}` cannot be \
                 the service's ({})",
                m.model, e.problem
            ));
            spec.wire.errors = crate::spec::ErrorFormat::Envelope;
            spec.wire.problem_types = None;
            continue;
        }
        let users = Users::of(&spec);
        let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut hooks: BTreeMap<String, String> = BTreeMap::new();
        for e in &errors.0 {
            if let Place::Webhook(event) = &e.place
                && spec.webhooks.contains_key(event)
            {
                hooks.insert(event.clone(), format!("{}; {}", e.problem, e.fix));
                continue;
            }
            let (ids, problem, placed) = match &e.place {
                Place::Operation(id) => (vec![id.clone()], format!("{}; {}", e.problem, e.fix), true),
                Place::Model(ty)
                | Place::Field(ty, _)
                | Place::ModelPart(ty, _)
                | Place::Enum(ty)
                | Place::Union(ty) => {
                    let problem = format!("{}: {}; {}", e.place, e.problem, e.fix);
                    let (ids, events) = users.of_type(ty);
                    let placed = !ids.is_empty() || !events.is_empty();
                    for event in events {
                        hooks.entry(event).or_insert_with(|| problem.clone());
                    }
                    (ids, problem, placed)
                }
                _ => (Vec::new(), String::new(), false),
            };
            if !placed {
                return Err(ImportError::Invalid(errors.to_string()));
            }
            for id in ids {
                refused.entry(id).or_default().push(problem.clone());
            }
        }
        drop(users);
        for (event, problem) in hooks {
            spec.webhooks.shift_remove(&event);
            for entry in report.entries.iter_mut().filter(|en| en.operation.starts_with("WEBHOOK ") && en.id == event) {
                let source = entry.operation.trim_start_matches("WEBHOOK ").to_string();
                let pointer = format!("/webhooks/{}", escape(&source));
                entry.outcome = Outcome::NotImported(vec![(problem.clone(), pointer)]);
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
    let toml = crate::import_toml::write(&spec);
    // The text is what a person keeps: it must read back as the spec the loader has just accepted
    // (so it loads as that spec did, without checking it twice).
    let mut reread: crate::spec::Spec = toml::from_str(&toml)
        .map_err(|e| ImportError::Invalid(format!("the written spec does not read back: {}", e.message())))?;
    for op in &mut reread.operations {
        // `route = "GET /x"` as the text writes it, `method` and `path` as the spec held them.
        op.resolve_route().map_err(|(problem, _)| ImportError::Invalid(format!("operation `{}`: {problem}", op.id)))?;
    }
    if reread != spec {
        return Err(ImportError::Invalid(format!(
            "the written spec reads back as another than the one checked ({})",
            first_difference(&spec, &reread)
        )));
    }
    drop((spec, reread));
    Ok(Imported { toml, name, report })
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
    models: Journaled<ModelDef>,
    enums: Journaled<EnumDef>,
    unions: Journaled<crate::spec::UnionDef>,
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
    names: Journaled<String>,
    /// Every model and enum name given.
    taken: Journaled<()>,
    /// Per base name, the next number to try for a fresh one (`Body7`).
    next: Journaled<usize>,
    /// Component schemas that could not be imported, with why (not taken back with an
    /// operation: why a schema cannot be said does not depend on who uses it).
    failed: BTreeMap<String, Vec<(String, String)>>,
    /// Path parameters named apart from a field of the same name elsewhere in some operation's
    /// request (a body's `id` beside the path's `{id}`): the name in the document → the field's.
    /// A path parameter's name is not on the wire, so the requests stay the same.
    path_names: BTreeMap<String, BTreeMap<String, String>>,
}

impl Cx<'_> {
    /// A fresh PascalCase name for `hint`.
    fn fresh(&mut self, hint: &str) -> String {
        let mut base = hint.to_upper_camel_case();
        if !base.starts_with(|c: char| c.is_ascii_uppercase()) {
            base = format!("T{base}");
        }
        let mut name = base.clone();
        let mut n = self.next.get(&base).copied().unwrap_or(2);
        while self.taken.contains_key(&name) || crate::names::is_reserved_type_name(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        if name != base {
            self.next.insert(base, n);
        }
        self.taken.insert(name.clone(), ());
        name
    }

    /// What the maps hold now stays (an operation was imported).
    fn checkpoint(&mut self) {
        self.models.checkpoint();
        self.enums.checkpoint();
        self.unions.checkpoint();
        self.names.checkpoint();
        self.taken.checkpoint();
        self.next.checkpoint();
    }

    /// Everything since the last checkpoint goes (an operation was left out).
    fn rollback(&mut self) {
        self.models.rollback();
        self.enums.rollback();
        self.unions.rollback();
        self.names.rollback();
        self.taken.rollback();
        self.next.rollback();
    }

    /// Follows a local `$ref` (`#/components/...`).
    fn resolve<'v>(&'v self, v: &'v Value) -> Result<&'v Value, String> {
        let mut v = v;
        for _ in 0..16 {
            match v.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let pointer = fragment(r).ok_or_else(|| format!("a $ref to another file ({r})"))?;
                    v = self.doc.pointer(&pointer).ok_or_else(|| format!("a $ref to nothing ({r})"))?;
                }
                None => return Ok(v),
            }
        }
        Err("a cycle of $refs".into())
    }
}

/// The JSON pointer a local `$ref` names: its URI fragment, percent-decoded (RFC 6901, section 6:
/// `#/paths/~1keys~1%7Bid%7D` is `/paths/~1keys~1{id}`); `None` for a reference to another file.
pub(super) fn fragment(r: &str) -> Option<String> {
    let encoded = r.strip_prefix('#')?;
    Some(match percent_encoding::percent_decode_str(encoded).decode_utf8() {
        Ok(decoded) => decoded.into_owned(),
        // Not UTF-8 once decoded: the text as written.
        Err(_) => encoded.to_string(),
    })
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
    platform_params: Vec<PlatformParam>,
    /// The component schemas being written inline (aliases of lists and maps), innermost last.
    aliases: Vec<String>,
    /// The aliases among those met again inside themselves, being written from their items.
    again: Vec<String>,
    /// The path template as the document writes it.
    template: String,
    /// The groups of fields the request body requires, for the input model.
    input_requires: Option<crate::spec::RequiresDef>,
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
            aliases: Vec::new(),
            again: Vec::new(),
            template: String::new(),
            input_requires: None,
        }
    }
}

/// A request header the platform reads itself when the operation has the feature (`If-Match` of a
/// conditional write), as the document gives it.
struct PlatformParam {
    /// Lower case: `if-match`.
    header: String,
    /// As the document spells it: `If-Match`.
    name: String,
    at: String,
    description: String,
    required: bool,
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
