//! Three `specwright serve` processes sharing one Redis: one Starter token's 180 requests spread
//! over all three, in parallel, get at most 60 successes. Skipped (with a notice) without Redis;
//! required under `SPECWRIGHT_CI=1`.

mod common;

use std::time::Duration;

use common::{run_ok, serve};

fn redis_url() -> Option<String> {
    let url = std::env::var("REDIS_URL_TEST").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let addr = url.trim_start_matches("redis://").split('/').next().unwrap_or("127.0.0.1:6379").to_string();
    if std::net::TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_secs(2)).is_ok() {
        Some(url)
    } else {
        assert!(std::env::var("SPECWRIGHT_CI").is_err(), "SPECWRIGHT_CI is set but Redis is unreachable at {url}");
        eprintln!("SKIPPED (Redis): no server at {url}");
        None
    }
}

#[test]
fn three_processes_sharing_redis_admit_at_most_the_plan() {
    let Some(redis) = redis_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ports: Vec<u16> =
        (0..3).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    // One data directory (shared key and database) and one public URL, so one token works on all.
    let public = format!("http://127.0.0.1:{}", ports[0]);
    let data = dir.path().to_str().unwrap().to_string();
    let token = run_ok(&[
        "token",
        "--data-dir",
        &data,
        "--public-url",
        &public,
        "--sub",
        "p",
        "--tenant",
        "t",
        "--scope",
        "prospector",
        "--plan",
        "starter",
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ok = rt.block_on(async {
        let mut servers = Vec::new();
        for (i, p) in ports.iter().enumerate() {
            let addr = format!("127.0.0.1:{p}");
            let args: [&str; 8] =
                ["--data-dir", &data, "--public-url", &public, "--redis-url", &redis, "--replicas", "3"];
            servers.push(serve(&addr, &args, &dir.path().join(format!("server{i}.log"))).await);
        }
        let client = reqwest::Client::new();
        let handles: Vec<_> = (0..180)
            .map(|i| {
                let (client, token, port) = (client.clone(), token.clone(), ports[i % 3]);
                tokio::spawn(async move {
                    client
                        .get(format!("http://127.0.0.1:{port}/v1/prospector/leads"))
                        .bearer_auth(token)
                        .send()
                        .await
                        .unwrap()
                        .status()
                        .as_u16()
                })
            })
            .collect();
        let mut admitted = 0;
        let mut refused = 0;
        for h in handles {
            match h.await.unwrap() {
                429 => refused += 1,
                _ => admitted += 1,
            }
        }
        (admitted, refused)
    });
    assert!(ok.0 <= 60, "at most 60 admitted across three processes, got {ok:?}");
    assert!(ok.0 >= 55, "the shared limit is used, not split three ways: {ok:?}");
    assert_eq!(ok.0 + ok.1, 180);
}
