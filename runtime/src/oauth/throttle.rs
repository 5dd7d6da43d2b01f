//! Failed sign-ins counted per user and client address, so passwords cannot be guessed at speed.

/// Failed sign-ins allowed per user name and client address in [`THROTTLE_WINDOW`].
pub(super) const FAILURES_PER_USER: u32 = 5;

/// Failed sign-ins allowed per client address in [`THROTTLE_WINDOW`] (password spraying).
pub(super) const FAILURES_PER_ADDRESS: u32 = 50;

/// The window failed sign-ins are counted in.
pub(super) const THROTTLE_WINDOW: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Counts failed sign-ins (in process) so passwords cannot be guessed at speed.
#[derive(Debug, Default)]
pub(super) struct Throttle(std::sync::Mutex<std::collections::HashMap<String, (u32, std::time::Instant)>>);

impl Throttle {
    pub(super) fn keys(address: &str, user: &str) -> [(String, u32); 2] {
        [(format!("{address}|{}", user.to_lowercase()), FAILURES_PER_USER), (address.to_string(), FAILURES_PER_ADDRESS)]
    }

    /// Seconds until another attempt is allowed, if the limit is reached.
    pub(super) fn blocked(&self, address: &str, user: &str) -> Option<u64> {
        let map = self.0.lock().ok()?;
        Self::keys(address, user).iter().find_map(|(k, limit)| {
            map.get(k)
                .filter(|(n, since)| *n >= *limit && since.elapsed() < THROTTLE_WINDOW)
                .map(|(_, since)| (THROTTLE_WINDOW - since.elapsed()).as_secs() + 1)
        })
    }

    pub(super) fn failed(&self, address: &str, user: &str) {
        let Ok(mut map) = self.0.lock() else { return };
        if map.len() > 100_000 {
            map.retain(|_, (_, since)| since.elapsed() < THROTTLE_WINDOW);
        }
        for (k, _) in Self::keys(address, user) {
            let entry = map.entry(k).or_insert((0, std::time::Instant::now()));
            if entry.1.elapsed() >= THROTTLE_WINDOW {
                *entry = (0, std::time::Instant::now());
            }
            entry.0 += 1;
        }
    }

    pub(super) fn succeeded(&self, address: &str, user: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(&Self::keys(address, user)[0].0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_is_blocked_after_five_failures_from_one_address_and_a_success_clears_it() {
        let t = Throttle::default();
        for _ in 0..FAILURES_PER_USER - 1 {
            t.failed("10.0.0.1", "Alice");
        }
        assert_eq!(t.blocked("10.0.0.1", "alice"), None, "four failures: not yet");
        t.failed("10.0.0.1", "alice");
        let wait = t.blocked("10.0.0.1", "ALICE").expect("the fifth failure blocks, whatever the case of the name");
        assert!(wait > 0 && wait <= THROTTLE_WINDOW.as_secs() + 1);
        assert_eq!(t.blocked("10.0.0.2", "alice"), None, "another address is counted on its own");
        t.succeeded("10.0.0.1", "alice");
        assert_eq!(t.blocked("10.0.0.1", "alice"), None);
    }

    #[test]
    fn an_address_spraying_many_users_is_blocked_for_every_user() {
        let t = Throttle::default();
        for i in 0..FAILURES_PER_ADDRESS {
            t.failed("10.0.0.9", &format!("user{i}"));
        }
        assert!(t.blocked("10.0.0.9", "someone-new").is_some());
        assert_eq!(t.blocked("10.0.0.8", "someone-new"), None);
    }
}
