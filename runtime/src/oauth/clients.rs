//! Registered clients: lookup, the redirect URIs a client may register, dynamic client
//! registration (RFC 7591), and the docs page's own client.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sqlx::Row;

use crate::config::Config;
use crate::store::{Nullable, Store, now_ms};

use super::documents::{DocumentAuth, is_document_id};
use super::redirects::{application_type_allows, redirect_uri_allowed};
use super::*;

/// A client: registered here, or described by its metadata document.
#[derive(Debug, Clone)]
pub(super) struct Client {
    pub(super) id: String,
    pub(super) name: Option<String>,
    pub(super) redirect_uris: Vec<String>,
    pub(super) grant_types: Vec<String>,
    /// How a client described by a metadata document authenticates; `None` for a registered
    /// (public) client.
    pub(super) document: Option<DocumentAuth>,
}

impl Client {
    /// The host of a client known by its metadata document's URL, which the consent page shows
    /// (the name in a document is the client's own claim; the host is where it is published).
    pub(super) fn host(&self) -> Option<String> {
        self.document.as_ref()?;
        reqwest::Url::parse(&self.id).ok()?.host_str().map(str::to_string)
    }

    /// Whether every redirect URI is on a loopback host: anyone can run such a client on their
    /// own machine, so its identity proves less.
    pub(super) fn local_only(&self) -> bool {
        self.redirect_uris.iter().all(|uri| {
            reqwest::Url::parse(uri).ok().and_then(|u| u.host().map(|h| h.to_owned())).is_some_and(|h| match h {
                url::Host::Domain(d) => d == "localhost",
                url::Host::Ipv4(ip) => ip.is_loopback(),
                url::Host::Ipv6(ip) => ip.is_loopback(),
            })
        })
    }
}

/// Why a client id does not lead to a client.
pub(super) enum ClientError {
    /// Nothing is registered under it (and it is not a metadata document's URL).
    Unknown,
    /// Its metadata document could not be fetched or is not acceptable.
    Document(String),
    /// The database failed.
    Storage(sqlx::Error),
}

impl AuthServer {
    /// The client `id` names: a client registered here, or, where metadata documents are
    /// accepted and `id` is a URL, the one its document describes.
    pub(super) async fn client(&self, id: &str) -> Result<Client, ClientError> {
        if self.documents.enabled() && is_document_id(id) {
            let described = self.documents.client(id).await.map_err(ClientError::Document)?;
            return Ok(Client {
                id: id.to_string(),
                name: described.name,
                redirect_uris: described.redirect_uris,
                grant_types: described.grant_types,
                document: Some(described.auth),
            });
        }
        find_client(&self.store, id).await.map_err(ClientError::Storage)?.ok_or(ClientError::Unknown)
    }
}

async fn find_client(store: &Store, id: &str) -> sqlx::Result<Option<Client>> {
    let row = sqlx::query("SELECT id, name, redirect_uris, grant_types FROM oauth_clients WHERE id = $1")
        .bind(id)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(|r| Client {
        id: r.get(0),
        name: r.get(1),
        redirect_uris: serde_json::from_str(&r.get::<String, _>(2)).unwrap_or_default(),
        grant_types: r.get::<String, _>(3).split_whitespace().map(str::to_string).collect(),
        document: None,
    }))
}

/// Registers (or updates) the documentation page's client, so "Authorize" in Swagger UI runs the
/// authorization-code flow with PKCE against this server. Skipped when the public URL is neither
/// HTTPS nor loopback (such a redirect URI is not allowed).
pub async fn register_docs_client(store: &Store, config: &Config) -> sqlx::Result<bool> {
    let redirect = config.url(DOCS_REDIRECT_PATH);
    if redirect_uri_allowed(&redirect).is_err() {
        return Ok(false);
    }
    sqlx::query(
        "INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, scope, created_at) VALUES ($1, $2, $3, $4, NULL, $5) \
         ON CONFLICT (id) DO UPDATE SET redirect_uris = excluded.redirect_uris, name = excluded.name",
    )
    .bind(DOCS_CLIENT_ID)
    .bind("Specwright API documentation")
    .bind(serde_json::to_string(&[redirect]).unwrap_or_default())
    .bind("authorization_code refresh_token")
    .bind(now_ms())
    .execute(store.pool())
    .await?;
    Ok(true)
}

pub(super) fn registration_error(error: &'static str, description: &str) -> Response {
    TokenError::bad(error, description).into_response()
}

/// `POST /oauth/register` (RFC 7591): public clients with loopback or HTTPS redirect URIs.
pub(super) async fn register(State(s): State<Arc<AuthServer>>, headers: HeaderMap, body: Bytes) -> Response {
    if !content_type_is(&headers, "application/json") {
        return registration_error("invalid_client_metadata", "send the client metadata as application/json");
    }
    let Ok(Value::Object(meta)) = serde_json::from_slice::<Value>(&body) else {
        return registration_error("invalid_client_metadata", "the body is not a JSON object");
    };
    let nul = meta.iter().find_map(|(k, v)| if k.contains('\0') { Some(k.clone()) } else { support::nul_at(k, v) });
    if let Some(at) = nul {
        return registration_error("invalid_client_metadata", &format!("{} {HOLDS_NUL}", at.escape_debug()));
    }
    let strings = |name: &str| -> Result<Option<Vec<String>>, TokenError> {
        match meta.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>().map(Some).ok_or_else(
                    || TokenError::bad("invalid_client_metadata", format!("{name} must be an array of strings")),
                )
            }
            Some(_) => Err(TokenError::bad("invalid_client_metadata", format!("{name} must be an array of strings"))),
        }
    };
    let redirect_uris = match strings("redirect_uris") {
        Ok(Some(u)) if !u.is_empty() && u.len() <= 10 => u,
        Ok(_) => return registration_error("invalid_redirect_uri", "redirect_uris must list 1 to 10 URIs"),
        Err(r) => return r.into_response(),
    };
    let application_type = match meta.get("application_type") {
        None | Some(Value::Null) => None,
        Some(Value::String(kind)) if matches!(kind.as_str(), "native" | "web") => Some(kind.clone()),
        Some(_) => return registration_error("invalid_client_metadata", "application_type is native or web"),
    };
    for uri in &redirect_uris {
        if uri.len() > 2000 {
            return registration_error("invalid_redirect_uri", "a redirect URI is at most 2000 characters");
        }
        if let Err(why) =
            redirect_uri_allowed(uri).and_then(|()| application_type_allows(application_type.as_deref(), uri))
        {
            return registration_error("invalid_redirect_uri", &why);
        }
    }
    let grant_types = match strings("grant_types") {
        Ok(g) => g.unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]),
        Err(r) => return r.into_response(),
    };
    if let Some(g) = grant_types.iter().find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token")) {
        return registration_error("invalid_client_metadata", &format!("grant type {g} is not supported"));
    }
    match strings("response_types") {
        Ok(None) => {}
        Ok(Some(r)) if r.iter().all(|t| t == "code") => {}
        Ok(Some(_)) => return registration_error("invalid_client_metadata", "the only response type is code"),
        Err(r) => return r.into_response(),
    }
    let text = |name: &str, max: usize| -> Result<Option<String>, TokenError> {
        match meta.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(v)) if v.chars().count() <= max => Ok(Some(v.clone())),
            Some(_) => Err(TokenError::bad(
                "invalid_client_metadata",
                format!("{name} must be a string of at most {max} characters"),
            )),
        }
    };
    let (name, scope) = match (text("client_name", 200), text("scope", 500)) {
        (Ok(n), Ok(sc)) => (n, sc),
        (Err(r), _) | (_, Err(r)) => return r.into_response(),
    };
    if let Some(unknown) =
        scope.iter().flat_map(|sc| sc.split_whitespace()).find(|x| s.catalog.scopes().all(|i| i.name != *x))
    {
        return registration_error("invalid_client_metadata", &format!("unknown scope {unknown}"));
    }
    let id = format!("swc_{}", uuid::Uuid::new_v4().simple());
    let now = now_ms();
    let stored = sqlx::query(
        "INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, scope, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&id)
    .bind(Nullable(name.as_deref()))
    .bind(serde_json::to_string(&redirect_uris).unwrap_or_default())
    .bind(grant_types.join(" "))
    .bind(Nullable(scope.as_deref()))
    .bind(now)
    .execute(s.store.pool())
    .await;
    if let Err(e) = stored {
        return internal(e);
    }
    let mut doc = json!({
        "client_id": id,
        "client_id_issued_at": now / 1000,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(n) = name {
        doc["client_name"] = json!(n);
    }
    if let Some(sc) = scope {
        doc["scope"] = json!(sc);
    }
    if let Some(kind) = application_type {
        doc["application_type"] = json!(kind);
    }
    let mut resp = (StatusCode::CREATED, axum::Json(doc)).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_uri_is_https_or_http_on_a_loopback_host_and_has_no_fragment() {
        for ok in ["https://app.example/cb", "http://127.0.0.1:8765/cb", "http://[::1]/cb", "http://localhost:3000/"] {
            assert_eq!(redirect_uri_allowed(ok), Ok(()), "{ok}");
        }
        for refused in [
            "http://app.example/cb",
            "http://10.0.0.1/cb",
            "https://app.example/cb#frag",
            "ftp://app.example/",
            "/relative",
            "com.example.app:/cb",
        ] {
            assert!(redirect_uri_allowed(refused).is_err(), "{refused}");
        }
    }
}
