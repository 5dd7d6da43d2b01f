//! Patterns as OpenAPI and JSON Schema write them: ECMA-262 regular expressions. Rust's `regex`
//! reads most of them in linear time; what it does not read (look-around, backreferences) is read
//! by `fancy-regex`, which backtracks within a step limit (a match that would take longer fails,
//! so a value is refused rather than a request held). One reading for the loader, which refuses a
//! pattern neither reads, and the decoder, which checks values against it.

/// A compiled pattern.
#[derive(Debug)]
pub enum Pattern {
    /// Read by `regex`: linear in the input.
    Linear(regex::Regex),
    /// Look-around or backreferences, read by `fancy-regex`.
    Backtracking(fancy_regex::Regex),
}

/// Room for the large Unicode classes real documents write (`regex`'s default is 10 MiB).
const SIZE_LIMIT: usize = 64 << 20;

impl Pattern {
    /// Compiles `pattern` as ECMA-262 writes it; the error `regex` gives where neither engine
    /// reads it.
    pub fn new(pattern: &str) -> Result<Pattern, String> {
        let pattern = ecma_classes(pattern);
        match regex::RegexBuilder::new(&pattern).size_limit(SIZE_LIMIT).build() {
            Ok(re) => Ok(Pattern::Linear(re)),
            Err(first) => fancy_regex::Regex::new(&pattern).map(Pattern::Backtracking).map_err(|_| first.to_string()),
        }
    }

    /// Whether `text` holds a match (JSON Schema's patterns are not anchored).
    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Linear(re) => re.is_match(text),
            Pattern::Backtracking(re) => re.is_match(text).unwrap_or(false),
        }
    }
}

/// ECMA-262 reads a `[` inside a character class as itself (`[[A-Z]` is `[`, or `A` to `Z`),
/// where `regex` opens a nested class: such a `[` is escaped.
fn ecma_classes(pattern: &str) -> std::borrow::Cow<'_, str> {
    let mut out = String::with_capacity(pattern.len());
    let (mut in_class, mut escaped, mut changed, mut first) = (false, false, false, false);
    for c in pattern.chars() {
        let at_start = std::mem::take(&mut first);
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if in_class => {
                out.push('\\');
                changed = true;
            }
            '[' => {
                in_class = true;
                first = true;
            }
            '^' if at_start => first = true,
            ']' if in_class && !at_start => in_class = false,
            _ => {}
        }
        out.push(c);
    }
    if changed { std::borrow::Cow::Owned(out) } else { std::borrow::Cow::Borrowed(pattern) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecma_patterns_are_read_as_ecma_reads_them() {
        let re = Pattern::new(r"^(?!\s*$).+").unwrap();
        assert!(matches!(re, Pattern::Backtracking(_)));
        assert!(re.is_match("deed") && !re.is_match("   "));
        let re = Pattern::new(r"^[[A-Z0-9]{1,2}$").unwrap();
        assert!(re.is_match("[A") && re.is_match("Z9") && !re.is_match("a"));
        assert!(Pattern::new(r"^[a-z]+$").is_ok_and(|re| matches!(re, Pattern::Linear(_))));
        assert!(Pattern::new(r"[]a]").is_ok_and(|re| re.is_match("]")), "a `]` first in a class is itself");
        assert!(Pattern::new(r"(a").is_err());
    }
}
