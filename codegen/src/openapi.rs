//! OpenAPI 3.1 emitter, built on utoipa's typed model, plus the JSON Schemas MCP tools reuse.
//!
//! The document is the contract users generate SDKs from, so every operation carries its
//! operationId, typed schemas, each error status with its body, and its OAuth scope.

use serde_json::{Value, json};
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::info::{InfoBuilder, LicenseBuilder};
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem, PathsBuilder};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ComponentsBuilder, KnownFormat, ObjectBuilder, OneOfBuilder, Ref, Schema,
    SchemaFormat, Type,
};
use utoipa::openapi::security::{AuthorizationCode, Flow, OAuth2, Scopes, SecurityRequirement, SecurityScheme};
use utoipa::openapi::server::ServerBuilder;
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{ContentBuilder, OpenApiBuilder, RefOr, Required};

use crate::ir::{Api, Field, Model, Operation, Ty};
use crate::spec::{BodyFormat, ErrorFormat, Location, Method, SuccessFormat};

/// Name of the error envelope schema.
pub const ERROR_SCHEMA: &str = "ErrorResponse";
const ERROR_BODY_SCHEMA: &str = "ErrorBody";
const PAGE_META_SCHEMA: &str = "PageMeta";
/// Name of the RFC 9457 problem details schema (`[wire] errors = "problem"`).
pub const PROBLEM_SCHEMA: &str = "Problem";

/// Schema name of an operation's success body: its envelope (`{Model}Envelope`, `{Model}Page`,
/// `{Model}ListEnvelope` for a list), or with bare bodies the model itself or an array of it
/// (`{Model}List`: a list, or a page's items).
pub fn output_schema_name(api: &Api, op: &Operation) -> Option<String> {
    let bodiless = |m: &String| {
        let model = &api.models[m];
        !model.fields.is_empty() && model.fields_in(Location::Body).next().is_none()
    };
    // A stream's body is its events (see `operation`), not one JSON document.
    if op.def.output.as_ref().is_some_and(bodiless) || op.def.stream.is_some() {
        return None;
    }
    let bare = api.spec.wire.success == SuccessFormat::Bare;
    let array = op.def.paginated || op.list_output;
    op.def.output.as_ref().map(|m| match (bare, op.def.paginated, array) {
        (false, true, _) => format!("{m}Page"),
        (false, false, true) => format!("{m}ListEnvelope"),
        (false, false, false) => format!("{m}Envelope"),
        (true, _, true) => format!("{m}List"),
        (true, _, false) => m.clone(),
    })
}

/// The success body's schema of an operation whose output is a value, not a model: the value's
/// schema, in the envelope (`{"data": …}`) unless the service answers bare bodies.
fn value_output_schema(api: &Api, op: &Operation) -> Option<RefOr<Schema>> {
    let value = type_schema(op.value_output.as_ref()?, None, Side::Response);
    if api.spec.wire.success == SuccessFormat::Bare {
        return Some(value);
    }
    let envelope = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(op.def.summary.clone()))
        .property("data", value)
        .required("data")
        .build();
    Some(RefOr::T(Schema::Object(envelope)))
}

/// Schema name of an operation's request body, when it has one.
pub fn body_schema_name(api: &Api, op: &Operation) -> Option<String> {
    let model = api.input(op)?;
    // A raw body is the file itself: its content types say all there is; a payload's schema is
    // its field's.
    if !op.has_body
        || op.def.body == crate::spec::BodyFormat::Raw
        || model.fields_in(Location::Payload).next().is_some()
    {
        return None;
    }
    let all_body = model.fields.iter().all(|f| f.location() == Location::Body);
    Some(if all_body { model.name.clone() } else { format!("{}Body", model.name) })
}

fn reference(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

/// Which way a schema travels. Requests accept `null` for an optional field (it means the field is
/// absent, as the decoder treats it) and mark secrets `writeOnly`; responses do neither; a model
/// both carry accepts `null` but marks nothing `writeOnly`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Request,
    Response,
    Both,
}

/// Models and unions reachable from `roots` through fields.
fn reachable<'a>(api: &Api, roots: impl IntoIterator<Item = &'a str>) -> std::collections::BTreeSet<String> {
    fn visit(api: &Api, ty: &Ty, out: &mut std::collections::BTreeSet<String>) {
        match ty {
            Ty::Union(name) => {
                if out.insert(name.clone())
                    && let Some(u) = api.spec.unions.get(name)
                {
                    for model in u.variants.values() {
                        visit(api, &Ty::Model(model.clone()), out);
                    }
                }
            }
            Ty::Model(name) => {
                if out.insert(name.clone())
                    && let Some(m) = api.models.get(name)
                {
                    for f in m.fields.iter().chain(&m.additional) {
                        visit(api, &f.ty, out);
                    }
                }
            }
            Ty::List(inner) | Ty::Map(inner) => visit(api, inner, out),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for r in roots {
        visit(api, &Ty::Model(r.to_string()), &mut out);
    }
    out
}

/// A scalar's schema with the field's constraints (for a list of scalars, the constraints apply
/// to each item, as the decoder applies them).
fn scalar_schema(scalar: &Ty, def: Option<&crate::spec::FieldDef>, describe: bool, side: Side) -> RefOr<Schema> {
    let (t, format) = match scalar {
        Ty::Integer => (Type::Integer, Some(SchemaFormat::KnownFormat(KnownFormat::Int64))),
        Ty::Number => (Type::Number, Some(SchemaFormat::KnownFormat(KnownFormat::Double))),
        Ty::Boolean => (Type::Boolean, None),
        Ty::DateTime => (Type::String, Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
        Ty::Date => (Type::String, Some(SchemaFormat::KnownFormat(KnownFormat::Date))),
        _ => (Type::String, def.and_then(|d| d.format).map(|f| SchemaFormat::Custom(f.as_str().to_string()))),
    };
    let mut b = ObjectBuilder::new().schema_type(t).format(format);
    if let Some(d) = def {
        if describe {
            b = b.description(Some(d.description.clone()));
            if let Some(ex) = &d.example {
                b = b.examples([ex.clone()]);
            }
        }
        b = b
            .minimum(d.minimum.map(number))
            .maximum(d.maximum.map(number))
            .min_length(d.min_length.map(|n| n as usize))
            .max_length(d.max_length.map(|n| n as usize))
            .pattern(d.pattern.clone());
        if d.secret && side == Side::Request && describe {
            b = b.write_only(true);
        }
        // JSON Schema's own word for base64 text beside OpenAPI's `format: byte`.
        if d.format == Some(support::Format::Byte) {
            b = b.content_encoding("base64");
        }
    }
    RefOr::T(Schema::Object(b.build()))
}

/// The schema of one field (without the field's nullability).
fn type_schema(ty: &Ty, field: Option<&Field>, side: Side) -> RefOr<Schema> {
    let def = field.map(|f| &f.def);
    let described = |b: ObjectBuilder| match def {
        Some(d) => b.description(Some(d.description.clone())),
        None => b,
    };
    match ty {
        Ty::Enum(name) | Ty::Model(name) | Ty::Union(name) => reference(name),
        Ty::List(inner) => {
            let items = if inner.is_scalar() && !matches!(**inner, Ty::Enum(_)) {
                scalar_schema(inner, def, false, side)
            } else {
                type_schema(inner, None, side)
            };
            let mut b = ArrayBuilder::new().items(items);
            if let Some(d) = def {
                b = b
                    .description(Some(d.description.clone()))
                    .min_items(d.min_items.map(|n| n as usize))
                    .max_items(d.max_items.map(|n| n as usize));
            }
            RefOr::T(Schema::Array(b.build()))
        }
        Ty::Map(inner) => RefOr::T(Schema::Object(
            described(ObjectBuilder::new().schema_type(Type::Object))
                .additional_properties(Some(AdditionalProperties::RefOr(type_schema(inner, None, side))))
                .build(),
        )),
        Ty::Json => RefOr::T(Schema::Object(
            described(ObjectBuilder::new().schema_type(utoipa::openapi::schema::SchemaType::AnyValue)).build(),
        )),
        // Raw bytes: 3.1 says so with `contentMediaType` (3.0: `format: binary`); the accepted
        // types and the size limit are stated in the description.
        Ty::File => {
            let (types, max) = def.map(|d| (d.media_types.clone(), d.max_size)).unwrap_or_default();
            let media_type = match types.as_slice() {
                [one] if !one.ends_with("/*") => one.clone(),
                _ => "application/octet-stream".to_string(),
            };
            let mut text = def.map(|d| d.description.clone()).unwrap_or_default();
            let accepted = if types.is_empty() { "any media type".to_string() } else { types.join(", ") };
            let max = max.unwrap_or(crate::rust::DEFAULT_MAX_FILE);
            text.push_str(&format!(" A file of {accepted}, at most {max} bytes."));
            RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .content_media_type(media_type)
                    .description(Some(text.trim().to_string()))
                    .build(),
            ))
        }
        scalar => scalar_schema(scalar, def, true, side),
    }
}

/// Integral bounds print as integers (`0`, not `0.0`).
fn number(v: f64) -> utoipa::Number {
    if v.fract() == 0.0 && v.abs() < 9.0e15 { utoipa::Number::Int(v as isize) } else { utoipa::Number::Float(v) }
}

/// The schema of a field: nullable when the spec says so, or when it is an optional field of a
/// request body (`null` there means absent); with its default, when it has one.
fn field_schema(f: &Field, side: Side, in_body: bool) -> RefOr<Schema> {
    let base = type_schema(&f.ty, Some(f), side);
    let base = match (&f.def.default, base) {
        (None, base) => base,
        (Some(v), RefOr::T(Schema::Object(mut o))) => {
            o.default = Some(v.clone());
            RefOr::T(Schema::Object(o))
        }
        (Some(v), RefOr::T(Schema::Array(mut a))) => {
            a.default = Some(v.clone());
            RefOr::T(Schema::Array(a))
        }
        // A reference (an enum) takes no sibling in 3.0: the default goes beside an `allOf`.
        (Some(v), other) => {
            let mut all = utoipa::openapi::schema::AllOfBuilder::new().item(other).build();
            all.default = Some(v.clone());
            all.description = Some(f.def.description.clone());
            RefOr::T(Schema::AllOf(all))
        }
    };
    let base = if f.def.deprecated { deprecated(base, &f.def.description) } else { base };
    let optional_null = side != Side::Response && in_body && !f.required();
    if !f.def.nullable && !optional_null {
        return base;
    }
    match base {
        RefOr::T(Schema::Object(mut o)) => {
            if let utoipa::openapi::schema::SchemaType::Type(t) = o.schema_type.clone() {
                o.schema_type = utoipa::openapi::schema::SchemaType::Array(vec![t, Type::Null]);
            }
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.schema_type = utoipa::openapi::schema::SchemaType::Array(vec![Type::Array, Type::Null]);
            RefOr::T(Schema::Array(a))
        }
        other => RefOr::T(Schema::OneOf(
            OneOfBuilder::new()
                .item(other)
                .item(RefOr::T(Schema::Object(ObjectBuilder::new().schema_type(Type::Null).build())))
                .description(Some(f.def.description.clone()))
                .build(),
        )),
    }
}

/// `schema` marked `deprecated` (beside an `allOf` for a reference, which 3.0 allows no sibling).
fn deprecated(schema: RefOr<Schema>, description: &str) -> RefOr<Schema> {
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.deprecated = Some(utoipa::openapi::Deprecated::True);
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.deprecated = Some(utoipa::openapi::Deprecated::True);
            RefOr::T(Schema::Array(a))
        }
        RefOr::T(Schema::AllOf(mut all)) => {
            all.extensions = Some(ExtensionsBuilder::new().add("deprecated", true).build());
            RefOr::T(Schema::AllOf(all))
        }
        other => {
            let mut all = utoipa::openapi::schema::AllOfBuilder::new().item(other).build();
            all.description = Some(description.to_string());
            all.extensions = Some(ExtensionsBuilder::new().add("deprecated", true).build());
            RefOr::T(Schema::AllOf(all))
        }
    }
}

/// An object schema over `fields`. Inputs reject unknown fields; outputs may grow new ones. In
/// `json` (not a form's text), an optional request field may also be sent as `null`.
fn object_schema<'a>(
    description: &str,
    fields: impl Iterator<Item = &'a Field>,
    additional: Option<&Field>,
    closed: bool,
    side: Side,
    json: bool,
) -> Schema {
    let mut b = ObjectBuilder::new().schema_type(Type::Object).description(Some(description.to_string()));
    for f in fields {
        b = b.property(&f.name, field_schema(f, side, json && f.location() == Location::Body));
        if f.required() {
            b = b.required(&f.name);
        }
    }
    match additional {
        // Keys beside the fields, each holding a value of this schema (open or closed alike).
        Some(f) => b = b.additional_properties(Some(AdditionalProperties::RefOr(field_schema(f, side, false)))),
        None if closed => b = b.additional_properties(Some(AdditionalProperties::FreeForm(false))),
        None => {}
    }
    Schema::Object(b.build())
}

/// Models held only by tagged unions: each is written as its union's variant schema (its fields
/// beside the tag), so a schema of its own would be one nothing refers to.
fn only_in_tagged_unions(api: &Api) -> Vec<String> {
    fn models_in(ty: &Ty, out: &mut Vec<String>) {
        match ty {
            Ty::Model(m) => out.push(m.clone()),
            Ty::List(inner) | Ty::Map(inner) => models_in(inner, out),
            _ => {}
        }
    }
    let mut referenced: Vec<String> = Vec::new();
    for m in api.models.values() {
        m.fields.iter().for_each(|f| models_in(&f.ty, &mut referenced));
    }
    for op in &api.operations {
        referenced.extend(op.def.input.iter().chain(op.def.output.iter()).cloned());
    }
    for u in api.spec.unions.values().filter(|u| u.tag.is_none()) {
        referenced.extend(u.variants.values().cloned());
    }
    if let ErrorFormat::Model(m) = &api.spec.wire.errors {
        referenced.push(m.model.clone());
    }
    api.spec
        .unions
        .values()
        .filter(|u| u.tag.is_some())
        .flat_map(|u| u.variants.values())
        .filter(|m| !referenced.contains(m))
        .cloned()
        .collect()
}

/// The schemas of union `name`: a `oneOf` of its variants. A tagged union also has a schema per
/// variant (`{Union}{Variant}`): the model's fields with the tag first, its value the variant's
/// name, which the `discriminator` maps to; a request-side variant refuses other fields, as the
/// decoder does.
fn union_schemas(api: &Api, name: &str, side: Side) -> Vec<(String, RefOr<Schema>)> {
    let u = &api.spec.unions[name];
    // Every variant is an object; saying so lets 3.0's `nullable` stand beside a `type`.
    let mut one = OneOfBuilder::new().schema_type(Type::Object).description(Some(u.description.clone()));
    let mut out = Vec::new();
    let Some(tag) = &u.tag else {
        for model in u.variants.values() {
            one = one.item(reference(model));
        }
        out.push((name.to_string(), RefOr::T(Schema::OneOf(one.build()))));
        return out;
    };
    let mut mapping = Vec::new();
    for (variant, model) in &u.variants {
        let schema_name = format!("{name}{}", crate::ir::rust_variant_name(variant));
        let m = &api.models[model];
        let tag_schema = ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([variant.clone()]))
            .description(Some(format!("Always `{variant}`: this value holds a `{model}`.")));
        let mut b = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(m.description.clone()))
            .property(tag, RefOr::T(Schema::Object(tag_schema.build())))
            .required(tag);
        for f in &m.fields {
            b = b.property(&f.name, field_schema(f, side, true));
            if f.required() {
                b = b.required(&f.name);
            }
        }
        if side != Side::Response {
            b = b.additional_properties(Some(AdditionalProperties::FreeForm(false)));
        }
        mapping.push((variant.clone(), format!("#/components/schemas/{schema_name}")));
        one = one.item(reference(&schema_name));
        out.push((schema_name, RefOr::T(Schema::Object(b.build()))));
    }
    let discriminator = utoipa::openapi::schema::Discriminator::with_mapping(tag.clone(), mapping);
    out.insert(0, (name.to_string(), RefOr::T(Schema::OneOf(one.discriminator(Some(discriminator)).build()))));
    out
}

fn input_models(api: &Api) -> Vec<&str> {
    api.operations.iter().filter_map(|o| o.def.input.as_deref()).collect()
}

/// Every component schema, in a stable order: enums, models, envelopes, errors.
fn component_schemas(api: &Api) -> Vec<(String, RefOr<Schema>)> {
    let mut out: Vec<(String, RefOr<Schema>)> = Vec::new();
    for (name, e) in &api.spec.enums {
        let mut desc = e.description.clone();
        desc.push_str("\n\n");
        for v in &e.values {
            desc.push_str(&format!("- `{}`: {}\n", v.name, v.description));
        }
        let mut ext = ExtensionsBuilder::new();
        if let Some(init) = &e.initial {
            ext = ext.add("x-initial-state", json!(init));
        }
        if let Some(t) = &e.transitions {
            ext = ext.add("x-transitions", serde_json::to_value(t).unwrap_or_default());
        }
        let schema = ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(desc.trim_end().to_string()))
            .enum_values(Some(e.values.iter().map(|v| v.name.clone())))
            .extensions(Some(ext.build()))
            .build();
        out.push((name.clone(), RefOr::T(Schema::Object(schema))));
    }
    let inputs = input_models(api);
    let request_side = reachable(api, inputs.iter().copied());
    let value_names: Vec<String> =
        api.operations.iter().filter_map(|o| o.value_output.as_ref()).flat_map(Ty::names).collect();
    let response_side = reachable(
        api,
        api.operations
            .iter()
            .filter_map(|o| o.def.output.as_deref())
            .chain(value_names.iter().map(String::as_str))
            .chain(api.spec.webhooks.values().map(|w| w.payload.as_str())),
    );
    for op in &api.operations {
        // Mixed inputs document only their body part; path and query fields are parameters.
        if let (Some(body), Some(model)) = (body_schema_name(api, op), api.input(op))
            && body != model.name
        {
            let schema = object_schema(
                &model.description,
                model.fields_in(Location::Body),
                model.additional.as_ref(),
                true,
                Side::Request,
                op.def.body == BodyFormat::Json,
            );
            out.push((body, RefOr::T(schema)));
        }
    }
    let only_tagged = only_in_tagged_unions(api);
    // Inputs sent as a form or multipart text: no `null` there, only text.
    let form_inputs: std::collections::BTreeSet<&str> = api
        .operations
        .iter()
        .filter(|o| o.def.body != BodyFormat::Json)
        .filter_map(|o| o.def.input.as_deref())
        .collect();
    // Objects inside a union that requests carry are closed, as the decoder treats them: an open
    // variant would also match the values of the others, and `oneOf` needs exactly one.
    let in_request_unions: std::collections::BTreeSet<String> = api
        .spec
        .unions
        .iter()
        .filter(|(u, _)| request_side.contains(*u))
        .flat_map(|(_, union)| reachable(api, union.variants.values().map(String::as_str)))
        .collect();
    for (name, m) in &api.models {
        if only_tagged.contains(name) {
            continue;
        }
        let is_input = inputs.contains(&name.as_str());
        if is_input && m.fields.iter().any(|f| f.location() != Location::Body) {
            continue;
        }
        if is_input && m.fields.is_empty() {
            continue;
        }
        let side = match (request_side.contains(name), response_side.contains(name)) {
            (true, false) => Side::Request,
            (true, true) => Side::Both,
            _ => Side::Response,
        };
        // An output's header fields are the response's headers; one of headers alone has no body.
        let body = || m.fields.iter().filter(|f| f.location() != Location::Header);
        if !is_input && body().next().is_none() && !m.fields.is_empty() {
            continue;
        }
        // Every object a request may carry is closed, as the decoder refuses a key it does not
        // know at any depth; inside a union, that also tells the variants apart.
        let closed = is_input || request_side.contains(name) || in_request_unions.contains(name);
        let json = !form_inputs.contains(name.as_str());
        out.push((
            name.clone(),
            RefOr::T(object_schema(&m.description, body(), m.additional.as_ref(), closed, side, json)),
        ));
    }
    for name in api.spec.unions.keys() {
        let side = match (request_side.contains(name), response_side.contains(name)) {
            (true, false) => Side::Request,
            (true, true) => Side::Both,
            _ => Side::Response,
        };
        out.extend(union_schemas(api, name, side));
    }
    let mut envelopes: Vec<(String, RefOr<Schema>)> = Vec::new();
    for op in &api.operations {
        let (Some(name), Some(model)) = (output_schema_name(api, op), op.def.output.as_ref()) else { continue };
        if &name == model || envelopes.iter().any(|(n, _)| n == &name) {
            continue;
        }
        if api.spec.wire.success == SuccessFormat::Bare {
            // A page's headers say where it is in the list; the array is the same for a list.
            let list =
                ArrayBuilder::new().description(Some(format!("`{model}` items."))).items(reference(model)).build();
            envelopes.push((name, RefOr::T(Schema::Array(list))));
            continue;
        }
        let mut b = ObjectBuilder::new().schema_type(Type::Object);
        if op.list_output {
            b = b
                .description(Some(format!("A list of `{model}`.")))
                .property("data", RefOr::T(Schema::Array(ArrayBuilder::new().items(reference(model)).build())))
                .required("data");
        } else if op.def.paginated {
            b = b
                .description(Some(format!("A page of `{model}` items.")))
                .property("data", RefOr::T(Schema::Array(ArrayBuilder::new().items(reference(model)).build())))
                .property("meta", reference(PAGE_META_SCHEMA))
                .required("data")
                .required("meta");
        } else {
            b = b.description(Some(format!("One `{model}`."))).property("data", reference(model)).required("data");
        }
        envelopes.push((name, RefOr::T(Schema::Object(b.build()))));
    }
    out.extend(envelopes);
    let int = |d: &str| {
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .description(Some(d.to_string()))
                .build(),
        ))
    };
    if api.spec.wire.success == SuccessFormat::Bare {
        out.extend(error_schemas(api));
        return out;
    }
    out.push((
        PAGE_META_SCHEMA.into(),
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some("Pagination of a list response.".to_string()))
                .property("total", int("Number of items matching the request, over all pages."))
                .property("page", int("This page's number, starting at 1."))
                .property("per_page", int("Items per page."))
                .required("total")
                .required("page")
                .required("per_page")
                .build(),
        )),
    ));
    out.extend(error_schemas(api));
    out
}

/// The schemas of the service's error bodies, in its wire format.
fn error_schemas(api: &Api) -> Vec<(String, RefOr<Schema>)> {
    let string = |d: &str| {
        RefOr::T(Schema::Object(
            ObjectBuilder::new().schema_type(Type::String).description(Some(d.to_string())).build(),
        ))
    };
    let codes: Vec<String> = api.spec.errors.keys().cloned().collect();
    let code = RefOr::T(Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("Stable, machine-readable error code.".to_string()))
            .enum_values(Some(codes))
            .build(),
    ));
    let any = |d: &str| {
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::SchemaType::AnyValue)
                .description(Some(d.to_string()))
                .build(),
        ))
    };
    const FIELD: &str = "The input field that was refused (validation errors).";
    const VALUE: &str = "The refused value (secrets are redacted).";
    const REQUIRED: &str = "The scope the operation needs (scope errors).";
    const REQUEST_ID: &str = "The request's `X-Request-Id`, to quote when reporting a problem.";
    if let ErrorFormat::Model(_) = api.spec.wire.errors {
        // The service's own model is among its models.
        return Vec::new();
    }
    if api.spec.wire.errors == ErrorFormat::Problem {
        let kind = match &api.spec.wire.problem_types {
            Some(base) => format!("`{base}` followed by the error code."),
            None => "`about:blank`: the code tells problems apart.".to_string(),
        };
        let title = match &api.spec.wire.problem_types {
            Some(_) => "The code's catalog message.",
            None => "The HTTP status's reason phrase.",
        };
        let status = RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32)))
                .description(Some("The HTTP status of this answer.".to_string()))
                .build(),
        ));
        let problem = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "RFC 9457 problem details. Besides the members below, each detail of the error is a member of its \
                 own: for validation errors `field` and `value`; for scope errors `required`; for rate limits \
                 `retry_after`."
                    .to_string(),
            ))
            .property("type", string(&format!("The problem type: {kind}")))
            .property("title", string(title))
            .property("status", status)
            .property("detail", string("Human-readable explanation of this occurrence."))
            .property("code", code)
            .property("request_id", string(REQUEST_ID))
            .property("field", string(FIELD))
            .property("value", any(VALUE))
            .property("required", string(REQUIRED))
            .required("type")
            .required("title")
            .required("status")
            .required("detail")
            .required("code")
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .build();
        return vec![(PROBLEM_SCHEMA.into(), RefOr::T(Schema::Object(problem)))];
    }
    let body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("What went wrong.".to_string()))
        .property("code", code)
        .property("message", string("Human-readable explanation."))
        .property(
            "details",
            RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .description(Some(
                        "Structured context: for validation errors `field` and `value`; for scope errors \
                         `required`; other errors add what they name."
                            .to_string(),
                    ))
                    .property("field", string(FIELD))
                    .property("value", any(VALUE))
                    .property("required", string(REQUIRED))
                    .additional_properties(Some(AdditionalProperties::FreeForm(true)))
                    .build(),
            )),
        )
        .property("request_id", string(REQUEST_ID))
        .required("code")
        .required("message")
        .required("details")
        .build();
    let envelope = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("Every error answers with this envelope.".to_string()))
        .property("error", reference(ERROR_BODY_SCHEMA))
        .required("error")
        .build();
    vec![
        (ERROR_BODY_SCHEMA.into(), RefOr::T(Schema::Object(body))),
        (ERROR_SCHEMA.into(), RefOr::T(Schema::Object(envelope))),
    ]
}

/// The media type and schema of the service's error bodies.
fn error_content(api: &Api) -> (&'static str, &str) {
    match &api.spec.wire.errors {
        ErrorFormat::Envelope => ("application/json", ERROR_SCHEMA),
        ErrorFormat::Problem => ("application/problem+json", PROBLEM_SCHEMA),
        ErrorFormat::Model(m) => ("application/json", &m.model),
    }
}

fn header(description: &str, t: Type) -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(Some(RefOr::T(Schema::Object(ObjectBuilder::new().schema_type(t).build()))))
        .description(Some(description.to_string()))
        .build()
}

/// What the description of a deprecated operation says.
pub fn deprecation_note(d: &crate::spec::Deprecated) -> String {
    let mut note = format!("**Deprecated** since {}", d.since);
    if let Some(sunset) = &d.sunset {
        note.push_str(&format!("; it may be removed from {sunset}"));
    }
    note.push('.');
    if !d.instead.is_empty() {
        note.push_str(&format!(" {}", d.instead.trim()));
    }
    note
}

/// The headers every answer of a deprecated operation carries.
fn deprecation_doc_headers(op: &Operation, mut b: ResponseBuilder) -> ResponseBuilder {
    let Some(d) = &op.def.deprecated else { return b };
    b = b.header(
        "Deprecation",
        header(&format!("RFC 9745: deprecated since {} (`@` and that day's Unix time).", d.since), Type::String),
    );
    if let Some(sunset) = &d.sunset {
        b = b.header("Sunset", header(&format!("RFC 8594: may be removed from {sunset}."), Type::String));
    }
    b
}

fn common_headers(api: &Api, mut b: ResponseBuilder) -> ResponseBuilder {
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

/// What an error response says about `code`: its catalog description, and for the validation
/// error the rule the generated decoder applies to every string, which no schema states (a
/// `pattern` on every string would also turn each into a validated newtype in generated SDKs).
fn error_description(api: &Api, code: &str) -> String {
    let mut text = format!("`{code}`: {}", api.spec.errors[code].description);
    if code == api.spec.error_roles.validation {
        text.push_str(
            " No string may hold U+0000 (NUL), in any field or parameter: one that does is refused this way.",
        );
    }
    text
}

/// The name of the input field a whole body is, as openapi-generator's
/// `x-codegen-request-body-name` gives it (the name of the body parameter in generated clients).
fn body_name(field: &str) -> utoipa::openapi::extensions::Extensions {
    ExtensionsBuilder::new().add("x-codegen-request-body-name", field).build()
}

/// The request body of `op` in its format: JSON, a form, multipart (each file part with the
/// content types it accepts), or a raw file of each accepted type.
fn request_body(api: &Api, op: &Operation) -> Option<utoipa::openapi::request_body::RequestBody> {
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
        return Some(body.content("application/json", ContentBuilder::new().schema(Some(schema)).build()).build());
    }
    let name = body_schema_name(api, op)?;
    let mut content = ContentBuilder::new().schema(Some(reference(&name)));
    let media_type = match op.def.body {
        BodyFormat::Json | BodyFormat::Raw => "application/json",
        BodyFormat::Form => "application/x-www-form-urlencoded",
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

fn operation(api: &Api, op: &Operation) -> utoipa::openapi::path::Operation {
    let scope = op.def.scope.clone().unwrap_or_default();
    let mut description = op.def.description.clone();
    if !description.is_empty() {
        description.push_str("\n\n");
    }
    description.push_str(&format!("Requires scope `{scope}` (or a higher tier)."));
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
        .tags(Some(op.def.tags.clone()))
        .security(SecurityRequirement::new("oauth2", [scope.clone()]));
    if let Some(model) = api.input(op) {
        for f in model.fields.iter().filter(|f| !matches!(f.location(), Location::Body | Location::Payload)) {
            let (loc, name) = match f.location() {
                Location::Path => (ParameterIn::Path, f.name.clone()),
                Location::Header => (ParameterIn::Header, crate::ir::header_name(&f.name)),
                _ => (ParameterIn::Query, f.name.clone()),
            };
            let mut p = ParameterBuilder::new()
                .name(name)
                .parameter_in(loc)
                .required(if f.required() { Required::True } else { Required::False })
                .description(Some(f.def.description.clone()))
                .schema(Some(field_schema(f, Side::Request, false)));
            if matches!(f.ty, Ty::List(_)) {
                p = p.explode(Some(true));
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
            let t = if f.ty == Ty::Integer { Type::Integer } else { Type::String };
            let mut h = header(&f.def.description, t);
            if f.required() {
                // The Header Object's `required`, which utoipa has no field for (renamed in `document`).
                h.extensions = Some(ExtensionsBuilder::new().add("header-required", true).build());
            }
            r = r.header(crate::ir::header_name(&f.name), h);
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
            let mut r = ResponseBuilder::new()
                .description(op.def.summary.clone())
                .content("application/json", ContentBuilder::new().schema(Some(reference(&name))).build());
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
            common_headers(api, r)
        }
        None if op.def.output.is_some() => {
            common_headers(api, declared(ResponseBuilder::new().description(op.def.summary.clone())))
        }
        None if op.value_output.is_some() => {
            let schema =
                value_output_schema(api, op).unwrap_or_else(|| RefOr::T(Schema::Object(ObjectBuilder::new().build())));
            let r = ResponseBuilder::new()
                .description(op.def.summary.clone())
                .content("application/json", ContentBuilder::new().schema(Some(schema)).build());
            common_headers(api, declared(r))
        }
        None => common_headers(api, ResponseBuilder::new().description("Done; no content.")),
    };
    responses = responses.response(op.status.to_string(), deprecation_doc_headers(op, success).build());
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

fn http_method(m: Method) -> HttpMethod {
    match m {
        Method::Get => HttpMethod::Get,
        Method::Post => HttpMethod::Post,
        Method::Put => HttpMethod::Put,
        Method::Patch => HttpMethod::Patch,
        Method::Delete => HttpMethod::Delete,
    }
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
    for (name, schema) in component_schemas(api) {
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

/// Renames every member `from` to `to`: utoipa writes what it has no field for as an `x-`
/// extension, and `contentSchema` (JSON Schema 2020-12, so OpenAPI 3.1) is one.
pub(crate) fn rename_key(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.remove(from) {
                m.insert(to.to_string(), x);
            }
            m.values_mut().for_each(|x| rename_key(x, from, to));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rename_key(x, from, to)),
        _ => {}
    }
}

/// utoipa keeps `x-` extensions in a hash map; put them last, sorted, so output is byte-stable.
fn order_extensions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let mut ext: Vec<(String, Value)> = Vec::new();
            let keys: Vec<String> = m.keys().filter(|k| k.starts_with("x-")).cloned().collect();
            for k in keys {
                if let Some(x) = m.remove(&k) {
                    ext.push((k, x));
                }
            }
            ext.sort_by(|a, b| a.0.cmp(&b.0));
            m.extend(ext);
            m.values_mut().for_each(order_extensions);
        }
        Value::Array(a) => a.iter_mut().for_each(order_extensions),
        _ => {}
    }
}

/// A standalone JSON Schema (2020-12) for the component `name` of `doc`, with every schema it
/// references copied under `$defs`.
pub fn standalone_schema(doc: &Value, root: Value) -> Value {
    let comps = &doc["components"]["schemas"];
    let mut defs = serde_json::Map::new();
    let mut pending = Vec::new();
    collect_refs(&root, &mut pending);
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let schema = comps[&name].clone();
        collect_refs(&schema, &mut pending);
        defs.insert(name, schema);
    }
    let mut sorted: Vec<(String, Value)> = defs.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = rewrite_refs(root);
    if let Value::Object(map) = &mut out
        && !sorted.is_empty()
    {
        map.insert("$defs".into(), Value::Object(sorted.into_iter().map(|(k, v)| (k, rewrite_refs(v))).collect()));
    }
    out
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref")
                && let Some(name) = r.strip_prefix("#/components/schemas/")
            {
                out.push(name.to_string());
            }
            m.values().for_each(|x| collect_refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// References into `#/$defs/` instead of the document's components. OpenAPI's `discriminator`
/// (whose mapping names components) is no JSON Schema keyword and goes: each tagged variant's
/// tag `enum` already tells the variants apart.
fn rewrite_refs(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, x)| !(k == "discriminator" && x.get("propertyName").is_some()))
                .map(|(k, x)| match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => (k, Value::String(r.replace("#/components/schemas/", "#/$defs/"))),
                    (_, x) => (k, rewrite_refs(x)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(rewrite_refs).collect()),
        other => other,
    }
}

/// The JSON Schema of an operation's full input (path, query and body fields as one object),
/// as an MCP tool's `inputSchema`.
pub fn input_schema(api: &Api, doc: &Value, op: &Operation) -> Value {
    let model: Option<&Model> = api.input(op);
    let root = match model {
        Some(m) => object_schema(&m.description, m.fields.iter(), m.additional.as_ref(), true, Side::Request, true),
        None => object_schema("No arguments.", std::iter::empty(), None, true, Side::Request, true),
    };
    let mut v = serde_json::to_value(&root).unwrap_or_default();
    if let Value::Object(map) = &mut v {
        map.remove("description");
        map.entry("properties").or_insert_with(|| json!({}));
    }
    standalone_schema(doc, v)
}

/// The JSON Schema of the structured content an operation's tool answers, as an MCP
/// `outputSchema`: its REST success body, except that a bare page (an array, which MCP's
/// structured content cannot be) is `{"items", "total", "page", "per_page"}`.
pub fn output_schema(api: &Api, doc: &Value, op: &Operation) -> Option<Value> {
    if let Some(ty) = &op.value_output {
        // Structured content is an object: a bare value that is none travels in `items` (a
        // list) or `value` (anything else), as `Success::into_tool_body` puts it.
        let schema = serde_json::to_value(value_output_schema(api, op)?).ok()?;
        let bare = api.spec.wire.success == SuccessFormat::Bare;
        let root = match ty {
            Ty::List(_) if bare => json!({"type": "object", "properties": {"items": schema}, "required": ["items"]}),
            // Any JSON: no schema promises an object.
            Ty::Json if bare => return None,
            Ty::Map(_) => schema,
            // A union's variants are models: objects, stated at the root as MCP asks.
            Ty::Union(_) if bare => json!({"type": "object", "allOf": [schema]}),
            _ if bare => json!({"type": "object", "properties": {"value": schema}, "required": ["value"]}),
            _ => schema,
        };
        return Some(standalone_schema(doc, root));
    }
    let name = output_schema_name(api, op)?;
    if op.list_output && api.spec.wire.success == SuccessFormat::Bare {
        // MCP's structured content is an object: a list travels as `{"items": [...]}`.
        let model = op.def.output.as_ref()?;
        let list = json!({
            "type": "object",
            "description": format!("A list of `{model}`."),
            "properties": {"items": {"type": "array", "items": {"$ref": format!("#/components/schemas/{model}")}}},
            "required": ["items"],
        });
        return Some(standalone_schema(doc, list));
    }
    if op.def.paginated && api.spec.wire.success == SuccessFormat::Bare {
        let model = op.def.output.as_ref()?;
        let int = |d: &str| json!({"type": "integer", "format": "int64", "description": d});
        let page = json!({
            "type": "object",
            "description": format!("A page of `{model}` items."),
            "properties": {
                "items": {"type": "array", "items": {"$ref": format!("#/components/schemas/{model}")}},
                "total": int("Number of items matching the request, over all pages."),
                "page": int("This page's number, starting at 1."),
                "per_page": int("Items per page."),
            },
            "required": ["items", "total", "page", "per_page"],
        });
        return Some(standalone_schema(doc, page));
    }
    Some(standalone_schema(doc, doc["components"]["schemas"][&name].clone()))
}
