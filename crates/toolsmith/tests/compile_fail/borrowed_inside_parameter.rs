// A parameter that borrows inside its type: the tool owns what the model sent.
#[toolsmith::tool]
fn greet(name: Option<&str>) -> String {
    name.unwrap_or("you").to_owned()
}

fn main() {}
