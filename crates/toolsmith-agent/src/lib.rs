//! Typed agents over toolsmith tools: [`Predict`] answers a [`Signature`] (typed inputs and
//! outputs plus instructions) in one model call, [`ReAct`] answers it over a [`Registry`]'s tools
//! by native tool calling. Any chat model that calls tools is a [`LanguageModel`]: the HTTP client
//! [`OpenAiCompatible`] speaks the OpenAI chat completions API that most servers offer, and
//! [`ScriptedModel`] replies from a script in tests.
//!
//! The answer comes back the way tool arguments do: through a `finish` tool whose parameters are
//! the signature's output struct, coerced by toolsmith's rules, so a repaired answer is accepted
//! with its repairs recorded and an invalid one goes back to the model with the errors it can act
//! on. The tools' own arguments, errors and panics are handled once, by the registry.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolsmith_agent::{Predict, Question, QuestionAnswer, ScriptedModel};
//!
//! let lm = Arc::new(ScriptedModel::new().then_call("finish", json!({"answer": "Paris"})));
//! let answer = Predict::<QuestionAnswer>::new(lm)?
//!     .call(&Question { question: "The capital of France?".into() })?;
//! assert_eq!(answer.output.answer, "Paris");
//! # Ok::<(), toolsmith_agent::AgentError>(())
//! ```
//!
//! This crate must never pull in an async runtime (its client is blocking, its parallel tool
//! calls are scoped threads), never put an API key into an error, a log line or `Debug` output,
//! and never let a model's reply crash the program: every malformed reply is an error, every
//! tool failure a message the model reads.
//!
//! [`Registry`]: toolsmith::Registry

mod error;
mod lm;
mod message;
mod openai;
mod react;
mod scripted;
mod signature;

pub use error::{AgentError, Step};
pub use lm::{LanguageModel, LmError};
pub use message::{Message, Request, Role, ToolCall, ToolChoice};
pub use openai::{BaseUrlError, OpenAiCompatible};
pub use react::{Answer, MAX_CALLS_PER_REPLY, Predict, ReAct};
pub use scripted::{Recorded, ScriptedModel};
pub use signature::{AnswerText, FINISH, Question, QuestionAnswer, Signature};
