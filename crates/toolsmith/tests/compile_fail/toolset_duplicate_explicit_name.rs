// Two tools of one toolset named alike by `name = `: a model could not tell them apart.
#[derive(Default)]
struct DatabaseToolset;

#[toolsmith::toolset]
impl DatabaseToolset {
    #[tool(name = "lookup")]
    fn query(&self, sql: String) -> String {
        sql
    }

    #[tool(name = "lookup")]
    fn find(&self, id: u64) -> String {
        id.to_string()
    }
}

fn main() {}
