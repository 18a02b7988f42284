//! Tools and the registry through their public interface: return types, panics, policies,
//! hand-built tools and duplicate names.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use toolsmith::{
    Arguments, Context, Mode, Policy, Registry, RegistryError, Tool, ToolError, ToolExt,
    ToolFuture, ToolOutput, TypeGraph, testing,
};

/// Always panics.
#[toolsmith::tool]
fn explode(reason: String) -> String {
    panic!("boom: {reason}")
}

#[test]
fn a_panicking_tool_becomes_an_error_and_the_process_keeps_running() {
    let error = testing::call(&Explode, json!({"reason": "test"})).unwrap_err();
    assert_eq!(
        error,
        ToolError::Panicked {
            tool: "explode".into(),
            message: "boom: test".into()
        }
    );
    assert_eq!(
        error.to_model_message(),
        "Tool `explode` crashed (boom: test); this is a bug in the tool, not in your call."
    );
    // The same tool still answers (with the same panic) afterwards.
    assert_eq!(
        testing::call(&Explode, json!({"reason": "again"}))
            .unwrap_err()
            .code(),
        "panicked"
    );
}

#[derive(Serialize)]
struct PlainData {
    n: u8,
}

/// Returns data that has no description.
#[toolsmith::tool]
fn plain() -> PlainData {
    PlainData { n: 1 }
}

#[test]
fn serialize_without_describe_is_structured_output_without_an_output_type() {
    let output = testing::call(&Plain, json!({})).unwrap();
    assert_eq!(output.structured, Some(json!({"n": 1})));
    assert_eq!(output.as_text(), r#"{"n":1}"#);
    assert!(Plain.output().is_none());
}

/// Returns text or fails.
#[toolsmith::tool]
fn checked(ok: bool) -> Result<String, std::io::Error> {
    if ok {
        Ok("fine".into())
    } else {
        Err(std::io::Error::other("disk on fire"))
    }
}

#[test]
fn a_result_of_text_is_text_or_a_failure() {
    assert_eq!(
        testing::call_text(&Checked, json!({"ok": true})).unwrap(),
        "fine"
    );
    assert!(Checked.output().is_none());
    let error = testing::call(&Checked, json!({"ok": false})).unwrap_err();
    assert_eq!(
        error,
        ToolError::Failed {
            tool: "checked".into(),
            message: "disk on fire".into()
        }
    );
}

/// Does nothing.
#[toolsmith::tool]
fn nothing() {}

#[test]
fn a_unit_return_is_empty_text_and_an_integer_is_described_output() {
    assert_eq!(
        testing::call(&Nothing, json!({})).unwrap(),
        ToolOutput::text("")
    );
    assert_eq!(
        toolsmith::parameters_schema(Checked.parameters(), toolsmith::Dialect::JsonSchema).unwrap()
            ["required"],
        json!(["ok"])
    );
}

#[test]
fn a_tool_without_doc_or_description_falls_back_to_its_name() {
    /// (The fallback needs no doc comment; this one has none below.)
    #[toolsmith::tool]
    fn bare_tool() -> u8 {
        1
    }
    #[toolsmith::tool(description = "Set by attribute.")]
    fn described() {}
    assert_eq!(
        BareTool.description(),
        "(The fallback needs no doc comment; this one has none below.)"
    );
    assert_eq!(Described.description(), "Set by attribute.");
    assert_eq!(Nothing.description(), "Does nothing.");
}

#[test]
fn strict_policy_refuses_what_lenient_repairs() {
    let strict = Policy {
        mode: Mode::Strict,
        ..Policy::default()
    };
    let error = Checked
        .call_blocking(
            Arguments::Text(r#"{"ok": "true"}"#),
            Context::new().with_policy(strict.clone()),
        )
        .unwrap_err();
    let ToolError::InvalidArguments { errors, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(
        errors.iter().next().unwrap().code.as_str(),
        "repair_refused"
    );
    let lenient = Checked
        .call_blocking(Arguments::Text(r#"{"ok": "true"}"#), Context::new())
        .unwrap();
    assert_eq!(lenient.repairs[0].code.as_str(), "bool_from_string");
}

#[test]
fn arguments_that_are_not_an_object_are_a_clear_error() {
    let error = testing::call_text(&Checked, json!([true])).unwrap_err();
    assert!(
        error.contains("expected a JSON object of arguments"),
        "{error}"
    );
}

#[test]
fn invalid_arguments_as_json_list_every_error() {
    let error = testing::call(&Checked, json!({"ok": "maybe", "extra": 1})).unwrap_err();
    let json = error.to_json();
    assert_eq!(json["code"], "invalid_arguments");
    assert_eq!(json["tool"], "checked");
    assert_eq!(json["errors"].as_array().unwrap().len(), 2);
}

/// A tool known only at run time: its parameters imported from a JSON Schema.
struct Echo {
    parameters: TypeGraph,
}

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its coerced arguments."
    }
    fn parameters(&self) -> &TypeGraph {
        &self.parameters
    }
    fn call<'a>(&'a self, arguments: Arguments<'a>, context: Context) -> ToolFuture<'a> {
        let coerced = toolsmith::coerce_arguments(&self.parameters, arguments, context.policy())
            .map(|c| ToolOutput::structured(c.value).with_repairs(c.repairs))
            .map_err(|errors| ToolError::InvalidArguments {
                tool: self.name().into(),
                errors,
            });
        ToolFuture::ready(coerced)
    }
}

fn echo() -> Arc<dyn Tool> {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    Arc::new(Echo {
        parameters: toolsmith::import(&schema).unwrap(),
    })
}

#[test]
fn a_tool_built_by_hand_from_json_schema_is_called_through_the_registry() {
    let mut registry = Registry::new();
    registry.add(echo()).unwrap();
    let output = registry
        .call_blocking("echo", Arguments::Text(r#"{"n": "5"}"#), Context::new())
        .unwrap();
    assert_eq!(output.structured, Some(json!({"n": 5})));
}

#[test]
fn a_second_tool_of_one_name_is_refused_naming_both_sources() {
    let mut registry = Registry::new();
    registry.add(echo()).unwrap();
    let error = registry.add(echo()).unwrap_err();
    assert_eq!(
        error,
        RegistryError::DuplicateName {
            name: "echo".into(),
            first: "tool `echo` added by hand".into(),
            second: "tool `echo` added by hand".into(),
        }
    );
}

#[derive(Default)]
struct Pair;

#[toolsmith::toolset]
impl Pair {
    /// First.
    #[tool]
    fn one(&self) -> u8 {
        1
    }
    /// Second.
    #[tool(name = "echo")]
    fn two(&self) -> u8 {
        2
    }
}

#[test]
fn registry_keeps_insertion_order_and_names_the_toolset_in_a_clash() {
    let mut registry = Registry::new();
    registry.add(echo()).unwrap();
    let error = registry.add_toolset(Pair).unwrap_err();
    assert_eq!(
        error.to_string(),
        "two tools are named `echo`: one from tool `echo` added by hand, one from toolset `pair` \
         (tools::Pair); rename one with #[tool(name = \"...\")]"
    );
    // The tools before the clash stay added, in order.
    let names: Vec<&str> = registry.names().collect();
    assert_eq!(names, ["echo", "pair_one"]);
}

#[test]
fn a_tool_that_panics_behind_the_registry_is_caught_there_too() {
    struct Hand;
    impl Tool for Hand {
        fn name(&self) -> &str {
            "hand"
        }
        fn description(&self) -> &str {
            "Panics."
        }
        fn parameters(&self) -> &TypeGraph {
            static EMPTY: std::sync::OnceLock<TypeGraph> = std::sync::OnceLock::new();
            EMPTY.get_or_init(|| {
                TypeGraph::new(toolsmith::Type::Struct(toolsmith::StructType::anonymous()))
            })
        }
        fn call<'a>(&'a self, _: Arguments<'a>, _: Context) -> ToolFuture<'a> {
            panic!("by hand")
        }
    }
    let mut registry = Registry::new();
    registry.add(Arc::new(Hand)).unwrap();
    let error = registry
        .call_blocking("hand", Arguments::Json(&Value::Null), Context::new())
        .unwrap_err();
    assert_eq!(error.code(), "panicked");
}

#[test]
fn call_schema_uses_the_tool_name_and_description() {
    assert_eq!(
        toolsmith::envelope(&Checked, toolsmith::Dialect::OpenAi { strict: false }).unwrap(),
        json!({"type": "function", "function": {
            "name": "checked",
            "description": "Returns text or fails.",
            "parameters": {
                "type": "object",
                "properties": {"ok": {"type": "boolean", "description": "Parameter ok"}},
                "required": ["ok"],
                "additionalProperties": false
            }
        }})
    );
}

#[derive(Debug, serde::Deserialize, toolsmith::ToolType)]
#[serde(rename_all = "snake_case")]
enum Speed {
    Slow,
    Fast,
}

/// Moves at a speed.
#[toolsmith::tool]
fn go(#[param(default = Speed::Slow)] speed: Speed, note: Option<Value>) -> String {
    format!("{speed:?} {note:?}")
}

#[test]
fn a_default_whose_type_is_not_serialize_is_still_filled_in() {
    let schema =
        toolsmith::parameters_schema(Go.parameters(), toolsmith::Dialect::JsonSchema).unwrap();
    assert_eq!(schema["required"], json!([]));
    assert!(schema["properties"]["speed"].get("default").is_none());
    assert_eq!(testing::call_text(&Go, json!({})).unwrap(), "Slow None");
    assert_eq!(
        testing::call_text(&Go, json!({"speed": "FAST", "note": 1})).unwrap(),
        "Fast Some(Number(1))"
    );
}

/// Named apart from the type it takes.
#[toolsmith::tool(type_name = "ConfigTool")]
fn config(config: Config) -> String {
    config.key
}

#[derive(serde::Deserialize, toolsmith::ToolType)]
struct Config {
    key: String,
}

#[test]
fn type_name_names_the_struct_a_function_becomes() {
    assert_eq!(ConfigTool.name(), "config");
    assert_eq!(
        testing::call_text(&ConfigTool, json!({"config": {"key": "k"}})).unwrap(),
        "k"
    );
}

#[derive(Default)]
struct Cased;

#[toolsmith::toolset]
impl Cased {
    /// Lower.
    #[toolsmith::tool]
    fn get(&self) -> u8 {
        1
    }
    /// Upper.
    #[toolsmith::tool(name = "cased_get_upper")]
    #[allow(non_snake_case)]
    fn GET(&self) -> u8 {
        2
    }
}

#[test]
fn toolset_methods_marked_by_full_path_and_differing_in_case_are_two_tools() {
    use toolsmith::Toolset;
    let tools = Cased::to_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["cased_get", "cased_get_upper"]);
    assert_eq!(
        testing::call_text(tools[1].as_ref(), json!({})).unwrap(),
        "2"
    );
}
