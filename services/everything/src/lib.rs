//! The MCP conformance service: the fixtures of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written as a Specwright spec (`spec/everything/`) and
//! this implementation, so the suite measures what the platform serves from a spec: tools of
//! every content type, resources and a template, prompts and completions. Its binary is
//! configured like any service's (`EVERYTHING_ADDR`, `EVERYTHING_DATA_DIR`,
//! `EVERYTHING_PUBLIC_URL`); point the suite at its `/mcp` through a proxy adding a token of
//! `everything token TENANT everything:write`.

mod service;

pub use everything_api::everything::{SERVICE, api};
use runtime::Platform;
use runtime::store::Store;
pub use service::Everything;

/// The application: this service registered with the platform's server builder.
pub async fn server(platform: &Platform) -> anyhow::Result<axum::Router> {
    let modules: [Box<dyn runtime::Module>; 1] = [Box::new(Module)];
    runtime::Server::builder(platform).modules(&modules).await?.build()
}

/// This service as a binary registers it: its catalog entry and how it opens (it keeps no
/// tables of its own).
#[derive(Debug, Clone, Copy, Default)]
pub struct Module;

impl runtime::Module for Module {
    fn info(&self) -> &'static support::ServiceInfo {
        &SERVICE
    }

    fn migrate<'a>(&'a self, _store: &'a Store) -> runtime::module::BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn open<'a>(
        &'a self,
        _platform: &'a Platform,
    ) -> runtime::module::BoxFuture<'a, anyhow::Result<runtime::ServiceApi>> {
        Box::pin(async move { Ok(api(Everything)) })
    }
}
