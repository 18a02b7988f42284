// A free function's tool has no instance: its limits come from a `fn() -> Limits`.
use toolsmith::Limits;

struct Config;

impl Config {
    fn limits(&self) -> Limits {
        Limits::default()
    }
}

/// Echoes a text.
#[toolsmith::tool(limits = Config::limits)]
fn echo(text: String) -> String {
    text
}

fn main() {}
