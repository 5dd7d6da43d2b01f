//! `cargo xtask <task>`: developer tasks for this workspace.

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask generate [--check]

  generate          regenerate every service's API crate from its spec (spec/NAME/ →
                    generated/NAME/) and spec/spec.schema.json
  spec-diff [OLD NEW]
                    every contract change between two spec folders (default: each service's spec/NAME/released/ → spec/NAME/),
                    breaking or compatible; fails when a breaking one comes without a new major
                    version of its service
  new-service NAME [--from OPENAPI_FILE [--allow-partial]]
                    start a service as a user's own: spec/NAME/ (the starter, or imported from an
                    OpenAPI document), generated/NAME/, services/NAME/ (the implementation, every
                    method answering 501 until written), migrations and binary, registered in the
                    workspace
  generate --check  fail, listing the files, when the committed output is not what the spec generates
  validate PATH     check a spec file, or every spec of a folder, and print every problem
  bench-generate    time generation (median of 11 runs) and count generated lines per operation
  sdk [--out DIR] [rust|python|typescript]...
                    generate client SDKs of the vault and the prospector from their generated/NAME/openapi/ (default: all
                    three languages into target/sdk/)
  import-corpus [--every N] [--no-github] [--only TEXT] [--timeout SECONDS] [--out FILE] [--min-exact SHARE]
                    import every API of the public OpenAPI directory and GitHub's description
                    (pinned npm packages, installed under target/corpus), generate each and compare
                    its operations with the source's; prints the shares and what still fails,
                    worst first (--every N: every Nth API only)
  bench [POSTGRES_URL]
                    axum hello-world, the hand-written reference (xtask/bench/reference) and the
                    generated vault routes in one run, with their ratios; then three runs against
                    the team's rusqlite anchor ($SPECWRIGHT_PERF_ANCHOR, default ../shared/perf)
                    when it is there (needs wrk)";

/// `cargo xtask sdk [--out DIR] [LANGUAGE]...`
fn sdk(root: &std::path::Path, args: &[&str]) -> anyhow::Result<bool> {
    let mut out = root.join("target/sdk");
    let mut languages = Vec::new();
    let mut args = args.iter();
    while let Some(a) = args.next() {
        match *a {
            "--out" => {
                out =
                    args.next().map(std::path::PathBuf::from).ok_or_else(|| anyhow::anyhow!("--out needs a folder"))?
            }
            name => languages.push(
                xtask::sdk::Language::parse(name)
                    .ok_or_else(|| anyhow::anyhow!("unknown language {name}; choose rust, python or typescript"))?,
            ),
        }
    }
    if languages.is_empty() {
        languages = xtask::sdk::Language::ALL.to_vec();
    }
    for (lang, took) in xtask::sdk::generate(root, &out, &languages)? {
        println!("{:<11} {:>6.1} s  {}", lang.name(), took.as_secs_f64(), out.join(lang.name()).display());
    }
    Ok(true)
}

/// `cargo xtask validate PATH`: a spec file, or every `*.toml` of a folder, each with every problem.
fn validate(path: &str) -> anyhow::Result<bool> {
    let texts = if std::path::Path::new(path).is_dir() {
        codegen::project::spec_texts(std::path::Path::new(path), path)?
    } else {
        vec![(path.to_string(), std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("reading {path}: {e}"))?)]
    };
    let mut valid = true;
    for (file, text) in &texts {
        match codegen::load(file, text) {
            Ok(api) => println!("{file}: valid ({} operations)", api.operations.len()),
            Err(e) => {
                eprintln!("{e}");
                valid = false;
            }
        }
    }
    Ok(valid)
}

/// `cargo xtask spec-diff OLD NEW`: every contract change between two spec folders; fails when a
/// breaking one comes without a new major version of its service.
fn spec_diff(old: &std::path::Path, new: &std::path::Path) -> anyhow::Result<bool> {
    let report = codegen::project::diff(old, new)?;
    println!("{report}");
    Ok(report.refused().is_empty())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = xtask::workspace_root();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["generate"] => xtask::generate(&root).map(|n| {
            println!("generated {n} files");
            true
        }),
        ["generate", "--check"] => xtask::check(&root).map(|drift| {
            if drift.is_empty() {
                println!("every generated folder is up to date with its spec");
                true
            } else {
                eprintln!("generated output is out of date with its spec; run `cargo xtask generate`:\n{drift}");
                false
            }
        }),
        ["validate", path] => validate(path),
        ["new-service", name, rest @ ..] => new_service(&root, name, rest).map(|created| {
            println!("created the service `{name}`:");
            for f in &created.files {
                println!("  {f}");
            }
            println!(
                "next: write its methods in services/{name}/src/service.rs, change spec/{name}/{name}.toml and \
                 run `cargo xtask generate`; serve it with `cargo run -p {}`",
                name.replace('_', "-")
            );
            true
        }),
        ["spec-diff"] => xtask::projects(&root)
            .into_iter()
            .map(|(spec, _)| root.join(spec))
            .filter(|spec| spec.join("released").is_dir())
            .try_fold(true, |ok, spec| Ok(spec_diff(&spec.join("released"), &spec)? && ok)),
        ["spec-diff", old, new] => spec_diff(old.as_ref(), new.as_ref()),
        ["bench-generate"] => xtask::bench_generate(&root, 11).map(|report| {
            println!("{report}");
            true
        }),
        ["sdk", rest @ ..] => sdk(&root, rest),
        ["import-corpus", "--one", file] => xtask::import_corpus::one(file.as_ref()).map(|result| {
            println!("{result}");
            true
        }),
        ["import-corpus", rest @ ..] => import_corpus(&root, rest),
        ["bench", rest @ ..] => std::process::Command::new("bash")
            .arg(root.join("xtask/bench/bench.sh"))
            .args(rest.iter().copied())
            .status()
            .map(|s| s.success())
            .map_err(anyhow::Error::from),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask import-corpus [OPTIONS]`.
fn import_corpus(root: &std::path::Path, args: &[&str]) -> anyhow::Result<bool> {
    let mut run = xtask::import_corpus::Run {
        every: 1,
        github: true,
        only: None,
        timeout: std::time::Duration::from_secs(600),
        out: None,
        min_exact: None,
    };
    let mut args = args.iter().copied();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| anyhow::anyhow!("{flag} needs a value"));
        match flag {
            "--every" => run.every = value()?.parse::<usize>()?.max(1),
            "--no-github" => run.github = false,
            "--only" => run.only = Some(value()?.to_string()),
            "--timeout" => run.timeout = std::time::Duration::from_secs(value()?.parse()?),
            "--out" => run.out = Some(value()?.into()),
            "--min-exact" => run.min_exact = Some(value()?.parse()?),
            other => anyhow::bail!("import-corpus: unknown option {other}"),
        }
    }
    xtask::import_corpus::run(root, &run)
}

/// `new-service NAME [--from OPENAPI_FILE [--allow-partial]]`.
fn new_service(root: &std::path::Path, name: &str, rest: &[&str]) -> anyhow::Result<xtask::new_service::Created> {
    let (file, allow_partial) = match rest {
        [] => return xtask::new_service::new_service(root, name),
        ["--from", file] => (file, false),
        ["--from", file, "--allow-partial"] | ["--allow-partial", "--from", file] => (file, true),
        _ => anyhow::bail!("usage: cargo xtask new-service NAME [--from OPENAPI_FILE [--allow-partial]]"),
    };
    let doc = codegen::project::read_openapi(std::path::Path::new(file))?;
    let (toml, report) = codegen::scaffold::import_for(name, &doc, allow_partial).map_err(anyhow::Error::msg)?;
    print!("{report}");
    xtask::new_service::new_service_from(root, name, Some(&toml))
}

/// mimalloc rather than glibc's allocator: importing and generating build and drop many small
/// values (JSON, strings, token trees), and glibc's allocator took about a third of an import's
/// time on GitHub's description.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
