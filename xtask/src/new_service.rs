//! `cargo xtask new-service NAME`: a service of this workspace laid out as a user's own is, like
//! notes: its spec (`spec/NAME/NAME.toml`, the starter of [`codegen::scaffold::spec`]), its
//! generated API crate (`generated/NAME/`), its implementation crate (`services/NAME/`: every
//! method answering `501 not_implemented` until written, its migrations and its binary); then the
//! workspace's registration (members and the API crate as a workspace dependency) and a
//! generation.

use std::path::Path;

use anyhow::{Context, Result, bail};
use codegen::scaffold;

/// What `new-service` wrote, for the message that follows it.
#[derive(Debug)]
pub struct Created {
    /// Files written, relative to the workspace root.
    pub files: Vec<String>,
}

/// Lays out service `name` under `root/spec/`, `root/generated/` and `root/services/` and registers it with the workspace at `root`.
pub fn new_service(root: &Path, name: &str) -> Result<Created> {
    new_service_from(root, name, None)
}

/// What [`new_service`] does, starting from `from`, the spec `import` wrote of an existing API
/// ([`scaffold::import_for`]), instead of the starter spec.
pub fn new_service_from(root: &Path, name: &str, from: Option<&str>) -> Result<Created> {
    let crate_name = name.replace('_', "-");
    let api_crate = format!("{crate_name}-api");
    let module = format!("{}::{name}", api_crate.replace('-', "_"));
    let service =
        scaffold::service(name, &crate_name, "../spec.schema.json", &module, from).map_err(anyhow::Error::msg)?;
    for dir in [
        root.join("services").join(name),
        root.join(crate::SPEC_DIR).join(name),
        root.join(crate::GENERATED_DIR).join(name),
    ] {
        if dir.exists() {
            bail!("{} already exists", dir.display());
        }
    }
    let manifest_path = root.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).context("reading the workspace's Cargo.toml")?;
    let taken = |n: &str| manifest.contains(&format!("\n{n} = ")) || manifest.contains(&format!("\"{n}\""));
    if taken(&crate_name) || taken(&api_crate) || root.join(name).exists() {
        bail!("the workspace already has a crate or folder named `{crate_name}`; choose another name");
    }
    let members_start = manifest.find("members = [").context("the workspace's Cargo.toml has no `members = [` list")?;
    let members_end = members_start + manifest[members_start..].find(']').context("unterminated members list")?;
    let deps = manifest
        .find("[workspace.dependencies]\n")
        .context("the workspace's Cargo.toml has no [workspace.dependencies]")?;

    let mut files: Vec<(String, String)> = vec![
        (format!("generated/{name}/Cargo.toml"), api_manifest(name, &api_crate)),
        (format!("services/{name}/Cargo.toml"), implementation_manifest(name, &crate_name, &api_crate)),
    ];
    for (path, text) in service {
        let text = if path.ends_with(".rs") {
            codegen::project::rustfmt(&text, Some(&root.join("rustfmt.toml")))?
        } else {
            text
        };
        // The spec goes to the workspace's spec folder; the rest is the implementation crate's.
        let path = match path.strip_prefix("spec/") {
            Some(spec) => format!("spec/{name}/{spec}"),
            None => format!("services/{name}/{path}"),
        };
        files.push((path, text));
    }

    for (path, text) in &files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().context("a file's folder")?)?;
        std::fs::write(&full, text).with_context(|| format!("writing {}", full.display()))?;
    }
    let mut registered = manifest.clone();
    registered.insert_str(
        deps + "[workspace.dependencies]\n".len(),
        &format!("{api_crate} = {{ path = \"generated/{name}\" }}\n"),
    );
    registered.insert_str(members_end, &format!(", \"services/{name}\", \"generated/{name}\""));
    std::fs::write(&manifest_path, registered).context("registering the service in the workspace's Cargo.toml")?;
    crate::generate(root)?;
    let mut written: Vec<String> = files.into_iter().map(|(p, _)| p).collect();
    written.push(format!("generated/{name}/ (generated)"));
    written.push("Cargo.toml (members, workspace dependency)".into());
    Ok(Created { files: written })
}

fn api_manifest(name: &str, api_crate: &str) -> String {
    format!(
        "[package]\nname = \"{api_crate}\"\ndescription = \"Generated from spec/{name}/ by `cargo xtask generate`. \
         Never edit src/ by hand.\"\nedition.workspace = true\nversion.workspace = true\nlicense.workspace = true\n\
         publish = false\n\n[dependencies]\nsupport.workspace = true\naxum.workspace = true\nserde.workspace = true\n\
         serde_json.workspace = true\nchrono.workspace = true\n\n# The generated models use chrono once the spec has a time or a date.\n\
         [package.metadata.cargo-machete]\nignored = [\"chrono\"]\n"
    )
}

fn implementation_manifest(name: &str, crate_name: &str, api_crate: &str) -> String {
    format!(
        "[package]\nname = \"{crate_name}\"\ndescription = \"The `{name}` service: its implementation over the Specwright \
         platform, and the binary serving it.\"\nedition.workspace = true\nversion.workspace = true\n\
         license.workspace = true\npublish = false\n\n[[bin]]\nname = \"{crate_name}\"\npath = \"src/main.rs\"\n\n\
         [dependencies]\nanyhow.workspace = true\naxum.workspace = true\nconformance.workspace = true\n{api_crate}.workspace = true\n\
         runtime.workspace = true\nsqlx.workspace = true\nsupport.workspace = true\ntokio.workspace = true\n\
         tracing.workspace = true\n"
    )
}
