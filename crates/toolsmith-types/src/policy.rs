//! [`Policy`]: how lenient coercion is, the limits it enforces, and the dialect the arguments
//! were asked for in.

use crate::dialect::Dialect;

/// How coercion treats what a model sends.
///
/// The default is lenient: lossless repairs are made and recorded, unknown keys are rejected,
/// the [`Limits`] defaults apply, and the arguments are taken to answer canonical JSON Schema.
///
/// ```
/// use serde_json::json;
/// use toolsmith_types::{coerce, Dialect, Field, Mode, Policy, StructType, Type, TypeGraph, UnknownKeys};
///
/// let strict = Policy::strict();
/// assert_eq!(strict.mode, Mode::Strict);
/// let relaxed = Policy { unknown_keys: UnknownKeys::Ignore, ..Policy::default() };
/// assert_eq!(relaxed.mode, Mode::Lenient);
///
/// // OpenAI strict mode makes every field required: `null` is how a model omits one.
/// let graph = TypeGraph::new(Type::Struct(
///     StructType::anonymous().field(Field::new("limit", Type::integer()).optional()),
/// ));
/// let openai = Policy::strict().with_dialect(Dialect::OpenAi { strict: true });
/// let out = coerce(&graph, &json!({"limit": null}), &openai)?;
/// assert_eq!(out.value, json!({}));
/// assert!(out.repairs.is_empty());
/// # Ok::<(), toolsmith_types::CoerceErrors>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    /// Whether repairs are made or refused.
    pub mode: Mode,
    /// What happens to object keys a struct does not declare.
    pub unknown_keys: UnknownKeys,
    /// Bounds on the size and nesting of the input.
    pub limits: Limits,
    /// The dialect the tool's schema was given to the model in. What that dialect's wire shape
    /// spells differently (`null` for an omitted optional field where the schema offered `null`
    /// for it, an integer enum value as its decimal text for Gemini, a map as an array of
    /// `{key, value}` entries for the strict dialects and Gemini) is read as the canonical value
    /// without a repair, so a strict policy accepts it. Under another dialect the same input is
    /// still accepted leniently, as a repair (`map_from_entries` for a map, `[]` included).
    pub dialect: Dialect,
}

impl Policy {
    /// The default policy: lenient, unknown keys rejected.
    pub fn lenient() -> Self {
        Policy::default()
    }

    /// Every repair becomes an error; unknown keys rejected.
    pub fn strict() -> Self {
        Policy {
            mode: Mode::Strict,
            ..Policy::default()
        }
    }

    /// This policy, for arguments answering a schema written in `dialect`.
    pub fn with_dialect(self, dialect: Dialect) -> Self {
        Policy { dialect, ..self }
    }
}

/// Whether coercion repairs input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Make lossless repairs and record each one.
    #[default]
    Lenient,
    /// Refuse anything that would need a repair, with an error where the repair would have been.
    /// (Dropping unknown keys under [`UnknownKeys::Ignore`] is the policy's own choice, so it
    /// still happens, recorded as an `extra_ignored` repair.)
    Strict,
}

/// What coercion does with an object key that a struct does not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownKeys {
    /// An `extra_forbidden` error at the key's path, listing the valid names.
    #[default]
    Reject,
    /// Drop the key, recording an `extra_ignored` repair (in strict mode too).
    Ignore,
}

/// Bounds that keep coercion of hostile input cheap. Exceeding one is an error, never a crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of arrays and objects accepted (the root is depth 0).
    pub max_depth: usize,
    /// Longest string accepted, in bytes.
    pub max_string_bytes: usize,
    /// Most elements in one array, or entries in one object.
    pub max_items: usize,
    /// Longest argument text accepted, in bytes.
    pub max_input_bytes: usize,
    /// Most errors reported for one input; the rest are counted (never built) and summarised in
    /// one `too_many_errors` error.
    pub max_errors: usize,
    /// Most repairs reported for one input; the rest are made and counted (never built) and
    /// summarised in one last `too_many_repairs` entry.
    pub max_repairs: usize,
    /// Most JSON values in one request's arguments: every string, number, boolean, `null`,
    /// array and object counts (the arguments object too), an object's keys do not, and the
    /// values of JSON text read from inside a string count with the rest. Past it the arguments
    /// are `too_large`, refused while they are read: what is past the limit is never built.
    ///
    /// This bounds the memory a request costs, which the other limits do not: a parsed value
    /// takes 32 bytes in an array and about 90 as an object's entry (a `serde_json::Value` in
    /// an ordered map), so argument text of `max_input_bytes` made of small values (`1,` is
    /// one) would be a tree of hundreds of megabytes, with every array within `max_items`. The
    /// default, 200,000 (twice `max_items`: one array at the item limit fits beside the rest),
    /// keeps a request's tree under about 20 MB, and tens of MB with the canonical copy
    /// coercion makes where it changes the value. Arguments that need more are read under a
    /// larger limit: a tool states its own limits (`Tool::limits`, in the `toolsmith` crate),
    /// as the text toolset does for the size of its texts.
    pub max_values: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 128,
            max_string_bytes: 1 << 20,
            max_items: 100_000,
            max_input_bytes: 8 << 20,
            max_errors: 100,
            max_repairs: 100,
            max_values: 200_000,
        }
    }
}
