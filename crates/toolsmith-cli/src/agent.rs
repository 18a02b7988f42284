//! `toolsmith agent`: a question answered by a model over the registered tools.

use std::sync::Arc;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use toolsmith::Registry;
use toolsmith_agent::{
    Anthropic, BaseUrlError, Gemini, LanguageModel, OpenAiCompatible, Question, QuestionAnswer,
    ReAct, Step,
};

use crate::error::UsageError;
use crate::input::find_tool;
use crate::output::Outcome;
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

/// A variable's value, when it is set and not empty.
fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

impl AgentArgs {
    /// Asks the model: the answer, or why there is none.
    pub fn run(&self, registry: &Registry) -> Result<Outcome, UsageError> {
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
        let result = agent.and_then(|agent| {
            agent
                .max_steps(self.max_steps.into())
                .run_blocking(&question)
        });
        Ok(match result {
            Ok(answer) if self.json => Outcome::Success(
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
            Ok(answer) => Outcome::Success(answer.output.answer),
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
        Ok(match self.provider {
            Provider::Openai => Arc::new(
                OpenAiCompatible::new(base_url, model)
                    .map_err(bad_url)?
                    .api_key(key)
                    .strict(self.strict),
            ),
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
