//! Smoke test of the generated Rust SDKs (progenitor) against a live Specwright server.
//!
//! `smoke BASE_URL WRITE_TOKEN READ_TOKEN PROSPECTOR_TOKEN`, where BASE_URL is the server's origin
//! (`http://127.0.0.1:8080`), WRITE_TOKEN carries `vault:write` for a tenant administrator,
//! READ_TOKEN only `vault:read`, and PROSPECTOR_TOKEN `prospector`. Prints a one-line JSON summary
//! and exits 0, or names the failed expectation on standard error and exits 1.

use std::num::NonZeroU64;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prospector::types::ScanLeadsInputBody;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use specwright_prospector_client as prospector;
use specwright_vault_client as vault;

/// The `min_score` the pagination check filters on.
const MIN_SCORE: f64 = 50.0;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// An HTTP client that sends `token` as a Bearer token on every request (progenitor's clients
/// take a configured `reqwest::Client`; the documents' security scheme is not turned into an
/// authentication option).
fn http(token: &str) -> Result<reqwest::Client, String> {
    let mut auth = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|e| format!("token: {e}"))?;
    auth.set_sensitive(true);
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, auth);
    reqwest::Client::builder()
        .default_headers(headers)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Result<&'a str, String> {
    headers
        .get(name)
        .ok_or_else(|| format!("no {name} header"))?
        .to_str()
        .map_err(|e| format!("{name} header is not text: {e}"))
}

fn header_int(headers: &HeaderMap, name: &str) -> Result<u64, String> {
    let text = header(headers, name)?;
    text.parse().map_err(|_| format!("{name} header `{text}` is not a whole number"))
}

async fn smoke(base: &str, write: &str, read: &str, prospector_token: &str) -> Result<Value, String> {
    let vault_url = format!("{base}/api/v1");
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    let key = format!("sdk-smoke-rust-{nanos}");

    // (a) The write token stores a credential, and the list shows it.
    let writer = vault::Client::new_with_client(&vault_url, http(write)?);
    let tag: vault::types::StoreCredentialInputTagsItem = "smoke".parse().map_err(|e| format!("tag: {e}"))?;
    let stored = writer
        .store_credential()
        .body_map(|b| b.key(key.as_str()).value("s3cret-from-rust").tags(vec![tag]))
        .send()
        .await
        .map_err(|e| format!("store_credential with the write token: {e}"))?;
    ensure!(stored.status() == 201, "store_credential answered {}, not 201", stored.status());
    ensure!(stored.data.key == key, "store_credential returned key {}, not {key}", stored.data.key);
    let listed = writer
        .list_credentials()
        .per_page(100)
        .send()
        .await
        .map_err(|e| format!("list_credentials with the write token: {e}"))?;
    ensure!(
        listed.data.iter().any(|c| c.key == key),
        "list_credentials does not show {key} (total {})",
        listed.meta.total
    );
    let credentials_total = listed.meta.total;

    // (b) The read token on a write call: a typed 403 naming the scope it needs.
    let reader = vault::Client::new_with_client(&vault_url, http(read)?);
    let denied =
        reader.store_credential().body_map(|b| b.key(format!("{key}-denied").as_str()).value("nope")).send().await;
    let (forbidden_code, required, challenge) = match denied {
        Ok(v) => return Err(format!("store_credential with the read token succeeded ({})", v.status())),
        Err(vault::Error::ErrorResponse(e)) => {
            ensure!(e.status() == 403, "the read token's store_credential answered {}, not 403", e.status());
            let challenge = header(e.headers(), "www-authenticate")?.to_string();
            let required = e.error.details.required.clone().unwrap_or_default();
            (e.error.code.to_string(), required, challenge)
        }
        Err(other) => return Err(format!("store_credential with the read token: not a typed ErrorResponse: {other}")),
    };
    ensure!(forbidden_code == "auth/insufficient-scope", "403 code {forbidden_code}, not auth/insufficient-scope");
    ensure!(required == "vault:write", "403 details.required is `{required}`, not vault:write");
    ensure!(
        challenge.contains(r#"error="insufficient_scope""#) && challenge.contains(r#"scope="vault:write""#),
        "WWW-Authenticate `{challenge}` does not name insufficient_scope and vault:write"
    );

    // (c) The prospector: a scan of the sample feed, then one filtered page of leads.
    let leads = prospector::Client::new_with_client(&format!("{base}/v1/prospector"), http(prospector_token)?);
    let scan = leads
        .scan_leads()
        .body(ScanLeadsInputBody { sources: None })
        .send()
        .await
        .map_err(|e| format!("scan_leads: {e}"))?;
    let fetched: i64 = scan.data.sources.iter().map(|s| s.fetched).sum();
    ensure!(fetched > 0, "scan_leads fetched nothing: {:?}", scan.data.sources);
    let page = leads
        .list_leads()
        .min_score(MIN_SCORE)
        .page(NonZeroU64::MIN)
        .per_page(NonZeroU64::new(5).expect("nonzero"))
        .send()
        .await
        .map_err(|e| format!("list_leads(min_score={MIN_SCORE}, page=1, per_page=5): {e}"))?;
    let meta = &page.meta;
    ensure!(meta.page == 1 && meta.per_page == 5, "list_leads meta {meta:?}: page 1, per_page 5 expected");
    ensure!(page.data.len() <= 5, "list_leads returned {} items for per_page=5", page.data.len());
    ensure!(
        page.data.len() as i64 == meta.total.min(5),
        "list_leads returned {} items, meta.total is {}",
        page.data.len(),
        meta.total
    );
    ensure!(meta.total > 0, "no lead scores {MIN_SCORE} or more after the scan: nothing to check");
    let scores: Vec<f64> = page.data.iter().map(|l| l.score.composite).collect();
    ensure!(scores.iter().all(|s| *s >= MIN_SCORE), "a lead under min_score {MIN_SCORE}: {scores:?}");

    // (e) Rate-limit headers, from the same response.
    let h = page.headers();
    let limit = header_int(h, "x-ratelimit-limit")?;
    let remaining = header_int(h, "x-ratelimit-remaining")?;
    let reset = header_int(h, "x-ratelimit-reset")?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
    ensure!(limit > 0 && remaining < limit, "X-RateLimit-Limit {limit}, X-RateLimit-Remaining {remaining}");
    ensure!(
        reset + 1 >= now && reset <= now + 86_400 + 60,
        "X-RateLimit-Reset {reset} is not epoch seconds near {now}"
    );

    // (d) min_score=150: the typed 422 naming the field.
    let invalid = leads.list_leads().min_score(150.0).send().await;
    let (invalid_code, field) = match invalid {
        Ok(v) => return Err(format!("list_leads(min_score=150) succeeded ({})", v.status())),
        Err(prospector::Error::ErrorResponse(e)) => {
            ensure!(e.status() == 422, "list_leads(min_score=150) answered {}, not 422", e.status());
            let field = e.error.details.field.clone().unwrap_or_default();
            (e.error.code.to_string(), field)
        }
        Err(other) => return Err(format!("list_leads(min_score=150): not a typed ErrorResponse: {other}")),
    };
    ensure!(invalid_code == "validation_error", "422 code {invalid_code}, not validation_error");
    ensure!(field == "min_score", "422 details.field is `{field}`, not min_score");

    Ok(json!({
        "sdk": "rust",
        "ok": true,
        "credential": key,
        "credentials_total": credentials_total,
        "forbidden": { "status": 403, "code": forbidden_code, "required": required, "www_authenticate": true },
        "scan_fetched": fetched,
        "leads": { "min_score": MIN_SCORE, "total": meta.total, "page": meta.page, "per_page": meta.per_page,
                   "returned": page.data.len(), "scores": scores },
        "invalid": { "status": 422, "code": invalid_code, "field": field },
        "rate_limit": { "limit": limit, "remaining": remaining, "reset": reset },
    }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, write, read, prospector_token] = args.as_slice() else {
        eprintln!("usage: smoke BASE_URL WRITE_TOKEN READ_TOKEN PROSPECTOR_TOKEN");
        return ExitCode::from(2);
    };
    match smoke(base.trim_end_matches('/'), write, read, prospector_token).await {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rust SDK smoke failed: {e}");
            ExitCode::FAILURE
        }
    }
}
