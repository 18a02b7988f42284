//! The runtime type descriptor: what a tool parameter is, independent of any schema dialect.

use std::fmt;

use indexmap::IndexMap;
use serde_json::Value;

/// The name of the field that tells the variants of a [`TaggedUnion`] apart.
pub const TYPE_TAG: &str = "_type";

/// A runtime description of a value a tool accepts or returns.
///
/// `Type` is the single source of truth: schema emission and coercion both walk it, and nothing
/// re-parses emitted JSON Schema to learn a type. Named types (and so recursive ones) are
/// [`Type::Ref`]s into the [`Definitions`] of a [`TypeGraph`].
///
/// ```
/// use toolsmith_types::{Field, StructType, Type};
///
/// let weather = Type::Struct(
///     StructType::new("WeatherLookup")
///         .field(Field::new("city", Type::string()).describe("The city to look up"))
///         .field(Field::new("units", Type::string()).optional()),
/// );
/// assert_eq!(weather.kind(), "object");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// Text, with optional length and pattern constraints.
    String(StringType),
    /// A whole number in the 64-bit range, with optional bounds.
    Integer(IntegerType),
    /// A finite floating-point number, with optional bounds.
    Number(NumberType),
    /// `true` or `false`.
    Boolean,
    /// One of a closed set of string or integer values.
    Enum(EnumType),
    /// An object with named, ordered fields.
    Struct(StructType),
    /// A list of values of one type.
    Array(ArrayType),
    /// An object used as a dictionary: string (or enum) keys to values of one type.
    Map(MapType),
    /// The inner type, or `null`.
    Nilable(Box<Type>),
    /// Structs told apart by their `_type` field.
    Tagged(TaggedUnion),
    /// The first of several types that accepts the value (for scalars and mixed unions).
    Union(Vec<Type>),
    /// A reference to a named definition in the [`Definitions`] of the graph.
    Ref(String),
    /// Any JSON value, unchecked.
    Any,
}

impl Type {
    /// An unconstrained string.
    pub fn string() -> Self {
        Type::String(StringType::default())
    }

    /// An unconstrained 64-bit integer.
    pub fn integer() -> Self {
        Type::Integer(IntegerType::default())
    }

    /// An unconstrained finite number.
    pub fn number() -> Self {
        Type::Number(NumberType::default())
    }

    /// An array of `items`, with no length constraints.
    pub fn array(items: Type) -> Self {
        Type::Array(ArrayType::new(items))
    }

    /// A map from string keys to `values`.
    pub fn map(values: Type) -> Self {
        Type::Map(MapType::new(values))
    }

    /// `inner` or `null`. Wrapping a type that already accepts `null` returns it unchanged.
    pub fn nilable(inner: Type) -> Self {
        match inner {
            Type::Nilable(_) | Type::Any => inner,
            other => Type::Nilable(Box::new(other)),
        }
    }

    /// A reference to the definition named `name`.
    pub fn reference(name: impl Into<String>) -> Self {
        Type::Ref(name.into())
    }

    /// A short, dialect-free name for the kind of value this type accepts, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Type::String(_) => "string",
            Type::Integer(_) => "integer",
            Type::Number(_) => "number",
            Type::Boolean => "boolean",
            Type::Enum(_) => "enum",
            Type::Struct(_) | Type::Map(_) | Type::Tagged(_) => "object",
            Type::Array(_) => "array",
            Type::Nilable(inner) => inner.kind(),
            Type::Union(_) => "union",
            Type::Ref(_) => "reference",
            Type::Any => "any",
        }
    }
}

/// Constraints on a string.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StringType {
    /// Fewest characters (Unicode scalar values) allowed.
    pub min_length: Option<u64>,
    /// Most characters (Unicode scalar values) allowed.
    pub max_length: Option<u64>,
    /// A regular expression the whole value must match somewhere (JSON Schema semantics: unanchored).
    pub pattern: Option<Pattern>,
    /// A format annotation (`date-time`, `email`, ...), emitted for the receiver; not checked.
    pub format: Option<String>,
}

impl StringType {
    /// Whether any string at all is allowed (no length or pattern constraint).
    pub fn is_unconstrained(&self) -> bool {
        self.min_length.is_none() && self.max_length.is_none() && self.pattern.is_none()
    }
}

/// A compiled regular expression that remembers its source, compared by source.
///
/// The source is read as JSON Schema reads `pattern`: ECMA-262 (with the `u` flag), so `\d` is
/// `[0-9]` and `\w` is `[A-Za-z0-9_]`, whatever the `regex` crate would make of the same text.
///
/// ```
/// use toolsmith_types::Pattern;
///
/// let digits = Pattern::new(r"^\d+$")?;
/// assert!(digits.is_match("42"));
/// assert!(!digits.is_match("٤٢")); // Arabic-Indic digits are not `\d` in ECMA-262
/// let refused = Pattern::new(r"^(?=a)").unwrap_err();
/// assert!(refused.to_string().contains("look-around"));
/// # Ok::<(), toolsmith_types::PatternError>(())
/// ```
#[derive(Clone)]
pub struct Pattern {
    source: String,
    regex: regex::Regex,
}

/// Why a `pattern` cannot be used: not valid ECMA-262, or a construct the matcher does not
/// support (look-around, back-references).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(String);

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatternError {}

impl Pattern {
    /// Compiles `source`, an ECMA-262 regular expression.
    ///
    /// # Errors
    /// When `source` is not a valid ECMA-262 regular expression, or uses what the linear-time
    /// matcher cannot express (look-around, back-references): never a different reading.
    pub fn new(source: impl Into<String>) -> Result<Self, PatternError> {
        let source = source.into();
        let translated = crate::pattern::translate(&source).map_err(PatternError)?;
        let regex = regex::Regex::new(&translated).map_err(|e| PatternError(e.to_string()))?;
        Ok(Pattern { source, regex })
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `text` matches (anywhere, as JSON Schema's `pattern` does).
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.source, f)
    }
}

/// Bounds on an integer. All bounds are inclusive unless named exclusive.
///
/// Bounds are `i128` so that every bound a 64-bit value can meet (signed or unsigned) is exact;
/// values themselves are checked against the 64-bit range by coercion.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IntegerType {
    /// Smallest allowed value.
    pub minimum: Option<i128>,
    /// Largest allowed value.
    pub maximum: Option<i128>,
    /// Values must be greater than this.
    pub exclusive_minimum: Option<i128>,
    /// Values must be less than this.
    pub exclusive_maximum: Option<i128>,
    /// Values must be a multiple of this (positive).
    pub multiple_of: Option<u64>,
}

impl IntegerType {
    /// An integer between `minimum` and `maximum`, inclusive.
    pub fn range(minimum: i128, maximum: i128) -> Self {
        IntegerType {
            minimum: Some(minimum),
            maximum: Some(maximum),
            ..IntegerType::default()
        }
    }
}

/// Bounds on a number. All bounds are inclusive unless named exclusive.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NumberType {
    /// Smallest allowed value.
    pub minimum: Option<f64>,
    /// Largest allowed value.
    pub maximum: Option<f64>,
    /// Values must be greater than this.
    pub exclusive_minimum: Option<f64>,
    /// Values must be less than this.
    pub exclusive_maximum: Option<f64>,
    /// Values must be a multiple of this (positive).
    pub multiple_of: Option<f64>,
}

/// A closed set of values, in declaration order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EnumType {
    /// What the set means, for the model.
    pub description: Option<String>,
    /// The allowed values, in declaration order.
    pub variants: Vec<EnumVariant>,
}

impl EnumType {
    /// A string enum with these values, in this order.
    pub fn strings<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        EnumType {
            description: None,
            variants: values
                .into_iter()
                .map(|v| EnumVariant::new(EnumValue::String(v.into())))
                .collect(),
        }
    }

    /// An integer enum with these values, in this order.
    pub fn integers(values: impl IntoIterator<Item = i64>) -> Self {
        EnumType {
            description: None,
            variants: values
                .into_iter()
                .map(|v| EnumVariant::new(EnumValue::Integer(v)))
                .collect(),
        }
    }

    /// Sets the description.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an alias, accepted on input, to the variant whose value is `value`.
    pub fn alias(mut self, value: &str, alias: impl Into<String>) -> Self {
        if let Some(variant) = self
            .variants
            .iter_mut()
            .find(|v| v.value.to_string() == value)
        {
            variant.aliases.push(alias.into());
        }
        self
    }
}

/// One allowed value of an [`EnumType`].
#[derive(Debug, Clone, PartialEq)]
pub struct EnumVariant {
    /// The canonical value.
    pub value: EnumValue,
    /// Other spellings accepted on input as this value; never emitted.
    pub aliases: Vec<String>,
    /// What this value means.
    pub description: Option<String>,
}

impl EnumVariant {
    /// A variant with no aliases and no description.
    pub fn new(value: EnumValue) -> Self {
        EnumVariant {
            value,
            aliases: Vec::new(),
            description: None,
        }
    }
}

/// The canonical value of an enum variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnumValue {
    /// A string value, the usual case.
    String(String),
    /// An integer value.
    Integer(i64),
    /// Any other JSON value (`const` and `enum` in JSON Schema allow every value): a boolean, a
    /// number that is not an `i64`, an array or an object. Never `null` (a nilable enum says
    /// that) and never a string or an `i64` (the variants above say those). Matched by JSON
    /// equality, numbers by value; never matched loosely.
    Json(Value),
}

impl std::hash::Hash for EnumValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            EnumValue::String(s) => s.hash(state),
            EnumValue::Integer(i) => i.hash(state),
            // Equal values have equal text but for the order of object keys, which only
            // changes the hash's quality, not its agreement with `Eq`: hash the kind alone.
            EnumValue::Json(value) => std::mem::discriminant(value).hash(state),
        }
    }
}

impl EnumValue {
    /// The value as JSON.
    pub fn to_json(&self) -> Value {
        match self {
            EnumValue::String(s) => Value::String(s.clone()),
            EnumValue::Integer(i) => Value::from(*i),
            EnumValue::Json(value) => value.clone(),
        }
    }
}

impl fmt::Display for EnumValue {
    /// A string as itself; any other value as its JSON text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnumValue::String(s) => f.write_str(s),
            EnumValue::Integer(i) => write!(f, "{i}"),
            EnumValue::Json(value) => write!(f, "{value}"),
        }
    }
}

/// An object with named fields, in declaration order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// The type's name (the Rust type or the schema title), if it has one.
    pub name: Option<String>,
    /// What the object means, for the model.
    pub description: Option<String>,
    /// The fields, in declaration order.
    pub fields: Vec<Field>,
    /// Keys beyond the declared fields: `None` rejects them (the default), `Some(t)` accepts them
    /// with values of type `t` (`Some(Type::Any)` for anything).
    pub additional: Option<Box<Type>>,
}

impl StructType {
    /// A closed struct named `name` with no fields yet.
    pub fn new(name: impl Into<String>) -> Self {
        StructType {
            name: Some(name.into()),
            ..StructType::default()
        }
    }

    /// A closed struct with no name.
    pub fn anonymous() -> Self {
        StructType::default()
    }

    /// Appends a field.
    pub fn field(mut self, field: Field) -> Self {
        self.fields.push(field);
        self
    }

    /// Sets the description.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The field named exactly `name`.
    pub fn get(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// One field of a [`StructType`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The key in JSON.
    pub name: String,
    /// The value's type.
    pub ty: Type,
    /// What the field means, for the model.
    pub description: Option<String>,
    /// The value used when the field is omitted (only meaningful for optional fields).
    pub default: Option<Value>,
    /// Whether the field must be present.
    pub required: bool,
    /// Other keys the field is read from (serde's `alias`): accepted as they are, without a
    /// repair, and written under [`name`](Field::name) in the canonical value. Schemas list only
    /// the name.
    pub aliases: Vec<String>,
}

impl Field {
    /// A required field with no description.
    pub fn new(name: impl Into<String>, ty: Type) -> Self {
        Field {
            name: name.into(),
            ty,
            description: None,
            default: None,
            required: true,
            aliases: Vec::new(),
        }
    }

    /// Sets the description.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Makes the field optional.
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// Adds a key the field is also read from.
    pub fn alias(mut self, alias: impl Into<String>) -> Self {
        self.aliases.push(alias.into());
        self
    }

    /// Makes the field optional, with `default` used when it is omitted.
    pub fn default_value(mut self, default: Value) -> Self {
        self.required = false;
        self.default = Some(default);
        self
    }
}

/// A list of values of one type.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayType {
    /// The type of every element.
    pub items: Box<Type>,
    /// Fewest elements allowed.
    pub min_items: Option<u64>,
    /// Most elements allowed.
    pub max_items: Option<u64>,
    /// Whether no two elements may be equal (JSON Schema's `uniqueItems`; equality as JSON
    /// Schema has it: numbers by value, object keys in any order).
    pub unique_items: bool,
}

impl ArrayType {
    /// An array of `items` with no length or uniqueness constraints.
    pub fn new(items: Type) -> Self {
        ArrayType {
            items: Box::new(items),
            min_items: None,
            max_items: None,
            unique_items: false,
        }
    }
}

/// A dictionary: keys to values of one type.
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    /// What keys are allowed.
    pub keys: MapKeys,
    /// The type of every value.
    pub values: Box<Type>,
}

impl MapType {
    /// A map from any string to `values`.
    pub fn new(values: Type) -> Self {
        MapType {
            keys: MapKeys::String,
            values: Box::new(values),
        }
    }
}

/// The keys a [`MapType`] allows.
#[derive(Debug, Clone, PartialEq)]
pub enum MapKeys {
    /// Any string.
    String,
    /// The string values of an enum.
    Enum(EnumType),
}

/// Structs told apart by a `_type` field holding their tag.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaggedUnion {
    /// What the union means, for the model.
    pub description: Option<String>,
    /// The variants, in declaration order.
    pub variants: Vec<TaggedVariant>,
}

impl TaggedUnion {
    /// An empty union.
    pub fn new() -> Self {
        TaggedUnion::default()
    }

    /// Appends a variant whose `_type` is `tag` and whose other fields are those of `ty` (a
    /// [`Type::Struct`] or a [`Type::Ref`] to one).
    pub fn variant(mut self, tag: impl Into<String>, ty: Type) -> Self {
        self.variants.push(TaggedVariant {
            tag: tag.into(),
            ty,
        });
        self
    }
}

/// One variant of a [`TaggedUnion`].
#[derive(Debug, Clone, PartialEq)]
pub struct TaggedVariant {
    /// The value of `_type` that selects this variant.
    pub tag: String,
    /// The variant's fields: a [`Type::Struct`] or a [`Type::Ref`] to one.
    pub ty: Type,
}

/// The map behind [`Definitions`]: names to types, in the order they were defined.
pub type DefinitionMap = IndexMap<String, Type, foldhash::fast::RandomState>;

/// Named types, each defined once; [`Type::Ref`] points into it. Create one with
/// `Definitions::default()`.
///
/// It is a map of names to types (it dereferences to a [`DefinitionMap`]) that also remembers
/// which Rust type took each name through [`define_for`](crate::define_for), so that two Rust
/// types with one short name get two definitions. Equality compares the types only.
///
/// Coercion looks a reference up for every value it checks, so the map hashes with foldhash
/// (seeded per process) rather than SipHash; type names come from the program or a schema, not
/// from a model.
#[derive(Clone, Default)]
pub struct Definitions {
    types: DefinitionMap,
    /// Rust type name (`std::any::type_name`) to the definition name it was given.
    owners: std::collections::HashMap<&'static str, String>,
}

impl Definitions {
    /// The definition name the Rust type `owner` was given, if it has one.
    pub(crate) fn owned_by(&self, owner: &'static str) -> Option<&str> {
        self.owners.get(owner).map(String::as_str)
    }

    /// Records that `owner` took `name`.
    pub(crate) fn set_owner(&mut self, owner: &'static str, name: String) {
        self.owners.insert(owner, name);
    }
}

impl std::ops::Deref for Definitions {
    type Target = DefinitionMap;
    fn deref(&self) -> &DefinitionMap {
        &self.types
    }
}

impl std::ops::DerefMut for Definitions {
    fn deref_mut(&mut self) -> &mut DefinitionMap {
        &mut self.types
    }
}

impl fmt::Debug for Definitions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.types.fmt(f)
    }
}

impl PartialEq for Definitions {
    fn eq(&self, other: &Self) -> bool {
        self.types == other.types
    }
}

impl FromIterator<(String, Type)> for Definitions {
    fn from_iter<I: IntoIterator<Item = (String, Type)>>(iter: I) -> Self {
        Definitions {
            types: iter.into_iter().collect(),
            owners: std::collections::HashMap::new(),
        }
    }
}

impl<'a> IntoIterator for &'a Definitions {
    type Item = (&'a String, &'a Type);
    type IntoIter = indexmap::map::Iter<'a, String, Type>;
    fn into_iter(self) -> Self::IntoIter {
        self.types.iter()
    }
}

impl IntoIterator for Definitions {
    type Item = (String, Type);
    type IntoIter = indexmap::map::IntoIter<String, Type>;
    fn into_iter(self) -> Self::IntoIter {
        self.types.into_iter()
    }
}

/// A root type together with the named definitions it refers to.
///
/// This is what a Rust type describes itself as ([`crate::Describe::type_graph`]), what JSON
/// Schema import produces, and what emission and coercion take.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeGraph {
    /// The type of the value itself.
    pub root: Type,
    /// Every named type reachable from `root`.
    pub defs: Definitions,
}

impl TypeGraph {
    /// A graph with no named definitions.
    pub fn new(root: Type) -> Self {
        TypeGraph {
            root,
            defs: Definitions::default(),
        }
    }

    /// Follows references from `ty` until a type that is not a reference.
    ///
    /// Returns `None` for a reference to a missing definition, or a cycle of references that
    /// never reaches a real type.
    #[inline]
    pub fn resolve<'a>(&'a self, ty: &'a Type) -> Option<&'a Type> {
        match ty {
            Type::Ref(_) => self.follow(ty),
            other => Some(other),
        }
    }

    /// [`TypeGraph::resolve`] for a reference: the lookups, kept out of line.
    fn follow<'a>(&'a self, mut ty: &'a Type) -> Option<&'a Type> {
        for _ in 0..=self.defs.len() {
            match ty {
                Type::Ref(name) => ty = self.defs.get(name)?,
                other => return Some(other),
            }
        }
        None
    }

    /// The root, with references followed.
    pub fn resolved_root(&self) -> Option<&Type> {
        self.resolve(&self.root)
    }

    /// The names of references that point at no definition, and of definitions that are only
    /// references going round in a cycle. An empty list means every reference resolves.
    pub fn dangling_refs(&self) -> Vec<String> {
        let mut dangling = Vec::new();
        let mut check = |ty: &Type| {
            visit_refs(ty, &mut |name| {
                let ok = self
                    .defs
                    .get(name)
                    .is_some_and(|t| self.resolve(t).is_some());
                if !ok && !dangling.iter().any(|d| d == name) {
                    dangling.push(name.to_owned());
                }
            })
        };
        check(&self.root);
        for ty in self.defs.values() {
            check(ty);
        }
        dangling
    }
}

/// Calls `f` with the name of every reference directly inside `ty` (not through definitions).
pub(crate) fn visit_refs(ty: &Type, f: &mut impl FnMut(&str)) {
    match ty {
        Type::Ref(name) => f(name),
        Type::Struct(s) => {
            for field in &s.fields {
                visit_refs(&field.ty, f);
            }
            if let Some(extra) = &s.additional {
                visit_refs(extra, f);
            }
        }
        Type::Array(a) => visit_refs(&a.items, f),
        Type::Map(m) => visit_refs(&m.values, f),
        Type::Nilable(inner) => visit_refs(inner, f),
        Type::Tagged(u) => {
            for v in &u.variants {
                visit_refs(&v.ty, f);
            }
        }
        Type::Union(members) => {
            for m in members {
                visit_refs(m, f);
            }
        }
        Type::String(_)
        | Type::Integer(_)
        | Type::Number(_)
        | Type::Boolean
        | Type::Enum(_)
        | Type::Any => {}
    }
}
