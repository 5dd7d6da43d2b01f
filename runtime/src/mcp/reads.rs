//! `resources/read`, `prompts/get` and `completion/complete`: each calls the operation the catalog
//! names as the caller (the same decoder, trait method, tenancy, audit and transaction as its
//! REST route), and turns its answer into the protocol's contents.

use base64::Engine;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompletionInfo, ContentBlock, GetPromptResult, JsonObject, PromptMessage, ReadResourceResult, ResourceContents,
    Role,
};
use serde_json::{Value, json};
use support::{Operation, ToolAnswer, ToolFailure};

use super::catalog::{Catalog, ContentDef, MessageDef, Source};
use crate::api::ServiceApi;
use crate::auth::BearerGate;
use crate::caller::Caller;
use crate::inputs::Ask;

/// The largest file a resource read or a prompt embeds (base64 in a JSON-RPC answer).
pub(super) const CONTENT_LIMIT: usize = 16 * 1024 * 1024;

/// What the reads need: the service, its gate and its catalog.
pub(crate) struct Reader<'a> {
    pub api: &'a ServiceApi,
    pub gate: &'a BearerGate,
    pub catalog: &'a Catalog,
}

/// Where a read failed: the URI no resource has, or the operation's failure.
enum Missed {
    Unknown,
    Failed(&'static Operation, ToolFailure),
    TooLarge,
    Scope(&'static str),
}

impl Reader<'_> {
    /// `resources/read` of `uri`.
    pub async fn read(&self, caller: Caller, uri: &str) -> Result<ReadResourceResult, McpError> {
        let contents = self.contents(caller, uri).await.map_err(|m| self.missed(uri, m))?;
        let mut result = ReadResourceResult::new(vec![contents]);
        // The caller's own data, read now: fresh for no time, cacheable by the caller alone.
        result.ttl_ms = Some(0);
        result.cache_scope = Some(rmcp::model::CacheScope::Private);
        Ok(result)
    }

    /// The contents of `uri` read as the caller: its operation's JSON body as text, its file as
    /// text (a text type in UTF-8) or base64.
    async fn contents(&self, caller: Caller, uri: &str) -> Result<ResourceContents, Missed> {
        let located = self.catalog.locate(uri).ok_or(Missed::Unknown)?;
        let op = self.api.operation(&located.operation).ok_or(Missed::Unknown)?;
        // The endpoint checked a read's scope before the protocol layer; a prompt's resource
        // whose URI the caller gave is checked here.
        self.holds(&caller, op).map_err(Missed::Scope)?;
        let arguments = support::path_arguments(op, &located.values).map_err(|f| Missed::Failed(op, f))?;
        let started = std::time::Instant::now();
        let answer = self.api.call_operation(self.gate, caller, op, arguments).await.ok_or(Missed::Unknown)?;
        let outcome = if answer.is_ok() { "ok" } else { "error" };
        crate::metrics::mcp_read(self.api.info().name, "resources/read", op.id, outcome, started.elapsed());
        match answer.map_err(|f| Missed::Failed(op, f))? {
            ToolAnswer::Json(body) => Ok(ResourceContents::TextResourceContents {
                uri: uri.to_string(),
                mime_type: Some(located.mime_type.unwrap_or_else(|| "application/json".into())),
                text: body.to_string(),
                meta: None,
            }),
            ToolAnswer::File(file) => {
                let bytes = axum::body::to_bytes(file.body, CONTENT_LIMIT).await.map_err(|_| Missed::TooLarge)?;
                Ok(file_contents(uri, &file.media_type, &bytes))
            }
        }
    }

    /// The JSON-RPC error of a read that failed: an unknown URI, an operation's `404` and a
    /// refused input are invalid params (−32602, the URI in `data.uri`, as MCP 2026-07-28 has a
    /// missing resource answered), anything else an internal error; with the service's error
    /// body in `data.error`.
    fn missed(&self, uri: &str, missed: Missed) -> McpError {
        match missed {
            Missed::Unknown => McpError::invalid_params(format!("no resource {uri}"), Some(json!({ "uri": uri }))),
            Missed::Scope(scope) => McpError::new(
                rmcp::model::ErrorCode(super::INSUFFICIENT_SCOPE_CODE as i32),
                format!("insufficient_scope: reading {uri} requires {scope}"),
                Some(json!({ "uri": uri, "required": scope })),
            ),
            Missed::TooLarge => McpError::internal_error(
                format!("{uri} is larger than the {CONTENT_LIMIT} bytes a read carries"),
                Some(json!({ "uri": uri })),
            ),
            Missed::Failed(op, failure) => {
                let (code, status) = (failure.code, failure.status);
                let message = failure.problem.message.clone();
                let body = failure.into_body(op.service, None);
                let data = Some(json!({ "uri": uri, "error": body }));
                match status {
                    404 => McpError::invalid_params(format!("no resource {uri}: {message}"), data),
                    400..=499 => McpError::invalid_params(format!("{code}: {message}"), data),
                    _ => McpError::internal_error(format!("{code}: {message}"), data),
                }
            }
        }
    }

    /// `prompts/get` of prompt `name` with `arguments`: its messages with the arguments filled
    /// in, each resource or image read as the caller.
    pub async fn prompt(
        &self,
        caller: Caller,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, McpError> {
        let Some((prompt, messages)) = self.catalog.prompt(name) else {
            return Err(McpError::invalid_params(format!("unknown prompt: {name}"), Some(json!({ "name": name }))));
        };
        let arguments = arguments.unwrap_or_default();
        let mut given = std::collections::HashMap::new();
        for a in prompt.arguments.iter().flatten() {
            match arguments.get(&a.name) {
                Some(Value::String(s)) => {
                    given.insert(a.name.as_str(), s.clone());
                }
                Some(other) => {
                    return Err(McpError::invalid_params(
                        format!("argument {} must be a string, not {other}", a.name),
                        Some(json!({ "argument": a.name })),
                    ));
                }
                None if a.required == Some(true) => {
                    return Err(McpError::invalid_params(
                        format!("argument {} is required", a.name),
                        Some(json!({ "argument": a.name })),
                    ));
                }
                // Left out, it is the empty string.
                None => {
                    given.insert(a.name.as_str(), String::new());
                }
            }
        }
        if let Some(unknown) = arguments.keys().find(|k| !prompt.arguments.iter().flatten().any(|a| &a.name == *k)) {
            return Err(McpError::invalid_params(
                format!("prompt {name} has no argument {unknown}"),
                Some(json!({ "argument": unknown })),
            ));
        }
        let mut given: std::collections::HashMap<String, String> =
            given.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let asks = self.catalog.prompt_asks(name);
        if !asks.is_empty() {
            let forms = asks.iter().map(|a| (a.name.as_str(), Ask::form(&a.message, a.schema.clone()))).collect();
            let Ok(answers) = crate::inputs::answers(forms).await else {
                // Within an input round the platform answers what it asks instead.
                return Err(McpError::invalid_request(
                    format!(
                        "prompt {name} asks its user for input, which only a client of protocol 2026-07-28, or within a session, gives"
                    ),
                    None,
                ));
            };
            for (ask, answer) in asks.iter().zip(answers) {
                let fields = ask.schema.get("properties").and_then(Value::as_object).into_iter().flatten();
                for (field, _) in fields {
                    let text = answer.accepted().and_then(|c| c.get(field)).map(super::scalar_text).unwrap_or_default();
                    given.insert(format!("{}.{field}", ask.name), text);
                }
            }
        }
        let value = |n: &str| given.get(n).cloned();
        let mut out = Vec::with_capacity(messages.len());
        for m in messages {
            out.push(self.message(caller.clone(), m, &value).await?);
        }
        let mut result = GetPromptResult::new(out);
        result.description = prompt.description.clone();
        Ok(result)
    }

    async fn message(
        &self,
        caller: Caller,
        m: &MessageDef,
        value: &impl Fn(&str) -> Option<String>,
    ) -> Result<PromptMessage, McpError> {
        let role = if m.role == "assistant" { Role::Assistant } else { Role::User };
        if let Some(text) = &m.text {
            return Ok(PromptMessage::new(role, ContentBlock::text(fill(text, value))));
        }
        let (uri, image) = match (&m.resource, &m.image) {
            (Some(uri), _) => (filled_uri(uri, value), false),
            (None, Some(uri)) => (filled_uri(uri, value), true),
            (None, None) => return Ok(PromptMessage::new(role, ContentBlock::text(""))),
        };
        let contents = self.contents(caller, &uri).await.map_err(|m| self.missed(&uri, m))?;
        Ok(match (image, contents) {
            (true, ResourceContents::BlobResourceContents { blob, mime_type, .. }) => {
                PromptMessage::new(role, ContentBlock::image(blob, mime_type.unwrap_or_default()))
            }
            (_, contents) => PromptMessage::new(role, ContentBlock::resource(contents)),
        })
    }

    /// `completion/complete`: the values of the argument's source starting with what was typed
    /// (case-insensitive), at most 100, `hasMore` when there were more. A listing the caller's
    /// scope does not reach offers nothing.
    pub async fn complete(
        &self,
        caller: Caller,
        kind: &str,
        key: &str,
        argument: &str,
        typed: &str,
    ) -> Result<CompletionInfo, McpError> {
        if !self.catalog.knows(kind, key) {
            return Err(McpError::invalid_params(
                format!("nothing to complete for {key}"),
                Some(json!({ "ref": key })),
            ));
        }
        let values = match self.catalog.source(kind, key, argument) {
            None => Vec::new(),
            Some(source) => self.values(caller, source).await,
        };
        let typed = typed.to_lowercase();
        let matching: Vec<String> = values.into_iter().filter(|v| v.to_lowercase().starts_with(&typed)).collect();
        let total = matching.len();
        let shown: Vec<String> = matching.into_iter().take(CompletionInfo::MAX_VALUES).collect();
        let more = total > shown.len();
        CompletionInfo::with_pagination(shown, Some(u32::try_from(total).unwrap_or(u32::MAX)), more)
            .map_err(|e| McpError::internal_error(e, None))
    }

    /// Every value a source offers, in its order, each once.
    async fn values(&self, caller: Caller, source: &Source) -> Vec<String> {
        let Some(op) = source.operation.as_deref().and_then(|id| self.api.operation(id)) else {
            return source.values.clone();
        };
        if self.holds(&caller, op).is_err() {
            return Vec::new();
        }
        let started = std::time::Instant::now();
        let arguments = if op.paginated { json!({ "per_page": op.service.max_per_page }) } else { json!({}) };
        let answer = self.api.call_operation(self.gate, caller, op, arguments).await;
        let body = match answer {
            Some(Ok(ToolAnswer::Json(body))) => Some(body),
            _ => None,
        };
        let outcome = if body.is_some() { "ok" } else { "error" };
        crate::metrics::mcp_read(self.api.info().name, "completion/complete", op.id, outcome, started.elapsed());
        let Some(body) = body else { return Vec::new() };
        let items = body.get("items").and_then(Value::as_array);
        let listed: Vec<String> = match (items, &source.field) {
            (Some(items), Some(field)) => {
                items.iter().filter_map(|i| i.get(field)?.as_str().map(str::to_string)).collect()
            }
            (Some(items), None) => items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect(),
            // A map: its keys.
            (None, _) => body.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default(),
        };
        let mut seen = std::collections::HashSet::new();
        listed.into_iter().filter(|v| seen.insert(v.clone())).collect()
    }

    /// Whether `caller` holds the scope a call of `op` needs; the scope, when not.
    fn holds(&self, caller: &Caller, op: &Operation) -> Result<(), &'static str> {
        let scope = super::op_scope(self.api, op);
        let held = self.api.info().satisfies(caller.scopes.iter().map(String::as_str), scope);
        if held { Ok(()) } else { Err(scope) }
    }
}

/// A file a tool answers as its content: an image or audio as such; the resource `uri` is
/// (`resource`, the operation's own) embedded; other text (a text or JSON type in UTF-8) as text;
/// anything else embedded under `uri`, where the REST API serves it.
pub(super) fn file_content(uri: &str, resource: bool, media_type: &str, bytes: &[u8]) -> ContentBlock {
    let b64 = || base64::engine::general_purpose::STANDARD.encode(bytes);
    if media_type.starts_with("image/") {
        return ContentBlock::image(b64(), media_type);
    }
    if media_type.starts_with("audio/") {
        return ContentBlock::audio(b64(), media_type);
    }
    match file_contents(uri, media_type, bytes) {
        ResourceContents::TextResourceContents { text, .. } if !resource => ContentBlock::text(text),
        contents => ContentBlock::resource(contents),
    }
}

/// The content a tool declares, block by block, from the fields of its JSON `output`; a block
/// whose field is absent (or not of its kind) is left out.
pub(super) fn declared_content(blocks: &[ContentDef], output: &Value) -> Vec<ContentBlock> {
    let text_of = |name: &str| output.get(name).and_then(Value::as_str).map(str::to_string);
    let fill = |template: &str| super::fill_from(template, output);
    let mime = |b: &ContentDef| b.mime_type.clone().unwrap_or_default();
    blocks
        .iter()
        .filter_map(|b| {
            if let Some(f) = &b.text {
                return text_of(f).map(ContentBlock::text);
            }
            if let Some(f) = &b.image {
                return text_of(f).map(|data| ContentBlock::image(data, mime(b)));
            }
            if let Some(f) = &b.audio {
                return text_of(f).map(|data| ContentBlock::audio(data, mime(b)));
            }
            if let Some(f) = &b.resource {
                let value = output.get(f).filter(|v| !v.is_null())?;
                let (text, default) = match value {
                    Value::String(s) => (s.clone(), "text/plain"),
                    other => (other.to_string(), "application/json"),
                };
                return Some(ContentBlock::resource(ResourceContents::TextResourceContents {
                    uri: fill(b.uri.as_deref().unwrap_or_default()),
                    mime_type: Some(b.mime_type.clone().unwrap_or_else(|| default.into())),
                    text,
                    meta: None,
                }));
            }
            let uri = fill(b.link.as_deref()?);
            Some(ContentBlock::resource_link(rmcp::model::Resource::new(uri.clone(), uri)))
        })
        .collect()
}

/// A file's bytes as resource contents: text when its type is a text or JSON type and it is
/// UTF-8, else base64.
fn file_contents(uri: &str, media_type: &str, bytes: &[u8]) -> ResourceContents {
    let textual = media_type.starts_with("text/") || support::is_json_media(media_type);
    match std::str::from_utf8(bytes) {
        Ok(text) if textual => ResourceContents::TextResourceContents {
            uri: uri.to_string(),
            mime_type: Some(media_type.to_string()),
            text: text.to_string(),
            meta: None,
        },
        _ => ResourceContents::BlobResourceContents {
            uri: uri.to_string(),
            mime_type: Some(media_type.to_string()),
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        },
    }
}

/// A prompt's resource URI with its arguments: one argument that is the whole URI as given,
/// else each variable percent-encoded into its place.
fn filled_uri(template: &str, value: &impl Fn(&str) -> Option<String>) -> String {
    match support::lone_variable(template) {
        Some(name) => value(name).unwrap_or_default(),
        None => support::expand_template(template, value),
    }
}

/// `text` with each `{name}` of an argument replaced by its value (other braces kept).
fn fill(text: &str, value: &impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let filled = after.find('}').and_then(|close| Some((value(&after[..close])?, close)));
        match filled {
            Some((v, close)) => {
                out.push_str(&v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn placeholders_take_the_arguments_and_other_braces_stay() {
        let v = |n: &str| (n == "tag").then(|| "work".to_string());
        assert_eq!(
            fill("Books labelled {tag}: {\"json\": 1} {other}", &v),
            "Books labelled work: {\"json\": 1} {other}"
        );
    }
}
