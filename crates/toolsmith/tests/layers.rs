//! Layers through the public interface, each alone and stacked: `CatchPanic` (the panic caught
//! once), `Trace` (its span's fields, read by a capturing subscriber), `Timeout`,
//! `ConcurrencyLimit`, `Stats` (after a messy call) and layers written by a user.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::json;
use toolsmith::{
    Arguments, Call, CancellationToken, CatchPanic, ConcurrencyLimit, Context, Layer, Next,
    Registry, Stats, Timeout, ToolError, ToolFuture, Trace,
};
use tracing_subscriber::layer::SubscriberExt as _;

const PATIENCE: Duration = Duration::from_secs(20);

/// Adds two integers.
#[toolsmith::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Adds two integers, later.
#[toolsmith::tool]
async fn add_later(a: i64, b: i64) -> i64 {
    tokio::task::yield_now().await;
    a + b
}

/// Panics with the message it is given.
#[toolsmith::tool]
fn explode(message: String) -> String {
    panic!("{message}")
}

/// Panics with the message it is given, once polled.
#[toolsmith::tool]
async fn explode_later(message: String) -> String {
    tokio::task::yield_now().await;
    panic!("{message}")
}

/// Waits for its call to be cancelled.
#[toolsmith::tool]
async fn forever(ctx: &Context) -> String {
    ctx.cancelled().await;
    "cancelled".into()
}

/// A registry of every test tool under `layers`.
fn registry(layers: Vec<Arc<dyn Layer>>) -> Registry {
    let mut registry = Registry::new().with_layers(layers);
    for tool in [
        Arc::new(Add) as Arc<dyn toolsmith::Tool>,
        Arc::new(AddLater),
        Arc::new(Explode),
        Arc::new(ExplodeLater),
        Arc::new(Forever),
    ] {
        registry.add(tool).unwrap();
    }
    registry
}

fn call(registry: &Registry, name: &str, args: &str) -> Result<String, ToolError> {
    registry
        .call_blocking(name, Arguments::Text(args), Context::new())
        .map(|o| o.as_text().into_owned())
}

/// A layer that writes what passes through it, in and out, into a shared journal.
struct Journal {
    name: &'static str,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Layer for Journal {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        let tool = call.name().to_owned();
        self.lines
            .lock()
            .unwrap()
            .push(format!("{} > {tool}", self.name));
        let future = next.run(call);
        ToolFuture::new(async move {
            let result = future.await;
            let outcome = match &result {
                Ok(output) => format!("ok {}", output.as_text()),
                Err(error) => error.code().to_owned(),
            };
            self.lines
                .lock()
                .unwrap()
                .push(format!("{} < {tool} {outcome}", self.name));
            result
        })
    }
}

fn journal(name: &'static str, lines: &Arc<Mutex<Vec<String>>>) -> Arc<dyn Layer> {
    Arc::new(Journal {
        name,
        lines: Arc::clone(lines),
    })
}

// ---- CatchPanic, and the panic caught once. ----

/// Counts the panics whose message starts with `counted:`, per message; every other panic
/// goes to the hook that was there before. The hook is the process's: tests running at once
/// each count their own message.
fn panics(message: &str) -> usize {
    static COUNTS: OnceLock<Mutex<BTreeMap<String, usize>>> = OnceLock::new();
    let counts = COUNTS.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| {
                    info.payload()
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                })
                .unwrap_or_default();
            if text.starts_with("counted:") {
                if let Some(counts) = COUNTS.get() {
                    *counts.lock().unwrap().entry(text).or_default() += 1;
                }
            } else {
                previous(info);
            }
        }));
        Mutex::new(BTreeMap::new())
    });
    counts.lock().unwrap().get(message).copied().unwrap_or(0)
}

#[test]
fn catch_panic_alone_turns_a_sync_or_async_tools_panic_into_an_error() {
    panics("");
    let registry = registry(vec![Arc::new(CatchPanic)]);
    for tool in ["explode", "explode_later"] {
        let message = format!("counted: {tool} alone");
        let args = json!({ "message": message }).to_string();
        assert_eq!(
            call(&registry, tool, &args),
            Err(ToolError::Panicked {
                tool: tool.into(),
                message: message.clone()
            })
        );
        assert_eq!(panics(&message), 1, "{tool} panicked more than once");
    }
    // The registry goes on answering.
    assert_eq!(
        call(&registry, "add", r#"{"a": 1, "b": 2}"#),
        Ok("3".into())
    );
}

#[test]
fn without_catch_panic_the_panic_reaches_the_caller_so_nothing_else_catches_it() {
    panics("");
    let registry = registry(Vec::new());
    for tool in ["explode", "explode_later"] {
        let message = format!("counted: {tool} uncaught");
        let args = json!({ "message": message }).to_string();
        let unwound = catch_unwind(AssertUnwindSafe(|| call(&registry, tool, &args)));
        let payload = unwound.expect_err("the panic was caught below the layers");
        assert_eq!(payload.downcast_ref::<String>(), Some(&message));
        assert_eq!(panics(&message), 1);
    }
}

#[test]
fn under_the_default_layers_a_panic_is_caught_once_and_seen_once_from_outside() {
    panics("");
    let lines = Arc::new(Mutex::new(Vec::new()));
    // A layer outside the default stack and one inside it.
    let mut layers = vec![journal("outer", &lines)];
    layers.extend(toolsmith::default_layers());
    layers.push(journal("inner", &lines));
    let registry = registry(layers);
    for tool in ["explode", "explode_later"] {
        lines.lock().unwrap().clear();
        let message = format!("counted: {tool} under the defaults");
        let args = json!({ "message": message }).to_string();
        let error = call(&registry, tool, &args).unwrap_err();
        assert_eq!(error.code(), "panicked");
        assert_eq!(panics(&message), 1);
        // The outer layer saw one answer, the panic as an error; the inner one saw the call go
        // in and never come out (the panic unwound through it to CatchPanic).
        assert_eq!(
            *lines.lock().unwrap(),
            [
                format!("outer > {tool}"),
                format!("inner > {tool}"),
                format!("outer < {tool} panicked"),
            ]
        );
    }
}

#[test]
fn two_catch_panic_layers_catch_a_panic_once() {
    panics("");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let registry = registry(vec![
        journal("outer", &lines),
        Arc::new(CatchPanic),
        journal("between", &lines),
        Arc::new(CatchPanic),
    ]);
    for tool in ["explode", "explode_later"] {
        lines.lock().unwrap().clear();
        let message = format!("counted: {tool} twice guarded");
        let args = json!({ "message": message }).to_string();
        assert_eq!(call(&registry, tool, &args).unwrap_err().code(), "panicked");
        assert_eq!(panics(&message), 1);
        // The inner CatchPanic caught it: the layer between the two saw an answer.
        assert_eq!(
            *lines.lock().unwrap(),
            [
                format!("outer > {tool}"),
                format!("between > {tool}"),
                format!("between < {tool} panicked"),
                format!("outer < {tool} panicked"),
            ]
        );
    }
}

#[test]
fn a_panic_in_a_layer_inside_catch_panic_is_caught_too() {
    struct Faulty;
    impl Layer for Faulty {
        fn call<'a>(&'a self, _: Call<'a>, _: Next<'a>) -> ToolFuture<'a> {
            panic!("counted: the layer itself")
        }
    }
    panics("");
    let registry = registry(vec![Arc::new(CatchPanic), Arc::new(Faulty)]);
    assert_eq!(
        call(&registry, "add", r#"{"a": 1, "b": 2}"#),
        Err(ToolError::Panicked {
            tool: "add".into(),
            message: "counted: the layer itself".into()
        })
    );
    assert_eq!(panics("counted: the layer itself"), 1);
}

// ---- Trace, read by a capturing subscriber. ----

/// A span's name and fields.
type Span = (String, BTreeMap<String, String>);

/// Every span's fields, as recorded (values as their `Debug` text, strings bare).
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Span>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S> tracing_subscriber::Layer<S> for Spans
where
    S: tracing::Subscriber + for<'l> tracing_subscriber::registry::LookupSpan<'l>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = BTreeMap::new();
        fields.insert("#id".to_owned(), id.into_u64().to_string());
        attrs.record(&mut Fields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), fields));
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut spans = self.0.lock().unwrap();
        let id = id.into_u64().to_string();
        if let Some((_, fields)) = spans.iter_mut().rev().find(|(_, f)| f["#id"] == id) {
            values.record(&mut Fields(fields));
        }
    }
}

/// The spans `body` made, each its name and fields (without the span id).
fn traced(body: impl FnOnce()) -> Vec<Span> {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    tracing::subscriber::with_default(subscriber, body);
    let mut spans = spans.0.lock().unwrap().clone();
    for (_, fields) in &mut spans {
        fields.remove("#id");
    }
    spans
}

fn fields(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn trace_alone_opens_one_execute_tool_span_with_the_genai_fields() {
    let registry = registry(vec![Arc::new(Trace)]);
    let spans = traced(|| {
        registry
            .call_blocking(
                "add",
                Arguments::Text(r#"{"a": "1", "b": 2}"#),
                Context::new().with_call_id("call_42"),
            )
            .unwrap();
    });
    assert_eq!(
        spans,
        [(
            "execute_tool".to_owned(),
            fields(&[
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", "add"),
                ("gen_ai.tool.call.id", "call_42"),
                ("otel.name", "execute_tool add"),
                ("toolsmith.repairs", "int_from_string"),
            ])
        )]
    );
}

#[test]
fn trace_records_the_error_code_and_every_repair_of_async_calls_too() {
    let registry = registry(toolsmith::default_layers());
    let spans = traced(|| {
        let _ = call(&registry, "add_later", r#"{"a": "1", "b": "2"}"#);
        let _ = call(&registry, "add_later", r#"{"a": "x"}"#);
        let _ = call(&registry, "nope", "{}");
    });
    // Two spans: a tool that does not exist is not executed.
    assert_eq!(spans.len(), 2, "{spans:?}");
    assert_eq!(
        spans[0].1["toolsmith.repairs"],
        "int_from_string,int_from_string"
    );
    assert!(!spans[0].1.contains_key("error.type"));
    assert_eq!(spans[1].1["error.type"], "invalid_arguments");
    assert_eq!(spans[1].1["gen_ai.tool.name"], "add_later");
    assert!(!spans[1].1.contains_key("gen_ai.tool.call.id"));
}

#[test]
fn trace_outside_catch_panic_records_a_panic_as_its_error_type() {
    panics("");
    let registry = registry(toolsmith::default_layers()).renamed("explode_later", "kaboom");
    let registry = registry.unwrap();
    let spans = traced(|| {
        let _ = call(&registry, "kaboom", r#"{"message": "counted: traced"}"#);
    });
    assert_eq!(spans.len(), 1);
    assert_eq!(spans[0].1["gen_ai.tool.name"], "kaboom");
    assert_eq!(spans[0].1["error.type"], "panicked");
}

#[test]
fn events_a_tool_logs_without_a_reporter_belong_to_its_span() {
    /// Logs a line.
    #[toolsmith::tool]
    fn chatty(ctx: &Context) -> String {
        ctx.log(toolsmith::LogLevel::Warning, "careful");
        String::new()
    }
    /// Each event: the span it belongs to, its level and message.
    type Event = (Option<String>, String);
    #[derive(Clone, Default)]
    struct Events(Arc<Mutex<Vec<Event>>>);
    impl<S> tracing_subscriber::Layer<S> for Events
    where
        S: tracing::Subscriber + for<'l> tracing_subscriber::registry::LookupSpan<'l>,
    {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            ctx: tracing_subscriber::layer::Context<'_, S>,
        ) {
            let span = ctx.event_span(event).map(|s| s.name().to_owned());
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            let line = format!("{} {}", event.metadata().level(), fields["message"]);
            self.0.lock().unwrap().push((span, line));
        }
    }
    let mut registry = Registry::new();
    registry.add(Arc::new(Chatty)).unwrap();
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    tracing::subscriber::with_default(subscriber, || {
        registry
            .call_blocking("chatty", Arguments::Text("{}"), Context::new())
            .unwrap();
    });
    assert_eq!(
        *events.0.lock().unwrap(),
        [(Some("execute_tool".to_owned()), "WARN careful".to_owned())]
    );
}

// ---- Timeout. ----

#[test]
fn timeout_alone_ends_a_call_past_its_time_and_lets_a_quick_one_answer() {
    let registry = registry(vec![Arc::new(Timeout::new(Duration::from_millis(30)))]);
    assert_eq!(
        call(&registry, "forever", "{}"),
        Err(ToolError::TimedOut {
            tool: "forever".into(),
            after: Some(Duration::from_millis(30))
        })
    );
    assert_eq!(
        call(&registry, "add_later", r#"{"a": 1, "b": 2}"#),
        Ok("3".into())
    );
    assert_eq!(
        call(&registry, "add", r#"{"a": 1, "b": 2}"#),
        Ok("3".into())
    );
}

#[test]
fn a_timeout_message_says_the_time_given_in_units_that_read() {
    let message = |after: Duration| {
        ToolError::TimedOut {
            tool: "t".into(),
            after: Some(after),
        }
        .to_model_message()
    };
    assert!(message(Duration::from_secs(60)).starts_with("Tool `t` did not answer within 60.0 s"));
    assert!(message(Duration::from_millis(2500)).contains("within 2.5 s"));
    assert!(
        message(Duration::from_millis(30)).contains("within 30 ms"),
        "{}",
        message(Duration::from_millis(30))
    );
}

// ---- ConcurrencyLimit. ----

/// Counts calls in flight, and the most there were at once.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// Stays in flight for a few turns of the executor.
#[toolsmith::tool]
async fn crowded(ctx: &Context) -> Result<String, ToolError> {
    let flight = ctx.get::<Arc<InFlight>>()?;
    let now = flight.now.fetch_add(1, Ordering::SeqCst) + 1;
    flight.most.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(5)).await;
    flight.now.fetch_sub(1, Ordering::SeqCst);
    Ok("done".into())
}

fn limited(limit: &ConcurrencyLimit) -> Arc<Registry> {
    let mut registry = Registry::new().with_layer(limit.clone());
    registry.add(Arc::new(Crowded)).unwrap();
    registry.add(Arc::new(Forever)).unwrap();
    Arc::new(registry)
}

#[test]
fn concurrency_limit_alone_keeps_at_most_so_many_calls_in_flight() {
    let limit = ConcurrencyLimit::new(2);
    let registry = limited(&limit);
    let flight = Arc::new(InFlight::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answers = runtime.block_on(async {
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let registry = Arc::clone(&registry);
                let ctx = Context::new().with_data(Arc::clone(&flight));
                tokio::spawn(async move {
                    registry
                        .call("crowded", Arguments::Text("{}"), ctx)
                        .await
                        .map(|o| o.as_text().into_owned())
                })
            })
            .collect();
        let mut answers = Vec::new();
        for call in calls {
            answers.push(call.await.unwrap());
        }
        answers
    });
    assert!(
        answers.iter().all(|a| a.as_deref() == Ok("done")),
        "{answers:?}"
    );
    assert_eq!(flight.most.load(Ordering::SeqCst), 2);
    assert_eq!(limit.available(), 2, "a place was not given back");
}

#[test]
fn a_call_cancelled_while_it_waits_for_a_place_answers_cancelled_and_leaves_the_queue() {
    let limit = ConcurrencyLimit::new(1);
    let registry = limited(&limit);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let holder = CancellationToken::new();
    let waiter = CancellationToken::new();
    let (held, waited) = runtime.block_on(async {
        // The first call takes the only place until it is cancelled.
        let first = tokio::spawn({
            let registry = Arc::clone(&registry);
            let ctx = Context::new().with_cancellation(holder.clone());
            async move {
                registry
                    .call("forever", Arguments::Text("{}"), ctx)
                    .await
                    .map(|o| o.as_text().into_owned())
            }
        });
        tokio::task::yield_now().await;
        assert_eq!(limit.available(), 0);
        let second = tokio::spawn({
            let registry = Arc::clone(&registry);
            let ctx = Context::new().with_cancellation(waiter.clone());
            async move { registry.call("forever", Arguments::Text("{}"), ctx).await }
        });
        tokio::task::yield_now().await;
        waiter.cancel();
        let waited = tokio::time::timeout(PATIENCE, second)
            .await
            .unwrap()
            .unwrap();
        holder.cancel();
        let held = tokio::time::timeout(PATIENCE, first)
            .await
            .unwrap()
            .unwrap();
        (held, waited)
    });
    assert_eq!(
        waited,
        Err(ToolError::Cancelled {
            tool: "forever".into()
        })
    );
    assert_eq!(held, Ok("cancelled".into()));
    assert_eq!(limit.available(), 1);
    // The place is free for the next call.
    let flight = Arc::new(InFlight::default());
    assert_eq!(
        registry
            .call_blocking(
                "crowded",
                Arguments::Text("{}"),
                Context::new().with_data(flight)
            )
            .unwrap()
            .as_text(),
        "done"
    );
}

#[test]
fn callers_waiting_for_a_place_are_served_in_the_order_they_came() {
    let limit = ConcurrencyLimit::new(1);
    let lines = Arc::new(Mutex::new(Vec::new()));
    let mut registry =
        Registry::new().with_layers(vec![Arc::new(limit.clone()), journal("in", &lines)]);
    registry.add(Arc::new(AddLater)).unwrap();
    let registry = Arc::new(registry);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let calls: Vec<_> = (1..=4)
            .map(|i| {
                let registry = Arc::clone(&registry);
                tokio::spawn(async move {
                    let args = format!(r#"{{"a": {i}, "b": 0}}"#);
                    registry
                        .call("add_later", Arguments::Text(&args), Context::new())
                        .await
                })
            })
            .collect();
        for call in calls {
            call.await.unwrap().unwrap();
        }
    });
    let answers: Vec<String> = lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.starts_with("in <"))
        .cloned()
        .collect();
    assert_eq!(
        answers,
        [
            "in < add_later ok 1",
            "in < add_later ok 2",
            "in < add_later ok 3",
            "in < add_later ok 4"
        ]
    );
}

// ---- Stats. ----

#[test]
fn stats_after_a_messy_call_count_repairs_and_errors_by_code() {
    panics("");
    let stats = Stats::new();
    let registry = registry(vec![
        Arc::new(Trace),
        Arc::new(stats.layer()),
        Arc::new(CatchPanic),
    ]);
    // Two repairs in one call, a call without any, refused arguments with two errors, a panic
    // and a tool that does not exist.
    assert_eq!(
        call(&registry, "add", r#"{"a": "1", "b": 2.0}"#),
        Ok("3".into())
    );
    assert_eq!(
        call(&registry, "add", r#"{"a": 1, "b": 2}"#),
        Ok("3".into())
    );
    assert!(call(&registry, "add", r#"{"a": "one", "c": 2}"#).is_err());
    assert!(
        call(
            &registry,
            "explode_later",
            r#"{"message": "counted: stats"}"#
        )
        .is_err()
    );
    assert!(call(&registry, "nope", "{}").is_err());
    assert_eq!(
        stats.snapshot(),
        json!({"tools": {
            "add": {
                "calls": 3,
                "succeeded": 2,
                "repaired": 1,
                "repairs": {"int_from_float": 1, "int_from_string": 1},
                "errors": {"invalid_arguments": 1},
                "argument_errors": {"extra_forbidden": 1, "int_parsing": 1, "missing": 1},
            },
            "explode_later": {
                "calls": 1,
                "succeeded": 0,
                "repaired": 0,
                "repairs": {},
                "errors": {"panicked": 1},
                "argument_errors": {},
            },
        }})
    );
}

#[test]
fn stats_inside_catch_panic_do_not_see_a_panic_but_count_everything_else() {
    panics("");
    let stats = Stats::new();
    let registry = registry(vec![Arc::new(CatchPanic), Arc::new(stats.layer())]);
    assert!(call(&registry, "explode", r#"{"message": "counted: inside"}"#).is_err());
    assert_eq!(
        call(&registry, "add_later", r#"{"a": 1, "b": 1}"#),
        Ok("2".into())
    );
    let snapshot = stats.snapshot();
    assert!(snapshot["tools"].get("explode").is_none(), "{snapshot}");
    assert_eq!(snapshot["tools"]["add_later"]["succeeded"], 1);
}

// ---- Layers written by a user, and everything stacked. ----

/// Turns the call id into request data: what a server's layer that authenticates does.
struct Authenticate;

/// Who is asking.
struct Principal(String);

impl Layer for Authenticate {
    fn call<'a>(&'a self, mut call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        let Some(id) = call.context.call_id() else {
            let tool = call.name().to_owned();
            return ToolFuture::ready(Err(ToolError::Unavailable {
                tool,
                reason: "the call is not authenticated".into(),
            }));
        };
        let who = Principal(format!("user of {id}"));
        call.context.insert(who);
        next.run(call)
    }
}

/// Greets the principal.
#[toolsmith::tool]
fn hello(ctx: &Context) -> Result<String, ToolError> {
    Ok(format!("hello, {}", ctx.get::<Principal>()?.0))
}

#[test]
fn a_users_layer_may_add_request_data_or_answer_without_going_on() {
    let mut registry = Registry::new().with_layer(Authenticate);
    registry.add(Arc::new(Hello)).unwrap();
    assert_eq!(
        registry
            .call_blocking(
                "hello",
                Arguments::Text("{}"),
                Context::new().with_call_id("c9")
            )
            .unwrap()
            .as_text(),
        "hello, user of c9"
    );
    assert_eq!(
        registry.call_blocking("hello", Arguments::Text("{}"), Context::new()),
        Err(ToolError::Unavailable {
            tool: "hello".into(),
            reason: "the call is not authenticated".into()
        })
    );
}

#[test]
fn layers_run_outermost_first_and_answer_innermost_first() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let registry = registry(vec![journal("a", &lines)])
        .with_layer(journal("b", &lines))
        .with_layer(journal("c", &lines));
    assert_eq!(registry.layers().len(), 3);
    assert_eq!(
        call(&registry, "add", r#"{"a": 1, "b": 2}"#),
        Ok("3".into())
    );
    assert_eq!(
        *lines.lock().unwrap(),
        [
            "a > add",
            "b > add",
            "c > add",
            "c < add ok 3",
            "b < add ok 3",
            "a < add ok 3"
        ]
    );
}

#[test]
fn every_layer_stacked_handles_a_mix_of_calls() {
    panics("");
    let stats = Stats::new();
    let limit = ConcurrencyLimit::new(4);
    let lines = Arc::new(Mutex::new(Vec::new()));
    let registry = registry(vec![
        Arc::new(Trace),
        Arc::new(stats.layer()),
        Arc::new(CatchPanic),
        Arc::new(Timeout::new(Duration::from_millis(50))),
        Arc::new(limit.clone()),
        journal("user", &lines),
    ]);
    let spans = traced(|| {
        assert_eq!(
            call(&registry, "add", r#"{"a": "2", "b": 40}"#),
            Ok("42".into())
        );
        assert_eq!(
            call(&registry, "add_later", r#"{"a": 2, "b": 40}"#),
            Ok("42".into())
        );
        assert_eq!(
            call(&registry, "forever", "{}").unwrap_err().code(),
            "timed_out"
        );
        assert_eq!(
            call(&registry, "explode", r#"{"message": "counted: stacked"}"#).unwrap_err(),
            ToolError::Panicked {
                tool: "explode".into(),
                message: "counted: stacked".into()
            }
        );
    });
    assert_eq!(panics("counted: stacked"), 1);
    let error_types: Vec<Option<&str>> = spans
        .iter()
        .map(|(_, f)| f.get("error.type").map(String::as_str))
        .collect();
    assert_eq!(
        error_types,
        [None, None, Some("timed_out"), Some("panicked")]
    );
    let snapshot = stats.snapshot();
    assert_eq!(
        snapshot["tools"]["add"]["repairs"],
        json!({"int_from_string": 1})
    );
    assert_eq!(
        snapshot["tools"]["forever"]["errors"],
        json!({"timed_out": 1})
    );
    assert_eq!(
        snapshot["tools"]["explode"]["errors"],
        json!({"panicked": 1})
    );
    // The timed-out call's place and the panicked call's place were both given back.
    assert_eq!(limit.available(), 4);
    assert_eq!(
        *lines.lock().unwrap(),
        [
            "user > add",
            "user < add ok 42",
            "user > add_later",
            "user < add_later ok 42",
            "user > forever",
            "user > explode",
        ]
    );
}
