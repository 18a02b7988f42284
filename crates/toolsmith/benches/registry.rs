//! What a tool call costs on top of the function it runs: a trivial tool called through the
//! registry (lookup by name, reading and coercing the argument text, invocation, rendering the
//! output) against calling the Rust function directly, and against the hand-written dispatch a
//! program without toolsmith would write (serde reads the arguments, the function runs, the
//! result is formatted). Also what emitting every registered tool's schema costs, and declaring
//! every tool in each dialect: written afresh (cold) against taken from the tool's cache of
//! declarations (`toolsmith::declaration`, what a server answering `tools/list` calls).
//!
//! Run with `cargo xtask bench`.

use std::hint::black_box;
use std::process::ExitCode;

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};
use serde::{Deserialize, Serialize};
use toolsmith::{
    Arguments, Context, Dialect, Limits, Policy, Registry, Tool, ToolAnnotations, ToolError,
    ToolOutput, ToolType, TypeGraph, declaration,
};

/// A tool as it is, but keeping no declarations: each one is written afresh.
struct Fresh<'a>(&'a dyn Tool);

impl Tool for Fresh<'_> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn parameters(&self) -> &TypeGraph {
        self.0.parameters()
    }
    fn output(&self) -> Option<&TypeGraph> {
        self.0.output()
    }
    fn annotations(&self) -> ToolAnnotations {
        self.0.annotations()
    }
    fn limits(&self) -> Option<Limits> {
        self.0.limits()
    }
    fn call(&self, arguments: Arguments<'_>, policy: &Policy) -> Result<ToolOutput, ToolError> {
        self.0.call(arguments, policy)
    }
}

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
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

fn main() -> ExitCode {
    let registry = match toolsmith::registry() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("bench registry: {error}");
            return ExitCode::FAILURE;
        }
    };
    let policy = Policy::default();
    let tool = Add;

    // Every path must give the same answer before its speed means anything.
    let through_registry = registry
        .call_blocking(
            "add",
            Arguments::Text(ARGS),
            Context::new().with_policy(policy.clone()),
        )
        .map(|o| o.as_text());
    let stated = registry
        .call_blocking(
            "add_stated",
            Arguments::Text(ARGS),
            Context::new().with_policy(policy.clone()),
        )
        .map(|o| o.as_text());
    let checks = [
        ("hand dispatch", hand_dispatch(ARGS)),
        ("registry call", through_registry.map_err(|e| e.to_string())),
        ("a tool stating limits", stated.map_err(|e| e.to_string())),
    ];
    for (name, result) in checks {
        if result.as_deref() != Ok("42") {
            eprintln!("bench registry: {name} gave {result:?}");
            return ExitCode::FAILURE;
        }
    }

    report(
        "a trivial tool, add(a, b), called with the text {\"a\": 2, \"b\": 40} (ratios to the direct call)",
        vec![
            Case::new("direct Rust call add(2, 40)", || {
                add(black_box(2), black_box(40))
            }),
            Case::new("hand dispatch: serde_json::from_str + call", || {
                hand_dispatch(black_box(ARGS))
            }),
            Case::new("Tool::call (coercion + invocation)", || {
                tool.call_blocking(
                    Arguments::Text(black_box(ARGS)),
                    Context::new().with_policy(policy.clone()),
                )
            }),
            Case::new("Registry::call (lookup + the above)", || {
                registry.call_blocking(
                    black_box("add"),
                    Arguments::Text(black_box(ARGS)),
                    Context::new().with_policy(policy.clone()),
                )
            }),
            Case::new("Registry::call of a tool stating its own limits", || {
                registry.call(
                    black_box("add_stated"),
                    Arguments::Text(black_box(ARGS)),
                    &policy,
                )
            }),
        ],
    );
    report(
        "the same, as ratios to the hand-written dispatch",
        vec![
            Case::new("hand dispatch: serde_json::from_str + call", || {
                hand_dispatch(black_box(ARGS))
            }),
            Case::new("Registry::call", || {
                registry.call_blocking(
                    black_box("add"),
                    Arguments::Text(black_box(ARGS)),
                    Context::new().with_policy(policy.clone()),
                )
            })
            .target(2.0),
        ],
    );

    let emit_all = |registry: &Registry| {
        registry
            .iter()
            .map(|entry| {
                entry
                    .tool()
                    .call_schema()
                    .map(|s| s.to_string().len())
                    .unwrap_or(0)
            })
            .sum::<usize>()
    };
    if emit_all(registry) == 0 {
        eprintln!("bench registry: no schema was emitted");
        return ExitCode::FAILURE;
    }
    report(
        &format!(
            "call_schema() of every registered tool ({} tools; ratio to a pass reading their names)",
            registry.len()
        ),
        vec![
            Case::new("iterate the registry, reading names", || {
                registry
                    .iter()
                    .map(|e| e.tool().name().len())
                    .sum::<usize>()
            }),
            Case::new("emit every tool's call_schema", || {
                emit_all(black_box(registry))
            }),
        ],
    );

    // Every dialect's declaration of every tool; a dialect that cannot take a tool (a recursive
    // type for Gemini) still pays for finding out, which is what a caller pays too.
    let declare_all = |registry: &Registry, dialect: Dialect, cached: bool| {
        registry
            .iter()
            .map(|entry| {
                let tool = entry.tool().as_ref();
                let declared = if cached {
                    declaration(tool, dialect).map(|d| d.as_object().map_or(0, |o| o.len()))
                } else {
                    declaration(&Fresh(tool), dialect).map(|d| d.as_object().map_or(0, |o| o.len()))
                };
                declared.unwrap_or(1)
            })
            .sum::<usize>()
    };
    let tools = registry.len().max(1) as f64;
    let mut rows = Vec::new();
    for dialect in Dialect::ALL {
        let medians = report(
            &format!(
                "every registered tool ({} tools) declared in {dialect}: cached against written afresh",
                registry.len()
            ),
            vec![
                Case::new("written afresh (cold)", || {
                    declare_all(black_box(registry), dialect, false)
                }),
                Case::new("from the declaration cache", || {
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
