//! Specwright's runtime: serves the generated vault and prospector APIs with authentication,
//! scope checks, Protected Resource Metadata, the error envelope and the OpenAPI documents.

pub mod app;
pub mod auth;
pub mod config;
pub mod keys;
pub mod prm;
pub mod services;

pub use app::{AppState, build};
pub use config::Config;
