//! The `specwright` binary as a user runs it: mint a token, serve, call the API.

mod common;

use std::process::Command;

use common::{BIN, free_port, run_ok, serve};

#[test]
fn token_then_serve_then_a_real_403_and_prm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let common = ["--data-dir", dir.path().to_str().unwrap(), "--addr", &addr];
    let out = Command::new(BIN)
        .arg("token")
        .args(common)
        .args(["--sub", "alice", "--tenant", "acme", "--scope", "vault:read"])
        .output()
        .unwrap();
    assert!(out.status.success(), "token: {}", String::from_utf8_lossy(&out.stderr));
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert_eq!(token.split('.').count(), 3, "a compact JWT: {token}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("signing-key.pem")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the signing key is readable by its owner only");
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let _server = serve(&addr, &common[..2], &dir.path().join("server.log")).await;
        let client = reqwest::Client::new();
        let base = format!("http://{addr}");
        let resp = client.post(format!("{base}/api/v1/credentials")).bearer_auth(&token).json(&serde_json::json!({"key": "k", "value": "v"})).send().await.unwrap();
        assert_eq!(resp.status(), 403);
        assert_eq!(
            resp.headers()["www-authenticate"],
            format!(r#"Bearer error="insufficient_scope", scope="vault:write", resource_metadata="{base}/api/v1/.well-known/oauth-protected-resource""#).as_str()
        );
        let prm: serde_json::Value = client.get(format!("{base}/api/v1/.well-known/oauth-protected-resource")).send().await.unwrap().json().await.unwrap();
        assert_eq!(prm["resource"], format!("{base}/api/v1"));
    });
}

#[test]
fn bad_arguments_are_one_clear_line() {
    let out = Command::new(BIN)
        .args(["token", "--sub", "a", "--tenant", "t", "--scope", "vault:read", "--ttl", "0", "--data-dir"])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "error: --ttl must be a positive number of seconds");
    // A token's tenant follows the rule of `tenant create`, so `specwright token` cannot mint a
    // token for a tenant that cannot exist (the empty name included).
    for tenant in ["", "../../x y<>", &"t".repeat(5000)] {
        let out = Command::new(BIN)
            .args(["token", "--sub", "a", "--scope", "vault:read", "--tenant", tenant, "--data-dir"])
            .arg(tempfile::tempdir().unwrap().path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "tenant {tenant:?} must be refused");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            format!("error: --tenant: {}", runtime::names::TENANT_RULE)
        );
    }
}

#[test]
fn api_token_create_prints_a_token_the_prospector_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let common = ["--data-dir", dir.path().to_str().unwrap(), "--addr", &addr];
    let out = Command::new(BIN)
        .args(["api-token", "create", "--sub", "pat", "--tenant", "acme", "--name", "cli", "--plan", "team"])
        .args(common)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(token.starts_with("prs_"), "{token}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not shown again"));
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let _server = serve(&addr, &common[..2], &dir.path().join("server.log")).await;
        let client = reqwest::Client::new();
        let base = format!("http://{addr}");
        let resp = client.get(format!("{base}/v1/prospector/contracts")).bearer_auth(&token).send().await.unwrap();
        assert_ne!(resp.status(), 401, "the CLI's token authenticates");
        assert_eq!(resp.headers()["x-ratelimit-limit"], "300", "with its Team plan");
    });
}

#[test]
fn users_are_added_from_stdin_sign_in_and_signing_keys_rotate_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let common = ["--data-dir", dir.path().to_str().unwrap(), "--addr", &addr];
    let run = |args: &[&str], stdin: &str| {
        use std::io::Write;
        let mut child = Command::new(BIN)
            .args(args)
            .args(common)
            .env_remove("SPECWRIGHT_USER_PASSWORD")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    };
    let (ok, out) = run(&["user", "add", "alice", "--tenant", "acme"], "correct horse battery\n");
    assert!(!ok && out.contains("there is no tenant acme"), "{out}");
    assert!(run(&["tenant", "create", "acme", "--admin", "alice"], "").0);
    let (ok, out) = run(&["user", "add", "alice", "--tenant", "acme"], "short\n");
    assert!(!ok && out.contains("8 to 1024 characters"), "{out}");
    let (ok, out) = run(&["user", "add", "alice", "--tenant", "acme"], "correct horse battery\n");
    assert!(ok && out.contains("created user alice in tenant acme"), "{out}");
    let (ok, out) = run(&["keys", "rotate-signing"], "");
    assert!(ok && out.contains("new signing key") && out.contains("new ID token key"), "{out}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let _server = serve(&addr, &common[..2], &dir.path().join("server.log")).await;
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let base = format!("http://{addr}");
        let login = |password: &'static str| {
            client
                .post(format!("{base}/login"))
                .form(&[("username", "alice"), ("password", password), ("next", "/console/")])
                .send()
        };
        assert_eq!(login("wrong password").await.unwrap().status(), 401);
        let ok = login("correct horse battery").await.unwrap();
        assert_eq!(ok.status(), 303);
        assert!(ok.headers()["set-cookie"].to_str().unwrap().starts_with("specwright_session="));
        // Both the new and the previous signing key are published, for access tokens (Ed25519)
        // and for ID tokens (RSA) alike.
        let jwks: serde_json::Value =
            client.get(format!("{base}/.well-known/jwks.json")).send().await.unwrap().json().await.unwrap();
        let kinds: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kty"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["OKP", "OKP", "RSA", "RSA"], "{jwks}");
    });
}

/// A data directory of an earlier release: the database file `vault.db`, every table created by
/// the single migration set that release ran (kept in `tests/fixtures/migrations-0.1/`), tracked
/// in `_sqlx_migrations`. This release adopts it: the file is renamed, each owner's migrations
/// find their tables in place, and what was stored is still there.
#[test]
fn a_data_directory_of_an_earlier_release_opens_with_everything_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let legacy = dir.path().join("vault.db");
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        use sqlx::ConnectOptions;
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&legacy).create_if_missing(true);
        let mut conn = options.connect().await.unwrap();
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/migrations-0.1/sqlite");
        sqlx::migrate::Migrator::new(fixtures).await.unwrap().run(&mut conn).await.unwrap();
        sqlx::query("INSERT INTO tenants (id, created_at) VALUES ('acme', 0)").execute(&mut conn).await.unwrap();
        sqlx::query("INSERT INTO role_assignments (tenant_id, user_id, role, assigned_at, assigned_by) VALUES ('acme', 'alice', 'admin', 0, 'setup')")
            .execute(&mut conn)
            .await
            .unwrap();
    });
    let data = dir.path().to_str().unwrap();
    run_ok(&["tenant", "create", "beta", "--admin", "bob", "--data-dir", data]);
    assert!(!legacy.exists() && dir.path().join("specwright.db").exists(), "vault.db is renamed specwright.db");
    // alice, administrator of the earlier release's tenant, is still one: a token of hers lists.
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let token = run_ok(&[
        "token",
        "--sub",
        "alice",
        "--tenant",
        "acme",
        "--scope",
        "vault:admin",
        "--data-dir",
        data,
        "--addr",
        &addr,
    ]);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let _server = serve(&addr, &["--data-dir", data], &dir.path().join("server.log")).await;
        let client = reqwest::Client::new();
        let base = format!("http://{addr}");
        let resp = client
            .get(format!("{base}/api/v1/tenants/acme/role-assignments"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["data"][0]["user_id"], "alice", "{body}");
    });
}

#[test]
fn every_subcommand_prints_the_version() {
    let expected = env!("CARGO_PKG_VERSION");
    for args in [&["--version"][..], &["serve", "--version"], &["keys", "rotate", "--version"], &["token", "--version"]]
    {
        let out = run_ok(args);
        assert!(out.starts_with("specwright") && out.ends_with(expected), "{args:?}: {out}");
    }
}

#[test]
fn completion_scripts_cover_every_subcommand_and_bash_accepts_its_own() {
    for shell in ["bash", "zsh", "fish"] {
        let script = run_ok(&["completions", shell]);
        for word in ["serve", "token", "tenant", "api-token", "rotate-signing", "shutdown-timeout", "log-format"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    let script = run_ok(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("specwright.bash");
    std::fs::write(&path, script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(check.status.success(), "bash -n: {}", String::from_utf8_lossy(&check.stderr));
    let out = Command::new(BIN).args(["completions", "tcsh"]).output().unwrap();
    assert!(!out.status.success(), "an unknown shell is refused");
}

#[test]
fn key_rotation_reports_its_progress_on_stderr_and_its_result_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let data = ["--data-dir", dir.path().to_str().unwrap()];
    run_ok(&[&["tenant", "create", "acme", "--admin", "alice"][..], &data].concat());
    // Each rotation makes a data key, which the next one re-wraps.
    run_ok(&[&["keys", "rotate"][..], &data].concat());
    run_ok(&[&["keys", "rotate"][..], &data].concat());
    let out = Command::new(BIN).args(["keys", "rotate"]).args(data).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let progress: Vec<&str> = stderr.lines().filter(|l| l.starts_with("re-wrapping data keys")).collect();
    let total: usize = progress[0].rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(total, 2, "{stderr}");
    assert_eq!(
        progress,
        [format!("re-wrapping data keys: 0 of {total}"), format!("re-wrapping data keys: {total} of {total}")]
    );
    assert!(stdout.trim().ends_with(&format!("{total} data keys re-wrapped")), "{stdout}");
}
