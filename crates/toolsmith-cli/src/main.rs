//! The `toolsmith` binary: [`toolsmith_cli::run`] over the tools linked into it and the
//! process's streams. All of its behaviour lives in the `toolsmith_cli` library.

use std::process::ExitCode;

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
