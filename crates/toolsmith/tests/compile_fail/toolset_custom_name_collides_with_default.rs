// A custom name equal to another method's default name (`<toolset>_<method>`) collides too.
#[derive(Default)]
struct DatabaseToolset;

#[toolsmith::toolset]
impl DatabaseToolset {
    #[tool]
    fn query(&self, sql: String) -> String {
        sql
    }

    #[tool(name = "database_query")]
    fn find(&self, id: u64) -> String {
        id.to_string()
    }
}

fn main() {}
