//! The linter: what a receiver would refuse in a request's tools, found before the request is
//! sent.
//!
//! [`lint`] writes each tool's parameters in the dialect ([`crate::parameters_schema`]) and
//! measures what the receiver measures in what it is sent: tool names, tools per request,
//! properties, nesting, enum sizes, and the optional and union parameters of strict requests.
//! Every limit and name pattern comes from the one table in [`Dialect::limits`]. A tool whose
//! parameters cannot be written in the dialect at all is a finding too.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::dialect::Dialect;
use crate::emit::parameters_schema;
use crate::pointer::encode_fragment_segment;
use crate::ty::TypeGraph;

/// One tool as the linter sees it: its name and the type of its parameters.
#[derive(Debug, Clone, Copy)]
pub struct LintTool<'a> {
    /// The name the tool is declared under.
    pub name: &'a str,
    /// The type of its arguments (a struct at the root).
    pub parameters: &'a TypeGraph,
}

/// The stable code of a [`Finding`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum FindingCode {
    /// A tool name the receiver's pattern refuses.
    ToolName,
    /// Two tools of one request share a name.
    DuplicateToolName,
    /// More tools in one request than the receiver takes.
    TooManyTools,
    /// More object properties in one tool's parameters than the receiver takes.
    TooManyProperties,
    /// Objects nested deeper in one tool's parameters than the receiver takes.
    TooDeep,
    /// An enum with more values than the receiver takes.
    TooManyEnumValues,
    /// More optional parameters over a request's tools than the receiver takes.
    TooManyOptionalParameters,
    /// More union-typed parameters over a request's tools than the receiver takes.
    TooManyUnionParameters,
    /// A tool's parameters cannot be written in the dialect (a recursive type for Gemini, ...).
    Inexpressible,
}

impl FindingCode {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// What a finding of this code counts, for its message: `"enum values"`.
    fn counted(self) -> &'static str {
        match self {
            FindingCode::TooManyTools => "tools in one request",
            FindingCode::TooManyProperties => "properties in all",
            FindingCode::TooDeep => "levels of nesting",
            FindingCode::TooManyEnumValues => "enum values",
            FindingCode::TooManyOptionalParameters => {
                "optional parameters over the request's tools"
            }
            FindingCode::TooManyUnionParameters => "union parameters over the request's tools",
            // Not counts: their limits are a pattern, uniqueness, or a schema at all.
            FindingCode::ToolName | FindingCode::DuplicateToolName | FindingCode::Inexpressible => {
                "of them"
            }
        }
    }
}

impl fmt::Display for FindingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The limit a [`Finding`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// At most this many.
    AtMost(usize),
    /// A name matching this regular expression.
    Pattern(&'static str),
    /// Each tool name once.
    Unique,
    /// A schema the dialect can write.
    Expressible,
}

/// What a [`Finding`] found, against its [`Limit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actual {
    /// How many there are.
    Count(usize),
    /// The offending name, or why the schema cannot be written.
    Text(String),
}

impl fmt::Display for Actual {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actual::Count(n) => write!(f, "{n}"),
            Actual::Text(text) => f.write_str(text),
        }
    }
}

/// One thing a receiver would refuse, located and measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The receiver.
    pub dialect: Dialect,
    /// What kind of limit is broken.
    pub code: FindingCode,
    /// The tool, or `None` for what holds for the request as a whole.
    pub tool: Option<String>,
    /// Where in the tool's parameters schema (as written in the dialect), as a JSON Pointer.
    pub pointer: Option<String>,
    /// The limit.
    pub limit: Limit,
    /// What was found.
    pub actual: Actual,
}

impl Finding {
    /// The one-line message: where, what, and the limit.
    ///
    /// ```
    /// use toolsmith_types::{Dialect, EnumType, Field, StructType, Type, TypeGraph, LintTool, lint};
    ///
    /// let many = EnumType::integers(0..1001);
    /// let graph = TypeGraph::new(Type::Struct(
    ///     StructType::anonymous().field(Field::new("code", Type::Enum(many))),
    /// ));
    /// let tools = [LintTool { name: "lookup", parameters: &graph }];
    /// let findings = lint(&tools, Dialect::OpenAi { strict: true });
    /// assert_eq!(
    ///     findings[0].message(),
    ///     "tool `lookup` at /properties/code: 1001 enum values, at most 1000 (openai-strict)"
    /// );
    /// ```
    pub fn message(&self) -> String {
        let mut out = match &self.tool {
            Some(tool) => format!("tool `{tool}`"),
            None => "the request".to_owned(),
        };
        if let Some(pointer) = &self.pointer {
            out.push_str(" at ");
            out.push_str(if pointer.is_empty() { "/" } else { pointer });
        }
        out.push_str(": ");
        let body = match &self.limit {
            Limit::AtMost(limit) => {
                format!("{} {}, at most {limit}", self.actual, self.code.counted())
            }
            Limit::Pattern(pattern) => format!("the name does not match {pattern}"),
            Limit::Unique => "the name is used by more than one tool".to_owned(),
            Limit::Expressible => format!("cannot be written: {}", self.actual),
        };
        out.push_str(&body);
        out.push_str(&format!(" ({})", self.dialect));
        out
    }

    /// The finding as JSON, with its message.
    pub fn to_json(&self) -> Value {
        let limit = match &self.limit {
            Limit::AtMost(n) => json!(n),
            Limit::Pattern(pattern) => json!(pattern),
            Limit::Unique => json!("unique"),
            Limit::Expressible => json!("expressible"),
        };
        let actual = match &self.actual {
            Actual::Count(n) => json!(n),
            Actual::Text(text) => json!(text),
        };
        json!({
            "dialect": self.dialect.as_str(),
            "code": self.code,
            "tool": self.tool,
            "pointer": self.pointer,
            "limit": limit,
            "actual": actual,
            "message": self.message(),
        })
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// Everything `dialect`'s receiver would refuse in a request offering `tools`, in the order
/// found: per tool (name, then its schema), then the request as a whole. Empty when the
/// request is within every limit.
///
/// ```
/// use toolsmith_types::{Describe, Dialect, Field, StructType, Type, TypeGraph, LintTool, lint};
///
/// let graph = TypeGraph::new(Type::Struct(
///     StructType::anonymous().field(Field::new("city", String::describe(&mut Default::default()))),
/// ));
/// let tools = [LintTool { name: "get_weather", parameters: &graph }];
/// assert!(lint(&tools, Dialect::OpenAi { strict: true }).is_empty());
///
/// let tools = [LintTool { name: "get weather", parameters: &graph }];
/// let codes: Vec<_> = lint(&tools, Dialect::Mcp).iter().map(|f| f.code.as_str()).collect();
/// assert_eq!(codes, ["tool_name"]);
/// ```
pub fn lint(tools: &[LintTool<'_>], dialect: Dialect) -> Vec<Finding> {
    let limits = dialect.limits();
    let mut findings = Vec::new();
    let mut names = HashSet::new();
    let mut optional = 0;
    let mut unions = 0;
    for tool in tools {
        let finding = |code, pointer, limit, actual| Finding {
            dialect,
            code,
            tool: Some(tool.name.to_owned()),
            pointer,
            limit,
            actual,
        };
        if let Err(refused) = dialect.check_tool_name(tool.name) {
            findings.push(refused);
        }
        if !names.insert(tool.name) {
            let actual = Actual::Text(tool.name.to_owned());
            findings.push(finding(
                FindingCode::DuplicateToolName,
                None,
                Limit::Unique,
                actual,
            ));
        }
        let schema = match parameters_schema(tool.parameters, dialect) {
            Ok(schema) => schema,
            Err(error) => {
                let actual = Actual::Text(error.to_string());
                let code = FindingCode::Inexpressible;
                findings.push(finding(code, None, Limit::Expressible, actual));
                continue;
            }
        };
        let measured = Measured::of(&schema, limits.enum_values);
        optional += measured.optional;
        unions += measured.unions;
        if let Some(limit) = limits
            .properties_in_all
            .filter(|&l| measured.properties > l)
        {
            let actual = Actual::Count(measured.properties);
            let code = FindingCode::TooManyProperties;
            findings.push(finding(code, None, Limit::AtMost(limit), actual));
        }
        if let Some(limit) = limits.nesting_depth
            && let Some((levels, pointer)) = deeper_than(&schema, limit)
        {
            let code = FindingCode::TooDeep;
            let actual = Actual::Count(levels);
            findings.push(finding(code, Some(pointer), Limit::AtMost(limit), actual));
        }
        if let Some(limit) = limits.enum_values {
            for (pointer, size) in measured.large_enums {
                let code = FindingCode::TooManyEnumValues;
                let actual = Actual::Count(size);
                findings.push(finding(code, Some(pointer), Limit::AtMost(limit), actual));
            }
        }
    }
    let request = [
        (
            FindingCode::TooManyTools,
            limits.tools_per_request,
            tools.len(),
        ),
        (
            FindingCode::TooManyOptionalParameters,
            limits.optional_parameters,
            optional,
        ),
        (
            FindingCode::TooManyUnionParameters,
            limits.union_parameters,
            unions,
        ),
    ];
    for (code, limit, count) in request {
        if let Some(limit) = limit.filter(|&l| count > l) {
            findings.push(Finding {
                dialect,
                code,
                tool: None,
                pointer: None,
                limit: Limit::AtMost(limit),
                actual: Actual::Count(count),
            });
        }
    }
    findings
}

/// The keywords whose value is one subschema, and those whose value maps names to subschemas.
const SUBSCHEMA: &[&str] = &["items", "additionalProperties", "propertyNames"];
const SUBSCHEMA_MAPS: &[&str] = &["properties", "$defs"];

/// How deep the walks over an emitted schema go at most: far past anything the emitter writes
/// (it stops at 128 levels of type), so only a guard.
const MAX_WALK: usize = 1024;

/// The subschemas directly inside `schema`, each with the path segments that lead to it.
fn children(schema: &Map<String, Value>) -> Vec<([&str; 2], &Value)> {
    let mut out = Vec::new();
    for &keyword in SUBSCHEMA {
        if let Some(child) = schema.get(keyword).filter(|c| c.is_object()) {
            out.push(([keyword, ""], child));
        }
    }
    for &keyword in SUBSCHEMA_MAPS {
        if let Some(Value::Object(map)) = schema.get(keyword) {
            out.extend(
                map.iter()
                    .map(|(name, child)| ([keyword, name.as_str()], child)),
            );
        }
    }
    if let Some(Value::Array(members)) = schema.get("anyOf") {
        out.extend(members.iter().map(|member| (["anyOf", ""], member)));
    }
    out
}

/// What one tool's schema holds, counted once per place in the document.
#[derive(Default)]
struct Measured {
    properties: usize,
    optional: usize,
    unions: usize,
    /// Enums with more values than the limit, by pointer.
    large_enums: Vec<(String, usize)>,
}

impl Measured {
    fn of(schema: &Value, enum_limit: Option<usize>) -> Measured {
        let mut measured = Measured::default();
        measured.walk(schema, &mut String::new(), enum_limit, 0);
        measured
    }

    fn walk(
        &mut self,
        schema: &Value,
        pointer: &mut String,
        enum_limit: Option<usize>,
        depth: usize,
    ) {
        let Value::Object(schema) = schema else {
            return;
        };
        if depth > MAX_WALK {
            return;
        }
        if let (Some(Value::Array(values)), Some(limit)) = (schema.get("enum"), enum_limit)
            && values.len() > limit
        {
            self.large_enums.push((pointer.clone(), values.len()));
        }
        if let Some(Value::Object(properties)) = schema.get("properties") {
            let required = schema.get("required").and_then(Value::as_array);
            for (name, property) in properties {
                self.properties += 1;
                let listed = required.is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)));
                self.optional += usize::from(!listed);
                self.unions += usize::from(is_union(property));
            }
        }
        let mut member = 0;
        for (segments, child) in children(schema) {
            let saved = pointer.len();
            push_segments(pointer, segments, &mut member);
            self.walk(child, pointer, enum_limit, depth + 1);
            pointer.truncate(saved);
        }
    }
}

/// Appends the segments leading to a child to `pointer`; `anyOf` members are numbered in order.
fn push_segments(pointer: &mut String, segments: [&str; 2], member: &mut usize) {
    let [keyword, name] = segments;
    *pointer = crate::pointer::pointer_push(pointer, keyword);
    if keyword == "anyOf" {
        *pointer = crate::pointer::pointer_push(pointer, &member.to_string());
        *member += 1;
    } else if !name.is_empty() {
        *pointer = crate::pointer::pointer_push(pointer, name);
    }
}

/// Whether a property's schema is a union: `anyOf`, or a `type` naming several.
fn is_union(schema: &Value) -> bool {
    schema.get("anyOf").is_some() || schema.get("type").is_some_and(Value::is_array)
}

/// Whether `schema` is an object schema.
fn is_object(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(ty)) => ty == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => false,
    }
}

/// The first place where objects nest deeper than `limit` levels (the root object is level 1),
/// following `$ref`s into `$defs` but never into a definition already on the way: how many
/// levels, and where.
fn deeper_than(schema: &Value, limit: usize) -> Option<(usize, String)> {
    let defs: HashMap<String, (&str, &Value)> = schema
        .get("$defs")
        .and_then(Value::as_object)
        .map(|defs| {
            defs.iter()
                .map(|(name, def)| {
                    (
                        format!("#/$defs/{}", encode_fragment_segment(name)),
                        (name.as_str(), def),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut walk = DepthWalk {
        defs,
        limit,
        on_way: Vec::new(),
        entered: HashMap::new(),
        steps: 0,
    };
    walk.visit(schema, &mut String::new(), 0)
}

/// The state of [`deeper_than`]'s walk.
struct DepthWalk<'s> {
    /// Definitions by the `$ref` that points at them.
    defs: HashMap<String, (&'s str, &'s Value)>,
    limit: usize,
    /// Definitions entered on the way to the current schema.
    on_way: Vec<&'s str>,
    /// The deepest level each definition was entered at: entering it again no deeper finds
    /// nothing new, which keeps the walk linear in the document.
    entered: HashMap<&'s str, usize>,
    steps: usize,
}

impl<'s> DepthWalk<'s> {
    fn visit(
        &mut self,
        schema: &'s Value,
        pointer: &mut String,
        level: usize,
    ) -> Option<(usize, String)> {
        let Value::Object(object) = schema else {
            return None;
        };
        self.steps += 1;
        if self.steps > MAX_WALK * 64 || pointer.len() > MAX_WALK * 16 {
            return None;
        }
        let level = level + usize::from(is_object(object));
        if level > self.limit {
            return Some((level, pointer.clone()));
        }
        if let Some(target) = object.get("$ref").and_then(Value::as_str)
            && let Some(&(name, def)) = self.defs.get(target)
            && !self.on_way.contains(&name)
            && self
                .entered
                .get(name)
                .is_none_or(|&deepest| level > deepest)
        {
            self.entered.insert(name, level);
            self.on_way.push(name);
            let mut inside = crate::pointer::pointer_push("/$defs", name);
            let found = self.visit(def, &mut inside, level);
            self.on_way.pop();
            if found.is_some() {
                return found;
            }
        }
        let mut member = 0;
        for (segments, child) in children(object) {
            if segments[0] == "$defs" {
                // Definitions are measured where they are used.
                continue;
            }
            let saved = pointer.len();
            push_segments(pointer, segments, &mut member);
            let found = self.visit(child, pointer, level);
            pointer.truncate(saved);
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

/// The tool-name check lives with the linter that reports its finding, so that the dialect's
/// tables depend on nothing.
impl Dialect {
    /// Whether `name` is a tool name this receiver accepts.
    ///
    /// ```
    /// use toolsmith_types::Dialect;
    ///
    /// assert!(Dialect::Gemini.check_tool_name("weather.lookup").is_ok());
    /// let refused = Dialect::OpenAi { strict: true }.check_tool_name("weather.lookup").unwrap_err();
    /// assert_eq!(refused.code.as_str(), "tool_name");
    /// assert_eq!(
    ///     refused.message(),
    ///     "tool `weather.lookup`: the name does not match ^[A-Za-z0-9_-]{1,64}$ (openai-strict)"
    /// );
    /// ```
    ///
    /// # Errors
    /// A [`FindingCode::ToolName`] finding naming the pattern the name misses.
    pub fn check_tool_name(self, name: &str) -> Result<(), Finding> {
        let Some(pattern) = self.limits().tool_name else {
            return Ok(());
        };
        if name_pattern(pattern).is_some_and(|regex| regex.is_match(name)) {
            return Ok(());
        }
        Err(Finding {
            dialect: self,
            code: FindingCode::ToolName,
            tool: Some(name.to_owned()),
            pointer: None,
            limit: Limit::Pattern(pattern),
            actual: Actual::Text(name.to_owned()),
        })
    }
}

/// The compiled form of a tool-name pattern from the limits table.
fn name_pattern(pattern: &'static str) -> Option<&'static regex::Regex> {
    static COMPILED: OnceLock<Vec<(&'static str, regex::Regex)>> = OnceLock::new();
    COMPILED
        .get_or_init(|| {
            Dialect::ALL
                .iter()
                .filter_map(|dialect| dialect.limits().tool_name)
                .filter_map(|source| regex::Regex::new(source).ok().map(|r| (source, r)))
                .collect()
        })
        .iter()
        .find(|(source, _)| *source == pattern)
        .map(|(_, regex)| regex)
}

#[cfg(test)]
mod tests {
    use super::name_pattern;
    use crate::dialect::Dialect;

    #[test]
    fn every_tool_name_pattern_compiles() {
        for dialect in Dialect::ALL {
            if let Some(pattern) = dialect.limits().tool_name {
                assert!(name_pattern(pattern).is_some(), "{dialect}: {pattern}");
            }
        }
    }
}
