//! The conversation: [`Message`]s, the [`ToolCall`]s a model makes, and the [`Request`] a
//! [`LanguageModel`](crate::LanguageModel) answers, in no provider's shape: each client writes
//! them in its own.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::declaration::ToolDeclaration;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The user's turn: the question.
    User,
    /// The model's turn: text, tool calls, or both.
    Assistant,
    /// The answer to one tool call.
    Tool,
}

impl Role {
    /// The role's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One tool call a model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, which its answer quotes (`tool_call_id`).
    pub id: String,
    /// The tool called.
    pub name: String,
    /// The arguments as the model sent them: a JSON string holding argument text (the usual
    /// case), or an object from servers that send one. Coercion reads either.
    pub arguments: Value,
    /// An opaque token the provider attached to the call and wants back with it (Gemini's
    /// `thoughtSignature`: a thinking model refuses a conversation whose calls lost theirs).
    /// Kept in the conversation, so that a conversation saved and resumed elsewhere still
    /// carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolCall {
    /// A call of `name` with `arguments` (an object, or a string of argument text).
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            signature: None,
        }
    }

    /// The same call, carrying the provider's `signature` (see [`signature`](Self::signature)).
    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    /// The arguments as text, as the wire carries them back to the model.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    }
}

/// One message of a conversation; serializable (as a paused run's state is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Its text, if any (an assistant message may hold only tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The tool calls of an assistant message, in the order the model made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    fn text(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::text(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::text(Role::User, content)
    }

    /// An assistant message of text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::text(Role::Assistant, content)
    }

    /// An assistant message of tool calls only.
    pub fn tool_calls(calls: Vec<ToolCall>) -> Self {
        Message {
            role: Role::Assistant,
            content: None,
            tool_calls: calls,
            tool_call_id: None,
        }
    }

    /// The answer to the call `tool_call_id`.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(tool_call_id.into()),
        }
    }
}

/// Which tool the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// The model chooses: text, a tool call, or several.
    #[default]
    Auto,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Tool(String),
}

/// What a language model is asked: the conversation so far and the tools it may call.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The conversation, oldest first.
    pub messages: &'a [Message],
    /// The tools the model may call, each client declaring them in its own dialect.
    pub tools: &'a [ToolDeclaration],
    /// Which tool the model must call.
    pub tool_choice: &'a ToolChoice,
    /// When the answer is no longer wanted (an agent's run deadline), where there is one: a
    /// client gives up by then ([`LmError::Timeout`](crate::LmError::Timeout)) rather than
    /// waiting its own time out or retrying past it.
    pub deadline: Option<Instant>,
    /// The most tokens the reply may have, where the caller says (a tool's sampling request
    /// does); else the client's own setting, if it has one.
    pub max_tokens: Option<u32>,
    /// The sampling temperature, where the caller says; else the client's own setting, if it
    /// has one.
    pub temperature: Option<f64>,
}
