//! The agent calls each tool under the argument limits the tool states, in place of its own
//! policy's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use toolsmith::{Limits, Registry};
use toolsmith_agent::{Question, QuestionAnswer, ReAct, ScriptedModel};

/// 1.5 MB: more than the default policy's longest string (1 MiB).
const BIG: usize = 1_500_000;

fn documents() -> Limits {
    Limits {
        max_string_bytes: 4 << 20,
        max_input_bytes: 8 << 20,
        ..Limits::default()
    }
}

/// Counts the bytes of a document.
#[toolsmith::tool(limits = documents)]
fn byte_count(document: String) -> usize {
    document.len()
}

/// Counts the bytes of a note.
#[toolsmith::tool]
fn note_length(note: String) -> usize {
    note.len()
}

#[test]
fn the_agent_calls_a_tool_under_the_limits_it_states() {
    let mut tools = Registry::new();
    tools
        .add(Arc::new(ByteCount))
        .unwrap()
        .add(Arc::new(NoteLength))
        .unwrap();
    let big = "x".repeat(BIG);
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("byte_count", json!({"document": big}))
            .then_call("note_length", json!({"note": big}))
            .then_call("finish", json!({"answer": "done"})),
    );
    let question = Question {
        question: "How long?".into(),
    };
    let answer = ReAct::<QuestionAnswer>::new(lm, &tools)
        .unwrap()
        .run_blocking(&question)
        .unwrap();
    let [stated, unstated] = &answer.trajectory[..] else {
        panic!("two tool calls: {:?}", answer.trajectory);
    };
    assert_eq!(stated.error, None, "{}", stated.observation);
    assert_eq!(stated.observation, BIG.to_string());
    assert_eq!(unstated.error, Some("invalid_arguments"));
    // However the message groups the digits (1,048,576).
    assert!(
        unstated
            .observation
            .replace(',', "")
            .contains("`note`: expected a string of at most 1048576 bytes"),
        "{}",
        unstated.observation
    );
}
