//! Mistakes in using the macros fail to compile, with a message that says what to do.
//!
//! Each case in `compile_fail/` is a program holding one mistake; its `.stderr` is the exact
//! message. Regenerate them with `TRYBUILD=overwrite cargo test -p toolsmith --test compile_fail`
//! and read every change.

#[test]
fn macro_misuse_fails_with_a_readable_message() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
