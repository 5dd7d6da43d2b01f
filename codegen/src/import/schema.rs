//! Schemas into the spec's types: components as models, enums and unions, `allOf` merged,
//! nullability.

use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::{EnumDef, EnumValue, FieldDef, Location, ModelDef};

use super::*;

impl OpCx<'_, '_> {
    /// The type of `schema` (with its constraints), naming what it creates after `hint`.
    pub(super) fn typed(&mut self, schema: &Value, hint: &str, at: &str) -> Option<Typed> {
        let (schema, nullable) = self.unnull(schema);
        // A reference to a component schema: its model or enum (created on first use).
        if let Some(written) = schema.get("$ref").and_then(Value::as_str) {
            // Compared and named as the pointer it is, percent-decoded.
            let decoded = fragment(written).map(|p| format!("#{p}"));
            let r = decoded.as_deref().unwrap_or(written);
            let description = String::new();
            let Some(name) = r.strip_prefix("#/components/schemas/").filter(|n| !n.contains('/')) else {
                // A pointer to any other schema of the document (a property of a component, a
                // parameter's schema): that schema, inline.
                let Some(target) = decoded.as_deref().and_then(|p| self.cx.doc.pointer(&p[1..])).cloned() else {
                    self.drop(format!("a $ref to nothing ({r})"), at);
                    return None;
                };
                if self.aliases.iter().any(|a| a == r) {
                    self.drop(format!("a schema that holds itself ({r})"), at);
                    return None;
                }
                self.aliases.push(r.to_string());
                let t = self.typed(&target, hint, &r[1..]);
                self.aliases.pop();
                let mut t = t?;
                t.def.nullable |= nullable;
                return Some(t);
            };
            let name = name.replace("~1", "/").replace("~0", "~");
            let target = self.cx.doc.pointer(&format!("/components/schemas/{}", escape(&name))).cloned();
            let Some(target) = target else {
                self.drop(format!("a $ref to nothing ({r})"), at);
                return None;
            };
            // A union of one member besides `null` is that member (named by its own component).
            let union = is_union(&target) && !single_member(&target);
            let named = if (is_object(&target) && !is_union(&target) && !self.all_of_a_value(&target))
                || is_string_enum(&target)
                || (union && self.object_union(&target))
            {
                self.component(&name, &target)?
            } else {
                // An alias of a scalar, a list or a map: its type inline; one that holds itself
                // (a list of objects holding that list) has no inline form.
                if self.aliases.contains(&name) {
                    // Met again inside itself (a section's `records`, a list of sections): a list
                    // or map of its items' type, which names the items' own components.
                    if !self.again.contains(&name)
                        && let Some(mut t) = self.alias_again(&target, &name, at)
                    {
                        t.def.nullable |= nullable;
                        return Some(t);
                    }
                    self.drop(format!("a list or map schema that holds itself ({r})"), at);
                    return None;
                }
                self.aliases.push(name.clone());
                let t = self.typed(&target, &name, &format!("/components/schemas/{}", escape(&name)));
                self.aliases.pop();
                let mut t = t?;
                t.def.nullable |= nullable;
                return Some(t);
            };
            let mut def = FieldDef::new(&named, description);
            def.nullable = nullable;
            return Some(Typed { ty: named, def });
        }
        if let Some((kw, members)) = one_of(&schema) {
            // `null` among the members is nullability; one member left is that member.
            let others: Vec<Value> = members.iter().filter(|m| !is_null_member(m)).cloned().collect();
            let nullable = nullable || others.len() < members.len();
            if others.len() == 1 {
                let mut t = self.typed(&others[0], hint, &format!("{at}/{kw}/0"))?;
                t.def.nullable |= nullable;
                return Some(t);
            }
            if !self.object_union(&schema) {
                // Scalars, lists or models: a JSON value of one of their types.
                let mut types: Vec<String> = Vec::new();
                let mut nullable = nullable;
                // A member of any value (`{}`, a schema of annotations only) makes the union any
                // value: what the others allow, it allows too.
                let mut any = false;
                for (i, member) in members.iter().enumerate().filter(|(_, m)| !is_null_member(m)) {
                    let t = self.typed(member, &format!("{hint}_{}", i + 1), &format!("{at}/{kw}/{i}"))?;
                    if t.ty == "file" {
                        self.drop("a union member that is a file", &format!("{at}/{kw}/{i}"));
                        return None;
                    }
                    any |= t.ty == "json" && t.def.one_of.is_empty();
                    nullable |= t.def.nullable;
                    // A member that is itself a union of values: its members are this one's.
                    let member_types = if t.def.one_of.is_empty() { vec![t.ty] } else { t.def.one_of };
                    for ty in member_types {
                        if !types.contains(&ty) {
                            types.push(ty);
                        }
                    }
                }
                if any {
                    self.notes.push(format!("the union at {at} has a member of any value, so it is any JSON value"));
                    types.clear();
                }
                // Members of one type (`integer` twice, with other bounds) are that type.
                let ty = if types.len() == 1 { types.remove(0) } else { "json".to_string() };
                let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
                let mut def = FieldDef::new(&ty, description);
                def.nullable = nullable;
                if types.len() > 1 {
                    def.one_of = types;
                }
                return Some(Typed { ty, def });
            }
            let name = self.cx.fresh(hint);
            let union = self.union_of(&schema, &name, at)?;
            self.cx.unions.insert(name.clone(), union);
            let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            let mut def = FieldDef::new(&name, description);
            def.nullable = nullable;
            return Some(Typed { ty: name, def });
        }
        for unsupported in ["not", "if", "const", "prefixItems", "patternProperties"] {
            if schema.get(unsupported).is_some() {
                self.drop(format!("`{unsupported}` in a schema (not imported yet)"), &format!("{at}/{unsupported}"));
                return None;
            }
        }
        let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
        // One member beside annotations (OpenAPI 3.0's way to give a `$ref` a default or a
        // description, as the only member or beside members of annotations alone): that member,
        // annotated. Members that are fragments of one scalar (`{type: string}`, `{maxLength: 5}`)
        // are that scalar with every constraint.
        if let Some(only) = self.all_of_one(&schema)
            && schema.get("properties").is_none()
        {
            let mut t = self.typed(&only, hint, &format!("{at}/allOf"))?;
            t.def.nullable |= nullable;
            if !description.is_empty() {
                t.def.description = description;
            }
            if let Some(d) = schema.get("default") {
                t.def.default = Some(d.clone());
            }
            if schema.get("deprecated").and_then(Value::as_bool) == Some(true) {
                t.def.deprecated = true;
            }
            return Some(t);
        }
        if schema.get("allOf").is_some() {
            let merged = self.merge_all_of(&schema, at)?;
            self.notes.push(format!("`allOf` at {at} is one model with every member's fields"));
            let name = self.cx.fresh(hint);
            let model = self.model_of(&merged, &name, at)?;
            self.cx.models.insert(name.clone(), model);
            let mut def = FieldDef::new(&name, description);
            def.nullable = nullable;
            return Some(Typed { ty: name, def });
        }
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or(if schema.get("properties").is_some() {
            "object"
        } else if is_string_enum(&schema) {
            "string"
        } else {
            ""
        });
        if let Some(fixed) = self.numbers_as_written(&schema, ty, at) {
            let mut t = self.typed(&fixed, hint, at)?;
            t.def.nullable |= nullable;
            return Some(t);
        }
        let mut def = FieldDef::new("", description);
        def.nullable = nullable;
        let number = |k: &str| schema.get(k).and_then(Value::as_f64);
        let count = |k: &str| schema.get(k).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        let ty = match ty {
            "string" => {
                def.min_length = count("minLength");
                def.max_length = count("maxLength");
                def.pattern = schema.get("pattern").and_then(Value::as_str).map(str::to_string);
                if let Some(values) = schema.get("enum").filter(|v| !string_values(v).is_empty()) {
                    let name = self.enum_of(values, hint, &def.description, at)?;
                    def.min_length = None;
                    def.max_length = None;
                    name
                } else if schema.get("contentMediaType").is_some() && schema.get("contentEncoding").is_none() {
                    // 3.1's file: a string of a media type's bytes (3.0 says `format: binary`).
                    "file".into()
                } else {
                    match schema.get("format").and_then(Value::as_str) {
                        Some("date-time") => "datetime".into(),
                        Some("date") => "date".into(),
                        Some("binary") => "file".into(),
                        Some(f) => {
                            let known = [
                                ("uuid", support::Format::Uuid),
                                ("email", support::Format::Email),
                                ("uri", support::Format::Uri),
                                ("ipv4", support::Format::Ipv4),
                                ("ipv6", support::Format::Ipv6),
                                ("hostname", support::Format::Hostname),
                                ("byte", support::Format::Byte),
                            ];
                            match known.iter().find(|(n, _)| *n == f) {
                                Some((_, format)) => def.format = Some(*format),
                                None => {
                                    self.notes.push(format!("format `{f}` at {at} is documented as a plain string"))
                                }
                            }
                            "string".into()
                        }
                        None => "string".into(),
                    }
                }
            }
            "integer" | "number" | "boolean" => {
                def.minimum = number("minimum");
                def.maximum = number("maximum");
                // 3.0 says `exclusiveMinimum: true` beside `minimum`; 3.1 gives the bound itself.
                match schema.get("exclusiveMinimum") {
                    Some(Value::Bool(true)) => def.exclusive_minimum = def.minimum.take(),
                    Some(v) if v.is_number() => def.exclusive_minimum = v.as_f64(),
                    _ => {}
                }
                match schema.get("exclusiveMaximum") {
                    Some(Value::Bool(true)) => def.exclusive_maximum = def.maximum.take(),
                    Some(v) if v.is_number() => def.exclusive_maximum = v.as_f64(),
                    _ => {}
                }
                // One bound of each side: the tighter.
                if let (Some(lo), Some(x)) = (def.minimum, def.exclusive_minimum) {
                    if lo > x { def.exclusive_minimum = None } else { def.minimum = None }
                }
                if let (Some(hi), Some(x)) = (def.maximum, def.exclusive_maximum) {
                    if hi < x { def.exclusive_maximum = None } else { def.maximum = None }
                }
                def.multiple_of = number("multipleOf").filter(|m| *m > 0.0);
                listed_values(&schema, &mut def);
                if ty == "boolean" {
                    // `true` and `false` are all a boolean has.
                    def.values.clear();
                }
                ty.to_string()
            }
            "array" => {
                def.min_items = count("minItems");
                def.max_items = count("maxItems");
                if schema.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
                    self.notes.push(format!("`uniqueItems` at {at} is not checked"));
                }
                let items = schema.get("items").cloned().unwrap_or(Value::Null);
                let inner = self.typed(&items, &format!("{hint}_item"), &format!("{at}/items"))?;
                def.nullable_items = inner.def.nullable;
                // The items' string constraints are the field's (a list's items share them).
                def.pattern = def.pattern.or(inner.def.pattern);
                def.min_length = inner.def.min_length;
                def.max_length = inner.def.max_length;
                def.format = inner.def.format;
                def.minimum = inner.def.minimum;
                def.maximum = inner.def.maximum;
                format!("{}[]", inner.ty)
            }
            "object" => {
                let props = schema.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
                match (props, schema.get("additionalProperties")) {
                    (false, Some(Value::Object(inner))) if !inner.is_empty() => {
                        let inner = self.typed(
                            &Value::Object(inner.clone()),
                            &format!("{hint}_value"),
                            &format!("{at}/additionalProperties"),
                        )?;
                        format!("map<{}>", inner.ty)
                    }
                    // A free-form object: any keys, any values.
                    (false, _) => "map<json>".into(),
                    (true, _) => {
                        let name = self.cx.fresh(hint);
                        let model = self.model_of(&schema, &name, at)?;
                        self.cx.models.insert(name.clone(), model);
                        name
                    }
                }
            }
            "" => {
                // Values of several types (`[1, "auto"]`): the values a JSON field accepts.
                listed_values(&schema, &mut def);
                "json".into()
            }
            other => {
                self.drop(format!("the type `{other}`"), &format!("{at}/type"));
                return None;
            }
        };
        def.ty = ty.clone();
        def.example = schema.get("example").cloned().or_else(|| schema.pointer("/examples/0").cloned());
        if schema.get("deprecated").and_then(Value::as_bool) == Some(true) {
            def.deprecated = true;
        }
        if let Some(d) = schema.get("default") {
            def.default = Some(d.clone());
        }
        self.keep_as_words(&ty, &mut def, at);
        for k in ["readOnly", "writeOnly"] {
            if schema.get(k).and_then(Value::as_bool) == Some(true) {
                self.notes.push(format!("`{k}` at {at} is not stated (the field travels both ways)"));
            }
        }
        Some(Typed { ty, def })
    }

    /// `schema` without its nullability: 3.0's `nullable`, or 3.1's `null` in `type`.
    pub(super) fn unnull(&self, schema: &Value) -> (Value, bool) {
        let mut s = schema.clone();
        let mut nullable = false;
        if let Value::Object(m) = &mut s {
            if m.remove("nullable") == Some(Value::Bool(true)) {
                nullable = true;
            }
            if let Some(Value::Array(types)) = m.get("type").cloned() {
                let rest: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
                nullable |= rest.len() < types.len();
                if rest.len() == 1 {
                    m.insert("type".into(), rest[0].clone());
                }
            }
        }
        (s, nullable)
    }

    /// The model or enum of component schema `name`, made on first use.
    pub(super) fn component(&mut self, name: &str, schema: &Value) -> Option<String> {
        if let Some(done) = self.cx.names.get(name) {
            return Some(done.clone());
        }
        // A schema that could not be imported once cannot be the next time either: its reasons
        // are given again without reading it again (a large document's shared schemas are used
        // by thousands of operations).
        if let Some(why) = self.cx.failed.get(name) {
            for (construct, pointer) in why.clone() {
                self.drop(construct, &pointer);
            }
            return None;
        }
        let before = self.drops.len();
        let made = self.component_anew(name, schema);
        if made.is_none() && self.drops.len() > before {
            self.cx.failed.insert(name.to_string(), self.drops[before..].to_vec());
        }
        made
    }

    fn component_anew(&mut self, name: &str, schema: &Value) -> Option<String> {
        let ours = self.cx.fresh(name);
        if ours != name {
            self.notes.push(format!("schema `{name}` is the model `{ours}`"));
        }
        self.cx.names.insert(name.to_string(), ours.clone());
        let at = format!("/components/schemas/{}", escape(name));
        if is_string_enum(schema) {
            let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            let values = schema.get("enum").cloned().unwrap_or_default();
            self.cx.taken.remove(&ours);
            let made = self.enum_named(&ours, &values, &description, &at);
            if made.is_none() {
                self.cx.names.remove(name);
            }
            return made;
        }
        if is_union(schema) {
            match self.union_of(schema, &ours, &at) {
                Some(u) => {
                    self.cx.unions.insert(ours.clone(), u);
                    return Some(ours);
                }
                None => {
                    self.cx.names.remove(name);
                    return None;
                }
            }
        }
        // Placed first, so a model that refers to itself finds its name.
        self.cx.models.insert(
            ours.clone(),
            ModelDef { description: String::new(), fields: IndexMap::new(), additional: None, requires: None },
        );
        match self.model_of(schema, &ours, &at) {
            Some(model) => {
                self.cx.models.insert(ours.clone(), model);
                Some(ours)
            }
            None => {
                self.cx.models.remove(&ours);
                self.cx.names.remove(name);
                None
            }
        }
    }

    /// A model from an object schema.
    pub(super) fn model_of(&mut self, schema: &Value, name: &str, at: &str) -> Option<ModelDef> {
        let schema = if schema.get("allOf").is_some() { self.merge_all_of(schema, at)? } else { schema.clone() };
        let description = schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
        let mut fields = IndexMap::new();
        let before = self.drops.len();
        self.object_fields(&schema, name, at, &mut fields, Location::Body);
        let additional = match schema.get("additionalProperties") {
            Some(Value::Object(inner)) if !inner.is_empty() => {
                let t = self.typed(
                    &Value::Object(inner.clone()),
                    &format!("{name}_value"),
                    &format!("{at}/additionalProperties"),
                )?;
                let mut def = t.def;
                def.description = if def.description.is_empty() { "Any other key.".into() } else { def.description };
                Some(def)
            }
            _ => None,
        };
        let requires = self.requires_of(&schema, &mut fields, at)?;
        if self.drops.len() > before {
            return None;
        }
        Some(ModelDef { description, fields, additional, requires })
    }

    /// The one schema an `allOf` is, where it is not an object's: its only member with more
    /// than annotations, or the merge of members that each constrain one scalar type.
    /// Whether `schema` is an `allOf` (of no properties of its own) that stands for one value
    /// which is no object: a scalar's fragments, or one member beside annotations that is a
    /// scalar, an enum, a list or a union (`allOf: [{$ref: Kind}]`). Such a schema is that value,
    /// not a model.
    fn all_of_a_value(&self, schema: &Value) -> bool {
        if schema.get("properties").is_some() || schema.get("allOf").is_none() {
            return false;
        }
        let Some(only) = self.all_of_one(schema) else { return false };
        let resolved = self.cx.resolve(&only).ok().cloned().unwrap_or(Value::Null);
        !is_object(&resolved) || is_union(&resolved)
    }

    fn all_of_one(&self, schema: &Value) -> Option<Value> {
        // What says nothing of the value: documentation, XML names, comments, extensions.
        const ANNOTATIONS: [&str; 12] = [
            "description",
            "title",
            "default",
            "example",
            "examples",
            "readOnly",
            "writeOnly",
            "deprecated",
            "nullable",
            "xml",
            "externalDocs",
            "$comment",
        ];
        let annotation = |k: &str| ANNOTATIONS.contains(&k) || k.starts_with("x-");
        let members = schema.get("allOf")?.as_array()?;
        let substantive: Vec<&Value> =
            members.iter().filter(|m| m.as_object().is_some_and(|o| o.keys().any(|k| !annotation(k)))).collect();
        if let [only] = substantive.as_slice() {
            return Some((*only).clone());
        }
        // Fragments of one scalar: each resolved, none an object, a union or a list, one type.
        let resolved: Vec<Value> = substantive.iter().filter_map(|m| self.cx.resolve(m).ok().cloned()).collect();
        let scalar = |m: &Value| {
            let t = m.get("type").and_then(Value::as_str);
            !matches!(t, Some("object" | "array")) && !is_object(m) && !is_union(m) && m.get("allOf").is_none()
        };
        let types: std::collections::BTreeSet<&str> =
            resolved.iter().filter_map(|m| m.get("type").and_then(Value::as_str)).collect();
        if resolved.len() != substantive.len() || !resolved.iter().all(scalar) || types.len() != 1 {
            return None;
        }
        let mut merged = serde_json::Map::new();
        for m in &resolved {
            for (k, v) in m.as_object().into_iter().flatten() {
                merged.insert(k.clone(), v.clone());
            }
        }
        Some(Value::Object(merged))
    }

    /// One object of every `allOf` member's properties and required names.
    pub(super) fn merge_all_of(&mut self, schema: &Value, at: &str) -> Option<Value> {
        let mut properties = serde_json::Map::new();
        let mut required: Vec<Value> = Vec::new();
        let mut description = schema.get("description").cloned();
        let members = schema.get("allOf").and_then(Value::as_array).cloned().unwrap_or_default();
        let own = {
            let mut own = schema.clone();
            if let Value::Object(m) = &mut own {
                m.remove("allOf");
            }
            own
        };
        for (i, member) in members.iter().chain(std::iter::once(&own)).enumerate() {
            let m = match self.cx.resolve(member) {
                Ok(m) => m.clone(),
                Err(e) => {
                    self.drop(e, &format!("{at}/allOf/{i}"));
                    return None;
                }
            };
            let mat = format!("{at}/allOf/{i}");
            if m.get("type").is_some_and(|t| t != "object") || is_union(&m) {
                self.drop("an allOf member that is not an object schema", &mat);
                return None;
            }
            let m = if m.get("allOf").is_some() { self.merge_all_of(&m, &mat)? } else { m };
            for (k, v) in m.get("properties").and_then(Value::as_object).into_iter().flatten() {
                properties.insert(k.clone(), v.clone());
            }
            required.extend(m.get("required").and_then(Value::as_array).cloned().unwrap_or_default());
            if description.is_none() {
                description = m.get("description").cloned();
            }
        }
        let mut out = serde_json::json!({"type": "object", "properties": properties, "required": required});
        if let Some(d) = description {
            out["description"] = d;
        }
        Some(out)
    }

    /// An enum for an inline string enum, named after `hint`.
    pub(super) fn enum_of(&mut self, values: &Value, hint: &str, description: &str, at: &str) -> Option<String> {
        let name = self.cx.fresh(hint);
        self.cx.taken.remove(&name);
        self.enum_named(&name, values, description, at)
    }

    pub(super) fn enum_named(&mut self, name: &str, values: &Value, description: &str, at: &str) -> Option<String> {
        let list = string_values(values);
        if let Some(bad) = list.iter().find(|v| !crate::ir::is_enum_value(v)) {
            self.drop(format!("the enum value `{bad}`"), &format!("{at}/enum"));
            return None;
        }
        // A document lists a value once: a repeat is the same value.
        let mut unique: Vec<&str> = Vec::new();
        for v in &list {
            if !unique.contains(&v.as_str()) {
                unique.push(v);
            }
        }
        let list = unique;
        // Values Rust spells alike (`id` and `ID`): the later ones get a variant of their own.
        let mut taken = std::collections::HashSet::new();
        let mut values: Vec<EnumValue> = Vec::new();
        for v in &list {
            let mut value = EnumValue::new(*v, "");
            let derived = value.variant();
            if let Some(own) = crate::names::apart(&mut taken, &derived, "") {
                self.notes.push(format!("the enum value `{v}` at {at} is `{own}` in Rust (`{derived}` is another's)"));
                value.rust = Some(own);
            }
            values.push(value);
        }
        // The same values under the same name: one enum.
        if let Some(existing) = self.cx.enums.get(name)
            && existing.values.iter().map(|v| v.name.as_str()).eq(list.iter().copied())
        {
            return Some(name.to_string());
        }
        self.cx.taken.insert(name.to_string(), ());
        self.cx.enums.insert(
            name.to_string(),
            EnumDef { description: description.to_string(), values, initial: None, transitions: None },
        );
        Some(name.to_string())
    }
}

/// The values of a string enum as text: a number or a boolean listed for a string (`enum: [true,
/// false]` on a `string` query parameter) is the text a request sends for it; `null` is
/// nullability, not a value.
fn string_values(values: &Value) -> Vec<String> {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        _ => None,
    };
    values.as_array().into_iter().flatten().filter_map(text).collect()
}

/// The JSON media type a body is read from: the first with a schema, else the first.
pub(super) fn first_json(content: &serde_json::Map<String, Value>) -> Option<String> {
    let json = || content.iter().filter(|(m, _)| support::is_json_media(m));
    json().find(|(_, c)| c.get("schema").is_some()).or_else(|| json().next()).map(|(m, _)| m.clone())
}

/// The JSON media types of `content` that carry the same schema as `chosen` (a document lists
/// `application/json`, `text/json` and `application/*+json` for one body), when they are more
/// than `application/json` alone; and the other types, which are not imported.
pub(super) fn json_alternatives(content: &serde_json::Map<String, Value>, chosen: &str) -> (Vec<String>, Vec<String>) {
    let schema = content.get(chosen).and_then(|c| c.get("schema"));
    let mut same = Vec::new();
    let mut others = Vec::new();
    for (m, c) in content {
        // A JSON type given no schema (only examples) says nothing other than the chosen one.
        if support::is_json_media(m) && (c.get("schema") == schema || c.get("schema").is_none()) {
            same.push(m.clone());
        } else {
            others.push(m.clone());
        }
    }
    let listed = if same.len() == 1 && same[0] == "application/json" { Vec::new() } else { same };
    (listed, others)
}

pub(super) fn is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        || (schema.get("type").is_none() && (schema.get("properties").is_some() || schema.get("allOf").is_some()))
}

pub(super) fn is_union(schema: &Value) -> bool {
    one_of(schema).is_some()
}

/// A `oneOf` (or `anyOf`) of one member besides `null`, with no properties of its own: that member.
fn single_member(schema: &Value) -> bool {
    one_of(schema).is_some_and(|(_, members)| members.iter().filter(|m| !is_null_member(m)).count() == 1)
        && schema.get("properties").is_none()
}

/// The members of a `oneOf` (or `anyOf`), and which keyword held them; none where the members
/// only list required properties (groups of fields, [`required_groups`]).
pub(super) fn one_of(schema: &Value) -> Option<(&'static str, Vec<Value>)> {
    if required_groups(schema).is_some() {
        return None;
    }
    ["oneOf", "anyOf"].into_iter().find_map(|kw| Some((kw, schema.get(kw)?.as_array()?.clone())))
}

/// A schema's `enum` as the values a number or JSON field accepts; `null` among them is
/// nullability (TOML cannot list it).
fn listed_values(schema: &Value, def: &mut FieldDef) {
    if let Some(Value::Array(values)) = schema.get("enum") {
        def.nullable |= values.iter().any(Value::is_null);
        def.values = values.iter().filter(|v| !v.is_null()).cloned().collect();
    }
}

/// A union member that only admits `null`: `{"type": "null"}`, or OpenAPI 3.0's way to make a
/// `$ref` nullable beside it, `{"type": "object", "nullable": true}` with nothing else to say (as
/// Microsoft Graph's description writes every nullable reference).
pub(super) fn is_null_member(member: &Value) -> bool {
    let Some(m) = member.as_object() else { return false };
    if m.get("type").and_then(Value::as_str) == Some("null") {
        return true;
    }
    m.get("nullable") == Some(&Value::Bool(true))
        && m.get("type").is_none_or(|t| t == "object")
        && m.keys().all(|k| matches!(k.as_str(), "type" | "nullable" | "description" | "title"))
}

pub(super) fn is_string_enum(schema: &Value) -> bool {
    match schema.get("type").and_then(Value::as_str) {
        // At least one string value (`enum: []`, or `[null]`, names none: a plain string).
        Some("string") => schema.get("enum").is_some_and(|e| !string_values(e).is_empty()),
        // No type, and strings only (`enum: ["-INF", "INF", "NaN"]`): strings.
        None => schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty() && e.iter().all(Value::is_string)),
        _ => false,
    }
}

/// The models, enums and unions a type text names (`map<Note[]>` → `Note`).
pub(super) fn type_names(ty: &str) -> impl Iterator<Item = &str> {
    ty.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
}
