//! The README's command lines print what the README shows: the `toolsmith coerce` examples, the
//! session of `list` and `call` with `--tools`, `--rename` and `--prefix`, and the statistics
//! file `toolsmith mcp --stats` writes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use common::{block_after, readme, repo_root, words};

/// The text between the first occurrence of `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).expect("start marker") + start.len();
    let len = text[from..].find(end).expect("end marker");
    &text[from..from + len]
}

#[test]
fn readme_coerce_example_prints_what_the_readme_shows() {
    let readme = readme();
    let command = between(&readme, "cargo run -p toolsmith-cli -- coerce", "\n\n");
    let schema_path = between(command, "--schema ", " ");
    let arguments = between(command, "'", "'");
    let shown: Value = serde_json::from_str(
        between(&readme, "<!-- readme-example-output", "\n```\n")
            .split_once("```json\n")
            .expect("a json block after the marker")
            .1,
    )
    .expect("the README's output block is JSON");

    let output = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .current_dir(repo_root())
        .args(["coerce", "--schema", schema_path, arguments])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed, shown);
}

#[test]
fn readme_cli_session_prints_what_the_readme_shows() {
    let readme = readme();
    let session = block_after(&readme, "readme-cli-session", "console");
    let mut commands = 0;
    for step in session.split("\n$ ") {
        let (command, shown) = step.split_once('\n').unwrap();
        let args = words(command.trim_start_matches("$ "));
        assert_eq!(args[0], "toolsmith", "{command}");
        let output = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(&args[1..])
            .output()
            .unwrap();
        let printed = [output.stdout, output.stderr].concat();
        assert_eq!(
            String::from_utf8(printed).unwrap().trim_end(),
            shown,
            "{command}"
        );
        commands += 1;
    }
    assert_eq!(commands, 3);
}

/// The validator backstop's example: run from the repository's root, as the README's paths
/// say, each command prints exactly what the README shows (standard output, then error).
#[test]
fn readme_backstop_example_prints_what_the_readme_shows() {
    let readme = readme();
    let session = block_after(&readme, "readme-backstop", "console");
    let mut commands = 0;
    for step in session.split("\n$ ") {
        let (command, shown) = step.split_once('\n').unwrap();
        let args = words(command.trim_start_matches("$ "));
        assert_eq!(args[..2], ["toolsmith", "coerce"], "{command}");
        let output = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .current_dir(repo_root())
            .args(&args[1..])
            .output()
            .unwrap();
        let printed = [output.stdout, output.stderr].concat();
        assert_eq!(
            String::from_utf8(printed).unwrap().trim_end(),
            shown,
            "{command}"
        );
        commands += 1;
    }
    assert_eq!(commands, 2);
}

#[test]
fn readme_mcp_stats_command_writes_the_file_the_readme_shows() {
    let readme = readme();
    let command = block_after(&readme, "readme-mcp-stats", "sh");
    let shown: Value = serde_json::from_str(between(
        &readme[readme.find("<!-- readme-mcp-stats").unwrap()..],
        "```json\n",
        "\n```",
    ))
    .unwrap();
    let args = words(command);
    assert_eq!(args[..2], ["toolsmith", "mcp"], "{command}");
    // In a directory of its own: the command writes `stats.json` where it runs.
    let dir = std::env::temp_dir().join(format!("toolsmith-readme-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .current_dir(&dir)
        .args(&args[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    let call = |id: i64, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "text_wc", "arguments": arguments}})
    };
    let lines = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(1, json!({"text": "a b", "lines_only": "true"})),
        call(2, json!({"txt": "a b"})),
    ];
    for line in &lines {
        writeln!(stdin, "{line}").unwrap();
    }
    // The three answers, then the client leaves.
    for _ in 0..3 {
        stdout.next().unwrap().unwrap();
    }
    drop(stdin);
    assert!(server.wait().unwrap().success());
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(written, shown);
}

/// The README's `mcpServers` file reads as the servers it describes, through the binary's own
/// `--mcp-config` (a server that cannot start names itself: the file was read).
#[test]
fn readme_mcp_config_file_is_read_as_written() {
    let readme = readme();
    let config = block_after(&readme, "readme-mcp-config", "json");
    let servers = toolsmith_mcp::parse_config(config, |name| {
        (name == "SEARCH_TOKEN").then(|| "t0ken".to_owned())
    })
    .unwrap();
    let names: Vec<&str> = servers.iter().map(|s| s.name()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for name in ["everything", "files", "search"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let search = servers.iter().find(|s| s.name() == "search").unwrap();
    let toolsmith_mcp::RemoteServer::Http(search) = search else {
        panic!("{search:?}");
    };
    assert_eq!(search.url, "https://search.example.com/mcp");
    assert_eq!(
        search.headers,
        [("Authorization".to_owned(), "Bearer t0ken".to_owned())]
    );

    // Without the variable it names, the binary refuses the file, naming the variable.
    let dir = std::env::temp_dir().join(format!("toolsmith-readme-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("servers.json");
    std::fs::write(&file, config).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["list", "--mcp-config", file.to_str().unwrap()])
        .env_remove("SEARCH_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SEARCH_TOKEN"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
