// A `#[tool]` method is exposed through `#[toolset]` on its impl block.
#[derive(Default)]
struct DatabaseToolset;

impl DatabaseToolset {
    #[toolsmith::tool]
    fn query(&self, sql: String) -> String {
        sql
    }
}

fn main() {}
