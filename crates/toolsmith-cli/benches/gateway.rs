//! What the gateway costs (`toolsmith mcp --mcp SERVER`): `tools/call` of a trivial tool over
//! stdio, called directly on a server and through a gateway in front of it, one request in
//! flight and 32, in the same run.
//!
//! - The MCP Python SDK's server (`add`, two integers): the gateway should cost at most a
//!   tenth of the direct wall time (the Python server dominates).
//! - A toolsmith server (`toolsmith mcp --tools text_wc`): through a gateway it should keep at
//!   least half the direct calls per second.
//!
//! Run with `cargo xtask bench gateway` (which installs the Python SDK first).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, ExitCode};

#[path = "../../../benches/harness.rs"]
mod harness;

#[path = "../../../benches/stdio_client.rs"]
mod stdio_client;

use harness::{Case, report};
use stdio_client::Server;

/// Requests in flight in the pipelined cases.
const PIPELINE: usize = 32;

/// At most a tenth more wall time than calling the Python server directly.
const PYTHON_TARGET: f64 = 1.10;

/// At least half the calls per second of the toolsmith server called directly.
const TOOLSMITH_TARGET: f64 = 2.0;

const ADD: &str = r#"{"a":2,"b":3}"#;
const WC: &str = r#"{"text":"a b"}"#;

/// The `toolsmith` binary.
const TOOLSMITH: &str = env!("CARGO_BIN_EXE_toolsmith");

/// `program args...` as `--mcp` takes it: each word quoted.
fn command_line(program: &Path, args: &[&str]) -> String {
    std::iter::once(program.display().to_string())
        .chain(args.iter().map(|arg| (*arg).to_owned()))
        .map(|word| format!("'{word}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn toolsmith(args: &[&str]) -> Command {
    let mut command = Command::new(TOOLSMITH);
    command.args(args);
    command
}

/// Times one pair (direct, through the gateway) at `calls` in flight; prints and returns the
/// ratio of the gateway's time to the direct one.
fn pair(
    title: &str,
    direct: (&mut Server, &str, &str),
    gateway: (&mut Server, &str, &str),
    calls: usize,
    target: f64,
) -> f64 {
    let (direct, direct_tool, direct_args) = direct;
    let (gateway, gateway_tool, gateway_args) = gateway;
    let medians = report(
        &format!("{title}, {calls} in flight (ns per {calls} calls)"),
        vec![
            Case::new("direct", || direct.calls(direct_tool, direct_args, calls)),
            Case::new("through toolsmith mcp --mcp", || {
                gateway.calls(gateway_tool, gateway_args, calls);
            })
            .target(target),
        ],
    );
    let ratio = medians[1] / medians[0];
    let rate = |ns: f64| calls as f64 * 1e9 / ns;
    println!(
        "calls/s: direct {:.0}, through the gateway {:.0} ({:.1}% of direct; the gateway's time is {:.3}x the direct time, target {target}x)",
        rate(medians[0]),
        rate(medians[1]),
        100.0 / ratio,
        ratio
    );
    println!();
    ratio
}

fn main() -> ExitCode {
    let Some(python) = toolsmith_testkit::require("python") else {
        return ExitCode::SUCCESS;
    };
    let script = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolsmith-mcp/benches/python_server.py"
    ));
    let five = r#""text":"5""#;
    let mut python_direct = Server::start(Command::new(&python).arg(script), &[("add", ADD, five)]);
    let upstream = command_line(&python, &[&script.display().to_string()]);
    let mut python_gateway = Server::start(
        &mut toolsmith(&["mcp", "--mcp", &upstream, "--tools", "add"]),
        &[("add", ADD, five)],
    );
    let words = r#"Words: 2"#;
    let mut toolsmith_direct = Server::start(
        &mut toolsmith(&["mcp", "--tools", "text_wc"]),
        &[("text_wc", WC, words)],
    );
    let upstream = command_line(Path::new(TOOLSMITH), &["mcp", "--tools", "text_wc"]);
    let mut toolsmith_gateway = Server::start(
        &mut toolsmith(&[
            "mcp",
            "--mcp",
            &upstream,
            "--mcp-prefix",
            "--tools",
            "toolsmith_text_wc",
        ]),
        &[("toolsmith_text_wc", WC, words)],
    );

    let mut ratios = Vec::new();
    for calls in [1, PIPELINE] {
        ratios.push(pair(
            "MCP Python SDK server (add)",
            (&mut python_direct, "add", ADD),
            (&mut python_gateway, "add", ADD),
            calls,
            PYTHON_TARGET,
        ));
        ratios.push(pair(
            "toolsmith server (text_wc)",
            (&mut toolsmith_direct, "text_wc", WC),
            (&mut toolsmith_gateway, "toolsmith_text_wc", WC),
            calls,
            TOOLSMITH_TARGET,
        ));
    }
    println!(
        "gateway in front of the Python server: {:.1}% more wall time sequential, {:.1}% with {PIPELINE} in flight (target at most 10%)",
        (ratios[0] - 1.0) * 100.0,
        (ratios[2] - 1.0) * 100.0
    );
    println!(
        "toolsmith through a gateway keeps {:.0}% of direct calls/s sequential, {:.0}% with {PIPELINE} in flight (target at least 50%)",
        100.0 / ratios[1],
        100.0 / ratios[3]
    );
    ExitCode::SUCCESS
}
