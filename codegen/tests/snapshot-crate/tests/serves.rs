//! The committed snapshot, compiled as a crate, serves its spec with nothing but `support`: an
//! in-memory implementation of the generated trait behind a gate that admits every caller.
//! What a user's hand-written service sees of the generated code is exercised here, outside the
//! runtime: decoding and validation, the success envelope and the spec's own error model, 405 with `Allow`, and the
//! MCP dispatch calling the same endpoint as the REST route.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode, request::Parts};
use axum::response::Response;
use codegen_snapshot::memos::{self, MemosService, answers, errors, models};
use serde_json::{Value, json};
use support::{Gate, Operation, Paged, Paging, Problem};
use tower::ServiceExt;

#[derive(Default)]
struct Memos(Mutex<Vec<models::Memo>>);

impl MemosService for Memos {
    type Context = ();

    /// A memo sent as XML, `<memo><title>…</title></memo>`, or as the older form of other names
    /// (`MemoForm`), read into its JSON fields; plain text, which the spec lists too, is not read
    /// (415).
    fn read_body(&self, operation: &'static str, media: &str, body: &[u8]) -> support::BodyRead {
        if (operation, media) == ("create_memo", "application/x-www-form-urlencoded") {
            let form: Result<models::MemoForm, _> = serde_urlencoded::from_bytes(body);
            return Some(form.map_err(|e| e.to_string()).map(|form| {
                let tags: Vec<&str> = form.labels.as_deref().map(|l| l.split(',').collect()).unwrap_or_default();
                json!({ "title": form.memo_title, "tags": tags })
            }));
        }
        if (operation, media) != ("create_memo", "application/xml") {
            return None;
        }
        let text = std::str::from_utf8(body).map_err(|e| e.to_string());
        let title = text.and_then(|t| {
            let inner = t.trim().strip_prefix("<memo><title>").and_then(|t| t.strip_suffix("</title></memo>"));
            inner.map(str::to_string).ok_or_else(|| "expected <memo><title>…</title></memo>".to_string())
        });
        Some(title.map(|title| json!({ "title": title })))
    }

    async fn list_memos(
        &self,
        _: &mut (),
        input: models::ListMemosInput,
        paging: Paging,
    ) -> Result<support::Formats<answers::ListMemos>, errors::ListMemosError> {
        // In CSV, a header line and a line per memo of the page.
        let csv = |answer: &answers::ListMemos, media: &str| match answer {
            answers::ListMemos::Ok(page) if media == "text/csv" => {
                let lines: Vec<String> = page.items.iter().map(|m| format!("{},{}\r\n", m.id, m.title)).collect();
                Some(format!("id,title\r\n{}", lines.concat()).into_bytes())
            }
            _ => None,
        };
        if self.0.lock().unwrap().is_empty() {
            return Ok(support::Formats::rendered_by(answers::ListMemos::NoContent, csv));
        }
        let all: Vec<_> = self
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|n| input.state.is_none_or(|s| n.state == s))
            .filter(|n| input.filter_title.as_ref().is_none_or(|t| &n.title == t))
            .filter(|n| !input.except.as_ref().is_some_and(|x| x.contains(&n.title)))
            .filter(|n| input.r#match.as_ref().and_then(|m| m.get("title")).is_none_or(|t| &n.title == t))
            .filter(|n| input.created.as_ref().and_then(|w| w.after).is_none_or(|after| n.created_at >= after))
            .filter(|n| input.created.as_ref().and_then(|w| w.before).is_none_or(|before| n.created_at < before))
            .cloned()
            .collect();
        let items = all.iter().skip(paging.offset() as usize).take(paging.per_page as usize).cloned().collect();
        Ok(support::Formats::rendered_by(answers::ListMemos::Ok(Paged { items, total: all.len() as u64 }), csv))
    }

    async fn create_memo(
        &self,
        _: &mut (),
        input: models::CreateMemoInput,
    ) -> Result<models::Memo, errors::CreateMemoError> {
        let mut memos = self.0.lock().unwrap();
        let memo = models::Memo {
            id: format!("n{}", memos.len() + 1),
            title: input.title,
            state: models::MemoState::Draft,
            tags: input.tags.unwrap_or_default(),
            created_at: chrono::DateTime::UNIX_EPOCH,
            due: None,
            color_hint: input.color_hint,
            mood: input.mood,
            r#ref: input.x_source_ref,
        };
        memos.push(memo.clone());
        Ok(memo)
    }

    async fn update_memo(
        &self,
        _: &mut (),
        input: models::UpdateMemoInput,
    ) -> Result<models::Memo, errors::UpdateMemoError> {
        let mut memos = self.0.lock().unwrap();
        let memo = memos
            .iter_mut()
            .find(|n| n.id == input.id)
            .ok_or_else(|| errors::UpdateMemoError::NotFound(Problem::new("No such memo.")))?;
        if input.expected_title.is_some_and(|t| t != memo.title) {
            return Err(errors::UpdateMemoError::NotFound(Problem::new("No memo with that title.")));
        }
        if let Some(title) = input.title {
            memo.title = title;
        }
        if let Some(state) = input.state {
            memo.state = state;
        }
        if let Some(due) = input.due {
            memo.due = due;
        }
        Ok(memo.clone())
    }

    async fn count_memos(&self, _: &mut ()) -> Result<support::Formats<i64>, errors::CountMemosError> {
        let count = self.0.lock().unwrap().len() as i64;
        // In plain text, the number and a line break.
        Ok(support::Formats::rendered_by(count, |n, media| {
            (media == "text/plain").then(|| format!("{n}\n").into_bytes())
        }))
    }

    async fn count_memos_by_state(
        &self,
        _: &mut (),
        input: models::MemoStateCount,
    ) -> Result<i64, errors::CountMemosByStateError> {
        Ok(self.0.lock().unwrap().iter().filter(|m| m.state == input.state).count() as i64)
    }

    async fn count_memos_by_title(
        &self,
        _: &mut (),
        input: models::MemoTitleCount,
    ) -> Result<i64, errors::CountMemosByTitleError> {
        Ok(self.0.lock().unwrap().iter().filter(|m| m.title == input.title).count() as i64)
    }

    async fn search_memos(
        &self,
        _: &mut (),
        input: models::MemoSearch,
    ) -> Result<support::Formats<answers::SearchMemos>, errors::SearchMemosError> {
        let memos = self.0.lock().unwrap();
        let answer = if input.words.is_empty() {
            answers::SearchMemos::PartialContent(memos.len() as i64)
        } else {
            answers::SearchMemos::Ok(
                memos.iter().filter(|m| input.words.iter().all(|w| m.title.contains(w.as_str()))).count() as i64,
            )
        };
        // In plain text, either answer's number.
        Ok(support::Formats::rendered_by(answer, |answer, _| {
            let (answers::SearchMemos::Ok(n) | answers::SearchMemos::PartialContent(n)) = answer;
            Some(n.to_string().into_bytes())
        }))
    }

    async fn download_memo(
        &self,
        _: &mut (),
        input: models::MemoDownloadRef,
    ) -> Result<answers::DownloadMemo, errors::DownloadMemoError> {
        let memos = self.0.lock().unwrap();
        let memo = memos.iter().find(|m| m.id == input.id);
        let memo = memo.ok_or_else(|| errors::DownloadMemoError::NotFound(Problem::new("No such memo.")))?;
        if memo.state == models::MemoState::Archived {
            return Ok(answers::DownloadMemo::NoContent);
        }
        Ok(answers::DownloadMemo::Ok(models::MemoDownload {
            content: support::File::bytes("text/plain", format!("{}\n", memo.title)),
            x_memo_title: memo.title.clone(),
        }))
    }

    async fn get_memo_json(
        &self,
        _: &mut (),
        input: models::MemoJsonRef,
    ) -> Result<support::Formats<models::MemoAsJson>, errors::GetMemoJsonError> {
        let memos = self.0.lock().unwrap();
        let memo = memos.iter().find(|n| n.id == input.id);
        let memo = memo.ok_or_else(|| errors::GetMemoJsonError::NotFound(Problem::new("No such memo.")))?;
        let out = models::MemoAsJson {
            title: memo.title.clone(),
            memo_state: Some(memo.state),
            memo_tags: memo.tags.clone(),
            memo_dated: memo.due.is_some(),
            memo_weight: None,
            memo_created: memo.created_at,
        };
        // Its title as plain text, its headers the same.
        Ok(support::Formats::rendered_by(out, |m, _| Some(m.title.clone().into_bytes())))
    }

    async fn put_memo(
        &self,
        _: &mut (),
        input: models::PutMemoInput,
    ) -> Result<answers::PutMemo, errors::PutMemoError> {
        let mut memos = self.0.lock().unwrap();
        match memos.iter_mut().find(|n| n.id == input.id) {
            Some(memo) if memo.title == input.title => Ok(answers::PutMemo::NoContent),
            Some(memo) => {
                memo.title = input.title;
                Ok(answers::PutMemo::Ok(memo.clone()))
            }
            None => {
                let (source, tags) = input.origin.map_or((None, None), |o| (Some(o.source), o.tags));
                let memo = models::Memo {
                    id: input.id,
                    title: input.title,
                    state: models::MemoState::Draft,
                    tags: tags.unwrap_or_default(),
                    created_at: chrono::DateTime::UNIX_EPOCH,
                    due: None,
                    color_hint: None,
                    mood: None,
                    r#ref: source,
                };
                memos.push(memo.clone());
                Ok(answers::PutMemo::Created(memo))
            }
        }
    }

    async fn some_memos(
        &self,
        _: &mut (),
        input: models::MemoIds,
    ) -> Result<Vec<models::Memo>, errors::SomeMemosError> {
        let memos = self.0.lock().unwrap();
        Ok(input.ids.iter().filter_map(|id| memos.iter().find(|m| &m.id == id).cloned()).collect())
    }

    async fn memo_range(
        &self,
        _: &mut (),
        input: models::MemoRange,
    ) -> Result<Vec<models::Memo>, errors::MemoRangeError> {
        let memos = self.0.lock().unwrap();
        Ok(memos.iter().filter(|m| m.id >= input.from && m.id <= input.to).cloned().collect())
    }

    async fn check_memo(
        &self,
        _: &mut (),
        input: models::MemoCheckRef,
    ) -> Result<models::MemoCheck, errors::CheckMemoError> {
        let memos = self.0.lock().unwrap();
        let memo = memos.iter().find(|m| m.id == input.id);
        let memo = memo.ok_or_else(|| errors::CheckMemoError::NotFound(Problem::new("No such memo.")))?;
        Ok(models::MemoCheck { x_memo_state: Some(memo.state) })
    }

    async fn memo_titles(&self, _: &mut ()) -> Result<models::MemoTitles, errors::MemoTitlesError> {
        let memos = self.0.lock().unwrap();
        Ok(models::MemoTitles {
            titles: memos.iter().map(|m| m.title.clone()).collect(),
            x_memo_count: memos.len() as i64,
        })
    }

    async fn delete_memo(
        &self,
        _: &mut (),
        input: models::MemoRef,
    ) -> Result<answers::DeleteMemo, errors::DeleteMemoError> {
        // A memo named `old-…` moved to the rest of its name; one tagged `slow` is deleted later.
        if let Some(now) = input.id.strip_prefix("old-") {
            let message = format!("The memo is now {now}.");
            return Ok(answers::DeleteMemo::PermanentRedirect(format!("/api/v1/memos/{now}"), message));
        }
        let mut memos = self.0.lock().unwrap();
        let before = memos.len();
        let slow = memos.iter().any(|n| n.id == input.id && n.tags.iter().any(|t| t == "slow"));
        memos.retain(|n| n.id != input.id);
        if memos.len() == before {
            Err(errors::DeleteMemoError::NotFound(Problem::new("No such memo.")))
        } else if slow {
            Ok(answers::DeleteMemo::Accepted(1))
        } else {
            Ok(answers::DeleteMemo::NoContent)
        }
    }
}

/// Admits every request; records the refusals it is told of.
#[derive(Default)]
struct Open(Mutex<Vec<(&'static str, &'static str)>>);

impl Gate for Open {
    type Caller = ();
    type Context = ();

    fn context(&self, (): (), _: &'static Operation, _: support::Touched) {}

    async fn admit(&self, _: &mut Parts, _: &'static Operation) -> Result<(), Response> {
        Ok(())
    }

    async fn refused(&self, _: &(), op: &'static Operation, code: &'static str, _: u16) {
        self.0.lock().unwrap().push((op.id, code));
    }

    fn body_limit(&self) -> usize {
        1024
    }
}

async fn send(app: &axum::Router, method: &str, uri: &str, body: Option<Value>) -> (StatusCode, Option<String>, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string()))).unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let allow = resp.headers().get("allow").map(|v| v.to_str().unwrap().to_string());
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    let json = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap() };
    (status, allow, json)
}

#[tokio::test]
async fn the_snapshot_serves_its_operations_through_the_generated_router() {
    let gate = Arc::new(Open::default());
    let app = memos::router(Arc::new(Memos::default()), gate.clone());

    // No memo at all: the implementation answers the list's other answer, 204 without a body.
    let (status, _, body) = send(&app, "GET", "/api/v1/memos", None).await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));

    let (status, _, body) = send(&app, "POST", "/api/v1/memos", Some(json!({"title": "first", "tags": ["a"]}))).await;
    assert_eq!(
        (status, &body["data"]["title"], &body["data"]["state"]),
        (StatusCode::CREATED, &json!("first"), &json!("draft"))
    );
    send(&app, "POST", "/api/v1/memos", Some(json!({"title": "second"}))).await;

    // A camelCase wire name travels as it is; the Rust field is its snake case, which the wire
    // does not know.
    let (status, _, body) =
        send(&app, "POST", "/api/v1/memos", Some(json!({"title": "third", "colorHint": "teal"}))).await;
    assert_eq!((status, &body["data"]["colorHint"]), (StatusCode::CREATED, &json!("teal")));
    let (status, _, body) =
        send(&app, "POST", "/api/v1/memos", Some(json!({"title": "fourth", "color_hint": "teal"}))).await;
    assert_eq!((status, &body["error"]["details"]["field"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("color_hint")));

    let (status, _, body) = send(&app, "GET", "/api/v1/memos/count", None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"data": 3})), "a fixed segment beside `{{id}}`");
    assert!(memos::operations::COUNT_MEMOS.public && memos::operations::COUNT_MEMOS.allows([]));
    // Its other format, rendered by the implementation when `Accept` asks for it.
    let req = Request::get("/api/v1/memos/count").header("accept", "text/plain").body(Body::empty()).unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!((resp.status(), resp.headers()["content-type"].to_str().unwrap()), (StatusCode::OK, "text/plain"));
    assert_eq!(resp.headers()["vary"], "accept");
    assert_eq!(&axum::body::to_bytes(resp.into_body(), 64).await.unwrap()[..], b"3\n");

    // A list in one path segment, comma-separated: each memo named, in the order named.
    let (status, _, body) = send(&app, "GET", "/api/v1/memos/some/n2,n1,n9", None).await;
    let titles: Vec<&Value> = body["data"].as_array().unwrap().iter().map(|m| &m["title"]).collect();
    assert_eq!((status, titles), (StatusCode::OK, vec![&json!("second"), &json!("first")]));
    let (status, _, body) = send(&app, "GET", "/api/v1/memos/some/n1", None).await;
    assert_eq!((status, body["data"].as_array().map(Vec::len)), (StatusCode::OK, Some(1)));

    // A body in another format the operation lists: read by the implementation into the same
    // fields and checks; malformed, refused as malformed JSON is; not read, 415.
    let xml = |ct: &str, body: &'static str| {
        Request::post("/api/v1/memos").header("content-type", ct).body(Body::from(body)).unwrap()
    };
    let resp = app
        .clone()
        .oneshot(xml("application/xml; charset=utf-8", "<memo><title>from xml</title></memo>"))
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let body: Value =
        serde_json::from_slice(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()).unwrap();
    assert_eq!(body["data"]["title"], "from xml");
    let statuses = [
        ("application/xml", "<memo>"),
        ("application/xml", "<memo><title></title></memo>"),
        ("text/plain", "a memo"),
        ("text/csv", "a,memo"),
    ];
    let mut answered = Vec::new();
    for (ct, body) in statuses {
        answered.push(app.clone().oneshot(xml(ct, body)).await.unwrap().status().as_u16());
    }
    // Malformed; read but failing the title's `min_length` like JSON would; not read; not listed.
    assert_eq!(answered, [400, 422, 415, 415]);
    // A form of another shape than the input (`request_models`): the implementation reads it.
    let form = xml("application/x-www-form-urlencoded", "memo_title=by+form&labels=a,b");
    let resp = app.clone().oneshot(form).await.unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let made: Value =
        serde_json::from_slice(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()).unwrap();
    assert_eq!((&made["data"]["title"], &made["data"]["tags"]), (&json!("by form"), &json!(["a", "b"])));
    let resp = app.clone().oneshot(xml("application/x-www-form-urlencoded", "title=x")).await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "not the form's shape: malformed, as the reading says");
    let _ = send(&app, "DELETE", &format!("/api/v1/memos/{}", made["data"]["id"].as_str().unwrap()), None).await;
    let _ = send(&app, "DELETE", &format!("/api/v1/memos/{}", body["data"]["id"].as_str().unwrap()), None).await;

    // HEAD: the headers alone, and a 404 without its body.
    let head = |uri: &'static str| Request::head(uri).body(Body::empty()).unwrap();
    let resp = app.clone().oneshot(head("/api/v1/memos/n1")).await.unwrap();
    assert_eq!((resp.status(), resp.headers()["x-memo-state"].to_str().unwrap()), (StatusCode::OK, "draft"));
    assert!(axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap().is_empty());
    let resp = app.clone().oneshot(head("/api/v1/memos/n9")).await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);

    // A body that is not an object beside a response header: the list is the body, the count a
    // header, and MCP's structured content the list.
    let resp = app.clone().oneshot(Request::get("/api/v1/memos/titles").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!((resp.status(), resp.headers()["x-memo-count"].to_str().unwrap()), (StatusCode::OK, "3"));
    let body: Value =
        serde_json::from_slice(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()).unwrap();
    assert_eq!(body, json!({"data": ["first", "second", "third"]}));
    let service = Memos(Mutex::new(vec![]));
    let titles = call_tool(&service, &*gate, (), "memos.titles", json!({})).await.unwrap().unwrap();
    assert_eq!(titles, json!({"data": []}));

    // Two parameters in one segment, split at the text between them; without it, no route.
    let (status, _, body) = send(&app, "GET", "/api/v1/memos/range/n2..n3", None).await;
    let titles: Vec<&Value> = body["data"].as_array().unwrap().iter().map(|m| &m["title"]).collect();
    assert_eq!((status, titles), (StatusCode::OK, vec![&json!("second"), &json!("third")]));
    let (status, _, body) = send(&app, "GET", "/api/v1/memos/range/n2", None).await;
    assert_eq!((status, &body["error"]["code"]), (StatusCode::NOT_FOUND, &json!("not_found")), "{body}");

    // `{id}.json`: the parameter is what comes before the text; without the text, no route.
    let (status, _, body) = send(&app, "GET", "/api/v1/memos/n1.json", None).await;
    assert_eq!((status, &body["data"]), (StatusCode::OK, &json!({"title": "first"})));
    // Response headers of any scalar type, and a list as one comma-separated header.
    let resp = app.clone().oneshot(Request::get("/api/v1/memos/n1.json").body(Body::empty()).unwrap()).await.unwrap();
    let h = |name: &str| resp.headers().get(name).map(|v| v.to_str().unwrap().to_string());
    assert_eq!(
        (h("memo-state"), h("memo-tags"), h("memo-dated"), h("memo-weight")),
        (Some("draft".into()), Some("a".into()), Some("false".into()), None)
    );
    // A time as its JSON form writes it (RFC 3339), the same text the memo's `created_at` has.
    let created = h("memo-created").unwrap();
    assert!(chrono::DateTime::parse_from_rfc3339(&created).is_ok() && created.ends_with('Z'), "{created}");
    // In its other format, with the same headers.
    let req = Request::get("/api/v1/memos/n1.json").header("accept", "text/plain").body(Body::empty()).unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.headers()["memo-state"], "draft");
    assert_eq!(resp.headers()["content-type"], "text/plain");
    assert_eq!(&axum::body::to_bytes(resp.into_body(), 64).await.unwrap()[..], b"first");
    let (status, _, body) = send(&app, "GET", "/api/v1/memos/n1", None).await;
    assert_eq!((status, &body["error"]["code"]), (StatusCode::NOT_FOUND, &json!("not_found")), "{body}");
    let (status, allow, _) = send(&app, "POST", "/api/v1/memos/n1.json", None).await;
    assert_eq!((status, allow.as_deref()), (StatusCode::METHOD_NOT_ALLOWED, Some("PATCH, HEAD, GET, PUT, DELETE")));

    let (status, _, body) = send(&app, "GET", "/api/v1/memos?per_page=1&page=2", None).await;
    // The page of an operation with other answers is still a page, with its count and links.
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["meta"], json!({"total": 3, "page": 2, "per_page": 1}));
    assert_eq!(body["data"][0]["title"], "second");

    let (status, _, body) =
        send(&app, "PATCH", "/api/v1/memos/n1", Some(json!({"state": "published", "due": null}))).await;
    assert_eq!((status, &body["data"]["state"]), (StatusCode::OK, &json!("published")));
    // One name in two places: `?title=` is the query parameter (`expected_title`), the body's
    // `title` the new one.
    let renamed = json!({"title": "renamed"});
    let (status, _, _) = send(&app, "PATCH", "/api/v1/memos/n1?title=nope", Some(renamed.clone())).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, body) = send(&app, "PATCH", "/api/v1/memos/n1?title=first", Some(renamed)).await;
    assert_eq!((status, &body["data"]["title"]), (StatusCode::OK, &json!("renamed")));
    let (status, _, _) = send(&app, "PATCH", "/api/v1/memos/n1?expected_title=x", Some(json!({"title": "t"}))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "the key is no parameter's name");
    send(&app, "PATCH", "/api/v1/memos/n1", Some(json!({"title": "first"}))).await;

    // Errors are the spec's own model: `{"error": {"code", "message", "status", "details"}, "trace_id"}`.
    let (status, _, body) = send(&app, "DELETE", "/api/v1/memos/n9", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body,
        json!({"error": {"code": "not_found", "message": "No such memo.", "status": 404, "details": {}}}),
        "no request id was given, so no trace_id; nothing fills help_url"
    );
    let (status, _, body) = send(&app, "DELETE", "/api/v1/memos/n2", None).await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
}

#[tokio::test]
async fn names_that_are_no_identifiers_travel_as_the_wire_writes_them() {
    let app = memos::router(Arc::new(Memos::default()), Arc::new(Open::default()));
    let req = Request::post("/api/v1/memos")
        .header("content-type", "application/json")
        .header("x-source-ref", "import")
        .body(Body::from(json!({"title": "moody", "mood": "in-progress"}).to_string()))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let body: Value =
        serde_json::from_slice(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()).unwrap();
    assert_eq!((&body["data"]["mood"], &body["data"]["$ref"]), (&json!("in-progress"), &json!("import")));
    send(&app, "POST", "/api/v1/memos", Some(json!({"title": "plain", "mood": "1.0"}))).await;

    let (status, _, body) = send(&app, "GET", "/api/v1/memos?filter%5Btitle%5D=plain", None).await;
    assert_eq!(
        (status, body["meta"]["total"].clone(), &body["data"][0]["mood"]),
        (StatusCode::OK, json!(1), &json!("1.0"))
    );
    // A header that is a number is read as one.
    let get_with = |value: &str| Request::get("/api/v1/memos").header("x-max-age", value).body(Body::empty()).unwrap();
    assert_eq!(app.clone().oneshot(get_with("5")).await.unwrap().status(), StatusCode::OK);
    assert_eq!(app.clone().oneshot(get_with("five")).await.unwrap().status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.clone().oneshot(get_with("-1")).await.unwrap().status(), StatusCode::UNPROCESSABLE_ENTITY);
    // A comma-separated list is one parameter with its items split; an empty one is no item.
    send(&app, "POST", "/api/v1/memos", Some(json!({"title": "third"}))).await;
    let (_, _, body) = send(&app, "GET", "/api/v1/memos?except=plain,moody", None).await;
    assert_eq!((body["meta"]["total"].clone(), &body["data"][0]["title"]), (json!(1), &json!("third")));
    let (_, _, body) = send(&app, "GET", "/api/v1/memos?except=", None).await;
    assert_eq!(body["meta"]["total"], json!(3));
    // An object in the query: `created[after]=…` (deepObject), each member read as its field says
    // and checked as a body's would be; `lat`/`lng` members under their own names.
    let total = |query: &'static str| {
        let app = app.clone();
        async move {
            let (status, _, body) = send(&app, "GET", &format!("/api/v1/memos?{query}"), None).await;
            (status.as_u16(), body["meta"]["total"].as_u64(), body["error"]["message"].as_str().map(str::to_string))
        }
    };
    assert_eq!(total("created%5Bafter%5D=1970-01-01T00:00:00Z").await.1, Some(3));
    assert_eq!(
        total("created%5Bafter%5D=2000-01-01T00:00:00Z&created%5Bbefore%5D=2001-01-01T00:00:00Z").await.1,
        Some(0)
    );
    assert_eq!(total("created%5Bbefore%5D=1970-01-01T00:00:01Z").await.1, Some(3));
    assert_eq!(total("lat=10&lng=20").await.1, Some(3));
    let (status, _, message) = total("created%5Bafter%5D=yesterday").await;
    assert_eq!(status, 422, "{message:?}");
    let (status, _, message) = total("created%5Bsince%5D=2000-01-01T00:00:00Z").await;
    assert_eq!((status, message.as_deref()), (422, Some("unknown query parameter created[since]")));
    // A member missing, or out of its bounds, as a body's field would be.
    assert_eq!(total("lat=10").await.0, 422);
    assert_eq!(total("lat=100&lng=0").await.0, 422);
    assert_eq!(total("lat=1&lat=2&lng=0").await.0, 422, "a member given twice");
    // A parameter of JSON text, read as JSON and checked as its type says.
    assert_eq!(total("match=%7B%22title%22%3A%22third%22%7D").await.1, Some(1));
    let (status, _, message) = total("match=%7Btitle").await;
    assert!(status == 422 && message.as_deref().is_some_and(|m| m.contains("must be JSON text")), "{message:?}");
    assert_eq!(total("match=%7B%22title%22%3A1%7D").await.0, 422, "a map of strings holds no number");
    // The Rust spelling of a value is no wire value.
    let (status, _, body) =
        send(&app, "POST", "/api/v1/memos", Some(json!({"title": "x", "mood": "InProgress"}))).await;
    assert_eq!((status, &body["error"]["details"]["field"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("mood")));
    assert_eq!(models::MemoMood::parse("+"), Some(models::MemoMood::V2b));
}

#[tokio::test]
async fn a_json_body_travels_under_each_media_type_its_operation_lists() {
    let app = memos::router(Arc::new(Memos::default()), Arc::new(Open::default()));
    let (_, _, body) = send(&app, "POST", "/api/v1/memos", Some(json!({"title": "first"}))).await;
    let id = body["data"]["id"].as_str().unwrap().to_string();
    let patch = |content_type: &str, accept: Option<&str>| {
        let mut req = Request::patch(format!("/api/v1/memos/{id}")).header("content-type", content_type);
        if let Some(accept) = accept {
            req = req.header("accept", accept);
        }
        req.body(Body::from(json!({"title": "second"}).to_string())).unwrap()
    };
    for (accept, answered) in [
        (None, "application/json"),
        (Some("text/json"), "text/json"),
        (Some("application/xml, */*;q=0.1"), "application/json"),
    ] {
        let resp = app.clone().oneshot(patch("application/merge-patch+json", accept)).await.unwrap();
        assert_eq!((resp.status(), resp.headers()["content-type"].to_str().unwrap()), (StatusCode::OK, answered));
    }
    // Not JSON at all: 415, as before.
    let resp = app.clone().oneshot(patch("text/plain", None)).await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn bad_input_is_refused_with_the_catalog_code_and_reported_to_the_gate() {
    let gate = Arc::new(Open::default());
    let app = memos::router(Arc::new(Memos::default()), gate.clone());

    let (status, _, body) = send(&app, "POST", "/api/v1/memos", Some(json!({"title": ""}))).await;
    assert_eq!(
        (status, &body["error"]["code"], &body["error"]["details"]["field"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!("validation"), &json!("title"))
    );
    let (status, _, body) = send(&app, "POST", "/api/v1/memos", Some(json!({"title": "x", "colour": "red"}))).await;
    assert_eq!((status, &body["error"]["details"]["field"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("colour")));
    let (status, _, body) = send(&app, "GET", "/api/v1/memos?state=lost", None).await;
    assert_eq!((status, &body["error"]["details"]["field"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("state")));
    let (status, _, _) = send(&app, "GET", "/api/v1/memos?per_page=101", None).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    // An enum of numbers, an exclusive bound and a multiple, each with its own words.
    for (field, value, words) in [
        ("priority", json!(4), "priority must be one of [1,2,3]"),
        ("weight", json!(0), "weight must be greater than 0"),
        ("weight", json!(0.75), "weight must be a multiple of 0.5"),
        ("scores", json!([1, "x"]), "scores[1] must be an integer"),
        ("due", json!(true), "due must be one of: an RFC 3339 date (YYYY-MM-DD); an integer"),
    ] {
        let (status, _, body) = send(&app, "POST", "/api/v1/memos", Some(json!({"title": "x", field: value}))).await;
        assert_eq!(
            (status, body["error"]["message"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(words)),
            "{body}"
        );
    }
    let ok = json!({"title": "x", "priority": 2, "weight": 1.5, "scores": [1, null, 3], "due": "2026-12-01"});
    assert_eq!(send(&app, "POST", "/api/v1/memos", Some(json!({"title": "y", "due": 3}))).await.0, StatusCode::CREATED);
    assert_eq!(send(&app, "POST", "/api/v1/memos", Some(ok)).await.0, StatusCode::CREATED);

    // A change that names nothing to change: the groups the input requires, in the spec's words.
    let (status, _, body) = send(&app, "PATCH", "/api/v1/memos/n1", Some(json!({}))).await;
    assert_eq!(
        (status, body["error"]["message"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("give at least one of: `title`; or `state`; or `due`")),
        "{body}"
    );

    let (status, allow, body) = send(&app, "PUT", "/api/v1/memos", Some(json!({}))).await;
    assert_eq!(
        (status, allow.as_deref(), &body["error"]["code"]),
        (StatusCode::METHOD_NOT_ALLOWED, Some("GET, POST"), &json!("method_not_allowed"))
    );

    let refused = gate.0.lock().unwrap().clone();
    assert_eq!(
        refused,
        [
            ("create_memo", "validation"),
            ("create_memo", "validation"),
            ("list_memos", "validation"),
            ("list_memos", "validation"),
            ("create_memo", "validation"),
            ("create_memo", "validation"),
            ("create_memo", "validation"),
            ("create_memo", "validation"),
            ("create_memo", "validation"),
            ("update_memo", "validation")
        ]
    );
}

#[tokio::test]
async fn a_tool_call_reaches_the_same_endpoint_as_the_rest_route() {
    let (service, gate) = (Memos::default(), Open::default());
    let created = call_tool(&service, &gate, (), "memos.create", json!({"title": "by tool"})).await;
    assert_eq!(created.unwrap().unwrap()["data"]["title"], "by tool");
    let listed = call_tool(&service, &gate, (), "memos.list", json!({})).await.unwrap().unwrap();
    assert_eq!(listed["meta"]["total"], 1);
    let refused = call_tool(&service, &gate, (), "memos.create", json!({})).await.unwrap().unwrap_err();
    assert_eq!((refused.code, refused.status), ("validation", 422));
    assert!(call_tool(&service, &gate, (), "memos.nothing", json!({})).await.is_none());
}

#[tokio::test]
async fn a_layer_wraps_the_routes_of_the_operations_it_selects_and_no_other() {
    let mut layers = support::Layers::default();
    layers.push(
        support::Select::Operation("list_memos"),
        tower::util::MapResponseLayer::new(|mut r: Response| {
            r.headers_mut().insert("x-listed", axum::http::HeaderValue::from_static("yes"));
            r
        }),
    );
    let app = memos::router::router_with(Arc::new(Memos::default()), Arc::new(Open::default()), layers);
    let list = app.clone().oneshot(Request::get("/api/v1/memos").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(
        (list.status(), list.headers().get("x-listed").map(|v| v.to_str().unwrap())),
        (StatusCode::NO_CONTENT, Some("yes"))
    );
    // The same path's other method, and another path, are not selected.
    let create =
        Request::post("/api/v1/memos").header("content-type", "application/json").body(Body::from(r#"{"title":"t"}"#));
    let created = app.clone().oneshot(create.unwrap()).await.unwrap();
    assert_eq!((created.status(), created.headers().get("x-listed")), (StatusCode::CREATED, None));
    // A refusal of the selected operation passes through its layer too: the layer wraps the gate and the decoder.
    let refused = app.oneshot(Request::get("/api/v1/memos?per_page=0").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!((refused.status().as_u16(), refused.headers().get("x-listed").is_some()), (422, true));
}

#[tokio::test]
async fn query_routed_operations_a_get_with_a_body_and_a_file_with_headers_are_served_as_documented() {
    let app = memos::router(Arc::new(Memos::default()), Arc::new(Open::default()));
    for title in ["a", "a", "b"] {
        let (status, _, _) = send(&app, "POST", "/api/v1/memos", Some(json!({ "title": title }))).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let app = &app;
    let count = |uri: &'static str| async move {
        let (status, _, body) = send(app, "GET", uri, None).await;
        (status.as_u16(), body)
    };
    // The path alone: the operation that asks nothing of the query.
    assert_eq!(count("/api/v1/memos/count").await, (200, json!({"data": 3})));
    // `?by=state` with its field; `?by=title&title={title}`, the path's parameter in the query.
    assert_eq!(count("/api/v1/memos/count?by=state&state=draft").await, (200, json!({"data": 3})));
    assert_eq!(count("/api/v1/memos/count?by=state&state=archived").await, (200, json!({"data": 0})));
    assert_eq!(count("/api/v1/memos/count?title=a&by=title").await, (200, json!({"data": 2})));
    // The chosen operation's decoder as ever: a bad state, an unknown parameter.
    let (status, body) = count("/api/v1/memos/count?by=state&state=lost").await;
    assert_eq!((status, &body["error"]["code"]), (422, &json!("validation")), "{body}");
    let (status, body) = count("/api/v1/memos/count?by=state&state=draft&extra=1").await;
    assert_eq!((status, &body["error"]["code"]), (422, &json!("validation")), "{body}");
    // A GET whose body the API defines: read as any body is.
    let (status, _, body) = send(app, "GET", "/api/v1/memos/search", Some(json!({"words": ["a"]}))).await;
    assert_eq!((status.as_u16(), body), (200, json!({"data": 2})));
    let (status, _, body) = send(app, "GET", "/api/v1/memos/search", Some(json!({"words": "a"}))).await;
    assert_eq!((status.as_u16(), &body["error"]["code"]), (422, &json!("validation")));
    let (status, _, body) = send(app, "GET", "/api/v1/memos/search", Some(json!({"words": []}))).await;
    assert_eq!((status.as_u16(), body), (206, json!({"data": 3})), "the implementation's partial answer");
    // Its pattern has a look-ahead (`^(?!\s*$).+`): a blank word is refused, as ECMA-262 reads it.
    let (status, _, body) = send(app, "GET", "/api/v1/memos/search", Some(json!({"words": ["a", "  "]}))).await;
    assert_eq!((status.as_u16(), &body["error"]["code"]), (422, &json!("validation")), "{body}");
    // A file beside a response header.
    let resp =
        app.clone().oneshot(Request::get("/api/v1/memos/n3/download").body(Body::empty()).unwrap()).await.unwrap();
    let (status, headers) = (resp.status(), resp.headers().clone());
    let header = |name: &str| headers[name].to_str().unwrap().to_string();
    assert_eq!(
        (status, header("x-memo-title"), header("content-type")),
        (StatusCode::OK, "b".into(), "text/plain".into())
    );
    assert_eq!(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()[..], b"b\n");
    let (status, _, _) = send(app, "GET", "/api/v1/memos/n9/download", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(app, "PATCH", "/api/v1/memos/n3", Some(json!({"state": "archived"}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = send(app, "GET", "/api/v1/memos/n3/download", None).await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null), "the implementation's other answer");
    // A value no operation asks for goes to the one that asks nothing, whose decoder refuses it.
    let (status, body) = count("/api/v1/memos/count?by=colour").await;
    assert_eq!((status, &body["error"]["code"]), (422, &json!("validation")), "{body}");
}

#[tokio::test]
async fn the_implementation_chooses_among_the_success_answers_and_the_status_follows() {
    let app = memos::router(Arc::new(Memos::default()), Arc::new(Open::default()));
    let put = |title: &str| Some(json!({ "title": title }));
    let (status, _, body) = send(&app, "PUT", "/api/v1/memos/m1", put("new")).await;
    assert_eq!((status, &body["data"]["title"]), (StatusCode::CREATED, &json!("new")), "created: 201 with the memo");
    let (status, _, body) = send(&app, "PUT", "/api/v1/memos/m1", put("renamed")).await;
    assert_eq!((status, &body["data"]["title"]), (StatusCode::OK, &json!("renamed")), "changed: the main 200");
    let (status, _, body) = send(&app, "PUT", "/api/v1/memos/m1", put("renamed")).await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null), "unchanged: 204 without a body");
    // The refusals are the operation's as ever.
    let (status, _, body) = send(&app, "PUT", "/api/v1/memos/m1", Some(json!({}))).await;
    assert_eq!((status, &body["error"]["code"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("validation")));

    // The body may come as a form or multipart as well, into the same fields.
    let send_as = |content_type: &str, body: &str| {
        let req = Request::put("/api/v1/memos/m2").header("content-type", content_type);
        app.clone().oneshot(req.body(Body::from(body.to_string())).unwrap())
    };
    let resp = send_as("application/x-www-form-urlencoded", "title=by+form").await.unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let multipart = "--b\r\ncontent-disposition: form-data; name=\"title\"\r\n\r\nby part\r\n--b--\r\n";
    let resp = send_as("multipart/form-data; boundary=b", multipart).await.unwrap();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap()["data"]["title"], "by part");
    // A nested value in a form, in bracket notation.
    let nested = "title=t&origin[source]=mail&origin[tags][]=a&origin[tags][]=b";
    let req = Request::put("/api/v1/memos/m3").header("content-type", "application/x-www-form-urlencoded");
    let resp = app.clone().oneshot(req.body(Body::from(nested)).unwrap()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    let memo = serde_json::from_slice::<Value>(&bytes).unwrap()["data"].clone();
    assert_eq!((&memo["$ref"], &memo["tags"]), (&json!("mail"), &json!(["a", "b"])), "{memo}");
    for refused in ["title=t&origin[source]=mail&origin[colour]=red", "title=t&origin[tags][]=a"] {
        let req = Request::put("/api/v1/memos/m4").header("content-type", "application/x-www-form-urlencoded");
        let resp = app.clone().oneshot(req.body(Body::from(refused)).unwrap()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY, "{refused}: an unknown or missing member");
    }
    let resp = send_as("application/x-www-form-urlencoded", "title=by+form&extra=1").await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY, "a form's unknown field is refused as JSON's is");
    let resp = send_as("text/plain", "title").await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // A value beside the main empty answer, and a redirect with its `Location` and a body.
    let (status, _, body) = send(&app, "POST", "/api/v1/memos", Some(json!({"title": "big", "tags": ["slow"]}))).await;
    assert_eq!(status, StatusCode::CREATED);
    let id = body["data"]["id"].as_str().unwrap();
    let (status, _, body) = send(&app, "DELETE", &format!("/api/v1/memos/{id}"), None).await;
    assert_eq!((status, body), (StatusCode::ACCEPTED, json!({"data": 1})));
    let req = Request::delete("/api/v1/memos/old-m1").body(Body::empty()).unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(resp.headers()["location"], "/api/v1/memos/m1");
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), json!({"data": "The memo is now m1."}));

    // Over MCP the tool answers the body of whichever answer the implementation chose.
    let (service, gate) = (Memos::default(), Open::default());
    let call = |title: &'static str| call_tool(&service, &gate, (), "memos.put", json!({"id": "t", "title": title}));
    assert_eq!(call("a").await.unwrap().unwrap()["data"]["title"], "a");
    assert_eq!(call("a").await.unwrap().unwrap(), json!({}), "no content: an empty object");
}

#[tokio::test]
async fn other_formats_render_pages_and_each_answer_the_implementation_chooses() {
    let app = memos::router(Arc::new(Memos::default()), Arc::new(Open::default()));
    let get = |uri: &str, accept: &str| {
        let req = Request::get(uri).header("accept", accept);
        let req = if uri.ends_with("/search") {
            req.header("content-type", "application/json").body(Body::from(r#"{"words": []}"#))
        } else {
            req.body(Body::empty())
        };
        app.clone().oneshot(req.unwrap())
    };
    let text = |resp: Response| async move {
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        let ct = headers.get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        (status, ct, String::from_utf8(bytes.to_vec()).unwrap(), headers)
    };
    // No memo: the other answer has no body, in any format.
    let (status, ct, body, _) = text(get("/api/v1/memos", "text/csv").await.unwrap()).await;
    assert_eq!((status, ct.as_str(), body.as_str()), (204, "", ""));
    for title in ["a", "b", "c"] {
        send(&app, "POST", "/api/v1/memos", Some(json!({ "title": title }))).await;
    }
    // A page in CSV keeps its place in the list in headers, as its JSON does.
    let (status, ct, body, headers) = text(get("/api/v1/memos?per_page=2&page=2", "text/csv").await.unwrap()).await;
    assert_eq!((status, ct.as_str(), body.as_str()), (200, "text/csv", "id,title\r\nn3,c\r\n"));
    assert_eq!(
        (&headers["x-total-count"], &headers["vary"]),
        (&"3".parse::<HeaderValue>().unwrap(), &"accept".parse::<HeaderValue>().unwrap())
    );
    assert!(headers["link"].to_str().unwrap().contains("rel=\"prev\""), "{headers:?}");
    // JSON when `Accept` asks for it, or for nothing the operation lists.
    for accept in ["application/json", "image/png", "*/*"] {
        let (status, ct, body, _) = text(get("/api/v1/memos?per_page=2", accept).await.unwrap()).await;
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (status, ct.as_str(), body["data"].as_array().map(Vec::len)),
            (200, "application/json", Some(2)),
            "{accept}"
        );
    }
    // An alternative answer's body in the other format, with its own status.
    let (status, ct, body, _) = text(get("/api/v1/memos/search", "text/plain").await.unwrap()).await;
    assert_eq!((status, ct.as_str(), body.as_str()), (206, "text/plain", "3"));
    let (status, _, body, _) = text(get("/api/v1/memos/search", "application/json").await.unwrap()).await;
    assert_eq!((status, body.as_str()), (206, r#"{"data":3}"#));
}

/// Calls tool `name` as the runtime does: its operation from the tool table, then the generated
/// dispatch; the JSON body it answers.
async fn call_tool<S, G>(
    service: &S,
    gate: &G,
    caller: G::Caller,
    name: &str,
    arguments: Value,
) -> Option<Result<Value, support::ToolFailure>>
where
    S: memos::MemosService,
    G: support::Gate<Context = S::Context>,
{
    let op = memos::tools::TOOLS.iter().find(|(n, _)| *n == name)?.1;
    let answer = memos::tools::call(service, gate, caller, op, arguments).await?;
    Some(answer.map(|a| match a {
        support::ToolAnswer::Json(v) => v,
        support::ToolAnswer::File(f) => panic!("a tool answered a file of {}", f.media_type),
    }))
}
