//! The client the official MCP conformance suite (`@modelcontextprotocol/conformance`) tests:
//! toolsmith's MCP client, connecting over streamable HTTP to the server a scenario starts,
//! listing its tools and calling the one the scenario asks for, as any program using the client
//! would.
//!
//! The suite runs it as `conformance_client URL`, with the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`, and judges what the server saw; `cargo xtask conformance` runs
//! every client scenario so. It exits 0 when the scenario ran as asked, 1 with a line on stderr
//! saying what failed, and 2 when it was started wrong. Every scenario is a handshake and a
//! listing of the tools; those in [`call_for`] then call a tool. What the server asks a person
//! while the call runs, the call's [`Accepting`] person answers, taking the form as offered. It
//! is bounded in time ([`SCENARIO_TIME`]), so that a server that never answers cannot hold it.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::{Arguments, AskFuture, Asker, Context, Elicitation, Elicited, Tool, ToolError};
use toolsmith_mcp::{ClientError, ClientOptions, HttpServer, McpClient, RemoteTool};

/// How long the handshake and the listing of the tools may each take.
const HANDSHAKE_TIME: Duration = Duration::from_secs(10);

/// How long a whole scenario may take (the suite gives a client 30 s unless told otherwise).
const SCENARIO_TIME: Duration = Duration::from_secs(20);

/// The tool a scenario asks the client to call, with what, and what the answer must say.
#[derive(Debug)]
struct Call {
    tool: &'static str,
    arguments: Value,
    /// A text the answer must contain, where the scenario's tool answers a known text.
    answer_contains: Option<&'static str>,
}

/// The call `scenario` asks for after the handshake and the listing; `None` for a scenario that
/// asks for those only (`initialize`, and any this program does not know).
fn call_for(scenario: &str) -> Option<Call> {
    let call = |tool, arguments, answer_contains| {
        Some(Call {
            tool,
            arguments,
            answer_contains,
        })
    };
    match scenario {
        // The server adds the two numbers: "The sum of 5 and 3 is 8".
        "tools_call" => call("add_numbers", json!({"a": 5, "b": 3}), Some("is 8")),
        // The server closes the call's SSE stream and answers on the GET stream it expects
        // the client to open after the `retry` it gave.
        "sse-retry" => call("test_reconnection", json!({}), None),
        // The server asks the client (`elicitation/create`) while the call runs.
        "elicitation-sep1034-client-defaults" => {
            call("test_client_elicitation_defaults", json!({}), None)
        }
        // Every authorization scenario's server offers this tool behind OAuth.
        auth if auth.starts_with("auth/") => call("test-tool", json!({}), None),
        _ => None,
    }
}

/// Why a scenario failed.
#[derive(Debug)]
enum Failure {
    /// The handshake failed.
    Connect(ClientError),
    /// `tools/list` failed.
    List(ClientError),
    /// The tool the scenario calls is not among those listed.
    Missing { tool: String, listed: Vec<String> },
    /// The call failed (locally or at the server).
    Call(ToolError),
    /// The call answered, but not what the scenario's tool answers.
    Answer {
        tool: String,
        answer: String,
        expected: String,
    },
    /// The scenario did not end in time.
    TimedOut,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Connect(error) => write!(f, "connecting failed: {error}"),
            Failure::List(error) => write!(f, "listing the tools failed: {error}"),
            Failure::Missing { tool, listed } => write!(
                f,
                "the server lists no tool `{tool}` (it lists: {})",
                if listed.is_empty() {
                    "none".to_owned()
                } else {
                    listed.join(", ")
                }
            ),
            Failure::Call(error) => write!(f, "the call failed: {error}"),
            Failure::Answer {
                tool,
                answer,
                expected,
            } => write!(
                f,
                "`{tool}` answered {answer:?}, which does not contain {expected:?}"
            ),
            Failure::TimedOut => write!(
                f,
                "the scenario did not end within {} s",
                SCENARIO_TIME.as_secs()
            ),
        }
    }
}

/// Runs `scenario` against the server at `url`.
async fn run(scenario: &str, url: &str) -> Result<(), Failure> {
    let options = ClientOptions::default().handshake_timeout(HANDSHAKE_TIME);
    let client = McpClient::connect_with(HttpServer::new("conformance", url), options)
        .await
        .map_err(Failure::Connect)?;
    let tools = client.tools().await.map_err(Failure::List)?;
    let names: Vec<String> = tools.iter().map(|tool| tool.name().to_owned()).collect();
    println!("listed {} tools: {}", names.len(), names.join(", "));
    let Some(call) = call_for(scenario) else {
        return Ok(());
    };
    let Some(tool) = tools.iter().find(|tool| tool.name() == call.tool) else {
        return Err(Failure::Missing {
            tool: call.tool.to_owned(),
            listed: names,
        });
    };
    call_tool(tool, &call).await
}

/// The person at this client: accepts every form the server offers as it is shown, its
/// defaults filled in (SEP-1034), as a person who only confirms does.
struct Accepting;

impl Asker for Accepting {
    fn elicit<'a>(&'a self, _: &'a Context, question: &'a Elicitation) -> AskFuture<'a, Elicited> {
        println!("asked: {}", question.message);
        Box::pin(std::future::ready(Ok(Elicited::Accept(
            question.defaults(),
        ))))
    }
}

/// Calls `tool` as `call` says and checks its answer.
async fn call_tool(tool: &RemoteTool, call: &Call) -> Result<(), Failure> {
    let context = Context::new().with_asker(Arc::new(Accepting));
    let output = tool
        .call(Arguments::Json(&call.arguments), context)
        .await
        .map_err(Failure::Call)?;
    let answer = output.as_text().into_owned();
    println!("{} answered: {answer}", call.tool);
    if let Some(structured) = &output.structured {
        println!("{} answered (structured): {structured}", call.tool);
    }
    match call.answer_contains {
        Some(expected) if !answer.contains(expected) => Err(Failure::Answer {
            tool: call.tool.to_owned(),
            answer,
            expected: expected.to_owned(),
        }),
        _ => Ok(()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").ok();
    let (Some(scenario), [url]) = (scenario, args.as_slice()) else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=SCENARIO conformance_client URL");
        return ExitCode::from(2);
    };
    let ran = tokio::time::timeout(SCENARIO_TIME, run(&scenario, url))
        .await
        .unwrap_or(Err(Failure::TimedOut));
    match ran {
        Ok(()) => {
            println!("conformance_client: scenario `{scenario}` done");
            ExitCode::SUCCESS
        }
        Err(failure) => {
            eprintln!("conformance_client: scenario `{scenario}` against {url} failed: {failure}");
            ExitCode::FAILURE
        }
    }
}
