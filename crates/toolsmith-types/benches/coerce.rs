//! What coercion costs: the arguments of the reference's `create_task(task: TaskRequest)` tool,
//! coerced then deserialized (`deserialize_arguments`, what a tool runtime calls), against plain
//! `serde_json::from_str` into the same Rust types, in the same run; a messy variant that needs
//! repairs; and the path through a `serde_json::Value` (`coerce_arguments` + `from_value`),
//! stage by stage. And, where the peer environment has it (`cargo xtask bench coerce` installs
//! it), pydantic's `TypeAdapter.validate_json` on the same payload into the same model, timed in
//! its own process and printed as a ratio to plain serde from this run.
//!
//! A plain timing loop (no harness). The cases are measured in interleaved rounds (one batch of
//! each case per round, batches sized to about 20 ms), so a slow spell of a shared machine hits
//! every case alike; each ratio is the median of the per-round ratios to plain serde. Run with
//! `cargo xtask bench`.

use std::hint::black_box;
use std::process::ExitCode;

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};

use serde::Deserialize;
use toolsmith_types::{
    Arguments, Definitions, Describe, EnumType, Field, Policy, StructType, Type, TypeGraph, coerce,
    coerce_arguments, define, deserialize_arguments, parse_arguments,
};

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Priority {
    Low,
    Medium,
    High,
}

#[derive(Debug, PartialEq, Deserialize)]
struct TaskMetadata {
    id: String,
    priority: Priority,
    tags: Vec<String>,
    estimated_hours: Option<f64>,
}

#[derive(Debug, PartialEq, Deserialize)]
struct TaskRequest {
    title: String,
    description: String,
    status: Status,
    metadata: TaskMetadata,
    assignees: Vec<String>,
}

/// The tool's arguments: `create_task(task: TaskRequest)`.
#[derive(Debug, PartialEq, Deserialize)]
struct CreateTaskArgs {
    task: TaskRequest,
}

impl Describe for Status {
    fn describe(defs: &mut Definitions) -> Type {
        define(defs, "Status", |_| {
            Type::Enum(EnumType::strings(["pending", "in_progress", "completed"]))
        })
    }
}

impl Describe for Priority {
    fn describe(defs: &mut Definitions) -> Type {
        define(defs, "Priority", |_| {
            Type::Enum(EnumType::strings(["low", "medium", "high"]))
        })
    }
}

impl Describe for TaskMetadata {
    fn describe(defs: &mut Definitions) -> Type {
        define(defs, "TaskMetadata", |defs| {
            Type::Struct(
                StructType::new("TaskMetadata")
                    .field(Field::new("id", String::describe(defs)))
                    .field(Field::new("priority", Priority::describe(defs)))
                    .field(Field::new("tags", Vec::<String>::describe(defs)))
                    .field(Field::new("estimated_hours", Option::<f64>::describe(defs)).optional()),
            )
        })
    }
}

impl Describe for TaskRequest {
    fn describe(defs: &mut Definitions) -> Type {
        define(defs, "TaskRequest", |defs| {
            Type::Struct(
                StructType::new("TaskRequest")
                    .field(Field::new("title", String::describe(defs)))
                    .field(Field::new("description", String::describe(defs)))
                    .field(Field::new("status", Status::describe(defs)))
                    .field(Field::new("metadata", TaskMetadata::describe(defs)))
                    .field(Field::new("assignees", Vec::<String>::describe(defs))),
            )
        })
    }
}

impl Describe for CreateTaskArgs {
    fn describe(defs: &mut Definitions) -> Type {
        Type::Struct(StructType::anonymous().field(Field::new("task", TaskRequest::describe(defs))))
    }
}

const CLEAN: &str = r#"{
  "task": {
    "title": "Ship the coercion benchmark",
    "description": "Measure coercion plus deserialization against plain serde_json.",
    "status": "in_progress",
    "metadata": {
      "id": "TASK-1042",
      "priority": "high",
      "tags": ["backend", "performance", "json"],
      "estimated_hours": 3.5
    },
    "assignees": ["alice", "bob"]
  }
}"#;

const MESSY: &str = r#"{
  "task": {
    "title": "Ship the coercion benchmark",
    "description": "Measure coercion plus deserialization against plain serde_json.",
    "status": "In-Progress",
    "metadata": {
      "id": "TASK-1042",
      "priority": "HIGH",
      "tags": "[\"backend\", \"performance\", \"json\"]",
      "estimated_hours": "3.5"
    },
    "assignees": ["alice", "bob"]
  }
}"#;

/// Target for coerce + deserialize of clean arguments, relative to plain serde.
const TARGET_RATIO: f64 = 1.5;

/// The same arguments as a pydantic model, validated from JSON text read on stdin; prints the
/// median nanoseconds per `validate_json` over rounds of batches of about 20 ms.
const PYDANTIC: &str = r#"
import sys, time
from typing import List, Literal, Optional
from pydantic import BaseModel, TypeAdapter

class TaskMetadata(BaseModel):
    id: str
    priority: Literal["low", "medium", "high"]
    tags: List[str]
    estimated_hours: Optional[float] = None

class TaskRequest(BaseModel):
    title: str
    description: str
    status: Literal["pending", "in_progress", "completed"]
    metadata: TaskMetadata
    assignees: List[str]

class CreateTaskArgs(BaseModel):
    task: TaskRequest

adapter = TypeAdapter(CreateTaskArgs)
payload = sys.stdin.read()
assert adapter.validate_json(payload).task.metadata.tags == ["backend", "performance", "json"]
batch, started = 0, time.perf_counter()
while time.perf_counter() - started < 0.1:
    adapter.validate_json(payload)
    batch += 1
batch = max(1, batch // 5)
rounds = []
for _ in range(41):
    started = time.perf_counter_ns()
    for _ in range(batch):
        adapter.validate_json(payload)
    rounds.append((time.perf_counter_ns() - started) / batch)
rounds.sort()
print(rounds[len(rounds) // 2])
"#;

/// pydantic's median ns per `validate_json` of `payload`, when the peer environment has it.
fn pydantic_ns(payload: &str) -> Result<f64, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let python =
        toolsmith_testkit::peer("python").ok_or("no peer environment (run `cargo xtask setup`)")?;
    let mut child = Command::new(python)
        .args(["-c", PYDANTIC])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start python: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(payload.as_bytes())
            .map_err(|e| format!("cannot write to python: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("python failed: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(stderr.lines().last().unwrap_or("python failed").to_owned());
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("unexpected output from python: {e}"))
}

fn expected() -> CreateTaskArgs {
    CreateTaskArgs {
        task: TaskRequest {
            title: "Ship the coercion benchmark".to_owned(),
            description: "Measure coercion plus deserialization against plain serde_json."
                .to_owned(),
            status: Status::InProgress,
            metadata: TaskMetadata {
                id: "TASK-1042".to_owned(),
                priority: Priority::High,
                tags: vec![
                    "backend".to_owned(),
                    "performance".to_owned(),
                    "json".to_owned(),
                ],
                estimated_hours: Some(3.5),
            },
            assignees: vec!["alice".to_owned(), "bob".to_owned()],
        },
    }
}

fn plain(text: &str) -> Result<CreateTaskArgs, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// What a tool runtime calls: coercion and deserialization in one (clean text skips the
/// `Value` tree).
fn coerced(graph: &TypeGraph, policy: &Policy, text: &str) -> Result<CreateTaskArgs, String> {
    deserialize_arguments(graph, Arguments::Text(text), policy)
        .map(|out| out.value)
        .map_err(|e| e.to_string())
}

/// The same through the `Value` tree every time: `coerce_arguments`, then `from_value`.
fn via_value(graph: &TypeGraph, policy: &Policy, text: &str) -> Result<CreateTaskArgs, String> {
    let out = coerce_arguments(graph, Arguments::Text(text), policy).map_err(|e| e.to_string())?;
    serde_json::from_value(out.value).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let graph = CreateTaskArgs::type_graph();
    let policy = Policy::default();
    let want = expected();

    // Each case must produce the same arguments before its speed means anything.
    let checks = [
        ("plain serde (clean)", plain(CLEAN)),
        (
            "deserialize_arguments (clean)",
            coerced(&graph, &policy, CLEAN),
        ),
        (
            "deserialize_arguments (messy)",
            coerced(&graph, &policy, MESSY),
        ),
        ("via Value (clean)", via_value(&graph, &policy, CLEAN)),
    ];
    for (name, result) in &checks {
        match result {
            Ok(args) if *args == want => {}
            Ok(args) => {
                eprintln!("bench coerce: {name} produced different arguments: {args:?}");
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("bench coerce: {name} failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let parsed = match parse_arguments(CLEAN, &policy) {
        Ok(parsed) => serde_json::Value::Object(parsed.value),
        Err(e) => {
            eprintln!("bench coerce: parse_arguments failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (canonical, repairs) = match (
        coerce(&graph, &parsed, &policy),
        coerce_arguments(&graph, Arguments::Text(MESSY), &policy),
    ) {
        (Ok(clean), Ok(messy)) => (clean.value, messy.repairs.len()),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("bench coerce: coercion failed: {e}");
            return ExitCode::FAILURE;
        }
    };

    let medians = report(
        &format!(
            "create_task arguments ({} bytes clean; {} bytes messy, {repairs} repairs)",
            CLEAN.len(),
            MESSY.len()
        ),
        vec![
            Case::new("(1) serde_json::from_str, clean", || {
                plain(black_box(CLEAN))
            }),
            Case::new("(2) deserialize_arguments, clean", || {
                coerced(&graph, &policy, black_box(CLEAN))
            })
            .target(TARGET_RATIO),
            Case::new("(3) deserialize_arguments, messy", || {
                coerced(&graph, &policy, black_box(MESSY))
            }),
            Case::new("(4) coerce_arguments + from_value, clean", || {
                via_value(&graph, &policy, black_box(CLEAN))
            }),
        ],
    );
    // The peer runs in its own process after the rounds above: its ratio is to this run's
    // median for plain serde, not a median of interleaved rounds.
    match (pydantic_ns(CLEAN), medians.first(), medians.get(1)) {
        (Ok(pydantic), Some(&serde), Some(&ours)) => {
            println!("pydantic TypeAdapter.validate_json, clean (same payload and model)");
            println!("{:<44} {:>9} {:>8}", "case", "ns/op", "ratio");
            println!(
                "{:<44} {serde:>9.0} {:>7.2}x",
                "(1) serde_json::from_str, clean", 1.0
            );
            println!(
                "{:<44} {ours:>9.0} {:>7.2}x",
                "(2) deserialize_arguments, clean",
                ours / serde
            );
            println!(
                "{:<44} {pydantic:>9.0} {:>7.2}x",
                "pydantic validate_json, clean",
                pydantic / serde
            );
            println!(
                "deserialize_arguments is {:.2}x pydantic's time\n",
                ours / pydantic
            );
        }
        (Err(why), ..) => println!("pydantic: not measured ({why})\n"),
        _ => {}
    }
    report(
        "stages of (4), each timed alone, against (1)",
        vec![
            Case::new("(1) serde_json::from_str, clean", || {
                plain(black_box(CLEAN))
            }),
            Case::new("parse_arguments (text to Value)", || {
                parse_arguments(black_box(CLEAN), &policy).map(|p| p.value.len())
            }),
            Case::new("for scale: from_str::<Value>", || {
                serde_json::from_str::<serde_json::Value>(black_box(CLEAN)).is_ok()
            }),
            Case::new("coerce (Value to canonical Value)", || {
                coerce(&graph, black_box(&parsed), &policy).map(|c| c.repairs.len())
            }),
            Case::new("serde_json::from_value (of a clone)", || {
                serde_json::from_value::<CreateTaskArgs>(black_box(canonical.clone())).is_ok()
            }),
            Case::new("a Value clone alone", || black_box(canonical.clone())),
        ],
    );
    ExitCode::SUCCESS
}
