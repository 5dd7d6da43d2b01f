//! Declared statuses, response headers and files against the notes binary, on both backends:
//! conditional requests (`ETag`, `If-None-Match` → 304, `If-Match` → 412, atomic with the
//! change), a redirect whose `Location` comes from the output, and an asynchronous export
//! (`202` with its status in `Location`, then a CSV file streamed from storage).

mod notes_server;

use notes_server::Server;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn etag(resp: &reqwest::Response) -> String {
    resp.headers().get("etag").expect("an ETag").to_str().unwrap().to_string()
}

/// A note read carries an `ETag`; `If-None-Match` with it is `304` and no body; a change with
/// `If-Match` naming an older version is `412` and changes nothing; with the current one it goes
/// ahead and answers the new tag; of concurrent changes based on one version exactly one lands.
async fn conditional(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let write = s.token(&format!("etag-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let notes = s.url("/api/v1/notes");
    let created = client.post(&notes).bearer_auth(&write).json(&json!({"title": "first"})).send().await.unwrap();
    assert_eq!(created.status(), 201);
    let id = created.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let note = format!("{notes}/{id}");
    let get = |tag: Option<&str>| {
        let mut req = client.get(&note).bearer_auth(&write);
        if let Some(tag) = tag {
            req = req.header("if-none-match", tag);
        }
        req.send()
    };

    let read = get(None).await.unwrap();
    assert_eq!(read.status(), 200);
    let v1 = etag(&read);
    assert!(v1.starts_with('"') && v1.ends_with('"'), "a strong tag: {v1}");
    assert_eq!(etag(&get(None).await.unwrap()), v1, "the same version has the same tag");
    for held in [v1.clone(), format!("W/{v1}"), format!("\"other\", {v1}"), "*".to_string()] {
        let resp = get(Some(&held)).await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_MODIFIED, "If-None-Match: {held}");
        assert_eq!(etag(&resp), v1);
        assert!(resp.headers().get("x-request-id").is_some());
        assert!(resp.bytes().await.unwrap().is_empty(), "a 304 has no body");
    }
    let resp = get(Some("\"other\"")).await.unwrap();
    assert_eq!(resp.status(), 200, "another tag: the note itself");
    assert_eq!(resp.json::<Value>().await.unwrap()["title"], "first");

    let patch = |tag: Option<&str>, title: &str| {
        let mut req = client.patch(&note).bearer_auth(&write).json(&json!({"title": title}));
        if let Some(tag) = tag {
            req = req.header("if-match", tag);
        }
        req.send()
    };
    // Based on the current version: it lands and answers the new version's tag.
    let changed = patch(Some(&v1), "second").await.unwrap();
    assert_eq!(changed.status(), 200);
    let v2 = etag(&changed);
    assert_ne!(v2, v1);
    assert_eq!(changed.json::<Value>().await.unwrap()["title"], "second");
    assert_eq!(etag(&get(None).await.unwrap()), v2, "the write's tag is the read's");
    assert_eq!(get(Some(&v1)).await.unwrap().status(), 200, "the old tag is no longer current");

    // Based on the old version: a lost update, refused; nothing changes.
    let stale = patch(Some(&v1), "lost").await.unwrap();
    assert_eq!(stale.status(), StatusCode::PRECONDITION_FAILED);
    assert_eq!(stale.headers()["content-type"], "application/problem+json");
    let problem: Value = stale.json().await.unwrap();
    assert_eq!((problem["code"].as_str(), problem["status"].as_u64()), (Some("precondition_failed"), Some(412)));
    assert_eq!(problem["etag"], json!(v2), "the problem names the current tag: {problem}");
    assert_eq!(get(None).await.unwrap().json::<Value>().await.unwrap()["title"], "second");
    // A weak tag never matches a write (strong comparison).
    assert_eq!(patch(Some(&format!("W/{v2}")), "weak").await.unwrap().status(), 412);
    // Not a list of entity tags: it names no version, so it matches none.
    let garbage = patch(Some("second"), "garbage").await.unwrap();
    assert_eq!(garbage.status(), 412);
    assert_eq!(get(None).await.unwrap().json::<Value>().await.unwrap()["title"], "second");
    // `*` and no `If-Match` at all: unconditional.
    assert_eq!(patch(Some("*"), "third").await.unwrap().status(), 200);
    let unconditional = patch(None, "fourth").await.unwrap();
    assert_eq!(unconditional.status(), 200);
    let v4 = etag(&unconditional);

    // Ten changes based on the same version at once: one lands, nine are refused.
    let mut racing = tokio::task::JoinSet::new();
    for i in 0..10 {
        let (client, note, write, v4) = (client.clone(), note.clone(), write.clone(), v4.clone());
        racing.spawn(async move {
            let resp = client
                .patch(&note)
                .bearer_auth(&write)
                .header("if-match", v4)
                .json(&json!({"title": format!("racer {i}")}))
                .send()
                .await
                .unwrap();
            resp.status().as_u16()
        });
    }
    let mut statuses = racing.join_all().await;
    statuses.sort_unstable();
    assert_eq!(statuses, [vec![200], vec![412; 9]].concat(), "exactly one change based on one version lands");

    // A delete names the version it deletes, too.
    let current = etag(&get(None).await.unwrap());
    let resp = client.delete(&note).bearer_auth(&write).header("if-match", &v4).send().await.unwrap();
    assert_eq!(resp.status(), 412);
    assert_eq!(get(None).await.unwrap().status(), 200, "still there");
    let resp = client.delete(&note).bearer_auth(&write).header("if-match", &current).send().await.unwrap();
    assert_eq!(resp.status(), 204);
    let resp = client.delete(&note).bearer_auth(&write).header("if-match", "*").send().await.unwrap();
    assert_eq!(resp.status(), 404);

    // The documents say all of it.
    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let read = &doc["paths"]["/notes/{id}"]["get"];
    assert!(read["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "If-None-Match"));
    assert_eq!(read["responses"]["200"]["headers"]["ETag"]["schema"]["type"], "string");
    assert!(read["responses"]["304"]["content"].is_null());
    let change = &doc["paths"]["/notes/{id}"]["patch"];
    let if_match = change["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "If-Match").unwrap();
    assert_eq!(if_match["required"], false);
    assert!(change["responses"]["412"]["description"].as_str().unwrap().contains("precondition_failed"));
}

/// `open_note` answers `302` with the link's URL in `Location` and no body; a note holding no
/// link is `409 no_link`, a missing one `404`.
async fn redirect(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let write = s.token(&format!("open-{}", uuid::Uuid::now_v7().simple()), "notes:write");
    let notes = s.url("/api/v1/notes");
    let create = |body: Value| client.post(&notes).bearer_auth(&write).json(&body).send();
    let url = "https://example.com/read?later=1#top";
    let link = create(json!({"title": "read", "content": {"kind": "link", "url": url}})).await.unwrap();
    let link = link.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let text = create(json!({"title": "plain", "content": {"kind": "text", "text": "hi"}})).await.unwrap();
    let text = text.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();

    let resp = client.get(format!("{notes}/{link}/open")).bearer_auth(&write).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FOUND);
    assert_eq!(resp.headers()["location"], url);
    assert!(resp.headers().get("content-type").is_none());
    assert!(resp.bytes().await.unwrap().is_empty(), "a redirect of headers alone has no body");
    let resp = client.get(format!("{notes}/{text}/open")).bearer_auth(&write).send().await.unwrap();
    assert_eq!(resp.status(), 409);
    assert_eq!(resp.json::<Value>().await.unwrap()["code"], "no_link");
    let resp = client.get(format!("{notes}/note_missing/open")).bearer_auth(&write).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    let resp = client.get(format!("{notes}/{link}/open")).send().await.unwrap();
    assert_eq!(resp.status(), 401, "a redirect is guarded like every route");

    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let found = &doc["paths"]["/notes/{id}/open"]["get"]["responses"]["302"];
    assert_eq!(found["headers"]["Location"]["schema"]["type"], "string");
    assert!(found["content"].is_null());
    assert!(doc["components"]["schemas"]["Redirect"].is_null(), "a model of headers alone is no schema");
}

/// `create_export` answers `202` with the export's status as a relative `Location` and a
/// `Retry-After`; the status says when it is done, with its size, note count and a relative
/// download link; the file is the caller's notes as CSV (quoted, formulas defused), with its
/// name; another tenant sees none of it; over MCP the same export starts and reports.
async fn export(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let tenant = format!("export-{}", uuid::Uuid::now_v7().simple());
    let write = s.token(&tenant, "notes:write");
    let notes = s.url("/api/v1/notes");
    for title in ["plain", "a, \"quoted\" one", "=HYPERLINK(\"x\")"] {
        let resp = client.post(&notes).bearer_auth(&write).json(&json!({"title": title, "tags": ["x"]})).send().await;
        assert_eq!(resp.unwrap().status(), 201);
    }
    let started = client.post(s.url("/api/v1/exports")).bearer_auth(&write).json(&json!({})).send().await.unwrap();
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    let location = started.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(started.headers()["retry-after"], "1");
    let body: Value = started.json().await.unwrap();
    assert_eq!(body["state"], "pending");
    assert_eq!(location, format!("exports/{}", body["id"].as_str().unwrap()), "relative to the request's URL");
    assert!(body.get("location").is_none(), "a header field is not in the body: {body}");
    let status_url = reqwest::Url::parse(&s.url("/api/v1/exports")).unwrap().join(&location).unwrap().to_string();

    let done = notes_server::export_finished(&client, &status_url, &write).await;
    assert_eq!((done["state"].as_str(), done["notes"].as_i64()), (Some("done"), Some(3)), "{done}");
    let download = reqwest::Url::parse(&status_url).unwrap().join(done["download"].as_str().unwrap()).unwrap();
    assert_eq!(download.path(), format!("/api/v1/exports/{}/file", body["id"].as_str().unwrap()));
    let file = client.get(download.clone()).bearer_auth(&write).send().await.unwrap();
    assert_eq!(file.status(), 200);
    assert_eq!(file.headers()["content-type"], "text/csv");
    let disposition = file.headers()["content-disposition"].to_str().unwrap().to_string();
    assert!(disposition.starts_with(&format!("attachment; filename=\"notes-{}.csv\"", body["id"].as_str().unwrap())));
    let text = file.text().await.unwrap();
    assert_eq!(text.len() as i64, done["size"].as_i64().unwrap(), "the size the status gave");
    let lines: Vec<&str> = text.split("\r\n").collect();
    assert_eq!(lines[0], "id,title,state,tags,created_at,due");
    assert!(lines[1].contains(",plain,draft,x,"), "{text}");
    assert!(lines[2].contains(",\"a, \"\"quoted\"\" one\",draft,"), "{text}");
    assert!(lines[3].contains(",\"'=HYPERLINK(\"\"x\"\")\",draft,"), "{text}");
    assert_eq!(lines.len(), 5, "three notes and the final line break: {text}");

    // The status is tagged: polling with its ETag is answered 304 until it changes.
    let tagged = client.get(&status_url).bearer_auth(&write).send().await.unwrap();
    let tag = tagged.headers()["etag"].to_str().unwrap().to_string();
    let again = client.get(&status_url).bearer_auth(&write).header("if-none-match", &tag).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    // Another tenant: no such export, no file.
    let other = s.token("someone-else", "notes:read");
    assert_eq!(client.get(&status_url).bearer_auth(&other).send().await.unwrap().status(), 404);
    assert_eq!(client.get(download.clone()).bearer_auth(&other).send().await.unwrap().status(), 404);
    assert_eq!(
        client.get(s.url("/api/v1/exports/export_missing/file")).bearer_auth(&write).send().await.unwrap().status(),
        404
    );

    // Over MCP: the tool answers the body (a tool result has no headers); the status tool reports.
    let call = |id: u32, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let answer: Value =
        notes_server::mcp(&s, &write, call(1, "notes.export", json!({"state": "draft"}))).await.json().await.unwrap();
    let id = answer["result"]["structuredContent"]["id"].as_str().unwrap_or_else(|| panic!("{answer}")).to_string();
    for _ in 0..200 {
        let answer: Value = notes_server::mcp(&s, &write, call(2, "notes.export_status", json!({"id": id})))
            .await
            .json()
            .await
            .unwrap();
        if answer["result"]["structuredContent"]["state"] == "done" {
            assert_eq!(answer["result"]["structuredContent"]["notes"], 3);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let accepted = &doc["paths"]["/exports"]["post"]["responses"]["202"];
    assert!(accepted["headers"]["Location"].is_object() && accepted["headers"]["Retry-After"].is_object());
    let file = &doc["paths"]["/exports/{id}/file"]["get"]["responses"]["200"];
    assert_eq!(file["content"]["text/csv"]["schema"]["contentMediaType"], "text/csv");
    assert!(file["headers"]["Content-Disposition"].is_object());
}

on_both_backends!(export: an_export_is_accepted_then_downloaded_as_a_file_on_sqlite, an_export_is_accepted_then_downloaded_as_a_file_on_postgres, "notes exports");

on_both_backends!(conditional: conditional_requests_tag_versions_and_refuse_lost_updates_on_sqlite, conditional_requests_tag_versions_and_refuse_lost_updates_on_postgres, "notes conditional requests");

on_both_backends!(redirect: a_redirect_answers_its_location_on_sqlite, a_redirect_answers_its_location_on_postgres, "notes redirect");
