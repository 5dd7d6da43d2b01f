//! Path templates whose parameters share their segment with text (`/items/{id}.json`,
//! `/reports/get(period='{period}')`, `/packages/{name}-{version}.zip`): axum's router takes text
//! before a parameter but none after it, and one parameter to a segment, so such a segment is
//! routed under its first parameter alone and the decoder splits what it matched.

/// The route axum serves a template under: a segment holding text after its first parameter
/// (or more parameters) is routed under that parameter alone (`/items/{id}.json` →
/// `/items/{id}`, `/r/get(p='{p}')` → `/r/get(p='{p}`, `/p/{name}-{version}.zip` →
/// `/p/{name}`); other segments stay.
pub fn route_path(template: &str) -> String {
    template
        .split('/')
        .map(|segment| match pieces(segment) {
            Some((before, params)) if params.len() > 1 || !params[0].1.is_empty() => {
                format!("{before}{{{}}}", params[0].0)
            }
            _ => segment.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A segment's text before its first parameter, then each parameter's name with the text after
/// it up to the next; `None` for a segment without parameters or with unbalanced braces.
fn pieces(segment: &str) -> Option<(&str, Vec<(&str, &str)>)> {
    let open = segment.find('{')?;
    let (before, mut rest) = segment.split_at(open);
    if before.contains('}') {
        return None;
    }
    let mut params = Vec::new();
    while let Some(inner) = rest.strip_prefix('{') {
        let close = inner.find('}')?;
        let name = &inner[..close];
        let tail = &inner[close + 1..];
        let next = tail.find('{').unwrap_or(tail.len());
        let after = &tail[..next];
        if name.is_empty() || name.contains('{') || after.contains('}') {
            return None;
        }
        params.push((name, after));
        rest = &tail[next..];
    }
    Some((before, params))
}

/// The names of a template's parameters, in order (`/p/{name}-{version}.zip` → `name`,
/// `version`).
pub fn template_params(template: &str) -> Vec<&str> {
    template.split('/').filter_map(pieces).flat_map(|(_, params)| params.into_iter().map(|(n, _)| n)).collect()
}

/// Two parameters of a segment with no text between them (`{id}{ext}`), which no request tells
/// apart: the first such pair.
pub fn adjacent_params(template: &str) -> Option<(&str, &str)> {
    template
        .split('/')
        .filter_map(pieces)
        .find_map(|(_, params)| params.windows(2).find(|w| w[0].1.is_empty()).map(|w| (w[0].0, w[1].0)))
}

/// The values of the parameters routed under `name` (the first of its segment), from what the
/// router matched for it (the router has taken any text before it): `raw` itself for a parameter
/// alone; for a segment of text and parameters, each parameter's value, split at the text
/// between them (the first occurrence) and without the text after the last. `None` when `raw`
/// is no value of that segment (`/items/7` for `/items/{id}.json`) or a value would be empty.
pub fn param_values<'a, 't>(template: &'t str, name: &'t str, raw: &'a str) -> Option<Vec<(&'t str, &'a str)>> {
    let Some((_, params)) = template.split('/').filter_map(pieces).find(|(_, p)| p[0].0 == name) else {
        return Some(vec![(name, raw)]);
    };
    let mut out = Vec::with_capacity(params.len());
    let mut rest = raw;
    for (i, (param, after)) in params.iter().enumerate() {
        let value = if i + 1 == params.len() {
            let v = rest.strip_suffix(after)?;
            rest = "";
            v
        } else {
            let at = rest.find(after)?;
            let v = &rest[..at];
            rest = &rest[at + after.len()..];
            v
        };
        if value.is_empty() {
            return None;
        }
        out.push((*param, value));
    }
    rest.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_sharing_its_segment_is_routed_alone_and_read_without_the_text() {
        assert_eq!(route_path("/items/{id}.json"), "/items/{id}");
        assert_eq!(route_path("/r/get(p='{p}')"), "/r/get(p='{p}", "the text before stays: the router reads it");
        assert_eq!(route_path("/v{version}/items/{id}"), "/v{version}/items/{id}");
        assert_eq!(route_path("/items/{id}"), "/items/{id}");
        let one = |t, n, raw| param_values(t, n, raw).map(|v| v.into_iter().map(|(_, v)| v).collect::<Vec<_>>());
        assert_eq!(one("/items/{id}.json", "id", "7.json"), Some(vec!["7"]));
        assert_eq!(one("/items/{id}.json", "id", "7"), None);
        assert_eq!(one("/items/{id}.json", "id", ".json"), None, "an empty value is none");
        assert_eq!(one("/r/get(p='{p}')", "p", "7')"), Some(vec!["7"]));
        assert_eq!(one("/v{version}/items", "version", "2"), Some(vec!["2"]));
        assert_eq!(one("/items/{id}", "id", "7.json"), Some(vec!["7.json"]));
    }

    #[test]
    fn several_parameters_in_a_segment_are_routed_under_the_first_and_split_at_their_text() {
        let t = "/etc/packages/{group}/{name}-{version}.zip";
        assert_eq!(route_path(t), "/etc/packages/{group}/{name}");
        assert_eq!(template_params(t), ["group", "name", "version"]);
        assert_eq!(param_values(t, "name", "tools-1.2.zip"), Some(vec![("name", "tools"), ("version", "1.2")]));
        // The first `-` ends the name: a name holding one cannot be told from its version.
        assert_eq!(param_values(t, "name", "my-tools-1.2.zip"), Some(vec![("name", "my"), ("version", "tools-1.2")]));
        assert_eq!(param_values(t, "name", "tools.zip"), None, "no `-`: not this route's");
        assert_eq!(param_values(t, "name", "-1.2.zip"), None, "an empty name");
        assert_eq!(param_values(t, "group", "g"), Some(vec![("group", "g")]));
        assert_eq!(route_path("/r/{a}:{b}"), "/r/{a}");
        assert_eq!(param_values("/r/{a}:{b}", "a", "x:y"), Some(vec![("a", "x"), ("b", "y")]));
        assert_eq!(adjacent_params("/p/{id}{ext}"), Some(("id", "ext")));
        assert_eq!(adjacent_params(t), None);
    }
}
