//! The blocking entry point (`call_blocking`, `block_on`) with the facade's `tokio` feature,
//! which this crate's tests always have (a dev-dependency on the crate itself turns it on):
//! inside a tokio runtime it refuses with `unavailable` instead of panicking or deadlocking;
//! outside one, an async tool that uses tokio's timer and sockets works.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use toolsmith::{Arguments, Context, InsideRuntime, Registry, Timeout, ToolError, ToolExt};

/// Sleeps on tokio's timer, then answers.
#[toolsmith::tool]
async fn nap(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Echoes a line through a loopback TCP connection: tokio's sockets.
#[toolsmith::tool]
async fn loopback(line: String) -> Result<String, std::io::Error> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let server = async {
        let (mut socket, _) = listener.accept().await?;
        let mut received = Vec::new();
        socket.read_to_end(&mut received).await?;
        socket.write_all(&received).await?;
        Ok::<_, std::io::Error>(())
    };
    let client = async {
        let mut socket = tokio::net::TcpStream::connect(address).await?;
        socket.write_all(line.as_bytes()).await?;
        socket.shutdown().await?;
        let mut echoed = String::new();
        socket.read_to_string(&mut echoed).await?;
        Ok::<_, std::io::Error>(echoed)
    };
    let ((), echoed) = tokio::try_join!(server, client)?;
    Ok(echoed)
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(Arc::new(Nap)).unwrap();
    registry.add(Arc::new(Loopback)).unwrap();
    registry
}

#[test]
fn outside_a_runtime_an_async_tool_using_tokios_timer_runs_to_its_end() {
    let output = Nap
        .call_blocking(Arguments::Text(r#"{"millis": 20}"#), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), "slept 20 ms");
    let output = registry()
        .call_blocking("nap", Arguments::Text(r#"{"millis": "5"}"#), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), "slept 5 ms");
    assert_eq!(output.repairs[0].code.as_str(), "int_from_string");
}

#[test]
fn outside_a_runtime_an_async_tool_using_tokios_sockets_runs_to_its_end() {
    let output = registry()
        .call_blocking(
            "loopback",
            Arguments::Text(r#"{"line": "ping"}"#),
            Context::new(),
        )
        .unwrap();
    assert_eq!(output.as_text(), "ping");
}

#[test]
fn the_blocking_entry_point_works_again_and_again_on_one_thread_and_on_others() {
    let registry = registry();
    for millis in [1, 2, 3] {
        let args = format!(r#"{{"millis": {millis}}}"#);
        let output = registry
            .call_blocking("nap", Arguments::Text(&args), Context::new())
            .unwrap();
        assert_eq!(output.as_text(), format!("slept {millis} ms"));
    }
    std::thread::scope(|s| {
        let calls: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    registry.call_blocking(
                        "nap",
                        Arguments::Text(r#"{"millis": 5}"#),
                        Context::new(),
                    )
                })
            })
            .collect();
        for call in calls {
            assert_eq!(call.join().unwrap().unwrap().as_text(), "slept 5 ms");
        }
    });
}

#[test]
fn a_timeout_layer_ends_an_async_tool_sleeping_on_tokios_timer() {
    let registry = registry().with_layer(Timeout::new(Duration::from_millis(20)));
    let error = registry
        .call_blocking(
            "nap",
            Arguments::Text(r#"{"millis": 60000}"#),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::TimedOut {
            tool: "nap".into(),
            after: Some(Duration::from_millis(20))
        }
    );
}

fn inside(flavor: &str, body: impl FnOnce() + Send) {
    let runtime = match flavor {
        "current_thread" => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build(),
    }
    .unwrap();
    runtime.block_on(async move { body() });
}

#[test]
fn inside_a_runtime_call_blocking_is_unavailable_not_a_panic_or_a_deadlock() {
    for flavor in ["current_thread", "multi_thread"] {
        inside(flavor, || {
            let error = Nap
                .call_blocking(Arguments::Text(r#"{"millis": 1}"#), Context::new())
                .unwrap_err();
            let ToolError::Unavailable { tool, reason } = &error else {
                panic!("{flavor}: {error:?}");
            };
            assert_eq!(tool, "nap");
            assert!(reason.contains("from inside an async runtime"), "{reason}");
            assert!(
                error
                    .to_model_message()
                    .starts_with("Tool `nap` cannot be called now: a blocking call was made"),
                "{error}"
            );

            let error = registry()
                .call_blocking("nap", Arguments::Text(r#"{"millis": 1}"#), Context::new())
                .unwrap_err();
            assert_eq!(error.code(), "unavailable", "{flavor}");
            assert_eq!(error.tool(), "nap");
        });
    }
}

#[test]
fn inside_a_runtime_block_on_refuses_without_polling_the_future() {
    let polled = AtomicBool::new(false);
    inside("current_thread", || {
        let refused = toolsmith::block_on(async {
            polled.store(true, Ordering::SeqCst);
        });
        assert_eq!(refused, Err(InsideRuntime));
    });
    assert!(!polled.load(Ordering::SeqCst));
    assert!(
        InsideRuntime
            .to_string()
            .contains("await the call (`Registry::call`, `Tool::call`) instead")
    );
}

#[test]
fn inside_a_runtime_the_call_is_awaited_instead() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    let (nap, echo) = runtime.block_on(async {
        tokio::join!(
            registry.call("nap", Arguments::Text(r#"{"millis": 5}"#), Context::new()),
            registry.call(
                "loopback",
                Arguments::Text(r#"{"line": "pong"}"#),
                Context::new()
            ),
        )
    });
    assert_eq!(nap.unwrap().as_text(), "slept 5 ms");
    assert_eq!(echo.unwrap().as_text(), "pong");
}

static ADDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Adds, counting its runs.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    ADDS.fetch_add(1, Ordering::SeqCst);
    a + b
}

#[test]
fn a_sync_tool_called_blocking_inside_a_runtime_is_refused_before_it_runs() {
    // One rule for every tool: the blocking entry point does nothing inside a runtime, so a
    // sync tool's body (which may block for seconds) never runs on an executor's thread, and
    // never runs only to have its answer thrown away.
    let mut registry = Registry::new();
    registry.add(Arc::new(Add)).unwrap();
    inside("current_thread", || {
        let error = Add
            .call_blocking(Arguments::Text(r#"{"a": 1, "b": 2}"#), Context::new())
            .unwrap_err();
        assert_eq!(error.code(), "unavailable");
        let error = registry
            .call_blocking(
                "add",
                Arguments::Text(r#"{"a": 1, "b": 2}"#),
                Context::new(),
            )
            .unwrap_err();
        assert_eq!(error.code(), "unavailable");
    });
    assert_eq!(ADDS.load(Ordering::SeqCst), 0, "the tool ran");
    // Awaited, it answers.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let output = runtime
        .block_on(registry.call(
            "add",
            Arguments::Text(r#"{"a": 1, "b": 2}"#),
            Context::new(),
        ))
        .unwrap();
    assert_eq!(output.as_text(), "3");
    assert_eq!(ADDS.load(Ordering::SeqCst), 1);
}
