//! [`Dialect`]: the receivers a schema is written for, and the two tables that say what each
//! receiver wants: the [`Rules`] the emitter applies as it walks, and the [`ReceiverLimits`] the
//! linter checks. A receiver's rules or limits change here, in one row, never in the walk.
//!
//! Both tables follow what each receiver documents; where a row goes further, the row says why.

use std::fmt;
use std::str::FromStr;

/// Which receiver a schema is written for. A value, not a fork of the emitter: the emitter
/// consults the dialect's rules as it walks, and coercion reads each dialect's wire shape back
/// into the canonical value (tell it the dialect: [`crate::Policy::with_dialect`]).
///
/// Every dialect but [`Dialect::JsonSchema`] wants an object at the root and writes no
/// `$schema`. A keyword a dialect leaves out is said in the schema's description instead
/// (`"Units (default: \"metric\")"`).
///
/// Each dialect has a stable command-line name ([`Dialect::as_str`], [`FromStr`]):
///
/// ```
/// use toolsmith_types::Dialect;
///
/// let dialect: Dialect = "openai-strict".parse()?;
/// assert_eq!(dialect, Dialect::OpenAi { strict: true });
/// assert_eq!(dialect.to_string(), "openai-strict");
/// assert_eq!(Dialect::ALL.len(), 7);
/// assert!("openia".parse::<Dialect>().unwrap_err().to_string().contains("openai-strict"));
/// # Ok::<(), toolsmith_types::UnknownDialect>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// Canonical JSON Schema 2020-12 (`json-schema`): named types as `$defs` + `$ref`, optional
    /// fields left out of `required`, maps as `additionalProperties`, the `_type` tag as
    /// `const`. The only dialect that takes any root and writes `$schema` in a whole document.
    #[default]
    JsonSchema,
    /// An OpenAI function's `parameters`.
    ///
    /// Not strict (`openai`): canonical JSON Schema, except that a `$ref` never has sibling
    /// keywords (OpenAI refuses them): a described reference is written in place, one level
    /// deep. Strict (`openai-strict`): moreover every field is in `required`, an optional one
    /// nullable (`null` says "omitted"); `additionalProperties: false` on every object (a
    /// struct's additional keys are not offered); maps as arrays of `{key, value}` objects; the
    /// `_type` tag as a one-value `enum`; `default` and `uniqueItems` said in the description. Recursion is
    /// allowed in both.
    OpenAi {
        /// Whether the function is declared with `"strict": true`.
        strict: bool,
    },
    /// An Anthropic tool's `input_schema`.
    ///
    /// Not strict (`anthropic`): canonical JSON Schema. Strict (`anthropic-strict`):
    /// `additionalProperties: false` on every object, maps as arrays of `{key, value}` objects,
    /// numeric, length and item-count bounds and `uniqueItems` said in the description, and a recursive type
    /// refused ([`crate::EmitError::Recursive`]).
    Anthropic {
        /// Whether the tool is declared with `"strict": true`.
        strict: bool,
    },
    /// A Gemini function declaration's `parameters` (`gemini`), a subset of OpenAPI 3.0's
    /// schema object: `nullable: true` instead of type arrays (optional fields are nullable
    /// too); every reference inlined and a recursive type refused; no `additionalProperties`
    /// (maps as arrays of `{key, value}` objects), no `const` (the `_type` tag as a one-value
    /// `enum`); enum values all strings (integers in decimal, other JSON values as their text);
    /// exclusive bounds, `multipleOf`, `uniqueItems` and formats other than `date-time` said in
    /// the description.
    Gemini,
    /// An MCP tool's `inputSchema` or `outputSchema` (`mcp`): canonical JSON Schema 2020-12, the
    /// dialect MCP's schemas are read in (SEP-1613, protocol 2025-11-25), named types as `$ref`s
    /// into `$defs`; an `inputSchema` states it in `$schema` (an `outputSchema` does not: clients
    /// of older protocols compile it as draft-07).
    Mcp,
}

impl Dialect {
    /// Every dialect, in the order the command line lists them.
    pub const ALL: [Dialect; 7] = [
        Dialect::JsonSchema,
        Dialect::OpenAi { strict: false },
        Dialect::OpenAi { strict: true },
        Dialect::Anthropic { strict: false },
        Dialect::Anthropic { strict: true },
        Dialect::Gemini,
        Dialect::Mcp,
    ];

    /// The stable command-line name: `json-schema`, `openai`, `openai-strict`, `anthropic`,
    /// `anthropic-strict`, `gemini` or `mcp`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Dialect::JsonSchema => "json-schema",
            Dialect::OpenAi { strict: false } => "openai",
            Dialect::OpenAi { strict: true } => "openai-strict",
            Dialect::Anthropic { strict: false } => "anthropic",
            Dialect::Anthropic { strict: true } => "anthropic-strict",
            Dialect::Gemini => "gemini",
            Dialect::Mcp => "mcp",
        }
    }

    /// The rules the emitter applies for this dialect: the one table a new dialect is added to.
    pub(crate) const fn rules(self) -> Rules {
        const CANONICAL: Rules = Rules {
            schema_uri: None,
            parameters_schema_uri: None,
            root_object: true,
            optional: Optional::Omitted,
            null: NullSpelling::TypeArray,
            objects: Objects::AsDeclared,
            maps_as_entries: false,
            tag_as_const: true,
            enums_as_strings: false,
            inline_refs: false,
            recursion: true,
            ref_siblings: true,
            unsupported: &[],
            formats: None,
        };
        match self {
            Dialect::JsonSchema => Rules {
                schema_uri: Some(JSON_SCHEMA_2020_12),
                root_object: false,
                ..CANONICAL
            },
            // Not strict: canonical JSON Schema; OpenAI refuses a `$ref` with siblings in either mode.
            Dialect::OpenAi { strict: false } => Rules {
                ref_siblings: false,
                ..CANONICAL
            },
            Dialect::OpenAi { strict: true } => Rules {
                optional: Optional::RequiredNullable,
                objects: Objects::Closed,
                maps_as_entries: true,
                tag_as_const: false,
                ref_siblings: false,
                // Beyond the spec's table: strict mode's schema subset has no `uniqueItems`.
                unsupported: &["default", "uniqueItems"],
                ..CANONICAL
            },
            Dialect::Anthropic { strict: false } => CANONICAL,
            Dialect::Anthropic { strict: true } => Rules {
                objects: Objects::Closed,
                maps_as_entries: true,
                recursion: false,
                unsupported: &[
                    "minimum",
                    "maximum",
                    "exclusiveMinimum",
                    "exclusiveMaximum",
                    "multipleOf",
                    "minLength",
                    "maxLength",
                    "minItems",
                    "maxItems",
                    "uniqueItems",
                ],
                ..CANONICAL
            },
            Dialect::Gemini => Rules {
                optional: Optional::Nullable,
                null: NullSpelling::NullableKeyword,
                objects: Objects::Unstated,
                maps_as_entries: true,
                tag_as_const: false,
                enums_as_strings: true,
                inline_refs: true,
                recursion: false,
                // Beyond the spec's table: Gemini's schema object has no such fields, and an
                // unknown field is a 400.
                unsupported: &[
                    "exclusiveMinimum",
                    "exclusiveMaximum",
                    "multipleOf",
                    "uniqueItems",
                ],
                formats: Some(&["date-time", "enum"]),
                ..CANONICAL
            },
            Dialect::Mcp => Rules {
                parameters_schema_uri: Some(JSON_SCHEMA_2020_12),
                ..CANONICAL
            },
        }
    }

    /// What this receiver refuses beyond the shape of one schema: the one table of limits and
    /// tool-name patterns, which the linter ([`crate::lint`]) and [`Dialect::check_tool_name`]
    /// read. Limits change over time; change them here.
    ///
    /// ```
    /// use toolsmith_types::Dialect;
    ///
    /// assert_eq!(Dialect::OpenAi { strict: true }.limits().enum_values, Some(1000));
    /// assert_eq!(Dialect::JsonSchema.limits().tool_name, None);
    /// ```
    pub const fn limits(self) -> ReceiverLimits {
        const NONE: ReceiverLimits = ReceiverLimits {
            tool_name: None,
            tools_per_request: None,
            properties_in_all: None,
            nesting_depth: None,
            enum_values: None,
            optional_parameters: None,
            union_parameters: None,
        };
        // OpenAI and Anthropic share one pattern.
        const FUNCTION_NAME: &str = "^[A-Za-z0-9_-]{1,64}$";
        match self {
            Dialect::JsonSchema => NONE,
            Dialect::OpenAi { strict } => ReceiverLimits {
                tool_name: Some(FUNCTION_NAME),
                tools_per_request: Some(128),
                properties_in_all: if strict { Some(5000) } else { None },
                nesting_depth: if strict { Some(10) } else { None },
                enum_values: if strict { Some(1000) } else { None },
                ..NONE
            },
            Dialect::Anthropic { strict: false } => ReceiverLimits {
                tool_name: Some(FUNCTION_NAME),
                ..NONE
            },
            Dialect::Anthropic { strict: true } => ReceiverLimits {
                tool_name: Some(FUNCTION_NAME),
                tools_per_request: Some(20),
                optional_parameters: Some(24),
                union_parameters: Some(16),
                ..NONE
            },
            Dialect::Gemini => ReceiverLimits {
                tool_name: Some("^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$"),
                ..NONE
            },
            Dialect::Mcp => ReceiverLimits {
                tool_name: Some("^[A-Za-z0-9_.-]{1,128}$"),
                ..NONE
            },
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    /// Reads a command-line name ([`Dialect::as_str`]) in any case, with `_` or a space for
    /// `-` (`OpenAI`, `openai_strict`, `OpenAI-Strict`).
    ///
    /// ```
    /// use toolsmith_types::Dialect;
    ///
    /// assert_eq!("OpenAI".parse(), Ok(Dialect::OpenAi { strict: false }));
    /// assert_eq!("openai_strict".parse(), Ok(Dialect::OpenAi { strict: true }));
    /// assert_eq!("JSON Schema".parse(), Ok(Dialect::JsonSchema));
    /// ```
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let given = name.trim().as_bytes();
        let spells = |dialect: &Dialect| {
            let canonical = dialect.as_str().as_bytes();
            canonical.len() == given.len()
                && canonical.iter().zip(given).all(|(&c, &g)| {
                    c == g.to_ascii_lowercase() || (c == b'-' && matches!(g, b'_' | b' '))
                })
        };
        Dialect::ALL
            .into_iter()
            .find(spells)
            .ok_or_else(|| UnknownDialect(name.to_owned()))
    }
}

/// A dialect name that names no [`Dialect`]; its message lists the valid names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
        write!(
            f,
            "unknown dialect `{}`; expected one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownDialect {}

/// One receiver's limits beyond the shape of a single schema ([`Dialect::limits`]). `None`
/// means the receiver states no such limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReceiverLimits {
    /// The regular expression a tool name must match.
    pub tool_name: Option<&'static str>,
    /// Most tools in one request.
    pub tools_per_request: Option<usize>,
    /// Most object properties in one tool's parameters, counted over the whole schema.
    pub properties_in_all: Option<usize>,
    /// Most levels of object nesting in one tool's parameters (the parameters object is level 1).
    pub nesting_depth: Option<usize>,
    /// Most values in one enum.
    pub enum_values: Option<usize>,
    /// Most optional properties over every tool of a request.
    pub optional_parameters: Option<usize>,
    /// Most properties whose schema is a union (`anyOf` or a type array) over every tool of a
    /// request.
    pub union_parameters: Option<usize>,
}

/// The `$schema` of JSON Schema 2020-12.
const JSON_SCHEMA_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// What a dialect decides during the emitter's walk: one row of the table in [`Dialect::rules`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// Written as `$schema` at the root of a whole document ([`crate::emit`] only).
    pub(crate) schema_uri: Option<&'static str>,
    /// Written as `$schema` at the root of a tool's parameters ([`crate::parameters_schema`]).
    pub(crate) parameters_schema_uri: Option<&'static str>,
    /// The root of a whole document must be written as `type: object` (never `anyOf`).
    pub(crate) root_object: bool,
    /// How an optional field is written.
    pub(crate) optional: Optional,
    /// How a schema allows `null`.
    pub(crate) null: NullSpelling,
    /// Whether objects state `additionalProperties`.
    pub(crate) objects: Objects,
    /// A map is written as an array of `{key, value}` objects (the coercer turns it back).
    pub(crate) maps_as_entries: bool,
    /// The `_type` tag of a tagged-union variant as `const` (otherwise a one-value `enum`).
    pub(crate) tag_as_const: bool,
    /// Enum values are written as strings, integers in decimal (the coercer reads them back).
    pub(crate) enums_as_strings: bool,
    /// A reference to a definition that is not recursive is written in place.
    pub(crate) inline_refs: bool,
    /// A type may refer to itself; otherwise a recursive type is an error.
    pub(crate) recursion: bool,
    /// A `$ref` may have sibling keywords; otherwise a described reference is written in place.
    pub(crate) ref_siblings: bool,
    /// Keywords left out; what they said goes into the description instead.
    pub(crate) unsupported: &'static [&'static str],
    /// The only string formats written, when the receiver limits them; others go into the
    /// description.
    pub(crate) formats: Option<&'static [&'static str]>,
}

impl Rules {
    /// Whether `keyword` may be written.
    pub(crate) fn supports(&self, keyword: &str) -> bool {
        !self.unsupported.contains(&keyword)
    }

    /// Whether `null` stands for an omitted optional field on this receiver's wire: the schema
    /// offered `null` for every optional field, so a model saying "omitted" sends it.
    pub(crate) fn null_means_omitted(&self) -> bool {
        self.optional != Optional::Omitted
    }
}

/// How an optional field is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Optional {
    /// Left out of `required`.
    Omitted,
    /// Left out of `required`, and nullable.
    Nullable,
    /// In `required` like every field, and nullable: `null` says "omitted".
    RequiredNullable,
}

/// How a schema allows `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NullSpelling {
    /// `"null"` added to the `type` keyword (or an `anyOf` member `{"type": "null"}`).
    TypeArray,
    /// `"nullable": true` (OpenAPI 3.0).
    NullableKeyword,
}

/// Whether objects state `additionalProperties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Objects {
    /// As the type says: `false` for a closed struct, the schema of its additional values
    /// otherwise.
    AsDeclared,
    /// `false` on every object; a struct's additional keys are not offered.
    Closed,
    /// Never written (the receiver does not know the keyword).
    Unstated,
}

#[cfg(test)]
mod tests {
    use super::Dialect;

    #[test]
    fn every_name_reads_back_as_its_dialect() {
        for dialect in Dialect::ALL {
            assert_eq!(dialect.as_str().parse::<Dialect>(), Ok(dialect));
        }
    }
}
