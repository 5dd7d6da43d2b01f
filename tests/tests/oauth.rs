//! The embedded OAuth 2.1 authorization server, driven over HTTP the way a client and a person
//! with a browser would: metadata, registration, sign-in, consent, PKCE, codes, refresh-token
//! rotation, revocation, signing-key rotation, and the session cookie at the REST API.

mod common;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::redirect::Policy;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const PASSWORD: &str = "correct horse battery";
const CALLBACK: &str = "http://127.0.0.1:53682/callback";

/// An HTTP client that does not follow redirects (each step is checked).
fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(Policy::none()).build().unwrap()
}

fn location(resp: &reqwest::Response) -> String {
    resp.headers().get("location").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default()
}

/// The query parameters of a URL.
fn query(url: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(url).unwrap().query_pairs().into_owned().collect()
}

fn param(url: &str, name: &str) -> Option<String> {
    query(url).into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// The hidden fields of the consent form.
fn hidden_fields(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .map(|rest| {
            let attr = |name: &str| {
                let start = rest.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                unescape(&rest[start..start + rest[start..].find('"').unwrap()])
            };
            (attr("name"), attr("value"))
        })
        .collect()
}

/// PKCE: a verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let verifier = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// A person with a browser (cookies kept by hand) and a registered client.
struct Browser<'a> {
    server: &'a common::TestServer,
    http: reqwest::Client,
    cookie: Option<String>,
    client_id: String,
}

impl<'a> Browser<'a> {
    async fn new(server: &'a common::TestServer) -> Browser<'a> {
        let resp = http()
            .post(server.url("/oauth/register"))
            .json(&json!({ "client_name": "Test <Agent>", "redirect_uris": [CALLBACK] }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
        let doc: Value = resp.json().await.unwrap();
        assert_eq!(doc["token_endpoint_auth_method"], "none");
        Browser::named(server, doc["client_id"].as_str().unwrap())
    }

    /// A browser for the client `client_id` (registered or named by its metadata document).
    fn named(server: &'a common::TestServer, client_id: &str) -> Browser<'a> {
        Browser { server, http: http(), cookie: None, client_id: client_id.to_string() }
    }

    fn authorize_url(&self, scope: &str, challenge: &str, extra: &[(&str, &str)]) -> String {
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", self.client_id.as_str()),
            ("redirect_uri", CALLBACK),
            ("scope", scope),
            ("state", "st-42"),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
        ];
        params.extend_from_slice(extra);
        format!("{}?{}", self.server.url("/oauth/authorize"), serde_urlencoded::to_string(&params).unwrap())
    }

    async fn get(&self, url: &str) -> reqwest::Response {
        let mut rb = self.http.get(url);
        if let Some(c) = &self.cookie {
            rb = rb.header("cookie", c);
        }
        rb.send().await.unwrap()
    }

    async fn post_form(&self, path: &str, form: &[(String, String)]) -> reqwest::Response {
        let mut rb = self.http.post(self.server.url(path)).form(form);
        if let Some(c) = &self.cookie {
            rb = rb.header("cookie", c);
        }
        rb.send().await.unwrap()
    }

    async fn sign_in(&mut self, user: &str, password: &str, next: &str) -> reqwest::Response {
        let form = [("username", user), ("password", password), ("next", next)].map(|(k, v)| (k.into(), v.into()));
        let resp = self.post_form("/login", &form).await;
        if let Some(set) = resp.headers().get("set-cookie") {
            let set = set.to_str().unwrap();
            assert!(set.contains("HttpOnly") && set.contains("SameSite=Lax"), "{set}");
            self.cookie = Some(set.split(';').next().unwrap().to_string());
        }
        resp
    }

    /// Runs authorize → (sign-in) → (consent, approved) and returns the redirect to the client and
    /// whether a consent page was shown.
    async fn authorize(&mut self, scope: &str, challenge: &str, extra: &[(&str, &str)]) -> (String, bool) {
        let mut resp = self.get(&self.authorize_url(scope, challenge, extra)).await;
        if resp.status() == 302 && location(&resp).contains("/login?") {
            let next = param(&location(&resp), "next").unwrap();
            let signed_in = self.sign_in("alice", PASSWORD, &next).await;
            assert_eq!(signed_in.status(), 303);
            resp = self.get(&self.server.url(&location(&signed_in))).await;
        }
        if resp.status() == 302 {
            return (location(&resp), false);
        }
        assert_eq!(resp.status(), 200, "consent page expected");
        let html = resp.text().await.unwrap();
        for s in scope.split_whitespace() {
            let description = match vault_api::vault::SERVICE.scopes.iter().find(|i| i.name == s) {
                Some(info) => info.description.replace('\'', "&#39;"),
                None => "Learn who you are".to_string(),
            };
            assert!(html.contains(s) && html.contains(&description), "{s} shown: {html}");
        }
        assert!(html.contains("Test &lt;Agent&gt;"), "client name escaped: {html}");
        let mut form = hidden_fields(&html);
        form.push(("decision".into(), "approve".into()));
        let approved = self.post_form("/oauth/authorize", &form).await;
        assert_eq!(approved.status(), 303);
        (location(&approved), true)
    }

    async fn token(&self, form: &[(&str, &str)]) -> (u16, Value) {
        let resp = self.http.post(self.server.url("/oauth/token")).form(form).send().await.unwrap();
        assert_eq!(resp.headers().get("cache-control").unwrap(), "no-store");
        (resp.status().as_u16(), resp.json().await.unwrap())
    }

    async fn exchange(&self, code: &str, verifier: &str) -> (u16, Value) {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("client_id", &self.client_id),
            ("code_verifier", verifier),
        ])
        .await
    }

    async fn refresh(&self, token: &str) -> (u16, Value) {
        self.token(&[("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", &self.client_id)]).await
    }

    /// A fresh code for `scope` (consent given if asked).
    async fn code(&mut self, scope: &str) -> (String, String) {
        let (verifier, challenge) = pkce();
        let (to, _) = self.authorize(scope, &challenge, &[]).await;
        (param(&to, "code").expect("code"), verifier)
    }
}

async fn with_user(server: &common::TestServer) {
    server.tenant("acme", "alice").await;
    runtime::oauth::users::add(&server.state.store, "alice", "acme", PASSWORD).await.unwrap();
}

fn claims_of(jwt: &str) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(jwt.split('.').nth(1).unwrap()).unwrap()).unwrap()
}

#[tokio::test]
async fn metadata_advertises_endpoints_scopes_and_pkce_and_the_prm_points_at_it() {
    let server = common::TestServer::start().await;
    let issuer = server.base.clone();
    let rfc8414: Value =
        reqwest::get(server.url("/.well-known/oauth-authorization-server")).await.unwrap().json().await.unwrap();
    for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
        let doc: Value = reqwest::get(server.url(path)).await.unwrap().json().await.unwrap();
        assert_eq!(doc, rfc8414, "one document at both locations");
        assert_eq!(doc["issuer"], issuer.as_str());
        assert_eq!(doc["authorization_endpoint"], format!("{issuer}/oauth/authorize"));
        assert_eq!(doc["token_endpoint"], format!("{issuer}/oauth/token"));
        assert_eq!(doc["registration_endpoint"], format!("{issuer}/oauth/register"));
        assert_eq!(doc["jwks_uri"], format!("{issuer}/.well-known/jwks.json"));
        assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(doc["authorization_response_iss_parameter_supported"], true);
        assert_eq!(
            doc["scopes_supported"],
            json!(["vault:read", "vault:write", "vault:admin", "prospector", "openid"])
        );
        // What OpenID Connect Discovery 1.0 section 3 requires of a provider.
        assert_eq!(doc["userinfo_endpoint"], format!("{issuer}/oauth/userinfo"));
        assert_eq!(doc["subject_types_supported"], json!(["public"]));
        assert_eq!(doc["id_token_signing_alg_values_supported"], json!(["RS256"]));
        assert_eq!(doc["response_types_supported"], json!(["code"]));
    }
    let prm: Value =
        reqwest::get(server.url("/.well-known/oauth-protected-resource/api/mcp")).await.unwrap().json().await.unwrap();
    assert_eq!(prm["authorization_servers"], json!([issuer]));
}

on_both_backends!(sign_in_consent_once_code_and_rotating_refresh, |server| {
    with_user(&server).await;
    let mut browser = Browser::new(&server).await;
    let (verifier, challenge) = pkce();
    let mcp = server.url("/api/mcp");

    // Not signed in: the sign-in page first; a wrong password is refused without a session.
    let first = browser.get(&browser.authorize_url("vault:read", &challenge, &[("resource", &mcp)])).await;
    assert_eq!(first.status(), 302);
    let next = param(&location(&first), "next").unwrap();
    let wrong = browser.sign_in("alice", "not the password", &next).await;
    assert_eq!(wrong.status(), 401);
    assert!(wrong.headers().get("set-cookie").is_none());
    assert!(wrong.text().await.unwrap().contains("Wrong user name or password."));

    let (to, consented) = browser.authorize("vault:read", &challenge, &[("resource", &mcp)]).await;
    assert!(consented, "first use asks for consent");
    assert!(to.starts_with(CALLBACK), "{to}");
    assert_eq!(param(&to, "state").as_deref(), Some("st-42"));
    assert_eq!(param(&to, "iss").as_deref(), Some(server.base.as_str()));
    let (status, tokens) = browser.exchange(&param(&to, "code").unwrap(), &verifier).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["scope"], "vault:read");
    let access = tokens["access_token"].as_str().unwrap();
    let claims = claims_of(access);
    assert_eq!(claims["sub"], "alice");
    assert_eq!(claims["tenant"], "acme");
    assert_eq!(claims["scope"], "vault:read");
    assert_eq!(claims["iss"], server.base.as_str());
    assert_eq!(claims["aud"], json!([mcp]), "RFC 8707: the resource decides the audience");
    assert!(claims["exp"].as_i64().unwrap() > chrono::Utc::now().timestamp());

    // The audience is the MCP endpoint only: the REST API refuses the token.
    let (status, _) = server.call("GET", "/api/v1/credentials", access, None).await;
    assert_eq!(status, 401);

    // Consent is remembered: the same (or a narrower) request goes straight back with a code.
    let (to, consented) = browser.authorize("vault:read", &challenge, &[("resource", &mcp)]).await;
    assert!(!consented && param(&to, "code").is_some(), "{to}");
    // A wider scope set asks again.
    let (verifier, challenge) = pkce();
    let (to, consented) = browser.authorize("vault:read vault:write", &challenge, &[]).await;
    assert!(consented);
    let (status, tokens) = browser.exchange(&param(&to, "code").unwrap(), &verifier).await;
    assert_eq!(status, 200);
    assert_eq!(tokens["scope"], "vault:read vault:write");
    // Without a resource the token is for the vault's REST API and MCP endpoint.
    let access = tokens["access_token"].as_str().unwrap();
    let (status, body) = server.call("GET", "/api/v1/credentials", access, None).await;
    assert_eq!(status, 200, "{body}");

    // Refresh: rotated on use; replaying the old one revokes the whole family.
    let r1 = tokens["refresh_token"].as_str().unwrap().to_string();
    let (status, second) = browser.refresh(&r1).await;
    assert_eq!(status, 200, "{second}");
    let r2 = second["refresh_token"].as_str().unwrap().to_string();
    assert_ne!(r1, r2);
    let (status, err) = browser.refresh(&r1).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")));
    let (status, err) = browser.refresh(&r2).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "family revoked: {err}");

    // Narrowing at refresh is allowed, widening is not; revocation ends the token.
    let (code, verifier) = browser.code("vault:read vault:write").await;
    let (_, tokens) = browser.exchange(&code, &verifier).await;
    let r = tokens["refresh_token"].as_str().unwrap().to_string();
    let widen = browser
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &r),
            ("client_id", &browser.client_id),
            ("scope", "vault:admin"),
        ])
        .await;
    assert_eq!(widen.1["error"], "invalid_scope");
    // A refused request does not burn the token: validation comes first, the claim last (it used
    // to mark the token used, so the next valid refresh looked like a replay and revoked all).
    let foreign = browser
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &r),
            ("client_id", &browser.client_id),
            ("resource", "https://elsewhere.example/api"),
        ])
        .await;
    assert_eq!(foreign.1["error"], "invalid_target", "{}", foreign.1);
    let (status, after) = browser.refresh(&r).await;
    assert_eq!(status, 200, "the token still works after invalid_scope and invalid_target: {after}");
    let r = after["refresh_token"].as_str().unwrap().to_string();
    let (status, narrowed) = browser
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &r),
            ("client_id", &browser.client_id),
            ("scope", "vault:read"),
        ])
        .await;
    assert_eq!((status, narrowed["scope"].as_str()), (200, Some("vault:read")));
    let r = narrowed["refresh_token"].as_str().unwrap().to_string();
    let revoked = browser.http.post(server.url("/oauth/revoke")).form(&[("token", r.as_str())]).send().await.unwrap();
    assert_eq!(revoked.status(), 200);
    let (status, err) = browser.refresh(&r).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")));
});

on_both_backends!(authorization_code_misuse_gets_the_rfc_errors_and_no_token, |server| {
    with_user(&server).await;
    let mut browser = Browser::new(&server).await;

    // Reused code: the second redemption fails and revokes what the first one issued.
    let (code, verifier) = browser.code("vault:read").await;
    let (status, first) = browser.exchange(&code, &verifier).await;
    assert_eq!(status, 200);
    let (status, again) = browser.exchange(&code, &verifier).await;
    assert_eq!((status, again["error"].as_str()), (400, Some("invalid_grant")), "{again}");
    assert!(again.get("access_token").is_none());
    let refresh = first["refresh_token"].as_str().unwrap();
    let (status, err) = browser
        .token(&[("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", &browser.client_id)])
        .await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "tokens of a replayed code are revoked");

    // Wrong verifier.
    let (code, _) = browser.code("vault:read").await;
    let (other, _) = pkce();
    let (status, err) = browser.exchange(&code, &other).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "{err}");
    assert!(err.get("access_token").is_none());

    // Wrong redirect URI at the token endpoint.
    let (code, verifier) = browser.code("vault:read").await;
    let (status, err) = browser
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:9999/elsewhere"),
            ("client_id", &browser.client_id),
            ("code_verifier", &verifier),
        ])
        .await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "{err}");

    // Unregistered client at the token endpoint: 401 invalid_client.
    let (code, verifier) = browser.code("vault:read").await;
    let (status, err) = browser
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("client_id", "swc_not_registered"),
            ("code_verifier", &verifier),
        ])
        .await;
    assert_eq!((status, err["error"].as_str()), (401, Some("invalid_client")), "{err}");
    // A code issued to one client is useless to another.
    let thief = Browser::new(&server).await;
    let (status, err) = thief.exchange(&code, &verifier).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "{err}");

    // Unknown grant type, missing PKCE.
    let (status, err) = browser.token(&[("grant_type", "password"), ("client_id", &browser.client_id)]).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("unsupported_grant_type")));
    let url = browser.authorize_url("vault:read", "x", &[]).replace("&code_challenge=x&code_challenge_method=S256", "");
    let resp = browser.get(&url).await;
    assert_eq!(resp.status(), 302);
    assert_eq!(param(&location(&resp), "error").as_deref(), Some("invalid_request"));
    assert_eq!(param(&location(&resp), "state").as_deref(), Some("st-42"));

    // Unregistered client or redirect URI at authorize: an error page, never a redirect.
    let (_, challenge) = pkce();
    let unknown = browser.authorize_url("vault:read", &challenge, &[]).replace(&browser.client_id, "swc_nobody");
    let resp = browser.get(&unknown).await;
    assert_eq!(resp.status(), 400);
    assert!(resp.headers().get("location").is_none());
    let evil = browser.authorize_url("vault:read", &challenge, &[]).replace("53682", "53683");
    let resp = browser.get(&evil).await;
    assert_eq!(resp.status(), 400, "redirect URIs match exactly");
    assert!(resp.headers().get("location").is_none());

    // Unknown scope and foreign resource go back to the client as errors.
    let resp = browser.get(&browser.authorize_url("vault:everything", &challenge, &[])).await;
    assert_eq!(param(&location(&resp), "error").as_deref(), Some("invalid_scope"));
    let resp = browser
        .get(&browser.authorize_url("vault:read", &challenge, &[("resource", "https://elsewhere.example/api")]))
        .await;
    assert_eq!(param(&location(&resp), "error").as_deref(), Some("invalid_target"));

    // Denying consent answers access_denied.
    let (_, challenge) = pkce();
    let page = browser.get(&browser.authorize_url("vault:admin", &challenge, &[])).await;
    let mut form = hidden_fields(&page.text().await.unwrap());
    form.push(("decision".into(), "deny".into()));
    let denied = browser.post_form("/oauth/authorize", &form).await;
    assert_eq!(param(&location(&denied), "error").as_deref(), Some("access_denied"));
    // An approval without the session's CSRF token grants nothing.
    let forged: Vec<(String, String)> = form
        .iter()
        .map(|(k, v)| {
            if k == "csrf" {
                (k.clone(), "forged".into())
            } else if k == "decision" {
                (k.clone(), "approve".into())
            } else {
                (k.clone(), v.clone())
            }
        })
        .collect();
    let resp = browser.post_form("/oauth/authorize", &forged).await;
    assert_eq!(resp.status(), 403);
    assert!(resp.headers().get("location").is_none());
});

#[tokio::test]
async fn an_expired_code_is_refused() {
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |c, _| c.oauth_code_ttl_seconds = 1)
        .await
        .unwrap();
    with_user(&server).await;
    let mut browser = Browser::new(&server).await;
    let (code, verifier) = browser.code("vault:read").await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let (status, err) = browser.exchange(&code, &verifier).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "{err}");
    assert!(err["error_description"].as_str().unwrap().contains("expired"));
}

#[tokio::test]
async fn registration_accepts_only_loopback_or_https_redirect_uris() {
    let server = common::TestServer::start().await;
    let register = |body: String| {
        let url = server.url("/oauth/register");
        async move {
            let resp = http().post(url).header("content-type", "application/json").body(body).send().await.unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    for (uris, ok) in [
        (json!(["https://app.example.com/cb"]), true),
        (json!(["http://localhost:8080/cb"]), true),
        (json!(["http://[::1]:8080/cb"]), true),
        (json!(["http://app.example.com/cb"]), false),
        (json!(["https://app.example.com/cb#frag"]), false),
        (json!(["javascript:alert(1)"]), false),
        (json!(["/relative"]), false),
        (json!([]), false),
        (json!("https://app.example.com/cb"), false),
    ] {
        let (status, body) = register(json!({ "redirect_uris": uris }).to_string()).await;
        if ok {
            assert_eq!(status, 201, "{uris}: {body}");
        } else {
            assert_eq!(status, 400, "{uris}: {body}");
            assert!(
                matches!(body["error"].as_str(), Some("invalid_redirect_uri" | "invalid_client_metadata")),
                "{body}"
            );
        }
    }
    let (status, body) =
        register(json!({ "redirect_uris": [CALLBACK], "grant_types": ["client_credentials"] }).to_string()).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_client_metadata")));
    let (status, _) = register("{not json".into()).await;
    assert_eq!(status, 400);

    // The application type MCP clients send (OpenID Connect Dynamic Client Registration): a native
    // application redirects to a loopback host or an https URL it claims, a web application to
    // a host that is not a loopback one; the registration answers it back.
    for (kind, uri, expected) in [
        (json!("native"), "http://127.0.0.1:8765/cb", Some("native")),
        (json!("native"), "https://app.example.com/cb", Some("native")),
        (json!("web"), "https://app.example.com/cb", Some("web")),
        (json!("web"), "http://localhost:6274/oauth/callback", None),
        (json!("web"), "https://127.0.0.1/cb", None),
        (json!("spa"), "https://app.example.com/cb", None),
        (json!(7), "https://app.example.com/cb", None),
    ] {
        let (status, body) = register(json!({ "redirect_uris": [uri], "application_type": kind }).to_string()).await;
        match expected {
            Some(kind) => assert_eq!((status, body["application_type"].as_str()), (201, Some(kind)), "{body}"),
            None => {
                assert_eq!(status, 400, "{kind} {uri}: {body}");
                assert!(body["error_description"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
            }
        }
    }
}

/// An operator who wants clients to identify themselves otherwise turns self-registration off:
/// the metadata stops naming the endpoint, and the endpoint is gone.
#[tokio::test]
async fn dynamic_registration_can_be_turned_off() {
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |config, _| {
        config.dynamic_registration = false;
    })
    .await
    .unwrap();
    let metadata: Value =
        http().get(server.url("/.well-known/oauth-authorization-server")).send().await.unwrap().json().await.unwrap();
    assert!(metadata.get("registration_endpoint").is_none(), "{metadata}");
    assert!(metadata.get("token_endpoint").is_some());
    let resp = http()
        .post(server.url("/oauth/register"))
        .header("content-type", "application/json")
        .body(json!({ "redirect_uris": [CALLBACK] }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn rotating_the_signing_key_keeps_live_tokens_valid() {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let before = server.token_for("alice", "acme", "vault:read");
    let rotation = runtime::keys::SigningKeys::rotate(server.dir.path()).unwrap();
    assert_ne!(rotation.previous, rotation.active);
    // What `specwright token` does after the rotation: sign with the new key.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let cli = runtime::keys::SigningKeys::load_or_create(server.dir.path()).unwrap();
    let c = &server.state.config;
    let after = cli
        .mint(&runtime::keys::claims(
            &c.issuer(),
            "alice",
            "acme",
            "vault:read",
            specwright::catalog().resources(c),
            600,
            None,
        ))
        .unwrap();
    for token in [&before, &after] {
        let (status, body) = server.call("GET", "/api/v1/credentials", token, None).await;
        assert_eq!(status, 200, "{body}");
    }
    let jwks: Value = reqwest::get(server.url("/.well-known/jwks.json")).await.unwrap().json().await.unwrap();
    let kids: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert_eq!(
        kids,
        [
            rotation.active.as_str(),
            rotation.previous.as_str(),
            rotation.id_active.as_str(),
            rotation.id_previous.as_str()
        ]
    );
    // Retiring the old keys ends the tokens they signed.
    runtime::keys::SigningKeys::retire(server.dir.path(), &rotation.previous).unwrap();
    runtime::keys::SigningKeys::retire(server.dir.path(), &rotation.id_previous).unwrap();
    assert!(
        runtime::keys::SigningKeys::retire(server.dir.path(), &rotation.id_active).is_err(),
        "the active key stays"
    );
    std::thread::sleep(std::time::Duration::from_millis(5100));
    let (status, _) = server.call("GET", "/api/v1/credentials", &before, None).await;
    assert_eq!(status, 401);
    let left: Value = reqwest::get(server.url("/.well-known/jwks.json")).await.unwrap().json().await.unwrap();
    let kids: Vec<&str> = left["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert_eq!(kids, [rotation.active.as_str(), rotation.id_active.as_str()]);
}

on_both_backends!(session_cookies_meet_rbac_tenancy_and_csrf_but_no_scopes, |server| {
    with_user(&server).await;
    server.tenant("globex", "gary").await;
    // bob is a member of acme with no grants; he signs in too.
    let admin = server.token_for("alice", "acme", "vault:admin");
    let (status, _) = server
        .call("PUT", "/api/v1/tenants/acme/role-assignments/bob", &admin, Some(json!({ "role": "member" })))
        .await;
    assert_eq!(status, 200);
    runtime::oauth::users::add(&server.state.store, "bob", "acme", PASSWORD).await.unwrap();
    let write = server.token_for("alice", "acme", "vault:write");
    let (status, body) =
        server.call("POST", "/api/v1/credentials", &write, Some(json!({ "key": "db", "value": "s3cret" }))).await;
    assert_eq!(status, 201, "{body}");
    let gary = server.token_for("gary", "globex", "vault:write");
    let (status, _) =
        server.call("POST", "/api/v1/credentials", &gary, Some(json!({ "key": "theirs", "value": "x" }))).await;
    assert_eq!(status, 201);

    let signed_in = |user: &'static str| {
        let server = &server;
        async move {
            let mut b = Browser { server, http: http(), cookie: None, client_id: String::new() };
            assert_eq!(b.sign_in(user, PASSWORD, "/console/").await.status(), 303);
            let csrf: Value = b.get(&server.url("/console/session")).await.json().await.unwrap();
            (b.cookie.unwrap(), csrf["csrf_token"].as_str().unwrap().to_string())
        }
    };
    let (alice, alice_csrf) = signed_in("alice").await;
    let (bob, _) = signed_in("bob").await;
    let send =
        |method: &str, path: &str, cookie: &str, csrf: Option<&str>, origin: Option<&str>, body: Option<Value>| {
            let mut rb = http()
                .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), server.url(path))
                .header("cookie", cookie);
            if let Some(t) = csrf {
                rb = rb.header("x-csrf-token", t);
            }
            if let Some(o) = origin {
                rb = rb.header("origin", o);
            }
            if let Some(b) = body {
                rb = rb.json(&b);
            }
            async move {
                let resp = rb.send().await.unwrap();
                (resp.status().as_u16(), resp.json::<Value>().await.unwrap_or(Value::Null))
            }
        };
    // No scope applies to a session: alice (tenant admin) reads and writes with the cookie alone.
    let (status, body) = send("GET", "/api/v1/credentials/db", &alice, None, None, None).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        "POST",
        "/api/v1/credentials/db/rotate",
        &alice,
        Some(&alice_csrf),
        Some(&server.base),
        Some(json!({ "value": "n3w" })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // bob has no grant: RBAC denies him though no scope check applies.
    let (status, body) = send("GET", "/api/v1/credentials/db", &bob, None, None, None).await;
    assert!(status == 403 || status == 404, "RBAC applies to sessions: {status} {body}");
    let (status, body) = send("GET", "/api/v1/credentials", &bob, None, None, None).await;
    assert_eq!((status, body["data"].as_array().map(Vec::len)), (200, Some(0)), "{body}");
    // Another tenant's credential is simply not there.
    let (status, _) = send("GET", "/api/v1/credentials/theirs", &alice, None, None, None).await;
    assert_eq!(status, 404);
    // A cross-site POST (no CSRF proof, or a foreign Origin) fails and changes nothing.
    let (status, body) =
        send("POST", "/api/v1/credentials", &alice, None, None, Some(json!({ "key": "csrf", "value": "x" }))).await;
    assert_eq!(status, 401, "{body}");
    let (status, _) = send(
        "POST",
        "/api/v1/credentials",
        &alice,
        Some(&alice_csrf),
        Some("https://evil.example"),
        Some(json!({ "key": "csrf", "value": "x" })),
    )
    .await;
    assert_eq!(status, 401);
    let (status, _) = send(
        "POST",
        "/api/v1/credentials",
        &alice,
        Some("wrong"),
        Some(&server.base),
        Some(json!({ "key": "csrf", "value": "x" })),
    )
    .await;
    assert_eq!(status, 401);
    let (status, _) = send("GET", "/api/v1/credentials/csrf", &alice, None, None, None).await;
    assert_eq!(status, 404, "nothing was stored");
    // The session is audited as such.
    let (_, audit) = server.call("GET", "/api/v1/audit?per_page=100", &admin, None).await;
    assert!(audit["data"].as_array().unwrap().iter().any(|e| e["auth_method"] == "session"), "{audit}");
    // Signing out ends the session for the API too.
    let out = http()
        .post(server.url("/logout"))
        .header("cookie", &alice)
        .form(&[("csrf", alice_csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 303);
    let (status, _) = send("GET", "/api/v1/credentials/db", &alice, None, None, None).await;
    assert_eq!(status, 401);
});

#[tokio::test]
async fn repeated_wrong_passwords_are_throttled_and_removed_users_lose_their_grants() {
    let server = common::TestServer::start().await;
    with_user(&server).await;
    let mut browser = Browser::new(&server).await;
    for _ in 0..5 {
        assert_eq!(browser.sign_in("alice", "guess", "/console/").await.status(), 401);
    }
    // Even the right password waits now: guessing cannot continue at speed.
    let blocked = browser.sign_in("alice", PASSWORD, "/console/").await;
    assert_eq!(blocked.status(), 429);
    assert!(blocked.headers().get("retry-after").is_some());
    assert!(blocked.headers().get("set-cookie").is_none());
    // Another user from the same address is not locked out by alice's failures.
    runtime::oauth::users::add(&server.state.store, "bob", "acme", PASSWORD).await.unwrap();
    assert_eq!(browser.sign_in("bob", PASSWORD, "/console/").await.status(), 303);

    // bob authorizes a client, then is removed: his refresh token and session stop working.
    let (verifier, challenge) = pkce();
    let url = browser.authorize_url("vault:read", &challenge, &[]);
    let page = browser.get(&url).await;
    assert_eq!(page.status(), 200);
    let mut form = hidden_fields(&page.text().await.unwrap());
    form.push(("decision".into(), "approve".into()));
    let to = location(&browser.post_form("/oauth/authorize", &form).await);
    let (status, tokens) = browser.exchange(&param(&to, "code").unwrap(), &verifier).await;
    assert_eq!(status, 200);
    assert!(runtime::oauth::users::remove(&server.state.store, "bob").await.unwrap());
    let (status, err) = browser.refresh(tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")));
    let session = browser.get(&server.url("/console/session")).await;
    assert_eq!(session.status(), 401);
}

#[tokio::test]
async fn the_documentation_page_signs_in_through_the_embedded_server() {
    let server = common::TestServer::start().await;
    with_user(&server).await;
    let init = reqwest::get(server.url("/docs/swagger-initializer.js")).await.unwrap().text().await.unwrap();
    assert!(init.contains("specwright-docs") && init.contains("usePkceWithAuthorizationCodeGrant"), "{init}");
    // The page's redirect URI is registered for its client: the flow runs to a code for it.
    let mut browser = Browser::new(&server).await;
    browser.client_id = runtime::oauth::DOCS_CLIENT_ID.into();
    let (verifier, challenge) = pkce();
    let redirect = server.url("/docs/oauth2-redirect.html");
    let encoded = |s: &str| serde_urlencoded::to_string([("r", s)]).unwrap()[2..].to_string();
    let url = browser.authorize_url("vault:read", &challenge, &[]).replace(&encoded(CALLBACK), &encoded(&redirect));
    let resp = browser.get(&url).await;
    let next = param(&location(&resp), "next").expect("sign-in first");
    assert_eq!(browser.sign_in("alice", PASSWORD, &next).await.status(), 303);
    let page = browser.get(&server.url(&next)).await;
    let mut form = hidden_fields(&page.text().await.unwrap());
    form.push(("decision".into(), "approve".into()));
    let to = location(&browser.post_form("/oauth/authorize", &form).await);
    assert!(to.starts_with(&redirect), "{to}");
    let (status, tokens) = browser
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &param(&to, "code").unwrap()),
            ("redirect_uri", &redirect),
            ("client_id", runtime::oauth::DOCS_CLIENT_ID),
            ("code_verifier", &verifier),
        ])
        .await;
    assert_eq!(status, 200, "{tokens}");
    let (status, _) = server.call("GET", "/api/v1/credentials", tokens["access_token"].as_str().unwrap(), None).await;
    assert_eq!(status, 200);
}

/// One answer of the client's host: status, headers, body.
type Answer = (u16, Vec<(&'static str, String)>, String);

/// What a client publishes on its own host: metadata documents and key sets, each answered with
/// the status and headers a test sets, and how often each was fetched.
#[derive(Clone, Default)]
struct ClientHost {
    served: Arc<Mutex<HashMap<String, Answer>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    base: String,
}

impl ClientHost {
    async fn start() -> ClientHost {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let host = ClientHost { base: format!("http://{}", listener.local_addr().unwrap()), ..Default::default() };
        let shared = host.clone();
        let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
            let shared = shared.clone();
            async move {
                let path = uri.path().to_string();
                *shared.hits.lock().unwrap().entry(path.clone()).or_default() += 1;
                let Some((status, headers, body)) = shared.served.lock().unwrap().get(&path).cloned() else {
                    return axum::http::Response::builder().status(404).body(axum::body::Body::empty()).unwrap();
                };
                let mut resp = axum::http::Response::builder().status(status);
                for (k, v) in headers {
                    resp = resp.header(k, v);
                }
                resp.body(axum::body::Body::from(body)).unwrap()
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        host
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn serve(&self, path: &str, status: u16, headers: &[(&'static str, &str)], body: String) {
        let headers = headers.iter().map(|(k, v)| (*k, v.to_string())).collect();
        self.served.lock().unwrap().insert(path.to_string(), (status, headers, body));
    }

    /// Serves at `path` the metadata document of a client whose id is that URL, with `extra`
    /// fields, kept for five minutes.
    fn document(&self, path: &str, extra: Value) -> String {
        let id = self.url(path);
        let mut doc = json!({ "client_id": id, "client_name": "Test <Agent>", "redirect_uris": [CALLBACK] });
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        self.serve(
            path,
            200,
            &[("content-type", "application/json"), ("cache-control", "max-age=300")],
            doc.to_string(),
        );
        id
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

/// A server that fetches client metadata documents from this machine (tests only).
async fn fetching_locally(backend: common::Backend) -> Option<common::TestServer> {
    common::TestServer::start_configured(backend, |config, _| config.client_documents.allow_private = true).await
}

on_both_backends!(a_client_named_by_its_metadata_document_signs_in_without_registering, fetching_locally, |server| {
    with_user(&server).await;
    let host = ClientHost::start().await;
    let metadata: Value =
        http().get(server.url("/.well-known/oauth-authorization-server")).send().await.unwrap().json().await.unwrap();
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    assert_eq!(metadata["token_endpoint_auth_methods_supported"], json!(["none", "private_key_jwt"]));

    let id = host.document("/oauth/client.json", json!({}));
    let mut browser = Browser::named(&server, &id);
    let (verifier, challenge) = pkce();
    let first = browser.get(&browser.authorize_url("vault:read", &challenge, &[])).await;
    assert_eq!(first.status(), 302, "to the sign-in page");
    let signed_in = browser.sign_in("alice", PASSWORD, &param(&location(&first), "next").unwrap()).await;
    let consent = browser.get(&server.url(&location(&signed_in))).await;
    assert_eq!(consent.status(), 200);
    let html = consent.text().await.unwrap();
    assert!(html.contains("Published by <strong>127.0.0.1</strong>"), "the host is shown: {html}");
    assert!(html.contains("Allow only an application you started yourself."), "localhost warned: {html}");
    let mut form = hidden_fields(&html);
    form.push(("decision".into(), "approve".into()));
    let approved = browser.post_form("/oauth/authorize", &form).await;
    assert_eq!(approved.status(), 303);
    let code = param(&location(&approved), "code").expect("a code");
    let (status, tokens) = browser.exchange(&code, &verifier).await;
    assert_eq!(status, 200, "{tokens}");
    let (status, refreshed) = browser.refresh(tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{refreshed}");
    assert_eq!(host.hits("/oauth/client.json"), 1, "fetched once, then kept as its max-age allows");

    // Consent is remembered per client id; a document that stops listing the redirect URI
    // (fetched anew once not kept) refuses it.
    let (to, consented) = browser.authorize("vault:read", &pkce().1, &[]).await;
    assert!(!consented && to.starts_with(CALLBACK), "{to}");
    let other = host.document("/other.json", json!({ "redirect_uris": ["https://app.example.com/cb"] }));
    let stranger = Browser { cookie: browser.cookie.clone(), ..Browser::named(&server, &other) };
    let refused = stranger.get(&stranger.authorize_url("vault:read", &challenge, &[])).await;
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("is not a redirect URI registered for this client"));

    // A client published on a real host and redirecting there too gets no localhost warning.
    let mixed = host.document("/mixed.json", json!({ "redirect_uris": [CALLBACK, "https://app.example.com/cb"] }));
    let browser = Browser { cookie: browser.cookie.clone(), ..Browser::named(&server, &mixed) };
    let page = browser.get(&browser.authorize_url("vault:read", &challenge, &[])).await.text().await.unwrap();
    assert!(page.contains("Published by") && !page.contains("Allow only an application"), "{page}");
});

/// Every way a document can be unfit is refused with the reason, on the page (the client cannot
/// be trusted with a redirect) and at the token endpoint (`invalid_client`); failures are not kept.
#[tokio::test]
async fn an_unfit_metadata_document_is_refused_with_the_reason() {
    let server = fetching_locally(common::Backend::Sqlite).await.unwrap();
    let host = ClientHost::start().await;
    let doc = |path: &str, extra: Value| {
        let id = host.url(path);
        let mut doc = json!({ "client_id": id, "redirect_uris": [CALLBACK] });
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        doc.to_string()
    };
    let json_type = [("content-type", "application/json")];
    host.serve("/wrong-id.json", 200, &json_type, doc("/elsewhere.json", json!({})));
    host.serve("/secret.json", 200, &json_type, doc("/secret.json", json!({ "client_secret": "s3cret" })));
    host.serve(
        "/basic.json",
        200,
        &json_type,
        doc("/basic.json", json!({ "token_endpoint_auth_method": "client_secret_basic" })),
    );
    host.serve("/big.json", 200, &json_type, doc("/big.json", json!({ "client_name": "x".repeat(6000) })));
    host.serve("/moved.json", 302, &[("location", "/secret.json")], String::new());
    host.serve("/gone.json", 500, &[("cache-control", "max-age=600")], String::new());
    host.serve("/not-json.json", 200, &[], "<html>".into());
    let (_, challenge) = pkce();
    for (path, why) in [
        ("/wrong-id.json", "client_id is"),
        ("/secret.json", "carries a client secret"),
        ("/basic.json", "token_endpoint_auth_method is none or private_key_jwt"),
        ("/big.json", "is larger than 5120 bytes"),
        ("/moved.json", "redirects are not followed"),
        ("/gone.json", "answered 500"),
        ("/missing.json", "answered 404"),
        ("/not-json.json", "is not JSON"),
    ] {
        let browser = Browser::named(&server, &host.url(path));
        let page = browser.get(&browser.authorize_url("vault:read", &challenge, &[])).await;
        assert_eq!(page.status(), 400, "{path}");
        let text = unescape(&page.text().await.unwrap());
        assert!(text.contains("metadata document") && text.contains(why), "{path}: {text}");
        let (status, body) = browser.exchange("some-code", "some-verifier").await;
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{path}: {body}");
        assert!(body["error_description"].as_str().unwrap().contains(why), "{path}: {body}");
    }
    assert_eq!(host.hits("/gone.json"), 2, "a failed fetch is never kept, whatever its headers say");
    assert_eq!(host.hits("/moved.json"), 2, "the redirect was not followed");
    assert_eq!(host.hits("/secret.json"), 2, "only fetched under its own URL");
}

/// By default a client id may not point the server at its own network: `http`, literal private
/// addresses, and names that resolve to them are refused before or at connection; with documents
/// turned off, a URL is just an unknown client.
#[tokio::test]
async fn client_ids_that_point_inward_are_refused_and_documents_can_be_turned_off() {
    let server = common::TestServer::start().await;
    let host = ClientHost::start().await;
    let port = host.base.rsplit(':').next().unwrap().to_string();
    host.document("/client.json", json!({}));
    let (_, challenge) = pkce();
    for (id, why) in [
        (host.url("/client.json"), "the client id must be https"),
        (format!("https://127.0.0.1:{port}/client.json"), "names a private, loopback or link-local address"),
        (format!("https://[::1]:{port}/client.json"), "names a private, loopback or link-local address"),
        ("https://169.254.169.254/latest/meta-data/iam".into(), "names a private, loopback or link-local address"),
        ("https://10.0.0.1/client.json".into(), "names a private, loopback or link-local address"),
        (format!("https://localhost:{port}/client.json"), "resolves to no public address"),
        ("https://app.example.com".into(), "must have a path"),
        ("https://app.example.com/a/../client.json".into(), "must not have a . or .. path segment"),
    ] {
        let browser = Browser::named(&server, &id);
        let page = browser.get(&browser.authorize_url("vault:read", &challenge, &[])).await;
        assert_eq!(page.status(), 400, "{id}");
        let text = unescape(&page.text().await.unwrap());
        assert!(text.contains(why), "{id}: {text}");
    }
    assert_eq!(host.hits("/client.json"), 0, "nothing inward was fetched");

    let off = common::TestServer::start_configured(common::Backend::Sqlite, |config, _| {
        config.client_documents.enabled = false;
    })
    .await
    .unwrap();
    let metadata: Value =
        http().get(off.url("/.well-known/oauth-authorization-server")).send().await.unwrap().json().await.unwrap();
    assert!(metadata.get("client_id_metadata_document_supported").is_none(), "{metadata}");
    assert_eq!(metadata["token_endpoint_auth_methods_supported"], json!(["none"]));
    let browser = Browser::named(&off, "https://app.example.com/client.json");
    let page = browser.get(&browser.authorize_url("vault:read", &challenge, &[])).await;
    assert_eq!(page.status(), 400);
    assert!(page.text().await.unwrap().contains("is registered here"));
}

// A client whose document says `private_key_jwt` proves itself at the token endpoint with a JWT
// signed by a key at its `jwks_uri`: naming itself and this server, short-lived, used once.
on_both_backends!(a_document_client_with_private_key_jwt_signs_its_token_requests, fetching_locally, |server| {
    with_user(&server).await;
    let host = ClientHost::start().await;
    let keys_dir = tempfile::tempdir().unwrap();
    let keys = runtime::keys::SigningKeys::load_or_create(keys_dir.path()).unwrap();
    let pem = std::fs::read(keys_dir.path().join(runtime::keys::KEY_FILE)).unwrap();
    let signer = jsonwebtoken::EncodingKey::from_ed_pem(&pem).unwrap();
    host.serve("/jwks.json", 200, &[("cache-control", "max-age=60")], keys.jwks().to_string());
    let id = host.document(
        "/signed.json",
        json!({ "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": host.url("/jwks.json") }),
    );
    let now = chrono::Utc::now().timestamp();
    let assertion = |claims: Value, key: &jsonwebtoken::EncodingKey| {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some(keys.kid());
        let mut full = json!({ "iss": id, "sub": id, "aud": server.base, "exp": now + 60,
                               "iat": now, "jti": uuid::Uuid::new_v4().to_string() });
        for (k, v) in claims.as_object().unwrap() {
            full[k] = v.clone();
        }
        jsonwebtoken::encode(&header, &full, key).unwrap()
    };
    let mut browser = Browser::named(&server, &id);
    let (code, verifier) = browser.code("vault:read").await;
    let exchange = |extra: Vec<(&'static str, String)>| {
        let mut form: Vec<(&str, String)> = vec![
            ("grant_type", "authorization_code".into()),
            ("code", code.clone()),
            ("redirect_uri", CALLBACK.into()),
            ("code_verifier", verifier.clone()),
        ];
        form.extend(extra);
        let http = http();
        let url = server.url("/oauth/token");
        async move {
            let resp = http.post(url).form(&form).send().await.unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
        }
    };
    let jwt_bearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
    let with = |jwt: String| vec![("client_assertion_type", jwt_bearer.to_string()), ("client_assertion", jwt)];

    let (status, body) = exchange(vec![("client_id", id.clone())]).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "no assertion: {body}");
    let stranger = jsonwebtoken::EncodingKey::from_ed_pem(
        &std::fs::read({
            let d = tempfile::tempdir().unwrap();
            runtime::keys::SigningKeys::load_or_create(d.path()).unwrap();
            let p = d.path().join(runtime::keys::KEY_FILE);
            let bytes = std::fs::read(&p).unwrap();
            let out = keys_dir.path().join("stranger.pem");
            std::fs::write(&out, bytes).unwrap();
            out
        })
        .unwrap(),
    )
    .unwrap();
    for (why, jwt) in [
        ("another key", assertion(json!({}), &stranger)),
        ("another audience", assertion(json!({ "aud": "https://elsewhere.example" }), &signer)),
        ("another issuer", assertion(json!({ "iss": "https://elsewhere.example/c.json" }), &signer)),
        ("expired", assertion(json!({ "exp": now - 120 }), &signer)),
        ("too long-lived", assertion(json!({ "exp": now + 3600 }), &signer)),
        ("no jti", assertion(json!({ "jti": "" }), &signer)),
    ] {
        let (status, body) = exchange(with(jwt)).await;
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{why}: {body}");
    }
    // The assertion alone names the client (no client_id), audience the token endpoint.
    let good = assertion(json!({ "aud": server.url("/oauth/token") }), &signer);
    let (status, tokens) = exchange(with(good.clone())).await;
    assert_eq!(status, 200, "{tokens}");
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let refresh_with = |jwt: String| {
        let form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh.clone()),
            ("client_id", id.clone()),
            ("client_assertion_type", jwt_bearer.to_string()),
            ("client_assertion", jwt),
        ];
        let http = http();
        let url = server.url("/oauth/token");
        async move {
            let resp = http.post(url).form(&form).send().await.unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = refresh_with(good).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "replayed: {body}");
    assert!(body["error_description"].as_str().unwrap().contains("used before"), "{body}");
    let (status, body) = refresh_with(assertion(json!({}), &signer)).await;
    assert_eq!(status, 200, "a fresh assertion refreshes (the replay left the token usable): {body}");
});

// A minimal OpenID Provider: `openid` yields an RS256 ID token naming the user, the client, the
// sign-in time, the request's nonce and the access token's hash, verifiable with the published
// keys; the access token reads the user at userinfo; `prompt=none` never shows a page.
on_both_backends!(openid_yields_an_id_token_and_userinfo, |server| {
    with_user(&server).await;
    let mut browser = Browser::new(&server).await;
    let (verifier, challenge) = pkce();
    let started = chrono::Utc::now().timestamp();

    // prompt=none before signing in: an error at the client, no sign-in page.
    let silent = browser.get(&browser.authorize_url("openid vault:read", &challenge, &[("prompt", "none")])).await;
    assert_eq!(silent.status(), 302);
    assert_eq!(param(&location(&silent), "error").as_deref(), Some("login_required"), "{}", location(&silent));

    let (to, consented) = browser.authorize("openid vault:read", &challenge, &[("nonce", "n-0S6_WzA2Mj")]).await;
    assert!(consented);
    let (status, tokens) = browser.exchange(&param(&to, "code").unwrap(), &verifier).await;
    assert_eq!(status, 200, "{tokens}");
    let id_token = tokens["id_token"].as_str().expect("an ID token for the openid scope");
    let access = tokens["access_token"].as_str().unwrap();

    let header = jsonwebtoken::decode_header(id_token).unwrap();
    assert_eq!((header.alg, header.typ.as_deref()), (jsonwebtoken::Algorithm::RS256, Some("JWT")));
    let jwks: jsonwebtoken::jwk::JwkSet =
        reqwest::get(server.url("/.well-known/jwks.json")).await.unwrap().json().await.unwrap();
    let key = jwks.find(header.kid.as_deref().unwrap()).expect("the ID token's key is published");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[&browser.client_id]);
    validation.set_issuer(&[&server.base]);
    let claims =
        jsonwebtoken::decode::<Value>(id_token, &jsonwebtoken::DecodingKey::from_jwk(key).unwrap(), &validation)
            .unwrap()
            .claims;
    assert_eq!(claims["sub"], "alice");
    assert_eq!(claims["tenant"], "acme");
    assert_eq!(claims["nonce"], "n-0S6_WzA2Mj");
    let auth_time = claims["auth_time"].as_i64().unwrap();
    assert!((started - 5..=chrono::Utc::now().timestamp()).contains(&auth_time), "{claims}");
    let digest = Sha256::digest(access.as_bytes());
    assert_eq!(claims["at_hash"], URL_SAFE_NO_PAD.encode(&digest[..16]));
    assert!(claims_of(access)["aud"].as_array().unwrap().contains(&json!(server.url("/oauth/userinfo"))));

    // userinfo: the user, for this access token; not for one without openid, nor without one.
    let info = http().get(server.url("/oauth/userinfo")).bearer_auth(access).send().await.unwrap();
    assert_eq!(info.status(), 200);
    assert_eq!(info.json::<Value>().await.unwrap(), json!({ "sub": "alice", "tenant": "acme" }));
    let plain = server.token_for("alice", "acme", "vault:read");
    let refused = http().post(server.url("/oauth/userinfo")).bearer_auth(&plain).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers()["www-authenticate"].to_str().unwrap().contains("invalid_token"));
    assert_eq!(http().get(server.url("/oauth/userinfo")).send().await.unwrap().status(), 401);

    // A refresh brings a new ID token: same user and sign-in time, no nonce.
    let (status, refreshed) = browser.refresh(tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{refreshed}");
    let again = claims_of(refreshed["id_token"].as_str().unwrap());
    assert_eq!((again["sub"].clone(), again["auth_time"].as_i64()), (json!("alice"), Some(auth_time)));
    assert!(again.get("nonce").is_none(), "{again}");

    // Signed in and consented: prompt=none answers with a code; asking for more: consent_required.
    let (_, challenge) = pkce();
    let quiet = browser.get(&browser.authorize_url("openid vault:read", &challenge, &[("prompt", "none")])).await;
    assert!(param(&location(&quiet), "code").is_some(), "{}", location(&quiet));
    let more = browser.get(&browser.authorize_url("openid vault:write", &challenge, &[("prompt", "none")])).await;
    assert_eq!(param(&location(&more), "error").as_deref(), Some("consent_required"));
    // Without openid, no ID token.
    let (code, verifier) = browser.code("vault:read").await;
    let (_, plain) = browser.exchange(&code, &verifier).await;
    assert!(plain.get("id_token").is_none(), "{plain}");
});

/// A relying party no one here wrote (Authlib, `tests/oidc/relying_party.py`) discovers the
/// provider, checks the configuration by its rules, redeems a code, validates the ID token
/// (signature, iss, aud, exp, iat, nonce, at_hash, auth_time) and reads userinfo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_party_relying_party_accepts_discovery_and_the_id_token() {
    let Some(python) = tests::tool("SPECWRIGHT_OIDC_PYTHON") else {
        return;
    };
    let server = common::TestServer::start().await;
    with_user(&server).await;
    let mut browser = Browser::new(&server).await;
    let (verifier, challenge) = pkce();
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let (to, _) = browser.authorize("openid vault:read", &challenge, &[("nonce", &nonce)]).await;
    let args = vec![
        xtask::workspace_root().join("tests/oidc/relying_party.py").display().to_string(),
        server.url("/.well-known/openid-configuration"),
        browser.client_id.clone(),
        CALLBACK.to_string(),
        param(&to, "code").unwrap(),
        verifier,
        nonce.clone(),
    ];
    let out = tokio::task::spawn_blocking(move || std::process::Command::new(python).args(args).output().unwrap())
        .await
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the relying party refused:\n{text}");
    let found: Value = serde_json::from_str(text.lines().rev().find(|l| l.starts_with('{')).unwrap()).unwrap();
    assert_eq!(found["issuer"], server.base.as_str());
    assert_eq!(found["sub"], "alice");
    assert_eq!(found["nonce"], nonce.as_str());
    assert_eq!(found["userinfo"], json!({ "sub": "alice", "tenant": "acme" }));
}

// The applications a user approved, listed and revoked from the console: one registered (RFC
// 7591) and one named by its metadata document; revoking ends its refresh tokens and its approval
// (the next authorization asks again), in one transaction; the other application keeps working.
on_both_backends!(connected_applications_are_listed_and_revoked_from_the_console, fetching_locally, |server| {
    with_user(&server).await;
    let host = ClientHost::start().await;
    let mut registered = Browser::new(&server).await;
    let (code, verifier) = registered.code("vault:read").await;
    let (_, kept) = registered.exchange(&code, &verifier).await;
    let id = host.document("/app.json", json!({ "application_type": "native" }));
    let mut published = Browser { cookie: registered.cookie.clone(), ..Browser::named(&server, &id) };
    let (to, consented) = published.authorize("vault:read vault:write", &pkce().1, &[]).await;
    assert!(consented, "{to}");
    let (code, verifier) = published.code("vault:read").await;
    let (_, tokens) = published.exchange(&code, &verifier).await;
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();

    let cookie = registered.cookie.clone().unwrap();
    let get = |path: &str| http().get(server.url(path)).header("cookie", &cookie).send();
    let listed: Value = get("/console/applications").await.unwrap().json().await.unwrap();
    let apps = listed["data"].as_array().unwrap();
    assert_eq!(apps.len(), 2, "{listed}");
    let doc_app = apps.iter().find(|a| a["client_id"] == id.as_str()).unwrap();
    assert_eq!(doc_app["kind"], "document");
    assert_eq!(doc_app["host"], "127.0.0.1");
    assert_eq!(doc_app["name"], "Test <Agent>", "the name it gave when approved");
    assert_eq!(doc_app["scopes"], json!(["vault:read", "vault:write"]));
    assert_eq!(doc_app["active_refresh_tokens"], 1);
    let reg_app = apps.iter().find(|a| a["client_id"] == registered.client_id.as_str()).unwrap();
    assert_eq!((reg_app["kind"].as_str(), reg_app["name"].as_str()), (Some("registered"), Some("Test <Agent>")));

    let csrf = get("/console/session").await.unwrap().json::<Value>().await.unwrap()["csrf_token"]
        .as_str()
        .unwrap()
        .to_string();
    let revoke = |body: String, csrf: Option<&str>| {
        let mut rb = http()
            .post(server.url("/console/applications/revoke"))
            .header("cookie", &cookie)
            .header("content-type", "application/json")
            .body(body);
        if let Some(t) = csrf {
            rb = rb.header("x-csrf-token", t);
        }
        rb.send()
    };
    let body = json!({ "client_id": id }).to_string();
    assert_eq!(revoke(body.clone(), None).await.unwrap().status(), 401, "no CSRF token: nothing revoked");
    assert_eq!(revoke("{\"client_id\": 1}".into(), Some(&csrf)).await.unwrap().status(), 400);
    let resp = revoke(json!({ "client_id": id, "extra": 1 }).to_string(), Some(&csrf)).await.unwrap();
    assert_eq!(resp.status(), 400, "unknown fields are refused");
    let unknown = revoke(json!({ "client_id": "swc_nobody" }).to_string(), Some(&csrf)).await.unwrap();
    assert_eq!(unknown.status(), 404);
    let (status, rotated) = published.refresh(&refresh).await;
    assert_eq!(status, 200, "still working before the revocation: {rotated}");
    let refresh = rotated["refresh_token"].as_str().unwrap().to_string();
    let done = revoke(body.clone(), Some(&csrf)).await.unwrap();
    assert_eq!(done.status(), 200);
    let done: Value = done.json().await.unwrap();
    assert_eq!(done["data"]["consents"], 1, "{done}");
    assert!(done["data"]["refresh_tokens"].as_u64().unwrap() >= 1, "{done}");
    let (status, body) = published.refresh(&refresh).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
    let (_, asked_again) = published.authorize("vault:read", &pkce().1, &[]).await;
    assert!(asked_again, "the approval is gone: the consent screen again");
    let listed: Value = get("/console/applications").await.unwrap().json().await.unwrap();
    let left: Vec<&str> = listed["data"].as_array().unwrap().iter().map(|a| a["client_id"].as_str().unwrap()).collect();
    assert!(left.contains(&registered.client_id.as_str()), "{listed}");
    let (status, _) = registered.refresh(kept["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200, "the other application keeps working");
    assert_eq!(http().get(server.url("/console/applications")).send().await.unwrap().status(), 401);
});
