//! The vault's MCP endpoint: transport and lifecycle per protocol revision, authorisation before
//! the protocol layer, tools from the generated descriptors, and parity with REST.

mod common;

use serde_json::{Value, json};

const LEGACY: [&str; 2] = ["2025-06-18", "2025-11-25"];
const MODERN: &str = "2026-07-28";

struct Mcp<'a> {
    server: &'a common::TestServer,
    token: Option<String>,
    version: &'a str,
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}})
}

impl Mcp<'_> {
    /// Sends one JSON-RPC message the way a client of this revision would.
    async fn send(&self, message: Value, origin: Option<&str>) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut message = message;
        let mut rb = self
            .server
            .client()
            .post(self.server.url("/api/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if self.version == MODERN {
            let method = message["method"].as_str().unwrap_or_default().to_string();
            rb = rb.header("mcp-method", &method);
            if let Some(name) = message.pointer("/params/name").and_then(Value::as_str) {
                rb = rb.header("mcp-name", name);
            }
            if message.get("id").is_some() {
                let params = message.as_object_mut().unwrap().entry("params").or_insert_with(|| json!({}));
                params["_meta"] = meta();
            }
        }
        if message["method"] != "initialize" {
            rb = rb.header("mcp-protocol-version", self.version);
        }
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
        }
        if let Some(o) = origin {
            rb = rb.header("origin", o);
        }
        let resp = rb.json(&message).send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        (status, headers, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Posts `body` as it is, with this revision's version header (and `Mcp-Method` only when
    /// given: a body that is not a JSON-RPC message names no method).
    async fn send_raw(
        &self,
        body: &str,
        content_type: &str,
        method: Option<&str>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut rb = self
            .server
            .client()
            .post(self.server.url("/api/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", content_type)
            .header("mcp-protocol-version", self.version)
            .body(body.to_string());
        if let Some(m) = method {
            rb = rb.header("mcp-method", m);
        }
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
        }
        let resp = rb.send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        (status, headers, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn call(&self, id: i64, tool: &str, arguments: Value) -> (u16, reqwest::header::HeaderMap, Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}), None).await
    }
}

async fn setup() -> (common::TestServer, String, String) {
    let server = common::TestServer::start().await;
    server.tenant("acme", "alice").await;
    let read = server.token_for("alice", "acme", "vault:read");
    let write = server.token_for("alice", "acme", "vault:write");
    (server, read, write)
}

#[tokio::test]
async fn legacy_revisions_handshake_list_call_and_ping() {
    let (server, read, _) = setup().await;
    for version in LEGACY {
        let mcp = Mcp { server: &server, token: Some(read.clone()), version };
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let (s, _, b) = mcp.send(init, None).await;
        assert_eq!(s, 200, "{version}: {b}");
        assert_eq!(b["result"]["protocolVersion"], version, "the server echoes a supported version");
        assert!(b["result"]["capabilities"]["tools"].is_object());
        assert_eq!(b["result"]["serverInfo"]["name"], "specwright-vault");
        let (s, _, _) = mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), None).await;
        assert_eq!(s, 202, "{version}: notifications are accepted with 202");
        let (s, _, b) = mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), None).await;
        assert_eq!(s, 200);
        assert_eq!(b["result"]["tools"].as_array().unwrap().len(), 10, "{version}: the vault's ten tools");
        let (s, _, b) = mcp.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}), None).await;
        assert_eq!((s, &b["result"]), (200, &json!({})));
        let (s, _, b) = mcp.call(4, "vault.list_credentials", json!({})).await;
        assert_eq!(s, 200);
        assert_eq!(b["result"]["isError"], false);
        assert_eq!(b["result"]["structuredContent"]["meta"]["total"], 0);
    }
}

#[tokio::test]
async fn the_2026_revision_is_stateless_with_discover_and_header_checks() {
    let (server, read, _) = setup().await;
    let mcp = Mcp { server: &server, token: Some(read), version: MODERN };
    let (s, _, b) = mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}), None).await;
    assert_eq!(s, 200, "{b}");
    assert!(b["result"]["supportedVersions"].as_array().unwrap().contains(&json!(MODERN)));
    assert!(b["result"]["capabilities"]["tools"].is_object());
    let (s, _, b) = mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), None).await;
    assert_eq!((s, b["result"]["tools"].as_array().map(Vec::len)), (200, Some(10)));
    assert_eq!(b["result"]["resultType"], "complete");
    let (s, _, b) = mcp.call(3, "vault.list_folders", json!({})).await;
    assert_eq!((s, &b["result"]["isError"]), (200, &json!(false)), "{b}");
    // An Mcp-Method header that does not match the body is refused.
    let resp = server
        .client()
        .post(server.url("/api/mcp"))
        .bearer_auth(mcp.token.as_ref().unwrap())
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/list")
        .json(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"_meta": meta()}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["code"], -32020);
    // No server-to-client stream in this revision.
    let get = server
        .client()
        .get(server.url("/api/mcp"))
        .bearer_auth(mcp.token.as_ref().unwrap())
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
}

#[tokio::test]
async fn every_request_is_authorised_before_the_protocol_layer() {
    let (server, read, write) = setup().await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let prm = server.url("/.well-known/oauth-protected-resource/api/mcp");
    let anonymous = Mcp { server: &server, token: None, version: "2025-11-25" };
    let (s, h, _) = anonymous.send(init.clone(), None).await;
    assert_eq!(s, 401);
    assert_eq!(h["www-authenticate"], format!(r#"Bearer resource_metadata="{prm}", scope="vault:read""#).as_str());
    // A bad token, and a token for the REST audience only, get invalid_token.
    let c = &server.state.config;
    let rest_only = server
        .state
        .keys
        .mint(&runtime::keys::claims(
            &c.issuer(),
            "alice",
            "acme",
            "vault:admin",
            vec![c.url(vault_api::vault::SERVICE.base_path)],
            600,
            None,
        ))
        .unwrap();
    for token in ["garbage".to_string(), rest_only] {
        let (s, h, _) =
            Mcp { server: &server, token: Some(token), version: "2025-11-25" }.send(init.clone(), None).await;
        assert_eq!(s, 401);
        assert!(h["www-authenticate"].to_str().unwrap().starts_with(r#"Bearer error="invalid_token""#));
    }
    // A tool above the token's tier: HTTP 403, the REST challenge, a JSON-RPC error naming the scope.
    let reader = Mcp { server: &server, token: Some(read), version: "2025-11-25" };
    let (s, h, b) = reader.call(7, "vault.store_credential", json!({"key": "k", "value": "v"})).await;
    assert_eq!(s, 403);
    assert_eq!(
        h["www-authenticate"],
        format!(r#"Bearer error="insufficient_scope", scope="vault:write", resource_metadata="{prm}""#).as_str()
    );
    assert_eq!(b["id"], 7, "the error carries the request id");
    let code = b["error"]["code"].as_i64().unwrap();
    assert!(!(-32768..=-32000).contains(&code), "application code outside the reserved range: {code}");
    assert_eq!(
        b["error"]["data"],
        json!({"code": "auth/insufficient-scope", "required": "vault:write", "request_id": h["x-request-id"].to_str().unwrap()})
    );
    // The same call with a write token goes through; the read token still lists.
    let writer = Mcp { server: &server, token: Some(write), version: "2025-11-25" };
    let (s, _, b) = writer.call(8, "vault.store_credential", json!({"key": "k", "value": "v"})).await;
    assert_eq!((s, &b["result"]["isError"]), (200, &json!(false)), "{b}");
    // An Origin that is not allowed is refused (DNS rebinding protection).
    let (s, _, _) =
        writer.send(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}), Some("https://evil.example")).await;
    assert_eq!(s, 403);
}

/// Browser-based clients of an origin the operator allows: the preflight is answered before
/// authorisation, with the MCP headers allowed; each answer (the 401 challenge included) names
/// the origin and exposes the headers a client reads. Another origin gets no CORS answer and its
/// requests are refused (DNS rebinding protection), as every origin is when none is allowed.
#[tokio::test]
async fn an_allowed_browser_origin_gets_cors_answers_and_no_other_origin_does() {
    const APP: &str = "http://localhost:6274";
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |config, _| {
        config.mcp_allowed_origins = vec![APP.into()];
    })
    .await
    .unwrap();
    server.tenant("acme", "alice").await;
    let read = server.token_for("alice", "acme", "vault:read");
    let preflight = |origin: &'static str| {
        server
            .client()
            .request(reqwest::Method::OPTIONS, server.url("/api/mcp"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization,content-type,mcp-protocol-version,mcp-method")
            .send()
    };
    let allowed = preflight(APP).await.unwrap();
    assert_eq!(allowed.status(), 200);
    let h = allowed.headers();
    assert_eq!(h["access-control-allow-origin"], APP);
    let allowed_headers = h["access-control-allow-headers"].to_str().unwrap().to_string();
    for name in ["authorization", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "last-event-id"] {
        assert!(allowed_headers.contains(name), "{name} in {allowed_headers}");
    }
    assert!(h.get("access-control-allow-credentials").is_none(), "bearer tokens only");
    let foreign = preflight("https://evil.example").await.unwrap();
    assert!(foreign.headers().get("access-control-allow-origin").is_none());

    let with = |token: Option<String>| Mcp { server: &server, token, version: "2025-11-25" };
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let (s, h, _) = with(Some(read.clone())).send(ping.clone(), Some(APP)).await;
    assert_eq!((s, h["access-control-allow-origin"].to_str().unwrap()), (200, APP));
    let exposed = h["access-control-expose-headers"].to_str().unwrap().to_lowercase();
    for name in ["mcp-session-id", "mcp-protocol-version", "www-authenticate"] {
        assert!(exposed.contains(name), "{name} in {exposed}");
    }
    let (s, h, _) = with(None).send(ping.clone(), Some(APP)).await;
    assert_eq!(s, 401);
    assert_eq!(h["access-control-allow-origin"], APP, "the browser may read the challenge");
    assert!(h["www-authenticate"].to_str().unwrap().contains("resource_metadata="));
    let (s, h, _) = with(Some(read)).send(ping, Some("https://evil.example")).await;
    assert_eq!(s, 403);
    assert!(h.get("access-control-allow-origin").is_none());

    // Without an allowed origin, nothing is answered with CORS.
    let (plain, token, _) = setup().await;
    let preflight = plain
        .client()
        .request(reqwest::Method::OPTIONS, plain.url("/api/mcp"))
        .header("origin", APP)
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert!(preflight.headers().get("access-control-allow-origin").is_none());
    let mcp = Mcp { server: &plain, token: Some(token), version: "2025-11-25" };
    let (s, _, _) = mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}), Some(APP)).await;
    assert_eq!(s, 403);
    // The server itself under a loopback name, on its own port, is no rebinding.
    let port = plain.base.rsplit(':').next().unwrap().to_string();
    for own in [format!("http://localhost:{port}"), format!("http://127.0.0.1:{port}")] {
        let (s, _, _) = mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}), Some(&own)).await;
        assert_eq!(s, 200, "{own}");
    }
}

/// JSON-RPC 2.0 and the Streamable HTTP transport: a body that is not JSON is a parse error, JSON
/// that is not a JSON-RPC message an invalid request, each as HTTP 400 with a JSON-RPC error body
/// (it used to be HTTP 415 with a line of text); after authentication, which still comes first.
#[tokio::test]
async fn malformed_json_and_non_json_rpc_messages_get_400_with_a_json_rpc_error() {
    let (server, read, _) = setup().await;
    let cases: [(&str, i64, &str, Value); 14] = [
        (r#"{"jsonrpc": "2.0", "id": 1,"#, -32700, "Parse error", Value::Null),
        ("not json", -32700, "Parse error", Value::Null),
        ("", -32700, "Parse error", Value::Null),
        (r#"{"foo": 1}"#, -32600, "Invalid Request", Value::Null),
        ("[]", -32600, "Invalid Request", Value::Null),
        ("42", -32600, "Invalid Request", Value::Null),
        (r#""ping""#, -32600, "Invalid Request", Value::Null),
        ("null", -32600, "Invalid Request", Value::Null),
        // Batches left JSON-RPC over MCP in 2025-06-18, before every revision served here.
        (r#"[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]"#, -32600, "Invalid Request", Value::Null),
        (r#"{"jsonrpc": "1.0", "id": 7, "method": "ping"}"#, -32600, "Invalid Request", json!(7)),
        (r#"{"jsonrpc": "2.0", "id": null, "method": "ping"}"#, -32600, "Invalid Request", Value::Null),
        (r#"{"jsonrpc": "2.0", "id": "a", "method": 5}"#, -32600, "Invalid Request", json!("a")),
        (r#"{"jsonrpc": "2.0", "id": 8}"#, -32600, "Invalid Request", json!(8)),
        // A request this server knows, with parameters of the wrong shape.
        (r#"{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": 42}"#, -32602, "Invalid params", json!(9)),
    ];
    for version in LEGACY.into_iter().chain([MODERN]) {
        let mcp = Mcp { server: &server, token: Some(read.clone()), version };
        for (body, code, message, id) in &cases {
            let (status, headers, b) = mcp.send_raw(body, "application/json", None).await;
            assert_eq!(status, 400, "{version} {body:?}: {b}");
            assert_eq!(headers["content-type"], "application/json", "{version} {body:?}");
            assert_eq!(
                (&b["jsonrpc"], &b["id"], &b["error"]["code"], &b["error"]["message"]),
                (&json!("2.0"), id, &json!(code), &json!(message)),
                "{version} {body:?}: {b}"
            );
            assert!(b.get("id").is_some(), "{version} {body:?}: the id is there, null when unreadable: {b}");
            assert_eq!(
                b["error"]["data"]["request_id"].as_str(),
                headers["x-request-id"].to_str().ok(),
                "{version} {body:?}: the request id to quote: {b}"
            );
        }
        // Well-formed messages still reach the protocol layer.
        let mut list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        if version == MODERN {
            list["params"] = json!({"_meta": meta()});
        }
        let list = list.to_string();
        let (status, _, b) = mcp.send_raw(&list, "application/json; charset=utf-8", Some("tools/list")).await;
        assert_eq!((status, b["result"]["tools"].as_array().map(Vec::len)), (200, Some(10)), "{version}: {b}");
        // A method this server does not know is still rmcp's to answer, not a framing error.
        let mut unknown = json!({"jsonrpc": "2.0", "id": 2, "method": "nope/nope"});
        if version == MODERN {
            unknown["params"] = json!({"_meta": meta()});
        }
        let (_, _, b) = mcp.send_raw(&unknown.to_string(), "application/json", Some("nope/nope")).await;
        assert_eq!((&b["id"], &b["error"]["code"]), (&json!(2), &json!(-32601)), "{version}: {b}");
        // A body that is not sent as JSON stays 415, now with a JSON-RPC error body too.
        let (status, _, b) = mcp.send_raw(&list, "text/plain", Some("tools/list")).await;
        assert_eq!(
            (status, &b["jsonrpc"], &b["error"]["code"]),
            (415, &json!("2.0"), &json!(-32600)),
            "{version}: {b}"
        );
        // Authentication still comes first.
        let anonymous = Mcp { server: &server, token: None, version };
        let (status, headers, _) = anonymous.send_raw("not json", "application/json", None).await;
        assert_eq!(status, 401, "{version}: no token, malformed body");
        assert!(headers.contains_key("www-authenticate"));
    }
}

/// Every answer of the MCP endpoint is a JSON-RPC message (or the OAuth challenge), never a
/// protocol layer's line of text: a member named twice, a body over the limit, a method other
/// than POST, an `Accept` without JSON and a foreign `Origin`, on every revision. Each keeps its
/// HTTP status (and headers such as `Allow`) with a JSON-RPC error body.
#[tokio::test]
async fn every_answer_of_the_endpoint_is_a_json_rpc_message() {
    let (server, read, _) = setup().await;
    let limit = server.state.config.body_limit;
    let too_big =
        format!(r#"{{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {{"pad": "{}"}}}}"#, "x".repeat(limit));
    let expect = |what: &str, (status, headers, b): (u16, reqwest::header::HeaderMap, Value), want: u16, id: Value| {
        assert_eq!(status, want, "{what}: {b}");
        assert_eq!(headers["content-type"], "application/json", "{what}: {b}");
        assert_eq!((&b["jsonrpc"], &b["id"]), (&json!("2.0"), &id), "{what}: {b}");
        let code = b["error"]["code"].as_i64().unwrap_or_else(|| panic!("{what}: a JSON-RPC error: {b}"));
        assert!([-32700, -32600, -32602, -32603].contains(&code), "{what}: {b}");
        assert!(b["error"]["data"]["reason"].as_str().is_some_and(|r| !r.is_empty()), "{what}: says why: {b}");
        assert_eq!(b["error"]["data"]["request_id"].as_str(), headers["x-request-id"].to_str().ok(), "{what}: {b}");
        headers
    };
    for version in LEGACY.into_iter().chain([MODERN]) {
        let mcp = Mcp { server: &server, token: Some(read.clone()), version };
        for body in [
            r#"{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}"#,
            r#"{"jsonrpc": "2.0", "id": 1, "method": "ping", "method": "tools/list"}"#,
            r#"{"jsonrpc": "2.0", "jsonrpc": "2.0", "id": 1, "method": "ping"}"#,
            r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "vault.list_credentials", "name": "vault.reveal_credential"}}"#,
        ] {
            let answer = mcp.send_raw(body, "application/json", Some("ping")).await;
            expect(&format!("{version} duplicate member {body}"), answer, 400, Value::Null);
        }
        let answer = mcp.send_raw(&too_big, "application/json", Some("ping")).await;
        expect(&format!("{version} a body over {limit} bytes"), answer, 413, Value::Null);
        let answer = mcp.send_raw("", "text/plain", None).await;
        expect(&format!("{version} an empty body, not JSON"), answer, 415, Value::Null);

        // Headers rmcp checks itself: an Accept without JSON, a foreign Origin.
        let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"});
        let (status, headers, b) = mcp.send(ping.clone(), Some("https://evil.example")).await;
        expect(&format!("{version} a foreign Origin"), (status, headers, b), 403, json!(5));
        let resp = server
            .client()
            .post(server.url("/api/mcp"))
            .bearer_auth(&read)
            .header("accept", "text/html")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", version)
            .header("mcp-method", "ping")
            .body(ping.to_string())
            .send()
            .await
            .unwrap();
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let b: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap_or(Value::Null);
        expect(&format!("{version} an Accept without JSON"), (status, headers, b), 406, json!(5));
    }
    // The methods of the path other than POST.
    for method in ["GET", "DELETE", "PUT"] {
        let resp = server
            .client()
            .request(method.parse().unwrap(), server.url("/api/mcp"))
            .bearer_auth(&read)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", MODERN)
            .send()
            .await
            .unwrap();
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let b: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap_or(Value::Null);
        assert!(status >= 400, "{method}: {b}");
        expect(&format!("{method} /api/mcp"), (status, headers, b), status, Value::Null);
    }
}

/// The server returns every tool in one page and issues no cursor, so any cursor is unknown.
#[tokio::test]
async fn tools_list_with_an_unknown_cursor_is_invalid_params() {
    let (server, read, _) = setup().await;
    for version in LEGACY.into_iter().chain([MODERN]) {
        let mcp = Mcp { server: &server, token: Some(read.clone()), version };
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "bogus"}});
        let (_, _, b) = mcp.send(list, None).await;
        assert_eq!((&b["id"], &b["error"]["code"]), (&json!(3), &json!(-32602)), "{version}: {}", b["error"]);
        assert!(b.get("result").is_none(), "{version}: no page for a cursor we never issued: {b}");
    }
}

/// Personal access tokens are minted for the REST API: like a JWT for the REST audience, one is
/// refused at the MCP endpoint (it used to be accepted) unless the operator opts in.
#[tokio::test]
async fn personal_access_tokens_are_refused_at_the_mcp_endpoint() {
    let (server, read, _) = setup().await;
    let (status, created) =
        server.call("POST", "/api/v1/tokens", &read, Some(json!({"name": "laptop", "scopes": ["vault:read"]}))).await;
    assert_eq!(status, 201, "{created}");
    let pat = created["data"]["token"].as_str().unwrap().to_string();
    let (status, _) = server.call("GET", "/api/v1/credentials", &pat, None).await;
    assert_eq!(status, 200, "the token works where it was minted for");
    let mcp = Mcp { server: &server, token: Some(pat), version: "2025-11-25" };
    let (status, headers, _) = mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}), None).await;
    assert_eq!(status, 401, "a personal access token at /api/mcp");
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with(
            r#"Bearer error="invalid_token", error_description="the token is not issued for this resource""#
        ),
        "{challenge}"
    );
    // A prospector API token is for the prospector only.
    let team = server.team_token("alice", "acme");
    let (status, created) = server
        .call("POST", "/v1/prospector/tokens", &team, Some(json!({"name": "ci", "scopes": ["prospector"]})))
        .await;
    assert_eq!(status, 201, "{created}");
    let api = created["data"]["token"].as_str().unwrap().to_string();
    for path in ["/api/v1/credentials"] {
        let (status, body) = server.call("GET", path, &api, None).await;
        assert_eq!(status, 401, "a prospector API token at {path}: {body}");
    }
    let mcp = Mcp { server: &server, token: Some(api), version: "2025-11-25" };
    let (status, _, _) = mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}), None).await;
    assert_eq!(status, 401, "a prospector API token at /api/mcp");
}

#[tokio::test]
async fn rest_audience_tokens_are_accepted_only_when_configured() {
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |c, _| c.mcp_accepts_rest_tokens = true)
        .await
        .unwrap();
    server.tenant("acme", "alice").await;
    let c = &server.state.config;
    let claims = runtime::keys::claims(
        &c.issuer(),
        "alice",
        "acme",
        "vault:read",
        vec![c.url(vault_api::vault::SERVICE.base_path)],
        600,
        None,
    );
    let rest_only = server.sign(&claims);
    let (status, created) = server
        .call("POST", "/api/v1/tokens", &rest_only, Some(json!({"name": "laptop", "scopes": ["vault:read"]})))
        .await;
    assert_eq!(status, 201, "{created}");
    let pat = created["data"]["token"].as_str().unwrap().to_string();
    for (what, token) in [("a REST-audience JWT", rest_only), ("a personal access token", pat)] {
        let mcp = Mcp { server: &server, token: Some(token), version: "2025-11-25" };
        let (status, _, _) = mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}), None).await;
        assert_eq!(status, 200, "SPECWRIGHT_MCP_ACCEPT_REST_TOKENS lets {what} in");
    }
}

#[tokio::test]
async fn tools_share_rest_behaviour_errors_become_tool_results() {
    let (server, _, _) = setup().await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let mcp = Mcp { server: &server, token: Some(admin.clone()), version: "2025-11-25" };
    let (_, _, b) = mcp.call(1, "vault.store_credential", json!({"key": "db", "value": "s3cret"})).await;
    assert_eq!(b["result"]["structuredContent"]["data"]["current_version"], 1);
    let (_, _, lease) = mcp.call(2, "vault.lease_credential", json!({"credential_key": "db"})).await;
    let id = lease["result"]["structuredContent"]["data"]["id"].as_str().unwrap().to_string();
    let (_, _, secret) = mcp.call(3, "vault.read_credential", json!({"lease_id": id})).await;
    assert_eq!(secret["result"]["structuredContent"]["data"]["value"], "s3cret");
    // Single use on both surfaces: REST sees the lease as redeemed.
    let (s, b) = server.call("POST", "/api/v1/leases/read", &admin, Some(json!({"lease_id": id}))).await;
    assert_eq!((s, b["error"]["code"].as_str()), (410, Some("lease/unavailable")));
    let (_, _, again) = mcp.call(4, "vault.read_credential", json!({"lease_id": id})).await;
    assert_eq!(again["result"]["isError"], true, "business failures are tool results: {again}");
    assert_eq!(again["result"]["structuredContent"]["error"]["code"], "lease/unavailable");
    let (_, _, bad) = mcp.call(5, "vault.list_credentials", json!({"per_page": 500})).await;
    assert_eq!(bad["result"]["isError"], true);
    assert_eq!(bad["result"]["structuredContent"]["error"]["details"]["field"], "per_page");
    let (s, _, unknown) = mcp.call(6, "vault.nope", json!({})).await;
    assert_eq!((s, unknown["error"]["code"].as_i64()), (200, Some(-32602)), "unknown tools are protocol errors");
    // Audited like REST, with the operation id.
    let (_, audit) = server.call("GET", "/api/v1/audit?operation=redeem_lease", &admin, None).await;
    let outcomes: Vec<&str> =
        audit["data"].as_array().unwrap().iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(
        outcomes,
        vec!["failed", "failed", "allowed"],
        "newest first: two failed redeems (REST, MCP) then the successful one"
    );
}

#[tokio::test]
async fn tool_descriptors_carry_scope_lines_schemas_and_annotations() {
    let tools: Vec<Value> = serde_json::from_str(vault_api::vault::SERVICE.tools_json).unwrap();
    let expected = [
        ("vault.list_credentials", "vault:read"),
        ("vault.list_folders", "vault:read"),
        ("vault.lease_credential", "vault:read"),
        ("vault.read_credential", "vault:read"),
        ("vault.list_my_leases", "vault:read"),
        ("vault.revoke_lease", "vault:read"),
        ("vault.store_credential", "vault:write"),
        ("vault.archive_credential", "vault:write"),
        ("vault.restore_credential", "vault:write"),
        ("vault.rotate_credential", "vault:write"),
    ];
    assert_eq!(tools.len(), expected.len());
    for (name, scope) in expected {
        let t = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("tool {name} is listed"));
        let description = t["description"].as_str().unwrap();
        assert!(description.lines().any(|l| l == format!("SCOPE: {scope}")), "{name}: {description}");
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert_eq!(t["outputSchema"]["type"], "object", "{name}");
        assert!(t["annotations"]["readOnlyHint"].is_boolean(), "{name}");
    }
    let find = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    assert_eq!(find("vault.list_credentials")["annotations"]["readOnlyHint"], true);
    assert_eq!(find("vault.rotate_credential")["annotations"]["destructiveHint"], true);
}

/// For every tool, its `inputSchema` is the OpenAPI operation's parameters and request body as
/// one object: the same properties, the same schemas, the same required fields.
#[test]
fn every_tool_input_schema_matches_its_openapi_operation() {
    let doc: Value = serde_json::from_str(vault_api::vault::SERVICE.openapi_json).unwrap();
    let tools: Vec<Value> = serde_json::from_str(vault_api::vault::SERVICE.tools_json).unwrap();
    let resolve = |v: &Value| -> Value {
        match v.get("$ref").and_then(Value::as_str) {
            Some(r) => doc.pointer(&r.replacen('#', "", 1)).cloned().unwrap_or(Value::Null),
            None => v.clone(),
        }
    };
    // Refs differ only in where definitions live (`#/$defs` vs `#/components/schemas`).
    let normalize =
        |v: &Value| serde_json::from_str::<Value>(&v.to_string().replace("#/$defs/", "#/components/schemas/")).unwrap();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let (path, method, op) = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(p, item)| {
                item.as_object().unwrap().iter().map(move |(m, op)| (p.clone(), m.clone(), op.clone()))
            })
            .find(|(_, _, op)| op["x-mcp-tool"] == name)
            .unwrap_or_else(|| panic!("{name} has an OpenAPI operation"));
        let mut props = serde_json::Map::new();
        let mut required: Vec<String> = Vec::new();
        for p in op["parameters"].as_array().into_iter().flatten() {
            let pname = p["name"].as_str().unwrap().to_string();
            props.insert(pname.clone(), p["schema"].clone());
            if p["required"] == true {
                required.push(pname);
            }
        }
        if let Some(body) = op.pointer("/requestBody/content/application~1json/schema") {
            let body = resolve(body);
            for (k, v) in body["properties"].as_object().unwrap() {
                props.insert(k.clone(), v.clone());
            }
            required.extend(body["required"].as_array().into_iter().flatten().map(|r| r.as_str().unwrap().to_string()));
        }
        let input = &tool["inputSchema"];
        let tool_props = input["properties"].as_object().unwrap();
        assert_eq!(
            tool_props.keys().collect::<Vec<_>>().len(),
            props.len(),
            "{name} ({method} {path}): same properties"
        );
        for (k, v) in &props {
            assert_eq!(normalize(&tool_props[k]), normalize(v), "{name}.{k}: same schema as OpenAPI");
        }
        let mut tool_required: Vec<String> =
            input["required"].as_array().into_iter().flatten().map(|r| r.as_str().unwrap().to_string()).collect();
        tool_required.sort();
        required.sort();
        assert_eq!(tool_required, required, "{name}: same required fields");
    }
}

#[tokio::test]
async fn tool_calls_refused_as_invalid_are_audited_as_failed() {
    let (server, _, _) = setup().await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let mcp = Mcp { server: &server, token: Some(admin.clone()), version: "2025-11-25" };
    let (s, _, b) = mcp.call(1, "vault.store_credential", json!({"key": "bad key!", "value": "v"})).await;
    assert_eq!((s, &b["result"]["isError"]), (200, &json!(true)), "{b}");
    assert_eq!(b["result"]["structuredContent"]["error"]["code"], "request/invalid");
    let (_, audit) = server.call("GET", "/api/v1/audit?operation=store_credential", &admin, None).await;
    let rows = audit["data"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one row for the refused tool call: {rows:?}");
    assert_eq!(
        (&rows[0]["outcome"], &rows[0]["status"], &rows[0]["error_code"]),
        (&json!("failed"), &json!(422), &json!("request/invalid")),
        "{}",
        rows[0]
    );
}

/// A browser-based MCP client in headless Chromium (`tests/browser_client/`): a page on an origin
/// the operator allowed signs the user in and lists and calls tools, everything across origins
/// through CORS (the challenge read from `WWW-Authenticate`, discovery, registration, the token,
/// the MCP calls); the same page on an origin not allowed is refused by the browser itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_based_client_on_an_allowed_origin_signs_in_and_calls_tools() {
    let (Some(modules), Some(chromium)) =
        (tests::tool("SPECWRIGHT_PLAYWRIGHT_NODE_MODULES"), tests::tool("SPECWRIGHT_CHROMIUM"))
    else {
        return;
    };
    // The application's two origins: one allowed, one not; each serves the same page.
    let page = std::fs::read_to_string(xtask::workspace_root().join("tests/browser_client/app.html")).unwrap();
    let mut origins = Vec::new();
    for _ in 0..2 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        origins.push(format!("http://{}", listener.local_addr().unwrap()));
        let page = page.clone();
        let app = axum::Router::new().fallback(move || {
            let page = page.clone();
            async move { ([("content-type", "text/html; charset=utf-8")], page) }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    }
    let allowed = origins[0].clone();
    let server = common::TestServer::start_configured(common::Backend::Sqlite, |config, _| {
        config.mcp_allowed_origins = vec![allowed.clone()];
    })
    .await
    .unwrap();
    server.tenant("acme", "alice").await;
    runtime::oauth::users::add(&server.state.store, "alice", "acme", "correct horse battery").await.unwrap();
    let script = xtask::workspace_root().join("tests/browser_client/browser_client.mjs");
    let node = std::env::var("SPECWRIGHT_NODE").unwrap_or_else(|_| "node".into());
    let mut cmd = std::process::Command::new(node);
    cmd.arg(script)
        .args([server.url("/api/mcp"), origins[0].clone(), origins[1].clone()])
        .args(["alice", "correct horse battery"])
        .env("SPECWRIGHT_PLAYWRIGHT_NODE_MODULES", modules)
        .env("CHROMIUM", chromium)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the browser client failed:\n{text}");
    let found: Value = serde_json::from_str(text.lines().rev().find(|l| l.starts_with('{')).unwrap()).unwrap();
    let ok = &found["allowed"];
    assert_eq!(ok["challenge_readable"], true, "{found}");
    assert_eq!(ok["tools"], 10, "{found}");
    assert_eq!(ok["call_is_error"], false, "{found}");
    assert_eq!(ok["protocol_version"], "2025-11-25", "{found}");
    assert_eq!(found["refused"]["blocked"], true, "{found}");
}
