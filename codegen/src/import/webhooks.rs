//! Webhooks: the document's `webhooks` (3.1) or `x-webhooks` (3.0) into the spec's events.

use heck::ToSnakeCase;
use indexmap::IndexMap;
use serde_json::Value;

use crate::spec::Method;

use super::*;

/// The document's webhooks (3.1 `webhooks`, 3.0 `x-webhooks`), each a `POST` to the subscriber
/// with a JSON body: the event's payload model, with a line in the report for each.
pub(super) fn import_webhooks(
    cx: &mut Cx,
    doc: &Value,
    report: &mut Report,
) -> IndexMap<String, crate::spec::WebhookDef> {
    let mut out = IndexMap::new();
    let (key, hooks) = match (doc.get("webhooks"), doc.get("x-webhooks")) {
        (Some(Value::Object(h)), _) => ("webhooks", h.clone()),
        (_, Some(Value::Object(h))) => ("x-webhooks", h.clone()),
        _ => return out,
    };
    for (event, item) in &hooks {
        let at = format!("/{key}/{}", escape(event));
        cx.checkpoint();
        let mut ox = OpCx::new(cx);
        let built = ox.webhook(event, item, &at);
        let mut id = event.clone();
        let outcome = match (built, ox.drops.is_empty()) {
            (Some((name, def)), true) => {
                id = name.clone();
                out.insert(name, def);
                if ox.notes.is_empty() { Outcome::Exact } else { Outcome::Normalised(std::mem::take(&mut ox.notes)) }
            }
            _ => {
                let drops = std::mem::take(&mut ox.drops);
                cx.rollback();
                Outcome::NotImported(drops)
            }
        };
        report.entries.push(Entry { operation: format!("WEBHOOK {event}"), id, outcome });
        // A webhook is a POST to the subscriber: another method of it is its own line.
        for method in Method::ALL.iter().filter(|m| **m != Method::Post) {
            let lower = method.as_str().to_ascii_lowercase();
            if item.get(&lower).is_some() {
                report.entries.push(Entry {
                    operation: format!("WEBHOOK {event} {}", method.as_str()),
                    id: event.clone(),
                    outcome: Outcome::NotImported(vec![(
                        format!("a webhook sent as {} (a webhook is a POST)", method.as_str()),
                        format!("{at}/{lower}"),
                    )]),
                });
            }
        }
    }
    out
}

impl OpCx<'_, '_> {
    /// One webhook: its event type (dotted snake_case) and its definition.
    pub(super) fn webhook(&mut self, event: &str, item: &Value, at: &str) -> Option<(String, crate::spec::WebhookDef)> {
        let post = item.get("post")?;
        let at = format!("{at}/post");
        let name = event.split('.').map(|w| w.to_snake_case()).collect::<Vec<_>>().join(".");
        if name.split('.').any(str::is_empty) {
            self.drop(format!("the event type `{event}`"), &at);
            return None;
        }
        if name != event {
            self.notes.push(format!("the event type `{event}` is `{name}` (dotted snake_case)"));
        }
        let Some(body) = post.get("requestBody").and_then(|b| self.cx.resolve(b).ok()).cloned() else {
            self.drop("a webhook without a body", &at);
            return None;
        };
        let content = body.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        let Some((media, c)) = content.iter().find(|(m, _)| support::is_json_media(m)) else {
            self.drop("a webhook body that is not JSON", &format!("{at}/requestBody"));
            return None;
        };
        let mut sat = format!("{at}/requestBody/content/{}/schema", escape(media));
        let schema = self.cx.resolve(c.get("schema").unwrap_or(&Value::Null)).cloned().unwrap_or(Value::Null);
        // Specwright sends `{type, timestamp, data}` (Standard Webhooks): the payload is `data`.
        let standard =
            ["type", "timestamp", "data"].iter().all(|k| schema.pointer(&format!("/properties/{k}")).is_some());
        let data = if standard {
            sat.push_str("/properties/data");
            schema.pointer("/properties/data").cloned().unwrap_or(Value::Null)
        } else {
            self.notes
                .push("the body is the event's `data`, sent as `{type, timestamp, data}` (Standard Webhooks)".into());
            c.get("schema").cloned().unwrap_or(Value::Null)
        };
        let typed = self.typed(&data, &format!("{name}_payload").replace('.', "_"), &sat)?;
        if !self.cx.models.contains_key(&typed.ty) {
            self.drop("a webhook payload that is not an object schema", &sat);
            return None;
        }
        let text = |k: &str| post.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let tags = post
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let summary = if text("summary").is_empty() { format!("The event `{name}`.") } else { text("summary") };
        Some((name, crate::spec::WebhookDef { summary, description: text("description"), payload: typed.ty, tags }))
    }
}
