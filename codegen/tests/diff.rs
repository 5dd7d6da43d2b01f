//! The contract diff: one pair of specs per rule (the four-operation example and that example
//! with one edit), each with the exact line the diff prints, and the major-version gate.

use codegen::diff::{Kind, Report, compare};

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

fn report(old: &str, new: &str) -> Report {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}\n{text}"))];
    compare(&load(old), &load(new))
}

/// `TODOS` with `from` replaced by `to` (which must be there).
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the example has no `{from}`");
    text.replacen(from, to, 1)
}

fn lines(old: &str, new: &str) -> Vec<String> {
    report(old, new).changes.iter().map(ToString::to_string).collect()
}

#[test]
fn the_same_spec_has_no_change() {
    assert!(report(TODOS, TODOS).changes.is_empty());
}

#[test]
fn each_rule_with_its_message() {
    let cases: Vec<(&str, String, String, Vec<&str>)> = vec![
        (
            "operation-removed",
            TODOS.into(),
            TODOS.lines().filter(|l| !l.starts_with("delete_todo")).collect::<Vec<_>>().join("\n"),
            vec!["breaking: todos: operation `delete_todo`: was removed [operation-removed]"],
        ),
        (
            "operation-renamed",
            TODOS.into(),
            edit(TODOS, "get_todo = {", "read_todo = {"),
            vec!["breaking: todos: operation `get_todo`: renamed to `read_todo` [operation-renamed]"],
        ),
        (
            "route-changed",
            TODOS.into(),
            edit(
                &edit(TODOS, "\"GET /todos/{id}\"", "\"GET /items/{id}\""),
                "\"DELETE /todos/{id}\"",
                "\"DELETE /items/{id}\"",
            ),
            vec![
                "breaking: todos: operation `get_todo`: GET /todos/{id} became GET /items/{id} [route-changed]",
                "breaking: todos: operation `delete_todo`: DELETE /todos/{id} became DELETE /items/{id} [route-changed]",
            ],
        ),
        (
            "scope-raised",
            TODOS.into(),
            edit(
                TODOS,
                "scope = \"todos:read\", summary = \"Read a to-do\"",
                "scope = \"todos:write\", summary = \"Read a to-do\"",
            ),
            vec!["breaking: todos: operation `get_todo`: scope `todos:read` raised to `todos:write` [scope-raised]"],
        ),
        (
            "scope-lowered",
            TODOS.into(),
            edit(TODOS, "scope = \"todos:write\", summary = \"Delete", "scope = \"todos:read\", summary = \"Delete"),
            vec![
                "compatible: todos: operation `delete_todo`: scope `todos:write` lowered to `todos:read` [scope-lowered]",
            ],
        ),
        (
            "input-field-required",
            TODOS.into(),
            edit(
                TODOS,
                "[models.ListTodos]",
                "fields.note = { type = \"string\", description = \"A note.\" }\n\n[models.ListTodos]",
            ),
            vec![
                "breaking: todos: operation `create_todo` input field `note`: was added as required [input-field-required]",
            ],
        ),
        (
            "input-field-added",
            TODOS.into(),
            edit(
                TODOS,
                "[models.ListTodos]",
                "fields.note = { type = \"string\", optional = true, description = \"A note.\" }\n\n[models.ListTodos]",
            ),
            vec![
                "compatible: todos: operation `create_todo` input field `note`: was added as optional [input-field-added]",
            ],
        ),
        (
            "input-field-removed",
            edit(
                TODOS,
                "[models.TodoRef]",
                "fields.q = { type = \"string\", in = \"query\", optional = true, description = \"Search.\" }\n\n[models.TodoRef]",
            ),
            TODOS.into(),
            vec![
                "breaking: todos: operation `list_todos` input field `q`: was removed (a client sending it is refused) [input-field-removed]",
            ],
        ),
        (
            "input-field-narrowed",
            TODOS.into(),
            edit(TODOS, "min_length = 1, max_length = 200", "min_length = 1, max_length = 100"),
            vec![
                "breaking: todos: operation `create_todo` input field `title`: max_length 200 → 100 [input-field-narrowed]",
            ],
        ),
        (
            "input-field-loosened",
            TODOS.into(),
            edit(TODOS, "min_length = 1, max_length = 200", "min_length = 1, max_length = 300"),
            vec![
                "compatible: todos: operation `create_todo` input field `title`: max_length 200 → 300 [input-field-loosened]",
            ],
        ),
        (
            "output-field-removed",
            TODOS.into(),
            edit(TODOS, "fields.done = { type = \"boolean\", description = \"Whether it is done.\" }\n", ""),
            vec![
                "breaking: todos: operation `list_todos` output field `done`: was removed [output-field-removed]",
                "breaking: todos: operation `create_todo` output field `done`: was removed [output-field-removed]",
                "breaking: todos: operation `get_todo` output field `done`: was removed [output-field-removed]",
            ],
        ),
        (
            "output-field-optional",
            TODOS.into(),
            edit(
                TODOS,
                "fields.title = { type = \"string\", description = \"What to do.\" }",
                "fields.title = { type = \"string\", optional = true, description = \"What to do.\" }",
            ),
            vec![
                "breaking: todos: operation `list_todos` output field `title`: may now be absent [output-field-optional]",
                "breaking: todos: operation `create_todo` output field `title`: may now be absent [output-field-optional]",
                "breaking: todos: operation `get_todo` output field `title`: may now be absent [output-field-optional]",
            ],
        ),
        (
            "output-field-widened",
            TODOS.into(),
            edit(
                TODOS,
                "fields.done = { type = \"boolean\", description",
                "fields.done = { type = \"string\", description",
            ),
            vec![
                "breaking: todos: operation `list_todos` output field `done`: type `boolean` became `string` [output-field-widened]",
                "breaking: todos: operation `create_todo` output field `done`: type `boolean` became `string` [output-field-widened]",
                "breaking: todos: operation `get_todo` output field `done`: type `boolean` became `string` [output-field-widened]",
            ],
        ),
        (
            "error-removed",
            TODOS.into(),
            edit(
                TODOS,
                "output = \"Todo\", errors = [\"not_found\", \"validation\"]",
                "output = \"Todo\", errors = [\"validation\"]",
            ),
            vec!["breaking: todos: operation `get_todo`: error code `not_found` was removed [error-removed]"],
        ),
        (
            "pagination-stricter",
            TODOS.into(),
            format!("{TODOS}\n[pagination]\nmax_per_page = 50\n"),
            vec!["breaking: todos: [pagination]: max_per_page lowered from 100 to 50 [pagination-stricter]"],
        ),
        (
            "success-format-changed",
            TODOS.into(),
            format!("{TODOS}\n[wire]\nsuccess = \"bare\"\n"),
            vec![
                "breaking: todos: [wire] success: success bodies are written bare instead of in the \
                 `{\"data\": …}` envelope [success-format-changed]",
            ],
        ),
        (
            "error-format-changed",
            TODOS.into(),
            format!("{TODOS}\n[wire]\nerrors = \"problem\"\n"),
            vec![
                "breaking: todos: [wire] errors: errors are written as RFC 9457 problem details instead of the \
                 `{\"error\": …}` envelope [error-format-changed]",
            ],
        ),
        (
            "problem-types-changed",
            format!("{TODOS}\n[wire]\nerrors = \"problem\"\n"),
            format!("{TODOS}\n[wire]\nerrors = \"problem\"\nproblem_types = \"https://todos.example/p/\"\n"),
            vec![
                "breaking: todos: [wire] problem_types: problem types changed from about:blank to \
                 `https://todos.example/p/…` [problem-types-changed]",
            ],
        ),
        (
            "security-scheme-changed",
            TODOS.into(),
            edit(TODOS, "[security]\n", "[security]\ntoken_url = \"/auth/token\"\n"),
            vec![
                "breaking: todos: [security]: token_url `/oauth/token` became `/auth/token` [security-scheme-changed]",
            ],
        ),
    ];
    let plans = |per_minute: u32| {
        format!(
            "{TODOS}\n[rate_limits]\ndefault_plan = \"free\"\nplans.free = {{ title = \"Free\", per_minute = {per_minute}, per_day = 1000 }}\n"
        )
    };
    let tool = |name: &str| {
        edit(
            &edit(TODOS, "base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/api/mcp\""),
            "paginated = true,",
            &format!(
                "paginated = true, mcp = {{ name = \"{name}\", title = \"List\", description = \"List to-dos.\" }},"
            ),
        )
    };
    // The same tool, with more in its `mcp` table.
    let tool_with = |more: &str| {
        edit(
            &edit(TODOS, "base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/api/mcp\""),
            "paginated = true,",
            &format!(
                "paginated = true, mcp = {{ name = \"todos.list\", title = \"List\", description = \"List to-dos.\"{more} }},"
            ),
        )
    };
    let more = vec![
        (
            "tool-task-required",
            tool_with(", task = \"optional\""),
            tool_with(", task = \"required\""),
            vec![
                "breaking: todos: operation `list_todos`: MCP tool `todos.list`: task support `optional` became `required` [tool-task-required]",
            ],
        ),
        (
            "tool-task-changed",
            tool_with(""),
            tool_with(", task = \"optional\""),
            vec![
                "compatible: todos: operation `list_todos`: MCP tool `todos.list`: task support `never` became `optional` [tool-task-changed]",
            ],
        ),
        (
            "tool-asks-input",
            tool_with(""),
            tool_with(", asks_input = \"validation\""),
            vec![
                "breaking: todos: operation `list_todos`: MCP tool `todos.list` may now ask its client for input (a REST call answers `validation`) [tool-asks-input]",
            ],
        ),
        (
            "tool-asks-no-input",
            tool_with(", asks_input = \"validation\""),
            tool_with(""),
            vec![
                "compatible: todos: operation `list_todos`: MCP tool `todos.list` no longer asks its client for input [tool-asks-no-input]",
            ],
        ),
        (
            "plan-stricter",
            plans(60),
            plans(30),
            vec!["breaking: todos: rate-limit plan `free`: per_minute lowered from 60 to 30 [plan-stricter]"],
        ),
        (
            "plan-looser",
            plans(60),
            plans(90),
            vec!["compatible: todos: rate-limit plan `free`: per_minute raised from 60 to 90 [plan-looser]"],
        ),
        (
            "tool-renamed",
            tool("todos.list"),
            tool("todos.all"),
            vec![
                "breaking: todos: operation `list_todos`: MCP tool `todos.list` renamed to `todos.all` [tool-renamed]",
            ],
        ),
        (
            "tool-added",
            TODOS.replacen("base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/api/mcp\"", 1),
            tool("todos.list"),
            vec!["compatible: todos: operation `list_todos`: MCP tool `todos.list` was added [tool-added]"],
        ),
    ];
    // A priority in both input and output, to narrow and widen.
    let priority = |values: &str| {
        edit(
            &edit(
                &edit(
                    TODOS,
                    "[models.Todo]",
                    &format!("[enums.Priority]\ndescription = \"How soon.\"\nvalues = [{values}]\n\n[models.Todo]"),
                ),
                "fields.done = { type = \"boolean\", description = \"Whether it is done.\" }",
                "fields.done = { type = \"boolean\", description = \"Whether it is done.\" }\nfields.priority = { type = \"Priority\", description = \"How soon.\" }",
            ),
            "[models.ListTodos]",
            "fields.priority = { type = \"Priority\", optional = true, description = \"How soon.\" }\n\n[models.ListTodos]",
        )
    };
    let (two, three) = (
        "{ name = \"low\", description = \"Later.\" }, { name = \"high\", description = \"Now.\" }",
        "{ name = \"low\", description = \"Later.\" }, { name = \"high\", description = \"Now.\" }, { name = \"urgent\", description = \"At once.\" }",
    );
    let enums = vec![
        (
            "input-field-narrowed (enum)",
            priority(three),
            priority(two),
            vec![
                "breaking: todos: operation `create_todo` input field `priority`: enum value `urgent` is no longer accepted [input-field-narrowed]",
            ],
        ),
        (
            "output-enum-widened and input-enum-widened",
            priority(two),
            priority(three),
            vec![
                "compatible: todos: operation `list_todos` output field `priority`: may now be `urgent` (clients must accept enum values they do not know) [output-enum-widened]",
                "compatible: todos: operation `create_todo` input field `priority`: enum value `urgent` is accepted [input-enum-widened]",
                "compatible: todos: operation `create_todo` output field `priority`: may now be `urgent` (clients must accept enum values they do not know) [output-enum-widened]",
                "compatible: todos: operation `get_todo` output field `priority`: may now be `urgent` (clients must accept enum values they do not know) [output-enum-widened]",
            ],
        ),
        (
            "input-field-moved",
            TODOS.into(),
            edit(
                TODOS,
                "fields.title = { type = \"string\", min_length = 1",
                "fields.title = { type = \"string\", in = \"query\", min_length = 1",
            ),
            vec![
                "breaking: todos: operation `create_todo` input field `title`: moved from body to query [input-field-moved]",
            ],
        ),
        (
            "tool-removed",
            tool("todos.list"),
            TODOS.replacen("base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/api/mcp\"", 1),
            vec!["breaking: todos: operation `list_todos`: MCP tool `todos.list` was removed [tool-removed]"],
        ),
        (
            "input-parameter-renamed",
            TODOS.into(),
            edit(TODOS, "in = \"query\", optional = true", "in = \"query\", name = \"is_done\", optional = true"),
            vec![
                "breaking: todos: operation `list_todos` input field `done`: travels as `is_done`, not `done` [input-parameter-renamed]",
            ],
        ),
        (
            "input-content-changed",
            TODOS.into(),
            edit(
                TODOS,
                "in = \"query\", optional = true",
                "in = \"query\", optional = true, content = \"application/json\"",
            ),
            vec![
                "breaking: todos: operation `list_todos` input field `done`: is written as application/json, not its style [input-content-changed]",
            ],
        ),
        (
            "success-status-ranged",
            TODOS.into(),
            edit(TODOS, "output = \"Todo\", errors", "status_documented = \"range\", output = \"Todo\", errors"),
            vec!["breaking: todos: operation `get_todo`: documents its success as `2XX` only [success-status-ranged]"],
        ),
        (
            "success-status-undocumented",
            edit(TODOS, "input = \"DeleteTodo\",", "input = \"DeleteTodo\", status_documented = \"default\","),
            edit(TODOS, "input = \"DeleteTodo\",", "input = \"DeleteTodo\", status_documented = \"none\","),
            vec![
                "breaking: todos: operation `delete_todo`: no longer documents its success [success-status-undocumented]",
            ],
        ),
        (
            "operation-added",
            TODOS.lines().filter(|l| !l.starts_with("delete_todo")).collect::<Vec<_>>().join("\n"),
            TODOS.into(),
            vec!["compatible: todos: operation `delete_todo`: was added [operation-added]"],
        ),
    ];
    for (rule, old, new, expected) in cases.into_iter().chain(more).chain(enums) {
        assert_eq!(lines(&old, &new), expected, "rule {rule}");
    }
}

#[test]
fn a_breaking_change_needs_a_new_major_version() {
    let new = edit(TODOS, "get_todo = {", "read_todo = {");
    let refused = report(TODOS, &new);
    assert_eq!(refused.refused().len(), 1);
    assert!(refused.to_string().ends_with(
        "1 breaking, 0 compatible; 1 breaking without a new major version: keep the old behaviour, or raise [service] version of `todos` to 2.0.0"
    ), "{refused}");
    let released = edit(&new, "version = \"1.0.0\"", "version = \"2.0.0\"");
    let allowed = report(TODOS, &released);
    assert!(allowed.refused().is_empty(), "{allowed}");
    assert_eq!(allowed.changes.iter().filter(|c| c.kind == Kind::Breaking).count(), 1, "still listed");
}

#[test]
fn services_pagination_and_bodies() {
    let other = TODOS.replacen("name = \"todos\"", "name = \"chores\"", 1);
    let load = |text: &str, file: &str| codegen::load(file, text).unwrap_or_else(|e| panic!("{e}"));
    let both = compare(&[load(TODOS, "todos.toml")], &[load(TODOS, "todos.toml"), load(&other, "chores.toml")]);
    assert_eq!(
        both.changes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["compatible: chores: service: service `chores` was added [service-added]"]
    );
    let gone = compare(&[load(TODOS, "todos.toml"), load(&other, "chores.toml")], &[load(TODOS, "todos.toml")]);
    assert_eq!(
        gone.changes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["breaking: chores: service: service `chores` was removed [service-removed]"]
    );
    assert_eq!(gone.refused().len(), 1, "a removed service has no new major version to carry it");

    assert_eq!(
        lines(&format!("{TODOS}\n[pagination]\nmax_per_page = 50\n"), TODOS),
        ["compatible: todos: [pagination]: max_per_page raised from 50 to 100 [pagination-looser]"]
    );
    let unpaged = edit(TODOS, "output = \"Todo\", paginated = true,", "output = \"Todo\",");
    assert_eq!(
        lines(TODOS, &unpaged),
        ["breaking: todos: operation `list_todos`: no longer answers a page [pagination-removed]"]
    );
    let bodiless = edit(TODOS, "input = \"TodoRef\", output = \"Todo\",", "input = \"TodoRef\",");
    assert_eq!(
        lines(TODOS, &bodiless),
        ["breaking: todos: operation `get_todo`: no longer answers a body [output-removed]"]
    );
    let nullable = edit(
        TODOS,
        "fields.title = { type = \"string\", description = \"What to do.\" }",
        "fields.title = { type = \"string\", nullable = true, description = \"What to do.\" }",
    );
    assert_eq!(
        lines(TODOS, &nullable),
        [
            "breaking: todos: operation `list_todos` output field `title`: may now be null [output-field-optional]",
            "breaking: todos: operation `create_todo` output field `title`: may now be null [output-field-optional]",
            "breaking: todos: operation `get_todo` output field `title`: may now be null [output-field-optional]",
        ]
    );
}

/// The MCP catalog's rules: a resource or prompt clients reach by URI or name stays, and what a
/// prompt is given stays accepted.
#[test]
fn mcp_resources_and_prompts_with_their_rules() {
    let served = edit(TODOS, "base_path = \"/api/v1\"", "base_path = \"/api/v1\"\nmcp_path = \"/api/mcp\"");
    let resource = |uri: &str| {
        let uri = if uri.is_empty() { String::new() } else { format!(", uri = \"{uri}\"") };
        edit(
            &served,
            "summary = \"Read a to-do\",",
            &format!("summary = \"Read a to-do\", resource = {{ name = \"todo\", description = \"A to-do.\"{uri} }},"),
        )
    };
    let prompt = |base: &str, arguments: &str, scope: &str| {
        format!(
            "{base}\n[[prompts]]\nname = \"review\"\ndescription = \"Review a to-do.\"\n{scope}arguments = [{arguments}]\n\
             messages = [{{ text = \"Review it.\" }}]\n"
        )
    };
    let id = "{ name = \"id\", description = \"Its id.\" }";
    let note = "{ name = \"note\", description = \"A note.\", required = false }";
    let cases: Vec<(&str, String, String, Vec<&str>)> = vec![
        (
            "resource-added",
            served.clone(),
            resource(""),
            vec![
                "compatible: todos: operation `get_todo`: MCP resource `todos://todos/{id}` was added [resource-added]",
            ],
        ),
        (
            "resource-removed",
            resource(""),
            served.clone(),
            vec![
                "breaking: todos: operation `get_todo`: MCP resource `todos://todos/{id}` was removed [resource-removed]",
            ],
        ),
        (
            "resource-moved",
            resource(""),
            resource("tasks://{id}"),
            vec![
                "breaking: todos: operation `get_todo`: MCP resource `todos://todos/{id}` is now `tasks://{id}` [resource-moved]",
            ],
        ),
        (
            "prompt-added",
            served.clone(),
            prompt(&served, id, ""),
            vec!["compatible: todos: prompt `review`: was added [prompt-added]"],
        ),
        (
            "prompt-removed",
            prompt(&served, id, ""),
            served.clone(),
            vec!["breaking: todos: prompt `review`: was removed [prompt-removed]"],
        ),
        (
            "prompt-argument-added",
            prompt(&served, id, ""),
            prompt(&served, &format!("{id}, {note}"), ""),
            vec!["compatible: todos: prompt `review`: argument `note` was added [prompt-argument-added]"],
        ),
        (
            "prompt-argument-required",
            prompt(&served, "", ""),
            prompt(&served, id, ""),
            vec!["breaking: todos: prompt `review`: new argument `id` is required [prompt-argument-required]"],
        ),
        (
            "prompt-argument-removed",
            prompt(&served, &format!("{id}, {note}"), ""),
            prompt(&served, id, ""),
            vec![
                "breaking: todos: prompt `review`: argument `note` was removed (a client giving it is refused) [prompt-argument-removed]",
            ],
        ),
        (
            "scope-raised",
            prompt(&served, id, ""),
            prompt(&served, id, "scope = \"todos:write\"\n"),
            vec!["breaking: todos: prompt `review`: scope `todos:read` raised to `todos:write` [scope-raised]"],
        ),
    ];
    for (rule, old, new, expected) in cases {
        assert_eq!(lines(&old, &new), expected, "{rule}");
    }
}
