// The tools of a toolset share one instance, so none may borrow it mutably.
#[derive(Default)]
struct CounterToolset {
    count: u64,
}

#[toolsmith::toolset]
impl CounterToolset {
    #[tool]
    fn increment(&mut self) -> u64 {
        self.count += 1;
        self.count
    }
}

fn main() {}
