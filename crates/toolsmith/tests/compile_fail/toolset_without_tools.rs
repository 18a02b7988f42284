// A toolset whose methods are all unmarked exposes nothing.
#[derive(Default)]
struct DatabaseToolset;

#[toolsmith::toolset]
impl DatabaseToolset {
    fn query(&self, sql: String) -> String {
        sql
    }
}

fn main() {}
