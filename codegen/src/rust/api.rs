//! The service's surface: the trait its implementation writes (`service.rs`), the router and one `Endpoint` per operation (`router.rs`), the MCP dispatch (`tools.rs`), webhooks, and `mod.rs` with `api(implementation)`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ir::{Api, Field, Operation, Ty};
use crate::spec::Location;

use super::*;

/// The `targets` of an operation's `Endpoint`: the input fields its spec names in
/// `audit_targets`, read in order (nothing when it names none: the trait's default).
fn audit_targets(api: &Api, op: &Operation) -> TokenStream {
    let Some(input) = op.def.input.as_ref().filter(|_| !op.def.audit_targets.is_empty()) else {
        return quote!();
    };
    let model = &api.models[input];
    let fields: Vec<&Field> =
        op.def.audit_targets.iter().filter_map(|name| model.fields.iter().find(|f| f.name == *name)).collect();
    let body = if fields.iter().all(|f| f.required() && !matches!(f.ty, Ty::List(_))) {
        let values = fields.iter().map(|f| {
            let ident = field_ident(f);
            quote!(input.#ident.clone())
        });
        quote!(vec![#(#values),*])
    } else {
        // Each field as an iterator of its values: a string one, a list its items, an optional
        // field none when absent.
        let parts = fields.iter().map(|f| {
            let ident = field_ident(f);
            match (&f.ty, f.required()) {
                (Ty::List(_), true) => quote!(.chain(input.#ident.iter().cloned())),
                (Ty::List(_), false) => quote!(.chain(input.#ident.iter().flatten().cloned())),
                (_, true) => quote!(.chain(std::iter::once(input.#ident.clone()))),
                (_, false) => quote!(.chain(input.#ident.clone())),
            }
        });
        quote!(std::iter::empty() #(#parts)* .collect())
    };
    quote! {
        fn targets(input: &Self::Input) -> Vec<String> {
            #body
        }
    }
}

pub(super) fn service_file(api: &Api) -> TokenStream {
    let tname = trait_name(api);
    let methods = api.operations.iter().map(|op| {
        let m = crate::rust::method_ident(op);
        let err = error_enum(op);
        let out = output_type(op);
        let (input, _) = input_param(op);
        let paging = if op.def.paginated { quote!(, paging: Paging) } else { quote!() };
        let doc = docs(&format!(
            "{}\n\n`{} {}{}` · scope `{}`{}",
            op.def.summary,
            op.method().as_str(),
            api.spec.service.base_path,
            op.def.path,
            op.def.scope.clone().unwrap_or_default(),
            op.def.mcp.as_ref().map(|t| format!(" · MCP tool `{}`", t.name)).unwrap_or_default()
        ));
        quote! {
            #doc
            fn #m(&self, cx: &mut Self::Context #input #paging) -> impl Future<Output = Result<#out, errors::#err>> + Send;
        }
    });
    // Bodies in other formats than JSON (XML, plain text), where an operation lists one: the
    // implementation's to read, as the platform writes no XML of its own.
    let read_body = api.operations.iter().any(|o| !o.read_types.is_empty()).then(|| {
        quote! {
            /// Reads a request body sent in a format other than JSON or a form that an operation
            /// lists in `request_types` (`application/xml`, `text/plain`), or in a shape of its
            /// own (`request_models`), into the JSON value the input's fields are decoded and
            /// checked from: `Some(Ok(value))`, or `Some(Err(why))` for a malformed body
            /// (answered like malformed JSON). `media` is the type as listed (`multipart/form-data`
            /// with the request's `boundary`). `None`, the default, reads none:
            /// such a body is answered 415, as a format the server does not take (501 while the
            /// service is being written: its catalog holds `not_implemented`).
            fn read_body(&self, operation: &'static str, media: &str, body: &[u8]) -> support::BodyRead {
                let _ = (operation, media, body);
                None
            }
        }
    });
    let doc = format!(" Everything `{}` does: one method per operation of the spec.", api.name());
    let answers_use = if has_alternatives(api) {
        quote!(
            use super::answers;
        )
    } else {
        quote!()
    };
    quote! {
        //! The service trait the runtime implements.
        use std::future::Future;
        #[allow(unused_imports, reason = "`Paged`/`Paging` are unused by services without lists")]
        use support::{Paged, Paging};
        use super::errors;
        #[allow(unused_imports, reason = "a spec without models uses none")]
        use super::models;
        #answers_use

        #[doc = #doc]
        pub trait #tname: Send + Sync + 'static {
            /// What each call receives beside its input: the caller, and what the runtime
            /// provides for the call (its `Gate::Context`).
            type Context: Send + 'static;
            #(#methods)*
            #read_body
        }
    }
}

pub(super) fn router_file(api: &Api) -> TokenStream {
    let tname = trait_name(api);
    let base = &api.spec.service.base_path;
    let endpoints = api.operations.iter().map(|op| {
        let (m, st, ep, err) = (crate::rust::method_ident(op), op_static(op), endpoint(op), error_enum(op));
        let (_, in_ty) = input_param(op);
        let input = if op.def.input.is_some() { quote!(input) } else { quote!(_input) };
        let paging = if op.def.paginated { quote!(paging) } else { quote!(_paging) };
        let args = match (op.def.input.is_some(), op.def.paginated) {
            (true, true) => quote!(, input, paging),
            (true, false) => quote!(, input),
            (false, true) => quote!(, paging),
            (false, false) => quote!(),
        };
        let headers: Vec<&Field> =
            op.def.output.as_ref().map(|o| api.models[o].fields_in(Location::Header).collect()).unwrap_or_default();
        let format = match op.def.stream {
            Some(support::StreamFormat::Sse) => Some(quote!(Sse)),
            Some(support::StreamFormat::Ndjson) => Some(quote!(Ndjson)),
            None => None,
        };
        // How the method's answer becomes a `Success`: a closure over it (over a reference to it
        // where other formats keep the answer for their renderer).
        let formatted = op.other_formats().next().is_some();
        let amp = if formatted { quote!() } else { quote!(&) };
        let answer = match (&op.def.output, op.def.paginated) {
            (Some(_), _) if format.is_some() => quote!(
                |events| support::Success::Streamed(events.into_response(support::StreamFormat::#format))
            ),
            _ if !op.alternatives.is_empty() => answers_body(api, op, &headers, &amp),
            (None, _) if op.file_output => quote!(support::Success::File),
            (None, _) if op.value_output.is_some() && formatted => quote!(support::Success::one),
            (None, _) if op.value_output.is_some() => quote!(|out| support::Success::one(&out)),
            (None, _) => quote!(|()| support::Success::Empty),
            (Some(_), true) if op.def.prerendered => quote!(|out| support::Success::rendered_page(#amp out, paging)),
            (Some(_), true) => quote!(|out| support::Success::page(#amp out, paging)),
            (Some(_), false) if op.def.prerendered => quote!(|out| support::Success::rendered(#amp out)),
            (Some(_), false) if headers.is_empty() && !op.file_output && formatted => quote!(support::Success::one),
            (Some(_), false) if headers.is_empty() && !op.file_output => quote!(|out| support::Success::one(&out)),
            (Some(o), false) => {
                // The output's header fields become response headers; with no body field left,
                // the answer has no body.
                let headed = headed_success(api, o, &headers, &amp);
                quote!(|out| #headed)
            }
        };
        // With other formats than JSON, the same closure reads the answer the implementation
        // gives beside its renderer (the loader keeps files and streams out of them).
        let body = if formatted { quote!(.map(|formats| formats.answer(#answer))) } else { quote!(.map(#answer)) };
        let doc = format!(" `{} {base}{}`: {}", op.method().as_str(), op.def.path, op.def.summary);
        let targets = audit_targets(api, op);
        let read = (!op.read_types.is_empty()).then(|| {
            let id = op.id();
            quote! {
                fn read_body(s: &S, media: &str, body: &[u8]) -> support::BodyRead {
                    s.read_body(#id, media, body)
                }
            }
        });
        quote! {
            #[doc = #doc]
            pub struct #ep;

            impl<S: #tname> Endpoint<S, S::Context> for #ep {
                type Input = #in_ty;
                type Error = errors::#err;
                const OP: &'static Operation = &operations::#st;
                async fn call(s: &S, cx: &mut S::Context, #input: Self::Input, #paging: Paging) -> Reply<Self::Error> {
                    s.#m(cx #args).await #body
                }
                #targets
                #read
            }
        }
    });
    // One `.route` per route, with every method of it and a JSON 405 for the rest. A parameter
    // beside text (`{id}.json`) is routed as the parameter alone; the decoder checks the text.
    let mut paths: indexmap::IndexMap<String, Vec<&Operation>> = indexmap::IndexMap::new();
    for op in &api.operations {
        paths.entry(support::route_path(&op.def.path)).or_default().push(op);
    }
    let routes = paths.iter().map(|(p, ops)| {
        let first = op_static(ops[0]);
        // Operations of one method on the route are told apart by their query (`/?Action=Run`):
        // `support::among` chooses; an operation alone on its method with a query part too, so
        // that what the part asks is checked.
        let mut methods: indexmap::IndexMap<support::Method, Vec<&Operation>> = indexmap::IndexMap::new();
        for o in ops {
            methods.entry(o.method()).or_default().push(o);
        }
        let allowed = methods.keys().map(|m| m.as_str()).collect::<Vec<_>>().join(", ");
        let route = methods.values().fold(quote!(methods(&SERVICE, #allowed)), |route, group| match group.as_slice() {
            [o] if support::query_items(&o.def.path).is_empty() => {
                let ep = endpoint(o);
                quote!(on::<#ep, S, G>(#route, &app))
            }
            group => {
                let choices = group.iter().map(|o| {
                    let ep = endpoint(o);
                    let st = op_static(o);
                    quote!((&operations::#st, on::<#ep, S, G>(axum::routing::MethodRouter::new(), &app)))
                });
                quote!(support::among(#route, &app, vec![#(#choices),*]))
            }
        });
        if *p == ops[0].def.path {
            quote!(.route(operations::#first.full_path, #route))
        } else {
            let full = format!("{}{p}", api.spec.service.base_path);
            quote!(.route(#full, #route))
        }
    });
    let doc = format!(" The axum router of every operation under `{base}`, built from the operation table.");
    let answers_use = if has_alternatives(api) {
        quote!(
            use super::answers;
        )
    } else {
        quote!()
    };
    quote! {
        //! The axum router, and one `Endpoint` per operation: the trait method it calls and how its
        //! output becomes the body. `support::on` (REST) and `support::tool` (MCP) do the rest.
        use std::sync::Arc;
        #[allow(unused_imports, reason = "`NoInput` is unused when every operation has an input model")]
        use support::{self, App, Endpoint, Gate, Layers, NoInput, Operation, Paging, Reply, methods, on};
        use super::{#tname, errors, operations, operations::SERVICE};
        #[allow(unused_imports, reason = "a spec without models uses none")]
        use super::models;
        #answers_use

        #[doc = #doc]
        pub fn router<S, G>(service: Arc<S>, gate: Arc<G>) -> axum::Router
        where S: #tname, G: Gate<Context = S::Context>,
        {
            router_with(service, gate, Layers::default())
        }

        /// [`router`], each operation's route wrapped in the `layers` that select it.
        pub fn router_with<S, G>(service: Arc<S>, gate: Arc<G>, layers: Layers) -> axum::Router
        where S: #tname, G: Gate<Context = S::Context>,
        {
            let app = Arc::new(App { service, gate, layers });
            axum::Router::new() #(#routes)* .with_state(app)
        }

        #(#endpoints)*
    }
}

/// Some operation of `api` has other success answers than its main one.
pub(super) fn has_alternatives(api: &Api) -> bool {
    api.operations.iter().any(|o| !o.alternatives.is_empty())
}

/// How an operation with alternatives turns its answer enum into a `Success`: the main variant
/// as its output would be (with its response headers), each other one with its status.
fn answers_body(api: &Api, op: &Operation, headers: &[&Field], amp: &TokenStream) -> TokenStream {
    let name = answer_enum(op);
    let main = format_ident!("{}", crate::ir::Alternative::variant(op.status));
    let main_arm = match &op.def.output {
        None if op.file_output => quote!(answers::#name::#main(file) => support::Success::File(file),),
        None if op.value_output.is_none() => quote!(answers::#name::#main => support::Success::Empty,),
        Some(_) if op.def.paginated => quote!(answers::#name::#main(out) => support::Success::page(#amp out, paging),),
        Some(o) if !headers.is_empty() => {
            let headed = headed_success(api, o, headers, amp);
            quote!(answers::#name::#main(out) => #headed)
        }
        _ => quote!(answers::#name::#main(out) => support::Success::one(#amp out),),
    };
    let arms = op.alternatives.iter().map(|a| {
        let v = format_ident!("{}", crate::ir::Alternative::variant(a.status));
        let status = proc_macro2::Literal::u16_unsuffixed(a.status);
        match (a.redirect(), &a.output) {
            (true, Some(_)) => quote!(answers::#name::#v(location, out) =>
                support::Success::one(#amp out).status(#status).header("location", location),),
            (true, None) => {
                quote!(answers::#name::#v(location) => support::Success::Empty.status(#status).header("location", location),)
            }
            (false, Some(_)) => quote!(answers::#name::#v(out) => support::Success::one(#amp out).status(#status),),
            (false, None) => quote!(answers::#name::#v => support::Success::Empty.status(#status),),
        }
    });
    quote!(|answer| match answer { #main_arm #(#arms)* })
}

/// The `Success` of `out`, an output of model `o` with header fields: its body fields, or its
/// payload field (none: no body), and each header field as a response header.
fn headed_success(api: &Api, o: &str, headers: &[&Field], amp: &TokenStream) -> TokenStream {
    let model = &api.models[o];
    let start = if let Some(payload) = model.fields_in(Location::Payload).next() {
        let ident = field_ident(payload);
        if payload.ty == Ty::File {
            quote!(support::Success::File(out.#ident))
        } else {
            quote!(support::Success::one(&out.#ident))
        }
    } else if model.fields_in(Location::Body).next().is_some() {
        quote!(support::Success::one(#amp out))
    } else {
        quote!(support::Success::Empty)
    };
    let set = header_setters(headers);
    quote!({ let mut success = #start; #(#set)* success })
}

/// The statements that move an output's header fields into response headers.
fn header_setters(headers: &[&Field]) -> Vec<TokenStream> {
    headers
        .iter()
        .map(|f| {
            let (ident, name) = (field_ident(f), f.http_header().to_ascii_lowercase());
            // Copy values are passed as they are, the others borrowed.
            let copied = matches!(f.ty, Ty::Integer | Ty::Number | Ty::Boolean | Ty::Enum(_));
            let borrow = if copied { quote!() } else { quote!(&) };
            let time = matches!(&f.ty, Ty::DateTime) || matches!(&f.ty, Ty::List(t) if **t == Ty::DateTime);
            if time {
                // Times as their JSON form writes them (RFC 3339), not as `Display` does.
                let text = quote!(support::time_header);
                return match (f.required(), matches!(f.ty, Ty::List(_))) {
                    (true, false) => quote!(success = success.header(#name, #text(&out.#ident));),
                    (false, false) => quote!(if let Some(v) = &out.#ident { success = success.header(#name, #text(v)); }),
                    (true, true) => quote!(success = success.header(#name, out.#ident.iter().map(#text).collect::<Vec<_>>().join(", "));),
                    (false, true) => quote!(if let Some(v) = &out.#ident {
                        success = success.header(#name, v.iter().map(#text).collect::<Vec<_>>().join(", "));
                    }),
                };
            }
            match (f.required(), matches!(f.ty, Ty::List(_))) {
                (true, false) => quote!(success = success.header(#name, #borrow out.#ident);),
                (false, false) => quote!(if let Some(v) = &out.#ident { success = success.header(#name, v); }),
                // A list is one header of comma-separated values (RFC 9110 section 5.6.1).
                (true, true) => quote!(success = success.header(#name, support::comma_list(&out.#ident));),
                (false, true) => {
                    quote!(if let Some(v) = &out.#ident { success = success.header(#name, support::comma_list(v)); })
                }
            }
        })
        .collect()
}

/// `answers.rs`: for each operation with alternatives, the enum its method returns, one variant
/// per success answer, named by its status's reason phrase.
pub(super) fn answers_file(api: &Api) -> TokenStream {
    let enums = api.operations.iter().filter(|o| !o.alternatives.is_empty()).map(|op| {
        let name = answer_enum(op);
        let main = format_ident!("{}", crate::ir::Alternative::variant(op.status));
        let main_doc = docs(&format!("`{}`: {}", op.status, op.def.summary));
        let main_ty = main_output_type(op);
        let main_variant = if op.def.output.is_none() && op.value_output.is_none() && !op.file_output {
            quote!(#main_doc #main,)
        } else {
            quote!(#main_doc #main(#main_ty),)
        };
        let others = op.alternatives.iter().map(|a| {
            let v = format_ident!("{}", crate::ir::Alternative::variant(a.status));
            let text = if a.description.is_empty() { "Another success answer." } else { &a.description };
            let more = if a.redirect() { " It holds the `Location` to go to." } else { "" };
            let doc = docs(&format!("`{}`: {text}{more}", a.status));
            let location = if a.redirect() { quote!(String,) } else { quote!() };
            match &a.output {
                Some(ty) => {
                    let t = type_in(ty, &quote!(models::));
                    quote!(#doc #v(#location #t),)
                }
                None if a.redirect() => quote!(#doc #v(String),),
                None => quote!(#doc #v,),
            }
        });
        let doc = docs(&format!(
            "What `{}` answers on success: the implementation chooses, and the status follows.",
            op.id()
        ));
        // A file is read once, as it is sent: neither copied nor compared.
        let derives = if op.file_output { quote!(Debug) } else { quote!(Debug, Clone, PartialEq) };
        quote! {
            #doc
            #[derive(#derives)]
            pub enum #name {
                #main_variant
                #(#others)*
            }
        }
    });
    // A page's answers hold the `Paged` the main answer is.
    let paged = api.operations.iter().any(|o| !o.alternatives.is_empty() && o.def.paginated);
    let paged = if paged {
        quote!(
            use support::Paged;
        )
    } else {
        quote!()
    };
    quote! {
        //! The success answers of the operations that have more than one: the implementation
        //! returns the variant it answers, and the variant gives the status.
        #[allow(unused_imports, reason = "answers of values need no model")]
        use super::models;
        #paged

        #(#enums)*
    }
}

pub(super) fn tools_file(api: &Api) -> TokenStream {
    let tname = trait_name(api);
    let ops = api.mcp_operations();
    let arms = ops.iter().map(|op| {
        let id = op.id();
        let ep = endpoint(op);
        quote!(#id => tool::<router::#ep, S, G>(service, gate, caller, arguments).await,)
    });
    let tools: Vec<&&Operation> = ops.iter().filter(|o| o.def.mcp.is_some()).collect();
    let entries = tools.iter().map(|op| {
        let name = &op.def.mcp.as_ref().map(|t| t.name.clone()).unwrap_or_default();
        let st = op_static(op);
        quote!((#name, &operations::#st))
    });
    let n = tools.len();
    quote! {
        //! MCP: each call (a tool, a resource read, a completion's listing) decodes its arguments
        //! into the operation's input and calls the same `Endpoint` as the REST route.
        //! Descriptors are in `SERVICE.tools_json` and `SERVICE.mcp_catalog_json`.
        use support::{Gate, Operation, ToolAnswer, ToolFailure, tool};
        use super::{#tname, operations, router};

        /// Tool name → operation, in spec order.
        pub static TOOLS: [(&str, &Operation); #n] = [#(#entries),*];

        /// Calls operation `op` for a caller `gate` admitted; `None` when the MCP endpoint
        /// reaches no such operation. Success is the same body the REST route answers (`{}` for
        /// an empty one) or its file; arguments that do not decode are reported to the gate, as
        /// at the REST route.
        pub async fn call<S, G>(service: &S, gate: &G, caller: G::Caller, op: &'static Operation, arguments: serde_json::Value)
            -> Option<Result<ToolAnswer, ToolFailure>>
        where S: #tname, G: Gate<Context = S::Context>,
        {
            Some(match op.id {
                #(#arms)*
                _ => return None,
            })
        }

        /// [`call`] for one implementation, as the runtime calls it through `support::Api`.
        pub struct Dispatch<S>(pub std::sync::Arc<S>);

        impl<S, G> support::Tools<G> for Dispatch<S>
        where S: #tname, G: Gate<Context = S::Context>,
        {
            fn call<'a>(&'a self, gate: &'a G, caller: G::Caller, op: &'static Operation, arguments: serde_json::Value)
                -> support::ToolCall<'a>
            {
                Box::pin(call(&*self.0, gate, caller, op, arguments))
            }
        }
    }
}

pub(super) fn mod_file(api: &Api) -> TokenStream {
    let tname = trait_name(api);
    let has_tools = api.has_mcp();
    let tools = if has_tools {
        quote!(
            pub mod tools;
        )
    } else {
        quote!()
    };
    let webhooks = if api.spec.webhooks.is_empty() {
        quote!()
    } else {
        quote!(
            pub mod webhooks;
        )
    };
    let answers = if has_alternatives(api) {
        quote!(
            pub mod answers;
        )
    } else {
        quote!()
    };
    let with_tools = if has_tools { quote!(.with_tools(&tools::TOOLS, tools::Dispatch(service))) } else { quote!() };
    let api_doc = format!(
        " `{}` and its implementation `service` as one value the runtime serves: its description, its \
         operation table, its router{}.",
        api.name(),
        if has_tools { " and its MCP endpoint's calls" } else { "" }
    );
    let doc = format!(" {}: generated from `spec/{}.toml`.", api.spec.service.title, api.name());
    quote! {
        #![doc = #doc]
        pub mod errors;
        pub mod models;
        pub mod operations;
        pub mod router;
        pub mod service;
        #tools
        #webhooks
        #answers

        pub use operations::{OPERATIONS, SERVICE};
        pub use router::router;
        pub use service::#tname;

        #[doc = #api_doc]
        pub fn api<S, G>(service: S) -> support::Api<G>
        where S: #tname, G: support::Gate<Context = S::Context>,
        {
            let service = std::sync::Arc::new(service);
            let routes = service.clone();
            support::Api::new(&SERVICE, &OPERATIONS, move |gate, layers| router::router_with(routes.clone(), gate, layers))
                #with_tools
        }
    }
}

/// `webhooks.rs`: one constructor per event type, typed by its payload's model, and the list of
/// event types a subscription may name.
pub(super) fn webhooks_file(api: &Api) -> TokenStream {
    let names = api.spec.webhooks.keys();
    let makers = api.spec.webhooks.iter().map(|(name, w)| {
        let f = format_ident!("{}", name.replace('.', "_"));
        let t = type_ident(&w.payload);
        let doc = docs(&format!("`{name}`: {}", w.summary));
        quote! {
            #doc
            pub fn #f(data: &models::#t) -> Event {
                Event::new(#name, data)
            }
        }
    });
    quote! {
        //! The events this service sends to its subscribers' URLs: build one here, typed by its
        //! payload, and hand it to the runtime in the transaction that makes the change.
        use support::webhooks::Event;
        use super::models;

        /// Every event type, in spec order: what a subscription may name.
        pub const EVENT_TYPES: &[&str] = &[#(#names),*];

        #(#makers)*
    }
}
