//! Offloading blocking tools (`Registry::with_offload`): a sync tool runs on another thread,
//! leaving the caller's executor free; an async tool is awaited where it is.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::ThreadId;
use std::time::Duration;

use toolsmith::{Arguments, Context, Offload, Registry, ThreadPerCall, ToolError};

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
