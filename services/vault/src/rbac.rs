//! RBAC: what a user may do to which credential, from their tenant role and their grants.
//!
//! Deny by default. A tenant `admin` may do everything. Otherwise permissions come from grants:
//! a grant on a credential covers that credential; a grant on a folder covers every credential in
//! it and in its subfolders. `canReveal` and `canStore` each imply `canRead`. Evaluated per
//! request from the database, so a revoked grant takes effect on the very next request.

use std::collections::HashMap;

use generated::vault::models::{Permission, TenantRole};
use sqlx::Row;

use runtime::store::Tx;

/// A set of permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Perms(u8);

impl Perms {
    /// Nothing.
    pub const NONE: Perms = Perms(0);
    /// See and read metadata.
    pub const READ: Perms = Perms(1);
    /// Reveal and lease.
    pub const REVEAL: Perms = Perms(2);
    /// Store, rotate, change, archive, restore.
    pub const STORE: Perms = Perms(4);
    /// Everything.
    pub const ALL: Perms = Perms(7);

    /// Whether every permission of `p` is in `self`.
    pub fn has(self, p: Perms) -> bool {
        self.0 & p.0 == p.0
    }

    fn union(self, p: Perms) -> Perms {
        Perms(self.0 | p.0)
    }

    /// From granted permission names (each implying `canRead`).
    pub fn from_permissions(list: &[Permission]) -> Perms {
        list.iter().fold(Perms::NONE, |acc, p| {
            acc.union(match p {
                Permission::CanRead => Perms::READ,
                Permission::CanReveal => Perms(Perms::READ.0 | Perms::REVEAL.0),
                Permission::CanStore => Perms(Perms::READ.0 | Perms::STORE.0),
            })
        })
    }
}

/// Encodes permissions for storage: comma-separated wire names.
pub fn encode(list: &[Permission]) -> String {
    let mut names: Vec<&str> = list.iter().map(|p| p.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(",")
}

/// Decodes stored permissions.
pub fn decode(s: &str) -> Vec<Permission> {
    s.split(',').filter_map(Permission::parse).collect()
}

/// One user's access within one tenant, loaded for one request.
#[derive(Debug, Clone)]
pub struct Access {
    /// Their tenant role, if any.
    pub role: Option<TenantRole>,
    credential_grants: HashMap<String, Perms>,
    folder_grants: HashMap<String, Perms>,
    /// Folder id → parent id, for inheritance.
    folders: HashMap<String, Option<String>>,
}

impl Access {
    /// Loads `user`'s role and grants in `tenant`.
    pub async fn load(tx: &mut Tx, tenant: &str, user: &str) -> Result<Access, sqlx::Error> {
        let role = sqlx::query("SELECT role FROM role_assignments WHERE tenant_id = $1 AND user_id = $2")
            .bind(tenant)
            .bind(user)
            .fetch_optional(&mut **tx)
            .await?
            .and_then(|r| TenantRole::parse(&r.get::<String, _>(0)));
        let mut access =
            Access { role, credential_grants: HashMap::new(), folder_grants: HashMap::new(), folders: HashMap::new() };
        if access.is_admin() {
            return Ok(access);
        }
        let grants =
            sqlx::query("SELECT target, target_id, permissions FROM grants WHERE tenant_id = $1 AND principal = $2")
                .bind(tenant)
                .bind(user)
                .fetch_all(&mut **tx)
                .await?;
        for g in grants {
            let perms = Perms::from_permissions(&decode(&g.get::<String, _>(2)));
            let map = if g.get::<String, _>(0) == "folder" {
                &mut access.folder_grants
            } else {
                &mut access.credential_grants
            };
            let e = map.entry(g.get(1)).or_default();
            *e = e.union(perms);
        }
        if !access.folder_grants.is_empty() {
            let rows = sqlx::query("SELECT id, parent_id FROM folders WHERE tenant_id = $1")
                .bind(tenant)
                .fetch_all(&mut **tx)
                .await?;
            access.folders = rows.into_iter().map(|r| (r.get(0), r.get(1))).collect();
        }
        Ok(access)
    }

    /// A tenant administrator.
    pub fn is_admin(&self) -> bool {
        self.role == Some(TenantRole::Admin)
    }

    /// May read the audit log.
    pub fn can_audit(&self) -> bool {
        matches!(self.role, Some(TenantRole::Admin | TenantRole::Auditor))
    }

    /// Permissions on a folder (`None` = the root, which only administrators reach).
    pub fn on_folder(&self, folder: Option<&str>) -> Perms {
        if self.is_admin() {
            return Perms::ALL;
        }
        let mut perms = Perms::NONE;
        let mut current = folder.map(str::to_string);
        let mut hops = 0;
        while let Some(id) = current {
            if let Some(p) = self.folder_grants.get(&id) {
                perms = perms.union(*p);
            }
            hops += 1;
            // A cycle cannot be stored, but never loop on bad data.
            if hops > 256 {
                break;
            }
            current = self.folders.get(&id).cloned().flatten();
        }
        perms
    }

    /// Permissions on a credential in `folder`.
    pub fn on_credential(&self, key: &str, folder: Option<&str>) -> Perms {
        if self.is_admin() {
            return Perms::ALL;
        }
        self.credential_grants.get(key).copied().unwrap_or_default().union(self.on_folder(folder))
    }

    /// For non-administrators: credential keys and folder ids whose contents they may read.
    pub fn readable(&self) -> (Vec<String>, Vec<String>) {
        let keys = self.credential_grants.iter().filter(|(_, p)| p.has(Perms::READ)).map(|(k, _)| k.clone()).collect();
        let folders = self.folders.keys().filter(|f| self.on_folder(Some(f)).has(Perms::READ)).cloned().collect();
        (keys, folders)
    }
}
