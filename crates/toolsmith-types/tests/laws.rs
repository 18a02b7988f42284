//! The laws that tie the type model, emission, import and coercion together, checked over
//! arbitrary types and values generated to fit them (`support`); and, for every dialect, the
//! laws of its schemas, its lint and its wire shape.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use proptest::prelude::*;
use serde_json::Value;
use toolsmith_types::{
    Arguments, Dialect, EmitError, Field, FindingCode, Limits, LintTool, Policy, StructType, Type,
    TypeGraph, coerce, coerce_arguments, deserialize_arguments, emit, import, lint,
    parameters_schema,
};

use support::{
    NODE, arb_acyclic_graph, arb_graph, arb_graph_and_input, arb_graph_and_value, arb_json,
    arb_value, as_parameters, normalize, reaches, rule_violations, to_wire, wire,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 192,
        ..ProptestConfig::default()
    }
}

fn schema_of(graph: &TypeGraph) -> Value {
    emit(graph, Dialect::JsonSchema).unwrap()
}

/// `graph` as the one field `x` of an arguments object, and `value` as that object's text.
fn as_arguments(graph: &TypeGraph, value: &Value) -> (TypeGraph, String) {
    let root = Type::Struct(StructType::anonymous().field(Field::new("x", graph.root.clone())));
    let wrapped = TypeGraph {
        root,
        defs: graph.defs.clone(),
    };
    (wrapped, serde_json::json!({ "x": value }).to_string())
}

/// Deserializing arguments (which skips coercion for canonical text) agrees with coercing them.
fn fast_path_agrees_with_coercion(graph: &TypeGraph, value: &Value) -> Result<(), TestCaseError> {
    let (graph, text) = as_arguments(graph, value);
    for policy in [Policy::default(), Policy::strict()] {
        fast_path_agrees_under(&graph, &text, &policy)?;
    }
    Ok(())
}

/// Deserializing `text` agrees with coercing it under `policy`; returns whether it was accepted.
fn fast_path_agrees_under(
    graph: &TypeGraph,
    text: &str,
    policy: &Policy,
) -> Result<bool, TestCaseError> {
    let coerced = coerce_arguments(graph, Arguments::Text(text), policy);
    let deserialized = deserialize_arguments::<Value>(graph, Arguments::Text(text), policy);
    match (coerced, deserialized) {
        (Ok(c), Ok(d)) => {
            prop_assert_eq!(&c.value, &d.value, "{}", text);
            prop_assert_eq!(&c.repairs, &d.repairs, "{}", text);
            Ok(true)
        }
        (Err(c), Err(d)) => {
            prop_assert_eq!(c, d, "{}", text);
            Ok(false)
        }
        (c, d) => Err(TestCaseError::fail(format!(
            "{text}\ncoerced: {c:?}\ndeserialized: {d:?}"
        ))),
    }
}

/// How many JSON values `value` holds: itself and every value inside it.
fn values_in(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(values_in).sum(),
        Value::Object(map) => map.values().map(values_in).sum(),
        _ => 0,
    }
}

fn validator(graph: &TypeGraph) -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema_of(graph)).unwrap()
}

proptest! {
    #![proptest_config(config())]

    /// (d) Every emitted schema is a valid JSON Schema 2020-12 document.
    #[test]
    fn emitted_schema_passes_the_2020_12_metaschema(graph in arb_graph()) {
        let schema = schema_of(&graph);
        let verdict = jsonschema::draft202012::meta::validate(&schema).map_err(|e| e.to_string());
        prop_assert!(verdict.is_ok(), "{:?}\n{:#}", verdict, schema);
    }

    /// (e) Importing an emitted schema gives back an equivalent type.
    #[test]
    fn import_of_emitted_schema_is_equivalent(graph in arb_graph()) {
        let schema = schema_of(&graph);
        let imported = import(&schema).map_err(|e| TestCaseError::fail(format!("{e}\n{schema:#}")))?;
        prop_assert_eq!(normalize(&imported), normalize(&graph), "{:#}", schema);
    }

    /// The generators' canonical values are what the emitted schema describes.
    #[test]
    fn canonical_values_validate_against_the_emitted_schema((graph, value) in arb_graph_and_value()) {
        prop_assert!(validator(&graph).is_valid(&value), "{:#}\n{:#}", value, schema_of(&graph));
    }

    /// (a) A canonical value coerces to itself, with no repairs.
    #[test]
    fn canonical_value_coerces_to_itself_without_repairs((graph, value) in arb_graph_and_value()) {
        let coerced = coerce(&graph, &value, &Policy::default())
            .map_err(|e| TestCaseError::fail(format!("{e}\nvalue: {value}")))?;
        prop_assert_eq!(&coerced.value, &value);
        prop_assert!(coerced.repairs.is_empty(), "{:?}", coerced.repairs);
    }

    /// (b) Coercion is idempotent: coercing a coerced value changes nothing and repairs nothing.
    #[test]
    fn coercion_is_idempotent((graph, input) in arb_graph_and_input()) {
        if let Ok(first) = coerce(&graph, &input, &Policy::default()) {
            let second = coerce(&graph, &first.value, &Policy::default())
                .map_err(|e| TestCaseError::fail(format!("{e}\ninput: {input}\nfirst: {}", first.value)))?;
            prop_assert_eq!(&second.value, &first.value, "input: {}", input);
            prop_assert!(second.repairs.is_empty(), "{:?}", second.repairs);
        }
    }

    /// (c) Every coerced value validates against the emitted schema.
    #[test]
    fn coerced_values_validate_against_the_emitted_schema((graph, input) in arb_graph_and_input()) {
        if let Ok(coerced) = coerce(&graph, &input, &Policy::default()) {
            prop_assert!(
                validator(&graph).is_valid(&coerced.value),
                "input: {}\ncoerced: {}\nschema: {:#}", input, coerced.value, schema_of(&graph)
            );
        }
    }

    /// (f) Coercing arbitrary JSON against an arbitrary type never panics.
    #[test]
    fn coercion_of_arbitrary_json_never_panics(graph in arb_graph(), input in arb_json()) {
        let _ = coerce(&graph, &input, &Policy::default());
        let _ = coerce(&graph, &input, &Policy::strict());
    }

    /// The clean fast path of `deserialize_arguments` gives what coercion gives, for canonical
    /// values.
    #[test]
    fn deserializing_canonical_arguments_agrees_with_coercion((graph, value) in arb_graph_and_value()) {
        fast_path_agrees_with_coercion(&graph, &value)?;
    }

    /// ... and for arbitrary, mostly messy, inputs: the fast path never accepts what coercion
    /// would change or reject.
    #[test]
    fn deserializing_messy_arguments_agrees_with_coercion((graph, input) in arb_graph_and_input()) {
        fast_path_agrees_with_coercion(&graph, &input)?;
    }

    /// Under a limit on values just below, at and just above the count of canonical arguments,
    /// the fast path agrees with coercion, and both refuse exactly the arguments past the
    /// limit; messy inputs get one answer from both too.
    #[test]
    fn both_paths_refuse_exactly_the_arguments_past_the_value_limit(
        (graph, value) in arb_graph_and_value(),
        (messy_graph, input) in arb_graph_and_input(),
    ) {
        let (graph, text) = as_arguments(&graph, &value);
        let sent = values_in(&serde_json::from_str(&text).unwrap());
        let (messy_graph, messy) = as_arguments(&messy_graph, &input);
        for max_values in [sent - 1, sent, sent + 1] {
            for mut policy in [Policy::default(), Policy::strict()] {
                policy.limits = Limits { max_values, ..Limits::default() };
                let accepted = fast_path_agrees_under(&graph, &text, &policy)?;
                prop_assert_eq!(accepted, sent <= max_values, "{} under {}", text, max_values);
                fast_path_agrees_under(&messy_graph, &messy, &policy)?;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every dialect: each case checks all seven, so fewer cases cover as much.

fn dialect_config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    }
}

/// Whether the dialect refuses recursive types.
fn refuses_recursion(dialect: Dialect) -> bool {
    matches!(
        dialect,
        Dialect::Gemini | Dialect::Anthropic { strict: true }
    )
}

/// A graph as tool parameters, with one canonical value of them.
fn arb_parameters_and_value(
    graphs: impl Strategy<Value = TypeGraph>,
) -> impl Strategy<Value = (TypeGraph, Value)> {
    graphs.prop_flat_map(|graph| {
        let parameters = as_parameters(&graph);
        let value = arb_value(&parameters, &parameters.root, 2);
        (Just(parameters), value)
    })
}

/// The parameters of `graph` in `dialect`: written, or refused for recursion exactly where the
/// dialect has none and the type refers to itself.
fn written(graph: &TypeGraph, dialect: Dialect) -> Result<Option<Value>, TestCaseError> {
    let recursive = reaches(graph, &graph.root, NODE);
    match parameters_schema(graph, dialect) {
        Ok(schema) => {
            prop_assert!(
                !(recursive && refuses_recursion(dialect)),
                "{dialect} wrote a recursive type"
            );
            Ok(Some(schema))
        }
        Err(EmitError::Recursive { name, .. }) if recursive && refuses_recursion(dialect) => {
            prop_assert_eq!(name, NODE);
            Ok(None)
        }
        Err(error) => Err(TestCaseError::fail(format!("{dialect}: {error}"))),
    }
}

proptest! {
    #![proptest_config(dialect_config())]

    /// Every dialect writes a valid JSON Schema 2020-12 document (Gemini: its OpenAPI subset)
    /// that keeps every rule of its row in the table, or refuses a recursive type where the
    /// dialect has no recursion.
    #[test]
    fn every_dialect_writes_valid_parameters_that_keep_its_rules(graph in arb_graph()) {
        let graph = as_parameters(&graph);
        for dialect in Dialect::ALL {
            let Some(schema) = written(&graph, dialect)? else { continue };
            if dialect != Dialect::Gemini {
                let verdict = jsonschema::draft202012::meta::validate(&schema).map_err(|e| e.to_string());
                prop_assert!(verdict.is_ok(), "{}: {:?}\n{:#}", dialect, verdict, schema);
            }
            let broken = rule_violations(dialect, &schema);
            prop_assert!(broken.is_empty(), "{}: {:?}\n{:#}", dialect, broken, schema);
        }
    }

    /// A type within every receiver's limits lints clean wherever the dialect can write it,
    /// and is found inexpressible where it cannot.
    #[test]
    fn a_small_type_lints_clean_in_every_dialect_that_can_write_it(graph in arb_graph()) {
        let graph = as_parameters(&graph);
        let tools = [LintTool { name: "tool", parameters: &graph }];
        for dialect in Dialect::ALL {
            let codes: Vec<FindingCode> = lint(&tools, dialect).iter().map(|f| f.code).collect();
            let expected = match written(&graph, dialect)? {
                Some(_) => vec![],
                None => vec![FindingCode::Inexpressible],
            };
            prop_assert_eq!(codes, expected, "{}", dialect);
        }
    }

    /// A canonical value put into a dialect's wire shape (maps as key/value entries, omitted
    /// optionals as `null`, integer enums as text for Gemini) coerces back to itself under a
    /// strict policy told the dialect, with no repair. (Where the wire cannot tell, it stands
    /// for less: `null` for an omitted field that takes `null` reads as `null`, and a closed
    /// object carries no additional keys. Where standing for less leaves no value of the type,
    /// as two items of a unique array that differed only in such keys, there is nothing to
    /// send.)
    #[test]
    fn a_canonical_value_in_each_wire_shape_coerces_back_to_itself(
        (graph, value) in arb_parameters_and_value(arb_acyclic_graph())
    ) {
        let valid = validator(&graph);
        for dialect in Dialect::ALL {
            let (sent, meant) = to_wire(&graph, &graph.root, &value, wire(dialect));
            if !valid.is_valid(&meant) {
                continue;
            }
            let policy = Policy::strict().with_dialect(dialect);
            let out = coerce(&graph, &sent, &policy)
                .map_err(|e| TestCaseError::fail(format!("{dialect}: {e}\nsent: {sent}")))?;
            prop_assert_eq!(&out.value, &meant, "{}: sent {}", dialect, sent);
            prop_assert!(out.repairs.is_empty(), "{}: {:?}", dialect, out.repairs);
        }
    }

    /// What a model sends in a dialect's wire shape is what the dialect's schema allows
    /// (every dialect written as JSON Schema).
    #[test]
    fn each_wire_shape_validates_against_its_dialects_schema(
        (graph, value) in arb_parameters_and_value(arb_acyclic_graph())
    ) {
        for dialect in Dialect::ALL.into_iter().filter(|d| *d != Dialect::Gemini) {
            let schema = parameters_schema(&graph, dialect)
                .map_err(|e| TestCaseError::fail(format!("{dialect}: {e}")))?;
            let (sent, _) = to_wire(&graph, &graph.root, &value, wire(dialect));
            let validator = jsonschema::draft202012::new(&schema).unwrap();
            prop_assert!(validator.is_valid(&sent), "{}: {}\n{:#}", dialect, sent, schema);
        }
    }
}
