//! What the agent loop costs on top of the model: a question answered by `ReAct` over a model
//! that replies at once from a fixed script (so every nanosecond measured is the framework's:
//! prompts, declarations, coercion of arguments and answer, tool calls, the trajectory), against
//! the loop a program without toolsmith would write by hand over the same replies (serde reads
//! each call's arguments into a struct, the function runs, the messages are built as JSON).
//! The same run over async tools shows what handing a sync tool to another thread costs: the
//! agent runs each sync tool off the thread that polls the calls, so that its run deadline holds
//! over it. The sync cases run twice: on the agent's default offload, and on a new thread per
//! call (`ThreadPerCall`, the default before the pool: "today"), whose figure the default's is
//! compared with.
//!
//! The `ReAct::run` cases are answered by `run_blocking`, which enters a tokio runtime of the
//! thread for each run (where the HTTP clients and tokio-based tools work). The target case,
//! `ReAct::run(..).await`, is the async run itself, as a caller on any executor awaits it: its
//! future polled to its end by a trivial executor, beside the blocking run of the same agent.
//!
//! Also prints the LM calls each scenario needs to answer its question. Run with
//! `cargo xtask bench agent`. `react --repeat CASE N` runs only the case named `CASE` (as
//! printed) `N` times, untimed: what `valgrind --tool=callgrind` counts instructions over.

use std::process::ExitCode;
use std::sync::Arc;

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};
use serde::Deserialize;
use serde_json::json;
use toolsmith::{Registry, ThreadPerCall};
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

/// One step of `n` parallel calls, then the answer.
fn parallel(n: usize) -> Vec<Message> {
    let batch = vec![("add", r#"{"a": 1, "b": 2}"#); n];
    vec![calls(&batch), calls(&[("finish", r#"{"answer": "3"}"#)])]
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

/// The targets: the framework's time per step (async tools, so that no thread is measured)
/// against the hand-written loop's, and how much faster than a thread per call the default
/// offload must run a step of 8 parallel sync calls.
const STEP_TARGET: f64 = 1.5;
const STEP_TARGET_CASE: &str = "ReAct::run(..).await, 3 steps, async tools";
/// The agent the target case awaits (the blocking case of the same agent is timed beside it).
const AWAITED_OF: &str = "ReAct::run, 3 steps, async tools";
const PARALLEL_SPEEDUP_TARGET: f64 = 5.0;

/// The agent cases: name, steps per question, and the agent.
type Agents = Vec<(&'static str, f64, ReAct<QuestionAnswer>)>;

fn agents() -> Result<Agents, String> {
    let mut tools = Registry::new();
    tools
        .add(Arc::new(Add))
        .and_then(|tools| tools.add(Arc::new(Multiply)))
        .map_err(|e| format!("the tools cannot be registered: {e}"))?;
    let mut async_tools = Registry::new();
    async_tools
        .add(Arc::new(AddAsync))
        .and_then(|tools| tools.add(Arc::new(MultiplyAsync)))
        .map_err(|e| format!("the async tools cannot be registered: {e}"))?;
    let agent = |tools: &Registry, script: Vec<Message>| {
        ReAct::<QuestionAnswer>::new(Arc::new(Replay(script)), tools)
            .map(|a| a.max_steps(10))
            .map_err(|e| format!("the agent cannot be built: {e}"))
    };
    let today = |agent: ReAct<QuestionAnswer>| agent.offload(Arc::new(ThreadPerCall));
    Ok(vec![
        ("ReAct::run, 3 steps", 3.0, agent(&tools, three_steps())?),
        (
            "ReAct::run, 3 steps, thread per call",
            3.0,
            today(agent(&tools, three_steps())?),
        ),
        (
            "ReAct::run, 3 steps, async tools",
            3.0,
            agent(&async_tools, three_steps())?,
        ),
        ("ReAct::run, messy, 4 steps", 4.0, agent(&tools, messy())?),
        (
            "ReAct::run, 4 parallel calls",
            2.0,
            agent(&tools, parallel(4))?,
        ),
        (
            "ReAct::run, 4 parallel, thread per call",
            2.0,
            today(agent(&tools, parallel(4))?),
        ),
        (
            "ReAct::run, 8 parallel calls",
            2.0,
            agent(&tools, parallel(8))?,
        ),
        (
            "ReAct::run, 8 parallel, thread per call",
            2.0,
            today(agent(&tools, parallel(8))?),
        ),
        (
            "ReAct::run, 8 parallel, async tools",
            2.0,
            agent(&async_tools, parallel(8))?,
        ),
    ])
}

/// The trivial executor: polls `future` with a waker that does nothing until it answers
/// (every future here answers on its first poll; the loop is what an executor would do).
fn poll_to_end<F: std::future::Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

fn main() -> ExitCode {
    let question = Question {
        question: "What is (2 + 3) x 4?".into(),
    };
    let agents = match agents() {
        Ok(agents) => agents,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let predict = Predict::<QuestionAnswer>::new(Arc::new(Replay(vec![calls(&[(
        "finish",
        r#"{"answer": "20"}"#,
    )])])));
    let Ok(predict) = predict else {
        eprintln!("the predictor cannot be built");
        return ExitCode::FAILURE;
    };
    let script = three_steps();
    let Some((_, awaited_steps, awaited)) = agents.iter().find(|(n, ..)| *n == AWAITED_OF) else {
        eprintln!("no case is named `{AWAITED_OF}`");
        return ExitCode::FAILURE;
    };

    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--repeat") {
        let (Some(name), Some(Ok(count))) =
            (args.get(at + 1), args.get(at + 2).map(|n| n.parse::<u64>()))
        else {
            eprintln!("usage: react --repeat CASE N");
            return ExitCode::FAILURE;
        };
        for _ in 0..count {
            let ran = match name.as_str() {
                "hand-written loop (peer)" => hand_loop(&script, "q").is_some(),
                "Predict::call, 1 step" => predict.call_blocking(&question).is_ok(),
                STEP_TARGET_CASE => poll_to_end(awaited.run(&question)).is_ok(),
                name => match agents.iter().find(|(case, ..)| *case == name) {
                    Some((_, _, agent)) => agent.run_blocking(&question).is_ok(),
                    None => {
                        eprintln!("no case is named `{name}`");
                        return ExitCode::FAILURE;
                    }
                },
            };
            if !ran {
                eprintln!("{name}: no answer");
                return ExitCode::FAILURE;
            }
        }
        return ExitCode::SUCCESS;
    }

    println!("LM calls per answered question (scripted replies):");
    for (name, _, agent) in &agents {
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

    let mut cases = vec![Case::new("hand-written loop (peer)", || {
        hand_loop(&script, "q")
    })];
    for (name, _, agent) in &agents {
        cases.push(Case::new(*name, || agent.run_blocking(&question).is_ok()));
    }
    cases.push(
        Case::new(STEP_TARGET_CASE, || {
            poll_to_end(awaited.run(&question)).is_ok()
        })
        .target(STEP_TARGET * awaited_steps / 3.0),
    );
    cases.push(Case::new("Predict::call, 1 step", || {
        predict.call_blocking(&question).is_ok()
    }));
    let medians = report(
        "A question answered by ReAct, model time excluded (the peer answers in 3 steps)",
        cases,
    );

    let peer_step = medians[0] / 3.0;
    println!("framework time per ReAct step (ns), and per step against the hand-written loop's:");
    println!(
        "  {:<44} {:>9.0}  {:>6.2}x",
        "hand-written loop (peer)", peer_step, 1.0
    );
    for ((name, steps, _), ns) in agents.iter().zip(&medians[1..]) {
        let step = ns / steps;
        println!("  {name:<44} {step:>9.0}  {:>6.2}x", step / peer_step);
    }
    let awaited_step = medians[agents.len() + 1] / awaited_steps;
    println!(
        "  {STEP_TARGET_CASE:<44} {awaited_step:>9.0}  {:>6.2}x  (target {STEP_TARGET:.1}x)",
        awaited_step / peer_step
    );
    if let Some(predict) = medians.last() {
        println!("  {:<44} {predict:>9.0}", "Predict::call, 1 step");
    }
    println!();
    println!("the default offload against a new thread per call (today), per step:");
    let median_of = |name: &str| {
        agents
            .iter()
            .position(|(case, ..)| *case == name)
            .map(|i| medians[i + 1])
    };
    for (default, today, target) in [
        (
            "ReAct::run, 3 steps",
            "ReAct::run, 3 steps, thread per call",
            None,
        ),
        (
            "ReAct::run, 4 parallel calls",
            "ReAct::run, 4 parallel, thread per call",
            None,
        ),
        (
            "ReAct::run, 8 parallel calls",
            "ReAct::run, 8 parallel, thread per call",
            Some(PARALLEL_SPEEDUP_TARGET),
        ),
    ] {
        if let (Some(new), Some(old)) = (median_of(default), median_of(today)) {
            let target = target.map_or(String::new(), |t| format!("  (target {t:.1}x)"));
            println!(
                "  {default:<44} {:>6.1}x faster than a thread per call{target}",
                old / new
            );
        }
    }
    ExitCode::SUCCESS
}
