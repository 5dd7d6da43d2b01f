//! The problems every resource of the vault answers alike.

use support::Problem;

/// `resource/not-found` problem for `what` `id`.
pub(crate) fn not_found(what: &str, id: &str) -> Problem {
    Problem::new(format!("No {what} {id}.")).with("id", id)
}

/// `auth/forbidden` problem naming the missing permission.
pub(crate) fn forbidden(needed: &str, what: &str) -> Problem {
    Problem::new(format!("You need {needed} on {what}.")).with("required_permission", needed)
}
