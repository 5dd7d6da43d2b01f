//! Media types of bodies: which a request body and an answer are sent as, and who decodes or
//! reads each (the platform, or the implementation's `read_body`, and what a form carries).

use indexmap::IndexMap;

use crate::ir::{Model, Ty};
use crate::spec::{Location, OperationDef};

use super::*;

/// An answer's other formats than JSON (`answer_types` listing `application/xml`, …): the
/// implementation renders the bodies of its answers in them (its output, a page of it, each
/// alternative's), so each is a value the platform holds, not a file, a stream or text already
/// rendered as JSON.
pub(super) fn check_other_formats(
    c: &mut Collector,
    place: &Place,
    op: &OperationDef,
    models: &IndexMap<String, Model>,
) {
    let Some(first) = op.answer_types.iter().find(|m| !support::is_json_media(m)) else { return };
    let file = |ty: Option<&str>| {
        ty.is_some_and(|t| {
            t == "file" || models.get(t).is_some_and(|m| m.fields_in(Location::Payload).any(|f| f.ty == Ty::File))
        })
    };
    let alternative_file = op.alternatives.iter().any(|a| file(a.output.as_deref()));
    for (set, what) in [
        (op.prerendered, "a prerendered output"),
        (op.stream.is_some(), "a stream"),
        (file(op.output.as_deref()) || alternative_file, "a file"),
    ] {
        if set {
            c.push(
                place,
                format!("`answer_types` lists `{first}` beside {what}"),
                "list JSON types only, or answer a value the implementation renders",
            );
        }
    }
}

/// Whether a form carries a value of type `ty`: a scalar, a list, a map, any JSON, or a model
/// of declared members of such types, nested values in bracket notation (`a[b]=1`, `a[0][b]=1`,
/// as `support`'s form decoder reads them); not a file or a union (whose variant no key says).
pub(super) fn form_carries(ty: &Ty, models: &IndexMap<String, Model>) -> bool {
    fn carries<'a>(ty: &'a Ty, models: &'a IndexMap<String, Model>, seen: &mut Vec<&'a str>) -> bool {
        match ty {
            Ty::File | Ty::Union(_) => false,
            Ty::List(inner) | Ty::Map(inner) => carries(inner, models, seen),
            // A model met again (one holding itself) carries as it did the first time.
            Ty::Model(name) if seen.contains(&name.as_str()) => true,
            Ty::Model(name) => {
                seen.push(name);
                models.get(name).is_some_and(|m| {
                    m.additional.is_none()
                        && m.fields.iter().all(|f| f.location() == Location::Body && carries(&f.ty, models, seen))
                })
            }
            _ => true,
        }
    }
    carries(ty, models, &mut Vec::new())
}

/// The media types of `op`'s request body that its implementation reads into JSON
/// (`read_body`): every listed type beside JSON but a form or multipart whose fields a form
/// carries ([`form_carries`]), which the platform decodes itself; and each of another shape
/// (`request_models`).
pub(super) fn read_types(op: &OperationDef, models: &IndexMap<String, Model>) -> Vec<String> {
    use crate::spec::BodyFormat;
    let input = op.input.as_deref().and_then(|i| models.get(i));
    let carried = op.body == BodyFormat::Json
        && input.is_none_or(|m| {
            m.fields_in(Location::Body).all(|f| form_carries(&f.ty, models))
                && m.fields_in(Location::Payload).next().is_none()
                && m.additional.is_none()
        });
    op.request_types
        .iter()
        .filter(|m| match BodyFormat::of_media(m) {
            _ if op.request_models.contains_key(*m) => true,
            Some(BodyFormat::Json) => false,
            Some(BodyFormat::Form | BodyFormat::Multipart) => !carried,
            _ => true,
        })
        .cloned()
        .collect()
}

/// `request_types` and `answer_types`: media types, each once and one of them JSON, for a JSON
/// body and a JSON answer; the others are forms the platform decodes or formats the
/// implementation reads (`read_types`) or renders (`check_other_formats`).
pub(super) fn check_json_types(
    c: &mut Collector,
    place: &Place,
    op: &OperationDef,
    json_body: bool,
    models: &IndexMap<String, Model>,
) {
    let json_answer = op.output.as_deref().is_some_and(|o| o != FILE) && op.stream.is_none();
    for (list, key, applies, what) in [
        (&op.request_types, "request_types", json_body, "a JSON request body"),
        (&op.answer_types, "answer_types", json_answer, "a JSON answer (an output that is no file or stream)"),
    ] {
        if list.is_empty() {
            continue;
        }
        if !applies {
            c.push(place, format!("`{key}` is for {what}"), format!("remove `{key}`"));
        } else if !list.iter().any(|m| support::is_json_media(m)) {
            c.push(
                place,
                format!("`{key}` lists no JSON media type"),
                "list the JSON one too, or declare the body's own format with `body`",
            );
        }
        if key == "request_types" {
            check_request_models(c, place, op, models);
        }
        for (i, m) in list.iter().enumerate() {
            // Forms, and other formats the implementation reads (a request) or renders (an
            // answer): any media type but a range or a stream.
            let stream = ["text/event-stream", "application/x-ndjson"].contains(&m.to_ascii_lowercase().as_str());
            if !(support::is_json_media(m) || support::is_media_type(m)) || stream {
                c.push(
                    place,
                    format!("`{key}`: `{m}` is not a media type a body is sent as"),
                    "list media types like `application/json` or `application/xml` (no range like `*/*`, no stream)",
                );
            } else if list[..i].iter().any(|o| o.eq_ignore_ascii_case(m)) {
                c.push(place, format!("`{key}` lists `{m}` twice"), "list each once");
            }
        }
    }
}

/// `request_models`: each a listed request type, described by a model of body fields (what the
/// documents show of that body; the implementation reads it), one JSON type left for the input.
fn check_request_models(c: &mut Collector, place: &Place, op: &OperationDef, models: &IndexMap<String, Model>) {
    let input_json = op.request_types.iter().any(|m| support::is_json_media(m) && !op.request_models.contains_key(m));
    if !op.request_models.is_empty() && !input_json {
        c.push(
            place,
            "`request_models` describes every JSON request type: none is left for the input",
            "leave the input's JSON type out of `request_models`",
        );
    }
    for (m, model) in &op.request_models {
        if !op.request_types.iter().any(|t| t.eq_ignore_ascii_case(m)) {
            c.push(
                place,
                format!("`request_models` names `{m}`, which `request_types` does not list"),
                "list it in `request_types`",
            );
        }
        match models.get(model) {
            None => c.push(place, format!("`request_models`: `{model}` is not a model"), "name a model under [models]"),
            Some(found) if found.fields.iter().any(|f| f.location() != Location::Body) => c.push(
                place,
                format!("`request_models`: model `{model}` has fields outside the body"),
                "describe the body alone: its fields are body fields",
            ),
            Some(_) => {}
        }
    }
}
