//! Number literals as they were sent, and exact decimal arithmetic on them.
//!
//! `serde_json` (without its `arbitrary_precision` feature, which would change
//! `serde_json::Number` for every crate in a build) reads every literal outside the `i64`/`u64`
//! range into an `f64`, so `1.10`, `1e2`, `-0`, `-9223372036854775809`, 53-digit ids and
//! `1e-400` reach coercion as `1.1`, `100.0`, `-0.0`, `-9223372036854775808.0`, a rounded
//! float and `0.0`. Coercion decides on the digits that were sent instead: when argument text is
//! read, the literals of its floats are kept ([`Literals`], only those whose text says more than
//! their `f64`), and [`Decimal`] holds a literal exactly, for the checks that need it (a float
//! for an integer, a number for a string, underflow, `multipleOf`).
//!
//! Only floats need this: an integer literal inside the 64-bit range is read exactly, and its
//! text is its value's. JSON sent inside a string (an array as text) keeps its literals too; a
//! value that arrives already parsed (`Arguments::Json`) carries none, and is decided on the
//! `serde_json::Number` itself.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Number, Value};

/// Where the literals of the numbers of a value read from text are, kept no larger than the
/// floats that need them: never a copy of every number.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NumberLiterals<'t> {
    /// None of its numbers is a float (or it was not read from text): each integer's literal is
    /// its value's text.
    None,
    /// The strict JSON text it was read from: its number tokens ([`number_tokens`]) pair, in
    /// document order, with the value's numbers.
    Text(Cow<'t, str>),
    /// The literals of the floats whose text says more than their value (`1.10`, `1e2`), each
    /// with the place of its number among all the value's numbers, in document order.
    Listed(Vec<(usize, Box<str>)>),
}

impl NumberLiterals<'_> {
    /// The same literals, owning their text.
    pub(crate) fn into_owned(self) -> NumberLiterals<'static> {
        match self {
            NumberLiterals::None => NumberLiterals::None,
            NumberLiterals::Text(text) => NumberLiterals::Text(Cow::Owned(text.into_owned())),
            NumberLiterals::Listed(listed) => NumberLiterals::Listed(listed),
        }
    }

    /// The table of the literals of `tree`, the value they were read with.
    pub(crate) fn of(self, tree: &Value) -> Literals {
        match self {
            NumberLiterals::None => Literals::none(),
            NumberLiterals::Text(text) => Literals::attach(tree, number_tokens(&text)),
            NumberLiterals::Listed(listed) => Literals::listed(tree, listed),
        }
    }
}

/// The literal text of number nodes of one argument tree whose text says more than their
/// `f64` (`1.10`, `1e2`, `-0`, digits past 64 bits), found by the node's address.
///
/// Addresses are compared, never dereferenced. A table is used only while its tree is borrowed
/// by the walk (which neither moves nor changes it) and dropped before the tree is, so an address
/// always names the node it was taken from.
pub(crate) struct Literals {
    by_node: HashMap<*const Value, Box<str>, foldhash::fast::RandomState>,
    /// Whether every number of the tree was read from text: a node not in the table was then
    /// written exactly as its `Number` prints.
    complete: bool,
}

impl Literals {
    /// Pairs the number nodes of `tree`, in document order, with `tokens`, the number literals
    /// of the text it was read from, in the same order. When they do not pair up, no literal is
    /// kept (the numbers are then decided on their values alone).
    pub(crate) fn attach<'t>(tree: &Value, tokens: impl IntoIterator<Item = &'t str>) -> Self {
        let mut by_node = HashMap::with_hasher(foldhash::fast::RandomState::default());
        let mut tokens = tokens.into_iter();
        let mut stack = vec![tree];
        while let Some(node) = stack.pop() {
            match node {
                Value::Number(number) => {
                    let Some(token) = tokens.next() else {
                        return Literals::none();
                    };
                    if number.is_f64() && token != number.to_string() {
                        by_node.insert(std::ptr::from_ref(node), Box::from(token));
                    }
                }
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Object(map) => stack.extend(map.values().rev()),
                _ => {}
            }
        }
        if tokens.next().is_some() {
            return Literals::none();
        }
        Literals {
            by_node,
            complete: true,
        }
    }

    /// Pairs the number nodes of `tree`, in document order, with `listed`: the literals of some
    /// of them, by their place among all numbers. When a place names no number, no literal is
    /// kept.
    pub(crate) fn listed(tree: &Value, listed: Vec<(usize, Box<str>)>) -> Self {
        let mut by_node =
            HashMap::with_capacity_and_hasher(listed.len(), foldhash::fast::RandomState::default());
        let mut listed = listed.into_iter().peekable();
        let mut place = 0;
        let mut stack = vec![tree];
        while let Some(node) = stack.pop() {
            match node {
                Value::Number(_) => {
                    if let Some((_, literal)) = listed.next_if(|(at, _)| *at == place) {
                        by_node.insert(std::ptr::from_ref(node), literal);
                    }
                    place += 1;
                }
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Object(map) => stack.extend(map.values().rev()),
                _ => {}
            }
        }
        if listed.next().is_some() {
            return Literals::none();
        }
        Literals {
            by_node,
            complete: true,
        }
    }

    /// No literals: the numbers were not read from text here.
    pub(crate) fn none() -> Self {
        Literals {
            by_node: HashMap::default(),
            complete: false,
        }
    }

    /// The literal `node` (holding `number`) was sent as, when it is known.
    pub(crate) fn of(&self, node: &Value, number: &Number) -> Option<String> {
        match self.by_node.get(&std::ptr::from_ref(node)) {
            Some(literal) => Some(literal.to_string()),
            None if self.complete || !number.is_f64() => Some(number.to_string()),
            None => None,
        }
    }
}

/// The number literals of strict JSON text, in document order, found as they are asked for.
pub(crate) fn number_tokens(text: &str) -> NumberTokens<'_> {
    NumberTokens { text, at: 0 }
}

/// The iterator of [`number_tokens`].
pub(crate) struct NumberTokens<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Iterator for NumberTokens<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let bytes = self.text.as_bytes();
        let mut i = self.at;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'"' => {
                    i += 1;
                    while let Some(&c) = bytes.get(i) {
                        i += if c == b'\\' { 2 } else { 1 };
                        if c == b'"' {
                            break;
                        }
                    }
                }
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    while bytes.get(i).is_some_and(|c| {
                        matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                    }) {
                        i += 1;
                    }
                    self.at = i;
                    return self.text.get(start..i);
                }
                _ => i += 1,
            }
        }
        self.at = i;
        None
    }
}

/// Whether a number literal is written as an integer (no fraction, no exponent).
pub(crate) fn is_integer_literal(literal: &str) -> bool {
    !literal.contains(['.', 'e', 'E'])
}

/// 2^53: past it, not every integer is a 64-bit float, so a whole float may not be the integer
/// that was meant.
pub(crate) const EXACT_FLOAT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// A decimal number, exactly: `digits` × 10^`exponent`, where `digits` has no leading or
/// trailing zeros (and is empty for zero).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

/// Exponents are kept within this bound; past it every finite `f64` is zero or infinite anyway.
const MAX_EXPONENT: i64 = 1 << 40;

impl Decimal {
    /// Reads decimal text: an optional sign, digits with an optional fraction (either part may
    /// be empty, not both), an optional exponent. Nothing else, no surrounding spaces.
    pub(crate) fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, text.get(1..)?),
            Some(b'+') => (false, text.get(1..)?),
            _ => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (rest.get(..at)?, Some(rest.get(at + 1..)?)),
            None => (rest, None),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction)
        {
            return None;
        }
        let mut exponent: i64 = match exponent {
            None => 0,
            Some(e) => {
                let (sign, digits) = match e.as_bytes().first() {
                    Some(b'-') => (-1, e.get(1..)?),
                    Some(b'+') => (1, e.get(1..)?),
                    _ => (1, e),
                };
                if digits.is_empty() || !all_digits(digits) {
                    return None;
                }
                let magnitude = digits.bytes().fold(0i64, |n, b| {
                    (n * 10 + i64::from(b - b'0')).min(MAX_EXPONENT)
                });
                sign * magnitude
            }
        };
        let mut digits: Vec<u8> = whole
            .bytes()
            .chain(fraction.bytes())
            .map(|b| b - b'0')
            .collect();
        exponent -= fraction.len() as i64;
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading);
        while digits.last() == Some(&0) {
            digits.pop();
            exponent += 1;
        }
        if digits.is_empty() {
            exponent = 0;
        }
        Some(Decimal {
            negative: negative && !digits.is_empty(),
            digits,
            exponent: exponent.clamp(-MAX_EXPONENT, MAX_EXPONENT),
        })
    }

    /// The shortest decimal that reads back as `f` (what a person wrote, for any `f64` written
    /// with at most 15 significant digits). `None` for NaN and infinities.
    pub(crate) fn of_f64(f: f64) -> Option<Decimal> {
        if f.is_finite() {
            Decimal::parse(&format!("{f:e}"))
        } else {
            None
        }
    }

    /// An integer, exactly.
    pub(crate) fn of_int(n: i128) -> Decimal {
        // Integer text always parses.
        Decimal::parse(&n.to_string()).unwrap_or(Decimal {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        })
    }

    /// Whether the value is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the value is an integer.
    pub(crate) fn is_integer(&self) -> bool {
        self.exponent >= 0
    }

    /// The value as an integer, when it is one and fits in an `i128`.
    pub(crate) fn to_int(&self) -> Option<i128> {
        if !self.is_integer() {
            return None;
        }
        let mut n: i128 = 0;
        for &d in &self.digits {
            n = n.checked_mul(10)?.checked_add(i128::from(d))?;
        }
        for _ in 0..self.exponent {
            n = n.checked_mul(10)?;
        }
        Some(if self.negative { -n } else { n })
    }

    /// Whether the value is an integer multiple of `m` (which has at most 19 significant digits,
    /// as every `f64` has; past that the answer is no). Zero is a multiple of everything.
    pub(crate) fn is_multiple_of(&self, m: &Decimal) -> bool {
        if self.is_zero() {
            return true;
        }
        if m.is_zero() || m.digits.len() > 19 {
            return false;
        }
        // self / m = (a / b) × 10^shift, with a and b free of trailing zeros: an integer only
        // when shift ≥ 0 (10^k for k > 0 divides no such a) and b divides a × 10^shift.
        let shift = self.exponent - m.exponent;
        if shift < 0 {
            return false;
        }
        let b = m.digits.iter().fold(0u128, |n, &d| n * 10 + u128::from(d));
        let a_mod_b = self
            .digits
            .iter()
            .fold(0u128, |r, &d| (r * 10 + u128::from(d)) % b);
        let shift = u64::try_from(shift).unwrap_or(u64::MAX);
        (a_mod_b * pow_mod(10, shift, b)).is_multiple_of(b)
    }
}

/// `base`^`exp` mod `modulus`, for a modulus below 2^64 (so products fit in a `u128`).
fn pow_mod(base: u128, mut exp: u64, modulus: u128) -> u128 {
    let mut result = 1 % modulus;
    let mut base = base % modulus;
    while exp > 0 {
        if exp & 1 == 1 {
            result = result * base % modulus;
        }
        base = base * base % modulus;
        exp >>= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::{Decimal, number_tokens};

    fn dec(text: &str) -> Decimal {
        match Decimal::parse(text) {
            Some(d) => d,
            None => panic!("{text} is decimal text"),
        }
    }

    #[test]
    fn decimal_text_is_read_exactly() {
        assert_eq!(dec("1.10"), dec("11e-1"));
        assert_eq!(dec("-0"), dec("0.000e5"));
        assert!(dec("-0").is_zero() && !dec("1e-400").is_zero());
        assert_eq!(
            dec("9007199254740993.0").to_int(),
            Some(9_007_199_254_740_993)
        );
        assert_eq!(dec("1e3").to_int(), Some(1000));
        assert_eq!(dec("1.0000000000000000001").to_int(), None);
        for bad in ["", "-", ".", "1e", "1e+", "0x10", " 1", "1_000", "1.2.3"] {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn multiples_are_decided_exactly_on_the_decimals() {
        let m = |v: &str, m: &str| dec(v).is_multiple_of(&dec(m));
        assert!(m("0.3", "0.1") && m("1000000000", "1") && m("1e300", "0.1") && m("0", "7"));
        assert!(!m("1000000000.5", "1") && !m("0.30000000000000001", "0.1") && !m("0.25", "0.1"));
        assert!(m("-4.5", "1.5") && !m("4.4", "1.5") && m("123456789012345678901234567890", "5"));
        assert_eq!(Decimal::of_f64(0.1), Some(dec("0.1")));
    }

    #[test]
    fn number_tokens_skip_strings() {
        let tokens: Vec<_> = number_tokens(r#"{"a": -1.10, "b\"1": "2", "c": [1e2, 0]}"#).collect();
        assert_eq!(tokens, ["-1.10", "1e2", "0"]);
    }
}
