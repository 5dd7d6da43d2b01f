//! Webhooks (`[webhooks."type"]`): the generated constructors, the documents' `webhooks` (3.1)
//! and `x-webhooks` (3.0), the loader's checks and the contract diff's rules.

use serde_json::Value;

const TODOS: &str = include_str!("fixtures/prelude/todos.toml");

fn hooked(payload: &str) -> String {
    let hook =
        format!("[webhooks.\"todo.done\"]\nsummary = \"A to-do was done\"\npayload = \"{payload}\"\n\n[operations]");
    TODOS.replacen("[operations]", &hook, 1)
}

#[test]
fn a_webhook_is_a_typed_constructor_and_a_documented_post() {
    let files = codegen::generate(&[("todos.toml", &hooked("Todo"))]).unwrap_or_else(|e| panic!("{e}"));
    let hooks = files
        .iter()
        .find(|f| f.path.ends_with("webhooks.rs"))
        .expect("webhooks.rs")
        .text
        .split_whitespace()
        .collect::<String>();
    assert!(hooks.contains("pubconstEVENT_TYPES:&[&str]=&[\"todo.done\"];"), "{hooks}");
    assert!(hooks.contains("pubfntodo_done(data:&models::Todo)->Event{Event::new(\"todo.done\",data)}"), "{hooks}");
    let module = files.iter().find(|f| f.path.ends_with("todos/mod.rs")).unwrap();
    assert!(module.text.contains("pub mod webhooks;"));
    for (path, key) in [("openapi/todos.json", "webhooks"), ("openapi/todos.3.0.json", "x-webhooks")] {
        let doc: Value = serde_json::from_str(&files.iter().find(|f| f.path == path).unwrap().text).unwrap();
        let post = &doc[key]["todo.done"]["post"];
        assert_eq!(post["operationId"], "webhook_todo_done", "{path}");
        let event = &post["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(event["properties"]["type"]["enum"][0], "todo.done", "{path}");
        assert_eq!(event["properties"]["data"]["$ref"], "#/components/schemas/Todo", "{path}");
        let names: Vec<&str> =
            post["parameters"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
        assert_eq!(names, ["webhook-id", "webhook-timestamp", "webhook-signature"], "{path}");
        assert!(post["responses"]["2XX"].is_object(), "{path}");
    }
    let plain = codegen::generate(&[("todos.toml", TODOS)]).unwrap();
    assert!(!plain.iter().any(|f| f.path.ends_with("webhooks.rs")), "no module without webhooks");
}

#[test]
fn the_loader_checks_an_event_type_and_its_payload() {
    let refused = |spec: String| codegen::load("todos.toml", &spec).expect_err("refused").to_string();
    assert_eq!(
        refused(hooked("Nothing")),
        "todos.toml: webhook `todo.done`: payload model `Nothing` is not declared; fix: declare it under [models]"
    );
    assert_eq!(
        refused(hooked("TodoRef")),
        "todos.toml: webhook `todo.done`: payload model `TodoRef` has fields outside the body; fix: a webhook's \
         payload is a JSON body: use a model of body fields"
    );
    assert_eq!(
        refused(hooked("Todo").replace("\"todo.done\"", "\"Todo Done\"")),
        "todos.toml: webhook `Todo Done`: the event type is not dotted snake_case words; fix: name it like \
         `note.changed`"
    );
}

#[test]
fn the_diff_says_what_a_webhook_change_breaks() {
    let load = |text: &str| vec![codegen::load("todos.toml", text).unwrap_or_else(|e| panic!("{e}"))];
    let lines = |old: &str, new: &str| -> Vec<String> {
        codegen::diff::compare(&load(old), &load(new)).changes.iter().map(ToString::to_string).collect()
    };
    assert_eq!(
        lines(TODOS, &hooked("Todo")),
        ["compatible: todos: webhook `todo.done`: is sent from now on [webhook-added]"]
    );
    assert_eq!(
        lines(&hooked("Todo"), TODOS),
        ["breaking: todos: webhook `todo.done`: is no longer sent [webhook-removed]"]
    );
    let fewer = hooked("Todo").replacen("fields.done =", "# fields.done =", 1);
    let changed = lines(&hooked("Todo"), &fewer);
    assert!(
        changed.iter().any(|l| l.starts_with("breaking:") && l.contains("webhook `todo.done` payload field `done`")),
        "a receiver reads the payload as a client reads a response: {changed:?}"
    );
}
