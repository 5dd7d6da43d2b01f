//! The credential list: one page and its total in one statement, the page a JSON array the
//! database builds, filtered to what the caller may read.

use runtime::Context;
use sqlx::Row;
use support::{Paged, Paging};
use vault_api::vault::errors;
use vault_api::vault::models::{
    self, CredentialKind, CredentialState, CredentialStateFilter, CredentialSummary, TenantRole,
};

use crate::credentials::{TAG_SEPARATOR, TAGS};
use crate::rbac::Access;
use crate::state::Vault;
use runtime::OperationFault;
use runtime::caller::Caller;
use runtime::sql::{Arg, Sql, contains_pattern};
use runtime::store::{Backend, to_time};
pub(crate) async fn list(
    vault: &Vault,
    cx: &mut Context,
    input: models::ListCredentialsInput,
    paging: Paging,
) -> Result<Paged<CredentialSummary>, errors::ListCredentialsError> {
    let op = cx.op;
    let caller = &cx.caller;
    // No transaction: each statement reads one snapshot on a reader connection. The first reads
    // the caller's access and, when they administer the tenant (who may read every credential),
    // the page and its total as well, so the usual list costs one statement. Anyone else gets the
    // page of what their grants let them read from a second statement.
    let mut db = vault.store.readers().acquire().await.map_err(|e| op.fault("reading", e))?;
    let first = page_statement(vault, caller, &input, paging, Readable::IfAdministrator);
    let row = first.query().fetch_one(&mut *db).await.map_err(|e| op.fault("listing credentials", e))?;
    let access = Access::from_row(&row, 0);
    let (total, json) = if access.is_admin() {
        (row.get::<i64, _>(3), row.get::<Option<String>, _>(4))
    } else {
        let (keys, folders) = access.readable();
        let second = page_statement(vault, caller, &input, paging, Readable::Granted { keys, folders });
        let row = second.query().fetch_one(&mut *db).await.map_err(|e| op.fault("listing credentials", e))?;
        (row.get::<i64, _>(0), row.get::<Option<String>, _>(1))
    };
    let listed: Vec<Listed> = match json {
        Some(json) => serde_json::from_str(&json).map_err(|e| op.fault("reading the page", e))?,
        None => Vec::new(),
    };
    let sqlite = vault.store.backend() == Backend::Sqlite;
    let mut items: Vec<CredentialSummary> = listed
        .into_iter()
        .map(|(key, kind, folder_id, description, state, current_version, updated_at, tags)| CredentialSummary {
            key,
            kind: CredentialKind::parse(&kind).unwrap_or(CredentialKind::Generic),
            folder_id,
            description,
            tags: tags
                .map(|t| in_order(t.split(TAG_SEPARATOR).map(str::to_string).collect(), sqlite))
                .unwrap_or_default(),
            state: CredentialState::parse(&state).unwrap_or(CredentialState::Active),
            current_version,
            updated_at: to_time(updated_at),
        })
        .collect();
    if sqlite {
        // In the page's order (see `page_statement`).
        items.sort_unstable_by(|a, b| a.key.cmp(&b.key));
    }
    Ok(Paged { items, total: total.max(0) as u64 })
}

/// `list`, sorted when `sort` (the aggregate that read it kept no order).
fn in_order(mut list: Vec<String>, sort: bool) -> Vec<String> {
    if sort {
        list.sort_unstable();
    }
    list
}

/// Which credentials a list's statement may show.
enum Readable {
    /// All of them if the caller administers the tenant, none otherwise; the statement starts
    /// with the caller's access ([`crate::rbac::COLUMNS`]).
    IfAdministrator,
    /// These credentials, and those in these folders.
    Granted { keys: Vec<String>, folders: Vec<String> },
}

/// The statement of a list's page: one row, the count of every match and the page as one JSON
/// array (each credential an array of its summary's columns and tags), after the caller's access
/// for [`Readable::IfAdministrator`]. sqlx hands each row of a result across its SQLite worker
/// thread on its own, so a page of 20 rows would cost 20 hand-offs; one row costs one. The
/// database escapes the values, so any text a credential holds survives.
fn page_statement(
    vault: &Vault,
    caller: &Caller,
    input: &models::ListCredentialsInput,
    paging: Paging,
    readable: Readable,
) -> Sql {
    let mut filter = Sql::new("");
    filter.push(" WHERE tenant_id = ?", Arg::text(caller.tenant.clone()));
    let access = match readable {
        Readable::IfAdministrator => {
            filter.args.push(Arg::text(caller.subject.clone()));
            format!("{}, ", crate::rbac::COLUMNS)
        }
        Readable::Granted { .. } => String::new(),
    };
    match input.state.unwrap_or(CredentialStateFilter::Active) {
        CredentialStateFilter::Active => filter.raw(" AND state = 'active'"),
        CredentialStateFilter::Archived => filter.raw(" AND state = 'archived'"),
        CredentialStateFilter::All => &mut filter,
    };
    if let Some(f) = &input.folder_id {
        filter.push(" AND folder_id = ?", Arg::text(f.clone()));
    }
    if let Some(k) = input.kind {
        filter.push(" AND kind = ?", Arg::text(k.as_str()));
    }
    if let Some(q) = &input.q {
        let p = contains_pattern(q);
        filter.push(" AND (LOWER(key) LIKE ? ESCAPE '\\'", Arg::text(p.clone()));
        filter.push(" OR LOWER(COALESCE(description, '')) LIKE ? ESCAPE '\\')", Arg::text(p));
    }
    for tag in input.tag.iter().flatten() {
        filter.push(
            " AND key IN (SELECT key FROM credential_tags WHERE tenant_id = credentials.tenant_id AND tag = ?)",
            Arg::text(tag.clone()),
        );
    }
    match readable {
        // A scalar subquery, which the database evaluates once; SQLite runs an `EXISTS` as a join,
        // one lookup of the role per credential.
        Readable::IfAdministrator => filter.raw(&format!(
            " AND (SELECT role FROM role_assignments WHERE tenant_id = $1 AND user_id = $2) = '{}'",
            TenantRole::Admin.as_str()
        )),
        Readable::Granted { keys, folders } => {
            filter.raw(" AND (");
            filter.push_in("key", &keys);
            filter.raw(" OR");
            filter.push_in("folder_id", &folders);
            filter.raw(")")
        }
    };
    // The page's rows and each one's tags arrive in order, but neither aggregate promises to keep
    // it, and on SQLite an ordered aggregate sorts every group in a temporary b-tree: there the
    // order is restored after reading (`in_order`, and the list's sort by key; SQLite compares
    // text byte by byte, as Rust does). PostgreSQL orders in the aggregates, by its own collation.
    let (aggregate, order, tag_order) = match vault.store.backend() {
        Backend::Sqlite => ("json_group_array(json_array(", "", ""),
        Backend::Postgres => ("json_agg(json_build_array(", " ORDER BY key", " ORDER BY tag"),
    };
    let tags = TAGS.replace("{order}", tag_order);
    let mut page = Sql {
        text: format!(
            "SELECT {access}(SELECT COUNT(*) FROM credentials{0}), (SELECT CAST({aggregate}{SUMMARY_COLUMNS}, tags){order}) AS TEXT) \
             FROM (SELECT {SUMMARY_COLUMNS}, {tags} AS tags FROM credentials{0} ORDER BY key",
            filter.text
        ),
        args: filter.args,
    };
    page.push(" LIMIT ?", Arg::Int(i64::from(paging.per_page)));
    page.push(" OFFSET ?", Arg::Int(paging.offset() as i64));
    page.raw(") AS page)");
    page
}

/// The columns of a credential's summary in a list's page; its tags ([`TAGS`]) follow: what
/// [`Listed`] reads.
const SUMMARY_COLUMNS: &str = "key, kind, folder_id, description, state, current_version, updated_at";

/// One credential of a list's page, as the page's JSON array holds it: key, kind, folder,
/// description, state, current version, last update, tags.
type Listed = (String, String, Option<String>, Option<String>, String, i64, i64, Option<String>);
