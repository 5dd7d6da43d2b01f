//! Bodies that are not JSON objects, against the notes binary on both backends: an array as the
//! whole request body (`PUT /notes/{id}/tags`) answered with an array of strings, a string as the
//! whole body (`PUT /notes/{id}/title`), a number (`GET /notes/count`), a map (`GET /tags`) and
//! named fields with a map beside them (`GET /notes/stats`) as the answer; each checked as the
//! decoder checks any field, and over MCP.

mod notes_server;

use notes_server::Server;
use serde_json::{Value, json};

async fn bodies(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    let client = reqwest::Client::new();
    let tenant = format!("bodies-{}", uuid::Uuid::now_v7().simple());
    let write = s.token(&tenant, "notes:write");
    let notes = s.url("/api/v1/notes");
    let mut ids = Vec::new();
    for title in ["one", "two", "three"] {
        let created = client.post(&notes).bearer_auth(&write).json(&json!({"title": title})).send().await.unwrap();
        assert_eq!(created.status(), 201);
        ids.push(created.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string());
    }
    let put_tags = |id: &str, body: &str| {
        client
            .put(format!("{notes}/{id}/tags"))
            .bearer_auth(&write)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };

    // The array is the body; the answer is the set, sorted, each once.
    let set = put_tags(&ids[0], r#"["shop", "home", "shop"]"#).await.unwrap();
    assert_eq!(set.status(), 200);
    assert_eq!(set.json::<Value>().await.unwrap(), json!(["home", "shop"]));
    assert_eq!(put_tags(&ids[1], r#"["home"]"#).await.unwrap().status(), 200);
    let note: Value =
        client.get(format!("{notes}/{}", ids[0])).bearer_auth(&write).send().await.unwrap().json().await.unwrap();
    assert_eq!(note["tags"], json!(["home", "shop"]));

    // Checked as any field is, by name; nothing changes on a refusal.
    for (body, status, field) in [
        (r#"["Home"]"#, 422, "tags[0]"),
        (r#"{"tags": ["home"]}"#, 422, "tags"),
        (r#""home""#, 422, "tags"),
        (r#"["a","b","c","d","e","f","g","h","i","j","k"]"#, 422, "tags"),
        ("", 422, "tags"),
        ("[\"home\"", 400, ""),
    ] {
        let refused = put_tags(&ids[0], body).await.unwrap();
        assert_eq!(refused.status(), status, "{body}");
        let problem: Value = refused.json().await.unwrap();
        if !field.is_empty() {
            assert_eq!(problem["field"], field, "{body}: {problem}");
        }
    }
    let no_type = client.put(format!("{notes}/{}/tags", ids[0])).bearer_auth(&write).body("[]").send().await.unwrap();
    assert_eq!(no_type.status(), 415);
    let note: Value =
        client.get(format!("{notes}/{}", ids[0])).bearer_auth(&write).send().await.unwrap().json().await.unwrap();
    assert_eq!(note["tags"], json!(["home", "shop"]), "refused bodies change nothing");
    assert_eq!(put_tags("note_missing", "[]").await.unwrap().status(), 404);
    // Another tenant's note is not found, and keeps its labels.
    let other = s.token("someone-else", "notes:write");
    let foreign =
        client.put(format!("{notes}/{}/tags", ids[0])).bearer_auth(&other).json(&json!([])).send().await.unwrap();
    assert_eq!(foreign.status(), 404);

    // Bytes inside JSON: a sketch's PNG in base64, checked as base64.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let sketch = json!({"title": "drawn", "content": {"kind": "sketch", "png": png, "caption": "a dot"}});
    let drawn = client.post(&notes).bearer_auth(&write).json(&sketch).send().await.unwrap();
    assert_eq!(drawn.status(), 201);
    let drawn: Value = drawn.json().await.unwrap();
    assert_eq!(drawn["content"]["png"], png, "the same bytes back");
    let drawn_id = drawn["id"].as_str().unwrap().to_string();
    for bad in ["not base64!", "iVBORw0KGgo", "iVBO-w0KGgo="] {
        let body = json!({"title": "drawn", "content": {"kind": "sketch", "png": bad}});
        let refused = client.post(&notes).bearer_auth(&write).json(&body).send().await.unwrap();
        assert_eq!(refused.status(), 422, "{bad}");
        let problem: Value = refused.json().await.unwrap();
        assert_eq!(problem["field"], "content.png", "{problem}");
        assert!(problem["detail"].as_str().unwrap_or_default().contains("base64"), "{problem}");
    }
    let deleted = client.delete(format!("{notes}/{drawn_id}")).bearer_auth(&write).send().await.unwrap();
    assert_eq!(deleted.status(), 204);

    // A string is the body.
    let renamed = client
        .put(format!("{notes}/{}/title", ids[2]))
        .bearer_auth(&write)
        .json(&json!("Groceries"))
        .send()
        .await
        .unwrap();
    assert_eq!(renamed.status(), 200);
    assert_eq!(renamed.json::<Value>().await.unwrap()["title"], "Groceries");
    for body in [json!(""), json!(42), json!(["Groceries"])] {
        let refused =
            client.put(format!("{notes}/{}/title", ids[2])).bearer_auth(&write).json(&body).send().await.unwrap();
        assert_eq!(refused.status(), 422, "{body}");
        assert_eq!(refused.json::<Value>().await.unwrap()["field"], "title");
    }

    // A number and a map are the answers.
    let count = |query: &str| client.get(s.url(&format!("/api/v1/notes/count{query}"))).bearer_auth(&write).send();
    let all = count("").await.unwrap();
    assert_eq!(all.status(), 200);
    assert_eq!(all.headers()["content-type"], "application/json");
    assert_eq!(all.text().await.unwrap(), "3");
    assert_eq!(count("?state=draft").await.unwrap().json::<Value>().await.unwrap(), json!(3));
    assert_eq!(count("?state=archived").await.unwrap().json::<Value>().await.unwrap(), json!(0));
    assert_eq!(count("?state=gone").await.unwrap().status(), 422);
    let tags: Value = client.get(s.url("/api/v1/tags")).bearer_auth(&write).send().await.unwrap().json().await.unwrap();
    assert_eq!(tags, json!({"home": 2, "shop": 1}));
    let empty: Value =
        client.get(s.url("/api/v1/tags")).bearer_auth(&other).send().await.unwrap().json().await.unwrap();
    assert_eq!(empty, json!({}), "another tenant's labels are its own");

    // Named fields and a map beside them.
    let archived = client
        .patch(format!("{notes}/{}", ids[1]))
        .bearer_auth(&write)
        .json(&json!({"state": "archived"}))
        .send()
        .await
        .unwrap();
    assert_eq!(archived.status(), 200);
    let stats = client.get(s.url("/api/v1/notes/stats")).bearer_auth(&write).send().await.unwrap();
    // The service's per-operation layer on `note_stats`, and on it alone.
    assert_eq!(stats.headers()["cache-control"], "private, max-age=10");
    let stats: Value = stats.json().await.unwrap();
    assert_eq!(stats, json!({"total": 3, "draft": 2, "archived": 1}));
    let counted = client.get(s.url("/api/v1/notes/count")).bearer_auth(&write).send().await.unwrap();
    assert_eq!((counted.status(), counted.headers().get("cache-control")), (reqwest::StatusCode::OK, None));
    let answer: Value = notes_server::mcp(
        &s,
        &write,
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "notes.stats", "arguments": {}}}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(answer["result"]["structuredContent"], stats, "{answer}");
    assert_eq!(count("?state=draft").await.unwrap().json::<Value>().await.unwrap(), json!(2));

    // Over MCP: the payload is an argument named after its field; a list answers `items`, a
    // number `value` (structured content is an object).
    let call = |id: u32, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let answer: Value =
        notes_server::mcp(&s, &write, call(1, "notes.set_tags", json!({"id": ids[2], "tags": ["work"]})))
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(answer["result"]["structuredContent"], json!({"items": ["work"]}), "{answer}");
    let answer: Value =
        notes_server::mcp(&s, &write, call(2, "notes.count", json!({"state": "draft"}))).await.json().await.unwrap();
    assert_eq!(answer["result"]["structuredContent"], json!({"value": 2}), "{answer}");
    let answer: Value = notes_server::mcp(&s, &write, call(3, "notes.set_tags", json!({"id": ids[2], "tags": "work"})))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    // The documents say what the body is.
    let doc: Value = client.get(s.url("/openapi/notes.json")).send().await.unwrap().json().await.unwrap();
    let body = &doc["paths"]["/notes/{id}/tags"]["put"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!((body["type"].as_str(), body["maxItems"].as_u64()), (Some("array"), Some(10)), "{body}");
    let answer = &doc["paths"]["/notes/count"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(answer["type"], "integer");
    let answer = &doc["paths"]["/tags"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(answer["additionalProperties"]["type"], "integer");
}

on_both_backends!(bodies: bodies_that_are_not_objects_travel_in_and_out_on_sqlite, bodies_that_are_not_objects_travel_in_and_out_on_postgres, "notes non-object bodies");
