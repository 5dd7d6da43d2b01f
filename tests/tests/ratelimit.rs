//! Per-token, per-plan rate limits of the prospector, exactly the plan table of its product
//! requirements, with an injectable clock: headers on every response, 429 with Retry-After, exact
//! counts.

mod common;

use std::sync::Arc;

use runtime::ratelimit::ManualClock;
use serde_json::Value;

async fn server_with_clock(clock: Arc<ManualClock>) -> (String, runtime::Platform, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = runtime::Platform::open_with_clock(runtime::Config::new(addr, None, dir.path().to_path_buf()), clock)
        .await
        .unwrap();
    let app = specwright::app(&state, &specwright::Settings::default()).await.expect("the application");
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), state, dir)
}

fn token(state: &runtime::Platform, plan: Option<&str>) -> String {
    let c = &state.config;
    state
        .keys
        .mint(&runtime::keys::claims(
            &c.issuer(),
            "pat",
            "acme",
            "prospector",
            specwright::catalog().resources(c),
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
    for plan in prospector_api::prospector::SERVICE.plans {
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

fn vault_token(state: &runtime::Platform, sub: &str, scope: &str) -> String {
    let c = &state.config;
    state
        .keys
        .mint(&runtime::keys::claims(&c.issuer(), sub, "acme", scope, specwright::catalog().resources(c), 86_400, None))
        .unwrap()
}

fn remaining(resp: &reqwest::Response) -> i64 {
    header(resp, "x-ratelimit-remaining")
}

/// A JSON-RPC `tools/call` at the vault's MCP endpoint.
async fn mcp_call(client: &reqwest::Client, base: &str, token: &str, id: i64) -> reqwest::Response {
    client
        .post(format!("{base}/api/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "vault.list_credentials", "arguments": {}}}))
        .send()
        .await
        .unwrap()
}

/// The vault declares a `standard` plan, so the vault is limited by it like the prospector by
/// its plans: every answer of the service (REST successes and errors, unknown paths and wrong
/// methods under `/api/v1`, the MCP endpoint) carries the headers and counts against the same
/// token bucket, and the request past the limit is a 429 with `Retry-After` and the envelope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vault_standard_plan_is_enforced_with_headers_on_every_response() {
    let standard = vault_api::vault::SERVICE.plan("standard").expect("the vault spec declares `standard`");
    let limit = i64::from(standard.per_minute);
    let clock = Arc::new(ManualClock::at(1_767_225_600_000 + 10_000)); // 10 s into a UTC minute
    let (base, state, _dir) = server_with_clock(clock.clone()).await;
    specwright::create_tenant(&state.store, "acme", "alice").await.unwrap();
    let (admin, reader) = (vault_token(&state, "alice", "vault:admin"), vault_token(&state, "alice", "vault:read"));
    let client = reqwest::Client::new();
    let api = |p: &str| format!("{base}/api/v1{p}");
    // One of each kind of answer, each counted: `expected` remaining after it.
    let mut expected = limit;
    let answers = vec![
        ("list", client.get(api("/credentials")).bearer_auth(&admin), 200),
        (
            "store",
            client.post(api("/credentials")).bearer_auth(&admin).json(&serde_json::json!({"key": "k", "value": "v"})),
            201,
        ),
        ("unknown credential", client.get(api("/credentials/missing")).bearer_auth(&admin), 404),
        ("invalid query", client.get(api("/credentials?kind=bogus")).bearer_auth(&admin), 422),
        (
            "malformed body",
            client.post(api("/folders")).bearer_auth(&admin).header("content-type", "application/json").body("{"),
            400,
        ),
        ("unknown path", client.get(api("/nowhere")).bearer_auth(&admin), 404),
        ("wrong method", client.delete(api("/credentials")).bearer_auth(&admin), 405),
    ];
    for (what, rb, status) in answers {
        let resp = rb.send().await.unwrap();
        assert_eq!(resp.status().as_u16(), status, "{what}");
        assert_eq!(header(&resp, "x-ratelimit-limit"), limit, "{what}: X-RateLimit-Limit is the plan's");
        assert_eq!(header(&resp, "x-ratelimit-reset"), 1_767_225_660, "{what}: Reset is the minute's end (epoch s)");
        expected -= 1;
        assert_eq!(remaining(&resp), expected, "{what}: counted");
    }
    // A scope denial counts against the reader's own token, not the admin's.
    let denied = client.post(api("/credentials/k/archive")).bearer_auth(&reader).send().await.unwrap();
    assert_eq!(denied.status(), 403);
    assert_eq!(remaining(&denied), limit - 1, "the reader's own bucket");
    // No token: counted against the client address, and still carrying the headers.
    let anonymous = client.get(api("/credentials")).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(header(&anonymous, "x-ratelimit-limit"), limit, "401 carries the headers");
    // MCP tool calls count against the same bucket as REST and carry the same headers.
    let tool = mcp_call(&client, &base, &admin, 1).await;
    assert_eq!(tool.status(), 200);
    expected -= 1;
    assert_eq!(remaining(&tool), expected, "an MCP tool call counts against the token's bucket");
    // Spend the rest of the minute.
    let mut admitted = limit - expected;
    loop {
        let resp = client.get(api("/credentials")).bearer_auth(&admin).send().await.unwrap();
        assert_eq!(header(&resp, "x-ratelimit-limit"), limit);
        if resp.status() == 429 {
            assert_eq!(remaining(&resp), 0);
            assert_eq!(header(&resp, "retry-after"), 50, "Retry-After: seconds to the minute's end");
            let b: Value = resp.json().await.unwrap();
            assert_eq!(b["error"]["code"], "rate/limited", "the vault's catalog code: {b}");
            assert_eq!(b["error"]["details"]["limit"], limit);
            break;
        }
        assert_eq!(resp.status(), 200);
        admitted += 1;
        assert_eq!(remaining(&resp), limit - admitted, "Remaining counts down");
        assert!(admitted <= limit, "more than the plan's {limit} admitted");
    }
    assert_eq!(admitted, limit, "exactly the plan's per-minute limit");
    // Refused on every surface of the service, with the headers.
    let no_route = client.get(api("/nowhere")).bearer_auth(&admin).send().await.unwrap();
    assert_eq!((no_route.status().as_u16(), remaining(&no_route)), (429, 0), "unknown paths are refused too");
    let refused = mcp_call(&client, &base, &admin, 7).await;
    assert_eq!(refused.status(), 429, "the MCP endpoint refuses with HTTP 429");
    assert!(header(&refused, "retry-after") >= 1);
    assert_eq!(remaining(&refused), 0);
    let b: Value = refused.json().await.unwrap();
    assert_eq!(b["jsonrpc"], "2.0");
    assert_eq!(b["id"], 7, "the JSON-RPC error answers the request's id: {b}");
    assert_eq!(b["error"]["code"], runtime::mcp::RATE_LIMITED_CODE, "{b}");
    assert_eq!(b["error"]["data"]["code"], "rate/limited");
    assert!(b["error"]["data"]["retry_after"].as_i64().unwrap() >= 1);
    // Other tokens, and the next minute, are untouched.
    let other = client.get(api("/credentials")).bearer_auth(vault_token(&state, "alice", "vault:read")).send();
    assert_eq!(other.await.unwrap().status(), 200);
    clock.advance(60_000);
    let again = client.get(api("/credentials")).bearer_auth(&admin).send().await.unwrap();
    assert_eq!((again.status().as_u16(), remaining(&again)), (200, limit - 1), "a new minute");
    // The prospector's limits are its own: a token used on both services has one bucket per service.
    let prospector = client.get(format!("{base}/v1/prospector/leads")).bearer_auth(&admin).send().await.unwrap();
    assert_ne!(header(&prospector, "x-ratelimit-limit"), limit, "the prospector's plan, not the vault's");
}
