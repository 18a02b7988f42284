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
//! use toolsmith::{Arguments, Policy, Tool};
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
//! let output = tool.call(Arguments::Text(r#"{"city": "Paris"}"#), &Policy::default())?;
//! assert_eq!(output.text, "Sunny in Paris, 21 degrees celsius");
//! assert_eq!(
//!     tool.call_schema_object()?["properties"]["units"]["description"],
//!     "Parameter units (optional)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate must never do HTTP, spawn processes, or pull in an async runtime: it is the
//! contract between tools and whoever calls them, and tools that need those bring them.

mod envelope;
mod registry;
mod tool;
mod toolset;

pub mod testing;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub(crate) use __private as private;

pub use envelope::{EnvelopeError, envelope, lint_tools};
pub use registry::{RegisteredTool, Registry, RegistryError, registry};
pub use tool::{Tool, ToolAnnotations, ToolError, ToolOutput};
pub use toolset::Toolset;
pub use toolsmith_macros::{ToolType, tool, toolset};
pub use toolsmith_types::*;

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
