// The tools of a toolset share one instance, so none may consume it.
#[derive(Default)]
struct CounterToolset;

#[toolsmith::toolset]
impl CounterToolset {
    #[tool]
    fn read(self) -> u64 {
        0
    }
}

fn main() {}
