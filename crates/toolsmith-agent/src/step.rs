//! [`Step`]: one tool call of an agent's trajectory, and what came of it.

use serde_json::{Value, json};
use toolsmith::{Content, Repair};

use crate::content::describe;

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
