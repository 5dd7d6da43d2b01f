//! One OpenAPI document from several files: every `$ref` to another file (`pet.yaml`,
//! `common.yaml#/components/schemas/Error`, `../shared/models.json#/Pet`) is brought into the
//! document, so [`crate::import`] reads a single one. A schema comes in as a component of its
//! own (`#/components/schemas/{name}`, named after the last segment of its pointer, else after
//! its file), so its name stays a model's; anything else (a response, a parameter, a request
//! body) is put where it was referenced. Refs inside a brought-in file are read from that file.
//! What reads a file is the caller's ([`crate::project::read_openapi`] reads from disk), so this
//! module does no I/O.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Keys under which a `$ref` names a schema.
const SCHEMA_KEYS: &[&str] =
    &["schema", "items", "additionalProperties", "not", "allOf", "oneOf", "anyOf", "properties", "schemas"];

/// `doc` (the text of the file `path`) with every `$ref` to another file brought in. `read`
/// gives the text of a file by its path, as joined from the referencing file's folder.
pub fn bundle(doc: Value, path: &str, read: &mut dyn FnMut(&str) -> Result<String, String>) -> Result<Value, String> {
    let mut b = Bundler { read, files: BTreeMap::new(), named: BTreeMap::new(), schemas: Map::new() };
    let mut doc = doc;
    b.walk(&mut doc, path, true, false)?;
    if !b.schemas.is_empty() {
        let components = doc.as_object_mut().ok_or("the document is not an object")?.entry("components");
        let schemas = components
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or("`components` is not an object")?;
        let schemas = schemas.entry("schemas").or_insert_with(|| Value::Object(Map::new()));
        let schemas = schemas.as_object_mut().ok_or("`components/schemas` is not an object")?;
        for (name, schema) in std::mem::take(&mut b.schemas) {
            schemas.entry(name).or_insert(schema);
        }
    }
    Ok(doc)
}

struct Bundler<'r> {
    read: &'r mut dyn FnMut(&str) -> Result<String, String>,
    /// Each file read, by path.
    files: BTreeMap<String, Value>,
    /// Each schema brought in, by `(file, pointer)`: its component name.
    named: BTreeMap<(String, String), String>,
    /// The schemas brought in, to add to the document's components.
    schemas: Map<String, Value>,
}

impl Bundler<'_> {
    /// Rewrites the refs in `v`, a part of the file `file` (the document itself when `root`);
    /// `in_schema` when `v` sits where a schema does.
    fn walk(&mut self, v: &mut Value, file: &str, root: bool, in_schema: bool) -> Result<(), String> {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    let r = r.clone();
                    let (target, pointer) = r.split_once('#').unwrap_or((r.as_str(), ""));
                    if target.is_empty() && root {
                        return Ok(());
                    }
                    let target_file = if target.is_empty() { file.to_string() } else { join(file, target) };
                    if in_schema {
                        let name = self.schema(&target_file, pointer)?;
                        m.insert("$ref".into(), Value::String(format!("#/components/schemas/{name}")));
                        return Ok(());
                    }
                    // A response, a parameter, a body: in place, read from its own file.
                    let mut part = self.part(&target_file, pointer)?;
                    self.walk(&mut part, &target_file, false, false)?;
                    *v = part;
                    return Ok(());
                }
                for (k, child) in m.iter_mut() {
                    // Under `properties` and `schemas`, each member is a schema; `examples` hold data.
                    if k == "example" || k == "examples" {
                        continue;
                    }
                    let schema = in_schema || SCHEMA_KEYS.contains(&k.as_str());
                    if (k == "properties" || k == "schemas" || k == "patternProperties")
                        && let Value::Object(members) = child
                    {
                        for member in members.values_mut() {
                            self.walk(member, file, root, true)?;
                        }
                        continue;
                    }
                    self.walk(child, file, root, schema)?;
                }
                Ok(())
            }
            Value::Array(items) => items.iter_mut().try_for_each(|i| self.walk(i, file, root, in_schema)),
            _ => Ok(()),
        }
    }

    /// The component name of the schema at `pointer` in `file`, bringing it in on first use.
    fn schema(&mut self, file: &str, pointer: &str) -> Result<String, String> {
        let key = (file.to_string(), pointer.to_string());
        if let Some(name) = self.named.get(&key) {
            return Ok(name.clone());
        }
        let base = pointer
            .rsplit('/')
            .find(|s| !s.is_empty())
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .unwrap_or_else(|| stem(file));
        let mut name = base.clone();
        let mut n = 2;
        while self.schemas.contains_key(&name) || self.named.values().any(|v| *v == name) {
            name = format!("{base}{n}");
            n += 1;
        }
        // Named before it is read: a schema that refers to itself finds its name.
        self.named.insert(key, name.clone());
        let mut schema = self.part(file, pointer)?;
        self.walk(&mut schema, file, false, true)?;
        self.schemas.insert(name.clone(), schema);
        Ok(name)
    }

    /// The value at `pointer` in `file`.
    fn part(&mut self, file: &str, pointer: &str) -> Result<Value, String> {
        if !self.files.contains_key(file) {
            let text = (self.read)(file).map_err(|e| format!("{file}: {e}"))?;
            let value: Value = serde_json::from_str(&text)
                .or_else(|_| yaml_serde::from_str(&text))
                .map_err(|e| format!("{file}: neither JSON nor YAML: {e}"))?;
            self.files.insert(file.to_string(), value);
        }
        let doc = &self.files[file];
        let found = if pointer.is_empty() { Some(doc) } else { doc.pointer(pointer) };
        found.cloned().ok_or_else(|| format!("{file}: no `{pointer}` in it"))
    }
}

/// `target`, relative to the folder of `file`, with `.` and `..` applied.
fn join(file: &str, target: &str) -> String {
    let mut parts: Vec<&str> = file.split('/').collect();
    parts.pop();
    for seg in target.split('/') {
        match seg {
            "." | "" => {}
            ".." if parts.last().is_some_and(|p| *p != ".." && !p.is_empty()) => {
                parts.pop();
            }
            _ => parts.push(seg),
        }
    }
    parts.join("/")
}

/// A file's name without its folder and extension: `schemas/pet.yaml` → `pet`.
fn stem(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.split('.').next().unwrap_or(name).to_string()
}
