//! The page a list request asks for, and the page an implementation answers.

/// One page of a list: the items and the total over all pages.
#[derive(Debug, Clone, PartialEq)]
pub struct Paged<T> {
    /// This page's items.
    pub items: Vec<T>,
    /// Items matching the request over all pages.
    pub total: u64,
}

/// The page a list request asks for (already validated against the pagination rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    /// Page number, from 1.
    pub page: u32,
    /// Items per page.
    pub per_page: u32,
}

impl Paging {
    /// Items to skip.
    pub fn offset(&self) -> u64 {
        u64::from(self.page.saturating_sub(1)) * u64::from(self.per_page)
    }
}
