//! `OpenAiCompatible` and `ReAct` against a fake OpenAI-compatible server on 127.0.0.1: what
//! goes on the wire, retries, failures, and the loop over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/blocking.rs"]
mod blocking;

#[path = "support/fake_openai.rs"]
mod fake_openai;

use blocking::{CompleteBlocking, calls_of, text_of, text_pieces};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_openai::{Ending, FakeServer, Reply};
use serde_json::{Value, json};
use toolsmith::Registry;
use toolsmith_agent::{
    AgentError, Delta, LanguageModel, LmError, Message, OpenAiCompatible, Question, QuestionAnswer,
    ReAct, Request, TokenLimitField, ToolCall, ToolChoice, Usage,
};

const KEY: &str = "sk-test-9f8e7d6c5b4a";

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn client(server: &FakeServer) -> OpenAiCompatible {
    OpenAiCompatible::new(server.base_url(), "test-model")
        .unwrap()
        .api_key(Some(KEY.to_owned()))
        .backoff(Duration::from_millis(1))
        .timeout(Duration::from_secs(10))
}

fn ask(client: &OpenAiCompatible) -> Result<Message, LmError> {
    ask_by(client, None)
}

fn ask_by(client: &OpenAiCompatible, deadline: Option<Instant>) -> Result<Message, LmError> {
    client
        .complete_blocking(Request {
            messages: &[Message::user("hi")],
            tools: &[],
            tool_choice: &ToolChoice::Auto,
            deadline,
            max_tokens: None,
            temperature: None,
        })
        .map(|reply| reply.message)
}

fn agent(server: &FakeServer) -> ReAct<QuestionAnswer> {
    let mut tools = Registry::new();
    tools.add(Arc::new(Add)).expect("one tool");
    ReAct::new(Arc::new(client(server)), &tools).expect("an agent")
}

fn question(text: &str) -> Question {
    Question {
        question: text.to_owned(),
    }
}

/// The messages of request `index`, as the server received them.
fn sent_messages(server: &FakeServer, index: usize) -> Vec<Value> {
    server.requests()[index].body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_request_posts_the_model_messages_and_tools_with_the_key_as_bearer_token() {
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "add", r#"{"a": 1, "b": 2}"#)]),
        Reply::calls(&[("c2", "finish", r#"{"answer": "3"}"#)]),
    ]);
    let answer = agent(&server)
        .run_blocking(&question("1 + 2?"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "3");
    let first = &server.requests()[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(
        first.authorization.as_deref(),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(first.body["model"], "test-model");
    assert_eq!(first.body["tool_choice"], "auto");
    let declared: Vec<&str> = first.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(declared, ["add", "finish"]);
    assert_eq!(first.body["tools"][0]["type"], "function");
    assert_eq!(
        first.body["tools"][0]["function"]["parameters"]["required"],
        json!(["a", "b"])
    );
    assert_eq!(first.body["messages"][0]["role"], "system");
    assert_eq!(
        first.body["messages"][1],
        json!({"role": "user", "content": "question: 1 + 2?"})
    );
    // The second request carries the call and its answer.
    let second = sent_messages(&server, 1);
    assert_eq!(second[2]["tool_calls"][0]["id"], "c1");
    assert_eq!(
        second[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"a": 1, "b": 2}"#
    );
    assert_eq!(
        second[3],
        json!({"role": "tool", "content": "3", "tool_call_id": "c1"})
    );
}

#[test]
fn without_a_key_no_authorization_header_is_sent() {
    let server = FakeServer::start(vec![Reply::text("hello")]);
    let client = OpenAiCompatible::new(server.base_url(), "m")
        .unwrap()
        .api_key(None);
    assert_eq!(
        ask(&client).expect("a reply").content.as_deref(),
        Some("hello")
    );
    assert_eq!(server.requests()[0].authorization, None);
}

#[test]
fn messy_and_bad_arguments_unknown_tools_and_parallel_calls_are_answered_in_order() {
    let server = FakeServer::start(vec![
        Reply::calls(&[
            ("p1", "add", "{'a': '20', b: 22,}"),
            ("p2", "add", r#"{"a": "twenty"}"#),
            ("p3", "ad", r#"{"a": 1, "b": 1}"#),
        ]),
        Reply::calls(&[("p4", "finish", r#"{"answer": "42"}"#)]),
    ]);
    let answer = agent(&server)
        .run_blocking(&question("20 + 22?"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "42");
    assert_eq!(answer.lm_calls, 2);
    let second = sent_messages(&server, 1);
    let answers: Vec<(&str, &str)> = second[3..]
        .iter()
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or(""),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0], ("p1", "42"));
    assert_eq!(answers[1].0, "p2");
    assert!(
        answers[1].1.contains("`a`: expected an integer"),
        "{}",
        answers[1].1
    );
    assert!(
        answers[1].1.contains("`b`: missing required field"),
        "{}",
        answers[1].1
    );
    assert_eq!(
        answers[2],
        ("p3", "There is no tool named `ad`. Did you mean `add`?")
    );
    let repairs: Vec<&str> = answer.trajectory[0]
        .repairs
        .iter()
        .map(|r| r.code.as_str())
        .collect();
    assert!(repairs.contains(&"int_from_string"), "{repairs:?}");
}

#[test]
fn a_429_with_retry_after_and_a_503_are_retried_until_success() {
    let server = FakeServer::start(vec![
        Reply::error(429, "slow down").header("Retry-After", "1"),
        Reply::error(503, "overloaded"),
        Reply::text("finally"),
    ]);
    let reply = ask(&client(&server)).expect("a reply after retries");
    assert_eq!(reply.content.as_deref(), Some("finally"));
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_retry_after_longer_than_the_client_waits_fails_at_once() {
    let server = FakeServer::start(vec![
        Reply::error(429, "come back tomorrow").header("Retry-After", "86400"),
        Reply::text("never asked"),
    ]);
    let error = ask(&client(&server)).unwrap_err();
    assert_eq!(
        error,
        LmError::RetryTooLate {
            status: 429,
            retry_after: Duration::from_secs(86400)
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn server_errors_that_persist_fail_after_the_retries() {
    let server = FakeServer::start((0..4).map(|_| Reply::error(502, "bad gateway")).collect());
    let error = ask(&client(&server).retries(3)).unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 502,
            message: "bad gateway".into(),
            attempts: 4
        }
    );
    assert_eq!(
        error.to_string(),
        "the model server answered HTTP 502: bad gateway (after 4 attempts)"
    );
}

#[test]
fn a_401_fails_at_once_with_the_servers_message_and_never_the_key() {
    let server = FakeServer::start(vec![
        Reply::error(401, &format!("Incorrect API key provided: {KEY}.")),
        Reply::text("never asked"),
    ]);
    let error = agent(&server).run_blocking(&question("?")).unwrap_err();
    let AgentError::Lm(LmError::Status {
        status, attempts, ..
    }) = &error
    else {
        panic!("expected an HTTP status error, got {error:?}");
    };
    assert_eq!((*status, *attempts), (401, 1));
    let message = error.to_string();
    assert_eq!(
        message,
        "the model server answered HTTP 401: Incorrect API key provided: [redacted]."
    );
    assert!(!format!("{error:?}").contains(KEY));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_reply_that_is_not_json_is_malformed() {
    let server = FakeServer::start(vec![Reply::raw(200, "{\"choices\": [")]);
    let error = ask(&client(&server)).unwrap_err();
    assert!(matches!(error, LmError::Malformed { .. }), "{error:?}");
    assert!(error.to_string().contains("not JSON"), "{error}");
}

/// A completion cut off at the token limit (`finish_reason: "length"`) is refused, whole or
/// streamed, saying what it was writing; the text written by then comes with the error.
#[test]
fn a_completion_cut_off_at_the_token_limit_is_refused_with_its_text() {
    let cut = Reply::text("The answer is").finish_reason("length");
    let call = Reply::calls(&[("c1", "add", r#"{"a": 1"#)]).finish_reason("length");
    let server = FakeServer::start(vec![cut.clone(), cut, call]);
    let client = client(&server);
    let whole = ask(&client).unwrap_err();
    let LmError::CutOff { reason, text } = &whole else {
        panic!("{whole:?}");
    };
    assert_eq!(text.as_deref(), Some("The answer is"));
    assert!(
        reason.contains("in its text") && reason.contains("raise `max_tokens`"),
        "{reason}"
    );
    let (streamed, _) = client.stream_blocking(hi());
    assert_eq!(streamed.unwrap_err(), whole);
    let in_call = ask(&client).unwrap_err();
    assert!(
        in_call
            .to_string()
            .contains("in a call of `add`, whose arguments may be incomplete"),
        "{in_call}"
    );
}

#[test]
fn a_completion_without_a_message_is_malformed() {
    let server = FakeServer::start(vec![Reply::json(json!({"choices": []}))]);
    let error = ask(&client(&server)).unwrap_err();
    assert!(
        error.to_string().contains("no `choices[0].message`"),
        "{error}"
    );
}

#[test]
fn a_model_that_never_finishes_stops_at_max_steps() {
    let script = (0..5)
        .map(|i| Reply::calls(&[(&*format!("c{i}"), "add", r#"{"a": 1, "b": 1}"#)]))
        .collect();
    let server = FakeServer::start(script);
    let error = agent(&server)
        .max_steps(3)
        .run_blocking(&question("loop"))
        .unwrap_err();
    assert!(matches!(error, AgentError::MaxSteps { .. }), "{error:?}");
    assert_eq!(error.trajectory().len(), 3);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn an_unreachable_server_is_an_error_naming_the_url() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free port");
    let client = OpenAiCompatible::new(format!("http://127.0.0.1:{port}/v1"), "m")
        .unwrap()
        .api_key(Some(KEY.to_owned()));
    let error = ask(&client).unwrap_err();
    assert!(matches!(error, LmError::Unreachable { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains(&format!("127.0.0.1:{port}/v1/chat/completions")),
        "{message}"
    );
    assert!(!message.contains(KEY));
}

#[test]
fn a_server_slower_than_the_timeout_is_a_timeout() {
    let server = FakeServer::start(vec![Reply::text("late").after(Duration::from_secs(3))]);
    let client = client(&server).timeout(Duration::from_millis(300));
    let error = ask(&client).unwrap_err();
    assert!(matches!(error, LmError::Timeout { .. }), "{error:?}");
}

#[test]
fn a_request_deadline_sooner_than_the_timeout_bounds_the_request() {
    let server = FakeServer::start(vec![Reply::text("late").after(Duration::from_secs(3))]);
    let started = Instant::now();
    let error = ask_by(&client(&server), Some(started + Duration::from_millis(300))).unwrap_err();
    let LmError::Timeout { after, .. } = error else {
        panic!("expected a timeout, got {error:?}");
    };
    assert!(after <= Duration::from_millis(300), "{after:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn no_retry_is_made_that_could_only_begin_after_the_deadline() {
    let server = FakeServer::start(vec![
        Reply::error(503, "busy").header("Retry-After", "2"),
        Reply::text("ok"),
    ]);
    let started = Instant::now();
    let error = ask_by(&client(&server), Some(started + Duration::from_millis(500))).unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 503,
            message: "busy".into(),
            attempts: 1
        }
    );
    assert_eq!(server.requests().len(), 1);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_model_slower_than_the_runs_timeout_ends_the_run_at_its_deadline() {
    let server = FakeServer::start(vec![Reply::text("late").after(Duration::from_secs(3))]);
    let started = Instant::now();
    let error = agent(&server)
        .timeout(Duration::from_millis(300))
        .run_blocking(&question("?"))
        .unwrap_err();
    assert!(
        matches!(error, AgentError::DeadlinePassed { lm_calls: 1, .. }),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// Polls `future` on this thread, parking between wake-ups: an executor that is not tokio.
fn park_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// A run polled by an executor that is not tokio: the client sends on a runtime of its own.
#[test]
fn a_run_over_http_is_a_future_any_executor_can_poll() {
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "add", r#"{"a": 1, "b": "2"}"#)]),
        Reply::calls(&[("c2", "finish", r#"{"answer": "3"}"#)]),
    ]);
    let agent = agent(&server);
    let answer = park_on(agent.run(&question("1 + 2?"))).expect("an answer");
    assert_eq!(answer.output.answer, "3");
    assert_eq!(answer.trajectory[0].observation, "3");
    assert_eq!(server.requests().len(), 2);
}

/// A run awaited on a multi-threaded tokio runtime: the client sends on it.
#[test]
fn a_run_over_http_is_awaited_on_a_tokio_runtime() {
    let server = FakeServer::start(vec![
        Reply::calls(&[("c1", "add", r#"{"a": 20, "b": 22}"#)]),
        Reply::calls(&[("c2", "finish", r#"{"answer": "42"}"#)]),
    ]);
    let agent = agent(&server);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let answer = runtime
        .block_on(agent.run(&question("20 + 22?")))
        .expect("an answer");
    assert_eq!(answer.output.answer, "42");
}

fn hi() -> Request<'static> {
    Request {
        messages: &[],
        tools: &[],
        tool_choice: &ToolChoice::Auto,
        deadline: None,
        max_tokens: None,
        temperature: None,
    }
}

/// Asks `client` for the same reply twice, whole then streamed: both replies, and the deltas.
fn whole_and_streamed(
    client: &OpenAiCompatible,
) -> (toolsmith_agent::Reply, toolsmith_agent::Reply, Vec<Delta>) {
    let messages = [Message::user("hi")];
    let request = Request {
        messages: &messages,
        ..hi()
    };
    let whole = client.complete_blocking(request).expect("a whole reply");
    let (streamed, deltas) = client.stream_blocking(request);
    (whole, streamed.expect("a streamed reply"), deltas)
}

#[test]
fn streamed_text_arrives_in_order_and_the_reply_is_the_one_complete_gives() {
    let text = "The answer is 42, as everyone knows.";
    let reply = Reply::text(text).usage(12, 9).pieces(5);
    let server = FakeServer::start(vec![reply.clone(), reply]);
    let (whole, streamed, deltas) = whole_and_streamed(&client(&server));
    assert_eq!(streamed, whole);
    assert_eq!(streamed.message.content.as_deref(), Some(text));
    assert_eq!(streamed.usage, Some(Usage::new(12, 9)));
    assert_eq!(text_pieces(&deltas), 8, "{deltas:?}");
    assert_eq!(text_of(&deltas), text);
    assert_eq!(deltas[0], Delta::Text("The a".into()));
    let requests = server.requests();
    assert_eq!(requests[0].body.get("stream"), None);
    assert_eq!(requests[1].body["stream"], true);
    assert_eq!(
        requests[1].body["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(
        requests[1].authorization.as_deref(),
        Some(&*format!("Bearer {KEY}"))
    );
}

#[test]
fn a_calls_arguments_split_over_many_deltas_are_assembled_as_complete_gives_them() {
    let reply = Reply::completion(json!({"role": "assistant", "content": "Adding both.",
    "tool_calls": [
        {"id": "call_a1", "type": "function",
         "function": {"name": "add", "arguments": "{\"a\": 20, \"b\": \"22\"}"}},
        {"id": "call_b2", "type": "function",
         "function": {"name": "add", "arguments": "{'a': 1, b: 1,}"}},
    ]}))
    .usage(30, 17)
    .pieces(1);
    let server = FakeServer::start(vec![reply.clone(), reply]);
    let (whole, streamed, deltas) = whole_and_streamed(&client(&server));
    assert_eq!(streamed, whole);
    assert_eq!(
        streamed.message.tool_calls,
        [
            ToolCall::new("call_a1", "add", json!("{\"a\": 20, \"b\": \"22\"}")),
            ToolCall::new("call_b2", "add", json!("{'a': 1, b: 1,}")),
        ]
    );
    assert_eq!(
        calls_of(&deltas),
        [
            (0, "call_a1".to_owned(), "add".to_owned()),
            (1, "call_b2".to_owned(), "add".to_owned()),
        ]
    );
    assert_eq!(text_of(&deltas), "Adding both.");
    // The text came before the calls, as the model wrote it.
    assert!(matches!(
        deltas.last(),
        Some(Delta::ToolCall { index: 1, .. })
    ));
}

#[test]
fn a_stream_cut_short_or_broken_off_is_an_error_after_the_deltas_that_came() {
    let text = "A long answer that never ends.";
    let server = FakeServer::start(vec![
        Reply::text(text).ending(Ending::CutAfter(4)),
        Reply::text(text).ending(Ending::BrokenAfter(4)),
    ]);
    let client = client(&server);
    let messages = [Message::user("hi")];
    let request = Request {
        messages: &messages,
        ..hi()
    };
    let (cut, deltas) = client.stream_blocking(request);
    let cut = cut.unwrap_err();
    assert!(matches!(cut, LmError::Malformed { .. }), "{cut:?}");
    assert!(
        cut.to_string()
            .ends_with("the stream was cut short: it ended before `data: [DONE]`"),
        "{cut}"
    );
    assert_eq!(text_of(&deltas), "A long answe");
    let (broken, _) = client.stream_blocking(request);
    let broken = broken.unwrap_err();
    assert!(matches!(broken, LmError::Malformed { .. }), "{broken:?}");
    assert!(
        broken
            .to_string()
            .contains("the stream was cut short after 4 events: "),
        "{broken}"
    );
    // Nothing is retried once the stream has started.
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_error_in_the_stream_is_an_error_with_the_servers_words_and_never_the_key() {
    let server = FakeServer::start(vec![
        Reply::error(503, "busy"),
        Reply::text("Half an answer").stream_error(3, &format!("The model crashed ({KEY})")),
    ]);
    let (error, deltas) = client(&server).stream_blocking(Request {
        messages: &[Message::user("hi")],
        ..hi()
    });
    let error = error.unwrap_err();
    assert_eq!(
        error,
        LmError::Status {
            status: 500,
            message: "The model crashed ([redacted])".into(),
            attempts: 2,
        }
    );
    assert!(!format!("{error} {error:?}").contains(KEY));
    assert_eq!(text_of(&deltas), "Half an ");
}

#[test]
fn a_429_before_the_stream_is_retried_and_the_stream_then_read() {
    let server = FakeServer::start(vec![
        Reply::error(429, "slow down").header("Retry-After", "0"),
        Reply::text("finally").usage(3, 1),
    ]);
    let (reply, deltas) = client(&server).stream_blocking(Request {
        messages: &[Message::user("hi")],
        ..hi()
    });
    let reply = reply.expect("a reply after the retry");
    assert_eq!(reply.message.content.as_deref(), Some("finally"));
    assert_eq!(text_of(&deltas), "finally");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|seen| seen.body["stream"] == true));
}

/// The time per request bounds the wait for each event, not the whole stream: a reply that
/// keeps coming is read to its end however long it takes, one that falls silent is given up,
/// with what came before it reported.
#[test]
fn a_stream_is_given_the_time_per_request_between_events_not_for_the_whole() {
    let text = "Slowly, one piece at a time.";
    let server = FakeServer::start(vec![
        Reply::text(text).pieces(1).pace(Duration::from_millis(60)),
    ]);
    let started = Instant::now();
    let (reply, deltas) = client(&server)
        .timeout(Duration::from_millis(600))
        .stream_blocking(Request {
            messages: &[Message::user("hi")],
            ..hi()
        });
    let reply = reply.expect("a stream that goes on is read to its end");
    assert_eq!(reply.message.content.as_deref(), Some(text));
    assert_eq!(text_of(&deltas), text);
    // Longer than the time per request: the whole stream was not bounded by it.
    assert!(
        started.elapsed() > Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );

    let server = FakeServer::start(vec![
        Reply::text(text)
            .pieces(1)
            .ending(Ending::StalledAfter(5, Duration::from_secs(2))),
    ]);
    let started = Instant::now();
    let (error, deltas) = client(&server)
        .timeout(Duration::from_millis(600))
        .stream_blocking(Request {
            messages: &[Message::user("hi")],
            ..hi()
        });
    let error = error.unwrap_err();
    assert!(matches!(error, LmError::Timeout { .. }), "{error:?}");
    // What was sent before the silence came before the error.
    let got = text_of(&deltas);
    assert!(!got.is_empty() && got.len() < text.len(), "{got:?}");
    assert!(text.starts_with(&got), "{got:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_body_that_is_no_event_stream_is_malformed() {
    let server = FakeServer::start(vec![Reply::raw(200, "{\"choices\": []}")]);
    let (error, _) = client(&server).stream_blocking(Request {
        messages: &[Message::user("hi")],
        ..hi()
    });
    let error = error.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("it is `application/json`, not an event stream"),
        "{error}"
    );
}

/// A stream polled by an executor that is not tokio: the body is read on the client's own
/// runtime, the deltas reported on the polling thread.
#[test]
fn a_stream_is_a_future_any_executor_can_poll() {
    let server = FakeServer::start(vec![Reply::text("Hello from afar.").pieces(3)]);
    let client = client(&server);
    let deltas = Mutex::new(Vec::new());
    let polling = std::thread::current().id();
    let sink = |delta: Delta| {
        assert_eq!(std::thread::current().id(), polling);
        deltas.lock().unwrap().push(delta);
    };
    let messages = [Message::user("hi")];
    let reply = park_on(client.complete_streaming(
        Request {
            messages: &messages,
            ..hi()
        },
        &sink,
    ))
    .expect("a reply");
    assert_eq!(reply.message.content.as_deref(), Some("Hello from afar."));
    let deltas = deltas.into_inner().unwrap();
    assert_eq!(text_pieces(&deltas), 6);
    assert_eq!(text_of(&deltas), "Hello from afar.");
}

#[test]
fn the_fake_refuses_stream_options_without_a_stream_as_the_api_does() {
    let server = FakeServer::start(vec![Reply::text("never sent")]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let post = |body: Value| {
        let mut response = agent
            .post(format!("{}/chat/completions", server.base_url()))
            .header("content-type", "application/json")
            .send(body.to_string())
            .expect("an answer");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (status, text)
    };
    let messages = json!([{"role": "user", "content": "hi"}]);
    let (status, text) = post(json!({"model": "m", "messages": messages,
                                     "stream_options": {"include_usage": true}}));
    assert_eq!(status, 400);
    assert!(
        text.contains("only allowed when 'stream' is enabled"),
        "{text}"
    );
    let (status, text) = post(json!({"model": "m", "messages": messages, "stream": "yes"}));
    assert_eq!(status, 400);
    assert!(
        text.contains("expected a boolean, but got a string"),
        "{text}"
    );
}

#[test]
fn a_token_limit_goes_in_the_member_the_server_reads() {
    // A reasoning model at OpenAI refuses `max_tokens`, as the fake does: the client says
    // which member its server reads, `max_completion_tokens` at OpenAI's own API.
    let server = FakeServer::start(vec![Reply::text("Hi."), Reply::text("Hi.")]);
    let limited = Request {
        messages: &[Message::user("hi")],
        max_tokens: Some(64),
        ..hi()
    };
    let reasoning = |field| {
        OpenAiCompatible::new(server.base_url(), "o4-mini")
            .unwrap()
            .backoff(Duration::from_millis(1))
            .token_limit_field(field)
    };
    let refused = reasoning(TokenLimitField::MaxTokens)
        .complete_blocking(limited)
        .unwrap_err();
    assert!(
        matches!(refused, LmError::Status { status: 400, .. })
            && refused
                .to_string()
                .contains("Use 'max_completion_tokens' instead"),
        "{refused}"
    );
    let reply = reasoning(TokenLimitField::MaxCompletionTokens)
        .complete_blocking(limited)
        .expect("a reply");
    assert_eq!(reply.message.content.as_deref(), Some("Hi."));
    // A compatible server (the default for any base URL but OpenAI's) reads `max_tokens`.
    let compatible = client(&server).complete_blocking(limited).expect("a reply");
    assert_eq!(compatible.message.content.as_deref(), Some("Hi."));
    let limits: Vec<(Option<u64>, Option<u64>)> = server
        .requests()
        .iter()
        .map(|seen| {
            (
                seen.body["max_tokens"].as_u64(),
                seen.body["max_completion_tokens"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        limits,
        [(Some(64), None), (None, Some(64)), (Some(64), None)]
    );
}

/// A reply cut off at the token limit names the member the limit was sent in, whole or
/// streamed: the remedy a caller reads is the one its server takes.
#[test]
fn a_cut_off_reply_names_the_token_limit_member_sent() {
    let cut = Reply::text("The answer is").finish_reason("length");
    let server = FakeServer::start(vec![cut.clone(), cut]);
    let client = OpenAiCompatible::new(server.base_url(), "o4-mini")
        .unwrap()
        .backoff(Duration::from_millis(1))
        .token_limit_field(TokenLimitField::MaxCompletionTokens);
    let whole = client.complete_blocking(hi()).unwrap_err();
    let LmError::CutOff { reason, .. } = &whole else {
        panic!("{whole:?}");
    };
    assert!(
        reason.contains("raise `max_completion_tokens`") && !reason.contains("`max_tokens`"),
        "{reason}"
    );
    let (streamed, _) = client.stream_blocking(hi());
    assert_eq!(streamed.unwrap_err(), whole);
}
