// `#[serde(flatten)]` merges fields the schema would not list.
#[derive(serde::Deserialize, toolsmith::ToolType)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(serde::Deserialize, toolsmith::ToolType)]
struct Marker {
    label: String,
    #[serde(flatten)]
    at: Point,
}

fn main() {}
