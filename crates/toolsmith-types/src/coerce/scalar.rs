//! Scalars and enums: strings, integers, numbers, booleans, and closed sets of values, with the
//! constraints they carry.
//!
//! Numbers, decided on the literal sent where argument text gave one (see `literal.rs`):
//!
//! | target ← input | verdict |
//! |---|---|
//! | integer ← an integer literal in `i64::MIN..=u64::MAX` | accept, exactly |
//! | integer ← an integer literal outside it (`-9223372036854775809`) | reject: `int_out_of_range` |
//! | integer ← a whole float up to 2^53 (`5.0`, `1e3`) | repair: `int_from_float` |
//! | integer ← a whole float past 2^53 (`9007199254740993.0`) | reject: `int_from_float`, asking for the digits |
//! | integer ← a float whose digits have a fraction (`1.0000000000000000001`) | reject: `int_from_float` |
//! | number ← a literal too small for an `f64` (`1e-400`, or as text) | reject: `float_out_of_range` |
//! | number with `multipleOf` | decided exactly on decimals: the literal sent, and the bound's shortest decimal |
//! | string ← a number | repair: the literal as sent (`1.10` → `"1.10"`, `1e2` → `"1e2"`, `-0` → `"-0"`) |
//! | string ← a parsed float past 2^53 with no literal | reject: its digits were not kept |

use serde_json::{Number, Value};

use super::path::Path;
use super::{Coercer, Out, fold_style};
use crate::diagnostics::{ErrorCode, RepairCode};
use crate::literal::{Decimal, EXACT_FLOAT_INTEGERS, is_integer_literal};
use crate::ty::{EnumType, EnumValue, EnumVariant, IntegerType, NumberType, StringType};

const A_STRING: &str = "a string";
const AN_INTEGER: &str = "an integer";
const A_NUMBER: &str = "a number";
const A_BOOLEAN: &str = "true or false";
const AN_ALLOWED_VALUE: &str = "one of the allowed values";

/// The one element of `input` when it is an array of exactly one scalar.
fn singleton(input: &Value) -> Option<&Value> {
    match input {
        Value::Array(items) if items.len() == 1 => items
            .first()
            .filter(|item| !item.is_array() && !item.is_object()),
        _ => None,
    }
}

/// An integer anywhere in the `i64` or `u64` range.
pub(crate) type Int = i128;

fn int_to_json(n: Int) -> Value {
    if let Ok(signed) = i64::try_from(n) {
        Value::from(signed)
    } else if let Ok(unsigned) = u64::try_from(n) {
        Value::from(unsigned)
    } else {
        Value::Null
    }
}

const INT_MIN: Int = i64::MIN as Int;
const INT_MAX: Int = u64::MAX as Int;

/// Why a JSON number is not an integer: the code, and what to send instead.
type NotAnInteger = (ErrorCode, String);

/// The range coercion reads integers in, in words.
fn the_64_bit_range() -> String {
    format!("an integer from {INT_MIN} to {INT_MAX}")
}

/// A JSON number as an integer, decided on `literal`, the text it was sent as, when that is
/// known. `Ok((n, true))` for a whole float (`42.0`, `1e3`): an integer, but written as a
/// float (a repair). Fractions, floats past 2^53 (where a float may not be the integer that
/// was written) and integers outside the 64-bit range are not integers.
fn int_of_number(n: &Number, literal: Option<&str>) -> Result<(Int, bool), NotAnInteger> {
    if let Some(i) = n.as_i64() {
        return Ok((Int::from(i), false));
    }
    if let Some(u) = n.as_u64() {
        return Ok((Int::from(u), false));
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if !f.is_finite() {
        return Err((ErrorCode::FiniteNumber, AN_INTEGER.to_owned()));
    }
    let not_a_fraction = || (ErrorCode::IntFromFloat, AN_INTEGER.to_owned());
    let out_of_range = |sent: &str| {
        let expected = format!("{} ({sent} is outside it)", the_64_bit_range());
        (ErrorCode::IntOutOfRange, expected)
    };
    let as_digits = |digits: &str| {
        let expected = format!(
            "an integer written as digits ({digits}): a float past 2^53 is not exact, so it \
             cannot stand for an integer"
        );
        (ErrorCode::IntFromFloat, expected)
    };
    let decimal = literal.and_then(Decimal::parse);
    match (literal, decimal) {
        (Some(literal), Some(decimal)) => {
            let Some(whole) = decimal.is_integer().then(|| decimal.to_int()) else {
                return Err(not_a_fraction());
            };
            match whole {
                Some(n) if is_integer_literal(literal) && (INT_MIN..=INT_MAX).contains(&n) => {
                    // `-0`, which serde_json reads as a float to keep its sign.
                    Ok((n, false))
                }
                _ if is_integer_literal(literal) => Err(out_of_range(literal)),
                Some(n) if n.unsigned_abs() <= EXACT_FLOAT_INTEGERS as u128 => Ok((n, true)),
                Some(n) if (INT_MIN..=INT_MAX).contains(&n) => Err(as_digits(&n.to_string())),
                _ => Err(out_of_range(literal)),
            }
        }
        _ if f.fract() != 0.0 => Err(not_a_fraction()),
        _ if f.abs() <= EXACT_FLOAT_INTEGERS => Ok((f as Int, true)),
        // Exact: `f` is whole and within the range of `Int`.
        _ if (-9_223_372_036_854_775_808.0..18_446_744_073_709_551_616.0).contains(&f) => {
            Err(as_digits(&(f as Int).to_string()))
        }
        _ => Err(out_of_range(&n.to_string())),
    }
}

/// The error for a number too small for a 64-bit float, which would be read as 0 (`1e-400`).
fn underflow(sent: &str) -> (ErrorCode, String) {
    let expected = format!("a number a 64-bit float can hold ({sent} would be read as 0)");
    (ErrorCode::FloatOutOfRange, expected)
}

/// Whether `sent` (number text) stands for a number other than 0 while `f`, its float, is 0.
fn underflows(f: f64, sent: &str) -> bool {
    f == 0.0 && Decimal::parse(sent).is_some_and(|d| !d.is_zero())
}

/// The text a number for a string field becomes: its literal, or without one, what its value
/// says exactly. A float with no literal past 2^53 may be a longer integer already rounded
/// (`None`: it cannot be written back exactly).
fn string_of_number(n: &Number, literal: Option<String>) -> Option<String> {
    match literal {
        Some(literal) => Some(literal),
        None => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() >= EXACT_FLOAT_INTEGERS => None,
            _ => Some(n.to_string()),
        },
    }
}

/// Integer text: optional spaces and sign, decimal digits, optionally `.0…`. Nothing else
/// (no exponents, hex, separators, units).
fn int_of_text(text: &str) -> Result<Int, ErrorCode> {
    let text = text.trim();
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || fraction.is_some_and(|f| !digits(f)) {
        return Err(ErrorCode::IntParsing);
    }
    if fraction.is_some_and(|f| f.bytes().any(|b| b != b'0')) {
        return Err(ErrorCode::IntFromFloat);
    }
    let significant = whole.trim_start_matches('0');
    if significant.len() > 20 {
        return Err(ErrorCode::IntOutOfRange);
    }
    let magnitude: Int = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| ErrorCode::IntParsing)?
    };
    let n = if negative { -magnitude } else { magnitude };
    if (INT_MIN..=INT_MAX).contains(&n) {
        Ok(n)
    } else {
        Err(ErrorCode::IntOutOfRange)
    }
}

/// Number text: optional spaces and sign, decimal digits with an optional fraction and exponent.
fn number_of_text(text: &str) -> Result<Value, ErrorCode> {
    let text = text.trim();
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let word = unsigned.to_ascii_lowercase();
    if matches!(word.as_str(), "nan" | "inf" | "infinity") {
        return Err(ErrorCode::FiniteNumber);
    }
    if !unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(ErrorCode::FloatParsing);
    }
    if let Ok(whole) = text.strip_prefix('+').unwrap_or(text).parse::<i64>() {
        return Ok(Value::from(whole));
    }
    let f: f64 = text.parse().map_err(|_| ErrorCode::FloatParsing)?;
    if underflows(f, text) {
        return Err(ErrorCode::FloatOutOfRange);
    }
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or(ErrorCode::FiniteNumber)
}

/// The text of a JSON scalar as an enum would read it (`true`, `2`, `2.5`).
fn scalar_text(input: &Value) -> Option<String> {
    match input {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// How many variants a test picked out.
enum Found<'e> {
    None,
    One(&'e EnumVariant),
    Several,
}

/// The variant whose string value or alias satisfies `matches`, when exactly one does.
fn find_unique<'e>(et: &'e EnumType, matches: impl Fn(&str) -> bool) -> Found<'e> {
    let mut found = Found::None;
    for variant in &et.variants {
        let value = match &variant.value {
            EnumValue::String(s) => Some(s.as_str()),
            EnumValue::Integer(_) | EnumValue::Json(_) => None,
        };
        let hit = value.into_iter().any(&matches) || variant.aliases.iter().any(|a| matches(a));
        if hit {
            if matches!(found, Found::One(_)) {
                return Found::Several;
            }
            found = Found::One(variant);
        }
    }
    found
}

/// The variant whose integer value is `n`.
fn find_integer(et: &EnumType, n: Int) -> Option<&EnumVariant> {
    et.variants
        .iter()
        .find(|v| matches!(v.value, EnumValue::Integer(i) if Int::from(i) == n))
}

/// The integer variant whose decimal spelling is exactly `text`.
fn spelled_integer<'e>(et: &'e EnumType, text: &str) -> Option<&'e EnumVariant> {
    et.variants
        .iter()
        .find(|v| matches!(v.value, EnumValue::Integer(i) if i.to_string() == text))
}

/// `text` without surrounding whitespace and pairs of surrounding quotes or backticks.
fn trim_quotes(text: &str) -> &str {
    let mut text = text.trim();
    loop {
        let inner = ['"', '\'', '`'].iter().find_map(|&q| {
            text.strip_prefix(q)
                .and_then(|rest| rest.strip_suffix(q))
                .filter(|_| text.len() >= 2)
        });
        match inner {
            Some(inner) => text = inner.trim(),
            None => return text,
        }
    }
}

/// How an enum text matched: the variant, and which repairs it took.
enum EnumMatch<'e> {
    Exact(&'e EnumVariant),
    Repaired(&'e EnumVariant, &'static [RepairCode]),
    Ambiguous,
    NoMatch,
}

/// Matches enum text: the exact spelling; else, after trimming spaces and quotes, the exact
/// spelling, integer text, or the only value equal ignoring case (then word style).
fn match_enum_text<'e>(et: &'e EnumType, text: &str) -> EnumMatch<'e> {
    // A declared value wins over another variant's alias of the same spelling.
    if let Some(variant) = et
        .variants
        .iter()
        .find(|v| matches!(&v.value, EnumValue::String(value) if value == text))
    {
        return EnumMatch::Exact(variant);
    }
    if let Found::One(variant) = find_unique(et, |candidate| candidate == text) {
        return EnumMatch::Exact(variant);
    }
    let trimmed = trim_quotes(text);
    let was_trimmed = trimmed != text;
    if was_trimmed && let Found::One(variant) = find_unique(et, |candidate| candidate == trimmed) {
        return EnumMatch::Repaired(variant, &[RepairCode::EnumTrimmed]);
    }
    match (match_loosely(et, trimmed), was_trimmed) {
        (EnumMatch::Exact(variant), false) => {
            EnumMatch::Repaired(variant, &[RepairCode::EnumFromScalar])
        }
        (EnumMatch::Exact(variant), true) => EnumMatch::Repaired(
            variant,
            &[RepairCode::EnumTrimmed, RepairCode::EnumFromScalar],
        ),
        (EnumMatch::Repaired(variant, _), true) => {
            EnumMatch::Repaired(variant, &[RepairCode::EnumTrimmed, RepairCode::EnumCase])
        }
        (other, _) => other,
    }
}

/// Integer text naming an integer value (reported as `Exact`, meaning "from a scalar"), else
/// the only value equal ignoring case, else the only one equal ignoring case and word style.
fn match_loosely<'e>(et: &'e EnumType, text: &str) -> EnumMatch<'e> {
    if let Some(variant) = int_of_text(text).ok().and_then(|n| find_integer(et, n)) {
        return EnumMatch::Exact(variant);
    }
    let lower = text.to_lowercase();
    match find_unique(et, |candidate| candidate.to_lowercase() == lower) {
        Found::One(variant) => return EnumMatch::Repaired(variant, &[RepairCode::EnumCase]),
        Found::Several => return EnumMatch::Ambiguous,
        Found::None => {}
    }
    let Some(folded) = fold_style(text) else {
        return EnumMatch::NoMatch;
    };
    match find_unique(et, |candidate| {
        fold_style(candidate).as_ref() == Some(&folded)
    }) {
        Found::One(variant) => EnumMatch::Repaired(variant, &[RepairCode::EnumCase]),
        Found::Several => EnumMatch::Ambiguous,
        Found::None => EnumMatch::NoMatch,
    }
}

impl<'g> Coercer<'g> {
    /// A scalar sent as `[x]`: `Some(result)` when `x` is acceptable for the scalar (the
    /// unwrap is recorded before `x`'s own repairs), `None` when it is not.
    fn unwrapped(
        &mut self,
        input: &Value,
        path: &Path<'_>,
        expected: &str,
        coerce_item: impl FnOnce(&mut Self, &Value) -> Option<Out>,
    ) -> Option<Option<Out>> {
        let item = singleton(input)?;
        let trial = self.trial(|c| coerce_item(c, item));
        if !trial.is_acceptable() {
            return None;
        }
        let proceed = self.repair(path, RepairCode::UnwrapSingleton, expected, input, item);
        let value = self.commit(trial);
        Some(value.filter(|_| proceed).map(|out| out.renewed(item)))
    }

    /// [`Coercer::unwrapped`], or a `code` error when `input` is not a one-element array whose
    /// element fits.
    fn unwrapped_or_fail(
        &mut self,
        input: &Value,
        path: &Path<'_>,
        code: ErrorCode,
        expected: &str,
        coerce_item: impl FnOnce(&mut Self, &Value) -> Option<Out>,
    ) -> Option<Out> {
        match self.unwrapped(input, path, expected, coerce_item) {
            Some(value) => value,
            None => self.fail(path, code, Some(input), expected),
        }
    }

    pub(super) fn string(
        &mut self,
        st: &StringType,
        input: &Value,
        path: &Path<'_>,
    ) -> Option<Out> {
        match input {
            Value::String(s) => self.check_string(st, s, input, path).then_some(Out::Same),
            Value::Number(n) => {
                let Some(text) = string_of_number(n, self.literal(input, n)) else {
                    let expected = "a string (send the number as text: its digits were not kept \
                                    exactly)";
                    return self.fail(path, ErrorCode::StringType, Some(input), expected);
                };
                let to = Value::String(text.clone());
                if !self.repair(path, RepairCode::StringFromNumber, A_STRING, input, &to) {
                    return None;
                }
                self.check_string(st, &text, input, path)
                    .then_some(Out::New(to))
            }
            _ => self.unwrapped_or_fail(input, path, ErrorCode::StringType, A_STRING, |c, item| {
                c.string(st, item, path)
            }),
        }
    }

    fn check_string(&mut self, st: &StringType, s: &str, input: &Value, path: &Path<'_>) -> bool {
        self.record_violations(string_violations(st, s), input, path)
    }

    /// Records each constraint violation as an error at `path`; whether there were none.
    fn record_violations(
        &mut self,
        violations: Vec<(ErrorCode, String)>,
        input: &Value,
        path: &Path<'_>,
    ) -> bool {
        let ok = violations.is_empty();
        for (code, expected) in violations {
            self.error(path, code, Some(input), expected);
        }
        ok
    }

    pub(super) fn integer(
        &mut self,
        it: &IntegerType,
        input: &Value,
        path: &Path<'_>,
    ) -> Option<Out> {
        let n = match input {
            Value::Number(number) => {
                match int_of_number(number, self.literal(input, number).as_deref()) {
                    Ok((n, false)) => n,
                    // A schema's `5.0` default is its integer 5, not a repair of the input.
                    Ok((n, true)) if self.in_default > 0 => n,
                    Ok((n, true)) => {
                        let to = int_to_json(n);
                        if !self.repair(path, RepairCode::IntFromFloat, AN_INTEGER, input, &to) {
                            return None;
                        }
                        n
                    }
                    Err((code, expected)) => return self.fail(path, code, Some(input), expected),
                }
            }
            Value::String(text) => match int_of_text(text) {
                Ok(n) => {
                    let to = int_to_json(n);
                    if !self.repair(path, RepairCode::IntFromString, AN_INTEGER, input, &to) {
                        return None;
                    }
                    n
                }
                Err(code) => return self.fail(path, code, Some(input), AN_INTEGER),
            },
            _ => {
                return self.unwrapped_or_fail(
                    input,
                    path,
                    ErrorCode::IntType,
                    AN_INTEGER,
                    |c, item| c.integer(it, item, path),
                );
            }
        };
        self.check_integer(it, n, input, path).then(|| match input {
            Value::Number(number) if !number.is_f64() => Out::Same,
            _ => Out::New(int_to_json(n)),
        })
    }

    fn check_integer(&mut self, it: &IntegerType, n: Int, input: &Value, path: &Path<'_>) -> bool {
        self.record_violations(integer_violations(it, n), input, path)
    }

    pub(super) fn number(
        &mut self,
        nt: &NumberType,
        input: &Value,
        path: &Path<'_>,
    ) -> Option<Out> {
        let (f, sent, out) = match input {
            Value::Number(number) => {
                let f = number.as_f64().unwrap_or(f64::NAN);
                let sent = self.literal(input, number);
                if let Some(sent) = sent.as_deref().filter(|sent| underflows(f, sent)) {
                    let (code, expected) = underflow(sent);
                    return self.fail(path, code, Some(input), expected);
                }
                (f, sent, Out::Same)
            }
            Value::String(text) => match number_of_text(text) {
                Ok(value) => {
                    if !self.repair(path, RepairCode::NumberFromString, A_NUMBER, input, &value) {
                        return None;
                    }
                    let sent = text.trim().to_owned();
                    (
                        value.as_f64().unwrap_or(f64::NAN),
                        Some(sent),
                        Out::New(value),
                    )
                }
                Err(ErrorCode::FloatOutOfRange) => {
                    let (code, expected) = underflow(text.trim());
                    return self.fail(path, code, Some(input), expected);
                }
                Err(code) => return self.fail(path, code, Some(input), A_NUMBER),
            },
            _ => {
                return self.unwrapped_or_fail(
                    input,
                    path,
                    ErrorCode::FloatType,
                    A_NUMBER,
                    |c, item| c.number(nt, item, path),
                );
            }
        };
        let exact = || sent.as_deref().and_then(Decimal::parse);
        let violations = number_violations(nt, f, exact);
        self.record_violations(violations, input, path)
            .then_some(out)
    }

    pub(super) fn boolean(&mut self, input: &Value, path: &Path<'_>) -> Option<Out> {
        let (parsed, code) = match input {
            Value::Bool(_) => return Some(Out::Same),
            Value::String(text) => {
                let word = text.trim().to_lowercase();
                let parsed = match word.as_str() {
                    "true" | "yes" | "on" | "1" => Some(true),
                    "false" | "no" | "off" | "0" => Some(false),
                    _ => None,
                };
                (parsed, RepairCode::BoolFromString)
            }
            Value::Number(n) => {
                let parsed = match n.as_u64() {
                    Some(1) if !n.is_f64() => Some(true),
                    Some(0) if !n.is_f64() => Some(false),
                    _ => None,
                };
                (parsed, RepairCode::BoolFromInt)
            }
            _ => {
                return self.unwrapped_or_fail(
                    input,
                    path,
                    ErrorCode::BoolType,
                    A_BOOLEAN,
                    |c, item| c.boolean(item, path),
                );
            }
        };
        match parsed {
            Some(b) => {
                let to = Value::Bool(b);
                self.repair(path, code, A_BOOLEAN, input, &to)
                    .then_some(Out::New(to))
            }
            None => self.fail(path, ErrorCode::BoolParsing, Some(input), A_BOOLEAN),
        }
    }

    pub(super) fn enumeration(
        &mut self,
        et: &EnumType,
        input: &Value,
        path: &Path<'_>,
    ) -> Option<Out> {
        if let Some(variant) = self.json_variant(et, input) {
            let canonical = variant.value.to_json();
            return Some(if canonical == *input {
                Out::Same
            } else {
                Out::New(canonical)
            });
        }
        let found = match input {
            Value::String(text) => match match_enum_text(et, text) {
                found @ EnumMatch::Exact(_) => found,
                // Gemini's wire shape: integer values spelled as their decimal text.
                found if self.policy.dialect.rules().enums_as_strings => {
                    spelled_integer(et, text).map_or(found, EnumMatch::Exact)
                }
                found => found,
            },
            Value::Number(number) => {
                let sent = self.literal(input, number);
                let n = int_of_number(number, sent.as_deref()).ok();
                match n.and_then(|(n, float)| Some((find_integer(et, n)?, float))) {
                    // A whole float (`2.0`) naming an integer value, as for an integer.
                    Some((variant, true)) if self.in_default == 0 => {
                        EnumMatch::Repaired(variant, &[RepairCode::IntFromFloat])
                    }
                    Some((variant, _)) => EnumMatch::Exact(variant),
                    None => self.enum_from_scalar(et, input),
                }
            }
            Value::Bool(_) => self.enum_from_scalar(et, input),
            _ => {
                let unwrapped = self.unwrapped(input, path, AN_ALLOWED_VALUE, |c, item| {
                    c.enumeration(et, item, path)
                });
                if let Some(value) = unwrapped {
                    return value;
                }
                EnumMatch::NoMatch
            }
        };
        match found {
            EnumMatch::Exact(variant) => Some(match (&variant.value, input) {
                (EnumValue::String(value), Value::String(given)) if value == given => Out::Same,
                (EnumValue::Integer(_), Value::Number(given)) if !given.is_f64() => Out::Same,
                (value, _) => Out::New(value.to_json()),
            }),
            EnumMatch::Repaired(variant, codes) => {
                let to = variant.value.to_json();
                for &code in codes {
                    if !self.repair(path, code, AN_ALLOWED_VALUE, input, &to) {
                        return None;
                    }
                }
                Some(Out::New(to))
            }
            EnumMatch::Ambiguous | EnumMatch::NoMatch => {
                let allowed = || et.variants.iter().map(|v| v.value.to_string()).collect();
                self.fail_allowed(path, ErrorCode::Enum, input, AN_ALLOWED_VALUE, allowed)
            }
        }
    }

    /// The variant holding a JSON value (a boolean, an array, ...) that `input` equals; under a
    /// dialect that writes every enum value as text, `input` may be that text.
    fn json_variant<'e>(&self, et: &'e EnumType, input: &Value) -> Option<&'e EnumVariant> {
        et.variants.iter().find(|v| match (&v.value, input) {
            (EnumValue::Json(value), Value::String(text))
                if self.policy.dialect.rules().enums_as_strings =>
            {
                serde_json::to_string(value).ok().as_deref() == Some(text.as_str())
            }
            (EnumValue::Json(value), input) => json_equal(value, input),
            _ => false,
        })
    }

    /// A boolean or number naming exactly one string value, ignoring case.
    fn enum_from_scalar<'e>(&self, et: &'e EnumType, input: &Value) -> EnumMatch<'e> {
        let Some(text) = scalar_text(input) else {
            return EnumMatch::NoMatch;
        };
        match find_unique(et, |candidate| candidate.eq_ignore_ascii_case(&text)) {
            Found::One(variant) => EnumMatch::Repaired(variant, &[RepairCode::EnumFromScalar]),
            Found::Several => EnumMatch::Ambiguous,
            Found::None => EnumMatch::NoMatch,
        }
    }

    /// An enum map key in its canonical spelling; errors and repairs are at `path`, the key's.
    pub(super) fn enum_key(&mut self, et: &EnumType, key: &str, path: &Path<'_>) -> Option<String> {
        // Object keys are text: an integer value's exact decimal spelling is that value as it is.
        let exact = et.variants.iter().find(|v| v.value.to_string() == key);
        if let Some(variant) = exact {
            return Some(variant.value.to_string());
        }
        if let Found::One(variant) = find_unique(et, |candidate| candidate == key) {
            return Some(variant.value.to_string());
        }
        let given = Value::String(key.to_owned());
        Some(
            match self.enumeration(et, &given, path)?.into_value(&given) {
                Value::String(s) => s,
                other => other.to_string(),
            },
        )
    }
}

/// The constraints of `st` that `s` breaks, each with its code and expectation (no allocation
/// when there are none).
pub(crate) fn string_violations(st: &StringType, s: &str) -> Vec<(ErrorCode, String)> {
    let mut out = Vec::new();
    if st.min_length.is_some() || st.max_length.is_some() {
        let chars = s.chars().count() as u64;
        if let Some(min) = st.min_length.filter(|&min| chars < min) {
            out.push((
                ErrorCode::StringTooShort,
                format!("at least {min} characters"),
            ));
        }
        if let Some(max) = st.max_length.filter(|&max| chars > max) {
            out.push((
                ErrorCode::StringTooLong,
                format!("at most {max} characters"),
            ));
        }
    }
    if let Some(pattern) = st.pattern.as_ref().filter(|p| !p.is_match(s)) {
        let expected = format!("text matching the pattern `{}`", pattern.as_str());
        out.push((ErrorCode::StringPatternMismatch, expected));
    }
    out
}

/// The bounds of an integer or number type, with the code and words of each.
fn bounds<T: Copy>(
    minimum: Option<T>,
    maximum: Option<T>,
    exclusive_minimum: Option<T>,
    exclusive_maximum: Option<T>,
) -> [(Option<T>, ErrorCode, &'static str); 4] {
    [
        (minimum, ErrorCode::GreaterThanEqual, "at least"),
        (maximum, ErrorCode::LessThanEqual, "at most"),
        (exclusive_minimum, ErrorCode::GreaterThan, "greater than"),
        (exclusive_maximum, ErrorCode::LessThan, "less than"),
    ]
}

/// Whether `n` breaks the bound that `code` stands for.
fn breaks<T: PartialOrd>(code: ErrorCode, n: T, bound: T) -> bool {
    match code {
        ErrorCode::GreaterThanEqual => n < bound,
        ErrorCode::LessThanEqual => n > bound,
        ErrorCode::GreaterThan => n <= bound,
        _ => n >= bound,
    }
}

/// The bounds that `n` breaks, each with its code and expectation.
fn bound_violations<T: Copy + PartialOrd + std::fmt::Display>(
    checks: [(Option<T>, ErrorCode, &'static str); 4],
    n: T,
) -> Vec<(ErrorCode, String)> {
    let mut out = Vec::new();
    for (bound, code, words) in checks {
        if let Some(bound) = bound.filter(|&b| breaks(code, n, b)) {
            out.push((code, format!("{words} {bound}")));
        }
    }
    out
}

/// Whether `n` meets every constraint of `it`: [`integer_violations`] finds none.
#[inline]
pub(crate) fn integer_ok(it: &IntegerType, n: Int) -> bool {
    it.minimum.is_none_or(|b| n >= b)
        && it.maximum.is_none_or(|b| n <= b)
        && it.exclusive_minimum.is_none_or(|b| n > b)
        && it.exclusive_maximum.is_none_or(|b| n < b)
        && it
            .multiple_of
            .is_none_or(|m| m == 0 || n % Int::from(m) == 0)
}

/// Whether `f` is within the bounds of `nt` (`multipleOf` aside).
#[inline]
pub(crate) fn number_bounds_ok(nt: &NumberType, f: f64) -> bool {
    nt.minimum.is_none_or(|b| f >= b)
        && nt.maximum.is_none_or(|b| f <= b)
        && nt.exclusive_minimum.is_none_or(|b| f > b)
        && nt.exclusive_maximum.is_none_or(|b| f < b)
}

/// The constraints of `it` that `n` breaks.
pub(super) fn integer_violations(it: &IntegerType, n: Int) -> Vec<(ErrorCode, String)> {
    let checks = bounds(
        it.minimum,
        it.maximum,
        it.exclusive_minimum,
        it.exclusive_maximum,
    );
    let mut out = bound_violations(checks, n);
    if let Some(m) = it.multiple_of.filter(|&m| m > 0 && n % Int::from(m) != 0) {
        out.push((ErrorCode::MultipleOf, format!("a multiple of {m}")));
    }
    out
}

/// The constraints of `nt` that `f` breaks; `exact` gives the number exactly as it was sent,
/// when that is known (else `f`'s shortest decimal stands for it).
///
/// `multipleOf` is decided exactly, on decimals: the number as sent (`0.3`) and the bound as
/// written in the schema (`0.1`, the shortest decimal of its `f64`), so `0.3` is a multiple of
/// `0.1` and `1000000000.5` is not one of `1`, however large the quotient.
pub(crate) fn number_violations(
    nt: &NumberType,
    f: f64,
    exact: impl FnOnce() -> Option<Decimal>,
) -> Vec<(ErrorCode, String)> {
    let checks = bounds(
        nt.minimum,
        nt.maximum,
        nt.exclusive_minimum,
        nt.exclusive_maximum,
    );
    let mut out = bound_violations(checks, f);
    if let Some(m) = nt.multiple_of.filter(|&m| m > 0.0) {
        let multiple = match (exact().or_else(|| Decimal::of_f64(f)), Decimal::of_f64(m)) {
            (Some(value), Some(m)) => value.is_multiple_of(&m),
            _ => false,
        };
        if !multiple {
            out.push((ErrorCode::MultipleOf, format!("a multiple of {m}")));
        }
    }
    out
}

/// JSON equality as JSON Schema has it: numbers by value (`1` equals `1.0`), object keys in any
/// order. Walks both values with an explicit stack, so no input can overflow it.
pub(super) fn json_equal(a: &Value, b: &Value) -> bool {
    let mut pending = vec![(a, b)];
    while let Some((a, b)) = pending.pop() {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                let same = match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                    (Some(x), Some(y), _, _) => x == y,
                    (_, _, Some(x), Some(y)) => x == y,
                    _ => x.as_f64().is_some_and(|x| y.as_f64() == Some(x)),
                };
                if !same {
                    return false;
                }
            }
            (Value::Array(xs), Value::Array(ys)) => {
                if xs.len() != ys.len() {
                    return false;
                }
                pending.extend(xs.iter().zip(ys));
            }
            (Value::Object(xs), Value::Object(ys)) => {
                if xs.len() != ys.len() {
                    return false;
                }
                for (key, x) in xs {
                    match ys.get(key) {
                        Some(y) => pending.push((x, y)),
                        None => return false,
                    }
                }
            }
            (a, b) => {
                if a != b {
                    return false;
                }
            }
        }
    }
    true
}

/// A text that two values share exactly when they are equal as JSON Schema compares them
/// ([`json_equal`]): object keys sorted, whole numbers written as integers.
pub(super) fn json_key(value: &Value) -> String {
    let mut out = String::new();
    write_key(value, &mut out);
    out
}

fn write_key(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => {
            let whole = n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0);
            match (n.as_i64(), n.as_u64(), whole) {
                (Some(i), _, _) => out.push_str(&i.to_string()),
                (_, Some(u), _) => out.push_str(&u.to_string()),
                // Exact: whole and below 2^53.
                (_, _, Some(f)) => out.push_str(&(f as i64).to_string()),
                _ => out.push_str(&n.to_string()),
            }
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_key(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_key(&map[key], out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}
