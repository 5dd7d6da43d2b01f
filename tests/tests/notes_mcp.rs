//! MCP beyond tools, against the notes binary: the resources and templates its `GET` operations
//! read, its prompts, and completions, each answered by the same implementation as REST, for the
//! caller's tenant only, on both protocol wires (2025-06-18's and 2026-07-28's stateless one).

mod mcp_wire;
mod notes_server;

use notes_server::{Server, mcp};
use serde_json::{Value, json};

/// The `result` of a JSON-RPC request, or its `error` as `Err`.
async fn rpc(s: &Server, token: &str, method: &str, params: Value) -> Result<Value, Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let resp = mcp(s, token, body).await;
    let answer: Value = resp.json().await.unwrap();
    match answer.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(answer["result"].clone()),
    }
}

async fn create_note(s: &Server, token: &str, title: &str, tags: &[&str]) -> Value {
    let args = json!({"name": "notes.create", "arguments": {"title": title, "tags": tags}});
    rpc(s, token, "tools/call", args).await.unwrap()["structuredContent"].clone()
}

async fn read(s: &Server, token: &str, uri: &str) -> Result<Value, Value> {
    rpc(s, token, "resources/read", json!({"uri": uri})).await
}

#[tokio::test]
async fn resources_and_templates_are_listed_with_their_scope_and_cache_hints() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:read");
    let listed = rpc(&s, &token, "resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = listed["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["notes://notes", "notes://notes/due", "notes://tags", "notes://notes/stats"]);
    assert_eq!((listed["ttlMs"].as_u64(), listed["cacheScope"].as_str()), (Some(300_000), Some("public")));
    let notes = &listed["resources"][0];
    assert_eq!(notes["mimeType"], "application/json");
    assert!(notes["description"].as_str().unwrap().ends_with("SCOPE: notes:read"), "{notes}");
    assert_eq!(notes["_meta"]["dev.specwright/operationId"], "list_notes");

    let templates = rpc(&s, &token, "resources/templates/list", json!({})).await.unwrap();
    let uris: Vec<&str> =
        templates["resourceTemplates"].as_array().unwrap().iter().map(|r| r["uriTemplate"].as_str().unwrap()).collect();
    assert_eq!(uris, ["notes://notes/{id}", "notes://exports/{id}", "notes://notes/{id}/attachments/{name}"]);
    assert_eq!(templates["cacheScope"], "public");
    // A list has one page: a cursor is none the server gave.
    let refused = rpc(&s, &token, "resources/list", json!({"cursor": "2"})).await.unwrap_err();
    assert_eq!(refused["code"], -32602);
}

#[tokio::test]
async fn a_resource_read_answers_what_rest_answers_for_the_callers_tenant_only() {
    let s = Server::start(None).await;
    let (acme, other) = (s.token("acme", "notes:write"), s.token("globex", "notes:write"));
    let note = create_note(&s, &acme, "Read me", &["work"]).await;
    let id = note["id"].as_str().unwrap();
    let uri = format!("notes://notes/{id}");

    let result = read(&s, &acme, &uri).await.unwrap();
    let contents = &result["contents"][0];
    assert_eq!(
        (contents["uri"].as_str(), contents["mimeType"].as_str()),
        (Some(uri.as_str()), Some("application/json"))
    );
    let body: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    let rest: Value = reqwest::Client::new()
        .get(s.url(&format!("/api/v1/notes/{id}")))
        .bearer_auth(&acme)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body, rest, "the resource is the REST body");
    // The caller's own data, read now.
    assert_eq!((result["ttlMs"].as_u64(), result["cacheScope"].as_str()), (Some(0), Some("private")));

    // Another tenant's note is no resource of this caller's, as one that does not exist.
    for (token, uri) in [(&other, uri.clone()), (&acme, "notes://notes/nope".to_string())] {
        let missing = read(&s, token, &uri).await.unwrap_err();
        assert_eq!((missing["code"].as_i64(), missing["data"]["uri"].as_str()), (Some(-32602), Some(uri.as_str())));
        assert_eq!(missing["data"]["error"]["status"], 404, "{missing}");
    }
    // A URI of no resource, and one of another scheme.
    for uri in ["notes://nothing", "file:///etc/passwd", ""] {
        let missing = read(&s, &acme, uri).await.unwrap_err();
        assert_eq!((missing["code"].as_i64(), missing["data"]["uri"].as_str()), (Some(-32602), Some(uri)));
    }

    // A fixed resource: the labels in use, a map.
    create_note(&s, &acme, "Second", &["work", "home"]).await;
    let labels = read(&s, &acme, "notes://tags").await.unwrap();
    let labels: Value = serde_json::from_str(labels["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(labels, json!({"home": 1, "work": 2}));
    // The first page of the list, as the tool answers it.
    let page = read(&s, &acme, "notes://notes").await.unwrap();
    let page: Value = serde_json::from_str(page["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(page["total"], 2, "{page}");
}

#[tokio::test]
async fn an_attachment_is_read_as_text_or_base64_by_its_type() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let id = create_note(&s, &token, "With files", &[]).await["id"].as_str().unwrap().to_string();
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    for (name, media, bytes) in [("a.txt", "text/plain", &b"plain words"[..]), ("b.png", "image/png", png)] {
        let put = reqwest::Client::new()
            .put(s.url(&format!("/api/v1/notes/{id}/attachments/{name}")))
            .bearer_auth(&token)
            .header("content-type", media)
            .body(bytes.to_vec())
            .send()
            .await
            .unwrap();
        assert!(put.status().is_success(), "{}", put.text().await.unwrap());
    }
    let text = read(&s, &token, &format!("notes://notes/{id}/attachments/a.txt")).await.unwrap();
    assert_eq!(text["contents"][0]["text"], "plain words");
    assert_eq!(text["contents"][0]["mimeType"], "text/plain");
    let image = read(&s, &token, &format!("notes://notes/{id}/attachments/b.png")).await.unwrap();
    use base64::Engine;
    let blob =
        base64::engine::general_purpose::STANDARD.decode(image["contents"][0]["blob"].as_str().unwrap()).unwrap();
    assert_eq!((blob.as_slice(), image["contents"][0]["mimeType"].as_str()), (png, Some("image/png")));
}

#[tokio::test]
async fn a_prompt_fills_in_its_arguments_and_embeds_the_callers_resources() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let note = create_note(&s, &token, "Dentist on Friday", &["health"]).await;
    let id = note["id"].as_str().unwrap();

    let listed = rpc(&s, &token, "prompts/list", json!({})).await.unwrap();
    let names: Vec<&str> = listed["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["summarize_note", "plan_due", "review_label", "tidy_state"]);
    assert_eq!(
        listed["prompts"][0]["arguments"],
        json!([{"name": "id", "description": "The note's id.", "required": true}])
    );

    let got = rpc(&s, &token, "prompts/get", json!({"name": "summarize_note", "arguments": {"id": id}})).await.unwrap();
    let messages = got["messages"].as_array().unwrap();
    assert_eq!((messages[0]["role"].as_str(), messages[0]["content"]["type"].as_str()), (Some("user"), Some("text")));
    let embedded = &messages[1]["content"];
    assert_eq!(embedded["type"], "resource");
    assert_eq!(embedded["resource"]["uri"], format!("notes://notes/{id}"));
    let text: Value = serde_json::from_str(embedded["resource"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["title"], "Dentist on Friday");

    let label = rpc(&s, &token, "prompts/get", json!({"name": "review_label", "arguments": {"label": "health"}})).await;
    let first = label.unwrap()["messages"][0]["content"]["text"].as_str().unwrap().to_string();
    assert!(first.starts_with("List my notes labelled \"health\" (the tool notes.list with tag=health)"), "{first}");

    // Bad arguments are refused, naming the argument; an unknown prompt too.
    for (params, named) in [
        (json!({"name": "summarize_note"}), "id"),
        (json!({"name": "summarize_note", "arguments": {"id": 7}}), "id"),
        (json!({"name": "summarize_note", "arguments": {"id": id, "other": "x"}}), "other"),
    ] {
        let refused = rpc(&s, &token, "prompts/get", params).await.unwrap_err();
        assert_eq!((refused["code"].as_i64(), refused["data"]["argument"].as_str()), (Some(-32602), Some(named)));
    }
    let refused = rpc(&s, &token, "prompts/get", json!({"name": "nope"})).await.unwrap_err();
    assert_eq!(refused["code"], -32602);
    // A note of no one's: the embedded read fails as the read itself would.
    let other = s.token("globex", "notes:read");
    let refused = rpc(&s, &other, "prompts/get", json!({"name": "summarize_note", "arguments": {"id": id}})).await;
    assert_eq!(refused.unwrap_err()["code"], -32602);
}

#[tokio::test]
async fn completions_offer_the_callers_own_values_by_prefix() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let first = create_note(&s, &token, "One", &["work", "home"]).await;
    create_note(&s, &token, "Two", &["workshop"]).await;
    create_note(&s, &s.token("globex", "notes:write"), "Theirs", &["worldwide"]).await;
    let complete = |reference: Value, name: &str, value: &str| {
        let params = json!({"ref": reference, "argument": {"name": name, "value": value}});
        rpc(&s, &token, "completion/complete", params)
    };
    let prompt = json!({"type": "ref/prompt", "name": "review_label"});
    let labels = complete(prompt.clone(), "label", "WO").await.unwrap();
    assert_eq!(labels["completion"]["values"], json!(["work", "workshop"]), "{labels}");
    assert_eq!(
        (labels["completion"]["total"].as_u64(), labels["completion"]["hasMore"].as_bool()),
        (Some(2), Some(false))
    );
    let none = complete(prompt, "label", "zz").await.unwrap();
    assert_eq!(none["completion"]["values"], json!([]));
    // An enum's values.
    let states = complete(json!({"type": "ref/prompt", "name": "tidy_state"}), "state", "").await.unwrap();
    assert_eq!(states["completion"]["values"], json!(["draft", "published", "archived"]));

    // A template's variable, and a prompt argument that is one, from the list of notes.
    let id = first["id"].as_str().unwrap();
    let template = json!({"type": "ref/resource", "uri": "notes://notes/{id}"});
    let ids = complete(template.clone(), "id", &id[..id.len() - 1]).await.unwrap();
    assert_eq!(ids["completion"]["values"], json!([id]));
    let by_prompt = complete(json!({"type": "ref/prompt", "name": "summarize_note"}), "id", id).await.unwrap();
    assert_eq!(by_prompt["completion"]["values"], json!([id]));
    // An argument without a source completes to nothing; an unknown reference is an error.
    let nothing = complete(json!({"type": "ref/resource", "uri": "notes://exports/{id}"}), "id", "").await.unwrap();
    assert_eq!(nothing["completion"]["values"], json!([]));
    let unknown = complete(json!({"type": "ref/prompt", "name": "nope"}), "x", "").await.unwrap_err();
    assert_eq!(unknown["code"], -32602);
}

/// The 2026-07-28 wire: no session, the protocol version and client in every request's `_meta`,
/// every result typed, lists and reads with their cache hints.
#[tokio::test]
async fn the_stateless_wire_reads_resources_and_prompts_too() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let id = create_note(&s, &token, "Stateless", &[]).await["id"].as_str().unwrap().to_string();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let send = |method: &'static str, name: Option<String>, mut params: Value| {
        params["_meta"] = meta.clone();
        let mut req = reqwest::Client::new()
            .post(s.url("/api/mcp"))
            .bearer_auth(&token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        if let Some(name) = name {
            req = req.header("mcp-name", name);
        }
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let listed = send("resources/list", None, json!({})).await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "public");
    let uri = format!("notes://notes/{id}");
    let read = send("resources/read", Some(uri.clone()), json!({"uri": uri})).await;
    assert_eq!(
        (read["result"]["resultType"].as_str(), read["result"]["ttlMs"].as_u64()),
        (Some("complete"), Some(0)),
        "{read}"
    );
    let prompt =
        send("prompts/get", Some("summarize_note".into()), json!({"name": "summarize_note", "arguments": {"id": id}}))
            .await;
    assert_eq!(prompt["result"]["messages"][1]["content"]["type"], "resource", "{prompt}");
}

/// A tool's content declared in the spec: `notes.create` answers the title and a link to the
/// new note's resource, which reads the note; the note stays the structured content.
#[tokio::test]
async fn a_created_note_is_linked_to_its_resource() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let args = json!({"name": "notes.create", "arguments": {"title": "Linked", "tags": []}});
    let result = rpc(&s, &token, "tools/call", args).await.unwrap();
    let id = result["structuredContent"]["id"].as_str().unwrap();
    assert_eq!(result["content"][0], json!({"type": "text", "text": "Linked"}));
    let link = &result["content"][1];
    assert_eq!(
        (link["type"].as_str(), link["uri"].as_str()),
        (Some("resource_link"), Some(format!("notes://notes/{id}").as_str()))
    );
    let read = read(&s, &token, link["uri"].as_str().unwrap()).await.unwrap();
    assert!(read["contents"][0]["text"].as_str().unwrap().contains("Linked"));
}

/// A 2026-07-28 request to notes, the client declaring the tasks extension when `tasks`.
async fn stateless(s: &Server, token: &str, method: &str, name: &str, mut params: Value, tasks: bool) -> Value {
    let capabilities = if tasks { json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}) } else { json!({}) };
    params["_meta"] = mcp_wire::stateless_meta(capabilities);
    let resp = mcp_wire::stateless_request(&s.url("/api/mcp"), token, method, name, 1, params).send().await.unwrap();
    mcp_wire::last_message(resp).await
}

/// The export over MCP: a task for a client that polls tasks, ending with the export written
/// (and kept across a restart of the server); the export started, as over REST, for any other.
#[tokio::test]
async fn an_export_is_a_task_for_a_client_that_polls_tasks() {
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    for i in 0..3 {
        create_note(&s, &token, &format!("Exported {i}"), &[]).await;
    }
    let call = json!({"name": "notes.export", "arguments": {}});
    let created = stateless(&s, &token, "tools/call", "notes.export", call.clone(), true).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let get = json!({"taskId": id});
    let mut done = Value::Null;
    for _ in 0..100 {
        done = stateless(&s, &token, "tasks/get", &id, get.clone(), true).await;
        if done["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let export = &done["result"]["result"]["structuredContent"];
    assert_eq!(export["state"], "done", "{done}");
    let status =
        rpc(&s, &token, "tools/call", json!({"name": "notes.export_status", "arguments": {"id": export["id"]}}))
            .await
            .unwrap();
    assert_eq!(status["structuredContent"]["notes"], 3, "{status}");
    // Without the extension: started, as REST answers.
    let started = stateless(&s, &token, "tools/call", "notes.export", call, false).await;
    assert_eq!(started["result"]["structuredContent"]["state"], "pending", "{started}");
    // The task's outcome is kept by the database: a restarted server answers it.
    let s = s.kill_and_restart().await;
    let token = s.token("acme", "notes:write");
    let kept = stateless(&s, &token, "tasks/get", &id, get, true).await;
    assert_eq!(kept["result"]["status"], "completed", "{kept}");
}

/// A 2026-07-28 `subscriptions/listen` request `id` watching `uris`, as the holder of `token`:
/// its stream.
async fn listen(s: &Server, token: &str, id: u64, uris: &[&str]) -> reqwest::Response {
    let params = json!({
        "_meta": mcp_wire::stateless_meta(json!({})),
        "notifications": {"resourceSubscriptions": uris, "toolsListChanged": true},
    });
    reqwest::Client::new()
        .post(s.url("/api/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}))
        .send()
        .await
        .unwrap()
}

async fn patch_note(s: &Server, token: &str, id: &str, title: &str) {
    let resp = reqwest::Client::new()
        .patch(s.url(&format!("/api/v1/notes/{id}")))
        .bearer_auth(token)
        .json(&json!({"title": title}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
}

#[tokio::test]
async fn a_listen_stream_hears_of_the_calls_that_change_what_it_watches_in_its_tenant_only() {
    let s = Server::start(None).await;
    let (acme, globex) = (s.token("acme", "notes:write"), s.token("globex", "notes:write"));
    let (first, second) = (create_note(&s, &acme, "Watched", &[]).await, create_note(&s, &acme, "Other", &[]).await);
    let (first, second) = (first["id"].as_str().unwrap(), second["id"].as_str().unwrap());
    let watched = format!("notes://notes/{first}");
    let resp = listen(&s, &acme, 41, &[&watched, "notes://tags", "notes://nothing/here"]).await;
    assert_eq!(resp.status(), 200);
    let mut stream = mcp_wire::Events::of(resp);

    // Acknowledged first, with what is granted: the resources the service has, and no list
    // changes (a spec's lists change only with a release).
    let ack = stream.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["notifications"], json!({"resourceSubscriptions": [watched, "notes://tags"]}));
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41);

    // Another tenant's call changes nothing of acme's; a change to another note changes the
    // tags (a view) but not the watched note; one to the watched note (by REST) changes both.
    create_note(&s, &globex, "Elsewhere", &[]).await;
    patch_note(&s, &acme, second, "Still other").await;
    let told = stream.next().await;
    assert_eq!(
        (told["method"].as_str(), told["params"]["uri"].as_str()),
        (Some("notifications/resources/updated"), Some("notes://tags")),
        "{told}"
    );
    assert_eq!(told["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41);
    patch_note(&s, &acme, first, "Changed").await;
    let told = [stream.next().await, stream.next().await];
    let uris: Vec<&str> = told.iter().map(|m| m["params"]["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, [watched.as_str(), "notes://tags"]);

    // A read is no change: the next thing heard is the deletion.
    read(&s, &acme, &watched).await.unwrap();
    let deleted =
        reqwest::Client::new().delete(s.url(&format!("/api/v1/notes/{first}"))).bearer_auth(&acme).send().await;
    assert!(deleted.unwrap().status().is_success());
    assert_eq!(stream.next().await["params"]["uri"], watched.as_str());
}

#[tokio::test]
async fn a_listen_stream_needs_the_scope_of_what_it_watches_and_earlier_revisions_are_not_offered_one() {
    let s = Server::start(None).await;
    // A token of another scope tier than the resource's is refused as a read would be.
    let export_token = s.token("acme", "profile");
    let resp = listen(&s, &export_token, 1, &["notes://notes"]).await;
    assert_eq!(resp.status(), 403, "{}", resp.text().await.unwrap());
    // Without a session to hear changes on, a 2025 client is offered no subscriptions.
    let token = s.token("acme", "notes:read");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let info: Value = mcp(&s, &token, init).await.json().await.unwrap();
    assert_eq!(info["result"]["capabilities"]["resources"], json!({}), "{info}");
    let refused = rpc(&s, &token, "resources/subscribe", json!({"uri": "notes://notes"})).await.unwrap_err();
    assert_eq!(refused["code"], -32601);
}

#[tokio::test]
async fn a_listen_stream_hears_of_the_calls_another_replica_served_on_postgresql() {
    let Some(url) = notes_server::postgres("the replicas' change announcements") else { return };
    let first = Server::start(Some(&url)).await;
    let second = first.replica().await;
    let acme = first.token("acme", "notes:write");
    let (note, other) =
        (create_note(&first, &acme, "Watched", &[]).await, create_note(&first, &acme, "Other", &[]).await);
    let (id, other) = (note["id"].as_str().unwrap(), other["id"].as_str().unwrap());
    let uri = format!("notes://notes/{id}");
    // Each replica names itself as the issuer of its tokens: the second's for calls to it.
    let acme_there = second.token("acme", "notes:write");
    let mut stream = mcp_wire::Events::of(listen(&second, &acme_there, 7, &[&uri, "notes://tags"]).await);
    assert_eq!(stream.next().await["method"], "notifications/subscriptions/acknowledged");
    // Changed through either replica, heard on the second's stream once each (its own call is
    // not heard again from the database); the other note's deletion changes the tags only.
    patch_note(&first, &acme, id, "Changed elsewhere").await;
    patch_note(&second, &acme_there, id, "Changed here").await;
    let deleted =
        reqwest::Client::new().delete(first.url(&format!("/api/v1/notes/{other}"))).bearer_auth(&acme).send().await;
    assert!(deleted.unwrap().status().is_success());
    let mut heard = Vec::new();
    for _ in 0..5 {
        let told = stream.next().await;
        assert_eq!(told["method"], "notifications/resources/updated", "{told}");
        heard.push(told["params"]["uri"].as_str().unwrap().to_string());
    }
    assert_eq!(heard, [uri.as_str(), "notes://tags", uri.as_str(), "notes://tags", "notes://tags"]);

    // The database drops the replicas' listening connections: the subscriber is told that what
    // it watches may have changed, and once the replica listens again it hears calls again.
    let db = notes_server::pool(&first, Some(&url)).await;
    let dropped = sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE '%listen%specwright_changes%' AND pid <> pg_backend_pid()",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    assert!(!dropped.is_empty(), "the replicas listen");
    let told = stream.next().await;
    assert_eq!(told["params"]["uri"], uri.as_str(), "told at once: {told}");
    let quiet = std::time::Duration::from_millis(1500);
    while stream.within(quiet).await.is_some() {}
    let mut again = None;
    for _ in 0..10 {
        patch_note(&first, &acme, id, "Changed once listened again").await;
        again = stream.within(std::time::Duration::from_secs(2)).await;
        if again.is_some() {
            break;
        }
    }
    assert_eq!(again.expect("heard again")["params"]["uri"], uri.as_str());
}

/// An export that ends in the background, outside any call (here: taken over after its process
/// stopped, when its status is read), is announced to the subscribers of its resource; on
/// PostgreSQL to those of another replica too.
async fn an_export_that_ends_in_the_background_is_announced(database_url: Option<&str>) {
    let s = Server::start(database_url).await;
    // Watched from another replica on PostgreSQL, from the same process on SQLite.
    let replica = match database_url {
        Some(_) => Some(s.replica().await),
        None => None,
    };
    let watcher = replica.as_ref().unwrap_or(&s);
    let tenant = format!("bg-{}", uuid::Uuid::now_v7().simple());
    let token = s.token(&tenant, "notes:write");
    create_note(&s, &token, "Exported", &[]).await;
    let client = reqwest::Client::new();
    let started = client.post(s.url("/api/v1/exports")).bearer_auth(&token).json(&json!({})).send().await.unwrap();
    let id = started.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let status_url = s.url(&format!("/api/v1/exports/{id}"));
    assert_eq!(notes_server::export_finished(&client, &status_url, &token).await["state"], "done");
    let uri = format!("notes://exports/{id}");
    let mut stream = mcp_wire::Events::of(listen(watcher, &watcher.token(&tenant, "notes:read"), 3, &[&uri]).await);
    assert_eq!(stream.next().await["method"], "notifications/subscriptions/acknowledged");

    // As a process killed mid-way would have left it: pending, its lease run out, no file.
    sqlx::query(
        "UPDATE note_exports SET state = 'pending', claimed_until = 0, blob_id = NULL, notes = NULL WHERE id = $1",
    )
    .bind(&id)
    .execute(&notes_server::pool(&s, database_url).await)
    .await
    .unwrap();
    // Reading the status is no change, but it takes the job over; its end is the news.
    let read = client.get(&status_url).bearer_auth(&token).send().await.unwrap();
    assert_eq!(read.json::<Value>().await.unwrap()["state"], "pending");
    let told = stream.next().await;
    assert_eq!(
        (told["method"].as_str(), told["params"]["uri"].as_str()),
        (Some("notifications/resources/updated"), Some(uri.as_str())),
        "{told}"
    );
    let now = read_resource(watcher, &watcher.token(&tenant, "notes:read"), &uri).await;
    assert_eq!(now["state"], "done", "{now}");
}

on_both_backends!(an_export_that_ends_in_the_background_is_announced: a_background_export_is_announced_on_sqlite, a_background_export_is_announced_on_postgres, "background announcements");

/// The JSON a resource read answers.
async fn read_resource(s: &Server, token: &str, uri: &str) -> Value {
    let read = read(s, token, uri).await.unwrap();
    serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap()
}
