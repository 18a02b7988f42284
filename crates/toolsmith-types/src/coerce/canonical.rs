//! A one-pass check that argument text is already the canonical value of a type.
//!
//! Most tool calls are clean. For those, the text can be deserialized straight into the Rust
//! type, skipping the `Value` tree that coercion needs: this check streams over the text once,
//! borrowing strings, and answers "canonical" only when coercion would return an equal value
//! (its keys possibly in declaration order) with no repair and no error. It is conservative: anything it is unsure of (an untagged union, a default to
//! fill in, a `_type` that is not the first key) answers "no", and the full coercion decides.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::fold_style;
use super::literal::Decimal;
use super::scalar::{Int, integer_violations, number_violations, string_violations};
use crate::policy::Limits;
use crate::ty::{EnumType, EnumValue, MapKeys, StructType, TYPE_TAG, TaggedUnion, Type, TypeGraph};

/// Whether `text` is exactly the canonical arguments for the root of `graph`: coercing it would
/// give the parsed text back with no repair and no error.
pub(crate) fn is_canonical_text(graph: &TypeGraph, text: &str, limits: &Limits) -> bool {
    // Arguments are an object: anything else is for the full reading to report.
    if text.len() > limits.max_input_bytes || !text.trim_start().starts_with('{') {
        return false;
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let check = Check {
        graph,
        limits,
        ty: &graph.root,
        depth: 0,
    };
    check.deserialize(&mut deserializer).is_ok() && deserializer.end().is_ok()
}

/// The reason the check gives up; never shown to anyone (the full coercion then runs).
#[derive(Debug)]
struct NotCanonical;

impl fmt::Display for NotCanonical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not canonical")
    }
}

impl std::error::Error for NotCanonical {}

impl de::Error for NotCanonical {
    fn custom<T: fmt::Display>(_: T) -> Self {
        NotCanonical
    }
}

fn no<T, E: de::Error>() -> Result<T, E> {
    Err(E::custom(NotCanonical))
}

/// Checks one value against `ty` (which may be nilable or a reference).
#[derive(Clone, Copy)]
struct Check<'g> {
    graph: &'g TypeGraph,
    limits: &'g Limits,
    ty: &'g Type,
    depth: usize,
}

impl<'g> Check<'g> {
    fn child(&self, ty: &'g Type) -> Check<'g> {
        Check {
            ty,
            depth: self.depth + 1,
            ..*self
        }
    }
}

/// A [`Check`] with its references followed once: what one value is checked against.
struct Resolved<'g> {
    at: Check<'g>,
    /// The type a non-null value must have.
    ty: &'g Type,
    /// Whether `null` is allowed.
    nilable: bool,
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.depth > self.limits.max_depth {
            return no();
        }
        let (ty, nilable) = match self.graph.resolve(self.ty) {
            Some(Type::Nilable(inner)) => (self.graph.resolve(inner), true),
            other => (other, false),
        };
        match ty {
            None => no(),
            Some(Type::Any) => deserializer.deserialize_any(AnyCheck {
                limits: self.limits,
                depth: self.depth,
            }),
            Some(ty) => deserializer.deserialize_any(Resolved {
                at: self,
                ty,
                nilable,
            }),
        }
    }
}

impl<'de> Visitor<'de> for Resolved<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a canonical value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if self.nilable { Ok(()) } else { no() }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        match self.ty {
            Type::Boolean => Ok(()),
            _ => no(),
        }
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        self.integer(Int::from(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        self.integer(Int::from(n))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<(), E> {
        match self.ty {
            // A float's literal is not seen here: `0.0` may be `1e-400` read as 0, and
            // `multipleOf` is decided on the digits sent, so both take the full coercion.
            Type::Number(nt)
                if f.is_finite()
                    && f != 0.0
                    && nt.multiple_of.is_none()
                    && number_violations(nt, f, || None).is_empty() =>
            {
                Ok(())
            }
            _ => no(),
        }
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        if s.len() > self.at.limits.max_string_bytes {
            return no();
        }
        match self.ty {
            Type::String(st) if st.is_unconstrained() || string_violations(st, s).is_empty() => {
                Ok(())
            }
            Type::Enum(et) if names_value(et, s) => Ok(()),
            _ => no(),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Type::Array(at) = self.ty else {
            return no();
        };
        let count = elements(&mut seq, self.at.limits, || self.at.child(&at.items))? as u64;
        let too_few = at.min_items.is_some_and(|min| count < min);
        let too_many = at.max_items.is_some_and(|max| count > max);
        if too_few || too_many { no() } else { Ok(()) }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match self.ty {
            Type::Struct(st) => self.fields(st, &mut map, None),
            Type::Tagged(tu) => self.tagged(tu, &mut map),
            Type::Map(mt) => entries(
                &mut map,
                self.at.limits,
                |key| match &mt.keys {
                    MapKeys::String => true,
                    MapKeys::Enum(et) => names_value(et, key),
                },
                || self.at.child(&mt.values),
            ),
            _ => no(),
        }
    }
}

impl<'g> Resolved<'g> {
    fn integer<E: de::Error>(self, n: Int) -> Result<(), E> {
        let ok = match self.ty {
            Type::Integer(it) => integer_violations(it, n).is_empty(),
            Type::Number(nt) => {
                number_violations(nt, n as f64, || Some(Decimal::of_int(n))).is_empty()
            }
            Type::Enum(et) => et
                .variants
                .iter()
                .any(|v| matches!(v.value, EnumValue::Integer(i) if Int::from(i) == n)),
            _ => false,
        };
        if ok { Ok(()) } else { no() }
    }

    /// The fields of `st`, after `tag` (already read) when it is a tagged variant.
    fn fields<'de, A: MapAccess<'de>>(
        self,
        st: &'g StructType,
        map: &mut A,
        tag: Option<&str>,
    ) -> Result<(), A::Error> {
        // One bit a field; structs wider than this go the long way.
        if st.fields.len() > 128 {
            return no();
        }
        let mut seen: u128 = 0;
        // Only structs open to extra keys need to remember them.
        let mut extra = st.additional.as_ref().map(|_| HashSet::new());
        let mut entries = usize::from(tag.is_some());
        let mut next = 0;
        while let Some(key) = map.next_key_seed(Text)? {
            entries += 1;
            if entries > self.at.limits.max_items {
                return no();
            }
            // Keys usually come in declaration order: try the field after the last one first.
            let found = match st.fields.get(next) {
                Some(field) if field.name == key => Some(next),
                _ => st.fields.iter().position(|f| f.name == key),
            };
            match found {
                Some(i) => {
                    next = i + 1;
                    let bit = 1u128 << i;
                    if seen & bit != 0 {
                        return no();
                    }
                    seen |= bit;
                    // `null` for an optional field that is not nilable fails here: it is a repair.
                    map.next_value_seed(self.at.child(&st.fields[i].ty))?;
                }
                None => match (&st.additional, &mut extra) {
                    // A key that names a field in another case or style is renamed by coercion.
                    (Some(extra_ty), Some(seen_extra))
                        if key != TYPE_TAG
                            && !seen_extra.contains(&key)
                            && !names_a_field_loosely(st, &key) =>
                    {
                        seen_extra.insert(key);
                        map.next_value_seed(self.at.child(extra_ty))?;
                    }
                    _ => return no(),
                },
            }
        }
        let complete = st.fields.iter().enumerate().all(|(i, field)| {
            seen & (1u128 << i) != 0 || (!field.required && field.default.is_none())
        });
        if complete { Ok(()) } else { no() }
    }

    /// A tagged union whose canonical value starts with `_type`.
    fn tagged<'de, A: MapAccess<'de>>(
        self,
        tu: &'g TaggedUnion,
        map: &mut A,
    ) -> Result<(), A::Error> {
        if map.next_key_seed(Text)?.as_deref() != Some(TYPE_TAG) {
            return no();
        }
        let tag = map.next_value_seed(Text)?;
        let Some(variant) = tu.variants.iter().find(|v| v.tag == tag) else {
            return no();
        };
        match self.at.graph.resolve(&variant.ty) {
            Some(Type::Struct(st)) if st.get(TYPE_TAG).is_none() => {
                self.fields(st, map, Some(&tag))
            }
            _ => no(),
        }
    }
}

/// Whether `key` folds (case and word style aside) to the name of a field of `st`.
fn names_a_field_loosely(st: &StructType, key: &str) -> bool {
    let folded = fold_style(key);
    st.fields.iter().any(|f| fold_style(&f.name) == folded)
}

/// Whether `s` is exactly one of the string values of `et` (an alias is not canonical).
fn names_value(et: &EnumType, s: &str) -> bool {
    et.variants
        .iter()
        .any(|v| matches!(&v.value, EnumValue::String(value) if value == s))
}

/// Checks any JSON within the limits, and that no object repeats a key (which argument text
/// may not do).
#[derive(Clone, Copy)]
struct AnyCheck<'g> {
    limits: &'g Limits,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for AnyCheck<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.depth > self.limits.max_depth {
            return no();
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnyCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        if s.len() > self.limits.max_string_bytes {
            no()
        } else {
            Ok(())
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        elements(&mut seq, self.limits, || self.child()).map(|_| ())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        entries(&mut map, self.limits, |_| true, || self.child())
    }
}

impl AnyCheck<'_> {
    fn child(self) -> Self {
        AnyCheck {
            depth: self.depth + 1,
            ..self
        }
    }
}

/// Checks every element of an array with a seed from `child`; how many there were.
fn elements<'de, A, S>(
    seq: &mut A,
    limits: &Limits,
    child: impl Fn() -> S,
) -> Result<usize, A::Error>
where
    A: SeqAccess<'de>,
    S: DeserializeSeed<'de, Value = ()>,
{
    let mut count = 0;
    while seq.next_element_seed(child())?.is_some() {
        count += 1;
        if count > limits.max_items {
            return no();
        }
    }
    Ok(count)
}

/// Checks every entry of a dictionary: its key with `key_ok`, its value with a seed from
/// `child`; a repeated key is never canonical (argument text may not repeat one).
fn entries<'de, A, S>(
    map: &mut A,
    limits: &Limits,
    key_ok: impl Fn(&str) -> bool,
    child: impl Fn() -> S,
) -> Result<(), A::Error>
where
    A: MapAccess<'de>,
    S: DeserializeSeed<'de, Value = ()>,
{
    let mut seen = HashSet::new();
    while let Some(key) = map.next_key_seed(Text)? {
        if !key_ok(&key) || seen.len() >= limits.max_items || !seen.insert(key) {
            return no();
        }
        map.next_value_seed(child())?;
    }
    Ok(())
}

/// Reads a string, borrowing it from the text where it has no escapes. (`Cow<str>`'s own
/// `Deserialize` always copies.)
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
}
