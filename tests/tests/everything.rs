//! The conformance service, without the suite: every fixture tool answers content of its file's
//! type (text, image, audio, an embedded resource under its URI, an error result), its resources
//! and template read as text or base64, its prompts embed what they name (a resource whose URI
//! is an argument too), and a URI of no resource is refused.

mod mcp_wire;
use base64::Engine;
use serde_json::{Value, json};

struct Served {
    base: String,
    token: String,
    /// Another user's token, of the same tenant and scope.
    other: String,
    /// A session of a 2025-11-25 client (the service asks for input, so that wire has sessions).
    session: String,
    _dir: tempfile::TempDir,
}

async fn serve() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = runtime::Config::new(listener.local_addr().unwrap(), None, dir.path().to_path_buf());
    let platform = runtime::Platform::open(config.clone()).await.unwrap();
    let app = everything::server(&platform).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { platform.run(listener, app).await });
    let keys = runtime::keys::SigningKeys::load_or_create(&config.data_dir).unwrap();
    let audience = runtime::Catalog::new([&everything::SERVICE]).resources(&config);
    let claims =
        runtime::keys::claims(&config.issuer(), "ann", "acme", "everything:write", audience.clone(), 600, None);
    let bob = runtime::keys::claims(&config.issuer(), "bob", "acme", "everything:read", audience.clone(), 600, None);
    let token = keys.mint(&claims).unwrap();
    let session = open_session(&base, &token).await;
    Served { base, token, other: keys.mint(&bob).unwrap(), session, _dir: dir }
}

/// Initializes a 2025-11-25 session as the holder of `token`: its id.
async fn open_session(base: &str, token: &str) -> String {
    try_open_session(base, token).await.expect("a session")
}

/// [`open_session`], or the refusal's HTTP status.
async fn try_open_session(base: &str, token: &str) -> Result<String, u16> {
    let client = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "test", "version": "1"},
    }});
    let resp = client
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    let Some(session) = resp.headers().get("mcp-session-id") else { return Err(resp.status().as_u16()) };
    let session = session.to_str().unwrap().to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let resp = client
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .json(&initialized)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    Ok(session)
}

impl Served {
    /// The result of a request that succeeds.
    async fn rpc(&self, method: &str, params: Value) -> Value {
        let answer = self.answer(method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// The whole JSON-RPC answer to a request.
    async fn answer(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let resp = reqwest::Client::new()
            .post(format!("{}/mcp", self.base))
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &self.session)
            .json(&body)
            .send()
            .await
            .unwrap();
        messages(resp).await.into_iter().find(|m| m["id"] == 1).expect("an answer")
    }

    async fn call(&self, tool: &str) -> Value {
        self.rpc("tools/call", json!({"name": tool})).await
    }
}

impl Served {
    /// The session's own stream (`GET`), where what belongs to no request arrives.
    async fn session_stream(&self) -> mcp_wire::Events {
        let resp = reqwest::Client::new()
            .get(format!("{}/mcp", self.base))
            .bearer_auth(&self.token)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &self.session)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        mcp_wire::Events::of(resp)
    }
}

fn decoded(b64: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(b64.as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn each_tool_answers_content_of_its_files_type() {
    let s = serve().await;
    let text = s.call("test_simple_text").await;
    assert_eq!(text["content"], json!([{"type": "text", "text": "This is a simple text response for testing."}]));
    let image = &s.call("test_image_content").await["content"][0];
    assert_eq!((image["type"].as_str(), image["mimeType"].as_str()), (Some("image"), Some("image/png")));
    assert_eq!(&decoded(&image["data"])[..8], b"\x89PNG\r\n\x1a\n");
    let audio = &s.call("test_audio_content").await["content"][0];
    assert_eq!((audio["type"].as_str(), audio["mimeType"].as_str()), (Some("audio"), Some("audio/wav")));
    assert_eq!(&decoded(&audio["data"])[..4], b"RIFF");
    // The operation is a resource too: embedded under its URI.
    let embedded = &s.call("test_embedded_resource").await["content"][0];
    assert_eq!(embedded["type"], "resource");
    assert_eq!(
        embedded["resource"],
        json!({"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."})
    );
    // Content declared block by block from the output's fields; the output stays structured.
    let mixed = s.call("test_multiple_content_types").await;
    let kinds: Vec<&str> = mixed["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image", "resource"], "{mixed}");
    assert_eq!(mixed["content"][0]["text"], "Multiple content types test:");
    assert_eq!(&decoded(&mixed["content"][1]["data"])[..4], b"\x89PNG");
    let resource = &mixed["content"][2]["resource"];
    assert_eq!(
        (resource["uri"].as_str(), resource["mimeType"].as_str()),
        (Some("test://mixed-content-resource"), Some("application/json"))
    );
    assert_eq!(
        serde_json::from_str::<Value>(resource["text"].as_str().unwrap()).unwrap(),
        json!({"test": "data", "value": 123})
    );
    assert_eq!(mixed["structuredContent"]["data"]["value"], 123);
    let error = s.call("test_error_handling").await;
    assert_eq!(error["isError"], true, "{error}");
    assert_eq!(error["structuredContent"]["detail"], "This tool intentionally returns an error for testing", "{error}");
}

#[tokio::test]
async fn resources_read_as_text_or_base64_and_prompts_embed_what_they_name() {
    let s = serve().await;
    let text = s.rpc("resources/read", json!({"uri": "test://static-text"})).await;
    assert_eq!(text["contents"][0]["text"], "This is the content of the static text resource.");
    let binary = s.rpc("resources/read", json!({"uri": "test://static-binary"})).await;
    assert_eq!(
        (binary["contents"][0]["mimeType"].as_str(), &decoded(&binary["contents"][0]["blob"])[..4]),
        (Some("image/png"), &b"\x89PNG"[..])
    );
    let data = s.rpc("resources/read", json!({"uri": "test://template/123/data"})).await;
    let data: Value = serde_json::from_str(data["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(data, json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"}));

    let args = json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}});
    let got = s.rpc("prompts/get", args).await;
    assert_eq!(got["messages"][0]["content"]["text"], "Prompt with arguments: arg1='a', arg2='b'");
    // The resource is the one whose URI the caller gives.
    let args =
        json!({"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://example-resource"}});
    let got = s.rpc("prompts/get", args).await;
    assert_eq!(got["messages"][0]["content"]["resource"]["uri"], "test://example-resource");
    assert_eq!(got["messages"][0]["content"]["resource"]["text"], "This is the content of the example resource.");
    let image = s.rpc("prompts/get", json!({"name": "test_prompt_with_image"})).await;
    assert_eq!(
        (image["messages"][0]["content"]["type"].as_str(), image["messages"][0]["content"]["mimeType"].as_str()),
        (Some("image"), Some("image/png"))
    );
    let completed = s
        .rpc("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "par"}}))
        .await;
    assert_eq!(completed["completion"]["values"], json!(["paris", "park", "party"]));
}

#[tokio::test]
async fn a_prompt_given_a_uri_of_no_resource_is_refused() {
    let s = serve().await;
    let params =
        json!({"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "file:///etc/passwd"}});
    let answer = s.answer("prompts/get", params).await;
    assert_eq!(
        (answer["error"]["code"].as_i64(), answer["error"]["data"]["uri"].as_str()),
        (Some(-32602), Some("file:///etc/passwd"))
    );
}

/// The messages of an answer: one JSON body, or each `data:` line of an event stream.
async fn messages(resp: reqwest::Response) -> Vec<Value> {
    let streamed = resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream");
    let text = resp.text().await.unwrap();
    if !streamed {
        return vec![serde_json::from_str(&text).unwrap()];
    }
    text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str(d.trim()).ok()).collect()
}

impl Served {
    /// The messages answering `tools/call` of `tool` with `meta`, on `revision`'s wire.
    async fn streamed(&self, revision: &str, tool: &str, meta: Value) -> Vec<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "_meta": meta}});
        let mut req = reqwest::Client::new()
            .post(format!("{}/mcp", self.base))
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", revision)
            .json(&body);
        if revision == "2026-07-28" {
            req = req.header("mcp-method", "tools/call").header("mcp-name", tool);
        } else {
            req = req.header("mcp-session-id", &self.session);
        }
        messages(req.send().await.unwrap()).await
    }
}

impl Served {
    /// A 2026-07-28 request of `method` for `name` (its `Mcp-Name`) with `params`, by the holder
    /// of `token`.
    fn stateless(&self, token: &str, method: &str, name: &str, id: u64, params: Value) -> reqwest::RequestBuilder {
        mcp_wire::stateless_request(&format!("{}/mcp", self.base), token, method, name, id, params)
    }
}

fn stateless_meta(more: Value) -> Value {
    let mut meta = mcp_wire::stateless_meta(json!({}));
    meta.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    meta
}

#[tokio::test]
async fn progress_reaches_a_client_that_asked_for_it_before_the_result_on_both_wires() {
    let s = serve().await;
    for (revision, meta) in [
        ("2025-11-25", json!({"progressToken": "p-1"})),
        ("2026-07-28", stateless_meta(json!({"progressToken": "p-1"}))),
    ] {
        let got = s.streamed(revision, "test_tool_with_progress", meta).await;
        let progress: Vec<(f64, f64)> = got
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .inspect(|m| assert_eq!(m["params"]["progressToken"], "p-1"))
            .map(|m| (m["params"]["progress"].as_f64().unwrap(), m["params"]["total"].as_f64().unwrap()))
            .collect();
        assert_eq!(progress, [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)], "{revision}: {got:?}");
        assert_eq!(got.last().unwrap()["id"], 7, "the result comes last: {got:?}");
    }
    // Without a progress token, none.
    let got = s.streamed("2025-11-25", "test_tool_with_progress", json!({})).await;
    assert!(got.iter().all(|m| m["method"] != "notifications/progress"), "{got:?}");
}

#[tokio::test]
async fn log_messages_reach_a_client_at_the_level_it_reads_and_none_unasked_on_the_stateless_wire() {
    let s = serve().await;
    let logged = |got: &[Value]| -> Vec<String> {
        got.iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| m["params"]["data"].as_str().unwrap().to_string())
            .collect()
    };
    // 2025-11-25, in a session: on the session's own stream (rmcp sends only progress on the
    // call's), at `info` and above.
    let mut listening = s.session_stream().await;
    let result = s.streamed("2025-11-25", "test_tool_with_logging", json!({})).await;
    assert_eq!(result.last().unwrap()["id"], 7, "{result:?}");
    let mut got = Vec::new();
    while logged(&got).len() < 3 {
        got.push(listening.next().await);
    }
    assert_eq!(logged(&got), ["Tool execution started", "Tool processing data", "Tool execution completed"]);
    assert_eq!(got.iter().find(|m| m["method"] == "notifications/message").unwrap()["params"]["level"], "info");
    // 2026-07-28: only a request that names a level gets logs, at or above it.
    let got = s.streamed("2026-07-28", "test_logging_tool", stateless_meta(json!({}))).await;
    assert!(logged(&got).is_empty(), "{got:?}");
    let asked = stateless_meta(json!({"io.modelcontextprotocol/logLevel": "debug"}));
    assert_eq!(logged(&s.streamed("2026-07-28", "test_logging_tool", asked).await), ["The logging tool ran"]);
    let above = stateless_meta(json!({"io.modelcontextprotocol/logLevel": "error"}));
    assert!(logged(&s.streamed("2026-07-28", "test_logging_tool", above).await).is_empty());
}

/// A 2026-07-28 `tools/call` of `test_custom_header` with `value` in the body and `header` as
/// `Mcp-Param-Value`: the HTTP status and the answer.
async fn custom_header(s: &Served, value: &str, header: Option<&str>) -> (u16, Value) {
    let params =
        json!({"name": "test_custom_header", "arguments": {"value": value}, "_meta": stateless_meta(json!({}))});
    let mut req = s.stateless(&s.token, "tools/call", "test_custom_header", 3, params);
    if let Some(h) = header {
        req = req.header("mcp-param-value", h);
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

#[tokio::test]
async fn an_argument_in_a_header_must_match_its_header_on_the_stateless_wire() {
    let s = serve().await;
    let listed = s.rpc("tools/list", json!({})).await;
    let tool = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "test_custom_header").unwrap();
    assert_eq!(tool["inputSchema"]["properties"]["value"]["x-mcp-header"], "Value");
    for header in ["Hello", "=?base64?SGVsbG8=?=", "  Hello  "] {
        let (status, answer) = custom_header(&s, "Hello", Some(header)).await;
        assert_eq!(
            (status, answer["result"]["content"][0]["text"].as_str()),
            (200, Some("Value: Hello")),
            "{header}: {answer}"
        );
    }
    for header in [None, Some("Bye"), Some("=?base64?SGVsbG8?="), Some("=?base64?SGVs!!!bG8=?=")] {
        let (status, answer) = custom_header(&s, "Hello", header).await;
        assert_eq!(
            (status, answer["error"]["code"].as_i64(), answer["id"].as_i64()),
            (400, Some(-32020), Some(3)),
            "{header:?}: {answer}"
        );
    }
    // Earlier revisions have no such headers: the argument alone is enough.
    let text = s.rpc("tools/call", json!({"name": "test_custom_header", "arguments": {"value": "old"}})).await;
    assert_eq!(text["content"][0]["text"], "Value: old");
}

/// A 2026-07-28 `tools/call` of `tool` by the holder of `token`, the client declaring
/// `capabilities`, with `more` params (`inputResponses`, `requestState`): the HTTP status and the
/// answer.
async fn stateless_call(s: &Served, token: &str, tool: &str, capabilities: Value, more: Value) -> (u16, Value) {
    let meta = stateless_meta(json!({ "io.modelcontextprotocol/clientCapabilities": capabilities }));
    let mut params = json!({"name": tool, "arguments": {}, "_meta": meta});
    params.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    let resp = s.stateless(token, "tools/call", tool, 5, params).send().await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

fn every_capability() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

fn accepted(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn input_requests_take_rounds_whose_signed_state_carries_earlier_answers_and_binds_the_caller() {
    let s = serve().await;
    let tool = "test_input_required_result_multi_round";
    let (_, first) = stateless_call(&s, &s.token, tool, every_capability(), json!({})).await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(first["inputRequests"]["step1"]["method"], "elicitation/create");
    assert_eq!(first["inputRequests"]["step1"]["params"]["message"], "Step 1: What is your name?");
    let state1 = first["requestState"].as_str().unwrap();
    let step1 = json!({"inputResponses": {"step1": accepted(json!({"name": "Ann"}))}, "requestState": state1});
    let (_, second) = stateless_call(&s, &s.token, tool, every_capability(), step1.clone()).await;
    let second = &second["result"];
    assert_eq!(second["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["step2"], "{second}");
    // The last round names only its own answer: the first travels in the state.
    let state2 = second["requestState"].as_str().unwrap();
    let step2 = json!({"inputResponses": {"step2": accepted(json!({"color": "blue"}))}, "requestState": state2});
    let (_, done) = stateless_call(&s, &s.token, tool, every_capability(), step2.clone()).await;
    assert_eq!(done["result"]["content"][0]["text"], "Ann likes blue.", "{done}");

    // A state altered, presented by another user, or for another tool, is refused.
    let mut altered = step2.clone();
    let tampered = format!("{}x", &state2[..state2.len() - 1]);
    altered["requestState"] = json!(tampered);
    let (_, refused) = stateless_call(&s, &s.token, tool, every_capability(), altered).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let (_, refused) = stateless_call(&s, &s.other, tool, every_capability(), step2.clone()).await;
    assert_eq!(refused["error"]["code"], -32602, "another user: {refused}");
    let (_, refused) =
        stateless_call(&s, &s.token, "test_input_required_result_tampered_state", every_capability(), step2).await;
    assert_eq!(refused["error"]["code"], -32602, "another tool: {refused}");

    // An answer that is no result of what was asked is refused; a missing one is asked again.
    let wrong = json!({"inputResponses": {"step1": 12345}});
    let (_, refused) = stateless_call(&s, &s.token, tool, every_capability(), wrong).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let (_, again) =
        stateless_call(&s, &s.token, tool, every_capability(), json!({"inputResponses": {"other": 1}})).await;
    assert_eq!(again["result"]["inputRequests"]["step1"]["method"], "elicitation/create", "{again}");
}

#[tokio::test]
async fn an_input_the_client_cannot_give_is_refused_with_the_capability_it_lacks() {
    let s = serve().await;
    // Needed and not declared: HTTP 400, -32021 naming it.
    let (status, refused) = stateless_call(&s, &s.token, "test_missing_capability", json!({}), json!({})).await;
    assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32021)), "{refused}");
    assert_eq!(refused["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}));
    // Asked only of a client that can answer: sampling alone here.
    let caps = json!({"sampling": {}});
    let (_, asked) = stateless_call(&s, &s.token, "test_input_required_result_capabilities", caps, json!({})).await;
    let methods: Vec<&str> =
        asked["result"]["inputRequests"].as_object().unwrap().values().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["sampling/createMessage"], "{asked}");
    // REST cannot answer: the operation's declared error.
    let rest = reqwest::Client::new()
        .get(format!("{}/api/input/elicitation", s.base))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 400);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["code"], "input_required", "{body}");
}

#[tokio::test]
async fn a_prompt_that_asks_its_user_first_is_given_with_the_answer() {
    let s = serve().await;
    let get = |more: Value| {
        let meta = stateless_meta(json!({ "io.modelcontextprotocol/clientCapabilities": every_capability() }));
        let mut params = json!({"name": "test_input_required_result_prompt", "_meta": meta});
        params.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
        s.stateless(&s.token, "prompts/get", "test_input_required_result_prompt", 9, params).send()
    };
    let asked: Value = get(json!({})).await.unwrap().json().await.unwrap();
    let request = &asked["result"]["inputRequests"]["user_context"];
    assert_eq!(request["params"]["message"], "What context should the prompt use?", "{asked}");
    assert_eq!(request["params"]["requestedSchema"]["required"], json!(["context"]));
    let answer = json!({
        "inputResponses": {"user_context": accepted(json!({"context": "a code review"}))},
        "requestState": asked["result"]["requestState"],
    });
    let given: Value = get(answer).await.unwrap().json().await.unwrap();
    assert_eq!(given["result"]["messages"][0]["content"]["text"], "Work in this context: a code review", "{given}");
}

/// A 2025-11-25 `tools/call` of `tool` with `arguments` in session `session`, answering each
/// request the server sends on the call's stream with `reply`: the requests, then the result.
async fn call_answering(s: &Served, session: &str, tool: &str, arguments: Value, reply: Value) -> (Vec<Value>, Value) {
    let params = json!({"name": tool, "arguments": arguments});
    request_answering(s, session, "tools/call", params, reply).await
}

/// A 2025-11-25 request of `method` in session `session`, answering each request the server
/// sends on its stream with `reply`: the requests, then the answer.
async fn request_answering(
    s: &Served,
    session: &str,
    method: &str,
    params: Value,
    reply: Value,
) -> (Vec<Value>, Value) {
    let client = reqwest::Client::new();
    let post = |body: Value| {
        client
            .post(format!("{}/mcp", s.base))
            .bearer_auth(&s.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session)
            .json(&body)
            .send()
    };
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": method, "params": params});
    let mut resp = post(call).await.unwrap();
    assert_eq!(resp.status(), 200);
    let (mut buffer, mut asked) = (String::new(), Vec::new());
    let wait = std::time::Duration::from_secs(10);
    while let Some(chunk) = tokio::time::timeout(wait, resp.chunk()).await.expect("stalled").unwrap() {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let Some(data) = line.trim().strip_prefix("data:") else { continue };
            let Ok(message) = serde_json::from_str::<Value>(data.trim()) else { continue };
            if message["id"] == 11 {
                return (asked, message);
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": reply});
                asked.push(message);
                let sent = post(answer).await.unwrap();
                assert!(sent.status().is_success(), "the answer was refused: {}", sent.status());
            }
        }
    }
    panic!("the stream ended without the answer; asked {asked:?}");
}

#[tokio::test]
async fn a_session_client_of_an_earlier_revision_is_asked_on_the_calls_stream() {
    let s = serve().await;
    let reply = accepted(json!({"username": "ann", "email": "ann@example.com"}));
    let (asked, done) =
        call_answering(&s, &s.session, "test_elicitation", json!({"message": "Who are you?"}), reply).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "elicitation/create");
    assert_eq!(asked[0]["params"]["message"], "Who are you?");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("User response: action=accept"), "{done}");
    assert!(text.contains("ann@example.com"), "{text}");
    // The session is its opener's: another user's token with its id finds no session.
    let other = reqwest::Client::new()
        .post(format!("{}/mcp", s.base))
        .bearer_auth(&s.other)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &s.session)
        .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
}

#[tokio::test]
async fn a_caller_holds_a_bounded_number_of_sessions_and_frees_one_by_closing_it() {
    let s = serve().await;
    // `serve` opened one already.
    let mut opened = vec![s.session.clone()];
    for _ in 1..16 {
        opened.push(open_session(&s.base, &s.token).await);
    }
    assert_eq!(try_open_session(&s.base, &s.token).await, Err(429));
    // Another user is not held back by this one's sessions.
    assert!(try_open_session(&s.base, &s.other).await.is_ok());
    let closed = reqwest::Client::new()
        .delete(format!("{}/mcp", s.base))
        .bearer_auth(&s.token)
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", opened.pop().unwrap())
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    assert!(try_open_session(&s.base, &s.token).await.is_ok());
}

#[tokio::test]
async fn a_session_subscribes_to_a_resource_hears_of_its_changes_on_its_stream_and_unsubscribes() {
    let s = serve().await;
    let mut stream = s.session_stream().await;
    assert_eq!(s.rpc("resources/subscribe", json!({"uri": "test://watched-resource"})).await, json!({}));
    let unknown = s.answer("resources/subscribe", json!({"uri": "test://no-such-resource"})).await;
    assert_eq!(
        (unknown["error"]["code"].as_i64(), &unknown["error"]["data"]["uri"]),
        (Some(-32602), &json!("test://no-such-resource"))
    );

    // A call that may change data: the subscriber hears of its resource on the session's stream.
    s.call("test_touch_watched_resource").await;
    let told = stream.next().await;
    assert_eq!(
        told,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched-resource"}})
    );
    // Unsubscribed, it hears of it no more: the next thing heard is of the one it watches now.
    assert_eq!(s.rpc("resources/unsubscribe", json!({"uri": "test://watched-resource"})).await, json!({}));
    assert_eq!(s.rpc("resources/subscribe", json!({"uri": "test://static-text"})).await, json!({}));
    s.call("test_touch_watched_resource").await;
    assert_eq!(stream.next().await["params"]["uri"], "test://static-text");
}

/// Tasks as revision 2025-11-25 has them, within a session: the client asks for one with `task`;
/// a tool that cannot be one, or one called without it that must be, is `-32601`; cancelled
/// while it works, a task stays cancelled and has no result; a tool's error result is a failed
/// task whose result is that error result, and a server fault one whose result is its JSON-RPC
/// error.
#[tokio::test]
async fn tasks_of_revision_2025_11_25_run_within_a_session() {
    let s = serve().await;
    let task = |tool: &str, arguments: Value| json!({"name": tool, "arguments": arguments, "task": {"ttl": 1000}});
    let created = s.rpc("tools/call", task("slow_compute", json!({"seconds": 60}))).await;
    let id = created["task"]["taskId"].as_str().unwrap().to_string();
    assert_eq!(created["task"]["status"], "working", "{created}");
    let cancelled = s.rpc("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(s.rpc("tasks/get", json!({"taskId": id})).await["status"], "cancelled");
    let result = s.answer("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["error"]["code"], -32602, "{result}");

    assert_eq!(s.answer("tools/call", task("greet", json!({"name": "a"}))).await["error"]["code"], -32601);
    let untasked = s.answer("tools/call", json!({"name": "failing_job", "arguments": {}})).await;
    assert_eq!(untasked["error"]["code"], -32601, "{untasked}");

    let failing = s.rpc("tools/call", task("failing_job", json!({}))).await["task"]["taskId"].clone();
    let broken = s.rpc("tools/call", task("protocol_error_job", json!({}))).await["task"]["taskId"].clone();
    for (id, code) in [(failing, None), (broken, Some(-32603))] {
        let mut got = Value::Null;
        for _ in 0..100 {
            got = s.rpc("tasks/get", json!({"taskId": id})).await;
            if got["status"] != "working" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(got["status"], "failed", "{got}");
        assert!(got["statusMessage"].as_str().is_some_and(|m| !m.is_empty()), "{got}");
        let result = s.answer("tasks/result", json!({"taskId": id})).await;
        match code {
            None => assert_eq!(result["result"]["isError"], true, "{result}"),
            Some(code) => assert_eq!(result["error"]["code"], code, "{result}"),
        }
    }
}

/// Input a 2025-11-25 task asks for once in the background is asked of its client on the stream
/// of its `tasks/result`, naming the task; answered, the task goes on to its result.
#[tokio::test]
async fn a_task_of_revision_2025_11_25_asks_its_input_on_the_stream_of_its_result() {
    let s = serve().await;
    let call = json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}, "task": {}});
    let id = s.rpc("tools/call", call).await["task"]["taskId"].as_str().unwrap().to_string();
    let mut status = Value::Null;
    for _ in 0..100 {
        status = s.rpc("tasks/get", json!({"taskId": id})).await["status"].clone();
        if status == "input_required" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, "input_required");
    let reply = accepted(json!({"ok": true}));
    let (asked, done) = request_answering(&s, &s.session, "tasks/result", json!({"taskId": id}), reply).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "elicitation/create");
    assert_eq!(asked[0]["params"]["message"], "Delete a.txt?");
    assert_eq!(asked[0]["params"]["_meta"]["io.modelcontextprotocol/related-task"], json!({"taskId": id}));
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt.", "{done}");
    assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/related-task"], json!({"taskId": id}));
}

/// A 2025-11-25 task call that asks for input before going to the background asks it on the
/// call's stream while the call runs; answered, the call's answer is the task.
#[tokio::test]
async fn a_task_call_of_revision_2025_11_25_asks_its_first_input_on_the_calls_stream() {
    let s = serve().await;
    let reply = accepted(json!({"name": "Ann"}));
    let call = json!({"name": "test_tool_with_task", "arguments": {}, "task": {}});
    let (asked, created) = request_answering(&s, &s.session, "tools/call", call, reply).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "elicitation/create");
    let id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_string();
    let result = s.answer("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "Hello, Ann! The task is done.", "{result}");
    assert!(result["result"].get("resultType").is_none(), "{result}");
}
