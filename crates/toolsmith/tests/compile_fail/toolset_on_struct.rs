// `#[toolset]` reads the `#[tool]` methods of an impl block; a struct has none.
#[toolsmith::toolset]
struct DatabaseToolset;

fn main() {}
