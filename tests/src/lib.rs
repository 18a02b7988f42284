//! Cross-crate integration tests of the toolsmith workspace. The library itself is empty; it
//! exists so that the README's Rust example runs as a doctest.

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
