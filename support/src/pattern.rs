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
        let pattern = ecma_literals(pattern);
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

/// What ECMA-262 reads as itself and `regex` would not (its Annex B, which browsers and Node
/// follow): a `[` inside a character class (`[[A-Z]` is `[`, or `A` to `Z`), where `regex` opens a
/// nested class; a `{` that starts no quantifier (`{n}`, `{n,}`, `{n,m}`) and a `}` that ends
/// none (`(?:{[0-9a-f]{8}})`). Each is escaped.
fn ecma_literals(pattern: &str) -> std::borrow::Cow<'_, str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 4);
    let (mut in_class, mut escaped, mut changed, mut first) = (false, false, false, false);
    // Inside a quantifier's braces: its `}` is no literal.
    let mut quantifier = false;
    for (i, &c) in chars.iter().enumerate() {
        let at_start = std::mem::take(&mut first);
        let mut literal = false;
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if in_class => literal = true,
            '[' => {
                in_class = true;
                first = true;
            }
            '^' if at_start => first = true,
            ']' if in_class && !at_start => in_class = false,
            '{' if !in_class => {
                if quantifier_at(&chars[i + 1..]) {
                    quantifier = true;
                } else {
                    literal = true;
                }
            }
            '}' if !in_class => {
                if quantifier {
                    quantifier = false;
                } else {
                    literal = true;
                }
            }
            _ => {}
        }
        if literal {
            out.push('\\');
            changed = true;
        }
        out.push(c);
    }
    if changed { std::borrow::Cow::Owned(out) } else { std::borrow::Cow::Borrowed(pattern) }
}

/// Whether what follows a `{` makes it a quantifier: digits, optionally a comma and digits, `}`.
fn quantifier_at(rest: &[char]) -> bool {
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return false;
    }
    let rest = &rest[digits..];
    match rest.first() {
        Some('}') => true,
        Some(',') => {
            let more = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            rest.get(1 + more) == Some(&'}')
        }
        _ => false,
    }
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
        // A brace that starts no quantifier is itself, as ECMA-262 reads it, and the pattern stays
        // linear.
        let guid = r"^(?:{[0-9a-fA-F]{4}(?:-?[0-9a-fA-F]{4}){7}}|[0-9a-fA-F]{4}(?:-?[0-9a-fA-F]{4}){7})$";
        let re = Pattern::new(guid).unwrap();
        assert!(matches!(re, Pattern::Linear(_)));
        assert!(re.is_match("0123-4567-89ab-cdef-0123-4567-89ab-cdef"));
        assert!(re.is_match("{0123456789abcdef0123456789abcdef}"));
        assert!(!re.is_match("{0123"));
        assert!(Pattern::new(r"^a{2,3}$").is_ok_and(|re| re.is_match("aa") && !re.is_match("a{2,3}")));
        assert!(Pattern::new(r"^x{y}$").is_ok_and(|re| re.is_match("x{y}")));
    }
}
