//! [`ScriptedModel`]: a [`LanguageModel`] that replies from a script, for tests of code that
//! uses a model (an agent, or a tool that calls [`Predict`](crate::Predict) inside).

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde_json::Value;
use toolsmith::Dialect;

use crate::lm::{LanguageModel, LmError, LmFuture, Reply};
use crate::message::{Message, Request, ToolCall, ToolChoice};

/// A model that gives its scripted replies in order and records every request it was asked.
///
/// Tool calls get the ids `call_1`, `call_2`, ... in the order they are scripted. Asked once more
/// than it has replies, it fails with [`LmError::ScriptExhausted`]. It reads tools in the
/// OpenAI dialect unless told another ([`dialect`](Self::dialect)).
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolsmith_agent::{ScriptedModel, LanguageModel, Message, Request, ToolChoice};
///
/// let lm = ScriptedModel::new()
///     .then_call("add", json!({"a": 1, "b": 2}))
///     .then_text("3");
/// let ask = |lm: &ScriptedModel| toolsmith::block_on(lm.complete(Request {
///     messages: &[Message::user("1 + 2?")],
///     tools: &[],
///     tool_choice: &ToolChoice::Auto,
///     deadline: None,
///     max_tokens: None,
///     temperature: None,
/// })).expect("outside a runtime");
/// assert_eq!(ask(&lm)?.message.tool_calls[0].name, "add");
/// assert_eq!(ask(&lm)?.message.content.as_deref(), Some("3"));
/// assert!(ask(&lm).is_err());
/// assert_eq!(lm.requests().len(), 3);
/// # Ok::<(), toolsmith_agent::LmError>(())
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    script: Vec<Result<Reply, LmError>>,
    dialect: Option<Dialect>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next: usize,
    requests: Vec<Recorded>,
}

/// A request as the scripted model saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The conversation sent.
    pub messages: Vec<Message>,
    /// The names of the tools declared, in order.
    pub tools: Vec<String>,
    /// The tool choice asked for.
    pub tool_choice: ToolChoice,
    /// The deadline the request carried.
    pub deadline: Option<Instant>,
    /// The most tokens the request allowed, where it said.
    pub max_tokens: Option<u32>,
    /// The temperature the request asked for, where it said.
    pub temperature: Option<f64>,
}

impl ScriptedModel {
    /// A model with an empty script.
    pub fn new() -> Self {
        ScriptedModel::default()
    }

    /// Reads tools in `dialect` (the agent declares them and coerces their arguments in it).
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// Replies next with `message`, as it is, reporting no usage.
    pub fn then_reply(self, message: Message) -> Self {
        self.then(Reply::new(message))
    }

    /// Replies next with `reply`, as it is (its usage included).
    pub fn then(mut self, reply: Reply) -> Self {
        self.script.push(Ok(reply));
        self
    }

    /// Replies next with text and no tool calls.
    pub fn then_text(self, text: impl Into<String>) -> Self {
        self.then_reply(Message::assistant(text))
    }

    /// Replies next with one call of `tool` (arguments as an object, or a string of text).
    pub fn then_call(self, tool: &str, arguments: Value) -> Self {
        self.then_calls([(tool, arguments)])
    }

    /// Replies next with these calls at once, in order (parallel tool calls).
    pub fn then_calls<'a>(self, calls: impl IntoIterator<Item = (&'a str, Value)>) -> Self {
        let mut numbered = Vec::new();
        for (tool, arguments) in calls {
            let id = format!("call_{}", self.call_count() + numbered.len() + 1);
            numbered.push(ToolCall::new(id, tool, arguments));
        }
        self.then_reply(Message::tool_calls(numbered))
    }

    /// Fails next with `error`.
    pub fn then_fail(mut self, error: LmError) -> Self {
        self.script.push(Err(error));
        self
    }

    /// Every request asked so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    /// How many scripted replies have not been given yet.
    pub fn remaining(&self) -> usize {
        self.script.len().saturating_sub(self.state().next)
    }

    fn call_count(&self) -> usize {
        self.script
            .iter()
            .filter_map(|reply| reply.as_ref().ok())
            .map(|reply| reply.message.tool_calls.len())
            .sum()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent across a panic elsewhere: each update is one push.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl LanguageModel for ScriptedModel {
    fn dialect(&self) -> Dialect {
        self.dialect.unwrap_or(Dialect::OpenAi { strict: false })
    }

    fn complete<'a>(&'a self, request: Request<'a>) -> LmFuture<'a> {
        let mut state = self.state();
        state.requests.push(Recorded {
            messages: request.messages.to_vec(),
            tools: request
                .tools
                .iter()
                .map(|tool| tool.name().to_owned())
                .collect(),
            tool_choice: request.tool_choice.clone(),
            deadline: request.deadline,
            max_tokens: request.max_tokens,
            temperature: request.temperature,
        });
        let index = state.next;
        state.next += 1;
        let reply = self
            .script
            .get(index)
            .cloned()
            .unwrap_or(Err(LmError::ScriptExhausted {
                replies: self.script.len(),
            }));
        Box::pin(std::future::ready(reply))
    }
}
