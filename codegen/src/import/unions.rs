//! Unions: a document's `oneOf`/`anyOf` of objects as a union of models (tagged by a
//! discriminator, or told apart by a required field), its inline members as models of their own;
//! which unions are that, and which a JSON value of one of their members' types.

use heck::ToSnakeCase;
use indexmap::IndexMap;
use serde_json::Value;

use super::*;

impl OpCx<'_, '_> {
    /// A union of object schemas: tagged by the discriminator's property (each variant a model of
    /// the member's other fields, named after the union and its tag value), else untagged (each
    /// variant the member's model, told apart by a required field only it has).
    pub(super) fn union_of(&mut self, schema: &Value, name: &str, at: &str) -> Option<crate::spec::UnionDef> {
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
        // No discriminator, but a required property of one value in each member, a different
        // one in each (GitHub's `type: enum [creation]`): that property is the tag.
        let implicit = if tag.is_none() { self.implicit_tag(&members) } else { None };
        let (tag, implied) = match implicit {
            Some((property, values)) => {
                self.notes.push(format!(
                    "the union at {at} is told apart by `{property}`, one value in each member: tagged by it"
                ));
                (Some(property), values)
            }
            None => (tag, Vec::new()),
        };
        let mut implied = implied.into_iter();
        let mut variants: IndexMap<String, String> = IndexMap::new();
        // Untagged: each variant's key, required fields and every field.
        let (mut keys, mut shapes): (Vec<String>, Vec<Shape>) = (Vec::new(), Vec::new());
        for (i, member) in members.iter().enumerate() {
            let mat = format!("{at}/{kw}/{i}");
            if is_null_member(member) {
                self.notes.push(format!("`null` among the members at {mat} is not said of the union"));
                continue;
            }
            let implied_value = implied.next();
            let Some(r) = member.get("$ref").and_then(Value::as_str) else {
                // An inline object member: a model of its own, named after its title or the union.
                if !is_object(member) {
                    self.drop("a union member that is not an object", &mat);
                    return None;
                }
                let merged;
                let member = if member.get("allOf").is_some() {
                    merged = self.merge_all_of(member, &mat)?;
                    &merged
                } else {
                    member
                };
                let title = member.get("title").and_then(Value::as_str).filter(|t| !t.trim().is_empty());
                let hint = title.map(str::to_string).unwrap_or_else(|| format!("{name}_{}", i + 1));
                let tag_value = implied_value.clone().or_else(|| {
                    let t = tag.as_ref()?;
                    let p = member.pointer(&format!("/properties/{}", escape(t)))?;
                    p.get("const")
                        .or_else(|| p.get("enum").and_then(|e| e.get(0)))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
                let stripped = match &tag {
                    Some(tag) => without_tag(member, tag),
                    None => member.clone(),
                };
                let model_name = self.cx.fresh(&hint);
                let model = self.model_of(&stripped, &model_name, &mat)?;
                self.cx.models.insert(model_name.clone(), model);
                let key = match (&tag, tag_value) {
                    (Some(_), Some(v)) if crate::ir::is_wire_name(&v) => v,
                    (Some(_), _) => {
                        self.drop("an inline member of a tagged union without its tag's value", &mat);
                        return None;
                    }
                    (None, _) => model_name.to_snake_case(),
                };
                if tag.is_none() {
                    keys.push(key.clone());
                    shapes.push(self.shape(member));
                }
                variants.insert(key, model_name);
                continue;
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
                    let value = implied_value.clone().unwrap_or_else(|| {
                        mapping
                            .iter()
                            .find(|(_, to)| to == r)
                            .map(|(k, _)| k.clone())
                            .unwrap_or_else(|| component.clone())
                    });
                    if !crate::ir::is_wire_name(&value) {
                        self.drop(format!("the tag value `{value}`"), &mat);
                        return None;
                    }
                    let stripped = without_tag(&target, tag);
                    let model_name = self.cx.fresh(&format!("{name}_{value}"));
                    let model = self.model_of(&stripped, &model_name, &mat)?;
                    self.cx.models.insert(model_name.clone(), model);
                    variants.insert(value, model_name);
                }
                None => {
                    let model = self.component(&component, &target)?;
                    let key = component.to_snake_case();
                    keys.push(key.clone());
                    shapes.push(self.shape(&target));
                    variants.insert(key, model);
                }
            }
        }
        if let Some(tag) = &tag {
            self.notes.push(format!("the union at {at} is tagged by `{tag}`, written beside each variant's fields"));
        }
        if let Some(i) = first_without_own_field(&shapes) {
            let key = &keys[i];
            self.drop(
                format!("an untagged union whose variant `{key}` has no required field of its own (no discriminator)"),
                at,
            );
            return None;
        }
        Some(crate::spec::UnionDef { description, tag, variants })
    }

    /// Whether a union is one of models: its members (`null` aside) all objects, inline or
    /// referenced, told apart by a tag or, untagged, each by a required field no other member
    /// has. Any other is a JSON value of one of its members' types (`one_of`), which the decoder
    /// checks against each.
    pub(super) fn object_union(&self, schema: &Value) -> bool {
        let Some((_, members)) = one_of(schema) else { return false };
        let mut resolved = Vec::new();
        for m in members.iter().filter(|m| !is_null_member(m)) {
            match self.cx.resolve(m) {
                Ok(t) if !is_object(t) => return false,
                Ok(t) => resolved.push(t),
                // The union reports what does not resolve.
                Err(_) => return true,
            }
        }
        // Tagged, by a discriminator or by a property of one value in each member: as models.
        if schema.pointer("/discriminator/propertyName").is_some() || self.implicit_tag(&members).is_some() {
            return true;
        }
        let shapes: Vec<Shape> = resolved.into_iter().map(|t| self.shape(t)).collect();
        first_without_own_field(&shapes).is_none()
    }

    /// A member's required names and property names, its `allOf` members' merged in: what tells
    /// it apart from the other members.
    fn shape(&self, member: &Value) -> Shape {
        let (required, properties) = self.flat(member, 0);
        (
            required.into_iter().map(str::to_string).collect(),
            properties.into_iter().map(|(k, _)| k.to_string()).collect(),
        )
    }

    /// A member's required names and properties with its `allOf` members' merged in, read only
    /// (what does not resolve is left out: the union reports it when it reads the member).
    fn flat<'v>(&'v self, member: &'v Value, depth: usize) -> (Vec<&'v str>, Vec<(&'v str, &'v Value)>) {
        let Ok(m) = self.cx.resolve(member) else { return Default::default() };
        let mut required: Vec<&str> =
            m.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let mut properties: Vec<(&str, &Value)> = m
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        for part in m.get("allOf").and_then(Value::as_array).into_iter().flatten().filter(|_| depth < 8) {
            let (r, p) = self.flat(part, depth + 1);
            required.extend(r);
            properties.extend(p);
        }
        (required, properties)
    }

    /// The property that tells a union's members apart without a discriminator: required in
    /// every member, of one string value in each (`const`, or an `enum` of one), a different
    /// one in each; with each member's value, `null` members aside.
    fn implicit_tag(&self, members: &[Value]) -> Option<(String, Vec<String>)> {
        let flats: Vec<_> = members.iter().filter(|m| !is_null_member(m)).map(|m| self.flat(m, 0)).collect();
        if flats.len() < 2 {
            return None;
        }
        let single = |(required, properties): &(Vec<&str>, Vec<(&str, &Value)>), name: &str| {
            if !required.contains(&name) {
                return None;
            }
            let p = properties.iter().find(|(k, _)| *k == name)?.1;
            let p = self.cx.resolve(p).ok()?;
            match (p.get("const"), p.get("enum").and_then(Value::as_array).map(Vec::as_slice)) {
                (Some(Value::String(v)), _) | (None, Some([Value::String(v)])) => Some(v.clone()),
                _ => None,
            }
        };
        flats[0].0.iter().find_map(|name| {
            let values: Vec<String> = flats.iter().map(|f| single(f, name)).collect::<Option<_>>()?;
            let distinct: std::collections::BTreeSet<&String> = values.iter().collect();
            (distinct.len() == values.len() && values.iter().all(|v| crate::ir::is_wire_name(v)))
                .then(|| (name.to_string(), values))
        })
    }
}

/// An object member's required names and property names.
type Shape = (Vec<String>, Vec<String>);

/// The first member of an untagged union with no required field another member lacks: what no
/// decoder can tell apart from the others.
fn first_without_own_field(shapes: &[Shape]) -> Option<usize> {
    (0..shapes.len()).find(|&i| {
        !shapes[i].0.iter().any(|f| !shapes.iter().enumerate().any(|(j, (_, props))| j != i && props.contains(f)))
    })
}

/// A tagged union's member without its tag, which is written beside the variant's fields.
fn without_tag(member: &Value, tag: &str) -> Value {
    let mut stripped = member.clone();
    if let Some(Value::Object(props)) = stripped.get_mut("properties") {
        props.remove(tag);
    }
    if let Some(Value::Array(req)) = stripped.get_mut("required") {
        req.retain(|x| x.as_str() != Some(tag));
    }
    stripped
}
