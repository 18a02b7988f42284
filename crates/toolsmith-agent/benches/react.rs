//! What the agent loop costs on top of the model: a question answered by `ReAct` over a model
//! that replies at once from a fixed script (so every nanosecond measured is the framework's:
//! prompts, declarations, coercion of arguments and answer, tool calls, the trajectory), against
//! the loop a program without toolsmith would write by hand over the same replies (serde reads
//! each call's arguments into a struct, the function runs, the messages are built as JSON).
//! The same run over async tools shows what a sync tool's thread costs: the agent runs each
//! sync tool on a thread of its own, so that its run deadline holds over it.
//!
//! Also prints the LM calls each scenario needs to answer its question. Run with
//! `cargo xtask bench agent`.

use std::process::ExitCode;
use std::sync::Arc;

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};
use serde::Deserialize;
use serde_json::json;
use toolsmith::Registry;
use toolsmith_agent::{
    LanguageModel, LmError, Message, Predict, Question, QuestionAnswer, ReAct, Reply, Request,
    ToolCall,
};

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Multiplies two integers.
#[toolsmith::tool]
fn multiply(a: i64, b: i64) -> i64 {
    a.wrapping_mul(b)
}

/// Adds two integers (an async tool: polled where the agent polls, no thread of its own).
#[toolsmith::tool(name = "add")]
async fn add_async(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Multiplies two integers (async).
#[toolsmith::tool(name = "multiply")]
async fn multiply_async(a: i64, b: i64) -> i64 {
    a.wrapping_mul(b)
}

/// A model that answers at once: reply N to a conversation holding N assistant messages.
/// Stateless, so one instance serves every iteration, and costs next to nothing.
struct Replay(Vec<Message>);

impl LanguageModel for Replay {
    fn dialect(&self) -> toolsmith::Dialect {
        toolsmith::Dialect::OpenAi { strict: false }
    }

    fn complete<'a>(&'a self, request: Request<'a>) -> toolsmith_agent::LmFuture<'a> {
        let turn = request
            .messages
            .iter()
            .filter(|m| m.role == toolsmith_agent::Role::Assistant)
            .count();
        let reply = self
            .0
            .get(turn)
            .cloned()
            .map(Reply::new)
            .ok_or(LmError::ScriptExhausted {
                replies: self.0.len(),
            });
        Box::pin(std::future::ready(reply))
    }
}

fn calls(calls: &[(&str, &str)]) -> Message {
    Message::tool_calls(
        calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| ToolCall::new(format!("c{i}"), *name, json!(args)))
            .collect(),
    )
}

/// Two tool steps and the answer: `add`, then `multiply`, then `finish`.
fn three_steps() -> Vec<Message> {
    vec![
        calls(&[("add", r#"{"a": 2, "b": 3}"#)]),
        calls(&[("multiply", r#"{"a": 5, "b": 4}"#)]),
        calls(&[("finish", r#"{"answer": "20"}"#)]),
    ]
}

/// A messier run: repaired arguments, one invalid call fixed on the next step, then the answer.
fn messy() -> Vec<Message> {
    vec![
        calls(&[("add", "{'a': '2', 'b': 3,}")]),
        calls(&[("multiply", r#"{"a": "five"}"#)]),
        calls(&[("multiply", r#"{"a": 5, "b": "4"}"#)]),
        calls(&[("finish", r#"{"answer": 20}"#)]),
    ]
}

/// One step of four parallel calls, then the answer.
fn parallel() -> Vec<Message> {
    let four = [r#"{"a": 1, "b": 2}"#; 4].map(|args| ("add", args));
    vec![calls(&four), calls(&[("finish", r#"{"answer": "3"}"#)])]
}

#[derive(Deserialize)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(Deserialize)]
struct Finish {
    answer: String,
}

/// The loop by hand over the same replies: what the framework is compared against.
fn hand_loop(script: &[Message], question: &str) -> Option<String> {
    let mut messages = vec![
        json!({"role": "system", "content": "Answer the question."}),
        json!({"role": "user", "content": question}),
    ];
    for reply in script {
        let mut results = Vec::new();
        for call in &reply.tool_calls {
            let text = call.arguments.as_str().unwrap_or("{}");
            let observation = match call.name.as_str() {
                "finish" => return serde_json::from_str::<Finish>(text).ok().map(|f| f.answer),
                "add" | "multiply" => match serde_json::from_str::<Pair>(text) {
                    Ok(Pair { a, b }) if call.name == "add" => add(a, b).to_string(),
                    Ok(Pair { a, b }) => multiply(a, b).to_string(),
                    Err(e) => format!("invalid arguments: {e}"),
                },
                other => format!("no tool {other}"),
            };
            results.push(json!({"role": "tool", "tool_call_id": call.id, "content": observation}));
        }
        messages.push(json!({"role": "assistant", "tool_calls": reply.tool_calls.len()}));
        messages.extend(results);
    }
    None
}

fn main() -> ExitCode {
    let mut tools = Registry::new();
    if tools.add(Arc::new(Add)).is_err() || tools.add(Arc::new(Multiply)).is_err() {
        eprintln!("the tools cannot be registered");
        return ExitCode::FAILURE;
    }
    let question = Question {
        question: "What is (2 + 3) x 4?".into(),
    };
    let mut async_tools = Registry::new();
    if async_tools.add(Arc::new(AddAsync)).is_err()
        || async_tools.add(Arc::new(MultiplyAsync)).is_err()
    {
        eprintln!("the async tools cannot be registered");
        return ExitCode::FAILURE;
    }
    let agent_over = |tools: &Registry, script: Vec<Message>| {
        ReAct::<QuestionAnswer>::new(Arc::new(Replay(script)), tools).map(|a| a.max_steps(10))
    };
    let agent = |script: Vec<Message>| agent_over(&tools, script);
    let (Ok(clean), Ok(messy_agent), Ok(parallel_agent), Ok(clean_async)) = (
        agent(three_steps()),
        agent(messy()),
        agent(parallel()),
        agent_over(&async_tools, three_steps()),
    ) else {
        eprintln!("the agents cannot be built");
        return ExitCode::FAILURE;
    };
    let predict = Predict::<QuestionAnswer>::new(Arc::new(Replay(vec![calls(&[(
        "finish",
        r#"{"answer": "20"}"#,
    )])])));
    let Ok(predict) = predict else {
        eprintln!("the predictor cannot be built");
        return ExitCode::FAILURE;
    };

    println!("LM calls per answered question (scripted replies):");
    for (name, agent) in [
        ("clean, 2 tool steps", &clean),
        ("messy, a repair and a rejected call", &messy_agent),
        ("4 parallel calls", &parallel_agent),
    ] {
        match agent.run_blocking(&question) {
            Ok(answer) => println!(
                "  {name:<40} {} LM calls, {} tool calls",
                answer.lm_calls,
                answer.trajectory.len()
            ),
            Err(error) => {
                eprintln!("{name}: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!();

    let script = three_steps();
    let medians = report(
        "A question answered in 3 steps (2 tool calls + finish), model time excluded",
        vec![
            Case::new("hand-written loop (peer)", || hand_loop(&script, "q")),
            Case::new("ReAct::run, 3 steps", || {
                clean.run_blocking(&question).is_ok()
            }),
            Case::new("ReAct::run, 3 steps, async tools", || {
                clean_async.run_blocking(&question).is_ok()
            }),
            Case::new("ReAct::run, messy, 4 steps", || {
                messy_agent.run_blocking(&question).is_ok()
            }),
            Case::new("ReAct::run, 4 parallel calls, 2 steps", || {
                parallel_agent.run_blocking(&question).is_ok()
            }),
            Case::new("Predict::call, 1 step", || {
                predict.call_blocking(&question).is_ok()
            }),
        ],
    );
    if let [peer, clean, clean_async, messy, parallel, predict] = medians[..] {
        println!("framework time per ReAct step (ns):");
        println!(
            "  clean    {:>9.0}  (hand-written loop: {:.0})",
            clean / 3.0,
            peer / 3.0
        );
        println!("  async    {:>9.0}", clean_async / 3.0);
        println!("  messy    {:>9.0}", messy / 4.0);
        println!("  parallel {:>9.0}", parallel / 2.0);
        println!("  predict  {predict:>9.0}");
    }
    ExitCode::SUCCESS
}
