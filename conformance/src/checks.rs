//! The checks of one run: challenges and scope tiers per operation, PRM documents, the served OpenAPI documents and MCP tools, rate-limit headers.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::*;

/// Collects the checks of a run.
pub(super) struct Run<'a> {
    pub(super) target: &'a Target,
    pub(super) report: Report,
}

impl Run<'_> {
    pub(super) fn record(
        &mut self,
        service: &Service,
        check: &'static str,
        subject: String,
        outcome: Result<(), String>,
    ) {
        self.report.checks.push(Check { service: service.name.clone(), check, subject, failure: outcome.err() });
    }

    pub(super) fn request(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
        self.target.client.request(method, self.target.at(path))
    }

    /// A deprecated operation's answers carry exactly its `Deprecation` and `Sunset` headers; the
    /// others carry neither.
    pub(super) fn deprecation_headers(op: &Op, a: &Answer) -> Result<(), String> {
        let (deprecation, sunset) = match &op.deprecation {
            Some((d, s)) => (d.as_deref(), s.as_deref()),
            None => (None, None),
        };
        for (name, want) in [("deprecation", deprecation), ("sunset", sunset)] {
            if a.header(name) != want {
                return Err(format!("{name} is {:?}, expected {want:?}", a.header(name)));
            }
        }
        Ok(())
    }

    /// The rate-limit headers of an answer from a metered operation of a service with plans.
    pub(super) fn rate_headers(service: &Service, metered: bool, a: &Answer) -> Result<(), String> {
        let Some((per_minute, per_day)) = service.plan_limits().filter(|_| metered) else {
            return Ok(());
        };
        for name in RATE_HEADERS {
            match a.header(name).map(str::parse::<u64>) {
                Some(Ok(_)) => {}
                Some(Err(_)) => return Err(format!("{name} is not a whole number")),
                None => return Err(format!("no {name} header, though the service declares plans")),
            }
        }
        let limit: u64 = a.header(RATE_HEADERS[0]).and_then(|v| v.parse().ok()).unwrap_or_default();
        if limit != u64::from(per_minute) && limit != u64::from(per_day) {
            return Err(format!(
                "x-ratelimit-limit is {limit}, not a limit of the default plan ({per_minute}/min, {per_day}/day)"
            ));
        }
        Ok(())
    }

    /// The service's error body in its wire format: the code, a message, details exactly
    /// `{"required": scope}` when a scope is given, and the answer's `X-Request-Id` as the
    /// request id; where each is depends on the format: the envelope's `error.code`,
    /// `error.message`, `error.details` and `error.request_id`; problem details (as
    /// `application/problem+json`, with `type`, `title` and `status` equal to the answer's) with
    /// `code`, `detail`, a `required` member and `request_id`; or the paths of the service's own
    /// error model (as far as it carries details and the request id).
    pub(super) fn error_body(service: &Service, a: &Answer, code: &str, required: Option<&str>) -> Result<(), String> {
        // Where each part is: code, message, required scope (with its expected value), request id.
        let scope = |at: &str, whole: bool| {
            required.map(|s| (at.to_string(), if whole { json!({ "required": s }) } else { json!(s) }))
        };
        let (code_at, message_at, scope_at, id_at) = match &service.errors {
            ErrorShape::Envelope => (
                "error.code".to_string(),
                "error.message".to_string(),
                scope("error.details", true),
                Some("error.request_id".to_string()),
            ),
            ErrorShape::Problem => {
                let ct = a.header("content-type").unwrap_or_default();
                if ct != "application/problem+json" {
                    return Err(format!("content-type is {ct:?}, expected application/problem+json"));
                }
                for member in ["type", "title"] {
                    if a.body[member].as_str().is_none_or(str::is_empty) {
                        return Err(format!("{member} is {}, expected a string: {}", a.body[member], short(&a.body)));
                    }
                }
                if a.body["status"].as_u64() != Some(u64::from(a.status)) {
                    return Err(format!("status is {}, the answer's is {}", a.body["status"], a.status));
                }
                ("code".to_string(), "detail".to_string(), scope("required", false), Some("request_id".to_string()))
            }
            ErrorShape::Model { code, message, details, request_id } => {
                (code.clone(), message.clone(), details.as_deref().and_then(|d| scope(d, true)), request_id.clone())
            }
        };
        let at = |path: &str| path.split('.').fold(&a.body, |v, segment| &v[segment]);
        if at(&code_at).as_str() != Some(code) {
            return Err(format!("{code_at} is {}, expected {code:?}: {}", at(&code_at), short(&a.body)));
        }
        if at(&message_at).as_str().is_none_or(str::is_empty) {
            return Err(format!("{message_at} is {}, expected a sentence", at(&message_at)));
        }
        if let Some((path, expected)) = scope_at
            && *at(&path) != expected
        {
            return Err(format!("{path} is {}, expected {expected}", at(&path)));
        }
        if let (Some(path), Some(id)) = (id_at, a.header("x-request-id"))
            && *at(&path) != json!(id)
        {
            return Err(format!("{path} is {}, the answer's X-Request-Id {id:?}", at(&path)));
        }
        Ok(())
    }

    pub(super) async fn operations(&mut self, service: &Service) {
        let rest = &service.surfaces()[0];
        let prm = self.target.at(&rest.announced());
        for op in &service.operations {
            let subject = format!("{} {} ({})", op.method, op.path, op.id);
            // The answer to HEAD has no content (RFC 9110, 9.3.2): its refusals are read by their
            // status and headers.
            let bodiless = op.method == "HEAD";
            let build = |run: &Self| {
                let rb = run.request(&op.method, &concrete(&op.path));
                if op.has_body { rb.header("content-type", "application/json").body("{}") } else { rb }
            };
            if op.scope.is_empty() {
                // Public: the gate admits a request without a token (still counted), whatever the
                // implementation then answers.
                let outcome = self.target.send_as(build(self), service, None).await.and_then(|a| {
                    if a.status == 401 || a.status == 403 {
                        return Err(format!(
                            "answered {}{}, expected no challenge: {}",
                            a.status,
                            a.hint(),
                            short(&a.body)
                        ));
                    }
                    Self::deprecation_headers(op, &a)?;
                    Self::rate_headers(service, op.rate_limited, &a)
                });
                self.record(service, "public without a token", subject, outcome);
                continue;
            }

            let challenge = format!(r#"Bearer resource_metadata="{prm}", scope="{}""#, op.scope);
            let outcome = self.target.send_as(build(self), service, None).await.and_then(|a| {
                a.status(401)?;
                a.exact_header("www-authenticate", &challenge)?;
                if !bodiless {
                    Self::error_body(service, &a, &service.unauthenticated, Some(&op.scope))?;
                }
                Self::deprecation_headers(op, &a)?;
                Self::rate_headers(service, op.rate_limited, &a)
            });
            self.record(service, "401 without a token", subject.clone(), outcome);

            let lower = service.one_tier_below(&op.scope);
            let outcome = self.target.send_as(build(self), service, Some(&lower)).await.and_then(|a| {
                Self::insufficient(&op.scope, &prm, &a)?;
                if !bodiless {
                    Self::error_body(service, &a, &service.insufficient_scope, Some(&op.scope))?;
                }
                Self::rate_headers(service, op.rate_limited, &a)
            });
            self.record(service, "403 one tier below", format!("{subject} with {}", tier(&lower)), outcome);

            if self.target.admission {
                let outcome = (self.target.send_as(build(self), service, Some(&op.scope)).await)
                    .and_then(|a| Self::admitted(service, &a, a.body.pointer("/error/code")));
                self.record(service, "admitted at its tier", format!("{subject} with {}", op.scope), outcome);
            }
        }
    }

    /// The gate let the request through: whatever the operation answered, it was not the gate's
    /// refusal (401, 403 `insufficient_scope`), a rate limit or a server failure. `code` is the
    /// error code the answer carries, if any.
    pub(super) fn admitted(service: &Service, a: &Answer, code: Option<&Value>) -> Result<(), String> {
        let refused = a.status == 401 || (a.status == 403 && code == Some(&json!(service.insufficient_scope)));
        if refused || a.status == 429 || a.status >= 500 {
            return Err(format!(
                "answered {}{}, expected the gate to admit it: {}",
                a.status,
                a.hint(),
                short(&a.body)
            ));
        }
        Ok(())
    }

    /// A 403 with the exact `insufficient_scope` challenge for `scope`.
    pub(super) fn insufficient(scope: &str, prm: &str, a: &Answer) -> Result<(), String> {
        a.status(403)?;
        let challenge = format!(r#"Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{prm}""#);
        a.exact_header("www-authenticate", &challenge)
    }

    pub(super) async fn metadata(&mut self, service: &Service) {
        let scopes: Vec<&str> = service.scopes.iter().map(|(n, _)| n.as_str()).collect();
        // Under a public URL with a path (`https://example.com/sw`), RFC 9728 section 3.1 also puts
        // each document at the origin, after the well-known prefix and the resource's whole path.
        let (origin, base) = match reqwest::Url::parse(&self.target.url) {
            Ok(u) => (u.origin().ascii_serialization(), u.path().trim_end_matches('/').to_string()),
            Err(_) => (self.target.url.clone(), String::new()),
        };
        for surface in service.surfaces() {
            let mut urls: Vec<(String, String)> = surface
                .declared
                .iter()
                .chain([&format!("{WELL_KNOWN}{}", surface.path)])
                .map(|p| (p.clone(), self.target.at(p)))
                .collect();
            if !base.is_empty() {
                let path = format!("{WELL_KNOWN}{base}{}", surface.path);
                urls.push((format!("{path} (at the origin)"), format!("{origin}{path}")));
            }
            let mut seen = BTreeSet::new();
            urls.retain(|(label, _)| seen.insert(label.clone()));
            for (label, url) in urls {
                let outcome = send(self.target.client.get(url)).await.and_then(|a| {
                    a.status(200)?;
                    self.prm_document(&a, &surface, &scopes)
                });
                self.record(service, "PRM document", format!("{} {label}", surface.label), outcome);
            }
        }
    }

    pub(super) fn prm_document(&self, a: &Answer, surface: &Surface, scopes: &[&str]) -> Result<(), String> {
        let doc = &a.body;
        let ct = a.header("content-type").unwrap_or_default();
        if !ct.starts_with("application/json") {
            return Err(format!("content-type is {ct:?}, expected application/json"));
        }
        let resource = self.target.at(&surface.path);
        if doc["resource"] != json!(resource) {
            return Err(format!("resource is {}, expected {resource:?}", doc["resource"]));
        }
        if doc["scopes_supported"] != json!(scopes) {
            return Err(format!("scopes_supported is {}, expected {}", doc["scopes_supported"], json!(scopes)));
        }
        // The kit's tokens are the embedded authorization server's, whose issuer is the public URL.
        let servers = doc["authorization_servers"].as_array().map(Vec::as_slice).unwrap_or_default();
        if !servers.contains(&json!(self.target.url)) {
            return Err(format!(
                "authorization_servers is {}, expected it to list {:?} (the embedded authorization server)",
                doc["authorization_servers"], self.target.url
            ));
        }
        let methods = &doc["bearer_methods_supported"];
        if !methods.is_null() && !methods.as_array().is_some_and(|m| m.contains(&json!("header"))) {
            return Err(format!("bearer_methods_supported is {methods}, which leaves out header"));
        }
        Ok(())
    }

    pub(super) async fn openapi(&mut self, service: &Service) {
        for (path, generated) in [
            (format!("/openapi/{}.json", service.name), &service.openapi),
            (format!("/openapi/{}.3.0.json", service.name), &service.openapi_30),
        ] {
            let outcome = send(self.target.client.get(self.target.at(&path))).await.and_then(|a| {
                a.status(200)?;
                self.same_document(service, a.body, generated)
            });
            self.record(service, "OpenAPI as generated", path, outcome);
        }
    }

    /// `served` is `generated` but for `servers` (the base path under the public URL) and the
    /// OAuth flows' endpoints (absolute URLs of the server's authorization server).
    pub(super) fn same_document(&self, service: &Service, mut served: Value, generated: &Value) -> Result<(), String> {
        let servers = json!([{ "url": self.target.at(&service.base_path) }]);
        if served["servers"] != servers {
            return Err(format!("servers is {}, expected {servers}", served["servers"]));
        }
        served["servers"] = generated["servers"].clone();
        let schemes = generated.pointer("/components/securitySchemes").and_then(Value::as_object);
        for (scheme, def) in schemes.into_iter().flatten() {
            for (flow, fields) in def.get("flows").and_then(Value::as_object).into_iter().flatten() {
                for field in ["authorizationUrl", "tokenUrl", "refreshUrl"] {
                    let pointer = format!("/components/securitySchemes/{scheme}/flows/{flow}/{field}");
                    let (Some(want), Some(got)) = (fields.get(field), served.pointer_mut(&pointer)) else {
                        continue;
                    };
                    // The embedded authorization server's endpoints are served under the public
                    // URL; an external one's stay as generated.
                    let under_url = want.as_str().filter(|w| w.starts_with('/')).map(|w| json!(self.target.at(w)));
                    if *got != *want && Some(&*got) != under_url.as_ref() {
                        let expected = under_url.map_or_else(|| want.to_string(), |u| format!("{u} or {want}"));
                        return Err(format!("{pointer} is {got}, expected {expected}"));
                    }
                    *got = want.clone();
                }
            }
        }
        match first_difference(&served, generated, String::new()) {
            None => Ok(()),
            Some((at, got, want)) => {
                Err(format!("differs at {}: served {got}, generated {want}", if at.is_empty() { "/" } else { &at }))
            }
        }
    }

    pub(super) async fn mcp(&mut self, service: &Service) {
        let Some(mcp) = service.surfaces().into_iter().find(|s| s.label == "MCP") else {
            return;
        };
        let prm = self.target.at(&mcp.announced());
        let post = |run: &Self, message: &Value| {
            run.target
                .client
                .post(run.target.at(&mcp.path))
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", MCP_REVISION)
                .json(message)
        };

        // Without a token, the endpoint challenges like the REST API, for the lowest tier (what it
        // takes to connect and list).
        let lowest = service.scopes.first().map(|(n, _)| n.as_str()).unwrap_or_default();
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let challenge = format!(r#"Bearer resource_metadata="{prm}", scope="{lowest}""#);
        let outcome = self.target.send_as(post(self, &ping), service, None).await.and_then(|a| {
            a.status(401)?;
            a.exact_header("www-authenticate", &challenge)?;
            Self::error_body(service, &a, &service.unauthenticated, Some(lowest))?;
            Self::rate_headers(service, true, &a)
        });
        self.record(service, "MCP 401 without a token", mcp.path.clone(), outcome);

        // tools/list is the spec's tools, in order, every page of them.
        let listed = self.list_tools(service, |m| post(self, m)).await;
        let outcome = listed.as_ref().map_err(Clone::clone).and_then(|tools| same_tools(tools, &service.tools));
        self.record(service, "tools/list as generated", mcp.path.clone(), outcome);

        for op in service.operations.iter().filter(|op| op.tool.is_some() && !op.scope.is_empty()) {
            let name = op.tool.clone().unwrap_or_default();
            let line = format!("SCOPE: {}", op.scope);
            let outcome = match &listed {
                Ok(tools) => match tools.iter().find(|t| t["name"] == json!(name)) {
                    Some(t) if t["description"].as_str().is_some_and(|d| d.lines().any(|l| l == line)) => Ok(()),
                    Some(t) => Err(format!("the description has no line `{line}`: {}", t["description"])),
                    None => Err("tools/list does not list it".into()),
                },
                Err(_) => Err("tools/list failed".into()),
            };
            self.record(service, "tool SCOPE line", name.clone(), outcome);

            let lower = service.one_tier_below(&op.scope);
            let call =
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": {}}});
            let outcome = self.target.send_as(post(self, &call), service, Some(&lower)).await.and_then(|a| {
                Self::insufficient(&op.scope, &prm, &a)?;
                Self::jsonrpc_refusal(service, &op.scope, &a)?;
                Self::rate_headers(service, op.rate_limited, &a)
            });
            self.record(service, "tools/call one tier below", format!("{name} with {}", tier(&lower)), outcome);

            if self.target.admission {
                let outcome = self.target.send_as(post(self, &call), service, Some(&op.scope)).await.and_then(|a| {
                    Self::admitted(service, &a, a.body.pointer("/error/data/code"))?;
                    a.status(200)
                });
                self.record(service, "tools/call admitted at its tier", format!("{name} with {}", op.scope), outcome);
            }
        }
    }

    /// A JSON-RPC error (numeric code) whose data is the REST envelope's code, scope and id.
    pub(super) fn jsonrpc_refusal(service: &Service, scope: &str, a: &Answer) -> Result<(), String> {
        let want = json!({
            "code": service.insufficient_scope,
            "required": scope,
            "request_id": a.header("x-request-id"),
        });
        if a.body["error"]["data"] != want || !a.body["error"]["code"].is_i64() {
            return Err(format!(
                "the JSON-RPC error is {}, expected a numeric code and data {want}",
                short(&a.body["error"])
            ));
        }
        Ok(())
    }

    /// Every tool `tools/list` gives, following `nextCursor`.
    /// (With a token of every scope of `service`.)
    pub(super) async fn list_tools(
        &self,
        service: &Service,
        post: impl Fn(&Value) -> reqwest::RequestBuilder,
    ) -> Result<Vec<Value>, String> {
        let all = service.all_scopes();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for page in 0..100 {
            let mut message = json!({"jsonrpc": "2.0", "id": 10 + page, "method": "tools/list"});
            if let Some(c) = &cursor {
                message["params"] = json!({ "cursor": c });
            }
            let a = self.target.send_as(post(&message), service, Some(&all)).await?;
            a.status(200)?;
            let result = &a.body["result"];
            let page = result["tools"].as_array().ok_or_else(|| format!("no result.tools: {}", short(&a.body)))?;
            tools.extend(page.iter().cloned());
            match result["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return Ok(tools),
            }
        }
        Err("tools/list gave more than 100 pages".into())
    }
}

/// The listed tools are the generated ones, in order.
pub(super) fn same_tools(listed: &[Value], generated: &[Value]) -> Result<(), String> {
    let names =
        |tools: &[Value]| tools.iter().map(|t| t["name"].as_str().unwrap_or("?").to_string()).collect::<Vec<_>>();
    if names(listed) != names(generated) {
        return Err(format!("lists {:?}, the spec has {:?}", names(listed), names(generated)));
    }
    for (got, want) in listed.iter().zip(generated) {
        if let Some((at, g, w)) = first_difference(got, want, String::new()) {
            return Err(format!("{} differs at {at}: served {g}, generated {w}", want["name"]));
        }
    }
    Ok(())
}

/// The first place two JSON values differ: its JSON pointer and both values there (shortened).
pub(super) fn first_difference(got: &Value, want: &Value, at: String) -> Option<(String, String, String)> {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let keys: BTreeSet<&String> = g.keys().chain(w.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (gv, wv) = (g.get(k).unwrap_or(&Value::Null), w.get(k).unwrap_or(&Value::Null));
                let escaped = k.replace('~', "~0").replace('/', "~1");
                if g.contains_key(k) != w.contains_key(k) {
                    let show = |present: bool, v: &Value| if present { short(v) } else { "(absent)".into() };
                    return Some((format!("{at}/{escaped}"), show(g.contains_key(k), gv), show(w.contains_key(k), wv)));
                }
                first_difference(gv, wv, format!("{at}/{escaped}"))
            })
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => {
            g.iter().zip(w).enumerate().find_map(|(i, (gv, wv))| first_difference(gv, wv, format!("{at}/{i}")))
        }
        _ if got == want => None,
        _ => Some((at, short(got), short(want))),
    }
}
