//! Personal access tokens of the calling user: create (the secret is shown once), list, revoke.
//! A token's scopes never exceed the caller's own.

use runtime::Context;
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{Paged, Paging, Problem};
use vault_api::vault::errors;
use vault_api::vault::models::{self, CreatedToken, PersonalAccessToken};

use crate::problems::not_found;
use crate::state::Vault;
use runtime::OperationFault;
use runtime::sql::{Arg, Sql};
use runtime::store::{now_ms, to_time};
use runtime::tokens as secrets;

const COLUMNS: &str = "id, name, prefix, scopes, created_at, expires_at, last_used_at, revoked_at";

fn from_row(r: &AnyRow) -> PersonalAccessToken {
    PersonalAccessToken {
        id: r.get(0),
        name: r.get(1),
        prefix: r.get(2),
        scopes: r.get::<String, _>(3).split_whitespace().map(str::to_string).collect(),
        created_at: to_time(r.get(4)),
        expires_at: r.get::<Option<i64>, _>(5).map(to_time),
        last_used_at: r.get::<Option<i64>, _>(6).map(to_time),
        revoked_at: r.get::<Option<i64>, _>(7).map(to_time),
    }
}

pub(super) async fn list(
    _vault: &Vault,
    cx: &mut Context,
    input: models::ListTokensInput,
    paging: Paging,
) -> Result<Paged<PersonalAccessToken>, errors::ListTokensError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::ListTokensError>().await?;
    let mut sql = Sql::new(" WHERE tenant_id = $1 AND user_id = $2");
    sql.args = vec![Arg::text(caller.tenant.clone()), Arg::text(caller.subject.clone())];
    if !input.include_revoked.unwrap_or(false) {
        sql.push(" AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", Arg::Int(now_ms()));
    }
    let count = Sql { text: format!("SELECT COUNT(*) FROM personal_tokens{}", sql.text), args: sql.args.clone() };
    let total: i64 = count.query().fetch_one(&mut **tx).await.map_err(|e| op.fault("counting tokens", e))?.get(0);
    let mut page = Sql {
        text: format!("SELECT {COLUMNS} FROM personal_tokens{} ORDER BY created_at DESC, id", sql.text),
        args: sql.args,
    };
    page.push(" LIMIT ?", Arg::Int(i64::from(paging.per_page)));
    page.push(" OFFSET ?", Arg::Int(paging.offset() as i64));
    let rows = page.query().fetch_all(&mut **tx).await.map_err(|e| op.fault("listing tokens", e))?;
    Ok(Paged { items: rows.iter().map(from_row).collect(), total: total.max(0) as u64 })
}

pub(super) async fn create(
    _vault: &Vault,
    cx: &mut Context,
    input: models::CreateTokenInput,
) -> Result<CreatedToken, errors::CreateTokenError> {
    let op = cx.op;
    let (tx, caller, targets) = cx.parts::<errors::CreateTokenError>().await?;
    use errors::CreateTokenError as E;
    if caller.method == runtime::caller::AuthMethod::PersonalToken {
        // A leaked token must not be able to mint a successor that outlives its revocation.
        return Err(E::AuthForbidden(
            Problem::new(
                "Personal access tokens cannot create tokens; use a signed-in session or an OAuth access token.",
            )
            .with("auth_method", "personal_token"),
        ));
    }
    let service = &vault_api::vault::SERVICE;
    for wanted in &input.scopes {
        // Every requested scope must exist and be one the caller's own scopes satisfy (a signed-in
        // session carries no scopes: RBAC bounds what its tokens reach).
        let known = service.scopes.iter().any(|s| s.name == wanted);
        let within = caller.method == runtime::caller::AuthMethod::Session
            || service.satisfies(caller.scopes.iter().map(String::as_str), wanted);
        if !known || !within {
            return Err(E::AuthForbidden(
                Problem::new(format!("You cannot create a token with {wanted}: it exceeds your own scopes."))
                    .with("scope", wanted.clone()),
            ));
        }
    }
    let now = now_ms();
    if let Some(exp) = input.expires_at.filter(|e| e.timestamp_millis() <= now) {
        return Err(E::RequestInvalid(
            Problem::new("expires_at must be in the future")
                .with("field", "expires_at")
                .with("value", exp.to_rfc3339()),
        ));
    }
    let new = secrets::NewToken {
        kind: secrets::Kind::Personal,
        tenant: &caller.tenant,
        user: &caller.subject,
        name: &input.name,
        scopes: &input.scopes,
        plan: None,
        expires_at: input.expires_at.map(|e| e.timestamp_millis()),
    };
    let issued = secrets::issue(&mut **tx, new).await.map_err(|e| op.fault("storing a token", e))?;
    targets.push(issued.id.clone());
    Ok(CreatedToken {
        id: issued.id,
        name: input.name,
        prefix: issued.prefix,
        scopes: issued.scopes,
        created_at: to_time(issued.created_at),
        expires_at: input.expires_at,
        token: issued.secret,
    })
}

pub(super) async fn revoke(
    _vault: &Vault,
    cx: &mut Context,
    input: models::RevokeTokenInput,
) -> Result<(), errors::RevokeTokenError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::RevokeTokenError>().await?;
    let revoked = secrets::revoke(&mut **tx, secrets::Kind::Personal, &caller.tenant, &caller.subject, &input.token_id)
        .await
        .map_err(|e| op.fault("revoking a token", e))?;
    if !revoked {
        return Err(errors::RevokeTokenError::ResourceNotFound(not_found("active token", &input.token_id)));
    }
    Ok(())
}
