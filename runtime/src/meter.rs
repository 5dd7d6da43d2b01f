//! Rate-limit metering of every response of a service whose spec declares plans: the
//! `X-RateLimit-*` headers the gate's decision sets, and the count of requests no gate saw.

use std::sync::Arc;

use axum::http::header;
use axum::response::Response;

use crate::auth::BearerGate;
use crate::slot::RateSlot;

/// The surfaces of services whose specs declare rate-limit plans: each path prefix a surface
/// answers (a base path, an MCP endpoint) with its gate. What [`meter`] needs.
#[derive(Debug, Clone, Default)]
pub struct Metered(Vec<(&'static str, Arc<BearerGate>)>);

impl Metered {
    /// Adds the surface at `path` behind `gate`, when the gate is metered (its service's spec
    /// declares plans).
    pub fn add(&mut self, path: &'static str, gate: &Arc<BearerGate>) {
        if gate.is_metered() {
            self.0.push((path, gate.clone()));
        }
    }

    /// The gate of the metered service answering `path`. Public discovery documents under a
    /// service's path (`/.well-known/…`, RFC 9728) are the platform's, not the service's.
    fn gate_for(&self, path: &str) -> Option<&Arc<BearerGate>> {
        let under = |base: &str| path == base || path.strip_prefix(base).is_some_and(|rest| rest.starts_with('/'));
        if path.contains("/.well-known/") {
            return None;
        }
        self.0.iter().find(|(p, _)| under(p)).map(|(_, gate)| gate)
    }
}

/// Response layer: every response of a metered service carries the `X-RateLimit-*` headers, errors
/// included. The gate records its decision for the request (REST operations, MCP requests); a
/// request no gate counted (an unknown path or a wrong method under the service's base path, a
/// body refused before the MCP layer read it) is authenticated and counted here, and refused
/// like any other when the caller's bucket is empty.
pub async fn meter(
    axum::extract::State(metered): axum::extract::State<Arc<Metered>>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let Some(gate) = metered.gate_for(request.uri().path()).cloned() else {
        return next.run(request).await;
    };
    let slot = RateSlot::default();
    request.extensions_mut().insert(slot.clone());
    // Keep only what authenticating and counting read, not a copy of the whole request.
    let mut probe = axum::extract::Request::new(());
    for name in [header::AUTHORIZATION, header::HeaderName::from_static("x-request-id")] {
        if let Some(v) = request.headers().get(&name) {
            probe.headers_mut().insert(name, v.clone());
        }
    }
    if let Some(c) = request.extensions().get::<crate::client_address::ClientAddress>() {
        probe.extensions_mut().insert(*c);
    }
    let mut response = next.run(request).await;
    if let Some(seen) = slot.take() {
        if let Some(d) = seen {
            d.write_headers(response.headers_mut());
        }
        return response;
    }
    let (probe, ()) = probe.into_parts();
    let caller = gate.authenticate(&probe).await.ok();
    match gate.meter(&probe, caller.as_ref()).await {
        Some(d) if !d.allowed => gate.limited(&probe, &d),
        Some(d) => {
            d.write_headers(response.headers_mut());
            response
        }
        None => response,
    }
}
