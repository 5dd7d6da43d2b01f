//! The contract of a spec folder, for `specwright conformance --spec DIR`: what the generator makes
//! of the specs (documents, tools, operations), to check a server against the specs as they are
//! written rather than as this binary was built. The one place a server binary of this workspace
//! uses the generator; a service's own binary checks its compiled-in services only.

use std::path::Path;

use conformance::{Contract, ErrorShape, Op, Service};
use serde_json::json;

/// The contract of the specs in folder `dir`, generated as `cargo xtask generate` would.
pub fn spec_contract(dir: &Path) -> anyhow::Result<Contract> {
    let apis = codegen::project::load_dir(dir, &dir.to_string_lossy())?;
    let services = apis
        .iter()
        .map(|api| {
            let s = &api.spec;
            let openapi = codegen::openapi::document(api);
            let has_tools = api.operations.iter().any(|o| o.def.mcp.is_some());
            let tools = if has_tools { codegen::mcp::descriptors(api, &openapi) } else { json!([]) };
            Service {
                name: s.service.name.clone(),
                base_path: s.service.base_path.clone(),
                mcp_path: s.service.mcp_path.clone(),
                metadata_paths: s.service.metadata_paths.clone(),
                mcp_metadata_paths: s.service.mcp_metadata_paths.clone(),
                scopes: s.security.scopes.iter().map(|sc| (sc.name.clone(), sc.implies.clone())).collect(),
                unauthenticated: s.error_roles.unauthenticated.clone(),
                insufficient_scope: s.error_roles.insufficient_scope.clone(),
                errors: match &s.wire.errors {
                    codegen::spec::ErrorFormat::Envelope => ErrorShape::Envelope,
                    codegen::spec::ErrorFormat::Problem => ErrorShape::Problem,
                    codegen::spec::ErrorFormat::Model(m) => ErrorShape::Model {
                        code: m.code.clone(),
                        message: m.message.clone(),
                        details: m.details.clone(),
                        request_id: m.request_id.clone(),
                    },
                },
                plans: s
                    .rate_limits
                    .iter()
                    .flat_map(|rl| rl.plans.iter())
                    .map(|(n, p)| (n.clone(), p.per_minute, p.per_day))
                    .collect(),
                default_plan: s.rate_limits.as_ref().map(|r| r.default_plan.clone()),
                openapi_30: codegen::downgrade::to_openapi_30(&openapi),
                openapi,
                tools: tools.as_array().cloned().unwrap_or_default(),
                operations: api
                    .operations
                    .iter()
                    .map(|op| Op {
                        id: op.id().into(),
                        method: op.method().as_str().into(),
                        path: format!("{}{}", s.service.base_path, op.def.path),
                        scope: op.def.scope.clone().unwrap_or_default(),
                        tool: op.def.mcp.as_ref().map(|t| t.name.clone()),
                        has_body: op.has_body,
                        rate_limited: op.def.rate_limited,
                        deprecation: op.def.deprecated.as_ref().map(codegen::rust::deprecation_headers),
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Contract { services })
}
