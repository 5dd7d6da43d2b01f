//! Path templates whose parameter shares its segment with text (`/items/{id}.json`,
//! `/v{version}/items`): axum's router matches whole segments only, so such a segment is routed as
//! a parameter alone and the decoder checks and strips the text around it.

/// The route axum serves a template under: each segment holding one parameter and text becomes
/// that parameter alone (`/items/{id}.json` → `/items/{id}`); other segments stay.
pub fn route_path(template: &str) -> String {
    template
        .split('/')
        .map(|segment| match parts(segment) {
            Some((_, name, _)) => format!("{{{name}}}"),
            None => segment.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The text before a segment's one parameter, its name and the text after it; `None` for a
/// segment that is a parameter alone, holds none, or holds more than one.
fn parts(segment: &str) -> Option<(&str, &str, &str)> {
    let open = segment.find('{')?;
    let close = open + segment[open..].find('}')?;
    let (before, name, after) = (&segment[..open], &segment[open + 1..close], &segment[close + 1..]);
    let alone = before.is_empty() && after.is_empty();
    let more = after.contains('{') || after.contains('}') || before.contains('}');
    (!alone && !more && !name.is_empty()).then_some((before, name, after))
}

/// The value of parameter `name` in the segment `raw` the router matched for it: `raw` itself,
/// or, where the template's segment holds text around the parameter, `raw` without that text;
/// `None` when `raw` does not have it (`/items/7` for `/items/{id}.json`).
pub fn param_value<'a>(template: &str, name: &str, raw: &'a str) -> Option<&'a str> {
    let Some((before, _, after)) = template.split('/').filter_map(parts).find(|(_, n, _)| *n == name) else {
        return Some(raw);
    };
    raw.strip_prefix(before)?.strip_suffix(after).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_sharing_its_segment_is_routed_alone_and_read_without_the_text() {
        assert_eq!(route_path("/items/{id}.json"), "/items/{id}");
        assert_eq!(route_path("/v{version}/items/{id}"), "/{version}/items/{id}");
        assert_eq!(route_path("/items/{id}"), "/items/{id}");
        assert_eq!(route_path("/a/{x}-{y}"), "/a/{x}-{y}", "two parameters in a segment stay for the loader to refuse");
        assert_eq!(param_value("/items/{id}.json", "id", "7.json"), Some("7"));
        assert_eq!(param_value("/items/{id}.json", "id", "7"), None);
        assert_eq!(param_value("/items/{id}.json", "id", ".json"), None, "an empty value is none");
        assert_eq!(param_value("/v{version}/items", "version", "v2"), Some("2"));
        assert_eq!(param_value("/items/{id}", "id", "7.json"), Some("7.json"));
    }
}
