//! The `toolsmith` binary: [`toolsmith_cli::run`] over the tools linked into it and the
//! process's streams. All of its behaviour lives in the `toolsmith_cli` library.
//!
//! It runs on mimalloc rather than the system's malloc. `toolsmith mcp` is a long-lived server,
//! and after 64 calls at once of a 500 KB argument that costs a repair per element, glibc's
//! malloc kept about 1 GB resident over stdio and 2 GB over HTTP, idle, for good: memory freed
//! in small pieces stays in its heaps (even with one arena), where mimalloc (version 2) returns
//! it to the system within seconds (`cargo xtask bench memory` measures it; `tests/memory.rs` holds it to that).

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The built-in toolsets are linked here, with `toolsmith::link!(...)`, as they arrive.
toolsmith::link!(toolsmith_text, toolsmith_github);

fn main() -> ExitCode {
    toolsmith_cli::run(
        std::env::args_os(),
        toolsmith::registry,
        // Not locked for the whole run: `toolsmith mcp` reads and writes them from other threads.
        &mut std::io::stdin(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    )
    .into()
}
