//! [`Module`]: everything a service brings to a binary, registered once. A binary lists its
//! modules in one place; the platform derives from that list what each command needs: the
//! migrations of every service (commands that work on the database without serving), the catalog
//! of resources and scopes (tokens, the conformance kit), the services to serve, the hooks of
//! platform commands (a new tenant's first administrator), and each service's own subcommands of
//! the binary's command line ([`CommandLine`]).

pub use futures_util::future::BoxFuture;
use support::ServiceInfo;

use crate::api::ServiceApi;
use crate::app::{Platform, ServerBuilder};
use crate::catalog::Catalog;
use crate::config::Config;
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

    /// The service's own subcommands of the binary's command line (`keys rotate` of a service
    /// that encrypts, `api-token create` of one that issues tokens), as top-level commands: one
    /// named like a group the binary or an earlier module already has adds its subcommands to
    /// that group. The binary adds its common arguments (data directory, database) to every leaf
    /// and runs a leaf with [`Module::run_command`]. None, by default.
    fn commands(&self) -> Vec<clap::Command> {
        Vec::new()
    }

    /// Runs the leaf command `path` (names from the top, `["keys", "rotate"]`) of
    /// [`Module::commands`] with its parsed `args`, over the binary's migrated database.
    fn run_command<'a>(
        &'a self,
        path: &'a [String],
        args: &'a clap::ArgMatches,
        cx: CommandContext<'a>,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        let _ = (args, cx);
        Box::pin(async move { anyhow::bail!("`{}` is not a command of this service", path.join(" ")) })
    }
}

/// What a module's command runs with.
#[derive(Clone, Copy)]
pub struct CommandContext<'a> {
    /// The database, every registered module's migrations applied.
    pub store: &'a Store,
    /// The platform's settings (the data directory holds the keys).
    pub config: &'a Config,
}

/// A binary's command line with every module's subcommands merged in, and which module runs each.
pub struct CommandLine {
    /// The whole command line, for parsing and for shell completions.
    pub command: clap::Command,
    /// The leaf commands the modules brought: (path from the top, index of the module).
    owners: Vec<(Vec<String>, usize)>,
}

impl CommandLine {
    /// Merges the [`Module::commands`] of `modules` into `root`, in registration order, each leaf
    /// given the binary's common arguments by `leaf_args`.
    pub fn new(root: clap::Command, modules: &Modules, leaf_args: impl Fn(clap::Command) -> clap::Command) -> Self {
        let mut owners = Vec::new();
        let mut command = root;
        for (index, module) in modules.iter().enumerate() {
            let mut merging = Merging { path: Vec::new(), index, owners: &mut owners, leaf_args: &leaf_args };
            for brought in module.commands() {
                command = merging.merge(command, brought);
            }
        }
        CommandLine { command, owners }
    }

    /// The module whose leaf command `matches` selects: its index, the leaf's path and its
    /// arguments. `None` for the binary's own commands.
    pub fn owner<'m>(&self, matches: &'m clap::ArgMatches) -> Option<(usize, Vec<String>, &'m clap::ArgMatches)> {
        let (mut path, mut leaf) = (Vec::new(), matches);
        while let Some((name, sub)) = leaf.subcommand() {
            path.push(name.to_string());
            leaf = sub;
        }
        self.owners.iter().find(|(p, _)| *p == path).map(|(_, index)| (*index, path, leaf))
    }
}

/// One module's commands being merged into a command line.
struct Merging<'a, F> {
    /// Where the merge is, from the top.
    path: Vec<String>,
    /// The module's index.
    index: usize,
    /// Every module leaf so far, with its module.
    owners: &'a mut Vec<(Vec<String>, usize)>,
    /// What gives a leaf the binary's common arguments.
    leaf_args: &'a F,
}

impl<F: Fn(clap::Command) -> clap::Command> Merging<'_, F> {
    /// `parent` with `command` added under it: merged into a subcommand of the same name when
    /// there is one.
    fn merge(&mut self, parent: clap::Command, command: clap::Command) -> clap::Command {
        let name = command.get_name().to_string();
        self.path.push(name.clone());
        let parent = if parent.find_subcommand(&name).is_some() {
            let children: Vec<clap::Command> = command.get_subcommands().cloned().collect();
            parent.mut_subcommand(&name, |group| {
                children.into_iter().fold(group, |group, child| self.merge(group, child))
            })
        } else {
            parent.subcommand(self.adopt(command))
        };
        self.path.pop();
        parent
    }

    /// `command`, new to the line, with its leaves given the common arguments and recorded.
    fn adopt(&mut self, command: clap::Command) -> clap::Command {
        if !command.has_subcommands() {
            self.owners.push((self.path.clone(), self.index));
            return (self.leaf_args)(command);
        }
        let children: Vec<String> = command.get_subcommands().map(|c| c.get_name().to_string()).collect();
        let group = children.into_iter().fold(command, |group, name| {
            self.path.push(name.clone());
            let group = group.mut_subcommand(&name, |child| self.adopt(child));
            self.path.pop();
            group
        });
        group.subcommand_required(true)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with commands only: one merged into the binary's `keys` group, one group of its own.
    struct Commands;

    impl Module for Commands {
        fn info(&self) -> &'static ServiceInfo {
            unreachable!("the command line never reads the catalog")
        }
        fn migrate<'a>(&'a self, _: &'a Store) -> BoxFuture<'a, anyhow::Result<()>> {
            Box::pin(async { Ok(()) })
        }
        fn open<'a>(&'a self, _: &'a Platform) -> BoxFuture<'a, anyhow::Result<ServiceApi>> {
            Box::pin(async { anyhow::bail!("not served") })
        }
        fn commands(&self) -> Vec<clap::Command> {
            vec![
                clap::Command::new("keys").subcommand(clap::Command::new("rotate").about("New data key")),
                clap::Command::new("api-token")
                    .about("Manage tokens")
                    .subcommand(clap::Command::new("create").arg(clap::Arg::new("name").long("name").required(true))),
            ]
        }
    }

    fn line() -> CommandLine {
        let root = clap::Command::new("app").subcommand(clap::Command::new("serve")).subcommand(
            clap::Command::new("keys").subcommand_required(true).subcommand(clap::Command::new("rotate-signing")),
        );
        let modules: Vec<Box<dyn Module>> = vec![Box::new(Commands)];
        CommandLine::new(root, &modules, |leaf| leaf.arg(clap::Arg::new("data-dir").long("data-dir")))
    }

    #[test]
    fn a_module_command_joins_the_binary_group_of_its_name_or_stands_as_its_own() {
        let line = line();
        let keys = line.command.find_subcommand("keys").unwrap();
        let names: Vec<_> = keys.get_subcommands().map(|c| c.get_name()).collect();
        assert_eq!(names, ["rotate-signing", "rotate"]);
        let matches = line.command.clone().try_get_matches_from(["app", "keys", "rotate", "--data-dir", "/d"]).unwrap();
        let (index, path, leaf) = line.owner(&matches).expect("the module's leaf");
        assert_eq!((index, path), (0, vec!["keys".to_string(), "rotate".to_string()]));
        assert_eq!(leaf.get_one::<String>("data-dir").map(String::as_str), Some("/d"), "the binary's arguments");

        let matches =
            line.command.clone().try_get_matches_from(["app", "api-token", "create", "--name", "ci"]).unwrap();
        let (_, path, leaf) = line.owner(&matches).unwrap();
        assert_eq!(path, ["api-token", "create"]);
        assert_eq!(leaf.get_one::<String>("name").map(String::as_str), Some("ci"));
    }

    #[test]
    fn the_binary_keeps_its_own_commands_and_a_module_group_needs_its_leaf() {
        let line = line();
        let matches = line.command.clone().try_get_matches_from(["app", "keys", "rotate-signing"]).unwrap();
        assert!(line.owner(&matches).is_none(), "the binary's own command");
        let matches = line.command.clone().try_get_matches_from(["app", "serve"]).unwrap();
        assert!(line.owner(&matches).is_none());
        assert!(
            line.command.clone().try_get_matches_from(["app", "api-token"]).is_err(),
            "a group alone is no command"
        );
        assert!(
            line.command.clone().try_get_matches_from(["app", "api-token", "create"]).is_err(),
            "--name is required"
        );
    }
}
