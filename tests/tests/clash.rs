//! Two linked crates that register tools of one name: the registry refuses them, naming both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

toolsmith::link!(alpha_tools, clash_tools);

#[test]
fn two_linked_tools_of_one_name_are_an_error_naming_both_sources() {
    let error = toolsmith::registry().unwrap_err();
    assert_eq!(
        error.to_string(),
        "two tools are named `alpha_reverse`: one from toolset `alpha` (alpha_tools::AlphaToolset), \
         one from toolset `alpha` (clash_tools::ClashToolset); rename one with #[tool(name = \"...\")]"
    );
}
