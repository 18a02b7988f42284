//! What the gateway costs (`toolsmith mcp --mcp SERVER`): `tools/call` of a trivial tool over
//! stdio, called directly on a server and through a gateway in front of it, one request in
//! flight and 32, in the same run.
//!
//! - The MCP Python SDK's server (`add`, two integers): the gateway should cost at most a
//!   tenth of the direct wall time (the Python server dominates).
//! - A toolsmith server (`toolsmith mcp --tools text_wc`): through a gateway it should keep at
//!   least half the direct calls per second.
//!
//! Beside each, the same server behind a relay that only copies bytes between the pipes (this
//! benchmark started as `--relay COMMAND...`): what any process between the client and the
//! server costs, the floor under the gateway's figure, measured in the same rounds.
//!
//! Run with `cargo xtask bench gateway` (which installs the Python SDK first).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

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

/// This benchmark as a relay: `command` started with piped stdin and stdout, every byte read
/// on one copied to the other as it comes, until either side closes.
fn relay(command: &[String]) -> ExitCode {
    let Some((program, args)) = command.split_first() else {
        eprintln!("usage: gateway --relay COMMAND [ARG...]");
        return ExitCode::FAILURE;
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            eprintln!("relay: {program} cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let (Some(mut to_server), Some(mut from_server)) = (child.stdin.take(), child.stdout.take())
    else {
        return ExitCode::FAILURE;
    };
    std::thread::spawn(move || copy(&mut std::io::stdin().lock(), &mut to_server));
    copy(&mut from_server, &mut std::io::stdout().lock());
    let _ = child.kill();
    let _ = child.wait();
    ExitCode::SUCCESS
}

/// Copies what `from` gives to `to` at once, chunk by chunk, until either ends.
fn copy(from: &mut impl Read, to: &mut impl Write) {
    let mut buffer = vec![0; 64 << 10];
    while let Ok(read @ 1..) = from.read(&mut buffer) {
        if to
            .write_all(&buffer[..read])
            .and_then(|()| to.flush())
            .is_err()
        {
            return;
        }
    }
}

/// This benchmark started as a relay in front of `command`.
fn relayed(command: &mut Command) -> Command {
    let mut relayed = Command::new(std::env::current_exe().expect("the benchmark's own path"));
    relayed
        .arg("--relay")
        .arg(command.get_program())
        .args(command.get_args());
    relayed
}

/// Times one server directly, behind a byte-copying relay, and through the gateway, at `calls`
/// in flight; prints and returns the ratios of the gateway's and the relay's times to the
/// direct one.
fn compare(
    title: &str,
    direct: (&mut Server, &str, &str),
    relay: &mut Server,
    gateway: (&mut Server, &str, &str),
    calls: usize,
    target: f64,
) -> (f64, f64) {
    let (direct, direct_tool, direct_args) = direct;
    let (gateway, gateway_tool, gateway_args) = gateway;
    let medians = report(
        &format!("{title}, {calls} in flight (ns per {calls} calls)"),
        vec![
            Case::new("direct", || direct.calls(direct_tool, direct_args, calls)),
            Case::new("through a relay copying bytes (floor)", || {
                relay.calls(direct_tool, direct_args, calls);
            }),
            Case::new("through toolsmith mcp --mcp", || {
                gateway.calls(gateway_tool, gateway_args, calls);
            })
            .target(target),
        ],
    );
    let ratio = medians[2] / medians[0];
    let floor = medians[1] / medians[0];
    let rate = |ns: f64| calls as f64 * 1e9 / ns;
    println!(
        "calls/s: direct {:.0}, through a relay {:.0} ({:.1}% of direct), through the gateway {:.0} ({:.1}% of direct; the gateway's time is {:.3}x the direct time, target {target}x)",
        rate(medians[0]),
        rate(medians[1]),
        100.0 / floor,
        rate(medians[2]),
        100.0 / ratio,
        ratio
    );
    println!();
    (ratio, floor)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(("--relay", command)) = args.split_first().map(|(f, r)| (f.as_str(), r)) {
        return relay(command);
    }
    let Some(python) = toolsmith_testkit::require("python") else {
        return ExitCode::SUCCESS;
    };
    let script = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolsmith-mcp/benches/python_server.py"
    ));
    let five = r#""text":"5""#;
    let mut python_direct = Server::start(Command::new(&python).arg(script), &[("add", ADD, five)]);
    let mut python_relay = Server::start(
        &mut relayed(Command::new(&python).arg(script)),
        &[("add", ADD, five)],
    );
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
    let mut toolsmith_relay = Server::start(
        &mut relayed(&mut toolsmith(&["mcp", "--tools", "text_wc"])),
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
        ratios.push(compare(
            "MCP Python SDK server (add)",
            (&mut python_direct, "add", ADD),
            &mut python_relay,
            (&mut python_gateway, "add", ADD),
            calls,
            PYTHON_TARGET,
        ));
        ratios.push(compare(
            "toolsmith server (text_wc)",
            (&mut toolsmith_direct, "text_wc", WC),
            &mut toolsmith_relay,
            (&mut toolsmith_gateway, "toolsmith_text_wc", WC),
            calls,
            TOOLSMITH_TARGET,
        ));
    }
    println!(
        "gateway in front of the Python server: {:.1}% more wall time sequential, {:.1}% with {PIPELINE} in flight (target at most 10%; a byte-copying relay: {:.1}%, {:.1}%)",
        (ratios[0].0 - 1.0) * 100.0,
        (ratios[2].0 - 1.0) * 100.0,
        (ratios[0].1 - 1.0) * 100.0,
        (ratios[2].1 - 1.0) * 100.0
    );
    println!(
        "toolsmith through a gateway keeps {:.0}% of direct calls/s sequential, {:.0}% with {PIPELINE} in flight (target at least 50%; a byte-copying relay: {:.0}%, {:.0}%)",
        100.0 / ratios[1].0,
        100.0 / ratios[3].0,
        100.0 / ratios[1].1,
        100.0 / ratios[3].1
    );
    ExitCode::SUCCESS
}
