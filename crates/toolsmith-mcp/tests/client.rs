//! The MCP client against real servers: this binary as a toolsmith stdio server (the round
//! trip: a tool served and consumed keeps its declaration), and the reference server
//! `@modelcontextprotocol/server-everything`, which nobody here wrote. Calls with clean and
//! messy arguments, errors answered locally and by the server, every kind of content, progress,
//! cancellation, and servers that fail to start or die.
//!
//! A test binary of its own (`harness = false`): started with `--serve-stdio` it is the server,
//! whose stdout must carry nothing but protocol messages, which libtest's output would break.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::{
    Arguments, AskFuture, Asker, CancellationToken, Content, Context, Dialect, Elicitation,
    Elicited, Progress, Reporter, Sampled, Sampling, Tool, ToolError, ToolResult,
};
use toolsmith_mcp::{ClientError, ClientOptions, HttpServer, McpClient, RemoteTool, StdioServer};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("--serve-stdio") => {
            let (registry, _gate) = common::registry();
            return match toolsmith_mcp::serve_stdio(registry) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("{error}");
                    ExitCode::FAILURE
                }
            };
        }
        Some("--serve-crashing") => {
            let mut registry = toolsmith::Registry::new();
            registry.add(Arc::new(Crash)).unwrap();
            registry.add(Arc::new(common::Add)).unwrap();
            return match toolsmith_mcp::serve_stdio(registry) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            };
        }
        Some("--serve-once") => {
            // Serves once: started again while its marker exists, it refuses, as a server
            // whose configuration broke while it ran would.
            let marker = std::path::PathBuf::from(args.next().unwrap());
            if marker.exists() {
                eprintln!("this server has run once already");
                return ExitCode::from(3);
            }
            std::fs::write(&marker, b"").unwrap();
            let mut registry = toolsmith::Registry::new();
            registry.add(Arc::new(Crash)).unwrap();
            registry.add(Arc::new(common::Add)).unwrap();
            return match toolsmith_mcp::serve_stdio(registry) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            };
        }
        Some("--serve-past-eof") => {
            // Writes its pid, serves, and then lives on after its stdin closed.
            std::fs::write(args.next().unwrap(), std::process::id().to_string()).unwrap();
            let (registry, _gate) = common::registry();
            let _ = toolsmith_mcp::serve_stdio(registry);
            std::thread::sleep(Duration::from_secs(600));
            return ExitCode::SUCCESS;
        }
        Some("--serve-changing") => {
            // Serves `add` and `grow`; a call to `grow` replaces them with `add` and `refuse`.
            let mut registry = toolsmith::Registry::new();
            registry.add(Arc::new(common::Add)).unwrap();
            registry.add(Arc::new(Grow)).unwrap();
            let server = toolsmith_mcp::McpServer::new(
                registry,
                toolsmith_mcp::McpConfig::default().with_changing_tools(true),
            )
            .unwrap();
            let _ = SERVED.set(server.clone());
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            return match runtime.block_on(server.serve_stdio()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            };
        }
        Some("--hang") => {
            // Reads nothing, answers nothing.
            std::thread::sleep(Duration::from_secs(600));
            return ExitCode::SUCCESS;
        }
        Some("--die") => {
            eprintln!("this server refuses to start: no configuration");
            return ExitCode::from(3);
        }
        _ => {}
    }
    let tests: [(&str, fn()); 16] = [
        (
            "a_served_tool_comes_back_with_its_declaration",
            a_served_tool_comes_back_with_its_declaration,
        ),
        (
            "calls_are_coerced_here_and_answered_there",
            calls_are_coerced_here_and_answered_there,
        ),
        (
            "progress_and_cancellation_pass_through",
            progress_and_cancellation_pass_through,
        ),
        (
            "a_servers_questions_reach_whoever_the_call_asks",
            a_servers_questions_reach_whoever_the_call_asks,
        ),
        (
            "a_servers_questions_over_http_reach_whoever_the_call_asks",
            a_servers_questions_over_http_reach_whoever_the_call_asks,
        ),
        (
            "the_reference_servers_questions_reach_whoever_the_call_asks",
            the_reference_servers_questions_reach_whoever_the_call_asks,
        ),
        (
            "a_server_that_cannot_start_is_named_with_its_last_words",
            a_server_that_cannot_start_is_named_with_its_last_words,
        ),
        (
            "a_server_that_dies_mid_call_is_a_clear_error",
            a_server_that_dies_mid_call_is_a_clear_error,
        ),
        (
            "the_reference_server_tools_are_coerced_and_called",
            the_reference_server_tools_are_coerced_and_called,
        ),
        (
            "every_reference_tool_is_declared_in_every_dialect",
            every_reference_tool_is_declared_in_every_dialect,
        ),
        (
            "a_server_that_fails_to_restart_is_tried_again_after_a_backoff",
            a_server_that_fails_to_restart_is_tried_again_after_a_backoff,
        ),
        (
            "a_server_that_never_answers_is_given_up_in_time",
            a_server_that_never_answers_is_given_up_in_time,
        ),
        (
            "a_server_living_past_its_stdin_is_ended_with_the_client",
            a_server_living_past_its_stdin_is_ended_with_the_client,
        ),
        (
            "an_http_server_is_reached_with_its_headers",
            an_http_server_is_reached_with_its_headers,
        ),
        (
            "an_http_server_nobody_serves_is_a_clear_error",
            an_http_server_nobody_serves_is_a_clear_error,
        ),
        (
            "a_change_of_the_servers_tools_is_heard_and_listed",
            a_change_of_the_servers_tools_is_heard_and_listed,
        ),
    ];
    let mut failed = 0;
    for (name, test) in tests {
        let outcome = std::panic::catch_unwind(test);
        println!(
            "test {name} ... {}",
            if outcome.is_ok() { "ok" } else { "FAILED" }
        );
        failed += usize::from(outcome.is_err());
    }
    println!(
        "test result: {}. {} passed; {failed} failed",
        if failed == 0 { "ok" } else { "FAILED" },
        tests.len() - failed
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// This binary, started as a toolsmith stdio server.
fn toolsmith_server() -> StdioServer {
    let me = std::env::current_exe().unwrap();
    StdioServer::new("toolsmith", me.to_str().unwrap(), ["--serve-stdio"])
}

fn find<'a>(tools: &'a [RemoteTool], name: &str) -> &'a RemoteTool {
    tools
        .iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("no tool {name} listed"))
}

async fn call(tool: &RemoteTool, arguments: Value) -> ToolResult {
    tool.call(Arguments::Json(&arguments), Context::new()).await
}

fn a_served_tool_comes_back_with_its_declaration() {
    let runtime = runtime();
    runtime.block_on(async {
        let client = McpClient::connect(&toolsmith_server()).await.unwrap();
        let tools = client.tools().await.unwrap();
        let (local, _gate) = common::registry();
        assert_eq!(tools.len(), local.len());
        for entry in local.iter() {
            let remote = find(&tools, entry.tool().name());
            assert!(remote.import_warnings().is_empty(), "{:?}", remote);
            assert_eq!(remote.server(), "toolsmith");
            for dialect in Dialect::ALL {
                let mine = toolsmith::envelope(entry.tool().as_ref(), dialect).unwrap();
                let theirs = toolsmith::envelope(remote, dialect).unwrap();
                assert_eq!(theirs, mine, "{} in {dialect}", remote.name());
            }
        }
        assert_eq!(find(&tools, "add").title(), Some("Add"));
    });
}

fn calls_are_coerced_here_and_answered_there() {
    let runtime = runtime();
    runtime.block_on(async {
        let client = McpClient::connect(&toolsmith_server()).await.unwrap();
        let tools = client.tools().await.unwrap();

        // Strings for integers: repaired here, recorded on the output.
        let output = call(find(&tools, "add"), json!({"a": "2", "b": 3}))
            .await
            .unwrap();
        assert_eq!(output.as_text(), "5");
        assert_eq!(output.repairs[0].code.as_str(), "int_from_string");

        // Refused here, in the model-facing shape, naming the field.
        let error = call(find(&tools, "add"), json!({"a": "two"}))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_arguments");
        let message = error.to_model_message();
        assert!(
            message.contains("`a`") && message.contains("`b`"),
            "{message}"
        );

        // The tool's own failure, in its words.
        let error = call(find(&tools, "refuse"), json!({"reason": "not today"}))
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ToolError::Failed { message, .. } if message.contains("not today")),
            "{error:?}"
        );

        // Structured output, an async tool, and every kind of block.
        let output = call(find(&tools, "forecast"), json!({"city": "Oslo"}))
            .await
            .unwrap();
        assert_eq!(
            output.structured,
            Some(json!({"city": "Oslo", "celsius": 21.5}))
        );
        let output = call(find(&tools, "shout"), json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(output.as_text(), "HI");
        let output = call(find(&tools, "media"), json!({})).await.unwrap();
        assert_eq!(output.content, common::media().content);
        assert!(matches!(output.content[1], Content::Image(_)));

        // An ordinary tool: in a registry under a prefix, its errors give the name it has there.
        let mut registry = toolsmith::Registry::new();
        for tool in tools {
            registry.add(Arc::new(tool)).unwrap();
        }
        let registry = registry.prefixed("up").unwrap();
        let output = registry
            .call(
                "up_add",
                Arguments::Text(r#"{"a": 40, "b": "2"}"#),
                Context::new(),
            )
            .await
            .unwrap();
        assert_eq!(output.as_text(), "42");
        let error = registry
            .call("up_add", Arguments::Text(r#"{"a": 1}"#), Context::new())
            .await
            .unwrap_err();
        assert!(
            error.to_model_message().contains("`up_add`"),
            "{}",
            error.to_model_message()
        );
    });
}

/// Progress reports, kept.
#[derive(Default)]
struct Reports(Mutex<Vec<Progress>>);

impl Reporter for Reports {
    fn progress(&self, _context: &Context, progress: Progress) {
        self.0.lock().unwrap().push(progress);
    }
}

fn progress_and_cancellation_pass_through() {
    let runtime = runtime();
    runtime.block_on(async {
        let client = McpClient::connect(&toolsmith_server()).await.unwrap();
        let tools = client.tools().await.unwrap();

        let reports = Arc::new(Reports::default());
        let context = Context::new().with_reporter(reports.clone());
        let output = find(&tools, "count_to")
            .call(Arguments::Json(&json!({"n": 3})), context)
            .await
            .unwrap();
        assert_eq!(output.as_text(), "counted to 3");
        let seen = reports.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(seen[2].done, 3.0);
        assert_eq!(seen[2].total, Some(3.0));
        assert_eq!(seen[2].message.as_deref(), Some("step 3 of 3"));

        // `hold` says it started, then waits for its cancellation; cancelling the call here
        // cancels it there.
        let cancel = CancellationToken::new();
        let started = Arc::new(tokio::sync::Notify::new());
        struct Started(Arc<tokio::sync::Notify>);
        impl Reporter for Started {
            fn progress(&self, _context: &Context, _progress: Progress) {
                self.0.notify_one();
            }
        }
        let context = Context::new()
            .with_cancellation(cancel.clone())
            .with_reporter(Arc::new(Started(started.clone())));
        let hold = find(&tools, "hold");
        let nothing = json!({});
        let call = hold.call(Arguments::Json(&nothing), context);
        let cancelling = async {
            tokio::time::timeout(Duration::from_secs(20), started.notified())
                .await
                .expect("hold reported its start");
            cancel.cancel();
        };
        let (answer, ()) = tokio::join!(call, cancelling);
        assert_eq!(answer.unwrap_err().code(), "cancelled");
        // The server saw it: `hold` counted the cancellation (it may take a moment to arrive).
        let mut seen = String::new();
        for _ in 0..200 {
            seen = call_text(find(&tools, "cancellations"), json!({})).await;
            if seen == "1" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(seen, "1");

        // A call whose caller stops waiting (drops its future) is cancelled there too.
        let started = Arc::new(tokio::sync::Notify::new());
        let context = Context::new().with_reporter(Arc::new(Started(started.clone())));
        let call = hold.call(Arguments::Json(&nothing), context);
        tokio::select! {
            _ = call => panic!("hold answered before it was dropped"),
            () = started.notified() => {}
        }
        for _ in 0..200 {
            seen = call_text(find(&tools, "cancellations"), json!({})).await;
            if seen == "2" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(seen, "2", "the dropped call was cancelled at the server");
    });
}

/// A person and a model at the caller's side: they answer every question (the person with
/// `answer`), and keep what they were asked.
struct Answering {
    answer: Elicited,
    asked: Mutex<Vec<Elicitation>>,
    sampled: Mutex<Vec<Sampling>>,
}

impl Answering {
    fn new(answer: Elicited) -> Arc<Self> {
        Arc::new(Answering {
            answer,
            asked: Mutex::default(),
            sampled: Mutex::default(),
        })
    }
}

impl Asker for Answering {
    fn elicit<'a>(&'a self, _: &'a Context, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        self.asked.lock().unwrap().push(request.clone());
        Box::pin(std::future::ready(Ok(self.answer.clone())))
    }

    fn sample<'a>(&'a self, _: &'a Context, request: &'a Sampling) -> AskFuture<'a, Sampled> {
        self.sampled.lock().unwrap().push(request.clone());
        let last = request.messages.last().map_or("", |m| m.text.as_str());
        let answer = Sampled::new(format!("short: {last}"))
            .with_model("echo-1")
            .with_stop_reason("endTurn");
        Box::pin(std::future::ready(Ok(answer)))
    }
}

/// What a remote tool asks while it runs (`elicitation/create`, `sampling/createMessage`)
/// reaches the asker of the call's context here, and the answers go back: a person's form, a
/// decline, a model's text; with nobody to ask, the server's tool is told so.
fn a_servers_questions_reach_whoever_the_call_asks() {
    let runtime = runtime();
    runtime.block_on(async {
        let client = McpClient::connect(&toolsmith_server()).await.unwrap();
        let tools = client.tools().await.unwrap();
        let nothing = json!({});
        let ask = |asker: &Arc<Answering>| Context::new().with_asker(asker.clone());

        let person = Answering::new(Elicited::Accept(
            json!({"name": "Ada", "bags": 2})
                .as_object()
                .unwrap()
                .clone(),
        ));
        let booked = find(&tools, "book")
            .call(Arguments::Json(&nothing), ask(&person))
            .await
            .unwrap();
        assert_eq!(booked.as_text(), "booked for Ada with 2 bags");
        let asked = person.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].message, "Who is travelling?");
        assert_eq!(asked[0].schema["properties"]["name"]["type"], "string");
        assert_eq!(asked[0].schema["required"], json!(["name"]));

        let summary = find(&tools, "summarize")
            .call(
                Arguments::Json(&json!({"text": "the sky is blue"})),
                ask(&person),
            )
            .await
            .unwrap();
        assert_eq!(
            summary.as_text(),
            "short: Summarize: the sky is blue (by echo-1)"
        );
        let sampled = person.sampled.lock().unwrap().clone();
        assert_eq!(sampled.len(), 1, "{sampled:?}");
        assert_eq!(sampled[0].system.as_deref(), Some("Be brief."));
        assert_eq!(sampled[0].max_tokens, 50);

        // Two questions in one call, each answered in turn.
        let trip = find(&tools, "plan_trip")
            .call(Arguments::Json(&nothing), ask(&person))
            .await
            .unwrap();
        assert_eq!(trip.as_text(), "Ada goes to: short: Suggest a trip for Ada");

        let declining = Answering::new(Elicited::Decline);
        let declined = find(&tools, "book")
            .call(Arguments::Json(&nothing), ask(&declining))
            .await
            .unwrap();
        assert_eq!(declined.as_text(), "not booked (decline)");

        // Nobody to ask here: the server's tool hears so, and fails in its own words.
        let error = call(find(&tools, "book"), json!({})).await.unwrap_err();
        assert_eq!(error.code(), "failed", "{error}");
        let message = error.to_string();
        assert!(message.contains("nobody can answer here"), "{message}");

        // The connection serves on.
        assert_eq!(
            call_text(find(&tools, "add"), json!({"a": 1, "b": 2})).await,
            "3"
        );
    });
}

/// Over streamable HTTP the server's question comes on the call's own stream: a server
/// keeping sessions asks, and the answer goes back; a stateless one has nowhere to hear an
/// answer, and says so.
fn a_servers_questions_over_http_reach_whoever_the_call_asks() {
    let runtime = runtime();
    runtime.block_on(async {
        let (url, _stop) =
            http_server_with(toolsmith_mcp::McpConfig::default().with_sessions(true)).await;
        let client = McpClient::connect(&HttpServer::new("web", &url))
            .await
            .unwrap();
        let tools = client.tools().await.unwrap();
        let person = Answering::new(Elicited::Accept(
            json!({"name": "Ada"}).as_object().unwrap().clone(),
        ));
        let booked = find(&tools, "book")
            .call(
                Arguments::Json(&json!({})),
                Context::new().with_asker(person.clone()),
            )
            .await
            .unwrap();
        assert_eq!(booked.as_text(), "booked for Ada with 0 bags");
        assert_eq!(person.asked.lock().unwrap().len(), 1);

        let (url, _stop) = http_server().await;
        let client = McpClient::connect(&HttpServer::new("web", &url))
            .await
            .unwrap();
        let tools = client.tools().await.unwrap();
        let error = find(&tools, "book")
            .call(
                Arguments::Json(&json!({})),
                Context::new().with_asker(person.clone()),
            )
            .await
            .unwrap_err();
        let message = error.to_string();
        assert!(message.contains("HTTP without sessions"), "{message}");
        // Never asked here: the server could not have heard the answer.
        assert_eq!(person.asked.lock().unwrap().len(), 1);
    });
}

/// The reference server offers its tools that ask only to a client that declares it can
/// answer; they are listed, and their questions reach the caller's asker.
fn the_reference_servers_questions_reach_whoever_the_call_asks() {
    let Some(server) = reference_server() else {
        return;
    };
    let runtime = runtime();
    runtime.block_on(async {
        let client = McpClient::connect(&server).await.unwrap();
        let tools = client.tools().await.unwrap();
        let person = Answering::new(Elicited::Cancel);
        let sampled = find(&tools, "trigger-sampling-request")
            .call(
                Arguments::Json(&json!({"prompt": "name a colour", "maxTokens": "20"})),
                Context::new().with_asker(person.clone()),
            )
            .await
            .unwrap();
        let text = sampled.as_text();
        assert!(
            text.contains("short: Resource trigger-sampling-request context: name a colour"),
            "{text}"
        );
        assert!(text.contains("echo-1"), "{text}");
        let asked = person.sampled.lock().unwrap().clone();
        assert_eq!(asked[0].max_tokens, 20, "{asked:?}");
        assert_eq!(
            asked[0].system.as_deref(),
            Some("You are a helpful test server.")
        );
        assert_eq!(asked[0].temperature, Some(0.7));

        let elicited = find(&tools, "trigger-elicitation-request")
            .call(
                Arguments::Json(&json!({})),
                Context::new().with_asker(person.clone()),
            )
            .await
            .unwrap();
        let text = elicited.as_text();
        assert!(text.to_lowercase().contains("cancel"), "{text}");
        let asked = person.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].schema["properties"]["email"]["format"], "email");
    });
}

async fn call_text(tool: &RemoteTool, arguments: Value) -> String {
    call(tool, arguments).await.unwrap().as_text().into_owned()
}

fn a_server_that_cannot_start_is_named_with_its_last_words() {
    let runtime = runtime();
    runtime.block_on(async {
        let missing = StdioServer::new("ghost", "toolsmith-no-such-program", Vec::<String>::new());
        let error = McpClient::connect(&missing).await.err().unwrap();
        assert!(matches!(error, ClientError::Spawn { .. }), "{error}");
        let text = error.to_string();
        assert!(
            text.contains("`ghost`") && text.contains("toolsmith-no-such-program"),
            "{text}"
        );

        let me = std::env::current_exe().unwrap();
        let dying = StdioServer::new("broken", me.to_str().unwrap(), ["--die"]);
        let error = tokio::time::timeout(Duration::from_secs(20), McpClient::connect(&dying))
            .await
            .expect("a server that exits is no hang")
            .err()
            .unwrap();
        let text = error.to_string();
        assert!(
            text.contains("`broken`") && text.contains("handshake"),
            "{text}"
        );
        assert!(
            text.contains("refuses to start: no configuration"),
            "{text}"
        );
    });
}

fn a_server_that_dies_mid_call_is_a_clear_error() {
    let runtime = runtime();
    runtime.block_on(async {
        // A tool that panics is the server's error answer; the server lives on.
        let client = McpClient::connect(&toolsmith_server()).await.unwrap();
        let tools = client.tools().await.unwrap();
        let error = call(find(&tools, "explode"), json!({})).await.unwrap_err();
        assert_eq!(error.code(), "failed", "{error:?}");
        assert_eq!(
            call_text(find(&tools, "add"), json!({"a": 1, "b": 1})).await,
            "2"
        );

        // A server process that ends in the middle of a call: that call, and every one after,
        // is a clear error naming the server, never a hang.
        let me = std::env::current_exe().unwrap();
        let crashing = StdioServer::new("crashy", me.to_str().unwrap(), ["--serve-crashing"]);
        let client = McpClient::connect(&crashing).await.unwrap();
        let tools = client.tools().await.unwrap();
        let error = tokio::time::timeout(
            Duration::from_secs(20),
            call(find(&tools, "crash"), json!({})),
        )
        .await
        .expect("a dead server is no hang")
        .unwrap_err();
        assert_eq!(error.code(), "unavailable", "{error:?}");
        let message = error.to_model_message();
        assert!(message.contains("`crashy`"), "{message}");
        assert!(
            message.contains("simulated crash"),
            "the server's last words: {message}"
        );

        // The next call starts it again, and the client says its tools may have changed.
        let mut changes = client.list_changes();
        let output = tokio::time::timeout(
            Duration::from_secs(20),
            call(find(&tools, "add"), json!({"a": 1, "b": "2"})),
        )
        .await
        .expect("a restart is no hang")
        .unwrap();
        assert_eq!(output.as_text(), "3");
        tokio::time::timeout(Duration::from_secs(1), changes.changed())
            .await
            .expect("a restart is a change of the list");
    });
}

fn a_server_that_fails_to_restart_is_tried_again_after_a_backoff() {
    let runtime = runtime();
    runtime.block_on(async {
        let dir = tempdir("restart");
        let marker = dir.join("ran");
        let me = std::env::current_exe().unwrap();
        let once = StdioServer::new(
            "once",
            me.to_str().unwrap(),
            ["--serve-once", marker.to_str().unwrap()],
        );
        let backoff = Duration::from_millis(400);
        let options = ClientOptions::default().restart_backoff(backoff, backoff);
        let client = McpClient::connect_with(&once, options).await.unwrap();
        let tools = client.tools().await.unwrap();
        let add = find(&tools, "add");
        let error = call(find(&tools, "crash"), json!({})).await.unwrap_err();
        assert_eq!(error.code(), "unavailable", "{error:?}");

        // Started again, it refuses: the call says so, with the server's words.
        let error = call(add, json!({"a": 1, "b": 2})).await.unwrap_err();
        let message = error.to_model_message();
        assert_eq!(error.code(), "unavailable", "{message}");
        assert!(
            message.contains("`once`")
                && message.contains("connecting again failed")
                && message.contains("has run once already"),
            "{message}"
        );
        // At once again: not tried, the wait said.
        let error = call(add, json!({"a": 1, "b": 2})).await.unwrap_err();
        let message = error.to_model_message();
        assert!(
            message.contains("next attempt may be made in")
                && message.contains("has run once already"),
            "{message}"
        );
        // Mended, and after the backoff, the next call starts it.
        std::fs::remove_file(&marker).unwrap();
        tokio::time::sleep(backoff + Duration::from_millis(50)).await;
        assert_eq!(call_text(add, json!({"a": 1, "b": 2})).await, "3");
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

fn a_server_that_never_answers_is_given_up_in_time() {
    let runtime = runtime();
    runtime.block_on(async {
        let me = std::env::current_exe().unwrap();
        let mute = StdioServer::new("mute", me.to_str().unwrap(), ["--hang"]);
        let options = ClientOptions::default().handshake_timeout(Duration::from_millis(300));
        let started = std::time::Instant::now();
        let error = McpClient::connect_with(&mute, options).await.err().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        let text = error.to_string();
        assert!(
            text.contains("`mute`") && text.contains("within 0.3 s"),
            "{text}"
        );
    });
}

fn a_server_living_past_its_stdin_is_ended_with_the_client() {
    let runtime = runtime();
    runtime.block_on(async {
        let dir = tempdir("linger");
        let pid_file = dir.join("pid");
        let me = std::env::current_exe().unwrap();
        let stubborn = StdioServer::new(
            "stubborn",
            me.to_str().unwrap(),
            ["--serve-past-eof", pid_file.to_str().unwrap()],
        );
        let client = McpClient::connect(&stubborn).await.unwrap();
        let tools = client.tools().await.unwrap();
        assert_eq!(
            call_text(find(&tools, "add"), json!({"a": 1, "b": 1})).await,
            "2"
        );
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
        assert!(proc.exists());
        drop(tools);
        drop(client);
        // Its stdin closed, it is given a moment (two seconds), then killed.
        let mut gone = false;
        for _ in 0..100 {
            if !proc.exists() {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(gone, "the server {pid} lives on after its client");
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

/// A toolsmith server over streamable HTTP on a free loopback port, taking the caller from the
/// `Authorization` header, until the returned sender is dropped.
async fn http_server() -> (String, tokio::sync::oneshot::Sender<()>) {
    http_server_with(toolsmith_mcp::McpConfig::default()).await
}

/// [`http_server`] under `config`.
async fn http_server_with(
    config: toolsmith_mcp::McpConfig,
) -> (String, tokio::sync::oneshot::Sender<()>) {
    let (registry, _gate) = common::registry();
    let server = toolsmith_mcp::McpServer::new(registry, config)
        .unwrap()
        .with_request_data(common::caller_from_header);
    let listener = toolsmith_mcp::bind_http("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        server
            .serve_http(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    (url, stop)
}

fn an_http_server_is_reached_with_its_headers() {
    let runtime = runtime();
    runtime.block_on(async {
        let (url, _stop) = http_server().await;
        let remote = HttpServer::new("web", &url).with_header("Authorization", "Bearer alice");
        let client = McpClient::connect(&remote).await.unwrap();
        let tools = client.tools().await.unwrap();

        // The same declarations as over stdio.
        let (local, _gate) = common::registry();
        assert_eq!(tools.len(), local.len());
        for entry in local.iter() {
            let remote = find(&tools, entry.tool().name());
            assert_eq!(remote.server(), "web");
            let mine = toolsmith::envelope(entry.tool().as_ref(), Dialect::Mcp).unwrap();
            let theirs = toolsmith::envelope(remote, Dialect::Mcp).unwrap();
            assert_eq!(theirs, mine, "{}", remote.name());
        }

        // The header reached the server, which put the caller into the call's context.
        assert_eq!(
            call_text(find(&tools, "whoami"), json!({})).await,
            "you are alice"
        );
        let output = call(find(&tools, "add"), json!({"a": "40", "b": 2}))
            .await
            .unwrap();
        assert_eq!(output.as_text(), "42");
        assert_eq!(output.repairs.len(), 1);

        // Progress comes back over HTTP too.
        let reports = Arc::new(Reports::default());
        let context = Context::new().with_reporter(reports.clone());
        let output = find(&tools, "count_to")
            .call(Arguments::Json(&json!({"n": 2})), context)
            .await
            .unwrap();
        assert_eq!(output.as_text(), "counted to 2");
        assert_eq!(reports.0.lock().unwrap().len(), 2);

        // A header that is no header is refused before anything is sent, without its value.
        let bad = HttpServer::new("web", &url).with_header("Authorization", "Bearer a\nb-s3cret");
        let error = McpClient::connect(&bad).await.err().unwrap();
        let text = error.to_string();
        assert!(matches!(error, ClientError::Invalid { .. }), "{text}");
        assert!(
            text.contains("`Authorization`") && !text.contains("s3cret"),
            "{text}"
        );
    });
}

fn an_http_server_nobody_serves_is_a_clear_error() {
    let runtime = runtime();
    runtime.block_on(async {
        // A port that was free a moment ago: nobody listens there.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        drop(listener);
        let error = tokio::time::timeout(
            Duration::from_secs(20),
            McpClient::connect(HttpServer::new("nowhere", &url)),
        )
        .await
        .expect("an unreachable server is no hang")
        .err()
        .unwrap();
        let text = error.to_string();
        assert!(text.contains("`nowhere`") && text.contains(&url), "{text}");
    });
}

/// A fresh directory for one test.
fn tempdir(what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolsmith-client-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Ends the server process at once, as a crashing server does, after a last word on stderr.
#[toolsmith::tool]
fn crash() -> String {
    eprintln!("server: simulated crash");
    std::process::exit(9)
}

/// `server-everything` over stdio, when the set-up installed it.
fn reference_server() -> Option<StdioServer> {
    let (node, script) = toolsmith_testkit::require_node_script(
        "@modelcontextprotocol/server-everything",
        "dist/index.js",
    )?;
    Some(StdioServer::new(
        "everything",
        node.to_str().unwrap(),
        [script.to_str().unwrap(), "stdio"],
    ))
}

fn the_reference_server_tools_are_coerced_and_called() {
    let Some(everything) = reference_server() else {
        return;
    };
    let runtime = runtime();
    runtime.block_on(async {
        let client = McpClient::connect(&everything).await.unwrap();
        let tools = client.tools().await.unwrap();
        assert!(tools.len() >= 10, "{tools:?}");

        let output = call(find(&tools, "echo"), json!({"message": "hello"}))
            .await
            .unwrap();
        assert!(output.as_text().contains("hello"), "{}", output.as_text());

        // Numbers sent as strings, as models do: coerced here, so the server takes them.
        let output = call(find(&tools, "get-sum"), json!({"a": "2", "b": "3.5"}))
            .await
            .unwrap();
        assert!(output.as_text().contains("5.5"), "{}", output.as_text());
        assert_eq!(output.repairs.len(), 2, "{:?}", output.repairs);

        // What the server would refuse is refused here, every problem at once.
        let error = call(find(&tools, "get-sum"), json!({"a": "two"}))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_arguments");
        let message = error.to_model_message();
        assert!(
            message.contains("`a`") && message.contains("`b`"),
            "{message}"
        );

        // A wrong-case enum value, repaired to the server's spelling.
        let output = call(
            find(&tools, "get-annotated-message"),
            json!({"messageType": "SUCCESS", "includeImage": "true"}),
        )
        .await
        .unwrap();
        assert!(
            output
                .content
                .iter()
                .any(|c| matches!(c, Content::Image(_))),
            "{:?}",
            output.content
        );

        // Structured content beside the text.
        let output = call(
            find(&tools, "get-structured-content"),
            json!({"location": "chicago"}),
        )
        .await
        .unwrap();
        assert!(output.structured.is_some(), "{output:?}");

        // A long operation reports its progress as it goes.
        let reports = Arc::new(Reports::default());
        let context = Context::new().with_reporter(reports.clone());
        find(&tools, "trigger-long-running-operation")
            .call(
                Arguments::Json(&json!({"duration": 1, "steps": 3})),
                context,
            )
            .await
            .unwrap();
        let seen = reports.0.lock().unwrap();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(seen[2].total, Some(3.0));
    });
}

fn every_reference_tool_is_declared_in_every_dialect() {
    let Some(everything) = reference_server() else {
        return;
    };
    let runtime = runtime();
    runtime.block_on(async {
        let client = McpClient::connect(&everything).await.unwrap();
        let tools = client.tools().await.unwrap();
        for dialect in Dialect::ALL {
            let lint: Vec<toolsmith::LintTool<'_>> = tools
                .iter()
                .map(|tool| toolsmith::LintTool {
                    name: tool.name(),
                    parameters: tool.parameters(),
                })
                .collect();
            let findings = toolsmith::lint(&lint, dialect);
            assert!(findings.is_empty(), "{dialect}: {findings:?}");
            for tool in &tools {
                toolsmith::envelope(tool, dialect)
                    .unwrap_or_else(|e| panic!("{} in {dialect}: {e}", tool.name()));
            }
        }
    });
}

/// The server this binary serves with `--serve-changing`.
static SERVED: std::sync::OnceLock<toolsmith_mcp::McpServer> = std::sync::OnceLock::new();

/// Replaces this server's tools with `add` and `refuse`.
#[toolsmith::tool]
async fn grow() -> Result<String, String> {
    let server = SERVED.get().ok_or("not serving")?;
    let mut registry = toolsmith::Registry::new();
    registry
        .add(Arc::new(common::Add))
        .map_err(|e| e.to_string())?;
    registry
        .add(Arc::new(common::Refuse))
        .map_err(|e| e.to_string())?;
    server
        .replace_tools(registry)
        .await
        .map_err(|e| e.to_string())?;
    Ok("grown".to_owned())
}

fn a_change_of_the_servers_tools_is_heard_and_listed() {
    let runtime = runtime();
    runtime.block_on(async {
        let me = std::env::current_exe().unwrap();
        let changing = StdioServer::new("changing", me.to_str().unwrap(), ["--serve-changing"]);
        let client = McpClient::connect(&changing).await.unwrap();
        let names = |tools: &[RemoteTool]| {
            let mut names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
            names.sort();
            names
        };
        let tools = client.tools().await.unwrap();
        assert_eq!(names(&tools), ["add", "grow"]);
        let mut changes = client.list_changes();
        assert_eq!(call_text(find(&tools, "grow"), json!({})).await, "grown");
        tokio::time::timeout(Duration::from_secs(20), changes.changed())
            .await
            .expect("the server said its tools changed");
        let tools = client.tools().await.unwrap();
        assert_eq!(names(&tools), ["add", "refuse"]);
        // The tools listed after the change are called on the same connection.
        assert_eq!(
            call_text(find(&tools, "add"), json!({"a": 2, "b": 2})).await,
            "4"
        );
    });
}
