//! The web console. Over plain HTTP: pages need a session (else the sign-in form, which comes
//! back), every response carries the console's security headers, the files come from the binary.
//! In a real headless browser (Debian's `chromium` driven by `playwright-core`, both installed by
//! `.ci/run`, which points at them with `SPECWRIGHT_CHROMIUM` and
//! `SPECWRIGHT_PLAYWRIGHT_NODE_MODULES`): sign in, tokens shown once and revoked, grants, sign
//! out (`tests/console/console.mjs`), at the root of a host and under a path behind a reverse
//! proxy. Screenshots of every page go to `target/test-output/console/` (and
//! `console-behind-proxy/`).

mod common;

use std::process::Command;

use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";
/// The secret of the credential the browser looks at: it must never appear on a page.
const CANARY: &str = "canary-7f3c9e1d-never-on-a-page";

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// A session cookie for `user`, from the sign-in form.
async fn sign_in(server: &common::TestServer, user: &str) -> String {
    let resp = no_redirects()
        .post(server.url("/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string([("username", user), ("password", PASSWORD), ("next", "/console/")]).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    let cookie = resp.headers()["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_string()
}

fn assert_console_headers(resp: &reqwest::Response, what: &str) {
    let h = resp.headers();
    let csp = h.get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe"), "{what}: CSP {csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{what}: CSP {csp}");
    assert_eq!(h["x-frame-options"], "DENY", "{what}");
    assert_eq!(h["x-content-type-options"], "nosniff", "{what}");
    assert_eq!(h["referrer-policy"], "same-origin", "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_pages_need_a_session_and_carry_the_security_headers() {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    runtime::oauth::users::add(&server.state.store, "alice", "acme", PASSWORD).await.unwrap();
    let http = no_redirects();

    // Without a session every page goes to the sign-in form, which comes back to it.
    for (path, next) in [
        ("/console/", "%2Fconsole%2F"),
        ("/console/tokens", "%2Fconsole%2Ftokens"),
        ("/console/folders/fld_1?x=1", "%2Fconsole%2Ffolders%2Ffld_1%3Fx%3D1"),
    ] {
        let resp = http.get(server.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), 302, "{path}");
        assert_eq!(resp.headers()["location"], format!("/login?next={next}").as_str(), "{path}");
        assert_console_headers(&resp, path);
    }
    let resp = http.get(server.url("/console")).send().await.unwrap();
    assert_eq!(resp.headers()["location"], "/console/");
    assert_eq!(http.get(server.url("/console/session")).send().await.unwrap().status(), 401);

    // Signed in: the page shell, which loads only our own script and stylesheet.
    let cookie = sign_in(&server, "alice").await;
    for path in
        ["/console/", "/console/tokens", "/console/folders", "/console/folders/fld_x", "/console/credentials/db"]
    {
        let resp = http.get(server.url(path)).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_console_headers(&resp, path);
        assert_eq!(resp.headers()["cache-control"], "no-store");
        let html = resp.text().await.unwrap();
        assert!(html.contains(r#"<script src="/console/assets/console.js" defer></script>"#), "{path}");
        assert!(!html.contains("http://") && !html.contains("https://"), "{path}: nothing from the network");
        assert!(!html.contains("<script>"), "{path}: no inline script");
    }
    let resp = http.get(server.url("/console/no/such/page")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(resp.status(), 404);

    // The session document names the user, the CSRF token and what the forms offer, from the specs.
    let resp = http.get(server.url("/console/session")).header("cookie", &cookie).send().await.unwrap();
    assert_console_headers(&resp, "/console/session");
    let session: Value = resp.json().await.unwrap();
    assert_eq!((session["user"].as_str(), session["tenant"].as_str()), (Some("alice"), Some("acme")));
    assert!(session["csrf_token"].as_str().is_some_and(|t| t.len() >= 32));
    assert_eq!(session["catalog"]["vault"]["scopes"][0]["name"], "vault:read");
    assert_eq!(session["catalog"]["prospector"]["plans"][2]["name"], "team");
    assert_eq!(session["catalog"]["vault"]["permissions"][1]["name"], "canReveal");

    // The files: public, revalidated by ETag.
    for (path, kind) in [("/console/assets/console.js", "text/javascript"), ("/console/assets/console.css", "text/css")]
    {
        let resp = http.get(server.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_console_headers(&resp, path);
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with(kind), "{path}");
        assert_eq!(resp.headers()["cache-control"], "no-cache");
        let etag = resp.headers()["etag"].to_str().unwrap().to_string();
        let body = resp.text().await.unwrap();
        assert!(!body.contains("http://") && !body.contains("https://"), "{path}: nothing from the network");
        let again = http.get(server.url(path)).header("if-none-match", &etag).send().await.unwrap();
        assert_eq!(again.status(), 304, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_real_browser_tokens_are_shown_once_and_revoked_grants_are_managed_and_signing_out_ends_it() {
    let Some(tools) = browser_tools() else { return };
    let server = common::TestServer::start().await;
    let url = server.base.clone();
    in_a_real_browser(tools, &server, &url, "console").await;
}

/// The same session in the browser, with the console under `/sw` behind a reverse proxy that
/// strips it (the server's public URL is `http://127.0.0.1:<proxy port>/sw`): every page, link,
/// file, API call, form and redirect stays under the prefix, and the browser's `Origin` passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_real_browser_under_a_path_prefix_behind_a_proxy() {
    let Some(tools) = browser_tools() else { return };
    let (server, public) = common::proxy::serve_behind("/sw", |_| {}).await;
    in_a_real_browser(tools, &server, &public, "console-behind-proxy").await;
}

/// playwright-core's node_modules and chromium, when this machine has them.
fn browser_tools() -> Option<(String, String)> {
    let modules = tests::tool("SPECWRIGHT_PLAYWRIGHT_NODE_MODULES")?;
    let chromium = tests::tool("SPECWRIGHT_CHROMIUM")?;
    Some((modules, chromium))
}

/// Runs `tests/console/console.mjs` with the browser at `url` (the public URL of `server`),
/// screenshots into `target/test-output/<output>/`, and checks what the browser did.
async fn in_a_real_browser(
    (modules, chromium): (String, String),
    server: &common::TestServer,
    url: &str,
    output: &str,
) {
    server.tenant("acme", "alice").await;
    runtime::oauth::users::add(&server.state.store, "alice", "acme", PASSWORD).await.unwrap();

    // Something to browse: /prod (with /prod/databases), credentials, a folder and a credential grant.
    let admin = server.token_for("alice", "acme", "vault:admin");
    let call = |method: &'static str, path: String, body: Value| {
        let admin = &admin;
        async move {
            let (status, out) = server.call(method, &path, admin, Some(body)).await;
            assert!(status == 200 || status == 201, "{method} {path}: {status} {out}");
            out
        }
    };
    let prod = call("POST", "/api/v1/folders".into(), json!({ "name": "prod" })).await["data"]["id"].clone();
    let prod = prod.as_str().unwrap().to_string();
    let dbs = call("POST", "/api/v1/folders".into(), json!({ "name": "databases", "parent_id": prod })).await;
    let dbs = dbs["data"]["id"].as_str().unwrap().to_string();
    call("POST", "/api/v1/folders".into(), json!({ "name": "staging" })).await;
    for (key, kind, folder, description, tags, value) in [
        ("prod-db-password", "password", &prod, "Primary PostgreSQL, application role", json!(["db", "prod"]), CANARY),
        ("stripe-api-key", "api_key", &prod, "Payments (live mode)", json!(["payments"]), "sk_live_x"),
        ("replica-db-password", "password", &dbs, "Read replica", json!(["db"]), "r3plica"),
    ] {
        let body = json!({ "key": key, "kind": kind, "folder_id": folder, "description": description,
                           "username": "app", "tags": tags, "value": value });
        call("POST", "/api/v1/credentials".into(), body).await;
    }
    call("POST", format!("/api/v1/folders/{prod}/grants"), json!({ "principal": "bob", "permissions": ["canRead"] }))
        .await;
    let body = json!({ "principal": "carol", "permissions": ["canReveal"] });
    call("POST", "/api/v1/credentials/prod-db-password/grants".into(), body).await;

    // An application alice approved: registered over HTTP as any client would; the approval is
    // the row the consent screen writes (the consent flow itself is tested in oauth.rs).
    let app = common::register_client(url, "console-test-app", "http://127.0.0.1:53682/cb").await;
    sqlx::query(
        "INSERT INTO oauth_consents (user_id, client_id, scope, granted_at, client_name) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind("alice")
    .bind(&app)
    .bind("vault:read")
    .bind(chrono::Utc::now().timestamp_millis())
    .bind("console-test-app")
    .execute(server.state.store.pool())
    .await
    .unwrap();

    let out = xtask::workspace_root().join("target/test-output").join(output);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let script = xtask::workspace_root().join("tests/console/console.mjs");
    let node = std::env::var("SPECWRIGHT_NODE").unwrap_or_else(|_| "node".into());
    let mut cmd = Command::new(node);
    cmd.arg(&script)
        .args([url, "alice", PASSWORD])
        .arg(&out)
        .env("SPECWRIGHT_PLAYWRIGHT_NODE_MODULES", &modules)
        .env("CHROMIUM", &chromium)
        .env("CONSOLE_ADMIN_TOKEN", &admin)
        .env("CONSOLE_CANARY", CANARY)
        // playwright-core must drive the given chromium, never fetch one.
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1");
    let output = tokio::task::spawn_blocking(move || cmd.output().expect("run node")).await.unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the console browser test failed (screenshots in {}):\n{log}", out.display());
    println!("{log}");

    for name in [
        "01-sign-in",
        "02-overview",
        "03-folders",
        "04-folder",
        "05-credential",
        "07-tokens",
        "10-tokens-listed",
        "12-applications",
    ] {
        let file = out.join(format!("{name}.png"));
        assert!(std::fs::metadata(&file).is_ok_and(|m| m.len() > 1000), "no screenshot {}", file.display());
    }

    // The server's own account of what the browser did: both tokens exist and are revoked, and
    // dave's grant (added in the page) is stored.
    let read = server.token_for("alice", "acme", "vault:read");
    let (status, tokens) = server.call("GET", "/api/v1/tokens?include_revoked=true", &read, None).await;
    assert_eq!(status, 200);
    let made: Vec<&Value> =
        tokens["data"].as_array().unwrap().iter().filter(|t| t["name"] == "console-test-read").collect();
    assert_eq!(made.len(), 1, "{tokens}");
    assert!(made[0]["revoked_at"].is_string(), "{tokens}");
    assert_eq!(made[0]["scopes"], json!(["vault:read"]));
    let team = server.team_token("alice", "acme");
    let (status, listed) = server.call("GET", "/v1/prospector/tokens", &team, None).await;
    assert_eq!(status, 200);
    assert!(listed["data"].as_array().unwrap().iter().all(|t| t["name"] != "console-test-crm"), "{listed}");
    let (_, grants) = server.call("GET", &format!("/api/v1/folders/{prod}/grants"), &admin, None).await;
    assert!(grants["data"].as_array().unwrap().iter().any(|g| g["principal"] == "dave"), "{grants}");
    // The application revoked in the page is no longer approved.
    let apps = runtime::oauth::grants::list(&server.state.store, "alice").await.unwrap();
    assert!(apps.iter().all(|a| a.client_id != app), "{apps:?}");
}
