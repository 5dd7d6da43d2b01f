//! The [`Gate`]: how a runtime plugs into the generated routers.

use std::future::Future;
use std::pin::Pin;

use axum::body::Bytes;
use axum::http::request::Parts;
use axum::response::Response;
use futures_util::Stream;

use crate::problem::Fault;
use crate::table::Operation;

/// What one call's input says it touches, read from the input before the call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    /// The spec's `audit_targets`, for the call's audit row.
    pub targets: Vec<String>,
    /// The operation's path parameters with their values as text, in the route's order: the item
    /// the call addresses, whose readers a call that may change data may have changed (none for an
    /// operation whose spec says it changes nothing, `read_only`).
    pub path: Vec<(&'static str, String)>,
}

/// How the runtime plugs into the generated routers: admit a request for an operation (yielding
/// the caller) or reject it (yielding the response to send).
pub trait Gate: Send + Sync + 'static {
    /// Who is calling, as the gate admitted them.
    type Caller: Send + Sync + 'static;

    /// What an operation's implementation receives beside its input: the caller and what the
    /// runtime provides for one call (for example its transaction, and the identifiers the call
    /// reports for its audit row). The generated service trait names it (`type Context`).
    type Context: Send + 'static;

    /// The context of one call of `op` by `caller`, whose input has decoded; `touched` is what
    /// the input says the call touches (its audit targets, the item its path addresses).
    fn context(&self, caller: Self::Caller, op: &'static Operation, touched: Touched) -> Self::Context;

    /// Ends one call: finishes what its context began (commits or rolls back its transaction,
    /// records the call) once the service answered `outcome` (success, or the catalog code of
    /// its error). `Ok` answers the service's result; a fault met while finishing is answered
    /// instead (a success is not answered unless it is finished). A runtime that begins nothing
    /// finishes nothing, which is this default.
    fn conclude(
        &self,
        cx: Self::Context,
        outcome: Result<(), &'static str>,
    ) -> impl Future<Output = Result<(), Fault>> + Send {
        let _ = outcome;
        drop(cx);
        std::future::ready(Ok(()))
    }

    /// Authenticates, checks the scope and the rate limit of one request.
    fn admit(
        &self,
        parts: &mut Parts,
        op: &'static Operation,
    ) -> impl Future<Output = Result<Self::Caller, Response>> + Send;

    /// Told when a request this gate admitted is refused before it reaches the service, because
    /// its input does not decode or validate (REST or MCP): `code` and `status` are what the
    /// caller is answered. Every admitted request reaches the service or this method, so a runtime
    /// that records requests (an audit log) records these too.
    fn refused(
        &self,
        caller: &Self::Caller,
        op: &'static Operation,
        code: &'static str,
        status: u16,
    ) -> impl Future<Output = ()> + Send;

    /// Largest request body accepted, in bytes (of a JSON or form body, and of each text part of
    /// a multipart body; a file has its own limit, from the spec).
    fn body_limit(&self) -> usize;

    /// Stores the content of a file uploaded by `caller`, as it arrives, at most `limit` bytes:
    /// the stored file is what the operation receives ([`Upload`]). A runtime that keeps no
    /// files refuses every upload, which is this default.
    fn store_upload(
        &self,
        caller: &Self::Caller,
        content: UploadStream,
        limit: u64,
    ) -> impl Future<Output = Result<Stored, StoreError>> + Send {
        let _ = (caller, content, limit);
        async { Err(StoreError::Unavailable("this server keeps no uploaded files".into())) }
    }
}

/// A file's content as it arrives.
pub type UploadStream = Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>;

/// What storage kept of an upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Where it is kept (a blob id of the runtime).
    pub id: String,
    /// Its length in bytes.
    pub size: u64,
    /// Its SHA-256 digest, lowercase hex.
    pub sha256: String,
}

/// Why an upload was not stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// Longer than the limit.
    TooLarge,
    /// The content could not be read (the client went away).
    Source(String),
    /// Storage is unavailable; retry later.
    Unavailable(String),
}
