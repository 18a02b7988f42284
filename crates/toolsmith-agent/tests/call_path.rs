//! The agent on toolsmith's call path: async and sync tools, each call's context (the model's
//! `tool_call_id`, the run's deadline, the caller's data and cancellation), the registry's
//! layers, and content a tool message cannot carry. One behaviour per test, over a scripted
//! model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith::{
    CancellationToken, Content, Context, Registry, Stats, Timeout, ToolError, Toolset,
};
use toolsmith_agent::{AgentError, Predict, Question, QuestionAnswer, ReAct, Role, ScriptedModel};

fn question() -> Question {
    Question {
        question: "?".to_owned(),
    }
}

fn registry(tools: Vec<Arc<dyn toolsmith::Tool>>) -> Registry {
    let mut registry = Registry::new();
    for tool in tools {
        registry.add(tool).expect("distinct names");
    }
    registry
}

/// Echoes a text after a moment on tokio's timer (which needs a tokio runtime to poll it).
#[toolsmith::tool]
async fn later(text: String) -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    format!("later: {text}")
}

#[test]
fn an_async_tool_on_tokio_is_called_and_its_answer_read() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("later", json!({"text": "hi"}))
            .then_call("finish", json!({"answer": "done"})),
    );
    let agent =
        ReAct::<QuestionAnswer>::new(lm.clone(), &registry(vec![Arc::new(Later)])).expect("agent");
    let answer = agent.run_blocking(&question()).expect("an answer");
    assert_eq!(answer.trajectory[0].observation, "later: hi");
    assert_eq!(answer.trajectory[0].error, None);
    let second = &lm.requests()[1].messages;
    assert_eq!(second[3].content.as_deref(), Some("later: hi"));
}

/// Says which call it is.
#[toolsmith::tool]
fn which_call(ctx: &Context) -> String {
    format!(
        "{} of {}",
        ctx.call_id().unwrap_or("no id"),
        ctx.tool_name().unwrap_or("no tool")
    )
}

#[test]
fn the_models_tool_call_id_reaches_the_tools_context() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([("which_call", json!({})), ("which_call", json!({}))])
            .then_call("finish", json!({"answer": "done"})),
    );
    let agent =
        ReAct::<QuestionAnswer>::new(lm, &registry(vec![Arc::new(WhichCall)])).expect("agent");
    let answer = agent.run_blocking(&question()).expect("an answer");
    let observations: Vec<&str> = answer
        .trajectory
        .iter()
        .map(|s| s.observation.as_str())
        .collect();
    assert_eq!(
        observations,
        ["call_1 of which_call", "call_2 of which_call"]
    );
}

/// What a slow tool saw of its call.
#[derive(Default)]
struct Seen {
    deadline: Mutex<Option<Instant>>,
    cancellation: Mutex<Option<CancellationToken>>,
    noticed_cancellation: AtomicBool,
}

/// Never answers (it notes what it saw of its call, and waits).
struct SlowAsync(Arc<Seen>);

#[toolsmith::tool(register = false, name = "slow")]
impl SlowAsync {
    /// Never answers.
    async fn slow(&self, ctx: &Context) -> String {
        *self.0.deadline.lock().unwrap() = ctx.deadline();
        *self.0.cancellation.lock().unwrap() = ctx.cancellation().cloned();
        std::future::pending().await
    }
}

#[test]
fn the_run_deadline_reaches_the_tool_and_a_slow_tool_past_it_is_cancelled_and_reported() {
    let seen = Arc::new(Seen::default());
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("slow", json!({}))
            .then_call("finish", json!({"answer": "never asked"})),
    );
    let tools = registry(vec![Arc::new(SlowAsync(seen.clone()))]);
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools)
        .expect("agent")
        .timeout(Duration::from_millis(300));
    let before = Instant::now();
    let error = agent.run_blocking(&question()).unwrap_err();
    let after = Instant::now();
    assert!(
        after - before < Duration::from_secs(5),
        "{:?}",
        after - before
    );
    let AgentError::DeadlinePassed { lm_calls, .. } = &error else {
        panic!("expected DeadlinePassed, got {error:?}");
    };
    assert_eq!(*lm_calls, 1);
    assert_eq!(
        lm.requests().len(),
        1,
        "the model is not asked past the deadline"
    );
    // The run's deadline is the tool's.
    let deadline = seen.deadline.lock().unwrap().expect("a deadline");
    let timeout = Duration::from_millis(300);
    assert!(
        before + timeout <= deadline && deadline <= after,
        "{deadline:?}"
    );
    // Its call was cancelled, and reported.
    let token = seen.cancellation.lock().unwrap().clone().expect("a token");
    assert!(token.is_cancelled());
    let step = &error.trajectory()[0];
    assert_eq!(
        (step.tool.as_str(), step.error),
        ("slow", Some("timed_out"))
    );
    assert_eq!(
        step.observation,
        "Tool `slow` did not answer before its deadline and was stopped; try a smaller \
         request, or try again later."
    );
    assert_eq!(
        error.to_string(),
        "no answer before the run's deadline (1 model calls, 1 tool calls)"
    );
}

/// A call cut off at the run's deadline is answered through the registry's layers, so a
/// statistics layer counts it as timed out (the agent's deadline is a layer innermost, not
/// a drop of the call's future).
#[test]
fn a_call_cut_off_at_the_runs_deadline_is_counted_by_the_registrys_layers() {
    let stats = Stats::new();
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("slow", json!({}))
            .then_call("finish", json!({"answer": "never asked"})),
    );
    let tools =
        registry(vec![Arc::new(SlowAsync(Arc::new(Seen::default())))]).with_layer(stats.layer());
    let agent = ReAct::<QuestionAnswer>::new(lm, &tools)
        .expect("agent")
        .timeout(Duration::from_millis(100));
    let error = agent.run_blocking(&question()).unwrap_err();
    assert!(
        matches!(error, AgentError::DeadlinePassed { .. }),
        "{error:?}"
    );
    let counted = stats.snapshot();
    assert_eq!(counted["tools"]["slow"]["calls"], 1, "{counted}");
    assert_eq!(
        counted["tools"]["slow"]["errors"]["timed_out"], 1,
        "{counted}"
    );
}

/// Blocks its thread until its call is cancelled (ten seconds at most).
struct SlowSync(Arc<Seen>);

#[toolsmith::tool(register = false, name = "block")]
impl SlowSync {
    /// Blocks.
    fn block(&self, ctx: &Context) -> String {
        let until = Instant::now() + Duration::from_secs(10);
        while !ctx.is_cancelled() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.0
            .noticed_cancellation
            .store(ctx.is_cancelled(), Ordering::SeqCst);
        "unblocked".to_owned()
    }
}

#[test]
fn a_blocking_tool_past_the_deadline_does_not_hold_the_run_and_sees_its_cancellation() {
    let seen = Arc::new(Seen::default());
    let lm = Arc::new(ScriptedModel::new().then_call("block", json!({})));
    let tools = registry(vec![Arc::new(SlowSync(seen.clone()))]);
    let agent = ReAct::<QuestionAnswer>::new(lm, &tools)
        .expect("agent")
        .timeout(Duration::from_millis(200));
    let started = Instant::now();
    let error = agent.run_blocking(&question()).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(error.trajectory()[0].error, Some("timed_out"));
    // The tool, on its own thread, sees the cancellation and ends.
    let until = Instant::now() + Duration::from_secs(5);
    while !seen.noticed_cancellation.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(seen.noticed_cancellation.load(Ordering::SeqCst));
}

#[test]
fn a_timeout_layer_of_the_registry_cuts_a_slow_call_and_the_model_reads_why() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("slow", json!({}))
            .then_call("finish", json!({"answer": "gave up on it"})),
    );
    let tools = registry(vec![Arc::new(SlowAsync(Arc::default()))])
        .with_layer(Timeout::new(Duration::from_millis(100)));
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools).expect("agent");
    let answer = agent.run_blocking(&question()).expect("an answer");
    let step = &answer.trajectory[0];
    assert_eq!(step.error, Some("timed_out"));
    assert!(
        step.observation.contains("within 100 ms"),
        "{}",
        step.observation
    );
    let told = &lm.requests()[1].messages[3];
    assert_eq!(
        (told.role, told.content.as_deref()),
        (Role::Tool, Some(step.observation.as_str()))
    );
}

/// Draws a chart.
#[toolsmith::tool]
fn chart() -> Vec<Content> {
    vec![
        Content::text("The chart:"),
        Content::image(vec![7; 1_234], "image/png"),
    ]
}

#[test]
fn an_image_a_tool_returns_is_dropped_with_a_note_the_model_reads_and_kept_in_the_step() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("chart", json!({}))
            .then_call("finish", json!({"answer": "a chart"})),
    );
    let agent =
        ReAct::<QuestionAnswer>::new(lm.clone(), &registry(vec![Arc::new(Chart)])).expect("agent");
    let answer = agent.run_blocking(&question()).expect("an answer");
    let step = &answer.trajectory[0];
    let note = "The chart:\n[an image/png of 1,234 bytes was returned but cannot be shown]";
    assert_eq!(step.observation, note);
    assert_eq!(step.dropped, [Content::image(vec![7; 1_234], "image/png")]);
    assert_eq!(
        step.to_json()["dropped"],
        json!([{"type": "image", "mime_type": "image/png", "bytes": 1234}])
    );
    assert_eq!(lm.requests()[1].messages[3].content.as_deref(), Some(note));
}

/// Both halves of a handshake: `wait_for_go` ends only once `go` has run.
#[derive(Default)]
struct Relay {
    go: CancellationToken,
    ended: Mutex<Vec<&'static str>>,
}

#[toolsmith::toolset(register = false)]
impl Relay {
    /// Waits until `go` is called.
    #[tool]
    async fn wait_for_go(&self) -> String {
        self.go.cancelled().await;
        self.ended.lock().unwrap().push("wait_for_go");
        "went".to_owned()
    }

    /// Lets `wait_for_go` end.
    #[tool]
    async fn go(&self) -> String {
        self.go.cancel();
        self.ended.lock().unwrap().push("go");
        "gone".to_owned()
    }
}

#[test]
fn async_calls_of_one_reply_run_together_and_are_answered_by_tool_call_id_in_order() {
    let relay = Arc::new(Relay::default());
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([("relay_wait_for_go", json!({})), ("relay_go", json!({}))])
            .then_call("finish", json!({"answer": "done"})),
    );
    let mut tools = Registry::new();
    tools
        .add_from(Some("relay"), "test", Relay::tools(relay.clone()))
        .expect("two tools");
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &tools)
        .expect("agent")
        .timeout(Duration::from_secs(10));
    let answer = agent.run_blocking(&question()).expect("an answer");
    // One after the other, `wait_for_go` would have waited for the deadline.
    assert_eq!(*relay.ended.lock().unwrap(), ["go", "wait_for_go"]);
    let requests = lm.requests();
    let answers: Vec<(Option<&str>, Option<&str>)> = requests[1].messages[3..]
        .iter()
        .map(|m| (m.tool_call_id.as_deref(), m.content.as_deref()))
        .collect();
    assert_eq!(
        answers,
        [
            (Some("call_1"), Some("went")),
            (Some("call_2"), Some("gone"))
        ]
    );
    assert_eq!(answer.trajectory[0].call_id, "call_1");
}

/// Waits (five seconds at most) for a flag an async tool of the same reply raises.
struct Pair {
    raised: AtomicBool,
}

#[toolsmith::toolset(register = false)]
impl Pair {
    /// Blocks its thread until the flag is raised.
    #[tool]
    fn wait_for_flag(&self) -> String {
        let until = Instant::now() + Duration::from_secs(5);
        while !self.raised.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        if self.raised.load(Ordering::SeqCst) {
            "raised"
        } else {
            "never raised"
        }
        .to_owned()
    }

    /// Raises the flag.
    #[tool]
    async fn raise_flag(&self) -> String {
        self.raised.store(true, Ordering::SeqCst);
        "up".to_owned()
    }
}

#[test]
fn a_blocking_tool_runs_off_the_thread_that_polls_the_async_calls() {
    let pair = Arc::new(Pair {
        raised: AtomicBool::new(false),
    });
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([
                ("pair_wait_for_flag", json!({})),
                ("pair_raise_flag", json!({})),
            ])
            .then_call("finish", json!({"answer": "done"})),
    );
    let mut tools = Registry::new();
    tools
        .add_from(Some("pair"), "test", Pair::tools(pair.clone()))
        .expect("two tools");
    let answer = ReAct::<QuestionAnswer>::new(lm, &tools)
        .expect("agent")
        .run_blocking(&question())
        .expect("an answer");
    // Run on the polling thread, the blocking tool would have kept `raise_flag` from running.
    assert_eq!(answer.trajectory[0].observation, "raised");
}

/// Who is asking, as the program that runs the agent knows it.
struct Principal(String);

/// Greets whoever is asking.
#[toolsmith::tool]
fn greet(ctx: &Context) -> Result<String, ToolError> {
    Ok(format!("hello, {}", ctx.get::<Principal>()?.0))
}

#[test]
fn request_data_of_the_runs_context_reaches_every_tool_call() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("greet", json!({}))
            .then_call("finish", json!({"answer": "greeted"})),
    );
    let agent = ReAct::<QuestionAnswer>::new(lm, &registry(vec![Arc::new(Greet)])).expect("agent");
    let context = Context::new().with_data(Principal("ada".into()));
    let answer = agent
        .run_in_blocking(&question(), context)
        .expect("an answer");
    assert_eq!(answer.trajectory[0].observation, "hello, ada");
}

#[test]
fn a_run_in_a_cancelled_context_ends_before_the_model_is_asked() {
    let lm = Arc::new(ScriptedModel::new().then_call("finish", json!({"answer": "x"})));
    let agent = ReAct::<QuestionAnswer>::new(lm.clone(), &Registry::new()).expect("agent");
    let token = CancellationToken::new();
    token.cancel();
    let error = agent
        .run_in_blocking(&question(), Context::new().with_cancellation(token))
        .unwrap_err();
    assert!(
        matches!(error, AgentError::Cancelled { lm_calls: 0, .. }),
        "{error:?}"
    );
    assert!(lm.requests().is_empty());
}

#[test]
fn cancelling_a_run_cancels_the_tool_calls_it_is_waiting_for() {
    let lm = Arc::new(ScriptedModel::new().then_call("slow", json!({})));
    let tools = registry(vec![Arc::new(SlowAsync(Arc::default()))]);
    let agent = ReAct::<QuestionAnswer>::new(lm, &tools).expect("agent");
    let token = CancellationToken::new();
    let canceller = {
        let token = token.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            token.cancel();
        })
    };
    let started = Instant::now();
    let error = agent
        .run_in_blocking(&question(), Context::new().with_cancellation(token))
        .unwrap_err();
    canceller.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(error, AgentError::Cancelled { lm_calls: 1, .. }),
        "{error:?}"
    );
    assert_eq!(error.trajectory()[0].error, Some("cancelled"));
}

#[test]
fn the_runs_deadline_reaches_the_model_request() {
    let lm = Arc::new(ScriptedModel::new().then_call("finish", json!({"answer": "x"})));
    let timeout = Duration::from_secs(30);
    let before = Instant::now();
    Predict::<QuestionAnswer>::new(lm.clone())
        .expect("predictor")
        .timeout(timeout)
        .call_blocking(&question())
        .expect("an answer");
    let deadline = lm.requests()[0].deadline.expect("a deadline");
    assert!(before + timeout <= deadline && deadline <= Instant::now() + timeout);
}

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[test]
fn the_calls_go_through_the_registrys_own_layers() {
    let stats = Stats::new();
    let tools = registry(vec![Arc::new(Add)]).with_layer(stats.layer());
    let lm = Arc::new(
        ScriptedModel::new()
            .then_call("add", json!({"a": "1", "b": 2}))
            .then_call("finish", json!({"answer": "3"})),
    );
    ReAct::<QuestionAnswer>::new(lm, &tools)
        .expect("agent")
        .run_blocking(&question())
        .expect("an answer");
    let snapshot = stats.snapshot();
    assert_eq!(snapshot["tools"]["add"]["calls"], 1);
    assert_eq!(snapshot["tools"]["add"]["repairs"]["int_from_string"], 1);
}

#[test]
fn a_blocking_run_from_inside_an_async_runtime_is_refused_before_the_model_is_asked() {
    let lm = Arc::new(ScriptedModel::new().then_call("finish", json!({"answer": "x"})));
    let agent =
        ReAct::<QuestionAnswer>::new(lm.clone(), &registry(vec![Arc::new(Add)])).expect("agent");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let error = runtime
        .block_on(async { agent.run_blocking(&question()) })
        .unwrap_err();
    assert_eq!(error, AgentError::InsideRuntime);
    assert!(error.to_string().contains("await `run`"), "{error}");
    assert!(lm.requests().is_empty());
}

/// The run awaited in a runtime: an async tool on tokio's timer polled where the run is, a
/// sync tool on a thread of its own, in one reply.
#[test]
fn a_run_is_a_future_awaited_inside_a_runtime() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([
                ("later", json!({"text": "hi"})),
                ("add", json!({"a": 2, "b": "40"})),
            ])
            .then_call("finish", json!({"answer": "done"})),
    );
    let agent =
        ReAct::<QuestionAnswer>::new(lm.clone(), &registry(vec![Arc::new(Later), Arc::new(Add)]))
            .expect("agent");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let answer = runtime
        .block_on(async { agent.run(&question()).await })
        .expect("an answer");
    assert_eq!(answer.output.answer, "done");
    let observations: Vec<&str> = answer
        .trajectory
        .iter()
        .map(|step| step.observation.as_str())
        .collect();
    assert_eq!(observations, ["later: hi", "42"]);
}

/// Answers a question with an agent of its own.
struct Delegate {
    agent: ReAct<QuestionAnswer>,
}

#[toolsmith::tool(register = false, name = "delegate")]
impl Delegate {
    /// Asks another agent.
    fn ask(&self, question: String, ctx: &Context) -> Result<String, String> {
        let answer = self
            .agent
            .run_in_blocking(&Question { question }, ctx.clone())
            .map_err(|e| e.to_string())?;
        Ok(answer.output.answer)
    }
}

#[test]
fn a_sync_tool_may_run_an_agent_of_its_own_in_its_calls_context() {
    let inner_lm = Arc::new(
        ScriptedModel::new()
            .then_call("add", json!({"a": 2, "b": 2}))
            .then_call("finish", json!({"answer": "four"})),
    );
    let inner = ReAct::<QuestionAnswer>::new(inner_lm.clone(), &registry(vec![Arc::new(Add)]))
        .expect("inner agent");
    let outer_lm = Arc::new(
        ScriptedModel::new()
            .then_call("delegate", json!({"question": "2 + 2?"}))
            .then_call("finish", json!({"answer": "four, it says"})),
    );
    let tools = registry(vec![Arc::new(Delegate { agent: inner })]);
    let outer = ReAct::<QuestionAnswer>::new(outer_lm, &tools)
        .expect("outer agent")
        .timeout(Duration::from_secs(30));
    let answer = outer.run_blocking(&question()).expect("an answer");
    assert_eq!(answer.trajectory[0].observation, "four");
    // The outer run's deadline held over the inner one's model requests.
    let inner_deadline = inner_lm.requests()[0].deadline.expect("a deadline");
    assert!(inner_deadline <= Instant::now() + Duration::from_secs(30));
}

/// How many times `effect` ran.
static EFFECTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sleeps a while (a sync tool holding its thread).
#[toolsmith::tool]
fn nap() -> String {
    std::thread::sleep(Duration::from_millis(400));
    "rested".to_owned()
}

/// Has an effect (a sync tool that must not run for a run nobody waits for).
#[toolsmith::tool]
fn effect() -> String {
    EFFECTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    "done".to_owned()
}

/// A run dropped while a blocking call waits for a thread: the waiting call never starts.
#[test]
fn a_dropped_run_cancels_the_blocking_calls_it_leaves() {
    let lm = Arc::new(
        ScriptedModel::new()
            .then_calls([("nap", json!({})), ("effect", json!({}))])
            .then_call("finish", json!({"answer": "x"})),
    );
    let agent = ReAct::<QuestionAnswer>::new(lm, &registry(vec![Arc::new(Nap), Arc::new(Effect)]))
        .expect("agent")
        .offload(Arc::new(toolsmith::ToolPool::new(1)));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let before = EFFECTS.load(std::sync::atomic::Ordering::SeqCst);
    let given_up = runtime.block_on(async {
        tokio::time::timeout(Duration::from_millis(100), agent.run(&question())).await
    });
    assert!(given_up.is_err(), "the run was given up on");
    // Long enough for the nap to end and its thread to take the next job, were it there.
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(EFFECTS.load(std::sync::atomic::Ordering::SeqCst), before);
}
