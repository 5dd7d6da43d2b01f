//! The MCP tool descriptors generated for the `memos` fixture (`mcp/memos.tools.json`).

use serde_json::{Value, json};

const MEMOS: &str = include_str!("fixtures/valid/memos.toml");

fn tools() -> Vec<Value> {
    let files = codegen::generate(&[("memos.toml", MEMOS)]).unwrap_or_else(|e| panic!("expected a valid spec:\n{e}"));
    let file = files
        .iter()
        .find(|f| f.path == "mcp/memos.tools.json")
        .unwrap_or_else(|| panic!("expected mcp/memos.tools.json to be generated"));
    serde_json::from_str(&file.text).unwrap_or_else(|e| panic!("expected the descriptors to be a JSON array: {e}"))
}

fn tool(name: &str) -> Value {
    tools().into_iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("expected a tool named {name}"))
}

#[test]
fn one_tool_per_operation_with_an_mcp_table_in_spec_order() {
    let names: Vec<Value> = tools().iter().map(|t| t["name"].clone()).collect();
    assert_eq!(
        names,
        [json!("memos.list"), json!("memos.create"), json!("memos.put"), json!("memos.titles")],
        "expected exactly the four tools of the spec"
    );
}

#[test]
fn a_body_that_is_a_list_beside_headers_is_the_structured_content() {
    // The REST body, `{"data": [...]}`: the header travels on HTTP only.
    let schema = &tool("memos.titles")["outputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(schema["properties"]["data"]["type"], "array", "{schema}");
    assert_eq!(schema["properties"]["data"]["items"]["type"], "string", "{schema}");
}

#[test]
fn every_description_ends_with_the_required_scope() {
    for (name, scope) in [("memos.list", "memos:read"), ("memos.create", "memos:write")] {
        let description = tool(name)["description"].as_str().unwrap_or_default().to_string();
        assert_eq!(
            description.lines().last(),
            Some(format!("SCOPE: {scope}").as_str()),
            "expected the description of {name} to end with a `SCOPE: {scope}` line, got: {description:?}"
        );
    }
}

#[test]
fn every_input_schema_is_an_object() {
    for t in tools() {
        assert_eq!(t["inputSchema"]["type"], "object", "expected the inputSchema of {} to be an object", t["name"]);
    }
}

#[test]
fn get_operations_are_read_only() {
    assert_eq!(tool("memos.list")["annotations"]["readOnlyHint"], true, "expected memos.list (GET) to be read-only");
    assert_eq!(tool("memos.create")["annotations"]["readOnlyHint"], false, "expected memos.create (POST) to write");
}

#[test]
fn create_input_is_closed_and_requires_the_title() {
    let schema = &tool("memos.create")["inputSchema"];
    assert_eq!(schema["additionalProperties"], false, "expected memos.create to reject unknown arguments");
    assert_eq!(schema["required"], json!(["title"]), "expected `title` to be the only required argument");
}
