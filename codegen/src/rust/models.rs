//! `models.rs`: the spec's models, enums and unions as Rust types, and the field specs the decoder reads.

use heck::ToUpperCamelCase;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use crate::ir::{Api, Field, Model, Ty};
use crate::spec::Location;

use super::*;

pub(super) fn kind(ty: &Ty, api: &Api) -> TokenStream {
    match ty {
        Ty::String => quote!(Kind::String),
        Ty::Integer => quote!(Kind::Integer),
        Ty::Number => quote!(Kind::Number),
        Ty::Boolean => quote!(Kind::Boolean),
        Ty::DateTime => quote!(Kind::DateTime),
        Ty::Date => quote!(Kind::Date),
        Ty::Json => quote!(Kind::Json),
        // A file's limits are its field's: `field_spec` writes them.
        Ty::File => quote!(Kind::File { media_types: &[], max_size: #DEFAULT_MAX_FILE }),
        Ty::Enum(n) => {
            let values = api.spec.enums[n].values.iter().map(|v| &v.name);
            quote!(Kind::Enum(&[#(#values),*]))
        }
        Ty::Model(n) => {
            let s = fields_static(n);
            quote!(Kind::Model(&#s))
        }
        Ty::Union(n) => {
            let s = variants_static(n);
            quote!(Kind::Union(&#s))
        }
        Ty::List(inner) => {
            let k = kind(inner, api);
            quote!(Kind::List(&#k))
        }
        Ty::Map(inner) => {
            let k = kind(inner, api);
            quote!(Kind::Map(&#k))
        }
    }
}

/// `FieldSpec::body("key", Kind::String).required().max_length(128)`: the constructor of its
/// location, then only the constraints the spec declares.
pub(super) fn field_spec(f: &Field, api: &Api) -> TokenStream {
    let name = &f.name;
    let k = match f.ty {
        Ty::File => {
            let types = &f.def.media_types;
            let max = Literal::u64_unsuffixed(f.def.max_size.unwrap_or(DEFAULT_MAX_FILE));
            quote!(Kind::File { media_types: &[#(#types),*], max_size: #max })
        }
        _ => kind(&f.ty, api),
    };
    let mut spec = match f.location() {
        Location::Body => quote!(FieldSpec::body(#name, #k)),
        Location::Path => quote!(FieldSpec::path(#name, #k)),
        Location::Query => quote!(FieldSpec::query(#name, #k)),
        Location::Header => quote!(FieldSpec::header(#name, #k)),
        Location::Payload => quote!(FieldSpec::payload(#name, #k)),
    };
    let d = &f.def;
    for (set, call) in
        [(f.required(), quote!(.required())), (d.nullable, quote!(.nullable())), (d.secret, quote!(.secret()))]
    {
        if set {
            spec.extend(call);
        }
    }
    if let Some(v) = d.minimum.map(Literal::f64_unsuffixed) {
        spec.extend(quote!(.minimum(#v)));
    }
    if let Some(v) = d.maximum.map(Literal::f64_unsuffixed) {
        spec.extend(quote!(.maximum(#v)));
    }
    for (v, setter) in [
        (d.exclusive_minimum, "exclusive_minimum"),
        (d.exclusive_maximum, "exclusive_maximum"),
        (d.multiple_of, "multiple_of"),
    ] {
        if let Some(v) = v.map(Literal::f64_unsuffixed) {
            let setter = format_ident!("{setter}");
            spec.extend(quote!(.#setter(#v)));
        }
    }
    if !d.values.is_empty() {
        let text = serde_json::Value::Array(d.values.clone()).to_string();
        spec.extend(quote!(.values(#text)));
    }
    for (v, setter) in [
        (d.min_length, "min_length"),
        (d.max_length, "max_length"),
        (d.min_items, "min_items"),
        (d.max_items, "max_items"),
    ] {
        if let Some(n) = v {
            let (setter, n) = (format_ident!("{setter}"), Literal::usize_unsuffixed(n as usize));
            spec.extend(quote!(.#setter(#n)));
        }
    }
    if let Some(p) = &d.pattern {
        spec.extend(quote!(.pattern(#p)));
    }
    if d.nullable_items {
        spec.extend(quote!(.nullable_items()));
    }
    if !f.one_of.is_empty() {
        let kinds = f.one_of.iter().map(|t| kind(t, api));
        spec.extend(quote!(.one_of(&[#(#kinds),*])));
    }
    if d.content.is_some() {
        spec.extend(quote!(.json_text()));
    }
    if let Some(wire) = &d.name {
        spec.extend(quote!(.wire(#wire)));
    }
    if d.style != support::ListStyle::Repeated {
        let variant = format_ident!("{}", d.style.as_str().to_upper_camel_case());
        spec.extend(quote!(.list_style(support::ListStyle::#variant)));
    }
    if let Some(f) = d.format {
        let variant = format_ident!("{}", f.as_str().to_upper_camel_case());
        spec.extend(quote!(.format(support::Format::#variant)));
    }
    if let Some(v) = &d.default {
        let text = v.to_string();
        spec.extend(quote!(.default(#text)));
    }
    spec
}

/// Models and unions the decoder validates: operation inputs and every model and union reachable
/// from their fields. Output-only ones get no field specs, since nothing reads them.
pub(super) fn validated_models(api: &Api) -> (Vec<String>, Vec<String>) {
    fn walk(ty: &Ty, api: &Api, out: &mut (Vec<String>, Vec<String>)) {
        match ty {
            Ty::Model(n) => visit(n, api, out),
            Ty::Union(n) if !out.1.contains(n) => {
                out.1.push(n.clone());
                for model in api.spec.unions[n].variants.values() {
                    visit(model, api, out);
                }
            }
            Ty::List(inner) | Ty::Map(inner) => walk(inner, api, out),
            _ => {}
        }
    }
    fn visit(name: &str, api: &Api, out: &mut (Vec<String>, Vec<String>)) {
        if out.0.iter().any(|m| m == name) {
            return;
        }
        out.0.push(name.to_string());
        for f in api.models[name].fields.iter().chain(&api.models[name].additional) {
            for ty in f.types() {
                walk(ty, api, out);
            }
        }
    }
    let mut out = (Vec::new(), Vec::new());
    for op in &api.operations {
        if let Some(input) = &op.def.input {
            visit(input, api, &mut out);
        }
    }
    out
}

/// A union as a Rust enum, one variant per model: internally tagged (`#[serde(tag = …)]`) when
/// the union has a tag, else untagged (the decoder has already told the variant apart by its own
/// required fields, which no other variant declares, so serde's first match is that variant).
pub(super) fn union_type(name: &str, api: &Api, validated: bool) -> TokenStream {
    let u = &api.spec.unions[name];
    let ident = type_ident(name);
    let doc = docs(&u.description);
    let serde_attr = match &u.tag {
        Some(tag) => quote!(#[serde(tag = #tag)]),
        None => quote!(#[serde(untagged)]),
    };
    let variants = u.variants.iter().map(|(variant, model)| {
        let v = variant_ident(variant);
        let m = type_ident(model);
        let doc = format!(" `{variant}`: {}", api.models[model].description.trim().lines().next().unwrap_or_default());
        let rename = if u.tag.is_some() { quote!(#[serde(rename = #variant)]) } else { quote!() };
        quote!(#[doc = #doc] #rename #v(#m),)
    });
    let specs = if validated {
        let st = variants_static(name);
        let tag = opt(u.tag.as_ref());
        let pairs = u.variants.iter().map(|(variant, model)| {
            let fs = fields_static(model);
            quote!((#variant, &#fs))
        });
        let static_doc = format!(" Variants of [`{name}`], for validation.");
        quote! {
            #[doc = #static_doc]
            pub static #st: support::UnionSpec = support::UnionSpec { tag: #tag, variants: &[#(#pairs),*] };
        }
    } else {
        quote!()
    };
    quote! {
        #doc
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #serde_attr
        pub enum #ident { #(#variants)* }
        #specs
    }
}

/// Whether a field of type `ty` in model `owner` holds an `owner` again with no list or map
/// between (`parent: TreeNode` in `TreeNode`): a type of infinite size unless it is boxed.
pub(super) fn recursive(ty: &Ty, owner: &str, api: &Api) -> bool {
    fn reaches(ty: &Ty, owner: &str, api: &Api, seen: &mut Vec<String>) -> bool {
        let (Ty::Model(name) | Ty::Union(name)) = ty else { return false };
        if name == owner {
            return true;
        }
        if seen.contains(name) {
            return false;
        }
        seen.push(name.clone());
        match ty {
            Ty::Model(n) => api.models[n].fields.iter().any(|f| reaches(&f.ty, owner, api, seen)),
            _ => api.spec.unions[name].variants.values().any(|m| reaches(&Ty::Model(m.clone()), owner, api, seen)),
        }
    }
    reaches(ty, owner, api, &mut Vec::new())
}

pub(super) fn model_struct(model: &Model, api: &Api, role: ModelRole, validated: bool) -> TokenStream {
    let name = type_ident(&model.name);
    let doc = docs(&model.description);
    let is_input = role != ModelRole::Other;
    // An answer of a file beside response headers: the file (`support::File`, read once as it is
    // sent) and the headers, never serialized.
    let file_answer = model.fields_in(Location::Payload).any(|f| f.ty == Ty::File);
    if file_answer {
        let fields = model.fields.iter().map(|f| {
            let (ident, doc) = (field_ident(f), docs(&f.def.description));
            let ty = match (&f.ty, f.required()) {
                (Ty::File, _) => quote!(support::File),
                (ty, true) => rust_type(ty),
                (ty, false) => {
                    let t = rust_type(ty);
                    quote!(Option<#t>)
                }
            };
            quote! { #doc pub #ident: #ty, }
        });
        return quote! {
            #doc
            #[derive(Debug)]
            pub struct #name { #(#fields)* }
        };
    }
    let fields = model.fields.iter().filter(|f| !f.injected).map(|f| {
        let ident = field_ident(f);
        let doc = docs(&f.def.description);
        let base = match &f.ty {
            Ty::List(inner) if f.def.nullable_items => {
                let item = rust_type(inner);
                quote!(Vec<Option<#item>>)
            }
            ty => rust_type(ty),
        };
        let base = if recursive(&f.ty, &model.name, api) { quote!(Box<#base>) } else { base };
        // A keyword or a camelCase wire name keeps its wire name through serde.
        let rename = if KEYWORDS.contains(&f.name.as_str()) || f.rust_name() != f.name {
            let n = &f.name;
            quote!(#[serde(rename = #n)])
        } else {
            quote!()
        };
        let (ty, attr) = match (f.def.optional, f.def.nullable) {
            // The decoder puts the default in: the handler always sees a value.
            (true, false) if f.def.default.is_some() => (base, quote!()),
            (false, false) => (base, quote!()),
            (false, true) => (quote!(Option<#base>), quote!()),
            (true, false) => (quote!(Option<#base>), quote!(#[serde(default, skip_serializing_if = "Option::is_none")])),
            (true, true) => (
                quote!(Option<Option<#base>>),
                quote!(#[serde(default, deserialize_with = "support::double_option", skip_serializing_if = "Option::is_none")]),
            ),
        };
        // An output's header fields travel as response headers, not in the body.
        let attr = if !is_input && f.location() == Location::Header { quote!(#[serde(skip)]) } else { attr };
        quote! { #doc #rename #attr pub #ident: #ty, }
    });
    let if_match = (role == ModelRole::ConditionalInput).then(|| {
        quote! {
            /// The request's `If-Match` (empty without one): check it against the current
            /// version, in the transaction that changes it, with `if_match.check(&current)`.
            #[serde(default, skip_serializing)]
            pub if_match: support::IfMatch,
        }
    });
    let additional = model.additional.as_ref().map(|f| {
        let (doc, t) = (docs(&f.def.description), rust_type(&f.ty));
        quote! {
            #doc
            #[serde(flatten)]
            pub additional: std::collections::BTreeMap<String, #t>,
        }
    });
    let fields = fields.chain(if_match).chain(additional);
    // The decoder has refused unknown keys already; serde cannot both flatten and deny.
    let deny = if is_input && model.additional.is_none() { quote!(#[serde(deny_unknown_fields)]) } else { quote!() };
    let specs = if validated {
        let fs = fields_static(&model.name);
        // Every other key is checked against the spec named `support::OTHER_KEYS`.
        // No key is required: its spec checks values of keys that are there.
        let others = model.additional.as_ref().map(|f| {
            let def = crate::spec::FieldDef { optional: true, ..f.def.clone() };
            Field { name: support::OTHER_KEYS.into(), def, ..f.clone() }
        });
        let specs = model.fields.iter().chain(others.as_ref()).map(|f| field_spec(f, api));
        let n = model.fields.len() + usize::from(others.is_some());
        let static_doc = format!(" Field specs of [`{}`], for validation.", model.name);
        quote! {
            #[doc = #static_doc]
            pub static #fs: [FieldSpec; #n] = [#(#specs),*];
        }
    } else {
        quote!()
    };
    quote! {
        #doc
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #deny
        pub struct #name { #(#fields)* }
        #specs
    }
}

/// What `#[serde(rename_all = "snake_case")]` makes of a variant: `_` before every upper-case
/// letter but the first, then lower case (serde's own rule, so the wire value is exact).
pub(super) fn serde_snake_case(variant: &str) -> String {
    let mut out = String::new();
    for (i, c) in variant.char_indices() {
        if i > 0 && c.is_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

pub(super) fn enum_type(name: &str, api: &Api) -> TokenStream {
    let e = &api.spec.enums[name];
    let ident = type_ident(name);
    let doc = docs(&e.description);
    let variants: Vec<Ident> = e.values.iter().map(variant_ident_of).collect();
    // A value's variant by its wire name (the initial state and transitions name values).
    let of = |wire: &str| {
        e.values.iter().find(|v| v.name == wire).map(variant_ident_of).unwrap_or_else(|| variant_ident(wire))
    };
    let wire: Vec<&String> = e.values.iter().map(|v| &v.name).collect();
    let vdocs = e.values.iter().map(|v| docs(&v.description));
    let mut extra = TokenStream::new();
    if let Some(init) = &e.initial {
        let v = of(init);
        extra.extend(quote! {
            /// The state a new object starts in.
            pub const INITIAL: #ident = #ident::#v;
        });
    }
    if let Some(transitions) = &e.transitions {
        let arms = e.values.iter().map(|v| {
            let from = variant_ident_of(v);
            let tos = transitions.get(&v.name).into_iter().flatten().map(|t| of(t));
            quote!(#ident::#from => &[#(#ident::#tos),*],)
        });
        extra.extend(quote! {
            /// The states this one may move to (empty for a terminal state).
            pub fn next_states(self) -> &'static [#ident] {
                match self { #(#arms)* }
            }
            /// Whether moving from this state to `to` is allowed.
            pub fn can_move_to(self, to: #ident) -> bool {
                self.next_states().contains(&to)
            }
        });
    }
    // One `rename_all` when every wire value is its variant in snake_case, else one per variant.
    let snake = e.values.iter().all(|v| serde_snake_case(&v.variant()) == v.name);
    let (all_attr, renames) = if snake {
        (quote!(#[serde(rename_all = "snake_case")]), vec![quote!(); wire.len()])
    } else {
        (quote!(), wire.iter().map(|w| quote!(#[serde(rename = #w)])).collect())
    };
    quote! {
        #doc
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #all_attr
        pub enum #ident {
            #( #vdocs #renames #variants, )*
        }

        impl #ident {
            /// Every value, in spec order.
            pub const ALL: &'static [#ident] = &[#(#ident::#variants),*];
            /// The wire value of each of [`Self::ALL`], in the same order.
            pub const WIRE: &'static [&'static str] = &[#(#wire),*];
            /// The wire value.
            pub fn as_str(self) -> &'static str {
                Self::WIRE[self as usize]
            }
            /// Parses a wire value.
            pub fn parse(s: &str) -> Option<#ident> {
                Self::WIRE.iter().position(|w| *w == s).map(|i| Self::ALL[i])
            }
            #extra
        }

        impl std::fmt::Display for #ident {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    }
}

/// What a model is to the operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ModelRole {
    /// An operation's input.
    Input,
    /// The input of a conditional write, which carries the request's `If-Match`.
    ConditionalInput,
    /// An output, or a part of one.
    Other,
}

pub(super) fn models_file(api: &Api) -> TokenStream {
    let role = |name: &str| {
        let op = api.operations.iter().find(|o| o.def.input.as_deref() == Some(name));
        match op.map(|o| o.def.conditional()) {
            None => ModelRole::Other,
            Some(Some(support::Conditional::Write { .. })) => ModelRole::ConditionalInput,
            Some(_) => ModelRole::Input,
        }
    };
    let enums = api.spec.enums.keys().map(|n| enum_type(n, api));
    let (validated, validated_unions) = validated_models(api);
    let models = api.models.values().map(|m| model_struct(m, api, role(&m.name), validated.contains(&m.name)));
    let unions = api.spec.unions.keys().map(|n| union_type(n, api, validated_unions.contains(n)));
    let spec_imports = if validated.is_empty() {
        quote!()
    } else {
        quote!(
            use support::{FieldSpec, Kind};
        )
    };
    quote! {
        //! Request and response payloads and enums, with the field specs the decoder validates against.
        #[allow(unused_imports, reason = "a spec without models uses none")]
        use serde::{Deserialize, Serialize};
        #spec_imports
        #(#enums)*
        #(#models)*
        #(#unions)*
    }
}
