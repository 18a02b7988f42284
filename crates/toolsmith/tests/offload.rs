//! Offloading blocking tools (`Registry::with_offload`): a sync tool runs on another thread,
//! leaving the caller's executor free; an async tool is awaited where it is.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::ThreadId;
use std::time::Duration;

use toolsmith::{
    Arguments, Context, Offload, Registry, ThreadPerCall, Timeout, ToolError, ToolPool,
};

const PATIENCE: Duration = Duration::from_secs(20);

/// Where a tool ran.
#[derive(Default)]
struct Threads(Mutex<Vec<ThreadId>>);

impl Threads {
    fn record(&self) {
        self.0.lock().unwrap().push(std::thread::current().id());
    }
    fn last(&self) -> ThreadId {
        *self.0.lock().unwrap().last().expect("the tool never ran")
    }
}

/// Says which thread it runs on (sync).
#[toolsmith::tool]
fn where_sync(ctx: &Context) -> Result<String, ToolError> {
    ctx.get::<Arc<Threads>>()?.record();
    Ok("sync".into())
}

/// Says which thread it runs on (async).
#[toolsmith::tool]
async fn where_async(ctx: &Context) -> Result<String, ToolError> {
    tokio::task::yield_now().await;
    ctx.get::<Arc<Threads>>()?.record();
    Ok("async".into())
}

/// Blocks its thread until it is let go, as a sync tool waiting on a process does.
#[toolsmith::tool]
fn wait_to_be_let_go(ctx: &Context) -> Result<String, ToolError> {
    let gate = ctx.get::<Mutex<mpsc::Receiver<&'static str>>>()?;
    let word = gate
        .lock()
        .unwrap()
        .recv_timeout(PATIENCE)
        .unwrap_or("never let go");
    Ok(word.into())
}

fn registry() -> Registry {
    let mut registry = Registry::new().with_offload(Arc::new(ThreadPerCall));
    registry.add(Arc::new(WhereSync)).unwrap();
    registry.add(Arc::new(WhereAsync)).unwrap();
    registry.add(Arc::new(WaitToBeLetGo)).unwrap();
    registry
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn an_offloaded_sync_tool_runs_on_another_thread_than_its_caller() {
    let threads = Arc::new(Threads::default());
    let output = registry()
        .call_blocking(
            "where_sync",
            Arguments::Text("{}"),
            Context::new().with_data(Arc::clone(&threads)),
        )
        .unwrap();
    assert_eq!(output.as_text(), "sync");
    assert_ne!(threads.last(), std::thread::current().id());
    // Without an offload it runs where it is called.
    let mut plain = Registry::new();
    plain.add(Arc::new(WhereSync)).unwrap();
    plain
        .call_blocking(
            "where_sync",
            Arguments::Text("{}"),
            Context::new().with_data(Arc::clone(&threads)),
        )
        .unwrap();
    assert_eq!(threads.last(), std::thread::current().id());
}

#[test]
fn an_async_tool_is_awaited_where_it_is_called_with_no_thread_hop() {
    let threads = Arc::new(Threads::default());
    let registry = registry();
    let runtime = current_thread();
    let caller = std::thread::current().id();
    let output = runtime
        .block_on(registry.call(
            "where_async",
            Arguments::Text("{}"),
            Context::new().with_data(Arc::clone(&threads)),
        ))
        .unwrap();
    assert_eq!(output.as_text(), "async");
    assert_eq!(threads.last(), caller);
}

#[test]
fn while_an_offloaded_tool_blocks_a_single_threaded_executor_runs_other_tasks() {
    let registry = registry();
    let (let_go, gate) = mpsc::channel();
    let order = Mutex::new(Vec::new());
    let runtime = current_thread();
    runtime.block_on(async {
        let blocked = async {
            let output = registry
                .call(
                    "wait_to_be_let_go",
                    Arguments::Text("{}"),
                    Context::new().with_data(Mutex::new(gate)),
                )
                .await;
            order.lock().unwrap().push("the tool answered");
            output
        };
        // Runs on the same (only) executor thread while the tool blocks: were the tool on
        // this thread, this task could not run until the tool gave up waiting.
        let other = async {
            tokio::task::yield_now().await;
            order.lock().unwrap().push("another task ran");
            let_go.send("let go").unwrap();
        };
        let (output, ()) = tokio::join!(blocked, other);
        assert_eq!(output.unwrap().as_text(), "let go");
    });
    assert_eq!(
        *order.lock().unwrap(),
        ["another task ran", "the tool answered"]
    );
}

/// Counts the jobs it is given, running none.
#[derive(Default)]
struct Refuse(AtomicUsize);

impl Offload for Refuse {
    fn spawn(&self, _: Box<dyn FnOnce() + Send + 'static>) -> Result<(), String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err("every worker is busy".into())
    }
}

#[test]
fn an_offload_that_cannot_take_the_call_makes_it_unavailable_and_the_tool_never_runs() {
    let refuse = Arc::new(Refuse::default());
    let threads = Arc::new(Threads::default());
    let registry = registry().with_offload(refuse.clone());
    let error = registry
        .call_blocking(
            "where_sync",
            Arguments::Text("{}"),
            Context::new().with_data(Arc::clone(&threads)),
        )
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::Unavailable {
            tool: "where_sync".into(),
            reason: "every worker is busy".into()
        }
    );
    assert!(threads.0.lock().unwrap().is_empty());
    // An async tool never goes through the offload.
    registry
        .call_blocking(
            "where_async",
            Arguments::Text("{}"),
            Context::new().with_data(Arc::clone(&threads)),
        )
        .unwrap();
    assert_eq!(refuse.0.load(Ordering::SeqCst), 1);
}

#[test]
fn a_call_cancelled_before_it_starts_is_never_offloaded() {
    let refuse = Arc::new(Refuse::default());
    let registry = registry().with_offload(refuse.clone());
    let token = toolsmith::CancellationToken::new();
    token.cancel();
    let error = registry
        .call_blocking(
            "where_sync",
            Arguments::Text("{}"),
            Context::new().with_cancellation(token),
        )
        .unwrap_err();
    assert_eq!(error.code(), "cancelled");
    assert_eq!(refuse.0.load(Ordering::SeqCst), 0);
}

/// Panics on whatever thread it runs.
#[toolsmith::tool]
fn explode_offloaded() -> String {
    panic!("offloaded boom")
}

#[test]
fn an_offloaded_tools_panic_comes_back_as_an_error_named_as_called() {
    let mut registry = Registry::new()
        .with_layers(Vec::new())
        .with_offload(Arc::new(ThreadPerCall));
    registry.add(Arc::new(ExplodeOffloaded)).unwrap();
    let registry = registry.renamed("explode_offloaded", "boom").unwrap();
    // No CatchPanic: the panic on the offload's thread must still come back, not hang.
    let error = registry
        .call_blocking("boom", Arguments::Text("{}"), Context::new())
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::Panicked {
            tool: "boom".into(),
            message: "offloaded boom".into()
        }
    );
}

#[derive(serde::Deserialize, toolsmith::ToolType)]
struct NoArguments {}

/// A blocking tool written by hand, which (unlike a `#[tool]`'s) runs whatever its context
/// says: it counts its runs.
struct Counted {
    parameters: toolsmith::TypeGraph,
    runs: AtomicUsize,
}

impl toolsmith::Tool for Counted {
    fn name(&self) -> &str {
        "counted"
    }
    fn description(&self) -> &str {
        "Counts its runs."
    }
    fn parameters(&self) -> &toolsmith::TypeGraph {
        &self.parameters
    }
    fn is_blocking(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, _: Arguments<'a>, _: Context) -> toolsmith::ToolFuture<'a> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        toolsmith::ToolFuture::ready(Ok(toolsmith::ToolOutput::text("ran")))
    }
}

#[test]
fn a_call_that_waited_for_a_busy_pool_past_its_deadline_never_runs() {
    // One thread, taken by a tool that blocks until let go; the second call waits in the
    // queue, its deadline passes there, and when the thread frees up it is not run.
    let pool = Arc::new(ToolPool::new(1));
    let counted = Arc::new(Counted {
        parameters: <NoArguments as toolsmith::Describe>::type_graph(),
        runs: AtomicUsize::new(0),
    });
    let mut registry = Registry::new()
        .with_layer(Timeout::deadline())
        .with_offload(pool.clone());
    registry.add(counted.clone()).unwrap();
    registry.add(Arc::new(WaitToBeLetGo)).unwrap();
    let registry = Arc::new(registry);
    let (let_go, gate) = mpsc::channel();
    let blocking = {
        let registry = Arc::clone(&registry);
        std::thread::spawn(move || {
            registry.call_blocking(
                "wait_to_be_let_go",
                Arguments::Text("{}"),
                Context::new().with_data(Mutex::new(gate)),
            )
        })
    };
    // The pool starts its thread for the first job: from then on that job is ahead.
    let started = std::time::Instant::now();
    while pool.threads() == 0 {
        assert!(
            started.elapsed() < PATIENCE,
            "the first call never reached the pool"
        );
        std::thread::yield_now();
    }
    let deadline = std::time::Instant::now() + Duration::from_millis(50);
    let error = registry
        .call_blocking(
            "counted",
            Arguments::Text("{}"),
            Context::new().with_deadline(deadline),
        )
        .unwrap_err();
    assert_eq!(error.code(), "timed_out");
    let_go.send("let go").unwrap();
    assert_eq!(blocking.join().unwrap().unwrap().as_text(), "let go");
    // A call queued after the timed-out one: once it has run, the other has had its turn.
    let output = registry
        .call_blocking("counted", Arguments::Text("{}"), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), "ran");
    assert_eq!(
        counted.runs.load(Ordering::SeqCst),
        1,
        "the timed-out call ran"
    );
}
