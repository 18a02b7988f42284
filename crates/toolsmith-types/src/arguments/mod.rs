//! The argument path: how the text a model sends becomes a tool's typed arguments.
//!
//! Read in this order, fastest first; each step answers only when it is sure, and otherwise
//! hands the text on unchanged, so every path reports the same value, repairs and errors:
//!
//! 1. [`plain`]: a tool whose parameters are all plain (booleans, integers, strings, `Option`s
//!    of these, no defaults) has clean arguments read by serde alone.
//! 2. [`canonical`]: text that is already the canonical value of the type is deserialized
//!    straight into the Rust type by a deserializer that checks every value against the type as
//!    it passes ([`deserialize_arguments`]).
//! 3. [`text`]: anything else is read into a JSON object by the rules for argument text
//!    (fences, near-JSON repairs, limits) and coerced ([`coerce_arguments`]); serde then builds
//!    the Rust type from the canonical value.
//!
//! This module holds the entry points of all three: [`Arguments`], [`parse_arguments`],
//! [`coerce_arguments`], [`deserialize_arguments`] and [`typed_arguments`].

mod canonical;
mod plain;
mod text;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::coerce::{Coerced, capped, coerce, coerce_read};
use crate::diagnostics::{CoerceError, CoerceErrors, ErrorCode, Repair, count};
use crate::policy::{Mode, Policy};
use crate::ty::TypeGraph;

use canonical::{Fast, is_canonical_text, read_canonical};
use plain::plain_arguments;
pub use plain::{Plain, PlainProbe, ViaNotPlain, ViaPlain};
use text::{not_an_object, read_arguments, refusals, without_bom};

/// Tool-call arguments as they arrive: text from a model, or JSON already parsed.
#[derive(Debug, Clone, Copy)]
pub enum Arguments<'a> {
    /// Argument text, read by the rules for argument text (fences, near-JSON repairs).
    Text(&'a str),
    /// A JSON value; a JSON string is read as argument text.
    Json(&'a Value),
}

/// Argument text read into a JSON object, with the repairs the reading needed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedArguments {
    /// The arguments object.
    pub value: Map<String, Value>,
    /// Repairs made to the text (path `""`).
    pub repairs: Vec<Repair>,
}

/// Reads argument text into a JSON object.
///
/// Clean JSON objects are accepted as they are; blank text is `{}`; a leading byte-order mark
/// is dropped without a repair (it is transport noise, not part of the JSON). Near-JSON (a markdown code
/// fence, comments, trailing commas, single quotes, unquoted keys, Python `True`/`False`/`None`,
/// an object encoded twice as a JSON string) is repaired, one [`Repair`] per kind, each at path
/// `""` with the original text as `from` (cut after 1024 characters). Numbers keep their exact
/// integer or float value; [`coerce_arguments`] also keeps their literals, to decide on the digits
/// that were sent (a literal `1.10` for a string field is `"1.10"`).
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{Policy, RepairCode, parse_arguments};
///
/// let parsed = parse_arguments("{'city': 'Paris', units: 'metric',}", &Policy::default())?;
/// assert_eq!(serde_json::Value::Object(parsed.value), json!({"city": "Paris", "units": "metric"}));
/// let codes: Vec<_> = parsed.repairs.iter().map(|r| r.code).collect();
/// assert_eq!(
///     codes,
///     [RepairCode::TrailingComma, RepairCode::SingleQuotes, RepairCode::UnquotedKeys]
/// );
/// # Ok::<(), toolsmith_types::CoerceErrors>(())
/// ```
///
/// # Errors
/// `json_invalid`, `duplicate_key`, `arguments_type`, `too_deep` or `too_large` (past a limit
/// on the text's size, an array's or object's items, or the values in all), or
/// `repair_refused` under a strict policy.
pub fn parse_arguments(text: &str, policy: &Policy) -> Result<ParsedArguments, CoerceErrors> {
    let read = read_arguments(text, &policy.limits)?;
    if policy.mode == Mode::Strict && !read.repairs.is_empty() {
        return Err(CoerceErrors(refusals(&read.repairs)));
    }
    Ok(ParsedArguments {
        value: read.object,
        repairs: capped(Vec::new(), read.repairs, 0, policy.limits.max_repairs),
    })
}

/// Reads `arguments` and coerces them to the root type of `graph`: the one call a tool runtime
/// makes.
///
/// Text (and a JSON string, which is text too) is read by [`parse_arguments`]; an object is
/// coerced as it is; any other JSON value is an `arguments_type` error. The repairs made to the
/// text come first, then those made to the values.
///
/// # Errors
/// Every problem with the text or the values. Under a strict policy a text that needed repairs
/// is still coerced, so its value errors are reported beside the refused repairs.
pub fn coerce_arguments(
    graph: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
) -> Result<Coerced, CoerceErrors> {
    let text = match arguments {
        Arguments::Text(text) => text,
        Arguments::Json(Value::String(text)) => text.as_str(),
        Arguments::Json(object @ Value::Object(_)) => return coerce(graph, object, policy),
        Arguments::Json(other) => return Err(CoerceErrors(vec![not_an_object(other.clone())])),
    };
    let read = read_arguments(text, &policy.limits)?;
    let mut errors = match policy.mode {
        Mode::Strict => refusals(&read.repairs),
        Mode::Lenient => Vec::new(),
    };
    let (object, literals) = (Value::Object(read.object), read.literals);
    match coerce_read(graph, object, literals, read.values, policy) {
        Ok(coerced) if errors.is_empty() => Ok(Coerced {
            value: coerced.value,
            repairs: capped(
                read.repairs,
                coerced.repairs,
                coerced.repairs_cut,
                policy.limits.max_repairs,
            ),
        }),
        Ok(_) => Err(CoerceErrors(errors)),
        Err(value_errors) => {
            errors.extend(value_errors);
            Err(CoerceErrors(errors))
        }
    }
}

/// How long a text is, as far as its reader knows: a reader that stops at a limit, as it
/// should, knows only that the text is longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextLength {
    /// This many bytes.
    Exactly(usize),
    /// More than this many bytes (the reader stopped after them).
    Over(usize),
}

/// The `too_large` error for argument text past `max_bytes`, saying how long it is as far as
/// that is known: what [`coerce_arguments`] reports for text it is given, and what a reader
/// that stops reading at the limit (say, of standard input) reports itself.
///
/// ```
/// use toolsmith_types::{TextLength, text_too_large};
///
/// let read = text_too_large(1_000, TextLength::Exactly(1_500_000));
/// assert_eq!(read.expected, "argument text of at most 1,000 bytes; 1,500,000 bytes were sent");
/// let cut = text_too_large(1_000, TextLength::Over(1_000));
/// assert_eq!(
///     cut.expected,
///     "argument text of at most 1,000 bytes; more than 1,000 bytes were sent"
/// );
/// ```
pub fn text_too_large(max_bytes: usize, length: TextLength) -> CoerceError {
    let sent = match length {
        TextLength::Exactly(bytes) => count(bytes),
        TextLength::Over(read) => format!("more than {}", count(read)),
    };
    CoerceError::new(
        "",
        ErrorCode::TooLarge,
        None,
        format!(
            "argument text of at most {} bytes; {sent} bytes were sent",
            count(max_bytes)
        ),
    )
}

/// Arguments coerced and deserialized into the Rust type that takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Deserialized<T> {
    /// The arguments as the Rust type.
    pub value: T,
    /// Every repair made on the way, as [`coerce_arguments`] reports them.
    pub repairs: Vec<Repair>,
}

/// Reads and coerces `arguments` as [`coerce_arguments`] does, then deserializes the canonical
/// value into `T`, whose [`Describe`](crate::Describe) is `graph`.
///
/// Clean text (already the canonical value: the common case) is deserialized straight from the
/// text, in one pass that checks each value against `graph` as `T` reads it, without building a
/// `serde_json::Value` (a `T` that takes the raw text, such as `RawValue`, is checked first and
/// read after); anything else takes the full coercion, and then serde builds `T` from the
/// canonical value. Both paths
/// report the same repairs and errors, and give the same `T` for any `T` that does not depend on
/// the order of object keys or on the raw text (`serde_json::value::RawValue` does; so does a
/// `Value` with serde_json's `preserve_order`, whose keys keep the order they were sent in).
///
/// ```
/// use toolsmith_types::{deserialize_arguments, Arguments, Describe, Policy};
/// use toolsmith_types::{define, Definitions, Field, StructType, Type};
///
/// #[derive(serde::Deserialize)]
/// struct Args { count: u32 }
///
/// impl Describe for Args {
///     fn describe(defs: &mut Definitions) -> Type {
///         define(defs, "Args", |defs| {
///             Type::Struct(StructType::new("Args").field(Field::new("count", u32::describe(defs))))
///         })
///     }
/// }
///
/// let graph = Args::type_graph();
/// let clean = deserialize_arguments::<Args>(&graph, Arguments::Text(r#"{"count": 3}"#), &Policy::default())?;
/// assert_eq!((clean.value.count, clean.repairs.len()), (3, 0));
/// let messy = deserialize_arguments::<Args>(&graph, Arguments::Text(r#"{"count": "3"}"#), &Policy::default())?;
/// assert_eq!((messy.value.count, messy.repairs.len()), (3, 1));
/// # Ok::<(), toolsmith_types::CoerceErrors>(())
/// ```
///
/// # Errors
/// Every problem with the text or the values; `type_mismatch` when the canonical value fits
/// `graph` but `T` rejects it (its `Describe` and `Deserialize` disagree).
pub fn deserialize_arguments<T: DeserializeOwned>(
    graph: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
) -> Result<Deserialized<T>, CoerceErrors> {
    let text = match arguments {
        Arguments::Text(text) => Some(without_bom(text)),
        Arguments::Json(Value::String(text)) => Some(without_bom(text)),
        Arguments::Json(_) => None,
    };
    if let Some(text) = text {
        let clean = match read_canonical::<T>(graph, text, &policy.limits) {
            Fast::Read(value) => Some(value),
            // `T` wants the text itself: check it, then let serde hand it over.
            Fast::RawText if is_canonical_text(graph, text, &policy.limits) => {
                serde_json::from_str::<T>(text).ok()
            }
            Fast::RawText | Fast::NotCanonical => None,
        };
        if let Some(value) = clean {
            return Ok(Deserialized {
                value,
                repairs: Vec::new(),
            });
        }
    }
    let coerced = coerce_arguments(graph, arguments, policy)?;
    match serde_json::from_value::<T>(coerced.value) {
        Ok(value) => Ok(Deserialized {
            value,
            repairs: coerced.repairs,
        }),
        Err(error) => Err(CoerceErrors(vec![CoerceError::new(
            "",
            ErrorCode::TypeMismatch,
            None,
            format!("a value the Rust type accepts ({error})"),
        )])),
    }
}

/// Reads `arguments` into `A` by the fastest path that is sure: serde alone when `plain` (see
/// below), else [`deserialize_arguments`]. The one call a `#[tool]` function's generated code
/// makes.
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
///
/// # Errors
/// As [`deserialize_arguments`].
#[inline]
pub fn typed_arguments<A: DeserializeOwned>(
    graph: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
    plain: bool,
) -> Result<Deserialized<A>, CoerceErrors> {
    if plain && let Some(value) = plain_arguments::<A>(graph, arguments, &policy.limits) {
        return Ok(Deserialized {
            value,
            repairs: Vec::new(),
        });
    }
    checked_arguments(graph, arguments, policy)
}

/// The usual way of [`typed_arguments`], kept out of line.
#[inline(never)]
fn checked_arguments<A: DeserializeOwned>(
    graph: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
) -> Result<Deserialized<A>, CoerceErrors> {
    deserialize_arguments(graph, arguments, policy)
}
