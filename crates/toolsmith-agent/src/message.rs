//! The conversation: [`Message`]s, the [`ToolCall`]s a model makes, and the [`Request`] a
//! [`LanguageModel`](crate::LanguageModel) answers.

use std::time::Instant;

use serde_json::{Value, json};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id, which its answer quotes (`tool_call_id`).
    pub id: String,
    /// The tool called.
    pub name: String,
    /// The arguments as the model sent them: a JSON string holding argument text (the usual
    /// case), or an object from servers that send one. Coercion reads either.
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments` (an object, or a string of argument text).
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }

    /// The arguments as text, as the wire carries them back to the model.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Its text, if any (an assistant message may hold only tool calls).
    pub content: Option<String>,
    /// The tool calls of an assistant message, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the call it answers.
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

    /// The message in the OpenAI chat completions shape.
    pub fn to_openai(&self) -> Value {
        let mut out = json!({"role": self.role.as_str()});
        // Empty text rather than `null` for a message of tool calls only: chat templates of
        // local servers concatenate the content and fail on `null`.
        out["content"] = Value::String(self.content.clone().unwrap_or_default());
        if !self.tool_calls.is_empty() {
            out["tool_calls"] = self
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_text()},
                    })
                })
                .collect();
        }
        if let Some(id) = &self.tool_call_id {
            out["tool_call_id"] = Value::String(id.clone());
        }
        out
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

impl ToolChoice {
    /// The choice in the OpenAI chat completions shape.
    pub fn to_openai(&self) -> Value {
        match self {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        }
    }
}

/// What a language model is asked: the conversation so far and the tools it may call.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The conversation, oldest first.
    pub messages: &'a [Message],
    /// The tools, declared in the OpenAI dialect (`{"type": "function", "function": {...}}`).
    pub tools: &'a [Value],
    /// Which tool the model must call.
    pub tool_choice: &'a ToolChoice,
    /// When the answer is no longer wanted (an agent's run deadline), where there is one: a
    /// client gives up by then ([`LmError::Timeout`](crate::LmError::Timeout)) rather than
    /// waiting its own time out or retrying past it.
    pub deadline: Option<Instant>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assistant_message_of_calls_has_empty_content_and_text_arguments() {
        let message = Message::tool_calls(vec![ToolCall::new("c1", "add", json!({"a": 1}))]);
        assert_eq!(
            message.to_openai(),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}}
            ]})
        );
    }

    #[test]
    fn a_tool_message_quotes_the_call_it_answers() {
        assert_eq!(
            Message::tool_result("c1", "3").to_openai(),
            json!({"role": "tool", "content": "3", "tool_call_id": "c1"})
        );
    }

    #[test]
    fn a_forced_tool_choice_names_the_function() {
        assert_eq!(
            ToolChoice::Tool("finish".into()).to_openai(),
            json!({"type": "function", "function": {"name": "finish"}})
        );
    }
}
