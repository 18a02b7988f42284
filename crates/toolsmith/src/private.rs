//! What the macros' generated code calls. Not a public API: names and shapes change without
//! notice. Generated code names only `::toolsmith::__private` paths, so a user needs no direct
//! dependency on serde, inventory or the types crate.

use std::borrow::Cow;
use std::fmt::Display;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use std::borrow::{Borrow, ToOwned};
pub use std::sync::{Arc, OnceLock};

pub use inventory;
pub use serde;
pub use serde_json;
pub use toolsmith_types::{
    Arguments, Definitions, Describe, EnumType, EnumValue, EnumVariant, Field, Limits, Policy,
    StructType, TaggedUnion, TaggedVariant, Type, TypeGraph, define_for,
};

pub use crate::registry::{Registration, RegistrationKind};
pub use crate::{Context, Tool, ToolAnnotations, ToolError, ToolFuture, ToolOutput, Toolset};

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

    /// Runs the tool under its stated limits; a call already cancelled or past its deadline
    /// does not start. (A panic is the caller's: the registry's layers catch it.)
    #[inline]
    pub fn call<'a>(
        &self,
        this: &'a S,
        arguments: Arguments<'a>,
        mut context: Context,
    ) -> ToolFuture<'a> {
        context.name_if_unnamed(self.name);
        if let Some(refused) = crate::layer::refuse_before_start(|| self.name, &context) {
            return ToolFuture::ready(Err(refused));
        }
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

/// Reads, coerces and deserializes a tool's arguments into its hidden arguments struct.
///
/// `plain` says that every parameter is a [`Plain`] type without a default, and that `A` is
/// the macro's arguments struct for them (`deny_unknown_fields`, one field a parameter). Then
/// serde reading `A` accepts exactly the clean arguments the checking reader would, so
/// arguments within the limits are read by serde alone; whatever serde refuses takes the usual
/// way, which reports the repairs and errors.
///
/// Inlined into the generated call (the usual way is not): the arguments serde reads are then
/// used where they are read, instead of being written out by one frame and copied in by the
/// next (a copy read right after its parts were written stalls the processor).
#[inline]
pub fn arguments<A: DeserializeOwned>(
    tool: &str,
    parameters: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
    plain: bool,
) -> Result<(A, Vec<toolsmith_types::Repair>), ToolError> {
    if plain && let Some(value) = plain_arguments::<A>(parameters, arguments, &policy.limits) {
        return Ok((value, Vec::new()));
    }
    coerced_arguments(tool, parameters, arguments, policy)
}

/// The usual way of [`arguments`]: the checking reader, then coercion where it says no.
#[inline(never)]
fn coerced_arguments<A: DeserializeOwned>(
    tool: &str,
    parameters: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
) -> Result<(A, Vec<toolsmith_types::Repair>), ToolError> {
    toolsmith_types::deserialize_arguments::<A>(parameters, arguments, policy)
        .map(|d| (d.value, d.repairs))
        .map_err(|errors| ToolError::InvalidArguments {
            tool: tool.to_owned(),
            errors,
        })
}

/// Plain arguments read by serde alone, or `None` for the usual way.
///
/// Why this is the checking reader's answer: every field is a boolean, an integer of at most 64
/// bits, a string, or an `Option` of one, with no default. serde then refuses what that reader
/// refuses (a value of another JSON type, an integer outside the Rust type, which is the range
/// its `Describe` states, a missing required field, a repeated or undeclared key) and fills
/// absent `Option`s with `None`, as coercion does. What serde cannot see is checked here: the
/// arguments are an object (serde also reads a struct from an array), and the policy's limits
/// hold (no string is longer than the text it is in; there are no more keys than fields, so no
/// more values than the fields and the object: under a lower limit on values the usual way
/// reads them).
#[inline]
fn plain_arguments<A: DeserializeOwned>(
    parameters: &TypeGraph,
    arguments: Arguments<'_>,
    limits: &toolsmith_types::Limits,
) -> Option<A> {
    let fields = match &parameters.root {
        Type::Struct(st) if st.additional.is_none() => st.fields.len(),
        _ => return None,
    };
    if limits.max_depth < 1 || fields > limits.max_items || fields >= limits.max_values {
        return None;
    }
    let text = match arguments {
        Arguments::Text(text) => text,
        Arguments::Json(Value::String(text)) => text,
        Arguments::Json(value @ Value::Object(object)) => {
            let short = |v: &Value| {
                v.as_str()
                    .is_none_or(|s| s.len() <= limits.max_string_bytes)
            };
            return object
                .values()
                .all(short)
                .then(|| A::deserialize(value).ok())
                .flatten();
        }
        Arguments::Json(_) => return None,
    };
    let within = text.len() <= limits.max_input_bytes && text.len() <= limits.max_string_bytes;
    // Arguments a program sends start with their brace; only other text is trimmed to look.
    let object = text.starts_with('{') || text.trim_start().starts_with('{');
    if !within || !object {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// A parameter type whose JSON serde checks exactly as coercion's checking reader does:
/// booleans, integers of at most 64 bits, strings, and `Option`s of these. A tool whose
/// parameters are all `Plain` (and have no defaults) reads clean arguments by serde alone.
pub trait Plain {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Plain for $t {}
        impl Plain for Option<$t> {}
    )*};
}

plain!(
    bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, String
);

/// A parameter type, probed for [`Plain`]: generated code calls
/// `(&&PlainProbe::<T>::new()).plain()` with both `Via*Plain` traits in scope.
pub struct PlainProbe<T>(PhantomData<fn() -> T>);

impl<T> PlainProbe<T> {
    /// The probe for `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        PlainProbe(PhantomData)
    }
}

/// `T: Plain`.
pub trait ViaPlain {
    /// `true`.
    fn plain(&self) -> bool;
}
impl<T: Plain> ViaPlain for &PlainProbe<T> {
    #[inline]
    fn plain(&self) -> bool {
        true
    }
}

/// Any other type.
pub trait ViaNotPlain {
    /// `false`.
    fn plain(&self) -> bool;
}
impl<T> ViaNotPlain for PlainProbe<T> {
    #[inline]
    fn plain(&self) -> bool {
        false
    }
}

/// The parameters struct of a tool, from one field per parameter.
pub fn parameters(build: impl FnOnce(&mut Definitions) -> Vec<Field>) -> TypeGraph {
    let mut defs = Definitions::default();
    let mut root = StructType::anonymous();
    root.fields = build(&mut defs);
    TypeGraph {
        root: Type::Struct(root),
        defs,
    }
}

/// A field for a parameter or struct field: optional when serde reads its absence
/// ([`Describe::OPTIONAL`], an `Option`) or when it has a default.
pub fn field(
    name: &str,
    ty: Type,
    optional: bool,
    description: Option<&str>,
    default: Option<Option<Value>>,
) -> Field {
    let mut field = Field::new(name, ty);
    field.description = description.map(str::to_owned);
    if optional {
        field = field.optional();
    }
    match default {
        // A default that serializes is written into the schema and filled in by coercion.
        Some(Some(value)) => field = field.default_value(value),
        // One that does not is still a default: serde fills it in.
        Some(None) => field = field.optional(),
        None => {}
    }
    field
}

/// A default value, probed for a JSON form: generated code calls
/// `(&&DefaultValue(&value)).to_json()` with both `Via*Json` traits in scope, so a default whose
/// type is not `Serialize` is still a default (serde fills it in), only not written in the schema.
pub struct DefaultValue<'a, T>(pub &'a T);

/// `T: Serialize`: the default as JSON, or `None` when it does not serialize.
pub trait ViaSerializeJson {
    /// The default as JSON.
    fn to_json(&self) -> Option<Value>;
}
impl<T: Serialize> ViaSerializeJson for &DefaultValue<'_, T> {
    fn to_json(&self) -> Option<Value> {
        serde_json::to_value(self.0).ok()
    }
}

/// Any other type: no JSON form.
pub trait ViaOpaqueJson {
    /// `None`.
    fn to_json(&self) -> Option<Value>;
}
impl<T> ViaOpaqueJson for DefaultValue<'_, T> {
    fn to_json(&self) -> Option<Value> {
        None
    }
}

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
        Ok(ToolOutput::new(vec![self]))
    }
}

impl IntoText for Vec<crate::Content> {
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

// ---- Construction: how the registry builds a toolset by itself. ----

/// A type the registry can build without a named constructor: one with `Default`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be registered: it has no `Default` and no constructor is named",
    label = "the registry has no way to build this type",
    note = "derive or implement `Default`, name a `fn() -> Self` with `constructor = path`, or write `register = false` and add the tools to a `Registry` by hand"
)]
pub trait Registrable: Sized {
    /// A new instance.
    fn build() -> Self;
}
impl<T: Default> Registrable for T {
    fn build() -> Self {
        T::default()
    }
}
