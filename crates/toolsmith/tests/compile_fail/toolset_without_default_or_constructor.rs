// A toolset the registry cannot build (no `Default`, no constructor) must say so, not silently
// stay out of the registry; `register = false` is how to keep it out on purpose.
struct ApiToolset {
    base_url: String,
}

#[toolsmith::toolset]
impl ApiToolset {
    #[tool]
    fn base(&self) -> String {
        self.base_url.clone()
    }
}

struct Counter {
    start: u32,
}

#[toolsmith::tool]
impl Counter {
    fn start(&self) -> u32 {
        self.start
    }
}

struct Quiet {
    base_url: String,
}

#[toolsmith::toolset(register = false)]
impl Quiet {
    #[tool]
    fn base(&self) -> String {
        self.base_url.clone()
    }
}

fn main() {}
