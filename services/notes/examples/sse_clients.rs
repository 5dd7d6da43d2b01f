//! Load for the change stream: N clients of one tenant hold `GET /notes/changes` open on a
//! running notes server while one writer creates notes; prints, per run, how long each change
//! took to reach every client (p50, p99, max over all deliveries) and the server's memory.
//!
//! ```sh
//! cargo build --release -p notes --example sse_clients
//! bash xtask/bench/sse.sh            # starts the server, runs 1 client then 1,000
//! ```
//!
//! Arguments: `URL DATA_DIR SERVER_PID CLIENTS CHANGES`. Tokens are minted with the data
//! directory's key, one per client (each its own rate-limit bucket).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

fn rss_kb(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field)?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, data_dir, pid, clients, changes] = args.as_slice() else {
        anyhow::bail!("usage: sse_clients URL DATA_DIR SERVER_PID CLIENTS CHANGES");
    };
    let (clients, changes): (usize, usize) = (clients.parse()?, changes.parse()?);
    let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse()?;
    let config = runtime::Config::new(addr, None, data_dir.into());
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir)?;
    let audience = runtime::Catalog::new([&notes::SERVICE]).resources(&config);
    let tenant = format!("sse-{}", uuid::Uuid::now_v7().simple());
    let token = |sub: &str| {
        keys.mint(&runtime::keys::claims(&config.issuer(), sub, &tenant, "notes:write", audience.clone(), 3600, None))
    };
    let idle = rss_kb(pid, "VmRSS:");
    // Arrival times of each change's event, per change seq.
    let arrivals: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
    let (ready_tx, mut ready) = tokio::sync::mpsc::channel::<()>(clients);
    let http = reqwest::Client::builder().pool_max_idle_per_host(0).build()?;
    for n in 0..clients {
        let (http, arrivals, ready_tx) = (http.clone(), arrivals.clone(), ready_tx.clone());
        let (url, token) = (format!("{url}/api/v1/notes/changes"), token(&format!("client-{n}"))?);
        tokio::spawn(async move {
            let mut resp = match http.get(&url).bearer_auth(token).send().await {
                Ok(r) if r.status() == 200 => r,
                Ok(r) => panic!("stream answered {}", r.status()),
                Err(e) => panic!("stream: {e}"),
            };
            let _ = ready_tx.send(()).await;
            let mut text = String::new();
            while let Ok(Some(chunk)) = resp.chunk().await {
                text.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = text.find("\n\n") {
                    let block: String = text.drain(..end + 2).collect();
                    if let Some(id) = block.lines().find_map(|l| l.strip_prefix("id: ")) {
                        arrivals.lock().await.push((id.parse().unwrap_or(0), Instant::now()));
                    }
                }
            }
        });
    }
    drop(ready_tx);
    for _ in 0..clients {
        ready.recv().await;
    }
    let open = rss_kb(pid, "VmRSS:");
    let writer = token("writer")?;
    let mut sent = Vec::new();
    for n in 0..changes {
        let started = Instant::now();
        let resp = http
            .post(format!("{url}/api/v1/notes"))
            .bearer_auth(&writer)
            .json(&serde_json::json!({"title": format!("change {n}")}))
            .send()
            .await?;
        anyhow::ensure!(resp.status() == 201, "create answered {}", resp.status());
        sent.push(started);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Every client gets every change.
    let deadline = Instant::now() + Duration::from_secs(30);
    while arrivals.lock().await.len() < clients * changes && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let arrivals = arrivals.lock().await;
    let first_seq = arrivals.iter().map(|(s, _)| *s).min().unwrap_or(1);
    let mut latencies: Vec<Duration> = arrivals
        .iter()
        .filter_map(|(seq, at)| sent.get(usize::try_from(seq - first_seq).ok()?).map(|s| at.duration_since(*s)))
        .collect();
    latencies.sort();
    let pct = |p: f64| latencies.get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)));
    let ms = |d: Option<&Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0);
    println!(
        "| {clients} clients | {changes} changes | {} of {} deliveries | p50 {:.1} ms | p99 {:.1} ms | max {:.1} ms | RSS idle {idle} kB, {open} kB with the streams open ({:.1} kB each) |",
        latencies.len(),
        clients * changes,
        ms(pct(0.5)),
        ms(pct(0.99)),
        ms(latencies.last()),
        (open.saturating_sub(idle)) as f64 / clients as f64,
    );
    Ok(())
}
