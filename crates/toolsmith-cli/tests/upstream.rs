//! `--mcp 'CMD ARG...'` on `list`, `schema` and `call`: the tools of the reference MCP server
//! `@modelcontextprotocol/server-everything` beside the linked ones, through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::{Command, Output};

use serde_json::Value;

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
    let Some(server) = toolsmith_testkit::everything_command() else {
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
    let Some(server) = toolsmith_testkit::everything_command() else {
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
    let Some(server) = toolsmith_testkit::everything_command() else {
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
    let Some(server) = toolsmith_testkit::everything_command() else {
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

#[test]
fn a_server_with_names_taken_has_its_tools_under_its_name() {
    let Some(server) = toolsmith_testkit::everything_command() else {
        return;
    };
    let listed = toolsmith(&["list", "--json", "--mcp", &server, "--mcp", &server]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let tools: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"get-sum") && names.contains(&"node2_get-sum"),
        "{names:?}"
    );
    assert!(!names.contains(&"node2_text_wc"), "{names:?}");
    let prefixed = toolsmith(&["list", "--json", "--mcp", &server, "--mcp-prefix"]);
    let tools: Vec<Value> = serde_json::from_slice(&prefixed.stdout).unwrap();
    assert!(
        tools.iter().any(|t| t["name"] == "node_get-sum"),
        "{tools:?}"
    );
}

/// `toolsmith mcp --mcp ...`: the reference server's tools served again, each call coerced and
/// checked at the gateway (a client sending a model's raw arguments gets them repaired there),
/// and counted by `--stats`.
#[test]
fn the_gateway_coerces_in_front_of_the_server_and_counts_it() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let Some(server) = toolsmith_testkit::everything_command() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("toolsmith-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("stats.json");
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["mcp", "--mcp", &server, "--stats"])
        .arg(&stats)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = gateway.stdin.take().unwrap();
    let mut stdout = BufReader::new(gateway.stdout.take().unwrap());
    let mut exchange = |line: &str| -> Value {
        writeln!(stdin, "{line}").unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"))
    };
    let init = exchange(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert!(init["result"].is_object(), "{init}");
    let listed = exchange(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"get-sum") && names.contains(&"text_wc"),
        "{names:?}"
    );

    let summed = exchange(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":"2","b":"3"}}}"#,
    );
    assert_eq!(summed["result"]["isError"], false, "{summed}");
    assert_eq!(
        summed["result"]["content"][0]["text"],
        "The sum of 2 and 3 is 5."
    );
    assert_eq!(
        summed["result"]["_meta"]["toolsmith/repairs"][0]["path"],
        "/a"
    );

    let refused = exchange(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":"two"}}}"#,
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let message = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid arguments for tool `get-sum`"),
        "{message}"
    );

    drop(stdin);
    let status = gateway.wait().unwrap();
    assert!(status.success(), "{status}");
    let counted: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let sum = &counted["tools"]["get-sum"];
    assert_eq!(sum["calls"], 2, "{counted}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `server-everything` serving streamable HTTP on a free loopback port; killed when dropped.
struct HttpEverything {
    child: std::process::Child,
    port: u16,
}

impl HttpEverything {
    fn start() -> Option<HttpEverything> {
        let (node, script) = toolsmith_testkit::require_node_script(
            "@modelcontextprotocol/server-everything",
            "dist/index.js",
        )?;
        // A port that was free a moment ago (the server takes its port from `PORT` only).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(node)
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // It says on stderr when it listens.
        let stderr = child.stderr.take().unwrap();
        let (said, heard) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let _ = said.send(line);
            }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match heard.recv_timeout(left) {
                Ok(line) if line.contains("listening on port") => break,
                Ok(_) => {}
                Err(error) => panic!("server-everything did not start listening: {error}"),
            }
        }
        Some(HttpEverything { child, port })
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_server_over_streamable_http_is_called_by_its_url() {
    let Some(server) = HttpEverything::start() else {
        return;
    };
    let url = server.url();
    let called = toolsmith(&[
        "call",
        "--mcp-url",
        &url,
        "--mcp-header",
        "X-Trace: cli-test",
        "get-sum",
        r#"{"a": "2", "b": 3}"#,
    ]);
    assert!(called.status.success(), "{}", text(&called.stderr));
    assert_eq!(text(&called.stdout).trim(), "The sum of 2 and 3 is 5.");

    // `--mcp-prefix` names it after its host and port.
    let listed = toolsmith(&["list", "--json", "--mcp-url", &url, "--mcp-prefix"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let tools: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let expected = format!("127001{}_get-sum", server.port);
    assert!(
        tools.iter().any(|t| t["name"] == expected.as_str()),
        "{expected}: {tools:?}"
    );
}

#[test]
fn bad_urls_and_headers_are_usage_errors() {
    for args in [
        &["list", "--mcp-url", "ftp://example.com"][..],
        &["list", "--mcp-header", "X-A: b"][..],
        &[
            "list",
            "--mcp-url",
            "http://127.0.0.1:1/mcp",
            "--mcp-header",
            "no colon",
        ][..],
        &["list", "--mcp-prefix"][..],
    ] {
        let out = toolsmith(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // Nobody listening there: a clear error naming the server, no hang.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = toolsmith(&["list", "--mcp-url", &url]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let message = text(&out.stderr);
    assert!(message.contains(&url), "{message}");
}

#[test]
fn a_config_file_names_servers_as_claude_desktop_writes_them() {
    let (Some(server), Some((node, script))) = (
        HttpEverything::start(),
        toolsmith_testkit::require_node_script(
            "@modelcontextprotocol/server-everything",
            "dist/index.js",
        ),
    ) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("toolsmith-mcp-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    let written = serde_json::json!({"mcpServers": {
        "local": {"command": node, "args": [script, "stdio"]},
        "web": {"type": "http", "url": "http://127.0.0.1:${EVERYTHING_PORT}/mcp",
                "headers": {"Authorization": "Bearer ${EVERYTHING_TOKEN:-none}"}},
        "off": {"command": "no-such-program", "disabled": true}
    }});
    std::fs::write(&config, written.to_string()).unwrap();
    let listed = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["list", "--json", "--mcp-config", config.to_str().unwrap()])
        .env("EVERYTHING_PORT", server.port.to_string())
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let tools: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    // The first server's tools under their names; the second's, which are the same, under
    // its name.
    assert!(names.contains(&"get-sum"), "{names:?}");
    assert!(names.contains(&"web_get-sum"), "{names:?}");
    assert!(names.contains(&"text_wc"), "{names:?}");

    // A variable the file needs and nobody set: a usage error naming file, server and key.
    let listed = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["list", "--mcp-config", config.to_str().unwrap()])
        .env_remove("EVERYTHING_PORT")
        .output()
        .unwrap();
    assert_eq!(listed.status.code(), Some(2));
    let message = text(&listed.stderr);
    assert!(
        message.contains("servers.json")
            && message.contains("`web`")
            && message.contains("EVERYTHING_PORT"),
        "{message}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `toolsmith mcp ARGS` over stdio, its messages read on a thread of their own.
struct StdioGateway {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    heard: std::sync::mpsc::Receiver<Value>,
}

impl StdioGateway {
    fn start(args: &[&str]) -> StdioGateway {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;

        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (lines, heard) = std::sync::mpsc::channel::<Value>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(message) = serde_json::from_str(&line) else {
                    break;
                };
                if lines.send(message).is_err() {
                    break;
                }
            }
        });
        StdioGateway {
            child,
            stdin,
            heard,
        }
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        writeln!(self.stdin.as_mut().unwrap(), "{line}").unwrap();
    }

    /// Every message until one `until` takes (that one last), within a bound.
    fn read_until(&self, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut read = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = self
                .heard
                .recv_timeout(left)
                .expect("the gateway answered in time");
            let done = until(&message);
            read.push(message);
            if done {
                return read;
            }
        }
    }

    /// The next message `what` takes.
    fn wait_for(&self, what: impl Fn(&Value) -> bool) -> Value {
        self.read_until(what).pop().unwrap()
    }

    /// The handshake, as a client makes it.
    fn initialize(&mut self) -> Value {
        self.initialize_with(&serde_json::json!({}))
    }

    /// The handshake of a client declaring `capabilities`.
    fn initialize_with(&mut self, capabilities: &Value) -> Value {
        let request = serde_json::json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "clientInfo": {"name": "t", "version": "1"},
            },
        });
        self.send(&request.to_string());
        let init = self.wait_for(|m| m["id"] == 1);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        init
    }

    /// Closes its stdin and waits for it to exit, which it must do cleanly.
    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
    }
}

/// A gateway follows its server's tools: when the server says they changed, the gateway lists
/// them again, serves the new ones (coerced in front of the server as ever) and tells its own
/// client.
#[test]
fn the_gateway_follows_a_change_of_its_servers_tools() {
    let Some(python) = toolsmith_testkit::require("python") else {
        return;
    };
    let script = toolsmith_testkit::workspace_root()
        .join("crates/toolsmith-cli/tests/fixtures/changing_server.py");
    let server = format!("'{}' '{}'", python.display(), script.display());
    let mut gateway = StdioGateway::start(&["--mcp", &server, "--mcp-prefix"]);
    // The server's tools, under its name (beside the linked ones).
    let upstream = |listed: &Value| -> Vec<String> {
        let mut names: Vec<String> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .filter(|name| name.starts_with("python_"))
            .collect();
        names.sort();
        names
    };

    let init = gateway.initialize();
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"], true,
        "{init}"
    );
    gateway.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(
        upstream(&gateway.wait_for(|m| m["id"] == 2)),
        ["python_grow"]
    );

    gateway.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"python_grow","arguments":{}}}"#,
    );
    let grown = gateway.wait_for(|m| m["id"] == 3);
    assert_eq!(grown["result"]["content"][0]["text"], "grown", "{grown}");
    gateway.wait_for(|m| m["method"] == "notifications/tools/list_changed");

    gateway.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    assert_eq!(
        upstream(&gateway.wait_for(|m| m["id"] == 4)),
        ["python_double", "python_grow"]
    );
    // The new tool is coerced at the gateway as any other.
    gateway.send(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"python_double","arguments":{"n":"21"}}}"#,
    );
    let doubled = gateway.wait_for(|m| m["id"] == 5);
    assert_eq!(doubled["result"]["isError"], false, "{doubled}");
    assert_eq!(doubled["result"]["content"][0]["text"], "42", "{doubled}");
    assert_eq!(
        doubled["result"]["_meta"]["toolsmith/repairs"][0]["path"],
        "/n"
    );
    gateway.finish();
}

/// Through a gateway, progress comes back from the server to the client that asked for it,
/// and a call the client cancels is never answered while the gateway serves on.
#[test]
fn progress_and_cancellation_pass_through_the_gateway() {
    let Some(server) = toolsmith_testkit::everything_command() else {
        return;
    };
    let mut gateway = StdioGateway::start(&["--mcp", &server]);
    gateway.initialize();

    // Four steps, each reported, the numbers sent as a model might.
    gateway.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":"0.4","steps":"4"},"_meta":{"progressToken":"p-2"}}}"#,
    );
    let read = gateway.read_until(|m| m["id"] == 2);
    let answer = read.last().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let progress: Vec<&Value> = read
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 4, "{read:?}");
    assert!(
        progress
            .iter()
            .all(|m| m["params"]["progressToken"] == "p-2"
                && m["params"]["total"].as_f64() == Some(4.0)),
        "{progress:?}"
    );
    assert_eq!(progress[3]["params"]["progress"].as_f64(), Some(4.0));

    // A long call, cancelled after its first report: its answer never comes, and the next
    // call is answered at once.
    gateway.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":60},"_meta":{"progressToken":"p-3"}}}"#,
    );
    gateway.wait_for(|m| m["method"] == "notifications/progress");
    gateway.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the user moved on"}}"#,
    );
    let started = std::time::Instant::now();
    gateway.send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"}}}"#,
    );
    let read = gateway.read_until(|m| m["id"] == 4);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(read.iter().all(|m| m["id"] != 3), "{read:?}");
    let echoed = read.last().unwrap();
    assert!(
        echoed["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("still here"),
        "{echoed}"
    );
    // After a while, still no answer to the cancelled call.
    std::thread::sleep(std::time::Duration::from_millis(700));
    while let Ok(message) = gateway.heard.try_recv() {
        assert_ne!(message["id"], 3, "{message}");
    }
    gateway.finish();
}

/// Through a gateway, what the server asks while its tool runs (a model's text, a person's
/// form) goes to the client that made the call, and the client's answer back to the server;
/// a client that cannot answer is not asked, and the call fails saying why.
#[test]
fn a_servers_questions_pass_through_the_gateway_to_the_client() {
    let Some(server) = toolsmith_testkit::everything_command() else {
        return;
    };
    let mut gateway = StdioGateway::start(&["--mcp", &server]);
    gateway.initialize_with(&serde_json::json!({"sampling": {}, "elicitation": {"form": {}}}));

    gateway.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-sampling-request","arguments":{"prompt":"name a colour","maxTokens":"20"}}}"#,
    );
    let asked = gateway.wait_for(|m| m["method"] == "sampling/createMessage");
    let params = &asked["params"];
    assert_eq!(
        params["messages"][0]["content"]["text"],
        "Resource trigger-sampling-request context: name a colour",
        "{asked}"
    );
    assert_eq!(params["maxTokens"], 20, "{asked}");
    assert_eq!(params["systemPrompt"], "You are a helpful test server.");
    let reply = serde_json::json!({
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "teal"},
            "model": "echo-1",
            "stopReason": "endTurn",
        },
    });
    gateway.send(&reply.to_string());
    let answer = gateway.wait_for(|m| m["id"] == 2);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("teal") && text.contains("echo-1"), "{text}");

    gateway.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-elicitation-request","arguments":{}}}"#,
    );
    let asked = gateway.wait_for(|m| m["method"] == "elicitation/create");
    let schema = &asked["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["email"]["format"], "email", "{asked}");
    let reply = serde_json::json!({
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"action": "accept", "content": {"name": "Ada Lovelace", "check": true}},
    });
    gateway.send(&reply.to_string());
    let answer = gateway.wait_for(|m| m["id"] == 3);
    let text: String = answer["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect();
    assert!(
        text.contains("- Name: Ada Lovelace") && text.contains("- Agreed to terms: true"),
        "{answer}"
    );
    gateway.finish();

    // A client that declared neither is never asked: the call fails in words saying why.
    let mut gateway = StdioGateway::start(&["--mcp", &server]);
    gateway.initialize();
    gateway.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-sampling-request","arguments":{"prompt":"hi"}}}"#,
    );
    let read = gateway.read_until(|m| m["id"] == 2);
    assert!(
        read.iter().all(|m| m["method"] != "sampling/createMessage"),
        "{read:?}"
    );
    let answer = read.last().unwrap();
    assert!(
        answer
            .to_string()
            .contains("did not declare the `sampling` capability"),
        "{answer}"
    );
    gateway.finish();
}

/// The real binary on a real terminal: a remote tool's question to a person
/// (`elicitation/create` from the Python SDK's server) is asked there, field by field, and the
/// answer typed is what the tool reads; Ctrl-C at the question ends the command at once.
#[test]
fn a_remote_tools_question_is_asked_on_the_terminal() {
    let Some(python) = toolsmith_testkit::require("python") else {
        return;
    };
    let server = common::fastmcp_server(&python);
    // `script -c` hands one command line to a shell: the paths are ours, without quotes.
    let command = format!(
        r#"{} call --mcp '{server}' rsvp '{{"event": "the launch"}}'"#,
        env!("CARGO_BIN_EXE_toolsmith")
    );
    let mut terminal = common::Terminal::start(&command, &[]);
    terminal.wait_for("Answer it? [y]es / [n]o:");
    terminal.type_keys(b"y\r");
    terminal.wait_for("name:");
    terminal.type_keys(b"Ada\r");
    terminal.wait_for("guests:");
    // The default.
    terminal.type_keys(b"\r");
    terminal.wait_for("Ada comes to the launch with 1 guests");
    let (status, screen) = terminal.finish();
    assert!(status.success(), "{status}: {screen}");
    assert!(
        screen.contains("toolsmith: a tool asks: Are you coming to the launch?"),
        "{screen}"
    );

    let mut terminal = common::Terminal::start(&command, &[]);
    terminal.wait_for("Answer it? [y]es / [n]o:");
    terminal.type_keys(b"\x03");
    assert!(
        terminal.ends_within(std::time::Duration::from_secs(10)),
        "Ctrl-C at the question did not end the command"
    );
    let (status, screen) = terminal.finish();
    assert!(!status.success(), "{status}: {screen}");
    assert!(!screen.contains("comes to the launch"), "{screen}");
}
