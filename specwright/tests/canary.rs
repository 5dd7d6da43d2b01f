//! A canary secret stored through the API must appear in reveal and lease-redeem responses only:
//! never in the database files, the server's logs (at trace level), audit rows, error bodies or
//! any other response.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{BIN, Process};
use serde_json::{Value, json};

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn the_canary_secret_appears_only_in_reveal_and_redeem_responses() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let common = ["--data-dir", data.to_str().unwrap(), "--addr", &addr];
    let ok = |args: &[&str]| {
        let out = Command::new(BIN).args(args).args(common).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    ok(&["tenant", "create", "acme", "--admin", "alice"]);
    let token = ok(&["token", "--sub", "alice", "--tenant", "acme", "--scope", "vault:admin"]);
    let log_path = dir.path().join("server.log");
    let mut serve = Command::new(BIN);
    serve.arg("serve").args(common).env("RUST_LOG", "trace");

    let canary = format!("CANARY-{}", uuid_like());
    let canary2 = format!("CANARY2-{}", uuid_like());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (revealed, others) = rt.block_on(async {
        let _server = Process::start(serve, &addr, &log_path).await;
        let client = reqwest::Client::new();
        let base = format!("http://{addr}");
        let call = |method: &'static str, path: String, body: Option<Value>| {
            let client = client.clone();
            let (base, token) = (base.clone(), token.clone());
            async move {
                let mut rb = client
                    .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), format!("{base}{path}"))
                    .bearer_auth(token);
                if let Some(b) = body {
                    rb = rb.json(&b);
                }
                let r = rb.send().await.unwrap();
                (r.status().as_u16(), r.text().await.unwrap())
            }
        };
        let mut others: Vec<(String, u16, String)> = Vec::new();
        let mut keep = |what: &str, (s, t): (u16, String)| {
            others.push((what.to_string(), s, t.clone()));
            t
        };
        let folder: Value = serde_json::from_str(&keep(
            "create folder",
            call("POST", "/api/v1/folders".into(), Some(json!({"name": "f"}))).await,
        ))
        .unwrap();
        let folder = folder["data"]["id"].as_str().unwrap().to_string();
        keep(
            "store",
            call(
                "POST",
                "/api/v1/credentials".into(),
                Some(json!({"key": "db", "value": canary, "folder_id": folder, "tags": ["t"]})),
            )
            .await,
        );
        keep(
            "store again (conflict)",
            call(
                "POST",
                "/api/v1/credentials".into(),
                Some(json!({"key": "db", "value": canary, "folder_id": folder})),
            )
            .await,
        );
        keep(
            "store oversized",
            call(
                "POST",
                "/api/v1/credentials".into(),
                Some(json!({"key": "big", "value": format!("{canary}{}", "x".repeat(70_000)), "folder_id": folder})),
            )
            .await,
        );
        keep(
            "store with unknown field",
            call("POST", "/api/v1/credentials".into(), Some(json!({"key": "u", "value": canary, "nope": 1}))).await,
        );
        keep("get", call("GET", "/api/v1/credentials/db".into(), None).await);
        keep("list", call("GET", "/api/v1/credentials".into(), None).await);
        keep("update", call("PATCH", "/api/v1/credentials/db".into(), Some(json!({"description": "d"}))).await);
        keep("rotate", call("POST", "/api/v1/credentials/db/rotate".into(), Some(json!({"value": canary2}))).await);
        keep(
            "rotate stale",
            call(
                "POST",
                "/api/v1/credentials/db/rotate".into(),
                Some(json!({"value": canary2, "expected_version": 1})),
            )
            .await,
        );
        let lease: Value = serde_json::from_str(&keep(
            "lease",
            call("POST", "/api/v1/leases".into(), Some(json!({"credential_key": "db", "version": 1}))).await,
        ))
        .unwrap();
        keep("list leases", call("GET", "/api/v1/leases".into(), None).await);
        let mut revealed =
            vec![call("POST", "/api/v1/credentials/db/reveal".into(), Some(json!({"version": 1}))).await.1];
        revealed
            .push(call("POST", "/api/v1/leases/read".into(), Some(json!({"lease_id": lease["data"]["id"]}))).await.1);
        keep(
            "redeem again",
            call("POST", "/api/v1/leases/read".into(), Some(json!({"lease_id": lease["data"]["id"]}))).await,
        );
        keep("archive", call("POST", "/api/v1/credentials/db/archive".into(), None).await);
        keep("reveal archived", call("POST", "/api/v1/credentials/db/reveal".into(), Some(json!({}))).await);
        keep("tags", call("GET", "/api/v1/tags".into(), None).await);
        keep("audit", call("GET", "/api/v1/audit?per_page=100".into(), None).await);
        (revealed, others)
    });
    assert!(revealed[0].contains(&canary), "the reveal response carries the secret: {}", revealed[0]);
    assert!(revealed[1].contains(&canary), "the redeem response carries the secret: {}", revealed[1]);
    for (what, status, body) in &others {
        for c in [&canary, &canary2] {
            assert!(!body.contains(c.as_str()), "{what} ({status}) leaked the canary: {body}");
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut files = vec![log_path];
    files.extend(std::fs::read_dir(&data).unwrap().map(|e| e.unwrap().path()));
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        for c in [&canary, &canary2] {
            assert!(!contains(&bytes, c), "{} contains the canary", f.display());
        }
        assert!(!contains(&bytes, &token), "{} contains the bearer token", f.display());
    }
}

fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    format!("{:x}{:x}", SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos(), std::process::id())
}
