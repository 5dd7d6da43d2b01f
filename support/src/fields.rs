//! Field specs: what the decoder checks of each input field (its kind, constraints, format,
//! location and default), and the union variants it tells apart.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The shape of a field's values.
#[derive(Debug)]
pub enum Kind {
    /// UTF-8 string; the decoder refuses one holding U+0000 (NUL).
    String,
    /// Integer (i64).
    Integer,
    /// Number (f64).
    Number,
    /// Boolean.
    Boolean,
    /// RFC 3339 timestamp string.
    DateTime,
    /// RFC 3339 full date (`2026-11-26`).
    Date,
    /// Any JSON.
    Json,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An object with these fields.
    Model(&'static [FieldSpec]),
    /// A list.
    List(&'static Kind),
    /// An object with string keys.
    Map(&'static Kind),
    /// An object of one of several models.
    Union(&'static UnionSpec),
    /// An uploaded file (a multipart part, or a raw body), stored as it arrives; never JSON.
    File {
        /// Media types accepted (`image/png`, or `image/*`); empty accepts any.
        media_types: &'static [&'static str],
        /// Largest accepted size in bytes.
        max_size: u64,
    },
}

/// A union's variants, for validation: which model a value holds, by its tag or by the required
/// fields only its variant has.
#[derive(Debug)]
pub struct UnionSpec {
    /// The field naming the variant; `None` for an untagged union.
    pub tag: Option<&'static str>,
    /// Each variant's name (the tag's value) and its model's fields, in spec order.
    pub variants: &'static [(&'static str, &'static [FieldSpec])],
}

// The one definition: the generator reads it from spec files (feature `spec`), field specs hold it.
/// Where an operation input field travels over REST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "lowercase"))]
pub enum Location {
    /// In the JSON request body.
    #[default]
    Body,
    /// A `{name}` segment of the path.
    Path,
    /// A query-string parameter.
    Query,
    /// A request header; the field `idempotency_key` is the header `Idempotency-Key`.
    Header,
    /// The whole JSON request body (an array, a scalar, a map or a model): what Smithy calls the
    /// payload. An input has at most one, and then no `body` field.
    Payload,
}

/// How the items of a query list, or the members of a query object, travel (OpenAPI's `style`
/// and `explode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "lowercase"))]
pub enum ListStyle {
    /// `?tag=a&tag=b`: a parameter per item (OpenAPI's `form`, exploded): the default. An
    /// object's members each travel under their own name (`?lat=1&lng=2`), and a map or `json`
    /// object takes the parameters no other field names.
    #[default]
    Repeated,
    /// `?tag=a,b`: one parameter, the items separated by commas (`form`, `explode: false`).
    Comma,
    /// `?tag=a%20b`: separated by spaces (`spaceDelimited`).
    Space,
    /// `?tag=a|b`: separated by `|` (`pipeDelimited`).
    Pipe,
    /// `?filter[state]=open&filter[tag]=a`: an object's members, each a parameter named
    /// `field[member]` (OpenAPI's `deepObject`); a `json` object's may nest (`created[gte]=1`).
    Deep,
}

impl ListStyle {
    /// What separates the items within one parameter; none when each item is a parameter.
    pub const fn separator(self) -> Option<char> {
        match self {
            ListStyle::Repeated => None,
            ListStyle::Comma => Some(','),
            ListStyle::Space => Some(' '),
            ListStyle::Pipe => Some('|'),
            ListStyle::Deep => None,
        }
    }

    /// Its name in a spec (`comma`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ListStyle::Repeated => "repeated",
            ListStyle::Comma => "comma",
            ListStyle::Space => "space",
            ListStyle::Pipe => "pipe",
            ListStyle::Deep => "deep",
        }
    }
}

/// A string format the decoder checks (JSON Schema's `format`, which the documents state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "spec", derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(feature = "spec", serde(rename_all = "lowercase"))]
pub enum Format {
    /// An RFC 9562 UUID in its hyphenated form (`0190c3e8-…`), any case.
    Uuid,
    /// An email address as HTML's `type=email` accepts it (WHATWG: `local@domain`, no quoting).
    Email,
    /// An absolute URI (RFC 3986: a scheme, `:`, then URI characters only).
    Uri,
    /// An IPv4 address in dotted-quad form (RFC 2673 section 3.2).
    Ipv4,
    /// An IPv6 address (RFC 4291 section 2.2).
    Ipv6,
    /// A host name (RFC 1123: labels of letters, digits and `-`, at most 253 characters).
    Hostname,
    /// Bytes in base64 (RFC 4648 section 4: the standard alphabet, padded), as OpenAPI's
    /// `format: byte` carries binary data inside JSON.
    Byte,
}

impl Format {
    /// The name JSON Schema and the spec give it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::Uuid => "uuid",
            Format::Email => "email",
            Format::Uri => "uri",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Hostname => "hostname",
            Format::Byte => "byte",
        }
    }

    /// Whether `s` is in this format.
    pub fn accepts(self, s: &str) -> bool {
        match self {
            Format::Uuid => {
                let b = s.as_bytes();
                b.len() == 36
                    && b.iter()
                        .enumerate()
                        .all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { *c == b'-' } else { c.is_ascii_hexdigit() })
            }
            Format::Email => {
                let Some((local, domain)) = s.split_once('@') else { return false };
                let local_ok = !local.is_empty()
                    && local.bytes().all(|c| c.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&c));
                local_ok && domain.split('.').all(is_host_label)
            }
            Format::Uri => {
                let Some((scheme, rest)) = s.split_once(':') else { return false };
                let scheme_ok = scheme.bytes().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && scheme.bytes().all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c));
                scheme_ok && uri_chars(rest)
            }
            Format::Ipv4 => s.parse::<std::net::Ipv4Addr>().is_ok(),
            Format::Ipv6 => s.parse::<std::net::Ipv6Addr>().is_ok(),
            Format::Hostname => !s.is_empty() && s.len() <= 253 && s.split('.').all(is_host_label),
            Format::Byte => {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD.decode(s).is_ok()
            }
        }
    }
}

/// Whether `s` is an RFC 3339 timestamp (`2026-11-26T04:59:57Z`).
pub fn is_datetime(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

/// Whether `s` is an RFC 3339 full date (`2026-11-26`).
pub fn is_date(s: &str) -> bool {
    s.len() == 10 && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// One label of a host name: 1 to 63 letters, digits and `-`, not starting or ending with `-`.
fn is_host_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && !label.starts_with('-')
        && !label.ends_with('-')
        && label.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
}

/// Only characters a URI may hold (RFC 3986: unreserved, reserved, and `%` with two hex digits).
fn uri_chars(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit) && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
            continue;
        }
        if !(c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c)) {
            return false;
        }
        i += 1;
    }
    true
}

/// The name of the field spec that stands for every key a model does not name, in a model with
/// a map beside its fields (JSON Schema's `additionalProperties` beside `properties`).
pub const OTHER_KEYS: &str = "*";

/// One field and its constraints, for validation without reflection.
#[derive(Debug)]
pub struct FieldSpec {
    /// Its key: the input's member it fills, and its wire name unless `wire` says another.
    pub name: &'static str,
    /// The name a query or header parameter travels under (`name` unless a body field holds
    /// that name).
    pub wire: &'static str,
    /// Where it travels.
    pub location: Location,
    /// Value shape.
    pub kind: Kind,
    /// Must be present.
    pub required: bool,
    /// May be `null`.
    pub nullable: bool,
    /// Inclusive lower bound (numbers).
    pub minimum: Option<f64>,
    /// Inclusive upper bound (numbers).
    pub maximum: Option<f64>,
    /// Fewest characters (strings).
    pub min_length: Option<usize>,
    /// Most characters (strings).
    pub max_length: Option<usize>,
    /// Fewest items (lists).
    pub min_items: Option<usize>,
    /// Most items (lists).
    pub max_items: Option<usize>,
    /// Pattern (strings).
    pub pattern: Option<&'static str>,
    /// The value is a secret: never echoed in error details.
    pub secret: bool,
    /// The string format the value must have.
    pub format: Option<Format>,
    /// What an absent optional field holds, as JSON text: the decoder puts it in before the
    /// operation sees the input.
    pub default: Option<&'static str>,
    /// Exclusive lower bound (numbers).
    pub exclusive_minimum: Option<f64>,
    /// Exclusive upper bound (numbers).
    pub exclusive_maximum: Option<f64>,
    /// A number must be a whole multiple of this.
    pub multiple_of: Option<f64>,
    /// The only values accepted, as a JSON array's text (numbers, or values of several types).
    pub values: Option<&'static str>,
    /// `values`, read on first use.
    pub parsed_values: OnceLock<Vec<Value>>,
    /// A list's items may be `null`.
    pub nullable_items: bool,
    /// For a JSON field: the kinds its value is one of (empty: any).
    pub one_of: &'static [Kind],
    /// How a query list's items travel.
    pub list_style: ListStyle,
    /// A path, query or header parameter whose value is JSON text (OpenAPI's `content` with
    /// `application/json`), read as JSON before its checks.
    pub json_text: bool,
    /// The compiled pattern, built on first use.
    pub compiled: OnceLock<crate::pattern::Pattern>,
}

impl FieldSpec {
    /// An optional, non-nullable field of `kind` at `location` with no constraint: the start of
    /// every generated field spec, which adds only the constraints the spec declares.
    pub const fn new(name: &'static str, location: Location, kind: Kind) -> Self {
        FieldSpec {
            name,
            wire: name,
            location,
            kind,
            required: false,
            nullable: false,
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
            pattern: None,
            secret: false,
            format: None,
            default: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            multiple_of: None,
            values: None,
            parsed_values: OnceLock::new(),
            nullable_items: false,
            json_text: false,
            one_of: &[],
            list_style: ListStyle::Repeated,
            compiled: OnceLock::new(),
        }
    }

    /// A body field.
    pub const fn body(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Body, kind)
    }

    /// A path parameter.
    pub const fn path(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Path, kind)
    }

    /// A query parameter.
    pub const fn query(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Query, kind)
    }

    /// A request header.
    pub const fn header(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Header, kind)
    }

    /// The whole request body.
    pub const fn payload(name: &'static str, kind: Kind) -> Self {
        Self::new(name, Location::Payload, kind)
    }

    /// Must be present.
    pub const fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// May be `null`.
    pub const fn nullable(mut self) -> Self {
        self.nullable = true;
        self
    }

    /// Never echoed in error details.
    pub const fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// Inclusive lower bound.
    pub const fn minimum(mut self, v: f64) -> Self {
        self.minimum = Some(v);
        self
    }

    /// Inclusive upper bound.
    pub const fn maximum(mut self, v: f64) -> Self {
        self.maximum = Some(v);
        self
    }

    /// Fewest characters.
    pub const fn min_length(mut self, n: usize) -> Self {
        self.min_length = Some(n);
        self
    }

    /// Most characters.
    pub const fn max_length(mut self, n: usize) -> Self {
        self.max_length = Some(n);
        self
    }

    /// Fewest items.
    pub const fn min_items(mut self, n: usize) -> Self {
        self.min_items = Some(n);
        self
    }

    /// Most items.
    pub const fn max_items(mut self, n: usize) -> Self {
        self.max_items = Some(n);
        self
    }

    /// Exclusive lower bound.
    pub const fn exclusive_minimum(mut self, v: f64) -> Self {
        self.exclusive_minimum = Some(v);
        self
    }

    /// Exclusive upper bound.
    pub const fn exclusive_maximum(mut self, v: f64) -> Self {
        self.exclusive_maximum = Some(v);
        self
    }

    /// A number must be a whole multiple of `v`.
    pub const fn multiple_of(mut self, v: f64) -> Self {
        self.multiple_of = Some(v);
        self
    }

    /// The only values accepted, as a JSON array's text (`[1, 2, 3]`).
    pub const fn values(mut self, json_array: &'static str) -> Self {
        self.values = Some(json_array);
        self
    }

    /// Whether `v` is one of the accepted values (numbers compared as numbers: `1` is `1.0`).
    pub fn accepts_value(&self, v: &Value) -> bool {
        let Some(text) = self.values else { return true };
        let values = self.parsed_values.get_or_init(|| serde_json::from_str(text).unwrap_or_default());
        values.iter().any(|x| match (x.as_f64(), v.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => x == v,
        })
    }

    /// A JSON field's value is one of these kinds.
    pub const fn one_of(mut self, kinds: &'static [Kind]) -> Self {
        self.one_of = kinds;
        self
    }

    /// The parameter travels under this name (its key is another field's on the wire).
    pub const fn wire(mut self, wire: &'static str) -> Self {
        self.wire = wire;
        self
    }

    /// The HTTP header a header field travels as: its wire name as written where it has one of
    /// its own, else its name (a snake_case name in Train-Case: `request_id` is `Request-Id`).
    pub fn http_header(&self) -> String {
        if self.wire != self.name { self.wire.to_string() } else { header_name(self.name) }
    }

    /// The parameter's value is JSON text.
    pub const fn json_text(mut self) -> Self {
        self.json_text = true;
        self
    }

    /// A list's items may be `null`.
    pub const fn nullable_items(mut self) -> Self {
        self.nullable_items = true;
        self
    }

    /// How a query list's items travel.
    pub const fn list_style(mut self, style: ListStyle) -> Self {
        self.list_style = style;
        self
    }

    /// Pattern the value must match.
    pub const fn pattern(mut self, p: &'static str) -> Self {
        self.pattern = Some(p);
        self
    }

    /// A string format.
    pub const fn format(mut self, f: Format) -> Self {
        self.format = Some(f);
        self
    }

    /// The value of an absent field, as JSON text.
    pub const fn default(mut self, json: &'static str) -> Self {
        self.default = Some(json);
        self
    }
}

/// Puts the default of each absent field that has one into a validated input. `null` for a
/// field that is not nullable is its absence (what the documents say of an optional field).
pub(crate) fn fill_defaults(fields: &[FieldSpec], obj: &mut Map<String, Value>) {
    for f in fields {
        let absent = match obj.get(f.name) {
            None => true,
            Some(Value::Null) => !f.nullable,
            Some(_) => false,
        };
        if let Some(text) = f.default
            && absent
            && let Ok(value) = serde_json::from_str::<Value>(text)
        {
            obj.insert(f.name.to_string(), value);
        }
    }
}

/// The HTTP header a header field travels as: a snake_case field in Train-Case (`request_id` is
/// `Request-Id`), any other the header's own name (`X-RateLimit-Limit`, `WM_SEC.ACCESS_TOKEN`).
/// The generator documents and the decoder reads the same name.
pub fn header_name(field: &str) -> String {
    let snake = field.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && field.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !snake {
        return field.to_string();
    }
    field
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("-")
}
