//! Prospector API tokens: created by a user (API or CLI), shown once, stored as a hash, carrying
//! scopes, a rate-limit plan and an optional expiry; checked on every request.

use prospector_api::prospector::models::{self, ApiToken, CreatedApiToken, Plan};
use prospector_api::prospector::{SERVICE, errors};
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{Paged, Paging, Problem};

use runtime::Context;
use runtime::OperationFault;
use runtime::caller::{AuthMethod, Caller};
use runtime::store::{Arg, Select, Store, now_ms, to_time};
use runtime::tokens::{self, Kind};

fn rank(plan: Plan) -> u8 {
    match plan {
        Plan::Starter => 0,
        Plan::Pro => 1,
        Plan::Team => 2,
    }
}

/// The caller's own plan: the one their token names, else the service default.
fn account_plan(caller: &Caller) -> Plan {
    caller.plan.as_deref().or(SERVICE.default_plan).and_then(Plan::parse).unwrap_or(Plan::Starter)
}

const COLUMNS: &str = "id, name, prefix, scopes, plan, created_at, expires_at, last_used_at";

fn from_row(r: &AnyRow) -> ApiToken {
    ApiToken {
        id: r.get(0),
        name: r.get(1),
        prefix: r.get(2),
        scopes: r.get::<String, _>(3).split_whitespace().map(str::to_string).collect(),
        plan: Plan::parse(&r.get::<String, _>(4)).unwrap_or(Plan::Starter),
        created_at: to_time(r.get(5)),
        expires_at: r.get::<Option<i64>, _>(6).map(to_time),
        last_used_at: r.get::<Option<i64>, _>(7).map(to_time),
    }
}

/// The caller's active tokens, newest first.
pub async fn list(
    store: &Store,
    cx: &mut Context,
    paging: Paging,
) -> Result<Paged<ApiToken>, errors::ListApiTokensError> {
    let (caller, op) = (&cx.caller, cx.op);
    let now = now_ms();
    let active = "tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)";
    let args = [Arg::Text(Some(caller.tenant.clone())), Arg::Text(Some(caller.subject.clone())), Arg::Int(now)];
    let (total, rows) = store
        .page(
            Select { columns: COLUMNS, table: "api_tokens", filter: active, order: "created_at DESC, id", args: &args },
            paging,
        )
        .await
        .map_err(|e| op.fault("listing", e))?;
    Ok(Paged { items: rows.iter().map(from_row).collect(), total })
}

/// What a new token is.
#[derive(Debug, Clone)]
pub struct NewToken {
    /// Tenant.
    pub tenant: String,
    /// User.
    pub user: String,
    /// Label.
    pub name: String,
    /// Scopes.
    pub scopes: Vec<String>,
    /// Plan.
    pub plan: Plan,
    /// Expiry, epoch milliseconds.
    pub expires_at: Option<i64>,
}

/// Stores a new token and returns it with its secret (shown once).
pub async fn insert(store: &Store, new: NewToken) -> Result<CreatedApiToken, sqlx::Error> {
    let issued = tokens::issue(
        store.pool(),
        tokens::NewToken {
            kind: Kind::Api,
            tenant: &new.tenant,
            user: &new.user,
            name: &new.name,
            scopes: &new.scopes,
            plan: Some(new.plan.as_str()),
            expires_at: new.expires_at,
        },
    )
    .await?;
    Ok(CreatedApiToken {
        id: issued.id,
        name: new.name,
        prefix: issued.prefix,
        scopes: issued.scopes,
        plan: new.plan,
        created_at: to_time(issued.created_at),
        expires_at: new.expires_at.map(to_time),
        last_used_at: None,
        token: issued.secret,
    })
}

/// Creates a token for the caller. Its plan cannot exceed the caller's; an API token cannot
/// mint another (a leaked one must not outlive its revocation).
pub async fn create(
    store: &Store,
    cx: &mut Context,
    input: models::CreateApiTokenInput,
) -> Result<CreatedApiToken, errors::CreateApiTokenError> {
    let (caller, op) = (&cx.caller, cx.op);
    use errors::CreateApiTokenError as E;
    if caller.method == AuthMethod::ApiToken {
        return Err(E::Forbidden(
            Problem::new("API tokens cannot create tokens; use your account's sign-in.")
                .with("auth_method", "api_token"),
        ));
    }
    for s in &input.scopes {
        if !SERVICE.scopes.iter().any(|k| k.name == s) {
            return Err(E::ValidationError(
                Problem::new(format!("unknown scope {s}; known scopes: prospector"))
                    .with("field", "scopes")
                    .with("value", s.clone()),
            ));
        }
    }
    let own = account_plan(caller);
    let plan = input.plan.unwrap_or(own);
    if rank(plan) > rank(own) {
        return Err(E::Forbidden(
            Problem::new(format!("Your plan is {own}; a token cannot have plan {plan}.")).with("plan", plan.as_str()),
        ));
    }
    let now = now_ms();
    if let Some(exp) = input.expires_at.filter(|e| e.timestamp_millis() <= now) {
        return Err(E::ValidationError(
            Problem::new("expires_at must be in the future")
                .with("field", "expires_at")
                .with("value", exp.to_rfc3339()),
        ));
    }
    let new = NewToken {
        tenant: caller.tenant.clone(),
        user: caller.subject.clone(),
        name: input.name,
        scopes: input.scopes,
        plan,
        expires_at: input.expires_at.map(|e| e.timestamp_millis()),
    };
    insert(store, new).await.map_err(|e| op.fault("storing", e))
}

/// Revokes one of the caller's tokens; it fails from its very next request.
pub async fn revoke(
    store: &Store,
    cx: &mut Context,
    input: models::RevokeApiTokenInput,
) -> Result<(), errors::RevokeApiTokenError> {
    let (caller, op) = (&cx.caller, cx.op);
    let revoked = tokens::revoke(store.pool(), Kind::Api, &caller.tenant, &caller.subject, &input.id)
        .await
        .map_err(|e| op.fault("revoking", e))?;
    if !revoked {
        return Err(errors::RevokeApiTokenError::NotFound(
            Problem::new(format!("No active token {}.", input.id)).with("id", input.id.clone()),
        ));
    }
    Ok(())
}
