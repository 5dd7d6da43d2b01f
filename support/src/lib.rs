//! What every generated service shares, one concern per module:
//!
//! - `table`: the operation table (`Operation`, `ServiceInfo`, error catalog and roles, wire format);
//! - `fields`: field specs, what the decoder checks of each input field; `validate`: the checks;
//! - `problem`: `Problem`, the per-operation error enums (`operation_errors!`), error bodies;
//! - `gate`: the `Gate` a runtime implements; `decode`: requests and tool arguments into inputs;
//! - `layers`: tower layers a service attaches to the operations it selects;
//! - `respond`: successes and errors in the service's wire format; `endpoint`: the one REST
//!   handler and MCP call every operation goes through; `api`: a service as one servable value;
//! - `uri_template`: MCP resource URIs and the operations' path parameters they hold;
//! - `conditional`, `events`, `file`, `upload`, `webhooks`: entity tags, streams, files, uploads,
//!   outgoing webhooks.
//!
//! Generated crates depend on this crate (they never copy it), so the types a runtime implements
//! (`Gate`) and reads (`Operation`, `ServiceInfo`) are the same types in every crate. Every item
//! is re-exported at the root: `support::Operation`, whichever module defines it.

pub mod conditional;
pub mod events;
pub mod file;
pub mod upload;
pub mod webhooks;
pub use conditional::{Conditional, IfMatch, etag};
pub use events::{Event, EventSender, Events, StreamFormat};
pub use file::File;
pub use upload::{BodyFormat, StoreError, Stored, Upload, UploadStream};

mod api;
mod decode;
mod endpoint;
mod fields;
mod formats;
mod gate;
mod json_text;
mod layers;
mod media;
mod paging;
mod paths;
mod pattern;
mod problem;
mod query;
mod respond;
mod strict;
mod table;
mod uri_template;
mod validate;
pub use api::*;
pub use decode::*;
pub use endpoint::*;
pub use fields::*;
pub use formats::*;
pub use gate::*;
pub use json_text::*;
pub use layers::*;
pub use media::*;
pub use paging::*;
pub use paths::*;
pub use pattern::Pattern;
pub use problem::*;
pub use respond::*;
pub use strict::parse_json_strict;
pub use table::*;
pub use uri_template::*;
pub use validate::*;

#[cfg(test)]
mod tests;
