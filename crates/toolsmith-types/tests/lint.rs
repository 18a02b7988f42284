//! The linter: what each receiver would refuse in a request's tools (`dialects.md`, size limits
//! and tool names), one behaviour per test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use toolsmith_types::{
    Actual, Definitions, Dialect, EnumType, Field, Finding, FindingCode, Limit, LintTool,
    StructType, Type, TypeGraph, lint,
};

const OPENAI_STRICT: Dialect = Dialect::OpenAi { strict: true };
const ANTHROPIC_STRICT: Dialect = Dialect::Anthropic { strict: true };

fn object(fields: impl IntoIterator<Item = Field>) -> Type {
    Type::Struct(StructType {
        fields: fields.into_iter().collect(),
        ..StructType::anonymous()
    })
}

fn weather() -> TypeGraph {
    TypeGraph::new(object([
        Field::new("city", Type::string()),
        Field::new("units", Type::Enum(EnumType::strings(["c", "f"]))).optional(),
    ]))
}

/// `count` fields named `p0`, `p1`, ... of type `ty`.
fn fields(count: usize, ty: &Type) -> Vec<Field> {
    (0..count)
        .map(|i| Field::new(format!("p{i}"), ty.clone()))
        .collect()
}

fn lint_one(name: &str, parameters: &TypeGraph, dialect: Dialect) -> Vec<Finding> {
    lint(&[LintTool { name, parameters }], dialect)
}

fn codes(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.code.as_str()).collect()
}

/// Objects nested `levels` deep, each the one field `next` of the one above, through named
/// definitions (`L1` the outermost).
fn nested(levels: usize) -> TypeGraph {
    let mut defs = Definitions::default();
    for level in 1..=levels {
        let inner = if level == levels {
            Type::string()
        } else {
            Type::reference(format!("L{}", level + 1))
        };
        defs.insert(format!("L{level}"), object([Field::new("next", inner)]));
    }
    TypeGraph {
        root: Type::reference("L1"),
        defs,
    }
}

#[test]
fn a_request_within_every_limit_has_no_findings() {
    let graph = weather();
    let tools = [
        LintTool {
            name: "get_weather",
            parameters: &graph,
        },
        LintTool {
            name: "get_forecast",
            parameters: &graph,
        },
    ];
    for dialect in Dialect::ALL {
        assert_eq!(lint(&tools, dialect), [], "{dialect}");
    }
}

#[test]
fn a_tool_name_outside_the_openai_pattern_is_a_finding() {
    let findings = lint_one("get.weather", &weather(), OPENAI_STRICT);
    assert_eq!(
        findings,
        [Finding {
            dialect: OPENAI_STRICT,
            code: FindingCode::ToolName,
            tool: Some("get.weather".to_owned()),
            pointer: None,
            limit: Limit::Pattern("^[A-Za-z0-9_-]{1,64}$"),
            actual: Actual::Text("get.weather".to_owned()),
        }]
    );
}

#[test]
fn gemini_takes_dots_and_colons_but_not_a_leading_digit() {
    assert_eq!(lint_one("ns:get.weather", &weather(), Dialect::Gemini), []);
    assert_eq!(
        codes(&lint_one("1weather", &weather(), Dialect::Gemini)),
        ["tool_name"]
    );
}

#[test]
fn mcp_takes_names_up_to_128_characters() {
    let longest = "a".repeat(128);
    assert!(Dialect::Mcp.check_tool_name(&longest).is_ok());
    let finding = Dialect::Mcp
        .check_tool_name(&format!("{longest}a"))
        .unwrap_err();
    assert_eq!(finding.limit, Limit::Pattern("^[A-Za-z0-9_.-]{1,128}$"));
}

#[test]
fn an_empty_tool_name_is_refused_by_every_receiver() {
    for dialect in Dialect::ALL.into_iter().skip(1) {
        assert!(dialect.check_tool_name("").is_err(), "{dialect}");
    }
}

#[test]
fn canonical_json_schema_checks_no_tool_name() {
    assert!(
        Dialect::JsonSchema
            .check_tool_name("any name at all!")
            .is_ok()
    );
}

#[test]
fn two_tools_with_one_name_are_a_finding() {
    let graph = weather();
    let tools = [
        LintTool {
            name: "lookup",
            parameters: &graph,
        },
        LintTool {
            name: "lookup",
            parameters: &graph,
        },
    ];
    let findings = lint(&tools, Dialect::Mcp);
    assert_eq!(codes(&findings), ["duplicate_tool_name"]);
    assert_eq!(findings[0].limit, Limit::Unique);
}

#[test]
fn more_tools_than_openai_takes_in_one_request_is_a_finding_for_the_request() {
    let graph = weather();
    let names: Vec<String> = (0..129).map(|i| format!("tool_{i}")).collect();
    let tools: Vec<LintTool<'_>> = names
        .iter()
        .map(|name| LintTool {
            name,
            parameters: &graph,
        })
        .collect();
    assert_eq!(lint(&tools[..128], Dialect::OpenAi { strict: false }), []);
    let findings = lint(&tools, Dialect::OpenAi { strict: false });
    assert_eq!(codes(&findings), ["too_many_tools"]);
    assert_eq!(findings[0].tool, None);
    assert_eq!(
        (&findings[0].limit, &findings[0].actual),
        (&Limit::AtMost(128), &Actual::Count(129))
    );
}

#[test]
fn anthropic_strict_takes_at_most_20_tools() {
    let graph = weather();
    let names: Vec<String> = (0..21).map(|i| format!("tool_{i}")).collect();
    let tools: Vec<LintTool<'_>> = names
        .iter()
        .map(|name| LintTool {
            name,
            parameters: &graph,
        })
        .collect();
    assert_eq!(lint(&tools[..20], ANTHROPIC_STRICT), []);
    assert_eq!(codes(&lint(&tools, ANTHROPIC_STRICT)), ["too_many_tools"]);
}

#[test]
fn openai_strict_counts_properties_over_every_nested_object() {
    let inner = object(fields(100, &Type::Boolean));
    let graph = TypeGraph::new(object(fields(50, &inner)));
    let findings = lint_one("big", &graph, OPENAI_STRICT);
    assert_eq!(codes(&findings), ["too_many_properties"]);
    assert_eq!(findings[0].actual, Actual::Count(5050));
    assert_eq!(findings[0].limit, Limit::AtMost(5000));
}

#[test]
fn openai_strict_counts_nesting_through_references() {
    let findings = lint_one("deep", &nested(11), OPENAI_STRICT);
    assert_eq!(codes(&findings), ["too_deep"]);
    assert_eq!(findings[0].actual, Actual::Count(11));
    assert_eq!(findings[0].pointer.as_deref(), Some("/$defs/L11"));
}

#[test]
fn nesting_at_the_limit_is_no_finding() {
    assert_eq!(lint_one("deep", &nested(10), OPENAI_STRICT), []);
}

#[test]
fn nesting_through_a_recursive_type_counts_each_definition_once_on_the_way() {
    let mut graph = nested(3);
    graph.defs.insert(
        "L3".to_owned(),
        object([Field::new("back", Type::array(Type::reference("L1")))]),
    );
    assert_eq!(lint_one("loop", &graph, OPENAI_STRICT), []);
}

#[test]
fn an_enum_past_1000_values_is_a_finding_in_openai_strict_at_its_place() {
    let graph = TypeGraph::new(object([Field::new(
        "code",
        Type::Enum(EnumType::integers(0..1001)),
    )]));
    let findings = lint_one("lookup", &graph, OPENAI_STRICT);
    assert_eq!(codes(&findings), ["too_many_enum_values"]);
    assert_eq!(findings[0].pointer.as_deref(), Some("/properties/code"));
}

#[test]
fn the_enum_limit_is_strict_mode_only() {
    let graph = TypeGraph::new(object([Field::new(
        "code",
        Type::Enum(EnumType::integers(0..1001)),
    )]));
    assert_eq!(
        lint_one("lookup", &graph, Dialect::OpenAi { strict: false }),
        []
    );
}

#[test]
fn anthropic_strict_counts_optional_parameters_over_the_request() {
    let optional: Vec<Field> = fields(13, &Type::string())
        .into_iter()
        .map(Field::optional)
        .collect();
    let graph = TypeGraph::new(object(optional));
    let tools = [
        LintTool {
            name: "a",
            parameters: &graph,
        },
        LintTool {
            name: "b",
            parameters: &graph,
        },
    ];
    let findings = lint(&tools, ANTHROPIC_STRICT);
    assert_eq!(codes(&findings), ["too_many_optional_parameters"]);
    assert_eq!(
        (&findings[0].tool, &findings[0].actual),
        (&None, &Actual::Count(26))
    );
}

#[test]
fn anthropic_strict_counts_union_parameters_over_the_request() {
    let graph = TypeGraph::new(object(fields(17, &Type::nilable(Type::integer()))));
    let findings = lint_one("nullable", &graph, ANTHROPIC_STRICT);
    assert_eq!(codes(&findings), ["too_many_union_parameters"]);
    assert_eq!(findings[0].limit, Limit::AtMost(16));
}

#[test]
fn parameters_a_dialect_cannot_write_are_a_finding() {
    let mut graph = nested(2);
    graph.defs.insert(
        "L2".to_owned(),
        object([Field::new("children", Type::array(Type::reference("L2")))]),
    );
    let findings = lint_one("tree", &graph, Dialect::Gemini);
    assert_eq!(codes(&findings), ["inexpressible"]);
    assert_eq!(
        findings[0].message(),
        "tool `tree`: cannot be written: /properties/next: `L2` refers to itself, and gemini \
         does not allow recursive types (gemini)"
    );
}

#[test]
fn a_finding_renders_as_one_line_and_as_json() {
    let finding = lint_one(
        "get.weather",
        &weather(),
        Dialect::Anthropic { strict: false },
    )
    .pop()
    .unwrap();
    assert_eq!(
        finding.to_string(),
        "tool `get.weather`: the name does not match ^[A-Za-z0-9_-]{1,64}$ (anthropic)"
    );
    assert_eq!(
        finding.to_json(),
        json!({
            "dialect": "anthropic",
            "code": "tool_name",
            "tool": "get.weather",
            "pointer": null,
            "limit": "^[A-Za-z0-9_-]{1,64}$",
            "actual": "get.weather",
            "message": finding.message(),
        })
    );
}
