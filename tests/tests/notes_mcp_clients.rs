//! Official MCP clients against the notes binary's resources, prompts, completions and its export
//! as a task: the MCP Inspector's CLI and the TypeScript client 2.x in both protocol eras. Each is skipped (named by
//! `skipped_suites`) where its tool is not installed, and required under CI.

mod notes_server;

use std::process::Command;

use notes_server::{Server, mcp};
use serde_json::{Value, json};

/// The note a client reads: created over MCP with the label `work`.
async fn with_a_note(s: &Server, token: &str) -> String {
    let create = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "notes.create", "arguments": {"title": "For the clients", "tags": ["work"]}}});
    let created: Value = mcp(s, token, create).await.json().await.unwrap();
    created["result"]["structuredContent"]["id"].as_str().unwrap().to_string()
}

async fn run(program: String, args: Vec<String>, env: Vec<(&'static str, String)>) -> (bool, String) {
    tokio::task::spawn_blocking(move || {
        let out = Command::new(program).args(args).envs(env).output().expect("run client");
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn the_mcp_inspector_cli_lists_and_reads_resources_gets_prompts_and_runs_a_task() {
    let Some(inspector) = tests::tool("SPECWRIGHT_MCP_INSPECTOR") else {
        return;
    };
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let id = with_a_note(&s, &token).await;
    let call = |method: &str, more: &[&str]| {
        let mut args = vec![
            "--cli".to_string(),
            s.url("/api/mcp"),
            "--transport".into(),
            "http".into(),
            "--method".into(),
            method.into(),
            "--header".into(),
            format!("Authorization: Bearer {token}"),
        ];
        args.extend(more.iter().map(|a| a.to_string()));
        run(inspector.clone(), args, Vec::new())
    };
    let (ok, out) = call("resources/list", &[]).await;
    assert!(ok && out.contains("notes://tags") && out.contains("SCOPE: notes:read"), "resources/list:\n{out}");
    let (ok, out) = call("resources/templates/list", &[]).await;
    assert!(ok && out.contains("notes://notes/{id}"), "resources/templates/list:\n{out}");
    let (ok, out) = call("resources/read", &["--uri", &format!("notes://notes/{id}")]).await;
    assert!(ok && out.contains("For the clients"), "resources/read:\n{out}");
    let (ok, out) = call("prompts/list", &[]).await;
    assert!(ok && out.contains("summarize_note") && out.contains("review_label"), "prompts/list:\n{out}");
    let (ok, out) =
        call("prompts/get", &["--prompt-name", "summarize_note", "--prompt-args", &format!("id={id}")]).await;
    assert!(ok && out.contains("For the clients") && out.contains("\"resource\""), "prompts/get:\n{out}");
    // On 2026-07-28 the export is a task the Inspector polls to its end: the export done (a call
    // in the request answers it started, `pending`).
    let (ok, out) = call("tools/call", &["--tool-name", "notes.export", "--protocol-era", "modern"]).await;
    let answer: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("tools/call:\n{out}"));
    assert!(ok && answer["structuredContent"]["state"] == "done", "tools/call as a task:\n{out}");
}

#[tokio::test]
async fn the_typescript_client_reads_resources_gets_prompts_completes_and_runs_a_task_in_both_revisions() {
    let Some(modules) = tests::tool("SPECWRIGHT_MCP_CLIENT_NODE_MODULES") else {
        return;
    };
    let s = Server::start(None).await;
    let token = s.token("acme", "notes:write");
    let id = with_a_note(&s, &token).await;
    let script = xtask::workspace_root().join("tests/mcp_clients/ts_notes.mjs").display().to_string();
    let node = std::env::var("SPECWRIGHT_NODE").unwrap_or_else(|_| "node".into());
    for mode in ["legacy", "auto"] {
        let args = vec![script.clone(), s.url("/api/mcp"), token.clone(), id.clone(), mode.into()];
        let (ok, out) = run(node.clone(), args, vec![("SPECWRIGHT_MCP_CLIENT_NODE_MODULES", modules.clone())]).await;
        assert!(ok, "TypeScript client ({mode}) failed:\n{out}");
        let summary: Value = out
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("no JSON summary in:\n{out}"));
        assert_eq!(
            (summary["title"].as_str(), summary["messages"].as_u64()),
            (Some("For the clients"), Some(2)),
            "{summary}"
        );
        assert_eq!(summary["labels"], json!(["work"]), "{summary}");
        assert_eq!((summary["resources"].as_u64(), summary["templates"].as_u64()), (Some(4), Some(3)), "{summary}");
        // The export ran as a task in the revision's own form to its end; 2025-11-25 lists tasks.
        let (inventory, listed) =
            if mode == "legacy" { ("server-list", json!(true)) } else { ("known-handles", Value::Null) };
        assert_eq!(summary["task"]["status"], "completed", "{summary}");
        assert_eq!(
            (&summary["task"]["inventory"], &summary["task"]["listed"]),
            (&json!(inventory), &listed),
            "{summary}"
        );
    }
}
