// `type_name` names the struct of a free-function tool; a toolset method has none.
#[derive(Default)]
struct Db;

#[toolsmith::toolset]
impl Db {
    #[tool(type_name = "Query")]
    fn query(&self) -> String {
        String::new()
    }
}

fn main() {}
