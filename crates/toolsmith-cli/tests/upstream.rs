//! `--mcp 'CMD ARG...'` on `list`, `schema` and `call`: the tools of the reference MCP server
//! `@modelcontextprotocol/server-everything` beside the linked ones, through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use serde_json::Value;

/// The server's command line, as `--mcp` takes it, when the set-up installed it.
fn everything() -> Option<String> {
    let (node, script) = toolsmith_testkit::require_node_script(
        "@modelcontextprotocol/server-everything",
        "dist/index.js",
    )?;
    Some(format!("'{}' '{}' stdio", node.display(), script.display()))
}

fn toolsmith(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn list_shows_a_servers_tools_beside_the_linked_ones() {
    let Some(server) = everything() else {
        return;
    };
    let listed = toolsmith(&["list", "--json", "--mcp", &server]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let tools: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"get-sum"), "{names:?}");
    assert!(
        names.contains(&"text_wc"),
        "the linked tools stay: {names:?}"
    );
    let sum = tools.iter().find(|t| t["name"] == "get-sum").unwrap();
    assert_eq!(sum["description"], "Returns the sum of two numbers");
}

#[test]
fn call_coerces_a_models_arguments_before_they_leave() {
    let Some(server) = everything() else {
        return;
    };
    let called = toolsmith(&["call", "--mcp", &server, "get-sum", r#"{"a": "2", "b": 3}"#]);
    assert!(called.status.success(), "{}", text(&called.stderr));
    assert_eq!(text(&called.stdout).trim(), "The sum of 2 and 3 is 5.");
    assert!(
        text(&called.stderr).contains("toolsmith: repaired `a`: read a number from text"),
        "{}",
        text(&called.stderr)
    );

    // Refused here, every problem at once, in the words a model reads.
    let refused = toolsmith(&["call", "--mcp", &server, "get-sum", r#"{"a": "two"}"#]);
    assert_eq!(refused.status.code(), Some(1));
    let message = text(&refused.stderr);
    assert!(
        message.contains("`a`: expected a number, got \"two\"")
            && message.contains("`b`: missing required field"),
        "{message}"
    );
}

/// The server gets the environment it is given and a few variables it needs, never the rest
/// of the caller's (where secrets live).
#[test]
fn a_server_sees_no_secret_of_the_callers_environment() {
    let Some(server) = everything() else {
        return;
    };
    let called = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["call", "--mcp", &server, "get-env"])
        .env("TOOLSMITH_TEST_SECRET", "hunter2")
        .output()
        .unwrap();
    assert!(called.status.success(), "{}", text(&called.stderr));
    let shown = text(&called.stdout);
    assert!(shown.contains("PATH"), "{shown}");
    assert!(!shown.contains("TOOLSMITH_TEST_SECRET"), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
}

#[test]
fn schema_declares_a_servers_tools_in_every_dialect() {
    let Some(server) = everything() else {
        return;
    };
    let gemini = toolsmith(&["schema", "--mcp", &server, "--dialect", "gemini", "get-sum"]);
    assert!(gemini.status.success(), "{}", text(&gemini.stderr));
    let declared: Value = serde_json::from_slice(&gemini.stdout).unwrap();
    assert_eq!(declared[0]["name"], "get-sum");
    assert_eq!(declared[0]["parameters"]["required"][0], "a");
    // What each receiver would refuse: nothing, for every tool of the server.
    let server_tools = toolsmith(&["list", "--json", "--mcp", &server]);
    let tools: Vec<Value> = serde_json::from_slice(&server_tools.stdout).unwrap();
    let mut args = vec!["schema", "--lint", "--mcp", &server];
    let names: Vec<String> = tools
        .iter()
        .filter(|t| t["toolset"].is_null() && t["name"].as_str().unwrap().contains('-'))
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    args.extend(names.iter().map(String::as_str));
    let linted = toolsmith(&args);
    assert!(
        linted.status.success(),
        "{}{}",
        text(&linted.stdout),
        text(&linted.stderr)
    );
}

#[test]
fn a_server_that_cannot_be_started_is_a_usage_error_naming_it() {
    let missing = toolsmith(&["list", "--mcp", "toolsmith-no-such-server --flag"]);
    assert_eq!(missing.status.code(), Some(2));
    let message = text(&missing.stderr);
    assert!(
        message.contains("--mcp: cannot start the MCP server `toolsmith-no-such-server`"),
        "{message}"
    );
    let unclosed = toolsmith(&["list", "--mcp", "node 'server.js"]);
    assert_eq!(unclosed.status.code(), Some(2));
    assert!(
        text(&unclosed.stderr).contains("a quote is not closed"),
        "{}",
        text(&unclosed.stderr)
    );
}
