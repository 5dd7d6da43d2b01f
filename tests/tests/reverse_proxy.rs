//! A deployment behind a reverse proxy, as a user meets it: the server's public URL is
//! `http://127.0.0.1:<proxy port>/sw` and a proxy (`common::proxy`) strips `/sw` before forwarding.
//! Every URL the server emits (metadata, pages, form actions, redirects, cookies, the console, the
//! documentation page and the OpenAPI documents) must lead back through the proxy, and the browser's
//! `Origin` (`scheme://host:port`, never a path) must be accepted. With `--trusted-proxies`, the
//! client address behind the proxy (from `X-Forwarded-For` or `Forwarded`) keys anonymous rate
//! limits and sign-in throttling; from an untrusted peer those headers are ignored.

mod common;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use reqwest::redirect::Policy;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const PASSWORD: &str = "correct horse battery";
const CALLBACK: &str = "http://127.0.0.1:53682/callback";

/// A server whose public URL is the proxy's `/sw`, and that URL.
async fn behind_proxy(configure: impl FnOnce(&mut runtime::Config)) -> (common::TestServer, String) {
    let (server, public) = common::proxy::serve_behind("/sw", configure).await;
    server.tenant("acme", "alice").await;
    runtime::oauth::users::add(&server.state.store, "alice", "acme", PASSWORD).await.unwrap();
    (server, public)
}

/// `scheme://host:port` of a URL: what a browser sends as `Origin`.
fn origin_of(url: &str) -> String {
    Url::parse(url).unwrap().origin().ascii_serialization()
}

/// The port of an origin, as written.
fn origin_port(origin: &str) -> String {
    origin.rsplit_once(':').map(|(_, port)| port.to_string()).unwrap_or_default()
}

fn pkce() -> (String, String) {
    let verifier = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

fn param(url: &str, name: &str) -> Option<String> {
    Url::parse(url).unwrap().query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// The values of every `name="…"` attribute in `html`.
fn attributes(html: &str, name: &str) -> Vec<String> {
    let marker = format!(" {name}=\"");
    html.split(&marker).skip(1).map(|rest| unescape(&rest[..rest.find('"').unwrap()])).collect()
}

/// The hidden fields of the (only) form of a page.
fn hidden_fields(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .map(|rest| {
            let tag = &rest[..rest.find('>').unwrap()];
            let attr = |n: &str| attributes(&format!(" {tag}"), n).into_iter().next().unwrap_or_default();
            (attr("name"), attr("value"))
        })
        .collect()
}

/// A person at a browser: keeps the session cookie, sends `Origin` and `Sec-Fetch-Site` on form
/// posts as browsers do, follows no redirect on its own.
struct Browser {
    http: reqwest::Client,
    origin: String,
    cookie: Option<String>,
}

impl Browser {
    fn new(origin: &str) -> Browser {
        Browser {
            http: reqwest::Client::builder().redirect(Policy::none()).build().unwrap(),
            origin: origin.to_string(),
            cookie: None,
        }
    }

    async fn get(&self, url: &str) -> reqwest::Response {
        let mut rb = self.http.get(url);
        if let Some(c) = &self.cookie {
            rb = rb.header("cookie", c);
        }
        rb.send().await.unwrap()
    }

    async fn post_form(&self, url: &str, form: &[(String, String)]) -> reqwest::Response {
        let mut rb =
            self.http.post(url).form(form).header("origin", &self.origin).header("sec-fetch-site", "same-origin");
        if let Some(c) = &self.cookie {
            rb = rb.header("cookie", c);
        }
        rb.send().await.unwrap()
    }

    /// Where the response's `Location` leads, resolved against the URL that answered.
    fn follow(resp: &reqwest::Response) -> String {
        let location = resp.headers().get("location").unwrap_or_else(|| panic!("no Location on {}", resp.status()));
        resp.url().join(location.to_str().unwrap()).unwrap().to_string()
    }

    /// The action of the page's form, resolved against the page's URL.
    fn action(page_url: &str, html: &str) -> String {
        let action = attributes(html, "action").into_iter().next().unwrap_or_else(|| panic!("no form in {html}"));
        Url::parse(page_url).unwrap().join(&action).unwrap().to_string()
    }
}

/// Every `href`, `src` and `action` of a page must stay under the public URL's path.
fn assert_links_stay_under(html: &str, base_path: &str, what: &str) {
    for name in ["href", "src", "action"] {
        for value in attributes(html, name) {
            if value.starts_with('#') || value.starts_with("data:") {
                continue;
            }
            assert!(value.starts_with(&format!("{base_path}/")), "{what}: {name}=\"{value}\" leaves {base_path}/");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_path_prefix_sign_in_consent_console_docs_and_documents_all_go_through_the_proxy() {
    let (_server, public) = behind_proxy(|_| {}).await;
    let origin = origin_of(&public);
    let mut browser = Browser::new(&origin);

    // Metadata at the RFC 8414 / RFC 9728 places for an issuer and resources under /sw, and under
    // the prefix itself, and the OpenID Provider Configuration at both OpenID places (a client
    // whose proxy routes only /sw finds it under the prefix); every URL in them is under the
    // public URL.
    for url in [
        format!("{origin}/.well-known/oauth-authorization-server/sw"),
        format!("{public}/.well-known/oauth-authorization-server"),
        format!("{origin}/.well-known/openid-configuration/sw"),
        format!("{public}/.well-known/openid-configuration"),
    ] {
        let resp = reqwest::get(&url).await.unwrap();
        assert_eq!(resp.status(), 200, "{url}");
        let doc: Value = resp.json().await.unwrap();
        assert_eq!(doc["issuer"], public.as_str(), "{url}");
        for (field, path) in [
            ("authorization_endpoint", "/oauth/authorize"),
            ("token_endpoint", "/oauth/token"),
            ("userinfo_endpoint", "/oauth/userinfo"),
        ] {
            assert_eq!(doc[field], format!("{public}{path}").as_str(), "{url}: {field}");
        }
    }
    for (urls, resource) in [
        (
            [
                format!("{origin}/.well-known/oauth-protected-resource/sw/api/mcp"),
                format!("{public}/.well-known/oauth-protected-resource/api/mcp"),
            ],
            format!("{public}/api/mcp"),
        ),
        (
            [
                format!("{origin}/.well-known/oauth-protected-resource/sw/api/v1"),
                format!("{public}/api/v1/.well-known/oauth-protected-resource"),
            ],
            format!("{public}/api/v1"),
        ),
    ] {
        for url in urls {
            let resp = reqwest::get(&url).await.unwrap();
            assert_eq!(resp.status(), 200, "{url}");
            let doc: Value = resp.json().await.unwrap();
            assert_eq!(doc["resource"], resource.as_str(), "{url}");
            assert_eq!(doc["authorization_servers"], json!([public]), "{url}");
        }
    }

    // A client registers and sends the user to the authorization endpoint.
    let client_id = common::register_client(&public, "proxied", CALLBACK).await;
    let (verifier, challenge) = pkce();
    let query = serde_urlencoded::to_string([
        ("response_type", "code"),
        ("client_id", &client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "vault:write"),
        ("state", "st-1"),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
    ])
    .unwrap();
    let authorize = format!("{public}/oauth/authorize?{query}");
    let resp = browser.get(&authorize).await;
    assert_eq!(resp.status(), 302);
    let login = Browser::follow(&resp);
    assert!(login.starts_with(&format!("{public}/login?")), "to the sign-in page under the prefix: {login}");

    // The sign-in form posts under the prefix; the browser's Origin (no path) is accepted.
    let page = browser.get(&login).await;
    assert_eq!(page.status(), 200, "{login}");
    let html = page.text().await.unwrap();
    assert_links_stay_under(&html, "/sw", "sign-in page");
    let action = Browser::action(&login, &html);
    assert_eq!(action, format!("{public}/login"), "the sign-in form's action");
    let mut form = hidden_fields(&html);
    form.extend([("username".into(), "alice".into()), ("password".into(), PASSWORD.into())]);
    let signed_in = browser.post_form(&action, &form).await;
    assert_eq!(signed_in.status(), 303, "sign-in through the proxy: {}", signed_in.text().await.unwrap_or_default());
    let set_cookie = signed_in.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set_cookie.contains("; Path=/sw;"), "the cookie is for the prefix only: {set_cookie}");
    browser.cookie = Some(set_cookie.split(';').next().unwrap().to_string());
    let back = Browser::follow(&signed_in);
    assert!(back.starts_with(&format!("{public}/oauth/authorize?")), "back to the request: {back}");

    // Consent: the form posts under the prefix and the approval is accepted.
    let page = browser.get(&back).await;
    assert_eq!(page.status(), 200, "the consent page");
    let html = page.text().await.unwrap();
    assert_links_stay_under(&html, "/sw", "consent page");
    let action = Browser::action(&back, &html);
    assert_eq!(action, format!("{public}/oauth/authorize"), "the consent form's action");
    let mut form = hidden_fields(&html);
    form.push(("decision".into(), "approve".into()));
    let approved = browser.post_form(&action, &form).await;
    assert_eq!(approved.status(), 303, "approval through the proxy: {}", approved.text().await.unwrap_or_default());
    let to = Browser::follow(&approved);
    assert!(to.starts_with(CALLBACK), "{to}");
    assert_eq!(param(&to, "iss").as_deref(), Some(public.as_str()));
    let tokens: Value = reqwest::Client::new()
        .post(format!("{public}/oauth/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &param(&to, "code").unwrap()),
            ("redirect_uri", CALLBACK),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = tokens["access_token"].as_str().unwrap_or_else(|| panic!("a token: {tokens}"));
    let listed = reqwest::Client::new().get(format!("{public}/api/v1/credentials")).bearer_auth(access).send().await;
    assert_eq!(listed.unwrap().status(), 200, "the token works through the proxy");
    // A browser-based MCP client on the public origin passes the endpoint's Origin check; the same
    // host on another port does not.
    for (from, allowed) in [(origin.clone(), true), (origin.replace(&origin_port(&origin), "1"), false)] {
        let resp = reqwest::Client::new()
            .post(format!("{public}/api/mcp"))
            .bearer_auth(access)
            .header("origin", &from)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status() == 200, allowed, "MCP from Origin {from}: {}", resp.status());
    }

    // The console: redirects, its page and its files stay under the prefix.
    let anonymous = Browser::new(&origin);
    let resp = anonymous.get(&format!("{public}/console/tokens")).await;
    assert_eq!(resp.status(), 302);
    assert_eq!(Browser::follow(&resp), format!("{public}/login?next=%2Fconsole%2Ftokens"));
    let resp = anonymous.get(&format!("{public}/console")).await;
    assert_eq!(Browser::follow(&resp), format!("{public}/console/"));
    let page = browser.get(&format!("{public}/console/")).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert_links_stay_under(&html, "/sw", "console page");
    for asset in attributes(&html, "src")
        .into_iter()
        .chain(attributes(&html, "href").into_iter().filter(|h| h.ends_with(".css")))
    {
        let resp = browser.get(&format!("{origin}{asset}")).await;
        assert_eq!(resp.status(), 200, "{asset}");
    }
    // A console write: the session's CSRF token and the browser's Origin, through the proxy.
    let session: Value = browser.get(&format!("{public}/console/session")).await.json().await.unwrap();
    let csrf = session["csrf_token"].as_str().expect("signed in").to_string();
    let write = browser
        .http
        .post(format!("{public}/api/v1/credentials"))
        .header("cookie", browser.cookie.as_deref().unwrap())
        .header("x-csrf-token", &csrf)
        .header("origin", &origin)
        .header("sec-fetch-site", "same-origin")
        .json(&json!({ "key": "proxied", "value": "v1" }))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), 201, "a console write: {}", write.text().await.unwrap_or_default());

    // The documentation page: under the prefix, listing the documents under the prefix, with the
    // registered redirect URI.
    let resp = anonymous.get(&format!("{public}/docs")).await;
    assert!(resp.status().is_redirection(), "{}", resp.status());
    assert_eq!(Browser::follow(&resp), format!("{public}/docs/"));
    let resp = anonymous.get(&format!("{public}/docs/")).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.unwrap().contains("swagger-ui"));
    let init = anonymous.get(&format!("{public}/docs/swagger-initializer.js")).await.text().await.unwrap();
    for name in ["vault.json", "prospector.json"] {
        assert!(init.contains(&format!("\"{public}/openapi/{name}\"")), "{name} under the prefix: {init}");
    }
    assert!(init.contains(&format!("\"{public}/docs/oauth2-redirect.html\"")), "the redirect URI: {init}");
    let docs_client = format!(
        "{public}/oauth/authorize?{}",
        serde_urlencoded::to_string([
            ("response_type", "code"),
            ("client_id", runtime::oauth::DOCS_CLIENT_ID),
            ("redirect_uri", &format!("{public}/docs/oauth2-redirect.html")),
            ("scope", "vault:read"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .unwrap()
    );
    assert_eq!(browser.get(&docs_client).await.status(), 200, "the documentation page's client may sign in");

    // The OpenAPI documents name the server and the authorization endpoints through the proxy.
    for (name, base) in [
        ("vault.json", "/api/v1"),
        ("vault.3.0.json", "/api/v1"),
        ("prospector.json", "/v1/prospector"),
        ("prospector.3.0.json", "/v1/prospector"),
    ] {
        let doc: Value = anonymous.get(&format!("{public}/openapi/{name}")).await.json().await.unwrap();
        assert_eq!(doc["servers"], json!([{ "url": format!("{public}{base}") }]), "{name}");
        let flow = &doc["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"];
        assert_eq!(flow["authorizationUrl"], format!("{public}/oauth/authorize").as_str(), "{name}");
        assert_eq!(flow["tokenUrl"], format!("{public}/oauth/token").as_str(), "{name}");
    }

    // Signing out: back to the sign-in page under the prefix, the prefix's cookie cleared.
    let out = browser.post_form(&format!("{public}/logout"), &[("csrf".into(), csrf)]).await;
    assert_eq!(out.status(), 303);
    assert_eq!(Browser::follow(&out), format!("{public}/login"));
    let cleared = out.headers()["set-cookie"].to_str().unwrap();
    assert!(cleared.contains("Max-Age=0") && cleared.contains("; Path=/sw;"), "{cleared}");
}

#[test]
fn the_test_proxy_forwards_the_prefix_stripped_and_its_well_known_documents_unchanged() {
    let t = |pq: &str| common::proxy::target("/sw", pq);
    assert_eq!(t("/sw/login?next=%2F").as_deref(), Some("/login?next=%2F"));
    assert_eq!(t("/sw").as_deref(), Some("/"));
    assert_eq!(t("/swx/login"), None);
    assert_eq!(t("/login"), None);
    assert_eq!(
        t("/.well-known/oauth-authorization-server/sw").as_deref(),
        Some("/.well-known/oauth-authorization-server/sw")
    );
    assert_eq!(
        t("/.well-known/oauth-protected-resource/sw/api/mcp").as_deref(),
        Some("/.well-known/oauth-protected-resource/sw/api/mcp")
    );
    assert_eq!(t("/.well-known/openid-configuration/sw").as_deref(), Some("/.well-known/openid-configuration/sw"));
    assert_eq!(t("/.well-known/oauth-protected-resource/swx"), None);
}

/// The headers one client sends (name, value).
type Headers<'a> = &'a [(&'a str, &'a str)];

/// `X-RateLimit-Remaining` and `-Reset` of an anonymous prospector request sent with `headers`.
async fn anonymous_request(url: &str, headers: Headers<'_>) -> (i64, i64) {
    let mut rb = reqwest::Client::new().get(url);
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let resp = rb.send().await.unwrap();
    assert_eq!(resp.status(), 401);
    let h = |n: &str| resp.headers()[n].to_str().unwrap().parse::<i64>().unwrap();
    (h("x-ratelimit-remaining"), h("x-ratelimit-reset"))
}

/// The `Remaining` counts of anonymous requests sent to `url` one after the other, each with its
/// headers, all in one rate-limit window (the sequence is repeated if a window ends within it).
async fn remaining(requests: &[(&str, Headers<'_>)]) -> Vec<i64> {
    for _ in 0..3 {
        let mut seen = Vec::new();
        for (url, headers) in requests {
            seen.push(anonymous_request(url, headers).await);
        }
        if seen.iter().all(|(_, reset)| *reset == seen[0].1) {
            return seen.into_iter().map(|(remaining, _)| remaining).collect();
        }
    }
    panic!("three attempts crossed a rate-limit window");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_each_anonymous_client_has_its_own_rate_limit_bucket() {
    let (server, public) = behind_proxy(|c| c.trusted_proxies = "127.0.0.1/32".parse().unwrap()).await;
    // Through the proxy, which appends its peer to the X-Forwarded-For an outer proxy wrote.
    let leads = format!("{public}/v1/prospector/leads");
    let a: Headers = &[("x-forwarded-for", "203.0.113.7")];
    let b: Headers = &[("x-forwarded-for", "198.51.100.9")];
    let seen = remaining(&[(&leads, a), (&leads, a), (&leads, a), (&leads, b)]).await;
    assert_eq!(seen, [59, 58, 57, 59], "separate buckets behind the trusted proxy");
    // Straight to the server (a trusted peer) with RFC 7239 Forwarded; the first client again
    // through X-Forwarded-For shares its bucket.
    let direct = server.url("/v1/prospector/leads");
    let a: Headers = &[("forwarded", "for=\"[2001:db8::1]:4711\";proto=https")];
    let b: Headers = &[("forwarded", "for=192.0.2.60;proto=http;by=203.0.113.43")];
    let a_again: Headers = &[("x-forwarded-for", "2001:db8::1")];
    let seen = remaining(&[(&direct, a), (&direct, a), (&direct, a), (&direct, b), (&direct, a_again)]).await;
    assert_eq!(seen, [59, 58, 57, 59, 56], "separate buckets from Forwarded; one client, one bucket");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_an_untrusted_peer_forwarding_headers_are_ignored() {
    let (server, public) = behind_proxy(|_| {}).await;
    let leads = format!("{public}/v1/prospector/leads");
    let direct = server.url("/v1/prospector/leads");
    let a: Headers = &[("x-forwarded-for", "203.0.113.7")];
    let b: Headers = &[("x-forwarded-for", "198.51.100.9")];
    let c: Headers = &[("forwarded", "for=192.0.2.60")];
    let seen = remaining(&[(&leads, a), (&leads, a), (&leads, a), (&leads, b), (&direct, c)]).await;
    assert_eq!(seen, [59, 58, 57, 56, 55], "no trusted proxy: one bucket for the peer's address");
}

/// Five wrong passwords for alice from one client behind the proxy.
async fn lock_out(public: &str, client: &str) {
    for _ in 0..5 {
        let resp = reqwest::Client::new()
            .post(format!("{public}/login"))
            .header("x-forwarded-for", client)
            .form(&[("username", "alice"), ("password", "guess"), ("next", "/console/")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401);
    }
}

async fn sign_in_status(public: &str, client: &str) -> u16 {
    let resp = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
        .post(format!("{public}/login"))
        .header("x-forwarded-for", client)
        .form(&[("username", "alice"), ("password", PASSWORD), ("next", "/console/")])
        .send()
        .await
        .unwrap();
    resp.status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_throttling_counts_per_client_behind_a_trusted_proxy_only() {
    let (_server, public) = behind_proxy(|c| c.trusted_proxies = "127.0.0.0/8, ::1".parse().unwrap()).await;
    lock_out(&public, "203.0.113.7").await;
    assert_eq!(sign_in_status(&public, "203.0.113.7").await, 429, "the guessing client waits");
    assert_eq!(sign_in_status(&public, "198.51.100.9").await, 303, "another client behind the proxy is not locked out");

    let (_server, public) = behind_proxy(|_| {}).await;
    lock_out(&public, "203.0.113.7").await;
    assert_eq!(
        sign_in_status(&public, "198.51.100.9").await,
        429,
        "without trusted proxies every client is the proxy's address (the header is not believed)"
    );
}
