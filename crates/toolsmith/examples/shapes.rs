//! The reference's union parameters: a parameter that is one of several structs told apart by
//! `_type`, a map whose values are such a union, nilable parameters, and a recursive type.
//!
//! Run it with `cargo run -p toolsmith --example shapes`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolsmith::{Arguments, Context, Policy, ToolExt, ToolType};

/// A circle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolType)]
pub struct Circle {
    /// The radius, in centimetres.
    pub radius: f64,
}

/// A shape to draw, told apart by `_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolType)]
#[serde(tag = "_type")]
pub enum Shape {
    /// A circle, described by its own struct.
    Circle(Circle),
    /// A rectangle.
    Rectangle {
        /// Width, in centimetres.
        width: f64,
        /// Height, in centimetres.
        height: f64,
    },
}

impl Shape {
    fn area(&self) -> f64 {
        match self {
            Shape::Circle(c) => std::f64::consts::PI * c.radius * c.radius,
            Shape::Rectangle { width, height } => width * height,
        }
    }
}

/// An outline: a titled node with children, as deep as the model likes (within limits).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolType)]
pub struct Outline {
    /// The node's title.
    pub title: String,
    /// The nodes below it.
    #[serde(default)]
    pub children: Vec<Outline>,
}

fn count(outline: &Outline) -> usize {
    1 + outline.children.iter().map(count).sum::<usize>()
}

/// Returns the area of a shape, in square centimetres.
#[toolsmith::tool(read_only)]
pub fn area(shape: Shape) -> String {
    format!("{:.2}", shape.area())
}

/// Returns the total area of named shapes, and the name of the largest.
#[toolsmith::tool(read_only)]
pub fn total_area(
    /// The shapes, by name.
    shapes: BTreeMap<String, Shape>,
    /// Round to this many decimals; no rounding when left out or null.
    decimals: Option<u8>,
    /// Name a shape that must be present; checked when given.
    require: Option<String>,
) -> Result<String, String> {
    if let Some(name) = require.filter(|name| !shapes.contains_key(name)) {
        return Err(format!("no shape is named {name}"));
    }
    let total: f64 = shapes.values().map(Shape::area).sum();
    let largest = shapes
        .iter()
        .max_by(|a, b| a.1.area().total_cmp(&b.1.area()))
        .map_or("none", |(name, _)| name.as_str());
    Ok(match decimals {
        Some(d) => format!("{total:.*} (largest: {largest})", usize::from(d)),
        None => format!("{total} (largest: {largest})"),
    })
}

/// Counts the nodes of an outline.
#[toolsmith::tool(read_only)]
pub fn count_nodes(outline: Outline) -> usize {
    count(&outline)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let policy = Policy::default();
    let sent = r#"{"shapes": {"a": {"_type": "Circle", "radius": 1}, "b": {"_type": "Rectangle", "width": 2, "height": "3"}}, "decimals": 2}"#;
    println!(
        "{}",
        TotalArea
            .call_blocking(
                Arguments::Text(sent),
                Context::new().with_policy(policy.clone())
            )?
            .as_text()
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&toolsmith::envelope(
            &CountNodes,
            toolsmith::Dialect::OpenAi { strict: false }
        )?)?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::{Value, json};
    use toolsmith::Tool;
    use toolsmith::testing;

    use super::*;

    #[test]
    fn envelopes_match_golden_in_every_dialect() {
        testing::assert_envelopes_golden(&[&Area, &TotalArea, &CountNodes], "tests/golden/shapes");
    }

    #[test]
    fn schemas_match_golden() {
        let schemas: Vec<Value> = [&Area as &dyn Tool, &TotalArea, &CountNodes]
            .iter()
            .map(|t| {
                serde_json::json!({"type": "function", "function": toolsmith::envelope(&**t, toolsmith::Dialect::JsonSchema).unwrap()})
            })
            .collect();
        testing::assert_golden("tests/golden/shapes.json", &Value::Array(schemas));
    }

    #[test]
    fn union_member_is_chosen_by_type_tag() {
        assert_eq!(
            testing::call_text(
                &Area,
                json!({"shape": {"_type": "Rectangle", "width": 2, "height": 3}})
            )
            .unwrap(),
            "6.00"
        );
        assert_eq!(
            testing::call_text(&Area, json!({"shape": {"_type": "Circle", "radius": 1}})).unwrap(),
            "3.14"
        );
    }

    #[test]
    fn unknown_type_tag_lists_the_variants() {
        let error = testing::call_text(&Area, json!({"shape": {"_type": "Triangle"}})).unwrap_err();
        assert!(error.contains("\"Circle\", \"Rectangle\""), "{error}");
    }

    #[test]
    fn map_values_are_chosen_by_type_tag_and_coerced() {
        let output = testing::call(
            &TotalArea,
            json!({"shapes": {
                "a": {"_type": "Rectangle", "width": 1, "height": 1},
                "b": {"_type": "Rectangle", "width": "2", "height": 3}
            }}),
        )
        .unwrap();
        assert_eq!(output.as_text(), "7 (largest: b)");
        assert_eq!(output.repairs.len(), 1);
        assert_eq!(output.repairs[0].path, "/shapes/b/width");
    }

    #[test]
    fn map_sent_as_key_value_entries_is_read_as_the_map() {
        let text = testing::call_text(
            &TotalArea,
            json!({"shapes": [{"key": "only", "value": {"_type": "Circle", "radius": 0}}]}),
        );
        assert_eq!(text.unwrap(), "0 (largest: only)");
    }

    #[test]
    fn nilable_parameters_take_null_or_absence() {
        let shapes = json!({"a": {"_type": "Rectangle", "width": 1.25, "height": 1}});
        assert_eq!(
            testing::call_text(
                &TotalArea,
                json!({"shapes": shapes, "decimals": null, "require": null})
            )
            .unwrap(),
            "1.25 (largest: a)"
        );
        assert_eq!(
            testing::call_text(&TotalArea, json!({"shapes": shapes, "decimals": 1})).unwrap(),
            "1.2 (largest: a)"
        );
        assert_eq!(
            testing::call_text(&TotalArea, json!({"shapes": shapes, "require": "z"})).unwrap_err(),
            "Tool `total_area` failed: no shape is named z"
        );
    }

    #[test]
    fn recursive_type_is_a_definition_that_refers_to_itself() {
        let schema =
            toolsmith::parameters_schema(CountNodes.parameters(), toolsmith::Dialect::JsonSchema)
                .unwrap();
        assert_eq!(
            schema["$defs"]["Outline"]["properties"]["children"]["items"]["$ref"],
            "#/$defs/Outline"
        );
        let outline = json!({"title": "a", "children": [{"title": "b", "children": [{"title": "c"}]}, {"title": "d"}]});
        assert_eq!(
            testing::call_text(&CountNodes, json!({"outline": outline})).unwrap(),
            "4"
        );
    }
}
