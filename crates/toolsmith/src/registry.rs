//! The registry: tools by name, from the toolsets linked into the program ([`registry`]) or
//! added by hand ([`Registry`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use toolsmith_types::{Arguments, Policy};

use crate::{Tool, ToolError, ToolOutput, Toolset};

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

/// One tool in a [`Registry`], with where it came from.
#[derive(Clone)]
pub struct RegisteredTool {
    tool: Arc<dyn Tool>,
    toolset: Option<String>,
    source: String,
}

impl RegisteredTool {
    /// The tool.
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.tool
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
        }
    }
}

impl std::error::Error for RegistryError {}

/// Tools by name, in a stable order: the order they were added.
///
/// ```
/// use toolsmith::{Arguments, Policy, Registry};
///
/// /// Says hello.
/// #[toolsmith::tool]
/// fn greet(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// let mut registry = Registry::new();
/// registry.add(std::sync::Arc::new(Greet))?;
/// let output = registry.call("greet", Arguments::Text(r#"{"name": "Ada"}"#), &Policy::default())?;
/// assert_eq!(output.text, "Hello, Ada!");
/// // A second tool of the same name is refused, naming both sources.
/// assert!(registry.add(std::sync::Arc::new(Greet)).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Registry {
    tools: Vec<RegisteredTool>,
    /// Names hashed with foldhash: the lookup is on every call's path, and names are the
    /// program's own (no hostile keys to flood a table).
    by_name: HashMap<String, usize, foldhash::fast::RandomState>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
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
            self.tools.push(RegisteredTool {
                tool,
                toolset: toolset.map(str::to_owned),
                source: source.to_owned(),
            });
        }
        Ok(self)
    }

    /// The tool named `name`.
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

    /// Calls the tool named `name`.
    ///
    /// # Errors
    /// [`ToolError::NotFound`] (with the nearest name) when there is no such tool, else what the
    /// tool's call returns; a panic in a tool implemented by hand is caught here too.
    pub fn call(
        &self,
        name: &str,
        arguments: Arguments<'_>,
        policy: &Policy,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self.find(name)?.tool();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tool.call(arguments, policy)
        }))
        .unwrap_or_else(|payload| {
            Err(ToolError::Panicked {
                tool: name.to_owned(),
                message: crate::private::panic_message(payload.as_ref()),
            })
        })
    }

    /// Every tool, in the registry's order.
    pub fn iter(&self) -> std::slice::Iter<'_, RegisteredTool> {
        self.tools.iter()
    }

    /// Every tool's name, in the registry's order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.tool.name())
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
