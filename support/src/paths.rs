//! Path templates whose parameter shares its segment with text after it (`/items/{id}.json`,
//! `/reports/get(period='{period}')`): axum's router takes text before a parameter but none after
//! it, so such a segment is routed without that text and the decoder checks and strips it.

/// The route axum serves a template under: a segment holding one parameter and text after it
/// loses that text (`/items/{id}.json` → `/items/{id}`, `/r/get(p='{p}')` → `/r/get(p='{p}`);
/// other segments stay.
pub fn route_path(template: &str) -> String {
    template
        .split('/')
        .map(|segment| match parts(segment) {
            Some((before, name, _)) => format!("{before}{{{name}}}"),
            None => segment.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The text before a segment's one parameter, its name and the text after it; `None` for a
/// segment with no text after its parameter, with none, or with more than one.
fn parts(segment: &str) -> Option<(&str, &str, &str)> {
    let open = segment.find('{')?;
    let close = open + segment[open..].find('}')?;
    let (before, name, after) = (&segment[..open], &segment[open + 1..close], &segment[close + 1..]);
    let more = after.contains('{') || after.contains('}') || before.contains('}');
    (!after.is_empty() && !more && !name.is_empty()).then_some((before, name, after))
}

/// The value of parameter `name` from what the router matched for it (the router has taken any
/// text before it): `raw` itself, or, where the template's segment holds text after the parameter,
/// `raw` without that text; `None` when `raw` does not end with it (`/items/7` for
/// `/items/{id}.json`).
pub fn param_value<'a>(template: &str, name: &str, raw: &'a str) -> Option<&'a str> {
    let Some((_, _, after)) = template.split('/').filter_map(parts).find(|(_, n, _)| *n == name) else {
        return Some(raw);
    };
    raw.strip_suffix(after).filter(|v| !v.is_empty())
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
        assert_eq!(route_path("/a/{x}-{y}"), "/a/{x}-{y}", "two parameters in a segment stay for the loader to refuse");
        assert_eq!(param_value("/items/{id}.json", "id", "7.json"), Some("7"));
        assert_eq!(param_value("/items/{id}.json", "id", "7"), None);
        assert_eq!(param_value("/items/{id}.json", "id", ".json"), None, "an empty value is none");
        assert_eq!(param_value("/r/get(p='{p}')", "p", "7')"), Some("7"));
        assert_eq!(param_value("/v{version}/items", "version", "2"), Some("2"));
        assert_eq!(param_value("/items/{id}", "id", "7.json"), Some("7.json"));
    }
}
