use toolsmith::Context;

/// Greets.
#[toolsmith::tool]
fn greet(
    /// Who is asking.
    ctx: &Context,
    name: String,
) -> String {
    format!("{name} {:?}", ctx.call_id())
}

fn main() {}
