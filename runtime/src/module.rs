//! [`Module`]: everything a service brings to a binary, registered once. A binary lists its
//! modules in one place; the platform derives from that list what each command needs: the
//! migrations of every service (commands that work on the database without serving), the catalog
//! of resources and scopes (tokens, the conformance kit), the services to serve, and the hooks of
//! platform commands (a new tenant's first administrator).

pub use futures_util::future::BoxFuture;
use support::ServiceInfo;

use crate::api::ServiceApi;
use crate::app::{Platform, ServerBuilder};
use crate::catalog::Catalog;
use crate::store::{Store, Tx};

/// One service, as a binary registers it.
pub trait Module: Send + Sync {
    /// The service's description: its catalog entry (paths, scopes, plans, documents).
    fn info(&self) -> &'static ServiceInfo;

    /// Applies the service's own migrations (its tables beside the platform's).
    fn migrate<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, anyhow::Result<()>>;

    /// Opens the service over `platform`, whose database has every registered service's
    /// migrations applied: the value the server serves.
    fn open<'a>(&'a self, platform: &'a Platform) -> BoxFuture<'a, anyhow::Result<ServiceApi>>;

    /// Called in the transaction that creates tenant `tenant` with its first administrator
    /// `admin` (`tenant create`): what the service keeps per tenant from the start (an access-control
    /// service: the administrator's role). Nothing, by default.
    fn tenant_created<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a str,
        admin: &'a str,
    ) -> BoxFuture<'a, Result<(), sqlx::Error>> {
        let _ = (tx, tenant, admin);
        Box::pin(async { Ok(()) })
    }
}

/// Registered modules, in registration order (the first answers paths no service claims).
pub type Modules = [Box<dyn Module>];

/// The catalog of `modules`' services, in registration order.
pub fn catalog(modules: &Modules) -> Catalog {
    Catalog::new(modules.iter().map(|m| m.info()))
}

/// Applies every module's migrations to `store`, in registration order.
pub async fn migrate(store: &Store, modules: &Modules) -> anyhow::Result<()> {
    for m in modules {
        m.migrate(store).await?;
    }
    Ok(())
}

/// Creates tenant `tenant` with its first administrator `admin` in one transaction: the
/// platform's tenant row, then what each module keeps for a new tenant. Fails, changing nothing,
/// when a name breaks its rule or the tenant exists.
pub async fn create_tenant(store: &Store, modules: &Modules, tenant: &str, admin: &str) -> anyhow::Result<()> {
    if !crate::names::tenant_ok(tenant) {
        anyhow::bail!("{}", crate::names::TENANT_RULE);
    }
    if !crate::names::user_ok(admin) {
        anyhow::bail!("{}", crate::names::USER_RULE);
    }
    let mut tx = store.begin().await?;
    crate::tenants::create(&mut tx, tenant).await?;
    for m in modules {
        m.tenant_created(&mut tx, tenant, admin).await?;
    }
    tx.commit().await?;
    Ok(())
}

impl ServerBuilder {
    /// Registers every module, in order: their migrations applied to the platform's database,
    /// then each opened and registered as by [`ServerBuilder::service`].
    pub async fn modules(mut self, modules: &Modules) -> anyhow::Result<Self> {
        migrate(&self.platform().store, modules).await?;
        for m in modules {
            let api = m.open(self.platform()).await?;
            self = self.service(api);
        }
        Ok(self)
    }
}
