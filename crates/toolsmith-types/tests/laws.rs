//! The laws that tie the type model, emission, import and coercion together, checked over
//! arbitrary types and values generated to fit them (`support`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use proptest::prelude::*;
use serde_json::Value;
use toolsmith_types::{
    Arguments, Dialect, Field, Policy, StructType, Type, TypeGraph, coerce, coerce_arguments,
    deserialize_arguments, emit, import,
};

use support::{arb_graph, arb_graph_and_input, arb_graph_and_value, arb_json, normalize};

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
        let coerced = coerce_arguments(&graph, Arguments::Text(&text), &policy);
        let deserialized = deserialize_arguments::<Value>(&graph, Arguments::Text(&text), &policy);
        match (coerced, deserialized) {
            (Ok(c), Ok(d)) => {
                prop_assert_eq!(&c.value, &d.value, "{}", text);
                prop_assert_eq!(&c.repairs, &d.repairs, "{}", text);
            }
            (Err(c), Err(d)) => prop_assert_eq!(c, d, "{}", text),
            (c, d) => prop_assert!(false, "{}\ncoerced: {:?}\ndeserialized: {:?}", text, c, d),
        }
    }
    Ok(())
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
}
