//! `toolsmith agent`: a question answered by a model over the registered tools.

use std::sync::Arc;

use clap::Args;
use serde_json::{Value, json};
use toolsmith::Registry;
use toolsmith_agent::{OpenAiCompatible, Question, QuestionAnswer, ReAct, Step};

use crate::error::UsageError;
use crate::input::find_tool;
use crate::output::Outcome;
use crate::upstream::Upstreams;

/// The environment variable the API key is read from.
const API_KEY_VARIABLE: &str = "OPENAI_API_KEY";

/// The arguments of `toolsmith agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The API's base URL, the part before `/chat/completions` (an http or https URL).
    #[arg(long, value_name = "URL", env = "OPENAI_BASE_URL", value_parser = parse_base_url)]
    base_url: String,
    /// The model to ask.
    #[arg(
        long,
        value_name = "NAME",
        env = "OPENAI_MODEL",
        default_value = "gpt-4o-mini"
    )]
    model: String,
    /// Offer only this tool (repeat for more); every registered tool when none is named.
    #[arg(long = "tools", value_name = "NAME")]
    tools: Vec<String>,
    /// The most model calls before giving up.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u16).range(1..))]
    max_steps: u16,
    /// Print one JSON object: `{"answer", "steps", "lm_calls"}`.
    #[arg(long)]
    json: bool,
    /// The question to answer.
    #[arg(value_name = "QUESTION")]
    question: String,
    #[command(flatten)]
    pub upstreams: Upstreams,
}

/// A base URL the client can use, checked when the command line is read: a bad one is a usage
/// error naming `--base-url`, before any request.
fn parse_base_url(url: &str) -> Result<String, String> {
    OpenAiCompatible::check_base_url(url)
        .map(|()| url.to_owned())
        .map_err(|error| error.problem)
}

impl AgentArgs {
    /// Asks the model: the answer, or why there is none.
    pub fn run(&self, registry: &Registry) -> Result<Outcome, UsageError> {
        for name in &self.tools {
            find_tool(registry, name)?;
        }
        let lm = Arc::new(
            OpenAiCompatible::new(&self.base_url, &self.model)
                .map_err(|error| UsageError::BaseUrl(error.to_string()))?
                .api_key_from_env(API_KEY_VARIABLE),
        );
        let agent = if self.tools.is_empty() {
            ReAct::<QuestionAnswer>::new(lm, registry)
        } else {
            ReAct::with_tools(lm, registry, &self.tools)
        };
        let question = Question {
            question: self.question.clone(),
        };
        let result = agent.and_then(|agent| agent.max_steps(self.max_steps.into()).run(&question));
        Ok(match result {
            Ok(answer) if self.json => Outcome::Success(
                json!({
                    "answer": answer.output.answer,
                    "steps": answer.trajectory.iter().map(Step::to_json).collect::<Vec<Value>>(),
                    "lm_calls": answer.lm_calls,
                })
                .to_string(),
            ),
            Ok(answer) => Outcome::Success(answer.output.answer),
            Err(error) => Outcome::Failed(format!("toolsmith: agent: {error}")),
        })
    }
}
