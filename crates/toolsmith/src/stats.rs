//! [`Stats`]: repairs and errors counted per tool and per code, so a tool's author sees where
//! models struggle with it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::future::{ToolResult, lock};
use crate::{Call, Layer, Next, ToolError, ToolFuture};

/// Counts of calls, repairs and errors, per tool and per code, readable at any time.
///
/// [`layer`](Stats::layer) is the layer that counts; [`snapshot`](Stats::snapshot) reads the
/// counts as JSON. Put the layer outside [`CatchPanic`](crate::CatchPanic) to count panics.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Arguments, CatchPanic, Context, Registry, Stats, Trace};
///
/// /// Waits.
/// #[toolsmith::tool]
/// fn wait(seconds: u32) -> String {
///     format!("waited {seconds}s")
/// }
///
/// let stats = Stats::new();
/// let mut registry = Registry::new().with_layers(vec![
///     Arc::new(Trace),
///     Arc::new(stats.layer()),
///     Arc::new(CatchPanic),
/// ]);
/// registry.add(Arc::new(Wait))?;
/// let _ = registry.call_blocking("wait", Arguments::Text(r#"{"seconds": "3"}"#), Context::new());
/// let _ = registry.call_blocking("wait", Arguments::Text(r#"{"secs": 3}"#), Context::new());
/// let snapshot = stats.snapshot();
/// assert_eq!(snapshot["tools"]["wait"]["calls"], 2);
/// assert_eq!(snapshot["tools"]["wait"]["repairs"]["int_from_string"], 1);
/// assert_eq!(snapshot["tools"]["wait"]["errors"]["invalid_arguments"], 1);
/// assert_eq!(snapshot["tools"]["wait"]["argument_errors"]["extra_forbidden"], 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct Stats {
    tools: Arc<Mutex<IndexMap<String, ToolStats>>>,
}

/// One tool's counts.
#[derive(Debug, Clone, Default)]
struct ToolStats {
    calls: u64,
    succeeded: u64,
    repaired: u64,
    repairs: BTreeMap<&'static str, u64>,
    errors: BTreeMap<&'static str, u64>,
    argument_errors: BTreeMap<&'static str, u64>,
}

impl Stats {
    /// No counts yet.
    pub fn new() -> Self {
        Stats::default()
    }

    /// The layer that counts into these stats.
    pub fn layer(&self) -> StatsLayer {
        StatsLayer {
            stats: self.clone(),
        }
    }

    /// The counts as JSON: `{"tools": {NAME: {"calls", "succeeded", "repaired" (calls with a
    /// repair), "repairs": {CODE: n}, "errors": {CODE: n}, "argument_errors": {CODE: n}}}}`,
    /// tools in the order first called, codes sorted.
    pub fn snapshot(&self) -> Value {
        let tools = lock(&self.tools);
        let tools: serde_json::Map<String, Value> = tools
            .iter()
            .map(|(name, s)| {
                (
                    name.clone(),
                    json!({
                        "calls": s.calls,
                        "succeeded": s.succeeded,
                        "repaired": s.repaired,
                        "repairs": s.repairs,
                        "errors": s.errors,
                        "argument_errors": s.argument_errors,
                    }),
                )
            })
            .collect();
        json!({ "tools": tools })
    }

    fn record(&self, tool: &str, result: &ToolResult) {
        let mut tools = lock(&self.tools);
        if !tools.contains_key(tool) {
            tools.insert(tool.to_owned(), ToolStats::default());
        }
        let Some(stats) = tools.get_mut(tool) else {
            return;
        };
        stats.calls += 1;
        match result {
            Ok(output) => {
                stats.succeeded += 1;
                if !output.repairs.is_empty() {
                    stats.repaired += 1;
                }
                for repair in &output.repairs {
                    *stats.repairs.entry(repair.code.as_str()).or_default() += 1;
                }
            }
            Err(error) => {
                *stats.errors.entry(error.code()).or_default() += 1;
                if let ToolError::InvalidArguments { errors, .. } = error {
                    for e in errors.iter() {
                        *stats.argument_errors.entry(e.code.as_str()).or_default() += 1;
                    }
                }
            }
        }
    }
}

impl std::fmt::Debug for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stats")
            .field("tools", &lock(&self.tools).len())
            .finish()
    }
}

/// The layer of [`Stats::layer`].
#[derive(Debug, Clone)]
pub struct StatsLayer {
    stats: Stats,
}

impl Layer for StatsLayer {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> ToolFuture<'a> {
        let tool = call.tool;
        let name = call.renamed();
        let future = next.run(call);
        if let Some(result) = future.answer() {
            self.stats
                .record(name.as_deref().unwrap_or(tool.name()), result);
            return future;
        }
        ToolFuture::new(async move {
            let result = future.await;
            self.stats
                .record(name.as_deref().unwrap_or(tool.name()), &result);
            result
        })
    }
}
