//! Per-token, per-plan rate limits of the prospector, exactly the seed's table, with an
//! injectable clock: headers on every response, 429 with Retry-After, exact counts.

mod common;

use std::sync::Arc;

use runtime::ratelimit::ManualClock;
use serde_json::Value;

async fn server_with_clock(clock: Arc<ManualClock>) -> (String, runtime::AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = runtime::AppState::open_with_clock(runtime::Config::new(addr, None, dir.path().to_path_buf()), clock)
        .await
        .unwrap();
    let app = runtime::build(&state);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), state, dir)
}

fn token(state: &runtime::AppState, plan: Option<&str>) -> String {
    let c = &state.config;
    state
        .keys
        .mint(&runtime::keys::claims(
            &c.issuer(),
            "pat",
            "acme",
            "prospector",
            c.all_resources(),
            86_400 * 3,
            plan.map(String::from),
        ))
        .unwrap()
}

fn header(resp: &reqwest::Response, name: &str) -> i64 {
    resp.headers().get(name).unwrap_or_else(|| panic!("{name} on {}", resp.status())).to_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_one_requests_in_a_second_on_starter_give_sixty_and_one_429() {
    let clock = Arc::new(ManualClock::at(1_767_225_600_000 + 10_000)); // 10 s into a UTC minute
    let (base, state, _dir) = server_with_clock(clock.clone()).await;
    let t = token(&state, None);
    let client = reqwest::Client::new();
    let mut remaining = Vec::new();
    let mut statuses = Vec::new();
    for _ in 0..61 {
        let resp = client.get(format!("{base}/v1/prospector/leads")).bearer_auth(&t).send().await.unwrap();
        assert_eq!(header(&resp, "x-ratelimit-limit"), 60);
        let reset = header(&resp, "x-ratelimit-reset");
        assert_eq!(reset, 1_767_225_660, "Reset is the UTC epoch second the minute window ends");
        remaining.push(header(&resp, "x-ratelimit-remaining"));
        statuses.push(resp.status().as_u16());
        if resp.status() == 429 {
            assert!(header(&resp, "retry-after") >= 1);
            let b: Value = resp.json().await.unwrap();
            assert_eq!(b["error"]["code"], "rate_limited");
        }
    }
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 1, "exactly one refused: {statuses:?}");
    assert_eq!(statuses[60], 429, "the 61st");
    assert_eq!(remaining[..60], (0..60).rev().collect::<Vec<i64>>()[..], "Remaining counts down 59..0");
    // Another token of the same tenant is unaffected.
    let other =
        client.get(format!("{base}/v1/prospector/leads")).bearer_auth(token(&state, None)).send().await.unwrap();
    assert_ne!(other.status(), 429);
    // The next minute admits again.
    clock.advance(60_000);
    let again = client.get(format!("{base}/v1/prospector/leads")).bearer_auth(&t).send().await.unwrap();
    assert_ne!(again.status(), 429);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_plan_minute_limit_over_http_and_the_starter_daily_quota() {
    let clock = Arc::new(ManualClock::at(1_767_225_600_000));
    let (base, state, _dir) = server_with_clock(clock.clone()).await;
    let client = reqwest::Client::new();
    let spend = |t: String, n: u32| {
        let (client, base) = (client.clone(), base.clone());
        async move {
            let mut admitted = 0;
            for _ in 0..n {
                let resp = client.get(format!("{base}/v1/prospector/contracts")).bearer_auth(&t).send().await.unwrap();
                if resp.status() == 429 {
                    return (admitted, header(&resp, "x-ratelimit-limit"));
                }
                admitted += 1;
            }
            (admitted, 0)
        }
    };
    for (plan, per_minute) in [("starter", 60), ("pro", 120), ("team", 300)] {
        let (admitted, limit) = spend(token(&state, Some(plan)), per_minute + 5).await;
        assert_eq!((admitted, limit), (per_minute, i64::from(per_minute)), "{plan}: per-minute limit");
    }
    // Starter's 5,000 a day: 83 full minutes and 20 more requests, then refused until tomorrow.
    let t = token(&state, Some("starter"));
    let mut total = 0;
    for _ in 0..90 {
        total += spend(t.clone(), 61).await.0;
        clock.advance(60_000);
    }
    assert_eq!(total, 5_000, "starter: the daily quota");
    let (admitted, limit) = spend(t.clone(), 1).await;
    assert_eq!((admitted, limit), (0, 5_000), "refused by the daily window");
    clock.advance(86_400_000);
    assert_eq!(spend(t, 1).await.0, 1, "a new UTC day admits again");
}

#[tokio::test]
async fn pro_and_team_daily_quotas_are_exact() {
    let clock = Arc::new(ManualClock::at(1_767_225_600_000));
    let limiter = runtime::ratelimit::RateLimiter::local(clock.clone());
    for plan in generated::prospector::SERVICE.plans {
        let mut total = 0;
        for _ in 0..(plan.per_day / plan.per_minute + 2) {
            for _ in 0..=plan.per_minute {
                if limiter.check(&format!("day-{}", plan.name), plan).await.allowed {
                    total += 1;
                }
            }
            clock.advance(60_000);
        }
        assert_eq!(total, plan.per_day, "{}: exactly {} a day", plan.title, plan.per_day);
    }
}

#[tokio::test]
async fn headers_are_on_401_404_422_and_429_too() {
    let clock = Arc::new(ManualClock::at(1_767_225_600_000));
    let (base, state, _dir) = server_with_clock(clock).await;
    let client = reqwest::Client::new();
    let no_token = client.get(format!("{base}/v1/prospector/leads")).send().await.unwrap();
    assert_eq!(no_token.status(), 401);
    assert!(no_token.headers().contains_key("x-ratelimit-remaining"), "401 carries the headers");
    let t = token(&state, None);
    let invalid = client.get(format!("{base}/v1/prospector/leads?min_score=150")).bearer_auth(&t).send().await.unwrap();
    assert_eq!(invalid.status(), 422);
    assert_eq!(header(&invalid, "x-ratelimit-remaining"), 59, "422 carries the headers and counts");
    let missing = client.get(format!("{base}/v1/prospector/leads/lead_missing")).bearer_auth(&t).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(header(&missing, "x-ratelimit-remaining"), 58, "404 carries the headers and counts");
    assert!(header(&missing, "x-ratelimit-reset") > 1_767_225_600, "Reset is UTC epoch seconds");
    let no_route = client.get(format!("{base}/v1/prospector/nowhere")).bearer_auth(&t).send().await.unwrap();
    assert_eq!(no_route.status(), 404);
    assert_eq!(header(&no_route, "x-ratelimit-remaining"), 57, "an unknown prospector path carries them and counts");
    let wrong_method = client.delete(format!("{base}/v1/prospector/leads")).bearer_auth(&t).send().await.unwrap();
    assert_eq!(wrong_method.status(), 405);
    assert_eq!(header(&wrong_method, "x-ratelimit-remaining"), 56, "so does a wrong method");
}
