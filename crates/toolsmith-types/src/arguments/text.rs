//! Reading argument text: what a model sends as a tool call's arguments, read into a JSON
//! object (the slow path's first step).
//!
//! The "Argument text" rules of the coercion rulebook live here; the reading itself is
//! [`crate::json`]'s, the JSON reader both this module and coercion build on. Clean JSON takes
//! one pass of `serde_json` (with duplicate keys detected). Only when that fails is the text
//! looked at again: a markdown code fence is blanked out, Python literals are rewritten, and
//! `jsonc-parser` reads the near-JSON leniencies (comments, trailing commas, single quotes,
//! unquoted keys), each of which is named in its own repair. Nesting is measured by a flat scan
//! before any recursive parser sees the text, so hostile input is an error, never a stack
//! overflow; an array or object past the limit on items, or a value past the limit on values
//! (`Limits::max_values`, every value of the arguments counted, keys not), stops the reading
//! (near-JSON, whose parser builds its whole tree first, is scanned for both before), so what is
//! refused is never built. Past the limit on values, the text is read once more, building
//! nothing, for the error to say how many values were sent.
//!
//! Rules beside the rulebook's table:
//! - a leading byte-order mark is dropped without a repair: it is transport noise, not JSON,
//!   and dropping it is what JSON readers that tolerate one do (the MCP transport does too);
//! - JSON sent inside a string, where an array or object is expected, is read by the same
//!   strict reader ([`read_json_text`](crate::json::read_json_text), which coercion calls):
//!   parsed, or refused (nested past the depth limit, an array past the item limit, more values
//!   than are left of the arguments' limit, a key twice) with an error naming the limit or the
//!   key; it is never read another way (as a string to wrap in an array) because it is too deep
//!   to parse. Text that is not JSON stays a string;
//! - the values of JSON text inside strings count toward the arguments' limit on values with
//!   the arguments' own (a union member that reads the text and is not taken adds nothing);
//!   arguments that arrive parsed (`Arguments::Json`) are counted before they are coerced,
//!   and past the limit get the error their text would;
//! - error positions are the offending token's line and column, in characters.

use std::borrow::Cow;
use std::ops::ControlFlow;

use jsonc_parser::{CollectOptions, parse_to_ast};
use serde_json::{Map, Value};

use super::{TextLength, text_too_large};
use crate::diagnostics::{
    CoerceError, CoerceErrors, ErrorCode, Repair, RepairCode, abridged_text, bounded_pointer, count,
};
use crate::json::{
    Failure, Invalid, LENIENCIES, ReadValue, for_each_code_byte, lenient_value, nesting_exceeds,
    parse_options, read_strict, too_many_values,
};
use crate::literal::NumberLiterals;
use crate::policy::Limits;

/// What argument text is read as, before the strict policy is applied.
pub(super) struct ReadArguments<'t> {
    pub(super) object: Map<String, Value>,
    /// The repairs made to the text (a handful at most: one of each kind).
    pub(super) repairs: Vec<Repair>,
    /// Where the literals of its numbers are.
    pub(super) literals: NumberLiterals<'t>,
    /// How many JSON values it holds (the object too).
    pub(super) values: usize,
}

pub(super) fn read_arguments<'t>(
    text: &'t str,
    limits: &Limits,
) -> Result<ReadArguments<'t>, CoerceErrors> {
    read_object(without_bom(text), limits, Level::Outer).map_err(|e| CoerceErrors(vec![*e]))
}

/// `text` without a leading byte-order mark: transport noise (some editors and Windows tools
/// write one before UTF-8 text), dropped silently as every JSON reader that tolerates one does,
/// and never a repair: it changes no reading.
pub(super) fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// One error about the whole text (boxed: the rare path stays off the common one's stack).
type TextError = Box<CoerceError>;

/// Whether a text is the arguments themselves or the content of a double-encoded string.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Outer,
    DoubleEncoded,
}

fn read_object<'t>(
    text: &'t str,
    limits: &Limits,
    level: Level,
) -> Result<ReadArguments<'t>, TextError> {
    if text.len() > limits.max_input_bytes {
        let length = TextLength::Exactly(text.len());
        return Err(Box::new(text_too_large(limits.max_input_bytes, length)));
    }
    if nesting_exceeds(text, limits.max_depth) {
        return Err(Box::new(too_deep(limits.max_depth)));
    }
    if text.trim().is_empty() {
        return match level {
            // Blank text is `{}`: one value, as the object sent would be.
            Level::Outer if limits.max_values == 0 => Err(Box::new(too_many_values(0, Some(1)))),
            Level::Outer => Ok(ReadArguments {
                object: Map::new(),
                repairs: Vec::new(),
                literals: NumberLiterals::None,
                values: 1,
            }),
            Level::DoubleEncoded => Err(Box::new(not_an_object(Value::String(text.to_owned())))),
        };
    }
    let read = read_value(text, limits).map_err(|failure| {
        Box::new(match failure {
            Failure::Invalid(invalid) => invalid_arguments(invalid, text),
            Failure::TooDeep => too_deep(limits.max_depth),
            Failure::Duplicate { reversed_path, key } => {
                duplicate_key(bounded_pointer(reversed_path), key)
            }
            Failure::TooManyItems {
                reversed_path,
                max,
                somewhere,
            } => {
                // Reading stopped at the first item past the limit: how many more is not known.
                let expected = if somewhere {
                    format!(
                        "argument text whose arrays and objects hold at most {} items each; one \
                         sent holds more",
                        count(max)
                    )
                } else {
                    format!("at most {} items; more were sent", count(max))
                };
                CoerceError::new(
                    bounded_pointer(reversed_path),
                    ErrorCode::TooLarge,
                    None,
                    expected,
                )
            }
            Failure::TooManyValues { max, sent } => too_many_values(max, sent),
        })
    })?;
    // Each reader stops at the limit; only a text that reads as `{}` without a value in it
    // (a fence around nothing, comments alone) is found here to hold more than a limit of 0.
    if read.values > limits.max_values {
        return Err(Box::new(too_many_values(
            limits.max_values,
            Some(read.values),
        )));
    }
    let mut repairs: Vec<Repair> = read
        .codes
        .into_iter()
        .map(|c| text_repair(text, c))
        .collect();
    match read.value {
        Value::Object(object) => Ok(ReadArguments {
            object,
            repairs,
            literals: read.literals,
            values: read.values,
        }),
        Value::String(inner) if level == Level::Outer => {
            match read_object(&inner, limits, Level::DoubleEncoded) {
                Ok(read) => {
                    repairs.push(text_repair(text, RepairCode::DoubleEncoded));
                    repairs.extend(read.repairs);
                    Ok(ReadArguments {
                        object: read.object,
                        repairs,
                        literals: read.literals.into_owned(),
                        values: read.values,
                    })
                }
                Err(e) if is_about_content(e.code) => Err(e),
                Err(_) => Err(Box::new(not_an_object(Value::String(inner)))),
            }
        }
        other => Err(Box::new(not_an_object(other))),
    }
}

/// Errors inside a double-encoded object that say more than "a string is not an object".
fn is_about_content(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::DuplicateKey | ErrorCode::TooDeep | ErrorCode::TooLarge
    )
}

/// The `json_invalid` error for argument text that is not JSON, at the token that is not.
fn invalid_arguments(invalid: Invalid, text: &str) -> CoerceError {
    let (line, column) = line_and_column(text, invalid.at);
    CoerceError::new(
        "",
        ErrorCode::JsonInvalid,
        Some(Value::String(excerpt(text, invalid.at))),
        format!(
            "a JSON object of arguments (invalid JSON: {} at line {line} column {column})",
            invalid.reason
        ),
    )
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before.get(line_start..).map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A JSON value read from argument text, possibly repaired.
struct TextValue<'t> {
    value: Value,
    /// The repairs' codes, in order.
    codes: Vec<RepairCode>,
    /// Where the number literals are.
    literals: NumberLiterals<'t>,
    /// How many JSON values `value` holds (itself too).
    values: usize,
}

impl<'t> TextValue<'t> {
    /// The value `read` as read from `text` (the text as the reader saw it) with repairs
    /// `codes`.
    fn new(read: ReadValue, text: Cow<'t, str>, codes: Vec<RepairCode>) -> Self {
        TextValue {
            value: read.value,
            codes,
            literals: read.numbers.in_text(text),
            values: read.values,
        }
    }
}

/// Reads a JSON value from text, repairing near-JSON.
fn read_value<'t>(text: &'t str, limits: &Limits) -> Result<TextValue<'t>, Failure> {
    let strict_failure = match read_strict(text, limits) {
        Ok(read) => return Ok(TextValue::new(read, Cow::Borrowed(text), Vec::new())),
        Err(Failure::Invalid(invalid)) => invalid,
        Err(other) => return Err(other),
    };

    let mut codes = Vec::new();
    let mut work = Cow::Borrowed(text);
    if let Some(unfenced) = unfence(&work) {
        work = Cow::Owned(unfenced);
        codes.push(RepairCode::MarkdownFence);
    }
    let python = rewrite_python_literals(&work);
    let rewritten = python.is_some();
    if let Some(python) = python {
        work = Cow::Owned(python);
    }
    let strict_failure = if codes.is_empty() && !rewritten {
        strict_failure
    } else if work.trim().is_empty() {
        return Ok(TextValue::new(
            ReadValue::empty_object(),
            Cow::Borrowed(""),
            codes,
        ));
    } else {
        match read_strict(&work, limits) {
            Ok(read) => {
                codes.extend(rewritten.then_some(RepairCode::PythonLiterals));
                return Ok(TextValue::new(read, work, codes));
            }
            Err(Failure::Invalid(invalid)) => invalid,
            Err(other) => return Err(other),
        }
    };

    let read = lenient_value(&work, limits, &parse_options(&[]))?;
    let leniencies: Vec<RepairCode> = LENIENCIES
        .iter()
        .filter(|code| {
            parse_to_ast(&work, &CollectOptions::default(), &parse_options(&[**code])).is_err()
        })
        .copied()
        .collect();
    if leniencies.is_empty() {
        // The lenient parser took something JSON forbids and no repair names: not ours to accept.
        return Err(Failure::Invalid(strict_failure));
    }
    codes.extend(leniencies);
    codes.extend(rewritten.then_some(RepairCode::PythonLiterals));
    Ok(TextValue::new(read, work, codes))
}

/// The text with a surrounding markdown code fence (```` ```json ... ``` ````) blanked out, so
/// positions in parser messages still point into the original text. `None` when not fenced.
fn unfence(text: &str) -> Option<String> {
    let start = text.len() - text.trim_start().len();
    let end = text.trim_end().len();
    let body = text.get(start..end)?;
    let inner = body.strip_prefix("```")?.strip_suffix("```")?;
    // An info string (`json`) counts only when whitespace follows it: "```true```" is not one.
    let info = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.'))
        .count();
    let info = match inner.as_bytes().get(info) {
        Some(b) if b.is_ascii_whitespace() => info,
        _ => 0,
    };
    let open = start..start + 3 + info;
    let close = end - 3..end;
    let blanked = text
        .char_indices()
        .map(|(i, c)| {
            if open.contains(&i) || close.contains(&i) {
                ' '
            } else {
                c
            }
        })
        .collect();
    Some(blanked)
}

/// The text with Python's `True`, `False` and `None` rewritten to JSON literals where they stand
/// as values outside strings and comments (a key spelled `True` stays a key). Each replacement
/// has the same length, so positions do not move. `None` when there is nothing to rewrite.
fn rewrite_python_literals(text: &str) -> Option<String> {
    let mut replacements: Vec<(usize, &'static str)> = Vec::new();
    let mut word: Option<(usize, usize)> = None;
    let mut pending: Option<(usize, &'static str)> = None;
    let bytes = text.as_bytes();
    let _ = for_each_code_byte(text, |i, b| {
        if is_word_byte(b) {
            if word.is_none() {
                // A word right after a pending literal: the literal was a value.
                replacements.extend(pending.take());
            }
            let start = word.map_or(i, |(start, _)| start);
            word = Some((start, i + 1));
            return ControlFlow::Continue(());
        }
        if let Some((start, end)) = word.take() {
            pending = bytes
                .get(start..end)
                .and_then(json_literal)
                .map(|lit| (start, lit));
        }
        if !b.is_ascii_whitespace() {
            // A word followed by `:` is a key; anything else makes it a value.
            if let Some(found) = pending.take()
                && b != b':'
            {
                replacements.push(found);
            }
        }
        ControlFlow::Continue(())
    });
    if let Some((start, end)) = word
        && let Some(lit) = bytes.get(start..end).and_then(json_literal)
    {
        pending = Some((start, lit));
    }
    replacements.extend(pending);
    if replacements.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, literal) in replacements {
        out.push_str(text.get(copied..start)?);
        out.push_str(literal);
        copied = start + literal.len();
    }
    out.push_str(text.get(copied..)?);
    Some(out)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The JSON spelling of a Python literal of the same length.
fn json_literal(word: &[u8]) -> Option<&'static str> {
    match word {
        b"True" => Some("true"),
        b"False" => Some("false"),
        b"None" => Some("null"),
        _ => None,
    }
}

/// The text, or for long text the part around byte `at`, for an error's `input`.
fn excerpt(text: &str, at: usize) -> String {
    const AROUND: usize = 60;
    if text.len() <= 2 * AROUND {
        return text.to_owned();
    }
    let start = char_boundary_at_or_before(text, at.saturating_sub(AROUND));
    let end = char_boundary_at_or_before(text, at.saturating_add(AROUND).min(text.len()));
    let mut out = String::with_capacity(end - start + 6);
    if start > 0 {
        out.push_str("...");
    }
    out.push_str(text.get(start..end).unwrap_or_default());
    if end < text.len() {
        out.push_str("...");
    }
    out
}

fn char_boundary_at_or_before(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A repair of the whole text; `from` holds the text as diagnostics hold values (abridged), and
/// nothing is `to`: the result is the arguments as a whole.
fn text_repair(text: &str, code: RepairCode) -> Repair {
    Repair::removed("", code, abridged_text(text))
}

/// One `repair_refused` error for each repair, as a strict policy reports them.
pub(super) fn refusals(repairs: &[Repair]) -> Vec<CoerceError> {
    repairs
        .iter()
        .map(|repair| {
            let input = match &repair.from {
                Some(Value::String(text)) => Some(Value::String(excerpt(text, 0))),
                other => other.clone(),
            };
            CoerceError::new(
                repair.path.clone(),
                ErrorCode::RepairRefused,
                input,
                format!(
                    "strict JSON arguments ({})",
                    strict_expectation(repair.code)
                ),
            )
        })
        .collect()
}

/// What strict JSON wants instead of what a text repair would have fixed.
fn strict_expectation(code: RepairCode) -> &'static str {
    match code {
        RepairCode::MarkdownFence => "no markdown code fence",
        RepairCode::JsonComments => "no comments",
        RepairCode::TrailingComma => "no trailing commas",
        RepairCode::SingleQuotes => "strings in double quotes",
        RepairCode::UnquotedKeys => "keys in double quotes",
        RepairCode::PythonLiterals => "true, false and null, not True, False and None",
        RepairCode::DoubleEncoded => "an object, not a string holding one",
        _ => "no repairs",
    }
}

fn duplicate_key(path: String, key: String) -> CoerceError {
    CoerceError::new(
        path,
        ErrorCode::DuplicateKey,
        Some(abridged_text(&key)),
        "each key at most once",
    )
}

fn too_deep(max_depth: usize) -> CoerceError {
    CoerceError::new(
        "",
        ErrorCode::TooDeep,
        None,
        format!("arguments nested at most {max_depth} levels deep"),
    )
}

pub(super) fn not_an_object(value: Value) -> CoerceError {
    let kind = crate::value_kind(&value);
    CoerceError::new(
        "",
        ErrorCode::ArgumentsType,
        Some(value),
        format!("a JSON object of arguments, not {kind}"),
    )
}
