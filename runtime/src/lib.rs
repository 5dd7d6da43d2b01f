//! Specwright's runtime: serves the generated vault and prospector APIs with authentication,
//! scope checks, Protected Resource Metadata, the error envelope and the OpenAPI documents.

pub mod app;
pub mod audit;
pub mod auth;
pub mod client_address;
pub mod config;
pub mod console;
pub mod crypto;
pub mod docs;
pub mod idp;
pub mod keys;
pub mod mcp;
pub mod names;
pub mod oauth;
pub mod prm;
pub mod ratelimit;
pub mod rbac;
pub mod server;
pub mod services;
pub mod store;
pub mod tokens;
pub mod vault;

pub use app::{AppState, build};
pub use config::Config;
