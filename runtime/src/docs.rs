//! The API documentation: Swagger UI at `/docs/` and the OpenAPI documents at `/openapi/…`.
//!
//! The generated documents are static (the same specs give the same bytes) and name the server
//! relatively (`servers: [{"url": "/api/v1"}]`, the OAuth flow at `/oauth/authorize`). Where this
//! server runs is only known at run time, so they are served with those URLs made absolute under
//! the public URL: behind a proxy that strips a path (`https://example.com/sw`), a client reading
//! `servers` or Swagger UI's "Authorize" reaches `/sw/…`, not the host's root. Swagger UI's own
//! configuration (the documents' addresses, the OAuth redirect URI) comes from the public URL too.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde_json::{Value, json};
use support::ServiceInfo;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::oauth::{AUTHORIZE_PATH, DOCS_CLIENT_ID, DOCS_REDIRECT_PATH, TOKEN_PATH};

/// Where Swagger UI is served.
pub const DOCS_PATH: &str = "/docs/";

/// Where `service`'s OpenAPI 3.1 document is served.
pub fn document_path(service: &ServiceInfo) -> String {
    format!("/openapi/{}.json", service.name)
}

/// The served documents of the registered services: their path and which service's document in
/// which version (`/openapi/<service>.json`, 3.1, and `/openapi/<service>.3.0.json`).
fn documents(catalog: &Catalog) -> Vec<(String, &'static ServiceInfo, &'static str)> {
    catalog
        .services()
        .flat_map(|s| {
            [(document_path(s), s, s.openapi_json), (format!("/openapi/{}.3.0.json", s.name), s, s.openapi_30_json)]
        })
        .collect()
}

/// A generated document as this server serves it: `servers` names the service's base path under
/// the public URL and, with the embedded authorization server, the OAuth flows name its endpoints
/// under the public URL. Everything else is the generated document, in the same layout.
pub fn with_public_urls(document: &str, service: &ServiceInfo, config: &Config) -> String {
    let Ok(mut doc) = serde_json::from_str::<Value>(document) else {
        // Generated and checked by tests; serve it as it is rather than fail.
        return document.to_string();
    };
    doc["servers"] = json!([{ "url": config.url(service.base_path) }]);
    if config.embedded_issuer() {
        let flows = doc
            .pointer_mut("/components/securitySchemes")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|schemes| schemes.values_mut())
            .filter_map(|scheme| scheme.get_mut("flows").and_then(Value::as_object_mut))
            .flat_map(|flows| flows.values_mut());
        for flow in flows {
            for (field, path) in
                [("authorizationUrl", AUTHORIZE_PATH), ("tokenUrl", TOKEN_PATH), ("refreshUrl", TOKEN_PATH)]
            {
                if flow.get(field).is_some() {
                    flow[field] = json!(config.url(path));
                }
            }
        }
    }
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| document.to_string());
    text.push('\n');
    text
}

/// What Swagger UI is configured with, all of it under the public URL.
struct SwaggerSettings {
    /// Each document's title and URL.
    documents: Vec<(String, String)>,
    /// The page that receives the authorization response (registered for the page's client).
    redirect_url: String,
    /// Whether "Authorize" signs in through the embedded authorization server.
    embedded_issuer: bool,
}

impl SwaggerSettings {
    fn swagger_config(&self) -> utoipa_swagger_ui::Config<'_> {
        let urls = self.documents.iter().map(|(title, url)| utoipa_swagger_ui::Url::new(title, url));
        let config = if self.embedded_issuer {
            // "Authorize" on the page signs in through the embedded authorization server (code + PKCE).
            let oauth = utoipa_swagger_ui::oauth::Config::new()
                .client_id(DOCS_CLIENT_ID)
                .app_name("Specwright API documentation")
                .use_pkce_with_authorization_code_grant(true);
            utoipa_swagger_ui::Config::with_oauth_config(urls, oauth)
        } else {
            utoipa_swagger_ui::Config::new(urls)
        };
        config
            .validator_url("none")
            .display_operation_id(true)
            .persist_authorization(true)
            .oauth2_redirect_url(self.redirect_url.clone())
    }
}

/// A file of Swagger UI (`swagger-initializer.js` carries the configuration).
async fn swagger_file(State(settings): State<Arc<SwaggerSettings>>, tail: Option<Path<String>>) -> Response {
    let tail = tail.as_ref().map_or("", |t| t.as_str());
    match utoipa_swagger_ui::serve(tail, Arc::new(settings.swagger_config())) {
        Ok(Some(file)) => {
            let mut resp = (StatusCode::OK, file.bytes.into_owned()).into_response();
            let h = resp.headers_mut();
            if let Ok(v) = HeaderValue::from_str(&file.content_type) {
                h.insert(header::CONTENT_TYPE, v);
            }
            if file.gzpipped {
                h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            }
            resp
        }
        Ok(None) => StatusCode::NOT_FOUND.into_response(),
        Err(e) => {
            tracing::error!(error = %e, "could not render Swagger UI's configuration");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Swagger UI (`/docs`, `/docs/…`) listing every registered service, and their OpenAPI documents.
pub fn router(config: &Config, catalog: &Catalog) -> Router {
    let settings = Arc::new(SwaggerSettings {
        documents: catalog
            .services()
            .map(|s| (format!("{} (OpenAPI 3.1)", s.title), config.url(&document_path(s))))
            .collect(),
        redirect_url: config.url(DOCS_REDIRECT_PATH),
        embedded_issuer: config.embedded_issuer(),
    });
    let docs = config.path(DOCS_PATH);
    let mut router = Router::new()
        .route("/docs", get(move || async move { Redirect::to(&docs) }))
        .route(DOCS_PATH, get(swagger_file))
        .route(&format!("{DOCS_PATH}{{*tail}}"), get(swagger_file))
        .with_state(settings);
    for (path, service, document) in documents(catalog) {
        let body: Arc<str> = with_public_urls(document, service, config).into();
        router = router.route(
            &path,
            get(move || {
                let body = body.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], body.to_string()) }
            })
            .layer(crate::cors::public_documents()),
        );
    }
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generated document's shape: relative `servers`, an OAuth flow at the issuer's paths.
    const DOCUMENT: &str = r#"{
  "openapi": "3.1.0",
  "info": { "title": "Example", "version": "1.0.0" },
  "servers": [{ "url": "/api/v1" }],
  "paths": {},
  "components": { "securitySchemes": { "oauth2": { "type": "oauth2", "flows": { "authorizationCode": {
    "authorizationUrl": "/oauth/authorize", "tokenUrl": "/oauth/token", "scopes": { "example:read": "Read." }
  } } } } }
}"#;

    static EXAMPLE: ServiceInfo = ServiceInfo {
        name: "example",
        title: "Example",
        base_path: "/api/v1",
        mcp_path: None,
        metadata_paths: &[],
        mcp_metadata_paths: &[],
        mcp_instructions: None,
        audit: false,
        stored_tokens: &[],
        scopes: &[],
        errors: &[],
        roles: support::ErrorRoles {
            unauthenticated: "",
            invalid_token: "",
            insufficient_scope: "",
            malformed: "",
            validation: "",
            payload_too_large: "",
            unsupported_media_type: "",
            not_found: "",
            method_not_allowed: "",
            rate_limited: "",
            internal: "",
            request_timeout: "",
            unavailable: "",
            precondition_failed: None,
            precondition_required: None,
            range_not_satisfiable: None,
        },
        wire: support::Wire::ENVELOPE,
        default_per_page: 20,
        max_per_page: 100,
        plans: &[],
        default_plan: None,
        openapi_json: DOCUMENT,
        openapi_30_json: DOCUMENT,
        tools_json: "[]",
        mcp_catalog_json: "{}",
        operations: || &[],
    };

    #[test]
    fn served_documents_name_the_public_url_and_keep_everything_else() {
        let mut config =
            Config::new("127.0.0.1:8080".parse().unwrap(), Some("https://example.com/sw".into()), ".".into());
        let catalog = Catalog::new([&EXAMPLE]);
        for (_, service, document) in documents(&catalog) {
            let served: Value = serde_json::from_str(&with_public_urls(document, service, &config)).unwrap();
            let mut expected: Value = serde_json::from_str(document).unwrap();
            expected["servers"] = json!([{ "url": format!("https://example.com/sw{}", service.base_path) }]);
            let flow = &mut expected["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"];
            flow["authorizationUrl"] = json!("https://example.com/sw/oauth/authorize");
            flow["tokenUrl"] = json!("https://example.com/sw/oauth/token");
            assert_eq!(served, expected, "{}", service.title);
        }
        // With an external issuer, the flows are that issuer's business.
        config.external_issuer = Some("https://idp.example".into());
        let (_, service, document) = documents(&catalog).swap_remove(0);
        let served: Value = serde_json::from_str(&with_public_urls(document, service, &config)).unwrap();
        let original: Value = serde_json::from_str(document).unwrap();
        assert_eq!(served["components"], original["components"]);
        assert_eq!(served["servers"], json!([{ "url": "https://example.com/sw/api/v1" }]));
    }
}
