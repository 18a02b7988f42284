//! [`ReAct`]: a signature answered over tools by native tool calling, and [`Predict`]: a
//! signature answered in one call. Both run the same loop ([`Engine`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolsmith::types::{did_you_mean, parse_arguments};
use toolsmith::{
    Arguments, Asker, Context, Offload, Policy, Registry, Repair, Timeout, Tool, ToolError,
    ToolOutput, ToolResult, block_on, coerce_arguments,
};

use crate::approval::{Decision, Decisions, Paused, PendingCall};
use crate::ask::{AgentAsker, ElicitationHandler};
use crate::calls;
use crate::content::for_text_message;
use crate::declaration::ToolDeclaration;
use crate::error::AgentError;
use crate::lm::{Delta, LanguageModel, Usage};
use crate::message::{Message, Request, ToolCall, ToolChoice};
use crate::signature::{Compiled, FINISH, Signature, Verdict};
use crate::step::Step;

/// How long a run may take unless set ([`ReAct::timeout`], [`Predict::timeout`]): ten minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// What an agent answered: every output field, typed and as JSON, and how it got there.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<O> {
    /// The output, typed.
    pub output: O,
    /// The output as its canonical JSON object.
    pub value: Value,
    /// The repairs the answer needed (a `"42"` read as `42`, ...).
    pub repairs: Vec<Repair>,
    /// Every tool call made on the way (rejected answers included), in order.
    pub trajectory: Vec<Step>,
    /// How many times the model was asked.
    pub lm_calls: usize,
    /// The tokens of every model call summed, where the model reported them (`None` when no
    /// reply did; a reply that reported none adds nothing).
    pub usage: Option<Usage>,
}

/// What a run reports as it goes ([`ReAct::run_streaming`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// More of the model's text, as it is generated (the answer itself, when the model
    /// answers in text; else what it says around its tool calls).
    Text(String),
    /// The model started a tool call; its result follows as [`Event::ToolResult`].
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool called.
        name: String,
    },
    /// A tool call was answered: the step as the model reads it.
    ToolResult(Step),
    /// The run answered: the output as its canonical JSON object.
    Answer(Value),
}

/// Where a run reports its [`Event`]s: called on the task that polls the run, in order.
pub type EventSink<'a> = dyn Fn(Event) + Send + Sync + 'a;

/// A signature answered over tools: the model calls tools (several at once if it likes), reads
/// their results, and answers with `finish`.
///
/// Tools are declared in the model's [`dialect`](LanguageModel::dialect), and their arguments
/// coerced under it. Each call goes through the registry's
/// [`Layer`](toolsmith::Layer)s (a [`Timeout::deadline`] added innermost) with a [`Context`]
/// whose call id is the model's `tool_call_id`, and which carries the run's deadline (see
/// [`timeout`](Self::timeout)) and whatever the context the run was given holds
/// ([`run_in`](Self::run_in): request data, cancellation). The calls of one reply run at once,
/// async tools polled together on the calling thread, blocking tools on threads of a pool
/// (see [`offload`](Self::offload)), and are answered in order, each quoting its
/// `tool_call_id`. Invalid arguments, an unknown tool (with the nearest name), a tool's error,
/// panic or timeout become the tool message the model reads, and the loop goes on. What a tool
/// returns that a tool message cannot carry (an image, audio) is dropped with a note the model
/// reads, and kept in the [`Step`]. The answer is the `finish` call, coerced like any tool's
/// arguments (or, when the output is one string, a reply of text without tool calls). Each model
/// call is one step; after [`max_steps`](Self::max_steps) (10 unless set) the run fails with its
/// trajectory.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolsmith::Registry;
/// use toolsmith_agent::{QuestionAnswer, Question, ReAct, ScriptedModel};
///
/// /// Adds two integers.
/// #[toolsmith::tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let mut tools = Registry::new();
/// tools.add(Arc::new(Add))?;
/// let lm = Arc::new(
///     ScriptedModel::new()
///         .then_call("add", json!({"a": "2", "b": 40}))
///         .then_call("finish", json!({"answer": "42"})),
/// );
/// let agent = ReAct::<QuestionAnswer>::new(lm, &tools)?;
/// let answer = agent.run_blocking(&Question { question: "What is 2 + 40?".into() })?;
/// assert_eq!(answer.output.answer, "42");
/// assert_eq!(answer.trajectory[0].observation, "42");
/// assert_eq!(answer.trajectory[0].repairs[0].code.as_str(), "int_from_string");
/// assert_eq!(answer.lm_calls, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ReAct<S: Signature> {
    lm: Arc<dyn LanguageModel>,
    compiled: Compiled<S>,
    /// The tools offered, with the caller's layers, a deadline layer and the offload.
    tools: Registry,
    declarations: Vec<ToolDeclaration>,
    tool_choice: ToolChoice,
    max_steps: usize,
    policy: Policy,
    timeout: Duration,
    approval: Option<Arc<ApprovalPredicate>>,
    /// What the tools ask a person or a model (see [`elicitation`](Self::elicitation)).
    asker: Arc<dyn Asker>,
}

impl<S: Signature> ReAct<S> {
    /// An agent over every tool of `tools`, called through its layers.
    ///
    /// # Errors
    /// [`AgentError::Signature`] when the signature's input or output is not a struct;
    /// [`AgentError::Tools`] when a tool is named `finish` or cannot be declared in the model's
    /// dialect.
    pub fn new(lm: Arc<dyn LanguageModel>, tools: &Registry) -> Result<Self, AgentError> {
        let order: Vec<String> = tools.names().map(str::to_owned).collect();
        ReAct::over(lm, tools.clone(), &order)
    }

    /// An agent over the tools of `tools` named in `names` (offered in that order), called
    /// through its layers.
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`AgentError::Tools`] for a name `tools` does not have (with
    /// the nearest one).
    pub fn with_tools(
        lm: Arc<dyn LanguageModel>,
        tools: &Registry,
        names: &[impl AsRef<str>],
    ) -> Result<Self, AgentError> {
        let mut order: Vec<String> = Vec::with_capacity(names.len());
        for name in names {
            let name = name.as_ref();
            if tools.entry(name).is_none() {
                let mut message = format!("no tool is named `{name}`");
                if let Some(near) = did_you_mean(name, tools.names()) {
                    message.push_str(&format!("; did you mean `{near}`?"));
                }
                return Err(AgentError::Tools(message));
            }
            if !order.iter().any(|chosen| chosen == name) {
                order.push(name.to_owned());
            }
        }
        let chosen = tools.filter(|entry| order.iter().any(|name| name == entry.name()));
        ReAct::over(lm, chosen, &order)
    }

    /// An agent over exactly `tools`, in a registry of the default layers.
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`AgentError::Tools`] when two tools share a name.
    pub fn from_tools(
        lm: Arc<dyn LanguageModel>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<Self, AgentError> {
        let mut registry = Registry::new();
        for tool in tools {
            refuse_finish(tool.name())?;
            registry
                .add(tool)
                .map_err(|e| AgentError::Tools(e.to_string()))?;
        }
        let order: Vec<String> = registry.names().map(str::to_owned).collect();
        ReAct::over(lm, registry, &order)
    }

    /// An agent over `tools`, declared in the order of `order` (the names of all of them).
    fn over(
        lm: Arc<dyn LanguageModel>,
        tools: Registry,
        order: &[String],
    ) -> Result<Self, AgentError> {
        let dialect = lm.dialect();
        let compiled = Compiled::<S>::new(dialect)?;
        let mut declarations = Vec::with_capacity(order.len() + 1);
        for name in order {
            refuse_finish(name)?;
            let entry = tools
                .find(name)
                .map_err(|e| AgentError::Tools(e.to_model_message()))?;
            let declared = ToolDeclaration::of(entry.tool().as_ref());
            declared
                .parameters_in(dialect)
                .map_err(|e| AgentError::Tools(e.to_string()))?;
            declarations.push(declared);
        }
        declarations.push(compiled.finish_declaration.clone());
        let tools = tools
            .with_layer(Timeout::deadline())
            .with_offload(calls::default_offload());
        let asker = Arc::new(AgentAsker {
            lm: Arc::clone(&lm),
            person: None,
        });
        Ok(ReAct {
            lm,
            asker,
            compiled,
            tools,
            declarations,
            tool_choice: ToolChoice::Auto,
            max_steps: 10,
            policy: Policy::default().with_dialect(dialect),
            timeout: DEFAULT_TIMEOUT,
            approval: None,
        })
    }

    /// The most model calls before the run fails with [`AgentError::MaxSteps`] (at least 1).
    pub fn max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps.max(1);
        self
    }

    /// The tool choice asked of the model at every step ([`ToolChoice::Auto`] unless set).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// The coercion policy for the tools' arguments and the answer (lenient unless set).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The longest a run may take ([`DEFAULT_TIMEOUT`], ten minutes, unless set;
    /// `Duration::MAX` for no deadline of the agent's own). The deadline is every tool call's
    /// (the [`Timeout::deadline`] layer cancels a call still running then, answered `TimedOut`
    /// through the registry's layers and kept so in the trajectory) and every model
    /// request's ([`Request::deadline`]); once it has passed, the run ends with
    /// [`AgentError::DeadlinePassed`]. A context given to [`run_in`](Self::run_in) with an
    /// earlier deadline holds instead. To bound each tool call on its own, put a [`Timeout`]
    /// layer in the registry.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Where blocking tools ([`Tool::is_blocking`]: sync functions) run: unless set, a
    /// [`ToolPool`](toolsmith::ToolPool) the process's agents share (at most 64 threads, idle
    /// ones ending; a call that finds them all busy gets a thread of its own; [`ThreadPerCall`](toolsmith::ThreadPerCall) starts a thread per call
    /// instead). Never the thread that polls the calls, so that a sync
    /// tool delays no other call of its reply, and a deadline holds over it: past it, the run
    /// goes on without waiting for the thread (the tool sees
    /// [`Context::is_cancelled`] and may stop early).
    pub fn offload(mut self, offload: Arc<dyn Offload>) -> Self {
        self.tools = std::mem::take(&mut self.tools).with_offload(offload);
        self
    }

    /// Where the tools' questions for a person go ([`Context::elicit`]): `handler` answers
    /// them (the `toolsmith agent` command asks on the terminal). Without one, such a question
    /// is [`ToolError::NobodyToAsk`](toolsmith::ToolError::NobodyToAsk), which the tool can
    /// handle. A tool's [`Context::sample`] is answered by the agent's own model, with no tools
    /// offered. A run given a context that has an asker of its own
    /// ([`Context::with_asker`]: an agent inside an MCP tool, say) asks that one instead.
    pub fn elicitation(mut self, handler: Arc<dyn ElicitationHandler>) -> Self {
        self.asker = Arc::new(AgentAsker {
            lm: Arc::clone(&self.lm),
            person: Some(handler),
        });
        self
    }

    /// Makes the calls `predicate` picks wait for a person's approval, besides the calls of
    /// tools marked `#[tool(needs_approval)]` ([`Tool::needs_approval`]): a refund above a
    /// sum, a command outside a list. A reply with such a call pauses the run before any of
    /// its calls runs ([`AgentError::Paused`]); [`resume`](Self::resume) goes on once each is
    /// approved or rejected.
    pub fn needs_approval(
        mut self,
        predicate: impl Fn(&ToolCall) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.approval = Some(Arc::new(predicate));
        self
    }

    /// Goes on with a run that paused for approval ([`AgentError::Paused`]), once every
    /// waiting call is decided: the approved calls run with the reply's others, each rejected
    /// one is answered to the model as not run, with the person's reason; then the run goes
    /// on as [`run`](Self::run) does (and may pause again). `paused` may come from another
    /// process (it is serializable); the calls that need approval are decided again from
    /// this agent's tools and predicate.
    ///
    /// # Errors
    /// As [`run_in`](Self::run_in); [`AgentError::Approval`] when a waiting call has no
    /// decision, a decision names a call that is not waiting, or the state does not end with
    /// the model's calls. The steps count on from the paused run's model calls.
    pub fn resume(
        &self,
        paused: Paused,
        decisions: Decisions,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + '_ {
        self.resume_in(paused, decisions, Context::new())
    }

    /// [`resume`](Self::resume) in `context` (as [`run_in`](Self::run_in)).
    ///
    /// # Errors
    /// As [`resume`](Self::resume).
    pub fn resume_in(
        &self,
        paused: Paused,
        decisions: Decisions,
        context: Context,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + '_ {
        Self::resumed(self.engine(context), paused, decisions)
    }

    /// [`resume_in`](Self::resume_in), reporting to `events` as
    /// [`run_streaming`](Self::run_streaming) does.
    ///
    /// # Errors
    /// As [`resume`](Self::resume).
    pub fn resume_streaming<'a>(
        &'a self,
        paused: Paused,
        decisions: Decisions,
        context: Context,
        events: &'a EventSink<'a>,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + 'a {
        let mut engine = self.engine(context);
        engine.events = Some(events);
        Self::resumed(engine, paused, decisions)
    }

    /// The run `engine` goes on with from `paused`.
    async fn resumed(
        engine: Engine<'_, S>,
        paused: Paused,
        decisions: Decisions,
    ) -> Result<Answer<S::Output>, AgentError> {
        let parts = paused.into_parts().map_err(AgentError::Approval)?;
        let progress = Progress {
            messages: parts.messages,
            lm_calls: parts.lm_calls,
            usage: parts.usage,
            trajectory: parts.trajectory,
        };
        let resumed = Resumed {
            reply: parts.reply,
            decisions,
            shown: parts.pending,
        };
        engine.run(progress, Some(resumed)).await
    }

    /// [`resume`](Self::resume), blocking this thread until the answer.
    ///
    /// # Errors
    /// As [`resume`](Self::resume), and [`AgentError::InsideRuntime`] as
    /// [`run_blocking`](Self::run_blocking).
    pub fn resume_blocking(
        &self,
        paused: Paused,
        decisions: Decisions,
    ) -> Result<Answer<S::Output>, AgentError> {
        block_on(self.resume(paused, decisions)).map_err(|_| AgentError::InsideRuntime)?
    }

    /// The tools offered (`finish` last).
    pub fn declarations(&self) -> &[ToolDeclaration] {
        &self.declarations
    }

    /// Answers `input` ([`run_in`](Self::run_in) a new context).
    ///
    /// # Errors
    /// As [`run_in`](Self::run_in).
    pub fn run(
        &self,
        input: &S::Input,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + '_ {
        self.run_in(input, Context::new())
    }

    /// Answers `input` in `context`: its request data ([`Context::get`]), cancellation,
    /// deadline (where earlier than the agent's own) and reporter reach every tool call, whose
    /// call id is the model's `tool_call_id` and whose policy is the agent's. A tool that runs
    /// an agent inside passes its own context on, so that its caller's deadline and
    /// cancellation hold over the agent it runs.
    ///
    /// A future any executor can poll: async tools are polled in it, blocking ones run on
    /// other threads (see [`offload`](Self::offload)), and the HTTP clients send on
    /// tokio (the caller's runtime, else one of their own). Dropping it abandons the run.
    ///
    /// # Errors
    /// [`AgentError::MaxSteps`] (with the trajectory) when the model has not answered within
    /// the steps; [`AgentError::DeadlinePassed`] and [`AgentError::Cancelled`] (with the
    /// trajectory) when the run's deadline passed or `context` was cancelled first;
    /// [`AgentError::Lm`] when the model cannot be asked; [`AgentError::Input`] when the input
    /// does not serialize to an object.
    pub fn run_in(
        &self,
        input: &S::Input,
        context: Context,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + '_ {
        let engine = self.engine(context);
        let opening = engine.opening(input);
        async move { engine.run(Progress::new(opening?), None).await }
    }

    /// Answers `input` in `context` as [`run_in`](Self::run_in) does, reporting to `events`
    /// as the run goes: the model's text as it is generated ([`Event::Text`], the model asked
    /// to stream: [`LanguageModel::complete_streaming`]), each tool call as the model starts
    /// it and as it is answered, and the answer.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use toolsmith_agent::{Event, Question, QuestionAnswer, ReAct, ScriptedModel};
    ///
    /// let lm = Arc::new(ScriptedModel::new().then_text("Paris"));
    /// let agent = ReAct::<QuestionAnswer>::new(lm, &toolsmith::Registry::new())?;
    /// let seen = Mutex::new(Vec::new());
    /// let events = |event: Event| seen.lock().unwrap().push(event);
    /// let question = Question { question: "The capital of France?".into() };
    /// let run = agent.run_streaming(&question, toolsmith::Context::new(), &events);
    /// let answer = toolsmith::block_on(run)??;
    /// assert_eq!(answer.output.answer, "Paris");
    /// assert_eq!(
    ///     seen.into_inner().unwrap(),
    ///     [Event::Text("Paris".into()), Event::Answer(json!({"answer": "Paris"}))]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`run_in`](Self::run_in).
    pub fn run_streaming<'a>(
        &'a self,
        input: &S::Input,
        context: Context,
        events: &'a EventSink<'a>,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + 'a {
        let mut engine = self.engine(context);
        engine.events = Some(events);
        let opening = engine.opening(input);
        async move { engine.run(Progress::new(opening?), None).await }
    }

    /// The loop over this agent's model and tools, in `context`.
    fn engine(&self, context: Context) -> Engine<'_, S> {
        let context = run_context(context, &self.policy, self.timeout, Some(&self.asker));
        let (context, abandon) = abandonable(context);
        Engine {
            lm: self.lm.as_ref(),
            compiled: &self.compiled,
            tools: &self.tools,
            declarations: &self.declarations,
            tool_choice: &self.tool_choice,
            max_steps: self.max_steps,
            approval: self.approval.as_deref(),
            events: None,
            context,
            _abandon: Some(abandon),
        }
    }

    /// Answers `input`, blocking this thread until the answer ([`run`](Self::run) polled by
    /// [`toolsmith::block_on`]): for scripts, tests and the command line.
    ///
    /// # Errors
    /// As [`run_in`](Self::run_in), and [`AgentError::InsideRuntime`] when called from inside
    /// an async runtime, where blocking could deadlock it: await [`run`](Self::run) there.
    pub fn run_blocking(&self, input: &S::Input) -> Result<Answer<S::Output>, AgentError> {
        self.run_in_blocking(input, Context::new())
    }

    /// Answers `input` in `context`, blocking this thread until the answer: what a blocking
    /// tool that runs an agent inside calls, passing its own context on.
    ///
    /// # Errors
    /// As [`run_blocking`](Self::run_blocking).
    pub fn run_in_blocking(
        &self,
        input: &S::Input,
        context: Context,
    ) -> Result<Answer<S::Output>, AgentError> {
        block_on(self.run_in(input, context)).map_err(|_| AgentError::InsideRuntime)?
    }
}

/// [`AgentError::Tools`] for a tool named `finish`, the name the agent answers with.
fn refuse_finish(name: &str) -> Result<(), AgentError> {
    if name == FINISH {
        return Err(AgentError::Tools(format!(
            "a tool is named `{FINISH}`, the name the agent answers with"
        )));
    }
    Ok(())
}

/// The context of a run: the caller's, under the agent's policy, with the agent's deadline
/// where it is the earlier, asking `asker` where the caller gave no asker of its own.
fn run_context(
    context: Context,
    policy: &Policy,
    timeout: Duration,
    asker: Option<&Arc<dyn Asker>>,
) -> Context {
    let mut context = context.with_policy(policy.clone());
    if let Some(asker) = asker.filter(|_| !context.can_ask()) {
        context = context.with_asker(Arc::clone(asker));
    }
    match Instant::now().checked_add(timeout) {
        Some(deadline) => context.with_deadline(deadline),
        None => context,
    }
}

/// A signature answered in one model call: the model must call `finish`, whose parameters are
/// the output struct. A repaired answer is accepted with its repairs; an invalid one goes back
/// to the model with the errors, for at most [`attempts`](Self::attempts) calls in all (3
/// unless set).
///
/// ```
/// use std::sync::Arc;
/// use serde::{Deserialize, Serialize};
/// use serde_json::json;
/// use toolsmith::ToolType;
/// use toolsmith_agent::{Predict, ScriptedModel, Signature};
///
/// #[derive(Serialize, ToolType)]
/// struct Review { text: String }
///
/// #[derive(Deserialize, ToolType)]
/// struct Verdict { positive: bool, stars: u8 }
///
/// struct Rate;
/// impl Signature for Rate {
///     type Input = Review;
///     type Output = Verdict;
///     fn instructions() -> &'static str { "Rate the review." }
/// }
///
/// let lm = Arc::new(
///     ScriptedModel::new()
///         .then_call("finish", json!({"positive": "maybe", "stars": 4}))
///         .then_call("finish", json!({"positive": "true", "stars": "4"})),
/// );
/// let rate = Predict::<Rate>::new(lm.clone())?;
/// let answer = rate.call_blocking(&Review { text: "Lovely.".into() })?;
/// assert!(answer.output.positive);
/// assert_eq!(answer.output.stars, 4);
/// assert_eq!(answer.lm_calls, 2);
/// // The model was told what was wrong with its first answer.
/// let second = &lm.requests()[1].messages;
/// assert!(second.last().and_then(|m| m.content.as_deref()).unwrap_or("").contains("`positive`"));
/// # Ok::<(), toolsmith_agent::AgentError>(())
/// ```
pub struct Predict<S: Signature> {
    lm: Arc<dyn LanguageModel>,
    compiled: Compiled<S>,
    /// No tools: only `finish` is declared.
    tools: Registry,
    declarations: Vec<ToolDeclaration>,
    tool_choice: ToolChoice,
    attempts: usize,
    policy: Policy,
    timeout: Duration,
}

impl<S: Signature> Predict<S> {
    /// A predictor of `S` on `lm`.
    ///
    /// # Errors
    /// [`AgentError::Signature`] when the signature's input or output is not a struct.
    pub fn new(lm: Arc<dyn LanguageModel>) -> Result<Self, AgentError> {
        let dialect = lm.dialect();
        let compiled = Compiled::<S>::new(dialect)?;
        let declarations = vec![compiled.finish_declaration.clone()];
        Ok(Predict {
            lm,
            compiled,
            tools: Registry::new(),
            declarations,
            tool_choice: ToolChoice::Tool(FINISH.to_owned()),
            attempts: 3,
            policy: Policy::default().with_dialect(dialect),
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// The most model calls (at least 1) before [`AgentError::NoAnswer`].
    pub fn attempts(mut self, attempts: usize) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// The coercion policy for the answer (lenient unless set).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The longest a call may take, its model requests included ([`DEFAULT_TIMEOUT`], ten
    /// minutes, unless set; `Duration::MAX` for no deadline of its own); past it the call
    /// ends with [`AgentError::DeadlinePassed`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Answers `input` ([`call_in`](Self::call_in) a new context).
    ///
    /// # Errors
    /// As [`call_in`](Self::call_in).
    pub fn call(
        &self,
        input: &S::Input,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + '_ {
        self.call_in(input, Context::new())
    }

    /// Answers `input` in `context`, whose deadline (where earlier than the predictor's own)
    /// bounds the model requests and whose cancellation ends the attempts: what a tool that
    /// asks a model inside passes on from its own call.
    ///
    /// # Errors
    /// [`AgentError::NoAnswer`] when no reply in the attempts was a valid answer;
    /// [`AgentError::DeadlinePassed`] and [`AgentError::Cancelled`] when the deadline passed
    /// or `context` was cancelled first; [`AgentError::Lm`] when the model cannot be asked.
    pub fn call_in(
        &self,
        input: &S::Input,
        context: Context,
    ) -> impl Future<Output = Result<Answer<S::Output>, AgentError>> + Send + '_ {
        let engine = Engine {
            lm: self.lm.as_ref(),
            compiled: &self.compiled,
            tools: &self.tools,
            declarations: &self.declarations,
            tool_choice: &self.tool_choice,
            max_steps: self.attempts,
            approval: None,
            events: None,
            context: run_context(context, &self.policy, self.timeout, None),
            _abandon: None,
        };
        let opening = engine.opening(input);
        async move {
            engine
                .run(Progress::new(opening?), None)
                .await
                .map_err(|error| match error {
                    AgentError::MaxSteps { trajectory, .. } => AgentError::NoAnswer {
                        attempts: self.attempts,
                        problem: trajectory
                            .last()
                            .map_or_else(|| self.compiled.nudge(), |step| step.observation.clone()),
                        trajectory,
                    },
                    other => other,
                })
        }
    }

    /// Answers `input`, blocking this thread until the answer ([`call`](Self::call) polled by
    /// [`toolsmith::block_on`]).
    ///
    /// # Errors
    /// As [`call_in`](Self::call_in), and [`AgentError::InsideRuntime`] when called from
    /// inside an async runtime: await [`call`](Self::call) there.
    pub fn call_blocking(&self, input: &S::Input) -> Result<Answer<S::Output>, AgentError> {
        self.call_in_blocking(input, Context::new())
    }

    /// Answers `input` in `context`, blocking this thread until the answer: what a blocking
    /// tool that asks a model inside calls, passing its own context on.
    ///
    /// # Errors
    /// As [`call_blocking`](Self::call_blocking).
    pub fn call_in_blocking(
        &self,
        input: &S::Input,
        context: Context,
    ) -> Result<Answer<S::Output>, AgentError> {
        block_on(self.call_in(input, context)).map_err(|_| AgentError::InsideRuntime)?
    }
}

/// The loop both agents run.
struct Engine<'a, S: Signature> {
    lm: &'a dyn LanguageModel,
    compiled: &'a Compiled<S>,
    tools: &'a Registry,
    declarations: &'a [ToolDeclaration],
    tool_choice: &'a ToolChoice,
    max_steps: usize,
    /// Which calls wait for a person besides those of tools marked so.
    approval: Option<&'a ApprovalPredicate>,
    /// Where the run reports as it goes, if anywhere.
    events: Option<&'a EventSink<'a>>,
    /// The run's context: the policy, the deadline, and the caller's data and cancellation.
    context: Context,
    /// Cancels the run's calls when the run ends or is dropped (where it runs tools).
    _abandon: Option<Abandon>,
}

/// The cancellation of a run's own: its tool calls see it through their contexts, and it is
/// cancelled when the run is dropped (its caller stopped waiting) or ends. A blocking call
/// left waiting for a thread then never starts, and one still running (past a deadline that
/// answered for it) sees [`Context::is_cancelled`]. One per run, not per call.
struct Abandon(toolsmith::CancellationToken);

impl Drop for Abandon {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// `context` with a cancellation of the run's own that follows the caller's, and what cancels
/// it.
fn abandonable(context: Context) -> (Context, Abandon) {
    let token = match context.cancellation() {
        Some(caller) => caller.child(),
        None => toolsmith::CancellationToken::new(),
    };
    (context.with_cancellation(token.clone()), Abandon(token))
}

/// A predicate saying which tool calls need a person's approval ([`ReAct::needs_approval`]).
type ApprovalPredicate = dyn Fn(&ToolCall) -> bool + Send + Sync;

impl<S: Signature> Engine<'_, S> {
    /// The conversation's first messages: the instructions and the input. Made before the run
    /// starts, so that the run's future holds no reference to the input.
    fn opening(&self, input: &S::Input) -> Result<Vec<Message>, AgentError> {
        Ok(vec![
            Message::system(self.compiled.system_prompt(!self.tools.is_empty())),
            Message::user(self.compiled.user_message(input)?),
        ])
    }

    /// Runs the loop from `progress`: first answering `resumed` (a paused reply and the
    /// decisions on its calls) where there is one, then asking the model until an answer.
    async fn run(
        &self,
        mut progress: Progress,
        mut resumed: Option<Resumed>,
    ) -> Result<Answer<S::Output>, AgentError> {
        loop {
            let (reply, decisions) = match resumed.take() {
                Some(Resumed {
                    reply,
                    decisions,
                    shown,
                }) => (reply, Some((decisions, shown))),
                None => (self.ask(&mut progress).await?, None),
            };
            if let Some(answer) = self.answer(&mut progress, reply, decisions).await? {
                return Ok(answer);
            }
        }
    }

    /// The model's next reply, counted with its tokens.
    async fn ask(&self, progress: &mut Progress) -> Result<Message, AgentError> {
        if progress.lm_calls >= self.max_steps {
            return Err(AgentError::MaxSteps {
                max_steps: self.max_steps,
                trajectory: std::mem::take(&mut progress.trajectory),
                lm_calls: progress.lm_calls,
            });
        }
        if let Some(stop) = self.stopped(&mut progress.trajectory, progress.lm_calls) {
            return Err(stop);
        }
        let request = Request {
            messages: &progress.messages,
            tools: self.declarations,
            tool_choice: self.tool_choice,
            deadline: self.context.deadline(),
            max_tokens: None,
            temperature: None,
        };
        let asked = match self.events {
            // A cancelled run stops waiting for the model at once.
            None => until_cancelled(&self.context, self.lm.complete(request)).await,
            Some(events) => {
                let sink = |delta: Delta| match delta {
                    Delta::Text(text) => events(Event::Text(text)),
                    Delta::ToolCall { id, name, .. } => events(Event::ToolCall { id, name }),
                };
                let streamed = self.lm.complete_streaming(request, &sink);
                until_cancelled(&self.context, streamed).await
            }
        };
        progress.lm_calls += 1;
        match asked {
            Some(Ok(reply)) => {
                if let Some(used) = reply.usage {
                    *progress.usage.get_or_insert_default() += used;
                }
                let mut message = reply.message;
                unique_ids(&mut message);
                Ok(message)
            }
            // A request cut short by the deadline ends the run as the deadline does.
            Some(Err(error)) => Err(self
                .stopped(&mut progress.trajectory, progress.lm_calls)
                .unwrap_or(AgentError::Lm(error))),
            // Stopped waiting: the run was cancelled, or its deadline passed.
            None => Err(self
                .stopped(&mut progress.trajectory, progress.lm_calls)
                .unwrap_or_else(|| AgentError::Cancelled {
                    trajectory: std::mem::take(&mut progress.trajectory),
                    lm_calls: progress.lm_calls,
                })),
        }
    }

    /// Answers one reply: its text read as the answer, or its tool calls run (those that
    /// need approval only once decided: without `decisions`, the run pauses before them) and
    /// their results added to the conversation. The answer, when the reply gave one.
    async fn answer(
        &self,
        progress: &mut Progress,
        reply: Message,
        decisions: Option<(Decisions, Vec<PendingCall>)>,
    ) -> Result<Option<Answer<S::Output>>, AgentError> {
        let policy = self.context.policy();
        if reply.tool_calls.is_empty() {
            let text = reply.content.as_deref().unwrap_or("").trim();
            let verdict = (!text.is_empty())
                .then(|| self.compiled.read_text(text, policy))
                .flatten();
            let feedback = match verdict {
                Some(Verdict::Accepted {
                    output,
                    value,
                    repairs,
                }) => {
                    self.report(|| Event::Answer(value.clone()));
                    return Ok(Some(progress.answered(output, value, repairs)));
                }
                Some(Verdict::Rejected(problem)) => problem,
                None => self.compiled.nudge(),
            };
            progress.messages.push(reply);
            progress.messages.push(Message::user(feedback));
            return Ok(None);
        }
        // Each call as it would run: its arguments read and coerced, so that a predicate
        // judges, and a person sees, what the tool would be given. (Only where some call may
        // wait: coercing twice is not free.)
        let may_wait = self.approval.is_some()
            || reply.tool_calls.iter().any(|call| {
                call.name != FINISH
                    && self
                        .tools
                        .entry(&call.name)
                        .is_some_and(|entry| entry.tool().needs_approval())
            });
        let waiting: Vec<PendingCall> = if may_wait {
            reply
                .tool_calls
                .iter()
                .map(|call| self.as_run(call))
                .filter(|call| self.needs_approval(call))
                .map(|call| PendingCall::from(&call))
                .collect()
        } else {
            Vec::new()
        };
        let rejections = match decisions {
            None if waiting.is_empty() => Vec::new(),
            None => {
                progress.messages.push(reply);
                return Err(AgentError::Paused(Box::new(Paused::new(
                    waiting,
                    std::mem::take(&mut progress.messages),
                    progress.lm_calls,
                    progress.usage,
                    std::mem::take(&mut progress.trajectory),
                ))));
            }
            Some((decisions, shown)) => {
                // A decision was made on what the state showed: the calls that would run must
                // be exactly those, or the state was changed since.
                if shown != waiting {
                    return Err(AgentError::Approval(
                        "the calls waiting are not the ones the paused state shows for \
                         decision (the state was changed, or the agent's tools or predicate \
                         differ)"
                            .to_owned(),
                    ));
                }
                rejections(&waiting, &decisions)?
            }
        };
        let observed = if rejections.is_empty() {
            Observed::Ran(calls::run(self.tools, &self.context, &reply.tool_calls).await)
        } else {
            // The rejected calls are answered without running; the others run as usual.
            let approved: Vec<ToolCall> = reply
                .tool_calls
                .iter()
                .filter(|call| !rejections.iter().any(|(id, _)| id == &call.id))
                .cloned()
                .collect();
            let mut ran = calls::run(self.tools, &self.context, &approved).await;
            let decided = reply
                .tool_calls
                .iter()
                .map(
                    |call| match rejections.iter().find(|(id, _)| id == &call.id) {
                        Some((_, reason)) => Some(Err(ToolError::Failed {
                            tool: call.name.clone(),
                            message: format!("not run: a person rejected the call: {reason}"),
                        })),
                        None => ran.next().flatten(),
                    },
                )
                .collect::<Vec<_>>();
            Observed::Decided(decided.into_iter())
        };
        let mut answer = None;
        // The results go into the conversation as they come, the reply put before them at the
        // end (where it is no longer borrowed); a reply that answers drops them with the run.
        let reply_at = progress.messages.len();
        progress.messages.reserve(1 + reply.tool_calls.len());
        for (call, observed) in reply.tool_calls.iter().zip(observed) {
            let mut record = match observed {
                Some(result) => step_of(call, result),
                None => match self.compiled.read(&call.arguments, policy) {
                    // An answer written beside a call a person rejected was written before
                    // the model read the rejection: it is not taken.
                    Verdict::Accepted { .. } if !rejections.is_empty() => Step {
                        tool: call.name.clone(),
                        call_id: call.id.clone(),
                        arguments: call.arguments.clone(),
                        observation: "The answer was not taken: a call of the same reply was \
                                      rejected. Read its result and answer again."
                            .to_owned(),
                        repairs: Vec::new(),
                        error: Some("not_taken"),
                        dropped: Vec::new(),
                    },
                    Verdict::Accepted {
                        output,
                        value,
                        repairs,
                    } => {
                        answer.get_or_insert((output, value, repairs));
                        continue;
                    }
                    Verdict::Rejected(problem) => Step {
                        tool: call.name.clone(),
                        call_id: call.id.clone(),
                        arguments: call.arguments.clone(),
                        observation: problem,
                        repairs: Vec::new(),
                        error: Some("invalid_arguments"),
                        dropped: Vec::new(),
                    },
                },
            };
            if rejections.iter().any(|(id, _)| id == &call.id) {
                record.error = Some("rejected");
            }
            progress
                .messages
                .push(Message::tool_result(&call.id, &record.observation));
            self.report(|| Event::ToolResult(record.clone()));
            progress.trajectory.push(record);
        }
        if let Some((output, value, repairs)) = answer {
            self.report(|| Event::Answer(value.clone()));
            return Ok(Some(progress.answered(output, value, repairs)));
        }
        progress.messages.insert(reply_at, reply);
        Ok(None)
    }

    /// Reports the event `make` makes, where the run reports events.
    fn report(&self, make: impl FnOnce() -> Event) {
        if let Some(events) = self.events {
            events(make());
        }
    }

    /// `call` with its arguments as the tool would get them: read and coerced under the run's
    /// policy; as far as they could be read, where they are invalid (the call then fails when
    /// run, and a person may still be asked about it).
    fn as_run(&self, call: &ToolCall) -> ToolCall {
        let policy = self.context.policy();
        let coerced = self.tools.entry(&call.name).and_then(|entry| {
            coerce_arguments(
                entry.tool().parameters(),
                Arguments::Json(&call.arguments),
                policy,
            )
            .ok()
        });
        let arguments = match (coerced, &call.arguments) {
            (Some(coerced), _) => coerced.value,
            (None, Value::String(text)) => parse_arguments(text, policy)
                .map_or_else(|_| call.arguments.clone(), |read| Value::Object(read.value)),
            (None, other) => other.clone(),
        };
        ToolCall {
            arguments,
            ..call.clone()
        }
    }

    /// Whether `call` (as it would run) waits for a person: its tool says so, or the agent's
    /// predicate does. `finish` never does (it is the answer, not an action).
    fn needs_approval(&self, call: &ToolCall) -> bool {
        if call.name == FINISH {
            return false;
        }
        let marked = self
            .tools
            .entry(&call.name)
            .is_some_and(|entry| entry.tool().needs_approval());
        marked || self.approval.is_some_and(|predicate| predicate(call))
    }

    /// Why the run must stop now, if it must: its context cancelled, or its deadline passed.
    fn stopped(&self, trajectory: &mut Vec<Step>, lm_calls: usize) -> Option<AgentError> {
        if self.context.is_cancelled_by_caller() {
            Some(AgentError::Cancelled {
                trajectory: std::mem::take(trajectory),
                lm_calls,
            })
        } else if self.context.is_past_deadline() {
            Some(AgentError::DeadlinePassed {
                trajectory: std::mem::take(trajectory),
                lm_calls,
            })
        } else {
            None
        }
    }
}

/// What a reply's calls answered: run as they came, or run once a person decided on them.
enum Observed<'c> {
    Ran(calls::Answers<'c>),
    Decided(std::vec::IntoIter<Option<ToolResult>>),
}

impl Iterator for Observed<'_> {
    type Item = Option<ToolResult>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Observed::Ran(answers) => answers.next(),
            Observed::Decided(answers) => answers.next(),
        }
    }
}

/// The state of a run: the conversation, what the model cost, and the steps so far.
struct Progress {
    messages: Vec<Message>,
    lm_calls: usize,
    usage: Option<Usage>,
    trajectory: Vec<Step>,
}

impl Progress {
    /// A run from its first messages.
    fn new(messages: Vec<Message>) -> Self {
        Progress {
            messages,
            lm_calls: 0,
            usage: None,
            trajectory: Vec::new(),
        }
    }

    /// The answer, with what the run cost and did.
    fn answered<O>(&mut self, output: O, value: Value, repairs: Vec<Repair>) -> Answer<O> {
        Answer {
            output,
            value,
            repairs,
            trajectory: std::mem::take(&mut self.trajectory),
            lm_calls: self.lm_calls,
            usage: self.usage,
        }
    }
}

/// Gives each call of `reply` an id of its own: a repeated or empty id gets a suffix (`_2`,
/// `_3`, ...) no other call has, so that each result, and each person's decision, names one
/// call. (Ids come from the model or its server; some repeat them, and a made-up `call_1` can
/// meet a real one.)
fn unique_ids(reply: &mut Message) {
    // Most replies' ids are already their own: found so without copying one.
    if ids_distinct(&reply.tool_calls) {
        return;
    }
    let given: std::collections::HashSet<String> = reply
        .tool_calls
        .iter()
        .map(|call| call.id.clone())
        .collect();
    let mut taken = std::collections::HashSet::new();
    for call in &mut reply.tool_calls {
        if call.id.is_empty() {
            call.id = "call".to_owned();
        }
        if taken.insert(call.id.clone()) {
            continue;
        }
        let base = call.id.clone();
        let mut n = 2;
        while taken.contains(&format!("{base}_{n}")) || given.contains(&format!("{base}_{n}")) {
            n += 1;
        }
        call.id = format!("{base}_{n}");
        taken.insert(call.id.clone());
    }
}

/// Whether every call of `calls` has an id, and none another's.
fn ids_distinct(calls: &[ToolCall]) -> bool {
    // Pairwise for the few calls of most replies; a set for many.
    const PAIRWISE: usize = 16;
    if calls.iter().any(|call| call.id.is_empty()) {
        return false;
    }
    if calls.len() <= PAIRWISE {
        return calls
            .iter()
            .enumerate()
            .all(|(i, call)| calls[..i].iter().all(|earlier| earlier.id != call.id));
    }
    let mut seen = std::collections::HashSet::with_capacity(calls.len());
    calls.iter().all(|call| seen.insert(call.id.as_str()))
}

/// A paused reply going on: the reply, the decisions on its calls, and the calls the paused
/// state showed for decision.
struct Resumed {
    reply: Message,
    decisions: Decisions,
    shown: Vec<PendingCall>,
}

/// The rejected calls among `waiting` and why, once every one of them is decided.
///
/// # Errors
/// [`AgentError::Approval`] naming a waiting call without a decision, or a decision for a
/// call that is not waiting (a stale or mistyped id).
fn rejections(
    waiting: &[PendingCall],
    decisions: &Decisions,
) -> Result<Vec<(String, String)>, AgentError> {
    if let Some(unknown) = decisions
        .ids()
        .find(|id| !waiting.iter().any(|call| call.id == *id))
    {
        return Err(AgentError::Approval(format!(
            "a decision names the call `{unknown}`, which is not waiting for one"
        )));
    }
    let mut rejected = Vec::new();
    for call in waiting {
        match decisions.get(&call.id) {
            None => {
                return Err(AgentError::Approval(format!(
                    "the call `{}` of `{}` has no decision",
                    call.id, call.tool
                )));
            }
            Some(Decision::Approve) => {}
            Some(Decision::Reject { reason }) => rejected.push((call.id.clone(), reason.clone())),
        }
    }
    Ok(rejected)
}

/// `future`'s output, or `None` once `context` is cancelled first (the future is dropped).
async fn until_cancelled<F: Future>(context: &Context, future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cancelled = context.cancelled();
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        match Pin::new(&mut cancelled).poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// The step a tool call's result makes: its output as a tool message can carry it.
fn step_of(call: &ToolCall, result: ToolResult) -> Step {
    let (observation, repairs, error, dropped) = match result {
        Ok(ToolOutput {
            content, repairs, ..
        }) => {
            let (observation, dropped) = for_text_message(content);
            (observation, repairs, None, dropped)
        }
        Err(error) => (
            error.to_model_message(),
            Vec::new(),
            Some(error.code()),
            Vec::new(),
        ),
    };
    Step {
        tool: call.name.clone(),
        call_id: call.id.clone(),
        arguments: call.arguments.clone(),
        observation,
        repairs,
        error,
        dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(ids: &[&str]) -> Vec<String> {
        let mut reply = Message::tool_calls(
            ids.iter()
                .map(|id| ToolCall::new(*id, "add", json!({})))
                .collect(),
        );
        unique_ids(&mut reply);
        reply.tool_calls.into_iter().map(|call| call.id).collect()
    }

    #[test]
    fn ids_of_their_own_stay_as_they_are() {
        assert_eq!(ids(&["a", "b", "c"]), ["a", "b", "c"]);
        assert_eq!(ids(&[]), Vec::<String>::new());
        // Past the pairwise check's reach, the same answer.
        let many: Vec<String> = (0..40).map(|i| format!("call_{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(ids(&many), many);
    }

    #[test]
    fn repeated_and_empty_ids_get_a_suffix_no_other_call_has() {
        assert_eq!(ids(&["a", "a", "a"]), ["a", "a_2", "a_3"]);
        // `a_2` is a call's own id: the repeated `a` skips it.
        assert_eq!(ids(&["a", "a", "a_2"]), ["a", "a_3", "a_2"]);
        assert_eq!(ids(&["", ""]), ["call", "call_2"]);
        // A repeat past the pairwise check's reach is found too.
        let mut many: Vec<String> = (0..40).map(|i| format!("call_{i}")).collect();
        many.push("call_7".to_owned());
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let unique = ids(&many);
        assert_eq!(unique[40], "call_7_2");
        assert_eq!(unique[..40], many[..40]);
    }
}
