//! [`LanguageModel`]: the one object-safe trait every model implements, what it answers
//! ([`Reply`], with its [`Usage`]), and [`LmError`].

use std::fmt;
use std::future::Future;
use std::ops::{Add, AddAssign};
use std::pin::Pin;
use std::time::Duration;

use toolsmith::{Dialect, EnvelopeError};

use crate::message::{Message, Request};

/// A chat model that can call tools: a conversation and tool declarations in, one assistant
/// message (text, tool calls, or both) out.
///
/// Provider-neutral: the [`Request`] holds neutral messages and
/// [`ToolDeclaration`](crate::ToolDeclaration)s, and each client writes them in its own API's
/// shape, the tools' parameters in its [`dialect`](Self::dialect). Object-safe and
/// `Send + Sync`: agents hold an `Arc<dyn LanguageModel>`, so the clients over HTTP
/// ([`OpenAiCompatible`](crate::OpenAiCompatible),
/// [`Anthropic`](crate::Anthropic),
/// [`Gemini`](crate::Gemini)) and a scripted one for tests
/// ([`ScriptedModel`](crate::ScriptedModel)) are interchangeable.
pub trait LanguageModel: Send + Sync {
    /// The dialect the model reads tool parameters in. An agent checks its tools can be
    /// declared in it, and coerces the model's arguments under it
    /// ([`Policy::with_dialect`](toolsmith::Policy::with_dialect)), so that what the dialect
    /// asked for (a `null` for an omitted optional, in a strict one) is no repair.
    fn dialect(&self) -> Dialect;

    /// The model's next message, as a future any executor can poll.
    ///
    /// A request may carry a [`deadline`](Request::deadline): a model that waits on something
    /// (a server) stops waiting by then, so that an agent's run deadline holds over its model
    /// calls too. Dropping the future abandons the request.
    ///
    /// # Errors
    /// When the model cannot be reached or its reply cannot be read (see [`LmError`]).
    fn complete<'a>(&'a self, request: Request<'a>) -> LmFuture<'a>;

    /// The model's next message, as [`complete`](Self::complete) answers it, with what the
    /// model sends reported to `sink` as it comes, before the reply is whole: the answer's
    /// text in pieces ([`Delta::Text`], which joined are the reply's text) and each tool call
    /// as it starts ([`Delta::ToolCall`]; its arguments come whole, in the reply).
    ///
    /// The reply is the one [`complete`](Self::complete) would have answered for the same
    /// message: the text joined, the calls with their arguments in the same shape, and the
    /// usage where the stream reports it. A reply the model did not finish (the stream cut
    /// short) is an error, never a message, though `sink` has had its start. The HTTP clients
    /// ask their API to stream ([`OpenAiCompatible`](crate::OpenAiCompatible),
    /// [`Anthropic`](crate::Anthropic), [`Gemini`](crate::Gemini)); the provided method asks
    /// [`complete`](Self::complete) and reports the whole reply at once, its text as one
    /// delta and then each call, so that every model streams, if only trivially.
    ///
    /// `sink` is called on the task that polls the returned future, one delta at a time and in
    /// order; it should return quickly (hand the text on, not process it there).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use serde_json::json;
    /// use toolsmith_agent::{Delta, LanguageModel, Message, Request, ScriptedModel, ToolChoice};
    ///
    /// let lm = ScriptedModel::new().then_call("add", json!({"a": 1, "b": 2}));
    /// let seen = Mutex::new(Vec::new());
    /// let sink = |delta: Delta| seen.lock().unwrap().push(delta);
    /// let request = Request {
    ///     messages: &[Message::user("1 + 2?")],
    ///     tools: &[],
    ///     tool_choice: &ToolChoice::Auto,
    ///     deadline: None,
    ///     max_tokens: None,
    ///     temperature: None,
    /// };
    /// let reply = toolsmith::block_on(lm.complete_streaming(request, &sink))
    ///     .expect("outside a runtime")?;
    /// let call = &reply.message.tool_calls[0];
    /// assert_eq!(
    ///     seen.into_inner().unwrap(),
    ///     [Delta::ToolCall { index: 0, id: call.id.clone(), name: "add".into() }]
    /// );
    /// # Ok::<(), toolsmith_agent::LmError>(())
    /// ```
    ///
    /// # Errors
    /// As [`complete`](Self::complete); and, for a streamed reply, when the stream ends
    /// before the model finished ([`LmError::Malformed`], saying it was cut short) or the
    /// server reports an error in it ([`LmError::Status`], with the server's words).
    fn complete_streaming<'a>(&'a self, request: Request<'a>, sink: DeltaSink<'a>) -> LmFuture<'a> {
        Box::pin(async move {
            let reply = self.complete(request).await?;
            report_whole(&reply.message, sink);
            Ok(reply)
        })
    }
}

/// What a model sends as it answers, before its reply is whole
/// ([`LanguageModel::complete_streaming`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Delta {
    /// More of the answer's text, to append to what came before.
    Text(String),
    /// A tool call started; its arguments come with the reply.
    ToolCall {
        /// The call's place among the reply's calls (in
        /// [`tool_calls`](Message::tool_calls)), from 0.
        index: usize,
        /// The call's id, as the reply's call has it.
        id: String,
        /// The tool called.
        name: String,
    },
}

/// Where [`LanguageModel::complete_streaming`] reports each [`Delta`] as it comes.
pub type DeltaSink<'a> = &'a (dyn Fn(Delta) + Send + Sync);

/// Reports a whole message to `sink` as a stream would have: its text, if any, as one delta,
/// then each call.
pub(crate) fn report_whole(message: &Message, sink: DeltaSink<'_>) {
    if let Some(text) = message.content.as_ref().filter(|text| !text.is_empty()) {
        sink(Delta::Text(text.clone()));
    }
    for (index, call) in message.tool_calls.iter().enumerate() {
        sink(Delta::ToolCall {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
    }
}

/// What [`LanguageModel::complete`] returns: a boxed `Send` future of the reply.
pub type LmFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, LmError>> + Send + 'a>>;

/// What a model answered: its message, and the tokens it counted where it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The assistant's message.
    pub message: Message,
    /// The tokens the request and the reply took, where the server reports them.
    pub usage: Option<Usage>,
}

impl Reply {
    /// A reply of `message` with no usage reported.
    pub fn new(message: Message) -> Self {
        Reply {
            message,
            usage: None,
        }
    }

    /// The reply with `usage` reported.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// Tokens a model counted, as its server reports them (OpenAI's `prompt_tokens` and
/// `completion_tokens`, Anthropic's `input_tokens` and `output_tokens`, Gemini's
/// `promptTokenCount` and `candidatesTokenCount`). Usages add up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Tokens of the request: the conversation and the tool declarations.
    pub input_tokens: u64,
    /// Tokens of the reply.
    pub output_tokens: u64,
}

impl Usage {
    /// `input_tokens` in, `output_tokens` out.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage {
            input_tokens,
            output_tokens,
        }
    }

    /// Both counts together.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// Why a model gave no message. Never holds an API key: a server's message that quotes the key
/// has it replaced by `[redacted]` before it gets here.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LmError {
    /// A tool cannot be declared in the model's dialect (a name its API refuses, a recursive
    /// type for Gemini); nothing was sent.
    Declaration(EnvelopeError),
    /// The server answered with an error status (after any retries), or reported an error in
    /// the middle of a streamed reply, after its 200: then `status` is the one its error
    /// stands for (its code, or its type's in Anthropic's table; 500 when it names none).
    Status {
        /// The HTTP status.
        status: u16,
        /// The server's message (its `error.message`, else the start of its body).
        message: String,
        /// How many requests were made.
        attempts: u32,
    },
    /// The server asked to retry later than this client waits.
    RetryTooLate {
        /// The HTTP status (429 or 5xx).
        status: u16,
        /// How long the server asked to wait.
        retry_after: Duration,
    },
    /// The server could not be reached, or the connection broke.
    Unreachable {
        /// The URL asked.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// No answer came in time.
    Timeout {
        /// The URL asked.
        url: String,
        /// The time allowed per request.
        after: Duration,
    },
    /// The reply is not a chat completion this client can read.
    Malformed {
        /// What is wrong with it.
        reason: String,
    },
    /// The reply was cut off before the model finished (at the request's token limit, or the
    /// model's context window), so its last part may be incomplete: an agent's step refuses
    /// it (a call's arguments may be cut), while a tool's sampling request takes its text as
    /// far as it goes (MCP's `stopReason` `maxTokens`).
    CutOff {
        /// Where it was cut, what the model was writing then, and the remedy.
        reason: String,
        /// The text the model had written by then, if any.
        text: Option<String>,
    },
    /// A [`ScriptedModel`](crate::ScriptedModel) was asked more often than its script has replies.
    ScriptExhausted {
        /// How many replies the script had.
        replies: usize,
    },
}

/// The error of a reply cut off at `limit`: what the model was writing then (its call of
/// `last_call`, whose arguments may be incomplete; else its text; else nothing yet), the
/// remedy, and the text written by then.
pub(crate) fn cut_off(
    limit: &str,
    last_call: Option<&str>,
    text: Option<String>,
    remedy: &str,
) -> LmError {
    let writing = match (last_call, &text) {
        (Some(name), _) => format!("in a call of `{name}`, whose arguments may be incomplete"),
        (None, Some(_)) => "in its text, which may be incomplete".to_owned(),
        (None, None) => "before the model had written anything".to_owned(),
    };
    LmError::CutOff {
        reason: format!("it was cut off at {limit} {writing}; {remedy}"),
        text,
    }
}

impl fmt::Display for LmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LmError::Declaration(error) => write!(f, "nothing was sent to the model: {error}"),
            LmError::Status {
                status,
                message,
                attempts,
            } => {
                write!(f, "the model server answered HTTP {status}: {message}")?;
                if *attempts > 1 {
                    write!(f, " (after {attempts} attempts)")?;
                }
                Ok(())
            }
            LmError::RetryTooLate {
                status,
                retry_after,
            } => write!(
                f,
                "the model server answered HTTP {status} and asked to retry after {}s, \
                 longer than this client waits",
                retry_after.as_secs()
            ),
            LmError::Unreachable { url, reason } => {
                write!(f, "cannot reach the model server at {url}: {reason}")
            }
            LmError::Timeout { url, after } => write!(
                f,
                "the model server at {url} did not answer within {}s",
                after.as_secs_f64()
            ),
            LmError::Malformed { reason } => {
                write!(f, "the model server's reply cannot be read: {reason}")
            }
            LmError::CutOff { reason, .. } => {
                write!(f, "the model server's reply cannot be used: {reason}")
            }
            LmError::ScriptExhausted { replies } => write!(
                f,
                "the scripted model was asked for reply {} but its script has {replies}",
                replies + 1
            ),
        }
    }
}

impl std::error::Error for LmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LmError::Declaration(error) => Some(error),
            _ => None,
        }
    }
}

impl From<EnvelopeError> for LmError {
    fn from(error: EnvelopeError) -> Self {
        LmError::Declaration(error)
    }
}
