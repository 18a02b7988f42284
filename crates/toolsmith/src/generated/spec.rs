//! A tool known at compile time, a toolset method as a tool, and the call into the argument
//! path.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use toolsmith_types::{Arguments, Limits, Policy, TypeGraph};

use crate::{Context, Tool, ToolAnnotations, ToolError, ToolFuture};

/// Everything known about one tool at compile time, and how to invoke it on an `S`.
pub struct ToolSpec<S: 'static> {
    /// The tool's name.
    pub name: &'static str,
    /// The tool's description.
    pub description: &'static str,
    /// The parameters type, built once.
    pub parameters: fn() -> &'static TypeGraph,
    /// The structured output type, built once, where the return type describes one.
    pub output: fn() -> Option<&'static TypeGraph>,
    /// The behaviour hints.
    pub annotations: ToolAnnotations,
    /// The argument limits the tool states, read from its instance; `None`: the caller's.
    pub limits: Option<fn(&S) -> Limits>,
    /// Whether the function is sync (it runs when called, and may block).
    pub blocking: bool,
    /// Whether an agent asks a person before running it (`#[tool(needs_approval)]`).
    pub needs_approval: bool,
    /// Coerces the arguments and runs the tool on its instance.
    pub invoke: for<'a> fn(&'a S, Arguments<'a>, Context) -> ToolFuture<'a>,
}

impl<S> ToolSpec<S> {
    /// The argument limits the tool states on `this` instance.
    #[inline]
    pub fn limits(&self, this: &S) -> Option<Limits> {
        self.limits.map(|limits| limits(this))
    }

    /// Runs the tool under its stated limits. (Whether the call may start is its caller's to
    /// say: the registry's stack and [`ToolExt::call_blocking`](crate::ToolExt::call_blocking)
    /// refuse one already ended; a panic is the caller's too, caught by the registry's layers.)
    #[inline]
    pub fn call<'a>(
        &self,
        this: &'a S,
        arguments: Arguments<'a>,
        mut context: Context,
    ) -> ToolFuture<'a> {
        context.name_if_unnamed(self.name);
        if let Some(limits) = self.limits {
            context.policy_mut().limits = limits(this);
        }
        (self.invoke)(this, arguments, context)
    }
}

/// The name errors give the tool: the one it was called by, else its own.
#[inline]
pub fn called_name<'a>(context: &'a Context, own: &'a str) -> &'a str {
    context.tool_name().unwrap_or(own)
}

/// One toolset method exposed as a tool: the shared instance and the method's spec.
pub struct MethodTool<S: 'static> {
    instance: Arc<S>,
    spec: &'static ToolSpec<S>,
}

impl<S: Send + Sync + 'static> MethodTool<S> {
    /// The tool for `spec`, running on `instance`.
    pub fn shared(instance: Arc<S>, spec: &'static ToolSpec<S>) -> Arc<dyn Tool> {
        Arc::new(MethodTool { instance, spec })
    }
}

impl<S: Send + Sync + 'static> Tool for MethodTool<S> {
    fn name(&self) -> &str {
        self.spec.name
    }
    fn description(&self) -> &str {
        self.spec.description
    }
    fn parameters(&self) -> &TypeGraph {
        (self.spec.parameters)()
    }
    fn output(&self) -> Option<&TypeGraph> {
        (self.spec.output)()
    }
    fn annotations(&self) -> ToolAnnotations {
        self.spec.annotations
    }
    fn limits(&self) -> Option<Limits> {
        self.spec.limits(&self.instance)
    }
    fn is_blocking(&self) -> bool {
        self.spec.blocking
    }
    fn needs_approval(&self) -> bool {
        self.spec.needs_approval
    }
    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        self.spec.call(&self.instance, arguments, context)
    }
}

/// Reads, coerces and deserializes a tool's arguments into its hidden arguments struct, by
/// [`toolsmith_types::typed_arguments`] (`plain`: see there), the errors named after `tool`.
#[inline]
pub fn arguments<A: DeserializeOwned>(
    tool: &str,
    parameters: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
    plain: bool,
) -> Result<(A, Vec<toolsmith_types::Repair>), ToolError> {
    match toolsmith_types::typed_arguments::<A>(parameters, arguments, policy, plain) {
        Ok(read) => Ok((read.value, read.repairs)),
        Err(errors) => Err(invalid_arguments(tool, errors)),
    }
}

/// The error of arguments that could not be read.
#[cold]
fn invalid_arguments(tool: &str, errors: toolsmith_types::CoerceErrors) -> ToolError {
    ToolError::InvalidArguments {
        tool: tool.to_owned(),
        errors,
    }
}
