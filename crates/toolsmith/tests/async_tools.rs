//! `async` tools through the public interface: the same schema, coercion, naming and
//! registration as sync ones; `is_blocking`; the blocking entry point; a `&Context` parameter
//! anywhere in the signature; what an async tool may return.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::task::Poll;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::{
    Arguments, Content, Context, Dialect, Registry, Tool, ToolError, ToolExt, ToolOutput, ToolType,
    Toolset, parameters_schema,
};

/// A future that is pending until another thread says it is done: what a tool awaiting the
/// network looks like to whoever polls it.
fn from_another_thread<T: Send + Unpin + 'static>(value: T) -> impl Future<Output = T> + Send {
    struct Handoff<T> {
        value: Option<T>,
        done: Arc<AtomicBool>,
        started: bool,
    }
    impl<T: Unpin> Future for Handoff<T> {
        type Output = T;
        fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<T> {
            if self.done.load(Ordering::Acquire) {
                return Poll::Ready(self.value.take().expect("polled after it answered"));
            }
            if !self.started {
                self.started = true;
                let done = Arc::clone(&self.done);
                let waker = cx.waker().clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(10));
                    done.store(true, Ordering::Release);
                    waker.wake();
                });
            }
            Poll::Pending
        }
    }
    Handoff {
        value: Some(value),
        done: Arc::new(AtomicBool::new(false)),
        started: false,
    }
}

// ---- One tool written twice, sync and async: everything but the name agrees. ----

/// Units of measure.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolType)]
#[serde(rename_all = "snake_case")]
enum Units {
    Metric,
    Imperial,
}

/// A forecast.
#[derive(Debug, Serialize, Deserialize, ToolType)]
struct Outlook {
    /// The city.
    city: String,
    /// Days ahead.
    days: u8,
    /// The units the figures are in.
    units: Option<Units>,
}

/// Forecasts the weather of a city.
///
/// # Arguments
/// * `city` - The city, in English.
/// * `days` - How many days ahead.
#[toolsmith::tool(read_only)]
fn forecast(city: String, #[param(default = 1)] days: u8, units: Option<Units>) -> Outlook {
    Outlook { city, days, units }
}

/// Forecasts the weather of a city.
///
/// # Arguments
/// * `city` - The city, in English.
/// * `days` - How many days ahead.
#[toolsmith::tool(read_only)]
async fn forecast_async(
    city: String,
    #[param(default = 1)] days: u8,
    units: Option<Units>,
) -> Outlook {
    let city = from_another_thread(city).await;
    Outlook { city, days, units }
}

#[test]
fn an_async_tool_declares_the_same_schema_as_its_sync_twin_in_every_dialect() {
    assert_eq!(ForecastAsync.name(), "forecast_async");
    assert_eq!(ForecastAsync.description(), Forecast.description());
    assert_eq!(ForecastAsync.annotations(), Forecast.annotations());
    for dialect in Dialect::ALL {
        assert_eq!(
            parameters_schema(ForecastAsync.parameters(), dialect),
            parameters_schema(Forecast.parameters(), dialect),
            "{dialect}"
        );
        let output = |tool: &dyn Tool| tool.output().map(|o| toolsmith::emit(o, dialect));
        assert_eq!(output(&ForecastAsync), output(&Forecast), "{dialect}");
    }
    let declared = toolsmith::envelope(&ForecastAsync, Dialect::Mcp).unwrap();
    assert_eq!(declared["name"], "forecast_async");
    assert_eq!(declared["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(
        declared["outputSchema"]["properties"]["days"]["type"],
        "integer"
    );
}

#[test]
fn an_async_tool_coerces_its_arguments_as_its_sync_twin_does() {
    let messy = json!({"city": "Paris", "days": "3", "units": "METRIC"});
    let sync = Forecast
        .call_blocking(Arguments::Json(&messy), Context::new())
        .unwrap();
    let not_sync = ForecastAsync
        .call_blocking(Arguments::Json(&messy), Context::new())
        .unwrap();
    assert_eq!(
        not_sync.structured,
        Some(json!({"city": "Paris", "days": 3, "units": "metric"}))
    );
    assert_eq!(not_sync, sync);
    let codes: Vec<&str> = not_sync.repairs.iter().map(|r| r.code.as_str()).collect();
    assert_eq!(codes, ["int_from_string", "enum_case"]);

    // The default is filled in; text arguments work as JSON ones do.
    let defaulted = ForecastAsync
        .call_blocking(Arguments::Text(r#"{"city": "Oslo"}"#), Context::new())
        .unwrap();
    assert_eq!(
        defaulted.structured,
        Some(json!({"city": "Oslo", "days": 1, "units": null}))
    );
}

#[test]
fn an_async_tool_refuses_bad_arguments_before_it_runs_with_every_error() {
    let bad = json!({"cty": "Paris", "days": 300});
    let error = ForecastAsync
        .call_blocking(Arguments::Json(&bad), Context::new())
        .unwrap_err();
    let sync_error = Forecast
        .call_blocking(Arguments::Json(&bad), Context::new())
        .unwrap_err();
    assert_eq!(error.code(), "invalid_arguments");
    assert_eq!(error.tool(), "forecast_async");
    let ToolError::InvalidArguments { errors, .. } = &error else {
        panic!("{error:?}");
    };
    let codes: Vec<&str> = errors.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(codes.len(), 3, "{codes:?}");
    assert_eq!(
        error.to_model_message(),
        sync_error
            .to_model_message()
            .replace("`forecast`", "`forecast_async`")
    );
    // Refused as the call is made: the future is ready, no executor needed.
    let refused = ForecastAsync
        .call(Arguments::Json(&bad), Context::new())
        .into_ready();
    assert!(matches!(
        refused,
        Ok(Err(ToolError::InvalidArguments { .. }))
    ));
}

#[test]
fn a_sync_tool_is_blocking_and_an_async_one_is_not() {
    assert!(Forecast.is_blocking());
    assert!(!ForecastAsync.is_blocking());
    // A sync tool ran when `call` was made: its future has the answer already.
    let ready = Forecast
        .call(Arguments::Text(r#"{"city": "Rome"}"#), Context::new())
        .into_ready();
    assert!(matches!(ready, Ok(Ok(_))));
    // An async one's waits to be polled.
    let pending = ForecastAsync
        .call(Arguments::Text(r#"{"city": "Rome"}"#), Context::new())
        .into_ready();
    assert!(pending.is_err());
}

#[test]
fn call_blocking_runs_an_async_tool_that_waits_on_another_thread() {
    let output = ForecastAsync
        .call_blocking(Arguments::Text(r#"{"city": "Lima"}"#), Context::new())
        .unwrap();
    assert_eq!(output.structured.unwrap()["city"], "Lima");
    // And through a registry, with its layers.
    let mut registry = Registry::new();
    registry.add(Arc::new(ForecastAsync)).unwrap();
    let output = registry
        .call_blocking(
            "forecast_async",
            Arguments::Text(r#"{"city": "Quito"}"#),
            Context::new(),
        )
        .unwrap();
    assert_eq!(output.structured.unwrap()["city"], "Quito");
}

#[test]
fn an_async_tools_future_is_send_and_may_be_polled_on_another_thread() {
    fn assert_send<T: Send>(_: &T) {}
    let arguments = String::from(r#"{"city": "Kyiv"}"#);
    let future = ForecastAsync.call(Arguments::Text(&arguments), Context::new());
    assert_send(&future);
    // Polled on another thread than the one that made it.
    let output =
        std::thread::scope(|s| s.spawn(move || toolsmith::block_on(future)).join().unwrap())
            .unwrap()
            .unwrap();
    assert_eq!(output.structured.unwrap()["city"], "Kyiv");
}

// ---- A toolset mixing sync and async methods. ----

/// A key-value store shared by its tools.
#[derive(Default)]
struct StoreToolset {
    entries: std::sync::Mutex<Vec<(String, String)>>,
    writes: AtomicU32,
}

#[toolsmith::toolset]
impl StoreToolset {
    /// Stores a value under a key.
    #[tool(idempotent)]
    async fn put(&self, key: String, value: String) -> u32 {
        let value = from_another_thread(value).await;
        self.entries.lock().unwrap().push((key, value));
        self.writes.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Reads the value stored under a key.
    #[tool(read_only)]
    fn get(&self, key: &str) -> Option<String> {
        let entries = self.entries.lock().unwrap();
        entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// Counts the writes, asking for the caller's name.
    #[tool]
    async fn writes(&self, ctx: &Context, #[param(default = false)] verbose: bool) -> String {
        let caller = ctx.try_get::<String>().map_or("someone", String::as_str);
        let writes = self.writes.load(Ordering::SeqCst);
        if verbose {
            format!("{caller} asked: {writes} write(s)")
        } else {
            writes.to_string()
        }
    }
}

#[test]
fn async_and_sync_methods_of_one_toolset_share_its_instance() {
    let tools = StoreToolset::to_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["store_put", "store_get", "store_writes"]);
    let blocking: Vec<bool> = tools.iter().map(|t| t.is_blocking()).collect();
    assert_eq!(blocking, [false, true, false]);

    let call = |i: usize, args: &str, ctx: Context| {
        tools[i]
            .call_blocking(Arguments::Text(args), ctx)
            .map(|o| o.as_text().into_owned())
    };
    assert_eq!(
        call(0, r#"{"key": "a", "value": "1"}"#, Context::new()),
        Ok("1".into())
    );
    // A number where text is expected is a repair, as for a sync method.
    let output = tools[0]
        .call_blocking(
            Arguments::Text(r#"{"key": "a", "value": 2}"#),
            Context::new(),
        )
        .unwrap();
    assert_eq!(output.repairs[0].code.as_str(), "string_from_number");
    assert_eq!(call(1, r#"{"key": "a"}"#, Context::new()), Ok("2".into()));
    assert_eq!(
        call(
            2,
            r#"{"verbose": "true"}"#,
            Context::new().with_data(String::from("ada"))
        ),
        Ok("ada asked: 2 write(s)".into())
    );
    assert_eq!(
        tools[0].annotations().idempotent,
        Some(true),
        "options apply to async methods"
    );
}

#[test]
fn async_tools_are_registered_by_linking_as_sync_ones_are() {
    let registry = toolsmith::registry().unwrap();
    for name in ["forecast", "forecast_async", "store_put", "store_get"] {
        assert!(registry.entry(name).is_some(), "{name} is not registered");
    }
    let put = registry.entry("store_put").unwrap();
    assert_eq!(put.toolset(), Some("store"));
    assert!(!put.tool().is_blocking());
    let output = registry
        .call_blocking(
            "store_put",
            Arguments::Text(r#"{"key": "k", "value": "v"}"#),
            Context::new(),
        )
        .unwrap();
    assert_eq!(output.as_text(), "1");
}

// ---- `&Context` anywhere. ----

/// The context first.
#[toolsmith::tool]
fn context_first(ctx: &Context, word: String) -> String {
    format!("{word} {}", ctx.call_id().unwrap_or("-"))
}

/// The context between two parameters.
#[toolsmith::tool]
async fn context_between(before: u32, ctx: &Context, after: u32) -> String {
    let id = from_another_thread(ctx.call_id().unwrap_or("-").to_owned()).await;
    format!("{before} {id} {after}")
}

/// The context last.
#[toolsmith::tool]
async fn context_last(word: String, ctx: &Context) -> String {
    format!("{word} {}", ctx.tool_name().unwrap_or("-"))
}

/// The context alone.
#[toolsmith::tool]
fn context_alone(ctx: &toolsmith::Context) -> String {
    ctx.call_id().unwrap_or("-").to_owned()
}

#[test]
fn a_context_parameter_is_not_in_the_schema_wherever_it_stands() {
    let properties = |tool: &dyn Tool| -> Vec<String> {
        let schema = parameters_schema(tool.parameters(), Dialect::JsonSchema).unwrap();
        schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(properties(&ContextFirst), ["word"]);
    assert_eq!(properties(&ContextBetween), ["before", "after"]);
    assert_eq!(properties(&ContextLast), ["word"]);
    assert!(properties(&ContextAlone).is_empty());
    // A model that sends a key named like the context parameter is told it is unknown.
    let error = ContextLast
        .call_blocking(
            Arguments::Text(r#"{"word": "x", "ctx": {}}"#),
            Context::new(),
        )
        .unwrap_err();
    assert!(
        error
            .to_model_message()
            .contains("`ctx`: unknown field; valid fields are \"word\""),
        "{error}"
    );
}

#[test]
fn a_context_parameter_gets_the_callers_context_wherever_it_stands() {
    let ctx = || Context::new().with_call_id("call_7");
    let text = |tool: &dyn Tool, args: &str| {
        tool.call_blocking(Arguments::Text(args), ctx())
            .unwrap()
            .as_text()
            .into_owned()
    };
    assert_eq!(text(&ContextFirst, r#"{"word": "hi"}"#), "hi call_7");
    assert_eq!(
        text(&ContextBetween, r#"{"before": 1, "after": "2"}"#),
        "1 call_7 2"
    );
    assert_eq!(text(&ContextAlone, "{}"), "call_7");
    // Through a registry the context names the tool as registered.
    let mut registry = Registry::new();
    registry.add(Arc::new(ContextLast)).unwrap();
    let renamed = registry.renamed("context_last", "echo_name").unwrap();
    let output = renamed
        .call_blocking("echo_name", Arguments::Text(r#"{"word": "I am"}"#), ctx())
        .unwrap();
    assert_eq!(output.as_text(), "I am echo_name");
}

// ---- What an async tool may return. ----

/// Who is asking.
struct Principal(String);

/// Answers the caller by name, or says why it cannot.
#[toolsmith::tool]
async fn whoami(ctx: &Context, shout: bool) -> Result<String, ToolError> {
    let principal = ctx.get::<Principal>()?;
    if shout && principal.0.is_empty() {
        return Err(ToolError::Unavailable {
            tool: String::new(),
            reason: "nobody to shout at".into(),
        });
    }
    let name = from_another_thread(principal.0.clone()).await;
    Ok(if shout { name.to_uppercase() } else { name })
}

#[test]
fn an_async_tool_returns_a_tool_error_as_it_is_named_after_the_tool() {
    let mut registry = Registry::new();
    registry.add(Arc::new(Whoami)).unwrap();
    let call =
        |ctx: Context, args: &str| registry.call_blocking("whoami", Arguments::Text(args), ctx);
    assert_eq!(
        call(
            Context::new().with_data(Principal("ada".into())),
            r#"{"shout": true}"#
        )
        .unwrap()
        .as_text(),
        "ADA"
    );
    assert_eq!(
        call(
            Context::new().with_data(Principal(String::new())),
            r#"{"shout": true}"#
        ),
        Err(ToolError::Unavailable {
            tool: "whoami".into(),
            reason: "nobody to shout at".into()
        })
    );
    let missing = call(Context::new(), r#"{"shout": false}"#).unwrap_err();
    assert_eq!(missing.code(), "missing_data");
    assert_eq!(missing.tool(), "whoami");
}

/// Draws a one-pixel picture with a caption.
#[toolsmith::tool]
async fn pixel(caption: String) -> Vec<Content> {
    vec![
        Content::text(caption),
        Content::image(vec![0x89, b'P', b'N', b'G'], "image/png"),
    ]
}

/// Answers an output built by hand.
#[toolsmith::tool]
async fn handmade() -> ToolOutput {
    let mut output = ToolOutput::structured(json!({"ok": true}));
    output.content.push(Content::text("and a note"));
    output
}

#[test]
fn an_async_tool_may_answer_content_blocks_or_an_output_built_by_hand() {
    let output = Pixel
        .call_blocking(Arguments::Text(r#"{"caption": "red"}"#), Context::new())
        .unwrap();
    let kinds: Vec<&str> = output.content.iter().map(Content::kind).collect();
    assert_eq!(kinds, ["text", "image"]);
    assert_eq!(output.as_text(), "red");
    assert!(Pixel.output().is_none());

    let output = Handmade
        .call_blocking(Arguments::Text("{}"), Context::new())
        .unwrap();
    assert_eq!(output.structured, Some(json!({"ok": true})));
    assert_eq!(output.as_text(), "{\"ok\":true}\nand a note");
}

/// Panics after it has awaited.
#[toolsmith::tool]
async fn explode_later(reason: String) -> String {
    let reason = from_another_thread(reason).await;
    panic!("late boom: {reason}")
}

#[test]
fn a_panic_after_an_await_is_caught_by_the_registry() {
    let mut registry = Registry::new();
    registry.add(Arc::new(ExplodeLater)).unwrap();
    let error = registry
        .call_blocking(
            "explode_later",
            Arguments::Text(r#"{"reason": "x"}"#),
            Context::new(),
        )
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::Panicked {
            tool: "explode_later".into(),
            message: "late boom: x".into()
        }
    );
}

#[test]
fn an_async_tool_with_state_is_its_own_type() {
    /// A greeter with a greeting of its own.
    struct Greeter {
        greeting: String,
    }

    #[toolsmith::tool(register = false)]
    impl Greeter {
        /// Greets someone.
        async fn greet(&self, name: &str) -> String {
            let name = from_another_thread(name.to_owned()).await;
            format!("{}, {name}!", self.greeting)
        }
    }

    let greeter = Greeter {
        greeting: "Hello".into(),
    };
    assert_eq!(greeter.name(), "greeter");
    assert!(!greeter.is_blocking());
    let output = greeter
        .call_blocking(Arguments::Text(r#"{"name": "Ada"}"#), Context::new())
        .unwrap();
    assert_eq!(output.as_text(), "Hello, Ada!");
    let schema = parameters_schema(greeter.parameters(), Dialect::JsonSchema).unwrap();
    assert_eq!(schema["required"], json!(["name"]));
    let _: Value = schema;
}
