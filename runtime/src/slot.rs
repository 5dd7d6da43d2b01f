//! [`Slot`]: a value one layer leaves in a request's extensions for an outer layer to read after
//! the inner ones ran.

use std::sync::Arc;

use crate::ratelimit::Decision;

/// A value one layer puts in a request's extensions for another, outer layer to read after the
/// inner ones ran (request extensions do not travel back with the response).
#[derive(Debug)]
pub struct Slot<T>(Arc<std::sync::Mutex<Option<T>>>);

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot(Arc::default())
    }
}

impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        Slot(self.0.clone())
    }
}

impl<T> Slot<T> {
    pub(crate) fn put(&self, value: T) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(value);
        }
    }

    pub(crate) fn take(&self) -> Option<T> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// Filled by the gate with what it decided for the request's rate limit, read by [`crate::meter::meter`]:
/// nothing yet (no gate saw the request: [`meter`] counts it), `Some(None)` (an operation the
/// spec exempts), or the decision whose headers the response carries.
pub type RateSlot = Slot<Option<Decision>>;
