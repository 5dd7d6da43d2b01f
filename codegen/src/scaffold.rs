//! A new service's starting point: a starter spec (four operations on one resource, two scope
//! tiers, the prelude's catalog) and, from any spec, an implementation whose every method answers
//! `501 not_implemented` until it is written. `cargo xtask new-service` and
//! `specwright-codegen new-service` lay these out with a crate, migrations and a binary.

use heck::ToUpperCamelCase;
use quote::{format_ident, quote};

use crate::ir::Api;
use crate::rust::{error_enum, output_type, render, trait_name, variant};

pub use crate::spec::UNWRITTEN;

/// Whether `name` can name a service: snake_case, starting with a letter.
pub fn is_service_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.ends_with('_')
}

/// The starter spec of service `name`; `schema` is the path of `spec.schema.json` from the spec's
/// folder (for editors).
pub fn spec(name: &str, schema: &str) -> String {
    let title = name.to_upper_camel_case();
    format!(
        r#"#:schema {schema}
# The spec of `{name}`: the single source of its routes, scopes, payloads and errors. Edit it and
# run the generator; the service trait changes with it. Every operation answers 501
# `not_implemented` (listed in `service_wide` below) until its method is written: remove
# `not_implemented` from `service_wide` once they all are.
[service]
name = "{name}"
title = "{title}"
version = "0.1.0"
description = "Items of each tenant."
base_path = "/api/v1"

[security]
scopes = [
  {{ name = "{name}:read", description = "List and read items." }},
  {{ name = "{name}:write", description = "Everything in {name}:read, plus create and delete items.", implies = ["{name}:read"] }},
]

[error_roles]
service_wide = ["internal", "request_timeout", "unavailable", "{UNWRITTEN}"]

[models.Item]
description = "An item."
fields.id = {{ type = "string", description = "Identifier." }}
fields.name = {{ type = "string", description = "Name." }}
fields.created_at = {{ type = "datetime", description = "When it was created (RFC 3339, UTC)." }}

[models.ListItems]
description = "Which items to list."
fields.name_prefix = {{ type = "string", in = "query", optional = true, max_length = 100, description = "Only items whose name starts with this." }}

[models.NewItem]
description = "A new item."
fields.name = {{ type = "string", min_length = 1, max_length = 100, description = "Name." }}

[models.ItemRef]
description = "Names one item."
fields.id = {{ type = "string", in = "path", max_length = 64, description = "The item." }}

[models.DeleteItem]
description = "Names the item to delete."
fields.id = {{ type = "string", in = "path", max_length = 64, description = "The item." }}

[operations]
list_items = {{ route = "GET /items", scope = "{name}:read", summary = "List items", input = "ListItems", output = "Item", paginated = true, errors = ["validation"] }}
create_item = {{ route = "POST /items", scope = "{name}:write", summary = "Create an item", input = "NewItem", output = "Item", status = 201, errors = ["validation"] }}
get_item = {{ route = "GET /items/{{id}}", scope = "{name}:read", summary = "Read an item", input = "ItemRef", output = "Item", errors = ["not_found", "validation"] }}
delete_item = {{ route = "DELETE /items/{{id}}", scope = "{name}:write", summary = "Delete an item", input = "DeleteItem", errors = ["not_found", "validation"] }}
"#
    )
}

/// The starter table of the starter spec's `Item`, in the SQL both backends read.
pub fn migration(name: &str) -> String {
    format!(
        "-- The items of each tenant (the starter spec's `Item`). Change it with the spec; add a\n\
         -- migration per change, never edit one that has run.\n\
         CREATE TABLE {name}_items (\n    tenant_id TEXT NOT NULL,\n    id TEXT NOT NULL,\n    name TEXT NOT NULL,\n    \
         created_at BIGINT NOT NULL,\n    PRIMARY KEY (tenant_id, id)\n);\n"
    )
}

/// The implementation of `api` a new service starts from, whose generated module is `module`
/// (for example `shelf_api::shelf`), as every service of the platform is laid out: `src/lib.rs`
/// (the `Module` a binary registers: catalog entry, migrations, opening; and `server`, the
/// application) and `src/service.rs` (the struct over the platform's store and the trait
/// implementation, every method answering `501 not_implemented`). Fails when the spec does not
/// list `not_implemented` in `service_wide`.
pub fn implementation(api: &Api, module: &str) -> Result<Vec<(String, String)>, String> {
    if !api.spec.error_roles.service_wide.iter().any(|c| c == UNWRITTEN) {
        return Err(format!(
            "the spec must list `{UNWRITTEN}` in [error_roles] service_wide while its methods are unwritten"
        ));
    }
    let tname = trait_name(api);
    let ty = format_ident!("{}", api.name().to_upper_camel_case());
    let path: syn::Path = syn::parse_str(module).map_err(|e| format!("`{module}` is not a module path: {e}"))?;
    let unwritten = variant(UNWRITTEN);
    let name = api.name();
    let methods = api.operations.iter().map(|op| {
        let (m, id, err, out) = (crate::rust::method_ident(op), op.id(), error_enum(op), output_type(op));
        let input = op.def.input.as_ref().map(|i| {
            let t = format_ident!("{i}");
            quote!(, _input: models::#t)
        });
        let paging = op.def.paginated.then(|| quote!(, _paging: Paging));
        quote! {
            async fn #m(&self, _cx: &mut Context #input #paging) -> Result<#out, errors::#err> {
                Err(errors::#err::#unwritten(unwritten(#id)))
            }
        }
    });
    let doc = [
        format!(" The `{name}` service: its spec is `spec/{name}.toml`, the generator writes its API from it,"),
        " and this crate implements the trait (`service.rs`) and registers it with the platform".to_string(),
        " ([`Module`], [`server`]).".to_string(),
    ];
    let struct_doc = format!(" `{name}` over the platform's database.");
    let lib = quote! {
        #(#![doc = #doc])*
        mod service;

        use runtime::Platform;
        use runtime::store::Store;

        pub use #path::{SERVICE, api};
        pub use service::#ty;

        /// The application: this service registered with the platform's server builder.
        pub async fn server(platform: &Platform) -> anyhow::Result<axum::Router> {
            let modules: [Box<dyn runtime::Module>; 1] = [Box::new(Module)];
            runtime::Server::builder(platform).modules(&modules).await?.build()
        }

        /// Applies this service's own migrations (its tables beside the platform's).
        pub async fn migrate(store: &Store) -> anyhow::Result<()> {
            store.migrate(#name, sqlx::migrate!("./migrations/sqlite"), sqlx::migrate!("./migrations/postgres")).await
        }

        impl #ty {
            /// The service over the platform's database, its own tables migrated.
            pub async fn open(platform: &Platform) -> anyhow::Result<Self> {
                migrate(&platform.store).await?;
                Ok(#ty { store: platform.store.clone() })
            }
        }

        /// This service as a binary registers it: its catalog entry, its migrations, how it opens.
        #[derive(Debug, Clone, Copy, Default)]
        pub struct Module;

        impl runtime::Module for Module {
            fn info(&self) -> &'static support::ServiceInfo {
                &SERVICE
            }

            fn migrate<'a>(&'a self, store: &'a Store) -> runtime::module::BoxFuture<'a, anyhow::Result<()>> {
                Box::pin(migrate(store))
            }

            fn open<'a>(&'a self, platform: &'a Platform) -> runtime::module::BoxFuture<'a, anyhow::Result<runtime::ServiceApi>> {
                Box::pin(async move { Ok(api(#ty::open(platform).await?)) })
            }
        }
    };
    let service_doc = format!(" `{name}`'s operations: one method per operation of its spec.");
    // The enums of operations with several success answers.
    let answers =
        if api.operations.iter().any(|o| !o.alternatives.is_empty()) { quote!(use #path::answers;) } else { quote!() };
    let service = quote! {
        #![doc = #service_doc]
        use runtime::Context;
        use runtime::store::Store;
        #[allow(unused_imports, reason = "`Paged`/`Paging` are unused by services without lists")]
        use support::{Paged, Paging, Problem};
        #[allow(unused_imports, reason = "a spec whose operations take and answer no model uses none")]
        use #path::models;
        use #path::{#tname, errors};
        #answers

        #[doc = #struct_doc]
        #[derive(Debug, Clone)]
        pub struct #ty {
            /// The platform's database (SQLite or PostgreSQL), this service's tables migrated.
            pub store: Store,
        }

        /// What a method answers until it is written.
        fn unwritten(operation: &str) -> Problem {
            Problem::new(format!("`{operation}` is not implemented yet")).with("operation", operation)
        }

        impl #tname for #ty {
            type Context = Context;
            #(#methods)*
        }
    };
    let written = |tokens| render(tokens).replacen(crate::rust::HEADER, "// Written by new-service: yours to edit.", 1);
    Ok(vec![("src/lib.rs".to_string(), written(lib)), ("src/service.rs".to_string(), written(service))])
}

/// `src/main.rs` of service `name` whose crate is `crate_name`: serves it with settings from the
/// environment (`NAME_ADDR`, `NAME_DATA_DIR`, …), or prints a token for trying it out.
pub fn main_rs(name: &str, crate_name: &str) -> String {
    let lib = crate_name.replace('-', "_");
    let env = name.to_uppercase();
    format!(
        r#"//! `{crate_name}`: serves the `{name}` service with everything the platform gives it (the embedded
//! authorization server, PRM, docs, rate limits, audit, metrics). Settings come from the
//! environment: `{env}_ADDR` (default 127.0.0.1:8080), `{env}_DATA_DIR` (default `{crate_name}-data`),
//! `{env}_PUBLIC_URL`, `DATABASE_URL` (PostgreSQL; default SQLite in the data directory),
//! `REDIS_URL` (shared rate limits), `{env}_METRICS_ADDR` (Prometheus metrics, off when unset).
//! `{crate_name} token TENANT SCOPE` prints a token of the data directory's signing key for trying
//! it out; `{crate_name} conformance --url URL` checks a running server against the spec (every
//! challenge, scope tier, PRM document, the OpenAPI documents, MCP tools, rate-limit headers).
//! SIGTERM or SIGINT stops it after the requests in flight finish.

use std::process::ExitCode;

fn config() -> anyhow::Result<runtime::Config> {{
    runtime::Config::from_env("{env}", "127.0.0.1:8080", "{crate_name}-data")
}}

/// A token for `tenant` with `scope`, signed with the data directory's key, for this service.
fn token(tenant: &str, scope: &str) -> anyhow::Result<String> {{
    let config = config()?;
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir)?;
    let audience = runtime::Catalog::new([&{lib}::SERVICE]).resources(&config);
    keys.mint(&runtime::keys::claims(&config.issuer(), "developer", tenant, scope, audience, 3600, None))
}}

async fn serve() -> anyhow::Result<()> {{
    let config = config()?;
    let platform = runtime::Platform::open(config.clone()).await?;
    let app = {lib}::server(&platform).await?;
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    tracing::info!("serving: REST {{}}; docs {{}}", config.url({lib}::SERVICE.base_path), config.url(runtime::docs::DOCS_PATH));
    platform.run(listener, app).await
}}

fn main() -> ExitCode {{
    let args: Vec<String> = std::env::args().collect();
    if let Some(exit) = conformance::command(&args, [&{lib}::SERVICE], || Ok(config()?.data_dir)) {{
        return exit;
    }}
    let result = match args.iter().skip(1).map(String::as_str).collect::<Vec<_>>().as_slice() {{
        ["token", tenant, scope] => token(tenant, scope).map(|t| println!("{{t}}")),
        [] => {{
            runtime::logging::init(Default::default());
            tokio::runtime::Runtime::new().map_err(anyhow::Error::from).and_then(|rt| rt.block_on(serve()))
        }}
        _ => {{
            eprintln!("usage: {crate_name} [token TENANT SCOPE | conformance --url URL]");
            return ExitCode::from(2);
        }}
    }};
    match result {{
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {{
            eprintln!("error: {{e:#}}");
            ExitCode::FAILURE
        }}
    }}
}}
"#
    )
}

/// The files every layout of new service `name` (crate `crate_name`) holds, relative to its crate
/// folder: the starter spec `spec/NAME.toml` (naming the schema by the path `schema`), the
/// implementation of the generated module `module` ([`implementation`]), `src/main.rs` and the
/// migrations.
pub fn service(
    name: &str,
    crate_name: &str,
    schema: &str,
    module: &str,
    from: Option<&str>,
) -> Result<Vec<(String, String)>, String> {
    if !is_service_name(name) {
        return Err(format!(
            "`{name}` cannot name a service: use snake_case (lowercase letters, digits and `_`, starting with a letter)"
        ));
    }
    let spec_path = format!("spec/{name}.toml");
    let (spec_text, migration) = match from {
        None => (spec(name, schema), migration(name)),
        Some(imported) => (
            format!("#:schema {schema}\n{imported}"),
            format!(
                "-- The tables of `{name}`: none yet. Add them here; add a migration per change, never edit one that has run.\nSELECT 1;\n"
            ),
        ),
    };
    // The implementation is written from the spec as the generator reads it.
    let api = crate::load(&spec_path, &spec_text).map_err(|e| format!("the spec is invalid:\n{e}"))?;
    let mut files = implementation(&api, module)?;
    files.extend([("src/main.rs".to_string(), main_rs(name, crate_name)), (spec_path, spec_text)]);
    for backend in ["sqlite", "postgres"] {
        files.push((format!("migrations/{backend}/0001_{name}.sql"), migration.clone()));
    }
    Ok(files)
}

/// The spec of new service `name` imported from the OpenAPI document `doc`: every operation
/// answering `501 not_implemented` until written, the scopes `NAME:read` (`GET`) and `NAME:write`
/// where the document names no OAuth scope, and an MCP tool for every operation that can travel
/// over MCP. With `allow_partial`, what could not be imported is left out (the report says what);
/// without it, that is an error.
pub fn import_for(
    name: &str,
    doc: &serde_json::Value,
    allow_partial: bool,
) -> Result<(String, crate::import::Report), String> {
    let options = crate::import::Options {
        name: Some(name.to_string()),
        scope_by_method: Some((format!("{name}:read"), format!("{name}:write"))),
        mcp: crate::import::McpSelection::All,
        unwritten: true,
        base_path: None,
    };
    let imported = crate::import::import(doc, &options).map_err(|e| e.to_string())?;
    if imported.report.partial() && !allow_partial {
        return Err(format!(
            "{}some operations could not be imported; --allow-partial leaves them out",
            imported.report
        ));
    }
    Ok((imported.toml, imported.report))
}

/// Every file of a new project of its own for service `name` (a crate outside any Specwright
/// workspace, as `specwright-codegen new-service NAME --dir DIR` writes it), relative to its
/// folder, laid out as this repository is: `spec/` (the spec and its schema), `generated/` (the
/// manifest of the API crate the generator writes there: `specwright-codegen generate --spec spec
/// --out generated`), the service's `src/` and migrations, and a manifest depending on the
/// published Specwright crates and on the generated one. The generated files themselves are not
/// among these: the caller generates them ([`crate::project::generate`]).
pub fn standalone(name: &str, from: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let crate_name = name.replace('_', "-");
    let api_crate = format!("{crate_name}-api");
    let version = env!("CARGO_PKG_VERSION").rsplit_once('.').map_or(env!("CARGO_PKG_VERSION"), |(v, _)| v);
    let manifest = format!(
        r#"[package]
name = "{crate_name}"
version = "0.1.0"
edition = "2024"
publish = false

# The service and the API crate the generator writes from spec/ (never edited by hand).
[workspace]
members = ["generated"]

[dependencies]
{api_crate} = {{ path = "generated" }}
support = {{ package = "specwright-support", version = "{version}" }}
runtime = {{ package = "specwright-runtime", version = "{version}" }}
conformance = {{ package = "specwright-conformance", version = "{version}" }}
anyhow = "1"
axum = "0.8"
chrono = {{ version = "0.4", default-features = false, features = ["clock", "serde", "std"] }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
sqlx = {{ version = "0.9", default-features = false, features = ["runtime-tokio", "sqlite", "postgres", "any", "migrate", "macros"] }}
tokio = {{ version = "1", features = ["full"] }}
tracing = "0.1"
"#
    );
    let api_manifest = format!(
        r#"[package]
name = "{api_crate}"
description = "Generated from spec/ by `specwright-codegen generate --spec spec --out generated`. Never edit src/ by hand."
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
support = {{ package = "specwright-support", version = "{version}" }}
axum = "0.8"
chrono = {{ version = "0.4", default-features = false, features = ["clock", "serde", "std"] }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
"#
    );
    let module = format!("{}::{name}", api_crate.replace('-', "_"));
    let mut files = service(name, &crate_name, "spec.schema.json", &module, from)?;
    files.extend([
        ("spec/spec.schema.json".to_string(), crate::spec_schema()),
        ("Cargo.toml".to_string(), manifest),
        ("generated/Cargo.toml".to_string(), api_manifest),
    ]);
    Ok(files)
}
