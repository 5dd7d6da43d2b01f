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
    /// No credentials, at a public operation: no tenant, no scopes.
    Anonymous,
}

impl AuthMethod {
    /// Wire name, as in audit rows.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::Jwt => "jwt",
            AuthMethod::PersonalToken => "personal_token",
            AuthMethod::ApiToken => "api_token",
            AuthMethod::Session => "session",
            AuthMethod::Anonymous => "anonymous",
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

impl Caller {
    /// Whoever calls a public operation without credentials: the subject `anonymous`, in no
    /// tenant (tenant-scoped storage holds nothing for it), with no scopes.
    pub fn anonymous(request_id: &str) -> Caller {
        Caller {
            subject: "anonymous".into(),
            tenant: String::new(),
            scopes: Vec::new(),
            plan: None,
            method: AuthMethod::Anonymous,
            token_id: None,
            request_id: request_id.to_string(),
        }
    }

    /// No credentials came with the call (a public operation's anonymous caller).
    pub fn is_anonymous(&self) -> bool {
        self.method == AuthMethod::Anonymous
    }
}
