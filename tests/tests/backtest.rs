//! `POST /scoring/backtest` end to end: history seeded as won and lost leads, a proposed
//! configuration that ranks it better, a deterministic report, the live configuration untouched,
//! validation, and an empty sample; on SQLite and PostgreSQL.

mod common;

use chrono::{Duration, Utc};
use prospector::posting::Posting;
use prospector::{engine, leads, replay, scoring};
use prospector_api::prospector::models::{Budget, BudgetKind, LeadClient, LeadStatus};
use serde_json::{Value, json};

/// 60 closed leads: the ones asking for the configured skills were won, whatever their budget;
/// budgets are anti-correlated with winning, so a budget-heavy configuration ranks worse.
async fn seed(server: &common::TestServer, tenant: &str) {
    let (w, mut p) = scoring::defaults();
    p.skills = vec!["rust".into(), "postgresql".into()];
    let now = Utc::now();
    let mut tx = server.state.store.begin().await.unwrap();
    for i in 0..60 {
        let won = i % 3 == 0;
        let posting = Posting {
            id: format!("hist-{i}"),
            platform: "upwork".into(),
            title: format!("Job {i}"),
            url: None,
            description: None,
            skills: if won { vec!["rust".into(), "postgresql".into()] } else { vec!["php".into(), "rust".into()] },
            budget: Some(Budget {
                kind: BudgetKind::Fixed,
                min: None,
                max: Some(if won { 500.0 + i as f64 } else { 2500.0 + i as f64 }),
                currency: "USD".into(),
            }),
            client: Some(LeadClient {
                name: None,
                country: None,
                payment_verified: true,
                jobs_posted: 10,
                hires: 5,
                total_spent: Some(10_000.0),
                rating: Some(4.5),
            }),
            proposals_count: Some(10 + (i % 7)),
            posted_at: Some(now - Duration::hours(i % 48)),
        };
        let scored = engine::score(&posting, &w, &p, 1, now);
        let status = if won { LeadStatus::Won } else { LeadStatus::Lost };
        leads::insert(&mut tx, tenant, "history", &posting, &scored, 1, now, status, now.timestamp_millis() - i * 1000)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
}

fn proposal(skill: f64, budget: f64) -> Value {
    json!({
        "weights": {"skill_match": skill, "budget": budget, "client_history": 10, "competition": 10, "timeline": 5},
        "parameters": {"skills": ["rust", "postgresql"], "budget_floor": 200, "budget_target": 3000, "currency": "USD",
                       "max_competition": 50, "stale_after_days": 14, "evidence_prior": 5, "top_tier_min_confidence": 0.3},
        "top_k": 10, "tiers": 3
    })
}

on_both_backends!(backtest_compares_configurations_deterministically, |server| {
    let token = server.team_token("pat", "acme");
    // The live configuration must know the skills too, else skill_match is unavailable for both.
    let (_, live) = server.call("GET", "/v1/prospector/scoring/config", &token, None).await;
    let mut params = live["data"]["parameters"].clone();
    params["skills"] = json!(["rust", "postgresql"]);
    let (s, v2) = server
        .call(
            "PUT",
            "/v1/prospector/scoring/config",
            &token,
            Some(json!({"weights": {"skill_match": 10, "budget": 60, "client_history": 10, "competition": 10, "timeline": 10}, "parameters": params})),
        )
        .await;
    assert_eq!(s, 200, "{v2}");
    seed(&server, "acme").await;

    let (s, report) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(proposal(80.0, 5.0))).await;
    assert_eq!(s, 200, "{report}");
    let r = &report["data"];
    assert_eq!(
        (r["sample"]["leads"].as_i64(), r["sample"]["won"].as_i64(), r["sample"]["lost"].as_i64()),
        (Some(60), Some(20), Some(40))
    );
    assert_eq!(r["current_config_version"], 2);
    assert_eq!((r["top_k"].as_i64(), r["tiers"].as_i64()), (Some(10), Some(3)));
    let current = r["current"]["roc_auc"].as_f64().unwrap();
    let proposed = r["proposed"]["roc_auc"].as_f64().unwrap();
    assert!(proposed > 0.9 && current < 0.5, "skills predict wins, budget predicts losses: {r}");
    assert!((r["delta"]["roc_auc"].as_f64().unwrap() - (proposed - current)).abs() < 0.001);
    assert_eq!(r["proposed"]["precision_at_k"], 1.0, "the top 10 are all won: {r}");
    assert_eq!(r["proposed"]["win_rate_by_tier"].as_array().unwrap().len(), 3);
    assert!(r["proposed"]["brier_score"].as_f64().is_some());
    assert!(r["ranking_change"]["spearman"].as_f64().unwrap() < 0.5, "{r}");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("1,000") || w.as_str().unwrap().contains("1000")),
        "a small sample is flagged: {r}"
    );

    // Deterministic, and read-only.
    let (_, again) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(proposal(80.0, 5.0))).await;
    assert_eq!(again, report);
    let (_, after) = server.call("GET", "/v1/prospector/scoring/config", &token, None).await;
    assert_eq!(after["data"]["version"], 2, "the live configuration is unchanged");
    assert_eq!(after["data"]["weights"]["budget"], 60.0);

    // The window narrows the sample.
    let mut narrow = proposal(80.0, 5.0);
    narrow["since"] = json!((Utc::now() + Duration::hours(1)).to_rfc3339());
    let (s, empty) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(narrow)).await;
    assert_eq!((s, empty["data"]["sample"]["leads"].as_i64()), (200, Some(0)), "{empty}");
    assert!(empty["data"]["current"].get("roc_auc").is_none());

    // Validation: nothing runs, nothing changes.
    let mut zero = proposal(0.0, 0.0);
    zero["weights"] = json!({"skill_match": 0, "budget": 0, "client_history": 0, "competition": 0, "timeline": 0});
    let mut unknown = proposal(1.0, 1.0);
    unknown["weights"]["speed"] = json!(5);
    let mut negative = proposal(1.0, 1.0);
    negative["weights"]["budget"] = json!(-1);
    let mut window = proposal(1.0, 1.0);
    window["since"] = json!("2026-02-01T00:00:00Z");
    window["until"] = json!("2026-01-01T00:00:00Z");
    let mut k = proposal(1.0, 1.0);
    k["top_k"] = json!(0);
    let mut tiers = proposal(1.0, 1.0);
    tiers["tiers"] = json!(11);
    for (body, field) in [
        (zero, "weights"),
        (unknown, "weights.speed"),
        (negative, "weights.budget"),
        (window, "since"),
        (k, "top_k"),
        (tiers, "tiers"),
    ] {
        let (s, e) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(body)).await;
        assert_eq!((s, e["error"]["code"].as_str()), (422, Some("validation_error")), "{field}: {e}");
        assert_eq!(e["error"]["details"]["field"], field, "{e}");
    }

    // Another tenant's history is not this tenant's.
    let other = server.team_token("pat", "globex");
    let (s, theirs) = server.call("POST", "/v1/prospector/scoring/backtest", &other, Some(proposal(80.0, 5.0))).await;
    assert_eq!((s, theirs["data"]["sample"]["leads"].as_i64()), (200, Some(0)), "{theirs}");
});

// A stored replay record that does not decode fails the backtest with a 500 envelope (never a
// panic or a hang: the streaming reader stops when the scoring task gives up), and the next
// backtest of a sound sample still answers.
on_both_backends!(a_record_that_cannot_be_read_fails_the_backtest_cleanly, |server| {
    let token = server.team_token("pat", "acme");
    seed(&server, "acme").await;
    let other = server.team_token("pat", "globex");
    seed(&server, "globex").await;
    let mut tx = server.state.store.begin().await.unwrap();
    sqlx::query("UPDATE leads SET replay = $1 WHERE tenant_id = $2 AND external_id = $3")
        .bind(b"\x05\0\0\0\x01not a record".to_vec())
        .bind("acme")
        .bind("hist-7")
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let (s, body) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(proposal(60.0, 5.0))).await;
    assert_eq!(s, 500, "{body}");
    assert!(body["error"]["code"].is_string(), "the error envelope: {body}");
    assert!(!body.to_string().contains("record"), "no stored content in the answer: {body}");
    let (s, report) = server.call("POST", "/v1/prospector/scoring/backtest", &other, Some(proposal(60.0, 5.0))).await;
    assert_eq!(s, 200, "{report}");
    assert_eq!(report["data"]["sample"]["leads"], 60, "{report}");
});

// Backtests run one after another over the same history answer from the leads as stored at each
// run: a change made straight in the database between two runs (an outcome, a stored input, a
// new historical lead) shows in the next report, though the history is kept parsed between runs.
on_both_backends!(a_backtest_after_a_change_to_the_history_reads_it_anew, |server| {
    let token = server.team_token("pat", "acme");
    seed(&server, "acme").await;
    let backtest = || async { backtest(&server, &token).await["data"].clone() };
    let first = backtest().await;
    assert_eq!(backtest().await, first, "the same history, the same report");
    let won = first["sample"]["won"].as_i64().unwrap();

    execute(&server, "UPDATE leads SET outcome = 'lost' WHERE tenant_id = 'acme' AND external_id = 'hist-0'").await;
    let flipped = backtest().await;
    assert_eq!(flipped["sample"]["won"].as_i64(), Some(won - 1), "{flipped}");
    assert_eq!(backtest().await, flipped);

    // The input of a lost lead rewritten to ask for exactly the configured skills: under the
    // proposal, which weighs skills most, it climbs into the top tier.
    let top_lost = |report: &Value| {
        report["proposed"]["win_rate_by_tier"][0]["leads"].as_i64().unwrap()
            - report["proposed"]["win_rate_by_tier"][0]["won"].as_i64().unwrap()
    };
    let record: Vec<u8> =
        sqlx::query_scalar("SELECT replay FROM leads WHERE tenant_id = 'acme' AND external_id = 'hist-1'")
            .fetch_one(server.state.store.pool())
            .await
            .unwrap();
    let mut lead = replay::records(&record).next().unwrap().unwrap();
    lead.input.skills = vec!["rust".into(), "postgresql".into()];
    lead.input.budget.as_mut().unwrap().max = Some(500.0);
    let mut tx = server.state.store.begin().await.unwrap();
    sqlx::query("UPDATE leads SET replay = $1 WHERE tenant_id = 'acme' AND external_id = 'hist-1'")
        .bind(replay::encode(&lead.id, lead.fetched_at, lead.created_at, &lead.input))
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let rewritten = backtest().await;
    assert_ne!(rewritten["proposed"], flipped["proposed"], "{rewritten}");
    assert!(top_lost(&rewritten) > top_lost(&flipped), "{rewritten}");

    execute(&server, "DELETE FROM leads WHERE tenant_id = 'acme' AND external_id = 'hist-2'").await;
    assert_eq!(backtest().await["sample"]["leads"], 59);
});

/// The answer of a backtest of `proposal(60.0, 5.0)`, which must succeed.
async fn backtest(server: &common::TestServer, token: &str) -> Value {
    let (s, report) = server.call("POST", "/v1/prospector/scoring/backtest", token, Some(proposal(60.0, 5.0))).await;
    assert_eq!(s, 200, "{report}");
    report
}

/// Runs `sql` (one or more statements) in a transaction of the server's store.
async fn execute(server: &common::TestServer, sql: &str) {
    let mut tx = server.state.store.begin().await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string())).execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
}

// Leads without a replay record (stored before the column, or by a release that did not write
// it): the fill the service runs as it starts writes records that replay as the ones written with
// the posting, empties the leads' JSON inputs, and goes by a lead whose posting does not parse,
// over which a backtest then answers an error; filled once, a lead is not written again.
on_both_backends!(leads_without_a_replay_record_are_filled_at_start_and_replay_the_same, |server| {
    let token = server.team_token("pat", "acme");
    seed(&server, "acme").await;
    let backtest = || backtest(&server, &token);
    let written = backtest().await;
    assert_eq!(written["data"]["sample"]["leads"], 60, "{written}");
    let store = &server.state.store;
    let column = |name: &'static str| async move {
        let sql = format!("SELECT external_id FROM leads WHERE tenant_id = 'acme' AND {name} IS NOT NULL");
        let mut ids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_all(store.pool()).await.unwrap();
        ids.sort();
        ids
    };

    execute(
        &server,
        "UPDATE leads SET replay = NULL, scoring_input = posting WHERE tenant_id = 'acme' AND external_id <> 'hist-3'",
    )
    .await;
    execute(&server, "UPDATE leads SET posting = '{' || posting WHERE tenant_id = 'acme' AND external_id = 'hist-5'")
        .await;
    let (s, body) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(proposal(60.0, 5.0))).await;
    assert_eq!(s, 500, "leads without records are not silently left out: {body}");

    assert_eq!(leads::fill_replays(store).await.unwrap(), 58);
    let mut with_records: Vec<String> = (0..60).filter(|i| *i != 5).map(|i| format!("hist-{i}")).collect();
    with_records.sort();
    assert_eq!(column("replay").await, with_records, "every lead but the one whose posting does not parse");
    assert_eq!(column("scoring_input").await, ["hist-5"], "the JSON inputs of filled leads emptied");
    let (s, body) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(proposal(60.0, 5.0))).await;
    assert_eq!(s, 500, "{body}");

    execute(
        &server,
        "UPDATE leads SET posting = SUBSTR(posting, 2) WHERE tenant_id = 'acme' AND external_id = 'hist-5'",
    )
    .await;
    assert_eq!(leads::fill_replays(store).await.unwrap(), 1, "only the lead still without one");
    assert_eq!(leads::fill_replays(store).await.unwrap(), 0);
    assert_eq!(backtest().await, written, "the filled records replay as the ones written with the postings");
});

// More leads than one chunk of the backtest's read (2,048), in large groups created at the same
// millisecond so chunk boundaries fall inside them, with a window whose ends cut between groups:
// the report is exactly what `backtest::evaluate` gives for the same leads scored in process, so
// no lead is lost or read twice at a boundary.
on_both_backends!(a_backtest_reads_every_lead_once_across_chunks, |server| {
    use prospector::backtest::{self, Case, Point, Settings};
    use runtime::store::to_time;
    let token = server.team_token("pat", "acme");
    let (w, p) = scoring::defaults();
    let base = Utc::now().timestamp_millis() / 1000 * 1000;
    let fetched = to_time(base);
    let mut stored = Vec::new();
    let mut tx = server.state.store.begin().await.unwrap();
    for i in 0..5000i64 {
        let won = (i * 7919) % 10 < 3;
        let posting = Posting {
            id: format!("bulk-{i}"),
            platform: "upwork".into(),
            title: format!("Job {i}"),
            url: None,
            description: Some("words ".repeat(50)),
            skills: [["rust", "go"].as_slice(), &["php"], &["rust", "postgresql", "docker"]][(i % 3) as usize]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            budget: (i % 4 != 0).then(|| Budget {
                kind: if i % 2 == 0 { BudgetKind::Fixed } else { BudgetKind::Hourly },
                min: None,
                max: Some(100.0 + (i % 97) as f64 * 40.0),
                currency: "USD".into(),
            }),
            client: None,
            proposals_count: Some(i % 60),
            posted_at: Some(fetched - Duration::hours(i % 200)),
        };
        let created = base - (i % 5) * 1000;
        let scored = engine::score(&posting, &w, &p, 1, fetched);
        let status = if won { LeadStatus::Won } else { LeadStatus::Lost };
        let id = leads::insert(&mut tx, "acme", "bulk", &posting, &scored, 1, fetched, status, created).await.unwrap();
        stored.push((id, won, created, posting.scoring_input()));
    }
    tx.commit().await.unwrap();

    let body = proposal(60.0, 5.0);
    let input: prospector_api::prospector::models::BacktestInput = serde_json::from_value(body.clone()).unwrap();
    let expected = |since: i64, until: i64| {
        let point = |(composite, confidence): (f64, f64)| Point { composite, confidence };
        let cases: Vec<Case> = stored
            .iter()
            .filter(|(_, _, created, _)| (since..until).contains(created))
            .map(|(id, won, created, scoring)| Case {
                id: id.as_str().into(),
                won: *won,
                found_at: to_time(*created),
                current: point(engine::point(scoring, &w, &p, fetched)),
                proposed: point(engine::point(scoring, &input.weights, &input.parameters, fetched)),
            })
            .collect();
        let settings = Settings {
            top_k: 10,
            tiers: 3,
            current_min_confidence: p.top_tier_min_confidence,
            proposed_min_confidence: input.parameters.top_tier_min_confidence,
            current_config_version: 1,
        };
        serde_json::to_value(backtest::evaluate(&cases, &settings)).unwrap()
    };

    let (s, all) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(body.clone())).await;
    assert_eq!(s, 200, "{all}");
    assert_eq!(all["data"]["sample"]["leads"], 5000);
    assert_eq!(all["data"], expected(i64::MIN, i64::MAX));

    let mut window = body.clone();
    window["since"] = json!(to_time(base - 3000).to_rfc3339());
    window["until"] = json!(to_time(base).to_rfc3339());
    let (s, part) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(window)).await;
    assert_eq!(s, 200, "{part}");
    assert_eq!(part["data"]["sample"]["leads"], 3000, "three of the five groups");
    assert_eq!(part["data"], expected(base - 3000, base));

    // Records out of step with their rows (every creation time moved after the records were
    // written): a full chunk's next one would start at a key its rows do not hold and read leads
    // twice; the backtest answers an error instead.
    execute(&server, "UPDATE leads SET created_at = created_at + 1 WHERE tenant_id = 'acme'").await;
    let (s, answer) = server.call("POST", "/v1/prospector/scoring/backtest", &token, Some(body)).await;
    assert_eq!(s, 500, "{answer}");
});
