//! The `specwright` binary as a user runs it: mint a token, serve, call the API.

mod common;

use std::process::Command;

use common::{BIN, Servers, free_port, serve, wait_healthy};

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

    let _server = Servers(vec![serve(&common)]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = reqwest::Client::new();
        let base = format!("http://{addr}");
        wait_healthy(&client, &base).await;
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
    let _server = Servers(vec![serve(&common)]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = reqwest::Client::new();
        let base = format!("http://{addr}");
        wait_healthy(&client, &base).await;
        let resp = client.get(format!("{base}/v1/prospector/contracts")).bearer_auth(&token).send().await.unwrap();
        assert_ne!(resp.status(), 401, "the CLI's token authenticates");
        assert_eq!(resp.headers()["x-ratelimit-limit"], "300", "with its Team plan");
    });
}
