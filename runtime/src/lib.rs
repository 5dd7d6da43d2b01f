//! Specwright's runtime, the platform: serves any generated service registered with
//! [`Server::builder`] with authentication, scope checks, Protected Resource Metadata, rate limits,
//! audit, MCP, the error envelope, the OpenAPI documents and their UI.

pub mod api;
pub mod app;
pub mod audit;
pub mod auth;
pub mod blobs;
pub mod caller;
pub mod catalog;
pub mod changes;
pub mod client_address;
pub mod config;
pub mod context;
pub mod cors;
pub mod docs;
pub mod egress;
pub mod fault;
pub mod files;
mod id_keys;
pub mod idp;
pub mod inputs;
pub mod keys;
pub mod logging;
pub mod mcp;
pub mod meter;
pub mod metrics;
pub mod module;
pub mod names;
pub mod oauth;
pub mod prm;
pub mod progress;
pub mod ratelimit;
pub mod server;
pub mod slot;
pub mod sql;
pub mod store;
pub(crate) mod tasks;
pub mod tenants;
pub mod tokens;
pub mod webhooks;

pub use api::ServiceApi;
pub use app::{Platform, Server, ServerBuilder};
pub use catalog::Catalog;
pub use config::Config;
pub use context::Context;
pub use fault::{OperationFault, fault};
pub use inputs::{Answer, Ask};
pub use module::Module;
pub use progress::LogLevel;
