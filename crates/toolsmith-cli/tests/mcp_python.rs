//! `toolsmith mcp` driven by its real peer, the official MCP Python SDK's client, which starts
//! the binary as its stdio server: `--tools`, `--rename` and `--prefix` decide what is listed
//! and called, and `--stats` writes what the calls cost models in repairs and errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("mcp_client.py")
}

/// The client's report of serving `toolsmith mcp ARGS` and making `calls` (`[name, arguments]`).
fn drive(python: &Path, args: &[&str], calls: &Value) -> Value {
    drive_in(python, None, args, calls)
}

/// [`drive`], the client's handshake forced to `mode` (`--legacy`) where one is given.
fn drive_in(python: &Path, mode: Option<&str>, args: &[&str], calls: &Value) -> Value {
    let output = Command::new(python)
        .arg(script())
        .args(mode)
        .arg(calls.to_string())
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("mcp")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn only_the_selected_tools_are_listed_and_called_under_their_new_names() {
    let Some(python) = toolsmith_testkit::require("python") else {
        return;
    };
    let args = [
        "--tools",
        "text_*",
        "--tools",
        "github_get_issue",
        "--rename",
        "text_wc=count",
        "--prefix",
        "ts",
    ];
    let calls = json!([
        ["ts_count", {"text": "one two\nthree\n"}],
        ["ts_count", {"txt": "one"}],
        ["text_wc", {"text": "one"}],
        ["ts_github_list_issues", {}],
    ]);
    let report = drive(&python, &args, &calls);
    assert_eq!(
        report["tools"],
        json!([
            "ts_github_get_issue",
            "ts_text_grep",
            "ts_count",
            "ts_text_rg",
            "ts_text_extract_lines",
            "ts_text_filter_lines",
            "ts_text_unique_lines",
            "ts_text_sort_lines",
            "ts_text_summarize_text",
        ])
    );
    let outcomes = &report["calls"];
    assert_eq!(
        outcomes[0],
        json!({"is_error": false, "text": "Lines: 2, Words: 3, Characters: 14"})
    );
    // The model reads the name it called the tool by.
    assert_eq!(outcomes[1]["is_error"], true);
    assert!(
        outcomes[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("Invalid arguments for tool `ts_count`."),
        "{outcomes}"
    );
    // The old names and the tools left out are not served.
    for unserved in [&outcomes[2], &outcomes[3]] {
        assert_eq!(unserved["protocol_error"]["code"], -32602, "{outcomes}");
    }
}

#[test]
fn the_stats_file_holds_a_messy_calls_repairs_and_errors_once_the_client_leaves() {
    let Some(python) = toolsmith_testkit::require("python") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("toolsmith-mcp-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("stats.json");
    let calls = json!([
        ["text_wc", {"text": "a b", "lines_only": "true", "words_only": "yes"}],
        ["text_wc", {"txt": "a b"}],
        ["text_wc", {"text": "a b"}],
        ["text_grep", {"text": "a", "pattern": "("}],
    ]);
    let report = drive(&python, &["--stats", file.to_str().unwrap()], &calls);
    assert_eq!(report["calls"][0]["is_error"], false, "{report}");
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        stats,
        json!({"tools": {
            "text_wc": {
                "calls": 3,
                "succeeded": 2,
                "repaired": 1,
                "repairs": {"bool_from_string": 2},
                "errors": {"invalid_arguments": 1},
                "argument_errors": {"extra_forbidden": 1, "missing": 1},
            },
            "text_grep": {
                "calls": 1,
                "succeeded": 0,
                "repaired": 0,
                "repairs": {},
                "errors": {"failed": 1},
                "argument_errors": {},
            },
        }})
    );
}

/// The official Python SDK at both ends of the gateway: what the Python server's tools ask
/// while they run (a person's form, a model's text) reaches the Python client that made the
/// call, and its answers reach the tools, whichever handshake the client makes.
#[test]
fn a_python_servers_questions_reach_a_python_client_through_the_gateway() {
    let Some(python) = toolsmith_testkit::require("python") else {
        return;
    };
    let upstream = common::fastmcp_server(&python);
    let calls = json!([
        ["rsvp", {"event": "the launch"}],
        ["tagline", {"product": "gears"}],
    ]);
    for mode in [None, Some("--legacy")] {
        let report = drive_in(&python, mode, &["--mcp", &upstream], &calls);
        let outcomes = &report["calls"];
        assert_eq!(
            outcomes[0],
            json!({"is_error": false, "text": "Ada comes to the launch with 2 guests"}),
            "{mode:?}: {report}"
        );
        assert_eq!(
            outcomes[1],
            json!({"is_error": false, "text": "echo: A tagline for gears (by echo-1)"}),
            "{mode:?}: {report}"
        );
        assert!(
            report["asked"]
                .as_array()
                .unwrap()
                .iter()
                .all(|asked| asked == "Are you coming to the launch?"),
            "{mode:?}: {report}"
        );
        assert!(
            report["sampled"]
                .as_array()
                .unwrap()
                .iter()
                .all(|asked| asked == "A tagline for gears"),
            "{mode:?}: {report}"
        );
        for asked in ["asked", "sampled"] {
            assert!(!report[asked].as_array().unwrap().is_empty(), "{report}");
        }
    }
}
