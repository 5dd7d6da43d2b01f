//! A service's MCP catalog beyond its tools, as the generator wrote it
//! (`mcp/<service>.catalog.json`): the resources and templates `resources/list` and
//! `resources/templates/list` answer, the prompts and their messages, and where each completable
//! argument's values come from. Lookups only: reading and calling happen in `reads`.

use std::collections::HashMap;

use rmcp::model::{Prompt, Resource, ResourceTemplate};
use serde::Deserialize;
use serde_json::Value;

/// `_meta` key naming the operation a resource reads (the generator's `OPERATION_META_KEY`).
const OPERATION: &str = "dev.specwright/operationId";
/// `_meta` key naming the scope a prompt needs (the generator's `SCOPE_META_KEY`).
const SCOPE: &str = "dev.specwright/requiredScope";

/// The catalog of one service.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Catalog {
    #[serde(default)]
    pub resources: Vec<Resource>,
    #[serde(default)]
    pub resource_templates: Vec<ResourceTemplate>,
    #[serde(default)]
    pub prompts: Vec<Prompt>,
    #[serde(default)]
    messages: HashMap<String, Vec<MessageDef>>,
    #[serde(default)]
    completions: Vec<Completion>,
    #[serde(default)]
    tool_content: HashMap<String, Vec<ContentDef>>,
    #[serde(default)]
    asks: HashMap<String, Vec<AskDef>>,
}

/// A form a prompt asks its client's user before it is given: its key, message and schema.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct AskDef {
    pub name: String,
    pub message: String,
    pub schema: Value,
}

/// One block of a tool's declared content: which output field it shows, and how.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) struct ContentDef {
    pub text: Option<String>,
    pub image: Option<String>,
    pub audio: Option<String>,
    pub resource: Option<String>,
    pub link: Option<String>,
    pub uri: Option<String>,
    pub mime_type: Option<String>,
}

/// One message of a prompt as the spec writes it: text, an embedded resource or an image, each
/// with `{argument}` placeholders.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct MessageDef {
    #[serde(default)]
    pub role: String,
    pub text: Option<String>,
    pub resource: Option<String>,
    pub image: Option<String>,
}

/// Where one argument's values come from.
#[derive(Debug, Deserialize)]
struct Completion {
    #[serde(rename = "ref")]
    reference: Value,
    argument: String,
    source: Source,
}

/// A listing operation (and the field of its items), or the values themselves.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Source {
    pub operation: Option<String>,
    pub field: Option<String>,
    #[serde(default)]
    pub values: Vec<String>,
}

/// A resource URI resolved: the operation that reads it, the values of its variables, and the
/// media type its descriptor announces.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub operation: String,
    pub values: Vec<(String, String)>,
    pub mime_type: Option<String>,
}

fn operation_of(meta: Option<&rmcp::model::MetaObject>) -> Option<String> {
    meta.and_then(|m| m.get(OPERATION)).and_then(Value::as_str).map(str::to_string)
}

impl Catalog {
    /// Parses the generated catalog (`{}` for a service without one).
    pub fn parse(json: &str) -> anyhow::Result<Catalog> {
        Ok(serde_json::from_str(json)?)
    }

    /// Whether the service has resources to list.
    pub fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.resource_templates.is_empty()
    }

    /// The resource `uri` is: a resource of its own, else the first template it is one of.
    pub fn locate(&self, uri: &str) -> Option<Located> {
        if let Some(r) = self.resources.iter().find(|r| r.uri == uri) {
            let operation = operation_of(r.meta.as_ref())?;
            return Some(Located { operation, values: Vec::new(), mime_type: r.mime_type.clone() });
        }
        self.resource_templates.iter().find_map(|t| {
            let values = support::match_template(&t.uri_template, uri)?;
            Some(Located {
                operation: operation_of(t.meta.as_ref())?,
                values: values.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
                mime_type: t.mime_type.clone(),
            })
        })
    }

    /// The URI (or URI template) of the resource operation `id` reads, if it is one.
    pub fn uri_of(&self, id: &str) -> Option<&str> {
        let resource = self.resources.iter().find(|r| operation_of(r.meta.as_ref()).as_deref() == Some(id));
        let template = || self.resource_templates.iter().find(|t| operation_of(t.meta.as_ref()).as_deref() == Some(id));
        resource.map(|r| r.uri.as_str()).or_else(|| template().map(|t| t.uri_template.as_str()))
    }

    /// The content blocks tool `name` declares, if it does.
    pub fn tool_content(&self, name: &str) -> Option<&[ContentDef]> {
        self.tool_content.get(name).map(Vec::as_slice)
    }

    /// Prompt `name` and its messages.
    pub fn prompt(&self, name: &str) -> Option<(&Prompt, &[MessageDef])> {
        let prompt = self.prompts.iter().find(|p| p.name == name)?;
        Some((prompt, self.messages.get(name).map(Vec::as_slice).unwrap_or_default()))
    }

    /// The forms prompt `name` asks its client's user before it is given.
    pub fn prompt_asks(&self, name: &str) -> &[AskDef] {
        self.asks.get(name).map(Vec::as_slice).unwrap_or_default()
    }

    /// The scope prompt `name` needs.
    pub fn prompt_scope(&self, name: &str) -> Option<&str> {
        let prompt = self.prompts.iter().find(|p| p.name == name)?;
        prompt.meta.as_ref().and_then(|m| m.get(SCOPE)).and_then(Value::as_str)
    }

    /// Where the values of `argument` of the prompt or resource template `reference` names come
    /// from (`{"type": "ref/prompt", "name"}` or `{"type": "ref/resource", "uri"}`).
    pub fn source(&self, kind: &str, key: &str, argument: &str) -> Option<&Source> {
        let field = if kind == "ref/prompt" { "name" } else { "uri" };
        self.completions
            .iter()
            .find(|c| {
                c.argument == argument
                    && c.reference.get("type").and_then(Value::as_str) == Some(kind)
                    && c.reference.get(field).and_then(Value::as_str) == Some(key)
            })
            .map(|c| &c.source)
    }

    /// Whether the prompt or template `reference` names exists (completing an unknown one is an
    /// error, completing an argument without a source is no values).
    pub fn knows(&self, kind: &str, key: &str) -> bool {
        match kind {
            "ref/prompt" => self.prompts.iter().any(|p| p.name == key),
            _ => {
                self.resource_templates.iter().any(|t| t.uri_template == key)
                    || self.resources.iter().any(|r| r.uri == key)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATALOG: &str = r#"{
      "resources": [{"uri": "books://tags", "name": "tags", "mimeType": "application/json",
                     "_meta": {"dev.specwright/operationId": "count_tags"}}],
      "resourceTemplates": [{"uriTemplate": "books://books/{id}", "name": "book",
                     "_meta": {"dev.specwright/operationId": "get_book"}}],
      "prompts": [{"name": "summarize", "_meta": {"dev.specwright/requiredScope": "books:read"}}],
      "messages": {"summarize": [{"role": "user", "resource": "books://books/{id}"}]},
      "completions": [{"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": "id",
                       "source": {"operation": "list_books", "field": "id"}}]
    }"#;

    #[test]
    fn a_uri_is_located_by_its_resource_or_template() {
        let c = Catalog::parse(CATALOG).unwrap();
        let tags = c.locate("books://tags").unwrap();
        assert_eq!((tags.operation.as_str(), tags.mime_type.as_deref()), ("count_tags", Some("application/json")));
        let book = c.locate("books://books/n%201").unwrap();
        assert_eq!(book.operation, "get_book");
        assert_eq!(book.values, [("id".to_string(), "n 1".to_string())]);
        assert!(c.locate("books://books").is_none() && c.locate("other://tags").is_none());
    }

    #[test]
    fn prompts_and_completions_are_found_by_name() {
        let c = Catalog::parse(CATALOG).unwrap();
        assert_eq!(c.prompt("summarize").unwrap().1.len(), 1);
        assert_eq!(c.prompt_scope("summarize"), Some("books:read"));
        assert_eq!(c.source("ref/prompt", "summarize", "id").unwrap().operation.as_deref(), Some("list_books"));
        assert!(c.source("ref/prompt", "summarize", "other").is_none());
        assert!(c.knows("ref/resource", "books://books/{id}") && !c.knows("ref/prompt", "nope"));
        assert!(!Catalog::parse("{}").unwrap().has_resources());
    }
}
