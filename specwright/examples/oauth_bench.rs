//! The embedded authorization server under load, over real HTTP on loopback.
//!
//! `cargo run --release -p specwright --example oauth_bench`
//!
//! Starts the server in process (SQLite in a temporary folder), creates a tenant and a user,
//! registers a client, then times: a password check (`POST /login`, argon2id), the complete
//! authorization-code flow (authorize with a remembered consent → code → token), refresh-token
//! rotations with 8 clients at once, and the same vault read authenticated by a session cookie and
//! by a Bearer token (4 clients each). Prints one line per measurement.

use std::time::{Duration, Instant};

use base64::Engine;
use sha2::Digest;

const PASSWORD: &str = "correct horse battery";

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

fn report(name: &str, mut samples: Vec<Duration>, wall: Duration) {
    samples.sort();
    println!(
        "{name:<44} n={:<6} {:>8.1}/s  p50 {:>7.2} ms  p99 {:>7.2} ms",
        samples.len(),
        samples.len() as f64 / wall.as_secs_f64(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.99)
    );
}

fn pkce() -> (String, String) {
    let verifier = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

fn query_param(url: &str, name: &str) -> String {
    reqwest::Url::parse(url).unwrap().query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned()).unwrap()
}

/// A `POST /oauth/token` with `form`; the JSON answer.
async fn token_request(http: &reqwest::Client, base: &str, form: &[(&str, &str)]) -> serde_json::Value {
    http.post(format!("{base}/oauth/token")).form(form).send().await.unwrap().json().await.unwrap()
}

/// Runs `job` from `clients` tasks until `total` runs are done; returns each run's time and the wall time.
async fn concurrently<F, Fut>(clients: usize, total: usize, job: F) -> (Vec<Duration>, Duration)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let job = std::sync::Arc::new(job);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (job, next) = (job.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    return times;
                }
                let t = Instant::now();
                job(i).await;
                times.push(t.elapsed());
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    (all, start.elapsed())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let state = runtime::Platform::open(runtime::Config::new(addr, None, dir.path().to_path_buf())).await?;
    specwright::create_tenant(&state.store, "acme", "alice").await?;
    runtime::oauth::users::add(&state.store, "alice", "acme", PASSWORD).await?;
    let app = specwright::app(&state, &specwright::Settings::default()).await?;
    tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>()).await.unwrap()
    });
    let base = format!("http://{addr}");
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
    let callback = "http://127.0.0.1:53682/callback";
    let client: serde_json::Value = http
        .post(format!("{base}/oauth/register"))
        .json(&serde_json::json!({ "redirect_uris": [callback] }))
        .send()
        .await?
        .json()
        .await?;
    let client_id = client["client_id"].as_str().unwrap().to_string();

    // 1. Password checks (argon2id, default parameters: 19 MiB, 2 passes).
    let login = |http: reqwest::Client, base: String| async move {
        let resp = http
            .post(format!("{base}/login"))
            .form(&[("username", "alice"), ("password", PASSWORD), ("next", "/console/")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 303);
        resp.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string()
    };
    let (times, wall) = {
        let (http, base) = (http.clone(), base.clone());
        concurrently(1, 50, move |_| {
            let f = login(http.clone(), base.clone());
            async move {
                f.await;
            }
        })
        .await
    };
    report("sign-in (argon2id check), 1 client", times, wall);
    let cookie = login(http.clone(), base.clone()).await;

    // Consent once, so the flow below is the remembered-consent path a returning client takes.
    let authorize_url = {
        let (client_id, base) = (client_id.clone(), base.clone());
        move |challenge: &str| {
            let params = [
                ("response_type", "code"),
                ("client_id", client_id.as_str()),
                ("redirect_uri", callback),
                ("scope", "vault:read"),
                ("state", "s"),
                ("code_challenge", challenge),
                ("code_challenge_method", "S256"),
            ];
            format!("{base}/oauth/authorize?{}", serde_urlencoded::to_string(params).unwrap())
        }
    };
    let (_, challenge) = pkce();
    let page = http.get(authorize_url(&challenge)).header("cookie", &cookie).send().await?.text().await?;
    let csrf = page.split("name=\"csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    let mut form: Vec<(String, String)> =
        reqwest::Url::parse(&authorize_url(&challenge))?.query_pairs().into_owned().collect();
    form.push(("csrf".into(), csrf));
    form.push(("decision".into(), "approve".into()));
    let approved = http.post(format!("{base}/oauth/authorize")).header("cookie", &cookie).form(&form).send().await?;
    assert_eq!(approved.status(), 303);

    // 2. The whole code flow: authorize (consent remembered) → code → token.
    let flow = {
        let (http, base, cookie, client_id) = (http.clone(), base.clone(), cookie.clone(), client_id.clone());
        let authorize_url = authorize_url.clone();
        move || {
            let (http, base, cookie, client_id) = (http.clone(), base.clone(), cookie.clone(), client_id.clone());
            let (verifier, challenge) = pkce();
            let url = authorize_url(&challenge);
            async move {
                let resp = http.get(url).header("cookie", &cookie).send().await.unwrap();
                assert_eq!(resp.status(), 302);
                let code = query_param(resp.headers()["location"].to_str().unwrap(), "code");
                token_request(
                    &http,
                    &base,
                    &[
                        ("grant_type", "authorization_code"),
                        ("code", code.as_str()),
                        ("redirect_uri", callback),
                        ("client_id", client_id.as_str()),
                        ("code_verifier", verifier.as_str()),
                    ],
                )
                .await
            }
        }
    };
    let flow = std::sync::Arc::new(flow);
    let (times, wall) = {
        let flow = flow.clone();
        concurrently(1, 300, move |_| {
            let f = flow();
            async move {
                assert!(f.await["access_token"].is_string());
            }
        })
        .await
    };
    report("authorization-code flow (2 requests), 1 client", times, wall);

    // 3. Refresh rotation, 8 clients, each rotating its own chain.
    let mut chains = Vec::new();
    for _ in 0..8 {
        chains.push(tokio::sync::Mutex::new(flow().await["refresh_token"].as_str().unwrap().to_string()));
    }
    let chains = std::sync::Arc::new(chains);
    let (times, wall) = {
        let (http, base, client_id) = (http.clone(), base.clone(), client_id.clone());
        concurrently(8, 2000, move |i| {
            let (http, base, client_id, chains) = (http.clone(), base.clone(), client_id.clone(), chains.clone());
            async move {
                let mut token = chains[i % 8].lock().await;
                let resp = token_request(
                    &http,
                    &base,
                    &[
                        ("grant_type", "refresh_token"),
                        ("refresh_token", token.as_str()),
                        ("client_id", client_id.as_str()),
                    ],
                )
                .await;
                *token = resp["refresh_token"].as_str().expect("rotated").to_string();
            }
        })
        .await
    };
    report("refresh-token rotation, 8 clients", times, wall);

    // 4. The same read by session cookie and by Bearer token.
    let bearer = flow().await["access_token"].as_str().unwrap().to_string();
    for (name, header, value) in [
        ("GET /api/v1/credentials, session cookie, 4 clients", "cookie", cookie.clone()),
        ("GET /api/v1/credentials, Bearer JWT, 4 clients", "authorization", format!("Bearer {bearer}")),
    ] {
        let (http, base) = (http.clone(), base.clone());
        let (times, wall) = concurrently(4, 4000, move |_| {
            let rb = http.get(format!("{base}/api/v1/credentials")).header(header, value.clone());
            async move {
                assert_eq!(rb.send().await.unwrap().status(), 200);
            }
        })
        .await;
        report(name, times, wall);
    }
    Ok(())
}
