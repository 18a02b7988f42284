//! [`Toolset`]: a type whose methods are tools that share one instance.

use std::sync::Arc;

use crate::Tool;

/// A type whose `#[tool]` methods are tools, all sharing one instance of it.
///
/// `#[toolset]` on an `impl` block writes this impl. The tools hold the instance in an [`Arc`], so
/// state the instance keeps (a connection, a base URL, a counter behind a lock) is shared by the
/// tools made together and by nothing else.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use toolsmith::{Arguments, Context, ToolExt, Toolset};
///
/// #[derive(Default)]
/// struct CounterToolset {
///     count: AtomicU32,
/// }
///
/// #[toolsmith::toolset]
/// impl CounterToolset {
///     /// Adds one and returns the new count.
///     #[tool]
///     fn increment(&self) -> u32 {
///         self.count.fetch_add(1, Ordering::SeqCst) + 1
///     }
///
///     /// Returns the count.
///     #[tool]
///     fn get(&self) -> u32 {
///         self.count.load(Ordering::SeqCst)
///     }
/// }
///
/// let tools = CounterToolset::to_tools();
/// assert_eq!(tools[0].name(), "counter_increment");
/// tools[0].call_blocking(Arguments::Text("{}"), Context::new())?;
/// // The tools made together share one instance...
/// assert_eq!(tools[1].call_blocking(Arguments::Text("{}"), Context::new())?.as_text(), "1");
/// // ...and a second `to_tools` starts from a fresh one.
/// let fresh = CounterToolset::to_tools();
/// assert_eq!(fresh[1].call_blocking(Arguments::Text("{}"), Context::new())?.as_text(), "0");
/// # Ok::<(), toolsmith::ToolError>(())
/// ```
pub trait Toolset: Sized + Send + Sync + 'static {
    /// The toolset's name, the default prefix of its tool names.
    const NAME: &'static str;

    /// One tool per exposed method, in declaration order, all sharing `instance`.
    fn tools(instance: Arc<Self>) -> Vec<Arc<dyn Tool>>;

    /// The tools of this instance (built by hand, say with a base URL), sharing it.
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        Self::tools(Arc::new(self))
    }

    /// The tools of one new instance, made with `Default`; each call makes a fresh instance.
    fn to_tools() -> Vec<Arc<dyn Tool>>
    where
        Self: Default,
    {
        Self::default().into_tools()
    }
}
