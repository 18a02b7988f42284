//! How the registry builds a toolset by itself.

/// A type the registry can build without a named constructor: one with `Default`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be registered: it has no `Default` and no constructor is named",
    label = "the registry has no way to build this type",
    note = "derive or implement `Default`, name a `fn() -> Self` with `constructor = path`, or write `register = false` and add the tools to a `Registry` by hand"
)]
pub trait Registrable: Sized {
    /// A new instance.
    fn build() -> Self;
}
impl<T: Default> Registrable for T {
    fn build() -> Self {
        T::default()
    }
}
