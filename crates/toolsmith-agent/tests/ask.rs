//! What an agent's tools ask: a person through the agent's elicitation handler, a model
//! through the agent's own; with no handler, an error the tool and then the model read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::json;
use toolsmith::{
    AskError, AskFuture, Asker, Context, Elicitation, Elicited, Registry, Sampled, Sampling,
    ToolError, ToolType,
};
use toolsmith_agent::{LmError, Question, QuestionAnswer, ReAct, Role, ScriptedModel};

/// Whom to book for.
#[derive(Deserialize, ToolType)]
struct Traveller {
    /// Full name.
    name: String,
}

/// Books a seat, asking whom for.
#[toolsmith::tool]
async fn book(ctx: &Context) -> Result<String, ToolError> {
    match ctx.elicit::<Traveller>("Who is travelling?").await {
        Ok(Elicited::Accept(t)) => Ok(format!("booked for {}", t.name)),
        Ok(other) => Ok(format!("not booked ({})", other.action())),
        Err(error) if error.code() == "nobody_to_ask" => Ok(format!("cannot book: {error}")),
        Err(error) => Err(error),
    }
}

/// Summarizes `text` with the caller's model.
#[toolsmith::tool]
async fn summarize(ctx: &Context, text: String) -> Result<String, ToolError> {
    let sampled = ctx
        .sample(
            Sampling::new(format!("Summarize: {text}"))
                .with_system("Be brief.")
                .with_max_tokens(60)
                .with_temperature(0.2),
        )
        .await?;
    let ended = sampled.stop_reason.as_deref().unwrap_or("?");
    Ok(format!("summary: {} ({ended})", sampled.text))
}

fn tools() -> Registry {
    let mut registry = Registry::new();
    registry.add(Arc::new(Book)).unwrap();
    registry.add(Arc::new(Summarize)).unwrap();
    registry
}

fn question() -> Question {
    Question {
        question: "Book me a seat".to_owned(),
    }
}

/// The tool message the model read back in request `request`.
fn tool_result(lm: &ScriptedModel, request: usize) -> String {
    lm.requests()[request]
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .and_then(|m| m.content.clone())
        .unwrap_or_default()
}

#[test]
fn a_tools_question_for_a_person_goes_to_the_agents_handler() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("book", json!({}))
            .then_call("finish", json!({"answer": "done"})),
    );
    let asked = Arc::new(Mutex::new(Vec::<Elicitation>::new()));
    let seen = Arc::clone(&asked);
    let handler = move |request: &Elicitation| -> Result<Elicited, AskError> {
        seen.lock().unwrap().push(request.clone());
        Ok(Elicited::Accept(
            json!({"name": "Ada"}).as_object().unwrap().clone(),
        ))
    };
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools())
        .unwrap()
        .elicitation(Arc::new(handler));
    let answer = agent.run_blocking(&question()).unwrap();
    assert_eq!(answer.output.answer, "done");
    assert_eq!(tool_result(&lm, 1), "booked for Ada");
    let asked = asked.lock().unwrap();
    assert_eq!(asked[0].message, "Who is travelling?");
    assert_eq!(asked[0].schema["required"], json!(["name"]));
}

#[test]
fn without_a_handler_the_tool_is_told_nobody_can_answer() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("book", json!({}))
            .then_call("finish", json!({"answer": "done"})),
    );
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools()).unwrap();
    agent.run_blocking(&question()).unwrap();
    let result = tool_result(&lm, 1);
    assert!(
        result.starts_with("cannot book: ")
            && result.contains("the agent was given no elicitation handler"),
        "{result}"
    );
}

/// An answer cut off at the tool's `max_tokens` is the tool's as far as it goes, said to have
/// stopped there (MCP's `maxTokens`); a cut-off with nothing written is the tool's error.
#[test]
fn a_sampled_answer_cut_off_at_its_limit_is_kept_as_far_as_it_goes() {
    let cut = |text: Option<&str>| LmError::CutOff {
        reason: "it was cut off at the token limit".to_owned(),
        text: text.map(str::to_owned),
    };
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("summarize", json!({"text": "the sky is blue"}))
            .then_fail(cut(Some("Blue")))
            .then_call("summarize", json!({"text": "the sky is blue"}))
            .then_fail(cut(None))
            .then_call("finish", json!({"answer": "done"})),
    );
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools()).unwrap();
    agent.run_blocking(&question()).unwrap();
    assert_eq!(tool_result(&lm, 2), "summary: Blue (maxTokens)");
    let failed = tool_result(&lm, 4);
    assert!(failed.contains("cut off at the token limit"), "{failed}");
}

#[test]
fn sampling_is_answered_by_the_agents_own_model_with_no_tools_offered() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("summarize", json!({"text": "the sky is blue"}))
            .then_text("Blue sky.")
            .then_call("finish", json!({"answer": "done"})),
    );
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools()).unwrap();
    agent.run_blocking(&question()).unwrap();
    let requests = lm.requests();
    // The second request is the tool's: its own conversation, no tools.
    let sampling = &requests[1];
    assert!(sampling.tools.is_empty(), "{:?}", sampling.tools);
    assert_eq!(sampling.messages[0].role, Role::System);
    assert_eq!(sampling.messages[0].content.as_deref(), Some("Be brief."));
    assert_eq!(
        sampling.messages[1].content.as_deref(),
        Some("Summarize: the sky is blue")
    );
    assert!(sampling.deadline.is_some());
    // The tool's limits reach the model: how long the answer may be, and how it is drawn.
    assert_eq!(sampling.max_tokens, Some(60));
    assert_eq!(sampling.temperature, Some(0.2));
    // The agent's own steps leave them to the client.
    assert_eq!(
        (requests[0].max_tokens, requests[0].temperature),
        (None, None)
    );
    assert_eq!(tool_result(&lm, 2), "summary: Blue sky. (endTurn)");
}

/// A caller's own asker: what an agent inside an MCP tool would pass on.
struct Outer;
impl Asker for Outer {
    fn elicit<'a>(&'a self, _: &'a Context, _: &'a Elicitation) -> AskFuture<'a, Elicited> {
        Box::pin(async { Ok(Elicited::Decline) })
    }
    fn sample<'a>(&'a self, _: &'a Context, _: &'a Sampling) -> AskFuture<'a, Sampled> {
        Box::pin(async { Err(AskError::Unsupported("outer".into())) })
    }
}

#[test]
fn a_run_given_an_asker_of_its_own_asks_that_one() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("book", json!({}))
            .then_call("finish", json!({"answer": "done"})),
    );
    let handler = |_: &Elicitation| -> Result<Elicited, AskError> { Ok(Elicited::Cancel) };
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools())
        .unwrap()
        .elicitation(Arc::new(handler));
    let context = Context::new().with_asker(Arc::new(Outer));
    agent.run_in_blocking(&question(), context).unwrap();
    assert_eq!(tool_result(&lm, 1), "not booked (decline)");
}
