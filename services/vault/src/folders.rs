//! Folders: a tree per tenant. Every member of a tenant sees the folder tree (names are not
//! secret); creating under a folder, renaming, moving and deleting need `canStore` on it, and the
//! top level belongs to administrators. A non-empty folder is never deleted.

use runtime::Context;
use std::collections::HashMap;

use sqlx::Row;
use support::{Paged, Paging, Problem};
use vault_api::vault::errors;
use vault_api::vault::models::{self, Folder};

use crate::problems::{forbidden, not_found};
use crate::rbac::{Access, Perms};
use crate::state::Vault;
use runtime::OperationFault;
use runtime::store::{Nullable, Tx, now_ms, to_time};

#[derive(Debug, Clone)]
struct Node {
    name: String,
    parent: Option<String>,
    created_at: i64,
    updated_at: i64,
}

async fn tree(tx: &mut Tx, tenant: &str) -> Result<HashMap<String, Node>, sqlx::Error> {
    let rows = sqlx::query("SELECT id, name, parent_id, created_at, updated_at FROM folders WHERE tenant_id = $1")
        .bind(tenant)
        .fetch_all(&mut **tx)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.get(0), Node { name: r.get(1), parent: r.get(2), created_at: r.get(3), updated_at: r.get(4) }))
        .collect())
}

fn path_of(tree: &HashMap<String, Node>, id: &str) -> String {
    let mut parts = Vec::new();
    let mut current = Some(id.to_string());
    while let Some(c) = current {
        let Some(n) = tree.get(&c) else { break };
        parts.push(n.name.clone());
        if parts.len() > 256 {
            break;
        }
        current = n.parent.clone();
    }
    parts.reverse();
    format!("/{}", parts.join("/"))
}

/// Credentials per folder that `access` may read (all of them for administrators).
async fn counts(tx: &mut Tx, tenant: &str, access: &Access) -> Result<HashMap<String, i64>, sqlx::Error> {
    let rows = sqlx::query("SELECT key, folder_id FROM credentials WHERE tenant_id = $1 AND folder_id IS NOT NULL")
        .bind(tenant)
        .fetch_all(&mut **tx)
        .await?;
    let mut out: HashMap<String, i64> = HashMap::new();
    for r in rows {
        let (key, folder): (String, String) = (r.get(0), r.get(1));
        if access.on_credential(&key, Some(&folder)).has(Perms::READ) {
            *out.entry(folder).or_default() += 1;
        }
    }
    Ok(out)
}

fn view(tree: &HashMap<String, Node>, counts: &HashMap<String, i64>, id: &str) -> Option<Folder> {
    let n = tree.get(id)?;
    Some(Folder {
        id: id.to_string(),
        name: n.name.clone(),
        parent_id: n.parent.clone(),
        path: path_of(tree, id),
        credential_count: counts.get(id).copied().unwrap_or(0),
        created_at: to_time(n.created_at),
        updated_at: to_time(n.updated_at),
    })
}

async fn one<E: support::InternalError>(
    tx: &mut Tx,
    op: &support::Operation,
    tenant: &str,
    access: &Access,
    id: &str,
) -> Result<Option<Folder>, E> {
    let t = tree(tx, tenant).await.map_err(|e| op.fault("loading folders", e))?;
    let c = counts(tx, tenant, access).await.map_err(|e| op.fault("counting credentials", e))?;
    Ok(view(&t, &c, id))
}

/// The tenant's folder tree, read after this transaction has taken its turn with every other
/// change of the tree (`runtime::tenants::take_turn`): a change decided on it (a move that must
/// not close a cycle, a delete of an empty folder, a new folder under a parent) cannot be decided
/// on a tree that a concurrent change is altering.
async fn tree_for_change<E: support::InternalError>(
    tx: &mut Tx,
    op: &support::Operation,
    tenant: &str,
) -> Result<HashMap<String, Node>, E> {
    runtime::tenants::take_turn(tx, tenant).await.map_err(|e| op.fault("taking its turn", e))?;
    tree(tx, tenant).await.map_err(|e| op.fault("loading folders", e))
}

fn sibling_taken(tree: &HashMap<String, Node>, parent: Option<&str>, name: &str, except: Option<&str>) -> bool {
    tree.iter().any(|(id, n)| n.parent.as_deref() == parent && n.name == name && Some(id.as_str()) != except)
}

pub(super) async fn list(
    vault: &Vault,
    cx: &mut Context,
    input: models::ListFoldersInput,
    paging: Paging,
) -> Result<Paged<Folder>, errors::ListFoldersError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::ListFoldersError>().await?;
    let access = vault.access(tx, op, caller).await?;
    let t = tree(tx, &caller.tenant).await.map_err(|e| op.fault("loading folders", e))?;
    let c = counts(tx, &caller.tenant, &access).await.map_err(|e| op.fault("counting credentials", e))?;
    let mut all: Vec<Folder> = t
        .iter()
        .filter(|(_, n)| input.parent_id.as_ref().is_none_or(|p| n.parent.as_ref() == Some(p)))
        .filter_map(|(id, _)| view(&t, &c, id))
        .collect();
    all.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.id.cmp(&b.id)));
    let total = all.len() as u64;
    let items = all.into_iter().skip(paging.offset() as usize).take(paging.per_page as usize).collect();
    Ok(Paged { items, total })
}

pub(super) async fn create(
    vault: &Vault,
    cx: &mut Context,
    input: models::CreateFolderInput,
) -> Result<Folder, errors::CreateFolderError> {
    let op = cx.op;
    let (tx, caller, targets) = cx.parts::<errors::CreateFolderError>().await?;
    use errors::CreateFolderError as E;
    let access = vault.access(tx, op, caller).await?;
    let t = tree_for_change(tx, op, &caller.tenant).await?;
    match &input.parent_id {
        Some(p) if !t.contains_key(p) => return Err(E::ResourceNotFound(not_found("folder", p))),
        Some(p) if !access.on_folder(Some(p)).has(Perms::STORE) => {
            return Err(E::AuthForbidden(forbidden("canStore", &format!("folder {p}"))));
        }
        None if !access.is_admin() => {
            return Err(E::AuthForbidden(
                Problem::new("Only tenant administrators create top-level folders.").with("required_role", "admin"),
            ));
        }
        _ => {}
    }
    if sibling_taken(&t, input.parent_id.as_deref(), &input.name, None) {
        return Err(E::ResourceConflict(
            Problem::new(format!("A folder named {} already exists there.", input.name))
                .with("name", input.name.clone()),
        ));
    }
    let id = format!("fld_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let now = now_ms();
    sqlx::query(
        "INSERT INTO folders (tenant_id, id, name, parent_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)",
    )
    .bind(&caller.tenant)
    .bind(&id)
    .bind(&input.name)
    .bind(Nullable(input.parent_id.as_deref()))
    .bind(now)
    .execute(&mut **tx)
    .await
    .map_err(|e| op.fault("inserting a folder", e))?;
    targets.push(id.clone());
    one(tx, op, &caller.tenant, &access, &id).await?.ok_or_else(|| op.fault("reloading", "row vanished"))
}

pub(super) async fn update(
    vault: &Vault,
    cx: &mut Context,
    input: models::UpdateFolderInput,
) -> Result<Folder, errors::UpdateFolderError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::UpdateFolderError>().await?;
    use errors::UpdateFolderError as E;
    let access = vault.access(tx, op, caller).await?;
    let t = tree_for_change(tx, op, &caller.tenant).await?;
    let node = t.get(&input.id).cloned().ok_or_else(|| E::ResourceNotFound(not_found("folder", &input.id)))?;
    if !access.on_folder(Some(&input.id)).has(Perms::STORE) {
        return Err(E::AuthForbidden(forbidden("canStore", &format!("folder {}", input.id))));
    }
    let parent = match &input.parent_id {
        None => node.parent.clone(),
        Some(None) if !access.is_admin() => {
            return Err(E::AuthForbidden(
                Problem::new("Only tenant administrators move folders to the top level.")
                    .with("required_role", "admin"),
            ));
        }
        Some(None) => None,
        Some(Some(p)) => {
            if !t.contains_key(p) {
                return Err(E::ResourceNotFound(not_found("folder", p)));
            }
            if !access.on_folder(Some(p)).has(Perms::STORE) {
                return Err(E::AuthForbidden(forbidden("canStore", &format!("folder {p}"))));
            }
            // Refuse moving a folder into itself or one of its descendants.
            let mut cur = Some(p.clone());
            while let Some(c) = cur {
                if c == input.id {
                    return Err(E::ResourceConflict(
                        Problem::new("A folder cannot move into itself or one of its subfolders.")
                            .with("parent_id", p.clone()),
                    ));
                }
                cur = t.get(&c).and_then(|n| n.parent.clone());
            }
            Some(p.clone())
        }
    };
    let name = input.name.clone().unwrap_or(node.name.clone());
    if sibling_taken(&t, parent.as_deref(), &name, Some(&input.id)) {
        return Err(E::ResourceConflict(
            Problem::new(format!("A folder named {name} already exists there.")).with("name", name),
        ));
    }
    sqlx::query("UPDATE folders SET name = $1, parent_id = $2, updated_at = $3 WHERE tenant_id = $4 AND id = $5")
        .bind(&name)
        .bind(Nullable(parent.as_deref()))
        .bind(now_ms())
        .bind(&caller.tenant)
        .bind(&input.id)
        .execute(&mut **tx)
        .await
        .map_err(|e| op.fault("updating a folder", e))?;
    one(tx, op, &caller.tenant, &access, &input.id).await?.ok_or_else(|| op.fault("reloading", "row vanished"))
}

pub(super) async fn delete(
    vault: &Vault,
    cx: &mut Context,
    input: models::DeleteFolderInput,
) -> Result<(), errors::DeleteFolderError> {
    let op = cx.op;
    let (tx, caller, _) = cx.parts::<errors::DeleteFolderError>().await?;
    use errors::DeleteFolderError as E;
    let access = vault.access(tx, op, caller).await?;
    let t = tree_for_change(tx, op, &caller.tenant).await?;
    let Some(node) = t.get(&input.id) else {
        return Err(E::ResourceNotFound(not_found("folder", &input.id)));
    };
    if !access.on_folder(Some(&input.id)).has(Perms::STORE) {
        return Err(E::AuthForbidden(forbidden("canStore", &format!("folder {}", input.id))));
    }
    if node.parent.is_none() && !access.is_admin() {
        return Err(E::AuthForbidden(
            Problem::new("Only tenant administrators delete top-level folders.").with("required_role", "admin"),
        ));
    }
    // Credentials and grants are put in a folder holding its row (`credentials::hold_folder`),
    // not the tree's turn: hold it too, so the count below sees every one committed before.
    crate::credentials::hold_folder(tx, &caller.tenant, &input.id)
        .await
        .map_err(|e| op.fault("holding the folder", e))?;
    let children = t.values().filter(|n| n.parent.as_deref() == Some(input.id.as_str())).count();
    let credentials: i64 = sqlx::query("SELECT COUNT(*) FROM credentials WHERE tenant_id = $1 AND folder_id = $2")
        .bind(&caller.tenant)
        .bind(&input.id)
        .fetch_one(&mut **tx)
        .await
        .map_err(|e| op.fault("counting credentials", e))?
        .get(0);
    if children > 0 || credentials > 0 {
        return Err(E::FolderNotEmpty(
            Problem::new(format!(
                "Folder {} holds {credentials} credentials and {children} subfolders; move or delete them first.",
                input.id
            ))
            .with("credentials", credentials)
            .with("subfolders", children),
        ));
    }
    for sql in [
        "DELETE FROM grants WHERE tenant_id = $1 AND target = 'folder' AND target_id = $2",
        "DELETE FROM folders WHERE tenant_id = $1 AND id = $2",
    ] {
        sqlx::query(sql)
            .bind(&caller.tenant)
            .bind(&input.id)
            .execute(&mut **tx)
            .await
            .map_err(|e| op.fault("deleting a folder", e))?;
    }
    Ok(())
}
