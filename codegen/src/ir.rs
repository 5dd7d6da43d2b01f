//! The intermediate representation: a validated spec with resolved types, ready for the emitters.

use indexmap::IndexMap;

use crate::spec::{FieldDef, Location, Method, OperationDef, Spec};

/// A resolved field type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    /// UTF-8 string.
    String,
    /// 64-bit signed integer.
    Integer,
    /// 64-bit float.
    Number,
    /// `true` / `false`.
    Boolean,
    /// RFC 3339 UTC timestamp.
    DateTime,
    /// RFC 3339 full date.
    Date,
    /// Any JSON value.
    Json,
    /// An uploaded file (a multipart part or a raw body): `support::Upload`.
    File,
    /// A spec enum, by name.
    Enum(String),
    /// A spec model, by name.
    Model(String),
    /// A spec union, by name.
    Union(String),
    /// A list.
    List(Box<Ty>),
    /// An object with string keys.
    Map(Box<Ty>),
}

impl Ty {
    /// What a response header may carry: a string, a number, a boolean, a time, a date or an enum
    /// value, or a list of those (comma-separated, as RFC 9110 writes lists).
    pub fn is_header_value(&self) -> bool {
        let scalar = |t: &Ty| {
            matches!(t, Ty::String | Ty::Integer | Ty::Number | Ty::Boolean | Ty::DateTime | Ty::Date | Ty::Enum(_))
        };
        scalar(self) || matches!(self, Ty::List(t) if scalar(t))
    }

    /// Parses a type expression, resolving names against the spec's enums and models.
    pub fn parse(expr: &str, spec: &Spec) -> Result<Ty, (String, String)> {
        let expr = expr.trim();
        if let Some(inner) = expr.strip_suffix("[]") {
            return Ok(Ty::List(Box::new(Ty::parse(inner, spec)?)));
        }
        if let Some(inner) = expr.strip_prefix("map<").and_then(|s| s.strip_suffix('>')) {
            return Ok(Ty::Map(Box::new(Ty::parse(inner, spec)?)));
        }
        Ok(match expr {
            "string" => Ty::String,
            "integer" => Ty::Integer,
            "number" => Ty::Number,
            "boolean" => Ty::Boolean,
            "datetime" => Ty::DateTime,
            "date" => Ty::Date,
            "json" => Ty::Json,
            "file" => Ty::File,
            name if spec.enums.contains_key(name) => Ty::Enum(name.to_string()),
            name if spec.models.contains_key(name) => Ty::Model(name.to_string()),
            name if spec.unions.contains_key(name) => Ty::Union(name.to_string()),
            other => {
                return Err((
                    format!("unknown type `{other}`"),
                    "use string, integer, number, boolean, datetime, date, json, file, T[], map<T>, or a name declared under [enums], [models] or [unions]".into(),
                ));
            }
        })
    }

    /// The type as the spec writes it: `string`, `Note[]`, `map<integer>`.
    pub fn expr(&self) -> String {
        match self {
            Ty::String => "string".into(),
            Ty::Integer => "integer".into(),
            Ty::Number => "number".into(),
            Ty::Boolean => "boolean".into(),
            Ty::DateTime => "datetime".into(),
            Ty::Date => "date".into(),
            Ty::Json => "json".into(),
            Ty::File => "file".into(),
            Ty::Enum(n) | Ty::Model(n) | Ty::Union(n) => n.clone(),
            Ty::List(t) => format!("{}[]", t.expr()),
            Ty::Map(t) => format!("map<{}>", t.expr()),
        }
    }

    /// The spec names (enums, models, unions) the type refers to.
    pub fn names(&self) -> Vec<String> {
        match self {
            Ty::Enum(n) | Ty::Model(n) | Ty::Union(n) => vec![n.clone()],
            Ty::List(t) | Ty::Map(t) => t.names(),
            _ => Vec::new(),
        }
    }

    /// Whether the type is a scalar that can travel in a path or query string.
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Ty::Json | Ty::File | Ty::Model(_) | Ty::Union(_) | Ty::List(_) | Ty::Map(_))
    }

    /// Whether the type is a scalar or a list of scalars: what a path segment, a header, a query
    /// parameter or a form field carries as text.
    pub fn is_plain(&self) -> bool {
        self.is_scalar() || matches!(self, Ty::List(item) if item.is_scalar())
    }
}

/// A field with its resolved type.
#[derive(Debug, Clone)]
pub struct Field {
    /// Its key: its wire name too, unless `def.name` says another ([`Field::wire`]).
    pub name: String,
    /// The field as written in the spec.
    pub def: FieldDef,
    /// Resolved type.
    pub ty: Ty,
    /// The resolved types of a `json` field's `one_of` (empty for any other).
    pub one_of: Vec<Ty>,
    /// Added by the generator (`page`/`per_page` of paginated inputs), not written in the spec.
    pub injected: bool,
}

impl Field {
    /// The name it travels under: `name` in the spec, else its key.
    pub fn wire(&self) -> &str {
        self.def.name.as_deref().unwrap_or(&self.name)
    }

    /// The HTTP header a header field travels as: its `name` as written, else its key (a
    /// snake_case key in Train-Case: `request_id` is `Request-Id`).
    pub fn http_header(&self) -> String {
        self.def.name.clone().unwrap_or_else(|| header_name(&self.name))
    }

    /// Where the field travels over REST.
    pub fn location(&self) -> Location {
        self.def.location
    }

    /// Whether a request must carry the field.
    pub fn required(&self) -> bool {
        !self.def.optional
    }

    /// Every type a value of the field may have: its type, and each of its `one_of` (what reaches
    /// other models and unions through the field, for whoever walks them).
    pub fn types(&self) -> impl Iterator<Item = &Ty> {
        std::iter::once(&self.ty).chain(&self.one_of)
    }

    /// Its Rust name: the spec's `rust`, or the one derived from its wire name.
    pub fn rust_name(&self) -> String {
        self.def.rust_name(&self.name)
    }
}

/// A model with resolved fields.
#[derive(Debug, Clone)]
pub struct Model {
    /// Model name (PascalCase).
    pub name: String,
    /// What it is.
    pub description: String,
    /// Fields in wire order.
    pub fields: Vec<Field>,
    /// The type of every other key's value, when the model has keys beside its fields (its
    /// Rust struct's `additional` map; `name` is `additional`).
    pub additional: Option<Field>,
    /// The groups of body fields a request gives in full, checked (see [`crate::spec::RequiresDef`]).
    pub requires: Option<crate::spec::RequiresDef>,
}

impl Model {
    /// Fields that travel at `loc`.
    pub fn fields_in(&self, loc: Location) -> impl Iterator<Item = &Field> {
        self.fields.iter().filter(move |f| f.location() == loc)
    }
}

/// One operation, resolved.
#[derive(Debug, Clone)]
pub struct Operation {
    /// The operation as written.
    pub def: OperationDef,
    /// Every error code it may answer, in catalog order: declared, automatic and service-wide.
    pub errors: Vec<String>,
    /// Success status.
    pub status: u16,
    /// The input has body fields.
    pub has_body: bool,
    /// The output is a JSON array of `def.output` models (`output = "Model[]"`); `def.output`
    /// names the model.
    pub list_output: bool,
    /// The output is a file (`output = "file"`, of `def.media_types`); `def.output` is `None`.
    pub file_output: bool,
    /// The output is a JSON value that is not a model (`output = "string"`, `"integer[]"`,
    /// `"map<integer>"`, an enum or a union); `def.output` is `None`.
    pub value_output: Option<Ty>,
    /// The output model's payload field's type, where it has one (`in = "payload"`): the answer's
    /// body is that value, the model's other fields response headers.
    pub output_payload: Option<Ty>,
    /// The media types of its request body its implementation reads into JSON (`read_body`):
    /// XML, plain text, a form of fields a form cannot carry.
    pub read_types: Vec<String>,
    /// The other success answers the implementation may give, in spec order.
    pub alternatives: Vec<Alternative>,
}

/// A success answer an operation may give instead of its main one, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    /// Its status (2xx).
    pub status: u16,
    /// Its body's type (a model is `Ty::Model`, `Model[]` a list of it); `None` for no body.
    pub output: Option<Ty>,
    /// When the implementation answers it.
    pub description: String,
}

impl Alternative {
    /// The variant of the operation's answer enum for `status`: its reason phrase in PascalCase
    /// (`Ok`, `Created`, `NoContent`).
    pub fn variant(status: u16) -> String {
        let words = Self::reason(status).split([' ', '-']).map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_ascii_uppercase().to_string() + &cs.as_str().to_ascii_lowercase())
                .unwrap_or_default()
        });
        let name: String = words.collect();
        if name.is_empty() { format!("Status{status}") } else { name }
    }

    /// A redirect: the implementation gives the `Location` to go to.
    pub fn redirect(&self) -> bool {
        (300..400).contains(&self.status) && self.status != 304
    }

    /// The reason phrase of a success status, as RFC 9110 and RFC 4918 write it.
    pub fn reason(status: u16) -> &'static str {
        match status {
            200 => "OK",
            201 => "Created",
            202 => "Accepted",
            203 => "Non-Authoritative Information",
            204 => "No Content",
            205 => "Reset Content",
            206 => "Partial Content",
            207 => "Multi-Status",
            208 => "Already Reported",
            226 => "IM Used",
            301 => "Moved Permanently",
            304 => "Not Modified",
            302 => "Found",
            303 => "See Other",
            307 => "Temporary Redirect",
            308 => "Permanent Redirect",
            _ => "",
        }
    }
}

impl Operation {
    /// The media types other than JSON its answer may be rendered in (`answer_types`).
    pub fn other_formats(&self) -> impl Iterator<Item = &String> {
        self.def.answer_types.iter().filter(|m| !support::is_json_media(m))
    }

    /// snake_case id.
    pub fn id(&self) -> &str {
        &self.def.id
    }

    /// HTTP method.
    pub fn method(&self) -> Method {
        self.def.method()
    }
}

/// A whole validated service.
#[derive(Debug, Clone)]
pub struct Api {
    /// The spec file's name, for messages.
    pub file: String,
    /// The spec as written.
    pub spec: Spec,
    /// Models by name, with `page`/`per_page` added to paginated inputs.
    pub models: IndexMap<String, Model>,
    /// Operations in spec order.
    pub operations: Vec<Operation>,
}

impl Api {
    /// Models and unions reachable from `roots` through fields.
    pub fn reachable<'a>(&self, roots: impl IntoIterator<Item = &'a str>) -> std::collections::BTreeSet<String> {
        fn visit(api: &Api, ty: &Ty, out: &mut std::collections::BTreeSet<String>) {
            match ty {
                Ty::Union(name) => {
                    if out.insert(name.clone())
                        && let Some(u) = api.spec.unions.get(name)
                    {
                        for model in u.variants.values() {
                            visit(api, &Ty::Model(model.clone()), out);
                        }
                    }
                }
                Ty::Model(name) => {
                    if out.insert(name.clone())
                        && let Some(m) = api.models.get(name)
                    {
                        for f in m.fields.iter().chain(&m.additional) {
                            for ty in f.types() {
                                visit(api, ty, out);
                            }
                        }
                    }
                }
                Ty::List(inner) | Ty::Map(inner) => visit(api, inner, out),
                _ => {}
            }
        }
        let mut out = std::collections::BTreeSet::new();
        for r in roots {
            visit(self, &Ty::Model(r.to_string()), &mut out);
        }
        out
    }

    /// Service name.
    pub fn name(&self) -> &str {
        &self.spec.service.name
    }

    /// The input model of `op`, if any.
    pub fn input(&self, op: &Operation) -> Option<&Model> {
        op.def.input.as_ref().map(|n| &self.models[n])
    }

    /// The URI (or URI template) of the MCP resource `op` reads: the one its spec gives, else the
    /// service's name as scheme and the operation's path (`notes://notes/{id}`).
    pub fn resource_uri(&self, op: &Operation) -> Option<String> {
        let resource = op.def.resource.as_ref()?;
        Some(resource.uri.clone().unwrap_or_else(|| {
            let path = support::path_part(&op.def.path).trim_start_matches('/');
            format!("{}://{path}", self.spec.service.name)
        }))
    }

    /// The operation whose resource URI template is `uri`'s (one of its URIs, or the same
    /// template whatever its variables' names), with its URI.
    /// A URI that is a resource's own comes before the templates it is also one of
    /// (`notes://notes/due` before `notes://notes/{id}`), as the runtime reads it.
    pub fn resource_of(&self, uri: &str) -> Option<(&Operation, String)> {
        let owned = self.operations.iter().filter_map(|op| Some((op, self.resource_uri(op)?)));
        let owned: Vec<(&Operation, String)> = owned.collect();
        let same = owned.iter().find(|(_, own)| support::same_template(own, uri));
        same.or_else(|| owned.iter().find(|(_, own)| support::match_template(own, uri).is_some())).cloned()
    }

    /// The scope `prompts/get` of `prompt` needs: the one it names, else the highest scope of the
    /// resources its messages read (`None` when no one of them satisfies the others), else the
    /// lowest tier.
    pub fn prompt_scope(&self, prompt: &crate::spec::PromptDef) -> Option<String> {
        if let Some(scope) = &prompt.scope {
            return Some(scope.clone());
        }
        let read: Vec<String> = prompt
            .messages
            .iter()
            .filter_map(|m| m.resource.as_ref().or(m.image.as_ref()))
            .filter_map(|uri| self.resource_of(uri))
            .map(|(op, _)| self.mcp_scope(op))
            .collect();
        if read.is_empty() {
            return Some(self.lowest_scope());
        }
        read.iter().find(|s| read.iter().all(|other| self.implies(s, other))).cloned()
    }

    /// The operations the MCP endpoint calls, in spec order: tools, resources, and the listings
    /// completions read.
    pub fn mcp_operations(&self) -> Vec<&Operation> {
        let resources = self.operations.iter().filter_map(|o| o.def.resource.as_ref());
        let sources: Vec<&str> = resources
            .flat_map(|r| r.complete.values())
            .chain(self.spec.prompts.iter().flat_map(|p| p.arguments.iter().filter_map(|a| a.complete.as_ref())))
            .filter_map(|c| c.operation.as_deref())
            .collect();
        self.operations
            .iter()
            .filter(|o| o.def.mcp.is_some() || o.def.resource.is_some() || sources.contains(&o.id()))
            .collect()
    }

    /// Whether the service has an MCP catalog beyond its tool descriptors: resources, prompts, or
    /// tools whose content the spec declares.
    pub fn has_mcp_catalog(&self) -> bool {
        let content = |o: &Operation| o.def.mcp.as_ref().is_some_and(|t| !t.content.is_empty());
        self.operations.iter().any(|o| o.def.resource.is_some() || content(o)) || !self.spec.prompts.is_empty()
    }

    /// Whether the service has an MCP endpoint to serve: tools, resources or prompts.
    pub fn has_mcp(&self) -> bool {
        !self.mcp_operations().is_empty() || !self.spec.prompts.is_empty()
    }

    /// The lowest scope tier: what connecting to the MCP endpoint needs.
    pub fn lowest_scope(&self) -> String {
        self.spec.security.scopes.first().map(|s| s.name.clone()).unwrap_or_default()
    }

    /// The scope `op` needs over MCP: its own, or for a public operation the lowest tier.
    pub fn mcp_scope(&self, op: &Operation) -> String {
        if op.def.public { self.lowest_scope() } else { op.def.scope.clone().unwrap_or_default() }
    }

    /// HTTP status of an error code.
    pub fn status_of(&self, code: &str) -> u16 {
        self.spec.errors[code].status
    }

    /// Scopes that satisfy `scope` (itself and every scope that implies it, transitively).
    pub fn satisfying_scopes(&self, scope: &str) -> Vec<String> {
        self.spec.security.scopes.iter().filter(|s| self.implies(&s.name, scope)).map(|s| s.name.clone()).collect()
    }

    /// Whether holding `have` satisfies a requirement of `want`.
    pub fn implies(&self, have: &str, want: &str) -> bool {
        let mut stack = vec![have.to_string()];
        let mut seen = Vec::new();
        while let Some(s) = stack.pop() {
            if s == want {
                return true;
            }
            if seen.contains(&s) {
                continue;
            }
            if let Some(def) = self.spec.security.scopes.iter().find(|d| d.name == s) {
                stack.extend(def.implies.iter().cloned());
            }
            seen.push(s);
        }
        false
    }
}

/// Whether `name` may name something on the wire (a field, a parameter, an enum value, a
/// union's variant): any text without control characters, at most 256 bytes. What Rust calls it
/// is derived ([`rust_field_name`], [`rust_variant_name`]).
pub fn is_wire_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 256 && !name.chars().any(char::is_control)
}

pub use crate::names::{rust_field_name, rust_variant_name};

/// Whether `value` may be an enum's value: a wire name, or the empty string (`V` in Rust).
pub fn is_enum_value(value: &str) -> bool {
    value.is_empty() || is_wire_name(value)
}

/// The HTTP header a `in = "header"` field travels in: a snake_case name in Train-Case
/// (`idempotency_key` → `Idempotency-Key`), any other name as it is written (`X-RateLimit-Limit`).
pub fn header_name(field: &str) -> String {
    support::header_name(field)
}

/// Whether `name` is an HTTP header name (RFC 9110 `token`).
pub fn is_header_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Names of a path's `{param}`s, in order: alone in their segment, beside text (`{id}.json`,
/// `v{version}`) or several to a segment (`{name}-{version}.zip`).
pub fn path_params(path: &str) -> Vec<String> {
    support::template_params(path).into_iter().map(str::to_string).collect()
}
