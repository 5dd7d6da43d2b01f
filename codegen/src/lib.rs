//! Specwright's code generator: spec text in, files out.
//!
//! [`generate`] loads and validates every spec, then emits a Rust crate (a service's `api/`), the
//! OpenAPI documents (3.1 and 3.0.3) and the MCP tool descriptors. It does no I/O; [`project`]
//! reads a spec folder and writes an output folder around it, for `cargo xtask generate`, the
//! `specwright-codegen` command (`codegen/cli/`) and build scripts ([`build`]) alike.

pub mod build;
pub mod bundle;
pub mod diff;
pub mod downgrade;
pub mod import;
mod import_toml;
pub mod ir;
pub mod load;
pub mod mcp;
pub mod names;
pub mod openapi;
pub mod project;
pub mod rust;
pub mod scaffold;
pub mod spec;

pub use load::{Place, SpecError, SpecErrors, load};

/// One emitted file: its path relative to the output crate's folder and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Path relative to the output crate's folder, with `/` separators.
    pub path: String,
    /// Contents.
    pub text: String,
}

fn json_text(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// Generates every file for the given specs, each given as (file name, TOML text).
///
/// Fails with every problem of every spec when any spec is invalid.
pub fn generate(specs: &[(&str, &str)]) -> Result<Vec<File>, SpecErrors> {
    let mut apis = Vec::new();
    let mut problems = Vec::new();
    for (name, text) in specs {
        match load(name, text) {
            Ok(api) => apis.push(api),
            Err(e) => problems.extend(e.0),
        }
    }
    if !problems.is_empty() {
        return Err(SpecErrors(problems));
    }
    apis.sort_by(|a, b| a.name().cmp(b.name()));
    let mut files = Vec::new();
    for api in &apis {
        let name = api.name();
        let doc = openapi::document(api);
        files.push(File { path: format!("openapi/{name}.json"), text: json_text(&doc) });
        files.push(File { path: format!("openapi/{name}.3.0.json"), text: json_text(&downgrade::to_openapi_30(&doc)) });
        if api.operations.iter().any(|o| o.def.mcp.is_some()) {
            files.push(File { path: format!("mcp/{name}.tools.json"), text: json_text(&mcp::descriptors(api, &doc)) });
        }
        if let Some(catalog) = mcp::catalog(api) {
            files.push(File { path: format!("mcp/{name}.catalog.json"), text: json_text(&catalog) });
        }
        for (file, text) in rust::service_files(api) {
            files.push(File { path: format!("src/{name}/{file}"), text });
        }
    }
    let names: Vec<&str> = apis.iter().map(|a| a.name()).collect();
    files.push(File { path: "src/lib.rs".into(), text: rust::lib_file(&names) });
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The JSON Schema of the spec format (`codegen/spec.schema.json`).
pub fn spec_schema() -> String {
    let schema = schemars::schema_for!(spec::Spec);
    json_text(&serde_json::to_value(&schema).unwrap_or_default())
}
