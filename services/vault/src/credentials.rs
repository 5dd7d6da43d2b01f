//! Credentials: metadata rows, immutable sealed versions, tags.
//!
//! Visibility: a credential the caller cannot read answers 404, exactly like one that does not
//! exist (or lives in another tenant); one they can read but not change answers 403.

use runtime::Context;
use sqlx::Row;
use sqlx::any::AnyRow;
use support::{InternalError, Operation, Problem};
use vault_api::vault::models::{self, Credential, CredentialKind, CredentialState, CredentialVersion, RevealedSecret};
use vault_api::vault::{errors, operations as ops};

use crate::problems::{forbidden, not_found};
use crate::rbac::{Access, Perms};
use crate::state::Vault;
use runtime::OperationFault;
use runtime::caller::Caller;
use runtime::sql::{Arg, Sql};
use runtime::store::{Nullable, Tx, now_ms, to_time};

/// A credential's row.
#[derive(Debug, Clone)]
pub(super) struct Row_ {
    pub key: String,
    pub kind: CredentialKind,
    pub folder_id: Option<String>,
    pub description: Option<String>,
    pub username: Option<String>,
    pub url: Option<String>,
    pub state: CredentialState,
    pub current_version: i64,
    pub created_at: i64,
    pub created_by: String,
    pub updated_at: i64,
    pub archived_at: Option<i64>,
}

const COLUMNS: &str = "key, kind, folder_id, description, username, url, state, current_version, created_at, created_by, updated_at, archived_at";

/// A credential's tags as one column of a list's page, `{order}` their order within it: joined by
/// [`TAG_SEPARATOR`] (a control character no tag can hold), NULL without tags; `string_agg` is
/// SQLite's too.
pub(crate) const TAGS: &str = "(SELECT string_agg(tag, '\u{1f}'{order}) FROM credential_tags AS t \
                    WHERE t.tenant_id = credentials.tenant_id AND t.key = credentials.key)";
pub(crate) const TAG_SEPARATOR: char = '\u{1f}';

fn from_row(r: &AnyRow) -> Row_ {
    from_row_at(r, 0)
}

/// The credential whose [`COLUMNS`] start at `at` of `r`.
fn from_row_at(r: &AnyRow, at: usize) -> Row_ {
    Row_ {
        key: r.get(at),
        kind: CredentialKind::parse(&r.get::<String, _>(at + 1)).unwrap_or(CredentialKind::Generic),
        folder_id: r.get(at + 2),
        description: r.get(at + 3),
        username: r.get(at + 4),
        url: r.get(at + 5),
        state: CredentialState::parse(&r.get::<String, _>(at + 6)).unwrap_or(CredentialState::Active),
        current_version: r.get(at + 7),
        created_at: r.get(at + 8),
        created_by: r.get(at + 9),
        updated_at: r.get(at + 10),
        archived_at: r.get(at + 11),
    }
}

/// Loads one credential of `tenant`.
pub(super) async fn load(tx: &mut Tx, tenant: &str, key: &str) -> Result<Option<Row_>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM credentials WHERE tenant_id = $1 AND key = $2");
    Ok(sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(tenant)
        .bind(key)
        .fetch_optional(&mut **tx)
        .await?
        .as_ref()
        .map(from_row))
}

/// Loads a credential the caller may read, or the `not found` problem.
pub(super) async fn visible<E: InternalError>(
    tx: &mut Tx,
    op: &Operation,
    caller: &Caller,
    access: &Access,
    key: &str,
) -> Result<Result<(Row_, Perms), Problem>, E> {
    let row = load(tx, &caller.tenant, key).await.map_err(|e| op.fault("loading a credential", e))?;
    Ok(match row {
        Some(r) => {
            let perms = access.on_credential(&r.key, r.folder_id.as_deref());
            if perms.has(Perms::READ) { Ok((r, perms)) } else { Err(not_found("credential", key)) }
        }
        None => Err(not_found("credential", key)),
    })
}

async fn tags_of(tx: &mut Tx, tenant: &str, key: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT tag FROM credential_tags WHERE tenant_id = $1 AND key = $2 ORDER BY tag")
        .bind(tenant)
        .bind(key)
        .fetch_all(&mut **tx)
        .await?;
    Ok(rows.into_iter().map(|r| r.get(0)).collect())
}

/// The full metadata view of a credential.
pub(super) async fn view<E: InternalError>(
    tx: &mut Tx,
    op: &Operation,
    tenant: &str,
    r: Row_,
) -> Result<Credential, E> {
    let tags = tags_of(tx, tenant, &r.key).await.map_err(|e| op.fault("loading tags", e))?;
    let versions = sqlx::query("SELECT version, created_at, created_by FROM credential_versions WHERE tenant_id = $1 AND key = $2 ORDER BY version DESC")
        .bind(tenant)
        .bind(&r.key)
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| op.fault("loading versions", e))?
        .into_iter()
        .map(|v| CredentialVersion { version: v.get(0), created_at: to_time(v.get(1)), created_by: v.get(2) })
        .collect();
    Ok(Credential {
        key: r.key,
        kind: r.kind,
        folder_id: r.folder_id,
        description: r.description,
        username: r.username,
        url: r.url,
        tags,
        state: r.state,
        current_version: r.current_version,
        versions,
        created_at: to_time(r.created_at),
        created_by: r.created_by,
        updated_at: to_time(r.updated_at),
        archived_at: r.archived_at.map(to_time),
    })
}

/// Replaces the tags of a credential (and records new tag names for the tenant).
pub(super) async fn set_tags(tx: &mut Tx, tenant: &str, key: &str, tags: &[String]) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM credential_tags WHERE tenant_id = $1 AND key = $2")
        .bind(tenant)
        .bind(key)
        .execute(&mut **tx)
        .await?;
    let mut unique: Vec<&String> = tags.iter().collect();
    unique.sort();
    unique.dedup();
    for tag in unique {
        sqlx::query("INSERT INTO tags (tenant_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(tenant)
            .bind(tag)
            .execute(&mut **tx)
            .await?;
        sqlx::query("INSERT INTO credential_tags (tenant_id, key, tag) VALUES ($1, $2, $3)")
            .bind(tenant)
            .bind(key)
            .bind(tag)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Whether folder `id` exists in `tenant`.
pub(super) async fn folder_exists(tx: &mut Tx, tenant: &str, id: &str) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query("SELECT 1 FROM folders WHERE tenant_id = $1 AND id = $2")
        .bind(tenant)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?
        .is_some())
}

/// Whether folder `id` exists in `tenant`, holding its row until `tx` ends: for a write that puts
/// something in the folder (a credential, a grant). A delete of the folder holds the same row
/// before it checks that the folder is empty, so of the two, the later one sees what the earlier
/// one did: the delete finds the new content (409), or the write finds no folder (404). Never an
/// orphan.
pub(super) async fn hold_folder(tx: &mut Tx, tenant: &str, id: &str) -> Result<bool, sqlx::Error> {
    let held = sqlx::query("UPDATE folders SET updated_at = updated_at WHERE tenant_id = $1 AND id = $2")
        .bind(tenant)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(held.rows_affected() > 0)
}

pub(super) async fn store(
    vault: &Vault,
    cx: &mut Context,
    input: models::StoreCredentialInput,
) -> Result<Credential, errors::StoreCredentialError> {
    let op = cx.op;
    let (tx, caller, _targets) = cx.parts::<errors::StoreCredentialError>().await?;
    use errors::StoreCredentialError as E;
    let access = vault.access(tx, op, caller).await?;
    match &input.folder_id {
        Some(f) => {
            if !hold_folder(tx, &caller.tenant, f).await.map_err(|e| op.fault("loading a folder", e))? {
                return Err(E::ResourceNotFound(not_found("folder", f)));
            }
            if !access.on_folder(Some(f)).has(Perms::STORE) {
                return Err(E::AuthForbidden(forbidden("canStore", &format!("folder {f}"))));
            }
        }
        None if !access.is_admin() => {
            return Err(E::AuthForbidden(Problem::new("Only tenant administrators store credentials outside folders; give a folder_id you hold canStore on.").with("required_permission", "canStore")));
        }
        None => {}
    }
    if load(tx, &caller.tenant, &input.key).await.map_err(|e| op.fault("loading a credential", e))?.is_some() {
        return Err(E::ResourceConflict(
            Problem::new(format!("A credential with key {} already exists; rotate it instead.", input.key))
                .with("key", input.key.clone()),
        ));
    }
    let now = now_ms();
    let kind = input.kind.unwrap_or(CredentialKind::Generic);
    sqlx::query(
        "INSERT INTO credentials (tenant_id, key, kind, folder_id, description, username, url, state, current_version, created_at, created_by, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'active', 1, $8, $9, $8)",
    )
    .bind(&caller.tenant)
    .bind(&input.key)
    .bind(kind.as_str())
    .bind(Nullable(input.folder_id.as_deref()))
    .bind(Nullable(input.description.as_deref()))
    .bind(Nullable(input.username.as_deref()))
    .bind(Nullable(input.url.as_deref()))
    .bind(now)
    .bind(&caller.subject)
    .execute(&mut **tx)
    .await
    .map_err(|e| op.fault("inserting a credential", e))?;
    insert_version(vault, tx, op, caller, NewVersion { key: &input.key, version: 1, value: &input.value, at: now })
        .await?;
    set_tags(tx, &caller.tenant, &input.key, input.tags.as_deref().unwrap_or_default())
        .await
        .map_err(|e| op.fault("storing tags", e))?;
    let row = load(tx, &caller.tenant, &input.key)
        .await
        .map_err(|e| op.fault("reloading", e))?
        .ok_or_else(|| op.fault("reloading", "row vanished"))?;
    view(tx, op, &caller.tenant, row).await
}

/// One immutable version to seal and insert.
struct NewVersion<'a> {
    key: &'a str,
    version: i64,
    value: &'a str,
    at: i64,
}

async fn insert_version<E: InternalError>(
    vault: &Vault,
    tx: &mut Tx,
    op: &Operation,
    caller: &Caller,
    v: NewVersion<'_>,
) -> Result<(), E> {
    let NewVersion { key, version, value, at } = v;
    let (dk, sealed) = vault
        .keyring
        .seal(tx, &caller.tenant, key, version, value.as_bytes())
        .await
        .map_err(|e| op.fault("sealing the secret", e))?;
    sqlx::query("INSERT INTO credential_versions (tenant_id, key, version, data_key_id, sealed, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)")
        .bind(&caller.tenant)
        .bind(key)
        .bind(version)
        .bind(dk)
        .bind(sealed)
        .bind(at)
        .bind(&caller.subject)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("inserting a version", e))?;
    Ok(())
}

pub(super) async fn get(
    vault: &Vault,
    cx: &mut Context,
    input: models::CredentialRef,
) -> Result<Credential, errors::GetCredentialError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::GetCredentialError>().await?;
    let access = vault.access(tx, op, caller).await?;
    let (row, _) =
        visible(tx, op, caller, &access, &input.key).await?.map_err(errors::GetCredentialError::ResourceNotFound)?;
    view(tx, op, &caller.tenant, row).await
}

pub(super) async fn update(
    vault: &Vault,
    cx: &mut Context,
    input: models::UpdateCredentialInput,
) -> Result<Credential, errors::UpdateCredentialError> {
    let op = cx.op;
    let (tx, caller, targets) = cx.parts::<errors::UpdateCredentialError>().await?;
    use errors::UpdateCredentialError as E;
    let access = vault.access(tx, op, caller).await?;
    let (row, perms) = visible(tx, op, caller, &access, &input.key).await?.map_err(E::ResourceNotFound)?;
    if !perms.has(Perms::STORE) {
        return Err(E::AuthForbidden(forbidden("canStore", &format!("credential {}", row.key))));
    }
    if row.state == CredentialState::Archived {
        return Err(E::CredentialArchived(Problem::new(format!(
            "Credential {} is archived; restore it first.",
            row.key
        ))));
    }
    let mut folder = row.folder_id.clone();
    if let Some(target) = &input.folder_id {
        match target {
            Some(f) => {
                if !hold_folder(tx, &caller.tenant, f).await.map_err(|e| op.fault("loading a folder", e))? {
                    return Err(E::ResourceNotFound(not_found("folder", f)));
                }
                if !access.on_folder(Some(f)).has(Perms::STORE) {
                    return Err(E::AuthForbidden(forbidden("canStore", &format!("folder {f}"))));
                }
                targets.push(f.clone());
            }
            None if !access.is_admin() => {
                return Err(E::AuthForbidden(
                    Problem::new("Only tenant administrators move credentials to the root.")
                        .with("required_permission", "canStore"),
                ));
            }
            None => {}
        }
        folder = target.clone();
    }
    let keep = |new: Option<Option<String>>, old: Option<String>| new.unwrap_or(old);
    sqlx::query("UPDATE credentials SET description = $1, username = $2, url = $3, folder_id = $4, updated_at = $5 WHERE tenant_id = $6 AND key = $7")
        .bind(Nullable(keep(input.description, row.description.clone())))
        .bind(Nullable(keep(input.username, row.username.clone())))
        .bind(Nullable(keep(input.url, row.url.clone())))
        .bind(Nullable(folder))
        .bind(now_ms())
        .bind(&caller.tenant)
        .bind(&row.key)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("updating a credential", e))?;
    if let Some(tags) = &input.tags {
        set_tags(tx, &caller.tenant, &row.key, tags).await.map_err(|e| op.fault("storing tags", e))?;
    }
    let row = load(tx, &caller.tenant, &row.key)
        .await
        .map_err(|e| op.fault("reloading", e))?
        .ok_or_else(|| op.fault("reloading", "row vanished"))?;
    view(tx, op, &caller.tenant, row).await
}

/// Opens version `version` of a credential (the caller's permission already checked).
pub(super) async fn open_version<E: InternalError>(
    vault: &Vault,
    tx: &mut Tx,
    op: &Operation,
    tenant: &str,
    key: &str,
    version: i64,
) -> Result<Option<String>, E> {
    let Some(v) = sqlx::query(
        "SELECT data_key_id, sealed FROM credential_versions WHERE tenant_id = $1 AND key = $2 AND version = $3",
    )
    .bind(tenant)
    .bind(key)
    .bind(version)
    .fetch_optional(&mut **tx)
    .await
    .map_err(|e| op.fault("loading a version", e))?
    else {
        return Ok(None);
    };
    open_sealed(vault, tx, op, tenant, key, version, &v.get::<String, _>(0), &v.get::<Vec<u8>, _>(1)).await.map(Some)
}

/// The secret of version `version` of a credential, from its sealed value and data key id (read
/// through `db` when not cached).
#[allow(clippy::too_many_arguments)]
async fn open_sealed<E: InternalError>(
    vault: &Vault,
    db: &mut sqlx::AnyConnection,
    op: &Operation,
    tenant: &str,
    key: &str,
    version: i64,
    data_key: &str,
    sealed: &[u8],
) -> Result<String, E> {
    let plain = vault
        .keyring
        .open(db, data_key, tenant, key, version, sealed)
        .await
        .map_err(|e| op.fault("opening a secret", e))?;
    String::from_utf8(plain).map_err(|e| op.fault("decoding a secret", e))
}

/// Reveal's one statement: the caller's access ($1 tenant, $2 user), the credential ($3) and the
/// requested version ($4, NULL for the current one) with its sealed value, read in one snapshot
/// without a transaction. The credential's columns are NULL when there is none, the version's
/// when it has no such version.
static REVEAL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let credential = COLUMNS.split(", ").map(|c| format!("c.{c}")).collect::<Vec<_>>().join(", ");
    format!(
        "SELECT {}, v.data_key_id, v.sealed, {credential} FROM (SELECT 1 AS one) AS o \
         LEFT JOIN credentials AS c ON c.tenant_id = $1 AND c.key = $3 \
         LEFT JOIN credential_versions AS v ON v.tenant_id = $1 AND v.key = $3 \
         AND v.version = COALESCE($4, c.current_version)",
        crate::rbac::COLUMNS
    )
});

/// Where the version's two columns and then the credential's start in [`REVEAL`]'s row, after
/// the access.
const REVEAL_VERSION_AT: usize = 3;
const REVEAL_CREDENTIAL_AT: usize = REVEAL_VERSION_AT + 2;

pub(super) async fn reveal(
    vault: &Vault,
    caller: &Caller,
    input: models::RevealCredentialInput,
) -> Result<RevealedSecret, errors::RevealCredentialError> {
    use errors::RevealCredentialError as E;
    let op = &ops::REVEAL_CREDENTIAL;
    let mut db = vault.store.readers().acquire().await.map_err(|e| op.fault("reading", e))?;
    let found = sqlx::query(sqlx::AssertSqlSafe(REVEAL.as_str()))
        .bind(&caller.tenant)
        .bind(&caller.subject)
        .bind(&input.key)
        .bind(Nullable(input.version))
        .fetch_one(&mut *db)
        .await
        .map_err(|e| op.fault("loading a credential", e))?;
    let access = Access::from_row(&found, 0);
    let row = found.get::<Option<String>, _>(REVEAL_CREDENTIAL_AT).map(|_| from_row_at(&found, REVEAL_CREDENTIAL_AT));
    let perms = row.as_ref().map(|r| access.on_credential(&r.key, r.folder_id.as_deref())).unwrap_or_default();
    let Some(row) = row.filter(|_| perms.has(Perms::READ)) else {
        return Err(E::ResourceNotFound(not_found("credential", &input.key)));
    };
    if !perms.has(Perms::REVEAL) {
        return Err(E::AuthForbidden(forbidden("canReveal", &format!("credential {}", row.key))));
    }
    if row.state == CredentialState::Archived {
        return Err(E::CredentialArchived(Problem::new(format!(
            "Credential {} is archived; restore it to reveal it.",
            row.key
        ))));
    }
    let version = input.version.unwrap_or(row.current_version);
    let Some(data_key) = found.get::<Option<String>, _>(REVEAL_VERSION_AT) else {
        return Err(E::ResourceNotFound(
            Problem::new(format!("Credential {} has no version {version}.", row.key)).with("version", version),
        ));
    };
    let sealed: Vec<u8> = found.get(REVEAL_VERSION_AT + 1);
    let value = open_sealed(vault, &mut db, op, &caller.tenant, &row.key, version, &data_key, &sealed).await?;
    Ok(RevealedSecret { key: row.key, version, kind: row.kind, username: row.username, value })
}

pub(super) async fn set_state<E>(
    vault: &Vault,
    cx: &mut Context,
    op: &'static Operation,
    key: &str,
    state: CredentialState,
) -> Result<Credential, E>
where
    E: InternalError + From<StateError>,
{
    let (tx, caller, targets) = cx.parts::<E>().await?;
    let access = vault.access::<E>(tx, op, caller).await?;
    let (row, perms) =
        visible::<E>(tx, op, caller, &access, key).await?.map_err(|p| E::from(StateError::NotFound(p)))?;
    if !perms.has(Perms::STORE) {
        return Err(E::from(StateError::Forbidden(forbidden("canStore", &format!("credential {}", row.key)))));
    }
    // Idempotent: archiving an archived credential (or restoring an active one) changes nothing.
    if row.state != state {
        let now = now_ms();
        let archived_at = (state == CredentialState::Archived).then_some(now);
        sqlx::query(
            "UPDATE credentials SET state = $1, archived_at = $2, updated_at = $3 WHERE tenant_id = $4 AND key = $5",
        )
        .bind(state.as_str())
        .bind(Nullable(archived_at))
        .bind(now)
        .bind(&caller.tenant)
        .bind(&row.key)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault::<E>("changing state", e))?;
        if state == CredentialState::Archived {
            // Archived credentials are not leasable: revoke what is outstanding.
            let revoked = sqlx::query("UPDATE leases SET state = 'revoked', revoked_at = $1 WHERE tenant_id = $2 AND credential_key = $3 AND state = 'active' RETURNING id")
                .bind(now)
                .bind(&caller.tenant)
                .bind(&row.key)
                .fetch_all(&mut **tx)
                .await
                .map_err(|e| op.fault::<E>("revoking leases", e))?;
            targets.extend(revoked.iter().map(|r| r.get::<String, _>(0)));
        }
    }
    let row = load(tx, &caller.tenant, key)
        .await
        .map_err(|e| op.fault::<E>("reloading", e))?
        .ok_or_else(|| op.fault::<E>("reloading", "row vanished"))?;
    view(tx, op, &caller.tenant, row).await
}

/// Failures shared by archive and restore.
pub(super) enum StateError {
    NotFound(Problem),
    Forbidden(Problem),
}

macro_rules! state_error {
    ($t:ty) => {
        impl From<StateError> for $t {
            fn from(e: StateError) -> Self {
                match e {
                    StateError::NotFound(p) => <$t>::ResourceNotFound(p),
                    StateError::Forbidden(p) => <$t>::AuthForbidden(p),
                }
            }
        }
    };
}
state_error!(errors::ArchiveCredentialError);
state_error!(errors::RestoreCredentialError);

pub(super) async fn rotate(
    vault: &Vault,
    cx: &mut Context,
    input: models::RotateCredentialInput,
) -> Result<Credential, errors::RotateCredentialError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::RotateCredentialError>().await?;
    use errors::RotateCredentialError as E;
    let access = vault.access(tx, op, caller).await?;
    let (row, perms) = visible(tx, op, caller, &access, &input.key).await?.map_err(E::ResourceNotFound)?;
    if !perms.has(Perms::STORE) {
        return Err(E::AuthForbidden(forbidden("canStore", &format!("credential {}", row.key))));
    }
    if row.state == CredentialState::Archived {
        return Err(E::CredentialArchived(Problem::new(format!(
            "Credential {} is archived; restore it before rotating.",
            row.key
        ))));
    }
    // The conditional increment is the serialization point: concurrent rotations each get their
    // own next version, and a stale expected_version matches no row.
    let mut sql = Sql::new("UPDATE credentials SET current_version = current_version + 1");
    sql.push(", updated_at = ?", Arg::Int(now_ms()));
    sql.push(" WHERE tenant_id = ?", Arg::text(caller.tenant.clone()));
    sql.push(" AND key = ? AND state = 'active'", Arg::text(row.key.clone()));
    if let Some(expected) = input.expected_version {
        sql.push(" AND current_version = ?", Arg::Int(expected));
    }
    sql.raw(" RETURNING current_version, updated_at");
    let Some(updated) =
        sql.query().fetch_optional(&mut **tx).await.map_err(|e| op.fault("advancing the version", e))?
    else {
        let current = load(tx, &caller.tenant, &row.key)
            .await
            .map_err(|e| op.fault("reloading", e))?
            .map(|r| r.current_version)
            .unwrap_or(row.current_version);
        return Err(E::CredentialVersionConflict(
            Problem::new(format!(
                "Credential {} is at version {current}, not {}.",
                row.key,
                input.expected_version.unwrap_or(current)
            ))
            .with("current_version", current),
        ));
    };
    let version: i64 = updated.get(0);
    let now: i64 = updated.get(1);
    insert_version(vault, tx, op, caller, NewVersion { key: &row.key, version, value: &input.value, at: now }).await?;
    let row = load(tx, &caller.tenant, &row.key)
        .await
        .map_err(|e| op.fault("reloading", e))?
        .ok_or_else(|| op.fault("reloading", "row vanished"))?;
    view(tx, op, &caller.tenant, row).await
}
