//! The registered services' descriptions, as every platform part that spans services reads them:
//! the resources this server protects (one per REST API, one per MCP endpoint), the scopes the
//! authorization server can grant, and which service answers a path. Built once by the server
//! builder from the services registered with it, in registration order.

use std::collections::BTreeSet;
use std::sync::Arc;

use support::{ScopeInfo, ServiceInfo};

use crate::config::Config;

/// The registered services, in registration order.
#[derive(Debug, Clone)]
pub struct Catalog(Arc<[&'static ServiceInfo]>);

impl Catalog {
    /// The catalog of `services`, in that order (the first answers paths no service claims).
    pub fn new(services: impl IntoIterator<Item = &'static ServiceInfo>) -> Self {
        Catalog(services.into_iter().collect())
    }

    /// The services, in registration order.
    pub fn services(&self) -> impl Iterator<Item = &'static ServiceInfo> + '_ {
        self.0.iter().copied()
    }

    /// Every scope of every service, each service's lowest tier first.
    pub fn scopes(&self) -> impl Iterator<Item = &'static ScopeInfo> + '_ {
        self.services().flat_map(|s| s.scopes.iter())
    }

    /// The scope named `name`.
    pub fn scope(&self, name: &str) -> Option<&'static ScopeInfo> {
        self.scopes().find(|s| s.name == name)
    }

    /// `scopes` and everything they imply.
    pub fn closure<'a>(&self, scopes: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = BTreeSet::new();
        let mut todo: Vec<String> = scopes.into_iter().map(str::to_string).collect();
        while let Some(s) = todo.pop() {
            if out.insert(s.clone())
                && let Some(info) = self.scope(&s)
            {
                todo.extend(info.implies.iter().map(|x| x.to_string()));
            }
        }
        out
    }

    /// The scope names as a sentence (`a, b or c`), for messages that list what may be asked.
    pub fn scope_list(&self) -> String {
        let names: Vec<&str> = self.scopes().map(|s| s.name).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// The resource identifier of `service`'s REST API: its base path under the public URL.
    pub fn rest_resource(config: &Config, service: &ServiceInfo) -> String {
        config.url(service.base_path)
    }

    /// The resource identifier of `service`'s MCP endpoint, when it has one.
    pub fn mcp_resource(config: &Config, service: &ServiceInfo) -> Option<String> {
        service.mcp_path.map(|p| config.url(p))
    }

    /// `service`'s resources: its REST API, then its MCP endpoint.
    fn resources_of(config: &Config, service: &ServiceInfo) -> impl Iterator<Item = String> {
        std::iter::once(Self::rest_resource(config, service)).chain(Self::mcp_resource(config, service))
    }

    /// Every resource this server protects (the default audience of minted tokens).
    pub fn resources(&self, config: &Config) -> Vec<String> {
        self.services().flat_map(|s| Self::resources_of(config, s)).collect()
    }

    /// The audience of a token whose request named no resource: the resources of every service
    /// one of `scopes` belongs to.
    pub fn resources_for_scopes(&self, config: &Config, scopes: &BTreeSet<String>) -> Vec<String> {
        self.services()
            .filter(|s| s.scopes.iter().any(|i| scopes.contains(i.name)))
            .flat_map(|s| Self::resources_of(config, s))
            .collect()
    }

    /// The REST resource of every service accepting stored tokens of `kind` (`personal`, `api`).
    pub fn stored_token_audiences(&self, config: &Config, kind: &str) -> Vec<String> {
        self.services().filter(|s| s.stored_tokens.contains(&kind)).map(|s| Self::rest_resource(config, s)).collect()
    }

    /// The service whose error catalog answers for `path`: the one whose base or MCP path holds it
    /// (the longest such), else the first registered.
    pub fn for_path(&self, path: &str) -> Option<&'static ServiceInfo> {
        let under = |base: &str| path == base || path.strip_prefix(base).is_some_and(|rest| rest.starts_with('/'));
        self.services()
            .flat_map(|s| std::iter::once((s.base_path, s)).chain(s.mcp_path.map(|p| (p, s))))
            .filter(|(base, _)| under(base))
            .max_by_key(|(base, _)| base.len())
            .map(|(_, s)| s)
            .or_else(|| self.0.first().copied())
    }

    /// The service named `name`.
    pub fn service(&self, name: &str) -> Option<&'static ServiceInfo> {
        self.services().find(|s| s.name == name)
    }
}
