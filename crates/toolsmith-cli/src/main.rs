//! The `toolsmith` command line.
fn main() {}
