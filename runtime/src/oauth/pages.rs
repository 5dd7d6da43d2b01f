//! The authorization server's HTML pages (sign-in, consent, errors): plain server-rendered
//! forms, no script, no asset from anywhere, and headers that forbid framing (clickjacking).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Styles shared by every page (the console's stylesheet extends them).
pub const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}\
main{max-width:34rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 3px #0002}\
h1{font-size:1.4rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem;font-weight:600}\
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #8a93a5;border-radius:4px}\
button{font:inherit;padding:.5rem 1.2rem;margin:1rem .5rem 0 0;border-radius:4px;border:1px solid #2b59c3;background:#2b59c3;color:#fff;cursor:pointer}\
button.secondary{background:#fff;color:#2b59c3}.error{color:#a4161a;font-weight:600}\
ul.scopes{padding-left:1.2rem}ul.scopes li{margin:.5rem 0}code{background:#eef0f4;padding:0 .25rem;border-radius:3px}\
.muted{color:#5a6272;font-size:.9rem}\
.warning{background:#fff4e5;border-left:4px solid #b35c00;padding:.5rem .8rem}";

/// A complete page with the security headers every page of ours carries.
pub fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} · Specwright</title><style>{STYLE}</style></head><body><main>{body}</main></body></html>",
        escape(title)
    );
    let mut resp = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    secure_headers(resp.headers_mut());
    resp
}

/// No caching, no framing, no sniffing, no referrer leaking codes or state to other sites
/// (`same-origin`, not `no-referrer`: under `no-referrer` browsers send `Origin: null` with our own
/// forms, which the cross-site check must refuse).
pub fn secure_headers(h: &mut axum::http::HeaderMap) {
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self' http: https:",
        ),
    );
}

/// An error page (for problems that must not be redirected to the client).
pub fn error(status: StatusCode, message: &str) -> Response {
    page(
        status,
        "Cannot continue",
        &format!("<h1>Cannot continue</h1><p class=\"error\" role=\"alert\">{}</p>", escape(message)),
    )
}

/// The sign-in form, posting to `action` (the sign-in path under the public URL); `next` is where
/// to go afterwards.
pub fn login(action: &str, next: &str, problem: Option<&str>, user: &str) -> Response {
    let (status, alert) = match problem {
        Some(p) => (StatusCode::UNAUTHORIZED, format!("<p class=\"error\" role=\"alert\">{}</p>", escape(p))),
        None => (StatusCode::OK, String::new()),
    };
    let body = format!(
        "<h1>Sign in to Specwright</h1>{alert}<form method=\"post\" action=\"{}\">\
         <input type=\"hidden\" name=\"next\" value=\"{}\">\
         <label for=\"username\">User name</label>\
         <input type=\"text\" id=\"username\" name=\"username\" autocomplete=\"username\" required value=\"{}\" autofocus>\
         <label for=\"password\">Password</label>\
         <input type=\"password\" id=\"password\" name=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        escape(action),
        escape(next),
        escape(user)
    );
    page(status, "Sign in", &body)
}

/// One scope as the consent screen shows it.
pub struct ScopeLine<'a> {
    /// Its name.
    pub name: &'a str,
    /// What it grants.
    pub description: &'a str,
}

/// What the consent screen shows.
pub struct Consent<'a> {
    /// Where the form posts (the authorization endpoint's path under the public URL).
    pub action: &'a str,
    /// The client's name (its id when it gave none).
    pub client_name: &'a str,
    /// The client's id.
    pub client_id: &'a str,
    /// The host a client known by its metadata document's URL is published at.
    pub client_host: Option<&'a str>,
    /// Whether such a client redirects only to this computer (a warning is shown).
    pub local_only: bool,
    /// Where the answer goes.
    pub redirect_uri: &'a str,
    /// Who is signed in.
    pub user: &'a str,
    /// The scopes asked for.
    pub scopes: &'a [ScopeLine<'a>],
    /// The resources the token will be for.
    pub resources: &'a [String],
    /// The request's parameters, carried back by the form.
    pub hidden: &'a [(String, String)],
}

/// The consent screen: who asks, each scope with what it grants, for which resources; the form
/// posts to `action` (the authorization endpoint's path under the public URL) and carries the
/// request's parameters back with the session's CSRF token.
pub fn consent(c: &Consent<'_>) -> Response {
    let scope_items: String = c
        .scopes
        .iter()
        .map(|s| format!("<li><code>{}</code>: {}</li>", escape(s.name), escape(s.description)))
        .collect();
    let resource_items: String = c.resources.iter().map(|r| format!("<li><code>{}</code></li>", escape(r))).collect();
    let fields: String = c
        .hidden
        .iter()
        .map(|(k, v)| format!("<input type=\"hidden\" name=\"{}\" value=\"{}\">", escape(k), escape(v)))
        .collect();
    let published = match c.client_host {
        Some(host) => format!(
            "<p class=\"host\">Published by <strong>{}</strong>: the name above is the application's own claim; \
             the address it is published at is not.</p>",
            escape(host)
        ),
        None => String::new(),
    };
    let warning = if c.local_only {
        "<p class=\"warning\"><strong>Allow only an application you started yourself.</strong> It receives the \
         answer on this computer (localhost), where any program can claim to be it.</p>"
    } else {
        ""
    };
    let body = format!(
        "<h1>Allow {name} to use your account?</h1>{published}{warning}\
         <p>Signed in as <strong>{user}</strong>. <span class=\"muted\">Client id <code>{client_id}</code>; \
         it will receive the answer at <code>{redirect}</code>.</span></p>\
         <h2>It asks for</h2><ul class=\"scopes\">{scope_items}</ul>\
         <h2>On</h2><ul>{resource_items}</ul>\
         <form method=\"post\" action=\"{action}\">{fields}\
         <button type=\"submit\" name=\"decision\" value=\"approve\">Allow</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button></form>\
         <p class=\"muted\">You will not be asked again for these scopes from this client.</p>",
        action = escape(c.action),
        name = escape(c.client_name),
        user = escape(c.user),
        client_id = escape(c.client_id),
        redirect = escape(c.redirect_uri),
    );
    page(StatusCode::OK, "Allow access", &body)
}

#[cfg(test)]
mod tests {
    /// Every `href`, `src` and `action` of a page.
    fn links(html: &str) -> Vec<&str> {
        ["href=\"", "src=\"", "action=\""]
            .iter()
            .flat_map(|m| html.split(m).skip(1).map(|rest| &rest[..rest.find('"').unwrap_or(0)]))
            .collect()
    }

    async fn html(resp: axum::response::Response) -> String {
        let body = axum::body::to_bytes(resp.into_body(), 1 << 20).await.unwrap();
        String::from_utf8(body.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn forms_post_where_they_are_told() {
        let login = html(super::login("/sw/login", "/console/", None, "")).await;
        assert_eq!(links(&login), ["/sw/login"]);
        let consent = html(super::consent(&super::Consent {
            action: "/sw/oauth/authorize",
            client_name: "c",
            client_id: "id",
            client_host: None,
            local_only: false,
            redirect_uri: "http://127.0.0.1/cb",
            user: "alice",
            scopes: &[],
            resources: &[],
            hidden: &[],
        }))
        .await;
        assert_eq!(links(&consent), ["/sw/oauth/authorize"]);
    }
}
