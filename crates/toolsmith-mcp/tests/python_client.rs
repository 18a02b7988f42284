//! The official MCP Python SDK's client against a toolsmith server, over stdio (the client
//! launches this test binary as the server; once negotiating as it does by default, once with the
//! `initialize` handshake) and over streamable HTTP (served in-process; once stateless on the
//! client's default protocol, once with sessions and the handshake): initialize, list, calls,
//! errors, parallel calls, an async tool, progress, cancellation, log messages, every kind of
//! content, request data from an HTTP header, and tools asking the client (elicitation,
//! sampling).
//!
//! A test binary of its own (`harness = false`): started with `--serve-stdio` it is the server,
//! whose stdout must carry nothing but protocol messages, which libtest's output would break.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use serde_json::{Value, json};
use toolsmith_mcp::{McpConfig, McpServer};

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--serve-stdio") {
        let (registry, _gate) = common::registry();
        return match toolsmith_mcp::serve_stdio(registry) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("{error}");
                ExitCode::FAILURE
            }
        };
    }
    let leaving =
        std::panic::catch_unwind(a_client_leaving_ends_the_server_even_with_a_tool_running);
    println!(
        "test a_client_leaving_ends_the_server_even_with_a_tool_running ... {}",
        if leaving.is_ok() { "ok" } else { "FAILED" }
    );
    if leaving.is_err() {
        return ExitCode::FAILURE;
    }
    let Some(python) = toolsmith_testkit::require("python") else {
        println!("test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
        return ExitCode::SUCCESS;
    };
    let stdio = over_stdio(&python, "stdio");
    let legacy = over_stdio(&python, "stdio-legacy");
    let http = over_http(&python, McpConfig::default(), "http");
    // Sessions, and the handshake: the server asks its client through the session.
    let sessions = over_http(
        &python,
        McpConfig::default().with_sessions(true),
        "http-legacy",
    );
    let mut failed = 0;
    let mut passed = 1;
    let runs = [
        ("stdio", &stdio),
        ("stdio_initialize", &legacy),
        ("http", &http),
        ("http_sessions_initialize", &sessions),
    ];
    for (transport, report) in runs {
        println!(
            "{transport}: negotiated protocol {}",
            report["protocol_version"]
        );
        for (name, check) in CHECKS {
            let outcome = std::panic::catch_unwind(|| check(report));
            let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
            println!("test {transport}::{name} ... {verdict}");
            match outcome {
                Ok(()) => passed += 1,
                Err(_) => failed += 1,
            }
        }
    }
    let result = if failed == 0 { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {result}. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out"
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

type Check = fn(&Value);

const CHECKS: &[(&str, Check)] = &[
    (
        "a_tool_asks_the_client_and_gets_its_answer",
        a_tool_asks_the_client_and_gets_its_answer,
    ),
    (
        "the_client_completes_the_handshake",
        the_client_completes_the_handshake,
    ),
    (
        "every_tool_is_listed_with_an_object_input_schema",
        every_tool_is_listed_with_an_object_input_schema,
    ),
    (
        "an_object_output_is_declared_with_its_schema_and_annotations",
        an_object_output_is_declared_with_its_schema_and_annotations,
    ),
    (
        "a_call_is_coerced_and_answered_in_text",
        a_call_is_coerced_and_answered_in_text,
    ),
    (
        "a_structured_output_comes_as_structured_content",
        a_structured_output_comes_as_structured_content,
    ),
    (
        "bad_arguments_come_back_as_an_error_result_with_the_message",
        bad_arguments_come_back_as_an_error_result_with_the_message,
    ),
    (
        "a_failing_or_panicking_tool_is_an_error_result",
        a_failing_or_panicking_tool_is_an_error_result,
    ),
    (
        "an_unknown_tool_is_a_protocol_error_naming_the_nearest_tool",
        an_unknown_tool_is_a_protocol_error_naming_the_nearest_tool,
    ),
    ("parallel_calls_run_at_once", parallel_calls_run_at_once),
    (
        "the_server_keeps_serving_after_errors",
        the_server_keeps_serving_after_errors,
    ),
    ("an_async_tool_is_awaited", an_async_tool_is_awaited),
    (
        "progress_reaches_the_progress_callback_in_order",
        progress_reaches_the_progress_callback_in_order,
    ),
    (
        "a_cancelled_call_is_seen_by_its_tool",
        a_cancelled_call_is_seen_by_its_tool,
    ),
    (
        "log_messages_reach_the_logging_callback_at_the_level_asked",
        log_messages_reach_the_logging_callback_at_the_level_asked,
    ),
    (
        "every_kind_of_content_arrives_as_such",
        every_kind_of_content_arrives_as_such,
    ),
    (
        "request_data_comes_from_the_http_header_or_is_missing",
        request_data_comes_from_the_http_header_or_is_missing,
    ),
];

/// This binary as a stdio server, a call to `wait` (whose gate nobody opens) in flight, and
/// stdin closed: the server exits all the same (checked for 60 s, then given up on as hung).
fn a_client_leaving_ends_the_server_even_with_a_tool_running() {
    use std::io::{BufRead, BufReader, Write};

    let mut server = Command::new(std::env::current_exe().unwrap())
        .arg("--serve-stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "wait", "arguments": {}}});
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    writeln!(stdin, "{initialize}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(stdin, "{call}\n{list}").unwrap();
    // The listing answers while the call waits: the call is in flight.
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":3"#), "{line}");
    drop(stdin);
    for _ in 0..600 {
        if let Some(status) = server.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = server.kill();
    panic!("the server kept running after its client left");
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("mcp_client.py")
}

/// Runs the client script with `args`; its report.
fn run_client(python: &Path, args: &[&str]) -> Value {
    let output = Command::new(python)
        .arg(script())
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

/// The client launching this binary as its server; `transport` is `stdio` (the client's own
/// negotiation) or `stdio-legacy` (the `initialize` handshake).
fn over_stdio(python: &Path, transport: &str) -> Value {
    let me = std::env::current_exe().unwrap();
    run_client(python, &[transport, me.to_str().unwrap(), "--serve-stdio"])
}

fn over_http(python: &Path, config: McpConfig, transport: &str) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (registry, _gate) = common::registry();
    let server = McpServer::new(registry, config)
        .unwrap()
        .with_request_data(common::caller_from_header);
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    runtime.spawn(async move { server.serve_http(listener, std::future::pending()).await });
    let report = run_client(python, &[transport, &url]);
    runtime.shutdown_background();
    report
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} listed"))
}

fn the_client_completes_the_handshake(report: &Value) {
    assert!(report["protocol_version"].is_string(), "{report}");
}

fn every_tool_is_listed_with_an_object_input_schema(report: &Value) {
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), common::registry().0.len());
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["title"].is_string(), "{tool}");
        assert!(tool["description"].is_string(), "{tool}");
    }
    assert_eq!(
        tool(report, "add")["inputSchema"]["required"],
        json!(["a", "b"])
    );
}

fn an_object_output_is_declared_with_its_schema_and_annotations(report: &Value) {
    let forecast = tool(report, "forecast");
    assert_eq!(forecast["outputSchema"]["type"], "object", "{forecast}");
    assert_eq!(forecast["annotations"]["readOnlyHint"], true, "{forecast}");
    assert_eq!(forecast["annotations"]["openWorldHint"], true, "{forecast}");
    assert!(tool(report, "add").get("outputSchema").is_none());
}

fn a_call_is_coerced_and_answered_in_text(report: &Value) {
    assert_eq!(
        report["call"],
        json!({"is_error": false, "text": "42", "structured": null})
    );
}

fn a_structured_output_comes_as_structured_content(report: &Value) {
    let call = &report["structured_call"];
    assert_eq!(call["is_error"], false, "{call}");
    assert_eq!(call["structured"], json!({"city": "Oslo", "celsius": 21.5}));
    assert_eq!(call["text"], r#"{"city":"Oslo","celsius":21.5}"#);
}

fn bad_arguments_come_back_as_an_error_result_with_the_message(report: &Value) {
    let call = &report["bad_arguments"];
    assert_eq!(call["is_error"], true, "{call}");
    let text = call["text"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool `add`."),
        "{text}"
    );
    assert!(text.contains("`c`: unknown field"), "{text}");
}

fn a_failing_or_panicking_tool_is_an_error_result(report: &Value) {
    assert_eq!(report["failing_tool"]["is_error"], true);
    assert_eq!(
        report["failing_tool"]["text"],
        "Tool `refuse` failed: no quota left"
    );
    assert_eq!(report["panicking_tool"]["is_error"], true);
    let text = report["panicking_tool"]["text"].as_str().unwrap();
    assert!(text.contains("Tool `explode` crashed"), "{text}");
}

fn an_unknown_tool_is_a_protocol_error_naming_the_nearest_tool(report: &Value) {
    let error = &report["unknown_tool"]["protocol_error"];
    assert_eq!(error["code"], -32602, "{report}");
    assert_eq!(
        error["message"],
        "There is no tool named `ad`. Did you mean `add`?"
    );
}

fn parallel_calls_run_at_once(report: &Value) {
    for call in report["parallel"].as_array().unwrap() {
        assert_eq!(call["text"], "met", "{call}");
    }
}

fn the_server_keeps_serving_after_errors(report: &Value) {
    assert_eq!(report["after_errors"]["text"], "2");
}

fn an_async_tool_is_awaited(report: &Value) {
    assert_eq!(
        report["async_call"],
        json!({"is_error": false, "text": "HELLO", "structured": null})
    );
}

fn progress_reaches_the_progress_callback_in_order(report: &Value) {
    let progress = &report["progress"];
    assert_eq!(progress["result"]["text"], "counted to 3", "{progress}");
    assert_eq!(
        progress["seen"],
        json!([
            {"progress": 1.0, "total": 3.0, "message": "step 1 of 3"},
            {"progress": 2.0, "total": 3.0, "message": "step 2 of 3"},
            {"progress": 3.0, "total": 3.0, "message": "step 3 of 3"},
        ])
    );
}

fn a_cancelled_call_is_seen_by_its_tool(report: &Value) {
    let cancelled = &report["cancelled"];
    assert_eq!(cancelled["cancellations_seen"], "1", "{cancelled}");
    assert_eq!(cancelled["after"]["text"], "2", "{cancelled}");
}

fn log_messages_reach_the_logging_callback_at_the_level_asked(report: &Value) {
    let said = |level: &str| json!([level, "chatty", format!("{level} from chatty")]);
    let by_default = &report["logs"];
    assert_eq!(
        by_default["result"]["text"], "said four things",
        "{by_default}"
    );
    // Protocol 2026-07-28: a request that asks for none gets none; before it, a connection
    // that set no level gets every level.
    let expected = if report["protocol_version"] == "2026-07-28" {
        json!([])
    } else {
        json!([said("debug"), said("info"), said("warning"), said("error")])
    };
    assert_eq!(by_default["seen"], expected, "{by_default}");
    assert_eq!(
        report["logs_at_warning"]["seen"],
        json!([said("warning"), said("error")]),
        "{report}"
    );
}

fn every_kind_of_content_arrives_as_such(report: &Value) {
    use base64::Engine as _;
    let base64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    assert_eq!(
        report["media"],
        json!([
            {"type": "text", "text": "Everything:"},
            {"type": "image", "data": base64(common::PNG), "mimeType": "image/png"},
            {"type": "audio", "data": base64(common::WAV), "mimeType": "audio/wav"},
            {"type": "resource", "resource":
                {"uri": "test://notes", "mimeType": "text/markdown", "text": "some notes"}},
            {"type": "resource", "resource":
                {"uri": "test://bytes", "mimeType": "application/octet-stream", "blob": "AAEC/w=="}},
            {"type": "resource_link", "uri": "file:///reports/q3.pdf", "name": "q3.pdf",
             "mimeType": "application/pdf"},
        ])
    );
}

fn request_data_comes_from_the_http_header_or_is_missing(report: &Value) {
    let missing = |answer: &Value| {
        assert_eq!(answer["is_error"], true, "{answer}");
        let text = answer["text"].as_str().unwrap();
        assert!(
            text.starts_with("Tool `whoami` cannot run here: its caller did not provide the")
                && text.contains("Caller"),
            "{text}"
        );
    };
    match report.get("whoami_without_header") {
        // Over HTTP the client sends `Authorization: Bearer ada`; a second client sends none.
        Some(without) => {
            assert_eq!(report["whoami"]["text"], "you are ada", "{report}");
            missing(without);
        }
        // Over stdio there is no header, and the server puts nothing in.
        None => missing(&report["whoami"]),
    }
}

fn a_tool_asks_the_client_and_gets_its_answer(report: &Value) {
    // On protocol 2026-07-28 (stdio, and stateless HTTP) through `input_required` rounds; on
    // the handshake era's stdio through requests to the client: the client's callbacks answer
    // either way.
    assert_eq!(
        report["book"]["text"], "booked for Ada with 2 bags",
        "{report}"
    );
    let asked = &report["asked"][0];
    assert_eq!(asked["message"], "Who is travelling?", "{asked}");
    assert_eq!(
        asked["requestedSchema"]["properties"]["name"],
        json!({"type": "string", "description": "Full name."}),
        "{asked}"
    );
    assert_eq!(asked["requestedSchema"]["required"], json!(["name"]));
    assert_eq!(
        report["summarize"]["text"], "short: Summarize: the sky is blue (by echo-1)",
        "{report}"
    );
    let sampled = &report["sampled"][0];
    assert_eq!(sampled["maxTokens"], 50, "{sampled}");
    assert_eq!(sampled["systemPrompt"], "Be brief.", "{sampled}");
    // A question, then a request for text: two rounds, the first answer carried over.
    assert_eq!(
        report["plan_trip"]["text"], "Ada goes to: short: Suggest a trip for Ada",
        "{report}"
    );
}
