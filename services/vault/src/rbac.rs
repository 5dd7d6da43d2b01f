//! RBAC: what a user may do to which credential, from their tenant role and their grants.
//!
//! Deny by default. A tenant `admin` may do everything. Otherwise permissions come from grants:
//! a grant on a credential covers that credential; a grant on a folder covers every credential in
//! it and in its subfolders. `canReveal` and `canStore` each imply `canRead`. Evaluated per
//! request from the database, so a revoked grant takes effect on the very next request.

use std::collections::HashMap;

use sqlx::Row;
use sqlx::any::AnyRow;
use vault_api::vault::models::{Permission, TenantRole};

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

/// Separates the fields of one grant or folder in [`COLUMNS`] (a control character no id holds).
const FIELD: char = '\u{1f}';
/// Separates the grants, or the folders, in [`COLUMNS`].
const RECORD: char = '\u{1e}';

/// A user's access as three columns of any statement, over `$1` (the tenant) and `$2` (the
/// user), so it can be read with what it decides on, in one snapshot: their role; their grants
/// (`target`, id and permissions, joined by [`FIELD`], one per [`RECORD`]); and when they hold a
/// folder grant, the tenant's folders (id and parent), for inheritance. An administrator's
/// grants and folders are not read ([`Access::from_row`]).
pub const COLUMNS: &str = "(SELECT role FROM role_assignments WHERE tenant_id = $1 AND user_id = $2), \
    (SELECT string_agg(g.target || '\u{1f}' || g.target_id || '\u{1f}' || g.permissions, '\u{1e}') \
     FROM grants AS g WHERE g.tenant_id = $1 AND g.principal = $2), \
    (SELECT string_agg(f.id || '\u{1f}' || COALESCE(f.parent_id, ''), '\u{1e}') FROM folders AS f \
     WHERE f.tenant_id = $1 AND EXISTS (SELECT 1 FROM grants AS g WHERE g.tenant_id = $1 AND g.principal = $2 \
     AND g.target = 'folder'))";

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
    /// Loads `user`'s role and grants in `tenant`, in one statement.
    pub async fn load(tx: &mut Tx, tenant: &str, user: &str) -> Result<Access, sqlx::Error> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS}")))
            .bind(tenant)
            .bind(user)
            .fetch_one(&mut **tx)
            .await?;
        Ok(Access::from_row(&row, 0))
    }

    /// The access held by [`COLUMNS`] at `at`, `at + 1` and `at + 2` of `row`.
    pub fn from_row(row: &AnyRow, at: usize) -> Access {
        let role = row.get::<Option<String>, _>(at).and_then(|r| TenantRole::parse(&r));
        let mut access =
            Access { role, credential_grants: HashMap::new(), folder_grants: HashMap::new(), folders: HashMap::new() };
        if access.is_admin() {
            return access;
        }
        let fields = |record: &str| {
            let mut f = record.split(FIELD);
            [f.next().unwrap_or_default(), f.next().unwrap_or_default(), f.next().unwrap_or_default()]
                .map(str::to_string)
        };
        let grants = row.get::<Option<String>, _>(at + 1).unwrap_or_default();
        for [target, id, permissions] in grants.split(RECORD).filter(|g| !g.is_empty()).map(fields) {
            let perms = Perms::from_permissions(&decode(&permissions));
            let map = if target == "folder" { &mut access.folder_grants } else { &mut access.credential_grants };
            let e = map.entry(id).or_default();
            *e = e.union(perms);
        }
        if let Some(folders) = row.get::<Option<String>, _>(at + 2) {
            for record in folders.split(RECORD) {
                let [id, parent, _] = fields(record);
                access.folders.insert(id, Some(parent).filter(|p| !p.is_empty()));
            }
        }
        access
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
