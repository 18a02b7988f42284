//! The agent against a real model: SmolLM2-135M-Instruct served by llama-cpp-python on
//! 127.0.0.1. `cargo xtask e2e` builds and starts the server and runs these ignored tests with
//! `TOOLSMITH_E2E_BASE_URL` set; run by hand they fail, saying so.
//!
//! What a 135M model must do: with the tool forced (`tool_choice` naming it), produce a call
//! whose arguments are schema-valid and run. What it does with a free choice is printed, and
//! only the framework's part is asserted: the run ends in an answer or a well-formed error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/blocking.rs"]
mod blocking;

use blocking::{CompleteBlocking, calls_of, text_of};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::{Arguments, Policy, Registry};
use toolsmith_agent::{
    AgentError, Message, OpenAiCompatible, Predict, Question, QuestionAnswer, ReAct, Request,
    ToolChoice, ToolDeclaration,
};

/// Adds two integers.
#[toolsmith::tool]
fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> i64 {
    a + b
}

fn model() -> OpenAiCompatible {
    let Ok(base_url) = std::env::var("TOOLSMITH_E2E_BASE_URL") else {
        panic!("TOOLSMITH_E2E_BASE_URL is not set: run these tests with `cargo xtask e2e`");
    };
    OpenAiCompatible::new(base_url, "smollm2-135m-instruct")
        .unwrap_or_else(|error| panic!("TOOLSMITH_E2E_BASE_URL: {error}"))
        .temperature(0.0)
        .timeout(Duration::from_secs(300))
}

/// How long a run may take: its every request may take the client's 300 s on a slow machine.
const RUN_TIMEOUT: Duration = Duration::from_secs(1200);

fn tools() -> Registry {
    let mut registry = Registry::new();
    registry.add(Arc::new(Add)).expect("one tool");
    registry
}

fn show(label: &str, value: &Value) {
    println!("{label}: {value}");
}

#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn a_forced_tool_call_is_schema_valid_and_runs() {
    let declared = [ToolDeclaration::of(&Add)];
    let reply = model()
        .complete_blocking(Request {
            messages: &[
                Message::system("You add numbers with the `add` tool."),
                Message::user("What is 2 + 3?"),
            ],
            tools: &declared,
            tool_choice: &ToolChoice::Tool("add".into()),
            deadline: None,
            max_tokens: None,
            temperature: None,
        })
        .expect("a reply");
    let call = reply.message.tool_calls.first().expect("a tool call");
    show(
        "forced call",
        &json!({"name": call.name, "arguments": call.arguments}),
    );
    assert_eq!(call.name, "add");
    // Schema-valid as sent: the strict policy refuses any repair.
    let output = tools()
        .call_blocking(
            "add",
            Arguments::Json(&call.arguments),
            toolsmith::Context::new().with_policy(Policy::strict()),
        )
        .expect("schema-valid arguments that run");
    show("forced call output", &json!(output.as_text()));
}

#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn predict_gets_a_typed_answer_through_the_forced_finish_tool() {
    let answer = Predict::<QuestionAnswer>::new(Arc::new(model()))
        .expect("a predictor")
        .timeout(RUN_TIMEOUT)
        .call_blocking(&Question {
            question: "What is the capital of France?".into(),
        })
        .expect("an answer");
    show("predict answer", &answer.value);
    assert!(!answer.output.answer.trim().is_empty());
    assert_eq!(answer.lm_calls, 1 + answer.trajectory.len());
}

#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn react_with_the_tool_forced_runs_it_and_reads_the_result() {
    let agent = ReAct::<QuestionAnswer>::new(Arc::new(model()), &tools())
        .expect("an agent")
        .tool_choice(ToolChoice::Tool("add".into()))
        .max_steps(2)
        .timeout(RUN_TIMEOUT);
    let error = agent
        .run_blocking(&Question {
            question: "What is 2 + 3?".into(),
        })
        .expect_err("forced to call `add`, it never finishes");
    let steps: Vec<Value> = error.trajectory().iter().map(|s| s.to_json()).collect();
    show("forced react steps", &json!(steps));
    assert!(matches!(error, AgentError::MaxSteps { .. }), "{error}");
    assert_eq!(error.trajectory().len(), 2);
    for step in error.trajectory() {
        assert_eq!((step.tool.as_str(), step.error), ("add", None), "{step:?}");
    }
}

#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn free_choice_ends_in_an_answer_or_a_well_formed_error() {
    let agent = ReAct::<QuestionAnswer>::new(Arc::new(model()), &tools())
        .expect("an agent")
        .max_steps(4)
        .timeout(RUN_TIMEOUT);
    let result = agent.run_blocking(&Question {
        question: "What is 2 + 3? Use the add tool.".into(),
    });
    match &result {
        Ok(answer) => {
            let steps: Vec<Value> = answer.trajectory.iter().map(|s| s.to_json()).collect();
            show(
                "free choice answer",
                &json!({"answer": answer.value, "steps": steps, "lm_calls": answer.lm_calls}),
            );
        }
        Err(error) => {
            let steps: Vec<Value> = error.trajectory().iter().map(|s| s.to_json()).collect();
            show(
                "free choice error",
                &json!({"error": error.to_string(), "steps": steps}),
            );
        }
    }
    assert!(
        matches!(result, Ok(_) | Err(AgentError::MaxSteps { .. })),
        "the model server failed: {:?}",
        result.err()
    );
}

#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn a_streamed_reply_is_the_one_complete_gives() {
    let messages = [
        Message::system("Answer in one short sentence."),
        Message::user("What is the capital of France?"),
    ];
    let request = Request {
        messages: &messages,
        tools: &[],
        tool_choice: &ToolChoice::Auto,
        deadline: None,
        max_tokens: None,
        temperature: None,
    };
    let model = model();
    let whole = model.complete_blocking(request).expect("a reply");
    let (streamed, deltas) = model.stream_blocking(request);
    let streamed = streamed.expect("a streamed reply");
    show(
        "streamed reply",
        &json!({"text": streamed.message.content, "deltas": deltas.len(),
                "usage": streamed.usage.map(|u| (u.input_tokens, u.output_tokens))}),
    );
    let text = streamed.message.content.clone().unwrap_or_default();
    assert!(!text.trim().is_empty());
    assert_eq!(text_of(&deltas), text);
    // Greedy decoding (temperature 0): the same message, streamed or not.
    assert_eq!(streamed.message, whole.message);
}

#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn a_streamed_forced_tool_call_is_schema_valid_and_runs() {
    let declared = [ToolDeclaration::of(&Add)];
    let (reply, deltas) = model().stream_blocking(Request {
        messages: &[
            Message::system("You add numbers with the `add` tool."),
            Message::user("What is 2 + 3?"),
        ],
        tools: &declared,
        tool_choice: &ToolChoice::Tool("add".into()),
        deadline: None,
        max_tokens: None,
        temperature: None,
    });
    let reply = reply.expect("a streamed reply");
    let call = reply.message.tool_calls.first().expect("a tool call");
    show(
        "streamed forced call",
        &json!({"name": call.name, "arguments": call.arguments}),
    );
    assert_eq!(calls_of(&deltas), [(0, call.id.clone(), "add".to_owned())]);
    tools()
        .call_blocking(
            "add",
            Arguments::Json(&call.arguments),
            toolsmith::Context::new().with_policy(Policy::strict()),
        )
        .expect("schema-valid arguments that run");
}

/// Multiplies two integers (an async tool, awaited in the run).
#[toolsmith::tool]
async fn multiply(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> i64 {
    a * b
}

/// A ReAct run awaited on a multi-threaded tokio runtime, over a sync and an async tool, the
/// model streaming and made to call the async one (this server's grammar holds a named tool,
/// not `required`): each call reported as it starts and as it is answered, every one run.
#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn an_async_streaming_run_over_two_tools_runs_the_forced_async_one() {
    use std::sync::Mutex;
    use toolsmith_agent::Event;

    let mut registry = tools();
    registry.add(Arc::new(Multiply)).expect("a second tool");
    let agent = ReAct::<QuestionAnswer>::new(Arc::new(model()), &registry)
        .expect("an agent")
        .tool_choice(ToolChoice::Tool("multiply".into()))
        .max_steps(2)
        .timeout(RUN_TIMEOUT);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let seen = Mutex::new(Vec::new());
    let events = |event: Event| seen.lock().expect("not poisoned").push(event);
    let question = Question {
        question: "What is 6 times 7? Use the multiply tool.".into(),
    };
    let result =
        runtime.block_on(agent.run_streaming(&question, toolsmith::Context::new(), &events));
    let trajectory = match &result {
        Ok(answer) => answer.trajectory.clone(),
        Err(error) => error.trajectory().to_vec(),
    };
    let steps: Vec<Value> = trajectory.iter().map(|s| s.to_json()).collect();
    show(
        "async streaming run",
        &json!({"steps": steps, "ok": result.is_ok()}),
    );
    assert!(
        matches!(result, Err(AgentError::MaxSteps { .. })),
        "forced to call `multiply`, it never finishes: {:?}",
        result.map(|answer| answer.value)
    );
    let seen = seen.into_inner().expect("not poisoned");
    let started = seen
        .iter()
        .filter(|event| matches!(event, Event::ToolCall { .. }))
        .count();
    let answered: Vec<&toolsmith_agent::Step> = seen
        .iter()
        .filter_map(|event| match event {
            Event::ToolResult(step) => Some(step),
            _ => None,
        })
        .collect();
    assert_eq!(started, 2, "{seen:?}");
    assert_eq!(answered.len(), 2, "{seen:?}");
    for (step, reported) in trajectory.iter().zip(&answered) {
        assert_eq!(
            (step.tool.as_str(), step.error),
            ("multiply", None),
            "{step:?}"
        );
        assert_eq!(step, *reported);
    }
}

/// An approval round trip: the forced call waits, is rejected with a reason, and the next
/// request the model answers carries that reason as the call's result.
#[test]
#[ignore = "needs a model server: cargo xtask e2e"]
fn a_rejection_reason_reaches_the_model() {
    use toolsmith_agent::{Decisions, Role};

    let agent = ReAct::<QuestionAnswer>::new(Arc::new(model()), &tools())
        .expect("an agent")
        .tool_choice(ToolChoice::Tool("add".into()))
        .needs_approval(|call| call.name == "add")
        .max_steps(2)
        .timeout(RUN_TIMEOUT);
    let question = Question {
        question: "What is 2 + 3?".into(),
    };
    let first = match agent.run_blocking(&question) {
        Err(AgentError::Paused(paused)) => *paused,
        other => panic!("the forced call waits for approval: {other:?}"),
    };
    assert_eq!(first.pending()[0].tool, "add");
    let reason = "the user wants the sum worked out by hand";
    let decisions = Decisions::new().reject(first.pending()[0].id.clone(), reason);
    // Through JSON, as a decision made elsewhere would come back.
    let first: toolsmith_agent::Paused =
        serde_json::from_str(&serde_json::to_string(&first).expect("serializable"))
            .expect("readable");
    let second = match agent.resume_blocking(first, decisions) {
        Err(AgentError::Paused(paused)) => *paused,
        other => panic!("forced again, the model's next call waits again: {other:?}"),
    };
    show(
        "approval round trip",
        &json!({"messages": second.messages().len(), "lm_calls": second.lm_calls()}),
    );
    assert_eq!(second.lm_calls(), 2);
    // The request that gave the second reply held the rejection, in the model's own words.
    let told = second
        .messages()
        .iter()
        .filter(|message| message.role == Role::Tool)
        .filter_map(|message| message.content.as_deref())
        .any(|content| content.contains(reason));
    assert!(told, "{:?}", second.messages());
    assert_eq!(second.trajectory()[0].error, Some("rejected"));
}
