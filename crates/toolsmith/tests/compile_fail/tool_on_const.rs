// `#[tool]` makes a function a tool; a const is not one.
#[toolsmith::tool]
const LIMIT: usize = 10;

fn main() {}
