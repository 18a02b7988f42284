//! Cross-crate integration tests; the library itself is empty.
