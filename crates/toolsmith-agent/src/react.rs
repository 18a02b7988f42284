//! [`ReAct`]: a signature answered over tools by native tool calling, and [`Predict`]: a
//! signature answered in one call. Both run the same loop ([`Engine`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolsmith::{
    Context, Offload, Policy, Registry, Repair, ThreadPerCall, Timeout, Tool, ToolOutput,
    ToolResult, block_on, did_you_mean,
};

use crate::calls;
use crate::content::for_text_message;
use crate::declaration::ToolDeclaration;
use crate::error::{AgentError, Step};
use crate::lm::{LanguageModel, Usage};
use crate::message::{Message, Request, ToolCall, ToolChoice};
use crate::signature::{Compiled, FINISH, Signature, Verdict};

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

/// A signature answered over tools: the model calls tools (several at once if it likes), reads
/// their results, and answers with `finish`.
///
/// Tools are declared in the model's [`dialect`](LanguageModel::dialect), and their arguments
/// coerced under it. Each call goes through the registry's
/// [`Layer`](toolsmith::Layer)s (a [`Timeout::deadline`] added innermost) with a [`Context`]
/// whose call id is the model's `tool_call_id`, and which carries the run's deadline (see
/// [`timeout`](Self::timeout)) and whatever the context the run was given holds
/// ([`run_in`](Self::run_in): request data, cancellation). The calls of one reply run at once,
/// async tools polled together on the calling thread, blocking tools each on a thread of its
/// own (see [`offload`](Self::offload)), and are answered in order, each quoting its
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
            .with_offload(Arc::new(ThreadPerCall));
        Ok(ReAct {
            lm,
            compiled,
            tools,
            declarations,
            tool_choice: ToolChoice::Auto,
            max_steps: 10,
            policy: Policy::default().with_dialect(dialect),
            timeout: DEFAULT_TIMEOUT,
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
    /// (the [`Timeout::deadline`] layer cancels a call still running then, and the model reads
    /// that it timed out) and every model request's ([`Request::deadline`]); once it has
    /// passed, the run ends with [`AgentError::DeadlinePassed`]. A context given to
    /// [`run_in`](Self::run_in) with an earlier deadline holds instead. To bound each tool call
    /// on its own, put a [`Timeout`] layer in the registry.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Where blocking tools ([`Tool::is_blocking`]: sync functions) run: a new thread per call
    /// ([`ThreadPerCall`]) unless set. Never the thread that polls the calls, so that a sync
    /// tool delays no other call of its reply, and a deadline holds over it: past it, the run
    /// goes on without waiting for the thread (the tool sees
    /// [`Context::is_cancelled`] and may stop early).
    pub fn offload(mut self, offload: Arc<dyn Offload>) -> Self {
        self.tools = std::mem::take(&mut self.tools).with_offload(offload);
        self
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
    /// threads of their own (see [`offload`](Self::offload)), and the HTTP clients send on
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
        let engine = Engine {
            lm: self.lm.as_ref(),
            compiled: &self.compiled,
            tools: &self.tools,
            declarations: &self.declarations,
            tool_choice: &self.tool_choice,
            max_steps: self.max_steps,
            context: run_context(context, &self.policy, self.timeout),
        };
        let opening = engine.opening(input);
        async move { engine.run(opening?).await }
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
/// where it is the earlier.
fn run_context(context: Context, policy: &Policy, timeout: Duration) -> Context {
    let context = context.with_policy(policy.clone());
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
            context: run_context(context, &self.policy, self.timeout),
        };
        let opening = engine.opening(input);
        async move {
            engine.run(opening?).await.map_err(|error| match error {
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
    /// The run's context: the policy, the deadline, and the caller's data and cancellation.
    context: Context,
}

impl<S: Signature> Engine<'_, S> {
    /// The conversation's first messages: the instructions and the input. Made before the run
    /// starts, so that the run's future holds no reference to the input.
    fn opening(&self, input: &S::Input) -> Result<Vec<Message>, AgentError> {
        Ok(vec![
            Message::system(self.compiled.system_prompt(!self.tools.is_empty())),
            Message::user(self.compiled.user_message(input)?),
        ])
    }

    async fn run(&self, mut messages: Vec<Message>) -> Result<Answer<S::Output>, AgentError> {
        let policy = self.context.policy();
        let mut trajectory = Vec::new();
        let mut usage: Option<Usage> = None;
        for step in 1..=self.max_steps {
            if let Some(stop) = self.stopped(&mut trajectory, step - 1) {
                return Err(stop);
            }
            let request = Request {
                messages: &messages,
                tools: self.declarations,
                tool_choice: self.tool_choice,
                deadline: self.context.deadline(),
            };
            // A cancelled run stops waiting for the model at once.
            let Some(asked) = until_cancelled(&self.context, self.lm.complete(request)).await
            else {
                return Err(self
                    .stopped(&mut trajectory, step)
                    .unwrap_or(AgentError::Cancelled {
                        trajectory: std::mem::take(&mut trajectory),
                        lm_calls: step,
                    }));
            };
            let reply = match asked {
                Ok(reply) => {
                    if let Some(used) = reply.usage {
                        *usage.get_or_insert_default() += used;
                    }
                    reply.message
                }
                // A request cut short by the deadline ends the run as the deadline does.
                Err(error) => {
                    return Err(self
                        .stopped(&mut trajectory, step)
                        .unwrap_or(AgentError::Lm(error)));
                }
            };
            let answered = |output, value, repairs, trajectory| Answer {
                output,
                value,
                repairs,
                trajectory,
                lm_calls: step,
                usage,
            };
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
                    }) => return Ok(answered(output, value, repairs, trajectory)),
                    Some(Verdict::Rejected(problem)) => problem,
                    None => self.compiled.nudge(),
                };
                messages.push(reply);
                messages.push(Message::user(feedback));
                continue;
            }
            let observed = calls::run(self.tools, &self.context, &reply.tool_calls).await;
            let mut answer = None;
            let mut results = Vec::with_capacity(reply.tool_calls.len());
            for (call, observed) in reply.tool_calls.iter().zip(observed) {
                let record = match observed {
                    Some(result) => step_of(call, result),
                    None => match self.compiled.read(&call.arguments, policy) {
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
                results.push(Message::tool_result(&call.id, &record.observation));
                trajectory.push(record);
            }
            if let Some((output, value, repairs)) = answer {
                return Ok(answered(output, value, repairs, trajectory));
            }
            messages.push(reply);
            messages.extend(results);
        }
        Err(AgentError::MaxSteps {
            max_steps: self.max_steps,
            trajectory,
            lm_calls: self.max_steps,
        })
    }

    /// Why the run must stop now, if it must: its context cancelled, or its deadline passed.
    fn stopped(&self, trajectory: &mut Vec<Step>, lm_calls: usize) -> Option<AgentError> {
        if self.context.is_cancelled() {
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
