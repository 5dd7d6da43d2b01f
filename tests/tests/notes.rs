//! The example service end to end, against its own binary (`notes`), built on the platform with
//! the server builder and nothing else: the conformance kit run by the binary itself (every
//! operation's 401 and 403 with the exact challenges, both PRM documents, MCP `tools/list` and
//! `tools/call`, the served OpenAPI equal to the generated file, rate-limit headers), the docs UI
//! listing it, audit rows, metrics, and the notes themselves (tenancy, state transitions, tags) on
//! SQLite and, when `DATABASE_URL_TEST` is set, PostgreSQL.

mod notes_server;

use notes_server::{Server, mcp};
use serde_json::{Value, json};
use support::Operation;

/// The value of the sample of metric `name` whose labels include `labels` (`None`: no such sample).
fn sample(exposition: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    exposition.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric, rest) = series.split_once('{').unwrap_or((series, "}"));
        let pairs: Vec<(&str, &str)> = rest
            .trim_end_matches('}')
            .split(',')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k, v.trim_matches('"')))
            .collect();
        (metric == name && labels.iter().all(|l| pairs.contains(l))).then(|| value.parse().unwrap())
    })
}

fn path_of(op: &Operation) -> String {
    op.full_path.replace("{id}", "note_0000")
}

async fn call(op: &Operation, url: String, token: Option<&str>) -> reqwest::Response {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(op.method.as_str().as_bytes()).unwrap();
    let mut req = client.request(method, url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if op.has_body {
        req = req.json(&json!({}));
    }
    req.send().await.unwrap()
}

/// `notes conformance --admission`, the platform's conformance kit mounted in the service's own
/// binary: every operation's 401 and 403 with the exact challenges (and rate-limit headers) and its
/// admission at its own tier, both PRM documents, the served OpenAPI documents, MCP `tools/list`
/// with its `SCOPE:` lines and `tools/call` one tier below and at its tier, all pass, and every
/// operation and tool is among the checks.
#[tokio::test]
async fn the_conformance_kit_passes_against_the_binary() {
    let s = Server::start(None).await;
    let out = std::process::Command::new(notes_server::BIN)
        .args(["conformance", "--url", &s.base, "--admission"])
        .env("NOTES_DATA_DIR", &s.config.data_dir)
        .output()
        .unwrap();
    let (table, errors) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "{table}{errors}");
    for op in notes_api::notes::OPERATIONS {
        let subject = format!("{} {} ({})", op.method.as_str(), op.full_path, op.id);
        for check in ["401 without a token", "403 one tier below", "admitted at its tier"] {
            let found = table.lines().filter(|l| l.starts_with("pass") && l.contains(check) && l.contains(&subject));
            assert_eq!(found.count(), 1, "{check} of {subject}:\n{table}");
        }
        if let Some(tool) = op.tool {
            let found = table.lines().filter(|l| l.starts_with("pass") && l.contains("tools/call one tier below"));
            assert_eq!(found.filter(|l| l.contains(&format!("{tool} with "))).count(), 1, "{tool}:\n{table}");
        }
    }
    // Beside three per operation and three per tool: the two PRM documents, the two OpenAPI
    // documents, the MCP endpoint's challenge and tools/list.
    let ops = notes_api::notes::OPERATIONS.len();
    let tools = notes_api::notes::OPERATIONS.iter().filter(|op| op.tool.is_some()).count();
    let n = 3 * ops + 3 * tools + 6;
    let summary = table.lines().last().unwrap();
    assert!(summary.starts_with(&format!("{n} checks (notes {n}): {n} passed, 0 failed")), "{summary}");
}

#[tokio::test]
async fn both_protected_resource_metadata_documents_are_served() {
    let s = Server::start(None).await;
    let client = reqwest::Client::new();
    for (path, resource, name) in [
        ("/.well-known/oauth-protected-resource/api/v1", "/api/v1", "Notes REST API"),
        ("/.well-known/oauth-protected-resource/api/mcp", "/api/mcp", "Notes MCP server"),
    ] {
        let doc: Value = client.get(s.url(path)).send().await.unwrap().json().await.unwrap();
        // The conformance kit checks the rest of each document.
        assert_eq!(doc["resource"], s.url(resource), "{path}");
        assert_eq!(doc["resource_name"], name, "{path}");
    }
    // Nothing of the platform's other users leaks in: no vault documents, no vault scopes (the
    // authorization server's own `openid` aside).
    let root = client.get(s.url("/.well-known/oauth-protected-resource")).send().await.unwrap();
    assert_eq!(root.status(), 404);
    let meta: Value =
        client.get(s.url("/.well-known/oauth-authorization-server")).send().await.unwrap().json().await.unwrap();
    assert_eq!(meta["scopes_supported"], json!(["notes:read", "notes:write", "openid"]));
}

/// (The kit checks the listing, the `SCOPE:` lines and the refusals one tier below.)
#[tokio::test]
async fn an_mcp_call_and_rest_reach_the_same_implementation() {
    let s = Server::start(None).await;
    let (read, write) = (s.token("acme", "notes:read"), s.token("acme", "notes:write"));
    let create = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "notes.create", "arguments": {"title": "From MCP", "tags": ["mcp"]}}});
    let created: Value = mcp(&s, &write, create).await.json().await.unwrap();
    let note = &created["result"]["structuredContent"];
    assert_eq!(note["title"], "From MCP");
    assert_eq!(note["state"], "draft");

    // The same note through REST: one implementation behind both surfaces.
    let id = note["id"].as_str().unwrap();
    let got: Value = reqwest::Client::new()
        .get(s.url(&format!("/api/v1/notes/{id}")))
        .bearer_auth(&read)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got["tags"], json!(["mcp"]));
}

#[tokio::test]
async fn the_docs_list_the_service_alone() {
    let s = Server::start(None).await;
    let client = reqwest::Client::new();
    let init = client.get(s.url("/docs/swagger-initializer.js")).send().await.unwrap().text().await.unwrap();
    assert!(init.contains("Notes (OpenAPI 3.1)") && init.contains(&s.url("/openapi/notes.json")), "{init}");
    assert!(!init.contains("vault") && !init.contains("prospector"), "{init}");
    // The conformance kit checks the documents served against the generated ones.
}

async fn audit_rows(s: &Server, database_url: Option<&str>) -> Vec<(String, String, i64)> {
    use sqlx::Row;
    let pool = notes_server::pool(s, database_url).await;
    sqlx::query("SELECT operation, outcome, status FROM audit_events WHERE tenant_id = $1 ORDER BY occurred_at, id")
        .bind("acme-notes")
        .fetch_all(&pool)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

async fn crud(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let tenant = "acme-notes";
    if let Some(url) = database_url {
        // A shared PostgreSQL database: start this tenant from nothing.
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(url).await.unwrap();
        for table in ["note_tags", "notes", "audit_events"] {
            sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table} WHERE tenant_id = $1")))
                .bind(tenant)
                .execute(&pool)
                .await
                .unwrap();
        }
    }
    let write = s.token(tenant, "notes:write");
    let other = s.token("other-notes", "notes:write");
    let resp = client
        .post(s.url("/api/v1/notes"))
        .bearer_auth(&write)
        .json(&json!({"title": "Groceries", "tags": ["home", "food"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let note: Value = resp.json().await.unwrap();
    let id = note["id"].as_str().unwrap().to_string();
    assert_eq!(note["tags"], json!(["food", "home"]));
    client
        .post(s.url("/api/v1/notes"))
        .bearer_auth(&write)
        .json(&json!({"title": "Taxes", "tags": ["home"]}))
        .send()
        .await
        .unwrap();

    // A list is the array of its notes; the total is in `X-Total-Count`.
    let list = |q: &str, token: &str| {
        let req = client.get(s.url(&format!("/api/v1/notes{q}"))).bearer_auth(token.to_string());
        async move {
            let resp = req.send().await.unwrap();
            let total: u64 = resp.headers()["x-total-count"].to_str().unwrap().parse().unwrap();
            (total, resp.json::<Value>().await.unwrap())
        }
    };
    let (total, all) = list("", &write).await;
    assert_eq!((total, all.as_array().map(Vec::len)), (2, Some(2)));
    let (total, food) = list("?tag=food", &write).await;
    assert_eq!(total, 1);
    assert_eq!(food[0]["title"], "Groceries");
    let (total, foreign) = list("", &other).await;
    assert_eq!((total, foreign), (0, json!([])), "another tenant sees none of them");
    let resp = client.get(s.url(&format!("/api/v1/notes/{id}"))).bearer_auth(&other).send().await.unwrap();
    assert_eq!(resp.status(), 404, "another tenant's note does not exist for it");

    let patch =
        |body: Value| client.patch(s.url(&format!("/api/v1/notes/{id}"))).bearer_auth(&write).json(&body).send();
    let published: Value = patch(json!({"state": "published"})).await.unwrap().json().await.unwrap();
    assert_eq!(published["state"], "published");
    let back = patch(json!({"state": "draft"})).await.unwrap();
    assert_eq!(back.status(), 409, "published notes cannot go back to draft");
    let back: Value = back.json().await.unwrap();
    // Problem details (the service's wire format): each detail is a member of its own.
    assert_eq!(back["allowed"], json!(["archived"]));

    let resp = client.delete(s.url(&format!("/api/v1/notes/{id}"))).bearer_auth(&write).send().await.unwrap();
    assert_eq!(resp.status(), 204);
    let resp = client.delete(s.url(&format!("/api/v1/notes/{id}"))).bearer_auth(&write).send().await.unwrap();
    assert_eq!(resp.status(), 404);

    let rows = audit_rows(&s, database_url).await;
    let seen: Vec<(&str, &str, i64)> = rows.iter().map(|(o, r, st)| (o.as_str(), r.as_str(), *st)).collect();
    assert_eq!(
        seen,
        [
            ("create_note", "allowed", 201),
            ("create_note", "allowed", 201),
            ("list_notes", "allowed", 200),
            ("list_notes", "allowed", 200),
            ("update_note", "allowed", 200),
            ("update_note", "failed", 409),
            ("delete_note", "allowed", 204),
            ("delete_note", "failed", 404),
        ]
    );
}

/// Bare bodies (`[wire] success = "bare"`): a page is the array of its items, its place in the
/// list in `X-Total-Count` and RFC 8288 `Link` (the request's own filters kept, each target
/// relative to the request's URL); over MCP, whose structured content is an object, the same
/// page is `{"items", "total", "page", "per_page"}`.
#[tokio::test]
async fn a_page_is_an_array_with_its_place_in_the_headers() {
    let s = Server::start(None).await;
    let client = reqwest::Client::new();
    let write = s.token("pages", "notes:write");
    for i in 0..5 {
        let resp = client
            .post(s.url("/api/v1/notes"))
            .bearer_auth(&write)
            .json(&json!({"title": format!("Note {i}"), "tags": ["work"]}))
            .send()
            .await
            .unwrap();
        let note: Value = resp.json().await.unwrap();
        assert_eq!(note["title"], format!("Note {i}"), "the created note itself: {note}");
    }
    let first = s.url("/api/v1/notes?tag=work&per_page=2&page=2");
    let resp = client.get(&first).bearer_auth(&write).send().await.unwrap();
    assert_eq!(resp.headers()["x-total-count"], "5");
    let link = resp.headers()["link"].to_str().unwrap().to_string();
    assert_eq!(
        link,
        "<?tag=work&page=1&per_page=2>; rel=\"first\", <?tag=work&page=1&per_page=2>; rel=\"prev\", \
         <?tag=work&page=3&per_page=2>; rel=\"next\", <?tag=work&page=3&per_page=2>; rel=\"last\""
    );
    let page: Value = resp.json().await.unwrap();
    assert_eq!(page.as_array().map(Vec::len), Some(2), "{page}");
    // A client follows `next` as RFC 3986 resolves it against the URL it asked.
    let next = link.split(", ").find(|l| l.ends_with("rel=\"next\"")).unwrap();
    let target = next.trim_start_matches('<').split('>').next().unwrap();
    let url = reqwest::Url::parse(&first).unwrap().join(target).unwrap();
    let resp = client.get(url).bearer_auth(&write).send().await.unwrap();
    assert!(!resp.headers()["link"].to_str().unwrap().contains("rel=\"next\""), "the last page has no next");
    let last: Value = resp.json().await.unwrap();
    assert_eq!(last.as_array().map(Vec::len), Some(1), "{last}");

    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "notes.list", "arguments": {"tag": ["work"], "per_page": 2}}});
    let answer: Value = mcp(&s, &write, call).await.json().await.unwrap();
    let content = &answer["result"]["structuredContent"];
    assert_eq!((&content["total"], &content["page"], &content["per_page"]), (&json!(5), &json!(1), &json!(2)));
    assert_eq!(content["items"].as_array().map(Vec::len), Some(2), "{answer}");
}

/// A note's content is a tagged union (`kind` names the variant) and its reminder an untagged
/// one (told apart by the field only its variant has): each is stored, read back and changed as
/// the variant it is, and a value that is no variant is refused with a 422 naming the field.
async fn unions(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let write = s.token("unions", "notes:write");
    let notes = s.url("/api/v1/notes");
    let checklist = json!({"kind": "checklist", "items": [{"label": "milk", "done": false}]});
    let body = json!({"title": "Shopping", "content": checklist, "reminder": {"every_days": 7}});
    let resp = client.post(&notes).bearer_auth(&write).json(&body).send().await.unwrap();
    assert_eq!(resp.status(), 201);
    let created: Value = resp.json().await.unwrap();
    assert_eq!((&created["content"], &created["reminder"]), (&checklist, &json!({"every_days": 7})));
    let id = created["id"].as_str().unwrap().to_string();
    let one = s.url(&format!("/api/v1/notes/{id}"));
    let read: Value = client.get(&one).bearer_auth(&write).send().await.unwrap().json().await.unwrap();
    assert_eq!((&read["content"], &read["reminder"]), (&checklist, &json!({"every_days": 7})), "as stored");

    // Another variant of each; then the reminder cleared.
    let text = json!({"kind": "text", "text": "Just milk."});
    let at = json!({"at": "2030-01-02T03:04:05Z"});
    let resp = client.patch(&one).bearer_auth(&write).json(&json!({"content": text, "reminder": at})).send().await;
    let changed: Value = resp.unwrap().json().await.unwrap();
    assert_eq!((&changed["content"], &changed["reminder"]), (&text, &at));
    let resp = client.patch(&one).bearer_auth(&write).json(&json!({"reminder": null})).send().await;
    let cleared: Value = resp.unwrap().json().await.unwrap();
    assert!(cleared.get("reminder").is_none() && cleared["content"] == text, "{cleared}");

    // Values that are no variant: each refused, naming the field; nothing is stored.
    for (bad, field, detail) in [
        (
            json!({"content": {"kind": "poem", "text": "x"}}),
            "content.kind",
            "content.kind must be one of: text, checklist, link, sketch",
        ),
        (
            json!({"content": {"text": "x"}}),
            "content.kind",
            "content.kind is required: one of text, checklist, link, sketch",
        ),
        (json!({"content": {"kind": "text", "items": []}}), "content.items", "unknown field content.items"),
        (
            json!({"content": {"kind": "checklist", "items": [{"label": ""}]}}),
            "content.items[0].label",
            "content.items[0].label must be at least 1 characters long",
        ),
        (
            json!({"reminder": {"every_days": 0}}),
            "reminder.every_days",
            "reminder.every_days must be between 1 and 365",
        ),
        (
            json!({"reminder": {"at": "2030-01-02T03:04:05Z", "every_days": 2}}),
            "reminder",
            "reminder mixes the fields of once and repeating: it must be one of them",
        ),
        (
            json!({"reminder": {"days": 2}}),
            "reminder",
            "reminder must be one of: once (with at), repeating (with every_days)",
        ),
    ] {
        let resp = client.patch(&one).bearer_auth(&write).json(&bad).send().await.unwrap();
        assert_eq!(resp.status(), 422, "{bad}");
        let problem: Value = resp.json().await.unwrap();
        assert_eq!(
            (problem["field"].as_str(), problem["detail"].as_str()),
            (Some(field), Some(detail)),
            "{bad}: {problem}"
        );
    }
    let read: Value = client.get(&one).bearer_auth(&write).send().await.unwrap().json().await.unwrap();
    assert_eq!(read, cleared, "the refused changes left the note as it was");

    // Over MCP the tool takes and answers the same unions.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "notes.create",
        "arguments": {"title": "From MCP", "content": {"kind": "text", "text": "hi"}, "reminder": {"at": "2030-01-01T00:00:00Z"}}}});
    let answer: Value = mcp(&s, &write, call).await.json().await.unwrap();
    let note = &answer["result"]["structuredContent"];
    assert_eq!(
        (&note["content"]["kind"], &note["reminder"]["at"]),
        (&json!("text"), &json!("2030-01-01T00:00:00Z")),
        "{answer}"
    );
}

/// `sort` has a default (`newest`), which the handler sees when the request leaves it out and the
/// document states; `due_before` is a date, a link's `url` a URI and a reminder's `email` an
/// email address, each checked by the decoder with a 422 naming the field.
async fn defaults_and_formats(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    // A tenant of its own: a shared PostgreSQL database keeps earlier runs' notes.
    let write = s.token(&format!("formats-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let notes = s.url("/api/v1/notes");
    let mut ids = Vec::new();
    for title in ["b", "c", "a"] {
        let resp = client.post(&notes).bearer_auth(&write).json(&json!({"title": title})).send().await.unwrap();
        ids.push(resp.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string());
    }
    let titles = |q: &'static str| {
        let req = client.get(format!("{notes}{q}")).bearer_auth(write.clone());
        async move {
            let page: Value = req.send().await.unwrap().json().await.unwrap();
            page.as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap().to_string()).collect::<Vec<_>>()
        }
    };
    assert_eq!(titles("").await, ["a", "c", "b"], "the default order: newest first");
    assert_eq!(titles("?sort=newest").await, titles("").await);
    assert_eq!(titles("?sort=oldest").await, ["b", "c", "a"]);
    assert_eq!(titles("?sort=title").await, ["a", "b", "c"]);

    // A date filter: only notes due before the day.
    let due =
        |id: &str, at: &str| client.patch(format!("{notes}/{id}")).bearer_auth(&write).json(&json!({"due": at})).send();
    due(&ids[0], "2030-01-01T12:00:00Z").await.unwrap();
    due(&ids[1], "2030-01-03T00:00:00Z").await.unwrap();
    assert_eq!(titles("?due_before=2030-01-02&sort=title").await, ["b"]);

    // Formats: a link's URI, a reminder's email.
    let link = json!({"title": "read", "content": {"kind": "link", "url": "https://example.com/a", "label": "A"}});
    let resp = client.post(&notes).bearer_auth(&write).json(&link).send().await.unwrap();
    assert_eq!(resp.status(), 201);
    let mail = json!({"title": "call", "reminder": {"at": "2030-01-01T00:00:00Z", "email": "ann@example.com"}});
    assert_eq!(client.post(&notes).bearer_auth(&write).json(&mail).send().await.unwrap().status(), 201);
    for (query, body, field, detail) in [
        ("?due_before=2030-13-01", None, "due_before", "due_before must be an RFC 3339 date (YYYY-MM-DD)"),
        ("?due_before=2030-01-02T00:00:00Z", None, "due_before", "due_before must be an RFC 3339 date (YYYY-MM-DD)"),
        ("?sort=random", None, "sort", "sort must be one of: newest, oldest, title"),
        (
            "",
            Some(json!({"title": "x", "content": {"kind": "link", "url": "example.com/a"}})),
            "content.url",
            "content.url must be an absolute URI",
        ),
        (
            "",
            Some(json!({"title": "x", "reminder": {"at": "2030-01-01T00:00:00Z", "email": "ann"}})),
            "reminder.email",
            "reminder.email must be an email address",
        ),
    ] {
        let req = match &body {
            Some(b) => client.post(&notes).json(b),
            None => client.get(format!("{notes}{query}")),
        };
        let resp = req.bearer_auth(&write).send().await.unwrap();
        assert_eq!(resp.status(), 422, "{query} {body:?}");
        let problem: Value = resp.json().await.unwrap();
        assert_eq!((problem["field"].as_str(), problem["detail"].as_str()), (Some(field), Some(detail)), "{problem}");
    }

    // The documents state the default and the formats.
    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let params = doc["paths"]["/notes"]["get"]["parameters"].as_array().unwrap();
    let param = |name: &str| params.iter().find(|p| p["name"] == name).unwrap()["schema"].clone();
    assert_eq!(param("sort")["default"], "newest");
    assert_eq!(param("due_before")["format"], "date");
    let link = &doc["components"]["schemas"]["NoteContentLink"]["properties"]["url"];
    assert_eq!(link["format"], "uri");
}

/// The deprecated `archive_note` still works, and every answer of it (success, error, refusal)
/// carries `Deprecation` (RFC 9745) and `Sunset` (RFC 8594); the documents mark it and the
/// deprecated `newest_first` parameter, which still works.
async fn deprecation(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let write = s.token(&format!("deprecated-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let notes = s.url("/api/v1/notes");
    let resp = client.post(&notes).bearer_auth(&write).json(&json!({"title": "old"})).send().await.unwrap();
    let id = resp.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    client.post(&notes).bearer_auth(&write).json(&json!({"title": "new"})).send().await.unwrap();
    let marked = |resp: &reqwest::Response| {
        let h = resp.headers();
        // 2026-11-26T00:00:00Z, and the sunset day as an HTTP-date.
        assert_eq!(h.get("deprecation").and_then(|v| v.to_str().ok()), Some("@1795651200"), "{}", resp.url());
        assert_eq!(h.get("sunset").and_then(|v| v.to_str().ok()), Some("Tue, 01 Jun 2027 00:00:00 GMT"));
    };
    let archive = |id: &str| client.post(format!("{notes}/{id}/archive")).bearer_auth(&write).send();
    let resp = archive(&id).await.unwrap();
    assert_eq!(resp.status(), 200);
    marked(&resp);
    assert_eq!(resp.json::<Value>().await.unwrap()["state"], "archived");
    let resp = archive(&id).await.unwrap();
    assert_eq!(resp.status(), 200, "archiving an archived note changes nothing");
    let resp = archive("note_missing").await.unwrap();
    assert_eq!(resp.status(), 404);
    marked(&resp);
    let resp = client.post(format!("{notes}/{id}/archive")).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    marked(&resp);
    // Other operations are not deprecated.
    let resp = client.get(&notes).bearer_auth(&write).send().await.unwrap();
    assert!(resp.headers().get("deprecation").is_none());
    let titles: Vec<String> = client
        .get(format!("{notes}?newest_first=false"))
        .bearer_auth(&write)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(titles, ["old", "new"], "the deprecated parameter still works");

    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let op = &doc["paths"]["/notes/{id}/archive"]["post"];
    assert_eq!(op["deprecated"], true);
    assert!(
        op["description"]
            .as_str()
            .unwrap()
            .contains("**Deprecated** since 2026-11-26; it may be removed from 2027-06-01.")
    );
    assert_eq!(op["responses"]["200"]["headers"]["Sunset"]["schema"]["type"], "string");
    let params = doc["paths"]["/notes"]["get"]["parameters"].as_array().unwrap();
    assert_eq!(params.iter().find(|p| p["name"] == "newest_first").unwrap()["deprecated"], true);
}

/// `list_due_notes` answers a plain JSON array (not a page): the notes due within `days` (by
/// default 7), soonest first; over MCP the same list is `{"items": [...]}`, as its output
/// schema says.
async fn due_list(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let write = s.token(&format!("due-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let notes = s.url("/api/v1/notes");
    let now = chrono::Utc::now();
    for (title, days) in [("later", 30), ("soon", 3), ("past", -2), ("sooner", 1)] {
        let resp = client.post(&notes).bearer_auth(&write).json(&json!({"title": title})).send().await.unwrap();
        let (status, body) = (resp.status(), resp.json::<Value>().await.unwrap());
        assert_eq!(status, 201, "{body}");
        let id = body["id"].as_str().unwrap().to_string();
        let due = (now + chrono::Duration::days(days)).to_rfc3339();
        client.patch(format!("{notes}/{id}")).bearer_auth(&write).json(&json!({"due": due})).send().await.unwrap();
    }
    client.post(&notes).bearer_auth(&write).json(&json!({"title": "undated"})).send().await.unwrap();
    let titles = |body: &Value| -> Vec<String> {
        body.as_array().expect("a JSON array").iter().map(|n| n["title"].as_str().unwrap().to_string()).collect()
    };
    let due = |q: &'static str| client.get(format!("{notes}/due{q}")).bearer_auth(&write).send();
    let resp = due("").await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("x-total-count").is_none(), "a list, not a page");
    assert_eq!(titles(&resp.json().await.unwrap()), ["sooner", "soon"], "within the default 7 days, soonest first");
    assert_eq!(titles(&due("?days=60").await.unwrap().json().await.unwrap()), ["sooner", "soon", "later"]);
    assert_eq!(due("?days=0").await.unwrap().status(), 422);

    let call =
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "notes.due", "arguments": {}}});
    let answer: Value = mcp(&s, &write, call).await.json().await.unwrap();
    assert_eq!(titles(&answer["result"]["structuredContent"]["items"]), ["sooner", "soon"], "{answer}");
    let listed = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
    let tools: Value = mcp(&s, &write, listed).await.json().await.unwrap();
    let tool = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "notes.due").unwrap().clone();
    assert_eq!(tool["outputSchema"]["required"], json!(["items"]));

    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let schema = &doc["paths"]["/notes/due"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(schema["$ref"], "#/components/schemas/NoteList");
    assert_eq!(doc["components"]["schemas"]["NoteList"]["type"], "array");
}

on_both_backends!(due_list: a_list_operation_answers_a_plain_array_on_sqlite, a_list_operation_answers_a_plain_array_on_postgres, "notes due list");

on_both_backends!(deprecation: a_deprecated_operation_says_so_in_every_answer_on_sqlite, a_deprecated_operation_says_so_in_every_answer_on_postgres, "notes deprecation");

on_both_backends!(defaults_and_formats: defaults_reach_the_handler_and_formats_are_checked_on_sqlite, defaults_reach_the_handler_and_formats_are_checked_on_postgres, "notes defaults and formats");

on_both_backends!(unions: tagged_and_untagged_unions_round_trip_and_refuse_other_shapes_on_sqlite, tagged_and_untagged_unions_round_trip_and_refuse_other_shapes_on_postgres, "notes unions");

on_both_backends!(crud: notes_are_kept_per_tenant_and_every_operation_is_audited_on_sqlite, notes_are_kept_per_tenant_and_every_operation_is_audited_on_postgres, "the notes service");

#[tokio::test]
async fn two_services_claiming_the_same_paths_are_refused_when_the_server_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let config = runtime::Config::new("127.0.0.1:0".parse().unwrap(), None, dir.path().to_path_buf());
    let platform = runtime::Platform::open(config).await.unwrap();
    let (one, two) = (notes::Notes::open(&platform).await.unwrap(), notes::Notes::open(&platform).await.unwrap());
    let built = runtime::Server::builder(&platform).service(notes::api(one)).service(notes::api(two)).build();
    let error = built.expect_err("the second registration claims what the first holds").to_string();
    assert_eq!(error, "the service notes is registered twice");
}

/// `/metrics`, on its own listener, counts every operation of the service from its operation
/// table (here, each one's 401), successes, audit commits, MCP tool calls by outcome and rate-limit
/// refusals; the public port does not serve it.
#[tokio::test]
async fn metrics_count_every_operation_and_mcp_tool_by_outcome_on_their_own_listener() {
    let s = Server::start_with(None, true).await;
    assert_eq!(reqwest::get(s.url("/metrics")).await.unwrap().status(), 404, "not on the public port");
    for op in notes_api::notes::OPERATIONS {
        assert_eq!(call(op, s.url(&path_of(op)), None).await.status(), 401, "{}", op.id);
    }
    let (read, write) = (s.token("acme", "notes:read"), s.token("acme", "notes:write"));
    let created = reqwest::Client::new()
        .post(s.url("/api/v1/notes"))
        .bearer_auth(&write)
        .json(&json!({"title": "Measured"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let create = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "notes.create", "arguments": {"title": "Over MCP"}}})
    };
    assert_eq!(mcp(&s, &read, create(1)).await.status(), 403);
    assert_eq!(mcp(&s, &write, create(2)).await.status(), 200);

    let text = s.scrape().await;
    for op in notes_api::notes::OPERATIONS {
        let labels = [("service", "notes"), ("operation", op.id), ("status_class", "4xx")];
        assert_eq!(sample(&text, "specwright_http_requests_total", &labels), Some(1.0), "{}\n{text}", op.id);
    }
    let created = [("service", "notes"), ("operation", "create_note"), ("status_class", "2xx")];
    assert_eq!(sample(&text, "specwright_http_requests_total", &created), Some(1.0), "{text}");
    let latency = [("service", "notes"), ("operation", "create_note")];
    assert_eq!(sample(&text, "specwright_http_request_duration_seconds_count", &latency), Some(2.0), "{text}");
    for outcome in ["denied", "ok"] {
        let labels = [("service", "notes"), ("tool", "notes.create"), ("outcome", outcome)];
        assert_eq!(sample(&text, "specwright_mcp_tool_calls_total", &labels), Some(1.0), "{outcome}\n{text}");
    }
    // Audited: the REST create, the MCP create, and the MCP denial, one row per commit.
    let rows = sample(&text, "specwright_audit_batch_rows_count", &[]).expect("audit commits are measured");
    assert!(rows >= 3.0, "{text}");
    assert!(sample(&text, "specwright_db_transaction_wait_seconds_count", &[]).is_some_and(|n| n >= 3.0), "{text}");
    // A connection goes back to the pool a moment after its commit (sqlx returns it from a task
    // of its own), so the gauge is read until the pool is idle, as it must become.
    let mut in_use = sample(&text, "specwright_db_pool_connections", &[("state", "in_use")]);
    for _ in 0..40 {
        if in_use == Some(0.0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        in_use = sample(&s.scrape().await, "specwright_db_pool_connections", &[("state", "in_use")]);
    }
    assert_eq!(in_use, Some(0.0), "{text}");

    // The basic plan allows 120 requests a minute per token: one more is refused. (The window is
    // the UTC minute, which may roll over once during the loop: twice the limit always suffices.)
    let client = reqwest::Client::new();
    let mut refused = 0;
    for _ in 0..250 {
        let resp = client.get(s.url("/api/v1/notes")).bearer_auth(&read).send().await.unwrap();
        if resp.status() == 429 {
            refused += 1;
            break;
        }
    }
    assert_eq!(refused, 1, "the plan's limit was reached");
    let text = s.scrape().await;
    let labels = [("service", "notes"), ("operation", "list_notes")];
    assert_eq!(sample(&text, "specwright_rate_limited_total", &labels), Some(f64::from(refused)), "{text}");
}
