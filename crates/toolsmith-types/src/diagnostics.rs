//! What coercion reports: [`Repair`]s it made and [`CoerceError`]s it found, as data.
//!
//! Every diagnostic has a JSON Pointer path (RFC 6901, `""` for the root), a stable snake_case
//! code, and the offending input; each renders once, here, into a short message a model can act
//! on.
//!
//! No diagnostic grows with the input: errors past [`Limits::max_errors`](crate::Limits) and
//! repairs past `max_repairs` are counted, never built, and summarised in one `too_many_errors`
//! error or `too_many_repairs` entry; a quoted value is abridged to a few kilobytes, a path
//! through long keys to a couple (a key past 256 characters, or the outer part of a path past
//! 2048 bytes, is cut and marked `…`).

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::pointer::pointer_push;

/// The stable code of a [`Repair`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RepairCode {
    /// Argument text wrapped in a markdown code fence was unwrapped.
    MarkdownFence,
    /// Comments were removed from argument text.
    JsonComments,
    /// A trailing comma in argument text was dropped.
    TrailingComma,
    /// Single-quoted strings in argument text were read as strings.
    SingleQuotes,
    /// Unquoted object keys in argument text were read as strings.
    UnquotedKeys,
    /// Python's `True`, `False` and `None` in argument text were read as JSON literals.
    PythonLiterals,
    /// Arguments sent as a JSON string holding a JSON object were decoded.
    DoubleEncoded,
    /// An integer sent as text (`"42"`) was parsed.
    IntFromString,
    /// An integer sent as a whole float (`5.0`, `1e3`) was read as the integer.
    IntFromFloat,
    /// A number sent as text (`"3.5"`) was parsed.
    NumberFromString,
    /// A boolean sent as text (`"true"`, `"yes"`, `"off"`) was parsed.
    BoolFromString,
    /// A boolean sent as `1` or `0` was converted.
    BoolFromInt,
    /// A number sent for a string field was written as decimal text.
    StringFromNumber,
    /// A one-element array sent for a single value was unwrapped.
    UnwrapSingleton,
    /// An enum value in the wrong case was given its declared spelling.
    EnumCase,
    /// An enum value with surrounding spaces, quotes or backticks was trimmed.
    EnumTrimmed,
    /// An enum value sent as a number, boolean or numeric text was matched to its value.
    EnumFromScalar,
    /// An array or object sent as JSON text was parsed.
    ParsedJsonString,
    /// A single value sent for an array was wrapped in one.
    WrapInArray,
    /// A key that differed from a declared field only in case or style was renamed.
    KeyRenamed,
    /// `null` for an optional, non-nullable field was treated as omitted.
    NullAsOmitted,
    /// A `_type` tag in the wrong case was given its declared spelling.
    UnionTagCase,
    /// A missing `_type` tag was inferred from the only variant the value fits.
    UnionTagInferred,
    /// An undeclared key was dropped (the policy ignores unknown keys).
    ExtraIgnored,
    /// A map sent as an array of `{"key": .., "value": ..}` entries (or as `[]`) was read as
    /// the object, for a dialect that does not write maps so.
    MapFromEntries,
    /// Not a repair but the summary of those not listed: past the policy's
    /// [`max_repairs`](crate::Limits::max_repairs) a repair is counted, never built, and this
    /// one entry, last, says how many more there were ([`Repair::not_shown`]).
    TooManyRepairs,
}

impl RepairCode {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// What the repair did, in words, for logs.
    pub fn describe(self) -> &'static str {
        match self {
            RepairCode::MarkdownFence => "removed a markdown code fence",
            RepairCode::JsonComments => "removed comments",
            RepairCode::TrailingComma => "dropped a trailing comma",
            RepairCode::SingleQuotes => "read single-quoted strings",
            RepairCode::UnquotedKeys => "read unquoted keys",
            RepairCode::PythonLiterals => "read Python True/False/None",
            RepairCode::DoubleEncoded => "decoded arguments sent as a JSON string",
            RepairCode::IntFromString => "read an integer from text",
            RepairCode::IntFromFloat => "read an integer from a whole float",
            RepairCode::NumberFromString => "read a number from text",
            RepairCode::BoolFromString => "read a boolean from text",
            RepairCode::BoolFromInt => "read a boolean from 1 or 0",
            RepairCode::StringFromNumber => "wrote a number as text",
            RepairCode::UnwrapSingleton => "unwrapped a one-element array",
            RepairCode::EnumCase => "matched an allowed value ignoring case and word style",
            RepairCode::EnumTrimmed => "trimmed spaces or quotes around an allowed value",
            RepairCode::EnumFromScalar => "matched an allowed value from a number or boolean",
            RepairCode::ParsedJsonString => "parsed JSON sent inside a string",
            RepairCode::WrapInArray => "wrapped a single value in an array",
            RepairCode::KeyRenamed => "renamed a key to the declared field",
            RepairCode::NullAsOmitted => "treated null as an omitted optional field",
            RepairCode::UnionTagCase => "matched `_type` ignoring case",
            RepairCode::UnionTagInferred => "inferred the missing `_type`",
            RepairCode::ExtraIgnored => "dropped an undeclared key",
            RepairCode::MapFromEntries => "read an array of {key, value} entries as an object",
            RepairCode::TooManyRepairs => "made more repairs than are listed",
        }
    }

    /// Whether the repair is made to the argument text as a whole (path `""`, `from` the text),
    /// before any value is read.
    pub fn is_text_repair(self) -> bool {
        matches!(
            self,
            RepairCode::MarkdownFence
                | RepairCode::JsonComments
                | RepairCode::TrailingComma
                | RepairCode::SingleQuotes
                | RepairCode::UnquotedKeys
                | RepairCode::PythonLiterals
                | RepairCode::DoubleEncoded
        )
    }
}

impl fmt::Display for RepairCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One lenient step coercion took: what it found at `path` and what it made of it.
///
/// `from` and `to` say only what is true: a value nothing replaced (an undeclared key dropped,
/// a code fence stripped from the text, a `null` read as an omitted field that has no default)
/// has no `to`, and a value nothing was sent for (a `_type` inferred) has no `from`. As JSON
/// ([`Repair::to_json`]) an absent side is an absent key, never `null`, which is a value a
/// model can send.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repair {
    /// Where, as a JSON Pointer (`""` is the root).
    pub path: String,
    /// What kind of repair.
    pub code: RepairCode,
    /// The value as sent (for argument-text repairs, the text); long strings are cut after 1024
    /// characters and deep or long arrays and objects abridged, so a diagnostic stays small.
    /// `None` where nothing was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Value>,
    /// The value it became, abridged like `from`; `None` where nothing took its place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<Value>,
    /// For [`RepairCode::TooManyRepairs`] only: how many repairs were made and not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_shown: Option<usize>,
}

impl Repair {
    /// A repair at `path` that made `to` of `from`.
    pub fn new(path: impl Into<String>, code: RepairCode, from: Value, to: Value) -> Self {
        Repair {
            path: path.into(),
            code,
            from: Some(from),
            to: Some(to),
            not_shown: None,
        }
    }

    /// A repair at `path` that took `from` away with nothing in its place (a key dropped, a
    /// fence stripped from the text).
    pub fn removed(path: impl Into<String>, code: RepairCode, from: Value) -> Self {
        Repair {
            path: path.into(),
            code,
            from: Some(from),
            to: None,
            not_shown: None,
        }
    }

    /// A repair at `path` that supplied `to` where nothing was sent (a `_type` inferred).
    pub fn supplied(path: impl Into<String>, code: RepairCode, to: Value) -> Self {
        Repair {
            path: path.into(),
            code,
            from: None,
            to: Some(to),
            not_shown: None,
        }
    }

    /// The [`RepairCode::TooManyRepairs`] entry saying that `not_shown` repairs were made and
    /// not listed.
    pub fn too_many(not_shown: usize) -> Self {
        Repair {
            path: String::new(),
            code: RepairCode::TooManyRepairs,
            from: None,
            to: None,
            not_shown: Some(not_shown),
        }
    }

    /// A one-line description for logs: where, what was done, and to what.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith_types::{Repair, RepairCode};
    ///
    /// let repair = Repair::new("/count", RepairCode::IntFromString, json!("42"), json!(42));
    /// assert_eq!(repair.message(), "`count`: read an integer from text: \"42\" -> 42");
    /// let dropped = Repair::removed("/colour", RepairCode::ExtraIgnored, json!(1));
    /// assert_eq!(dropped.message(), "`colour`: dropped an undeclared key (its value was 1)");
    /// let fence = Repair::removed("", RepairCode::MarkdownFence, json!("```json\n{}\n```"));
    /// assert_eq!(fence.message(), "arguments: removed a markdown code fence");
    /// assert_eq!(Repair::too_many(7).message(), "arguments: 7 more repairs were made and not listed");
    /// ```
    pub fn message(&self) -> String {
        let at = display_path(&self.path);
        let what = self.code.describe();
        match (&self.from, &self.to) {
            _ if self.code == RepairCode::TooManyRepairs => {
                let more = self.not_shown.unwrap_or_default();
                let repairs = if more == 1 {
                    "repair was"
                } else {
                    "repairs were"
                };
                format!("{at}: {more} more {repairs} made and not listed")
            }
            (Some(from), Some(to)) => format!("{at}: {what}: {} -> {}", short(from), short(to)),
            (None, Some(to)) => format!("{at}: {what}: {}", short(to)),
            // The text itself is `from`; the message says what was done to it.
            (Some(_), None) if self.code.is_text_repair() => format!("{at}: {what}"),
            (Some(Value::Null) | None, None) => format!("{at}: {what}"),
            (Some(from), None) => format!("{at}: {what} (its value was {})", short(from)),
        }
    }

    /// The repair as JSON, with its message: `from`, `to` and `not_shown` only where it has
    /// them.
    pub fn to_json(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("message".to_owned(), Value::String(self.message()));
        }
        value
    }
}

/// The stable code of a [`CoerceError`]. Names follow pydantic's where one fits.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorCode {
    /// Argument text is not JSON (or not a repairable near-JSON).
    JsonInvalid,
    /// Arguments are valid JSON but not an object.
    ArgumentsType,
    /// An object in argument text has the same key twice, a map the same key in two entries, or
    /// a struct one field under two of its names (its name and an alias).
    DuplicateKey,
    /// A required field is missing.
    Missing,
    /// A key the struct does not declare.
    ExtraForbidden,
    /// A string was expected.
    StringType,
    /// An integer was expected and the value is not one.
    IntType,
    /// Text could not be read as an integer without loss.
    IntParsing,
    /// A float that is not exactly an integer was sent for one: it has a fractional part, or
    /// it is past 2^53, where a float may not be the integer that was written.
    IntFromFloat,
    /// An integer outside the 64-bit range (below `i64::MIN` or above `u64::MAX`).
    IntOutOfRange,
    /// A number was expected.
    FloatType,
    /// Text could not be read as a finite number.
    FloatParsing,
    /// NaN or infinity was sent for a number.
    FiniteNumber,
    /// A number too small for a 64-bit float (`1e-400`), which would be read as 0.
    FloatOutOfRange,
    /// A boolean was expected.
    BoolType,
    /// Text or a number could not be read as a boolean.
    BoolParsing,
    /// Not one of the enum's values.
    Enum,
    /// An array was expected.
    ListType,
    /// An object was expected.
    DictType,
    /// `_type` names no variant of the union.
    UnionTagInvalid,
    /// `_type` is missing and the variant cannot be told from the value.
    UnionTagNotFound,
    /// No member of an untagged union accepts the value.
    UnionNoMatch,
    /// Shorter than `minLength`.
    StringTooShort,
    /// Longer than `maxLength`.
    StringTooLong,
    /// Does not match `pattern`.
    StringPatternMismatch,
    /// Fewer items than `minItems`.
    TooShort,
    /// More items than `maxItems`.
    TooLong,
    /// An item equal to an earlier one, where `uniqueItems` wants each once.
    DuplicateItem,
    /// Not greater than `exclusiveMinimum`.
    GreaterThan,
    /// Less than `minimum`.
    GreaterThanEqual,
    /// Not less than `exclusiveMaximum`.
    LessThan,
    /// Greater than `maximum`.
    LessThanEqual,
    /// Not a multiple of `multipleOf`.
    MultipleOf,
    /// Nested deeper than the policy's depth limit.
    TooDeep,
    /// A string, array, object or argument text past the policy's size limits, or arguments
    /// holding more JSON values than its `max_values` (JSON text inside strings counted): the
    /// error says the limit and, where it is known, the size that was sent.
    TooLarge,
    /// More errors than the policy reports; the rest are summarised.
    TooManyErrors,
    /// The value needed a repair, and the policy is strict.
    RepairRefused,
    /// The type itself is broken (a reference to no definition).
    SchemaInvalid,
    /// The value fits the type, but the Rust type it is deserialized into rejects it: the
    /// type's `Describe` and its `Deserialize` disagree.
    TypeMismatch,
    /// The value fits the type but breaks a rule of the JSON Schema the type was read from, one
    /// the type model does not hold (`not`, `if`/`then`, `contains`, `dependentRequired`, ...):
    /// the error names the keyword and where it is in the schema.
    SchemaViolation,
}

impl ErrorCode {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem with the input, located and explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoerceError {
    /// Where, as a JSON Pointer (`""` is the root).
    pub path: String,
    /// What kind of problem.
    pub code: ErrorCode,
    /// The offending value, or `None` where it is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// What was expected, in words: `"an integer"`, `"at most 5 items"`.
    pub expected: String,
    /// The allowed values or names, where there is a closed set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<String>,
    /// The nearest allowed value or name, where one is close.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub did_you_mean: Option<String>,
}

impl CoerceError {
    /// An error at `path` with no allowed list or suggestion.
    pub fn new(
        path: impl Into<String>,
        code: ErrorCode,
        input: Option<Value>,
        expected: impl Into<String>,
    ) -> Self {
        CoerceError {
            path: path.into(),
            code,
            input,
            expected: expected.into(),
            allowed: Vec::new(),
            did_you_mean: None,
        }
    }

    /// Sets the allowed values, and the nearest of them to `given` when one is close.
    pub fn with_allowed(mut self, allowed: Vec<String>, given: Option<&str>) -> Self {
        self.did_you_mean = given.and_then(|g| did_you_mean(g, allowed.iter().map(String::as_str)));
        self.allowed = allowed;
        self
    }

    /// The short message a model reads: where, what was wrong, what to send instead.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith_types::{CoerceError, ErrorCode};
    ///
    /// let e = CoerceError::new("/count", ErrorCode::IntParsing, Some(json!("4x2")), "an integer")
    ///     .with_allowed(vec![], None);
    /// assert_eq!(e.message(), "`count`: expected an integer, got \"4x2\"");
    /// ```
    pub fn message(&self) -> String {
        let mut out = format!("{}: ", display_path(&self.path));
        match (&self.code, &self.input) {
            (ErrorCode::Missing, _) => {
                out.push_str("missing required field; expected ");
                out.push_str(&self.expected);
            }
            (ErrorCode::ExtraForbidden, _) => {
                out.push_str("unknown field");
                if !self.allowed.is_empty() {
                    out.push_str("; valid fields are ");
                    out.push_str(&quoted_list(&self.allowed));
                }
            }
            (_, input) => {
                out.push_str("expected ");
                if self.allowed.is_empty() {
                    out.push_str(&self.expected);
                } else {
                    // The list says more than the words "one of the allowed values" would.
                    out.push_str("one of ");
                    out.push_str(&quoted_list(&self.allowed));
                }
                if let Some(input) = input {
                    out.push_str(", got ");
                    out.push_str(&short(input));
                }
            }
        }
        if let Some(near) = &self.did_you_mean {
            out.push_str(&format!(" (did you mean \"{near}\"?)"));
        }
        out
    }

    /// The error as JSON, with its message.
    pub fn to_json(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("message".to_owned(), Value::String(self.message()));
        }
        value
    }
}

impl fmt::Display for CoerceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for CoerceError {}

/// Every error found in one input (never empty when returned by coercion).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct CoerceErrors(pub Vec<CoerceError>);

impl CoerceErrors {
    /// The errors, in the order they were found (document order).
    pub fn iter(&self) -> std::slice::Iter<'_, CoerceError> {
        self.0.iter()
    }

    /// How many errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The errors as a JSON array, each with its message.
    pub fn to_json(&self) -> Value {
        Value::Array(self.0.iter().map(CoerceError::to_json).collect())
    }
}

impl fmt::Display for CoerceErrors {
    /// One line a problem, headed by how many: what a model reads to fix its call.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.len() {
            1 => writeln!(f, "The arguments have 1 problem:")?,
            n => writeln!(f, "The arguments have {n} problems:")?,
        }
        for e in &self.0 {
            writeln!(f, "- {}", e.message())?;
        }
        Ok(())
    }
}

impl std::error::Error for CoerceErrors {}

impl IntoIterator for CoerceErrors {
    type Item = CoerceError;
    type IntoIter = std::vec::IntoIter<CoerceError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// What a JSON value is, in words, for a message: `null`, `a boolean`, `a number`, `a string`,
/// `an array` or `an object`.
///
/// ```
/// assert_eq!(toolsmith_types::value_kind(&serde_json::json!([1])), "an array");
/// ```
pub fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The candidate nearest to `given` when it is close enough to be a likely typo.
///
/// A `given` longer than 256 bytes is no typo of a name and gets no suggestion, so the cost of a
/// suggestion never grows with what was sent.
///
/// ```
/// let near = toolsmith_types::did_you_mean("hgih", ["low", "medium", "high"]);
/// assert_eq!(near.as_deref(), Some("high"));
/// assert_eq!(toolsmith_types::did_you_mean("zzzzzz", ["low", "high"]), None);
/// assert_eq!(toolsmith_types::did_you_mean(&"high".repeat(100), ["high"]), None);
/// ```
pub fn did_you_mean<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    if given.len() > MAX_TYPO_BYTES {
        return None;
    }
    let given = given.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&given, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_owned())
}

/// `n` with its thousands separated by commas (`1,572,864`), as sizes are written in messages.
pub(crate) fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The longest text, in bytes, that [`did_you_mean`] compares with the candidates.
const MAX_TYPO_BYTES: usize = 256;

/// A path as a model reads it: `` `metadata.tags[2]` ``, or `arguments` for the root.
fn display_path(pointer: &str) -> String {
    if pointer.is_empty() {
        return "arguments".to_owned();
    }
    let mut out = String::from("`");
    for (i, segment) in crate::pointer::segments(pointer).enumerate() {
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) && i > 0 {
            out.push_str(&format!("[{segment}]"));
        } else {
            if i > 0 {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    out.push('`');
    out
}

fn quoted_list(items: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut out = items
        .iter()
        .take(SHOWN)
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        out.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    out
}

/// A JSON value shortened for a message.
pub(crate) fn short(value: &Value) -> String {
    const MAX: usize = 80;
    let text = value.to_string();
    if text.chars().count() <= MAX {
        text
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}...")
    }
}

/// The JSON Pointer of `innermost_first` (the segments from the value up to the root), kept
/// small for a diagnostic: a key longer than [`MAX_SEGMENT_CHARS`] is cut there and marked `…`,
/// and of a pointer that would still be longer than [`MAX_POINTER_BYTES`] the first segments are
/// replaced by one `…`, so that no input makes a path costly to render or to keep.
pub(crate) fn bounded_pointer<S: AsRef<str>>(
    innermost_first: impl IntoIterator<Item = S>,
) -> String {
    let mut segments: Vec<String> = Vec::new();
    let mut bytes = 0;
    let mut elided = false;
    for segment in innermost_first {
        let text = pointer_push("", &abridged_segment(segment.as_ref()));
        if bytes + text.len() > MAX_POINTER_BYTES && !segments.is_empty() {
            elided = true;
            break;
        }
        bytes += text.len();
        segments.push(text);
    }
    let mut pointer = String::with_capacity(bytes + 4);
    if elided {
        pointer.push_str("/…");
    }
    for segment in segments.iter().rev() {
        pointer.push_str(segment);
    }
    pointer
}

/// Longest key, in characters, that a rendered path holds whole.
pub(crate) const MAX_SEGMENT_CHARS: usize = 256;

/// Longest rendered path, in bytes (give or take the last segment and the mark of elision).
pub(crate) const MAX_POINTER_BYTES: usize = 2048;

/// `key`, cut after [`MAX_SEGMENT_CHARS`] characters and marked `…` when longer.
pub(crate) fn abridged_segment(key: &str) -> Cow<'_, str> {
    match key.char_indices().nth(MAX_SEGMENT_CHARS) {
        None => Cow::Borrowed(key),
        Some((end, _)) => Cow::Owned(format!("{}…", &key[..end])),
    }
}

/// Text as a diagnostic holds it: cut after 1024 characters.
pub(crate) fn abridged_text(text: &str) -> Value {
    const MAX_CHARS: usize = 1024;
    if text.len() <= MAX_CHARS {
        return Value::String(text.to_owned());
    }
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    Value::String(cut)
}
