//! Loading and validating a spec: TOML text in, a checked [`Api`] or every problem found out.
//!
//! Each problem names the file, the place (operation, model, field, table) and the fix, so a
//! spec author never has to read generator code to learn what is wrong.

mod bodies;
mod mcp;
mod media;
mod models;

/// Whether a value is a default the field accepts (its type, format, pattern, bounds); why not.
pub(crate) use models::fits as default_fits;
mod operations;
mod service;
mod statuses;
use bodies::*;
use media::*;
use models::*;
use operations::*;
use service::*;
use statuses::*;

pub(crate) use statuses::is_success_status;

/// The output that is a file, not a model.
const FILE: &str = "file";

use std::fmt;

use crate::ir::{Api, Ty};
use crate::spec::Spec;

/// Where in a spec a problem is: what a person reads (its `Display`), and what a program acts on
/// (the importer leaves out the operations a refused operation, model, enum or union concerns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A position in the text, which does not parse: `line 3, column 7`.
    Text { line: usize, column: usize },
    /// ``operation `store_credential` ``.
    Operation(String),
    /// ``model `Lead` ``.
    Model(String),
    /// ``model `Lead` field `score` ``.
    Field(String, String),
    /// ``model `Lead` additional keys``: another part of a model.
    ModelPart(String, String),
    /// ``enum `LeadStatus` ``.
    Enum(String),
    /// ``union `NoteContent` ``.
    Union(String),
    /// ``webhook `note.changed` ``.
    Webhook(String),
    /// `[wire] errors`: the error body's model and the roles its fields play.
    WireErrors,
    /// The service's settings, scopes, catalog, …: ``scope `items:read` ``.
    Other(String),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Text { line, column } => write!(f, "line {line}, column {column}"),
            Place::Operation(id) => write!(f, "operation `{id}`"),
            Place::Model(name) => write!(f, "model `{name}`"),
            Place::Field(model, field) => write!(f, "model `{model}` field `{field}`"),
            Place::ModelPart(model, part) => write!(f, "model `{model}` {part}"),
            Place::Enum(name) => write!(f, "enum `{name}`"),
            Place::Union(name) => write!(f, "union `{name}`"),
            Place::Webhook(name) => write!(f, "webhook `{name}`"),
            Place::WireErrors => f.write_str("[wire] errors"),
            Place::Other(text) => f.write_str(text),
        }
    }
}

impl From<&Place> for Place {
    fn from(p: &Place) -> Self {
        p.clone()
    }
}

impl From<&str> for Place {
    fn from(s: &str) -> Self {
        Place::Other(s.to_string())
    }
}

impl From<String> for Place {
    fn from(s: String) -> Self {
        Place::Other(s)
    }
}

impl From<&String> for Place {
    fn from(s: &String) -> Self {
        Place::Other(s.clone())
    }
}

/// One problem in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The spec file.
    pub file: String,
    /// Where in the file: ``operation `store_credential` ``, ``model `Lead` field `score` ``, …
    pub place: Place,
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
    fn push(&mut self, place: impl Into<Place>, problem: impl Into<String>, fix: impl Into<String>) {
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
                    Place::Text { line, column },
                    "correct the TOML at that position; spec/spec.schema.json lists every key",
                )
            }
            None => (Place::Other("file".to_string()), "correct the TOML; spec/spec.schema.json lists every key"),
        };
        SpecErrors(vec![SpecError {
            file: file.to_string(),
            place,
            problem: e.message().trim().to_string(),
            fix: fix.into(),
        }])
    })?;
    check(file, spec)
}

/// Validates a spec already read (the importer's, built in memory). `file` is used in messages only.
pub fn check(file: &str, spec: Spec) -> Result<Api, SpecErrors> {
    let mut spec = spec;
    let mut c = Collector { file, errors: Vec::new() };
    for (index, op) in spec.operations.iter_mut().enumerate() {
        if let Err((problem, fix)) = op.resolve_route() {
            let place = if op.id.is_empty() {
                Place::Other(format!("[[operations]] entry #{}", index + 1))
            } else {
                Place::Operation(op.id.clone())
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
    let api = Api { file: file.to_string(), spec, models, operations };
    check_requires_nested(&mut c, &api);
    mcp::check_mcp(&mut c, &api);
    if c.errors.is_empty() { Ok(api) } else { Err(SpecErrors(c.errors)) }
}

/// A model's `requires` is checked on an operation's input itself: one nested in an input (a
/// field's type, at any depth) is refused, where nothing would check it.
fn check_requires_nested(c: &mut Collector, api: &Api) {
    let mut roots: Vec<String> = Vec::new();
    for input in api.operations.iter().filter_map(|op| api.input(op)) {
        for f in input.fields.iter().chain(&input.additional) {
            for ty in f.types() {
                let mut ty = ty;
                while let Ty::List(inner) | Ty::Map(inner) = ty {
                    ty = inner;
                }
                match ty {
                    Ty::Model(m) => roots.push(m.clone()),
                    Ty::Union(u) => {
                        roots.extend(api.spec.unions.get(u).into_iter().flat_map(|u| u.variants.values().cloned()))
                    }
                    _ => {}
                }
            }
        }
    }
    for name in api.reachable(roots.iter().map(String::as_str)) {
        if api.models.get(&name).is_some_and(|m| m.requires.is_some()) {
            c.push(
                Place::ModelPart(name, "requires".into()),
                "the model is nested in an operation's input, where its groups are not checked",
                "state `requires` on the input model itself, or drop it",
            );
        }
    }
}
