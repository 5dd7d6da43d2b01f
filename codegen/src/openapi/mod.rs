//! OpenAPI 3.1 emitter, built on utoipa's typed model, plus the JSON Schemas MCP tools reuse.
//!
//! The document is the contract users generate SDKs from, so every operation carries its
//! operationId, typed schemas, each error status with its body, and its OAuth scope.

mod errors;
mod operations;
mod schemas;
mod tools;
use errors::*;
use operations::*;
use schemas::*;
use tools::*;

pub use schemas::{body_schema_name, output_schema_name};
pub use tools::{input_schema, output_schema, standalone_schema};

use serde_json::{Value, json};
use utoipa::openapi::OpenApiBuilder;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::info::{InfoBuilder, LicenseBuilder};
use utoipa::openapi::path::{PathItem, PathsBuilder};
use utoipa::openapi::schema::ComponentsBuilder;
use utoipa::openapi::security::{AuthorizationCode, Flow, OAuth2, Scopes, SecurityScheme};
use utoipa::openapi::server::ServerBuilder;
use utoipa::openapi::tag::TagBuilder;

use crate::ir::Api;

/// Name of the error envelope schema.
pub const ERROR_SCHEMA: &str = "ErrorResponse";
const ERROR_BODY_SCHEMA: &str = "ErrorBody";
const PAGE_META_SCHEMA: &str = "PageMeta";
/// Name of the RFC 9457 problem details schema (`[wire] errors = "problem"`).
pub const PROBLEM_SCHEMA: &str = "Problem";

/// What the description of a deprecated operation says.
pub fn deprecation_note(d: &crate::spec::Deprecated) -> String {
    let mut note = format!("**Deprecated**{}", d.since_words());
    if let Some(sunset) = &d.sunset {
        note.push_str(&format!("; it may be removed from {sunset}"));
    }
    note.push('.');
    if !d.instead.is_empty() {
        note.push_str(&format!(" {}", d.instead.trim()));
    }
    note
}

/// The service's OpenAPI 3.1 document as a JSON value.
pub fn document(api: &Api) -> Value {
    let s = &api.spec;
    let mut paths = PathsBuilder::new();
    let mut order: Vec<&str> = Vec::new();
    for op in &api.operations {
        if !order.contains(&op.def.path.as_str()) {
            order.push(&op.def.path);
        }
    }
    for path in order {
        let mut item: Option<PathItem> = None;
        for op in api.operations.iter().filter(|o| o.def.path == path) {
            let new = PathItem::new(http_method(op.method()), operation(api, op));
            match &mut item {
                Some(existing) => existing.merge_operations(new),
                None => item = Some(new),
            }
        }
        if let Some(item) = item {
            paths = paths.path(path, item);
        }
    }
    let scopes = Scopes::from_iter(s.security.scopes.iter().map(|sc| (sc.name.clone(), sc.description.clone())));
    let oauth = SecurityScheme::OAuth2(OAuth2::with_description(
        [Flow::AuthorizationCode(AuthorizationCode::new(&s.security.authorization_url, &s.security.token_url, scopes))],
        "OAuth 2.1 bearer tokens (JWT or personal access token). Scopes form a strict hierarchy: a higher tier satisfies every lower one.",
    ));
    let mut components = ComponentsBuilder::new().security_scheme("oauth2", oauth);
    // The models' schemas, then the error bodies' (`errors.rs`).
    for (name, schema) in component_schemas(api).into_iter().chain(error_schemas(api)) {
        components = components.schema(name, schema);
    }
    let mut info_ext = ExtensionsBuilder::new().add(
        "x-scope-hierarchy",
        json!(s.security.scopes.iter().map(|sc| json!({"scope": sc.name, "implies": sc.implies})).collect::<Vec<_>>()),
    );
    if let Some(rl) = &s.rate_limits {
        info_ext = info_ext.add("x-rate-limits", serde_json::to_value(rl).unwrap_or_default());
    }
    let info = InfoBuilder::new()
        .title(&s.service.title)
        .version(&s.service.version)
        .description(Some(s.service.description.clone()))
        .license(Some(LicenseBuilder::new().name("Apache-2.0").identifier(Some("Apache-2.0")).build()))
        .extensions(Some(info_ext.build()))
        .build();
    let tags =
        s.service.tags.iter().map(|t| TagBuilder::new().name(&t.name).description(Some(t.description.clone())).build());
    let doc = OpenApiBuilder::new()
        .info(info)
        .servers(Some([ServerBuilder::new().url(&s.service.base_path).build()]))
        .paths(paths.build())
        .components(Some(components.build()))
        .tags(Some(tags))
        .build();
    let mut v = serde_json::to_value(&doc).unwrap_or_default();
    if !s.webhooks.is_empty() {
        v["webhooks"] = webhooks(api);
    }
    rename_key(&mut v, "x-contentSchema", "contentSchema");
    rename_key(&mut v, "x-header-required", "required");
    requires_keywords(&mut v);
    order_extensions(&mut v);
    v
}

/// The `webhooks` of the document: for each event type, the `POST` the service sends to a
/// subscriber's URL, with its Standard Webhooks headers and its body (`type`, `timestamp` and the
/// payload as `data`), and what the receiver answers.
fn webhooks(api: &Api) -> Value {
    let header = |name: &str, text: &str| json!({"name": name, "in": "header", "required": true, "description": text, "schema": {"type": "string"}});
    let mut out = serde_json::Map::new();
    for (name, w) in &api.spec.webhooks {
        let mut description = w.description.trim().to_string();
        if !description.is_empty() {
            description.push_str(
                "

",
            );
        }
        description.push_str(
            "Sent as a `POST` to each URL subscribed to this event, signed as the Standard Webhooks              specification says; an answer other than 2xx, or none within 15 seconds, is retried with              backoff (the same `webhook-id` each time, so a receiver can drop duplicates).",
        );
        let event = json!({
            "type": "object",
            "description": w.summary,
            "required": ["type", "timestamp", "data"],
            "properties": {
                "type": {"type": "string", "enum": [name], "description": "The event type."},
                "timestamp": {"type": "string", "format": "date-time", "description": "When the event happened."},
                "data": {"$ref": format!("#/components/schemas/{}", w.payload)},
            },
        });
        let post = json!({
            "operationId": format!("webhook_{}", name.replace('.', "_")),
            "summary": w.summary,
            "description": description,
            "tags": w.tags,
            "parameters": [
                header("webhook-id", "The message's id (`msg_…`): the same on every retry of it."),
                header("webhook-timestamp", "When this attempt was sent, in Unix seconds: refuse one far from now."),
                header(
                    "webhook-signature",
                    "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the                      subscription's secret (`whsec_…`, base64 of the key); several, space-separated, while a                      secret is rotated.",
                ),
            ],
            // The receiver authenticates a delivery by its signature, which no security scheme
            // of OpenAPI describes: none is asked of the sender (the headers say how to check).
            "security": [],
            "requestBody": {"required": true, "content": {"application/json": {"schema": event}}},
            "responses": {
                "2XX": {"description": "Received. Anything else is retried."},
            },
        });
        out.insert(name.clone(), json!({"post": post}));
    }
    Value::Object(out)
}
