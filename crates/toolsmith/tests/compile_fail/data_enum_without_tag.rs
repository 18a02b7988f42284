// An enum with data is a union told apart by `_type`, which serde must be told to read.
#[derive(serde::Deserialize, toolsmith::ToolType)]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

fn main() {}
