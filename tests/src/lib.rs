//! End-to-end tests live in tests/tests. This library holds what the test binaries (here and in
//! other packages) share: the table of optional third-party tools, the walk over source files the
//! invariant tests read, and how a server process is started, awaited and stopped.

pub mod process;

/// A third-party tool some suite needs, found through an environment variable that `.ci/run` sets.
#[derive(Debug, Clone, Copy)]
pub struct OptionalTool {
    /// The variable naming the tool's path.
    pub var: &'static str,
    /// What `.ci/run` installs for it.
    pub what: &'static str,
    /// The suite that skips without it.
    pub suite: &'static str,
}

/// Every optional tool of every suite. `common::tool` refuses a variable missing here, so the
/// `skipped_suites` report (which walks this table) names every suite that can skip.
pub const OPTIONAL_TOOLS: &[OptionalTool] = &[
    OptionalTool {
        var: "SPECWRIGHT_OPENAPI_VALIDATOR",
        what: "openapi-spec-validator",
        suite: "OpenAPI documents through openapi-spec-validator (openapi_validator.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_REDOCLY",
        what: "@redocly/cli",
        suite: "OpenAPI documents through redocly lint (openapi_validator.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_SCHEMATHESIS",
        what: "schemathesis",
        suite: "schemathesis against both live services (schemathesis.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_OAS_EXAMPLES",
        what: "the @readme/oas-examples corpus",
        suite: "every corpus document imported, served, checked by conformance and schemathesis (import_served.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_API_CORPUS",
        what: "the public OpenAPI directory (`cargo xtask import-corpus` installs it)",
        suite: "20 APIs of the public OpenAPI directory imported, served, checked by conformance and schemathesis (import_served.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_MCP_PYTHON",
        what: "the Python MCP SDK",
        suite: "MCP end to end with the official Python SDK (mcp_clients.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_OIDC_PYTHON",
        what: "Authlib, an OpenID Connect relying party",
        suite: "OpenID discovery and ID tokens checked by a third-party relying party (oauth.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_JSONSCHEMA_PYTHON",
        what: "Python's jsonschema",
        suite: "every spec file against spec.schema.json, as an editor checks it (spec_files.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_MCP_CONFORMANCE",
        what: "the official MCP conformance suite",
        suite: "the conformance service's, the vault's and notes' MCP endpoints through @modelcontextprotocol/conformance (mcp_conformance.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_MCP_CLIENT_NODE_MODULES",
        what: "the TypeScript MCP client 2.x",
        suite: "MCP sign-in, step-up and both revisions, and notes' resources, prompts, completions and its export as a task, with the official TypeScript client and its tasks package (mcp_clients.rs, notes_mcp_clients.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_MCP_INSPECTOR",
        what: "the MCP Inspector CLI",
        suite: "MCP end to end with the MCP Inspector CLI: tools, notes' resources, prompts and its export as a task (mcp_clients.rs, notes_mcp_clients.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_PLAYWRIGHT_NODE_MODULES",
        what: "playwright-core",
        suite: "the web console in a real browser (console.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_CHROMIUM",
        what: "Debian's chromium",
        suite: "the web console in a real browser (console.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_SDK_DIR",
        what: "the SDKs `cargo xtask sdk` generates",
        suite: "the generated SDKs' smoke programs against a live server (sdk.rs)",
    },
    OptionalTool {
        var: "SPECWRIGHT_SDK_TOOLS",
        what: "the tools `cargo xtask sdk` installs",
        suite: "the generated SDKs' smoke programs against a live server (sdk.rs)",
    },
];

/// The path of a third-party tool `.ci/run` installs and names in `var` (an entry of
/// [`OPTIONAL_TOOLS`]); elsewhere `None`, after printing which suite skips (under
/// `SPECWRIGHT_CI` a missing tool fails instead).
pub fn tool(var: &str) -> Option<String> {
    let entry = OPTIONAL_TOOLS
        .iter()
        .find(|t| t.var == var)
        .unwrap_or_else(|| panic!("{var} is not in tests::OPTIONAL_TOOLS: add it there so the skip report names it"));
    match std::env::var(var) {
        Ok(path) => Some(path),
        Err(_) => {
            assert!(
                std::env::var("SPECWRIGHT_CI").is_err(),
                "SPECWRIGHT_CI is set but {var} is not: .ci/run installs {}",
                entry.what
            );
            eprintln!("SKIPPED ({}): set {var} (.ci/run installs {})", entry.suite, entry.what);
            None
        }
    }
}

/// Every file under `dir` whose extension is one of `extensions`, sorted: the sources the
/// invariant tests read.
pub fn files(dir: &std::path::Path, extensions: &[&str]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| extensions.iter().any(|e| x == *e)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
