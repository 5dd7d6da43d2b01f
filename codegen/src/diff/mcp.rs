//! The MCP catalog beyond tools, old against new: a resource or prompt a client reads by its URI
//! or name must stay where it was, and what a prompt is given must still be accepted.

use super::*;
use crate::spec::{McpToolDef, PromptDef, TaskSupportDef};

/// A tool kept under its name: a client that could call it must still be answered. Running
/// only as a task refuses a client without the tasks extension; asking for input refuses one that
/// cannot answer. Either way back is compatible (a client of the extension reads a result in the
/// call as well).
pub(super) fn tool(c: &mut Collect, place: &str, old: &McpToolDef, new: &McpToolDef) {
    let name = |t: Option<TaskSupportDef>| match t {
        None => "never",
        Some(TaskSupportDef::Optional) => "optional",
        Some(TaskSupportDef::Required) => "required",
    };
    if old.task != new.task {
        let text = format!("MCP tool `{}`: task support `{}` became `{}`", new.name, name(old.task), name(new.task));
        match new.task {
            Some(TaskSupportDef::Required) => c.push(Kind::Breaking, "tool-task-required", place, text),
            _ => c.push(Kind::Compatible, "tool-task-changed", place, text),
        }
    }
    match (&old.asks_input, &new.asks_input) {
        (None, Some(code)) => c.push(
            Kind::Breaking,
            "tool-asks-input",
            place,
            format!("MCP tool `{}` may now ask its client for input (a REST call answers `{code}`)", new.name),
        ),
        (Some(_), None) => c.push(
            Kind::Compatible,
            "tool-asks-no-input",
            place,
            format!("MCP tool `{}` no longer asks its client for input", new.name),
        ),
        _ => {}
    }
}

/// Resources (by operation: gone, or at another URI), prompts (gone, arguments a client gives
/// now refused or newly required, a higher scope), and what was added.
pub(super) fn catalog(c: &mut Collect, o: &Api, n: &Api) {
    for old in o.operations.iter().filter(|op| op.def.resource.is_some()) {
        let place = format!("operation `{}`", old.id());
        let old_uri = o.resource_uri(old).unwrap_or_default();
        match n.operations.iter().find(|op| op.id() == old.id()).and_then(|op| n.resource_uri(op)) {
            None => c.push(Kind::Breaking, "resource-removed", &place, format!("MCP resource `{old_uri}` was removed")),
            Some(uri) if !support::same_template(&uri, &old_uri) => {
                c.push(Kind::Breaking, "resource-moved", &place, format!("MCP resource `{old_uri}` is now `{uri}`"))
            }
            Some(_) => {}
        }
    }
    for new in n.operations.iter().filter(|op| op.def.resource.is_some()) {
        let was = o.operations.iter().any(|op| op.id() == new.id() && op.def.resource.is_some());
        if !was {
            let uri = n.resource_uri(new).unwrap_or_default();
            c.push(
                Kind::Compatible,
                "resource-added",
                format!("operation `{}`", new.id()),
                format!("MCP resource `{uri}` was added"),
            );
        }
    }
    for old in &o.spec.prompts {
        let place = format!("prompt `{}`", old.name);
        match n.spec.prompts.iter().find(|p| p.name == old.name) {
            None => c.push(Kind::Breaking, "prompt-removed", &place, "was removed"),
            Some(new) => prompt(c, &place, (o, old), (n, new)),
        }
    }
    for new in n.spec.prompts.iter().filter(|p| !o.spec.prompts.iter().any(|old| old.name == p.name)) {
        c.push(Kind::Compatible, "prompt-added", format!("prompt `{}`", new.name), "was added");
    }
}

fn prompt(c: &mut Collect, place: &str, (o, old): (&Api, &PromptDef), (n, new): (&Api, &PromptDef)) {
    for a in &old.arguments {
        if !new.arguments.iter().any(|b| b.name == a.name) {
            c.push(
                Kind::Breaking,
                "prompt-argument-removed",
                place,
                format!("argument `{}` was removed (a client giving it is refused)", a.name),
            );
        }
    }
    for b in &new.arguments {
        match old.arguments.iter().find(|a| a.name == b.name) {
            None if b.required => c.push(
                Kind::Breaking,
                "prompt-argument-required",
                place,
                format!("new argument `{}` is required", b.name),
            ),
            None => {
                c.push(Kind::Compatible, "prompt-argument-added", place, format!("argument `{}` was added", b.name))
            }
            Some(a) if b.required && !a.required => c.push(
                Kind::Breaking,
                "prompt-argument-required",
                place,
                format!("argument `{}` is now required", b.name),
            ),
            Some(_) => {}
        }
    }
    let (os, ns) = (o.prompt_scope(old).unwrap_or_default(), n.prompt_scope(new).unwrap_or_default());
    if os != ns && !n.implies(&os, &ns) {
        c.push(Kind::Breaking, "scope-raised", place, format!("scope `{os}` raised to `{ns}`"));
    }
}
