// `#[tool]` on an impl block makes its one method the tool; with two, which one is meant?
#[derive(Default)]
struct Counter;

#[toolsmith::tool]
impl Counter {
    fn read(&self) -> u64 {
        0
    }

    fn reset(&self) {}
}

fn main() {}
