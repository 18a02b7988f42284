//! What a tool call costs on top of the function it runs: a trivial tool called through
//! `Registry::call` with the default layers (lookup by name, the `Trace` and `CatchPanic`
//! layers with no tracing subscriber listening, reading and coercing the argument text,
//! invocation, rendering the output) against the hand-written dispatch a program without
//! toolsmith would write (serde reads the arguments, the function runs, the result is
//! formatted); the same tool written `async`, its future polled to its end by a trivial
//! executor; and declaring every registered tool in each dialect, written afresh (cold)
//! against lent from the registry's cache (`RegisteredTool::declaration`, what a server
//! answering `tools/list` or an agent declaring its tools every turn calls).
//!
//! Run with `cargo xtask bench registry`.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::task::{Poll, Waker};

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};
use serde::{Deserialize, Serialize};
use toolsmith::{
    Arguments, Context, Dialect, Limits, Registry, Tool, ToolFuture, ToolResult, ToolType, envelope,
};

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Adds two integers, as an async tool.
#[toolsmith::tool]
async fn add_async(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

fn roomy() -> Limits {
    Limits {
        max_string_bytes: 64 << 20,
        ..Limits::default()
    }
}

/// Adds two integers, stating its own argument limits.
#[toolsmith::tool(limits = roomy)]
fn add_stated(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// The arguments a hand-written dispatcher would declare for `add`.
#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn hand_dispatch(text: &str) -> Result<String, String> {
    let args: AddArgs = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(add(args.a, args.b).to_string())
}

/// How urgent a task is.
#[derive(Debug, Serialize, Deserialize, ToolType)]
enum Priority {
    Low,
    Medium,
    High,
}

/// Bookkeeping about a task.
#[derive(Debug, Serialize, Deserialize, ToolType)]
struct TaskMetadata {
    /// Labels.
    tags: Vec<String>,
    /// Estimate, in hours.
    estimated_hours: Option<f64>,
}

/// A task to create.
#[derive(Debug, Serialize, Deserialize, ToolType)]
struct TaskRequest {
    /// A short title.
    title: String,
    /// How urgent it is.
    priority: Priority,
    /// Bookkeeping.
    metadata: TaskMetadata,
}

/// Creates a task.
#[toolsmith::tool]
fn create_task(task: TaskRequest) -> String {
    task.title
}

/// Looks up the weather.
#[toolsmith::tool]
fn weather_lookup(city: String, units: Option<String>) -> String {
    format!("{city} {units:?}")
}

/// A stand-in database.
#[derive(Default)]
struct DatabaseToolset;

#[toolsmith::toolset(name = "db")]
impl DatabaseToolset {
    /// Runs a query.
    #[tool]
    fn query(&self, sql: String, limit: Option<u32>) -> String {
        format!("{sql} {limit:?}")
    }
    /// Inserts a row.
    #[tool]
    fn insert(&self, table: String, row: std::collections::BTreeMap<String, String>) -> String {
        format!("{table} {}", row.len())
    }
    /// Deletes a row.
    #[tool(destructive)]
    fn delete(&self, table: String, id: u64) -> String {
        format!("{table} {id}")
    }
}

const ARGS: &str = r#"{"a": 2, "b": 40}"#;

/// The trivial executor: polls `future` with a waker that does nothing until it answers
/// (every future here answers on its first poll; the loop is what an executor would do).
fn poll_to_end<F: Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(Waker::noop());
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// A call's answer as text, for the checks.
fn text(result: ToolResult) -> Result<String, String> {
    result
        .map(|o| o.as_text().into_owned())
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let registry = match toolsmith::registry() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("bench registry: {error}");
            return ExitCode::FAILURE;
        }
    };
    let bare = registry.clone().with_layers(Vec::new());
    let call = |registry: &Registry, name: &str| -> ToolResult {
        poll_to_end(registry.call(
            black_box(name),
            Arguments::Text(black_box(ARGS)),
            Context::new(),
        ))
    };

    // Every path must give the same answer before its speed means anything.
    let checks = [
        ("hand dispatch", hand_dispatch(ARGS)),
        ("Registry::call", text(call(registry, "add"))),
        (
            "Registry::call of an async tool",
            text(call(registry, "add_async")),
        ),
        ("Registry::call without layers", text(call(&bare, "add"))),
        ("a tool stating limits", text(call(registry, "add_stated"))),
        (
            "Registry::call_blocking",
            text(registry.call_blocking("add", Arguments::Text(ARGS), Context::new())),
        ),
    ];
    for (name, result) in checks {
        if result.as_deref() != Ok("42") {
            eprintln!("bench registry: {name} gave {result:?}");
            return ExitCode::FAILURE;
        }
    }
    let tool: Arc<dyn Tool> = Arc::new(Add);
    if !matches!(
        registry
            .call("add", Arguments::Text(ARGS), Context::new())
            .into_ready(),
        Ok(Ok(_))
    ) {
        eprintln!("bench registry: a sync tool's call was not ready when made");
        return ExitCode::FAILURE;
    }

    report(
        "a trivial tool, add(a, b), called with the text {\"a\": 2, \"b\": 40}: the default \
         layers (Trace, CatchPanic; no tracing subscriber), the future polled to its end by a \
         noop-waker loop (ratios to the hand-written dispatch)",
        vec![
            Case::new("hand dispatch: serde_json::from_str + call", || {
                hand_dispatch(black_box(ARGS))
            }),
            Case::new("Registry::call of fn add", || call(registry, "add")).target(1.6),
            Case::new("Registry::call of async fn add", || {
                call(registry, "add_async")
            })
            .target(1.6),
        ],
    );
    report(
        "where the time goes: the same call by other ways (ratios to the hand-written dispatch)",
        vec![
            Case::new("hand dispatch: serde_json::from_str + call", || {
                hand_dispatch(black_box(ARGS))
            }),
            Case::new("direct Rust call add(2, 40)", || {
                add(black_box(2), black_box(40))
            }),
            Case::new("Tool::call (coercion + invocation)", || {
                poll_to_end(tool.call(Arguments::Text(black_box(ARGS)), Context::new()))
            }),
            Case::new("Registry::call without layers", || call(&bare, "add")),
            Case::new("Registry::call of a tool stating limits", || {
                call(registry, "add_stated")
            }),
            Case::new("Registry::call_blocking (block_on)", || {
                registry.call_blocking(
                    black_box("add"),
                    Arguments::Text(black_box(ARGS)),
                    Context::new(),
                )
            }),
            Case::new("ToolFuture::ready + poll (the future alone)", || {
                poll_to_end(ToolFuture::ready(Ok(toolsmith::ToolOutput::text("42"))))
            }),
        ],
    );

    // Every dialect's declaration of every tool; a dialect that cannot take a tool (a recursive
    // type for Gemini) still pays for finding out, which is what a caller pays too.
    let declare_all = |registry: &Registry, dialect: Dialect, cached: bool| {
        registry
            .iter()
            .map(|entry| {
                let fields =
                    |declared: &serde_json::Value| declared.as_object().map_or(0, |o| o.len());
                if cached {
                    entry.declaration(dialect).map(|d| fields(&d))
                } else {
                    envelope(entry.tool().as_ref(), dialect).map(|d| fields(&d))
                }
                .unwrap_or(1)
            })
            .sum::<usize>()
    };
    for dialect in Dialect::ALL {
        if declare_all(registry, dialect, true) != declare_all(registry, dialect, false) {
            eprintln!(
                "bench registry: the cached declarations in {dialect} differ from fresh ones"
            );
            return ExitCode::FAILURE;
        }
    }
    let tools = registry.len().max(1) as f64;
    let mut rows = Vec::new();
    for dialect in Dialect::ALL {
        let medians = report(
            &format!(
                "every registered tool ({} tools) declared in {dialect}: cached against written afresh",
                registry.len()
            ),
            vec![
                Case::new("written afresh (cold): envelope", || {
                    declare_all(black_box(registry), dialect, false)
                }),
                Case::new("lent from the cache: RegisteredTool::declaration", || {
                    declare_all(black_box(registry), dialect, true)
                }),
            ],
        );
        rows.push((dialect, medians));
    }
    println!(
        "{:<20} {:>14} {:>14} {:>8}",
        "dialect", "cold us/tool", "cached us/tool", "target"
    );
    for (dialect, medians) in rows {
        let per_tool = |i: usize| medians.get(i).copied().unwrap_or(f64::NAN) / tools / 1000.0;
        println!(
            "{:<20} {:>14.2} {:>14.3} {:>8}",
            dialect.as_str(),
            per_tool(0),
            per_tool(1),
            "0.100"
        );
    }
    ExitCode::SUCCESS
}
