//! The web console served by the binary: one small page (`index.html`, `console.js`,
//! `console.css`, compiled in; nothing from the network) that uses the sign-in session. Its script
//! calls the vault and prospector REST APIs with the session cookie and the session's CSRF token,
//! so it has exactly the user's rights (RBAC and tenancy; no scopes).
//!
//! Pages (real paths, the script routes between them): `/console/` (overview),
//! `/console/tokens` (Settings → API tokens), `/console/applications` (Settings → connected
//! applications, over the console's own `GET /console/applications` and
//! `POST /console/applications/revoke`), `/console/folders`, `/console/folders/{id}`,
//! `/console/credentials`, `/console/credentials/{key}`. Without a session every page redirects to
//! the sign-in form, which comes back to it. Every link, file and redirect is under the public
//! URL's path (the page names it in `<meta name="specwright-base">` for the script).

use std::sync::LazyLock;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::Digest;

use runtime::oauth::pages::{STYLE, secure_headers};
use runtime::oauth::sessions;
use runtime::store::Store;

/// The console's home page (where signing in leads by default), relative to the public URL.
pub const HOME: &str = "/console/";

/// The console's own policy: its script and stylesheet from this server only, no inline script or
/// style, API calls to this origin only, forms posting here only, never framed.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// A file compiled into the binary.
struct Asset {
    body: String,
    content_type: &'static str,
    etag: String,
}

impl Asset {
    fn new(body: String, content_type: &'static str) -> Asset {
        let digest = sha2::Sha256::digest(body.as_bytes());
        let etag = format!("\"{}\"", digest.iter().take(16).map(|b| format!("{b:02x}")).collect::<String>());
        Asset { body, content_type, etag }
    }
}

/// The page shell with its links under `base` (the public URL's path).
fn page_shell(base: &str) -> Asset {
    let base = runtime::oauth::pages::escape(base);
    Asset::new(include_str!("index.html").replace("{{base}}", &base), "text/html; charset=utf-8")
}

static SCRIPT: LazyLock<Asset> =
    LazyLock::new(|| Asset::new(include_str!("console.js").to_string(), "text/javascript; charset=utf-8"));
// The sign-in pages' styles, extended.
static STYLESHEET: LazyLock<Asset> =
    LazyLock::new(|| Asset::new(format!("{STYLE}\n{}", include_str!("console.css")), "text/css; charset=utf-8"));

/// The security headers of every console response (the sign-in pages'), with the console's
/// content policy, which lets its own script run.
fn harden(resp: &mut Response) {
    let h = resp.headers_mut();
    secure_headers(h);
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
}

/// Whether `path` (after `/console/`) is one of the console's pages.
fn known_page(path: &str) -> bool {
    let mut segments = path.split('/');
    match (segments.next(), segments.next(), segments.next()) {
        (Some("" | "tokens" | "applications" | "folders" | "credentials"), None, _) => true,
        (Some("folders" | "credentials"), Some(id), None) => !id.is_empty(),
        _ => false,
    }
}

/// Whether the request comes with a live session.
async fn signed_in(store: &Store, headers: &HeaderMap) -> Result<bool, Response> {
    match sessions::from_headers(store, headers).await {
        Ok(found) => Ok(found.is_some()),
        Err(e) => {
            tracing::error!(error = %e, "could not read a session");
            let mut resp = (StatusCode::INTERNAL_SERVER_ERROR, "Could not read the session.").into_response();
            harden(&mut resp);
            Err(resp)
        }
    }
}

/// What the console's handlers share.
#[derive(Clone)]
struct Console {
    store: Store,
    /// The page shell, its links under the public URL's path.
    page: std::sync::Arc<Asset>,
    /// The sign-in form's path under the public URL.
    login: String,
    /// The public URL's origin, which state-changing requests must come from.
    origin: runtime::config::Origin,
}

/// A console page: the page shell (its script renders the page the path names), or, without a
/// session, a redirect to the sign-in form that comes back here.
async fn page(State(console): State<Console>, uri: Uri, headers: HeaderMap) -> Response {
    match signed_in(&console.store, &headers).await {
        Err(resp) => return resp,
        Ok(false) => {
            let here = uri.path_and_query().map_or(HOME, |p| p.as_str());
            let next: String = url::form_urlencoded::byte_serialize(here.as_bytes()).collect();
            let mut resp = StatusCode::FOUND.into_response();
            if let Ok(v) = HeaderValue::from_str(&format!("{}?next={next}", console.login)) {
                resp.headers_mut().insert(header::LOCATION, v);
            }
            harden(&mut resp);
            return resp;
        }
        Ok(true) => {}
    }
    let status = match uri.path().strip_prefix(HOME) {
        Some(rest) if known_page(rest) => StatusCode::OK,
        _ => StatusCode::NOT_FOUND,
    };
    let shell = &console.page;
    let mut resp = (status, [(header::CONTENT_TYPE, shell.content_type)], shell.body.clone()).into_response();
    harden(&mut resp);
    resp
}

/// A static file: public (it holds no data), revalidated by its ETag so a new binary's files are
/// picked up at once.
fn asset(asset: &'static Asset, headers: &HeaderMap) -> Response {
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == asset.etag || t == "*"));
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, asset.content_type)], asset.body.as_str()).into_response()
    };
    harden(&mut resp);
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&asset.etag) {
        h.insert(header::ETAG, v);
    }
    resp
}

/// The values of an enum schema of an OpenAPI document, each with the description the spec gives
/// it (the generator lists them as "- `value`: description" lines).
fn enum_values(openapi: &str, schema: &str) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_str(openapi).unwrap_or_default();
    let s = &doc["components"]["schemas"][schema];
    let described = s["description"].as_str().unwrap_or_default();
    let values = s["enum"].as_array().map(Vec::as_slice).unwrap_or_default();
    values
        .iter()
        .filter_map(serde_json::Value::as_str)
        .map(|name| {
            let prefix = format!("- `{name}`: ");
            let description = described.lines().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap_or_default();
            serde_json::json!({ "name": name, "description": description })
        })
        .collect()
}

/// What the console offers in its forms, from the generated service descriptions and documents
/// (the specs stay the only place scopes, plans and permissions are named).
static CATALOG: LazyLock<serde_json::Value> = LazyLock::new(|| {
    let scopes = |s: &support::ServiceInfo| {
        s.scopes.iter().map(|k| serde_json::json!({ "name": k.name, "description": k.description })).collect::<Vec<_>>()
    };
    let (v, p) = (&vault_api::vault::SERVICE, &prospector_api::prospector::SERVICE);
    serde_json::json!({
        "vault": {
            "title": v.title,
            "base_path": v.base_path,
            "scopes": scopes(v),
            "permissions": enum_values(v.openapi_json, "Permission"),
            "kinds": enum_values(v.openapi_json, "CredentialKind"),
        },
        "prospector": {
            "title": p.title,
            "base_path": p.base_path,
            "scopes": scopes(p),
            "plans": p.plans.iter().map(|pl| serde_json::json!({
                "name": pl.name, "title": pl.title, "per_minute": pl.per_minute, "per_day": pl.per_day,
            })).collect::<Vec<_>>(),
            "default_plan": p.default_plan,
        },
    })
});

/// `GET /console/session`: who is signed in and the CSRF token the console's requests echo, with
/// the catalog the console's forms offer. Same-origin only (no CORS headers), so another site
/// cannot read the token.
async fn session(State(console): State<Console>, headers: HeaderMap) -> Response {
    let mut resp = match sessions::from_headers(&console.store, &headers).await {
        Ok(Some((_, s))) => axum::Json(serde_json::json!({
            "user": s.user,
            "tenant": s.tenant,
            "csrf_token": s.csrf,
            "catalog": &*CATALOG,
        }))
        .into_response(),
        Ok(None) => {
            (StatusCode::UNAUTHORIZED, axum::Json(serde_json::json!({ "error": "not signed in" }))).into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "could not read a session");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                axum::Json(serde_json::json!({ "error": "could not read the session" })),
            )
                .into_response()
        }
    };
    harden(&mut resp);
    resp
}

/// A JSON answer of the console's own endpoints, with its error envelope.
fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    let mut resp = (status, axum::Json(body)).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    harden(&mut resp);
    resp
}

fn refusal(status: StatusCode, code: &str, message: &str) -> Response {
    answer(status, serde_json::json!({ "error": { "code": code, "message": message } }))
}

/// `GET /console/applications`: the applications the signed-in user approved (Connected
/// applications), registered or named by a metadata document.
async fn applications(State(console): State<Console>, headers: HeaderMap) -> Response {
    let session = match sessions::from_headers(&console.store, &headers).await {
        Ok(Some((_, s))) => s,
        Ok(None) => return refusal(StatusCode::UNAUTHORIZED, "unauthorized", "Sign in first."),
        Err(e) => return storage_failure(e),
    };
    match runtime::oauth::grants::list(&console.store, &session.user).await {
        Ok(apps) => answer(StatusCode::OK, serde_json::json!({ "data": apps })),
        Err(e) => storage_failure(e),
    }
}

/// `POST /console/applications/revoke` with `{"client_id": …}`: ends what the signed-in user
/// granted that application. Needs the session's CSRF token and this origin, as every
/// state-changing cookie request.
async fn revoke_application(State(console): State<Console>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let session = match sessions::from_headers(&console.store, &headers).await {
        Ok(Some((_, s))) => s,
        Ok(None) => return refusal(StatusCode::UNAUTHORIZED, "unauthorized", "Sign in first."),
        Err(e) => return storage_failure(e),
    };
    if !sessions::csrf_ok(&axum::http::Method::POST, &headers, &session, &console.origin, None) {
        return refusal(
            StatusCode::UNAUTHORIZED,
            "auth/csrf",
            "This request did not come from the console (CSRF token or origin); nothing was revoked.",
        );
    }
    let client_id = match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(serde_json::Value::Object(fields)) if fields.len() == 1 => {
            fields.get("client_id").and_then(|v| v.as_str()).map(str::to_string)
        }
        _ => None,
    };
    let Some(client_id) = client_id else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "validation_error",
            "Send {\"client_id\": \"…\"} as JSON, nothing else.",
        );
    };
    match runtime::oauth::grants::revoke(&console.store, &session.user, &client_id).await {
        Ok(r) if r.consents == 0 && r.refresh_tokens == 0 => {
            refusal(StatusCode::NOT_FOUND, "not_found", "You have not approved this application.")
        }
        Ok(r) => {
            tracing::info!(user = %session.user, client_id = %client_id, consents = r.consents,
                refresh_tokens = r.refresh_tokens, "application access revoked");
            answer(StatusCode::OK, serde_json::json!({ "data": r }))
        }
        Err(e) => storage_failure(e),
    }
}

fn storage_failure(e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "console: storage failed");
    refusal(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "The server's storage is unavailable; try again.")
}

/// The console's routes.
pub fn router(state: &runtime::Platform) -> Router {
    let config = &state.config;
    let console = Console {
        store: state.store.clone(),
        page: std::sync::Arc::new(page_shell(&config.base_path())),
        login: config.path(runtime::oauth::LOGIN_PATH),
        origin: config.origin(),
    };
    let home = config.path(HOME);
    Router::new()
        .route("/console", get(move || async move { axum::response::Redirect::permanent(&home) }))
        .route(HOME, get(page))
        .route("/console/session", get(session))
        .route("/console/applications", get(applications))
        .route("/console/applications/revoke", axum::routing::post(revoke_application))
        .route("/console/assets/console.js", get(|headers: HeaderMap| async move { asset(&SCRIPT, &headers) }))
        .route("/console/assets/console.css", get(|headers: HeaderMap| async move { asset(&STYLESHEET, &headers) }))
        .route("/console/{*page}", get(page))
        .with_state(console)
}

#[cfg(test)]
mod tests {
    use super::known_page;

    #[test]
    fn the_page_shell_links_only_under_the_public_urls_path() {
        for base in ["", "/sw", "/a/b"] {
            let shell = super::page_shell(base).body;
            assert!(!shell.contains("{{"), "every placeholder is filled: {shell}");
            assert!(shell.contains(&format!("<meta name=\"specwright-base\" content=\"{base}\">")), "{shell}");
            for marker in ["href=\"", "src=\"", "action=\""] {
                for value in shell.split(marker).skip(1).map(|rest| &rest[..rest.find('"').unwrap()]) {
                    let local = value.starts_with('#') || value.starts_with("data:");
                    assert!(local || value.starts_with(&format!("{base}/")), "{base}: {marker}{value}");
                }
            }
        }
    }

    #[test]
    fn the_catalog_names_what_the_specs_name() {
        let c = &*super::CATALOG;
        let names = |v: &serde_json::Value| {
            v.as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(names(&c["vault"]["permissions"]), ["canRead", "canReveal", "canStore"]);
        assert!(c["vault"]["permissions"][0]["description"].as_str().unwrap().starts_with("See the credential"));
        assert_eq!(names(&c["vault"]["scopes"]), ["vault:read", "vault:write", "vault:admin"]);
        assert_eq!(names(&c["prospector"]["plans"]), ["starter", "pro", "team"]);
        assert!(names(&c["vault"]["kinds"]).contains(&"api_key".to_string()));
    }

    #[test]
    fn pages() {
        for p in ["", "tokens", "applications", "folders", "credentials", "folders/fld_1", "credentials/db.main"] {
            assert!(known_page(p), "{p}");
        }
        for p in ["nope", "folders/", "folders/a/b", "tokens/x", "assets"] {
            assert!(!known_page(p), "{p}");
        }
    }
}
