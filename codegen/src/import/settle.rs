//! The imported spec as a whole, before the loader's check: which operations use each type (to
//! leave out what a refused type concerns), the types no operation uses, defaults the platform
//! does not fill, and fields Rust would spell alike.

use std::collections::{BTreeMap, BTreeSet};

use crate::spec::Spec;

use super::Report;
use super::schema::type_names;

/// The models, enums and unions a field names: its type's, and its `one_of`'s.
fn field_types(f: &crate::spec::FieldDef) -> impl Iterator<Item = &str> {
    type_names(&f.ty).chain(f.one_of.iter().flat_map(|t| type_names(t)))
}

/// Which operations use each model, enum and union, through their input and output (directly
/// or through other types): read once per round of the importer's check, whatever the number of
/// refusals.
pub(super) struct Users<'s> {
    spec: &'s Spec,
    /// Type → the types whose fields or variants name it.
    held_by: BTreeMap<&'s str, Vec<&'s str>>,
    /// Type → the operations naming it as input or output.
    direct: BTreeMap<&'s str, Vec<&'s str>>,
    /// Type → the webhooks whose payload it is.
    hooks: BTreeMap<&'s str, Vec<&'s str>>,
}

impl<'s> Users<'s> {
    pub(super) fn of(spec: &'s Spec) -> Self {
        let mut held_by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (name, m) in &spec.models {
            for f in m.fields.values().chain(&m.additional) {
                for t in field_types(f) {
                    held_by.entry(t).or_default().push(name);
                }
            }
        }
        for (name, u) in &spec.unions {
            for v in u.variants.values() {
                held_by.entry(v).or_default().push(name);
            }
        }
        let mut direct: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for op in &spec.operations {
            for t in op.types().flat_map(|t| type_names(t)) {
                direct.entry(t).or_default().push(&op.id);
            }
        }
        let mut hooks: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (event, w) in &spec.webhooks {
            hooks.entry(&w.payload).or_default().push(event);
        }
        Users { spec, held_by, direct, hooks }
    }

    /// The operations that use `ty`, in spec order, and the webhooks whose payload holds it.
    pub(super) fn of_type(&self, ty: &str) -> (Vec<String>, Vec<String>) {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut stack = vec![ty];
        let mut ops: BTreeSet<&str> = BTreeSet::new();
        let mut hooks: Vec<String> = Vec::new();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            ops.extend(self.direct.get(t).into_iter().flatten().copied());
            hooks.extend(self.hooks.get(t).into_iter().flatten().map(|h| h.to_string()));
            stack.extend(self.held_by.get(t).into_iter().flatten().copied());
        }
        let ops = self.spec.operations.iter().filter(|o| ops.contains(o.id.as_str())).map(|o| o.id.clone()).collect();
        (ops, hooks)
    }
}

/// Every model, enum and union reached from the named ones.
pub(super) fn reach(spec: &Spec, mut stack: Vec<String>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(m) = spec.models.get(&name) {
            for f in m.fields.values().chain(&m.additional) {
                stack.extend(field_types(f).map(str::to_string));
            }
        }
        if let Some(u) = spec.unions.get(&name) {
            stack.extend(u.variants.values().cloned());
        }
    }
    seen
}

/// Leaves out the models, enums and unions no operation uses (what left-out operations made).
pub(super) fn keep_used(spec: &mut Spec) {
    let mut roots: Vec<String> =
        spec.operations.iter().flat_map(|o| o.types()).flat_map(|t| type_names(t).map(str::to_string)).collect();
    if let crate::spec::ErrorFormat::Model(m) = &spec.wire.errors {
        roots.push(m.model.clone());
    }
    roots.extend(spec.webhooks.values().map(|w| w.payload.clone()));
    let used = reach(spec, roots);
    spec.models.retain(|n, _| used.contains(n));
    spec.enums.retain(|n, _| used.contains(n));
    spec.unions.retain(|n, _| used.contains(n));
}

/// Fields of one model whose wire names Rust spells alike (`a_b` and `aB`, `+1` and `1`): the
/// later ones get a Rust name of their own (`a_b_2`), and the report says which.
pub(super) fn name_fields_apart(spec: &mut Spec, report: &mut Report) {
    let mut renamed = Vec::new();
    for (model, m) in spec.models.iter_mut() {
        let mut taken = std::collections::HashSet::new();
        for (name, f) in m.fields.iter_mut() {
            if let Some(own) = crate::names::apart(&mut taken, &f.rust_name(name), "_") {
                renamed.push(format!("`{model}.{name}` is `{own}`"));
                f.rust = Some(own);
            }
        }
    }
    if !renamed.is_empty() {
        report.service.push(format!("fields Rust spells alike get names of their own: {}", renamed.join(", ")));
    }
}

/// A default stays where the platform fills it, on an optional, non-null field of an operation's
/// own input; elsewhere (an answer's model, a required field) it documents nothing the platform
/// does, and the report says it was left out.
pub(super) fn settle_defaults(spec: &mut Spec, report: &mut Report) {
    let inputs: BTreeSet<String> = spec.operations.iter().filter_map(|o| o.input.clone()).collect();
    let mut nested: BTreeSet<String> = spec
        .models
        .values()
        .flat_map(|m| m.fields.values().flat_map(|f| field_types(f).map(str::to_string).collect::<Vec<_>>()))
        .collect();
    nested.extend(spec.unions.values().flat_map(|u| u.variants.values().cloned()));
    // The loader's own reading of a default (its type, format, pattern, bounds), so a default kept
    // is one the loader accepts.
    let mut left = Vec::new();
    for (name, m) in &spec.models {
        let input = inputs.contains(name) && !nested.contains(name);
        for (field, f) in &m.fields {
            let Some(default) = &f.default else { continue };
            let fits = crate::ir::Ty::parse(&f.ty, spec)
                .is_ok_and(|ty| crate::load::default_fits(default, f, &ty, spec).is_ok());
            if !(input && f.optional && !f.nullable && fits) {
                left.push((name.clone(), field.clone()));
            }
        }
    }
    for (name, field) in &left {
        if let Some(f) = spec.models.get_mut(name).and_then(|m| m.fields.get_mut(field)) {
            f.default = None;
        }
    }
    let left: Vec<String> = left.iter().map(|(name, field)| format!("`{name}.{field}`")).collect();
    if !left.is_empty() {
        report.service.push(format!(
            "defaults are kept where the platform fills them in (an operation input's optional fields) and where they \
             are values of their field's type; left out on {}",
            left.join(", ")
        ));
    }
}

/// A key for a parameter named `name` at `location` that no field of `fields` holds
/// (`id_query`, `id_header`, then numbered); none where the name is no key at all.
pub(super) fn key_apart(
    fields: &indexmap::IndexMap<String, crate::spec::FieldDef>,
    name: &str,
    location: crate::spec::Location,
) -> Option<String> {
    let place = match location {
        crate::spec::Location::Query => "query",
        crate::spec::Location::Header => "header",
        _ => return None,
    };
    let base = format!("{name}_{place}");
    std::iter::once(base.clone())
        .chain((2..).map(|i| format!("{base}_{i}")))
        .take(100)
        .find(|k| !fields.contains_key(k))
}
