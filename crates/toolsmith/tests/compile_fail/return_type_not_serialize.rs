// A tool whose return type is neither text nor Serialize.
struct Opaque;

#[toolsmith::tool]
fn make() -> Opaque {
    Opaque
}

fn main() {}
