//! Linking a crate is enough for its toolsets to appear in `toolsmith::registry()`: this test
//! binary calls nothing in `alpha-tools` or `beta-tools`; it only names them with `link!`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

toolsmith::link!(alpha_tools, beta_tools);

#[test]
fn toolsets_of_linked_crates_are_in_the_registry() {
    let registry = toolsmith::registry().unwrap();
    let names: Vec<&str> = registry.names().collect();
    assert_eq!(names, ["alpha_reverse", "alpha_origin", "beta_shout"]);
}

#[test]
fn each_registered_tool_knows_its_toolset_and_source() {
    let registry = toolsmith::registry().unwrap();
    let reverse = registry.entry("alpha_reverse").unwrap();
    assert_eq!(reverse.toolset(), Some("alpha"));
    assert_eq!(
        reverse.source(),
        "toolset `alpha` (alpha_tools::AlphaToolset)"
    );
    let origin = registry.entry("alpha_origin").unwrap();
    assert_eq!(origin.toolset(), None);
}

#[test]
fn registered_tools_can_be_called_by_name() {
    let registry = toolsmith::registry().unwrap();
    let output = registry
        .call_blocking(
            "beta_shout",
            toolsmith::Arguments::Text(r#"{"text": "hi"}"#),
            toolsmith::Context::new(),
        )
        .unwrap();
    assert_eq!(output.as_text(), "HI");
    let missing = registry
        .call_blocking(
            "beta_shoot",
            toolsmith::Arguments::Text("{}"),
            toolsmith::Context::new(),
        )
        .unwrap_err();
    assert_eq!(
        missing.to_model_message(),
        "There is no tool named `beta_shoot`. Did you mean `beta_shout`?"
    );
}
