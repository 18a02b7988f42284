//! `ReAct` and `Predict` over a scripted model: the loop's behaviour, one rule per test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::json;
use toolsmith::{Registry, ToolType};
use toolsmith_agent::{
    AgentError, Decisions, LmError, MAX_CALLS_PER_REPLY, Message, Predict, Question,
    QuestionAnswer, ReAct, Reply, Role, ScriptedModel, Signature, ToolChoice, Usage,
};

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Looks up a city's population.
#[toolsmith::tool]
fn population(city: String) -> Result<String, String> {
    match city.as_str() {
        "Paris" => Ok("2.1 million".to_owned()),
        other => Err(format!("no data for {other}")),
    }
}

/// Always crashes.
#[toolsmith::tool]
fn explode() -> String {
    panic!("boom")
}

/// Waits, up to a few seconds, until a second caller arrives.
struct Meeting {
    arrived: AtomicUsize,
}

#[toolsmith::tool(register = false)]
impl Meeting {
    /// Meets another caller.
    fn meet(&self, who: String) -> String {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        let until = Instant::now() + Duration::from_secs(5);
        while self.arrived.load(Ordering::SeqCst) < 2 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let met = self.arrived.load(Ordering::SeqCst) >= 2;
        format!("{who}: {}", if met { "met" } else { "alone" })
    }
}

fn tools() -> Registry {
    let mut registry = Registry::new();
    for tool in [
        Arc::new(Add) as Arc<dyn toolsmith::Tool>,
        Arc::new(Population),
        Arc::new(Explode),
    ] {
        registry.add(tool).expect("distinct names");
    }
    registry
}

fn question(text: &str) -> Question {
    Question {
        question: text.to_owned(),
    }
}

fn agent(lm: &Arc<ScriptedModel>) -> ReAct<QuestionAnswer> {
    ReAct::new(lm.clone(), &tools()).expect("an agent")
}

/// The text of message `index` of request `request`.
fn content(lm: &ScriptedModel, request: usize, index: usize) -> String {
    lm.requests()[request].messages[index]
        .content
        .clone()
        .unwrap_or_default()
}

#[derive(Serialize, ToolType)]
struct Numbers {
    /// The numbers to add.
    numbers: Vec<i64>,
}

#[derive(Debug, Deserialize, ToolType)]
struct Total {
    /// Their sum.
    total: i64,
    /// How sure the model is.
    confident: bool,
}

struct Sum;
impl Signature for Sum {
    type Input = Numbers;
    type Output = Total;
    fn instructions() -> &'static str {
        "Add the numbers."
    }
}

#[test]
fn the_instructions_the_input_and_every_tool_reach_the_model() {
    let lm = Arc::new(ScriptedModel::new().then_call("finish", json!({"answer": "x"})));
    agent(&lm)
        .run_blocking(&question("What is 2 + 2?"))
        .expect("an answer");
    let first = &lm.requests()[0];
    assert_eq!(first.messages[0].role, Role::System);
    assert!(content(&lm, 0, 0).starts_with(QuestionAnswer::instructions()));
    assert_eq!(content(&lm, 0, 1), "question: What is 2 + 2?");
    assert_eq!(first.tools, ["add", "population", "explode", "finish"]);
    assert_eq!(first.tool_choice, ToolChoice::Auto);
}

#[test]
fn a_tool_call_with_messy_arguments_runs_repaired_and_the_answer_is_the_finish_call() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("add", json!("```json\n{'a': '2', 'b': 40}\n```"))
            .then_call("finish", json!({"answer": "42"})),
    );
    let answer = agent(&lm)
        .run_blocking(&question("2 + 40?"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "42");
    assert_eq!(answer.value, json!({"answer": "42"}));
    assert_eq!(answer.lm_calls, 2);
    let step = &answer.trajectory[0];
    assert_eq!(
        (step.tool.as_str(), step.observation.as_str()),
        ("add", "42")
    );
    assert_eq!(step.error, None);
    let codes: Vec<&str> = step.repairs.iter().map(|r| r.code.as_str()).collect();
    assert!(codes.contains(&"int_from_string"), "{codes:?}");
    assert!(codes.contains(&"markdown_fence"), "{codes:?}");
    // The model read the result as the answer to its call.
    let second = &lm.requests()[1].messages;
    assert_eq!(second[2].tool_calls[0].id, "call_1");
    assert_eq!(second[3].role, Role::Tool);
    assert_eq!(second[3].tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(second[3].content.as_deref(), Some("42"));
}

#[test]
fn parallel_tool_calls_run_at_once_and_are_answered_in_order() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([
                ("meeting", json!({"who": "ana"})),
                ("meeting", json!({"who": "bo"})),
            ])
            .then_call("finish", json!({"answer": "done"})),
    );
    let meeting = Arc::new(Meeting {
        arrived: AtomicUsize::new(0),
    });
    let agent = ReAct::<QuestionAnswer>::from_tools(lm.clone(), vec![meeting]).expect("agent");
    let answer = agent.run_blocking(&question("meet")).expect("an answer");
    let observations: Vec<&str> = answer
        .trajectory
        .iter()
        .map(|s| s.observation.as_str())
        .collect();
    // Run one after the other, the first caller would have waited alone.
    assert_eq!(observations, ["ana: met", "bo: met"]);
    let requests = lm.requests();
    let answers: Vec<(Option<&str>, Option<&str>)> = requests[1].messages[3..]
        .iter()
        .map(|m| (m.tool_call_id.as_deref(), m.content.as_deref()))
        .collect();
    assert_eq!(
        answers,
        [
            (Some("call_1"), Some("ana: met")),
            (Some("call_2"), Some("bo: met"))
        ]
    );
}

#[test]
fn calls_past_the_limit_of_one_reply_are_answered_without_running() {
    let many = (0..MAX_CALLS_PER_REPLY + 2).map(|_| ("add", json!({"a": 1, "b": 1})));
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls(many)
            .then_call("finish", json!({"answer": "2"})),
    );
    let answer = agent(&lm)
        .run_blocking(&question("1 + 1?"))
        .expect("an answer");
    assert_eq!(answer.trajectory.len(), MAX_CALLS_PER_REPLY + 2);
    let ran = answer
        .trajectory
        .iter()
        .filter(|s| s.error.is_none())
        .count();
    assert_eq!(ran, MAX_CALLS_PER_REPLY);
    let last = &answer.trajectory[MAX_CALLS_PER_REPLY + 1];
    assert!(
        last.observation.contains("not run: at most 32"),
        "{}",
        last.observation
    );
    // Every call is still answered, in order.
    assert_eq!(lm.requests()[1].messages.len(), 3 + MAX_CALLS_PER_REPLY + 2);
}

#[test]
fn invalid_arguments_go_back_to_the_model_and_the_loop_goes_on() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("add", json!({"a": "two", "c": 1}))
            .then_call("add", json!({"a": 2, "b": 2}))
            .then_call("finish", json!({"answer": "4"})),
    );
    let answer = agent(&lm)
        .run_blocking(&question("2 + 2?"))
        .expect("an answer");
    let bad = &answer.trajectory[0];
    assert_eq!(bad.error, Some("invalid_arguments"));
    assert!(
        bad.observation
            .starts_with("Invalid arguments for tool `add`."),
        "{}",
        bad.observation
    );
    assert!(
        bad.observation.contains("`c`: unknown field"),
        "{}",
        bad.observation
    );
    assert!(bad.observation.contains("`b`: missing required field"));
    assert_eq!(content(&lm, 1, 3), bad.observation);
    assert_eq!(answer.trajectory[1].observation, "4");
}

#[test]
fn an_unknown_tool_is_answered_with_the_nearest_name() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("populaton", json!({"city": "Paris"}))
            .then_call("finsh", json!({"answer": "2.1 million"}))
            .then_call("finish", json!({"answer": "2.1 million"})),
    );
    let answer = agent(&lm)
        .run_blocking(&question("How many live in Paris?"))
        .expect("an answer");
    assert_eq!(answer.trajectory[0].error, Some("not_found"));
    assert_eq!(
        answer.trajectory[0].observation,
        "There is no tool named `populaton`. Did you mean `population`?"
    );
    assert_eq!(
        answer.trajectory[1].observation,
        "There is no tool named `finsh`. Did you mean `finish`?"
    );
    assert_eq!(answer.lm_calls, 3);
}

#[test]
fn a_tool_error_and_a_tool_panic_become_messages_the_model_reads() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([
                ("population", json!({"city": "Atlantis"})),
                ("explode", json!({})),
            ])
            .then_call("finish", json!({"answer": "unknown"})),
    );
    let answer = agent(&lm)
        .run_blocking(&question("Atlantis?"))
        .expect("an answer");
    let failed = &answer.trajectory[0];
    assert_eq!(failed.error, Some("failed"));
    assert_eq!(
        failed.observation,
        "Tool `population` failed: no data for Atlantis"
    );
    let crashed = &answer.trajectory[1];
    assert_eq!(crashed.error, Some("panicked"));
    assert!(
        crashed.observation.contains("crashed (boom)"),
        "{}",
        crashed.observation
    );
    assert_eq!(content(&lm, 1, 4), crashed.observation);
}

#[test]
fn an_invalid_answer_goes_back_to_the_model_and_a_repaired_one_is_accepted() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("finish", json!({"total": "many"}))
            .then_call("finish", json!({"total": "6", "confident": "TRUE"})),
    );
    let agent = ReAct::<Sum>::new(lm.clone(), &Registry::new()).expect("agent");
    let answer = agent
        .run_blocking(&Numbers {
            numbers: vec![1, 2, 3],
        })
        .expect("an answer");
    assert_eq!(answer.output.total, 6);
    assert!(answer.output.confident);
    assert_eq!(answer.value, json!({"total": 6, "confident": true}));
    assert_eq!(answer.repairs.len(), 2);
    let rejected = &answer.trajectory[0];
    assert_eq!(
        (rejected.tool.as_str(), rejected.error),
        ("finish", Some("invalid_arguments"))
    );
    assert!(
        rejected.observation.contains("`total`"),
        "{}",
        rejected.observation
    );
    assert!(
        rejected
            .observation
            .contains("`confident`: missing required field")
    );
    assert_eq!(content(&lm, 0, 1), "numbers: [1,2,3]");
}

#[test]
fn a_plain_text_reply_answers_a_one_string_signature() {
    let lm = Arc::new(ScriptedModel::new().then_text("  Paris  "));
    let answer = agent(&lm)
        .run_blocking(&question("Capital of France?"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "Paris");
    assert_eq!((answer.lm_calls, answer.trajectory.len()), (1, 0));
}

#[test]
fn a_plain_text_reply_is_no_answer_when_the_output_has_several_fields() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_text("6")
            .then_call("finish", json!({"total": 6, "confident": true})),
    );
    let agent = ReAct::<Sum>::new(lm.clone(), &Registry::new()).expect("agent");
    let answer = agent
        .run_blocking(&Numbers { numbers: vec![6] })
        .expect("an answer");
    assert_eq!(answer.lm_calls, 2);
    let second = &lm.requests()[1].messages;
    assert_eq!(second[2].content.as_deref(), Some("6"));
    assert_eq!(second[3].role, Role::User);
    assert!(
        content(&lm, 1, 3).contains("Call `finish`"),
        "{}",
        content(&lm, 1, 3)
    );
}

#[test]
fn never_finishing_fails_after_max_steps_with_the_trajectory() {
    let mut script = ScriptedModel::new();
    for _ in 0..5 {
        script = script.then_call("add", json!({"a": 1, "b": 1}));
    }
    let lm = Arc::new(script);
    let error = agent(&lm)
        .max_steps(3)
        .run_blocking(&question("loop"))
        .unwrap_err();
    let AgentError::MaxSteps {
        max_steps,
        lm_calls,
        ..
    } = &error
    else {
        panic!("expected MaxSteps, got {error:?}");
    };
    assert_eq!((*max_steps, *lm_calls), (3, 3));
    assert_eq!(error.trajectory().len(), 3);
    assert!(error.trajectory().iter().all(|s| s.observation == "2"));
    assert_eq!(
        error.to_string(),
        "no answer after 3 steps (3 model calls, 3 tool calls)"
    );
    assert_eq!(lm.remaining(), 2);
}

#[test]
fn a_model_error_ends_the_run() {
    let lm = Arc::new(ScriptedModel::new().then_fail(LmError::Malformed {
        reason: "garbage".into(),
    }));
    let error = agent(&lm).run_blocking(&question("?")).unwrap_err();
    assert_eq!(
        error,
        AgentError::Lm(LmError::Malformed {
            reason: "garbage".into()
        })
    );
}

#[test]
fn only_the_named_tools_are_offered() {
    let lm = Arc::new(ScriptedModel::new().then_call("explode", json!({})));
    let agent =
        ReAct::<QuestionAnswer>::with_tools(lm.clone(), &tools(), &["population"]).expect("agent");
    let _ = agent.max_steps(1).run_blocking(&question("?"));
    assert_eq!(lm.requests()[0].tools, ["population", "finish"]);
    // A tool left out is not called, even when the model names it.
    let error = agent_error(ReAct::<QuestionAnswer>::with_tools(
        lm,
        &tools(),
        &["populatoin"],
    ));
    assert_eq!(
        error,
        "the tools cannot be offered: no tool is named `populatoin`; did you mean `population`?"
    );
}

fn agent_error<T>(result: Result<T, AgentError>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_left_out_tool_is_not_run_when_the_model_calls_it() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("explode", json!({}))
            .then_text("no"),
    );
    let agent =
        ReAct::<QuestionAnswer>::with_tools(lm.clone(), &tools(), &["population"]).expect("agent");
    let answer = agent.run_blocking(&question("?")).expect("an answer");
    assert_eq!(answer.trajectory[0].error, Some("not_found"));
}

/// Names itself `finish`.
#[toolsmith::tool(name = "finish")]
fn finish_impostor() -> String {
    String::new()
}

#[test]
fn a_tool_named_finish_is_refused() {
    let lm = Arc::new(ScriptedModel::new());
    let error = agent_error(ReAct::<QuestionAnswer>::from_tools(
        lm,
        vec![Arc::new(FinishImpostor)],
    ));
    assert!(error.contains("a tool is named `finish`"), "{error}");
}

#[test]
fn predict_forces_the_finish_tool_and_reads_a_repaired_answer() {
    let lm = Arc::new(
        ScriptedModel::new().then_call("finish", json!({"total": 6.0, "confident": "yes"})),
    );
    let answer = Predict::<Sum>::new(lm.clone())
        .expect("predictor")
        .call_blocking(&Numbers {
            numbers: vec![1, 2, 3],
        })
        .expect("an answer");
    assert_eq!(answer.output.total, 6);
    assert!(!answer.repairs.is_empty());
    let request = &lm.requests()[0];
    assert_eq!(request.tools, ["finish"]);
    assert_eq!(request.tool_choice, ToolChoice::Tool("finish".into()));
}

#[test]
fn predict_gives_up_after_its_attempts_with_the_last_problem() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("finish", json!({"total": "x", "confident": true}))
            .then_call("finish", json!({"total": "y", "confident": true}))
            .then_call("finish", json!({"total": 1, "confident": true})),
    );
    let error = Predict::<Sum>::new(lm.clone())
        .expect("predictor")
        .attempts(2)
        .call_blocking(&Numbers { numbers: vec![1] })
        .unwrap_err();
    let AgentError::NoAnswer {
        attempts, problem, ..
    } = &error
    else {
        panic!("expected NoAnswer, got {error:?}");
    };
    assert_eq!(*attempts, 2);
    assert!(problem.contains(r#""y""#), "{problem}");
    assert_eq!(error.trajectory().len(), 2);
    assert_eq!(lm.remaining(), 1);
}

#[test]
fn predict_answers_a_one_string_signature_from_text() {
    let lm = Arc::new(ScriptedModel::new().then_text("Paris"));
    let answer = Predict::<QuestionAnswer>::new(lm)
        .expect("predictor")
        .call_blocking(&question("Capital of France?"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "Paris");
}

#[test]
fn the_tokens_of_every_reply_are_summed_where_the_model_reports_them() {
    let calls = |tool: &str, arguments| {
        Message::tool_calls(vec![toolsmith_agent::ToolCall::new("c1", tool, arguments)])
    };
    let lm = Arc::new(
        ScriptedModel::new()
            .then(Reply::new(calls("add", json!({"a": 1, "b": 2}))).with_usage(Usage::new(100, 7)))
            // A reply that reports nothing adds nothing.
            .then_reply(calls("add", json!({"a": 3, "b": 4})))
            .then(
                Reply::new(calls("finish", json!({"answer": "10"}))).with_usage(Usage::new(130, 5)),
            ),
    );
    let answer = agent(&lm)
        .run_blocking(&question("1 + 2 + 3 + 4?"))
        .expect("an answer");
    assert_eq!(answer.lm_calls, 3);
    assert_eq!(answer.usage, Some(Usage::new(230, 12)));
    assert_eq!(answer.usage.map(|usage| usage.total_tokens()), Some(242));

    let silent = Arc::new(ScriptedModel::new().then_call("finish", json!({"answer": "x"})));
    assert_eq!(
        agent(&silent)
            .run_blocking(&question("?"))
            .expect("an answer")
            .usage,
        None
    );
}

#[test]
fn tools_are_declared_and_coerced_in_the_models_dialect() {
    /// Looks a city up.
    #[toolsmith::tool]
    fn lookup(city: String, country: Option<String>) -> String {
        format!("{city} ({})", country.unwrap_or_default())
    }
    let mut tools = Registry::new();
    tools.add(Arc::new(Lookup)).unwrap();
    // A strict model sends `null` for an omitted optional, as its dialect asks: no repair.
    let lm = Arc::new(
        ScriptedModel::new()
            .dialect(toolsmith::Dialect::OpenAi { strict: true })
            .then_call("lookup", json!({"city": "Paris", "country": null}))
            .then_call("finish", json!({"answer": "ok"})),
    );
    let agent = ReAct::<QuestionAnswer>::new(lm, &tools).expect("an agent");
    let answer = agent.run_blocking(&question("Where?")).expect("an answer");
    assert_eq!(answer.trajectory[0].observation, "Paris ()");
    assert!(
        answer.trajectory[0].repairs.is_empty(),
        "{:?}",
        answer.trajectory[0].repairs
    );

    // A tool that cannot be declared in the model's dialect is refused when the agent is made.
    #[derive(serde::Deserialize, ToolType)]
    struct Tree {
        children: Vec<Tree>,
    }
    /// Counts a tree's nodes.
    #[toolsmith::tool]
    fn count(tree: Tree) -> usize {
        1 + tree.children.len()
    }
    let mut recursive = Registry::new();
    recursive.add(Arc::new(Count)).unwrap();
    let gemini = Arc::new(ScriptedModel::new().dialect(toolsmith::Dialect::Gemini));
    let Err(error) = ReAct::<QuestionAnswer>::new(gemini, &recursive) else {
        panic!("a recursive type cannot be declared to Gemini");
    };
    assert!(error.to_string().contains("count"), "{error}");
}

/// How many refunds were paid, across the approval tests' own tool.
static REFUNDS_PAID: AtomicUsize = AtomicUsize::new(0);

/// Pays a refund.
#[toolsmith::tool(needs_approval)]
fn refund(order: String, cents: u64) -> String {
    REFUNDS_PAID.fetch_add(1, Ordering::SeqCst);
    format!("refunded {cents} cents on {order}")
}

/// Looks an order up.
#[toolsmith::tool]
fn order_total(order: String) -> u64 {
    let _ = order;
    4200
}

fn refund_agent(lm: &Arc<ScriptedModel>) -> ReAct<QuestionAnswer> {
    let mut tools = Registry::new();
    tools.add(Arc::new(Refund)).unwrap();
    tools.add(Arc::new(OrderTotal)).unwrap();
    ReAct::new(lm.clone(), &tools).expect("an agent")
}

fn paused(error: AgentError) -> toolsmith_agent::Paused {
    match error {
        AgentError::Paused(paused) => *paused,
        other => panic!("expected a pause, got {other}"),
    }
}

#[test]
fn a_call_that_needs_approval_pauses_the_run_and_runs_once_approved_in_another_process() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([
                ("order_total", json!({"order": "A1"})),
                ("refund", json!({"order": "A1", "cents": "4200"})),
            ])
            .then_call("finish", json!({"answer": "refunded"})),
    );
    let agent = refund_agent(&lm);
    let before = REFUNDS_PAID.load(Ordering::SeqCst);
    let error = agent
        .run_blocking(&question("Refund order A1."))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the run is waiting for approval of 1 tool call (`refund`)"
    );
    let paused = paused(error);
    assert_eq!(paused.pending().len(), 1);
    assert_eq!(paused.pending()[0].tool, "refund");
    assert_eq!(paused.pending()[0].id, "call_2");
    assert_eq!(paused.lm_calls(), 1);
    // Nothing of the reply ran before the decision: not even the call that needs none.
    assert_eq!(REFUNDS_PAID.load(Ordering::SeqCst), before);
    assert!(paused.trajectory().is_empty());

    // The state goes through JSON, as it would to another process.
    let saved = serde_json::to_string(&paused).expect("serializable");
    let restored: toolsmith_agent::Paused = serde_json::from_str(&saved).expect("readable");
    assert_eq!(restored.pending(), paused.pending());
    assert_eq!(restored.messages(), paused.messages());

    let answer = agent
        .resume_blocking(restored, Decisions::new().approve("call_2"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "refunded");
    assert_eq!(answer.lm_calls, 2);
    assert_eq!(REFUNDS_PAID.load(Ordering::SeqCst), before + 1);
    let observations: Vec<&str> = answer
        .trajectory
        .iter()
        .map(|step| step.observation.as_str())
        .collect();
    assert_eq!(observations, ["4200", "refunded 4200 cents on A1"]);
    // The model read both results, in the reply's order.
    let last = &lm.requests()[1].messages;
    assert_eq!(last.len(), 5, "{last:?}");
    assert_eq!(last[3].content.as_deref(), Some("4200"));
}

#[test]
fn a_rejected_call_is_not_run_and_the_model_reads_why() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("refund", json!({"order": "B2", "cents": 100}))
            .then_call("finish", json!({"answer": "declined"})),
    );
    let agent = refund_agent(&lm);
    let before = REFUNDS_PAID.load(Ordering::SeqCst);
    let paused = paused(agent.run_blocking(&question("Refund B2.")).unwrap_err());
    let decisions = Decisions::new().reject("call_1", "refunds over the phone only");
    let answer = agent.resume_blocking(paused, decisions).expect("an answer");
    assert_eq!(REFUNDS_PAID.load(Ordering::SeqCst), before);
    assert_eq!(answer.trajectory[0].error, Some("rejected"));
    let told = content(&lm, 1, 3);
    assert!(
        told.contains("a person rejected the call: refunds over the phone only"),
        "{told}"
    );
}

#[test]
fn a_predicate_picks_calls_that_need_approval_by_their_arguments() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("add", json!({"a": 1, "b": 2}))
            .then_call("add", json!({"a": 1000, "b": 2}))
            .then_call("finish", json!({"answer": "1002"})),
    );
    let agent = agent(&lm).needs_approval(|call| {
        let big = |key: &str| {
            call.arguments
                .get(key)
                .and_then(serde_json::Value::as_i64)
                .is_some_and(|n| n >= 1000)
        };
        call.name == "add" && (big("a") || big("b"))
    });
    let paused = paused(agent.run_blocking(&question("?")).unwrap_err());
    // The small sum ran; the large one waits.
    assert_eq!(paused.trajectory()[0].observation, "3");
    assert_eq!(paused.pending()[0].arguments, json!({"a": 1000, "b": 2}));
    let answer = agent
        .resume_blocking(paused, Decisions::new().approve("call_2"))
        .expect("an answer");
    // Resumed in the same process, the trajectory holds the steps before the pause too.
    let observations: Vec<&str> = answer
        .trajectory
        .iter()
        .map(|step| step.observation.as_str())
        .collect();
    assert_eq!(observations, ["3", "1002"]);
}

#[test]
fn a_resumption_without_every_decision_or_with_a_stray_one_is_refused() {
    let script = || {
        Arc::new(
            ScriptedModel::new()
                .then_call("refund", json!({"order": "C3", "cents": 1}))
                .then_call("finish", json!({"answer": "x"})),
        )
    };
    let lm = script();
    let agent = refund_agent(&lm);
    let paused_run = paused(agent.run_blocking(&question("?")).unwrap_err());
    let missing = agent
        .resume_blocking(paused_run.clone(), Decisions::new())
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "the run cannot be resumed: the call `call_1` of `refund` has no decision"
    );
    let stray = agent
        .resume_blocking(
            paused_run,
            Decisions::new().approve("call_1").approve("call_9"),
        )
        .unwrap_err();
    assert!(
        stray.to_string().contains("`call_9`, which is not waiting"),
        "{stray}"
    );
    // A state that is not a paused run's is refused, not run.
    let forged: toolsmith_agent::Paused = serde_json::from_value(json!({
        "pending": [], "messages": [{"role": "user", "content": "hi"}],
        "lm_calls": 0, "usage": null
    }))
    .expect("the shape is right");
    let error = agent.resume_blocking(forged, Decisions::new()).unwrap_err();
    assert!(matches!(error, AgentError::Approval(_)), "{error}");
}

#[test]
fn a_streaming_run_reports_the_calls_their_results_and_the_answer_in_order() {
    use std::sync::Mutex;
    use toolsmith_agent::Event;

    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("add", json!({"a": 2, "b": "40"}))
            .then_call("finish", json!({"answer": "42"})),
    );
    let agent = agent(&lm);
    let seen = Mutex::new(Vec::new());
    let events = |event: Event| seen.lock().unwrap().push(event);
    let answer = toolsmith::block_on(agent.run_streaming(
        &question("2 + 40?"),
        toolsmith::Context::new(),
        &events,
    ))
    .expect("outside a runtime")
    .expect("an answer");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(
        seen[0],
        Event::ToolCall {
            id: "call_1".into(),
            name: "add".into()
        }
    );
    assert_eq!(seen[1], Event::ToolResult(answer.trajectory[0].clone()));
    assert_eq!(
        seen[2],
        Event::ToolCall {
            id: "call_2".into(),
            name: "finish".into()
        }
    );
    assert_eq!(seen[3], Event::Answer(json!({"answer": "42"})));
}

#[test]
fn a_predicate_judges_the_arguments_as_the_tool_would_get_them() {
    // Argument text, as most servers send it, with a number in a string: coerced first.
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("add", json!("{\"a\": \"5000\", \"b\": 2}"))
            .then_call("finish", json!({"answer": "x"})),
    );
    let agent = agent(&lm).needs_approval(|call| {
        call.arguments
            .get("a")
            .and_then(serde_json::Value::as_i64)
            .is_some_and(|a| a >= 1000)
    });
    let paused = paused(agent.run_blocking(&question("?")).unwrap_err());
    assert_eq!(paused.pending()[0].arguments, json!({"a": 5000, "b": 2}));
}

#[test]
fn calls_that_share_an_id_are_decided_one_by_one() {
    let twice = Message::tool_calls(vec![
        toolsmith_agent::ToolCall::new("x", "refund", json!({"order": "D4", "cents": 1})),
        toolsmith_agent::ToolCall::new("x", "refund", json!({"order": "D4", "cents": 100000})),
    ]);
    let lm = Arc::new(
        ScriptedModel::new()
            .then_reply(twice)
            .then_call("finish", json!({"answer": "one refunded"})),
    );
    let agent = refund_agent(&lm);
    let before = REFUNDS_PAID.load(Ordering::SeqCst);
    let paused = paused(agent.run_blocking(&question("?")).unwrap_err());
    let ids: Vec<&str> = paused
        .pending()
        .iter()
        .map(|call| call.id.as_str())
        .collect();
    assert_eq!(ids, ["x", "x_2"]);
    let missing = agent
        .resume_blocking(paused.clone(), Decisions::new().approve("x"))
        .unwrap_err();
    assert!(missing.to_string().contains("`x_2`"), "{missing}");
    let answer = agent
        .resume_blocking(
            paused,
            Decisions::new().approve("x").reject("x_2", "too much"),
        )
        .expect("an answer");
    assert_eq!(REFUNDS_PAID.load(Ordering::SeqCst), before + 1);
    let results: Vec<(&str, Option<&str>)> = answer
        .trajectory
        .iter()
        .map(|step| (step.call_id.as_str(), step.error))
        .collect();
    assert_eq!(results, [("x", None), ("x_2", Some("rejected"))]);
}

#[test]
fn a_paused_state_changed_after_it_was_shown_is_refused() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("refund", json!({"order": "E5", "cents": 100}))
            .then_call("finish", json!({"answer": "x"})),
    );
    let agent = refund_agent(&lm);
    let before = REFUNDS_PAID.load(Ordering::SeqCst);
    let paused = paused(agent.run_blocking(&question("?")).unwrap_err());
    let id = paused.pending()[0].id.clone();
    let mut state = serde_json::to_value(&paused).expect("serializable");
    let last = state["messages"]
        .as_array_mut()
        .and_then(|messages| messages.last_mut())
        .expect("the reply");
    last["tool_calls"][0]["arguments"] = json!({"order": "E5", "cents": 999_999});
    let edited: toolsmith_agent::Paused = serde_json::from_value(state).expect("readable");
    let error = agent
        .resume_blocking(edited, Decisions::new().approve(id))
        .unwrap_err();
    assert!(matches!(error, AgentError::Approval(_)), "{error}");
    assert_eq!(REFUNDS_PAID.load(Ordering::SeqCst), before);
}

#[test]
fn an_answer_beside_a_rejected_call_is_not_taken() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([
                ("refund", json!({"order": "F6", "cents": 5})),
                ("finish", json!({"answer": "Refunded."})),
            ])
            .then_call("finish", json!({"answer": "Not refunded."})),
    );
    let agent = refund_agent(&lm);
    let paused = paused(agent.run_blocking(&question("?")).unwrap_err());
    let answer = agent
        .resume_blocking(paused, Decisions::new().reject("call_1", "no"))
        .expect("an answer");
    assert_eq!(answer.output.answer, "Not refunded.");
    assert_eq!(answer.lm_calls, 2);
    let errors: Vec<Option<&str>> = answer.trajectory.iter().map(|step| step.error).collect();
    assert_eq!(errors, [Some("rejected"), Some("not_taken")]);
}

/// A model that never answers.
struct Silent;

impl toolsmith_agent::LanguageModel for Silent {
    fn dialect(&self) -> toolsmith::Dialect {
        toolsmith::Dialect::OpenAi { strict: false }
    }

    fn complete<'a>(&'a self, _: toolsmith_agent::Request<'a>) -> toolsmith_agent::LmFuture<'a> {
        Box::pin(std::future::pending())
    }
}

#[test]
fn a_deadline_passing_while_the_model_thinks_ends_the_run_as_the_deadline_not_as_a_cancellation() {
    let agent = ReAct::<QuestionAnswer>::new(Arc::new(Silent), &Registry::new())
        .unwrap()
        .timeout(Duration::from_millis(50));
    let started = Instant::now();
    let error = agent
        .run_blocking(&Question {
            question: "?".into(),
        })
        .unwrap_err();
    assert!(
        matches!(error, AgentError::DeadlinePassed { lm_calls: 1, .. }),
        "{error:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(50));
}
