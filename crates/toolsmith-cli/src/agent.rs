//! `toolsmith agent`: a question answered by a model over the registered tools.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use toolsmith::Registry;
use toolsmith::{Context, InsideRuntime, block_on};
use toolsmith_agent::{
    AgentError, Answer, AnswerText, Anthropic, BaseUrlError, Decision, Decisions, Event, EventSink,
    Gemini, LanguageModel, OpenAiCompatible, Paused, Question, QuestionAnswer, ReAct, Step,
    TokenLimitField,
};

use crate::error::UsageError;
use crate::outcome::Outcome;
use crate::person::{Note, Notes, Shows, TerminalPerson, converse, printable};
use crate::select::find_tool;
use crate::upstream::Upstreams;

/// The API a model is asked through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    /// OpenAI's chat completions, or any server that speaks it (llama.cpp, vLLM, Ollama, ...).
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google's Gemini API (generateContent).
    Gemini,
}

/// The request member an OpenAI-compatible server reads a token limit from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TokenLimit {
    /// `max_tokens`: llama.cpp, vLLM, Ollama and most gateways.
    MaxTokens,
    /// `max_completion_tokens`: OpenAI's, which its reasoning models require.
    MaxCompletionTokens,
}

/// What a provider reads from the environment, and its defaults.
struct Defaults {
    /// The provider's name, for messages.
    name: &'static str,
    /// The variable holding the API key.
    key: &'static str,
    /// The variable that may replace the base URL, if the provider's SDKs read one.
    base_url_variable: Option<&'static str>,
    /// The provider's own base URL.
    base_url: &'static str,
    /// The variable that may name the model.
    model_variable: &'static str,
    /// The model asked when none is named.
    model: &'static str,
}

impl Provider {
    fn defaults(self) -> Defaults {
        match self {
            Provider::Openai => Defaults {
                name: "OpenAI",
                key: "OPENAI_API_KEY",
                base_url_variable: Some("OPENAI_BASE_URL"),
                base_url: OpenAiCompatible::DEFAULT_BASE_URL,
                model_variable: "OPENAI_MODEL",
                model: "gpt-4o-mini",
            },
            Provider::Anthropic => Defaults {
                name: "Anthropic",
                key: "ANTHROPIC_API_KEY",
                base_url_variable: Some("ANTHROPIC_BASE_URL"),
                base_url: Anthropic::DEFAULT_BASE_URL,
                model_variable: "ANTHROPIC_MODEL",
                model: "claude-sonnet-4-5",
            },
            Provider::Gemini => Defaults {
                name: "Gemini",
                key: "GEMINI_API_KEY",
                base_url_variable: None,
                base_url: Gemini::DEFAULT_BASE_URL,
                model_variable: "GEMINI_MODEL",
                model: "gemini-2.5-flash",
            },
        }
    }
}

/// The arguments of `toolsmith agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The API the model is asked through; its key is read from `OPENAI_API_KEY`,
    /// `ANTHROPIC_API_KEY` or `GEMINI_API_KEY`.
    #[arg(long, value_enum, default_value_t = Provider::Openai)]
    provider: Provider,
    /// The API's base URL, to which the client adds its API's own path (`/chat/completions`,
    /// `/v1/messages`, `/v1beta/models/...`): a proxy, a gateway, a local server. The
    /// provider's own unless set (or `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`).
    #[arg(long, value_name = "URL", value_parser = parse_base_url)]
    base_url: Option<String>,
    /// Where an OpenAI request's token limit goes: `max-completion-tokens` (OpenAI's name, which
    /// its reasoning models require) or `max-tokens` (what compatible servers read). By the
    /// base URL unless set: the first at api.openai.com, the second elsewhere.
    #[arg(long, value_enum, value_name = "FIELD")]
    token_limit_field: Option<TokenLimit>,
    /// The model to ask (`OPENAI_MODEL`, `ANTHROPIC_MODEL` or `GEMINI_MODEL` unless set; else
    /// gpt-4o-mini, claude-sonnet-4-5, gemini-2.5-flash).
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Declare the tools strict (OpenAI and Anthropic): the model's arguments then always
    /// match their schemas.
    #[arg(long)]
    strict: bool,
    /// Offer only this tool (repeat for more); every registered tool when none is named.
    #[arg(long = "tools", value_name = "NAME")]
    tools: Vec<String>,
    /// The most model calls before giving up.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u16).range(1..))]
    max_steps: u16,
    /// Print one JSON object: `{"answer", "steps", "lm_calls", "usage"}`.
    #[arg(long)]
    json: bool,
    /// Print the model's text as it is generated (the model asked to stream), and each tool
    /// call and its result on stderr as they happen.
    #[arg(long, conflicts_with = "json")]
    stream: bool,
    /// Ask before each tool call, on the terminal: `y` runs it, `n` refuses it, any other
    /// text refuses it with that text as the reason the model reads. Without it, a tool that
    /// needs approval stops the run (exit 1).
    #[arg(long)]
    approve: bool,
    /// The question to answer.
    #[arg(value_name = "QUESTION")]
    question: String,
    #[command(flatten)]
    pub upstreams: Upstreams,
}

/// A base URL the client can use, checked when the command line is read: a bad one is a usage
/// error naming `--base-url`, before any request. (Every client checks alike; the path it adds
/// differs.)
fn parse_base_url(url: &str) -> Result<String, String> {
    OpenAiCompatible::check_base_url(url)
        .map(|()| url.to_owned())
        .map_err(|error| error.problem)
}

/// What a run or a resumption gives.
type Answered = Result<Answer<AnswerText>, AgentError>;

impl AgentArgs {
    /// Runs `go` (a run, or a resumption) on a thread of its own while this one, which owns
    /// the terminal, shows its events as they come (with `--stream`) and asks the person the
    /// tools' questions (sent by the agent's [`TerminalPerson`] on `notes`), reading `answers`.
    fn drive(
        &self,
        notes: &Notes,
        shown: &mut Shown<'_>,
        answers: &mut dyn BufRead,
        stderr: &mut dyn Write,
        go: impl FnOnce(Option<&EventSink<'_>>) -> Result<Answered, InsideRuntime> + Send,
    ) -> Answered {
        let stream = self.stream;
        converse(notes, answers, stderr, shown, None, move |sender| {
            let sink = move |event: Event| {
                // The receiver outlives the run; a send cannot fail before it ends.
                let _ = sender.send(Note::Event(event));
            };
            go(stream.then_some(&sink as &EventSink<'_>))
        })
        .and_then(|answered| answered)
        .unwrap_or(Err(AgentError::InsideRuntime))
    }
}

/// What `--stream` shows: the model's text on stdout as it comes, each tool call and result
/// on stderr.
struct Shown<'o> {
    stream: bool,
    stdout: &'o mut dyn Write,
    /// The text shown since the last tool call: the answer, when the model answers in text.
    text: String,
}

impl Shows for Shown<'_> {
    fn event(&mut self, event: Event, stderr: &mut dyn Write) {
        self.show(event, stderr);
    }

    fn before_question(&mut self) {
        self.end_line();
    }
}

impl<'o> Shown<'o> {
    fn new(stream: bool, stdout: &'o mut dyn Write) -> Self {
        Shown {
            stream,
            stdout,
            text: String::new(),
        }
    }

    fn show(&mut self, event: Event, stderr: &mut dyn Write) {
        // What cannot be shown (a closed terminal) is left out; the run goes on.
        match event {
            Event::Text(text) => {
                let _ = self.stdout.write_all(printable(&text, true).as_bytes());
                let _ = self.stdout.flush();
                self.text.push_str(&text);
            }
            Event::ToolCall { name, .. } => {
                self.end_line();
                let _ = writeln!(stderr, "toolsmith: calling `{}`", printable(&name, false));
            }
            Event::ToolResult(step) => {
                let said = printable(&abridge(&step.observation, 200), false);
                let tool = printable(&step.tool, false);
                let _ = match step.error {
                    None => writeln!(stderr, "toolsmith: `{tool}` answered: {said}"),
                    Some(code) => writeln!(stderr, "toolsmith: `{tool}` {code}: {said}"),
                };
            }
            // The answer is printed when the run ends; an event of a kind to come is not shown.
            _ => {}
        }
    }

    /// Ends a line of streamed text, so that what follows starts on its own.
    fn end_line(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            let _ = self.stdout.write_all(b"\n");
            let _ = self.stdout.flush();
        }
        self.text.clear();
    }

    /// Whether the answer was shown whole as it came (the model answered in text); the
    /// streamed line is ended either way.
    fn finish(&mut self, answer: &str) -> bool {
        let whole =
            self.stream && !self.text.trim().is_empty() && self.text.trim() == answer.trim();
        self.end_line();
        whole
    }
}

/// `text` cut after `limit` characters, on one line.
fn abridge(text: &str, limit: usize) -> String {
    let line = text.replace('\n', " ");
    match line.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line,
    }
}

/// Asks on the terminal about each call `paused` waits for: `y` or `yes` approves it, `n` or
/// `no` refuses it, other text refuses it with the text as the reason; an empty line asks
/// again. With no answer to read (input closed), every call left is refused.
fn ask(paused: &Paused, answers: &mut dyn BufRead, stderr: &mut dyn Write) -> Decisions {
    let mut decisions = Decisions::new();
    for call in paused.pending() {
        // A prompt that cannot be written is still answered from the input.
        let _ = writeln!(
            stderr,
            "toolsmith: the model wants to call `{}` with {}",
            printable(&call.tool, false),
            printable(&arguments_text(&call.arguments), false)
        );
        let decision = loop {
            let _ = write!(stderr, "Run it? [y]es / [n]o / or type why not: ");
            let _ = stderr.flush();
            let mut line = String::new();
            match answers.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = writeln!(stderr);
                    break Decision::Reject {
                        reason: "nobody answered".to_owned(),
                    };
                }
                Ok(_) => {}
            }
            match line.trim() {
                "" => continue,
                "y" | "Y" | "yes" | "Yes" => break Decision::Approve,
                "n" | "N" | "no" | "No" => {
                    break Decision::Reject {
                        reason: "the user said no".to_owned(),
                    };
                }
                reason => {
                    break Decision::Reject {
                        reason: reason.to_owned(),
                    };
                }
            }
        };
        decisions = decisions.decide(call.id.clone(), decision);
    }
    decisions
}

/// A call's arguments as one line of JSON, as the tool would get them (argument text that
/// could not be read is shown as a JSON string).
fn arguments_text(arguments: &Value) -> String {
    arguments.to_string()
}

/// A variable's value, when it is set and not empty.
fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

impl AgentArgs {
    /// Asks the model: the answer, or why there is none.
    pub fn run(
        &self,
        registry: &Registry,
        stdin: &mut dyn Read,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> Result<Outcome, UsageError> {
        for name in &self.tools {
            find_tool(registry, name)?;
        }
        let lm = self.model()?;
        let agent = if self.tools.is_empty() {
            ReAct::<QuestionAnswer>::new(lm, registry)
        } else {
            ReAct::with_tools(lm, registry, &self.tools)
        };
        let question = Question {
            question: self.question.clone(),
        };
        let notes = Notes::new();
        let person = Arc::new(TerminalPerson::new(notes.sender.clone()));
        let result = agent.and_then(|agent| {
            let agent = agent.max_steps(self.max_steps.into()).elicitation(person);
            let agent = if self.approve {
                agent.needs_approval(|_| true)
            } else {
                agent
            };
            let mut answers = BufReader::new(stdin);
            let mut shown = Shown::new(self.stream, stdout);
            let mut result =
                self.drive(
                    &notes,
                    &mut shown,
                    &mut answers,
                    stderr,
                    |events| match events {
                        Some(events) => {
                            block_on(agent.run_streaming(&question, Context::new(), events))
                        }
                        None => block_on(agent.run(&question)),
                    },
                );
            while self.approve
                && let Err(AgentError::Paused(paused)) = result
            {
                let decisions = ask(&paused, &mut answers, stderr);
                let paused = *paused;
                result = self.drive(
                    &notes,
                    &mut shown,
                    &mut answers,
                    stderr,
                    |events| match events {
                        Some(events) => block_on(agent.resume_streaming(
                            paused,
                            decisions,
                            Context::new(),
                            events,
                        )),
                        None => block_on(agent.resume(paused, decisions)),
                    },
                );
            }
            // The answer in full where streaming did not show it whole as it came.
            result.map(|answer| (shown.finish(&answer.output.answer), answer))
        });
        Ok(match result {
            Ok((_, answer)) if self.json => Outcome::Success(
                json!({
                    "answer": answer.output.answer,
                    "steps": answer.trajectory.iter().map(Step::to_json).collect::<Vec<Value>>(),
                    "lm_calls": answer.lm_calls,
                    "usage": answer.usage.map(|usage| json!({
                        "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens,
                    })),
                })
                .to_string(),
            ),
            Ok((shown_whole, answer)) => Outcome::Success(if shown_whole {
                String::new()
            } else {
                answer.output.answer
            }),
            Err(error @ AgentError::Paused(_)) => Outcome::Failed(format!(
                "toolsmith: agent: {error}; run with --approve to decide on the terminal"
            )),
            Err(error) => Outcome::Failed(format!("toolsmith: agent: {error}")),
        })
    }
}

impl AgentArgs {
    /// The client of the provider asked for, with its key, base URL and model.
    fn model(&self) -> Result<Arc<dyn LanguageModel>, UsageError> {
        let defaults = self.provider.defaults();
        let key = variable(defaults.key);
        let from_variable = defaults
            .base_url_variable
            .and_then(|name| variable(name).map(|url| (name, url)));
        let base_url = match (&self.base_url, from_variable) {
            (Some(url), _) => url.clone(),
            (None, Some((name, url))) => {
                OpenAiCompatible::check_base_url(&url)
                    .map_err(|error| UsageError::BaseUrl(format!("{error} (from {name})")))?;
                url
            }
            (None, None) => {
                // The provider's own API refuses every request without a key: say so now,
                // rather than after a round trip.
                if key.is_none() {
                    return Err(UsageError::Model(format!(
                        "{} is not set: the {} API needs a key (or name a server that needs \
                         none with --base-url)",
                        defaults.key, defaults.name,
                    )));
                }
                defaults.base_url.to_owned()
            }
        };
        let model = self
            .model
            .clone()
            .or_else(|| variable(defaults.model_variable))
            .unwrap_or_else(|| defaults.model.to_owned());
        let bad_url = |error: BaseUrlError| UsageError::BaseUrl(error.to_string());
        if self.token_limit_field.is_some() && self.provider != Provider::Openai {
            return Err(UsageError::Model(
                "--token-limit-field is for --provider openai; leave it out".to_owned(),
            ));
        }
        Ok(match self.provider {
            Provider::Openai => {
                let mut client = OpenAiCompatible::new(base_url, model)
                    .map_err(bad_url)?
                    .api_key(key)
                    .strict(self.strict);
                if let Some(field) = self.token_limit_field {
                    client = client.token_limit_field(match field {
                        TokenLimit::MaxTokens => TokenLimitField::MaxTokens,
                        TokenLimit::MaxCompletionTokens => TokenLimitField::MaxCompletionTokens,
                    });
                }
                Arc::new(client)
            }
            Provider::Anthropic => Arc::new(
                Anthropic::new(base_url, model)
                    .map_err(bad_url)?
                    .api_key(key)
                    .strict(self.strict),
            ),
            Provider::Gemini => {
                if self.strict {
                    return Err(UsageError::Model(
                        "--strict: Gemini has no strict tools; leave it out".to_owned(),
                    ));
                }
                Arc::new(Gemini::new(base_url, model).map_err(bad_url)?.api_key(key))
            }
        })
    }
}
