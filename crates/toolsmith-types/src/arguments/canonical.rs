//! The fast path: argument text that is already the canonical value of a type, read straight
//! into the Rust type in one pass.
//!
//! Most tool calls are clean. For those, the text is deserialized straight into the Rust type,
//! skipping the `Value` tree that coercion needs: [`read_canonical`] wraps `serde_json`'s
//! deserializer in one that checks every value against the type as `T`'s own `Deserialize`
//! pulls it through, and the result counts only when coercion would have returned an equal
//! value (its keys possibly in declaration order) with no repair and no error. It is
//! conservative: anything it is unsure of (an untagged union, a default to fill in, a `_type`
//! that is not the first key, a float that may hide a literal) answers "no", and the full
//! coercion decides. It counts the values it reads as the full reading does, and past
//! `Limits::max_values` answers "no" too, so that the full reading refuses them with its
//! error.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, StrDeserializer, StringDeserializer};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};

use crate::coerce::{
    Int, fold_style, integer_ok, number_bounds_ok, number_violations, string_violations,
};
use crate::literal::Decimal;
use crate::policy::Limits;
use crate::ty::{EnumType, EnumValue, MapKeys, StructType, TYPE_TAG, TaggedUnion, Type, TypeGraph};

/// What the fast path made of argument text.
pub(crate) enum Fast<T> {
    /// The text is canonical, and this is `T` read from it.
    Read(T),
    /// The text is not canonical (or `T` refused it): the full coercion decides.
    NotCanonical,
    /// `T` takes the raw text (`serde_json::value::RawValue`), which a wrapped deserializer cannot
    /// hand it: check first, then read.
    RawText,
}

/// The token `serde_json` recognises to hand a `RawValue` its text.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Reads `text` into `T` when it is exactly the canonical arguments for the root of `graph`.
pub(crate) fn read_canonical<T: DeserializeOwned>(
    graph: &TypeGraph,
    text: &str,
    limits: &Limits,
) -> Fast<T> {
    // Arguments are an object: anything else is for the full reading to report.
    if text.len() > limits.max_input_bytes || !text.trim_start().starts_with('{') {
        return Fast::NotCanonical;
    }
    let pass = Pass {
        graph,
        limits,
        raw: Cell::new(false),
        values: Cell::new(0),
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let at = Check {
        pass: &pass,
        ty: &graph.root,
        depth: 0,
    };
    let read = T::deserialize(Checked {
        de: &mut deserializer,
        at,
    });
    match read {
        Ok(value) if deserializer.end().is_ok() => Fast::Read(value),
        _ if pass.raw.get() => Fast::RawText,
        _ => Fast::NotCanonical,
    }
}

/// Whether `text` is exactly the canonical arguments for the root of `graph`: coercing it would
/// give the parsed text back with no repair and no error.
pub(crate) fn is_canonical_text(graph: &TypeGraph, text: &str, limits: &Limits) -> bool {
    matches!(
        read_canonical::<IgnoredAny>(graph, text, limits),
        Fast::Read(_)
    )
}

/// The reason the check gives up; never shown to anyone (the full coercion then runs).
#[derive(Debug)]
struct NotCanonical;

impl fmt::Display for NotCanonical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not canonical")
    }
}

fn no<T, E: de::Error>() -> Result<T, E> {
    Err(E::custom(NotCanonical))
}

// ---------------------------------------------------------------------------------------------
// What is canonical, value by value

/// What one pass over the text checks against.
struct Pass<'g> {
    graph: &'g TypeGraph,
    limits: &'g Limits,
    /// Set when `T` asks for its raw text.
    raw: Cell<bool>,
    /// The JSON values read so far.
    values: Cell<usize>,
}

impl Pass<'_> {
    /// Counts one more JSON value; whether the values are still within the limit (past it the
    /// text is not canonical, and the full reading refuses it).
    #[inline(always)]
    fn counted(&self) -> bool {
        let values = self.values.get() + 1;
        self.values.set(values);
        values <= self.limits.max_values
    }
}

/// Checks one value against `ty` (which may be nilable or a reference). Small, since it is
/// copied at every value.
#[derive(Clone, Copy)]
struct Check<'g> {
    pass: &'g Pass<'g>,
    ty: &'g Type,
    depth: usize,
}

impl<'g> Check<'g> {
    #[inline]
    fn child(&self, ty: &'g Type) -> Check<'g> {
        Check {
            ty,
            depth: self.depth + 1,
            ..*self
        }
    }

    #[inline]
    fn limits(&self) -> &'g Limits {
        self.pass.limits
    }

    /// The type a value must have, with its references followed once.
    #[inline(always)]
    fn resolve(self) -> Option<Resolved<'g>> {
        if self.depth > self.limits().max_depth {
            return None;
        }
        let graph = self.pass.graph;
        let (ty, nilable) = match graph.resolve(self.ty) {
            Some(Type::Nilable(inner)) => (graph.resolve(inner)?, true),
            other => (other?, false),
        };
        Some(Resolved {
            at: self,
            ty,
            nilable,
        })
    }
}

/// A [`Check`] with its references followed once: what one value is checked against.
#[derive(Clone, Copy)]
struct Resolved<'g> {
    at: Check<'g>,
    /// The type a non-null value must have.
    ty: &'g Type,
    /// Whether `null` is allowed.
    nilable: bool,
}

impl<'g> Resolved<'g> {
    /// Counts the value being checked (each value reaches exactly one `visit_*` of a [`Watch`]
    /// or an [`EnumText`], which call this once, or is a `_type`, which [`Entries::tag`]
    /// counts); whether it is within the limit.
    #[inline(always)]
    fn counted(&self) -> bool {
        self.at.pass.counted()
    }

    #[inline]
    fn null_ok(&self) -> bool {
        self.nilable || matches!(self.ty, Type::Any)
    }

    #[inline]
    fn bool_ok(&self) -> bool {
        matches!(self.ty, Type::Boolean | Type::Any)
    }

    #[inline(always)]
    fn int_ok(&self, n: Int) -> bool {
        match self.ty {
            Type::Integer(it) => integer_ok(it, n),
            Type::Number(nt) if nt.multiple_of.is_none() => number_bounds_ok(nt, n as f64),
            Type::Number(nt) => {
                number_violations(nt, n as f64, || Some(Decimal::of_int(n))).is_empty()
            }
            Type::Enum(et) => et
                .variants
                .iter()
                .any(|v| matches!(v.value, EnumValue::Integer(i) if Int::from(i) == n)),
            Type::Any => true,
            _ => false,
        }
    }

    #[inline]
    fn float_ok(&self, f: f64) -> bool {
        match self.ty {
            // A float's literal is not seen here: `0.0` may be `1e-400` read as 0, and
            // `multipleOf` is decided on the digits sent, so both take the full coercion.
            Type::Number(nt) => {
                f.is_finite() && f != 0.0 && nt.multiple_of.is_none() && number_bounds_ok(nt, f)
            }
            Type::Any => true,
            _ => false,
        }
    }

    #[inline]
    fn str_ok(&self, s: &str) -> bool {
        if s.len() > self.at.limits().max_string_bytes {
            return false;
        }
        match self.ty {
            Type::String(st) => st.is_unconstrained() || string_violations(st, s).is_empty(),
            Type::Enum(et) => names_value(et, s),
            Type::Any => true,
            _ => false,
        }
    }

    /// How the elements of an array are checked, when the type is one.
    #[inline]
    fn items(&self) -> Option<Items<'g>> {
        let (item, min, max) = match self.ty {
            // Uniqueness needs the items side by side: the full coercion decides.
            Type::Array(at) if at.unique_items => return None,
            Type::Array(at) => (&*at.items, at.min_items, at.max_items),
            Type::Any => (self.ty, None, None),
            _ => return None,
        };
        Some(Items {
            at: self.at,
            item,
            min,
            max,
        })
    }

    /// How the entries of an object are checked, when the type is one.
    #[inline(always)]
    fn entries(&self) -> Option<Entries<'g>> {
        Some(match self.ty {
            Type::Struct(st) => Entries::Fields(Fields::new(self.at, st, false)?),
            Type::Tagged(tu) => Entries::Tag(self.at, tu),
            Type::Map(mt) => Entries::Dict(Box::new(Dict {
                at: self.at,
                keys: match &mt.keys {
                    MapKeys::String => None,
                    MapKeys::Enum(et) => Some(et),
                },
                values: &mt.values,
                seen: HashSet::new(),
            })),
            Type::Any => Entries::Dict(Box::new(Dict {
                at: self.at,
                keys: None,
                values: self.ty,
                seen: HashSet::new(),
            })),
            _ => return None,
        })
    }
}

/// The elements of an array.
struct Items<'g> {
    at: Check<'g>,
    item: &'g Type,
    min: Option<u64>,
    max: Option<u64>,
}

impl Items<'_> {
    /// Whether `count` elements so far stay within the limit and `maxItems`.
    #[inline]
    fn count_ok_so_far(&self, count: usize) -> bool {
        count <= self.at.limits().max_items && self.max.is_none_or(|max| count as u64 <= max)
    }

    /// Whether an array of `count` elements is within the limit and its bounds.
    #[inline]
    fn count_ok(&self, count: usize) -> bool {
        let count64 = count as u64;
        count <= self.at.limits().max_items
            && self.min.is_none_or(|min| count64 >= min)
            && self.max.is_none_or(|max| count64 <= max)
    }
}

/// What the value after a key is.
#[derive(Clone, Copy)]
enum Next<'g> {
    /// A value checked against a type.
    Value(Check<'g>),
    /// The `_type` of a tagged union.
    Tag,
}

/// The entries of an object, checked as they come.
enum Entries<'g> {
    Fields(Fields<'g>),
    /// A tagged union before its `_type` (which must come first).
    Tag(Check<'g>, &'g TaggedUnion),
    /// A tagged union whose `_type` is being read.
    Tagging(Check<'g>, &'g TaggedUnion),
    /// Boxed: dictionaries are rarer than structs, and this enum is moved at every object.
    Dict(Box<Dict<'g>>),
    /// Given up (a tag naming no struct variant).
    Broken,
}

impl<'g> Entries<'g> {
    /// What the value for `key` must be; `None` when the key makes the object not canonical.
    #[inline(always)]
    fn key(&mut self, key: &str) -> Option<Next<'g>> {
        match self {
            Entries::Fields(fields) => fields.key(key).map(Next::Value),
            Entries::Tag(at, tu) if key == TYPE_TAG => {
                *self = Entries::Tagging(*at, tu);
                Some(Next::Tag)
            }
            Entries::Dict(dict) => dict.key(key).map(Next::Value),
            _ => None,
        }
    }

    /// Reads the `_type` of a tagged union (a value, counted as one): its variant's fields come
    /// next.
    fn tag(&mut self, tag: &str) -> bool {
        let Entries::Tagging(at, tu) = *self else {
            return false;
        };
        if !at.pass.counted() {
            return false;
        }
        let fields = tu
            .variants
            .iter()
            .find(|v| v.tag == tag)
            .and_then(|variant| match at.pass.graph.resolve(&variant.ty) {
                Some(Type::Struct(st)) if st.get(TYPE_TAG).is_none() => Fields::new(at, st, true),
                _ => None,
            });
        *self = fields.map_or(Entries::Broken, Entries::Fields);
        matches!(self, Entries::Fields(_))
    }

    /// Whether the object was complete.
    #[inline]
    fn finish(&self) -> bool {
        match self {
            Entries::Fields(fields) => fields.finish(),
            Entries::Dict(_) => true,
            _ => false,
        }
    }
}

/// The fields of a struct: each at most once, none undeclared, every required one present.
struct Fields<'g> {
    at: Check<'g>,
    st: &'g StructType,
    /// One bit a field.
    seen: u64,
    /// What a struct open to extra keys keeps about them, made at the first key that is not a
    /// field (boxed: most structs are closed, and this is moved at every object).
    open: Option<Box<Open>>,
    entries: usize,
    next: usize,
}

/// The extra keys of a struct open to them.
#[derive(Default)]
struct Open {
    /// Extra keys met.
    extra: HashSet<String>,
    /// The fields' names and aliases in canonical word style, folded once the first extra key
    /// arrives.
    styled: Option<Vec<String>>,
}

impl<'g> Fields<'g> {
    /// The fields of `st`, after its `_type` when `tagged`; `None` for structs wider than the
    /// bit set (they go the long way).
    #[inline]
    fn new(at: Check<'g>, st: &'g StructType, tagged: bool) -> Option<Self> {
        (st.fields.len() <= 64).then(|| Fields {
            at,
            st,
            seen: 0,
            open: None,
            entries: usize::from(tagged),
            next: 0,
        })
    }

    #[inline(always)]
    fn key(&mut self, key: &str) -> Option<Check<'g>> {
        self.entries += 1;
        if self.entries > self.at.limits().max_items {
            return None;
        }
        // Keys usually come in declaration order: try the field after the last one first.
        let found = match self.st.fields.get(self.next) {
            Some(field) if field.name == key => Some(self.next),
            _ => self.st.fields.iter().position(|f| f.name == key),
        };
        match found {
            Some(i) => {
                self.next = i + 1;
                let bit = 1u64 << i;
                if self.seen & bit != 0 {
                    return None;
                }
                self.seen |= bit;
                // `null` for an optional field that is not nilable fails there: it is a repair.
                Some(self.at.child(&self.st.fields.get(i)?.ty))
            }
            None => match &self.st.additional {
                Some(extra_ty) if key != TYPE_TAG => {
                    let open = self.open.get_or_insert_with(Box::default);
                    // A key that is an alias, or names a field in another case or style, is
                    // renamed by coercion.
                    if names_a_field_loosely(self.st, &mut open.styled, key) {
                        return None;
                    }
                    open.extra
                        .insert(key.to_owned())
                        .then(|| self.at.child(extra_ty))
                }
                _ => None,
            },
        }
    }

    #[inline]
    fn finish(&self) -> bool {
        // Usually every field was sent.
        let n = self.st.fields.len();
        if n > 0 && self.seen == u64::MAX >> (64 - n) {
            return true;
        }
        self.st.fields.iter().enumerate().all(|(i, field)| {
            self.seen & (1u64 << i) != 0 || (!field.required && field.default.is_none())
        })
    }
}

/// The entries of a dictionary: keys checked, none repeated (argument text may not repeat one).
struct Dict<'g> {
    at: Check<'g>,
    keys: Option<&'g EnumType>,
    values: &'g Type,
    seen: HashSet<String>,
}

impl<'g> Dict<'g> {
    #[inline]
    fn key(&mut self, key: &str) -> Option<Check<'g>> {
        let key_ok = self.keys.is_none_or(|et| names_value(et, key));
        if !key_ok || self.seen.len() >= self.at.limits().max_items {
            return None;
        }
        self.seen
            .insert(key.to_owned())
            .then(|| self.at.child(self.values))
    }
}

/// Whether `key` is an alias of a field of `st`, or names a field or alias in another case or
/// word style; `styled` holds (or is given) the styled names of `st`.
fn names_a_field_loosely(st: &StructType, styled: &mut Option<Vec<String>>, key: &str) -> bool {
    if st.fields.iter().any(|f| f.aliases.iter().any(|a| a == key)) {
        return true;
    }
    let Some(folded) = fold_style(key) else {
        return false;
    };
    styled
        .get_or_insert_with(|| {
            st.fields
                .iter()
                .flat_map(|f| std::iter::once(&f.name).chain(&f.aliases))
                .filter_map(|name| fold_style(name))
                .collect()
        })
        .contains(&folded)
}

/// Whether `s` is exactly one of the string values of `et` (an alias is not canonical).
#[inline]
fn names_value(et: &EnumType, s: &str) -> bool {
    et.variants
        .iter()
        .any(|v| matches!(&v.value, EnumValue::String(value) if value == s))
}

// ---------------------------------------------------------------------------------------------
// The checking deserializer: `serde_json`'s, with every value checked on its way to `T`
//
// Each value passes through a few thin layers (deserializer, visitor, seed, access). They are
// `#[inline(always)]`: left to the optimiser, the monomorphised layers stayed out of line, and
// small arguments (`{"a": 2, "b": 40}`) took a quarter longer to read.

/// A deserializer for one value: `de`'s, checked against `at`.
struct Checked<'g, D> {
    de: D,
    at: Check<'g>,
}

/// A seed for one value: `seed`, reading through a [`Checked`] deserializer.
struct CheckedSeed<'g, S> {
    seed: S,
    at: Check<'g>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckedSeed<'_, S> {
    type Value = S::Value;

    #[inline(always)]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Checked { de, at: self.at })
    }
}

/// Calls `$with!` with every `Deserializer` method that both wrappers forward alike (and any
/// `$extra` ones): each is written once here, whatever each wrapper does in it.
macro_rules! deserializer_methods {
    ($with:ident $(; $($extra:tt)*)?) => {
        $with! {
            deserialize_any();
            deserialize_bool();
            deserialize_i8();
            deserialize_i16();
            deserialize_i32();
            deserialize_i64();
            deserialize_i128();
            deserialize_u8();
            deserialize_u16();
            deserialize_u32();
            deserialize_u64();
            deserialize_u128();
            deserialize_f32();
            deserialize_f64();
            deserialize_char();
            deserialize_str();
            deserialize_string();
            deserialize_bytes();
            deserialize_byte_buf();
            deserialize_option();
            deserialize_unit();
            deserialize_unit_struct(name: &'static str);
            deserialize_seq();
            deserialize_tuple(len: usize);
            deserialize_tuple_struct(name: &'static str, len: usize);
            deserialize_map();
            deserialize_struct(name: &'static str, fields: &'static [&'static str]);
            deserialize_identifier();
            $($($extra)*)?
        }
    };
}

macro_rules! checked_methods {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[inline(always)]
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            let watch = self.watch(visitor)?;
            self.de.$method($($arg,)* watch)
        }
    )*};
}

impl<'g, D> Checked<'g, D> {
    #[inline(always)]
    fn watch<V, E: de::Error>(&self, inner: V) -> Result<Watch<'g, V>, E> {
        match self.at.resolve() {
            Some(at) => Ok(Watch { inner, at }),
            None => no(),
        }
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checked<'_, D> {
    type Error = D::Error;

    deserializer_methods!(checked_methods);

    #[inline(always)]
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if name == RAW_VALUE_TOKEN {
            self.at.pass.raw.set(true);
            return no();
        }
        let watch = self.watch(visitor)?;
        self.de.deserialize_newtype_struct(name, watch)
    }

    /// A unit-variant enum is a string naming one of the type's values.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let watch = self.watch(visitor)?;
        if !matches!(watch.at.ty, Type::Enum(_)) {
            return no();
        }
        self.de.deserialize_str(EnumText(watch))
    }

    /// A value `T` skips is still checked.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let watch = self.watch(visitor)?;
        self.de.deserialize_any(watch)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// `T`'s visitor, watched: each value is checked before it is handed on.
struct Watch<'g, V> {
    inner: V,
    at: Resolved<'g>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Watch<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    #[inline(always)]
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        if self.at.counted() && self.at.bool_ok() {
            self.inner.visit_bool(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        if self.at.counted() && self.at.int_ok(Int::from(v)) {
            self.inner.visit_i64(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        if self.at.counted() && self.at.int_ok(Int::from(v)) {
            self.inner.visit_u64(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        if self.at.counted() && self.at.float_ok(v) {
            self.inner.visit_f64(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        if self.at.counted() && self.at.str_ok(v) {
            self.inner.visit_str(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        if self.at.counted() && self.at.str_ok(v) {
            self.inner.visit_borrowed_str(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        if self.at.counted() && self.at.str_ok(&v) {
            self.inner.visit_string(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        if self.at.counted() && self.at.null_ok() {
            self.inner.visit_unit()
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        if self.at.counted() && self.at.null_ok() {
            self.inner.visit_none()
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        let at = Check {
            ty: self.at.ty,
            ..self.at.at
        };
        self.inner.visit_some(Checked { de, at })
    }

    #[inline(always)]
    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.inner
            .visit_newtype_struct(Checked { de, at: self.at.at })
    }

    #[inline(always)]
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if !self.at.counted() {
            return no();
        }
        let Some(items) = self.at.items() else {
            return no();
        };
        let count = Cell::new(0);
        let value = self.inner.visit_seq(WatchSeq {
            seq,
            items: &items,
            count: &count,
        })?;
        // A visitor that stops early leaves elements that `serde_json` then refuses.
        if items.count_ok(count.get()) {
            Ok(value)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        if !self.at.counted() {
            return no();
        }
        let Some(mut entries) = self.at.entries() else {
            return no();
        };
        let value = self.inner.visit_map(WatchMap {
            map,
            entries: &mut entries,
            next: None,
        })?;
        if entries.finish() { Ok(value) } else { no() }
    }
}

/// The elements of an array, each checked on its way to `T`.
struct WatchSeq<'s, 'g, A> {
    seq: A,
    items: &'s Items<'g>,
    count: &'s Cell<usize>,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for WatchSeq<'_, '_, A> {
    type Error = A::Error;

    #[inline(always)]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let at = self.items.at.child(self.items.item);
        let element = self.seq.next_element_seed(CheckedSeed { seed, at })?;
        if element.is_some() {
            let count = self.count.get() + 1;
            self.count.set(count);
            // Past a limit or `maxItems` the array is not canonical, whatever follows.
            if !self.items.count_ok_so_far(count) {
                return no();
            }
        }
        Ok(element)
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// The entries of an object, each key and value checked on its way to `T`.
struct WatchMap<'s, 'g, A> {
    map: A,
    entries: &'s mut Entries<'g>,
    /// What the value after the key just read must be.
    next: Option<Next<'g>>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WatchMap<'_, '_, A> {
    type Error = A::Error;

    #[inline(always)]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.next = None;
        self.map.next_key_seed(TextSeed {
            seed,
            role: Role::Key(&mut self.next),
            entries: self.entries,
        })
    }

    #[inline(always)]
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.next.take() {
            Some(Next::Value(at)) => self.map.next_value_seed(CheckedSeed { seed, at }),
            Some(Next::Tag) => self.map.next_value_seed(TextSeed {
                seed,
                role: Role::Tag,
                entries: self.entries,
            }),
            None => no(),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// What a string read by a [`TextSeed`] is.
enum Role<'s, 'g> {
    /// A key; what its value must be goes here.
    Key(&'s mut Option<Next<'g>>),
    /// The `_type` of a tagged union.
    Tag,
}

/// A seed for a key or a `_type`: the string is looked at on its way to `T`.
struct TextSeed<'s, 'g, S> {
    seed: S,
    role: Role<'s, 'g>,
    entries: &'s mut Entries<'g>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for TextSeed<'_, '_, S> {
    type Value = S::Value;

    #[inline(always)]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(TextDe {
            de,
            role: self.role,
            entries: self.entries,
        })
    }
}

/// A deserializer for a key or a `_type`: only strings are canonical.
struct TextDe<'s, 'g, D> {
    de: D,
    role: Role<'s, 'g>,
    entries: &'s mut Entries<'g>,
}

macro_rules! text_methods {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[inline(always)]
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            let watch = WatchText { inner: visitor, role: self.role, entries: self.entries };
            self.de.$method($($arg,)* watch)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for TextDe<'_, '_, D> {
    type Error = D::Error;

    deserializer_methods!(
        text_methods;
        deserialize_newtype_struct(name: &'static str);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    );

    /// A key `T` skips is still looked at.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.deserialize_str(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// `T`'s visitor for a key or a `_type`, watched.
struct WatchText<'s, 'g, V> {
    inner: V,
    role: Role<'s, 'g>,
    entries: &'s mut Entries<'g>,
}

impl<V> WatchText<'_, '_, V> {
    /// Whether the string `s`, in its role, keeps the object canonical.
    #[inline]
    fn ok(&mut self, s: &str) -> bool {
        match &mut self.role {
            Role::Key(next) => {
                **next = self.entries.key(s);
                next.is_some()
            }
            Role::Tag => self.entries.tag(s),
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for WatchText<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    #[inline(always)]
    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<V::Value, E> {
        if self.ok(v) {
            self.inner.visit_str(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_borrowed_str<E: de::Error>(mut self, v: &'de str) -> Result<V::Value, E> {
        if self.ok(v) {
            self.inner.visit_borrowed_str(v)
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_string<E: de::Error>(mut self, v: String) -> Result<V::Value, E> {
        if self.ok(&v) {
            self.inner.visit_string(v)
        } else {
            no()
        }
    }
}

/// `T`'s visitor for a unit-variant enum, reading the string that names the variant.
struct EnumText<'g, V>(Watch<'g, V>);

impl<'de, V: Visitor<'de>> Visitor<'de> for EnumText<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.inner.expecting(f)
    }

    #[inline(always)]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        if self.0.at.counted() && self.0.at.str_ok(v) {
            self.0.inner.visit_enum(StrDeserializer::new(v))
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        if self.0.at.counted() && self.0.at.str_ok(v) {
            self.0.inner.visit_enum(BorrowedStrDeserializer::new(v))
        } else {
            no()
        }
    }

    #[inline(always)]
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        if self.0.at.counted() && self.0.at.str_ok(&v) {
            self.0.inner.visit_enum(StringDeserializer::new(v))
        } else {
            no()
        }
    }
}
