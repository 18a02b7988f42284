//! `OpenAiCompatible` and `ReAct` against a fake OpenAI-compatible server on 127.0.0.1: what
//! goes on the wire, retries, failures, and the loop over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/blocking.rs"]
mod blocking;

#[path = "support/fake_openai.rs"]
mod fake_openai;

use blocking::CompleteBlocking;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_openai::{FakeServer, Reply};
use serde_json::{Value, json};
use toolsmith::Registry;
use toolsmith_agent::{
    AgentError, LmError, Message, OpenAiCompatible, Question, QuestionAnswer, ReAct, Request,
    ToolChoice,
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
