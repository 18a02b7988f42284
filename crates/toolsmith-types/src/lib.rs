//! The type model of toolsmith: a runtime descriptor ([`Type`]) for the values tools take and
//! return, and the three things done with it: emitting JSON Schema per receiver dialect
//! ([`emit`]), importing JSON Schema ([`import`]), and coercing what a model sent into the
//! canonical value ([`coerce`], [`coerce_arguments`]) with every repair recorded and every error
//! reported.
//!
//! Each receiver ([`Dialect`]: OpenAI, Anthropic, Gemini, MCP) gets its own spelling of the one
//! type, and [`lint`] finds what a receiver would refuse (names, sizes, nesting) before a request
//! is sent; coercion reads every dialect's spellings back into the one canonical value.
//!
//! Numbers are never lossy: argument text keeps the literals of its floats, so a number is
//! decided on the digits that were sent. An integer literal outside `i64`/`u64` is
//! `int_out_of_range`, not clamped; a whole float for an integer (`5.0`, `1e3`) is the
//! `int_from_float` repair, and past 2^53 an error asking for the digits; a number for a string
//! becomes the literal as sent (`1.10` → `"1.10"`, `-0` → `"-0"`); `1e-400` is
//! `float_out_of_range`, not 0; `multipleOf` is decided exactly on decimals.
//!
//! This crate must never know about tools, registries, LLMs, processes or I/O: a `Type` does not
//! know which dialect or tool it serves.
//!
//! ```
//! use serde_json::json;
//! use toolsmith_types::{coerce_arguments, Arguments, Describe, Policy};
//!
//! # #[derive(Debug)] struct Args;
//! let graph = toolsmith_types::TypeGraph::new(toolsmith_types::Type::Struct(
//!     toolsmith_types::StructType::anonymous()
//!         .field(toolsmith_types::Field::new("count", u32::describe(&mut Default::default()))),
//! ));
//! let out = coerce_arguments(&graph, Arguments::Text(r#"{"count": "42"}"#), &Policy::default())?;
//! assert_eq!(out.value, json!({"count": 42}));
//! assert_eq!(out.repairs[0].code.as_str(), "int_from_string");
//! # Ok::<(), toolsmith_types::CoerceErrors>(())
//! ```

// The modules in layers, bottom up: each uses only modules of its own layer or of those above
// it, and none is part of a circle (`cargo xtask layers` holds this; ARCHITECTURE.md has the order).
// The type model and the policy:
mod describe;
mod dialect;
mod pattern;
mod policy;
mod ty;
// Words for what went wrong, and paths to where:
mod diagnostics;
mod literal;
mod pointer;
// JSON text read within limits, then coerced to a type:
mod coerce;
mod json;
// The argument path (text to a typed value), and JSON Schema read into the type model:
mod arguments;
mod backstop;
mod import;
// The type model written as JSON Schema in each receiver's dialect, and what a receiver refuses:
mod emit;
mod form;
mod lint;

pub use arguments::{
    Arguments, Deserialized, ParsedArguments, Plain, PlainProbe, TextLength, ViaNotPlain, ViaPlain,
    coerce_arguments, deserialize_arguments, parse_arguments, text_too_large, typed_arguments,
};
pub use backstop::ImportedSchema;
pub use coerce::{Coerced, coerce, coerce_owned};
pub use describe::{Describe, define, define_for};
pub use diagnostics::{
    CoerceError, CoerceErrors, ErrorCode, Repair, RepairCode, did_you_mean, value_kind,
};
pub use dialect::{Dialect, ReceiverLimits, UnknownDialect};
pub use emit::{EmitError, emit, parameters_schema};
pub use form::elicitation_schema;
pub use import::{
    ImportCode, ImportError, ImportErrors, ImportMode, ImportOptions, ImportWarning, Imported,
    import, import_with,
};
pub use lint::{Actual, Finding, FindingCode, Limit, LintTool, lint};
pub use pointer::pointer_push;
pub use policy::{Limits, Mode, Policy, UnknownKeys};
pub use ty::{
    ArrayType, DefinitionMap, Definitions, EnumType, EnumValue, EnumVariant, Field, IntegerType,
    MapKeys, MapType, NumberType, Pattern, PatternError, StringType, StructType, TYPE_TAG,
    TaggedUnion, TaggedVariant, Type, TypeGraph,
};
