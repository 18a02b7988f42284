// A misspelt option is an error, not silently ignored.
#[toolsmith::tool(descripton = "Looks up the weather.")]
fn weather(city: String) -> String {
    city
}

fn main() {}
