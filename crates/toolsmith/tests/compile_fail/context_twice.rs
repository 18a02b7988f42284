use toolsmith::Context;

/// Greets.
#[toolsmith::tool]
fn greet(first: &Context, second: &Context) -> String {
    format!("{:?} {:?}", first.call_id(), second.call_id())
}

fn main() {}
