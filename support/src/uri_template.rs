//! URI templates of RFC 6570 level 1 (`notes://notes/{id}`), as MCP resource templates write
//! them: their variables, whether a URI is one of the template's and with which values, and a
//! template filled in. The generator checks a spec's resource URIs with the same functions the
//! runtime reads `resources/read` with, so the two cannot disagree on which URI is whose.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// One piece of a template: literal text, or a variable's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'t> {
    Text(&'t str),
    Var(&'t str),
}

fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        out.push(Piece::Var(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// The names of `template`'s variables, in order.
pub fn template_variables(template: &str) -> Vec<&str> {
    pieces(template)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Var(v) => Some(v),
            Piece::Text(_) => None,
        })
        .collect()
}

/// The value of each of `template`'s variables in `uri`, percent-decoded, or `None` when `uri` is
/// not one of the template's. A value is at least one character and never holds `/`, `?` or
/// `#` (it is one path segment, as a path parameter is), nor text that does not decode as UTF-8.
pub fn match_template<'t>(template: &'t str, uri: &str) -> Option<Vec<(&'t str, String)>> {
    let pieces = pieces(template);
    let mut raw = Vec::new();
    if !walk(&pieces, uri, &mut raw) {
        return None;
    }
    raw.into_iter()
        .map(|(name, value)| Some((name, percent_decode_str(value).decode_utf8().ok()?.into_owned())))
        .collect()
}

fn walk<'t, 'u>(pieces: &[Piece<'t>], uri: &'u str, out: &mut Vec<(&'t str, &'u str)>) -> bool {
    match pieces.split_first() {
        None => uri.is_empty(),
        Some((Piece::Text(text), rest)) => uri.strip_prefix(text).is_some_and(|tail| walk(rest, tail, out)),
        Some((Piece::Var(name), rest)) => {
            let end = uri.find(['/', '?', '#']).unwrap_or(uri.len());
            // Shortest value first: the text after the variable decides where it ends.
            for cut in (1..=end).filter(|&i| uri.is_char_boundary(i)) {
                out.push((name, &uri[..cut]));
                if walk(rest, &uri[cut..], out) {
                    return true;
                }
                out.pop();
            }
            false
        }
    }
}

/// The variable `template` is, when it is one variable and nothing else (`{uri}`): a URI given
/// whole.
pub fn lone_variable(template: &str) -> Option<&str> {
    match pieces(template).as_slice() {
        [Piece::Var(name)] if template.len() == name.len() + 2 => Some(name),
        _ => None,
    }
}

/// What a variable's value keeps as it is: RFC 3986's unreserved characters.
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `template` with each variable replaced by its value from `value` (percent-encoded, as
/// RFC 6570's simple expansion writes it); a variable without a value becomes empty.
pub fn expand_template(template: &str, value: impl Fn(&str) -> Option<String>) -> String {
    pieces(template)
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => t.to_string(),
            Piece::Var(v) => value(v).map(|s| utf8_percent_encode(&s, ENCODED).to_string()).unwrap_or_default(),
        })
        .collect()
}

/// Whether two templates name the same URIs: the same text with variables at the same places,
/// whatever their names (`notes://notes/{id}` and `notes://notes/{note}`).
pub fn same_template(a: &str, b: &str) -> bool {
    let shape = |t| {
        pieces(t)
            .into_iter()
            .map(|p| match p {
                Piece::Text(t) => Some(t),
                Piece::Var(_) => None,
            })
            .collect::<Vec<_>>()
    };
    shape(a) == shape(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_gives_each_variable_its_decoded_value() {
        let t = "notes://notes/{id}/attachments/{name}";
        assert_eq!(template_variables(t), ["id", "name"]);
        assert_eq!(
            match_template(t, "notes://notes/n1/attachments/a%20b.png"),
            Some(vec![("id", "n1".to_string()), ("name", "a b.png".to_string())])
        );
        assert_eq!(match_template("test://template/{id}/data", "test://template/7/data").unwrap()[0].1, "7");
    }

    #[test]
    fn a_uri_of_another_shape_is_none_of_the_templates() {
        let t = "notes://notes/{id}";
        for uri in ["notes://notes/", "notes://notes/a/b", "notes://notes", "other://notes/a", "notes://notes/a?x=1"] {
            assert_eq!(match_template(t, uri), None, "{uri}");
        }
        assert_eq!(match_template("notes://notes", "notes://notes"), Some(vec![]));
        assert_eq!(match_template(t, "notes://notes/%FF"), None, "not UTF-8");
    }

    #[test]
    fn a_variable_ends_where_the_text_after_it_starts() {
        let t = "files://{name}.{ext}";
        assert_eq!(
            match_template(t, "files://a.b.c"),
            Some(vec![("name", "a".to_string()), ("ext", "b.c".to_string())])
        );
    }

    #[test]
    fn expansion_encodes_what_a_segment_cannot_hold() {
        let uri = expand_template("notes://notes/{id}", |_| Some("a/b c".into()));
        assert_eq!(uri, "notes://notes/a%2Fb%20c");
        assert_eq!(match_template("notes://notes/{id}", &uri).unwrap()[0].1, "a/b c");
        assert!(same_template("notes://notes/{id}", "notes://notes/{note}"));
        assert_eq!(
            (lone_variable("{uri}"), lone_variable("x{uri}"), lone_variable("{a}{b}")),
            (Some("uri"), None, None)
        );
        assert!(!same_template("notes://notes/{id}", "notes://notes/{id}/x"));
    }
}
