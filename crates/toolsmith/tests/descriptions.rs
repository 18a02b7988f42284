//! Descriptions come from doc comments as prose: a paragraph's hard-wrapped source lines are one
//! line, paragraphs stay apart, list items and code blocks keep their lines.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use serde::Deserialize;
use toolsmith::{Describe, Dialect, Tool, ToolType, emit};

/// Finds the lines of a text that match a pattern, the way grep does, and returns them in
/// order, one per line.
///
/// Matching ignores case unless
/// `ignore_case` is false.
///
/// - one item that wraps
///   onto a second line
/// - another item
///
/// ```
/// let kept = "as written";
///     // indentation kept too
/// ```
///
/// # Arguments
/// * `text` - The text to search, which may be
///   long.
#[toolsmith::tool]
fn find_lines(
    text: String,
    /// A regular expression, in the syntax of
    /// the regex crate.
    pattern: String,
) -> String {
    format!("{text}{pattern}")
}

#[test]
fn a_tools_description_unwraps_each_paragraph_and_keeps_the_paragraphs_lists_and_code() {
    assert_eq!(
        FindLines.description(),
        "Finds the lines of a text that match a pattern, the way grep does, and returns them in \
         order, one per line.\n\
         \n\
         Matching ignores case unless `ignore_case` is false.\n\
         \n\
         - one item that wraps onto a second line\n\
         - another item\n\
         \n\
         ```\n\
         let kept = \"as written\";\n    \
         // indentation kept too\n\
         ```"
    );
}

#[test]
fn a_parameters_description_is_unwrapped_too_whether_a_doc_comment_or_an_arguments_entry() {
    let schema =
        toolsmith::parameters_schema(FindLines.parameters(), toolsmith::Dialect::JsonSchema)
            .unwrap();
    assert_eq!(
        schema["properties"]["pattern"]["description"],
        "A regular expression, in the syntax of the regex crate."
    );
    assert_eq!(
        schema["properties"]["text"]["description"],
        "The text to search, which may be long."
    );
}

/// A span of lines in a text, counted
/// from one.
#[derive(Deserialize, ToolType)]
#[allow(dead_code)]
struct LineSpan {
    /// The first line of the span, which must not be
    /// after the last.
    first: u32,
    /// The last line.
    ///
    /// Past the end of the text, the span
    /// stops there.
    last: u32,
    /// Which way to read.
    direction: Direction,
}

#[derive(Deserialize, ToolType)]
#[allow(dead_code)]
enum Direction {
    /// From the first line
    /// to the last.
    Forward,
    /// Backward.
    Backward,
}

#[test]
fn a_types_field_and_variant_descriptions_are_unwrapped_too() {
    let schema = emit(&LineSpan::type_graph(), Dialect::JsonSchema).unwrap();
    let span = &schema["$defs"]["LineSpan"];
    assert_eq!(
        span["description"],
        "A span of lines in a text, counted from one."
    );
    assert_eq!(
        span["properties"]["first"]["description"],
        "The first line of the span, which must not be after the last."
    );
    assert_eq!(
        span["properties"]["last"]["description"],
        "The last line.\n\nPast the end of the text, the span stops there."
    );
    let graph = LineSpan::type_graph();
    let Some(toolsmith::Type::Enum(direction)) = graph.defs.get("Direction") else {
        panic!("Direction is an enum: {:?}", graph.defs);
    };
    assert_eq!(
        direction.variants[0].description.as_deref(),
        Some("From the first line to the last.")
    );
}
