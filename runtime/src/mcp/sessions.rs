//! Who each MCP session belongs to. Sessions exist for clients of revisions before 2026-07-28
//! whose calls are asked for input on a session's stream ([`crate::inputs`]); rmcp keeps them (in
//! memory, closed after five idle minutes) but knows nothing of tokens. The endpoint records the
//! caller that opened each session and treats a session id presented with another caller's token,
//! or one it did not see opened, as unknown (HTTP 404, as for an expired session), so a leaked id
//! is no way into another user's session. A caller holds at most [`PER_CALLER`] sessions used in
//! the last five minutes; another `initialize` is refused until one closes or idles out.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::caller::Caller;

/// How long an owner is remembered after the session was last used. A session kept open longer
/// without a request (a client only listening) is then refused, and its client initializes anew.
const REMEMBERED: Duration = Duration::from_secs(60 * 60);

/// How long rmcp keeps a session without a request: a session idle longer counts no more.
const IDLE: Duration = Duration::from_secs(5 * 60);

/// Sessions one caller may hold at once.
pub(super) const PER_CALLER: usize = 16;

/// Session id → (tenant, subject, last use).
#[derive(Default)]
pub(super) struct Owners(Mutex<HashMap<String, (String, String, Instant)>>);

impl Owners {
    /// Records `caller` as the owner of the new session `id`, forgetting long-idle ones.
    pub(super) fn opened(&self, id: &str, caller: &Caller) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        map.retain(|_, (_, _, used)| now.duration_since(*used) < REMEMBERED);
        map.insert(id.to_string(), (caller.tenant.clone(), caller.subject.clone(), now));
    }

    /// Whether `caller` may use session `id`: only as its owner.
    pub(super) fn admits(&self, id: &str, caller: &Caller) -> bool {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match map.get_mut(id) {
            Some((tenant, subject, used)) if *tenant == caller.tenant && *subject == caller.subject => {
                *used = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Whether `caller` may open another session.
    pub(super) fn may_open(&self, caller: &Caller) -> bool {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let held = map
            .values()
            .filter(|(tenant, subject, used)| {
                *tenant == caller.tenant && *subject == caller.subject && now.duration_since(*used) < IDLE
            })
            .count();
        held < PER_CALLER
    }

    /// Forgets session `id` (closed by its client).
    pub(super) fn closed(&self, id: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }
}
