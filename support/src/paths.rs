//! Path templates whose parameters share their segment with text (`/items/{id}.json`,
//! `/reports/get(period='{period}')`, `/packages/{name}-{version}.zip`): axum's router takes text
//! before a parameter but none after it, and one parameter to a segment, so such a segment is
//! routed under its first parameter alone and the decoder splits what it matched.
//!
//! A template may end in a query or fragment part, the way documents list several operations on
//! one path told apart by the query (`/?Action=DescribeInstances`, AWS's query protocol, written
//! `/#Action=DescribeInstances` in its OpenAPI documents; `/alerts?lat={lat}&lon={lon}`;
//! `/assetservers#name`): [`path_part`] is what the router sees, [`query_items`] what the part
//! asks of a request's query.

/// The route axum serves a template under: a segment holding text after its first parameter
/// (or more parameters) is routed under that parameter alone (`/items/{id}.json` →
/// `/items/{id}`, `/r/get(p='{p}')` → `/r/get(p='{p}`, `/p/{name}-{version}.zip` →
/// `/p/{name}`); other segments stay.
pub fn route_path(template: &str) -> String {
    path_part(template)
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
/// A parameter of the query part (`?city={city}`) is one too.
pub fn template_params(template: &str) -> Vec<&str> {
    let path =
        path_part(template).split('/').filter_map(pieces).flat_map(|(_, params)| params.into_iter().map(|(n, _)| n));
    let query = query_items(template).into_iter().filter_map(|i| match i {
        QueryItem::Param(_, param) => Some(param),
        _ => None,
    });
    path.chain(query).collect()
}

/// A template's path: what comes before its query (`?`) or fragment (`#`) part.
pub fn path_part(template: &str) -> &str {
    template.split(['?', '#']).next().unwrap_or_default()
}

/// One item of a template's query or fragment part (`&`-separated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryItem<'t> {
    /// `name=value`: the query holds `name` with this value.
    Value(&'t str, &'t str),
    /// `name={param}`: the query holds `name`, whose value is the template's parameter `param`.
    Param(&'t str, &'t str),
    /// `name` alone: the query holds `name` where an input field is sent under it, else a label
    /// that only tells the documents' keys apart (`/files/{id}#add_shared_link`).
    Name(&'t str),
}

/// The items of a template's query or fragment part, in order; none without one.
pub fn query_items(template: &str) -> Vec<QueryItem<'_>> {
    let Some(at) = template.find(['?', '#']) else { return Vec::new() };
    template[at + 1..]
        .split('&')
        .filter(|i| !i.is_empty())
        .map(|item| match item.split_once('=') {
            Some((name, value)) => match value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
                Some(param) => QueryItem::Param(name, param),
                None => QueryItem::Value(name, value),
            },
            None => QueryItem::Name(item),
        })
        .collect()
}

/// What a request's query must hold for the operation of `template` to take it, sorted: each
/// name with the value it must have, or `None` where any value will do. `is_field` says whether
/// a name is one an input field is sent under (a name alone is a condition only then).
pub fn query_conditions(template: &str, is_field: impl Fn(&str) -> bool) -> Vec<(&str, Option<&str>)> {
    let mut out: Vec<(&str, Option<&str>)> = query_items(template)
        .into_iter()
        .filter_map(|i| match i {
            QueryItem::Value(name, value) => Some((name, Some(value))),
            QueryItem::Param(name, _) => Some((name, None)),
            QueryItem::Name(name) => is_field(name).then_some((name, None)),
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether a request's query pairs meet `conditions` (as [`query_conditions`] gives them).
pub fn meets(conditions: &[(&str, Option<&str>)], pairs: &[(String, String)]) -> bool {
    conditions.iter().all(|(name, value)| pairs.iter().any(|(k, v)| k == name && value.is_none_or(|want| v == want)))
}

/// Two parameters of a segment with no text between them (`{id}{ext}`), which no request tells
/// apart: the first such pair.
pub fn adjacent_params(template: &str) -> Option<(&str, &str)> {
    path_part(template)
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
    let Some((_, params)) = path_part(template).split('/').filter_map(pieces).find(|(_, p)| p[0].0 == name) else {
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

    #[test]
    fn a_query_part_is_no_route_but_conditions_on_the_query() {
        assert_eq!(route_path("/#Action=DescribeInstances"), "/");
        assert_eq!(route_path("/items/{id}.json?full=true"), "/items/{id}");
        assert_eq!(route_path("/alerts?lat={lat}&lon={lon}"), "/alerts");
        assert_eq!(template_params("/cities/{country}?city={city}"), ["country", "city"]);
        assert_eq!(
            query_items("/a?x=1&y={why}&z#q"),
            [QueryItem::Value("x", "1"), QueryItem::Param("y", "why"), QueryItem::Name("z#q")]
        );
        let field = |n: &str| n == "name";
        assert_eq!(query_conditions("/servers#name", field), [("name", None)]);
        assert_eq!(query_conditions("/files/{id}#add_link", field), [], "a label asks nothing");
        let c = query_conditions("/?Version=1&Action=Run", field);
        assert_eq!(c, [("Action", Some("Run")), ("Version", Some("1"))]);
        let pairs = |q: &[(&str, &str)]| q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        assert!(meets(&c, &pairs(&[("Version", "1"), ("Action", "Run"), ("Other", "x")])));
        assert!(!meets(&c, &pairs(&[("Version", "1"), ("Action", "Stop")])));
        assert!(!meets(&c, &pairs(&[("Action", "Run")])));
        assert!(meets(&query_conditions("/servers#name", field), &pairs(&[("name", "")])));
    }
}
