//! Bound arithmetic: `minimum`, `maximum` and the exclusive bounds (the 2020-12 numbers and the
//! draft-4 booleans) of integers, exact in `i128`, and of numbers; `multipleOf`; and the counts
//! that bound lengths and sizes (`minLength`, `maxItems`, ...).

use serde_json::{Map, Value};

use super::ImportCode;
use super::walk::Importer;
use crate::pointer::pointer_push;
use crate::ty::{IntegerType, NumberType, Type};

impl<'s, 'd> Importer<'s, 'd> {
    /// A non-negative whole number keyword (`minLength`, `maxItems`, ...).
    pub(super) fn count(
        &mut self,
        object: &Map<String, Value>,
        keyword: &str,
        path: &str,
    ) -> Option<u64> {
        let value = object.get(keyword)?;
        let count = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                .map(|f| f as u64)
        });
        if count.is_none() {
            self.error(
                &pointer_push(path, keyword),
                format!("`{keyword}` must be a non-negative whole number"),
            );
        }
        count
    }

    pub(super) fn integer(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let [minimum, maximum, exclusive_minimum, exclusive_maximum] =
            self.bounds(object, path, integer_bound);
        let mut out = IntegerType {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of: None,
        };
        if let Some(value) = object.get("multipleOf") {
            match value.as_u64().filter(|m| *m > 0).or_else(|| {
                value
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= u64::MAX as f64)
                    .map(|f| f as u64)
            }) {
                Some(m) => out.multiple_of = Some(m),
                // Valid JSON Schema (`multipleOf: 0.5` of an integer) the integer type cannot
                // hold.
                None if value.as_f64().is_some_and(|f| f.is_finite() && f > 0.0) => {
                    self.unsupported(
                        &pointer_push(path, "multipleOf"),
                        ImportCode::UnsupportedKeyword,
                        format!(
                            "`multipleOf: {value}` of an integer cannot be enforced (only a \
                             whole number can)"
                        ),
                    );
                }
                None => self.error(
                    &pointer_push(path, "multipleOf"),
                    "`multipleOf` must be a number greater than 0",
                ),
            }
        }
        Type::Integer(out)
    }

    pub(super) fn number(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let [minimum, maximum, exclusive_minimum, exclusive_maximum] =
            self.bounds(object, path, |value, _| match value.as_f64() {
                Some(bound) if bound.is_finite() => Ok(Some(bound)),
                _ => Err("must be a number"),
            });
        let mut out = NumberType {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of: None,
        };
        if let Some(value) = object.get("multipleOf") {
            match value.as_f64().filter(|m| m.is_finite() && *m > 0.0) {
                Some(m) => out.multiple_of = Some(m),
                None => self.error(
                    &pointer_push(path, "multipleOf"),
                    "`multipleOf` must be a positive number",
                ),
            }
        }
        Type::Number(out)
    }

    /// `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum`, each read by `read`
    /// (told whether it is a lower bound), with the draft-4 boolean spelling folded in.
    fn bounds<T>(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        read: impl Fn(&Value, bool) -> Result<Option<T>, &'static str>,
    ) -> [Option<T>; 4] {
        let draft4 = self.draft4_exclusive(object, path);
        let [
            mut minimum,
            mut maximum,
            mut exclusive_minimum,
            mut exclusive_maximum,
        ] = [None, None, None, None];
        for (keyword, low) in [
            ("minimum", true),
            ("maximum", false),
            ("exclusiveMinimum", true),
            ("exclusiveMaximum", false),
        ] {
            let Some(value) = object.get(keyword) else {
                continue;
            };
            if value.is_boolean() {
                continue; // draft-4 spelling, folded in below
            }
            let bound = match read(value, low) {
                Ok(bound) => bound,
                Err(reason) => {
                    self.error(
                        &pointer_push(path, keyword),
                        format!("`{keyword}` {reason}"),
                    );
                    continue;
                }
            };
            let slot = match keyword {
                "minimum" if draft4.0 => &mut exclusive_minimum,
                "maximum" if draft4.1 => &mut exclusive_maximum,
                "minimum" => &mut minimum,
                "maximum" => &mut maximum,
                "exclusiveMinimum" => &mut exclusive_minimum,
                _ => &mut exclusive_maximum,
            };
            *slot = bound;
        }
        [minimum, maximum, exclusive_minimum, exclusive_maximum]
    }

    /// The draft-4 (OpenAPI 3.0) spelling `exclusiveMinimum: true`, which makes `minimum`
    /// exclusive: (minimum exclusive, maximum exclusive).
    fn draft4_exclusive(&mut self, object: &Map<String, Value>, path: &str) -> (bool, bool) {
        let mut flag = |keyword: &str, bound: &str| match object.get(keyword) {
            Some(Value::Bool(true)) => {
                if !object.contains_key(bound) {
                    self.error(
                        &pointer_push(path, keyword),
                        format!("`{keyword}: true` needs a `{bound}`"),
                    );
                }
                true
            }
            _ => false,
        };
        (
            flag("exclusiveMinimum", "minimum"),
            flag("exclusiveMaximum", "maximum"),
        )
    }
}

/// An integer bound from a JSON number: a whole number, with bounds past the 64-bit range that
/// every 64-bit integer satisfies read as no bound. `low` is true for lower bounds.
fn integer_bound(value: &Value, low: bool) -> Result<Option<i128>, &'static str> {
    if let Some(i) = value.as_i64() {
        return Ok(Some(i128::from(i)));
    }
    if let Some(u) = value.as_u64() {
        return Ok(Some(i128::from(u)));
    }
    let Some(f) = value.as_f64() else {
        return Err("must be a number");
    };
    if f.fract() != 0.0 {
        return Err("of an integer must be a whole number");
    }
    // Past the 64-bit range: no bound on one side, nothing valid on the other.
    if f >= 18_446_744_073_709_551_616.0 {
        return if low {
            Err("is past the 64-bit integer range")
        } else {
            Ok(None)
        };
    }
    if f < -9_223_372_036_854_775_808.0 {
        return if low {
            Ok(None)
        } else {
            Err("is past the 64-bit integer range")
        };
    }
    // Exact: `f` is whole and within the range of i128.
    Ok(Some(f as i128))
}
