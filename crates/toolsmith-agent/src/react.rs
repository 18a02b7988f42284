//! [`ReAct`]: a signature answered over tools by native tool calling, and [`Predict`]: a
//! signature answered in one call. Both run the same loop ([`Engine`]).

use std::sync::Arc;

use serde_json::Value;
use toolsmith::{Dialect, Policy, Registry, Repair, Tool, ToolError, ToolOutput, did_you_mean};

use crate::error::{AgentError, Step};
use crate::lm::LanguageModel;
use crate::message::{Message, Request, ToolCall, ToolChoice};
use crate::signature::{Compiled, FINISH, Signature, Verdict};

/// The most tool calls of one reply that run at once; more run in batches of this size.
const PARALLEL_CALLS: usize = 8;
/// The most tool calls of one reply that run at all; the rest are answered without running.
pub const MAX_CALLS_PER_REPLY: usize = 32;

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
}

/// A signature answered over tools: the model calls tools (several at once if it likes), reads
/// their results, and answers with `finish`.
///
/// Tools are advertised in the OpenAI dialect. The calls of one reply run in parallel and are
/// answered in order, each quoting its `tool_call_id`. Invalid arguments, an unknown tool (with the
/// nearest name), a tool's error or panic become the tool message the model reads, and the loop
/// goes on. The answer is the `finish` call, coerced like any tool's arguments (or, when the output
/// is one string, a reply of text without tool calls). Each model call is one step; after
/// [`max_steps`](Self::max_steps) (10 unless set) the run fails with its trajectory.
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
/// let answer = agent.run(&Question { question: "What is 2 + 40?".into() })?;
/// assert_eq!(answer.output.answer, "42");
/// assert_eq!(answer.trajectory[0].observation, "42");
/// assert_eq!(answer.trajectory[0].repairs[0].code.as_str(), "int_from_string");
/// assert_eq!(answer.lm_calls, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ReAct<S: Signature> {
    lm: Arc<dyn LanguageModel>,
    compiled: Compiled<S>,
    tools: Registry,
    declarations: Vec<Value>,
    tool_choice: ToolChoice,
    max_steps: usize,
    policy: Policy,
}

impl<S: Signature> ReAct<S> {
    /// An agent over every tool of `tools`.
    ///
    /// # Errors
    /// [`AgentError::Signature`] when the signature's input or output is not a struct;
    /// [`AgentError::Tools`] when a tool is named `finish` or cannot be declared in the OpenAI
    /// dialect.
    pub fn new(lm: Arc<dyn LanguageModel>, tools: &Registry) -> Result<Self, AgentError> {
        let chosen: Vec<Arc<dyn Tool>> = tools.iter().map(|entry| entry.tool().clone()).collect();
        ReAct::from_tools(lm, chosen)
    }

    /// An agent over the tools of `tools` named in `names` (in that order).
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`AgentError::Tools`] for a name `tools` does not have (with
    /// the nearest one).
    pub fn with_tools(
        lm: Arc<dyn LanguageModel>,
        tools: &Registry,
        names: &[impl AsRef<str>],
    ) -> Result<Self, AgentError> {
        let chosen = names
            .iter()
            .map(|name| {
                let name = name.as_ref();
                tools.get(name).cloned().ok_or_else(|| {
                    let mut message = format!("no tool is named `{name}`");
                    if let Some(near) = did_you_mean(name, tools.names()) {
                        message.push_str(&format!("; did you mean `{near}`?"));
                    }
                    AgentError::Tools(message)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        ReAct::from_tools(lm, chosen)
    }

    /// An agent over exactly `tools`.
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`AgentError::Tools`] when two tools share a name.
    pub fn from_tools(
        lm: Arc<dyn LanguageModel>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<Self, AgentError> {
        let dialect = Dialect::OpenAi { strict: false };
        let compiled = Compiled::<S>::new(dialect)?;
        let mut registry = Registry::new();
        let mut declarations = Vec::with_capacity(tools.len() + 1);
        for tool in tools {
            if tool.name() == FINISH {
                return Err(AgentError::Tools(format!(
                    "a tool is named `{FINISH}`, the name the agent answers with"
                )));
            }
            declarations.push(
                toolsmith::envelope(tool.as_ref(), dialect)
                    .map_err(|e| AgentError::Tools(e.to_string()))?,
            );
            registry
                .add(tool)
                .map_err(|e| AgentError::Tools(e.to_string()))?;
        }
        declarations.push(compiled.finish_declaration.clone());
        Ok(ReAct {
            lm,
            compiled,
            tools: registry,
            declarations,
            tool_choice: ToolChoice::Auto,
            max_steps: 10,
            policy: Policy::default().with_dialect(dialect),
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

    /// The tools offered, declared as the model sees them (`finish` last).
    pub fn declarations(&self) -> &[Value] {
        &self.declarations
    }

    /// Answers `input`.
    ///
    /// # Errors
    /// [`AgentError::MaxSteps`] (with the trajectory) when the model has not answered within
    /// the steps; [`AgentError::Lm`] when it cannot be asked; [`AgentError::Input`] when the
    /// input does not serialize to an object.
    pub fn run(&self, input: &S::Input) -> Result<Answer<S::Output>, AgentError> {
        Engine {
            lm: self.lm.as_ref(),
            compiled: &self.compiled,
            tools: &self.tools,
            declarations: &self.declarations,
            tool_choice: &self.tool_choice,
            max_steps: self.max_steps,
            policy: &self.policy,
        }
        .run(input)
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
/// let answer = rate.call(&Review { text: "Lovely.".into() })?;
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
    declarations: Vec<Value>,
    tool_choice: ToolChoice,
    attempts: usize,
    policy: Policy,
}

impl<S: Signature> Predict<S> {
    /// A predictor of `S` on `lm`.
    ///
    /// # Errors
    /// [`AgentError::Signature`] when the signature's input or output is not a struct.
    pub fn new(lm: Arc<dyn LanguageModel>) -> Result<Self, AgentError> {
        let dialect = Dialect::OpenAi { strict: false };
        let compiled = Compiled::<S>::new(dialect)?;
        let declarations = vec![compiled.finish_declaration.clone()];
        Ok(Predict {
            lm,
            compiled,
            declarations,
            tool_choice: ToolChoice::Tool(FINISH.to_owned()),
            attempts: 3,
            policy: Policy::default().with_dialect(dialect),
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

    /// Answers `input`.
    ///
    /// # Errors
    /// [`AgentError::NoAnswer`] when no reply in the attempts was a valid answer;
    /// [`AgentError::Lm`] when the model cannot be asked.
    pub fn call(&self, input: &S::Input) -> Result<Answer<S::Output>, AgentError> {
        let tools = Registry::new();
        let engine = Engine {
            lm: self.lm.as_ref(),
            compiled: &self.compiled,
            tools: &tools,
            declarations: &self.declarations,
            tool_choice: &self.tool_choice,
            max_steps: self.attempts,
            policy: &self.policy,
        };
        engine.run(input).map_err(|error| match error {
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

/// The loop both agents run.
struct Engine<'a, S: Signature> {
    lm: &'a dyn LanguageModel,
    compiled: &'a Compiled<S>,
    tools: &'a Registry,
    declarations: &'a [Value],
    tool_choice: &'a ToolChoice,
    max_steps: usize,
    policy: &'a Policy,
}

impl<S: Signature> Engine<'_, S> {
    fn run(&self, input: &S::Input) -> Result<Answer<S::Output>, AgentError> {
        let mut messages = vec![
            Message::system(self.compiled.system_prompt(!self.tools.is_empty())),
            Message::user(self.compiled.user_message(input)?),
        ];
        let mut trajectory = Vec::new();
        for step in 1..=self.max_steps {
            let reply = self.lm.complete(&Request {
                messages: &messages,
                tools: self.declarations,
                tool_choice: self.tool_choice,
            })?;
            let answered = |output, value, repairs, trajectory| Answer {
                output,
                value,
                repairs,
                trajectory,
                lm_calls: step,
            };
            if reply.tool_calls.is_empty() {
                let text = reply.content.as_deref().unwrap_or("").trim();
                let verdict = (!text.is_empty())
                    .then(|| self.compiled.read_text(text, self.policy))
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
            let observed = self.call_tools(&reply.tool_calls);
            let mut answer = None;
            let mut results = Vec::with_capacity(reply.tool_calls.len());
            for (call, observed) in reply.tool_calls.iter().zip(observed) {
                let record = match observed {
                    Some(result) => step_of(call, result),
                    None => match self.compiled.read(&call.arguments, self.policy) {
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

    /// Runs every call that is not `finish`, in parallel; `None` in place of each `finish`.
    /// Past [`MAX_CALLS_PER_REPLY`] calls, each is answered with an error and not run.
    fn call_tools(&self, calls: &[ToolCall]) -> Vec<Option<Result<ToolOutput, ToolError>>> {
        let (calls, refused) = calls.split_at(calls.len().min(MAX_CALLS_PER_REPLY));
        let mut out = self.run_calls(calls);
        out.extend(refused.iter().map(|call| {
            Some(Err(ToolError::Failed {
                tool: call.name.clone(),
                message: format!(
                    "not run: at most {MAX_CALLS_PER_REPLY} tool calls are run per reply"
                ),
            }))
        }));
        out
    }

    fn run_calls(&self, calls: &[ToolCall]) -> Vec<Option<Result<ToolOutput, ToolError>>> {
        let run = |call: &ToolCall| (call.name != FINISH).then(|| self.call_tool(call));
        let tool_calls = calls.iter().filter(|call| call.name != FINISH).count();
        if tool_calls <= 1 {
            return calls.iter().map(run).collect();
        }
        let mut out = Vec::with_capacity(calls.len());
        for batch in calls.chunks(PARALLEL_CALLS) {
            let Some((first, rest)) = batch.split_first() else {
                continue;
            };
            std::thread::scope(|scope| {
                let handles: Vec<_> = rest
                    .iter()
                    .map(|call| scope.spawn(move || run(call)))
                    .collect();
                // The first call runs on this thread while the others run on theirs.
                out.push(run(first));
                for (handle, call) in handles.into_iter().zip(rest) {
                    // `Registry::call` catches a tool's panic; a join error is one it missed.
                    out.push(handle.join().unwrap_or_else(|_| {
                        Some(Err(ToolError::Panicked {
                            tool: call.name.clone(),
                            message: "the tool's thread panicked".to_owned(),
                        }))
                    }));
                }
            });
        }
        out
    }

    fn call_tool(&self, call: &ToolCall) -> Result<ToolOutput, ToolError> {
        if self.tools.get(&call.name).is_none() {
            let names = self.tools.names().chain([FINISH]);
            return Err(ToolError::NotFound {
                name: call.name.clone(),
                did_you_mean: did_you_mean(&call.name, names),
            });
        }
        let context = toolsmith::Context::new()
            .with_policy(self.policy.clone())
            .with_call_id(call.id.as_str());
        self.tools.call_blocking(
            &call.name,
            toolsmith::Arguments::Json(&call.arguments),
            context,
        )
    }
}

fn step_of(call: &ToolCall, result: Result<ToolOutput, ToolError>) -> Step {
    let (observation, repairs, error) = match result {
        Ok(output) => (output.as_text().into_owned(), output.repairs, None),
        Err(error) => (error.to_model_message(), Vec::new(), Some(error.code())),
    };
    Step {
        tool: call.name.clone(),
        call_id: call.id.clone(),
        arguments: call.arguments.clone(),
        observation,
        repairs,
        error,
    }
}
