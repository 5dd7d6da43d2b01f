//! What several of the generator's test files read of a generated service.

#![allow(dead_code, reason = "each test file uses its share")]

/// The files generated from a spec named `todos.toml`.
pub fn generated(spec: &str) -> Vec<codegen::File> {
    codegen::generate(&[("todos.toml", spec)]).unwrap_or_else(|e| panic!("{e}"))
}

/// The text of the generated file whose path ends in `end`.
pub fn file<'a>(files: &'a [codegen::File], end: &str) -> &'a str {
    &files.iter().find(|f| f.path.ends_with(end)).unwrap_or_else(|| panic!("no {end}")).text
}

/// `text` without whitespace, to look for generated code whatever the printer's layout.
pub fn squeezed(text: &str) -> String {
    text.split_whitespace().collect()
}
