//! The client's address: the TCP peer, or, when the peer is a trusted reverse proxy
//! (`--trusted-proxies`), the address the proxies report in `Forwarded` (RFC 7239) or
//! `X-Forwarded-For`. Anonymous rate-limit buckets, sign-in throttling and the request log
//! all read it from [`ClientAddress`], which one layer ([`layer`]) computes once per request with
//! [`client_address`].
//!
//! The chain is read from the right (the hop nearest to us) and the first address that is not a
//! trusted proxy is the client: everything left of it was written by parties we do not trust. A
//! hop a trusted proxy could not name (`unknown`, an obfuscated identifier, garbage) ends the walk
//! at that proxy. When a request carries both headers and they name different clients, one of
//! them was written by the client, not by our proxy (a proxy passes on a header it does not
//! maintain): the proxy's own address is used, so no header can choose someone else's bucket.

use std::net::IpAddr;
use std::str::FromStr;

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use ipnet::IpNet;

/// The networks whose peers are believed when they say who the client is. Empty by default:
/// forwarding headers are then ignored and the client is the TCP peer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// No proxy is trusted.
    pub fn none() -> Self {
        TrustedProxies(Vec::new())
    }

    /// Whether `addr` is in one of the trusted networks.
    pub fn contains(&self, addr: IpAddr) -> bool {
        let addr = addr.to_canonical();
        self.0.iter().any(|net| net.contains(&addr))
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The networks, as CIDRs.
    pub fn networks(&self) -> &[IpNet] {
        &self.0
    }
}

/// One network: a CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address (`192.0.2.1`, `::1`).
pub fn parse_network(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    if let Ok(net) = IpNet::from_str(text) {
        // `10.1.2.3/8` names 10.0.0.0/8; say it the way it is matched.
        return Ok(net.trunc());
    }
    IpAddr::from_str(text)
        .map(|addr| IpNet::from(addr.to_canonical()))
        .map_err(|_| format!("{text:?} is not a network: write a CIDR such as 10.0.0.0/8 or fd00::/8, or one address"))
}

impl FromStr for TrustedProxies {
    type Err = String;

    /// A comma-separated list of networks (blank entries ignored).
    fn from_str(text: &str) -> Result<Self, String> {
        text.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(parse_network)
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }
}

impl FromIterator<IpNet> for TrustedProxies {
    fn from_iter<I: IntoIterator<Item = IpNet>>(iter: I) -> Self {
        TrustedProxies(iter.into_iter().collect())
    }
}

/// The client's address of a request, as [`client_address`] computed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

impl std::fmt::Display for ClientAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// One hop of a forwarding chain: an address, or a node a proxy could not (or would not) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    Addr(IpAddr),
    Unnamed,
}

/// A node as `X-Forwarded-For` or a `Forwarded` `for=` writes it: an address, possibly with a
/// port (`192.0.2.1:4711`, `[2001:db8::1]:4711`, `[2001:db8::1]`).
fn node(text: &str) -> Hop {
    let text = text.trim();
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let host = if let Some(rest) = text.strip_prefix('[') {
        match rest.split_once(']') {
            Some((host, "")) => Some(host),
            Some((host, port)) if port.strip_prefix(':').is_some_and(digits) => Some(host),
            _ => None,
        }
    } else if IpAddr::from_str(text).is_ok() {
        Some(text)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') && digits(port) => Some(host),
            _ => None,
        }
    };
    host.and_then(|h| IpAddr::from_str(h).ok()).map_or(Hop::Unnamed, |a| Hop::Addr(a.to_canonical()))
}

/// The hops of every `name` header line, in order (left: farthest), each line read by `hops`;
/// `None` when the request has no such header.
fn chain(headers: &HeaderMap, name: &str, hops: impl Fn(&str) -> Vec<Hop>) -> Option<Vec<Hop>> {
    let mut lines = headers.get_all(name).iter().peekable();
    lines.peek()?;
    // A line that is not visible ASCII names no one we could read.
    Some(lines.flat_map(|line| line.to_str().map_or_else(|_| vec![Hop::Unnamed], &hops)).collect())
}

/// `X-Forwarded-For`: comma-separated nodes.
fn x_forwarded_for(line: &str) -> Vec<Hop> {
    line.split(',').filter(|s| !s.trim().is_empty()).map(node).collect()
}

/// Splits `text` at `sep` outside quoted strings.
fn split_unquoted(text: &str, sep: char) -> Vec<&str> {
    let (mut parts, mut start, mut quoted, mut escaped) = (Vec::new(), 0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The `for` node of one `Forwarded` element (`for=192.0.2.60;proto=http`), unquoted.
fn forwarded_for(element: &str) -> Hop {
    let value = split_unquoted(element, ';').into_iter().find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.trim().eq_ignore_ascii_case("for").then(|| value.trim())
    });
    match value {
        Some(v) if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') => node(&v[1..v.len() - 1].replace('\\', "")),
        Some(v) if !v.contains('"') => node(v),
        _ => Hop::Unnamed,
    }
}

/// `Forwarded` (RFC 7239): comma-separated elements, each naming its node in `for=`.
fn forwarded(line: &str) -> Vec<Hop> {
    split_unquoted(line, ',').into_iter().filter(|e| !e.trim().is_empty()).map(forwarded_for).collect()
}

/// The right-most address of `chain` (then `peer`) that is not a trusted proxy; at an unnamed
/// hop, the trusted proxy that reported it; the left-most address when every hop is trusted.
fn walk(peer: IpAddr, chain: &[Hop], trusted: &TrustedProxies) -> IpAddr {
    let mut nearest = peer;
    for hop in chain.iter().rev() {
        match *hop {
            Hop::Addr(addr) if trusted.contains(addr) => nearest = addr,
            Hop::Addr(addr) => return addr,
            Hop::Unnamed => return nearest,
        }
    }
    nearest
}

/// The client's address: `peer` unless it is a trusted proxy, else the right-most untrusted
/// address of the `Forwarded` or `X-Forwarded-For` chain (the peer itself when the two headers
/// disagree).
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let peer = peer.to_canonical();
    if !trusted.contains(peer) {
        return peer;
    }
    let by = |chain: Option<Vec<Hop>>| chain.map(|c| walk(peer, &c, trusted));
    match (by(chain(headers, "forwarded", forwarded)), by(chain(headers, "x-forwarded-for", x_forwarded_for))) {
        (Some(a), Some(b)) if a != b => peer,
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => peer,
    }
}

/// Records the request's [`ClientAddress`] (from the connection's peer, which the server puts in
/// the request as `ConnectInfo`) for the parts that key on it and for the request log.
pub async fn layer(
    axum::extract::State(trusted): axum::extract::State<std::sync::Arc<TrustedProxies>>,
    mut request: Request,
    next: Next,
) -> Response {
    let peer = request.extensions().get::<ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
    if let Some(p) = peer {
        let client = ClientAddress(client_address(p, request.headers(), &trusted));
        request.extensions_mut().insert(client);
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    fn trusted(list: &str) -> TrustedProxies {
        list.parse().unwrap()
    }

    #[test]
    fn networks_parse_as_cidrs_or_single_addresses_and_nothing_else() {
        let t = trusted("10.0.0.0/8, 192.0.2.7 ,fd00::/8, ::1,");
        assert_eq!(t.networks().len(), 4);
        for inside in ["10.255.1.2", "192.0.2.7", "fd12::1", "::1", "::ffff:10.1.1.1"] {
            assert!(t.contains(ip(inside)), "{inside}");
        }
        for outside in ["11.0.0.1", "192.0.2.8", "fe80::1", "::2", "127.0.0.1"] {
            assert!(!t.contains(ip(outside)), "{outside}");
        }
        assert_eq!(parse_network("10.1.2.3/8").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(parse_network("::ffff:127.0.0.1").unwrap().to_string(), "127.0.0.1/32");
        for bad in ["10.0.0.0/33", "fd00::/129", "10.0.0", "example.com", "10.0.0.0/", "/8", "10.0.0.0/8/8", "*"] {
            assert!(bad.parse::<TrustedProxies>().is_err(), "{bad} is refused");
        }
        assert!("".parse::<TrustedProxies>().unwrap().is_empty());
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_sends() {
        let h = headers(&[("x-forwarded-for", "203.0.113.7"), ("forwarded", "for=198.51.100.1")]);
        assert_eq!(client_address(ip("192.0.2.1"), &h, &TrustedProxies::none()), ip("192.0.2.1"));
        assert_eq!(client_address(ip("192.0.2.1"), &h, &trusted("10.0.0.0/8")), ip("192.0.2.1"));
    }

    #[test]
    fn the_right_most_untrusted_address_of_x_forwarded_for_is_the_client() {
        let t = trusted("10.0.0.0/8");
        let peer = ip("10.0.0.1");
        let client = |xff: &str| client_address(peer, &headers(&[("x-forwarded-for", xff)]), &t);
        assert_eq!(client("203.0.113.7"), ip("203.0.113.7"));
        // The client wrote "1.2.3.4" itself; our proxies appended what they saw.
        assert_eq!(client("1.2.3.4, 203.0.113.7, 10.0.0.9"), ip("203.0.113.7"));
        assert_eq!(client("203.0.113.7:4711"), ip("203.0.113.7"));
        assert_eq!(client("[2001:db8::1]:4711"), ip("2001:db8::1"));
        assert_eq!(client("2001:db8::1"), ip("2001:db8::1"));
        assert_eq!(client("::ffff:203.0.113.7"), ip("203.0.113.7"));
        // Every hop trusted: the farthest one.
        assert_eq!(client("10.9.9.9, 10.0.0.9"), ip("10.9.9.9"));
        // A hop our proxy could not name: the proxy that reported it.
        assert_eq!(client("203.0.113.7, unknown, 10.0.0.9"), ip("10.0.0.9"));
        assert_eq!(client("203.0.113.7, garbage"), peer);
        assert_eq!(client("203.0.113.7, 1.2.3.4:port"), peer);
        // Several header lines are one list.
        let two = headers(&[("x-forwarded-for", "1.2.3.4"), ("x-forwarded-for", "203.0.113.7, 10.0.0.9")]);
        assert_eq!(client_address(peer, &two, &t), ip("203.0.113.7"));
        let two = headers(&[("x-forwarded-for", "203.0.113.7"), ("x-forwarded-for", "10.0.0.9")]);
        assert_eq!(client_address(peer, &two, &t), ip("203.0.113.7"));
        // No header: the peer.
        assert_eq!(client_address(peer, &HeaderMap::new(), &t), peer);
    }

    #[test]
    fn forwarded_is_read_as_rfc_7239_writes_it() {
        let t = trusted("10.0.0.0/8");
        let peer = ip("10.0.0.1");
        let client = |f: &str| client_address(peer, &headers(&[("forwarded", f)]), &t);
        assert_eq!(client("for=192.0.2.60;proto=http;by=203.0.113.43"), ip("192.0.2.60"));
        assert_eq!(client("For=\"[2001:db8:cafe::17]:4711\""), ip("2001:db8:cafe::17"));
        assert_eq!(client("for=\"192.0.2.43:47011\""), ip("192.0.2.43"));
        assert_eq!(client("for=192.0.2.43, for=198.51.100.17"), ip("198.51.100.17"));
        assert_eq!(client("for=192.0.2.43, for=198.51.100.17;by=10.0.0.1, for=10.1.1.1"), ip("198.51.100.17"));
        assert_eq!(client("proto=https;for=\"[2001:db8::1]\""), ip("2001:db8::1"));
        // A comma inside a quoted value does not split elements.
        assert_eq!(client("for=192.0.2.43;host=\"a,b\", for=10.1.1.1"), ip("192.0.2.43"));
        // Unnamed or obfuscated nodes, or an element without `for`: the proxy that reported it.
        assert_eq!(client("for=unknown"), peer);
        assert_eq!(client("for=_hidden, for=10.2.2.2"), ip("10.2.2.2"));
        assert_eq!(client("proto=https"), peer);
        assert_eq!(client("for=\"unterminated"), peer);
    }

    #[test]
    fn headers_that_disagree_name_no_one_but_the_proxy() {
        let t = trusted("10.0.0.0/8");
        let peer = ip("10.0.0.1");
        let both = |f: &str, x: &str| client_address(peer, &headers(&[("forwarded", f), ("x-forwarded-for", x)]), &t);
        assert_eq!(both("for=203.0.113.7", "203.0.113.7"), ip("203.0.113.7"));
        assert_eq!(both("for=1.2.3.4", "203.0.113.7"), peer, "one of them was written by the client");
    }
}
