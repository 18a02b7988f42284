//! The JSON reader: JSON text read within limits, for the argument path and for JSON text that
//! coercion finds inside a string.
//!
//! Strict JSON text is read within limits: its nesting is measured by a flat scan before any
//! parser runs, its values are counted as they are read (every value, keys not) and an array or
//! object past the limit on items stops the reading, so what is refused is never built, and a
//! key twice is refused. `serde_json` reads it; text nested deeper than `serde_json`'s own
//! recursion limit (but within the policy's) is read by `jsonc-parser` with every leniency off.
//! That near-JSON parser also reads, under the leniencies a caller allows (each named by the
//! repair that reports it), the text the argument path repairs (`arguments/text.rs` decides
//! which leniencies to allow, and reports them); since it builds its whole tree before it
//! answers, a flat scan refuses text past the limits on items and values before it runs.
//!
//! [`read_json_text`] is the one rule for JSON text sent inside a string: parsed, or refused
//! with the limit or the key that refused it.
//!
//! This module must never read text another way (as a string, or as near-JSON it was not asked
//! to take) because it is too deep or too large to read, run a recursive parser on text whose
//! nesting it has not measured, or build a value past a limit it refuses; and it uses nothing of
//! coercion or the argument path, which sit above it: what it read, or why it refused, is data
//! that they turn into their diagnostics.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::ops::ControlFlow;

use jsonc_parser::errors::{ParseError, ParseErrorKind};
use jsonc_parser::{CollectOptions, ParseOptions, ast, parse_to_ast};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::diagnostics::{
    CoerceError, ErrorCode, RepairCode, abridged_segment, bounded_pointer, count,
};
use crate::literal::NumberLiterals;
use crate::policy::Limits;

/// What JSON text sent inside a string (an array or object for a container) reads as.
pub(crate) enum JsonText<'l> {
    /// The JSON value it holds, and how many values that is.
    Value(Value, usize),
    /// It is not JSON text: the string is a string.
    NotJson,
    /// It is JSON text that the limits or the rules refuse (too deep, too many items, a key
    /// twice): an error, never another reading.
    Refused(Refusal<'l>),
}

/// Why JSON text inside a string was refused, and the limits in force.
pub(crate) struct Refusal<'l>(Failure, &'l Limits);

impl Refusal<'_> {
    /// The error's code and expectation, for the string's own path.
    pub(crate) fn code_and_expected(self) -> (ErrorCode, String) {
        let limits = self.1;
        match self.0 {
            Failure::TooDeep => (
                ErrorCode::TooDeep,
                format!(
                    "at most {} levels of nesting (JSON text inside a string counts)",
                    limits.max_depth
                ),
            ),
            Failure::Duplicate { reversed_path, key } => {
                let within = bounded_pointer(reversed_path);
                let at = if within.is_empty() {
                    String::new()
                } else {
                    format!(" (at {within})")
                };
                (
                    ErrorCode::DuplicateKey,
                    format!(
                        "JSON text with each key at most once: `{}` is twice{at}",
                        abridged_segment(&key)
                    ),
                )
            }
            Failure::TooManyItems { max, .. } => (
                ErrorCode::TooLarge,
                format!(
                    "JSON text whose arrays and objects hold at most {} items each; one sent \
                     holds more",
                    count(max)
                ),
            ),
            Failure::TooManyValues { max, sent } => {
                let sent = sent.map_or_else(|| "more".to_owned(), count);
                (
                    ErrorCode::TooLarge,
                    format!(
                        "JSON text of at most {} values here (the arguments hold at most {} \
                         JSON values in all, JSON text inside strings included); {sent} were \
                         sent",
                        count(max),
                        count(limits.max_values)
                    ),
                )
            }
            Failure::Invalid(invalid) => (ErrorCode::JsonInvalid, invalid.reason),
        }
    }
}

/// Reads `text`, sent inside a string, as strict JSON nested at most `max_depth` levels below
/// its outermost value and holding at most `max_values` values (what is left of the
/// arguments' limit): the one rule for JSON inside a string, as for argument text (the depth
/// is measured before any parser runs, the values are counted as they are read, and limits and
/// duplicate keys are errors).
pub(crate) fn read_json_text<'l>(
    text: &str,
    max_depth: usize,
    max_values: usize,
    limits: &'l Limits,
) -> JsonText<'l> {
    if nesting_exceeds(text, max_depth) {
        return JsonText::Refused(Refusal(Failure::TooDeep, limits));
    }
    let within = Limits {
        max_values,
        ..limits.clone()
    };
    match read_strict(text, &within) {
        Ok(read) => JsonText::Value(read.value, read.values),
        Err(Failure::Invalid(_)) => JsonText::NotJson,
        Err(failure) => JsonText::Refused(Refusal(failure, limits)),
    }
}

/// The `too_large` error for arguments holding more than `max` JSON values: `sent` of them,
/// where that is known.
pub(crate) fn too_many_values(max: usize, sent: Option<usize>) -> CoerceError {
    let sent = match sent {
        Some(sent) => count(sent),
        None => format!("more than {}", count(max)),
    };
    CoerceError::new(
        "",
        ErrorCode::TooLarge,
        None,
        format!(
            "at most {} JSON values in all (every string, number, boolean, null, array and \
             object counts; keys do not); {sent} were sent",
            count(max)
        ),
    )
}

/// Why text could not be read as a JSON value.
pub(crate) enum Failure {
    /// Not JSON, nor repairable near-JSON: the parser's reason and the byte where it stopped.
    Invalid(Invalid),
    /// Nested deeper than the lenient parser allows.
    TooDeep,
    /// The object at the end of `reversed_path` (its segments from that object up to the
    /// root) has `key` twice.
    Duplicate {
        reversed_path: Vec<String>,
        key: String,
    },
    /// The array or object at the end of `reversed_path` has more than `max` items; where in
    /// the text is not known when `somewhere`.
    TooManyItems {
        reversed_path: Vec<String>,
        max: usize,
        somewhere: bool,
    },
    /// The text holds more than `max` values: `sent` of them, where they could be counted.
    TooManyValues { max: usize, sent: Option<usize> },
}

impl Failure {
    /// Records that this failure, unwinding, passed through `segment`.
    fn unwinding_through(&mut self, segment: &str) {
        if let Failure::Duplicate { reversed_path, .. }
        | Failure::TooManyItems { reversed_path, .. } = self
        {
            reversed_path.push(abridged_segment(segment).into_owned());
        }
    }
}

/// Why text is not JSON: what is wrong, and the byte offset of the token that is.
pub(crate) struct Invalid {
    /// What is wrong, without a position.
    pub(crate) reason: String,
    pub(crate) at: usize,
}

/// `serde_json`'s message without the position it appends (which [`Invalid`] says itself).
fn serde_reason(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message
        .strip_suffix(&suffix)
        .map_or_else(|| message.clone(), str::to_owned)
}

/// A JSON value as one reader (strict, or `jsonc-parser`'s) read it, and what the reading
/// learnt of it.
pub(crate) struct ReadValue {
    pub(crate) value: Value,
    pub(crate) numbers: Numbers,
    /// How many JSON values `value` holds (itself too).
    pub(crate) values: usize,
}

impl ReadValue {
    /// `{}`, what blank text reads as.
    pub(crate) fn empty_object() -> Self {
        ReadValue {
            value: Value::Object(Map::new()),
            numbers: Numbers::NoFloat,
            values: 1,
        }
    }
}

/// What a reading learnt of a value's numbers: whether any is a float, and where their literals
/// are when the text itself cannot say.
pub(crate) enum Numbers {
    /// No float: every literal is its number's text.
    NoFloat,
    /// A float, read from strict JSON: the text holds every literal.
    InText,
    /// The literals of the floats whose text says more than their value, by their number's
    /// place in document order (a lenient reading, whose text is not strict JSON).
    Listed(Vec<(usize, Box<str>)>),
}

impl Numbers {
    /// Where the literals are, for a value read from `text`.
    pub(crate) fn in_text(self, text: Cow<'_, str>) -> NumberLiterals<'_> {
        match self {
            Numbers::NoFloat => NumberLiterals::None,
            Numbers::InText => NumberLiterals::Text(text),
            Numbers::Listed(listed) => NumberLiterals::Listed(listed),
        }
    }
}

/// The near-JSON leniencies `jsonc-parser` can take, each named by its repair.
pub(crate) const LENIENCIES: [RepairCode; 4] = [
    RepairCode::JsonComments,
    RepairCode::TrailingComma,
    RepairCode::SingleQuotes,
    RepairCode::UnquotedKeys,
];

/// Parse options allowing every leniency in [`LENIENCIES`] except those in `without`, and
/// nothing else (no missing commas, hexadecimal or `+1` numbers, `NaN`, JSON5 escapes).
pub(crate) fn parse_options(without: &[RepairCode]) -> ParseOptions {
    let allow = |code| !without.contains(&code);
    ParseOptions {
        allow_comments: allow(RepairCode::JsonComments),
        allow_loose_object_property_names: allow(RepairCode::UnquotedKeys),
        allow_trailing_commas: allow(RepairCode::TrailingComma),
        allow_missing_commas: false,
        allow_single_quoted_strings: allow(RepairCode::SingleQuotes),
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// `jsonc-parser`'s error about `text` as a failure; the position is the offending token's (the
/// parser puts a missing comma or colon right after the token before it: the token after is
/// the one in the way).
fn from_parse_error(text: &str, e: &ParseError) -> Failure {
    let mut at = e.range().start;
    match e.kind() {
        ParseErrorKind::NestingDepthExceeded => return Failure::TooDeep,
        ParseErrorKind::ExpectedComma | ParseErrorKind::ExpectedColonAfterObjectKey => {
            let rest = text.get(at..).unwrap_or_default();
            at += rest.len() - rest.trim_start().len();
        }
        _ => {}
    }
    Failure::Invalid(Invalid {
        reason: lowercase_first(&e.kind().to_string()),
        at,
    })
}

/// Reads strict JSON with `serde_json`, rejecting duplicate keys. Text nested deeper than
/// `serde_json`'s recursion limit (but within the policy's, already checked) is read by
/// `jsonc-parser` with every leniency off. Past the limit on values the reading stops, and the
/// text is read once more, building nothing, to count them.
pub(crate) fn read_strict(text: &str, limits: &Limits) -> Result<ReadValue, Failure> {
    let stop = RefCell::new(None);
    let saw_float = Cell::new(false);
    let values = Cell::new(0);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let result = ValueSeed {
        stop: &stop,
        saw_float: &saw_float,
        values: &values,
        max_items: limits.max_items,
        max_values: limits.max_values,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    let error = match result {
        Ok(value) => {
            // Only a float's literal can say more than its value; most arguments have none.
            let numbers = if saw_float.get() {
                Numbers::InText
            } else {
                Numbers::NoFloat
            };
            return Ok(ReadValue {
                value,
                numbers,
                values: values.get(),
            });
        }
        Err(error) => error,
    };
    if let Some(stop) = stop.into_inner() {
        return Err(match stop {
            Failure::TooManyValues { max, sent: None } => Failure::TooManyValues {
                max,
                sent: count_values(text),
            },
            other => other,
        });
    }
    if error.to_string().starts_with("recursion limit exceeded") {
        return lenient_value(text, limits, &parse_options(&LENIENCIES));
    }
    // serde_json's position is that of the last byte it read: the offending token's first, or
    // the end of the text.
    Err(Failure::Invalid(Invalid {
        at: byte_offset(text, error.line(), error.column()),
        reason: serde_reason(&error),
    }))
}

/// `text` read by jsonc-parser under `options` (blank text is `{}`), duplicate keys rejected.
/// The parser builds its whole tree first, so an array or object past the limit on items, and
/// text past the limit on values, are refused before it runs, by a flat scan.
pub(crate) fn lenient_value(
    text: &str,
    limits: &Limits,
    options: &ParseOptions,
) -> Result<ReadValue, Failure> {
    let values = scan_values(text, limits)?;
    let ast = parse_to_ast(text, &CollectOptions::default(), options)
        .map_err(|e| from_parse_error(text, &e))?;
    match ast.value {
        Some(value) => {
            let mut listing = Listing::default();
            let value = ast_to_value(value, &mut listing)?;
            Ok(ReadValue {
                value,
                numbers: Numbers::Listed(listing.floats),
                values,
            })
        }
        None => Ok(ReadValue::empty_object()),
    }
}

/// The literals [`ast_to_value`] keeps: those of floats whose text says more than their value,
/// by their number's place among all numbers.
#[derive(Default)]
struct Listing {
    /// Numbers met so far.
    numbers: usize,
    floats: Vec<(usize, Box<str>)>,
}

/// Builds a [`Value`] like `serde_json`'s own, but a duplicate key, an array or object of
/// more than `max_items`, or a value past the `max_values`th is an error (`stop` says which:
/// serde's own error cannot); notes whether any number was a float, and counts the values.
/// Arrays take no more room than their items need.
#[derive(Clone, Copy)]
struct ValueSeed<'c> {
    stop: &'c RefCell<Option<Failure>>,
    saw_float: &'c Cell<bool>,
    /// The values read so far.
    values: &'c Cell<usize>,
    max_items: usize,
    max_values: usize,
}

impl ValueSeed<'_> {
    /// Records that the error now unwinding passed through `segment`.
    fn unwinding_through(&self, segment: &str) {
        if let Some(stop) = self.stop.borrow_mut().as_mut() {
            stop.unwinding_through(segment);
        }
    }

    /// Stops the reading with `failure`.
    fn stop<E: de::Error>(&self, failure: Failure) -> E {
        *self.stop.borrow_mut() = Some(failure);
        de::Error::custom("stopped")
    }

    fn too_many_items<E: de::Error>(&self) -> E {
        self.stop(Failure::TooManyItems {
            reversed_path: Vec::new(),
            max: self.max_items,
            somewhere: false,
        })
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        // Counted before it is read: the value past the limit is never built.
        let values = self.values.get() + 1;
        if values > self.max_values {
            return Err(self.stop(Failure::TooManyValues {
                max: self.max_values,
                sent: None,
            }));
        }
        self.values.set(values);
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        self.saw_float.set(true);
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            if items.len() == self.max_items {
                // One more item is one too many: skipped, not built.
                return match seq.next_element::<de::IgnoredAny>()? {
                    None => Ok(Value::Array(items)),
                    Some(_) => Err(self.too_many_items()),
                };
            }
            match seq.next_element_seed(self) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {
                    items.shrink_to_fit();
                    return Ok(Value::Array(items));
                }
                Err(e) => {
                    self.unwinding_through(&items.len().to_string());
                    return Err(e);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        loop {
            if object.len() == self.max_items {
                return match access.next_key::<de::IgnoredAny>()? {
                    None => Ok(Value::Object(object)),
                    Some(_) => Err(self.too_many_items()),
                };
            }
            let Some(key) = access.next_key::<String>()? else {
                break;
            };
            let value = match access.next_value_seed(self) {
                Ok(value) => value,
                Err(e) => {
                    self.unwinding_through(&key);
                    return Err(e);
                }
            };
            match object.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(slot) => {
                    return Err(self.stop(Failure::Duplicate {
                        key: slot.key().clone(),
                        reversed_path: Vec::new(),
                    }));
                }
            }
        }
        Ok(Value::Object(object))
    }
}

/// How many JSON values strict JSON `text` holds, read without building any of them; `None`
/// when it is not strict JSON (or nests deeper than `serde_json` reads).
fn count_values(text: &str) -> Option<usize> {
    let values = Cell::new(0);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    CountSeed(&values).deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(values.get())
}

/// Counts a value and the values inside it, keeping nothing (strings are looked at where they
/// lie in the text).
#[derive(Clone, Copy)]
struct CountSeed<'c>(&'c Cell<usize>);

impl<'de> DeserializeSeed<'de> for CountSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.0.set(self.0.get() + 1);
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CountSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        while access.next_key::<de::IgnoredAny>()?.is_some() {
            access.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// Converts a `jsonc-parser` tree to a [`Value`], rejecting duplicate keys, keeping numbers
/// exact and the literals that say more than them in `listing`. Recursion is bounded by the
/// depth check made before parsing, and by the parser's own nesting limit.
fn ast_to_value(value: ast::Value<'_>, listing: &mut Listing) -> Result<Value, Failure> {
    // The path to a duplicate key is gathered as its error unwinds, never built on the way down.
    let unwinding_through = |segment: &str, mut failure: Failure| {
        failure.unwinding_through(segment);
        failure
    };
    Ok(match value {
        ast::Value::StringLit(s) => Value::String(s.value.into_owned()),
        ast::Value::NumberLit(n) => match n.value.parse::<Number>() {
            Ok(number) => {
                if number.is_f64() && n.value != number.to_string() {
                    listing.floats.push((listing.numbers, Box::from(n.value)));
                }
                listing.numbers += 1;
                Value::Number(number)
            }
            Err(e) => {
                return Err(Failure::Invalid(Invalid {
                    reason: format!(
                        "the number {} cannot be read: {}",
                        n.value,
                        serde_reason(&e)
                    ),
                    at: n.range.start,
                }));
            }
        },
        ast::Value::BooleanLit(b) => Value::Bool(b.value),
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::Array(array) => {
            let mut items = Vec::with_capacity(array.elements.len());
            for (i, element) in array.elements.into_iter().enumerate() {
                let item = ast_to_value(element, listing)
                    .map_err(|failure| unwinding_through(&i.to_string(), failure))?;
                items.push(item);
            }
            Value::Array(items)
        }
        ast::Value::Object(object) => {
            let mut map = Map::new();
            for property in object.properties {
                let key = property.name.into_string();
                let value = ast_to_value(property.value, listing)
                    .map_err(|failure| unwinding_through(&key, failure))?;
                match map.entry(key) {
                    Entry::Vacant(slot) => {
                        slot.insert(value);
                    }
                    Entry::Occupied(slot) => {
                        return Err(Failure::Duplicate {
                            reversed_path: Vec::new(),
                            key: slot.key().clone(),
                        });
                    }
                }
            }
            Value::Object(map)
        }
    })
}

/// Whether arrays and objects in `text` nest deeper than `max_depth` (the outermost is depth 0).
/// A flat scan, so it is safe on any input, run before any recursive parser.
pub(crate) fn nesting_exceeds(text: &str, max_depth: usize) -> bool {
    let mut open = 0usize;
    let flow = for_each_code_byte(text, |_, b| {
        match b {
            b'[' | b'{' => {
                open += 1;
                if open > max_depth.saturating_add(1) {
                    return ControlFlow::Break(());
                }
            }
            b']' | b'}' => open = open.saturating_sub(1),
            _ => {}
        }
        ControlFlow::Continue(())
    });
    flow.is_break()
}

/// How many JSON values `text` holds, counted by a flat scan, like [`nesting_exceeds`] and run
/// after it (so the stack of counts is no deeper than the depth limit): the outermost value and
/// each item of an array or object (an object's entry counted once, by its key). For text a
/// parser reads, that is every value it builds. The scan stops at the first array or object
/// past `max_items` items, and fails past `max_values` values, unless the values were over
/// their limit first (document order decides, as for the strict reader); then it counts on,
/// for the error to say how many were sent.
fn scan_values(text: &str, limits: &Limits) -> Result<usize, Failure> {
    // Per open array or object: items so far, and whether the next value starts an item.
    let mut counts: Vec<(usize, bool)> = Vec::new();
    let mut values = 0usize;
    let flow = for_each_code_byte(text, |_, b| {
        let starts_value = !b.is_ascii_whitespace() && !matches!(b, b',' | b':' | b']' | b'}');
        if starts_value {
            match counts.last_mut() {
                Some((count, expecting)) if *expecting => {
                    *count += 1;
                    *expecting = false;
                    if *count > limits.max_items && values <= limits.max_values {
                        return ControlFlow::Break(());
                    }
                    values += 1;
                }
                Some(_) => {}
                // The outermost value (anything after it is for the parser to refuse).
                None => values += usize::from(values == 0),
            }
        }
        match b {
            b'[' | b'{' => counts.push((0, true)),
            b']' | b'}' => drop(counts.pop()),
            b',' => {
                if let Some((_, expecting)) = counts.last_mut() {
                    *expecting = true;
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    });
    if flow.is_break() {
        return Err(Failure::TooManyItems {
            reversed_path: Vec::new(),
            max: limits.max_items,
            somewhere: true,
        });
    }
    if values > limits.max_values {
        return Err(Failure::TooManyValues {
            max: limits.max_values,
            sent: Some(values),
        });
    }
    Ok(values)
}

/// Calls `f` with every byte of `text` outside strings and comments. A string (double- or
/// single-quoted) is passed as its opening quote alone, a comment as one space.
pub(crate) fn for_each_code_byte(
    text: &str,
    mut f: impl FnMut(usize, u8) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match (b, bytes.get(i + 1)) {
            (b'"' | b'\'', _) => {
                f(i, b)?;
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    i += if c == b'\\' { 2 } else { 1 };
                    if c == b {
                        break;
                    }
                }
            }
            (b'/', Some(b'/')) => {
                f(i, b' ')?;
                while bytes.get(i).is_some_and(|&c| c != b'\n' && c != b'\r') {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                f(i, b' ')?;
                i += 2;
                while let Some(&c) = bytes.get(i) {
                    i += 1;
                    if c == b'*' && bytes.get(i) == Some(&b'/') {
                        i += 1;
                        break;
                    }
                }
            }
            _ => {
                f(i, b)?;
                i += 1;
            }
        }
    }
    ControlFlow::Continue(())
}

/// The byte offset of a 1-based line and column (as `serde_json` reports them).
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    (line_start + column.saturating_sub(1)).min(text.len())
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
