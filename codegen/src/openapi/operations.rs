//! Operations: parameters, request bodies in each media type, responses with their headers, scopes and deprecation.

use serde_json::json;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, RefOr, Required};

use crate::ir::{Api, Operation, Ty};
use crate::spec::{Location, Method, StatusDocumented, SuccessFormat};

use super::*;

pub(super) fn header(description: &str, t: Type) -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(Some(RefOr::T(Schema::Object(ObjectBuilder::new().schema_type(t).build()))))
        .description(Some(description.to_string()))
        .build()
}

/// The headers every answer of a deprecated operation carries.
pub(super) fn deprecation_doc_headers(op: &Operation, mut b: ResponseBuilder) -> ResponseBuilder {
    let Some(d) = &op.def.deprecated else { return b };
    if let Some(since) = &d.since {
        b = b.header(
            "Deprecation",
            header(&format!("RFC 9745: deprecated since {since} (`@` and that day's Unix time)."), Type::String),
        );
    }
    if let Some(sunset) = &d.sunset {
        b = b.header("Sunset", header(&format!("RFC 8594: may be removed from {sunset}."), Type::String));
    }
    b
}

pub(super) fn common_headers(api: &Api, mut b: ResponseBuilder) -> ResponseBuilder {
    b = b.header(
        "X-Request-Id",
        header("Identifier of this request; also in error bodies and audit rows.", Type::String),
    );
    if api.spec.rate_limits.is_some() {
        b = b
            .header("X-RateLimit-Limit", header("Requests allowed in the current window.", Type::Integer))
            .header("X-RateLimit-Remaining", header("Requests left in the current window.", Type::Integer))
            .header(
                "X-RateLimit-Reset",
                header("When the current window resets, in UTC epoch seconds.", Type::Integer),
            );
    }
    b
}

/// The name of the input field a whole body is, as openapi-generator's
/// `x-codegen-request-body-name` gives it (the name of the body parameter in generated clients).
pub(super) fn body_name(field: &str) -> utoipa::openapi::extensions::Extensions {
    ExtensionsBuilder::new().add("x-codegen-request-body-name", field).build()
}

/// The request body of `op` in its format: JSON, a form, multipart (each file part with the
/// content types it accepts), or a raw file of each accepted type.
pub(super) fn request_body(api: &Api, op: &Operation) -> Option<utoipa::openapi::request_body::RequestBody> {
    use crate::spec::BodyFormat;
    let body = RequestBodyBuilder::new().required(Some(Required::True));
    let files = || api.input(op).into_iter().flat_map(|m| m.fields_in(Location::Body)).filter(|f| f.ty == Ty::File);
    if op.def.body == BodyFormat::Raw {
        let f = files().next()?;
        let mut types = f.def.media_types.clone();
        if types.is_empty() {
            types.push("application/octet-stream".into());
        }
        let body = types.iter().fold(body, |b, m| {
            let mut schema = match type_schema(&Ty::File, Some(f), Side::Request) {
                RefOr::T(Schema::Object(o)) => o,
                _ => ObjectBuilder::new().build(),
            };
            schema.content_media_type = m.clone();
            b.content(m.clone(), ContentBuilder::new().schema(Some(RefOr::T(Schema::Object(schema)))).build())
        });
        return Some(body.extensions(Some(body_name(&f.name))).build());
    }
    if let Some(f) = api.input(op).and_then(|m| m.fields_in(Location::Payload).next()) {
        let schema = field_schema(f, Side::Request, false);
        let body = RequestBodyBuilder::new()
            .description(Some(f.def.description.clone()))
            .required(Some(if f.required() { Required::True } else { Required::False }))
            .extensions(Some(body_name(&f.name)));
        let body = json_types(&op.def.request_types).fold(body, |b, m| {
            let content =
                of_own_shape(api, op, &m).unwrap_or_else(|| ContentBuilder::new().schema(Some(schema.clone())));
            b.content(m, content.build())
        });
        return Some(body.build());
    }
    let name = body_schema_name(api, op)?;
    let of_body = || ContentBuilder::new().schema(Some(reference(&name)));
    let mut content = of_body();
    // Nested values of a form travel in bracket notation, as `deepObject` writes them.
    let nested = || api.input(op).into_iter().flat_map(|m| m.fields_in(Location::Body)).filter(|f| !f.ty.is_plain());
    let in_brackets = |content: ContentBuilder| {
        nested().fold(content, |c, f| {
            use utoipa::openapi::{encoding::EncodingBuilder, path::ParameterStyle};
            c.encoding(f.wire(), EncodingBuilder::new().style(Some(ParameterStyle::DeepObject)).explode(Some(true)))
        })
    };
    if matches!(op.def.body, BodyFormat::Json | BodyFormat::Raw) {
        let form = in_brackets(of_body()).build();
        let content = content.build();
        let body = json_types(&op.def.request_types).fold(body, |b, m| match of_own_shape(api, op, &m) {
            Some(own) => b.content(m, own.build()),
            None if support::BodyFormat::of_media(&m) == Some(support::BodyFormat::Form) => b.content(m, form.clone()),
            None => b.content(m, content.clone()),
        });
        return Some(body.build());
    }
    let media_type = match op.def.body {
        BodyFormat::Json | BodyFormat::Raw => "application/json",
        BodyFormat::Form => {
            content = in_brackets(content);
            "application/x-www-form-urlencoded"
        }
        BodyFormat::Multipart => {
            for f in files().filter(|f| !f.def.media_types.is_empty()) {
                let encoding = utoipa::openapi::encoding::EncodingBuilder::new()
                    .content_type(Some(f.def.media_types.join(", ")))
                    .build();
                content = content.encoding(f.name.clone(), encoding);
            }
            "multipart/form-data"
        }
    };
    Some(body.content(media_type, content.build()).build())
}

/// The content of request type `m` where its body has a shape of its own (`request_models`): its
/// model's schema, each file part with the content types it accepts.
fn of_own_shape(api: &Api, op: &Operation, m: &str) -> Option<ContentBuilder> {
    let model = api.models.get(op.def.request_models.get(m)?)?;
    let mut content = ContentBuilder::new().schema(Some(reference(&model.name)));
    if support::BodyFormat::of_media(m) == Some(support::BodyFormat::Multipart) {
        for f in model.fields.iter().filter(|f| f.ty == Ty::File && !f.def.media_types.is_empty()) {
            let encoding =
                utoipa::openapi::encoding::EncodingBuilder::new().content_type(Some(f.def.media_types.join(", ")));
            content = content.encoding(f.wire(), encoding.build());
        }
    }
    Some(content)
}

/// The schema of an answer under media type `m`: the output's in JSON (`json`, in the service's
/// wire format), the output itself in XML (`bare`, which OpenAPI's `xml` rules map from); a string
/// of that media type in any other format, which the implementation renders as it will.
fn answer_schema(m: &str, json: RefOr<Schema>, bare: RefOr<Schema>) -> RefOr<Schema> {
    let essence = m.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    if support::is_json_media(m) {
        return json;
    }
    if essence.ends_with("/xml") || essence.ends_with("+xml") {
        return bare;
    }
    let text = ObjectBuilder::new().schema_type(Type::String).content_media_type(m.to_string()).build();
    RefOr::T(Schema::Object(text))
}

/// The media types a JSON body is documented under: the spec's list, or `application/json`.
fn json_types(listed: &[String]) -> impl Iterator<Item = String> + '_ {
    let default = listed.is_empty().then(|| "application/json".to_string());
    listed.iter().cloned().chain(default)
}

pub(super) fn operation(api: &Api, op: &Operation) -> utoipa::openapi::path::Operation {
    let scope = op.def.scope.clone().unwrap_or_default();
    let mut description = op.def.description.clone();
    if !description.is_empty() {
        description.push_str("\n\n");
    }
    if op.def.public {
        description.push_str("Public: served without a token (one that is sent is checked).");
    } else {
        description.push_str(&format!("Requires scope `{scope}` (or a higher tier)."));
    }
    if let Some(tool) = &op.def.mcp {
        description.push_str(&format!(" Also available as MCP tool `{}`.", tool.name));
    }
    if let Some(d) = &op.def.deprecated {
        description.push_str(&format!("\n\n{}", deprecation_note(d)));
    }
    let mut b = OperationBuilder::new()
        .operation_id(Some(op.def.id.clone()))
        .summary(Some(op.def.summary.clone()))
        .description(Some(description))
        .tags(Some(op.def.tags.clone()));
    // `security: []`: no requirement, as OpenAPI writes a public operation.
    b = match op.def.public {
        true => b.securities(Some(Vec::<SecurityRequirement>::new())),
        false => b.security(SecurityRequirement::new("oauth2", [scope.clone()])),
    };
    if let Some(model) = api.input(op) {
        for f in model.fields.iter().filter(|f| !matches!(f.location(), Location::Body | Location::Payload)) {
            let (loc, name) = match f.location() {
                Location::Path => (ParameterIn::Path, f.name.clone()),
                Location::Header => (ParameterIn::Header, f.http_header()),
                _ => (ParameterIn::Query, f.wire().to_string()),
            };
            let mut p = ParameterBuilder::new()
                .name(name)
                .parameter_in(loc)
                .required(if f.required() { Required::True } else { Required::False })
                .description(Some(f.def.description.clone()));
            let schema = field_schema(f, Side::Request, false);
            if let Some(media) = &f.def.content {
                // JSON text: the media type says how it is written, in place of a style.
                p = p.content(media.clone(), ContentBuilder::new().schema(Some(schema)).build());
            } else {
                p = p.schema(Some(schema));
            }
            let styled = f.def.content.is_none();
            if styled && matches!(f.ty, Ty::List(_)) && f.location() == Location::Path {
                // Comma-separated: `simple`, the style of every path parameter.
                p = p.style(Some(utoipa::openapi::path::ParameterStyle::Simple));
            } else if styled && matches!(f.ty, Ty::List(_) | Ty::Model(_) | Ty::Map(_) | Ty::Json) {
                use utoipa::openapi::path::ParameterStyle;
                p = match f.def.style {
                    support::ListStyle::Repeated => p.explode(Some(true)),
                    support::ListStyle::Comma => p.style(Some(ParameterStyle::Form)).explode(Some(false)),
                    support::ListStyle::Space => p.style(Some(ParameterStyle::SpaceDelimited)).explode(Some(false)),
                    support::ListStyle::Pipe => p.style(Some(ParameterStyle::PipeDelimited)).explode(Some(false)),
                    support::ListStyle::Deep => p.style(Some(ParameterStyle::DeepObject)).explode(Some(true)),
                };
            }
            if f.def.deprecated {
                p = p.deprecated(Some(utoipa::openapi::Deprecated::True));
            }
            b = b.parameter(p.build());
        }
    }
    let conditional = op.def.conditional();
    let tag_param = |name: &str, text: &str| {
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(text.to_string()))
            .schema(Some(RefOr::T(Schema::Object(ObjectBuilder::new().schema_type(Type::String).build()))))
            .build()
    };
    match conditional {
        Some(support::Conditional::Read) => {
            b = b.parameter(tag_param(
                "If-None-Match",
                "The `ETag`s of versions the client holds, comma-separated (or `*`): when one is current \
                 (weak comparison), the answer is `304 Not Modified` with no body. A value naming no version \
                 matches none.",
            ))
        }
        Some(support::Conditional::Write { required }) => {
            let mut p = tag_param(
                "If-Match",
                "The `ETag` of the version the change is based on (or `*`): when it is no longer current, or the \
                 value names no version, the change is refused with `412` and nothing changes.",
            );
            if required {
                p.required = Required::True;
            }
            b = b.parameter(p)
        }
        None => {}
    }
    if op.def.ranges {
        b = b
            .parameter(tag_param(
                "Range",
                "One range of bytes of the file (`bytes=0-1023`, `bytes=1024-`, `bytes=-512`): the answer is                  `206 Partial Content` with those bytes. Several ranges, or a range that is not of bytes,                  answer the whole file; a range starting past its end answers `416`.",
            ))
            .parameter(tag_param(
                "If-Range",
                "The `ETag` of the file the client holds parts of: when the file has changed since, the whole                  new file is answered instead of a part.",
            ));
    }
    if let Some(body) = request_body(api, op) {
        b = b.request_body(Some(body));
    }
    let mut responses = ResponsesBuilder::new();
    let declared = |mut r: ResponseBuilder| {
        let headers = op.def.output.as_ref().map(|o| api.models[o].fields_in(Location::Header).collect::<Vec<_>>());
        for f in headers.unwrap_or_default() {
            let mut h = header(&f.def.description, if f.ty == Ty::Integer { Type::Integer } else { Type::String });
            if !matches!(f.ty, Ty::String | Ty::Integer) {
                // A number, a boolean, an enum, a list: its schema says which.
                h.schema = Some(field_schema(f, Side::Response, false));
            }
            if f.required() {
                // The Header Object's `required`, which utoipa has no field for (renamed in `document`).
                h.extensions = Some(ExtensionsBuilder::new().add("header-required", true).build());
            }
            r = r.header(f.http_header(), h);
        }
        if conditional.is_some() && op.def.output.is_some() {
            r = r.header(
                "ETag",
                header(
                    "The entity tag of the version answered: send it in `If-Match` (or `If-None-Match`).",
                    Type::String,
                ),
            );
        }
        r
    };
    let success = match output_schema_name(api, op) {
        Some(name) => {
            let mut r = json_types(&op.def.answer_types).fold(
                ResponseBuilder::new().description(op.def.summary.clone()),
                |r, m| {
                    // Other formats render the output itself, not its envelope (of a page: its items).
                    let bare = match op.def.output.as_deref() {
                        Some(m) if op.def.paginated => {
                            type_schema(&Ty::List(Box::new(Ty::Model(m.into()))), None, Side::Response)
                        }
                        Some(m) if !op.list_output => reference(m),
                        _ => reference(&name),
                    };
                    let schema = answer_schema(&m, reference(&name), bare);
                    r.content(m, ContentBuilder::new().schema(Some(schema)).build())
                },
            );
            if op.def.no_store {
                r = r.header("Cache-Control", header("Always `no-store`: the body carries a secret.", Type::String));
            }
            if op.def.paginated && api.spec.wire.success == SuccessFormat::Bare {
                r = r
                    .header("X-Total-Count", header("Items matching the request, over all pages.", Type::Integer))
                    .header(
                        "Link",
                        header(
                            "RFC 8288 links to the `first`, `prev`, `next` and `last` pages: the request's own \
                             query with `page` and `per_page` set, as references relative to the request's URL.",
                            Type::String,
                        ),
                    );
            }
            common_headers(api, declared(r))
        }
        None if op.def.stream.is_some() => {
            let model = op.def.output.clone().unwrap_or_default();
            let (media_type, text) = match op.def.stream {
                Some(support::StreamFormat::Ndjson) => (
                    "application/x-ndjson",
                    format!(
                        "Newline-delimited JSON: one `{model}` per line, as it happens; an empty line after 15 s without one."
                    ),
                ),
                _ => (
                    "text/event-stream",
                    format!(
                        "Server-Sent Events: each event's `data` is one `{model}` as JSON and its `id` the event's \
                         (send it back as `Last-Event-ID` to resume); a `: keep-alive` comment after 15 s without one."
                    ),
                ),
            };
            let item_ref = json!({"$ref": format!("#/components/schemas/{model}")});
            let schema = match op.def.stream {
                // Each event as OpenAPI 3.2 describes Server-Sent Events (and schemathesis reads
                // them): its `id`, and its `data`, JSON text of the model (`contentSchema`, which
                // utoipa writes as the extension `x-contentSchema`, renamed in `document`).
                Some(support::StreamFormat::Sse) => {
                    let text_of =
                        |d: &str| ObjectBuilder::new().schema_type(Type::String).description(Some(d.to_string()));
                    let data = text_of(&format!("One `{model}` as JSON."))
                        .content_media_type("application/json")
                        .extensions(Some(ExtensionsBuilder::new().add("contentSchema", item_ref.clone()).build()))
                        .build();
                    ObjectBuilder::new()
                        .schema_type(Type::Object)
                        .description(Some(text))
                        .property(
                            "id",
                            text_of("The event's id: send it back as `Last-Event-ID` to resume after it.").build(),
                        )
                        .property("event", text_of("Always `message`.").build())
                        .property("data", data)
                        .required("data")
                        .build()
                }
                _ => ObjectBuilder::new().schema_type(Type::String).description(Some(text)).build(),
            };
            // The schema of each item, as OpenAPI 3.2's `itemSchema` says it, for tools that read it.
            let item = ExtensionsBuilder::new().add("x-item-schema", item_ref);
            let content =
                ContentBuilder::new().schema(Some(RefOr::T(Schema::Object(schema)))).extensions(Some(item.build()));
            let r = ResponseBuilder::new().description(op.def.summary.clone()).content(media_type, content.build());
            common_headers(api, r)
        }
        None if op.file_output => {
            let mut r = ResponseBuilder::new().description(op.def.summary.clone());
            for m in &op.def.media_types {
                // 3.1: a string of that media type (the 3.0 rendering makes it `format: binary`).
                let schema = ObjectBuilder::new().schema_type(Type::String).content_media_type(m.clone()).build();
                r = r.content(m.clone(), ContentBuilder::new().schema(Some(RefOr::T(Schema::Object(schema)))).build());
            }
            r = r.header(
                "Content-Disposition",
                header("`attachment` with the name to save it under (RFC 6266), or `inline`.", Type::String),
            );
            if op.def.ranges {
                r = r
                    .header(
                        "Accept-Ranges",
                        header("Always `bytes`: parts may be asked for with `Range`.", Type::String),
                    )
                    .header(
                        "ETag",
                        header(
                            "The file's entity tag, when it has one: send it in `If-Range` with a `Range`.",
                            Type::String,
                        ),
                    );
            }
            // The header fields of an output model whose payload is the file.
            common_headers(api, declared(r))
        }
        None if op.def.output.is_some() && op.output_payload.is_none() => {
            common_headers(api, declared(ResponseBuilder::new().description(op.def.summary.clone())))
        }
        None if op.value_output.is_some() || op.output_payload.is_some() => {
            let schema =
                value_output_schema(api, op).unwrap_or_else(|| RefOr::T(Schema::Object(ObjectBuilder::new().build())));
            let r = json_types(&op.def.answer_types).fold(
                ResponseBuilder::new().description(op.def.summary.clone()),
                |r, m| {
                    let bare = match output_payload(api, op) {
                        Some(payload) => Some(field_schema(payload, Side::Response, false)),
                        None => op.value_output.as_ref().map(|t| type_schema(t, None, Side::Response)),
                    };
                    let schema = answer_schema(&m, schema.clone(), bare.unwrap_or_else(|| schema.clone()));
                    r.content(m, ContentBuilder::new().schema(Some(schema)).build())
                },
            );
            common_headers(api, declared(r))
        }
        None => common_headers(api, ResponseBuilder::new().description("Done; no content.")),
    };
    // The status as the spec says the documents state it.
    let key = match op.def.status_documented {
        StatusDocumented::Exact => Some(op.status.to_string()),
        StatusDocumented::Range => Some(format!("{}XX", op.status / 100)),
        StatusDocumented::Default => Some("default".to_string()),
        StatusDocumented::None => None,
    };
    if let Some(key) = key {
        responses = responses.response(key, deprecation_doc_headers(op, success).build());
    }
    for alt in &op.alternatives {
        let text = match alt.description.as_str() {
            "" => match crate::ir::Alternative::reason(alt.status) {
                "" => format!("Success ({}).", alt.status),
                reason => format!("{reason}."),
            },
            d => d.to_string(),
        };
        let mut r = ResponseBuilder::new().description(text);
        if alt.redirect() {
            let mut h = header("Where to go: a URL, relative to the request's when it is relative.", Type::String);
            h.extensions = Some(ExtensionsBuilder::new().add("header-required", true).build());
            r = r.header("Location", h);
        }
        if let Some(ty) = &alt.output {
            // The main answer's schema where it answers the same model (as its envelope names it).
            let same = op.def.output.as_ref().filter(|m| !op.list_output && *ty == Ty::Model(m.to_string()));
            let schema = match same.and(output_schema_name(api, op)) {
                Some(name) => reference(&name),
                None => value_schema(api, ty, &op.def.summary),
            };
            r = json_types(&op.def.answer_types).fold(r, |r, m| {
                let schema = answer_schema(&m, schema.clone(), type_schema(ty, None, Side::Response));
                r.content(m, ContentBuilder::new().schema(Some(schema)).build())
            });
            if conditional.is_some() {
                r = r.header(
                    "ETag",
                    header(
                        "The entity tag of the version answered: send it in `If-Match` (or `If-None-Match`).",
                        Type::String,
                    ),
                );
            }
        }
        responses =
            responses.response(alt.status.to_string(), deprecation_doc_headers(op, common_headers(api, r)).build());
    }
    if op.def.ranges {
        let mut r = ResponseBuilder::new().description("Partial content: the bytes the `Range` asked for.");
        for m in &op.def.media_types {
            let schema = ObjectBuilder::new().schema_type(Type::String).content_media_type(m.clone()).build();
            r = r.content(m.clone(), ContentBuilder::new().schema(Some(RefOr::T(Schema::Object(schema)))).build());
        }
        let r = r
            .header(
                "Content-Range",
                header("The bytes answered and the file's length: `bytes 0-1023/4096`.", Type::String),
            )
            .header("Accept-Ranges", header("Always `bytes`.", Type::String));
        responses = responses.response("206", deprecation_doc_headers(op, common_headers(api, r)).build());
    }
    if conditional == Some(support::Conditional::Read) {
        let r = ResponseBuilder::new()
            .description("Not modified: the version `If-None-Match` names is current; no body.")
            .header("ETag", header("The entity tag of the current version.", Type::String));
        responses = responses.response("304", deprecation_doc_headers(op, common_headers(api, r)).build());
    }
    // Group codes by status: one response per status, listing every code it may carry.
    let mut statuses: Vec<u16> = op.errors.iter().map(|c| api.status_of(c)).collect();
    statuses.sort_unstable();
    statuses.dedup();
    for status in statuses {
        let codes: Vec<&String> = op.errors.iter().filter(|c| api.status_of(c) == status).collect();
        let text = codes.iter().map(|c| error_description(api, c)).collect::<Vec<_>>().join(" ");
        let (media_type, schema) = error_content(api);
        let mut r = common_headers(
            api,
            ResponseBuilder::new()
                .description(text)
                .content(media_type, ContentBuilder::new().schema(Some(reference(schema))).build()),
        );
        if status == 401 || status == 403 {
            r = r.header(
                "WWW-Authenticate",
                header(
                    "RFC 6750 Bearer challenge naming the required scope and the Protected Resource Metadata URL.",
                    Type::String,
                ),
            );
        }
        if status == 429 {
            r = r.header("Retry-After", header("Seconds to wait before retrying (at least 1).", Type::Integer));
        }
        if status == 416 && op.def.ranges {
            r = r.header("Content-Range", header("The file's length: `bytes */4096`.", Type::String));
        }
        responses = responses.response(status.to_string(), deprecation_doc_headers(op, r).build());
    }
    b = b.responses(responses.build());
    if op.def.deprecated.is_some() {
        b = b.deprecated(Some(utoipa::openapi::Deprecated::True));
    }
    let mut ext = ExtensionsBuilder::new()
        .add("x-required-scope", json!(scope))
        .add("x-rate-limited", json!(op.def.rate_limited));
    if let Some(tool) = &op.def.mcp {
        ext = ext.add("x-mcp-tool", json!(tool.name));
        // Whether the tool may, or must, run as an MCP task, and the error a REST call answers
        // where the tool would ask its client for input: what importing reads back.
        if let Some(task) = tool.task {
            ext = ext.add("x-mcp-task", json!(task));
        }
        if let Some(code) = &tool.asks_input {
            ext = ext.add("x-mcp-asks-input", json!(code));
        }
    }
    // The MCP resource the operation reads, with its URI (derived or given).
    if let (Some(r), Some(uri)) = (&op.def.resource, api.resource_uri(op)) {
        let mut resource = json!({ "name": r.name, "uri": uri, "description": r.description });
        if let Some(title) = &r.title {
            resource["title"] = json!(title);
        }
        ext = ext.add("x-mcp-resource", resource);
    }
    if op.def.paginated {
        let shape = match api.spec.wire.success {
            SuccessFormat::Envelope => {
                json!({"page": "page", "per_page": "per_page", "items": "data", "total": "meta.total"})
            }
            // The items are the body itself (`$`, its JSONPath); the rest travels in headers.
            SuccessFormat::Bare => json!({
                "page": "page", "per_page": "per_page", "items": "$", "total": "header:X-Total-Count",
                "next": "header:Link"
            }),
        };
        ext = ext.add("x-pagination", shape);
    }
    b = b.extensions(Some(ext.build()));
    b.build()
}

pub(super) fn http_method(m: Method) -> HttpMethod {
    match m {
        Method::Get => HttpMethod::Get,
        Method::Post => HttpMethod::Post,
        Method::Put => HttpMethod::Put,
        Method::Patch => HttpMethod::Patch,
        Method::Delete => HttpMethod::Delete,
        Method::Head => HttpMethod::Head,
        Method::Options => HttpMethod::Options,
    }
}
