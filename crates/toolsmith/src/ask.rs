//! Asking from inside a call: a person, for a typed answer ([`Context::elicit`]), or a model,
//! for text ([`Context::sample`]). Whoever can answer is an [`Asker`] the caller puts in the
//! call's context: the MCP server asks its client (`elicitation/create`,
//! `sampling/createMessage`), the agent asks its elicitation handler and its own model.
//!
//! With nobody to ask, a call gets [`ToolError::NobodyToAsk`], which the tool can handle (fall
//! back to a default, say what it needs in its answer).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolsmith_types::{Describe, coerce, elicitation_schema};

use crate::{Context, ToolError};

/// The future an [`Asker`] answers with.
pub type AskFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AskError>> + Send + 'a>>;

/// Whoever a running call can ask: a person (elicitation), a model (sampling), or both. The
/// caller puts one in the call's [`Context`] ([`Context::with_asker`]); each method's default
/// says it cannot.
pub trait Asker: Send + Sync {
    /// Asks a person `request.message`, with a form for the answer (`request.schema`).
    fn elicit<'a>(
        &'a self,
        context: &'a Context,
        request: &'a Elicitation,
    ) -> AskFuture<'a, Elicited> {
        let _ = (context, request);
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "the caller takes no questions for a person".to_owned(),
        ))))
    }

    /// Asks a model to answer `request`'s messages.
    fn sample<'a>(&'a self, context: &'a Context, request: &'a Sampling) -> AskFuture<'a, Sampled> {
        let _ = (context, request);
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "the caller has no model to ask".to_owned(),
        ))))
    }
}

/// Why an [`Asker`] has no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskError {
    /// Nobody here can answer this kind of question (a client without the capability, a
    /// stateless transport): why, in words.
    Unsupported(String),
    /// The question was asked and went wrong (the client refused it, the connection went
    /// away): what happened, in words.
    Failed(String),
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::Unsupported(why) | AskError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for AskError {}

/// What is asked of a person: a message and the form of the answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Elicitation {
    /// What the person is asked.
    pub message: String,
    /// The form: MCP's restricted elicitation schema (a flat object of text, numbers,
    /// booleans and choices), as [`elicitation_schema`] writes it.
    pub schema: Value,
}

impl Elicitation {
    /// `message`, answered in the form `schema`.
    pub fn new(message: impl Into<String>, schema: Value) -> Self {
        Elicitation {
            message: message.into(),
            schema,
        }
    }

    /// The form as it is shown filled in before the person types anything: each field that
    /// states a `default` (SEP-1034), with it. An asker that accepts the form as offered
    /// answers `Elicited::Accept(question.defaults())`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::Elicitation;
    ///
    /// let question = Elicitation::new(
    ///     "Ship it?",
    ///     json!({"type": "object", "properties": {
    ///         "speed": {"type": "string", "enum": ["slow", "fast"], "default": "slow"},
    ///         "note": {"type": "string"},
    ///     }}),
    /// );
    /// assert_eq!(serde_json::Value::Object(question.defaults()), json!({"speed": "slow"}));
    /// ```
    pub fn defaults(&self) -> Map<String, Value> {
        self.schema["properties"]
            .as_object()
            .map(|fields| {
                fields
                    .iter()
                    .filter_map(|(name, field)| Some((name.clone(), field.get("default")?.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A person's answer: the form filled in, or why not. `T` is what the form holds: a JSON
/// object as an [`Asker`] returns it, the typed value from [`Context::elicit`].
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited<T = Map<String, Value>> {
    /// The person answered.
    Accept(T),
    /// The person said no.
    Decline,
    /// The person dismissed the question without choosing.
    Cancel,
}

impl<T> Elicited<T> {
    /// The word MCP uses for this outcome: `accept`, `decline` or `cancel`.
    pub fn action(&self) -> &'static str {
        match self {
            Elicited::Accept(_) => "accept",
            Elicited::Decline => "decline",
            Elicited::Cancel => "cancel",
        }
    }

    /// The answer, where the person gave one.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accept(answer) => Some(answer),
            Elicited::Decline | Elicited::Cancel => None,
        }
    }
}

/// Who says a message in a [`Sampling`] conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user (what the model is to answer).
    User,
    /// The assistant (an earlier answer).
    Assistant,
}

/// One message of a [`Sampling`] conversation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub text: String,
}

impl SamplingMessage {
    /// `text`, said by `role`.
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        SamplingMessage {
            role,
            text: text.into(),
        }
    }

    /// `text`, said by the user.
    pub fn user(text: impl Into<String>) -> Self {
        SamplingMessage::new(Role::User, text)
    }

    /// `text`, said by the assistant (an earlier answer).
    pub fn assistant(text: impl Into<String>) -> Self {
        SamplingMessage::new(Role::Assistant, text)
    }
}

/// What is asked of a model: a conversation to answer, a system prompt, and how long the
/// answer may be.
///
/// ```
/// use toolsmith::Sampling;
///
/// let request = Sampling::new("Summarize: the sky is blue.").with_max_tokens(100);
/// assert_eq!(request.messages[0].text, "Summarize: the sky is blue.");
/// assert_eq!(request.max_tokens, 100);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sampling {
    /// The conversation, oldest first; the last message is the user's.
    pub messages: Vec<SamplingMessage>,
    /// The system prompt, if any.
    pub system: Option<String>,
    /// The most tokens the answer may have: an MCP client is told, and an agent's own model is
    /// asked for no more (an answer cut off there comes back as far as it goes, its
    /// [`stop_reason`](Sampled::stop_reason) `maxTokens`).
    pub max_tokens: u32,
    /// The sampling temperature, where the tool wants one.
    pub temperature: Option<f64>,
}

impl Sampling {
    /// The answer to `prompt`, said by the user, within [`Sampling::DEFAULT_MAX_TOKENS`].
    pub fn new(prompt: impl Into<String>) -> Self {
        Sampling::conversation(vec![SamplingMessage::user(prompt)])
    }

    /// The next answer in the conversation `messages` (oldest first, the user's last), within
    /// [`Sampling::DEFAULT_MAX_TOKENS`].
    pub fn conversation(messages: Vec<SamplingMessage>) -> Self {
        Sampling {
            messages,
            system: None,
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            temperature: None,
        }
    }

    /// How long an answer may be unless the tool says otherwise.
    pub const DEFAULT_MAX_TOKENS: u32 = 1000;

    /// This request, with the system prompt `system`.
    #[must_use]
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// This request, its answer at most `max_tokens` long.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// This request, sampled at `temperature`.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

impl From<&str> for Sampling {
    fn from(prompt: &str) -> Self {
        Sampling::new(prompt)
    }
}

impl From<String> for Sampling {
    fn from(prompt: String) -> Self {
        Sampling::new(prompt)
    }
}

/// A model's answer to a [`Sampling`] request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// The answer's text.
    pub text: String,
    /// The model that answered, where the answerer says.
    pub model: Option<String>,
    /// Why the answer ended (`endTurn`, `maxTokens`, ...), where the answerer says.
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// The answer `text`, saying nothing of the model or why it ended.
    pub fn new(text: impl Into<String>) -> Self {
        Sampled {
            text: text.into(),
            model: None,
            stop_reason: None,
        }
    }

    /// This answer, given by `model`.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// This answer, ended for `reason` (`endTurn`, `maxTokens`, ...).
    #[must_use]
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }
}

/// What is being asked, for errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Asking {
    /// A person, for an answer to a form.
    Elicitation,
    /// A model, for text.
    Sampling,
}

impl Asking {
    /// `elicitation` or `sampling`.
    pub fn as_str(self) -> &'static str {
        match self {
            Asking::Elicitation => "elicitation",
            Asking::Sampling => "sampling",
        }
    }
}

impl Context {
    /// Asks a person `message`, for an answer of type `T`: a struct of text, numbers,
    /// booleans, choices among strings and sets of such choices (see [`elicitation_schema`];
    /// defaults are offered as such). The answer is read as arguments are, leniently and
    /// never lossily (a `"30"` for an integer field is 30), under this call's policy.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde::Deserialize;
    /// use toolsmith::{Arguments, AskFuture, Asker, Context, Elicitation, Elicited, ToolExt, ToolType};
    ///
    /// /// Whom to book for.
    /// #[derive(Deserialize, ToolType)]
    /// struct Traveller {
    ///     /// Full name.
    ///     name: String,
    ///     /// How many bags.
    ///     bags: u8,
    /// }
    ///
    /// /// Books a seat, asking whom for.
    /// #[toolsmith::tool]
    /// async fn book(ctx: &Context) -> Result<String, toolsmith::ToolError> {
    ///     Ok(match ctx.elicit::<Traveller>("Who is travelling?").await? {
    ///         Elicited::Accept(t) => format!("Booked for {} with {} bags", t.name, t.bags),
    ///         Elicited::Decline | Elicited::Cancel => "Not booked".to_owned(),
    ///     })
    /// }
    ///
    /// /// A person who always answers the same.
    /// struct Ada;
    /// impl Asker for Ada {
    ///     fn elicit<'a>(&'a self, _: &'a Context, _: &'a Elicitation) -> AskFuture<'a, Elicited> {
    ///         let answer = serde_json::json!({"name": "Ada", "bags": "2"});
    ///         Box::pin(async move { Ok(Elicited::Accept(answer.as_object().unwrap().clone())) })
    ///     }
    /// }
    ///
    /// let ctx = Context::new().with_asker(Arc::new(Ada));
    /// let output = Book.call_blocking(Arguments::Text("{}"), ctx)?;
    /// assert_eq!(output.as_text(), "Booked for Ada with 2 bags");
    ///
    /// // With nobody to ask, the tool gets an error it can handle.
    /// let error = Book.call_blocking(Arguments::Text("{}"), Context::new()).unwrap_err();
    /// assert_eq!(error.code(), "nobody_to_ask");
    /// # Ok::<(), toolsmith::ToolError>(())
    /// ```
    ///
    /// A caller may run the call again with the answers rather than wait for them (an MCP
    /// server on protocol 2026-07-28 does: see `toolsmith-mcp`): ask before acting, and once
    /// [`Context::is_cancelled`] says the call is over, do not act on the error a question got.
    ///
    /// # Errors
    /// [`ToolError::NobodyToAsk`] when the caller gave no [`Asker`] or its asker cannot ask a
    /// person; [`ToolError::AskFailed`] when asking went wrong or the answer does not read as
    /// a `T`; [`ToolError::Cancelled`] when the call is cancelled before or while it waits
    /// ([`ToolError::TimedOut`] when its deadline passes); [`ToolError::Failed`] when `T`
    /// cannot be a form (a bug in the tool).
    pub async fn elicit<T: Describe + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, ToolError> {
        let graph = T::type_graph();
        let schema = elicitation_schema(&graph).map_err(|error| ToolError::Failed {
            tool: self.tool_label(),
            message: format!("cannot ask for a `{}`: {error}", std::any::type_name::<T>()),
        })?;
        let answer = self.elicit_with_schema(message, schema).await?;
        let Elicited::Accept(content) = answer else {
            return Ok(match answer {
                Elicited::Decline => Elicited::Decline,
                _ => Elicited::Cancel,
            });
        };
        let failed = |why: String| ToolError::AskFailed {
            tool: self.tool_label(),
            asking: Asking::Elicitation,
            message: format!("the answer does not fit the form: {why}"),
        };
        let coerced = coerce(&graph, &Value::Object(content), self.policy())
            .map_err(|errors| failed(errors.to_string()))?;
        serde_json::from_value(coerced.value)
            .map(Elicited::Accept)
            .map_err(|error| failed(error.to_string()))
    }

    /// Asks a person `message`, with the form `schema` (MCP's restricted elicitation schema,
    /// written by hand): the answer as the asker returned it, unchecked. [`Context::elicit`]
    /// is the typed, checked form of this.
    ///
    /// # Errors
    /// As [`Context::elicit`], but for the reading of the answer.
    pub async fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicited, ToolError> {
        let request = Elicitation {
            message: message.into(),
            schema,
        };
        let asker = self.asker(Asking::Elicitation)?;
        self.until_cancelled(asker.elicit(self, &request), Asking::Elicitation)
            .await
    }

    /// Asks a model for text: `request` is a prompt (`&str`, `String`) or a [`Sampling`].
    ///
    /// # Errors
    /// [`ToolError::NobodyToAsk`] when the caller gave no [`Asker`] or its asker has no
    /// model; [`ToolError::AskFailed`] when asking went wrong; [`ToolError::Cancelled`] when
    /// the call is cancelled while it waits ([`ToolError::TimedOut`] when its deadline
    /// passes).
    pub async fn sample(&self, request: impl Into<Sampling>) -> Result<Sampled, ToolError> {
        let request = request.into();
        let asker = self.asker(Asking::Sampling)?;
        self.until_cancelled(asker.sample(self, &request), Asking::Sampling)
            .await
    }

    /// The asker, or the error saying there is none.
    fn asker(&self, asking: Asking) -> Result<&dyn Asker, ToolError> {
        self.asker_ref().ok_or_else(|| ToolError::NobodyToAsk {
            tool: self.tool_label(),
            asking,
            reason: "the caller gave the call nobody to ask".to_owned(),
        })
    }

    /// `ask`'s answer, unless the call is cancelled first.
    async fn until_cancelled<T>(
        &self,
        ask: AskFuture<'_, T>,
        asking: Asking,
    ) -> Result<T, ToolError> {
        let tool = self.tool_label();
        // A call cancelled already asks nobody.
        if self.is_cancelled() {
            return Err(self.stopped_error(tool));
        }
        let mut ask = ask;
        let mut cancelled = self.cancelled();
        let answer = std::future::poll_fn(|cx| {
            if let Poll::Ready(answer) = ask.as_mut().poll(cx) {
                return Poll::Ready(Some(answer));
            }
            match Pin::new(&mut cancelled).poll(cx) {
                Poll::Ready(()) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        match answer {
            None => Err(self.stopped_error(tool)),
            Some(Ok(answer)) => Ok(answer),
            Some(Err(AskError::Unsupported(reason))) => Err(ToolError::NobodyToAsk {
                tool,
                asking,
                reason,
            }),
            Some(Err(AskError::Failed(message))) => Err(ToolError::AskFailed {
                tool,
                asking,
                message,
            }),
        }
    }

    fn tool_label(&self) -> String {
        self.tool_name().unwrap_or("").to_owned()
    }
}
