//! [`AgentError`]: why an agent gave no answer.

use std::fmt;

use crate::approval::Paused;
use crate::lm::LmError;
use crate::step::Step;

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
