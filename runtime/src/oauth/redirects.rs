//! The rules a client's redirect URIs follow, whether it registers them (dynamic registration) or
//! publishes them (a Client ID Metadata Document).

/// Whether a redirect URI may be registered: HTTPS, or HTTP on a loopback host; no fragment.
pub(super) fn redirect_uri_allowed(uri: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(uri).map_err(|_| format!("{uri} is not an absolute URL"))?;
    if url.fragment().is_some() {
        return Err(format!("{uri} has a fragment"));
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" => match url.host() {
            Some(url::Host::Domain("localhost")) => Ok(()),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(()),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(()),
            _ => Err(format!("{uri}: plain http is allowed only on a loopback host (127.0.0.1, [::1], localhost)")),
        },
        _ => Err(format!("{uri}: a redirect URI is https, or http on a loopback host")),
    }
}

/// The kind of application a client registers as (OpenID Connect Dynamic Client Registration 1.0
/// `application_type`, which MCP clients send since the 2026-07-28 revision) and what it allows
/// of a redirect URI [`redirect_uri_allowed`] accepts: a `native` application (desktop, CLI, a
/// page served on `localhost`) redirects to a loopback host, or to an https URL it claims (RFC
/// 8252 section 7.2); a `web` application is served from a host that is not a loopback one. A
/// client that names none keeps the general rule.
pub(super) fn application_type_allows(kind: Option<&str>, uri: &str) -> Result<(), String> {
    let loopback = || {
        reqwest::Url::parse(uri).ok().and_then(|u| u.host().map(|h| h.to_owned())).is_some_and(|h| match h {
            url::Host::Domain(d) => d == "localhost",
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        })
    };
    match kind {
        None | Some("native") => Ok(()),
        Some("web") if loopback() => Err(format!(
            "{uri}: a web application's redirect URI is https on a host that is not a loopback one; \
             a client served on localhost registers with application_type native"
        )),
        Some("web") => Ok(()),
        Some(other) => Err(format!("application_type {other} is neither native nor web")),
    }
}
