//! Test fixture: a toolset whose tool has the name of one in `alpha-tools`, so that linking both
//! is refused with an error naming both sources.

/// Another reverser.
#[derive(Default)]
pub struct ClashToolset;

#[toolsmith::toolset(name = "alpha")]
impl ClashToolset {
    /// Reverses a text, word by word.
    #[tool]
    fn reverse(&self, text: String) -> String {
        text.split(' ').rev().collect::<Vec<_>>().join(" ")
    }
}
