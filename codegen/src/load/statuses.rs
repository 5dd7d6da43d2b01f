//! The success statuses an operation may declare or answer.

/// Whether an operation may declare `status` as a success: any 2xx but `206` (the answer to a
/// `Range`, which `ranges` or an alternative gives), registered or not (RFC 9110 section 15: a
/// client reads an unknown 2xx as `200`), or a redirect it answers with a `Location`.
pub(crate) fn is_success_status(status: u16) -> bool {
    ((200..300).contains(&status) && status != 206) || matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The success statuses, as messages name them.
pub(crate) const SUCCESS_STATUSES_TEXT: &str = "a 2xx but 206, or a redirect (301, 302, 303, 307, 308)";
