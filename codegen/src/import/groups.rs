//! Groups of required fields: an object's `anyOf`/`oneOf` whose members only list required
//! properties (`{"required": ["state"]}`), which is the model's `requires`, not a union.

use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::{FieldDef, Location};

use super::*;

impl OpCx<'_, '_> {
    /// The groups of fields an object schema requires ([`required_groups`]), over its `fields`:
    /// a name the schema does not describe is a field of any value (what `required` alone asks).
    /// `None`, with the schema dropped, where a group names a field every value gives.
    pub(super) fn requires_of(
        &mut self,
        schema: &Value,
        fields: &mut IndexMap<String, FieldDef>,
        at: &str,
    ) -> Option<Option<crate::spec::RequiresDef>> {
        let Some(requires) = required_groups(schema) else { return Some(None) };
        let (_, groups) = requires.rule();
        for name in groups.iter().flatten() {
            match fields.get(name) {
                Some(f) if !f.optional || f.location != Location::Body => {
                    self.drop(format!("a group of required fields naming `{name}`, which every value gives"), at);
                    return None;
                }
                Some(_) => {}
                None if crate::ir::is_wire_name(name) => {
                    let mut any = FieldDef::new("json", "Named by a group of required fields, without a schema.");
                    any.optional = true;
                    fields.insert(name.clone(), any);
                }
                None => {
                    self.drop(format!("the property name `{name}`"), at);
                    return None;
                }
            }
        }
        Some(Some(requires))
    }
}

/// An object's `anyOf` (at least one) or `oneOf` (exactly one) whose members each only list
/// required properties (`{"required": ["state"]}`): groups of fields a value gives in full.
pub(super) fn required_groups(schema: &Value) -> Option<crate::spec::RequiresDef> {
    let (keyword, members) = ["oneOf", "anyOf"].into_iter().find_map(|kw| Some((kw, schema.get(kw)?.as_array()?)))?;
    let groups: Vec<Vec<String>> = members
        .iter()
        .map(|m| {
            let o = m.as_object()?;
            if !o.keys().all(|k| matches!(k.as_str(), "required" | "description" | "title")) {
                return None;
            }
            let names = names_of(m, "required");
            (!names.is_empty()).then_some(names)
        })
        .collect::<Option<_>>()?;
    if groups.len() < 2 {
        return None;
    }
    Some(match keyword {
        "oneOf" => crate::spec::RequiresDef { one_of: groups, ..Default::default() },
        _ => crate::spec::RequiresDef { any_of: groups, ..Default::default() },
    })
}

/// The names a schema's `required` lists, or its `properties` keys.
pub(super) fn names_of(schema: &Value, key: &str) -> Vec<String> {
    match schema.get(key) {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}
