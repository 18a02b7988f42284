// A misspelt option on a toolset method is reported once: the `#[tool]` and `#[param]` attributes
// the toolset consumes do not cascade into "cannot find attribute" errors.
#[derive(Default)]
struct DatabaseToolset;

#[toolsmith::toolset]
impl DatabaseToolset {
    /// Runs a query.
    #[tool(nme = "lookup")]
    fn query(&self, #[param(description = "The SQL to run.")] sql: String) -> String {
        sql
    }
}

fn main() {}
