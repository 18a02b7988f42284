//! [`Policy`]: how lenient coercion is, and the limits it enforces.

/// How coercion treats what a model sends.
///
/// The default is lenient: lossless repairs are made and recorded, unknown keys are rejected,
/// and the [`Limits`] defaults apply.
///
/// ```
/// use toolsmith_types::{Mode, Policy, UnknownKeys};
///
/// let strict = Policy::strict();
/// assert_eq!(strict.mode, Mode::Strict);
/// let relaxed = Policy { unknown_keys: UnknownKeys::Ignore, ..Policy::default() };
/// assert_eq!(relaxed.mode, Mode::Lenient);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    /// Whether repairs are made or refused.
    pub mode: Mode,
    /// What happens to object keys a struct does not declare.
    pub unknown_keys: UnknownKeys,
    /// Bounds on the size and nesting of the input.
    pub limits: Limits,
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
    /// Most errors reported for one input; the rest are summarised in one `too_many_errors` error.
    pub max_errors: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 128,
            max_string_bytes: 1 << 20,
            max_items: 100_000,
            max_input_bytes: 8 << 20,
            max_errors: 100,
        }
    }
}
