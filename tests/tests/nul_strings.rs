//! U+0000 (NUL) in any string input: PostgreSQL text cannot hold it, so the one generated decoder
//! refuses it with the service's validation error naming the field, on every operation of both
//! services, on REST and MCP, on both storage backends: never a 500, never stored.
//!
//! Strings that enter elsewhere follow the same rule: the authorization server's parameters and
//! client metadata are refused as bad requests, and a lead feed's posting holding one is counted
//! as failed by the scan instead of failing it.
//!
//! The sweep is driven by the generated operation table: for each operation, every string it
//! takes (path, query, JSON body, inside lists and nested objects) gets a NUL in turn while every
//! other field holds a value the decoder accepts. Header fields are not swept: HTTP cannot carry a
//! NUL in a header value (the client refuses to send one and the server's parser to read one).

mod common;

use serde_json::{Map, Value, json};
use support::{FieldSpec, Kind, Location, Operation};

const NUL: &str = "a\u{0}b";

/// A value the decoder accepts for `spec` (with `kind` as its shape, for list items).
fn filler(spec: &FieldSpec, kind: &Kind) -> Value {
    match kind {
        Kind::String if spec.format.is_some() => json!(match spec.format {
            Some(support::Format::Uuid) => "0190c3e8-5b7a-7cc0-9d1e-2f3a4b5c6d7e",
            Some(support::Format::Email) => "ann@example.com",
            Some(support::Format::Uri) => "https://example.com/",
            Some(support::Format::Ipv4) => "192.0.2.1",
            Some(support::Format::Ipv6) => "::1",
            _ => "example.com",
        }),
        Kind::String => {
            // The first candidate the field's pattern accepts; a pattern none matches fails here,
            // so a new pattern in a spec cannot quietly turn this sweep into a test of the pattern.
            const CANDIDATES: [&str; 6] = ["abc", "USD", "US", "score", "vault:read", "prospector"];
            let value = match spec.pattern {
                None => "abc",
                Some(p) => {
                    let re = regex::Regex::new(p).expect("spec patterns are valid regexes");
                    CANDIDATES
                        .into_iter()
                        .find(|c| re.is_match(c))
                        .unwrap_or_else(|| panic!("no filler value matches pattern {p}: add one to CANDIDATES"))
                }
            };
            json!(value)
        }
        Kind::DateTime => json!("2030-01-01T00:00:00Z"),
        Kind::Date => json!("2030-01-01"),
        Kind::Integer | Kind::Number => {
            let n = spec.minimum.unwrap_or_else(|| spec.maximum.unwrap_or(1.0).min(1.0));
            if n.fract() == 0.0 { json!(n as i64) } else { json!(n) }
        }
        Kind::Boolean => json!(false),
        Kind::Json => json!({}),
        Kind::Enum(values) => json!(values[0]),
        Kind::Model(fields) => Value::Object(fields.iter().map(|f| (f.name.to_string(), filler(f, &f.kind))).collect()),
        Kind::List(inner) => json!([filler(spec, inner)]),
        Kind::Map(inner) => json!({ "k": filler(spec, inner) }),
        Kind::Union(union) => variant_filler(union, 0),
        // No JSON value is a file: the operations swept here take none.
        Kind::File { .. } => panic!("a file field has no JSON filler: sweep its operation with a multipart body"),
    }
}

/// A value of variant `i` of `union`: its model's fields and, when tagged, its tag.
fn variant_filler(union: &support::UnionSpec, i: usize) -> Value {
    let (name, fields) = union.variants[i];
    let mut obj: Map<String, Value> = fields.iter().map(|f| (f.name.to_string(), filler(f, &f.kind))).collect();
    if let Some(tag) = union.tag {
        obj.insert(tag.to_string(), json!(name));
    }
    Value::Object(obj)
}

/// Every string place inside a value of `kind`: its path relative to the field (`""` for the
/// value itself, `[0]`, `.name`, `[0].title`…), and the value with a NUL put there.
fn nul_variants(spec: &FieldSpec, kind: &Kind) -> Vec<(String, Value)> {
    match kind {
        Kind::String | Kind::DateTime | Kind::Date | Kind::Enum(_) => vec![(String::new(), json!(NUL))],
        Kind::Json => vec![(String::new(), json!({ "k": [NUL] }))],
        Kind::Model(fields) => fields_with_nul(&filler(spec, kind), fields),
        Kind::List(inner) => {
            nul_variants(spec, inner).into_iter().map(|(sub, v)| (format!("[0]{sub}"), json!([v]))).collect()
        }
        Kind::Map(inner) => {
            nul_variants(spec, inner).into_iter().map(|(sub, v)| (format!(".k{sub}"), json!({ "k": v }))).collect()
        }
        Kind::Union(union) => union
            .variants
            .iter()
            .enumerate()
            .flat_map(|(i, (_, fields))| fields_with_nul(&variant_filler(union, i), fields))
            .collect(),
        // A file's content is bytes, never a JSON string.
        Kind::Integer | Kind::Number | Kind::Boolean | Kind::File { .. } => Vec::new(),
    }
}

/// `base` (an object of `fields`) with a NUL in each string place of each field in turn.
fn fields_with_nul(base: &Value, fields: &[FieldSpec]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for f in fields {
        for (sub, v) in nul_variants(f, &f.kind) {
            let mut obj = base.clone();
            obj[f.name] = v;
            out.push((format!(".{}{sub}", f.name), obj));
        }
    }
    out
}

/// One request that puts a NUL into one string of `op`'s input.
struct Case {
    /// The field path the 422 must name.
    field: String,
    /// Every input field, by name, as JSON.
    input: Map<String, Value>,
}

fn cases(op: &Operation) -> Vec<Case> {
    let base: Map<String, Value> = op.input.iter().map(|f| (f.name.to_string(), filler(f, &f.kind))).collect();
    let mut out = Vec::new();
    for f in op.input.iter().filter(|f| f.location != Location::Header) {
        for (sub, v) in nul_variants(f, &f.kind) {
            // Query and path values are strings on the wire: only scalars and lists of scalars.
            if !matches!(f.location, Location::Body | Location::Payload) && sub.contains('.') {
                continue;
            }
            let mut input = base.clone();
            input.insert(f.name.to_string(), v);
            out.push(Case { field: format!("{}{sub}", f.name), input });
        }
    }
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Sends `case` to `op` over REST the way a client would: path, query string, JSON body.
async fn send(server: &common::TestServer, token: &str, op: &Operation, case: &Case) -> (u16, Value) {
    let mut path = op.full_path.to_string();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut body = Map::new();
    let mut payload = None;
    for f in op.input {
        let Some(v) = case.input.get(f.name) else { continue };
        match f.location {
            Location::Path => {
                let raw = scalar(v).replace('\0', "%00");
                path = path.replace(&format!("{{{}}}", f.name), &raw);
            }
            Location::Query => match v {
                Value::Array(items) => query.extend(items.iter().map(|i| (f.name.to_string(), scalar(i)))),
                other => query.push((f.name.to_string(), scalar(other))),
            },
            Location::Body => {
                body.insert(f.name.to_string(), v.clone());
            }
            Location::Payload => payload = Some(v.clone()),
            Location::Header => {}
        }
    }
    if !query.is_empty() {
        path = format!("{path}?{}", serde_urlencoded::to_string(&query).unwrap());
    }
    let method = reqwest::Method::from_bytes(op.method.as_str().as_bytes()).unwrap();
    let mut rb = server.client().request(method, server.url(&path)).bearer_auth(token);
    if op.has_body {
        rb = rb.json(&payload.unwrap_or(Value::Object(body)));
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The refusal every case must get: the service's validation error naming the field.
fn assert_refused(what: &str, op: &Operation, field: &str, status: u16, error: &Value) {
    let code = op.service.roles.validation;
    assert_eq!(
        (status, error["code"].as_str(), error["details"]["field"].as_str()),
        (422, Some(code), Some(field)),
        "{what}: a NUL in {} of {} must be a 422 {code} naming it: {error}",
        field,
        op.id
    );
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("U+0000"), "{what} {}: the message says why: {message}", op.id);
}

on_both_backends!(nul_in_any_string_is_a_validation_error_on_every_operation, |server| {
    server.tenant("acme", "alice").await;
    let admin = server.token_for("alice", "acme", "vault:admin");
    let mut swept: Vec<(&str, String)> = Vec::new();
    for op in vault_api::vault::OPERATIONS.iter() {
        for case in cases(op) {
            let (status, body) = send(&server, &admin, op, &case).await;
            assert_refused("REST", op, &case.field, status, &body["error"]);
            swept.push((op.id, case.field));
        }
    }
    // The Team plan allows 300 requests a minute per token: a fresh token every 200 requests.
    let mut prospector = server.team_token("alice", "acme");
    let mut sent = 0;
    for op in prospector_api::prospector::OPERATIONS.iter() {
        for case in cases(op) {
            sent += 1;
            if sent % 200 == 0 {
                prospector = server.team_token(&format!("alice{sent}"), "acme");
            }
            let (status, body) = send(&server, &prospector, op, &case).await;
            assert_refused("REST", op, &case.field, status, &body["error"]);
            swept.push((op.id, case.field));
        }
    }
    for (op, field) in [
        ("list_credentials", "tag[0]"),
        ("list_audit", "operation"),
        ("issue_lease", "credential_key"),
        ("update_credential", "username"),
        ("update_credential", "key"),
        ("list_leads", "q"),
        ("get_lead", "id"),
        ("record_proposal_outcome", "contract.milestones[0].title"),
    ] {
        assert!(swept.iter().any(|(o, f)| *o == op && f == field), "the sweep covers {op} {field}: {swept:?}");
    }

    // MCP tool arguments decode through the same layer: a tool result with the same error.
    for (tool, op) in vault_api::vault::tools::TOOLS.iter() {
        for (id, case) in cases(op).into_iter().enumerate() {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                 "params": {"name": tool, "arguments": Value::Object(case.input)}});
            let resp = server
                .client()
                .post(server.url("/api/mcp"))
                .bearer_auth(&admin)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .json(&message)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200, "{tool} with a NUL in {}", case.field);
            let b: Value = resp.json().await.unwrap();
            assert_eq!(b["result"]["isError"], true, "{tool} {}: {b}", case.field);
            let error = &b["result"]["structuredContent"]["error"];
            assert_refused("MCP", op, &case.field, error["status"].as_u64().unwrap_or(0) as u16, error);
        }
    }

    // Nothing reached storage: the vault is as empty as it started.
    for path in ["/api/v1/credentials?state=all", "/api/v1/folders", "/api/v1/tags", "/api/v1/tokens"] {
        let (status, body) = server.call("GET", path, &admin, None).await;
        assert_eq!((status, &body["meta"]["total"]), (200, &json!(0)), "{path}: {body}");
    }
});

on_both_backends!(nul_in_an_authorization_server_parameter_is_a_bad_request, |server| {
    let client = server.client();
    let cases = [
        (
            "registration: client_name",
            "/oauth/register",
            json!({"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": NUL}),
        ),
        ("registration: a redirect URI", "/oauth/register", json!({"redirect_uris": ["http://127.0.0.1:9/cb\u{0}"]})),
    ];
    for (what, path, body) in cases {
        let resp = client.post(server.url(path)).json(&body).send().await.unwrap();
        let status = resp.status().as_u16();
        let b: Value = resp.json().await.unwrap_or(Value::Null);
        assert_eq!(status, 400, "{what}: {b}");
        assert!(b["error"].as_str().is_some_and(|e| e.starts_with("invalid_")), "{what}: an RFC 7591 error: {b}");
    }
    let forms = [
        (
            "token: client_id",
            "/oauth/token",
            vec![("grant_type", "authorization_code"), ("client_id", NUL), ("code", "c")],
        ),
        ("token: code", "/oauth/token", vec![("grant_type", "authorization_code"), ("client_id", "c"), ("code", NUL)]),
        ("revocation: token", "/oauth/revoke", vec![("token", NUL)]),
        ("sign-in: username", "/login", vec![("username", NUL), ("password", "p")]),
    ];
    for (what, path, form) in forms {
        let resp = client.post(server.url(path)).header("origin", &server.base).form(&form).send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        assert_eq!(status, 400, "{what}: {text}");
    }
    let resp = client.get(server.url("/oauth/authorize?response_type=code&client_id=a%00b")).send().await.unwrap();
    assert_eq!(resp.status(), 400, "authorization: client_id");
});

/// A lead feed is not client input, but its text is stored the same way.
async fn a_feed_posting_holding_nul_fails_alone(backend: common::Backend) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("feed.ndjson"),
        concat!(
            r#"{"id": "ok-1", "platform": "local", "title": "Go CLI tool", "skills": ["go"]}"#,
            "\n",
            r#"{"id": "nul-1", "platform": "local", "title": "Go\u0000 CLI tool"}"#,
            "\n",
            r#"{"id": "nul-2", "platform": "local", "title": "Rust", "skills": ["rust\u0000"]}"#,
            "\n",
            r#"{"id": "nul-3", "platform": "local", "title": "Rust", "client": {"name": "A\u0000B", "payment_verified": true, "jobs_posted": 1, "hires": 1}}"#,
            "\n",
        ),
    )
    .unwrap();
    let sources = vec![format!("files={}", dir.path().display())];
    let Some(server) = common::TestServer::start_configured(backend, |_, s| s.prospector.lead_sources = sources).await
    else {
        return;
    };
    let token = server.team_token("alice", "acme");
    let (status, report) = server.call("POST", "/v1/prospector/leads/scan", &token, Some(json!({}))).await;
    assert_eq!(status, 200, "{backend:?}: {report}");
    let files = &report["data"]["sources"][0];
    assert_eq!(
        (&files["fetched"], &files["new"], &files["failed"]),
        (&json!(4), &json!(1), &json!(3)),
        "{backend:?}: the clean posting is stored, the three holding NUL fail: {report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_posting_holding_nul_fails_alone_on_sqlite() {
    a_feed_posting_holding_nul_fails_alone(common::Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_posting_holding_nul_fails_alone_on_postgres() {
    a_feed_posting_holding_nul_fails_alone(common::Backend::Postgres).await;
}
