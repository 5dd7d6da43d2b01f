//! Tags: labels on credentials. Renaming or merging touches every credential carrying the tag,
//! so it needs `canStore` on each of them (administrators always have it). Pruning removes tags
//! no active credential carries and is for administrators.

use runtime::Context;
use sqlx::Row;
use support::{InternalError, Operation, Paged, Paging, Problem};
use vault_api::vault::errors;
use vault_api::vault::models::{self, PruneReport, Tag};

use crate::problems::not_found;
use crate::rbac::{Access, Perms};
use crate::state::Vault;
use runtime::OperationFault;
use runtime::sql::{Arg, Sql};
use runtime::store::Tx;

/// Credentials (key, folder) carrying any of `tags`.
async fn carriers(tx: &mut Tx, tenant: &str, tags: &[String]) -> Result<Vec<(String, Option<String>)>, sqlx::Error> {
    let mut sql = Sql::new(
        "SELECT DISTINCT c.key, c.folder_id FROM credentials c JOIN credential_tags t ON t.tenant_id = c.tenant_id AND t.key = c.key WHERE c.tenant_id = $1 AND",
    );
    sql.args.push(Arg::text(tenant.to_string()));
    sql.push_in("t.tag", tags);
    Ok(sql.query().fetch_all(&mut **tx).await?.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

async fn exists(tx: &mut Tx, tenant: &str, tag: &str) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query("SELECT 1 FROM tags WHERE tenant_id = $1 AND name = $2")
        .bind(tenant)
        .bind(tag)
        .fetch_optional(&mut **tx)
        .await?
        .is_some())
}

async fn count(tx: &mut Tx, tenant: &str, tag: &str) -> Result<i64, sqlx::Error> {
    Ok(sqlx::query("SELECT COUNT(*) FROM credential_tags WHERE tenant_id = $1 AND tag = $2")
        .bind(tenant)
        .bind(tag)
        .fetch_one(&mut **tx)
        .await?
        .get(0))
}

/// Whether the caller may retag every carrier: `Err(None)` when they can read none of them (the
/// tag is invisible to them), `Err(Some(problem))` when they lack `canStore` on one. Only readable
/// credentials are ever named.
fn check_carriers(access: &Access, tag: &str, carriers: &[(String, Option<String>)]) -> Result<(), Option<Problem>> {
    let perms: Vec<(&String, Perms)> =
        carriers.iter().map(|(k, f)| (k, access.on_credential(k, f.as_deref()))).collect();
    if !carriers.is_empty() && !access.is_admin() && perms.iter().all(|(_, p)| !p.has(Perms::READ)) {
        return Err(None);
    }
    match perms.iter().find(|(_, p)| !p.has(Perms::STORE)) {
        None => Ok(()),
        Some((k, p)) => {
            let whom = if p.has(Perms::READ) {
                format!("you lack it on {k}")
            } else {
                "you lack it on some of them".to_string()
            };
            Err(Some(
                Problem::new(format!("You need canStore on every credential carrying tag {tag}; {whom}."))
                    .with("required_permission", "canStore"),
            ))
        }
    }
}

/// Whether the tag a retag moves onto may already exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Onto {
    /// A merge: the target may exist.
    Any,
    /// A rename: the new name must be free, also against a rename to it made at the same time
    /// (the unique key then answers the operation's conflict, as the earlier check does).
    New,
}

/// Moves every `from` tag onto `to` (creating it), then deletes the `from` tags.
async fn retag<E: InternalError>(
    tx: &mut Tx,
    op: &Operation,
    tenant: &str,
    from: &[String],
    to: &str,
    onto: Onto,
) -> Result<(), E> {
    let q = |e| op.fault::<E>("retagging", e);
    let create = match onto {
        Onto::New if !from.iter().any(|f| f == to) => "INSERT INTO tags (tenant_id, name) VALUES ($1, $2)",
        _ => "INSERT INTO tags (tenant_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING",
    };
    sqlx::query(create).bind(tenant).bind(to).execute(&mut **tx).await.map_err(q)?;
    for f in from.iter().filter(|f| f.as_str() != to) {
        sqlx::query("INSERT INTO credential_tags (tenant_id, key, tag) SELECT tenant_id, key, $3 FROM credential_tags WHERE tenant_id = $1 AND tag = $2 ON CONFLICT DO NOTHING")
            .bind(tenant)
            .bind(f)
            .bind(to)
            .execute(&mut **tx)
            .await
            .map_err(q)?;
        for sql in [
            "DELETE FROM credential_tags WHERE tenant_id = $1 AND tag = $2",
            "DELETE FROM tags WHERE tenant_id = $1 AND name = $2",
        ] {
            sqlx::query(sql).bind(tenant).bind(f).execute(&mut **tx).await.map_err(q)?;
        }
    }
    Ok(())
}

pub(super) async fn list(
    vault: &Vault,
    cx: &mut Context,
    input: models::ListTagsInput,
    paging: Paging,
) -> Result<Paged<Tag>, errors::ListTagsError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::ListTagsError>().await?;
    let access = vault.access(tx, op, caller).await?;
    let rows = sqlx::query("SELECT t.tag, c.key, c.folder_id FROM credential_tags t JOIN credentials c ON c.tenant_id = t.tenant_id AND c.key = t.key WHERE t.tenant_id = $1")
        .bind(&caller.tenant)
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| op.fault("listing tags", e))?;
    let mut counts: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for r in rows {
        let (tag, key, folder): (String, String, Option<String>) = (r.get(0), r.get(1), r.get(2));
        if access.on_credential(&key, folder.as_deref()).has(Perms::READ) {
            *counts.entry(tag).or_default() += 1;
        }
    }
    if access.is_admin() {
        // Administrators also see tags no credential carries any more (until pruned).
        let all = sqlx::query("SELECT name FROM tags WHERE tenant_id = $1")
            .bind(&caller.tenant)
            .fetch_all(&mut **tx)
            .await
            .map_err(|e| op.fault("listing tags", e))?;
        for r in all {
            counts.entry(r.get(0)).or_default();
        }
    }
    let all: Vec<Tag> = counts
        .into_iter()
        .filter(|(name, _)| input.prefix.as_ref().is_none_or(|p| name.starts_with(p.as_str())))
        .map(|(name, credential_count)| Tag { name, credential_count })
        .collect();
    let total = all.len() as u64;
    Ok(Paged { items: all.into_iter().skip(paging.offset() as usize).take(paging.per_page as usize).collect(), total })
}

pub(super) async fn rename(
    vault: &Vault,
    cx: &mut Context,
    input: models::RenameTagInput,
) -> Result<Tag, errors::RenameTagError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::RenameTagError>().await?;
    use errors::RenameTagError as E;
    let access = vault.access(tx, op, caller).await?;
    if !exists(tx, &caller.tenant, &input.name).await.map_err(|e| op.fault("loading a tag", e))? {
        return Err(E::ResourceNotFound(not_found("tag", &input.name)));
    }
    if input.new_name != input.name
        && exists(tx, &caller.tenant, &input.new_name).await.map_err(|e| op.fault("loading a tag", e))?
    {
        return Err(E::ResourceConflict(
            Problem::new(format!("Tag {} already exists; merge the tags instead.", input.new_name))
                .with("name", input.new_name.clone()),
        ));
    }
    let holders = carriers(tx, &caller.tenant, std::slice::from_ref(&input.name))
        .await
        .map_err(|e| op.fault("loading carriers", e))?;
    match check_carriers(&access, &input.name, &holders) {
        Ok(()) => {}
        Err(None) => return Err(E::ResourceNotFound(not_found("tag", &input.name))),
        Err(Some(p)) => return Err(E::AuthForbidden(p)),
    }
    retag(tx, op, &caller.tenant, std::slice::from_ref(&input.name), &input.new_name, Onto::New).await?;
    let credential_count = count(tx, &caller.tenant, &input.new_name).await.map_err(|e| op.fault("counting", e))?;
    Ok(Tag { name: input.new_name, credential_count })
}

pub(super) async fn merge(
    vault: &Vault,
    cx: &mut Context,
    input: models::MergeTagsInput,
) -> Result<Tag, errors::MergeTagsError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::MergeTagsError>().await?;
    use errors::MergeTagsError as E;
    let access = vault.access(tx, op, caller).await?;
    for s in &input.sources {
        if !exists(tx, &caller.tenant, s).await.map_err(|e| op.fault("loading a tag", e))? {
            return Err(E::ResourceNotFound(not_found("tag", s)));
        }
    }
    for source in &input.sources {
        let holders = carriers(tx, &caller.tenant, std::slice::from_ref(source))
            .await
            .map_err(|e| op.fault("loading carriers", e))?;
        match check_carriers(&access, source, &holders) {
            Ok(()) => {}
            Err(None) => return Err(E::ResourceNotFound(not_found("tag", source))),
            Err(Some(p)) => return Err(E::AuthForbidden(p)),
        }
    }
    retag(tx, op, &caller.tenant, &input.sources, &input.target, Onto::Any).await?;
    let credential_count = count(tx, &caller.tenant, &input.target).await.map_err(|e| op.fault("counting", e))?;
    Ok(Tag { name: input.target, credential_count })
}

pub(super) async fn prune(
    vault: &Vault,
    cx: &mut Context,
    input: models::PruneTagsInput,
) -> Result<PruneReport, errors::PruneTagsError> {
    let op = cx.op;
    let (tx, caller, targets) = cx.parts::<errors::PruneTagsError>().await?;
    use errors::PruneTagsError as E;
    let access = vault.access(tx, op, caller).await?;
    if !access.is_admin() {
        return Err(E::AuthForbidden(
            Problem::new("Only tenant administrators prune tags.").with("required_role", "admin"),
        ));
    }
    let rows = sqlx::query(
        "SELECT name FROM tags WHERE tenant_id = $1 AND name NOT IN \
         (SELECT t.tag FROM credential_tags t JOIN credentials c ON c.tenant_id = t.tenant_id AND c.key = t.key WHERE t.tenant_id = $1 AND c.state = 'active') ORDER BY name",
    )
    .bind(&caller.tenant)
    .fetch_all(&mut **tx)
    .await
    .map_err(|e| op.fault("finding unused tags", e))?;
    let removed: Vec<String> = rows.into_iter().map(|r| r.get(0)).collect();
    let dry_run = input.dry_run.unwrap_or(false);
    if !dry_run {
        for tag in &removed {
            for sql in [
                "DELETE FROM credential_tags WHERE tenant_id = $1 AND tag = $2",
                "DELETE FROM tags WHERE tenant_id = $1 AND name = $2",
            ] {
                sqlx::query(sql)
                    .bind(&caller.tenant)
                    .bind(tag)
                    .execute(&mut **tx)
                    .await
                    .map_err(|e| op.fault("pruning", e))?;
            }
        }
        targets.extend(removed.iter().cloned());
    }
    Ok(PruneReport { removed, dry_run })
}
