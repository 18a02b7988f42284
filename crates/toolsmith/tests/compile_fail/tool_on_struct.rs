// `#[tool]` makes a function a tool; a struct is not one.
#[toolsmith::tool]
struct Weather {
    city: String,
}

fn main() {}
