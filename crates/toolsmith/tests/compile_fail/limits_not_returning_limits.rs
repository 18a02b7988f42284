// A toolset's limits come from a method returning `Limits`.
#[derive(Default)]
struct NotesToolset;

impl NotesToolset {
    fn limits(&self) -> usize {
        1024
    }
}

#[toolsmith::toolset(limits = Self::limits)]
impl NotesToolset {
    /// Adds a note.
    #[tool]
    fn add(&self, text: String) -> usize {
        text.len()
    }
}

fn main() {}
