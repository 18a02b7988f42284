//! A tool that asks a model inside: `summarize` runs a typed [`Predict`] and returns its answer,
//! so an agent (or any client) calling the tool gets a summary with a word count it can trust.
//! It asks in its own call's context ([`Predict::call_in`]), so that its caller's deadline and
//! cancellation hold over the model's requests.
//!
//! Its tests swap the model for a [`ScriptedModel`], as a user's tests of such a tool would:
//! what the tool sends the model, and what it does with good, repairable and bad answers.
//!
//! Run it against a server with `OPENAI_BASE_URL` (and `OPENAI_API_KEY`, `OPENAI_MODEL`) set:
//! `cargo run -p toolsmith-agent --example summarize_tool -- "some long text"`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toolsmith::{Context, ToolType};
use toolsmith_agent::{LanguageModel, OpenAiCompatible, Predict, Signature};

/// The text to summarize.
#[derive(Serialize, ToolType)]
struct Document {
    /// The full text.
    text: String,
}

/// A summary of a text.
#[derive(Debug, Deserialize, ToolType)]
struct Summary {
    /// One sentence saying what the text is about.
    summary: String,
    /// The main topics, one or two words each.
    topics: Vec<String>,
}

/// Summarize a document.
struct Summarize;

impl Signature for Summarize {
    type Input = Document;
    type Output = Summary;
    fn instructions() -> &'static str {
        "Summarize the text in one sentence and list its main topics."
    }
}

/// The tool: a predictor of [`Summarize`] on some model.
struct Summarizer {
    predict: Predict<Summarize>,
}

impl Summarizer {
    fn new(lm: Arc<dyn LanguageModel>) -> Result<Self, toolsmith_agent::AgentError> {
        Ok(Summarizer {
            predict: Predict::new(lm)?,
        })
    }
}

#[toolsmith::tool(register = false, read_only)]
impl Summarizer {
    /// Summarizes a text: one sentence and its topics.
    fn summarize(&self, text: String, ctx: &Context) -> Result<String, String> {
        // The call's own context: its caller's deadline and cancellation hold over the model.
        let answer = self
            .predict
            .call_in_blocking(&Document { text }, ctx.clone())
            .map_err(|e| e.to_string())?;
        let Summary { summary, topics } = answer.output;
        Ok(format!("{summary} (topics: {})", topics.join(", ")))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Ok(base_url) = std::env::var("OPENAI_BASE_URL") else {
        eprintln!("set OPENAI_BASE_URL (and OPENAI_API_KEY, OPENAI_MODEL) to run this example");
        return Ok(());
    };
    let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned());
    let lm = Arc::new(OpenAiCompatible::new(base_url, model)?.api_key_from_env("OPENAI_API_KEY"));
    let text = std::env::args().nth(1).unwrap_or_else(|| {
        "Rust is a systems language focused on safety and speed; its ownership model \
         prevents data races at compile time."
            .to_owned()
    });
    let output =
        toolsmith::testing::call_text(&Summarizer::new(lm)?, serde_json::json!({"text": text}));
    match output {
        Ok(text) => println!("{text}"),
        Err(error) => eprintln!("{error}"),
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolsmith::testing::call_text;
    use toolsmith_agent::{Role, ScriptedModel, ToolChoice};

    fn summarizer(lm: &Arc<ScriptedModel>) -> Summarizer {
        Summarizer::new(lm.clone()).expect("a summarizer")
    }

    #[test]
    fn the_tool_returns_the_models_summary_and_topics() {
        let lm = Arc::new(ScriptedModel::new().then_call(
            "finish",
            json!({"summary": "Rust is safe and fast.", "topics": ["rust", "safety"]}),
        ));
        let out = call_text(&summarizer(&lm), json!({"text": "Rust ..."}));
        assert_eq!(
            out.as_deref(),
            Ok("Rust is safe and fast. (topics: rust, safety)")
        );
    }

    #[test]
    fn the_model_is_given_the_text_and_must_answer_through_finish() {
        let lm = Arc::new(
            ScriptedModel::new().then_call("finish", json!({"summary": "s", "topics": []})),
        );
        call_text(&summarizer(&lm), json!({"text": "A long text."})).expect("a summary");
        let request = &lm.requests()[0];
        assert_eq!(request.messages[1].role, Role::User);
        assert_eq!(
            request.messages[1].content.as_deref(),
            Some("text: A long text.")
        );
        assert_eq!(request.tools, ["finish"]);
        assert_eq!(request.tool_choice, ToolChoice::Tool("finish".into()));
    }

    #[test]
    fn a_single_topic_sent_as_text_is_repaired_into_a_list() {
        let lm = Arc::new(
            ScriptedModel::new().then_call("finish", json!({"summary": "s", "topics": "rust"})),
        );
        let out = call_text(&summarizer(&lm), json!({"text": "t"}));
        assert_eq!(out.as_deref(), Ok("s (topics: rust)"));
    }

    #[test]
    fn the_callers_deadline_bounds_the_models_requests() {
        use toolsmith::{Arguments, ToolExt};
        let lm = Arc::new(
            ScriptedModel::new().then_call("finish", json!({"summary": "s", "topics": []})),
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let context = Context::new().with_deadline(deadline);
        summarizer(&lm)
            .call_blocking(Arguments::Json(&json!({"text": "t"})), context)
            .expect("a summary");
        assert_eq!(lm.requests()[0].deadline, Some(deadline));
    }

    #[test]
    fn a_model_that_never_answers_properly_makes_the_tool_fail_with_the_reason() {
        let lm = Arc::new(
            ScriptedModel::new()
                .then_text("I think it is about Rust.")
                .then_call("finish", json!({"topics": ["rust"]}))
                .then_call("finish", json!({"summary": 3})),
        );
        let error = call_text(&summarizer(&lm), json!({"text": "t"})).unwrap_err();
        assert!(
            error.contains("no valid answer after 3 attempts"),
            "{error}"
        );
        assert!(
            error.contains("`topics`: missing required field"),
            "{error}"
        );
    }
}
