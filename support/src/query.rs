//! Parameters as the query (or a form) writes them: a scalar or a list under its own name
//! ([`add_pair`]), JSON text ([`json_text`]), and objects as OpenAPI's `form` (exploded) and
//! `deepObject` styles write them: a model's members under their own names (`?lat=1&lng=2`) or
//! as `name[member]` (`?filter[state]=open`), a map's or a `json` object's keys the same way.
//! Each member is read as its field says; the object then goes through the same checks as a
//! body's.

use serde_json::{Map, Value};

use crate::fields::{FieldSpec, Kind, ListStyle, Location};
use crate::table::{Operation, ServiceInfo};
use crate::validate::{Rejection, coerce, invalid};

/// Adds the query parameter `k=raw` to the fields in `obj`: a field of its own name, a member of
/// an object field, or else an unknown parameter (refused).
pub(crate) fn query_pair(
    op: &'static Operation,
    k: String,
    raw: String,
    obj: &mut Map<String, Value>,
) -> Result<(), Rejection> {
    let query = || op.input.iter().filter(|f| f.location == Location::Query);
    if query().any(|f| f.wire == k) {
        return add_pair(op, Location::Query, k, raw, obj);
    }
    // `name[member]`, `name[a][b]`, `name[member][]`: a member of an object sent `deepObject`.
    if let Some((base, rest)) = k.split_once('[')
        && let Some(f) = query().find(|f| f.wire == base && f.list_style == ListStyle::Deep)
    {
        let Some(path) = members(rest) else {
            return Err(unknown(op, &k, raw));
        };
        return member(op, f, &path, &k, raw, obj);
    }
    // A model's member under its own name (a model of JSON text is one parameter, its own).
    for f in query().filter(|f| f.list_style == ListStyle::Repeated && !f.json_text) {
        if let Kind::Model(fields) = &f.kind
            && fields.iter().any(|m| m.name == k)
        {
            return member(op, f, &[k.as_str()], &k, raw, obj);
        }
    }
    // A key no field names: the map or `json` object that takes the others.
    let open = |f: &&FieldSpec| {
        matches!(f.kind, Kind::Map(_) | Kind::Json) && f.list_style == ListStyle::Repeated && !f.json_text
    };
    match query().find(open) {
        Some(f) => member(op, f, &[k.as_str()], &k, raw, obj),
        None => Err(unknown(op, &k, raw)),
    }
}

/// `a][b]` (what follows the first `[` of `name[a][b]`) as `["a", "b"]`; `a][]` as `["a", ""]`
/// (an item added to a list); none where it is not such a chain.
pub(crate) fn members(rest: &str) -> Option<Vec<&str>> {
    let inner = rest.strip_suffix(']')?;
    let path: Vec<&str> = inner.split("][").collect();
    path.iter().all(|m| !m.contains(['[', ']'])).then_some(path)
}

fn unknown(op: &'static Operation, k: &str, raw: String) -> Rejection {
    invalid(op.service, k, Value::String(raw), format!("unknown query parameter {k}"))
}

/// Puts `raw` at `path` within the object of field `f`, in the query's words for what goes wrong.
fn member(
    op: &'static Operation,
    f: &'static FieldSpec,
    path: &[&str],
    k: &str,
    raw: String,
    obj: &mut Map<String, Value>,
) -> Result<(), Rejection> {
    let slot = obj.entry(f.name.to_string()).or_insert(Value::Null);
    let sent = raw.clone();
    put(op.service, f, &f.kind, slot, path, raw)
        .map_err(|e| e.rejection(op.service, k, sent.clone(), || unknown(op, k, sent)))
}

/// Why a bracketed key (`name[a][0][b]`) found no place in its field.
pub(crate) enum Misplaced {
    /// The key names no member (`a[x]` where `a` has no `x`, `a[b]` where `a` is a number).
    Unknown,
    /// The place holds a value already (`a[b]=1&a[b]=2` where `b` is not a list).
    Twice,
    /// The value is not what the place holds (`a[count]=x` where `count` is an integer).
    Invalid(Rejection),
}

impl Misplaced {
    /// The refusal of key `k` with value `raw`; `unknown` says a key that names no member in the
    /// words of the request's part (a query parameter, a form field).
    pub(crate) fn rejection(
        self,
        service: &ServiceInfo,
        k: &str,
        raw: String,
        unknown: impl FnOnce() -> Rejection,
    ) -> Rejection {
        match self {
            Misplaced::Unknown => unknown(),
            Misplaced::Twice => invalid(service, k, Value::String(raw), format!("{k} is given more than once")),
            Misplaced::Invalid(r) => r,
        }
    }
}

/// The deepest a bracketed key may nest: far beyond any document's models, well short of a stack
/// a hostile key could exhaust.
const MAX_DEPTH: usize = 32;

/// Puts `raw` at `path` within `slot`, which holds a value of `kind` (of field `spec`): the
/// members a key names in brackets, as Rails, PHP and Stripe read forms and OpenAPI's
/// `deepObject` reads a query. A model's member by name, a map's key, any JSON's key (text values,
/// objects as the keys nest); a list's item by index (`a[0][b]`, the next index starting an item)
/// or `[]` (`a[]=1` adds an item; `a[][b]=1` starts one where the last already has `b`). A key
/// that ends at a list adds an item, so a repeated key builds the list; any JSON given twice is the
/// list of both. Each value is read as its
/// place's field says, and the whole object then goes through the checks a JSON body's does.
pub(crate) fn put(
    service: &ServiceInfo,
    spec: &'static FieldSpec,
    kind: &'static Kind,
    slot: &mut Value,
    path: &[&str],
    raw: String,
) -> Result<(), Misplaced> {
    static JSON: Kind = Kind::Json;
    if path.len() > MAX_DEPTH {
        return Err(Misplaced::Unknown);
    }
    let Some((key, rest)) = path.split_first() else {
        let value = |kind: &Kind| match kind {
            Kind::Json => Ok(Value::String(raw)),
            Kind::Model(_) | Kind::Map(_) | Kind::List(_) | Kind::Union(_) | Kind::File { .. } => {
                Err(Misplaced::Unknown)
            }
            kind => coerce(service, spec, kind, &raw).map_err(Misplaced::Invalid),
        };
        return match (kind, &mut *slot) {
            (Kind::List(inner), Value::Null) => {
                *slot = Value::Array(vec![value(inner)?]);
                Ok(())
            }
            (Kind::List(inner), Value::Array(items)) => {
                items.push(value(inner)?);
                Ok(())
            }
            (_, Value::Null) => {
                *slot = value(kind)?;
                Ok(())
            }
            // Any JSON given twice at one place is the list of both, as `qs` and a multipart
            // body's repeated part read it.
            (Kind::Json, Value::String(_)) => {
                let first = std::mem::take(slot);
                *slot = Value::Array(vec![first, value(kind)?]);
                Ok(())
            }
            (Kind::Json, Value::Array(items)) => {
                items.push(value(kind)?);
                Ok(())
            }
            _ => Err(Misplaced::Twice),
        };
    };
    let (spec, kind, child) = match kind {
        Kind::Model(fields) => {
            let m = fields.iter().find(|m| m.name == *key).ok_or(Misplaced::Unknown)?;
            (m, &m.kind, object_entry(slot, key)?)
        }
        Kind::Map(inner) => (spec, &**inner, object_entry(slot, key)?),
        Kind::Json if !key.is_empty() => (spec, &JSON, object_entry(slot, key)?),
        Kind::List(_) | Kind::Json => {
            let inner = match kind {
                Kind::List(inner) => &**inner,
                _ => &JSON,
            };
            if slot.is_null() {
                *slot = Value::Array(Vec::new());
            }
            let Value::Array(items) = slot else { return Err(Misplaced::Twice) };
            let at = match *key {
                "" => {
                    // `a[][b]`: the last item, unless it has `b` already (or there is none).
                    let last_has = |v: &Value| rest.first().is_none_or(|k| v.get(k).is_some());
                    match items.last() {
                        Some(last) if !rest.is_empty() && !last_has(last) => items.len() - 1,
                        _ => items.len(),
                    }
                }
                index => index.parse::<usize>().ok().filter(|i| *i <= items.len()).ok_or(Misplaced::Unknown)?,
            };
            if at == items.len() {
                items.push(Value::Null);
            }
            (spec, inner, &mut items[at])
        }
        _ => return Err(Misplaced::Unknown),
    };
    put(service, spec, kind, child, rest, raw)
}

/// The member `key` of the object `slot` holds (made one where it holds nothing yet).
fn object_entry<'a>(slot: &'a mut Value, key: &str) -> Result<&'a mut Value, Misplaced> {
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(object) => Ok(object.entry(key.to_string()).or_insert(Value::Null)),
        _ => Err(Misplaced::Twice),
    }
}

/// One `key=value` pair of a query string or a form body into the fields at `location`: a
/// repeated key builds a list, an unknown key or a second value of a single field is refused.
pub(crate) fn add_pair(
    op: &'static Operation,
    location: Location,
    k: String,
    raw: String,
    obj: &mut Map<String, Value>,
) -> Result<(), Rejection> {
    let service = op.service;
    let Some(f) = op.input.iter().find(|f| f.wire == k && f.location == location) else {
        let place = if location == Location::Query { "query parameter" } else { "field" };
        return Err(invalid(service, &k, Value::String(raw), format!("unknown {place} {k}")));
    };
    // Its value goes under the field's key (which its wire name may not be).
    let (wire, k) = (k, f.name.to_string());
    match &f.kind {
        // JSON text holds the whole value, whatever its kind.
        _ if f.json_text => {
            if obj.contains_key(&k) {
                return Err(invalid(service, &wire, Value::String(raw), format!("{wire} is given more than once")));
            }
            let v = json_text(service, f, &raw)?;
            obj.insert(k, v);
        }
        Kind::List(inner) => {
            // Items one per parameter, or several in one, split where the spec says.
            let items: Vec<&str> = match f.list_style.separator() {
                None => vec![raw.as_str()],
                Some(_) if raw.is_empty() => Vec::new(),
                Some(sep) => raw.split(sep).collect(),
            };
            let values =
                items.into_iter().map(|item| coerce(service, f, inner, item)).collect::<Result<Vec<_>, _>>()?;
            if let Value::Array(a) = obj.entry(k).or_insert_with(|| Value::Array(Vec::new())) {
                a.extend(values);
            }
        }
        kind => {
            if obj.contains_key(&k) {
                return Err(invalid(service, &wire, Value::String(raw), format!("{wire} is given more than once")));
            }
            let v = coerce(service, f, kind, &raw)?;
            obj.insert(k, v);
        }
    }
    Ok(())
}

/// A parameter whose value is JSON text (OpenAPI's `content` with `application/json`), before
/// the checks of its field.
pub(crate) fn json_text(service: &ServiceInfo, f: &crate::fields::FieldSpec, raw: &str) -> Result<Value, Rejection> {
    serde_json::from_str::<crate::strict::StrictJson>(raw).map(|v| v.0).map_err(|e| {
        invalid(service, f.name, Value::String(raw.to_string()), format!("{} must be JSON text: {e}", f.name))
    })
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use serde_json::json;

    use super::*;
    use crate::validate::Rejection;

    /// `GET /t/op?filter[…]…&…`: a `json` object sent `deepObject`, and a map of integers taking
    /// the parameters no field names.
    static OBJECTS_INPUT: [FieldSpec; 2] = [
        FieldSpec::query("filter", Kind::Json).list_style(ListStyle::Deep),
        FieldSpec::query("counts", Kind::Map(&Kind::Integer)),
    ];
    static OBJECTS: Operation = Operation { id: "objects", input: &OBJECTS_INPUT, has_body: false, ..crate::tests::OP };

    fn query_fields(query: &str) -> Result<serde_json::Map<String, Value>, Rejection> {
        let mut parts = Request::builder().uri(format!("/t/op?{query}")).body(()).unwrap().into_parts().0;
        crate::tests::block_on(crate::request_fields(
            &crate::tests::Open,
            &"caller",
            &OBJECTS,
            &mut parts,
            Body::empty(),
            &crate::reads_nothing,
        ))
        .map(|(fields, _)| fields)
    }

    #[test]
    fn a_header_is_named_as_written_where_its_wire_name_is_its_own() {
        let snake = FieldSpec::header("api_key", Kind::String);
        assert_eq!(snake.http_header(), "Api-Key", "a snake_case name travels in Train-Case");
        assert_eq!(snake.wire("api_key_as_is").http_header(), "api_key_as_is");
    }

    #[test]
    fn objects_in_the_query_nest_as_their_keys_say_and_the_open_one_takes_the_rest() {
        let fields = query_fields("filter[created][gte]=1&filter[tag][]=a&filter[tag][]=b&filter[state]=open&a=1&b=2")
            .expect("read");
        assert_eq!(
            Value::Object(fields),
            json!({"filter": {"created": {"gte": "1"}, "tag": ["a", "b"], "state": "open"}, "counts": {"a": 1, "b": 2}})
        );
        let refused = |q: &str| query_fields(q).expect_err(q).problem.message;
        assert!(refused("a=x").contains("must be"), "a map's values are read as its type says");
        // Any JSON given twice at one place is the list of both (as `qs` reads it).
        let twice = query_fields("filter[state]=a&filter[state]=b").expect("a list");
        assert_eq!(twice["filter"], json!({"state": ["a", "b"]}));
        assert!(refused("filter[state][x]=a&filter[state]=b").contains("more than once"), "an object is no list");
        assert!(refused("filter[state=a").contains("unknown query parameter"));
    }
}
