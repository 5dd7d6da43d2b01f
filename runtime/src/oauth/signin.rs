//! Sign-in and sign-out pages: the session cookie a browser gets, and where it lands.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use super::*;

/// Where to go after signing in: a path of this server only (never another site), relative to the
/// public URL (`/console/`, `/oauth/authorize?…`); the redirect puts the public URL's path before it.
pub(super) fn local_path(next: Option<&str>, home: &str) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.starts_with("/\\") && !n.contains(['\r', '\n']) => {
            n.to_string()
        }
        _ => home.to_string(),
    }
}

/// `GET /login`.
pub(super) async fn login_page(
    State(s): State<Arc<AuthServer>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let p = Params::parse(&query.unwrap_or_default()).unwrap_or(Params(Vec::new()));
    let next = local_path(p.get("next"), &s.home);
    if s.session(&headers).await.is_some() {
        return redirect(StatusCode::FOUND, &s.config.path(&next));
    }
    pages::login(&s.config.path(LOGIN_PATH), &next, None, "")
}

/// `POST /login`: checks the password, starts a session, sets the cookie. Failures are counted
/// per user and client address (behind trusted proxies, the client they name).
pub(super) async fn login(
    State(s): State<Arc<AuthServer>>,
    client: Option<axum::Extension<crate::client_address::ClientAddress>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let address = client.map(|c| c.0.to_string()).unwrap_or_default();
    if sessions::cross_site(&headers, &s.config.origin()) {
        return pages::error(StatusCode::FORBIDDEN, "Sign in from this server's own sign-in page.");
    }
    let p = match Params::from_body(&body) {
        Ok(p) => p,
        Err(e) => return pages::error(StatusCode::BAD_REQUEST, &e),
    };
    let next = local_path(p.get("next"), &s.home);
    let user = p.get("username").unwrap_or_default();
    let action = s.config.path(LOGIN_PATH);
    if let Some(wait) = s.throttle.blocked(&address, user) {
        tracing::warn!(client = %address, "sign-in refused: too many failed attempts from this client");
        let mut resp = pages::login(
            &action,
            &next,
            Some(&format!("Too many failed sign-ins; try again in {} minutes.", wait.div_ceil(60))),
            user,
        );
        *resp.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(wait));
        return resp;
    }
    let found = match users::verify(&s.store, user, p.get("password").unwrap_or_default()).await {
        Ok(u) => u,
        Err(e) => {
            return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not check the password: {e}"));
        }
    };
    let Some(found) = found else {
        s.throttle.failed(&address, user);
        tracing::info!(client = %address, "failed sign-in");
        return pages::login(&action, &next, Some("Wrong user name or password."), user);
    };
    s.throttle.succeeded(&address, user);
    let secret = match sessions::create(&s.store, &found.id, &found.tenant).await {
        Ok((secret, _)) => secret,
        Err(e) => return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not start a session: {e}")),
    };
    let mut resp = redirect(StatusCode::SEE_OTHER, &s.config.path(&next));
    let cookie = sessions::set_cookie(Some(&secret), s.secure_cookies(), &s.config.cookie_path());
    resp.headers_mut().insert(header::SET_COOKIE, cookie);
    resp
}

/// `POST /logout`: ends the session (the form carries its CSRF token).
pub(super) async fn logout(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
    let p = Params::from_body(&body).unwrap_or(Params(Vec::new()));
    if let Some((secret, session)) = s.session(&headers).await {
        if !sessions::csrf_ok(&Method::POST, &headers, &session, &s.config.origin(), p.get("csrf")) {
            return pages::error(StatusCode::FORBIDDEN, "Sign out from this server's own pages.");
        }
        if let Err(e) = sessions::delete(&s.store, &secret).await {
            return pages::error(StatusCode::INTERNAL_SERVER_ERROR, &format!("Could not end the session: {e}"));
        }
    }
    let mut resp = redirect(StatusCode::SEE_OTHER, &s.config.path(LOGIN_PATH));
    let cookie = sessions::set_cookie(None, s.secure_cookies(), &s.config.cookie_path());
    resp.headers_mut().insert(header::SET_COOKIE, cookie);
    resp
}
