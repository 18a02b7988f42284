//! Test fixture: a toolset and a single tool that register themselves when this crate is linked.
//! Nothing calls into this crate; the integration tests only link it.

/// Reverses text.
#[derive(Default)]
pub struct AlphaToolset;

#[toolsmith::toolset]
impl AlphaToolset {
    /// Reverses a text.
    #[tool]
    fn reverse(&self, text: String) -> String {
        text.chars().rev().collect()
    }
}

/// Says which crate answered.
#[toolsmith::tool]
pub fn alpha_origin() -> String {
    "alpha-tools".to_owned()
}
