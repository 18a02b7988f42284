//! Define LLM tools once, as ordinary Rust functions and `impl` blocks, and hand them to any
//! model or client.
//!
//! - `#[derive(ToolType)]` gives a struct or enum its runtime type ([`Type`]), in step with its
//!   serde attributes, so the schema a model sees, the coercion of what it sends and serde agree.
//! - `#[tool]` on a function (or on an `impl` block with one method, for a tool with state) makes
//!   a [`Tool`]; `#[toolset]` on an `impl` block makes each `#[tool]` method a tool, all sharing
//!   one instance ([`Toolset`]).
//! - Linking a crate registers its toolsets: [`registry()`] finds them; [`Registry`] also holds
//!   tools added by hand and refuses two tools of one name.
//!
//! ```
//! use toolsmith::{Arguments, Context, Dialect, Tool, ToolExt};
//!
//! /// Looks up the current weather for a city.
//! #[toolsmith::tool]
//! fn weather_lookup(
//!     /// The city to look up.
//!     city: String,
//!     units: Option<String>,
//! ) -> String {
//!     format!("Sunny in {city}, 21 degrees {}", units.as_deref().unwrap_or("celsius"))
//! }
//!
//! let tool = WeatherLookup;
//! assert_eq!(tool.name(), "weather_lookup");
//! let output = tool.call_blocking(Arguments::Text(r#"{"city": "Paris"}"#), Context::new())?;
//! assert_eq!(output.as_text(), "Sunny in Paris, 21 degrees celsius");
//! let declared = toolsmith::envelope(&tool, Dialect::JsonSchema)?;
//! assert_eq!(
//!     declared["parameters"]["properties"]["units"]["description"],
//!     "Parameter units (optional)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate must never do HTTP, spawn processes, or pull in an async runtime: it is the
//! contract between tools and whoever calls them, and tools that need those bring them.

mod ask;
mod content;
mod context;
mod envelope;
mod future;
mod layer;
mod pool;
mod registry;
mod stats;
mod tool;
mod toolset;

pub mod testing;

#[doc(hidden)]
#[path = "generated/mod.rs"]
pub mod __private;

pub use ask::{
    AskError, AskFuture, Asker, Asking, Elicitation, Elicited, Role, Sampled, Sampling,
    SamplingMessage,
};
pub use content::{Blocks, Content, IntoBlocks, Media, Resource, ResourceContents, ResourceLink};
pub use context::{CancellationToken, Cancelled, Context, LogLevel, Progress, Reporter};
pub use envelope::{EnvelopeError, envelope, lint_tools};
pub use future::{InsideRuntime, ToolFuture, ToolResult, block_on};
pub use layer::{
    Call, CatchPanic, ConcurrencyLimit, Layer, Next, Offload, ThreadPerCall, Timeout, Trace,
};
pub use pool::ToolPool;
pub use registry::{RegisteredTool, Registry, RegistryError, default_layers, registry};
pub use stats::{Stats, StatsLayer};
pub use tool::{Tool, ToolAnnotations, ToolError, ToolExt, ToolOutput};
pub use toolset::Toolset;
/// Describes a struct or enum as a [`Type`], following its serde attributes, so that the schema a
/// model sees, the coercion of what it sends and serde's reading of the result agree.
///
/// - A struct with named fields is an object: doc comments describe it and its fields; an
///   `Option<T>` field is optional (and nilable); `#[serde(default)]` (on the field or the
///   struct) and `#[serde(default = "path")]` make a field optional, with its default written in
///   the schema and filled in by coercion where the field's type is `Serialize`; `rename`, `rename_all` and `skip` are honoured.
///   A field's `#[serde(alias = "...")]` keys are read as serde reads them: accepted without a
///   repair and written under the field's name (the schema shows only the name).
/// - A newtype (`struct Email(String)`), or a `#[serde(transparent)]` struct, is the type it
///   wraps; a type with `#[serde(from = "T")]` or `try_from` is described as `T`, which is what
///   serde reads.
/// - An enum of unit variants is a string enum of the names serde reads (`rename`,
///   `rename_all`); `#[serde(alias)]` spellings are accepted as aliases. Other derives beside it
///   (strum's, say) do not matter: serde's spelling is what the model sends.
/// - An enum whose variants hold data must be `#[serde(tag = "_type")]`: a union of structs
///   told apart by `_type` (struct variants, newtype variants holding a struct, unit variants).
/// - A type that contains itself (a tree node with `Vec<Self>`) is a named definition that refers
///   to itself. Two types with one name get two definitions (`Options`, `Options2`).
///
/// What the derive cannot describe faithfully is a compile error: `#[serde(flatten)]`, custom
/// deserializers (`with`, `deserialize_with`), `untagged` or adjacently tagged enums, tuple
/// structs of more than one field. The description follows what serde *reads*; a type also used
/// as a tool's output should not rename or skip fields for serialization only, or its output will
/// not match its own output schema.
///
/// ```
/// use serde::Deserialize;
/// use toolsmith::{Describe, Dialect, ToolType, emit};
///
/// /// How urgent a task is.
/// #[derive(Deserialize, ToolType)]
/// #[serde(rename_all = "snake_case")]
/// enum Priority { Low, High }
///
/// /// A task to create.
/// #[derive(Deserialize, ToolType)]
/// struct Task {
///     /// A short title.
///     title: String,
///     #[serde(default = "normal")]
///     priority: Priority,
/// }
///
/// fn normal() -> Priority { Priority::Low }
///
/// let schema = emit(&Task::type_graph(), Dialect::JsonSchema)?;
/// assert_eq!(schema["$defs"]["Task"]["required"], serde_json::json!(["title"]));
/// // `Priority` is not `Serialize`, so its default is not written; serde still fills it in.
/// assert!(schema["$defs"]["Task"]["properties"]["priority"].get("default").is_none());
/// assert_eq!(schema["$defs"]["Priority"]["enum"], serde_json::json!(["low", "high"]));
/// # Ok::<(), toolsmith::EmitError>(())
/// ```
pub use toolsmith_macros::ToolType;

/// Makes a function a [`Tool`]: `#[tool]` on a free function, or on an `impl` block of one
/// method for a tool with state.
///
/// The parameters are the function's parameters: each type's [`Describe`] gives the schema
/// (derive it with [`ToolType`]), `Option<T>` parameters are optional, and
/// `#[param(default = expr)]` declares a default. A parameter is described by its own `///`
/// comment, by `#[param(description = "...")]`, or by an entry of an `# Arguments` list in the
/// function's doc comment (`` * `city` - The city. ``). A `&str` or other `&T` parameter works
/// (the tool owns the value and lends it); a borrow inside a parameter's type (`Option<&str>`)
/// is a compile error that asks for the owned type.
///
/// Options: `name = "..."` (default: the function's name; for an impl block, the type's name in
/// snake_case), `description = "..."` (default: the doc comment's text before its first
/// heading, else `"Tool: <name>"`), the hints `read_only`, `destructive`, `idempotent`,
/// `open_world` (each `= false` too), and `limits = path`, the tool's own argument limits
/// ([`Tool::limits`]: a `fn() -> Limits` for a free function, a `fn(&Self) -> Limits` method on
/// an impl block, so they can follow the instance; every caller then reads the tool's arguments
/// under them instead of its policy's limits). On an impl block: `constructor = path` (a `fn() -> Self`
/// the registry builds the tool with; default: `Default`) and `register = false` (the tool is
/// not in [`registry()`]; add it to a [`Registry`] by hand). A type with neither `Default` nor a
/// constructor that is not `register = false` is a compile error, not a tool that silently
/// goes missing from the registry.
///
/// A free function `weather_lookup` becomes the unit struct `WeatherLookup` (PascalCase of its
/// name; `type_name = "..."` names it otherwise, say when a type of that name exists already),
/// which implements `Tool`; an impl block makes its own type implement `Tool`. Both are
/// registered in [`registry()`]. The function may return `String` (or other text), `()`, a
/// [`ToolOutput`], any `T: Serialize` (structured output; with `Describe` also the tool's output
/// type), or a `Result` of one of these whose error implements `Display` (a
/// [`ToolError::Failed`]). An `Option` of text renders as the text, and `None` as empty text
/// (as `()` does), never as a JSON string.
///
/// ```
/// use toolsmith::{testing, Tool};
///
/// /// Converts a temperature.
/// ///
/// /// # Arguments
/// /// * `celsius` - Degrees Celsius.
/// #[toolsmith::tool(read_only, idempotent)]
/// fn to_fahrenheit(celsius: f64, #[param(default = 1)] decimals: u8) -> String {
///     format!("{:.*}", usize::from(decimals), celsius * 9.0 / 5.0 + 32.0)
/// }
///
/// assert_eq!(ToFahrenheit.name(), "to_fahrenheit");
/// assert_eq!(testing::call_text(&ToFahrenheit, serde_json::json!({"celsius": "100"})), Ok("212.0".to_owned()));
///
/// /// A counter with a starting value: state the one tool keeps.
/// struct Ticket { next: std::sync::atomic::AtomicU32 }
///
/// #[toolsmith::tool(register = false)]
/// impl Ticket {
///     /// Hands out the next ticket number.
///     fn take(&self) -> u32 {
///         self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
///     }
/// }
///
/// let tickets = Ticket { next: 7.into() };
/// assert_eq!(tickets.name(), "ticket");
/// assert_eq!(testing::call_text(&tickets, serde_json::json!({})), Ok("7".to_owned()));
/// ```
pub use toolsmith_macros::tool;

/// Makes each `#[tool]` method of an `impl` block a tool; all the tools made together share one
/// instance ([`Toolset`]).
///
/// Options: `name = "..."` (the toolset's name; default: the type's name without a `Toolset`
/// suffix, in snake_case: `HTTPClientToolset` is `http_client`), `constructor = path` and
/// `register = false` as for [`tool`], and `limits = path`: a `fn(&Self) -> Limits` method
/// stating the argument limits of every tool of the toolset (from the instance, say from a
/// size it was built with; [`Tool::limits`]). Each method takes `&self` (or no receiver) and the
/// options of [`tool`] (its own `limits` replacing the toolset's); its name defaults to
/// `<toolset>_<method>`, its description to the doc comment, else `"<Method humanized>
/// operation"`. Methods without `#[tool]` stay private. Two tools of one name in a toolset are a
/// compile error.
///
/// ```
/// use toolsmith::Toolset;
///
/// #[derive(Default)]
/// struct HTTPClientToolset;
///
/// #[toolsmith::toolset]
/// impl HTTPClientToolset {
///     #[tool]
///     fn word_count(&self, text: String) -> usize {
///         text.split_whitespace().count()
///     }
/// }
///
/// let tools = HTTPClientToolset::to_tools();
/// assert_eq!(tools[0].name(), "http_client_word_count");
/// assert_eq!(tools[0].description(), "Word count operation");
/// ```
pub use toolsmith_macros::toolset;
/// The type model, as a user meets it: types and their descriptors, coercion and its reports,
/// the receivers' dialects and their schemas, import and lint. The rest of the types crate (the
/// argument reader's steps, naming and pointer helpers, what generated code calls) is in
/// [`types`].
pub use toolsmith_types::{
    // What a receiver would refuse.
    Actual,
    // What a model sent, coerced under a policy, and what was repaired or wrong.
    Arguments,
    // The type model.
    ArrayType,
    CoerceError,
    CoerceErrors,
    Coerced,
    Definitions,
    Describe,
    // The receivers and their schemas.
    Dialect,
    EmitError,
    EnumType,
    EnumValue,
    EnumVariant,
    ErrorCode,
    Field,
    Finding,
    FindingCode,
    // JSON Schema read into the type model, and checked against it.
    ImportCode,
    ImportError,
    ImportErrors,
    ImportMode,
    ImportOptions,
    ImportWarning,
    Imported,
    ImportedSchema,
    IntegerType,
    Limit,
    Limits,
    LintTool,
    MapKeys,
    MapType,
    Mode,
    NumberType,
    Pattern,
    PatternError,
    Policy,
    ReceiverLimits,
    Repair,
    RepairCode,
    StringType,
    StructType,
    TYPE_TAG,
    TaggedUnion,
    TaggedVariant,
    Type,
    TypeGraph,
    UnknownDialect,
    UnknownKeys,
    coerce,
    coerce_arguments,
    define,
    elicitation_schema,
    emit,
    import,
    import_with,
    lint,
    parameters_schema,
};

/// The whole types crate, for what the names above leave out.
pub use toolsmith_types as types;

/// Makes sure the named crates are linked, so that their toolsets appear in [`registry()`].
///
/// A crate that the program uses for nothing but the tools it registers may be left out by the
/// linker; naming it here keeps it. Naming a crate the program uses anyway does no harm.
///
/// ```
/// // In the binary: keep these crates' toolsets, even though no code calls into them.
/// toolsmith::link!(toolsmith);
/// ```
#[macro_export]
macro_rules! link {
    ($($krate:ident),+ $(,)?) => {
        $(
            #[allow(unused_imports)]
            use $krate as _;
        )+
    };
}
