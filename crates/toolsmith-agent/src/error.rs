//! [`AgentError`]: why an agent gave no answer, and [`Step`]: one tool call of its trajectory.

use std::fmt;

use serde_json::{Value, json};
use toolsmith::{Content, Repair};

use crate::approval::Paused;
use crate::content::describe;
use crate::lm::LmError;

/// One tool call an agent made, and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The tool called (as the model named it, which may be no tool at all).
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
    /// What the model read back: the tool's output as text, or the error message. A block of
    /// the output the model could not be shown has a note in its place (`[an image/png of
    /// 1,234 bytes was returned but cannot be shown]`).
    pub observation: String,
    /// The repairs the arguments needed.
    pub repairs: Vec<Repair>,
    /// The error's code (`invalid_arguments`, `not_found`, `failed`, `panicked`,
    /// `timed_out`, `cancelled`, ...: [`ToolError::code`](toolsmith::ToolError::code)) when the
    /// call failed; `None` when the tool ran.
    pub error: Option<&'static str>,
    /// The blocks of the tool's output the model could not be shown (an image, audio, a binary
    /// resource: a chat completions tool message carries text only), kept whole for the
    /// program.
    pub dropped: Vec<Content>,
}

impl Step {
    /// The step as JSON: `{"tool", "call_id", "arguments", "observation", "repairs", "error",
    /// "dropped"}`, each dropped block as its kind, MIME type and size
    /// (`{"type": "image", "mime_type": "image/png", "bytes": 1234}`), without its bytes.
    pub fn to_json(&self) -> Value {
        json!({
            "tool": self.tool,
            "call_id": self.call_id,
            "arguments": self.arguments,
            "observation": self.observation,
            "repairs": self.repairs.iter().map(Repair::to_json).collect::<Vec<_>>(),
            "error": self.error,
            "dropped": self.dropped.iter().map(describe).collect::<Vec<_>>(),
        })
    }
}

/// Why an agent gave no answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentError {
    /// The model could not be asked.
    Lm(LmError),
    /// [`ReAct`](crate::ReAct) took its every step without an answer.
    MaxSteps {
        /// The steps allowed.
        max_steps: usize,
        /// Every tool call made.
        trajectory: Vec<Step>,
        /// How many times the model was asked.
        lm_calls: usize,
    },
    /// [`Predict`](crate::Predict) got no valid answer in its attempts.
    NoAnswer {
        /// The attempts allowed.
        attempts: usize,
        /// What was wrong with the last reply, as the model read it.
        problem: String,
        /// Every rejected answer.
        trajectory: Vec<Step>,
    },
    /// The run's deadline ([`ReAct::timeout`](crate::ReAct::timeout), or the caller's
    /// context's) passed before an answer: tool calls still running were cancelled and are in
    /// the trajectory as `timed_out`.
    DeadlinePassed {
        /// Every tool call made.
        trajectory: Vec<Step>,
        /// How many times the model was asked.
        lm_calls: usize,
    },
    /// The caller cancelled the run (through the context it was run in).
    Cancelled {
        /// Every tool call made.
        trajectory: Vec<Step>,
        /// How many times the model was asked.
        lm_calls: usize,
    },
    /// The run stopped before tool calls that need a person's approval: decide each and
    /// [`resume`](crate::ReAct::resume) it. Not a failure of the run, but never an answer: a
    /// program that does not expect approvals fails here rather than run a call nobody
    /// approved.
    Paused(Box<Paused>),
    /// A paused run cannot be resumed with these decisions (a waiting call not decided, a
    /// decision for a call that is not waiting, a state that is not a paused run's).
    Approval(String),
    /// A blocking entry point was called from inside an async runtime, where waiting could
    /// deadlock it: await the future instead.
    InsideRuntime,
    /// The signature cannot be put to a model (say, an output that is not a struct).
    Signature(String),
    /// The input cannot be shown to the model.
    Input(String),
    /// The tools cannot be offered (an unknown name, two of one name, a tool named `finish`, a
    /// tool that cannot be declared).
    Tools(String),
}

impl AgentError {
    /// The tool calls made before the agent stopped (empty when it never got to any).
    pub fn trajectory(&self) -> &[Step] {
        match self {
            AgentError::MaxSteps { trajectory, .. }
            | AgentError::NoAnswer { trajectory, .. }
            | AgentError::DeadlinePassed { trajectory, .. }
            | AgentError::Cancelled { trajectory, .. } => trajectory,
            AgentError::Paused(paused) => paused.trajectory(),
            _ => &[],
        }
    }
}

impl From<LmError> for AgentError {
    fn from(error: LmError) -> Self {
        AgentError::Lm(error)
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentError::Lm(error) => error.fmt(f),
            AgentError::MaxSteps {
                max_steps,
                trajectory,
                lm_calls,
            } => write!(
                f,
                "no answer after {max_steps} steps ({lm_calls} model calls, {} tool calls)",
                trajectory.len()
            ),
            AgentError::NoAnswer {
                attempts, problem, ..
            } => write!(
                f,
                "no valid answer after {attempts} attempts; the last: {}",
                problem.trim_end()
            ),
            AgentError::DeadlinePassed {
                trajectory,
                lm_calls,
            } => write!(
                f,
                "no answer before the run's deadline ({lm_calls} model calls, {} tool calls)",
                trajectory.len()
            ),
            AgentError::Cancelled {
                trajectory,
                lm_calls,
            } => write!(
                f,
                "the run was cancelled ({lm_calls} model calls, {} tool calls)",
                trajectory.len()
            ),
            AgentError::Paused(paused) => paused.fmt(f),
            AgentError::Approval(why) => write!(f, "the run cannot be resumed: {why}"),
            AgentError::InsideRuntime => f.write_str(
                "the agent was run blocking from inside an async runtime, where waiting could \
                 deadlock it; await `run` (or `call`) there instead, or run it on a thread \
                 that may block (tokio's `spawn_blocking`)",
            ),
            AgentError::Signature(why) => write!(f, "the signature cannot be used: {why}"),
            AgentError::Input(why) => write!(f, "the input cannot be shown to the model: {why}"),
            AgentError::Tools(why) => write!(f, "the tools cannot be offered: {why}"),
        }
    }
}

impl std::error::Error for AgentError {}
