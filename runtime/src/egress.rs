//! Requests the platform makes to URLs someone else chose: webhook deliveries to a subscriber's
//! URL, and the authorization server's fetch of a client's metadata document and keys. One guard
//! for all of them, so no such URL can lead the platform into its own network:
//!
//! - [`check_url`]: absolute `https`, a host, no credentials, and no literal address that is
//!   private, loopback, link-local or otherwise special;
//! - [`client`]: an HTTP client that follows no redirect and whose resolver keeps only public
//!   addresses, so a name that resolves inward (now, or after a DNS change) is refused at
//!   connection time too.
//!
//! `allow_private` lifts both, for local development and tests only.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// `url` (parsed and normalised) if the platform may send a request there: absolute `https`
/// (or `http` where private targets are allowed), a host, no credentials, and not an address
/// inside the platform's network. The error says what is wrong (`must be https`).
pub fn check_url(url: &str, allow_private: bool) -> Result<String, String> {
    check(url, allow_private).map(|u| u.to_string())
}

/// [`check_url`], answering the parsed URL.
pub fn check(url: &str, allow_private: bool) -> Result<url::Url, String> {
    if url.len() > 2048 {
        return Err("is longer than 2,048 characters".into());
    }
    let Ok(parsed) = url::Url::parse(url) else { return Err("is not an absolute URL".into()) };
    match parsed.scheme() {
        "https" => {}
        "http" if allow_private => {}
        _ => return Err("must be https".into()),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("must not carry credentials".into());
    }
    let ip = match parsed.host() {
        None => return Err("has no host".into()),
        Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(url::Host::Domain(_)) => None,
    };
    if let Some(ip) = ip
        && !allow_private
        && !is_public(ip)
    {
        return Err("names a private, loopback or link-local address".into());
    }
    Ok(parsed)
}

/// An HTTP client for such URLs: `timeout` per request, no redirects followed, and (unless
/// `allow_private`) names resolved to their public addresses only.
pub fn client(timeout: Duration, user_agent: &'static str, allow_private: bool) -> reqwest::Client {
    let mut client = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(user_agent);
    if !allow_private {
        client = client.dns_resolver(Arc::new(PublicOnly));
    }
    client.build().unwrap_or_default()
}

/// What went wrong with a request, without the URL (whose query may carry a token).
pub fn describe(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "no answer in time"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "the request failed"
    };
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() { what.to_string() } else { format!("{what}: {detail}") }
}

/// Whether the platform may send a request to `ip`: not loopback, private, link-local, shared
/// (carrier-grade NAT), unspecified, broadcast, multicast or documentation space, nor an IPv4
/// address of those inside IPv6.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

/// Resolves a host to its public addresses only, so no name can lead a request into the
/// platform's own network, whatever it resolves to at the time.
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = found.into_iter().filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                let refused: Box<dyn std::error::Error + Send + Sync> =
                    format!("{} resolves to no public address", name.as_str()).into();
                return Err(refused);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_https_to_a_public_host_without_credentials() {
        let refused = |url: &str| check_url(url, false).expect_err(url);
        assert_eq!(
            check_url("https://hooks.example.com/inbox?k=1", false).unwrap(),
            "https://hooks.example.com/inbox?k=1"
        );
        assert_eq!(refused("http://hooks.example.com/"), "must be https");
        assert_eq!(refused("ftp://hooks.example.com/"), "must be https");
        assert_eq!(refused("https://user:pw@hooks.example.com/"), "must not carry credentials");
        for inward in
            ["https://127.0.0.1/", "https://[::1]:8443/", "https://169.254.169.254/latest", "https://10.0.0.7/"]
        {
            assert_eq!(refused(inward), "names a private, loopback or link-local address", "{inward}");
        }
        assert_eq!(refused("/relative"), "is not an absolute URL");
        assert!(check_url("http://127.0.0.1:9000/hook", true).is_ok(), "allowed for development and tests");
    }

    #[test]
    fn only_public_addresses_are_reached() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "8.8.8.8"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn a_name_that_resolves_inward_is_refused_when_connecting() {
        let client = client(Duration::from_secs(5), "test", false);
        let err = client.get("https://localhost:9/").send().await.expect_err("refused");
        assert!(describe(&err).contains("resolves to no public address"), "{}", describe(&err));
    }
}
