//! The per-call [`Context`] through the public interface: request data present and missing,
//! deadlines, cancellation before and during a call, progress and log messages.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolsmith::{
    Arguments, CancellationToken, Context, LogLevel, Progress, Registry, Reporter, ThreadPerCall,
    Timeout, Tool, ToolError, ToolExt,
};

/// Long enough that a test never waits it out unless something is wrong.
const PATIENCE: Duration = Duration::from_secs(20);

// ---- Request data. ----

/// Who is asking.
#[derive(Debug)]
struct Principal(String);

/// The database a request may use.
struct Pool {
    name: &'static str,
}

/// Says who asks, and of which database.
#[toolsmith::tool]
fn who(ctx: &Context) -> Result<String, ToolError> {
    let principal = ctx.get::<Principal>()?;
    let pool = ctx.get::<Pool>()?;
    Ok(format!("{} on {}", principal.0, pool.name))
}

/// The same, awaiting nothing in particular.
#[toolsmith::tool]
async fn who_async(ctx: &Context) -> Result<String, ToolError> {
    let principal = ctx.get::<Principal>()?;
    Ok(format!("{} (async)", principal.0))
}

#[test]
fn request_data_the_caller_put_in_is_found_by_its_type() {
    let ctx = Context::new()
        .with_data(Principal("ada".into()))
        .with_data(Pool { name: "orders" });
    assert_eq!(
        Who.call_blocking(Arguments::Text("{}"), ctx.clone())
            .unwrap()
            .as_text(),
        "ada on orders"
    );
    assert_eq!(
        WhoAsync
            .call_blocking(Arguments::Text("{}"), ctx)
            .unwrap()
            .as_text(),
        "ada (async)"
    );
}

#[test]
fn a_second_value_of_one_type_replaces_the_first() {
    let mut ctx = Context::new()
        .with_data(Principal("ada".into()))
        .with_data(Pool { name: "orders" });
    ctx.insert(Principal("grace".into()));
    assert_eq!(ctx.get::<Principal>().unwrap().0, "grace");
    assert_eq!(ctx.get::<Pool>().unwrap().name, "orders");
}

#[test]
fn a_clone_shares_the_data_and_changing_it_leaves_the_original_alone() {
    let original = Context::new().with_data(Principal("ada".into()));
    let mut copy = original.clone();
    copy.insert(Principal("grace".into()));
    copy.insert(7_u32);
    assert_eq!(original.get::<Principal>().unwrap().0, "ada");
    assert!(original.try_get::<u32>().is_none());
    assert_eq!(copy.try_get::<u32>(), Some(&7));
}

#[test]
fn missing_request_data_is_an_error_naming_the_type_never_a_panic() {
    // No layer at all: no CatchPanic could be hiding a panic.
    let mut registry = Registry::new().with_layers(Vec::new());
    registry.add(Arc::new(Who)).unwrap();
    registry.add(Arc::new(WhoAsync)).unwrap();

    let only_principal = Context::new().with_data(Principal("ada".into()));
    let error = registry
        .call_blocking("who", Arguments::Text("{}"), only_principal)
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::MissingData {
            tool: "who".into(),
            type_name: std::any::type_name::<Pool>(),
        }
    );
    assert!(
        error.to_model_message().starts_with(&format!(
            "Tool `who` cannot run here: its caller did not provide the `{}` it needs",
            std::any::type_name::<Pool>()
        )),
        "{error}"
    );
    let json = error.to_json();
    assert_eq!(json["code"], "missing_data");
    assert_eq!(json["type"], std::any::type_name::<Pool>());

    let error = registry
        .call_blocking("who_async", Arguments::Text("{}"), Context::new())
        .unwrap_err();
    assert_eq!(error.code(), "missing_data");
    assert_eq!(error.tool(), "who_async");
    assert!(error.to_model_message().contains("Principal"), "{error}");
}

#[test]
fn a_context_outside_any_call_names_no_tool_in_a_missing_data_error() {
    let error = Context::new().get::<Pool>().err().unwrap();
    assert_eq!(error.tool(), "");
    assert_eq!(error.code(), "missing_data");
}

// ---- The call's identity. ----

/// Reports what its context says about the call.
#[toolsmith::tool]
fn identify(ctx: &Context) -> String {
    format!(
        "{} {} {}",
        ctx.tool_name().unwrap_or("-"),
        ctx.call_id().unwrap_or("-"),
        ctx.deadline().is_some()
    )
}

#[test]
fn the_tool_sees_its_call_id_and_the_name_it_was_called_by() {
    assert_eq!(
        Identify
            .call_blocking(Arguments::Text("{}"), Context::new())
            .unwrap()
            .as_text(),
        "identify - false"
    );
    let mut registry = Registry::new();
    registry.add(Arc::new(Identify)).unwrap();
    let ctx = Context::new()
        .with_call_id("toolu_01")
        .with_deadline(Instant::now() + PATIENCE);
    assert_eq!(
        registry
            .call_blocking("identify", Arguments::Text("{}"), ctx)
            .unwrap()
            .as_text(),
        "identify toolu_01 true"
    );
}

#[test]
fn the_earlier_of_two_deadlines_holds() {
    let soon = Instant::now() + Duration::from_secs(5);
    let later = soon + Duration::from_secs(5);
    let ctx = Context::new().with_deadline(soon).with_deadline(later);
    assert_eq!(ctx.deadline(), Some(soon));
    assert!(ctx.remaining().unwrap() <= Duration::from_secs(5));
    assert!(!ctx.is_past_deadline());
    let past = Context::new().with_deadline(Instant::now() - Duration::from_millis(1));
    assert_eq!(past.remaining(), Some(Duration::ZERO));
    assert!(past.is_past_deadline());
}

// ---- Cancellation before the call starts. ----

/// Counts its runs.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Counts how often it ran.
#[toolsmith::tool]
fn counted(tag: String) -> String {
    RUNS.fetch_add(1, Ordering::SeqCst);
    tag
}

/// Counts how often it ran, asynchronously.
#[toolsmith::tool]
async fn counted_async(tag: String) -> String {
    RUNS.fetch_add(1, Ordering::SeqCst);
    tag
}

#[test]
fn a_call_cancelled_before_it_starts_answers_cancelled_and_the_tool_never_runs() {
    let token = CancellationToken::new();
    token.cancel();
    let mut registry = Registry::new();
    registry.add(Arc::new(Counted)).unwrap();
    registry.add(Arc::new(CountedAsync)).unwrap();
    let before = RUNS.load(Ordering::SeqCst);
    for name in ["counted", "counted_async"] {
        // Through the registry, and on the tool itself.
        let ctx = || Context::new().with_cancellation(token.clone());
        let through_registry = registry
            .call_blocking(name, Arguments::Text(r#"{"tag": "x"}"#), ctx())
            .unwrap_err();
        assert_eq!(through_registry, ToolError::Cancelled { tool: name.into() });
        let direct = registry
            .get(name)
            .unwrap()
            .call_blocking(Arguments::Text(r#"{"tag": "x"}"#), ctx())
            .unwrap_err();
        assert_eq!(direct.code(), "cancelled");
    }
    // A child of a cancelled token is cancelled too.
    let child = Context::new().with_cancellation(token.child());
    assert_eq!(
        Counted
            .call_blocking(Arguments::Text(r#"{"tag": "x"}"#), child)
            .unwrap_err()
            .code(),
        "cancelled"
    );
    assert_eq!(RUNS.load(Ordering::SeqCst), before, "a cancelled call ran");
    assert_eq!(
        ToolError::Cancelled {
            tool: "counted".into()
        }
        .to_model_message(),
        "The call of tool `counted` was cancelled before it finished."
    );
}

#[test]
fn a_call_past_its_deadline_before_it_starts_answers_timed_out_and_never_runs() {
    let before = RUNS.load(Ordering::SeqCst);
    let mut registry = Registry::new();
    registry.add(Arc::new(CountedAsync)).unwrap();
    let past = Context::new().with_deadline(Instant::now() - Duration::from_millis(1));
    let error = registry
        .call_blocking("counted_async", Arguments::Text(r#"{"tag": "x"}"#), past)
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::TimedOut {
            tool: "counted_async".into(),
            after: None
        }
    );
    assert_eq!(RUNS.load(Ordering::SeqCst), before, "a late call ran");
}

// ---- Cancellation during the call. ----

/// Waits for its call to be cancelled, saying when it has started.
#[toolsmith::tool]
async fn wait_for_cancel(ctx: &Context) -> Result<String, ToolError> {
    let started = ctx.get::<Mutex<Option<mpsc::Sender<()>>>>()?;
    if let Some(started) = started.lock().unwrap().take() {
        started.send(()).unwrap();
    }
    ctx.cancelled().await;
    let seen = ctx.get::<Arc<AtomicBool>>()?;
    seen.store(true, Ordering::SeqCst);
    Err(ToolError::Cancelled {
        tool: String::new(),
    })
}

#[test]
fn a_tool_awaiting_cancellation_observes_it_when_the_caller_cancels() {
    let mut registry = Registry::new();
    registry.add(Arc::new(WaitForCancel)).unwrap();
    let token = CancellationToken::new();
    let (started, has_started) = mpsc::channel::<()>();
    let seen = Arc::new(AtomicBool::new(false));
    let ctx = Context::new()
        .with_cancellation(token.clone())
        .with_data(Mutex::new(Some(started)))
        .with_data(Arc::clone(&seen));
    let canceller = std::thread::spawn(move || {
        has_started.recv_timeout(PATIENCE).unwrap();
        token.cancel();
    });
    let error = registry
        .call_blocking("wait_for_cancel", Arguments::Text("{}"), ctx)
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(
        error,
        ToolError::Cancelled {
            tool: "wait_for_cancel".into()
        }
    );
    assert!(
        seen.load(Ordering::SeqCst),
        "the tool did not see the cancellation"
    );
}

/// Waits for its call to stop, then says why, as a tool that stops early does.
#[toolsmith::tool]
async fn wait_to_stop(ctx: &Context) -> Result<String, ToolError> {
    ctx.cancelled().await;
    Err(ctx.stopped_error(""))
}

#[test]
fn a_deadline_alone_cancels_the_context_when_it_passes_with_no_layer_to_enforce_it() {
    let deadline = Instant::now() + Duration::from_millis(40);
    let ctx = Context::new().with_deadline(deadline);
    assert!(!ctx.is_cancelled());
    assert!(!ctx.is_cancelled_by_caller());
    toolsmith::block_on(ctx.cancelled()).unwrap();
    assert!(Instant::now() >= deadline);
    assert!(ctx.is_cancelled());
    assert!(!ctx.is_cancelled_by_caller());
    assert_eq!(ctx.stopped_error("t").code(), "timed_out");

    // Through a registry with no layer but the default ones: the tool sees the deadline pass.
    let mut registry = Registry::new();
    registry.add(Arc::new(WaitToStop)).unwrap();
    let ctx = Context::new().with_deadline(Instant::now() + Duration::from_millis(30));
    let error = registry
        .call_blocking("wait_to_stop", Arguments::Text("{}"), ctx)
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::TimedOut {
            tool: "wait_to_stop".into(),
            after: None
        }
    );

    // A caller's cancellation is told apart from the deadline, whichever came first.
    let token = CancellationToken::new();
    let ctx = Context::new()
        .with_cancellation(token.clone())
        .with_deadline(Instant::now() - Duration::from_millis(1));
    assert_eq!(ctx.stopped_error("t").code(), "timed_out");
    token.cancel();
    assert!(ctx.is_cancelled_by_caller());
    assert_eq!(ctx.stopped_error("t").code(), "cancelled");
}

#[test]
fn a_cancelled_future_completes_for_every_waiter_and_children_follow_their_parent() {
    let parent = CancellationToken::new();
    let child = parent.child();
    let grandchild = child.child();
    let waiters: Vec<_> = [parent.clone(), child.clone(), grandchild.clone()]
        .into_iter()
        .map(|token| std::thread::spawn(move || toolsmith::block_on(token.cancelled())))
        .collect();
    // Cancelling a child leaves its parent alone.
    let sibling = parent.child();
    sibling.cancel();
    assert!(!parent.is_cancelled());
    parent.cancel();
    for waiter in waiters {
        waiter.join().unwrap().unwrap();
    }
    assert!(grandchild.is_cancelled());
    // A token made from a cancelled one starts cancelled.
    assert!(parent.child().is_cancelled());
}

// ---- The deadline reached during the call. ----

/// Hands its context to a watcher thread, which records when the call is cancelled, then
/// waits for its call's end.
#[toolsmith::tool]
async fn slow_watched(ctx: &Context) -> Result<String, ToolError> {
    let watcher = ctx.get::<Watcher>()?;
    watcher.watch(ctx.clone());
    ctx.cancelled().await;
    Ok("cancelled, and answering anyway".into())
}

/// Sees a call's context from another thread, as a worker a tool hands its work to would.
#[derive(Clone, Default)]
struct Watcher {
    saw_cancel: Arc<Mutex<Option<mpsc::Receiver<Option<Duration>>>>>,
}

impl Watcher {
    fn watch(&self, ctx: Context) {
        let (tell, told) = mpsc::channel();
        *self.saw_cancel.lock().unwrap() = Some(told);
        std::thread::spawn(move || {
            let remaining = ctx.remaining();
            let _ = toolsmith::block_on(ctx.cancelled());
            tell.send(remaining).unwrap();
        });
    }

    /// Waits for the watcher to see the cancellation; the time left when it began.
    fn saw_cancellation(&self) -> Option<Duration> {
        let told = self
            .saw_cancel
            .lock()
            .unwrap()
            .take()
            .expect("never watched");
        told.recv_timeout(PATIENCE)
            .expect("the cancellation never reached the tool")
    }
}

#[test]
fn a_timeout_cancels_the_tools_context_and_the_call_answers_timed_out() {
    let watcher = Watcher::default();
    let mut registry = Registry::new().with_layer(Timeout::new(Duration::from_millis(50)));
    registry.add(Arc::new(SlowWatched)).unwrap();
    let started = Instant::now();
    let error = registry
        .call_blocking(
            "slow_watched",
            Arguments::Text("{}"),
            Context::new().with_data(watcher.clone()),
        )
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::TimedOut {
            tool: "slow_watched".into(),
            after: Some(Duration::from_millis(50))
        }
    );
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert!(
        error
            .to_model_message()
            .starts_with("Tool `slow_watched` did not answer within 50 ms"),
        "{error}"
    );
    // The tool's context had the timeout's deadline, and was cancelled when it passed.
    let remaining = watcher.saw_cancellation().expect("a deadline");
    assert!(remaining <= Duration::from_millis(50));
}

#[test]
fn a_context_deadline_is_enforced_by_the_deadline_layer() {
    let watcher = Watcher::default();
    let mut registry = Registry::new().with_layer(Timeout::deadline());
    registry.add(Arc::new(SlowWatched)).unwrap();
    let deadline = Instant::now() + Duration::from_millis(50);
    let error = registry
        .call_blocking(
            "slow_watched",
            Arguments::Text("{}"),
            Context::new()
                .with_deadline(deadline)
                .with_data(watcher.clone()),
        )
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::TimedOut {
            tool: "slow_watched".into(),
            after: None
        }
    );
    assert!(Instant::now() >= deadline);
    watcher.saw_cancellation();
}

#[test]
fn a_context_deadline_sooner_than_the_layers_timeout_holds() {
    let watcher = Watcher::default();
    let mut registry = Registry::new().with_layer(Timeout::new(PATIENCE));
    registry.add(Arc::new(SlowWatched)).unwrap();
    let error = registry
        .call_blocking(
            "slow_watched",
            Arguments::Text("{}"),
            Context::new()
                .with_deadline(Instant::now() + Duration::from_millis(30))
                .with_data(watcher.clone()),
        )
        .unwrap_err();
    // The context's deadline ended it, not the layer's own time: no time to quote.
    assert_eq!(
        error,
        ToolError::TimedOut {
            tool: "slow_watched".into(),
            after: None
        }
    );
    watcher.saw_cancellation();
}

#[test]
fn a_caller_cancelling_a_call_under_a_timeout_still_reaches_the_tool() {
    let watcher = Watcher::default();
    let mut registry = Registry::new().with_layer(Timeout::new(PATIENCE));
    registry.add(Arc::new(SlowWatched)).unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let watching = watcher.clone();
    let canceller = std::thread::spawn(move || {
        // The tool has started once the watcher has its receiver.
        while watching.saw_cancel.lock().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        cancel.cancel();
    });
    let output = registry
        .call_blocking(
            "slow_watched",
            Arguments::Text("{}"),
            Context::new()
                .with_cancellation(token)
                .with_data(watcher.clone()),
        )
        .unwrap();
    canceller.join().unwrap();
    // The tool saw its caller's cancellation under the timeout, and answered.
    assert_eq!(output.as_text(), "cancelled, and answering anyway");
    watcher.saw_cancellation();
}

/// Works until its call is cancelled, checking between steps; a sync tool.
#[toolsmith::tool]
fn busy(ctx: &Context) -> Result<String, ToolError> {
    let steps = ctx.get::<Arc<AtomicUsize>>()?;
    let saw = ctx.get::<Arc<AtomicBool>>()?;
    let started = Instant::now();
    while started.elapsed() < PATIENCE {
        if ctx.is_cancelled() {
            saw.store(true, Ordering::SeqCst);
            return Err(ToolError::Cancelled {
                tool: String::new(),
            });
        }
        steps.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok("never cancelled".into())
}

#[test]
fn a_sync_tool_on_its_own_thread_sees_the_timeout_cancel_its_context() {
    let steps = Arc::new(AtomicUsize::new(0));
    let saw = Arc::new(AtomicBool::new(false));
    let mut registry = Registry::new()
        .with_layer(Timeout::new(Duration::from_millis(50)))
        .with_offload(Arc::new(ThreadPerCall));
    registry.add(Arc::new(Busy)).unwrap();
    let error = registry
        .call_blocking(
            "busy",
            Arguments::Text("{}"),
            Context::new()
                .with_data(Arc::clone(&steps))
                .with_data(Arc::clone(&saw)),
        )
        .unwrap_err();
    assert_eq!(error.code(), "timed_out");
    let waited = Instant::now();
    while !saw.load(Ordering::SeqCst) && waited.elapsed() < PATIENCE {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(saw.load(Ordering::SeqCst), "the tool never saw the cancel");
    assert!(steps.load(Ordering::SeqCst) > 0, "the tool never started");
}

// ---- Progress and log messages. ----

/// Collects what calls report.
#[derive(Default)]
struct Collect {
    seen: Mutex<Vec<String>>,
}

impl Reporter for Collect {
    fn progress(&self, context: &Context, progress: Progress) {
        self.seen.lock().unwrap().push(format!(
            "{} progress {}/{:?} {:?}",
            context.call_id().unwrap_or("-"),
            progress.done,
            progress.total,
            progress.message
        ));
    }

    fn log(&self, context: &Context, level: LogLevel, data: Value) {
        self.seen.lock().unwrap().push(format!(
            "{} {} {level} {data}",
            context.call_id().unwrap_or("-"),
            context.tool_name().unwrap_or("-")
        ));
    }
}

/// Counts to three, reporting each step.
#[toolsmith::tool]
async fn count_to_three(ctx: &Context) -> String {
    for step in 1..=3 {
        ctx.progress(Progress::of(step, 3).with_message(format!("step {step}")));
    }
    ctx.log(LogLevel::Notice, "counted");
    ctx.log(LogLevel::Debug, serde_json::json!({"steps": 3}));
    "3".into()
}

#[test]
fn progress_and_log_messages_reach_the_callers_reporter_with_the_call() {
    let collect = Arc::new(Collect::default());
    let mut registry = Registry::new();
    registry.add(Arc::new(CountToThree)).unwrap();
    registry
        .call_blocking(
            "count_to_three",
            Arguments::Text("{}"),
            Context::new()
                .with_call_id("c1")
                .with_reporter(collect.clone()),
        )
        .unwrap();
    assert_eq!(
        *collect.seen.lock().unwrap(),
        [
            "c1 progress 1/Some(3.0) Some(\"step 1\")",
            "c1 progress 2/Some(3.0) Some(\"step 2\")",
            "c1 progress 3/Some(3.0) Some(\"step 3\")",
            "c1 count_to_three notice \"counted\"",
            "c1 count_to_three debug {\"steps\":3}",
        ]
    );
    // Without a reporter both go nowhere harmful.
    assert_eq!(
        CountToThree
            .call_blocking(Arguments::Text("{}"), Context::new())
            .unwrap()
            .as_text(),
        "3"
    );
}

#[test]
fn log_levels_are_the_eight_of_rfc_5424_in_order_and_read_back_by_name() {
    let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
    assert_eq!(
        names,
        [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency"
        ]
    );
    for level in LogLevel::ALL {
        assert_eq!(LogLevel::from_name(level.as_str()), Some(level));
    }
    assert!(LogLevel::Warning > LogLevel::Notice);
    assert_eq!(LogLevel::from_name("warn"), None);
}

#[test]
fn a_tool_with_a_context_still_describes_itself_without_one() {
    let schema =
        toolsmith::parameters_schema(Busy.parameters(), toolsmith::Dialect::JsonSchema).unwrap();
    assert_eq!(schema["properties"], serde_json::json!({}));
}
