//! The contract a server is checked against: each service's operations with their routes and scopes, tiers, PRM paths, plans, documents and tools, read from a binary's registered services (or built by a caller that generates them from a spec folder).

use std::collections::BTreeSet;

use anyhow::Context;
use serde_json::Value;

use super::*;

/// What a spec promises, per service.
#[derive(Debug, Clone)]
pub struct Contract {
    /// The services, in the order checked.
    pub services: Vec<Service>,
}

/// One service's promises.
#[derive(Debug, Clone)]
pub struct Service {
    /// snake_case name (the OpenAPI documents are served at `/openapi/<name>.json`).
    pub name: String,
    /// Path prefix of every operation: the REST resource.
    pub base_path: String,
    /// The MCP endpoint, when the service has tools.
    pub mcp_path: Option<String>,
    /// Declared PRM paths of the REST API (the first is announced in challenges).
    pub metadata_paths: Vec<String>,
    /// Declared PRM paths of the MCP endpoint.
    pub mcp_metadata_paths: Vec<String>,
    /// Scope catalog, lowest tier first: each name with the scopes it implies.
    pub scopes: Vec<(String, Vec<String>)>,
    /// The error code of a request without credentials.
    pub unauthenticated: String,
    /// The error code of a token whose scope is too low.
    pub insufficient_scope: String,
    /// How its errors are written (`[wire] errors`).
    pub errors: ErrorShape,
    /// Rate-limit plans: name, per minute, per day.
    pub plans: Vec<(String, u32, u32)>,
    /// The plan of tokens that name none.
    pub default_plan: Option<String>,
    /// The generated OpenAPI 3.1 document.
    pub openapi: Value,
    /// The generated OpenAPI 3.0 document.
    pub openapi_30: Value,
    /// The generated MCP tool descriptors.
    pub tools: Vec<Value>,
    /// Every operation.
    pub operations: Vec<Op>,
}

/// How a service writes its errors, as the kit checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorShape {
    /// `{"error": {"code", "message", "details", "request_id"}}`.
    Envelope,
    /// RFC 9457 problem details.
    Problem,
    /// A model of the service's own: where it carries the code, message, details and request id
    /// (dotted paths).
    Model {
        /// Path of the code.
        code: String,
        /// Path of the message.
        message: String,
        /// Path of the details object, if the model carries them.
        details: Option<String>,
        /// Path of the request id, if the model carries it.
        request_id: Option<String>,
    },
}

/// One operation's promises.
#[derive(Debug, Clone)]
pub struct Op {
    /// snake_case id.
    pub id: String,
    /// HTTP method.
    pub method: String,
    /// Full path template (base path included).
    pub path: String,
    /// Required scope; empty for a public operation.
    pub scope: String,
    /// MCP tool name.
    pub tool: Option<String>,
    /// Whether it takes a JSON body.
    pub has_body: bool,
    /// Whether it counts against the caller's plan.
    pub rate_limited: bool,
    /// When deprecated: the `Deprecation` and `Sunset` headers every answer of it carries.
    pub deprecation: Option<(Option<String>, Option<String>)>,
}

pub(super) fn parse_json(text: &str, what: &str) -> anyhow::Result<Value> {
    serde_json::from_str(text).with_context(|| format!("{what} is not JSON"))
}

impl Contract {
    /// The contract of services compiled into a binary (their generated tables and documents).
    pub fn from_services<'a>(services: impl IntoIterator<Item = &'a support::ServiceInfo>) -> anyhow::Result<Self> {
        let services = services
            .into_iter()
            .map(|s| {
                let tools: Value = parse_json(s.tools_json, "the tool descriptors")?;
                Ok(Service {
                    name: s.name.into(),
                    base_path: s.base_path.into(),
                    mcp_path: s.mcp_path.map(Into::into),
                    metadata_paths: s.metadata_paths.iter().map(|p| p.to_string()).collect(),
                    mcp_metadata_paths: s.mcp_metadata_paths.iter().map(|p| p.to_string()).collect(),
                    scopes: s
                        .scopes
                        .iter()
                        .map(|sc| (sc.name.to_string(), sc.implies.iter().map(|i| i.to_string()).collect()))
                        .collect(),
                    unauthenticated: s.roles.unauthenticated.into(),
                    insufficient_scope: s.roles.insufficient_scope.into(),
                    errors: match s.wire.errors {
                        support::ErrorFormat::Envelope => ErrorShape::Envelope,
                        support::ErrorFormat::Problem { .. } => ErrorShape::Problem,
                        support::ErrorFormat::Model(m) => ErrorShape::Model {
                            code: m.code.into(),
                            message: m.message.into(),
                            details: m.details.map(Into::into),
                            request_id: m.request_id.map(Into::into),
                        },
                    },
                    plans: s.plans.iter().map(|p| (p.name.to_string(), p.per_minute, p.per_day)).collect(),
                    default_plan: s.default_plan.map(Into::into),
                    openapi: parse_json(s.openapi_json, "the OpenAPI document")?,
                    openapi_30: parse_json(s.openapi_30_json, "the OpenAPI 3.0 document")?,
                    tools: tools.as_array().cloned().unwrap_or_default(),
                    operations: (s.operations)()
                        .iter()
                        .map(|op| Op {
                            id: op.id.into(),
                            method: op.method.as_str().into(),
                            path: op.full_path.into(),
                            scope: op.scope.into(),
                            tool: op.tool.map(Into::into),
                            has_body: op.has_body,
                            rate_limited: op.rate_limited,
                            deprecation: op
                                .deprecation
                                .map(|d| (d.deprecation.map(Into::into), d.sunset.map(Into::into))),
                        })
                        .collect(),
                })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Contract { services })
    }
}

impl Service {
    /// Every scope `scope` grants, itself included.
    pub(super) fn closure(&self, scope: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![scope.to_string()];
        while let Some(s) = todo.pop() {
            if seen.insert(s.clone())
                && let Some((_, implies)) = self.scopes.iter().find(|(n, _)| *n == s)
            {
                todo.extend(implies.iter().cloned());
            }
        }
        seen
    }

    /// The strongest scope of this service that does not grant `scope` (the tier just below), or
    /// `""` (a token with no scope of this service) when `scope` is its lowest tier.
    pub(super) fn one_tier_below(&self, scope: &str) -> String {
        self.scopes
            .iter()
            .map(|(n, _)| n)
            .filter(|n| !self.closure(n).contains(scope))
            .max_by_key(|n| self.closure(n).len())
            .cloned()
            .unwrap_or_default()
    }

    /// Every scope of the service, as one token's scope.
    pub(super) fn all_scopes(&self) -> String {
        self.scopes.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" ")
    }

    /// The resources (REST, MCP) and the declared PRM paths of each, with the one challenges
    /// announce: the first declared, else the one RFC 9728 derives.
    pub(super) fn surfaces(&self) -> Vec<Surface> {
        let rest = Surface { label: "REST", path: self.base_path.clone(), declared: self.metadata_paths.clone() };
        let mcp = self.mcp_path.as_ref().map(|p| Surface {
            label: "MCP",
            path: p.clone(),
            declared: self.mcp_metadata_paths.clone(),
        });
        std::iter::once(rest).chain(mcp).collect()
    }

    pub(super) fn plan_limits(&self) -> Option<(u32, u32)> {
        let name = self.default_plan.as_ref()?;
        self.plans.iter().find(|(n, _, _)| n == name).map(|(_, m, d)| (*m, *d))
    }
}

/// A protected resource of a service.
pub(super) struct Surface {
    pub(super) label: &'static str,
    pub(super) path: String,
    pub(super) declared: Vec<String>,
}

impl Surface {
    pub(super) fn announced(&self) -> String {
        self.declared.first().cloned().unwrap_or_else(|| format!("{WELL_KNOWN}{}", self.path))
    }
}

/// A concrete path for a template: every `{parameter}` filled with a placeholder, and what its
/// query part asks sent as the query (`/?Action=Run`: `Action=Run`; `?city={city}` and a name
/// alone: the name with a placeholder), so the request reaches the operation.
pub(super) fn concrete(template: &str) -> String {
    let path = support::path_part(template);
    let path = path.split('/').map(|seg| if seg.starts_with('{') { "conformance" } else { seg }).collect::<Vec<_>>();
    let query: Vec<String> = support::query_items(template)
        .into_iter()
        .map(|item| match item {
            support::QueryItem::Value(name, value) => format!("{name}={value}"),
            support::QueryItem::Param(name, _) | support::QueryItem::Name(name) => format!("{name}=conformance"),
        })
        .collect();
    let path = path.join("/");
    if query.is_empty() { path } else { format!("{path}?{}", query.join("&")) }
}
