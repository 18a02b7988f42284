//! A person in the loop: tool calls that wait for approval ([`Paused`]), the decisions that
//! resume them ([`Decisions`]).

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lm::Usage;
use crate::message::{Message, Role, ToolCall};
use crate::step::Step;

/// A tool call waiting for a person's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call's id, which its decision names.
    pub id: String,
    /// The tool the model called.
    pub tool: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
}

/// A person's decision on one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run the call.
    Approve,
    /// Do not run it; the model reads why.
    Reject {
        /// Why, in the person's words (the model reads them).
        reason: String,
    },
}

/// The decisions on a paused run's calls, by call id.
///
/// ```
/// use toolsmith_agent::{Decision, Decisions};
///
/// let decisions = Decisions::new()
///     .approve("call_1")
///     .reject("call_2", "not on a Friday");
/// assert_eq!(decisions.get("call_1"), Some(&Decision::Approve));
/// assert_eq!(decisions.get("call_3"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decisions(HashMap<String, Decision>);

impl Decisions {
    /// No decision yet.
    pub fn new() -> Self {
        Decisions::default()
    }

    /// Approves the call `id`.
    #[must_use]
    pub fn approve(self, id: impl Into<String>) -> Self {
        self.decide(id, Decision::Approve)
    }

    /// Rejects the call `id`, for `reason` (which the model reads).
    #[must_use]
    pub fn reject(self, id: impl Into<String>, reason: impl Into<String>) -> Self {
        self.decide(
            id,
            Decision::Reject {
                reason: reason.into(),
            },
        )
    }

    /// Decides the call `id` (a later decision on one call replaces an earlier one).
    #[must_use]
    pub fn decide(mut self, id: impl Into<String>, decision: Decision) -> Self {
        self.0.insert(id.into(), decision);
        self
    }

    /// The decision on the call `id`, if there is one.
    pub fn get(&self, id: &str) -> Option<&Decision> {
        self.0.get(id)
    }

    /// Every call id decided.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// A run stopped before tool calls that need a person's approval: the calls, and everything
/// the run needs to go on ([`ReAct::resume`](crate::ReAct::resume)).
///
/// Serializable (to JSON, say), so that the decision can be made elsewhere and later: in
/// another process, after a restart. What is serialized is the conversation (the model's
/// reply with the pending calls last), the model calls and tokens so far, and the pending
/// calls; the [`trajectory`](Self::trajectory) before the pause is kept in memory only (the
/// conversation holds every result the model read), so a run resumed from JSON reports the
/// steps from its resumption on.
///
/// The state is the caller's to keep: a resumed run trusts it as the conversation so far, but
/// decides again, from the agent's own tools and predicate, which calls need approval, and
/// refuses to resume unless each of them has a decision.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolsmith_agent::{AgentError, Decisions, Paused, Question, QuestionAnswer, ReAct, ScriptedModel};
///
/// /// Refunds an order.
/// #[toolsmith::tool(needs_approval)]
/// fn refund(order: String) -> String { format!("refunded {order}") }
///
/// let mut tools = toolsmith::Registry::new();
/// tools.add(Arc::new(Refund))?;
/// let lm = Arc::new(ScriptedModel::new()
///     .then_call("refund", json!({"order": "A1"}))
///     .then_call("finish", json!({"answer": "Not refunded: needs a manager."})));
/// let agent = ReAct::<QuestionAnswer>::new(lm, &tools)?;
/// let Err(AgentError::Paused(paused)) = agent.run_blocking(&Question { question: "Refund A1".into() }) else {
///     panic!("the refund waits for a person");
/// };
/// let saved = serde_json::to_string(&paused)?;              // kept anywhere, for later
/// let paused: Paused = serde_json::from_str(&saved)?;
/// let call = paused.pending()[0].id.clone();
/// let answer = agent.resume_blocking(paused, Decisions::new().reject(call, "needs a manager"))?;
/// assert_eq!(answer.trajectory[0].error, Some("rejected"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Paused {
    /// The calls waiting, in the order the model made them.
    pending: Vec<PendingCall>,
    /// The conversation, the model's reply with the calls last.
    messages: Vec<Message>,
    /// How many times the model was asked.
    lm_calls: usize,
    /// The tokens of those calls, where the model reported them.
    usage: Option<Usage>,
    /// The steps before the pause.
    #[serde(skip)]
    trajectory: Vec<Step>,
}

impl Paused {
    pub(crate) fn new(
        pending: Vec<PendingCall>,
        messages: Vec<Message>,
        lm_calls: usize,
        usage: Option<Usage>,
        trajectory: Vec<Step>,
    ) -> Self {
        Paused {
            pending,
            messages,
            lm_calls,
            usage,
            trajectory,
        }
    }

    /// The calls waiting for a decision, in the order the model made them.
    pub fn pending(&self) -> &[PendingCall] {
        &self.pending
    }

    /// The tool calls made before the pause (empty when the state came from JSON).
    pub fn trajectory(&self) -> &[Step] {
        &self.trajectory
    }

    /// How many times the model was asked before the pause.
    pub fn lm_calls(&self) -> usize {
        self.lm_calls
    }

    /// The conversation so far, the model's reply with the pending calls last.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Splits the state for the run that resumes it.
    ///
    /// # Errors
    /// In words, when the conversation does not end with a reply of tool calls (a state
    /// edited by hand, or not a paused run's).
    pub(crate) fn into_parts(mut self) -> Result<Parts, String> {
        match self.messages.pop() {
            Some(reply)
                if reply
                    .tool_calls
                    .iter()
                    .enumerate()
                    .any(|(i, call)| reply.tool_calls[..i].iter().any(|c| c.id == call.id)) =>
            {
                Err("two of the paused reply's calls share an id".to_owned())
            }
            Some(reply) if reply.role == Role::Assistant && !reply.tool_calls.is_empty() => {
                Ok(Parts {
                    pending: self.pending,
                    messages: self.messages,
                    reply,
                    lm_calls: self.lm_calls,
                    usage: self.usage,
                    trajectory: self.trajectory,
                })
            }
            _ => Err(
                "the paused state's conversation does not end with the model's tool calls"
                    .to_owned(),
            ),
        }
    }
}

/// A paused run, taken apart to go on.
pub(crate) struct Parts {
    /// The calls the state showed for decision.
    pub pending: Vec<PendingCall>,
    /// The conversation before the reply.
    pub messages: Vec<Message>,
    /// The reply whose calls wait.
    pub reply: Message,
    /// How many times the model was asked.
    pub lm_calls: usize,
    /// The tokens so far.
    pub usage: Option<Usage>,
    /// The steps so far.
    pub trajectory: Vec<Step>,
}

impl fmt::Display for Paused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools: Vec<String> = self
            .pending
            .iter()
            .map(|call| format!("`{}`", call.tool))
            .collect();
        write!(
            f,
            "the run is waiting for approval of {} tool call{} ({})",
            self.pending.len(),
            if self.pending.len() == 1 { "" } else { "s" },
            tools.join(", ")
        )
    }
}

impl From<&ToolCall> for PendingCall {
    fn from(call: &ToolCall) -> Self {
        PendingCall {
            id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
        }
    }
}
