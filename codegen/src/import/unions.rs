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
        let mut variants: IndexMap<String, String> = IndexMap::new();
        // Untagged: each variant's key, required fields and every field.
        let (mut keys, mut shapes): (Vec<String>, Vec<Shape>) = (Vec::new(), Vec::new());
        for (i, member) in members.iter().enumerate() {
            let mat = format!("{at}/{kw}/{i}");
            if is_null_member(member) {
                self.notes.push(format!("`null` among the members at {mat} is not said of the union"));
                continue;
            }
            let Some(r) = member.get("$ref").and_then(Value::as_str) else {
                // An inline object member: a model of its own, named after its title or the union.
                if !is_object(member) {
                    self.drop("a union member that is not an object", &mat);
                    return None;
                }
                let title = member.get("title").and_then(Value::as_str).filter(|t| !t.trim().is_empty());
                let hint = title.map(str::to_string).unwrap_or_else(|| format!("{name}_{}", i + 1));
                let tag_value = tag.as_ref().and_then(|t| {
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
                    shapes.push(shape_of(member));
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
                    let value = mapping
                        .iter()
                        .find(|(_, to)| to == r)
                        .map(|(k, _)| k.clone())
                        .unwrap_or_else(|| component.clone());
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
                    shapes.push(shape_of(&target));
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
        // Tagged, or members merged from `allOf` (the union reads them merged): as models.
        if schema.pointer("/discriminator/propertyName").is_some() || resolved.iter().any(|t| t.get("allOf").is_some())
        {
            return true;
        }
        let shapes: Vec<Shape> = resolved.into_iter().map(shape_of).collect();
        first_without_own_field(&shapes).is_none()
    }
}

/// An object member's required names and property names.
type Shape = (Vec<String>, Vec<String>);

fn shape_of(member: &Value) -> Shape {
    (names_of(member, "required"), names_of(member, "properties"))
}

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
