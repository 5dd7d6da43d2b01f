//! The Rust names the generator derives from wire names: fields (`photoUrls` → `photo_urls`) and
//! enum values and union variants (`in-progress` → `InProgress`). The spec's types and the
//! validated model both use them, so they depend on nothing.

/// Words that cannot name a Rust field even raw (`r#self` is no identifier).
const UNRAWABLE: &[&str] = &["self", "super", "crate", "_"];

/// The Rust name of a field whose wire name is `name`: snake case (`photoUrls` → `photo_urls`;
/// a snake_case name is itself), with what is no letter or digit a word break (`$ref` → `ref`,
/// `filter[name]` → `filter_name`), `_` before a leading digit (`3d` → `_3d`), and `field_` and
/// the bytes in hex where nothing is left (`+` → `field_2b`), and a leading sign before a digit
/// read out (`+1` → `plus_1`, `-1` → `minus_1`: GitHub's reaction counts). Rust keywords are
/// written raw by the emitter.
pub fn rust_field_name(name: &str) -> String {
    use heck::ToSnakeCase;
    if name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && !UNRAWABLE.contains(&name)
    {
        return name.to_string();
    }
    let words = words_of(name);
    let snake = words.to_snake_case();
    match snake.bytes().next() {
        None => format!("field_{}", hex_of(name)),
        Some(b) if b.is_ascii_digit() => format!("_{snake}"),
        _ if UNRAWABLE.contains(&snake.as_str()) => format!("{snake}_"),
        _ => snake,
    }
}

/// Names the generated `models` module uses bare (Rust's prelude types and what it imports),
/// which a model, enum or union of the same name would shadow.
pub const RESERVED_TYPE_NAMES: &[&str] = &[
    "Box",
    "Deserialize",
    "Err",
    "FieldSpec",
    "Kind",
    "None",
    "Ok",
    "Option",
    "Result",
    "Self",
    "Serialize",
    "Some",
    "String",
    "Vec",
];

/// Whether `name` cannot name a model, enum or union: the generated code uses it for another.
pub fn is_reserved_type_name(name: &str) -> bool {
    RESERVED_TYPE_NAMES.contains(&name)
}

/// The Rust variant of an enum value or a union's variant named `name` on the wire:
/// UpperCamelCase (`in-progress` → `InProgress`, `1.0` → `V10`), `V` and the bytes in hex where
/// no letter or digit is left (`+` → `V2b`).
pub fn rust_variant_name(name: &str) -> String {
    use heck::ToUpperCamelCase;
    let camel = words_of(name).to_upper_camel_case();
    match camel.bytes().next() {
        None => format!("V{}", hex_of(name)),
        Some(b) if b.is_ascii_digit() => format!("V{camel}"),
        _ if camel == "Self" => "SelfValue".into(),
        _ => camel,
    }
}

/// `derived`, taken into `taken`; or, when another has it already, the first of `{derived}{sep}2`,
/// `{derived}{sep}3`, … that is free (the importer's names for what Rust would spell alike).
/// `None` when `derived` itself was free.
pub fn apart(taken: &mut std::collections::HashSet<String>, derived: &str, sep: &str) -> Option<String> {
    if taken.insert(derived.to_string()) {
        return None;
    }
    (2..).map(|n| format!("{derived}{sep}{n}")).find(|name| taken.insert(name.clone()))
}

/// A wire name's words: what is no letter or digit a break, a leading sign before a digit a word.
fn words_of(name: &str) -> String {
    let sign = match name.as_bytes() {
        [b'+', d, ..] if d.is_ascii_digit() => "plus ",
        [b'-', d, ..] if d.is_ascii_digit() => "minus ",
        _ => "",
    };
    let rest: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' }).collect();
    format!("{sign}{rest}")
}

fn hex_of(name: &str) -> String {
    name.bytes().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::{rust_field_name, rust_variant_name};

    #[test]
    fn a_leading_sign_is_a_word_so_plus_and_minus_stay_apart() {
        assert_eq!((rust_field_name("+1"), rust_field_name("-1")), ("plus_1".into(), "minus_1".into()));
        assert_eq!((rust_variant_name("+1"), rust_variant_name("-1")), ("Plus1".into(), "Minus1".into()));
        assert_eq!((rust_field_name("+"), rust_variant_name("+")), ("field_2b".into(), "V2b".into()));
        assert_eq!(rust_field_name("-x"), "x");
    }
}
