//! Tenant and user names: one rule each, applied wherever a name enters the system (the CLI,
//! sign-in users, and every credential the gate accepts), so that a token cannot carry a tenant
//! that `tenant create` would refuse.

/// What a tenant name may be, for error messages.
pub const TENANT_RULE: &str = "a tenant name is 1-64 characters of letters, digits, '.', '_', '-', '@'";
/// What a user name may be, for error messages.
pub const USER_RULE: &str = "a user name is 1-128 characters of letters, digits and -_.@+";

/// Whether `name` is a valid tenant name.
pub fn tenant_ok(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b))
}

/// Whether `name` is a valid user name (a token's `sub`).
pub fn user_ok(name: &str) -> bool {
    !name.is_empty() && name.len() <= 128 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.@+".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_names() {
        assert!(tenant_ok("acme") && tenant_ok("acme-eu.1") && tenant_ok(&"a".repeat(64)));
        for bad in ["", "../../x y<>", "a b", "tenant/1", "x\0", "é"] {
            assert!(!tenant_ok(bad), "{bad:?} must be refused");
        }
        assert!(!tenant_ok(&"a".repeat(65)) && !tenant_ok(&"a".repeat(5000)));
    }

    #[test]
    fn user_names() {
        assert!(user_ok("alice") && user_ok("alice+ops@example.com") && user_ok(&"u".repeat(128)));
        for bad in ["", "a b", "<script>", "x\0"] {
            assert!(!user_ok(bad), "{bad:?} must be refused");
        }
        assert!(!user_ok(&"u".repeat(129)));
    }
}
