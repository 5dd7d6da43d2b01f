//! The error bodies in the service's format (the envelope, RFC 9457 problem details, or its own model) and each error status's description.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};

use crate::ir::Api;
use crate::spec::ErrorFormat;

use super::*;

/// The schemas of the service's error bodies, in its wire format.
pub(super) fn error_schemas(api: &Api) -> Vec<(String, RefOr<Schema>)> {
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
pub(super) fn error_content(api: &Api) -> (&'static str, &str) {
    match &api.spec.wire.errors {
        ErrorFormat::Envelope => ("application/json", ERROR_SCHEMA),
        ErrorFormat::Problem => ("application/problem+json", PROBLEM_SCHEMA),
        ErrorFormat::Model(m) => ("application/json", &m.model),
    }
}

/// What an error response says about `code`: its catalog description, and for the validation
/// error the rule the generated decoder applies to every string, which no schema states (a
/// `pattern` on every string would also turn each into a validated newtype in generated SDKs).
pub(super) fn error_description(api: &Api, code: &str) -> String {
    let mut text = format!("`{code}`: {}", api.spec.errors[code].description);
    if code == api.spec.error_roles.validation {
        text.push_str(
            " No string may hold U+0000 (NUL), in any field or parameter: one that does is refused this way.",
        );
    }
    text
}
