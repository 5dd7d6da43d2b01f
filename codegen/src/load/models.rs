//! Models, enums and unions: names, types resolved, constraints that fit their types, defaults where they can apply, no model that requires itself.

use std::collections::{BTreeSet, HashMap};

use indexmap::IndexMap;

use crate::ir::{Field, Model, Ty};
use crate::spec::{FieldDef, Location, Spec};

use super::*;

pub(super) fn check_enums(c: &mut Collector, spec: &Spec) {
    for (name, e) in &spec.enums {
        let place = Place::Enum(name.clone());
        if !is_pascal(name) {
            c.push(&place, "name is not PascalCase", "rename it, e.g. `LeadStatus`");
        }
        if crate::names::is_reserved_type_name(name) {
            c.push(
                &place,
                format!("`{name}` is a name the generated Rust uses for its own (`Option`, `Box`, `Kind`, ...)"),
                format!("rename it, e.g. `{name}Item`"),
            );
        }
        if spec.models.contains_key(name) {
            c.push(&place, "a model has the same name", "rename one of them");
        }
        if e.values.is_empty() {
            c.push(&place, "has no values", "list at least one value");
        }
        let mut seen = BTreeSet::new();
        let mut rust: HashMap<String, &str> = HashMap::new();
        for v in &e.values {
            if !crate::ir::is_enum_value(&v.name) {
                c.push(&place, format!("value `{}` is too long or holds a control character", v.name), WIRE_NAME_FIX);
            } else if !seen.insert(v.name.as_str()) {
                c.push(&place, format!("value `{}` is listed twice", v.name), "remove the duplicate");
            } else if v.rust.as_deref().is_some_and(|r| !is_pascal(r)) {
                c.push(&place, format!("value `{}`: its Rust name is not PascalCase", v.name), "write it like `IdAsc`");
            } else if let Some(other) = rust.insert(v.variant(), &v.name) {
                c.push(
                    &place,
                    format!("value `{}` has the Rust name of value `{other}`", v.name),
                    "give one of them `rust = \"…\"`, a Rust name of its own",
                );
            }
        }
        let known = |v: &str| e.values.iter().any(|x| x.name == v);
        if let Some(init) = &e.initial
            && !known(init)
        {
            c.push(&place, format!("initial state `{init}` is not a value"), "name one of the enum's values");
        }
        for (from, tos) in e.transitions.iter().flatten() {
            for v in std::iter::once(from).chain(tos) {
                if !known(v) {
                    c.push(&place, format!("transition names unknown state `{v}`"), "use the enum's values only");
                }
            }
        }
    }
}

/// What to do about a wire name the loader refuses.
pub(super) const WIRE_NAME_FIX: &str =
    "write the name as the wire spells it, without control characters, in at most 256 bytes";

/// A union's variants are models of body fields; a tagged union's tag is none of their fields,
/// and an untagged union's variants each have a required field no other variant declares (what
/// tells a value's variant apart, on the wire and in `oneOf`).
pub(super) fn check_unions(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
    for (name, u) in &spec.unions {
        let place = Place::Union(name.clone());
        if !is_pascal(name) {
            c.push(&place, "name is not PascalCase", "rename it, e.g. `NoteContent`");
        }
        if crate::names::is_reserved_type_name(name) {
            c.push(
                &place,
                format!("`{name}` is a name the generated Rust uses for its own (`Option`, `Box`, `Kind`, ...)"),
                format!("rename it, e.g. `{name}Item`"),
            );
        }
        if spec.models.contains_key(name) || spec.enums.contains_key(name) {
            c.push(&place, "a model or enum has the same name", "rename one of them");
        }
        if u.variants.len() < 2 {
            c.push(&place, "has fewer than two variants", "list at least two, or use the model itself");
        }
        if let Some(tag) = &u.tag
            && !crate::ir::is_wire_name(tag)
        {
            c.push(&place, format!("tag `{tag}` is empty, too long or holds a control character"), WIRE_NAME_FIX);
        }
        let mut held: Vec<&Model> = Vec::new();
        let mut rust: HashMap<String, &str> = HashMap::new();
        for (variant, model) in &u.variants {
            if !crate::ir::is_wire_name(variant) {
                c.push(
                    &place,
                    format!("variant `{variant}` is empty, too long or holds a control character"),
                    WIRE_NAME_FIX,
                );
            } else if let Some(other) = rust.insert(crate::ir::rust_variant_name(variant), variant) {
                c.push(
                    &place,
                    format!("variant `{variant}` has the Rust name of variant `{other}`"),
                    "rename one of them",
                );
            }
            let Some(m) = models.get(model) else {
                c.push(
                    &place,
                    format!("variant `{variant}` holds `{model}`, which is not a model"),
                    "name a model declared under [models]",
                );
                continue;
            };
            if held.iter().any(|h| h.name == m.name) {
                c.push(
                    &place,
                    format!("model `{model}` is held by two variants"),
                    "give each variant a model of its own",
                );
            }
            if m.fields.iter().any(|f| f.location() != Location::Body) {
                c.push(
                    &place,
                    format!("variant `{variant}`: model `{model}` has fields outside the body"),
                    "a union's models hold body fields only",
                );
            }
            if m.additional.is_some() {
                c.push(
                    &place,
                    format!("variant `{variant}`: model `{model}` has additional keys, which would hide which variant a value is"),
                    "a union's models name all their fields",
                );
            }
            if let Some(tag) = &u.tag
                && m.fields.iter().any(|f| &f.name == tag)
            {
                c.push(
                    &place,
                    format!("variant `{variant}`: model `{model}` has a field `{tag}`, the union's tag"),
                    "rename the field or the tag: the tag is written beside the model's fields",
                );
            }
            held.push(m);
        }
        if u.tag.is_none() && held.len() == u.variants.len() {
            for (m, variant) in held.iter().zip(u.variants.keys()) {
                let own = m.fields.iter().any(|f| {
                    f.required() && !held.iter().any(|o| o.name != m.name && o.fields.iter().any(|g| g.name == f.name))
                });
                if !own {
                    c.push(
                        &place,
                        format!("variant `{variant}` has no required field that the other variants lack, so a value cannot be told apart"),
                        "give it such a field, or set `tag` to tag the union",
                    );
                }
            }
        }
    }
}

/// The Rust name of the map a model's additional keys are held in.
pub(super) const ADDITIONAL: &str = "additional";

pub(super) fn resolve_models(c: &mut Collector, spec: &Spec) -> IndexMap<String, Model> {
    let mut out = IndexMap::new();
    for (name, m) in &spec.models {
        if !is_pascal(name) {
            c.push(Place::Model(name.clone()), "name is not PascalCase", "rename it, e.g. `CredentialMetadata`");
        }
        if crate::names::is_reserved_type_name(name) {
            c.push(
                Place::Model(name.clone()),
                format!("`{name}` is a name the generated Rust uses for its own (`Option`, `Box`, `Kind`, ...)"),
                format!("rename it, e.g. `{name}Item`"),
            );
        }
        let mut fields = Vec::new();
        let mut rust_names: HashMap<String, &str> = HashMap::new();
        for (fname, f) in &m.fields {
            let place = Place::Field(name.clone(), fname.clone());
            // The wire name is the API's; the Rust field is its snake case.
            if !crate::ir::is_wire_name(fname) {
                c.push(&place, "name is empty, too long or holds a control character", WIRE_NAME_FIX);
            } else if f.name.is_some() && !matches!(f.location, Location::Query | Location::Header) {
                c.push(&place, "`name` is for query and header parameters", "remove it: the key is the name");
            } else if f.name.as_deref().is_some_and(|n| !crate::ir::is_wire_name(n)) {
                c.push(&place, "`name` is empty, too long or holds a control character", WIRE_NAME_FIX);
            } else if f.name.as_deref() == Some(fname.as_str()) {
                c.push(&place, "`name` is the field's key already", "remove `name`, or give the field another key");
            } else if f.location == Location::Header
                && !crate::ir::is_header_token(&f.name.clone().unwrap_or_else(|| crate::ir::header_name(fname)))
            {
                c.push(
                    &place,
                    "a header field's name is no HTTP header name",
                    "write `request_id` for `Request-Id`, or the header's name (`X-RateLimit-Limit`)",
                );
            } else if f.rust.as_deref().is_some_and(|r| !is_snake(r) || r == ADDITIONAL) {
                c.push(&place, "its Rust name is not a snake_case name of its own", "write it like `plus_one`");
            } else if let Some(other) = rust_names.insert(f.rust_name(fname), fname) {
                c.push(
                    &place,
                    format!("its Rust name is that of field `{other}`"),
                    "give one of them `rust = \"…\"`, a Rust name of its own",
                );
            }
            match Ty::parse(&f.ty, spec) {
                Ok(ty) => {
                    check_constraints(c, &place, f, &ty, spec);
                    fields.push(resolved(fname, f, ty, spec));
                }
                Err((problem, fix)) => c.push(&place, problem, fix),
            }
        }
        let additional = m.additional.as_ref().and_then(|f| {
            let place = Place::ModelPart(name.clone(), "additional keys".into());
            if m.fields.contains_key(ADDITIONAL) {
                c.push(
                    &place,
                    format!("field `{ADDITIONAL}` is also the name of the map that holds the other keys"),
                    "rename the field",
                );
            }
            let set: Vec<&str> = [
                (f.optional, "optional"),
                (f.nullable, "nullable"),
                (f.default.is_some(), "default"),
                (f.location != Location::Body, "in"),
                (f.deprecated, "deprecated"),
            ]
            .iter()
            .filter_map(|(on, what)| on.then_some(*what))
            .collect();
            if !set.is_empty() {
                c.push(
                    &place,
                    format!("sets {}, which only a named field may have", set.join(", ")),
                    "give the additional keys a type, a description and value constraints only",
                );
            }
            match Ty::parse(&f.ty, spec) {
                Ok(Ty::File) => {
                    c.push(&place, "a file cannot be a key's value", "give each file a field of its own");
                    None
                }
                Ok(ty) => {
                    check_constraints(c, &place, f, &ty, spec);
                    Some(resolved(ADDITIONAL, f, ty, spec))
                }
                Err((problem, fix)) => {
                    c.push(&place, problem, fix);
                    None
                }
            }
        });
        if let Some(r) = &m.requires {
            check_requires(c, name, m, r);
        }
        let requires = m.requires.clone();
        out.insert(
            name.clone(),
            Model { name: name.clone(), description: m.description.clone(), fields, additional, requires },
        );
    }
    out
}

/// A model's `requires`: one rule, two groups or more, each of optional body fields of the model.
fn check_requires(c: &mut Collector, name: &str, m: &crate::spec::ModelDef, r: &crate::spec::RequiresDef) {
    let place = Place::ModelPart(name.to_string(), "requires".into());
    if !r.any_of.is_empty() && !r.one_of.is_empty() {
        c.push(&place, "lists both `any_of` and `one_of`", "keep one rule; a model states one");
    }
    let (_, groups) = r.rule();
    if groups.len() < 2 {
        c.push(
            &place,
            "names fewer than two groups",
            "list two groups or more; fields every request gives are required fields (`optional = false`)",
        );
    }
    for group in groups {
        if group.is_empty() {
            c.push(&place, "holds an empty group", "name at least one field in each group");
        }
        for field in group {
            match m.fields.get(field) {
                None => c.push(&place, format!("names `{field}`, which is no field of the model"), "name its fields"),
                Some(f) if f.location != Location::Body => c.push(
                    &place,
                    format!("names `{field}`, which is not in the body"),
                    "group body fields only (a parameter is given or not on its own)",
                ),
                Some(f) if !f.optional => c.push(
                    &place,
                    format!("names `{field}`, which every request gives (it is not optional)"),
                    "group optional fields only",
                ),
                Some(_) => {}
            }
        }
    }
}

/// A spec's field with its types resolved (`check_constraints` reports a `one_of` type that does
/// not resolve).
fn resolved(name: &str, def: &FieldDef, ty: Ty, spec: &Spec) -> Field {
    let one_of = def.one_of.iter().filter_map(|t| Ty::parse(t, spec).ok()).collect();
    Field { name: name.to_string(), def: def.clone(), ty, one_of, injected: false }
}

pub(super) fn check_constraints(c: &mut Collector, place: &Place, f: &FieldDef, ty: &Ty, spec: &Spec) {
    let file = *ty == Ty::File;
    if !file && (!f.media_types.is_empty() || f.max_size.is_some()) {
        c.push(place, "`media_types` and `max_size` are for `file` fields", "remove them, or make the field a `file`");
    }
    if matches!(ty, Ty::List(t) | Ty::Map(t) if **t == Ty::File) {
        c.push(place, "a file cannot be in a list or a map", "give each file a field of its own");
    }
    if file && !matches!(f.location, Location::Body | Location::Payload) {
        c.push(place, "a file travels in the body", "remove `in`");
    }
    if file && f.max_size == Some(0) {
        c.push(place, "`max_size` is 0", "give the largest size accepted, in bytes");
    }
    for m in &f.media_types {
        let token =
            |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
        if m != "*/*" && !m.split_once('/').is_some_and(|(t, s)| token(t) && (s == "*" || token(s))) {
            c.push(
                place,
                format!("media type `{m}` is not `type/subtype`, `type/*` or `*/*`"),
                "write it like `image/png`",
            );
        }
    }
    if !f.one_of.is_empty() {
        if *ty != Ty::Json {
            c.push(place, "`one_of` is for `json` fields", "make the field `json`, or drop `one_of`");
        }
        if f.one_of.len() < 2 {
            c.push(place, "`one_of` names fewer than two types", "name at least two, or give the field that type");
        }
        for t in &f.one_of {
            match Ty::parse(t, spec) {
                Ok(Ty::Json | Ty::File) => c.push(
                    place,
                    format!("`one_of` names `{t}`"),
                    "name scalars, enums, models, unions or lists of them",
                ),
                Ok(_) => {}
                Err((problem, fix)) => c.push(place, format!("`one_of`: {problem}"), fix),
            }
        }
    }
    if f.nullable_items && !matches!(ty, Ty::List(_)) {
        c.push(place, "`nullable_items` is for lists", "remove it, or make the field a list");
    }
    if let Some(media) = &f.content {
        if !matches!(f.location, Location::Path | Location::Query | Location::Header) {
            c.push(place, "`content` is for path, query and header parameters", "remove it");
        } else if !support::is_json_media(media) {
            c.push(
                place,
                format!("`content = \"{media}\"` is not a JSON media type"),
                "write `content = \"application/json\"` (a parameter of JSON text)",
            );
        }
        if f.style != support::ListStyle::Repeated {
            c.push(place, "`content` and `style` both say how the parameter is written", "keep one");
        }
    }
    let object = matches!(ty, Ty::Model(_) | Ty::Map(_) | Ty::Json);
    if f.style == support::ListStyle::Deep {
        if !(f.location == Location::Query && object) {
            c.push(
                place,
                "`style = \"deep\"` is for objects in the query",
                "remove it, or make the field a model, a map or `json` with `in = \"query\"`",
            );
        }
    } else if f.style != support::ListStyle::Repeated && !(f.location == Location::Query && matches!(ty, Ty::List(_))) {
        c.push(
            place,
            format!("`style = \"{}\"` is for lists in the query", f.style.as_str()),
            "remove it, or make the field a list with `in = \"query\"`",
        );
    }
    // Number and string constraints on a list apply to each item.
    let numeric =
        matches!(ty, Ty::Integer | Ty::Number) || matches!(ty, Ty::List(t) if matches!(**t, Ty::Integer | Ty::Number));
    let stringy = matches!(ty, Ty::String) || matches!(ty, Ty::List(t) if **t == Ty::String);
    let listy = matches!(ty, Ty::List(_));
    let bounded =
        f.minimum.is_some() || f.maximum.is_some() || f.exclusive_minimum.is_some() || f.exclusive_maximum.is_some();
    if (bounded || f.multiple_of.is_some()) && !numeric {
        c.push(
            place,
            "minimum/maximum, their exclusive forms and multiple_of apply to numbers only",
            "remove them or change the type",
        );
    }
    if (f.minimum.is_some() && f.exclusive_minimum.is_some()) || (f.maximum.is_some() && f.exclusive_maximum.is_some())
    {
        c.push(
            place,
            "a bound is both inclusive and exclusive",
            "keep one of `minimum` and `exclusive_minimum` (and of the maxima)",
        );
    }
    if f.multiple_of.is_some_and(|m| m <= 0.0 || !m.is_finite()) {
        c.push(place, "multiple_of must be greater than 0", "give a positive number");
    }
    if !f.values.is_empty() {
        let item = match ty {
            Ty::List(t) => &**t,
            t => t,
        };
        let fits = |v: &serde_json::Value| match item {
            Ty::Integer => v.as_i64().is_some(),
            Ty::Number => v.is_number(),
            _ => true,
        };
        if !matches!(item, Ty::Integer | Ty::Number) && *ty != Ty::Json {
            c.push(
                place,
                "`values` applies to integer, number and json fields, and lists of numbers",
                "make the field one of them, or list the values in an `[enums]` type",
            );
        } else if let Some(bad) = f.values.iter().find(|v| !fits(v)) {
            c.push(place, format!("value {bad} is not of the field's type"), "list values of the field's type only");
        }
    }
    if (f.min_length.is_some() || f.max_length.is_some() || f.pattern.is_some()) && !stringy {
        c.push(
            place,
            "min_length/max_length/pattern apply to strings and string lists only",
            "remove them or change the type",
        );
    }
    if (f.min_items.is_some() || f.max_items.is_some()) && !listy {
        c.push(place, "min_items/max_items apply to lists only", "remove them or change the type");
    }
    if let (Some(lo), Some(hi)) = (f.minimum, f.maximum)
        && lo > hi
    {
        c.push(place, format!("minimum {lo} exceeds maximum {hi}"), "swap or fix the bounds");
    }
    if let Some(p) = &f.pattern
        && let Err(e) = support::Pattern::new(p)
    {
        c.push(place, format!("pattern does not compile: {e}"), "write a valid regular expression");
    }
    if f.format.is_some() && !stringy {
        c.push(place, "format applies to strings and string lists only", "remove it or change the type");
    }
    if let Some(value) = &f.default {
        if !f.optional || f.nullable {
            c.push(
                place,
                "a default is for an optional field that is not nullable",
                "make the field optional and not nullable, or remove the default",
            );
        }
        if let Err(why) = fits(value, f, ty, spec) {
            c.push(place, format!("default {value} {why}"), "give a default the field itself accepts");
        }
    }
}

/// A model whose required, non-null model fields lead back to it has no finite value: a
/// `TreeNode` whose `parent` is a required `TreeNode` would need parents forever.
pub(super) fn check_finite(c: &mut Collector, models: &IndexMap<String, Model>) {
    fn needs(m: &Model) -> impl Iterator<Item = (&str, &str)> {
        m.fields.iter().filter(|f| f.required() && !f.def.nullable).filter_map(|f| match &f.ty {
            Ty::Model(target) => Some((f.name.as_str(), target.as_str())),
            _ => None,
        })
    }
    for (name, m) in models {
        // The models a value of `name` must hold, with the first field that leads to each.
        let mut stack: Vec<(&str, &str)> = needs(m).collect();
        let mut seen = BTreeSet::new();
        while let Some((via, target)) = stack.pop() {
            if target == name {
                c.push(
                    Place::Field(name.clone(), via.to_string()),
                    format!("every `{name}` must hold another `{name}` through required fields, so no value is finite"),
                    "make a field on the way optional or nullable",
                );
                break;
            }
            if seen.insert(target)
                && let Some(next) = models.get(target)
            {
                stack.extend(needs(next).map(|(_, t)| (via, t)));
            }
        }
    }
}

/// Defaults are filled where the decoder reads a request: in the fields of an operation's input,
/// not in models nested in other models or unions (their Rust fields could not be plain values).
pub(super) fn check_default_places(c: &mut Collector, spec: &Spec, models: &IndexMap<String, Model>) {
    fn nested_in(ty: &Ty, out: &mut BTreeSet<String>) {
        match ty {
            Ty::Model(m) => {
                out.insert(m.clone());
            }
            Ty::List(inner) | Ty::Map(inner) => nested_in(inner, out),
            _ => {}
        }
    }
    let inputs: BTreeSet<&str> = spec.operations.iter().filter_map(|o| o.input.as_deref()).collect();
    let mut nested = BTreeSet::new();
    for m in models.values() {
        m.fields.iter().for_each(|f| nested_in(&f.ty, &mut nested));
    }
    nested.extend(spec.unions.values().flat_map(|u| u.variants.values().cloned()));
    for m in models.values() {
        let Some(f) = m.fields.iter().find(|f| f.def.default.is_some()) else { continue };
        let place = Place::Field(m.name.clone(), f.name.clone());
        if !inputs.contains(m.name.as_str()) || nested.contains(&m.name) {
            c.push(
                place,
                "has a default, but the model is not only an operation's input (defaults are filled where the \
                 decoder reads a request)",
                "move the default to an input field, or remove it",
            );
        }
    }
}

/// Whether `value` is one the decoder would accept for a field `f` of type `ty`: `Err` says why
/// not. Defaults are scalars, enum values or lists of them.
pub(crate) fn fits(value: &serde_json::Value, f: &FieldDef, ty: &Ty, spec: &Spec) -> Result<(), String> {
    use serde_json::Value;
    match (ty, value) {
        (Ty::List(inner), Value::Array(items)) => {
            if f.min_items.is_some_and(|m| items.len() < m as usize)
                || f.max_items.is_some_and(|m| items.len() > m as usize)
            {
                return Err("has a number of items outside min_items/max_items".into());
            }
            items.iter().try_for_each(|item| fits(item, f, inner, spec))
        }
        (Ty::String, Value::String(s)) => {
            let n = s.chars().count() as u32;
            if f.min_length.is_some_and(|m| n < m) || f.max_length.is_some_and(|m| n > m) {
                return Err("is outside min_length/max_length".into());
            }
            if let Some(p) = &f.pattern
                && support::Pattern::new(p).is_ok_and(|re| !re.is_match(s))
            {
                return Err(format!("does not match the pattern {p}"));
            }
            match f.format {
                Some(format) if !format.accepts(s) => Err(format!("is not in the format {}", format.as_str())),
                _ => Ok(()),
            }
        }
        (Ty::Integer, Value::Number(n)) if n.is_i64() => in_range(n.as_f64().unwrap_or_default(), f),
        (Ty::Number, Value::Number(n)) => in_range(n.as_f64().unwrap_or_default(), f),
        (Ty::Boolean, Value::Bool(_)) => Ok(()),
        (Ty::DateTime, Value::String(s)) if support::is_datetime(s) => Ok(()),
        (Ty::Date, Value::String(s)) if support::is_date(s) => Ok(()),
        (Ty::Enum(e), Value::String(v)) => match spec.enums[e].values.iter().any(|x| &x.name == v) {
            true => Ok(()),
            false => Err(format!("is not a value of enum {e}")),
        },
        (Ty::Model(_) | Ty::Union(_) | Ty::Map(_) | Ty::Json, _) => {
            Err("is not allowed: defaults are scalars, enum values or lists of them".into())
        }
        _ => Err(format!("is not a value of type {}", f.ty)),
    }
}

pub(super) fn in_range(n: f64, f: &FieldDef) -> Result<(), String> {
    if f.minimum.is_some_and(|m| n < m) || f.maximum.is_some_and(|m| n > m) {
        return Err("is outside minimum/maximum".into());
    }
    Ok(())
}
