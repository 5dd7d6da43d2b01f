//! MCP beyond tools: the resources `GET` operations read, completion sources, and prompts.
//! Each is checked against the operations it names, so what the runtime serves from the
//! generated catalog always reaches an operation that can answer it.

use std::collections::BTreeSet;

use support::Location;

use super::{Collector, Place};
use crate::ir::{Api, Operation, Ty};
use crate::spec::{CompletionDef, PromptDef};

/// Every check of the service's resources, completions and prompts.
pub(super) fn check_mcp(c: &mut Collector, api: &Api) {
    let has_resources = api.operations.iter().any(|o| o.def.resource.is_some());
    if (has_resources || !api.spec.prompts.is_empty()) && api.spec.service.mcp_path.is_none() {
        c.push(
            "[service] mcp_path",
            "resources and prompts are served at the MCP endpoint, but mcp_path is not set",
            "set mcp_path (`/mcp`), or remove them",
        );
    }
    for op in api.operations.iter().filter(|o| o.def.mcp.as_ref().is_some_and(|t| !t.content.is_empty())) {
        check_tool_content(c, api, op);
    }
    for op in api.operations.iter() {
        let Some(code) = op.def.mcp.as_ref().and_then(|t| t.asks_input.as_ref()) else { continue };
        if !op.def.errors.contains(code) {
            c.push(
                Place::Operation(op.id().to_string()),
                format!("`mcp.asks_input` names `{code}`, which the operation does not declare"),
                "list it in `errors`: a REST call, which cannot answer the input requests, fails with it",
            );
        }
    }
    let mut names = BTreeSet::new();
    let mut uris: Vec<String> = Vec::new();
    for op in api.operations.iter().filter(|o| o.def.resource.is_some()) {
        check_resource(c, api, op, &mut names, &mut uris);
    }
    let mut prompts = BTreeSet::new();
    for prompt in &api.spec.prompts {
        let place = Place::Other(format!("prompt `{}`", prompt.name));
        if !is_mcp_name(&prompt.name) {
            c.push(&place, "a prompt's name is 1–64 characters of [A-Za-z0-9_.-]", "rename the prompt");
        }
        if !prompts.insert(prompt.name.as_str()) {
            c.push(&place, "the prompt is declared twice", "give each prompt a unique name");
        }
        check_prompt(c, api, &place, prompt);
    }
}

/// Whether `name` may name a tool, resource, prompt or argument: 1–64 characters of
/// `[A-Za-z0-9_.-]`.
pub(super) fn is_mcp_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.chars().all(|ch| ch.is_ascii_alphanumeric() || "_.-".contains(ch))
}

fn check_resource(c: &mut Collector, api: &Api, op: &Operation, names: &mut BTreeSet<String>, uris: &mut Vec<String>) {
    let Some(resource) = &op.def.resource else { return };
    let place = Place::Operation(op.id().to_string());
    let fix = "remove `resource`";
    if op.method() != support::Method::Get {
        c.push(&place, "only a `GET` operation reads a resource", fix);
    }
    if op.def.stream.is_some() || (300..400).contains(&op.status) {
        c.push(&place, "a resource is read once, as one body: a stream or a redirect cannot be", fix);
    }
    if op.def.output.is_none() && !op.file_output && op.value_output.is_none() {
        c.push(&place, "the operation answers no body to read", fix);
    }
    if let Some(input) = api.input(op) {
        for f in &input.fields {
            let wanted = f.required() && f.def.default.is_none() && !f.injected;
            if f.location() != Location::Path && (wanted || matches!(f.location(), Location::Body | Location::Payload))
            {
                c.push(
                    &place,
                    format!(
                        "input field `{}` is neither a path parameter nor optional: a resource URI gives only the path",
                        f.name
                    ),
                    "make the field optional (or give it a default), or remove `resource`",
                );
            }
        }
    }
    if !is_mcp_name(&resource.name) {
        c.push(
            &place,
            format!("resource name `{}` is not 1–64 characters of [A-Za-z0-9_.-]", resource.name),
            "rename it",
        );
    }
    if !names.insert(resource.name.clone()) {
        c.push(&place, format!("resource `{}` is declared twice", resource.name), "give each resource a unique name");
    }
    let Some(uri) = api.resource_uri(op) else { return };
    let scheme = uri.split_once(':').map(|(s, _)| s).unwrap_or_default();
    let scheme_ok = scheme.starts_with(|ch: char| ch.is_ascii_alphabetic())
        && scheme.chars().all(|ch| ch.is_ascii_alphanumeric() || "+.-".contains(ch));
    if !scheme_ok {
        c.push(
            &place,
            format!("resource URI `{uri}` has no scheme (RFC 3986: `notes://notes/{{id}}`)"),
            "give `uri` a scheme",
        );
    }
    let vars: BTreeSet<&str> = support::template_variables(&uri).into_iter().collect();
    let params: BTreeSet<String> = crate::ir::path_params(&op.def.path).into_iter().collect();
    if vars.iter().map(|v| v.to_string()).collect::<BTreeSet<_>>() != params {
        c.push(
            &place,
            format!("resource URI `{uri}` has the variables {vars:?}, the path the parameters {params:?}"),
            "name each path parameter once in the URI, as `{name}`",
        );
    }
    if let Some(other) = uris.iter().find(|u| support::same_template(u, &uri)) {
        c.push(&place, format!("resource URI `{uri}` is also `{other}`'s"), "give each resource a URI of its own");
    }
    for (var, source) in &resource.complete {
        if !vars.contains(var.as_str()) {
            c.push(
                &place,
                format!("`complete` names `{var}`, which is no variable of the URI"),
                "complete a URI variable",
            );
        }
        check_completion(c, api, &place, source);
    }
    uris.push(uri.clone());
}

/// A tool's declared content reads fields of its JSON output: each block names one, of a type it
/// can be, and the URIs it fills name fields too.
fn check_tool_content(c: &mut Collector, api: &Api, op: &Operation) {
    let place = Place::Operation(op.id().to_string());
    let Some(tool) = &op.def.mcp else { return };
    let model = match (&op.def.output, op.list_output, op.def.paginated) {
        (Some(m), false, false) => api.models.get(m),
        _ => None,
    };
    let Some(model) = model else {
        c.push(
            &place,
            "a tool's `content` reads the fields of an output model, and this operation answers none",
            "remove `content`",
        );
        return;
    };
    let field = |name: &str| model.fields.iter().find(|f| f.wire() == name);
    for (i, block) in tool.content.iter().enumerate() {
        let at = format!("content block {}", i + 1);
        let named = [&block.text, &block.image, &block.audio, &block.resource, &block.link];
        if named.iter().filter(|n| n.is_some()).count() != 1 {
            c.push(
                &place,
                format!("{at} gives not exactly one of `text`, `image`, `audio`, `resource` and `link`"),
                "keep one",
            );
            continue;
        }
        for (name, kind) in [(&block.text, "text"), (&block.image, "image"), (&block.audio, "audio")] {
            let Some(name) = name else { continue };
            if !field(name).is_some_and(|f| f.ty == Ty::String) {
                c.push(
                    &place,
                    format!("{at}: `{name}` is no string field of `{}`", model.name),
                    format!("name a string field for `{kind}`"),
                );
            }
        }
        if let Some(name) = &block.resource
            && field(name).is_none()
        {
            c.push(&place, format!("{at}: `{name}` is no field of `{}`", model.name), "name a field of the output");
        }
        let media = |prefix: &str| block.mime_type.as_deref().is_some_and(|m| m.starts_with(prefix));
        if (block.image.is_some() && !media("image/")) || (block.audio.is_some() && !media("audio/")) {
            c.push(
                &place,
                format!("{at} needs the `mime_type` of its image or audio (`image/png`)"),
                "give `mime_type`",
            );
        }
        if block.resource.is_some() != block.uri.is_some() {
            c.push(
                &place,
                format!("{at}: `uri` goes with `resource`, and a resource needs one"),
                "give both, or neither",
            );
        }
        for uri in [&block.uri, &block.link].into_iter().flatten() {
            for name in support::template_variables(uri) {
                if field(name).is_none() {
                    c.push(
                        &place,
                        format!("{at}: `{{{name}}}` in `{uri}` is no field of `{}`", model.name),
                        "name fields of the output",
                    );
                }
            }
        }
    }
}

/// A completion source names one of: a listing operation (and the field of its items), an enum,
/// or values.
fn check_completion(c: &mut Collector, api: &Api, place: &Place, source: &CompletionDef) {
    let given = [source.operation.is_some(), source.enum_name.is_some(), !source.values.is_empty()];
    if given.iter().filter(|g| **g).count() != 1 {
        c.push(place, "a completion names exactly one of `operation`, `enum` and `values`", "keep one");
        return;
    }
    if source.field.is_some() && source.operation.is_none() {
        c.push(
            place,
            "a completion's `field` is a field of an operation's items",
            "remove `field`, or name `operation`",
        );
    }
    if let Some(name) = &source.enum_name
        && !api.spec.enums.contains_key(name)
    {
        c.push(place, format!("completion enum `{name}` is not declared"), "name an enum of `[enums]`");
    }
    let Some(id) = &source.operation else { return };
    let Some(op) = api.operations.iter().find(|o| o.id() == id) else {
        c.push(place, format!("completion operation `{id}` is not declared"), "name an operation of this spec");
        return;
    };
    let takes_input =
        api.input(op).is_some_and(|m| m.fields.iter().any(|f| f.required() && f.def.default.is_none() && !f.injected));
    if op.method() != support::Method::Get || takes_input {
        c.push(
            place,
            format!("completion operation `{id}` is not a `GET` that needs no input"),
            "name a listing operation",
        );
        return;
    }
    let item_model = match (&op.value_output, &op.def.output) {
        (Some(Ty::Map(_)), _) | (Some(Ty::List(_)), _) if source.field.is_none() => match &op.value_output {
            Some(Ty::List(inner)) if !matches!(**inner, Ty::String | Ty::Enum(_)) => {
                c.push(place, format!("completion operation `{id}` lists values that are not strings"), "name another");
                return;
            }
            _ => return,
        },
        (None, Some(model)) if op.list_output || op.def.paginated => model,
        _ => {
            c.push(
                place,
                format!("completion operation `{id}` answers neither a map, a list of strings nor a list of models with `field`"),
                "name a listing operation (with `field` for a list of models)",
            );
            return;
        }
    };
    let Some(field) = &source.field else {
        c.push(place, format!("completion operation `{id}` lists models"), "name the `field` of each item to offer");
        return;
    };
    let found = api.models.get(item_model).and_then(|m| m.fields.iter().find(|f| f.wire() == field));
    if !found.is_some_and(|f| matches!(f.ty, Ty::String | Ty::Enum(_))) {
        c.push(
            place,
            format!("`{field}` is no string field of `{item_model}`"),
            "name a string field of the listed model",
        );
    }
}

fn check_prompt(c: &mut Collector, api: &Api, place: &Place, prompt: &PromptDef) {
    if let Some(scope) = &prompt.scope
        && !api.spec.security.scopes.iter().any(|s| &s.name == scope)
    {
        c.push(place, format!("scope `{scope}` is not in the scope catalog"), "name a scope of `[security]`");
    }
    let mut arguments = BTreeSet::new();
    for a in &prompt.arguments {
        if !is_mcp_name(&a.name) || !arguments.insert(a.name.as_str()) {
            c.push(
                place,
                format!("argument `{}` is named twice or is not 1–64 characters of [A-Za-z0-9_.-]", a.name),
                "rename it",
            );
        }
        if let Some(source) = &a.complete {
            check_completion(c, api, place, source);
        }
    }
    let mut asked = BTreeSet::new();
    for ask in &prompt.asks {
        if !is_mcp_name(&ask.name) || !asked.insert(ask.name.as_str()) {
            c.push(place, format!("ask `{}` is no unique name of [A-Za-z0-9_.-]", ask.name), "rename the ask");
        }
        if ask.fields.is_empty() || ask.fields.iter().any(|f| !is_mcp_name(&f.name)) {
            c.push(place, format!("ask `{}` needs fields named with [A-Za-z0-9_.-]", ask.name), "name its fields");
        }
    }
    if prompt.messages.is_empty() {
        c.push(place, "the prompt has no messages", "add a `[[prompts.messages]]`");
    }
    for (i, m) in prompt.messages.iter().enumerate() {
        let at = format!("message {}", i + 1);
        let parts = [&m.text, &m.resource, &m.image];
        if parts.iter().filter(|p| p.is_some()).count() != 1 {
            c.push(place, format!("{at} gives not exactly one of `text`, `resource` and `image`"), "keep one");
        }
        for text in parts.into_iter().flatten() {
            for name in placeholders(text) {
                let answered = name.split_once('.').is_some_and(|(ask, field)| {
                    prompt.asks.iter().any(|a| a.name == ask && a.fields.iter().any(|f| f.name == field))
                });
                if !arguments.contains(name) && !answered {
                    c.push(
                        place,
                        format!("{at} names `{{{name}}}`, which is no argument nor field of an ask"),
                        "declare the argument, or fix the name",
                    );
                }
            }
        }
        for (uri, image) in [(&m.resource, false), (&m.image, true)] {
            // A URI that is one argument is the caller's to give: read (and its scope checked)
            // when the prompt is got.
            let Some(uri) = uri.as_ref().filter(|u| !support::lone_variable(u).is_some_and(is_mcp_name)) else {
                continue;
            };
            match api.resource_of(uri) {
                None => c.push(
                    place,
                    format!("{at} reads `{uri}`, which is no resource of this service"),
                    "name a resource's URI",
                ),
                Some((op, _)) if image => {
                    let images = op.file_output
                        && !op.def.media_types.is_empty()
                        && op.def.media_types.iter().all(|t| t.starts_with("image/"));
                    if !images {
                        c.push(
                            place,
                            format!("{at} reads `{uri}` as an image, but its operation answers no `image/*` file"),
                            "embed it as `resource`",
                        );
                    }
                }
                Some(_) => {}
            }
        }
    }
    if api.prompt_scope(prompt).is_none() {
        c.push(
            place,
            "the resources it reads need scopes none of which includes the others",
            "state the prompt's `scope`",
        );
    }
}

/// The argument names a prompt's text or URI refers to: each `{name}` of a name's characters
/// (other braces, as in JSON, are text).
pub(crate) fn placeholders(text: &str) -> impl Iterator<Item = &str> {
    support::template_variables(text).into_iter().filter(|n| is_mcp_name(n))
}
