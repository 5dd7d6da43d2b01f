//! `specwright-codegen`: the generator for a project outside this workspace. A thin command over
//! `codegen::project`, as `cargo xtask generate` is inside it.
//!
//! ```text
//! specwright-codegen generate --spec spec --out generated          # write generated/src, openapi, mcp
//! specwright-codegen generate --spec spec --out generated --check  # exit 1, listing the differences, when stale
//! specwright-codegen schema > spec/spec.schema.json            # the spec format's JSON Schema
//! specwright-codegen new-service shelf --dir shelf             # a new project: spec/, generated/, src/ (501 stubs)
//! specwright-codegen new-service shop --dir shop --from openapi.yaml   # the same, from an existing API
//! specwright-codegen import openapi.yaml --out spec             # a spec from an OpenAPI document, and a report
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use codegen::project;

#[derive(Debug, Parser)]
#[command(name = "specwright-codegen", version, about = "Generate a Specwright service's code from its spec")]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Generate from every `*.toml` spec of a folder into an output crate folder: its `src/`,
    /// `openapi/` and `mcp/` folders are the generator's (files it no longer produces are
    /// removed); anything else there is left alone.
    Generate {
        /// The spec folder.
        #[arg(long)]
        spec: PathBuf,
        /// The output folder (a crate's root).
        #[arg(long)]
        out: PathBuf,
        /// Write nothing; exit 1 and list the differences when the output folder is not what
        /// generating would write.
        #[arg(long)]
        check: bool,
        /// The rustfmt configuration the Rust files are formatted with (rustfmt's defaults
        /// otherwise).
        #[arg(long)]
        rustfmt_config: Option<PathBuf>,
    },
    /// Print the JSON Schema of the spec format (for editors: `#:schema` in a spec file).
    Schema,
    /// Print every contract change between two spec folders, breaking or compatible; exit 1 when
    /// a breaking one comes without a new major version of its service.
    Diff {
        /// The released spec folder.
        old: PathBuf,
        /// The spec folder to release.
        new: PathBuf,
    },
    /// Write the spec of an existing API from its OpenAPI document (3.0 or 3.1, JSON or YAML),
    /// and report, operation by operation, what was imported exactly, what with a stated
    /// normalisation, and what not (the construct and its JSON pointer). Exits 1, writing
    /// nothing, when something was not imported, unless `--allow-partial`.
    Import {
        /// The OpenAPI document.
        file: PathBuf,
        /// The spec folder to write `{name}.toml` into.
        #[arg(long)]
        out: PathBuf,
        /// The service's snake_case name (from the document's title otherwise).
        #[arg(long)]
        name: Option<String>,
        /// Scopes for operations whose security names no OAuth scope, as `read:write`: `GET`
        /// needs the first, any other method the second (which implies the first).
        #[arg(long, value_name = "READ:WRITE")]
        scope_by_method: Option<String>,
        /// Give every operation that can travel over MCP a tool.
        #[arg(long)]
        mcp: bool,
        /// Give the operations with one of these tags a tool (comma-separated).
        #[arg(long, value_delimiter = ',')]
        mcp_tags: Vec<String>,
        /// Give these operations a tool (comma-separated operation ids).
        #[arg(long, value_delimiter = ',')]
        mcp_ops: Vec<String>,
        /// Write what could be imported even when some operations could not (exit 0).
        #[arg(long)]
        allow_partial: bool,
    },
    /// Start a project of its own for a new service, laid out as a Specwright workspace is: its spec
    /// (`spec/`), the API crate generated from it (`generated/`), an implementation answering 501
    /// until each method is written (`src/`), its binary and its migrations.
    NewService {
        /// The service's snake_case name.
        name: String,
        /// The folder to create (it must not exist, or be empty).
        #[arg(long)]
        dir: PathBuf,
        /// Start from this OpenAPI document (3.0 or 3.1, JSON or YAML) instead of the starter
        /// spec: `import` with the scopes `NAME:read`/`NAME:write` by method where the document
        /// names none, and an MCP tool for every operation.
        #[arg(long, value_name = "OPENAPI_FILE")]
        from: Option<PathBuf>,
        /// With `--from`: leave out what could not be imported (the report says what).
        #[arg(long, requires = "from")]
        allow_partial: bool,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Commands::Generate { spec, out, check, rustfmt_config } => {
            let files = project::render(&spec, &spec.display().to_string(), rustfmt_config.as_deref())?;
            if check {
                let drift = project::Drift::between(&files, &project::existing(&out)?);
                if drift.is_empty() {
                    println!("{} is up to date with {}", out.display(), spec.display());
                    return Ok(ExitCode::SUCCESS);
                }
                eprintln!(
                    "{} is not what {} generates; run `specwright-codegen generate --spec {} --out {}`:\n{drift}",
                    out.display(),
                    spec.display(),
                    spec.display(),
                    out.display()
                );
                return Ok(ExitCode::FAILURE);
            }
            let n = project::write(&out, &files)?;
            println!("generated {n} files into {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Commands::Schema => {
            print!("{}", codegen::spec_schema());
            Ok(ExitCode::SUCCESS)
        }
        Commands::Diff { old, new } => {
            let report = project::diff(&old, &new)?;
            println!("{report}");
            Ok(if report.refused().is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Commands::Import { file, out, name, scope_by_method, mcp, mcp_tags, mcp_ops, allow_partial } => {
            use codegen::import::{self, McpSelection, Options};
            let doc = project::read_openapi(&file)?;
            let scope_by_method = match scope_by_method {
                Some(rule) => Some(split_rule(&rule).ok_or_else(|| {
                    anyhow::anyhow!(
                        "--scope-by-method: write it as READ:WRITE, e.g. `read:write` or `pets:read:pets:write`"
                    )
                })?),
                None => None,
            };
            let mcp = match (mcp, mcp_tags.is_empty(), mcp_ops.is_empty()) {
                (true, _, _) => McpSelection::All,
                (false, false, _) => McpSelection::Tags(mcp_tags),
                (false, true, false) => McpSelection::Operations(mcp_ops),
                (false, true, true) => McpSelection::None,
            };
            let imported =
                import::import(&doc, &Options { name, scope_by_method, mcp, unwritten: false, base_path: None })?;
            print!("{}", imported.report);
            if imported.report.partial() && !allow_partial {
                eprintln!(
                    "not written: some operations could not be imported (see above); --allow-partial writes the rest"
                );
                return Ok(ExitCode::FAILURE);
            }
            std::fs::create_dir_all(&out)?;
            let path = out.join(format!("{}.toml", imported.name));
            std::fs::write(&path, &imported.toml)?;
            println!("wrote {}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Commands::NewService { name, dir, from, allow_partial } => {
            let imported = match &from {
                Some(file) => {
                    let doc = project::read_openapi(file)?;
                    let (toml, report) =
                        codegen::scaffold::import_for(&name, &doc, allow_partial).map_err(anyhow::Error::msg)?;
                    print!("{report}");
                    Some(toml)
                }
                None => None,
            };
            let files = codegen::scaffold::standalone(&name, imported.as_deref()).map_err(anyhow::Error::msg)?;
            if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
                anyhow::bail!("{} is not empty; choose a new folder", dir.display());
            }
            for (path, text) in &files {
                let full = dir.join(path);
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&full, text)?;
            }
            project::generate(&dir.join("spec"), &dir.join("generated"), None)?;
            println!(
                "created the service `{name}` in {}: spec/, generated/ (from the spec: regenerate with \
                 `specwright-codegen generate --spec spec --out generated`), src/; serve it with `cargo run` there, \
                 and write its methods in src/service.rs",
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `READ:WRITE` split at its middle `:`, since scopes may hold `:` themselves
/// (`pets:read:pets:write` is `pets:read` and `pets:write`).
fn split_rule(rule: &str) -> Option<(String, String)> {
    let colons: Vec<usize> = rule.match_indices(':').map(|(i, _)| i).collect();
    if colons.len().is_multiple_of(2) {
        return None;
    }
    let at = colons[colons.len() / 2];
    let (read, write) = (&rule[..at], &rule[at + 1..]);
    (!read.is_empty() && !write.is_empty()).then(|| (read.to_string(), write.to_string()))
}

/// mimalloc rather than glibc's allocator: importing and generating build and drop many small
/// values (JSON, strings, token trees), and glibc's allocator took about a third of an import's
/// time on GitHub's description.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
