//! Component schemas: the spec's models, enums and unions as JSON Schema (2020-12), each field with its constraints, format, default and example, and which side (request or response) reaches each.

use serde_json::json;
use utoipa::openapi::RefOr;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, KnownFormat, ObjectBuilder, OneOfBuilder, Ref, Schema, SchemaFormat, Type,
};

use crate::ir::{Api, Field, Operation, Ty};
use crate::spec::{BodyFormat, ErrorFormat, Location, SuccessFormat};

use super::*;

/// Schema name of an operation's success body: its envelope (`{Model}Envelope`, `{Model}Page`,
/// `{Model}ListEnvelope` for a list), or with bare bodies the model itself or an array of it
/// (`{Model}List`: a list, or a page's items).
pub fn output_schema_name(api: &Api, op: &Operation) -> Option<String> {
    let bodiless = |m: &String| {
        let model = &api.models[m];
        !model.fields.is_empty() && model.fields_in(Location::Body).next().is_none()
    };
    // A stream's body is its events (see `operation`), not one JSON document; a payload's is its
    // value's schema.
    if op.def.output.as_ref().is_some_and(bodiless) || op.def.stream.is_some() || op.output_payload.is_some() {
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
pub(super) fn value_output_schema(api: &Api, op: &Operation) -> Option<RefOr<Schema>> {
    if let Some(payload) = output_payload(api, op) {
        // The payload field's schema: its description, and `oneOf` where it is one of several.
        return Some(enveloped(api, field_schema(payload, Side::Response, false), &op.def.summary));
    }
    Some(value_schema(api, op.value_output.as_ref()?, &op.def.summary))
}

/// The payload field of `op`'s output model, where its answer's body is one.
pub(super) fn output_payload<'a>(api: &'a Api, op: &Operation) -> Option<&'a crate::ir::Field> {
    op.output_payload.as_ref()?;
    api.models.get(op.def.output.as_ref()?)?.fields_in(Location::Payload).next()
}

/// The success body's schema of an answer of `ty`: its schema, in the envelope (`{"data": …}`,
/// described as `summary`) unless the service answers bare bodies.
pub(super) fn value_schema(api: &Api, ty: &Ty, summary: &str) -> RefOr<Schema> {
    enveloped(api, type_schema(ty, None, Side::Response), summary)
}

/// `value` in the success envelope (`{"data": …}`), unless the service answers bare bodies.
fn enveloped(api: &Api, value: RefOr<Schema>, summary: &str) -> RefOr<Schema> {
    if api.spec.wire.success == SuccessFormat::Bare {
        return value;
    }
    let envelope = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(summary.to_string()))
        .property("data", value)
        .required("data")
        .build();
    RefOr::T(Schema::Object(envelope))
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

pub(super) fn reference(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

/// Which way a schema travels. Requests accept `null` for an optional field (it means the field is
/// absent, as the decoder treats it) and mark secrets `writeOnly`; responses do neither; a model
/// both carry accepts `null` but marks nothing `writeOnly`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Request,
    Response,
    Both,
}

/// A scalar's schema with the field's constraints (for a list of scalars, the constraints apply
/// to each item, as the decoder applies them).
pub(super) fn scalar_schema(
    scalar: &Ty,
    def: Option<&crate::spec::FieldDef>,
    describe: bool,
    side: Side,
) -> RefOr<Schema> {
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
        if !d.values.is_empty() {
            b = b.enum_values(Some(d.values.clone()));
        }
        b = b
            .minimum(d.minimum.map(number))
            .maximum(d.maximum.map(number))
            .exclusive_minimum(d.exclusive_minimum.map(number))
            .exclusive_maximum(d.exclusive_maximum.map(number))
            .multiple_of(d.multiple_of.map(number))
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
pub(super) fn type_schema(ty: &Ty, field: Option<&Field>, side: Side) -> RefOr<Schema> {
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
            // Items that may be `null`: a type array for a plain schema, else a `oneOf` with null.
            let items = match (def.is_some_and(|d| d.nullable_items), items) {
                (false, items) => items,
                (true, RefOr::T(Schema::Object(mut o)))
                    if matches!(o.schema_type, utoipa::openapi::schema::SchemaType::Type(_)) =>
                {
                    if let utoipa::openapi::schema::SchemaType::Type(t) = o.schema_type.clone() {
                        o.schema_type = utoipa::openapi::schema::SchemaType::Array(vec![t, Type::Null]);
                    }
                    RefOr::T(Schema::Object(o))
                }
                (true, other) => RefOr::T(Schema::OneOf(
                    OneOfBuilder::new()
                        .item(other)
                        .item(RefOr::T(Schema::Object(ObjectBuilder::new().schema_type(Type::Null).build())))
                        .build(),
                )),
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
        Ty::Json if field.is_some_and(|f| !f.one_of.is_empty()) => {
            let f = field.expect("checked above");
            let members = f.one_of.iter().map(|t| type_schema(t, None, side));
            RefOr::T(Schema::OneOf(
                members
                    .fold(OneOfBuilder::new(), |b, m| b.item(m))
                    .description(Some(f.def.description.clone()))
                    .build(),
            ))
        }
        Ty::Json => {
            let mut b = described(ObjectBuilder::new().schema_type(utoipa::openapi::schema::SchemaType::AnyValue));
            if let Some(values) = def.map(|d| &d.values).filter(|v| !v.is_empty()) {
                b = b.enum_values(Some(values.clone()));
            }
            RefOr::T(Schema::Object(b.build()))
        }
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
pub(super) fn number(v: f64) -> utoipa::Number {
    if v.fract() == 0.0 && v.abs() < 9.0e15 { utoipa::Number::Int(v as isize) } else { utoipa::Number::Float(v) }
}

/// The schema of a field: nullable when the spec says so, or when it is an optional field of a
/// request body (`null` there means absent); with its default, when it has one.
pub(super) fn field_schema(f: &Field, side: Side, in_body: bool) -> RefOr<Schema> {
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
            // An enum must list `null` for a nullable field to accept it (JSON Schema, and
            // OpenAPI 3.0.3's clarification of `nullable`).
            if let Some(values) = o.enum_values.as_mut().filter(|v| !v.contains(&serde_json::Value::Null)) {
                values.push(serde_json::Value::Null);
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
pub(super) fn deprecated(schema: RefOr<Schema>, description: &str) -> RefOr<Schema> {
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
pub(super) fn object_schema<'a>(
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

/// `schema`, an object's, with the groups of fields its model requires: JSON Schema's `anyOf`
/// (at least one) or `oneOf` (exactly one) of `required` lists.
/// utoipa's object schema has no `anyOf`/`oneOf` beside its properties: the groups travel as
/// these extensions, renamed to the keywords once serialized (`tools::requires_keywords`).
pub(super) const REQUIRES_KEYS: [(&str, &str); 2] = [("x-requires-anyOf", "anyOf"), ("x-requires-oneOf", "oneOf")];

pub(super) fn with_requires(schema: Schema, requires: Option<&crate::spec::RequiresDef>) -> Schema {
    match (schema, requires) {
        (Schema::Object(mut object), Some(r)) => {
            let (exactly_one, groups) = r.rule();
            let keyword = REQUIRES_KEYS[usize::from(exactly_one)].0;
            let listed: Vec<serde_json::Value> = groups.iter().map(|g| serde_json::json!({"required": g})).collect();
            let mut extensions = object.extensions.take().unwrap_or_default();
            extensions.merge(ExtensionsBuilder::new().add(keyword, listed).build());
            object.extensions = Some(extensions);
            Schema::Object(object)
        }
        (schema, _) => schema,
    }
}

/// Models held only by tagged unions: each is written as its union's variant schema (its fields
/// beside the tag), so a schema of its own would be one nothing refers to.
pub(super) fn only_in_tagged_unions(api: &Api) -> Vec<String> {
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
        referenced
            .extend(op.def.input.iter().chain(op.def.output.iter()).chain(op.def.request_models.values()).cloned());
        op.alternatives.iter().filter_map(|a| a.output.as_ref()).for_each(|t| models_in(t, &mut referenced));
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
pub(super) fn union_schemas(api: &Api, name: &str, side: Side) -> Vec<(String, RefOr<Schema>)> {
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

pub(super) fn input_models(api: &Api) -> Vec<&str> {
    api.operations.iter().filter_map(|o| o.def.input.as_deref()).collect()
}

/// Every component schema of the models, in a stable order: enums, models, envelopes (the error
/// bodies' follow them in the document: `errors::error_schemas`).
pub(super) fn component_schemas(api: &Api) -> Vec<(String, RefOr<Schema>)> {
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
    let request_side = api.reachable(inputs.iter().copied());
    let value_names: Vec<String> = api
        .operations
        .iter()
        .flat_map(|o| o.value_output.iter().chain(o.alternatives.iter().filter_map(|a| a.output.as_ref())))
        .flat_map(Ty::names)
        .collect();
    let response_side = api.reachable(
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
            out.push((body, RefOr::T(with_requires(schema, model.requires.as_ref()))));
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
        .flat_map(|(_, union)| api.reachable(union.variants.values().map(String::as_str)))
        .collect();
    for (name, m) in &api.models {
        if only_tagged.contains(name) {
            continue;
        }
        let is_input = inputs.contains(&name.as_str());
        // A payload's schema is its field's (the answer's, or the request's, body).
        let payload = m.fields_in(Location::Payload).next().is_some();
        if (is_input && m.fields.iter().any(|f| f.location() != Location::Body)) || payload {
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
            RefOr::T(with_requires(
                object_schema(&m.description, body(), m.additional.as_ref(), closed, side, json),
                m.requires.as_ref(),
            )),
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
    out
}
