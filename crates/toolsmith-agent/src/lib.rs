//! Typed agents over toolsmith tools: [`Predict`] answers a [`Signature`] (typed inputs and
//! outputs plus instructions) in one model call, [`ReAct`] answers it over a [`Registry`]'s tools
//! by native tool calling. Any chat model that calls tools is a [`LanguageModel`], asked in no
//! provider's shape; each HTTP client speaks its provider's own API and dialect:
//! [`OpenAiCompatible`] the OpenAI chat completions API that most servers offer, [`Anthropic`]
//! Anthropic's Messages API, [`Gemini`] Google's Gemini API (`generateContent`). They share one
//! transport (timeouts cut to the run's deadline, retries honouring what the server asks, the
//! key kept out of every error). [`ScriptedModel`] replies from a script in tests.
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolsmith_agent::{
//!     Anthropic, Gemini, LanguageModel, OpenAiCompatible, Question, QuestionAnswer, ReAct,
//! };
//!
//! async fn ask_each(tools: &toolsmith::Registry) -> Result<(), Box<dyn std::error::Error>> {
//!     let openai: Arc<dyn LanguageModel> = Arc::new(
//!         OpenAiCompatible::new(OpenAiCompatible::DEFAULT_BASE_URL, "gpt-4o-mini")?
//!             .api_key_from_env("OPENAI_API_KEY")
//!             .strict(true),
//!     );
//!     let claude: Arc<dyn LanguageModel> = Arc::new(
//!         Anthropic::new(Anthropic::DEFAULT_BASE_URL, "claude-sonnet-4-5")?
//!             .api_key_from_env("ANTHROPIC_API_KEY"),
//!     );
//!     let gemini: Arc<dyn LanguageModel> = Arc::new(
//!         Gemini::new(Gemini::DEFAULT_BASE_URL, "gemini-2.5-flash")?
//!             .api_key_from_env("GEMINI_API_KEY"),
//!     );
//!     let question = Question { question: "What is 6 x 7?".into() };
//!     for lm in [openai, claude, gemini] {
//!         // Each declares the tools in its own dialect and coerces the arguments under it.
//!         let answer = ReAct::<QuestionAnswer>::new(lm, tools)?.run(&question).await?;
//!         println!("{} ({:?})", answer.output.answer, answer.usage);
//!     }
//!     Ok(())
//! }
//! ```
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
//!     .call_blocking(&Question { question: "The capital of France?".into() })?;
//! assert_eq!(answer.output.answer, "Paris");
//! # Ok::<(), toolsmith_agent::AgentError>(())
//! ```
//!
//! Each tool call goes through the registry's layers, in a [`Context`] whose call id is the
//! model's `tool_call_id` and whose deadline is the run's ([`ReAct::timeout`], ten minutes
//! unless set); the context a run is given ([`ReAct::run_in`]) brings the caller's request
//! data and cancellation. A tool's result goes to the model as text: what a chat completions
//! tool message cannot carry (an image, audio) is dropped with a note the model reads and kept
//! in the [`Step`].
//!
//! A person can stay in the loop: a tool marked `#[tool(needs_approval)]` (or a call
//! [`ReAct::needs_approval`] picks) is run only once approved; the run stops before it with
//! [`AgentError::Paused`], a serializable state, and [`ReAct::resume`] goes on with the
//! [`Decisions`], a rejection's reason read by the model.
//!
//! # Runtime
//!
//! An agent is async: [`ReAct::run`] and [`Predict::call`] are `Send` futures that any
//! executor can poll, and [`ReAct::run_blocking`] and [`Predict::call_blocking`] wait for them
//! on the calling thread (scripts, tests, the command line). The calls of one reply are futures
//! polled together in the run's own; async tools are awaited there, with no thread hop, while
//! blocking (sync) tools run on the threads of a shared pool, so that one never blocks the
//! executor, holds up the others nor outlives the run's deadline. A model is asked through
//! `reqwest` on tokio: on the runtime the run is polled in, or, where there is none (another
//! executor), on a one-thread runtime of the clients' own. The blocking entry points poll the
//! run inside a current-thread tokio runtime of the calling thread, so that tools built on
//! tokio (its timers and sockets, HTTP clients and database pools over them) work there too,
//! and are refused inside an async runtime, where blocking could deadlock it
//! ([`AgentError::InsideRuntime`]): await the future there. Dropping a run's future abandons
//! it: the model request in flight is dropped, as are the tool calls.
//!
//! This crate must never put an API key into an error, a log line or `Debug` output, and never
//! let a model's reply crash the program: every malformed reply is an error, every tool failure
//! a message the model reads.
//!
//! [`Registry`]: toolsmith::Registry
//! [`Context`]: toolsmith::Context

mod anthropic;
mod approval;
mod ask;
mod calls;
mod content;
mod declaration;
mod error;
mod fields;
mod gemini;
mod http;
mod lm;
mod message;
mod openai;
mod react;
mod scripted;
mod signature;
mod step;

pub use anthropic::Anthropic;
pub use approval::{Decision, Decisions, Paused, PendingCall};
pub use ask::ElicitationHandler;
pub use calls::MAX_CALLS_PER_REPLY;
pub use declaration::ToolDeclaration;
pub use error::AgentError;
pub use gemini::Gemini;
pub use http::BaseUrlError;
pub use lm::{Delta, DeltaSink, LanguageModel, LmError, LmFuture, Reply, Usage};
pub use message::{Message, Request, Role, ToolCall, ToolChoice};
pub use openai::{OpenAiCompatible, TokenLimitField};
pub use react::{Answer, DEFAULT_TIMEOUT, Event, EventSink, Predict, ReAct};
pub use scripted::{Recorded, ScriptedModel};
pub use signature::{AnswerText, FINISH, Question, QuestionAnswer, Signature};
pub use step::Step;
