//! Test fixture: a toolset that registers itself when this crate is linked. Nothing calls into
//! this crate; the integration tests only link it.

/// Shouts text.
#[derive(Default)]
pub struct BetaToolset;

#[toolsmith::toolset]
impl BetaToolset {
    /// Upper-cases a text.
    #[tool]
    fn shout(&self, text: String) -> String {
        text.to_uppercase()
    }
}
