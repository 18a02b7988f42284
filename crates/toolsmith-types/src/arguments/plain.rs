//! The plain fast path: clean arguments of a tool whose parameters are all plain, read by
//! serde alone.
//!
//! A parameter type is [`Plain`] when serde checks its JSON exactly as the checking reader
//! ([`canonical`](super::canonical)) does: booleans, integers of at most 64 bits, strings, and
//! `Option`s of these. The `#[tool]` macro probes each parameter's type for it at compile time
//! (autoref specialization through [`PlainProbe`], [`ViaPlain`] and [`ViaNotPlain`]) and says
//! whether all of them are, with no defaults; [`typed_arguments`](super::typed_arguments) then
//! tries serde alone first.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::policy::Limits;
use crate::ty::{Type, TypeGraph};

use super::Arguments;

/// Plain arguments read by serde alone, or `None` for the checking reader.
///
/// `A` must be the macro's arguments struct for plain parameters without defaults
/// (`deny_unknown_fields`, one field a parameter), whose type is `parameters`.
///
/// Why this is the checking reader's answer: every field is a boolean, an integer of at most 64
/// bits, a string, or an `Option` of one, with no default. serde then refuses what that reader
/// refuses (a value of another JSON type, an integer outside the Rust type, which is the range
/// its `Describe` states, a missing required field, a repeated or undeclared key) and fills
/// absent `Option`s with `None`, as coercion does. What serde cannot see is checked here: the
/// arguments are an object (serde also reads a struct from an array), and the policy's limits
/// hold (no string is longer than the text it is in; there are no more keys than fields, so no
/// more values than the fields and the object: under a lower limit on values the usual way
/// reads them).
#[inline]
pub(super) fn plain_arguments<A: DeserializeOwned>(
    parameters: &TypeGraph,
    arguments: Arguments<'_>,
    limits: &Limits,
) -> Option<A> {
    let fields = match &parameters.root {
        Type::Struct(st) if st.additional.is_none() => st.fields.len(),
        _ => return None,
    };
    if limits.max_depth < 1 || fields > limits.max_items || fields >= limits.max_values {
        return None;
    }
    let text = match arguments {
        Arguments::Text(text) => text,
        Arguments::Json(Value::String(text)) => text,
        Arguments::Json(value @ Value::Object(object)) => {
            let short = |v: &Value| {
                v.as_str()
                    .is_none_or(|s| s.len() <= limits.max_string_bytes)
            };
            return object
                .values()
                .all(short)
                .then(|| A::deserialize(value).ok())
                .flatten();
        }
        Arguments::Json(_) => return None,
    };
    let within = text.len() <= limits.max_input_bytes && text.len() <= limits.max_string_bytes;
    // Arguments a program sends start with their brace; only other text is trimmed to look.
    let object = text.starts_with('{') || text.trim_start().starts_with('{');
    if !within || !object {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// A parameter type whose JSON serde checks exactly as coercion's checking reader does:
/// booleans, integers of at most 64 bits, strings, and `Option`s of these. A tool whose
/// parameters are all `Plain` (and have no defaults) reads clean arguments by serde alone.
pub trait Plain {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Plain for $t {}
        impl Plain for Option<$t> {}
    )*};
}

plain!(
    bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, String
);

/// A parameter type, probed for [`Plain`]: generated code calls
/// `(&&PlainProbe::<T>::new()).plain()` with both `Via*Plain` traits in scope.
pub struct PlainProbe<T>(PhantomData<fn() -> T>);

impl<T> PlainProbe<T> {
    /// The probe for `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        PlainProbe(PhantomData)
    }
}

/// `T: Plain`.
pub trait ViaPlain {
    /// `true`.
    fn plain(&self) -> bool;
}
impl<T: Plain> ViaPlain for &PlainProbe<T> {
    #[inline]
    fn plain(&self) -> bool {
        true
    }
}

/// Any other type.
pub trait ViaNotPlain {
    /// `false`.
    fn plain(&self) -> bool;
}
impl<T> ViaNotPlain for PlainProbe<T> {
    #[inline]
    fn plain(&self) -> bool {
        false
    }
}
