//! The vault's state, which every resource's operations share: the store, the keyring sealing
//! secrets at rest and the lease policy, and the caller's access (RBAC) as a read of it.

use std::sync::Arc;

use support::{InternalError, Operation};

use runtime::OperationFault;
use runtime::caller::Caller;
use runtime::store::{Store, Tx};

use crate::crypto::Keyring;
use crate::rbac::Access;

/// Lease lifetimes.
#[derive(Debug, Clone, Copy)]
pub struct LeasePolicy {
    /// TTL when the request gives none, in seconds.
    pub default_ttl: i64,
    /// Largest TTL granted, in seconds; longer requests are capped.
    pub max_ttl: i64,
}

impl Default for LeasePolicy {
    fn default() -> Self {
        LeasePolicy { default_ttl: 300, max_ttl: 3600 }
    }
}

impl LeasePolicy {
    /// The default policy capped at `max_ttl` seconds (1 to 86,400): the command line's
    /// `--max-lease-ttl`.
    pub fn capped(max_ttl: &str) -> Result<Self, String> {
        let max_ttl: i64 = max_ttl.parse().map_err(|_| format!("`{max_ttl}` is not a number of seconds"))?;
        if !(1..=86_400).contains(&max_ttl) {
            return Err(format!("{max_ttl} is not in 1..=86400"));
        }
        let default = LeasePolicy::default();
        Ok(LeasePolicy { max_ttl, default_ttl: default.default_ttl.min(max_ttl) })
    }
}

/// The vault.
#[derive(Debug, Clone)]
pub struct Vault {
    pub(crate) store: Store,
    pub(crate) keyring: Arc<Keyring>,
    pub(crate) leases: LeasePolicy,
}

impl Vault {
    /// A vault over `store`, sealing with `keyring`.
    pub fn new(store: Store, keyring: Arc<Keyring>, leases: LeasePolicy) -> Self {
        Vault { store, keyring, leases }
    }

    /// [`Vault::open`] over a database whose migrations are applied (as a registered module's is).
    pub(crate) async fn open_migrated(platform: &runtime::Platform, leases: LeasePolicy) -> anyhow::Result<Self> {
        let source = crate::crypto::master_key_source(&platform.config.data_dir)?;
        let keyring = Arc::new(Keyring::load(&platform.store, source).await?);
        Ok(Vault::new(platform.store.clone(), keyring, leases))
    }

    /// The caller's grants and roles, read in the operation's transaction.
    pub(crate) async fn access<E: InternalError>(
        &self,
        tx: &mut Tx,
        op: &Operation,
        caller: &Caller,
    ) -> Result<Access, E> {
        Access::load(tx, &caller.tenant, &caller.subject).await.map_err(|e| op.fault("loading grants", e))
    }
}
