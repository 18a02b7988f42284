//! The `toolsmith` command line, as a library: [`run`] takes the arguments, a [`Registry`] and
//! the three streams, and returns the [`Exit`] status, so that every command can be run and
//! tested in-process over any registry. The `toolsmith` binary calls it with
//! [`toolsmith::registry()`] (the toolsets linked into it) and the process's streams.
//!
//! It only parses arguments, reads its inputs, calls the libraries and prints what they return:
//! every decision about tools, types, schemas and coercion lives in `toolsmith` and
//! `toolsmith-types`, where a library user gets the same behaviour. It never panics on user input.
//!
//! Commands:
//! - `list [--json]`: the registered tools, one aligned line each (name, toolset, the first
//!   sentence of the description, never cut inside it), or a JSON array of `{name, toolset,
//!   description, annotations}`.
//! - `list`, `schema` and `mcp` take `--tools PATTERN` (repeatable; `*` stands for any run of
//!   characters): only the tools a pattern matches ([`Registry::select`]; a pattern matching
//!   none is a usage error). They and `call` take `--rename OLD=NEW` (repeatable, in order) and
//!   `--prefix P` (after the renames): the tools under new names ([`Registry::renamed`],
//!   [`Registry::prefixed`]), which is what a model sees, calls and reads in errors.
//! - `list`, `schema`, `call`, `agent` and `mcp` take `--mcp 'CMD ARG...'` (the MCP server that
//!   command line starts, split into words without a shell), `--mcp-url URL` (a server over
//!   streamable HTTP, with `--mcp-header 'NAME: VALUE'`) and `--mcp-config FILE` (the
//!   `mcpServers` of a Claude Desktop-style file), each repeatable: the servers' tools beside
//!   the linked ones ([`toolsmith_mcp::McpClient`]); a server with a name taken already has
//!   its tools under its name (`--mcp-prefix`: every server's). `mcp --mcp ...` is a gateway:
//!   the servers' tools served again, each call coerced and checked against the tool's own
//!   schema before it is passed on, and counted by `--stats`.
//! - `schema [TOOL...] [--dialect D]`: a JSON array of the tools' declarations, every tool when
//!   none is named: in receiver D's envelope ([`toolsmith::envelope`]; D is one of
//!   `json-schema`, `openai`, `openai-strict`, `anthropic`, `anthropic-strict`, `gemini`, `mcp`),
//!   or OpenAI-style functions over canonical JSON Schema (`{"type": "function", "function":
//!   DECLARATION}`, the declaration in [`Dialect::JsonSchema`](toolsmith::Dialect::JsonSchema))
//!   without `--dialect`;
//!   `schema --from-json-schema FILE [--dialect D]`: a JSON Schema file re-emitted in D
//!   (canonical without it). A file is imported leniently, each liberty the import took one
//!   `toolsmith: warning:` line on stderr; `--strict-import` refuses them instead. `--lint` prints instead what receiver D (every receiver, without
//!   `--dialect`) would refuse, one finding a line, and exits 1 when there is any; a file is
//!   linted as a tool's parameters, its name checked only when `--name` gives one. A tool the
//!   receiver cannot take is reported on stderr (exit 1) while the others still print.
//! - `call TOOL [ARGS_JSON | -]`: calls the tool (arguments `{}` when omitted, stdin for `-`) and
//!   prints its output text, and each repair its arguments needed on stderr, one a line
//!   (`toolsmith: repaired ...`; none with `--quiet`); a failure prints the message a model would
//!   read ([`ToolError::to_model_message`](toolsmith::ToolError::to_model_message)) on stderr.
//!   The arguments are read under the tool's own limits where it states some
//!   ([`Tool::limits`](toolsmith::Tool::limits)). With
//!   `--json` it prints `{"ok": true, "text", "structured", "repairs"}`, or the error's
//!   [`to_json`](toolsmith::ToolError::to_json) with `"ok": false`, on stdout. `--dialect D`
//!   (also on `coerce`) reads receiver D's wire shapes (`null` for an omitted optional) as no
//!   repairs, so `--strict` accepts what D was told to send. SIGINT (Ctrl-C) cancels the call's
//!   [`Context`](toolsmith::Context): the command waits up to 2 s for the tool to stop (not at
//!   all after a second SIGINT), says `toolsmith: interrupted (SIGINT): ...` on stderr and
//!   exits 130 ([`Exit::Interrupted`]). SIGINT is watched only while the call runs; a sync tool
//!   runs on a thread of its own ([`ThreadPerCall`](toolsmith::ThreadPerCall)), so that one
//!   that never looks at its context cannot hold the command, and the call runs in a tokio
//!   runtime of its own, so that async tools built on tokio work.
//! - `coerce --schema FILE [ARGS_JSON | -]`: tool arguments coerced against a JSON Schema file
//!   (imported as by `schema --from-json-schema`, warnings and `--strict-import` alike).
//! - `mcp [--http HOST:PORT]`: the tools served over MCP ([`toolsmith_mcp`]) on the process's
//!   own stdin and stdout (not the streams given to [`run`]; stdout then carries only protocol
//!   messages), or over streamable HTTP at HOST:PORT (a name is resolved; stateless, or with
//!   sessions by `--sessions`, `--max-sessions`, `--session-idle-timeout`), printing
//!   `toolsmith: listening on http://ADDR/mcp` on stderr once bound and stopping gracefully on
//!   SIGTERM or SIGINT (exit 0). Over HTTP it answers loopback `Host` names and each
//!   `--allow-host HOST`, browser origins on those hosts and each `--allow-origin ORIGIN`;
//!   `--max-request-bytes`, `--max-concurrent-calls` and `--call-timeout` set the limits of both
//!   transports, `--max-connections`, `--header-timeout`, `--body-timeout`, `--idle-timeout`
//!   and `--shutdown-timeout` those of HTTP. A limit of 0 is a usage error. The server's log
//!   events (the address, accept errors, a shutdown) are printed on stderr. Over stdio too,
//!   SIGTERM and SIGINT stop it (exit 0). `--stats FILE` counts calls, repairs and errors per
//!   tool and code ([`toolsmith::Stats`], its layer outside every other so that a caught panic
//!   counts) and writes them to FILE: at once, on SIGUSR1 and when the server stops, each time
//!   as a whole file renamed over the old one.
//! - `agent [--provider openai|anthropic|gemini] [--base-url URL] [--model NAME] [--strict]
//!   [--stream] [--approve] [--tools NAME]... [--max-steps N] [--json] QUESTION`: the question answered by a model over
//!   the registered tools (or those named), with [`toolsmith_agent::ReAct`], through the
//!   provider's own API ([`toolsmith_agent::OpenAiCompatible`], [`toolsmith_agent::Anthropic`],
//!   [`toolsmith_agent::Gemini`]). The key is `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or
//!   `GEMINI_API_KEY`; the model `OPENAI_MODEL`, `ANTHROPIC_MODEL` or `GEMINI_MODEL` unless
//!   named; `--base-url` (or `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`) replaces the provider's
//!   base URL, the client adding its API's path. Asking the provider's own API without a key is
//!   a usage error. `--stream` prints the model's text as it comes, each tool call and result
//!   on stderr. `--approve` asks on the terminal before each tool call (`y`, `n`, or a
//!   reason to refuse); without it a tool that needs approval stops the run. A tool's
//!   question for a person ([`toolsmith::Context::elicit`]) is asked on the terminal, field
//!   by field (`n` declines it; no input left cancels it); a tool's request for text
//!   ([`toolsmith::Context::sample`]) is answered by the same model. Prints the
//!   answer, or with `--json` `{"answer", "steps", "lm_calls",
//!   "usage"}`; no answer (too many steps, an HTTP error, an unreachable server, a malformed
//!   reply) is exit 1 with the reason on stderr, never the key.
//!
//! Exit codes ([`Exit`]): 0 success; 1 the tool arguments are invalid or the tool failed (the
//! errors on stdout as JSON, or for `call` without `--json` the message on stderr); 2 a usage
//! problem (a bad command line, an unknown tool, a pattern or a rename that selects nothing, a
//! file that cannot be read, imported or written, a registry that cannot be built), with the
//! message on stderr; 130 a call interrupted by SIGINT. A stdout whose reader has gone
//! (`toolsmith list --json | head -1`) ends a command quietly, with the status it would have had
//! (0 for a listing): the reader took what it wanted, as with `ripgrep` and `git log`.
//!
//! ```
//! use toolsmith::Registry;
//! use toolsmith_cli::{Exit, run};
//!
//! /// Says hello.
//! #[toolsmith::tool]
//! fn greet(name: String) -> String {
//!     format!("Hello, {name}!")
//! }
//!
//! let mut registry = Registry::new();
//! registry.add(std::sync::Arc::new(Greet))?;
//! let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
//! let exit = run(
//!     ["toolsmith", "call", "greet", r#"{"name": "Ada"}"#],
//!     || Ok(&registry),
//!     &mut std::io::empty(),
//!     &mut stdout,
//!     &mut stderr,
//! );
//! assert_eq!(exit, Exit::Success);
//! assert_eq!(String::from_utf8(stdout)?, "Hello, Ada!\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod agent;
mod arguments;
mod call;
mod coerce;
mod error;
mod interrupt;
mod list;
mod mcp;
mod outcome;
mod person;
mod schema;
mod schema_file;
mod select;
mod stats;
mod upstream;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use toolsmith::{Registry, RegistryError};

use crate::error::UsageError;
use crate::outcome::Outcome;

/// How a run ended: the process's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did its job.
    Success,
    /// 1: the tool arguments are invalid, the tool failed, or the agent found no answer.
    Failure,
    /// 2: a usage problem: a bad command line, an unknown tool, a file that cannot be read or
    /// imported, a registry that cannot be built.
    Usage,
    /// 130 (128 + SIGINT, as shells report a process Ctrl-C ended): `call` was interrupted, and
    /// the call cancelled.
    Interrupted,
}

impl Exit {
    /// The exit status number.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Interrupted => 130,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}

/// Define LLM tools once, typed and described; list, inspect and call them, inspect schemas and
/// coerce tool arguments.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the registered tools.
    ///
    /// One line per tool: its name, its toolset (`-` for none) and the first sentence of its
    /// description, aligned.
    List(list::ListArgs),
    /// Print tool schemas, or a JSON Schema file in its canonical form.
    ///
    /// Prints a JSON array of the tools' OpenAI-style function envelopes
    /// (`{"type": "function", "function": {"name", "description", "parameters"}}`), in the order
    /// named, or of every registered tool when none is named.
    Schema(schema::SchemaArgs),
    /// Call a tool with arguments given as JSON.
    ///
    /// Prints the tool's output (exit 0), and each repair the arguments needed on stderr, one a
    /// line (none with `--quiet`). When the arguments are invalid or the tool fails, prints the
    /// message a model would read on stderr (exit 1); with `--json`, prints one JSON object on
    /// stdout either way. Ctrl-C cancels the call (the tool is told, and has 2 s to stop; a
    /// second Ctrl-C does not wait) and exits 130.
    Call(call::CallArgs),
    /// Coerce tool arguments against a JSON Schema.
    ///
    /// The arguments are read by the type imported from the schema, with its repairs, and the
    /// result is then checked against the schema itself by a JSON Schema validator, so keywords
    /// the type cannot hold (`not`, `if`/`then`, `contains`, ...) are enforced too
    /// (`schema_violation`). Prints one JSON object: `{"value": ..., "repairs": [...]}` when
    /// the arguments are valid (exit 0), `{"errors": [...]}` when they are not (exit 1).
    Coerce(coerce::CoerceArgs),
    /// Serve the tools over MCP: stdio, or streamable HTTP with `--http HOST:PORT`.
    ///
    /// Over stdio, stdout carries only protocol messages; the server runs until the client
    /// closes stdin, or SIGTERM or SIGINT. Over HTTP it is stateless (any instance can answer
    /// any request) unless `--sessions` keeps sessions, prints the address it listens on, and stops on SIGTERM or SIGINT, letting
    /// calls in flight finish. `--tools`, `--rename` and `--prefix` choose what is served;
    /// `--stats FILE` writes the calls' repairs and errors to FILE. With `--mcp 'CMD ARG...'`
    /// it is a gateway: those servers' tools are served too, each call coerced and checked
    /// against the tool's own schema before it is passed on.
    Mcp(mcp::McpArgs),
    /// Answer a question with a model over the registered tools.
    ///
    /// Asks the model behind an OpenAI-compatible chat completions API (`--base-url`, else
    /// `OPENAI_BASE_URL`; key from `OPENAI_API_KEY`), which may call the tools (all, or those
    /// named with `--tools`) before it answers. Prints the answer (exit 0), or why there is none
    /// on stderr (exit 1).
    Agent(agent::AgentArgs),
}

/// Runs the command line `args` (as the process receives them, the program name first) over the
/// tools of `registry`, reading `stdin` and printing to `stdout` and `stderr`.
///
/// `registry` is asked for only by the commands that need tools (`list`, `schema [TOOL...]`,
/// `call`); when it fails (say, two linked tools share a name) those commands print its error
/// and exit [`Exit::Usage`], and the others still work.
pub fn run<'r, I, T>(
    args: I,
    registry: impl FnOnce() -> Result<&'r Registry, RegistryError>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => return command_line_error(&error, stdout, stderr),
    };
    let load_registry = || registry().map_err(UsageError::Registry);
    let result = match cli.command {
        Command::List(args) => load_registry()
            .and_then(|registry| args.upstreams.connect(registry))
            .and_then(|connected| {
                let listed = args.run(&connected.registry)?;
                Ok(listed.after_warnings(connected.warnings.clone()))
            }),
        Command::Schema(args) if args.upstreams.is_empty() => args.run(load_registry),
        Command::Schema(args) => load_registry()
            .and_then(|registry| args.upstreams.connect(registry))
            .and_then(|connected| {
                let written = args.run(|| Ok(&connected.registry))?;
                Ok(written.after_warnings(connected.warnings.clone()))
            }),
        Command::Call(args) => load_registry()
            .and_then(|registry| args.upstreams.connect(registry))
            .and_then(|connected| args.run(&connected.registry, stdin, stderr)),
        Command::Coerce(args) => args.run(stdin),
        Command::Mcp(args) => load_registry()
            .and_then(|registry| args.upstreams.connect(registry))
            .and_then(|connected| args.run(&connected)),
        Command::Agent(args) => load_registry()
            .and_then(|registry| args.upstreams.connect(registry))
            .and_then(|connected| {
                let answered = args.run(&connected.registry, stdin, stdout, stderr)?;
                Ok(answered.after_warnings(connected.warnings.clone()))
            }),
    };
    match result {
        Ok(outcome) => print(outcome, stdout, stderr),
        Err(error) => fail(&error, stderr),
    }
}

/// Prints what clap says: help and version on stdout (exit 0), a bad command line on stderr.
fn command_line_error(error: &clap::Error, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Exit {
    let text = error.render().to_string();
    if error.use_stderr() {
        // Nothing more can be reported if stderr is gone.
        let _ = write_text(stderr, &text);
        return Exit::Usage;
    }
    print_stdout(&text, Exit::Success, stdout, stderr)
}

fn print(outcome: Outcome, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Exit {
    match outcome {
        Outcome::Success(text) => print_stdout(&text, Exit::Success, stdout, stderr),
        Outcome::Invalid(text) => print_stdout(&text, Exit::Failure, stdout, stderr),
        Outcome::Failed(message) => {
            // Nothing more can be reported if stderr is gone; the exit status still says it.
            let _ = write_text(stderr, &message);
            Exit::Failure
        }
        Outcome::Interrupted(message) => {
            let _ = write_text(stderr, &message);
            Exit::Interrupted
        }
        Outcome::Warned { warnings, outcome } => {
            // Warnings are advice: a stderr that is gone does not change the outcome.
            let _ = write_text(stderr, &warnings);
            print(*outcome, stdout, stderr)
        }
        Outcome::Partial { done, problems } => {
            let exit = print_stdout(&done, Exit::Failure, stdout, stderr);
            let _ = write_text(stderr, &problems);
            exit
        }
    }
}

/// Prints `text` on stdout and ends with `exit`, or with a usage error when stdout cannot be
/// written. A reader that stopped reading (`toolsmith list | head`) is no error: the command ends
/// quietly with `exit`, as Unix tools do when their reader is gone.
fn print_stdout(text: &str, exit: Exit, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Exit {
    match write_text(stdout, text) {
        Ok(()) => exit,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit,
        Err(e) => fail(&UsageError::Write(e), stderr),
    }
}

fn fail(error: &UsageError, stderr: &mut dyn Write) -> Exit {
    // Nothing more can be reported if stderr is gone too.
    let _ = write_text(stderr, &format!("toolsmith: error: {error}"));
    Exit::Usage
}

/// Writes `text` ended by a newline (none added to empty text), and flushes.
fn write_text(stream: &mut dyn Write, text: &str) -> std::io::Result<()> {
    stream.write_all(text.as_bytes())?;
    if !text.is_empty() && !text.ends_with('\n') {
        stream.write_all(b"\n")?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
