//! The 2026-07-28 MCP wire for the tests that speak it: a request's `_meta` and routing headers,
//! and its answer read from a JSON body or an event stream.

#![allow(dead_code, reason = "each test binary uses a different subset")]

/// The `_meta` of a 2026-07-28 MCP request (the stateless revision): its protocol version, a
/// client's name, and the client `capabilities` it declares.
pub fn stateless_meta(capabilities: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 MCP request `id` of `method` for `name` (its `Mcp-Name`) with `params` (their
/// `_meta` included), to the endpoint at `url` as the holder of `token`.
pub fn stateless_request(
    url: &str,
    token: &str,
    method: &str,
    name: &str,
    id: u64,
    params: serde_json::Value,
) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// The answer of an MCP request: its JSON body, or the last message of its event stream.
pub async fn last_message(resp: reqwest::Response) -> serde_json::Value {
    let text = resp.text().await.expect("a body");
    let streamed =
        text.lines().rev().filter_map(|l| l.strip_prefix("data:")).find_map(|d| serde_json::from_str(d.trim()).ok());
    streamed.unwrap_or_else(|| serde_json::from_str(&text).expect("a JSON-RPC message"))
}

/// The messages of an event stream that stays open (a session's stream, a listen stream), read
/// one at a time as they arrive.
pub struct Events {
    resp: reqwest::Response,
    buffer: String,
}

impl Events {
    /// The messages `resp` streams.
    pub fn of(resp: reqwest::Response) -> Events {
        Events { resp, buffer: String::new() }
    }

    /// The next message; panics when none comes within ten seconds or the stream ends.
    pub async fn next(&mut self) -> serde_json::Value {
        self.within(std::time::Duration::from_secs(10)).await.expect("a message within 10 s")
    }

    /// The next message, or `None` when none comes within `wait`; panics when the stream ends.
    pub async fn within(&mut self, wait: std::time::Duration) -> Option<serde_json::Value> {
        let until = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.buffer.find('\n') {
                let line: String = self.buffer.drain(..=end).collect();
                let Some(data) = line.trim().strip_prefix("data:") else { continue };
                if let Ok(message) = serde_json::from_str(data.trim()) {
                    return Some(message);
                }
            }
            let Ok(chunk) = tokio::time::timeout_at(until, self.resp.chunk()).await else { return None };
            let chunk = chunk.expect("the stream reads").expect("the stream stays open");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
