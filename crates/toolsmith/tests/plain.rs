//! Tools whose parameters are all plain (booleans, integers, strings, `Option`s of these, no
//! defaults) read clean arguments by serde alone. That shortcut must give exactly what the
//! checking reader gives: the same value for what it accepts, and, for everything else, the
//! same repairs or errors, under any policy. These tests compare the two ways on the same input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith::__private::{PlainProbe, ViaNotPlain as _, ViaPlain as _, arguments};
use toolsmith::{Arguments, Context, Limits, Mode, Policy, Tool, ToolError, ToolExt};

/// Every plain kind of parameter.
#[toolsmith::tool]
#[allow(clippy::too_many_arguments)]
fn mixed(
    flag: bool,
    count: u8,
    delta: i64,
    big: u64,
    name: String,
    note: Option<String>,
    limit: Option<u32>,
    r#type: i16,
) -> String {
    format!("{flag} {count} {delta} {big} {name} {note:?} {limit:?} {type}")
}

/// What the macro's arguments struct for `mixed` is.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct MixedArgs {
    flag: bool,
    count: u8,
    delta: i64,
    big: u64,
    name: String,
    note: Option<String>,
    limit: Option<u32>,
    r#type: i16,
}

type Read = Result<(MixedArgs, Vec<toolsmith::Repair>), ToolError>;

/// The arguments read both ways, `text` as text and (where it parses) as JSON.
fn both_ways(text: &str, policy: &Policy) -> Vec<(Read, Read)> {
    let graph = Mixed.parameters();
    let read =
        |args: Arguments<'_>, plain| arguments::<MixedArgs>("mixed", graph, args, policy, plain);
    let mut pairs = vec![(
        read(Arguments::Text(text), true),
        read(Arguments::Text(text), false),
    )];
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        pairs.push((
            read(Arguments::Json(&value), true),
            read(Arguments::Json(&value), false),
        ));
    }
    pairs
}

fn assert_same(text: &str, policy: &Policy) {
    for (plain, checked) in both_ways(text, policy) {
        assert_eq!(plain, checked, "for {text} under {policy:?}");
    }
}

/// The default policy with one limit changed.
fn tight(change: impl FnOnce(&mut Limits)) -> Policy {
    let mut policy = Policy::default();
    change(&mut policy.limits);
    policy
}

fn policies() -> Vec<Policy> {
    vec![
        Policy::default(),
        Policy {
            mode: Mode::Strict,
            ..Policy::default()
        },
        tight(|l| l.max_string_bytes = 4),
        tight(|l| l.max_items = 3),
        tight(|l| l.max_depth = 0),
        tight(|l| l.max_input_bytes = 40),
        tight(|l| l.max_values = 4),
    ]
}

const CLEAN: &str = r#"{"flag": true, "count": 255, "delta": -9223372036854775808, "big": 18446744073709551615, "name": "Zoë", "note": null, "type": -3}"#;

#[test]
fn clean_arguments_are_read_alike() {
    let (plain, checked) = both_ways(CLEAN, &Policy::default()).remove(0);
    let (value, repairs) = plain.unwrap();
    assert_eq!(Ok((value, repairs.clone())), checked);
    assert!(repairs.is_empty());
}

#[test]
fn what_serde_alone_would_get_wrong_takes_the_checking_way() {
    for text in [
        // serde reads a struct from an array too; arguments are an object.
        r#"[true, 1, 2, 3, "n", null, null, 4]"#,
        // Keys the model misspelt or cased, repaired by coercion.
        r#"{"Flag": true, "count": 1, "delta": 2, "big": 3, "name": "n", "type": 4}"#,
        // Values a model sends for these types, repaired by coercion.
        r#"{"flag": "true", "count": "1", "delta": 2.0, "big": 3, "name": 5, "type": 4}"#,
        // A key twice, an unknown key, a missing field, a value out of range.
        r#"{"flag": true, "flag": false, "count": 1, "delta": 2, "big": 3, "name": "n", "type": 4}"#,
        r#"{"flag": true, "count": 1, "delta": 2, "big": 3, "name": "n", "type": 4, "extra": 1}"#,
        r#"{"flag": true, "count": 1, "delta": 2, "big": 3, "type": 4}"#,
        r#"{"flag": true, "count": 256, "delta": 2, "big": -1, "name": "n", "type": 40000}"#,
        // Near-JSON and text in a string.
        "{'flag': true, count: 1, 'delta': 2, 'big': 3, 'name': 'n', 'type': 4,}",
        "\u{feff}{\"flag\": true}",
        r#""{\"flag\": true, \"count\": 1, \"delta\": 2, \"big\": 3, \"name\": \"n\", \"type\": 4}""#,
        CLEAN,
    ] {
        for policy in policies() {
            assert_same(text, &policy);
        }
    }
}

#[test]
fn a_string_past_the_limit_is_refused_either_way() {
    let policy = tight(|l| l.max_string_bytes = 4);
    let text = r#"{"flag": true, "count": 1, "delta": 2, "big": 3, "name": "longer", "type": 4}"#;
    let (plain, checked) = both_ways(text, &policy).remove(1);
    assert!(
        matches!(plain, Err(ToolError::InvalidArguments { .. })),
        "{plain:?}"
    );
    assert_eq!(plain, checked);
}

#[test]
fn arguments_past_the_value_limit_are_refused_either_way() {
    // CLEAN is eight values: the object and seven fields.
    for max_values in [6, 7] {
        let policy = tight(|l| l.max_values = max_values);
        for (plain, checked) in both_ways(CLEAN, &policy) {
            let Err(ToolError::InvalidArguments { errors, .. }) = &plain else {
                panic!("accepted under a limit of {max_values} values: {plain:?}");
            };
            assert_eq!(errors.0[0].code.as_str(), "too_large");
            assert_eq!(plain, checked);
        }
    }
    let (plain, checked) = both_ways(CLEAN, &tight(|l| l.max_values = 8)).remove(0);
    assert!(plain.is_ok(), "{plain:?}");
    assert_eq!(plain, checked);
}

#[test]
// The borrows are the probe: the impl on the most references wins.
#[allow(clippy::needless_borrow)]
fn only_plain_types_take_serde_alone() {
    assert!((&&PlainProbe::<bool>::new()).plain());
    assert!((&&PlainProbe::<u64>::new()).plain());
    assert!((&&PlainProbe::<String>::new()).plain());
    assert!((&&PlainProbe::<Option<i8>>::new()).plain());
    // A float's literal decides what it is (`1e-400` is not 0); the others hold values serde
    // does not check the way coercion does.
    assert!(!(&&PlainProbe::<f64>::new()).plain());
    assert!(!(&&PlainProbe::<i128>::new()).plain());
    assert!(!(&&PlainProbe::<char>::new()).plain());
    assert!(!(&&PlainProbe::<Option<Option<i64>>>::new()).plain());
    assert!(!(&&PlainProbe::<Vec<String>>::new()).plain());
    assert!(!(&&PlainProbe::<Value>::new()).plain());
}

#[test]
fn the_tool_call_reads_plain_arguments() {
    let output = Mixed
        .call_blocking(Arguments::Text(CLEAN), Context::new())
        .unwrap();
    assert_eq!(
        output.as_text(),
        "true 255 -9223372036854775808 18446744073709551615 Zoë None None -3"
    );
    let repaired = Mixed
        .call_blocking(
            Arguments::Json(
                &json!({"flag": "yes", "count": "7", "delta": 1, "big": 2, "name": "n", "type": 3}),
            ),
            Context::new(),
        )
        .unwrap();
    assert_eq!(repaired.as_text(), "true 7 1 2 n None None 3");
    assert_eq!(repaired.repairs.len(), 2);
}

/// A JSON value of any kind a model might put in one of these fields.
fn field_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("true".to_owned()),
        Just("null".to_owned()),
        Just("\"true\"".to_owned()),
        Just("[1]".to_owned()),
        Just("{}".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        (-300i64..300).prop_map(|n| n.to_string()),
        (-300i64..300).prop_map(|n| format!("{n}.0")),
        Just("1e-400".to_owned()),
        Just("-0".to_owned()),
        "[a-zA-Z0-9 é\\\\\"]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("flag"),
        Just("count"),
        Just("delta"),
        Just("big"),
        Just("name"),
        Just("note"),
        Just("limit"),
        Just("type"),
        Just("Name"),
        Just("_type"),
        Just("other"),
    ]
    .prop_map(str::to_owned)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_object_is_read_alike(
        entries in proptest::collection::vec((key(), field_value()), 0..10),
        policy in proptest::sample::select(policies()),
    ) {
        let body: Vec<String> = entries
            .iter()
            .map(|(k, v)| format!("{}: {v}", serde_json::to_string(k).unwrap()))
            .collect();
        let text = format!("{{{}}}", body.join(", "));
        for (plain, checked) in both_ways(&text, &policy) {
            prop_assert_eq!(plain, checked, "for {}", text);
        }
    }
}
