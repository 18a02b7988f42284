//! `tools/call` round trips per second over stdio for a trivial tool (`add`, two integers):
//! the toolsmith server against the MCP Python SDK's server (`python_server.py`), both driven by
//! this one client speaking newline-delimited JSON-RPC to the server's stdin and stdout, in the
//! same run. Sequential (one request in flight) and pipelined (`PIPELINE` in flight). The
//! toolsmith server is measured twice: `add` as an `async fn` (awaited on the executor, the
//! case with the target) and as a sync fn (`add_sync`, run on the server's tool threads).
//!
//! Then cancellation latency over the same stdio: the time from the client writing
//! `notifications/cancelled` for a running call of an async tool (`hold`, which awaits
//! `ctx.cancelled()`) to the tool observing it, median and p99 over `CANCELLATIONS` calls. The
//! tool runs in the server process, so both ends read the system's real-time clock (one clock
//! for both processes, nanoseconds), and the tool's reading comes back through a second tool
//! (`cancel_seen`) called after the cancellation.
//!
//! Beside them, the floor: this program started with `--serve-floor` answers every line at once
//! with a fixed `tools/call` result, without reading it, on the same runtime and pipes as the
//! server. What it reaches is what the pipes and the machine's wake-ups cost a round trip; no
//! server can go faster sequentially, and its ratio to the Python server is the ceiling any
//! sequential target can reach on this machine.
//!
//! The sequential round trip is timed three times: with client and servers placed by the
//! system's scheduler (what a user meets), then with both held on one CPU and on two (the
//! servers started under `taskset`). Waking another CPU costs a round trip more than anything a
//! server does, so on a small machine the first table follows the scheduler's choice; the other
//! two say what each choice costs.
//!
//! Run with `cargo xtask bench mcp` (which installs the Python SDK first). Started with
//! `--serve-stdio`, this program is the toolsmith server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use toolsmith::{Context, Progress, ToolError};

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report};

#[path = "../../../benches/stdio_client.rs"]
mod stdio_client;

use stdio_client::Server;

/// Requests in flight in the pipelined cases.
const PIPELINE: usize = 32;

/// The async tool's target: at least 100 times the Python server's rate, so at most 1/100 of
/// its time.
const TARGET: f64 = 1.0 / 100.0;

/// The arguments of every `add` call, and what its answer says.
const ADD: &str = r#"{"a":2,"b":3}"#;
const FIVE: &str = r#""text":"5""#;

/// The sync tool's target, with the hop to a tool thread and back: 50 times.
const SYNC_TARGET: f64 = 1.0 / 50.0;

/// Calls cancelled in the cancellation-latency measurement.
const CANCELLATIONS: usize = 1000;

/// How long `hold` waits for its cancellation, and `cancel_seen` for `hold`'s reading.
const PATIENCE: Duration = Duration::from_secs(10);

/// Adds two integers.
#[toolsmith::tool(read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Adds two integers (a sync tool: it runs on the server's tool threads).
#[toolsmith::tool(read_only)]
fn add_sync(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Nanoseconds since the Unix epoch on the real-time clock, which the bench and its server
/// process share.
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
        })
}

/// The last cancellation a `hold` call observed: its call id and when (`now_ns`).
static SEEN: Mutex<Option<(String, u64)>> = Mutex::new(None);

/// Wakes `cancel_seen` when `hold` has recorded its cancellation.
static SEEN_NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Reports progress once it runs, then waits for its call to be cancelled and records when it
/// saw that.
#[toolsmith::tool]
async fn hold(ctx: &Context) -> Result<String, ToolError> {
    ctx.progress(Progress::new(0));
    tokio::select! {
        () = ctx.cancelled() => {
            let at = now_ns();
            let id = ctx.call_id().unwrap_or_default().to_owned();
            *SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((id, at));
            SEEN_NOTIFY.notify_one();
            Ok("cancelled".to_owned())
        }
        () = tokio::time::sleep(PATIENCE) => Ok("never cancelled".to_owned()),
    }
}

/// When (`now_ns`) the `hold` call with JSON-RPC id `id` saw its cancellation; waits for it.
#[toolsmith::tool]
async fn cancel_seen(id: String) -> Result<u64, ToolError> {
    let waited = tokio::time::timeout(PATIENCE, async {
        loop {
            let notified = SEEN_NOTIFY.notified();
            if let Some((seen, at)) = &*SEEN
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                && *seen == id
            {
                return *at;
            }
            notified.await;
        }
    })
    .await;
    waited.map_err(|_| ToolError::Unavailable {
        tool: "cancel_seen".to_owned(),
        reason: format!("call {id} never saw its cancellation"),
    })
}

/// One cancellation: a `hold` call started (its progress read), cancelled, and the time
/// from writing `notifications/cancelled` to the tool seeing it, in nanoseconds.
fn cancellation(server: &mut Server) -> u64 {
    let id = server.send(
        r#""method":"tools/call","params":{"name":"hold","arguments":{},"_meta":{"progressToken":"p"}}"#,
    );
    server.flush();
    let started = server.receive();
    assert!(
        started.contains(r#""method":"notifications/progress""#),
        "{started}"
    );
    let sent = now_ns();
    server.notify(&format!(
        r#""method":"notifications/cancelled","params":{{"requestId":{id}}}"#
    ));
    server.flush();
    server.send(&format!(
        r#""method":"tools/call","params":{{"name":"cancel_seen","arguments":{{"id":"{id}"}}}}"#
    ));
    server.flush();
    let answer = server.receive().to_owned();
    let value: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(value["id"], server.last_id(), "{answer}");
    let seen: u64 = value["result"]["content"][0]["text"]
        .as_str()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| panic!("{answer}"));
    seen.saturating_sub(sent)
}

fn serve() -> ExitCode {
    let mut registry = toolsmith::Registry::new();
    let tools: [Arc<dyn toolsmith::Tool>; 4] = [
        Arc::new(Add),
        Arc::new(AddSync),
        Arc::new(Hold),
        Arc::new(CancelSeen),
    ];
    for tool in tools {
        if let Err(error) = registry.add(tool) {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    }
    match toolsmith_mcp::serve_stdio(registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

/// The floor: answers each line with a fixed `tools/call` result as soon as it is read, on a
/// current-thread runtime over rmcp's pipes, as the server is served.
fn serve_floor() -> ExitCode {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    const ANSWER: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"5"}],"isError":false}}
"#;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (read, mut write) = rmcp::transport::stdio_pipes();
        let mut read = tokio::io::BufReader::new(read);
        let mut line = Vec::new();
        loop {
            line.clear();
            if read.read_until(b'\n', &mut line).await.unwrap() == 0 {
                return ExitCode::SUCCESS;
            }
            write.write_all(ANSWER).await.unwrap();
            write.flush().await.unwrap();
        }
    })
}

/// The `q` quantile of `sorted`, in microseconds.
fn quantile_us(sorted: &[u64], q: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(at).map_or(f64::NAN, |&ns| ns as f64 / 1e3)
}

/// Where the client and the servers run.
#[derive(Clone, Copy, PartialEq)]
enum Placement {
    /// Wherever the system's scheduler puts them: what a user meets, and on a small machine
    /// a coin toss between the two placements below.
    Free,
    /// The client and every server on one CPU: a round trip costs no wake-up of another CPU.
    OneCpu,
    /// The client on one CPU and the servers on another: every round trip wakes both.
    TwoCpus,
}

impl Placement {
    fn title(self) -> &'static str {
        match self {
            Placement::Free => "placed by the scheduler",
            Placement::OneCpu => "client and server on one CPU",
            Placement::TwoCpus => "client and server on two CPUs",
        }
    }
}

/// The three servers, started for one placement.
struct Servers {
    peer: Server,
    ours: Server,
    floor: Server,
}

impl Servers {
    /// Starts the servers on the CPU `placement` gives them (through `taskset`), after keeping
    /// this thread, the client, on the first of `cores`.
    fn start(python: &Path, placement: Placement, cores: &[core_affinity::CoreId]) -> Servers {
        let server_cpu = match placement {
            Placement::Free => None,
            Placement::OneCpu => Some(cores[0]),
            Placement::TwoCpus => Some(cores[1]),
        };
        if placement != Placement::Free {
            assert!(
                core_affinity::set_for_current(cores[0]),
                "the client keeps to one CPU"
            );
        }
        let command = |program: &Path, arg: &str| {
            let mut command = match server_cpu {
                None => Command::new(program),
                Some(cpu) => {
                    let mut taskset = Command::new("taskset");
                    taskset
                        .args(["--cpu-list", &cpu.id.to_string()])
                        .arg(program);
                    taskset
                }
            };
            command.arg(arg);
            command
        };
        let script = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/python_server.py"
        ));
        let this = std::env::current_exe().unwrap();
        Servers {
            peer: Server::start(
                &mut command(python, &script.display().to_string()),
                &[("add", ADD, FIVE)],
            ),
            ours: Server::start(
                &mut command(&this, "--serve-stdio"),
                &[("add", ADD, FIVE), ("add_sync", ADD, FIVE)],
            ),
            floor: Server::start(&mut command(&this, "--serve-floor"), &[("add", ADD, FIVE)]),
        }
    }

    /// Times `calls` requests in flight at once on each server, and prints the rates.
    fn time(&mut self, placement: Placement, calls: usize) {
        let title = if calls == 1 {
            format!(
                "tools/call round trip over stdio, one request in flight, {} (ns per call)",
                placement.title()
            )
        } else {
            format!(
                "tools/call over stdio, {calls} requests in flight, {} (ns per {calls} calls)",
                placement.title()
            )
        };
        let Servers { peer, ours, floor } = self;
        // Two cases share one server process, so they take turns with it.
        let ours = std::cell::RefCell::new(ours);
        let medians = report(
            &title,
            vec![
                Case::new("MCP Python SDK server", || peer.calls("add", ADD, calls)),
                Case::new("toolsmith-mcp, async fn add", || {
                    ours.borrow_mut().calls("add", ADD, calls);
                })
                .target(TARGET),
                Case::new("toolsmith-mcp, sync fn add", || {
                    ours.borrow_mut().calls("add_sync", ADD, calls);
                })
                .target(SYNC_TARGET),
                Case::new("floor: a fixed answer to every line", || {
                    floor.calls("add", ADD, calls);
                }),
            ],
        );
        let rate = |ns: f64| calls as f64 * 1e9 / ns;
        let [python, async_fn, sync_fn, floor] = [0, 1, 2, 3].map(|case| rate(medians[case]));
        println!(
            "calls/s: MCP Python SDK {python:.0}; toolsmith-mcp async fn {async_fn:.0} = {:.1}x (target 100x), sync fn {sync_fn:.0} = {:.1}x (target 50x); floor {floor:.0} = {:.1}x",
            async_fn / python,
            sync_fn / python,
            floor / python,
        );
        println!();
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|arg| arg == "--serve-stdio") {
        return serve();
    }
    if args.iter().any(|arg| arg == "--serve-floor") {
        return serve_floor();
    }
    let Some(python) = toolsmith_testkit::require("python") else {
        return ExitCode::SUCCESS;
    };

    let mut free = Servers::start(&python, Placement::Free, &[]);
    free.time(Placement::Free, 1);
    free.time(Placement::Free, PIPELINE);
    let mut latencies: Vec<u64> = (0..CANCELLATIONS)
        .map(|_| cancellation(&mut free.ours))
        .collect();
    latencies.sort_unstable();
    println!(
        "cancellation over stdio, notifications/cancelled written to an async tool seeing ctx.cancelled(), {CANCELLATIONS} calls: median {:.1} us, p99 {:.1} us, max {:.1} us",
        quantile_us(&latencies, 0.5),
        quantile_us(&latencies, 0.99),
        quantile_us(&latencies, 1.0),
    );
    println!();
    drop(free);

    // The sequential round trip again with each placement held: on a machine whose scheduler
    // may put client and server on one CPU or on two, the first table is whichever it chose.
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if Command::new("taskset")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        println!("placements held: skipped, `taskset` (util-linux) is not on PATH");
        return ExitCode::SUCCESS;
    }
    for placement in [Placement::OneCpu, Placement::TwoCpus] {
        let needed = if placement == Placement::TwoCpus {
            2
        } else {
            1
        };
        if cores.len() < needed {
            println!(
                "{}: skipped, this process may use {} CPUs",
                placement.title(),
                cores.len()
            );
            continue;
        }
        Servers::start(&python, placement, &cores).time(placement, 1);
    }
    ExitCode::SUCCESS
}
