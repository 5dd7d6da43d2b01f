//! `operations.rs` (the operation table: one static `Operation` per route, the service's `ServiceInfo`) and `errors.rs` (one closed error enum per operation).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::ir::{Api, Operation};

use super::*;

pub(super) fn operations_file(api: &Api) -> TokenStream {
    let s = &api.spec;
    let name = &s.service.name;
    let title = &s.service.title;
    let base = &s.service.base_path;
    let mcp_path = opt(s.service.mcp_path.as_ref());
    let (metadata_paths, mcp_metadata_paths) = (&s.service.metadata_paths, &s.service.mcp_metadata_paths);
    let mcp_instructions = opt(s.service.mcp_instructions.as_ref());
    let audit = s.service.audit;
    let stored_tokens = s.security.stored_tokens.iter().map(|k| k.as_str());
    let scopes = s.security.scopes.iter().map(|sc| {
        let (n, d, imp) = (&sc.name, &sc.description, &sc.implies);
        quote!(ScopeInfo { name: #n, description: #d, implies: &[#(#imp),*] })
    });
    let errors = s.errors.iter().map(|(code, e)| {
        let (st, msg) = (e.status, &e.message);
        quote!(ErrorInfo { code: #code, status: #st, message: #msg })
    });
    let r = &s.error_roles;
    let roles = [
        &r.unauthenticated,
        &r.invalid_token,
        &r.insufficient_scope,
        &r.malformed,
        &r.validation,
        &r.payload_too_large,
        &r.unsupported_media_type,
        &r.not_found,
        &r.method_not_allowed,
        &r.rate_limited,
        &r.internal,
        &r.request_timeout,
        &r.unavailable,
    ];
    let [ua, it, is, ma, va, pl, um, nf, mna, rl, int, rt, un] = roles;
    // The precondition roles exist where an operation needs them (the prelude declared them).
    let role_if = |code: &String| opt(s.errors.contains_key(code).then_some(code));
    let (pf, pr) = (role_if(&s.error_roles.precondition_failed), role_if(&s.error_roles.precondition_required));
    let rns = role_if(&s.error_roles.range_not_satisfiable);
    let (dpp, mpp) = (s.pagination.default_per_page, s.pagination.max_per_page);
    let wire = if s.wire.is_default() {
        quote!(support::Wire::ENVELOPE)
    } else {
        let success = match s.wire.success {
            crate::spec::SuccessFormat::Envelope => quote!(support::SuccessFormat::Envelope),
            crate::spec::SuccessFormat::Bare => quote!(support::SuccessFormat::Bare),
        };
        let errors = match &s.wire.errors {
            crate::spec::ErrorFormat::Envelope => quote!(support::ErrorFormat::Envelope),
            crate::spec::ErrorFormat::Problem => {
                let types = opt(s.wire.problem_types.as_ref());
                quote!(support::ErrorFormat::Problem { types: #types })
            }
            crate::spec::ErrorFormat::Model(m) => {
                let (code, message) = (&m.code, &m.message);
                let (status, details, request_id) =
                    (opt(m.status.as_ref()), opt(m.details.as_ref()), opt(m.request_id.as_ref()));
                quote!(support::ErrorFormat::Model(&support::ErrorModel {
                    code: #code, message: #message, status: #status, details: #details, request_id: #request_id,
                }))
            }
        };
        quote!(support::Wire { success: #success, errors: #errors })
    };
    let plans = s.rate_limits.iter().flat_map(|rl| rl.plans.iter()).map(|(n, p)| {
        let (t, m, d) = (&p.title, p.per_minute, p.per_day);
        quote!(support::PlanInfo { name: #n, title: #t, per_minute: #m, per_day: #d })
    });
    let default_plan = opt(s.rate_limits.as_ref().map(|r| &r.default_plan));
    let openapi = format!("../../openapi/{name}.json");
    let openapi30 = format!("../../openapi/{name}.3.0.json");
    let tools = if api.operations.iter().any(|o| o.def.mcp.is_some()) {
        let p = format!("../../mcp/{name}.tools.json");
        quote!(include_str!(#p))
    } else {
        quote!("[]")
    };
    let catalog = if api.has_mcp_catalog() {
        let p = format!("../../mcp/{name}.catalog.json");
        quote!(include_str!(#p))
    } else {
        quote!("{}")
    };
    let ops = api.operations.iter().map(|op| {
        let st = op_static(op);
        let id = op.id();
        let method = method_tokens(op.method());
        let path = &op.def.path;
        let full = format!("{base}{}", op.def.path);
        let scope = op.def.scope.clone().unwrap_or_default();
        let sat = api.satisfying_scopes(&scope);
        // Only what differs from `BASE`.
        let mut rest = TokenStream::new();
        if op.status != 200 {
            let status = Literal::u16_unsuffixed(op.status);
            rest.extend(quote!(success_status: #status,));
        }
        let read_only = op.def.read_only.unwrap_or(op.method().is_safe());
        for (set, field) in [
            (op.def.public, quote!(public)),
            (op.has_body, quote!(has_body)),
            (op.def.no_store, quote!(no_store)),
            (op.def.rate_limited, quote!(rate_limited)),
            (read_only, quote!(read_only)),
            (op.def.paginated, quote!(paginated)),
            (op.def.ranges, quote!(ranges)),
        ] {
            if set {
                rest.extend(quote!(#field: true,));
            }
        }
        if !op.def.answer_types.is_empty() {
            let types = &op.def.answer_types;
            rest.extend(quote!(answer_types: &[#(#types),*],));
        }
        let forms: Vec<TokenStream> = op
            .def
            .request_types
            .iter()
            .filter(|m| !op.read_types.contains(m))
            .filter_map(|m| match support::BodyFormat::of_media(m) {
                Some(support::BodyFormat::Form) => Some(quote!(support::BodyFormat::Form)),
                Some(support::BodyFormat::Multipart) => Some(quote!(support::BodyFormat::Multipart)),
                _ => None,
            })
            .collect();
        if !forms.is_empty() {
            rest.extend(quote!(body_forms: &[#(#forms),*],));
        }
        let read = &op.read_types;
        if !read.is_empty() {
            rest.extend(quote!(read_types: &[#(#read),*],));
        }
        if let Some(t) = &op.def.mcp {
            let name = &t.name;
            rest.extend(quote!(tool: Some(#name),));
            if t.asks_input.is_some() {
                rest.extend(quote!(asks_input: true,));
            }
            match t.task {
                Some(crate::spec::TaskSupportDef::Optional) => {
                    rest.extend(quote!(task: support::TaskSupport::Optional,))
                }
                Some(crate::spec::TaskSupportDef::Required) => {
                    rest.extend(quote!(task: support::TaskSupport::Required,))
                }
                None => {}
            }
        }
        if !op.def.tags.is_empty() {
            let tags = &op.def.tags;
            rest.extend(quote!(tags: &[#(#tags),*],));
        }
        if let Some(m) = &op.def.input {
            let fs = fields_static(m);
            rest.extend(quote!(input: &models::#fs,));
        }
        if let Some(r) = api.input(op).and_then(|m| m.requires.as_ref()) {
            let (exactly_one, groups) = r.rule();
            let groups = groups.iter().map(|g| quote!(&[#(#g),*]));
            rest.extend(
                quote!(requires: Some(&support::Requires { exactly_one: #exactly_one, groups: &[#(#groups),*] }),),
            );
        }
        if let Some(d) = &op.def.deprecated {
            let (deprecation, sunset) = deprecation_headers(d);
            let (deprecation, sunset) = (opt(deprecation.as_ref()), opt(sunset.as_ref()));
            rest.extend(
                quote!(deprecation: Some(&support::Deprecation { deprecation: #deprecation, sunset: #sunset }),),
            );
        }
        let body = match op.def.body {
            support::BodyFormat::Json => None,
            support::BodyFormat::Form => Some(quote!(Form)),
            support::BodyFormat::Multipart => Some(quote!(Multipart)),
            support::BodyFormat::Raw => Some(quote!(Raw)),
        };
        if let Some(format) = body {
            rest.extend(quote!(body: support::BodyFormat::#format,));
        }
        match op.def.conditional() {
            Some(support::Conditional::Read) => rest.extend(quote!(conditional: Some(support::Conditional::Read),)),
            Some(support::Conditional::Write { required }) => {
                rest.extend(quote!(conditional: Some(support::Conditional::Write { required: #required }),))
            }
            None => {}
        }
        let doc = format!(" `{} {}`: {}", op.method().as_str(), full, op.def.summary);
        quote! {
            #[doc = #doc]
            pub static #st: Operation = Operation {
                id: #id, method: #method, path: #path, full_path: #full, scope: #scope,
                satisfied_by: &[#(#sat),*], #rest ..BASE
            };
        }
    });
    let all = api.operations.iter().map(op_static);
    let n = api.operations.len();
    quote! {
        //! The operation table: one static `Operation` per route, read by every per-operation layer.
        use support::{ErrorInfo, ErrorRoles, Method, Operation, ScopeInfo, ServiceInfo};
        #[allow(unused_imports, reason = "a spec without models uses none")]
        use super::models;

        /// The service: scopes, error catalog, pagination, plans and documents.
        pub static SERVICE: ServiceInfo = ServiceInfo {
            name: #name, title: #title, base_path: #base, mcp_path: #mcp_path,
            metadata_paths: &[#(#metadata_paths),*], mcp_metadata_paths: &[#(#mcp_metadata_paths),*],
            mcp_instructions: #mcp_instructions, audit: #audit, stored_tokens: &[#(#stored_tokens),*],
            scopes: &[#(#scopes),*],
            errors: &[#(#errors),*],
            roles: ErrorRoles {
                unauthenticated: #ua, invalid_token: #it, insufficient_scope: #is, malformed: #ma,
                validation: #va, payload_too_large: #pl, unsupported_media_type: #um, not_found: #nf,
                method_not_allowed: #mna, rate_limited: #rl, internal: #int, request_timeout: #rt,
                unavailable: #un, precondition_failed: #pf, precondition_required: #pr,
                range_not_satisfiable: #rns,
            },
            wire: #wire,
            default_per_page: #dpp, max_per_page: #mpp,
            plans: &[#(#plans),*], default_plan: #default_plan,
            openapi_json: include_str!(#openapi),
            openapi_30_json: include_str!(#openapi30),
            tools_json: #tools,
            mcp_catalog_json: #catalog,
            operations: operation_table,
        };

        /// Every operation, for `SERVICE.operations`.
        fn operation_table() -> &'static [&'static Operation] {
            &OPERATIONS
        }

        /// What an operation below does not set: no body, no flags, no tool, no input.
        const BASE: Operation = Operation {
            id: "", method: Method::Get, path: "", full_path: "", scope: "", satisfied_by: &[], public: false,
            success_status: 200, has_body: false, no_store: false, answer_types: &[], rate_limited: false, read_only: false,
            paginated: false, tool: None, asks_input: false, task: support::TaskSupport::Never, tags: &[], input: &[], deprecation: None, conditional: None, ranges: false,
            requires: None, body: support::BodyFormat::Json, body_forms: &[], read_types: &[],
            service: &SERVICE,
        };

        #(#ops)*

        /// Every operation, in spec order.
        pub static OPERATIONS: [&Operation; #n] = [#(&#all),*];
    }
}

/// Codes a handler may return: the declared ones, the service-wide ones, and for a conditional
/// write its `412` (the implementation checks `If-Match`).
pub(super) fn handler_codes(api: &Api, op: &Operation) -> Vec<String> {
    let roles = &api.spec.error_roles;
    let writes = matches!(op.def.conditional(), Some(support::Conditional::Write { .. }));
    op.errors
        .iter()
        .filter(|c| {
            op.def.errors.contains(c) || roles.service_wide.contains(c) || (writes && **c == roles.precondition_failed)
        })
        .cloned()
        .collect()
}

/// `errors.rs`: one `support::operation_errors!` call declaring every operation's closed enum.
/// Written as text: rustfmt leaves a braced macro call as it is, so this is its final layout.
pub(super) fn errors_file(api: &Api) -> String {
    let roles = &api.spec.error_roles;
    let conflict = roles.conflict.as_ref().map(|code| format!(", conflict: {code:?}")).unwrap_or_default();
    let mut out = format!(
        "{HEADER}\n//! One closed error enum per operation: only the codes the spec lets it answer.\n\
         support::operation_errors! {{\n    internal: {}, unavailable: {}{conflict};\n",
        variant(&roles.internal),
        variant(&roles.unavailable)
    );
    for op in &api.operations {
        out.push_str(&format!(
            "\n    /// Errors `{}` may return: the codes it declares plus the service-wide ones.\n    {} {{\n",
            op.id(),
            error_enum(op)
        ));
        for code in handler_codes(api, op) {
            let e = &api.spec.errors[&code];
            let doc = format!("`{code}` (HTTP {}): {}", e.status, e.description.trim());
            for line in doc.lines().map(str::trim_end) {
                out.push_str(&format!("        ///{}{line}\n", if line.is_empty() { "" } else { " " }));
            }
            out.push_str(&format!("        {} = {code:?},\n", variant(&code)));
        }
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    // An operation that asks its MCP client for input fails over REST with the code it names.
    for op in &api.operations {
        if let Some(code) = op.def.mcp.as_ref().and_then(|t| t.asks_input.as_ref()) {
            out.push_str(&format!(
                "\n/// `cx.input` stopped the call: over REST, where nothing can answer, it fails with `{code}`.\n\
                 impl From<support::InputRequired> for {0} {{\n    \
                 fn from(e: support::InputRequired) -> Self {{\n        {0}::{1}(e.into_problem())\n    }}\n}}\n",
                error_enum(op),
                variant(code)
            ));
        }
    }
    out
}
