//! How the importer reads schemas that say less, or other, than they mean: constraints that do
//! not apply, numbers listed as strings, parameters of no type, unions of one member, list
//! schemas met inside themselves.

use serde_json::Value;

use crate::spec::FieldDef;

use super::schema::one_of;
use super::*;

impl OpCx<'_, '_> {
    /// Constraints the document puts on a type they do not apply to (`maxLength` on a date-time,
    /// `minimum` on a string) are kept as words in the description, never a refusal.
    pub(super) fn keep_as_words(&mut self, ty: &str, def: &mut FieldDef, at: &str) {
        let item = ty.strip_suffix("[]").unwrap_or(ty);
        let stringy = item == "string";
        let numeric = matches!(item, "integer" | "number");
        let mut words: Vec<String> = Vec::new();
        let mut keep = |applies: bool, name: &str, v: Option<String>| match v {
            Some(v) if !applies => words.push(format!("{name} {v}")),
            _ => {}
        };
        keep(stringy, "minLength", def.min_length.map(|n| n.to_string()));
        keep(stringy, "maxLength", def.max_length.map(|n| n.to_string()));
        keep(stringy, "pattern", def.pattern.clone());
        keep(stringy, "format", def.format.map(|f| f.as_str().to_string()));
        keep(numeric, "minimum", def.minimum.map(|n| n.to_string()));
        keep(numeric, "maximum", def.maximum.map(|n| n.to_string()));
        keep(ty.ends_with("[]"), "minItems", def.min_items.map(|n| n.to_string()));
        keep(ty.ends_with("[]"), "maxItems", def.max_items.map(|n| n.to_string()));
        if words.is_empty() {
            return;
        }
        if !stringy {
            (def.min_length, def.max_length, def.pattern, def.format) = (None, None, None, None);
        }
        if !numeric {
            (def.minimum, def.maximum) = (None, None);
        }
        if !ty.ends_with("[]") {
            (def.min_items, def.max_items) = (None, None);
        }
        let said = format!("The document also says: {}.", words.join(", "));
        def.description =
            if def.description.is_empty() { said } else { format!("{} {said}", def.description.trim_end()) };
        self.notes.push(format!("{} at {at} do not apply to `{ty}`: kept in the description", words.join(", ")));
    }

    /// Numbers whose `enum` values are written as strings (`type: integer, enum: ["1", "2"]`), which
    /// no value could meet as written: the schema with the numbers they spell, or a string of
    /// those values where they spell none; `None` for any other schema.
    pub(super) fn numbers_as_written(&mut self, schema: &Value, ty: &str, at: &str) -> Option<Value> {
        let values = schema.get("enum").and_then(Value::as_array)?;
        if !matches!(ty, "integer" | "number") || !values.iter().any(Value::is_string) {
            return None;
        }
        {
            // Numbers whose values are written as strings (`type: integer, enum: ["1", "2"]`),
            // which no value could meet as written: the numbers they spell; values that spell
            // none say the field is a string of them.
            let spelled: Option<Vec<Value>> = values
                .iter()
                .map(|v| match v.as_str() {
                    Some(s) if ty == "integer" => s.trim().parse::<i64>().ok().map(Value::from),
                    Some(s) => s.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number),
                    None => Some(v.clone()),
                })
                .collect();
            let mut fixed = schema.clone();
            match spelled {
                Some(numbers) => {
                    fixed["enum"] = Value::Array(numbers);
                    self.notes.push(format!(
                        "the values of the {ty} at {at}, written as strings, are the numbers they spell"
                    ));
                }
                None => {
                    fixed["type"] = Value::from("string");
                    self.notes.push(format!("the {ty} at {at} lists strings as its values: a string of those values"));
                }
            }
            Some(fixed)
        }
    }

    /// The type of a list or map alias met again inside itself: its items' (a reference, or a
    /// union of references) in a list or map, where they name components; `None` otherwise.
    pub(super) fn alias_again(&mut self, target: &Value, name: &str, at: &str) -> Option<Typed> {
        let (target, nullable) = self.unnull(target);
        let list = target.get("type").and_then(Value::as_str) == Some("array");
        let inner = if list {
            target.get("items")?
        } else {
            target.get("properties").is_none().then(|| target.get("additionalProperties"))??
        };
        let named = |v: &Value| v.get("$ref").is_some();
        if !named(inner) && !one_of(inner).is_some_and(|(_, members)| members.iter().all(named)) {
            return None;
        }
        self.again.push(name.to_string());
        let t = self.typed(inner, &format!("{name}_item"), at);
        self.again.pop();
        let t = t?;
        let ty = if list { format!("{}[]", t.ty) } else { format!("map<{}>", t.ty) };
        let mut def = FieldDef::new(&ty, target.get("description").and_then(Value::as_str).unwrap_or_default());
        def.nullable = nullable;
        def.nullable_items = list && t.def.nullable;
        Some(Typed { ty, def })
    }
}

/// `schema` with `type: string` where it, or its items, state no type and nothing else that makes
/// one (a reference, properties, a union or an intersection), and list no value that is no string.
pub(super) fn untyped_as_text(schema: &Value) -> Option<Value> {
    let untyped = |s: &Value| {
        s.as_object().is_some_and(|o| {
            ["type", "$ref", "properties", "additionalProperties", "oneOf", "anyOf", "allOf", "items", "const"]
                .iter()
                .all(|k| !o.contains_key(*k))
                && o.get("enum")
                    .and_then(Value::as_array)
                    .is_none_or(|e| e.iter().all(|v| v.is_string() || v.is_null()))
        })
    };
    let mut out = schema.clone();
    if untyped(schema) {
        out["type"] = Value::from("string");
        return Some(out);
    }
    let list = schema.get("type").and_then(Value::as_str) == Some("array");
    match schema.get("items") {
        Some(items) if list && untyped(items) => {
            out["items"]["type"] = Value::from("string");
            if let Some(values) = schema.get("enum").filter(|_| items.get("enum").is_none()) {
                // The values listed beside the items are the items' (`type: array, enum: [...]`).
                out["items"]["enum"] = values.clone();
                if let Some(o) = out.as_object_mut() {
                    o.remove("enum");
                }
            }
            Some(out)
        }
        _ => None,
    }
}
