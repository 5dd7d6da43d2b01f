//! A parameter's union that text says as one of its members: the same requests, one type.

use serde_json::Value;

use super::*;

impl OpCx<'_, '_> {
    /// A parameter's union that text says as one of its members, with why: one value or a list
    /// of them (`string` or `string[]`: a lone value is a list of one, so the list member reads
    /// every request), or scalars one of which is any text (`integer` or `string`: every value in
    /// a path, query or header is text, so the string member reads every request).
    pub(super) fn text_union(&self, schema: &Value) -> Option<(Value, String)> {
        let (_, members) = one_of(schema)?;
        let members: Vec<Value> = members
            .iter()
            .filter(|m| !is_null_member(m))
            .map(|m| self.cx.resolve(m).cloned())
            .collect::<Result<_, _>>()
            .ok()?;
        let ty = |m: &Value| m.get("type").and_then(Value::as_str).map(str::to_string);
        let annotations = ["type", "description", "title", "example", "examples", "deprecated"];
        let bare = |m: &Value| m.as_object().is_some_and(|o| o.keys().all(|k| annotations.contains(&k.as_str())));
        let described = |mut read: Value| {
            if let (Some(d), Some(o)) = (schema.get("description"), read.as_object_mut()) {
                o.insert("description".into(), d.clone());
            }
            read
        };
        if let [a, b] = members.as_slice() {
            let (lone, list) = if ty(b).as_deref() == Some("array") { (a, b) } else { (b, a) };
            let items = list.get("items").map(|i| self.cx.resolve(i).cloned().unwrap_or(Value::Null));
            if ty(list).as_deref() == Some("array")
                && ty(lone).is_some_and(|t| t != "array" && t != "object")
                && items.as_ref().is_some_and(|i| ty(i) == ty(lone))
                && bare(lone)
            {
                return Some((
                    described(list.clone()),
                    "one value or a list of them, read as a list (a lone value is a list of one)".into(),
                ));
            }
        }
        let scalar =
            |m: &Value| ty(m).is_some_and(|t| ["string", "integer", "number", "boolean"].contains(&t.as_str()));
        if members.len() > 1
            && members.iter().all(scalar)
            && members.iter().any(|m| ty(m).as_deref() == Some("string") && bare(m))
        {
            return Some((
                described(serde_json::json!({"type": "string"})),
                "one of several scalars, one of them any text, read as text".into(),
            ));
        }
        None
    }
}
