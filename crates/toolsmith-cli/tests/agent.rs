//! `toolsmith agent` against a fake OpenAI-compatible server on 127.0.0.1: in-process over a
//! registry of test tools, and as the binary (for what it reads from the environment).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../toolsmith-agent/tests/support/fake_anthropic.rs"]
mod fake_anthropic;
#[path = "../../toolsmith-agent/tests/support/fake_gemini.rs"]
mod fake_gemini;
#[path = "../../toolsmith-agent/tests/support/fake_openai.rs"]
mod fake_openai;

use std::process::Command;
use std::sync::Arc;

use fake_openai::{FakeServer, Reply};
use serde_json::{Value, json};
use toolsmith::Registry;
use toolsmith_cli::{Exit, run};

const KEY: &str = "sk-cli-test-0a1b2c3d4e5f";

/// Moves money between accounts.
#[toolsmith::tool(needs_approval)]
fn transfer(to: String, cents: u64) -> String {
    format!("sent {cents} cents to {to}")
}

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Multiplies two integers.
#[toolsmith::tool]
fn multiply(a: i64, b: i64) -> i64 {
    a * b
}

/// Whom to book for, and where.
#[derive(serde::Deserialize, toolsmith::ToolType)]
struct Booking {
    /// Full name.
    name: String,
    /// How many bags.
    #[serde(default)]
    bags: u8,
    seat: Seat,
}

#[derive(serde::Deserialize, toolsmith::ToolType)]
#[serde(rename_all = "snake_case")]
enum Seat {
    /// By the aisle
    Aisle,
    /// By the window
    Window,
}

/// Books a seat, asking the person for whom.
#[toolsmith::tool]
async fn book(ctx: &toolsmith::Context) -> Result<String, toolsmith::ToolError> {
    Ok(match ctx.elicit::<Booking>("Who is travelling?").await? {
        toolsmith::Elicited::Accept(b) => {
            let seat = match b.seat {
                Seat::Aisle => "aisle",
                Seat::Window => "window",
            };
            format!("booked {} ({} bags, {seat})", b.name, b.bags)
        }
        other => format!("not booked: {}", other.action()),
    })
}

struct Out {
    exit: Exit,
    stdout: String,
    stderr: String,
}

/// Runs `toolsmith agent ARGS...` in-process over `add` and `multiply`.
fn agent(args: &[&str]) -> Out {
    agent_answering(args, "")
}

/// Runs `toolsmith agent ARGS...` in-process over `add`, `multiply` and `transfer` (which
/// needs approval), with `input` on stdin.
fn agent_answering(args: &[&str], input: &str) -> Out {
    let mut registry = Registry::new();
    registry.add(Arc::new(Add)).unwrap();
    registry.add(Arc::new(Multiply)).unwrap();
    registry.add(Arc::new(Transfer)).unwrap();
    registry.add(Arc::new(Book)).unwrap();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let argv = ["toolsmith", "agent"].iter().chain(args).copied();
    let exit = run(
        argv,
        || Ok(&registry),
        &mut input.as_bytes(),
        &mut stdout,
        &mut stderr,
    );
    Out {
        exit,
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

/// The names of the tools request `index` declared.
fn declared(server: &FakeServer, index: usize) -> Vec<String> {
    server.requests()[index].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_answer_is_printed_after_the_model_calls_the_tools() {
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "multiply", r#"{"a": "6", "b": 7}"#)]),
        Reply::calls(&[("c2", "finish", r#"{"answer": "42"}"#)]),
    ]);
    let out = agent(&["--base-url", server.base_url(), "What is 6 x 7?"]);
    assert_eq!(out.exit, Exit::Success, "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "42\n");
    assert_eq!(
        declared(&server, 0),
        ["add", "multiply", "transfer", "book", "finish"]
    );
    assert_eq!(
        server.requests()[0].body["messages"][1]["content"],
        "question: What is 6 x 7?"
    );
    assert_eq!(server.requests()[1].body["messages"][3]["content"], "42");
}

#[test]
fn named_tools_are_the_only_ones_offered() {
    let server = FakeServer::start(vec![Reply::text("done")]);
    let out = agent(&[
        "--base-url",
        server.base_url(),
        "--tools",
        "multiply",
        "--model",
        "small-model",
        "?",
    ]);
    assert_eq!(out.exit, Exit::Success, "stderr: {}", out.stderr);
    assert_eq!(declared(&server, 0), ["multiply", "finish"]);
    assert_eq!(server.requests()[0].body["model"], "small-model");
}

#[test]
fn json_prints_the_answer_the_steps_and_the_model_calls() {
    let server = FakeServer::start(vec![
        Reply::calls(&[
            ("c1", "add", r#"{"a": 1, "b": "2"}"#),
            ("c2", "add", r#"{"a": "x"}"#),
        ]),
        Reply::calls(&[("c3", "finish", r#"{"answer": "3"}"#)]),
    ]);
    let out = agent(&["--base-url", server.base_url(), "--json", "1 + 2?"]);
    assert_eq!(out.exit, Exit::Success, "stderr: {}", out.stderr);
    let printed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(printed["answer"], "3");
    assert_eq!(printed["lm_calls"], 2);
    let steps = printed["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["tool"], "add");
    assert_eq!(steps[0]["arguments"], r#"{"a": 1, "b": "2"}"#);
    assert_eq!(steps[0]["observation"], "3");
    assert_eq!(steps[0]["repairs"][0]["code"], "int_from_string");
    assert_eq!(steps[0]["error"], Value::Null);
    assert_eq!(steps[1]["error"], "invalid_arguments");
}

#[test]
fn a_model_that_never_finishes_is_exit_1_after_max_steps() {
    let script = (0..3)
        .map(|_| Reply::calls(&[("c", "add", r#"{"a": 1, "b": 1}"#)]))
        .collect();
    let server = FakeServer::start(script);
    let out = agent(&["--base-url", server.base_url(), "--max-steps", "2", "loop"]);
    assert_eq!(out.exit, Exit::Failure);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "toolsmith: agent: no answer after 2 steps (2 model calls, 2 tool calls)\n"
    );
}

#[test]
fn a_malformed_reply_is_exit_1() {
    let server = FakeServer::start(vec![Reply::raw(200, "not json")]);
    let out = agent(&["--base-url", server.base_url(), "?"]);
    assert_eq!(out.exit, Exit::Failure);
    assert!(
        out.stderr.contains("reply cannot be read"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unknown_tool_name_and_a_zero_step_limit_are_usage_errors() {
    let unknown = agent(&["--base-url", "http://127.0.0.1:9/v1", "--tools", "ad", "?"]);
    assert_eq!(unknown.exit, Exit::Usage);
    assert_eq!(
        unknown.stderr,
        "toolsmith: error: no tool is named `ad`; did you mean `add`?\n"
    );
    let zero = agent(&[
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--max-steps",
        "0",
        "?",
    ]);
    assert_eq!(zero.exit, Exit::Usage);
    assert!(
        zero.stderr
            .contains("invalid value '0' for '--max-steps <N>'"),
        "{}",
        zero.stderr
    );
    let no_question = agent(&["--base-url", "http://127.0.0.1:9/v1"]);
    assert_eq!(no_question.exit, Exit::Usage);
}

/// Runs the binary with only the given provider variables set.
fn binary(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command.arg("agent").args(args);
    for provider in ["OPENAI", "ANTHROPIC", "GEMINI"] {
        for name in ["BASE_URL", "API_KEY", "MODEL"] {
            command.env_remove(format!("{provider}_{name}"));
        }
    }
    command.envs(env.iter().copied());
    let out = command.output().expect("toolsmith runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_base_url_and_key_come_from_the_environment() {
    let server = FakeServer::start(vec![Reply::text("Paris")]);
    let env = [
        ("OPENAI_BASE_URL", server.base_url()),
        ("OPENAI_API_KEY", KEY),
    ];
    let (code, stdout, stderr) = binary(&["Capital of France?"], &env);
    assert_eq!((code, stdout.as_str()), (0, "Paris\n"), "stderr: {stderr}");
    let seen = &server.requests()[0];
    assert_eq!(
        seen.authorization.as_deref(),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(seen.body["model"], "gpt-4o-mini");
}

#[test]
fn a_refused_key_is_exit_1_and_the_key_is_never_printed() {
    let message = format!("Incorrect API key provided: {KEY}");
    let server = FakeServer::start(vec![Reply::error(401, &message)]);
    let env = [
        ("OPENAI_BASE_URL", server.base_url()),
        ("OPENAI_API_KEY", KEY),
    ];
    for json in [false, true] {
        let args: &[&str] = if json { &["--json", "?"] } else { &["?"] };
        let (code, stdout, stderr) = binary(args, &env);
        assert_eq!(code, 1);
        if !json {
            assert_eq!(
                stderr,
                "toolsmith: agent: the model server answered HTTP 401: \
                 Incorrect API key provided: [redacted]\n"
            );
        }
        assert!(
            !stdout.contains(KEY) && !stderr.contains(KEY),
            "{stdout}{stderr}"
        );
    }
}

#[test]
fn an_unreachable_server_is_exit_1_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/v1");
    let (code, _, stderr) = binary(&["--base-url", &url, "?"], &[("OPENAI_API_KEY", KEY)]);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with(&format!(
            "toolsmith: agent: cannot reach the model server at {url}"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains(KEY));
}

#[test]
fn the_providers_own_api_without_a_key_is_a_usage_error_naming_the_variable() {
    for (provider, variable) in [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("gemini", "GEMINI_API_KEY"),
    ] {
        let (code, stdout, stderr) = binary(&["--provider", provider, "?"], &[]);
        assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
        assert!(
            stderr.contains(&format!("{variable} is not set")),
            "{provider}: {stderr}"
        );
    }
    let help = json!(binary(&["--help"], &[("OPENAI_API_KEY", KEY)]).1);
    assert!(!help.to_string().contains(KEY));
    assert!(help.to_string().contains("anthropic"), "{help}");
}

#[test]
fn a_base_url_that_is_no_http_url_is_a_usage_error_naming_the_flag() {
    let cases = [
        (
            "not-a-url",
            "it has no scheme (start it with http:// or https://)",
        ),
        ("localhost:8080/v1", "it has no scheme"),
        ("ftp://example.com/v1", "its scheme is `ftp`"),
        ("http://127.0.0.1:9/v1?key=1", "it has a query or fragment"),
    ];
    for (url, problem) in cases {
        let (code, stdout, stderr) = binary(&["--base-url", url, "?"], &[]);
        assert_eq!((code, stdout.as_str()), (2, ""), "{url}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "invalid value '{url}' for '--base-url <URL>': {problem}"
            )),
            "{stderr}"
        );
        let (code, stdout, stderr) = binary(&["?"], &[("OPENAI_BASE_URL", url)]);
        assert_eq!((code, stdout.as_str()), (2, ""), "{url}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "--base-url: `{url}` is not an http(s) URL: {problem}"
            )) && stderr.contains("(from OPENAI_BASE_URL)"),
            "{stderr}"
        );
    }
}

#[test]
fn a_library_client_refuses_a_base_url_that_is_no_http_url() {
    let error = toolsmith_agent::OpenAiCompatible::new("localhost:8080/v1", "m").unwrap_err();
    assert_eq!(error.url, "localhost:8080/v1");
    assert!(toolsmith_agent::OpenAiCompatible::new("https://api.example.com/v1/", "m").is_ok());
}

/// The command run from inside an async runtime (a program embedding the CLI in its own) is
/// refused before the model is asked: waiting would block that runtime's thread.
#[test]
fn agent_inside_an_async_runtime_is_a_failure_saying_why_not_a_wait() {
    let server = FakeServer::start(vec![Reply::text("done")]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = runtime.block_on(async { agent(&["--base-url", server.base_url(), "?"]) });
    assert_eq!(out.exit, Exit::Failure, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("run blocking from inside an async runtime"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}

/// An agent over an MCP server's tools: the model's messy arguments are coerced before they
/// reach the server, and the server's answer is what the model reads next.
#[test]
fn an_agent_uses_an_mcp_servers_tools() {
    let Some(everything) = toolsmith_testkit::everything_command() else {
        return;
    };
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "get-sum", r#"{"a": "2", "b": 3}"#)]),
        Reply::calls(&[("c2", "finish", r#"{"answer": "5"}"#)]),
    ]);
    let out = agent(&[
        "--base-url",
        server.base_url(),
        "--mcp",
        &everything,
        "--tools",
        "get-sum",
        "--json",
        "2 + 3?",
    ]);
    assert_eq!(out.exit, Exit::Success, "stderr: {}", out.stderr);
    assert_eq!(declared(&server, 0), ["get-sum", "finish"]);
    let printed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(printed["answer"], "5");
    let step = &printed["steps"][0];
    assert_eq!(step["observation"], "The sum of 2 and 3 is 5.");
    assert_eq!(step["repairs"][0]["code"], "number_from_string");
    assert_eq!(
        server.requests()[1].body["messages"][3]["content"],
        "The sum of 2 and 3 is 5."
    );
}

/// A remote tool that asks the client's model (`sampling/createMessage`) while it runs is
/// answered by the agent's own model, and the tool's answer is what the model reads next.
#[test]
fn an_mcp_servers_question_to_a_model_is_answered_by_the_agents_model() {
    sampled(&[], "max_tokens");
}

/// `--token-limit-field`: a proxy's reasoning model (which refuses `max_tokens`, as OpenAI's
/// do) gets a question's limit as `max_completion_tokens`.
#[test]
fn a_questions_token_limit_goes_in_the_field_named() {
    sampled(
        &[
            "--model",
            "o4-mini",
            "--token-limit-field",
            "max-completion-tokens",
        ],
        "max_completion_tokens",
    );
}

/// Runs a question whose tool asks the agent's model, `extra` on the command line, and checks
/// that the question's token limit reached the model in `field`.
fn sampled(extra: &[&str], field: &str) {
    let Some(everything) = toolsmith_testkit::everything_command() else {
        return;
    };
    let server = FakeServer::start(vec![
        Reply::calls(&[(
            "c1",
            "trigger-sampling-request",
            r#"{"prompt": "name a colour", "maxTokens": "20"}"#,
        )]),
        // The server's question, asked of the same model.
        Reply::text("teal"),
        Reply::calls(&[("c2", "finish", r#"{"answer": "teal"}"#)]),
    ]);
    let mut args = vec![
        "--base-url",
        server.base_url(),
        "--mcp",
        &everything,
        "--tools",
        "trigger-sampling-request",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push("A colour?");
    let out = agent(&args);
    assert_eq!(out.exit, Exit::Success, "stderr: {}", out.stderr);
    let printed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(printed["answer"], "teal");
    let observation = printed["steps"][0]["observation"].as_str().unwrap();
    assert!(observation.contains("teal"), "{observation}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let asked = &requests[1].body;
    let asked_text = asked["messages"].to_string();
    assert!(
        asked_text.contains("Resource trigger-sampling-request context: name a colour")
            && asked_text.contains("You are a helpful test server."),
        "{asked}"
    );
    // The question is the model's alone: no tools offered with it, and answered within the
    // server's limit (`maxTokens`).
    assert_eq!(asked["tools"], Value::Null, "{asked}");
    assert_eq!(asked[field], 20, "{asked}");
    // The agent's own steps leave the length to the server.
    assert_eq!(requests[0].body.get(field), None);
}

/// `--provider anthropic`: the Messages API spoken natively, the key as `x-api-key` from
/// `ANTHROPIC_API_KEY`, the base URL from `ANTHROPIC_BASE_URL`, the model's default, and the
/// usage summed in `--json`.
#[test]
fn the_anthropic_provider_speaks_the_messages_api_with_its_own_variables() {
    let server = fake_anthropic::FakeServer::start(
        Some(KEY),
        vec![
            fake_anthropic::Reply::tool_use(&[("toolu_1", "text_wc", json!({"text": "four"}))])
                .usage(40, 9),
            fake_anthropic::Reply::tool_use(&[("toolu_2", "finish", json!({"answer": "4"}))])
                .usage(60, 5),
        ],
    );
    let (code, stdout, stderr) = binary(
        &["--provider", "anthropic", "--json", "How long is `four`?"],
        &[
            ("ANTHROPIC_BASE_URL", server.base_url()),
            ("ANTHROPIC_API_KEY", KEY),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let printed: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(printed["answer"], "4");
    assert_eq!(printed["steps"][0]["error"], Value::Null, "{printed}");
    assert_eq!(
        printed["usage"],
        json!({"input_tokens": 100, "output_tokens": 14})
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for request in &requests {
        assert_eq!(request.refused, None, "{request:?}");
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.api_key.as_deref(), Some(KEY));
        assert_eq!(request.body["model"], "claude-sonnet-4-5");
    }
    let declared = requests[0].body["tools"].as_array().expect("tools");
    assert!(
        declared
            .iter()
            .any(|tool| tool["name"] == "finish" && tool["input_schema"]["type"] == "object"),
        "{declared:?}"
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
}

/// `--provider gemini`: generateContent spoken natively, the key as `x-goog-api-key` from
/// `GEMINI_API_KEY`, `--base-url` in place of Google's, the model's default; every linked tool
/// is declared in a schema the fake checks as strictly as the API does.
#[test]
fn the_gemini_provider_speaks_generate_content_with_its_own_variables() {
    let server = fake_gemini::FakeGemini::serving(
        "gemini-2.5-flash",
        Some(KEY),
        vec![
            fake_gemini::Reply::calls(&[("text_wc", json!({"text": "one two"}))]).usage(70, 8),
            fake_gemini::Reply::calls(&[("finish", json!({"answer": "2 words"}))]).usage(90, 6),
        ],
    );
    let (code, stdout, stderr) = binary(
        &[
            "--provider",
            "gemini",
            "--base-url",
            server.base_url(),
            "--json",
            "How many words in `one two`?",
        ],
        &[("GEMINI_API_KEY", KEY)],
    );
    assert_eq!(code, 0, "{stderr}");
    let printed: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(printed["answer"], "2 words");
    assert!(
        printed["steps"][0]["observation"]
            .as_str()
            .is_some_and(|observation| observation.contains('2')),
        "{printed}"
    );
    assert_eq!(
        printed["usage"],
        json!({"input_tokens": 160, "output_tokens": 14})
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for request in &requests {
        assert_eq!(request.refused, None, "{request:?}");
        assert_eq!(request.api_key.as_deref(), Some(KEY));
    }
    let declared = requests[0].body["tools"][0]["functionDeclarations"]
        .as_array()
        .expect("function declarations");
    assert!(declared.len() > 10, "every linked tool: {declared:?}");
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
}

#[test]
fn strict_tools_are_refused_for_gemini_before_any_request() {
    let (code, stdout, stderr) = binary(
        &[
            "--provider",
            "gemini",
            "--base-url",
            "http://127.0.0.1:9",
            "--strict",
            "?",
        ],
        &[],
    );
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("Gemini has no strict tools"), "{stderr}");
}

#[test]
fn a_token_limit_field_is_refused_for_other_providers_before_any_request() {
    let (code, stdout, stderr) = binary(
        &[
            "--provider",
            "anthropic",
            "--base-url",
            "http://127.0.0.1:9",
            "--token-limit-field",
            "max-tokens",
            "?",
        ],
        &[],
    );
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(
        stderr.contains("--token-limit-field is for --provider openai"),
        "{stderr}"
    );
}

/// The text of the tool message in request `index`'s messages, answering `call_id`.
fn tool_message(server: &FakeServer, index: usize, call_id: &str) -> String {
    let messages = server.requests()[index].body["messages"].clone();
    messages
        .as_array()
        .expect("messages")
        .iter()
        .find(|message| message["tool_call_id"] == call_id)
        .and_then(|message| message["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn with_approve_each_call_is_asked_about_and_a_refusal_reason_reaches_the_model() {
    let server = FakeServer::start(vec![
        Reply::calls(&[
            ("c1", "add", r#"{"a": 2, "b": 3}"#),
            ("c2", "multiply", r#"{"a": 2, "b": 3}"#),
        ]),
        Reply::calls(&[("c3", "finish", r#"{"answer": "5"}"#)]),
    ]);
    let out = agent_answering(
        &["--base-url", server.base_url(), "--approve", "2 + 3?"],
        "y\n\nonly sums today\n",
    );
    assert_eq!(out.exit, Exit::Success, "{}", out.stderr);
    assert_eq!(out.stdout, "5\n");
    assert!(
        out.stderr
            .contains(r#"the model wants to call `add` with {"a":2,"b":3}"#),
        "{}",
        out.stderr
    );
    // An empty line asks again; the prompt came three times for two calls.
    assert_eq!(out.stderr.matches("Run it?").count(), 3, "{}", out.stderr);
    assert_eq!(tool_message(&server, 1, "c1"), "5");
    let refused = tool_message(&server, 1, "c2");
    assert!(
        refused.contains("a person rejected the call: only sums today"),
        "{refused}"
    );
}

#[test]
fn a_tool_that_needs_approval_stops_a_run_without_approve_and_is_refused_when_nobody_answers() {
    let script = || {
        vec![
            Reply::calls(&[("t1", "transfer", r#"{"to": "bob", "cents": 100}"#)]),
            Reply::calls(&[("t2", "finish", r#"{"answer": "not sent"}"#)]),
        ]
    };
    let server = FakeServer::start(script());
    let out = agent(&["--base-url", server.base_url(), "Pay Bob."]);
    assert_eq!(out.exit, Exit::Failure);
    assert!(
        out.stderr.contains(
            "waiting for approval of 1 tool call (`transfer`); run with --approve to decide"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests().len(), 1);

    // With --approve and no answer to read, the call is refused and the model told.
    let server = FakeServer::start(script());
    let out = agent_answering(
        &["--base-url", server.base_url(), "--approve", "Pay Bob."],
        "",
    );
    assert_eq!(out.exit, Exit::Success, "{}", out.stderr);
    assert_eq!(out.stdout, "not sent\n");
    assert!(tool_message(&server, 1, "t1").contains("nobody answered"));
}

#[test]
fn a_tools_question_is_asked_on_the_terminal_field_by_field() {
    let script = || {
        vec![
            Reply::calls(&[("b1", "book", "{}")]),
            Reply::calls(&[("b2", "finish", r#"{"answer": "done"}"#)]),
        ]
    };
    let server = FakeServer::start(script());
    // Yes; a name after an empty (required) line; the default bags after a count out of
    // bounds; a seat by its number after one that is no option.
    let out = agent_answering(
        &["--base-url", server.base_url(), "Book me."],
        "y\n\nAda\n300\n\n3\n2\n",
    );
    assert_eq!(out.exit, Exit::Success, "{}", out.stderr);
    assert_eq!(
        tool_message(&server, 1, "b1"),
        "booked Ada (0 bags, window)"
    );
    assert!(
        out.stderr
            .contains("toolsmith: a tool asks: Who is travelling?"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("2) window - By the window"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("type one option's number or value"),
        "{}",
        out.stderr
    );
    for hint in [
        "this one is required: type the text",
        "type a whole number, from 0 to 255",
    ] {
        assert!(out.stderr.contains(hint), "{hint}: {}", out.stderr);
    }

    // Declined, and with nothing to read, cancelled: the tool hears which.
    for (input, said) in [("n\n", "not booked: decline"), ("", "not booked: cancel")] {
        let server = FakeServer::start(script());
        let out = agent_answering(&["--base-url", server.base_url(), "Book me."], input);
        assert_eq!(out.exit, Exit::Success, "{}", out.stderr);
        assert_eq!(tool_message(&server, 1, "b1"), said);
    }
}

/// `--approve` under a real pseudo-terminal: `script` gives the binary a terminal, the test
/// types the answer after the prompt appears, as a person would.
#[test]
fn approve_asks_on_a_real_terminal() {
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "text_wc", r#"{"text": "a b c"}"#)]),
        Reply::calls(&[("c2", "finish", r#"{"answer": "three words"}"#)]),
    ]);
    // `script -c` takes one command line: the binary's path and the base URL are ours, with
    // no quote or space in them.
    let command = format!(
        "{} agent --base-url {} --approve count",
        env!("CARGO_BIN_EXE_toolsmith"),
        server.base_url()
    );
    let mut terminal = common::Terminal::start(&command, &["OPENAI_API_KEY"]);
    let screen = terminal.wait_for("Run it?");
    assert!(
        screen.contains("the model wants to call `text_wc`"),
        "{screen}"
    );
    terminal.type_keys(b"y\r");
    terminal.wait_for("three words");
    let (status, screen) = terminal.finish();
    assert!(status.success(), "{status}: {screen}");
    let counted = tool_message(&server, 1, "c1");
    assert!(counted.contains('3'), "{counted}");
}

/// `--stream`: the model asked to stream, its text on stdout as it comes, each tool call and
/// its result on stderr; an answer given in text is printed once.
#[test]
fn stream_shows_the_text_as_it_comes_and_the_calls_on_stderr() {
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "add", r#"{"a": 2, "b": "3"}"#)]).pieces(3),
        Reply::text("The sum is 5.").pieces(2),
    ]);
    let out = agent(&["--base-url", server.base_url(), "--stream", "2 + 3?"]);
    assert_eq!(out.exit, Exit::Success, "{}", out.stderr);
    assert_eq!(out.stdout, "The sum is 5.\n");
    assert!(
        out.stderr.contains("toolsmith: calling `add`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("toolsmith: `add` answered: 5"),
        "{}",
        out.stderr
    );
    for request in server.requests() {
        assert_eq!(request.body["stream"], true, "{:?}", request.body);
    }

    // An answer through `finish` was never streamed as text: it is printed whole.
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "finish", r#"{"answer": "five"}"#)]).pieces(5),
    ]);
    let out = agent(&["--base-url", server.base_url(), "--stream", "2 + 3?"]);
    assert_eq!(out.exit, Exit::Success, "{}", out.stderr);
    assert_eq!(out.stdout, "five\n");
}

/// What a model sends is shown, never obeyed, by the terminal: control characters in a tool's
/// name, its arguments or its answer are written as escapes, so a reply cannot rewrite the line
/// a person reads before approving.
#[test]
fn control_characters_from_the_model_are_escaped_on_the_terminal() {
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "add", "{\"a\": 2,\r\u{1b}[2K \"b\": 3}")]),
        Reply::calls(&[("c2", "finish", r#"{"answer": "5"}"#)]),
    ]);
    let out = agent_answering(
        &["--base-url", server.base_url(), "--approve", "2 + 3?"],
        "y\n",
    );
    assert_eq!(out.exit, Exit::Success, "{}", out.stderr);
    assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);
    assert!(!out.stderr.contains('\r'), "{:?}", out.stderr);
}
