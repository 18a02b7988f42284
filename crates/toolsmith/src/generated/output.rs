//! How a tool function's return value becomes its output, decided at the macro's call site.

use std::borrow::Cow;
use std::fmt::Display;
use std::marker::PhantomData;

use serde::Serialize;
use toolsmith_types::{Describe, TypeGraph};

use crate::{ToolError, ToolOutput};

// ---- Return values: which rendering a return type gets, decided at the macro's call site. ----
//
// Autoref specialization: generated code calls `(&&&&&Probe::<R>::new()).kind()` with every
// `Via*` trait in scope; method lookup tries the impl on the most references first, so text-like
// types win over `Serialize`, and `Describe` (which gives an output type) over plain `Serialize`.

/// A return type, probed for how it renders.
pub struct Probe<R>(PhantomData<fn() -> R>);

impl<R> Probe<R> {
    /// The probe for `R`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Probe(PhantomData)
    }
}

/// How a return type renders, and its output type.
pub struct Render<R> {
    output: Option<fn() -> TypeGraph>,
    render: fn(R) -> Result<ToolOutput, Failure>,
}

impl<R> Render<R> {
    /// The output type, where the return type describes one.
    pub fn output(&self) -> Option<TypeGraph> {
        self.output.map(|build| build())
    }

    /// The tool's output for `value`, or the failure it reports: a [`ToolError`] the tool
    /// returned as it is (named after `tool` where it names none), any other error as
    /// [`ToolError::Failed`] with its text.
    ///
    /// Inlined into the generated call, so that the rendering function is called directly
    /// and the output (120 bytes) is built in the call's frame, not returned through a
    /// function pointer and copied out of one frame into the next on a trivial call's path.
    #[inline]
    pub fn render(&self, tool: &str, value: R) -> Result<ToolOutput, ToolError> {
        (self.render)(value).map_err(|failure| match failure {
            Failure::Message(message) => ToolError::Failed {
                tool: tool.to_owned(),
                message,
            },
            Failure::Tool(error) => named(*error, tool),
        })
    }
}

/// A [`ToolError`] whose tool is unnamed (made where the name was not known), named `tool`.
fn named(mut error: ToolError, tool: &str) -> ToolError {
    match &mut error {
        ToolError::InvalidArguments { tool: t, .. }
        | ToolError::Failed { tool: t, .. }
        | ToolError::Panicked { tool: t, .. }
        | ToolError::Cancelled { tool: t }
        | ToolError::TimedOut { tool: t, .. }
        | ToolError::MissingData { tool: t, .. }
        | ToolError::Unavailable { tool: t, .. }
            if t.is_empty() =>
        {
            tool.clone_into(t);
        }
        _ => {}
    }
    error
}

/// Why a tool's return value is a failure.
pub enum Failure {
    /// An error's text.
    Message(String),
    /// A [`ToolError`] the tool returned.
    Tool(Box<ToolError>),
}

/// The failure an error `E` is: itself where it is a [`ToolError`], else its text.
fn failure<E: Display + 'static>(error: E) -> Failure {
    match (&error as &dyn std::any::Any).downcast_ref::<ToolError>() {
        Some(tool_error) => Failure::Tool(Box::new(tool_error.clone())),
        None => Failure::Message(error.to_string()),
    }
}

/// Return types that are text already.
pub trait IntoText {
    /// The output, or the failure the value reports.
    fn into_output(self) -> Result<ToolOutput, Failure>;
}

impl IntoText for String {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoText for &str {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoText for Cow<'_, str> {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::text(self))
    }
}

impl IntoText for () {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::text(""))
    }
}

impl IntoText for ToolOutput {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(self)
    }
}

impl IntoText for crate::Content {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::new(self))
    }
}

impl IntoText for Vec<crate::Content> {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::new(self))
    }
}

impl IntoText for crate::Blocks {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::new(self))
    }
}

/// `Some` text is that text; `None` is empty text, as `()` is: there is nothing to say.
impl<T: IntoText> IntoText for Option<T> {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        match self {
            Some(text) => text.into_output(),
            None => Ok(ToolOutput::text("")),
        }
    }
}

impl<T: IntoText, E: Display + 'static> IntoText for Result<T, E> {
    fn into_output(self) -> Result<ToolOutput, Failure> {
        self.map_err(failure)?.into_output()
    }
}

/// Inlined for the same reason as [`Render::render`], which calls it.
#[inline]
fn json_output<T: Serialize>(value: T) -> Result<ToolOutput, Failure> {
    serde_json::to_value(value)
        .map(ToolOutput::structured)
        .map_err(|e| {
            Failure::Message(format!(
                "the tool's result could not be written as JSON: {e}"
            ))
        })
}

fn json_result_output<T: Serialize, E: Display + 'static>(
    value: Result<T, E>,
) -> Result<ToolOutput, Failure> {
    json_output(value.map_err(failure)?)
}

/// Text-like returns (highest priority).
pub trait ViaText<R> {
    /// The rendering.
    fn kind(&self) -> Render<R>;
}
impl<R: IntoText> ViaText<R> for &&&&Probe<R> {
    fn kind(&self) -> Render<R> {
        Render {
            output: None,
            render: R::into_output,
        }
    }
}

/// `Result<T, E>` with `T: Serialize + Describe`.
pub trait ViaDescribedResult<R> {
    /// The rendering.
    fn kind(&self) -> Render<R>;
}
impl<T: Serialize + Describe, E: Display + 'static> ViaDescribedResult<Result<T, E>>
    for &&&Probe<Result<T, E>>
{
    fn kind(&self) -> Render<Result<T, E>> {
        Render {
            output: Some(T::type_graph),
            render: json_result_output::<T, E>,
        }
    }
}

/// `T: Serialize + Describe`.
pub trait ViaDescribed<R> {
    /// The rendering.
    fn kind(&self) -> Render<R>;
}
impl<T: Serialize + Describe> ViaDescribed<T> for &&Probe<T> {
    fn kind(&self) -> Render<T> {
        Render {
            output: Some(T::type_graph),
            render: json_output::<T>,
        }
    }
}

/// `Result<T, E>` with `T: Serialize` only: structured output, no output type.
pub trait ViaResult<R> {
    /// The rendering.
    fn kind(&self) -> Render<R>;
}
impl<T: Serialize, E: Display + 'static> ViaResult<Result<T, E>> for &Probe<Result<T, E>> {
    fn kind(&self) -> Render<Result<T, E>> {
        Render {
            output: None,
            render: json_result_output::<T, E>,
        }
    }
}

/// Any other type (lowest priority): `T: Serialize` renders as JSON; anything else is refused
/// by [`ToolReturn`], whose message says what a tool may return.
pub trait ViaSerialize<R> {
    /// The rendering.
    fn kind(&self) -> Render<R>
    where
        R: ToolReturn;
}
impl<T> ViaSerialize<T> for Probe<T> {
    fn kind(&self) -> Render<T>
    where
        T: ToolReturn,
    {
        Render {
            output: None,
            render: json_output::<T>,
        }
    }
}

/// What a tool function may return, beyond text and `Result`s of text.
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}`: it is neither text nor `Serialize`",
    label = "the tool's return type",
    note = "return `String`, a type that implements `Serialize` (and `Describe`, for an output schema), or `Result<T, E: Display>` of one of these"
)]
pub trait ToolReturn: Serialize {}
impl<T: Serialize> ToolReturn for T {}
