//! After the loader's check: what the report says of the operations as loaded, and where the
//! written text reads back as another spec than the one checked, if it ever does.

use indexmap::IndexMap;

use crate::spec::Spec;

use super::{Outcome, Report};

/// Says, on each operation whose JSON body may also come as a form or multipart the platform
/// cannot decode into its fields (a union or a file among them), that the implementation reads
/// those bodies (`read_body`), as the loader decided.
pub(super) fn note_read_forms(api: &crate::ir::Api, report: &mut Report) {
    for op in &api.operations {
        let forms: Vec<&String> = op
            .read_types
            .iter()
            .filter(|m| {
                matches!(
                    support::BodyFormat::of_media(m),
                    Some(support::BodyFormat::Form | support::BodyFormat::Multipart)
                )
            })
            .collect();
        if forms.is_empty() {
            continue;
        }
        let Some(entry) = report.entries.iter_mut().find(|e| e.id == op.def.id) else { continue };
        let note =
            format!("its implementation reads {forms:?} bodies (`read_body`): a form cannot carry a union or a file");
        match &mut entry.outcome {
            Outcome::Exact => entry.outcome = Outcome::Normalised(vec![note]),
            Outcome::Normalised(notes) => notes.push(note),
            Outcome::NotImported(_) => {}
        }
    }
}

/// Where two specs differ first: the part, and the operation or type it is.
pub(super) fn first_difference(a: &Spec, b: &Spec) -> String {
    fn keyed<T: PartialEq>(what: &str, a: &IndexMap<String, T>, b: &IndexMap<String, T>) -> Option<String> {
        let keys = a.keys().chain(b.keys());
        keys.into_iter().find(|k| a.get(*k) != b.get(*k)).map(|k| format!("{what} `{k}`"))
    }
    let ops =
        a.operations.iter().zip(&b.operations).find(|(x, y)| x != y).map(|(x, _)| format!("operation `{}`", x.id));
    ops.or_else(|| (a.operations.len() != b.operations.len()).then(|| "the operations".to_string()))
        .or_else(|| keyed("model", &a.models, &b.models))
        .or_else(|| keyed("enum", &a.enums, &b.enums))
        .or_else(|| keyed("union", &a.unions, &b.unions))
        .or_else(|| keyed("error", &a.errors, &b.errors))
        .or_else(|| keyed("webhook", &a.webhooks, &b.webhooks))
        .unwrap_or_else(|| "the service, its security, wire or errors' roles".into())
}
