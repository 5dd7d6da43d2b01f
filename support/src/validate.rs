//! Validation of decoded values against their field specs: every refusal names the field and the rule.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::fields::UnionSpec;
use crate::fields::{FieldSpec, Format, Kind, OTHER_KEYS, is_date, is_datetime};
use crate::pattern::Pattern;
use crate::problem::Problem;
use crate::table::{Requires, ServiceInfo};

/// A request the decoder refused, with the role of the error to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// Catalog code.
    pub code: &'static str,
    /// What was wrong.
    pub problem: Problem,
}

pub(crate) fn invalid(service: &ServiceInfo, field: &str, value: Value, message: String) -> Rejection {
    Rejection {
        code: service.roles.validation,
        problem: Problem::new(message).with("field", field).with("value", value),
    }
}

/// Checks that `obj` (a decoded input) gives the groups `requires` asks for in full: a field
/// is given when its key is there, whatever its value (JSON Schema's `required`).
pub(crate) fn check_requires(
    service: &ServiceInfo,
    requires: &Requires,
    obj: &Map<String, Value>,
) -> Result<(), Rejection> {
    let complete = requires.groups.iter().filter(|g| g.iter().all(|f| obj.contains_key(*f))).count();
    let ok = if requires.exactly_one { complete == 1 } else { complete > 0 };
    if ok {
        return Ok(());
    }
    let groups: Vec<String> = requires
        .groups
        .iter()
        .map(|g| {
            let names: Vec<String> = g.iter().map(|f| format!("`{f}`")).collect();
            match names.as_slice() {
                [] => String::new(),
                [one] => one.clone(),
                [init @ .., last] => format!("{} and {last}", init.join(", ")),
            }
        })
        .collect();
    let listed = groups.join("; or ");
    let message = match (requires.exactly_one, complete) {
        (true, 0) => format!("give exactly one of: {listed}"),
        (true, _) => format!("give exactly one of: {listed}; this request gives {complete}"),
        (false, _) => format!("give at least one of: {listed}"),
    };
    Err(invalid(service, "", Value::Null, message))
}

pub(crate) fn describe(kind: &Kind) -> Cow<'static, str> {
    match kind {
        Kind::String => "a string".into(),
        Kind::Integer => "an integer".into(),
        Kind::Number => "a number".into(),
        Kind::Boolean => "a boolean".into(),
        Kind::DateTime => "an RFC 3339 timestamp".into(),
        Kind::Date => "an RFC 3339 date (YYYY-MM-DD)".into(),
        Kind::Json => "any JSON value".into(),
        Kind::Enum(values) => format!("one of: {}", values.join(", ")).into(),
        Kind::Model(_) | Kind::Map(_) | Kind::Union(_) => "an object".into(),
        Kind::List(_) => "a list".into(),
        Kind::File { .. } => "a file (a part of a multipart body)".into(),
    }
}

pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") }
}

fn bound(v: f64) -> String {
    if v.fract() == 0.0 { format!("{}", v as i64) } else { v.to_string() }
}

/// Refuses a string holding U+0000 (NUL). PostgreSQL text cannot store it (the insert fails, so
/// a request carrying one would end in a server error on one backend and succeed on the other),
/// and no legitimate input needs it. Every string the decoder accepts passes through here (field
/// values of every location, list and map items, map keys, strings anywhere inside a JSON field),
/// so none that holds a NUL can reach an operation, whichever surface it came through.
fn nul_free(service: &ServiceInfo, path: &str, s: &str) -> Result<(), Rejection> {
    if s.contains('\0') {
        return Err(invalid(
            service,
            path,
            Value::String(s.to_string()),
            format!("{path} must not contain U+0000 (NUL)"),
        ));
    }
    Ok(())
}

/// Where the first string or object key inside `v` that holds U+0000 (NUL) is, as a field path
/// under `path` (`path` itself, `path.key`, `path[2]`…); `None` when no string holds one. The
/// decoder refuses such a value (see [`nul_free`]); the runtime checks text that reaches storage
/// by other ways (OAuth client metadata, lead feeds) with the same function.
pub fn nul_at(path: &str, v: &Value) -> Option<String> {
    match v {
        Value::String(s) => s.contains('\0').then(|| path.to_string()),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| nul_at(&format!("{path}[{i}]"), item)),
        Value::Object(map) => map.iter().find_map(|(k, item)| {
            let at = join(path, k);
            if k.contains('\0') { Some(at) } else { nul_at(&at, item) }
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// Checks one value against its field spec; a secret field's value is never echoed back.
fn check_value(service: &ServiceInfo, spec: &FieldSpec, kind: &Kind, path: &str, v: &Value) -> Result<(), Rejection> {
    check_plain(service, spec, kind, path, v).map_err(|mut r| {
        if spec.secret {
            r.problem.details.insert("value".into(), Value::String("[redacted]".into()));
        }
        r
    })
}

/// The field's `values`, where it lists them: `v` must be one.
fn listed_value(service: &ServiceInfo, spec: &FieldSpec, path: &str, v: &Value) -> Result<(), Rejection> {
    if spec.accepts_value(v) {
        return Ok(());
    }
    Err(invalid(service, path, v.clone(), format!("{path} must be one of {}", spec.values.unwrap_or("[]"))))
}

fn check_plain(service: &ServiceInfo, spec: &FieldSpec, kind: &Kind, path: &str, v: &Value) -> Result<(), Rejection> {
    let wrong = || invalid(service, path, v.clone(), format!("{path} must be {}", describe(kind)));
    match kind {
        // A file never travels as JSON: the decoder puts it in after this check.
        Kind::File { .. } => return Err(wrong()),
        Kind::String | Kind::DateTime | Kind::Date => {
            let s = v.as_str().ok_or_else(wrong)?;
            nul_free(service, path, s)?;
            if (matches!(kind, Kind::DateTime) && !is_datetime(s)) || (matches!(kind, Kind::Date) && !is_date(s)) {
                return Err(wrong());
            }
            if let Some(format) = spec.format.filter(|f| !f.accepts(s)) {
                let what = match format {
                    Format::Uuid => "a UUID",
                    Format::Email => "an email address",
                    Format::Uri => "an absolute URI",
                    Format::Ipv4 => "an IPv4 address",
                    Format::Ipv6 => "an IPv6 address",
                    Format::Hostname => "a host name",
                    Format::Byte => "base64 (RFC 4648, padded)",
                };
                return Err(invalid(service, path, v.clone(), format!("{path} must be {what}")));
            }
            let n = s.chars().count();
            if let Some(min) = spec.min_length.filter(|m| n < *m) {
                return Err(invalid(
                    service,
                    path,
                    v.clone(),
                    format!("{path} must be at least {min} characters long"),
                ));
            }
            if let Some(max) = spec.max_length.filter(|m| n > *m) {
                return Err(invalid(service, path, v.clone(), format!("{path} must be at most {max} characters long")));
            }
            if let Some(p) = spec.pattern {
                // The loader refused a pattern no engine reads; one that fails anyway matches nothing.
                let re = spec
                    .compiled
                    .get_or_init(|| Pattern::new(p).unwrap_or_else(|_| Pattern::new("$^").expect("fallback pattern")));
                if !re.is_match(s) {
                    return Err(invalid(service, path, v.clone(), format!("{path} must match the pattern {p}")));
                }
            }
        }
        Kind::Integer | Kind::Number => {
            let n = if matches!(kind, Kind::Integer) { v.as_i64().map(|i| i as f64) } else { v.as_f64() };
            let n = n.ok_or_else(wrong)?;
            let out_of_range = spec.minimum.is_some_and(|m| n < m) || spec.maximum.is_some_and(|m| n > m);
            if out_of_range {
                let msg = match (spec.minimum, spec.maximum) {
                    (Some(lo), Some(hi)) => format!("{path} must be between {} and {}", bound(lo), bound(hi)),
                    (Some(lo), None) => format!("{path} must be at least {}", bound(lo)),
                    (None, Some(hi)) => format!("{path} must be at most {}", bound(hi)),
                    (None, None) => unreachable!("out of range needs a bound"),
                };
                return Err(invalid(service, path, v.clone(), msg));
            }
            if let Some(lo) = spec.exclusive_minimum.filter(|lo| n <= *lo) {
                return Err(invalid(service, path, v.clone(), format!("{path} must be greater than {}", bound(lo))));
            }
            if let Some(hi) = spec.exclusive_maximum.filter(|hi| n >= *hi) {
                return Err(invalid(service, path, v.clone(), format!("{path} must be less than {}", bound(hi))));
            }
            if let Some(m) = spec.multiple_of.filter(|m| *m > 0.0) {
                // Within rounding of a whole quotient: 0.07 is a multiple of 0.01.
                let q = n / m;
                if (q - q.round()).abs() > 1e-9 * q.abs().max(1.0) {
                    return Err(invalid(
                        service,
                        path,
                        v.clone(),
                        format!("{path} must be a multiple of {}", bound(m)),
                    ));
                }
            }
            listed_value(service, spec, path, v)?;
        }
        Kind::Boolean => {
            v.as_bool().ok_or_else(wrong)?;
        }
        Kind::Json => {
            if let Some(at) = nul_at(path, v) {
                return Err(invalid(service, &at, v.clone(), format!("{at} must not contain U+0000 (NUL)")));
            }
            listed_value(service, spec, path, v)?;
            // A union of scalars, lists and models: the field's value is one of the kinds (JSON
            // inside a member, a `map<json>`'s values, is any JSON).
            let own_value = std::ptr::eq(kind, &spec.kind);
            if own_value
                && !spec.one_of.is_empty()
                && !spec.one_of.iter().any(|k| check_plain(service, spec, k, path, v).is_ok())
            {
                let kinds: Vec<String> = spec.one_of.iter().map(|k| describe(k).into_owned()).collect();
                return Err(invalid(service, path, v.clone(), format!("{path} must be one of: {}", kinds.join("; "))));
            }
        }
        Kind::Enum(values) => {
            let s = v.as_str().ok_or_else(wrong)?;
            nul_free(service, path, s)?;
            if !values.contains(&s) {
                return Err(wrong());
            }
        }
        Kind::Model(fields) => {
            let obj = v.as_object().ok_or_else(wrong)?;
            check_object(service, fields, path, obj)?;
        }
        Kind::Union(union) => {
            let obj = v.as_object().ok_or_else(wrong)?;
            union.check(service, path, obj)?;
        }
        Kind::List(inner) => {
            let items = v.as_array().ok_or_else(wrong)?;
            if let Some(min) = spec.min_items.filter(|m| items.len() < *m) {
                return Err(invalid(service, path, v.clone(), format!("{path} must have at least {min} items")));
            }
            if let Some(max) = spec.max_items.filter(|m| items.len() > *m) {
                return Err(invalid(
                    service,
                    path,
                    Value::from(items.len()),
                    format!("{path} must have at most {max} items"),
                ));
            }
            for (i, item) in items.iter().enumerate() {
                if item.is_null() && spec.nullable_items {
                    continue;
                }
                check_item(service, spec, inner, &format!("{path}[{i}]"), item)?;
            }
        }
        Kind::Map(inner) => {
            let obj = v.as_object().ok_or_else(wrong)?;
            for (k, item) in obj {
                let at = join(path, k);
                nul_free(service, &at, k)?;
                check_item(service, spec, inner, &at, item)?;
            }
        }
    }
    Ok(())
}

/// List and map items share their field's string constraints but not its list constraints.
fn check_item(service: &ServiceInfo, spec: &FieldSpec, kind: &Kind, path: &str, v: &Value) -> Result<(), Rejection> {
    // `null` is a JSON value like any other where any is allowed.
    if v.is_null() && !matches!(kind, Kind::Json) {
        return Err(invalid(service, path, Value::Null, format!("{path} must be {}", describe(kind))));
    }
    check_value(service, spec, kind, path, v)
}

/// Checks an object against its fields: unknown fields, missing required fields, each value.
pub(crate) fn check_object(
    service: &ServiceInfo,
    fields: &[FieldSpec],
    prefix: &str,
    obj: &Map<String, Value>,
) -> Result<(), Rejection> {
    for (k, v) in obj.iter().filter(|(k, _)| !fields.iter().any(|f| f.name == *k)) {
        let path = join(prefix, k);
        // Looked for only when a key is not a field: most objects have none.
        match fields.iter().find(|f| f.name == OTHER_KEYS) {
            // A model with a map beside its fields: every other key holds a value of that map.
            Some(spec) => {
                nul_free(service, &path, k)?;
                check_item(service, spec, &spec.kind, &path, v)?;
            }
            None => return Err(invalid(service, &path, v.clone(), format!("unknown field {path}"))),
        }
    }
    for f in fields {
        let path = join(prefix, f.name);
        match obj.get(f.name) {
            // A required file is looked for once the uploads are in (`upload::required_files`).
            None if f.required && !matches!(f.kind, Kind::File { .. }) => {
                return Err(invalid(service, &path, Value::Null, format!("{path} is required")));
            }
            None => {}
            Some(Value::Null) if f.nullable || !f.required => {}
            Some(v) => check_value(service, f, &f.kind, &path, v)?,
        }
    }
    Ok(())
}

/// Turns a path or query string into the JSON value its field expects.
pub(crate) fn coerce(service: &ServiceInfo, f: &FieldSpec, kind: &Kind, raw: &str) -> Result<Value, Rejection> {
    let bad =
        || invalid(service, f.name, Value::String(raw.to_string()), format!("{} must be {}", f.name, describe(kind)));
    Ok(match kind {
        Kind::Integer => Value::from(raw.trim().parse::<i64>().map_err(|_| bad())?),
        // A whole number stays an integer, so errors echo the value as it was sent (`150`, not `150.0`).
        Kind::Number if raw.trim().parse::<i64>().is_ok() => Value::from(raw.trim().parse::<i64>().map_err(|_| bad())?),
        Kind::Number => {
            let n = raw.trim().parse::<f64>().ok().filter(|n| n.is_finite()).ok_or_else(bad)?;
            serde_json::Number::from_f64(n).map(Value::Number).ok_or_else(bad)?
        }
        Kind::Boolean => match raw {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(bad()),
        },
        _ => Value::String(raw.to_string()),
    })
}

impl UnionSpec {
    /// The required fields of `fields` no other variant declares: what tells an untagged value
    /// of that variant apart (the generator makes sure each variant has one).
    fn own<'a>(&'a self, fields: &'a [FieldSpec]) -> impl Iterator<Item = &'a FieldSpec> + 'a {
        fields.iter().filter(move |f| {
            f.required
                && !self
                    .variants
                    .iter()
                    .any(|(_, other)| !std::ptr::eq(*other, fields) && other.iter().any(|g| g.name == f.name))
        })
    }

    /// Checks an object of this union: the variant it names (or the one whose own fields it
    /// has), then that variant's fields.
    pub(crate) fn check(&self, service: &ServiceInfo, path: &str, obj: &Map<String, Value>) -> Result<(), Rejection> {
        let names = || self.variants.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
        if let Some(tag) = self.tag {
            let at = join(path, tag);
            let Some(value) = obj.get(tag) else {
                return Err(invalid(service, &at, Value::Null, format!("{at} is required: one of {}", names())));
            };
            let Some((_, fields)) = value.as_str().and_then(|t| self.variants.iter().find(|(n, _)| *n == t)) else {
                return Err(invalid(service, &at, value.clone(), format!("{at} must be one of: {}", names())));
            };
            let mut rest = obj.clone();
            rest.remove(tag);
            return check_object(service, fields, path, &rest);
        }
        let matching: Vec<&(&str, &[FieldSpec])> =
            self.variants.iter().filter(|(_, fields)| self.own(fields).any(|f| obj.contains_key(f.name))).collect();
        match matching.as_slice() {
            [(_, fields)] => check_object(service, fields, path, obj),
            [] => {
                let shapes: Vec<String> = self
                    .variants
                    .iter()
                    .map(|(n, fields)| {
                        let own: Vec<&str> = self.own(fields).map(|f| f.name).collect();
                        format!("{n} (with {})", own.join(" or "))
                    })
                    .collect();
                let at = if path.is_empty() { "the body" } else { path };
                Err(invalid(
                    service,
                    path,
                    Value::Object(obj.clone()),
                    format!("{at} must be one of: {}", shapes.join(", ")),
                ))
            }
            several => {
                let both: Vec<&str> = several.iter().map(|(n, _)| *n).collect();
                let at = if path.is_empty() { "the body" } else { path };
                Err(invalid(
                    service,
                    path,
                    Value::Object(obj.clone()),
                    format!("{at} mixes the fields of {}: it must be one of them", both.join(" and ")),
                ))
            }
        }
    }
}
