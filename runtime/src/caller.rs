//! Who is calling, as every service implementation and the audit log see it.

/// How the caller authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    /// A JWT access token.
    Jwt,
    /// A personal access token.
    PersonalToken,
    /// An API token (with a rate-limit plan).
    ApiToken,
    /// A signed-in browser session (cookie): scopes do not apply, RBAC and tenancy do.
    Session,
}

impl AuthMethod {
    /// Wire name, as in audit rows.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::Jwt => "jwt",
            AuthMethod::PersonalToken => "personal_token",
            AuthMethod::ApiToken => "api_token",
            AuthMethod::Session => "session",
        }
    }
}

/// Who is calling: the authenticated user, their tenant and what their token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The user (`sub`).
    pub subject: String,
    /// The user's tenant; every storage access is scoped to it.
    pub tenant: String,
    /// Scopes the token carries.
    pub scopes: Vec<String>,
    /// Rate-limit plan, when the token names one.
    pub plan: Option<String>,
    /// How they authenticated.
    pub method: AuthMethod,
    /// The token's id (`jti`, or the personal token's id), for audit.
    pub token_id: Option<String>,
    /// The request's `X-Request-Id`, for audit.
    pub request_id: String,
}
