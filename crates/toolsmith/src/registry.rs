//! The registry: tools by name, from the toolsets linked into the program ([`registry`]) or
//! added by hand ([`Registry`]); the one call path (lookup once, then the layers, then the
//! tool); and composition (a subset, a prefix, new names).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use toolsmith_types::{Arguments, Dialect, Limits, TypeGraph};

use crate::envelope::Declarations;
use crate::future::block_on_call;
use crate::{
    CatchPanic, Context, EnvelopeError, Layer, Next, Offload, Tool, ToolAnnotations, ToolError,
    ToolFuture, ToolOutput, Toolset, Trace,
};

/// What the macros submit to the link-time collection: one per toolset or single tool not
/// declared `register = false` (the registry constructs each by itself).
#[doc(hidden)]
pub struct Registration {
    kind: RegistrationKind,
    name: &'static str,
    type_name: &'static str,
    build: fn() -> Option<Vec<Arc<dyn Tool>>>,
}

/// Whether a registration is a toolset or a single tool.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistrationKind {
    /// A `#[toolset]` impl block.
    Toolset,
    /// A `#[tool]` function or impl block.
    Tool,
}

impl Registration {
    /// A registration; `build` returns `None` when the type cannot be constructed by itself.
    pub const fn new(
        kind: RegistrationKind,
        name: &'static str,
        type_name: &'static str,
        build: fn() -> Option<Vec<Arc<dyn Tool>>>,
    ) -> Self {
        Registration {
            kind,
            name,
            type_name,
            build,
        }
    }
}

inventory::collect!(Registration);

/// One tool in a [`Registry`], with where it came from and its declarations.
#[derive(Clone)]
pub struct RegisteredTool {
    tool: Arc<dyn Tool>,
    /// The tool's name, shared with every call's context.
    name: Arc<str>,
    toolset: Option<String>,
    source: String,
    declarations: Arc<Declarations>,
}

impl RegisteredTool {
    fn new(tool: Arc<dyn Tool>, toolset: Option<String>, source: String) -> Self {
        RegisteredTool {
            name: Arc::from(tool.name()),
            tool,
            toolset,
            source,
            declarations: Arc::new(Declarations::new()),
        }
    }

    /// The tool.
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.tool
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's declaration in `dialect` ([`envelope`](crate::envelope)'s shape), written the
    /// first time it is asked for and kept: declaring the same tools on every request (an MCP
    /// `tools/list`, an agent's every turn) costs a lookup.
    ///
    /// # Errors
    /// As [`envelope`](crate::envelope); an error is kept too, and given again.
    pub fn declaration(&self, dialect: Dialect) -> Result<Cow<'_, Value>, EnvelopeError> {
        match self.declarations.get(self.tool.as_ref(), dialect) {
            Some(Ok(declared)) => Ok(Cow::Borrowed(declared)),
            Some(Err(error)) => Err(error.clone()),
            None => crate::envelope(self.tool.as_ref(), dialect).map(Cow::Owned),
        }
    }

    /// The toolset the tool belongs to, if it came from one.
    pub fn toolset(&self) -> Option<&str> {
        self.toolset.as_deref()
    }

    /// Where the tool came from, in words: `toolset `db` (my_crate::DatabaseToolset)`.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.tool.name())
            .field("toolset", &self.toolset)
            .field("source", &self.source)
            .finish()
    }
}

/// Why a tool could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two tools share a name; a model could not tell them apart.
    DuplicateName {
        /// The name both tools have.
        name: String,
        /// Where the tool already registered came from.
        first: String,
        /// Where the tool refused came from.
        second: String,
    },
    /// A name or pattern that no tool matches.
    NoMatch {
        /// The name or pattern.
        pattern: String,
        /// The tools there are, comma-separated.
        names: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "two tools are named `{name}`: one from {first}, one from {second}; \
                 rename one with #[tool(name = \"...\")]"
            ),
            RegistryError::NoMatch { pattern, names } => {
                write!(f, "no tool matches `{pattern}`; the tools are: {names}")
            }
        }
    }
}

impl std::error::Error for RegistryError {}

/// Tools by name, in a stable order (the order they were added), and the stack of
/// [`Layer`]s every call through the registry takes.
///
/// A call ([`call`](Registry::call), or [`call_blocking`](Registry::call_blocking) from sync
/// code) finds its tool once, names it in the call's [`Context`], and goes through the layers
/// (outermost first; by default [`Trace`] then [`CatchPanic`]) to the tool, which reads its
/// arguments under the context's policy with the limits it states in place. A blocking tool
/// runs through the registry's [`Offload`], where it has one.
///
/// ```
/// use toolsmith::{Arguments, Context, Registry};
///
/// /// Says hello.
/// #[toolsmith::tool]
/// fn greet(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// let mut registry = Registry::new();
/// registry.add(std::sync::Arc::new(Greet))?;
/// let output = registry.call_blocking("greet", Arguments::Text(r#"{"name": "Ada"}"#), Context::new())?;
/// assert_eq!(output.as_text(), "Hello, Ada!");
/// // A second tool of the same name is refused, naming both sources.
/// assert!(registry.add(std::sync::Arc::new(Greet)).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Registry {
    tools: Vec<RegisteredTool>,
    /// Names hashed with foldhash: the lookup is on every call's path, and names are the
    /// program's own (no hostile keys to flood a table).
    by_name: HashMap<String, usize, foldhash::fast::RandomState>,
    layers: Vec<Arc<dyn Layer>>,
    offload: Option<Arc<dyn Offload>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            tools: Vec::new(),
            by_name: HashMap::default(),
            layers: default_layers(),
            offload: None,
        }
    }
}

/// The stack a registry starts with: [`Trace`], then [`CatchPanic`].
pub fn default_layers() -> Vec<Arc<dyn Layer>> {
    vec![Arc::new(Trace), Arc::new(CatchPanic)]
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools)
            .field("layers", &self.layers.len())
            .field("offload", &self.offload.is_some())
            .finish()
    }
}

impl Registry {
    /// An empty registry, with the default layers ([`default_layers`]).
    pub fn new() -> Self {
        Registry::default()
    }

    /// This registry with `layer` added inside the layers it has (closest to the tool).
    #[must_use]
    pub fn with_layer(mut self, layer: impl Layer + 'static) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// This registry with exactly `layers`, outermost first (none: the tool is called as it
    /// is, a panic included).
    #[must_use]
    pub fn with_layers(mut self, layers: Vec<Arc<dyn Layer>>) -> Self {
        self.layers = layers;
        self
    }

    /// The layers, outermost first.
    pub fn layers(&self) -> &[Arc<dyn Layer>] {
        &self.layers
    }

    /// This registry running blocking tools ([`Tool::is_blocking`]) through `offload`: what a
    /// caller on an async executor sets, so that a sync tool never blocks an executor thread.
    #[must_use]
    pub fn with_offload(mut self, offload: Arc<dyn Offload>) -> Self {
        self.offload = Some(offload);
        self
    }

    /// A registry of every toolset and tool linked into the program (all but those declared
    /// `register = false`), each built by itself (with the constructor named in its attribute,
    /// else `Default`), each toolset from a fresh instance. Ordered by toolset or tool name; a toolset's tools in declaration order.
    ///
    /// # Errors
    /// When two linked tools share a name.
    pub fn linked() -> Result<Registry, RegistryError> {
        let mut registrations: Vec<&Registration> = inventory::iter::<Registration>().collect();
        registrations.sort_by_key(|r| (r.name, r.type_name));
        let mut registry = Registry::new();
        for registration in registrations {
            let Some(tools) = (registration.build)() else {
                continue;
            };
            let (toolset, source) = match registration.kind {
                RegistrationKind::Toolset => (
                    Some(registration.name),
                    format!(
                        "toolset `{}` ({})",
                        registration.name, registration.type_name
                    ),
                ),
                RegistrationKind::Tool => (None, format!("tool ({})", registration.type_name)),
            };
            registry.add_from(toolset, &source, tools)?;
        }
        Ok(registry)
    }

    /// Adds one tool built by hand.
    ///
    /// # Errors
    /// When a tool of the same name is already registered.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> Result<&mut Self, RegistryError> {
        let source = format!("tool `{}` added by hand", tool.name());
        self.add_from(None, &source, vec![tool])
    }

    /// Adds the tools of a toolset instance (built by hand, say with a base URL), sharing it.
    ///
    /// # Errors
    /// When one of its tools has the name of a tool already registered; the tools before it
    /// stay added.
    pub fn add_toolset<T: Toolset>(&mut self, toolset: T) -> Result<&mut Self, RegistryError> {
        let source = format!("toolset `{}` ({})", T::NAME, std::any::type_name::<T>());
        self.add_from(Some(T::NAME), &source, toolset.into_tools())
    }

    /// Adds `tools`, recording them as coming from `toolset` and `source` (words for errors).
    ///
    /// # Errors
    /// As [`add_toolset`](Registry::add_toolset).
    pub fn add_from(
        &mut self,
        toolset: Option<&str>,
        source: &str,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<&mut Self, RegistryError> {
        for tool in tools {
            let name = tool.name().to_owned();
            if let Some(&existing) = self.by_name.get(&name) {
                return Err(RegistryError::DuplicateName {
                    name,
                    first: self.tools[existing].source.clone(),
                    second: source.to_owned(),
                });
            }
            self.by_name.insert(name, self.tools.len());
            self.tools.push(RegisteredTool::new(
                tool,
                toolset.map(str::to_owned),
                source.to_owned(),
            ));
        }
        Ok(self)
    }

    /// The tool named `name` (the tool itself: calling it directly skips the layers).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.entry(name).map(RegisteredTool::tool)
    }

    /// The tool named `name`, with where it came from.
    #[inline]
    pub fn entry(&self, name: &str) -> Option<&RegisteredTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The tool named `name`, or [`ToolError::NotFound`] with the nearest name when there is none.
    ///
    /// # Errors
    /// [`ToolError::NotFound`].
    #[inline]
    pub fn find(&self, name: &str) -> Result<&RegisteredTool, ToolError> {
        self.entry(name).ok_or_else(|| ToolError::NotFound {
            name: name.to_owned(),
            did_you_mean: toolsmith_types::did_you_mean(name, self.names()),
        })
    }

    /// Calls the tool named `name`: found once, then run through the layers.
    ///
    /// # Errors
    /// [`ToolError::NotFound`] (with the nearest name) when there is no such tool, else what the
    /// layers and the tool answer (a panic is [`ToolError::Panicked`] under the default layers).
    pub fn call<'a>(
        &'a self,
        name: &str,
        arguments: Arguments<'a>,
        context: Context,
    ) -> ToolFuture<'a> {
        match self.find(name) {
            Ok(entry) => self.call_entry(entry, arguments, context),
            Err(error) => ToolFuture::ready(Err(error)),
        }
    }

    /// Calls `entry` (a tool of this registry, found with [`find`](Registry::find)) through
    /// the layers.
    pub fn call_entry<'a>(
        &'a self,
        entry: &'a RegisteredTool,
        arguments: Arguments<'a>,
        context: Context,
    ) -> ToolFuture<'a> {
        Next::new(&self.layers, self.offload.as_ref()).run(crate::Call {
            tool: &entry.tool,
            arguments,
            context,
        })
    }

    /// [`call`](Registry::call), run to its end on this thread ([`block_on`](crate::block_on)):
    /// the blocking entry point for sync code (a CLI, tests, scripts), async tools included.
    ///
    /// # Errors
    /// As [`call`](Registry::call); [`ToolError::Unavailable`] when called from inside a tokio
    /// runtime (with the crate's `tokio` feature), where blocking could deadlock, before any of
    /// the call runs (a sync tool's body included): await [`call`](Registry::call) there.
    pub fn call_blocking(
        &self,
        name: &str,
        arguments: Arguments<'_>,
        context: Context,
    ) -> Result<ToolOutput, ToolError> {
        block_on_call(|| self.call(name, arguments, context)).unwrap_or_else(|inside| {
            Err(ToolError::Unavailable {
                tool: name.to_owned(),
                reason: inside.to_string(),
            })
        })
    }

    /// The registry of the tools `keep` says yes to (same layers, same offload, same order).
    #[must_use]
    pub fn filter(&self, mut keep: impl FnMut(&RegisteredTool) -> bool) -> Registry {
        let mut kept = self.emptied();
        for entry in self.tools.iter().filter(|e| keep(e)) {
            kept.by_name
                .insert(entry.name.to_string(), kept.tools.len());
            kept.tools.push(entry.clone());
        }
        kept
    }

    /// The registry of the tools whose name matches one of `patterns`: a name, or a pattern
    /// where `*` stands for any run of characters (`text_*`).
    ///
    /// ```
    /// let all = toolsmith::Registry::new();
    /// let error = all.select(&["text_*"]).unwrap_err();
    /// assert_eq!(error.to_string(), "no tool matches `text_*`; the tools are: (none)");
    /// ```
    ///
    /// # Errors
    /// [`RegistryError::NoMatch`] for a pattern no tool matches (a typo would otherwise serve
    /// nothing, silently).
    pub fn select<S: AsRef<str>>(&self, patterns: &[S]) -> Result<Registry, RegistryError> {
        for pattern in patterns {
            let pattern = pattern.as_ref();
            if !self.names().any(|name| glob_match(pattern, name)) {
                let names: Vec<&str> = self.names().collect();
                return Err(RegistryError::NoMatch {
                    pattern: pattern.to_owned(),
                    names: if names.is_empty() {
                        "(none)".to_owned()
                    } else {
                        names.join(", ")
                    },
                });
            }
        }
        Ok(self.filter(|entry| {
            patterns
                .iter()
                .any(|p| glob_match(p.as_ref(), entry.name()))
        }))
    }

    /// The same tools, each named `{prefix}_{name}`: what the model sees, sends, and reads in
    /// errors.
    ///
    /// # Errors
    /// When two new names clash (they cannot, unless the prefix makes one name another's).
    pub fn prefixed(&self, prefix: &str) -> Result<Registry, RegistryError> {
        self.renamed_by(|name| Some(format!("{prefix}_{name}")))
    }

    /// The same tools, `from` named `to`.
    ///
    /// ```
    /// use toolsmith::{Arguments, Context, Registry};
    ///
    /// /// Waits.
    /// #[toolsmith::tool]
    /// fn wait(seconds: u32) -> String {
    ///     format!("waited {seconds}s")
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry.add(std::sync::Arc::new(Wait))?;
    /// let renamed = registry.renamed("wait", "pause")?;
    /// let error = renamed.call_blocking("pause", Arguments::Text("{}"), Context::new()).unwrap_err();
    /// assert!(error.to_string().starts_with("Invalid arguments for tool `pause`"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RegistryError::NoMatch`] when no tool is named `from`; [`RegistryError::DuplicateName`]
    /// when another tool is named `to`.
    pub fn renamed(&self, from: &str, to: &str) -> Result<Registry, RegistryError> {
        if self.entry(from).is_none() {
            return Err(RegistryError::NoMatch {
                pattern: from.to_owned(),
                names: self.names().collect::<Vec<_>>().join(", "),
            });
        }
        self.renamed_by(|name| (name == from).then(|| to.to_owned()))
    }

    /// The same tools, renamed where `rename` gives a new name.
    fn renamed_by(
        &self,
        mut rename: impl FnMut(&str) -> Option<String>,
    ) -> Result<Registry, RegistryError> {
        let mut renamed = self.emptied();
        for entry in &self.tools {
            let tool = match rename(entry.name()) {
                Some(name) => Arc::new(Renamed {
                    inner: Arc::clone(&entry.tool),
                    name: Arc::from(name),
                }) as Arc<dyn Tool>,
                None => Arc::clone(&entry.tool),
            };
            renamed.add_from(entry.toolset.as_deref(), &entry.source, vec![tool])?;
        }
        Ok(renamed)
    }

    /// A registry without tools, with this one's layers and offload.
    fn emptied(&self) -> Registry {
        Registry {
            tools: Vec::new(),
            by_name: HashMap::default(),
            layers: self.layers.clone(),
            offload: self.offload.clone(),
        }
    }

    /// Every tool, in the registry's order.
    pub fn iter(&self) -> std::slice::Iter<'_, RegisteredTool> {
        self.tools.iter()
    }

    /// Every tool's name, in the registry's order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(RegisteredTool::name)
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl<'a> IntoIterator for &'a Registry {
    type Item = &'a RegisteredTool;
    type IntoIter = std::slice::Iter<'a, RegisteredTool>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The tools of every toolset linked into the program ([`Registry::linked`]), built once.
///
/// A crate's toolsets are linked when the program uses the crate; a crate used for nothing but
/// its tools is named with [`link!`](crate::link) so that the linker keeps it.
///
/// # Errors
/// When two linked tools share a name (the same error on every call).
pub fn registry() -> Result<&'static Registry, RegistryError> {
    static GLOBAL: OnceLock<Result<Registry, RegistryError>> = OnceLock::new();
    GLOBAL
        .get_or_init(Registry::linked)
        .as_ref()
        .map_err(Clone::clone)
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn glob_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A tool under another name: everything else is the tool's own.
struct Renamed {
    inner: Arc<dyn Tool>,
    name: Arc<str>,
}

impl Tool for Renamed {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn parameters(&self) -> &TypeGraph {
        self.inner.parameters()
    }
    fn output(&self) -> Option<&TypeGraph> {
        self.inner.output()
    }
    fn annotations(&self) -> ToolAnnotations {
        self.inner.annotations()
    }
    fn limits(&self) -> Option<Limits> {
        self.inner.limits()
    }
    fn is_blocking(&self) -> bool {
        self.inner.is_blocking()
    }
    fn needs_approval(&self) -> bool {
        self.inner.needs_approval()
    }
    fn call<'a>(&'a self, arguments: Arguments<'a>, mut context: Context) -> ToolFuture<'a> {
        if context.tool_name().is_none() {
            context = context.with_tool_name(Arc::clone(&self.name));
        }
        self.inner.call(arguments, context)
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_match_as_written() {
        assert!(glob_match("text_*", "text_grep"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "abc"));
        assert!(glob_match("a*b*c", "a_b_b_c"));
        assert!(!glob_match("a*b*c", "a_c"));
        assert!(!glob_match("text_*", "github_text"));
        assert!(glob_match("github_get_issue", "github_get_issue"));
        assert!(!glob_match("github_get", "github_get_issue"));
        assert!(!glob_match("ab*ba", "aba"));
    }
}
