//! `specwright-codegen`: the generator for a project outside this workspace. A thin command over
//! `codegen::project`, as `cargo xtask generate` is inside it.
//!
//! ```text
//! specwright-codegen generate --spec spec --out api            # write api/src, api/openapi, api/mcp
//! specwright-codegen generate --spec spec --out api --check    # exit 1, listing the differences, when stale
//! specwright-codegen schema > spec/spec.schema.json            # the spec format's JSON Schema
//! specwright-codegen new-service shelf --dir shelf             # a new project: spec, build.rs, 501 stubs
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
    /// Start a project of its own for a new service: its spec, a crate generating its API in
    /// build.rs, an implementation answering 501 until each method is written, its binary and its
    /// migrations.
    NewService {
        /// The service's snake_case name.
        name: String,
        /// The folder to create (it must not exist, or be empty).
        #[arg(long)]
        dir: PathBuf,
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
        Commands::NewService { name, dir } => {
            let files = codegen::scaffold::standalone(&name).map_err(anyhow::Error::msg)?;
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
            println!(
                "created the service `{name}` in {}; serve it with `cargo run` there, and write its methods in src/lib.rs",
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
