//! Raw bytes as a tool call's argument text, read the way the command line and the MCP server
//! read it: `Registry::call` with `Arguments::Text`, into tools made by `#[tool]`. Nothing may
//! panic, and four laws are checked:
//!
//! - a tool's call agrees with `coerce_arguments` under the tool's own policy (its stated
//!   limits in place): the same repairs and the same value (as the tool's parameters), or the
//!   same errors. The plain tool reads clean text by serde alone, the others by the checking
//!   reader, and the tool with limits of its own is read under those, so each shortcut of the
//!   facade is held to the one coercion;
//! - the strict policy accepts exactly the text the lenient one reads without a repair, as the
//!   same object;
//! - text that reads as an object, encoded once more as a JSON string, reads as the same object
//!   with a `double_encoded` repair before the text's own repairs; a duplicate key or too deep
//!   a nesting inside it is reported as it is for the text itself;
//! - nothing about the reading depends on the bytes being valid UTF-8: bytes that are not (which
//!   both surfaces refuse before reading) arrive as U+FFFD, so multi-byte characters stand at
//!   every position an error excerpt, a fence or a repair cuts at.
//!
//! The first byte of an input chooses the tool and the policy (counted from the digit `0`,
//! modulo 9: the tool is `% 3`, the policy `/ 3`), the rest is the text: `0` `1` `2` call the
//! plain, task and tight tools under the lenient policy, `3` `4` `5` under the strict one and
//! `6` `7` `8` with unknown keys ignored. Seeds hold fences, near-JSON, double encoding, duplicate keys, byte order marks,
//! bytes that are not UTF-8, and deep nesting.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith::types::{ParsedArguments, parse_arguments};
use toolsmith::{
    Arguments, Context, ErrorCode, Limits, Policy, Registry, RepairCode, Tool, ToolError, ToolType,
    UnknownKeys, coerce_arguments,
};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, bytes)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(bytes);
    let choice = usize::from(choice.wrapping_sub(b'0')) % (TOOLS * POLICIES);
    let fixture = fixture();
    let (tool, render) = &fixture.tools[choice % TOOLS];
    let policy = &fixture.policies[choice / TOOLS];
    call_agrees_with_coercion(&fixture.registry, tool.as_ref(), *render, &text, policy);
    let lenient = parse_arguments(&text, &fixture.policies[0]);
    strict_refuses_only_repairs(&text, &lenient, &fixture.policies[1]);
    double_encoding_is_one_repair(&text, &lenient, &fixture.policies[0]);
});

/// How many tools an input may call.
const TOOLS: usize = 3;
/// How many policies a call may be made under.
const POLICIES: usize = 3;

/// A tool's parameters, deserialized from a canonical value and rendered as the tool renders
/// them: `None` when serde refuses the value.
type Render = fn(Value) -> Option<String>;

/// What every input is read against, built once.
struct Fixture {
    registry: Registry,
    tools: [(Arc<dyn Tool>, Render); TOOLS],
    /// Lenient, strict (the laws rely on this order), and lenient with unknown keys ignored.
    policies: [Policy; POLICIES],
}

fn fixture() -> &'static Fixture {
    static BUILT: OnceLock<Fixture> = OnceLock::new();
    BUILT.get_or_init(|| {
        let tools: [(Arc<dyn Tool>, Render); TOOLS] = [
            (Arc::new(PlainTool), render::<PlainArguments>),
            (Arc::new(TaskTool), render::<TaskArguments>),
            (Arc::new(TightTool), render::<TightArguments>),
        ];
        let mut registry = Registry::new();
        for (tool, _) in &tools {
            if let Err(error) = registry.add(Arc::clone(tool)) {
                panic!("the fuzz tools do not register: {error}");
            }
        }
        Fixture {
            registry,
            tools,
            policies: [
                Policy::lenient(),
                Policy::strict(),
                Policy {
                    unknown_keys: UnknownKeys::Ignore,
                    ..Policy::default()
                },
            ],
        }
    })
}

fn render<T: serde::de::DeserializeOwned + Serialize>(value: Value) -> Option<String> {
    serde_json::from_value::<T>(value)
        .ok()
        .map(|arguments| rendered(&arguments))
}

/// How the tools render the arguments they get.
fn rendered(arguments: &impl Serialize) -> String {
    serde_json::to_string(arguments).unwrap_or_else(|error| format!("not rendered: {error}"))
}

/// The arguments of `plain`, as it renders them.
#[derive(Serialize, Deserialize)]
struct PlainArguments {
    flag: bool,
    count: i64,
    name: String,
    note: Option<String>,
    small: Option<u8>,
}

/// Takes plain parameters only, so clean arguments are read by serde alone.
#[toolsmith::tool(name = "plain")]
fn plain_tool(
    flag: bool,
    count: i64,
    name: String,
    note: Option<String>,
    small: Option<u8>,
) -> String {
    rendered(&PlainArguments {
        flag,
        count,
        name,
        note,
        small,
    })
}

/// How urgent a task is.
#[derive(Serialize, Deserialize, ToolType)]
#[serde(rename_all = "snake_case")]
enum Priority {
    Low,
    High,
    RightNow,
}

/// A task to file.
#[derive(Serialize, Deserialize, ToolType)]
struct Task {
    title: String,
    done: bool,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(rename = "dueInDays")]
    due_in_days: Option<u32>,
}

/// The arguments of `task`, as it renders them.
#[derive(Serialize, Deserialize)]
struct TaskArguments {
    task: Task,
    priority: Option<Priority>,
    subtasks: Vec<Task>,
}

/// Files a task: a nested struct, an enum, arrays, a renamed field and a serde default.
#[toolsmith::tool(name = "task")]
fn task_tool(task: Task, priority: Option<Priority>, subtasks: Vec<Task>) -> String {
    rendered(&TaskArguments {
        task,
        priority,
        subtasks,
    })
}

/// Limits far below the policy's, so that every one of them is met by short inputs.
fn tight_limits() -> Limits {
    Limits {
        max_depth: 3,
        max_string_bytes: 16,
        max_items: 4,
        max_input_bytes: 256,
        max_errors: 3,
        max_repairs: 3,
        max_values: 12,
    }
}

/// The arguments of `tight`, as it renders them.
#[derive(Serialize, Deserialize)]
struct TightArguments {
    words: Vec<String>,
    nested: Option<Vec<Vec<u8>>>,
}

/// States limits of its own.
#[toolsmith::tool(name = "tight", limits = tight_limits)]
fn tight_tool(words: Vec<String>, nested: Option<Vec<Vec<u8>>>) -> String {
    rendered(&TightArguments { words, nested })
}

/// The call through the registry gives what coercion under the tool's policy gives.
fn call_agrees_with_coercion(
    registry: &Registry,
    tool: &dyn Tool,
    render: Render,
    text: &str,
    policy: &Policy,
) {
    let stated = match tool.limits() {
        Some(limits) => Policy {
            limits,
            ..policy.clone()
        },
        None => policy.clone(),
    };
    let expected = coerce_arguments(tool.parameters(), Arguments::Text(text), &stated);
    let called = registry.call_blocking(
        tool.name(),
        Arguments::Text(text),
        Context::new().with_policy(policy.clone()),
    );
    match (expected, called) {
        (Ok(coerced), Ok(output)) => {
            assert_eq!(
                coerced.repairs, output.repairs,
                "the call reports other repairs than coercion, on {text:?}"
            );
            let rendered = render(coerced.value.clone());
            assert_eq!(
                rendered.as_deref(),
                Some(output.as_text().as_ref()),
                "the tool got other arguments than coercion's {}, on {text:?}",
                coerced.value
            );
        }
        (Err(errors), Err(ToolError::InvalidArguments { errors: got, .. })) => {
            assert_eq!(errors, got, "the call reports other errors, on {text:?}");
        }
        // Serde refusing the canonical value is an error of the call too.
        (Ok(coerced), Err(ToolError::InvalidArguments { errors, .. }))
            if render(coerced.value.clone()).is_none() =>
        {
            assert!(
                errors.iter().any(|e| e.code == ErrorCode::TypeMismatch),
                "{errors:?}"
            );
        }
        (expected, called) => {
            panic!("the call and coercion disagree on {text:?}: {expected:?} vs {called:?}")
        }
    }
}

/// Strict reading accepts exactly what lenient reading takes without a repair.
fn strict_refuses_only_repairs(
    text: &str,
    lenient: &Result<ParsedArguments, toolsmith::CoerceErrors>,
    strict_policy: &Policy,
) {
    let strict = parse_arguments(text, strict_policy);
    match (lenient, &strict) {
        (Ok(l), Ok(s)) => assert!(
            l.repairs.is_empty() && s.repairs.is_empty() && l.value == s.value,
            "strict reading accepts what lenient reading repairs, on {text:?}: {l:?} vs {s:?}"
        ),
        (Ok(l), Err(s)) => assert!(
            !l.repairs.is_empty(),
            "strict reading refuses clean text, on {text:?}: {s:?}"
        ),
        (Err(l), Err(s)) => assert_eq!(l, s, "the readings fail differently, on {text:?}"),
        (Err(l), Ok(s)) => {
            panic!(
                "strict reading accepts what lenient reading refuses, on {text:?}: {l:?} vs {s:?}"
            )
        }
    }
}

/// The text encoded as a JSON string reads as the text does, with one more repair first.
fn double_encoding_is_one_repair(
    text: &str,
    lenient: &Result<ParsedArguments, toolsmith::CoerceErrors>,
    policy: &Policy,
) {
    // A leading byte-order mark is dropped from argument text as transport noise; inside a
    // string it would be a character of the string.
    let content = text.strip_prefix('\u{feff}').unwrap_or(text);
    if content.trim().is_empty() {
        // Blank text is `{}`; a string holding only blanks is not an object.
        return;
    }
    let Ok(encoded) = serde_json::to_string(content) else {
        return;
    };
    if encoded.len() > policy.limits.max_input_bytes {
        return;
    }
    let twice = parse_arguments(&encoded, policy);
    match (lenient, &twice) {
        (Ok(once), _)
            if once
                .repairs
                .iter()
                .any(|r| r.code == RepairCode::DoubleEncoded) =>
        {
            // Encoded twice already: a third encoding is not repaired.
        }
        (Ok(once), Ok(twice)) => {
            assert_eq!(
                once.value, twice.value,
                "encoding the text changed it: {text:?}"
            );
            let codes = |repairs: &[toolsmith::Repair]| -> Vec<RepairCode> {
                repairs.iter().map(|r| r.code).collect()
            };
            let mut expected = vec![RepairCode::DoubleEncoded];
            expected.extend(codes(&once.repairs));
            assert_eq!(
                codes(&twice.repairs),
                expected,
                "encoding the text repaired it otherwise: {text:?}"
            );
        }
        (Ok(once), Err(errors)) => {
            panic!("the text reads, encoded it does not: {text:?}: {once:?} vs {errors:?}")
        }
        // Text that starts an object or an array cannot be a string holding one.
        (Err(once), _) if content.trim_start().starts_with(['{', '[']) => {
            let about_content = |code| matches!(code, ErrorCode::DuplicateKey | ErrorCode::TooDeep);
            if once.iter().any(|e| about_content(e.code)) {
                assert_eq!(
                    Err::<&ParsedArguments, _>(once),
                    twice.as_ref(),
                    "an error inside encoded text is reported otherwise: {text:?}"
                );
            }
        }
        (Err(_), _) => {}
    }
}
