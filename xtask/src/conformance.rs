//! `cargo xtask conformance`: the MCP conformance suite (`@modelcontextprotocol/conformance`, a
//! Node program) against toolsmith's conformance server and toolsmith's MCP client, each side
//! judged against a list of the scenarios expected to fail.
//!
//! **Server scenarios.** The server is the example `conformance_server` of `toolsmith-mcp`,
//! built here and started on a free port of 127.0.0.1 (`--http 127.0.0.1:0`); it says where it
//! listens on stderr (`...listening on http://ADDR/mcp`), as `toolsmith mcp --http` does.
//! `--server-command` runs the suite against any other server instead. Every server scenario
//! of the suite runs (`--suite all`: the pending ones too, `json-schema-2020-12` among them)
//! within [`SUITE_TIMEOUT`]; the server is killed when the suite ends, however it ends. A
//! scenario passes when none of its checks is a failure or a warning (the suite's own rule for
//! its baseline files).
//!
//! **Client scenarios.** The client is the example `conformance_client` of `toolsmith-mcp`,
//! built with the server. Every client scenario the suite lists (`list --client`: the draft and
//! extension ones too) runs on its own (`client --scenario NAME`): the suite starts that
//! scenario's server, runs the client with the server's URL as its one argument and the
//! scenario's name in `MCP_CONFORMANCE_SCENARIO`, and checks what the server saw. (The suite
//! runs that command through a shell, split at spaces: the client's path must be one plain
//! word, and is refused otherwise.) A scenario passes when none of its checks is a failure or
//! a warning and the suite passed it: the client ended in time, and successfully unless the
//! scenario expects it to give up. Each scenario runs within [`CLIENT_SCENARIO_TIMEOUT`], all
//! of them within [`CLIENT_SUITE_TIMEOUT`].
//!
//! The suite runs on Node 22 from `target/peers/node` (`cargo xtask setup`). The expected
//! failures are `xtask/conformance/expected-failures.txt` (server scenarios) and
//! `xtask/conformance/expected-client-failures.txt` (client scenarios): one scenario a line,
//! each with `# why`. A scenario that fails and is not listed fails the task, and so does one
//! listed that passes: it is to be removed from the list. Both sides run (`--only` picks one),
//! the second even when the first fails. The suite's logs, each scenario's checks and the
//! server's log are kept under `target/conformance` (the client side's under `client/`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::peers::NodeEnvironment;
use crate::{Error, peers, process};

/// How long a server may take to listen.
const SERVER_STARTUP: Duration = Duration::from_secs(60);
/// How long the server scenarios may run: they take a few seconds, and a scenario the server
/// leaves hanging must not hold CI.
const SUITE_TIMEOUT: Duration = Duration::from_secs(120);
/// In `--server-command`'s arguments, replaced by a free port of 127.0.0.1.
const PORT_PLACEHOLDER: &str = "{port}";
/// How long the suite gives the client in a client scenario (its `--timeout`; the example
/// gives up sooner).
const CLIENT_TIME: Duration = Duration::from_secs(30);
/// How long one client scenario may run (the suite, its server and the client), and how long
/// the suite may take to list them.
const CLIENT_SCENARIO_TIMEOUT: Duration = Duration::from_secs(60);
/// How long all the client scenarios may run: each takes under a second.
const CLIENT_SUITE_TIMEOUT: Duration = Duration::from_secs(240);
/// How many lines of a log a message quotes (the last ones).
const LOG_TAIL: usize = 30;
/// The most of a client's line on stderr a problem quotes.
const CLIENT_WORDS: usize = 400;

/// Which side of the protocol the suite tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The suite is the client; toolsmith's conformance server is tested.
    Server,
    /// The suite serves; toolsmith's MCP client is tested.
    Client,
}

impl Side {
    const BOTH: [Side; 2] = [Side::Server, Side::Client];

    fn name(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Client => "client",
        }
    }

    /// The example of `toolsmith-mcp` tested on this side.
    fn example(self) -> &'static str {
        match self {
            Side::Server => "conformance_server",
            Side::Client => "conformance_client",
        }
    }

    /// The example's source, under the workspace root.
    fn example_source(self) -> String {
        format!("crates/toolsmith-mcp/examples/{}.rs", self.example())
    }

    /// The expected failures file of this side under the workspace root.
    fn expected_failures_file(self, root: &Path) -> PathBuf {
        let name = match self {
            Side::Server => "expected-failures.txt",
            Side::Client => "expected-client-failures.txt",
        };
        peers::node_manifest_dir(root).join(name)
    }
}

/// What `cargo xtask conformance` runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Another server to test, as an argument vector, instead of the example; [`PORT_PLACEHOLDER`]
    /// in an argument becomes a free port of 127.0.0.1, where the server is then expected.
    pub server_command: Option<Vec<String>>,
    /// The server scenarios' expected failures, instead of
    /// `xtask/conformance/expected-failures.txt`.
    pub expected_failures: Option<PathBuf>,
    /// The client scenarios' expected failures, instead of
    /// `xtask/conformance/expected-client-failures.txt`.
    pub expected_client_failures: Option<PathBuf>,
    /// One side only, instead of both.
    pub only: Option<Side>,
}

impl Options {
    /// Reads `[--only server|client] [--expected-failures FILE] [--expected-client-failures
    /// FILE] [--server-command PROGRAM [ARG...]]`; the server's command takes every argument
    /// after `--server-command`.
    pub fn parse(args: &[String]) -> Result<Options, Error> {
        let mut options = Options::default();
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            match flag.as_str() {
                "--expected-failures" | "--expected-client-failures" => {
                    let file = rest
                        .next()
                        .ok_or_else(|| Error::Usage(format!("`{flag}` takes a file")))?;
                    let slot = if flag == "--expected-failures" {
                        &mut options.expected_failures
                    } else {
                        &mut options.expected_client_failures
                    };
                    *slot = Some(PathBuf::from(file));
                }
                "--only" => {
                    let side = match rest.next().map(String::as_str) {
                        Some("server") => Side::Server,
                        Some("client") => Side::Client,
                        _ => {
                            return Err(Error::Usage(
                                "`--only` takes `server` or `client`".to_owned(),
                            ));
                        }
                    };
                    options.only = Some(side);
                }
                "--server-command" => {
                    let argv: Vec<String> = rest.by_ref().cloned().collect();
                    if argv.is_empty() {
                        return Err(Error::Usage(
                            "`--server-command` takes a program and its arguments".to_owned(),
                        ));
                    }
                    options.server_command = Some(argv);
                }
                other => return Err(Error::Usage(format!("unexpected argument `{other}`"))),
            }
        }
        Ok(options)
    }

    /// The sides to run.
    fn sides(&self) -> Vec<Side> {
        match self.only {
            Some(side) => vec![side],
            None => Side::BOTH.to_vec(),
        }
    }

    /// The expected failures file of `side` under the workspace root, or the one given.
    fn expected_failures(&self, side: Side, root: &Path) -> PathBuf {
        let given = match side {
            Side::Server => &self.expected_failures,
            Side::Client => &self.expected_client_failures,
        };
        given
            .clone()
            .unwrap_or_else(|| side.expected_failures_file(root))
    }
}

/// CI's step: the suite against both examples; a side whose example does not exist yet is
/// skipped with a line saying so.
pub fn ci(root: &Path) -> Result<(), Error> {
    let sides: Vec<Side> = Side::BOTH
        .into_iter()
        .filter(|side| {
            let source = side.example_source();
            let there = root.join(&source).is_file();
            if !there {
                println!(
                    "conformance: {} scenarios skipped ({source} does not exist yet)",
                    side.name()
                );
            }
            there
        })
        .collect();
    if sides.is_empty() {
        return Ok(());
    }
    run_sides(root, &Options::default(), &sides)
}

/// Installs the suite (once), builds the examples, runs each side's scenarios, compares their
/// results with the side's expected failures and prints them.
pub fn run(root: &Path, options: &Options) -> Result<(), Error> {
    run_sides(root, options, &options.sides())
}

/// What every side's run shares.
struct Run<'a> {
    root: &'a Path,
    node: NodeEnvironment,
    /// Where cargo puts the examples it builds.
    examples: PathBuf,
    /// `target/conformance`.
    work: PathBuf,
}

/// A side's expected failures, with the file they were read from.
struct Expected {
    path: PathBuf,
    scenarios: BTreeMap<String, String>,
}

impl Expected {
    fn read(path: PathBuf) -> Result<Expected, Error> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Failed(format!("cannot read {}: {e}", path.display())))?;
        let scenarios = parse_expected_failures(&text)
            .map_err(|e| Error::Failed(format!("{}: {e}", path.display())))?;
        Ok(Expected { path, scenarios })
    }
}

/// [`run`] for `sides`: each side runs even when one before it failed; the task fails when any
/// does.
fn run_sides(root: &Path, options: &Options, sides: &[Side]) -> Result<(), Error> {
    let mut plans = Vec::with_capacity(sides.len());
    let mut examples = Vec::new();
    for &side in sides {
        let expected = Expected::read(options.expected_failures(side, root))?;
        if side == Side::Client || options.server_command.is_none() {
            let source = side.example_source();
            if !root.join(&source).is_file() {
                let instead = match side {
                    Side::Server => " (`--server-command` tests another server)",
                    Side::Client => "",
                };
                return Err(Error::Failed(format!(
                    "{source} does not exist yet{instead}"
                )));
            }
            examples.push(side.example());
        }
        plans.push((side, expected));
    }
    let node = peers::ensure_node(root)?;
    let run = Run {
        root,
        node,
        examples: build_examples(root, &examples)?,
        work: process::target_dir(root).join("conformance"),
    };
    let mut failures = Vec::new();
    for (side, expected) in &plans {
        let result = match side {
            Side::Server => run_server(&run, options, expected),
            Side::Client => run_client(&run, expected),
        };
        match result {
            Ok(()) => {}
            Err(Error::Failed(message)) => failures.push(message),
            Err(usage) => return Err(usage),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed(failures.join("\n")))
    }
}

/// Builds `examples` of `toolsmith-mcp` in one cargo run (none: nothing is built); the
/// directory they are in.
fn build_examples(root: &Path, examples: &[&str]) -> Result<PathBuf, Error> {
    if !examples.is_empty() {
        let mut build = Command::new(process::cargo()?);
        build.args(["build", "-p", "toolsmith-mcp"]);
        for example in examples {
            build.args(["--example", example]);
        }
        process::run(build.current_dir(root))?;
    }
    Ok(process::target_dir(root).join("debug").join("examples"))
}

/// The suite's program on Node, with Node's directory first on `PATH`.
fn suite_command(node: &NodeEnvironment) -> Result<Command, Error> {
    let mut suite = Command::new(&node.node);
    suite.arg(&node.conformance);
    if let Some(bin) = node.node.parent() {
        suite.env("PATH", process::search_path(Some(bin))?);
    }
    Ok(suite)
}

/// Removes `dir` with everything in it, if it exists, and makes it again, empty.
fn fresh_dir(dir: &Path) -> Result<(), Error> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .map_err(|e| Error::Failed(format!("cannot remove {}: {e}", dir.display())))?;
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))
}

/// Judges a side's outcomes against its expected failures and prints the table and counts.
fn finish(
    side: Side,
    outcomes: &[Outcome],
    expected: &Expected,
    elapsed: Duration,
    logs: &Path,
) -> Result<(), Error> {
    let report = judge(outcomes, &expected.scenarios);
    print!("{}", report.table);
    println!(
        "conformance: {} scenarios: {} passed, {} failed as expected, {} failed unexpectedly, {} \
         listed but passed ({:.1} s; logs in {})",
        side.name(),
        report.passed,
        report.expected,
        report.unexpected.len(),
        report.stale.len(),
        elapsed.as_secs_f64(),
        logs.display()
    );
    report.verdict(&expected.path).map_err(|error| match error {
        Error::Failed(message) => Error::Failed(format!(
            "conformance ({} scenarios): {message}",
            side.name()
        )),
        usage @ Error::Usage(_) => usage,
    })
}

/// The server scenarios against the example server (or `--server-command`'s).
fn run_server(run: &Run<'_>, options: &Options, expected: &Expected) -> Result<(), Error> {
    let (command, port) = match &options.server_command {
        Some(argv) => server_command(argv)?,
        None => (example_command(run), None),
    };
    let results = run.work.join("results");
    fresh_dir(&results)?;
    let server_log = run.work.join("server.log");
    let suite_log = run.work.join("suite.log");

    let server = Server::start(command, port, &server_log)?;
    println!(
        "conformance: @modelcontextprotocol/conformance {} against {}",
        run.node.conformance_version, server.url
    );
    let started = Instant::now();
    let mut suite = suite_command(&run.node)?;
    suite
        .args([
            "server",
            "--url",
            &server.url,
            "--suite",
            "all",
            "--output-dir",
        ])
        .arg(&results)
        .current_dir(&run.work);
    let status = process::run_logged(&mut suite, &suite_log, SUITE_TIMEOUT);
    drop(server);
    let elapsed = started.elapsed();
    let status = status?.ok_or_else(|| {
        Error::Failed(format!(
            "the suite did not finish within {} s and was killed; the end of {}:\n{}",
            SUITE_TIMEOUT.as_secs(),
            suite_log.display(),
            log_tail(&suite_log)
        ))
    })?;
    let log = std::fs::read_to_string(&suite_log).unwrap_or_default();
    let summary = parse_summary(&log).ok_or_else(|| {
        Error::Failed(format!(
            "the suite ended ({status}) without its summary; the end of {}:\n{}",
            suite_log.display(),
            log_tail(&suite_log)
        ))
    })?;
    let details = read_checks(&results);
    let outcomes: Vec<Outcome> = summary
        .into_iter()
        .map(|(scenario, failed)| {
            let checks = details.get(&scenario_key(&scenario));
            Outcome::new(scenario, failed, checks)
        })
        .collect();
    finish(Side::Server, &outcomes, expected, elapsed, &run.work)
}

/// The command that starts the built example server on a free port of 127.0.0.1.
fn example_command(run: &Run<'_>) -> Command {
    let mut command = Command::new(run.examples.join(Side::Server.example()));
    command
        .args(["--http", "127.0.0.1:0"])
        .current_dir(run.root);
    command
}
/// The command `--server-command` gave, its program found on `PATH` when it is a bare name,
/// and the port put in place of [`PORT_PLACEHOLDER`], if it was used.
fn server_command(argv: &[String]) -> Result<(Command, Option<u16>), Error> {
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::Usage(
            "`--server-command` takes a program".to_owned(),
        ));
    };
    let uses_port = argv.iter().any(|arg| arg.contains(PORT_PLACEHOLDER));
    let port = if uses_port {
        Some(process::free_port()?)
    } else {
        None
    };
    let fill = |arg: &String| match port {
        Some(port) => arg.replace(PORT_PLACEHOLDER, &port.to_string()),
        None => arg.clone(),
    };
    let program = fill(program);
    let program = if program.contains('/') {
        PathBuf::from(program)
    } else {
        process::program(&program)?
    };
    let mut command = Command::new(program);
    command.args(args.iter().map(fill));
    Ok((command, port))
}

/// The server under test; killed when dropped.
struct Server {
    // Held for its `Drop`, which kills the server.
    _process: process::Running,
    /// The URL of its MCP endpoint.
    url: String,
}

impl Server {
    /// Starts `command` with its output in `log`, and waits until it says where it listens
    /// (or, when `port` is given, until that port of 127.0.0.1 takes connections).
    fn start(mut command: Command, port: Option<u16>, log: &Path) -> Result<Server, Error> {
        let file = File::create(log)
            .map_err(|e| Error::Failed(format!("cannot create {}: {e}", log.display())))?;
        let mut writer = file
            .try_clone()
            .map_err(|e| Error::Failed(format!("cannot share {}: {e}", log.display())))?;
        command
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(Stdio::piped());
        eprintln!("$ {} > {}", process::describe(&command), log.display());
        let mut running = process::Running::spawn(&mut command)?;
        let (lines, announcements) = mpsc::channel();
        if let Some(stderr) = running.child_mut().stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let _ = writeln!(writer, "{line}");
                    if let Some(url) = announced_url(&line) {
                        let _ = lines.send(url);
                    }
                }
            });
        }
        let deadline = Instant::now() + SERVER_STARTUP;
        loop {
            match announcements.recv_timeout(Duration::from_millis(100)) {
                Ok(url) => {
                    return Ok(Server {
                        _process: running,
                        url,
                    });
                }
                Err(RecvTimeoutError::Timeout) => {}
                // Its stderr is closed: it has exited, or is about to.
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(100))
                }
            }
            if let Some(status) = running.try_wait()? {
                return Err(Error::Failed(format!(
                    "the server exited ({status}) before it listened; the end of {}:\n{}",
                    log.display(),
                    log_tail(log)
                )));
            }
            if let Some(port) = port {
                let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
                if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    return Ok(Server {
                        _process: running,
                        url: format!("http://127.0.0.1:{port}/mcp"),
                    });
                }
            }
            if Instant::now() >= deadline {
                let waited_for = match port {
                    Some(port) => format!("to listen on 127.0.0.1:{port}"),
                    None => "to say `listening on http://ADDR/PATH` on stderr".to_owned(),
                };
                return Err(Error::Failed(format!(
                    "the server did not come up within {} s (waited for it {waited_for}); the \
                     end of {}:\n{}",
                    SERVER_STARTUP.as_secs(),
                    log.display(),
                    log_tail(log)
                )));
            }
        }
    }
}

/// The URL in a line that says `... listening on http://HOST:PORT/PATH`.
fn announced_url(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("listening on ")?;
    let url = rest.split_whitespace().next()?;
    let after_scheme = url.strip_prefix("http://")?;
    let (authority, path) = after_scheme
        .split_once('/')
        .map_or((after_scheme, ""), |(authority, path)| (authority, path));
    let (host, port) = authority.rsplit_once(':')?;
    (!host.is_empty() && port.parse::<u16>().is_ok()).then(|| format!("http://{authority}/{path}"))
}

/// The scenarios the suite's summary lists, in its order, each with its count of failed checks.
///
/// The summary's rows read `✓ NAME: N passed, M failed` (or `✗ ...`); `None` when there is no
/// summary or a row does not read.
fn parse_summary(log: &str) -> Option<Vec<(String, u64)>> {
    let (_, summary) = log.split_once("=== SUMMARY ===")?;
    let mut rows = Vec::new();
    for line in summary.lines().map(str::trim) {
        let Some(row) = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ ")) else {
            continue;
        };
        let (scenario, counts) = row.rsplit_once(": ")?;
        let (_, failed) = counts.strip_suffix(" failed")?.rsplit_once(", ")?;
        rows.push((scenario.to_owned(), failed.parse().ok()?));
    }
    (!rows.is_empty()).then_some(rows)
}

/// The key under which [`read_checks`] files a scenario's checks.
fn scenario_key(scenario: &str) -> String {
    format!("server-{scenario}")
}

/// Each scenario's checks (`checks.json`), by the name of its result directory less the
/// timestamp the suite appends (`server-NAME-2026-01-02T03-04-05-678Z`, [`without_stamp`]);
/// what does not read is left out (a scenario that crashed writes nothing).
fn read_checks(results: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(results).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(key) = without_stamp(&name) else {
            continue;
        };
        let checks = std::fs::read_to_string(entry.path().join("checks.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Vec<Value>>(&text).ok());
        if let Some(checks) = checks {
            found.insert(key.to_owned(), checks);
        }
    }
    found
}

/// One scenario's result.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    scenario: String,
    /// Its failed checks and warnings, each as `id: message`; for a scenario that failed without
    /// writing its checks, a line saying so.
    problems: Vec<String>,
}

impl Outcome {
    /// The outcome of `scenario`, from its count of failed checks in the summary and its checks.
    fn new(scenario: String, failed: u64, checks: Option<&Vec<Value>>) -> Outcome {
        let mut problems: Vec<String> = checks.into_iter().flatten().filter_map(problem).collect();
        if failed > 0 && problems.is_empty() {
            problems.push(format!(
                "{failed} failed checks, not recorded (the scenario did not run to its end: see \
                 suite.log)"
            ));
        }
        Outcome { scenario, problems }
    }

    /// The outcome of the client scenario `scenario`: its checks' failures and warnings, and
    /// the suite's own verdict (`end`), which also fails a client that did not end in time, or
    /// ended with an error where the scenario does not expect one (`said` is the suite's log).
    /// A scenario that failed quotes the client's last line on stderr (`client_stderr`).
    fn of_client(
        scenario: String,
        end: &SuiteEnd,
        checks: Option<&Vec<Value>>,
        said: &str,
        client_stderr: &str,
    ) -> Outcome {
        let mut problems: Vec<String> = checks.into_iter().flatten().filter_map(problem).collect();
        match end {
            SuiteEnd::Killed(after) => problems.push(format!(
                "the suite did not end the scenario within {} s and was killed",
                after.as_secs()
            )),
            SuiteEnd::Failed(status) if problems.is_empty() => {
                let why = if said.contains("CLIENT TIMED OUT") {
                    "the client did not end in time"
                } else if said.contains("CLIENT EXITED WITH ERROR") {
                    "the client exited with an error"
                } else {
                    "see its log"
                };
                problems.push(format!(
                    "the suite failed the scenario ({status}) with no failed check: {why}"
                ));
            }
            SuiteEnd::Failed(_) | SuiteEnd::Passed => {}
        }
        if !problems.is_empty()
            && let Some(line) = client_stderr.lines().rev().find(|l| !l.trim().is_empty())
        {
            problems.push(format!(
                "the client said: {}",
                abridge(line.trim(), CLIENT_WORDS)
            ));
        }
        Outcome { scenario, problems }
    }

    fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A failed check or a warning, as `[STATUS] id: message`; `None` for any other check.
fn problem(check: &Value) -> Option<String> {
    let text = |key: &str| check.get(key).and_then(Value::as_str);
    let status = text("status")?;
    if status != "FAILURE" && status != "WARNING" {
        return None;
    }
    let message = text("errorMessage")
        .or_else(|| {
            check
                .get("details")
                .and_then(|details| details.get("message"))
                .and_then(Value::as_str)
        })
        .or_else(|| text("description"))
        .unwrap_or("(no message)");
    Some(format!(
        "[{status}] {}: {message}",
        text("id").unwrap_or("?")
    ))
}

/// The scenarios expected to fail, each with why, as read from the expected failures file:
/// `NAME  # why` a line; blank lines and lines that start with `#` are skipped.
fn parse_expected_failures(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut expected = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let number = index + 1;
        let (scenario, reason) = line
            .split_once('#')
            .map(|(scenario, reason)| (scenario.trim(), reason.trim()))
            .filter(|(_, reason)| !reason.is_empty())
            .ok_or_else(|| format!("line {number}: `{line}` needs a reason (`NAME  # why`)"))?;
        if scenario.is_empty() || scenario.contains(char::is_whitespace) {
            return Err(format!(
                "line {number}: `{scenario}` is not one scenario's name"
            ));
        }
        if expected
            .insert(scenario.to_owned(), reason.to_owned())
            .is_some()
        {
            return Err(format!("line {number}: `{scenario}` is listed twice"));
        }
    }
    Ok(expected)
}

/// The run judged against the expected failures.
#[derive(Debug, Default)]
struct Report {
    /// The table printed: each scenario, its result and verdict.
    table: String,
    passed: usize,
    expected: usize,
    /// Scenarios that failed and are not listed.
    unexpected: Vec<String>,
    /// Scenarios listed that passed.
    stale: Vec<String>,
    /// Listed names the suite has no scenario of.
    unknown: Vec<String>,
}

impl Report {
    /// Success, or what is wrong and what to do about it.
    fn verdict(&self, expected_path: &Path) -> Result<(), Error> {
        let mut wrong = Vec::new();
        if !self.unexpected.is_empty() {
            wrong.push(format!(
                "failed and not expected to: {}",
                self.unexpected.join(", ")
            ));
        }
        if !self.stale.is_empty() {
            wrong.push(format!(
                "passed, so remove them from {}: {}",
                expected_path.display(),
                self.stale.join(", ")
            ));
        }
        if !self.unknown.is_empty() {
            wrong.push(format!(
                "{} names scenarios the suite does not have: {}",
                expected_path.display(),
                self.unknown.join(", ")
            ));
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(Error::Failed(wrong.join("; ")))
        }
    }
}

/// Each outcome against the expected failures, as a table and counts.
fn judge(outcomes: &[Outcome], expected: &BTreeMap<String, String>) -> Report {
    let mut report = Report::default();
    let width = outcomes
        .iter()
        .map(|outcome| outcome.scenario.len())
        .max()
        .unwrap_or(0);
    let mut table = format!("  {:<width$}  result  verdict\n", "scenario");
    let mut row = |scenario: &str, result: &str, verdict: &str, problems: &[String]| {
        let line = format!("  {scenario:<width$}  {result:<6}  {verdict}");
        let _ = writeln!(table, "{}", line.trim_end());
        for problem in problems {
            let _ = writeln!(table, "      {problem}");
        }
    };
    let mut ran = BTreeSet::new();
    for outcome in outcomes {
        ran.insert(outcome.scenario.as_str());
        let scenario = outcome.scenario.as_str();
        match (outcome.passed(), expected.get(scenario)) {
            (true, None) => {
                report.passed += 1;
                row(scenario, "pass", "", &[]);
            }
            (false, Some(reason)) => {
                report.expected += 1;
                row(scenario, "fail", &format!("expected: {reason}"), &[]);
            }
            (false, None) => {
                report.unexpected.push(scenario.to_owned());
                row(scenario, "fail", "UNEXPECTED", &outcome.problems);
            }
            (true, Some(_)) => {
                report.stale.push(scenario.to_owned());
                row(
                    scenario,
                    "pass",
                    "LISTED as expected to fail: remove it from the list",
                    &[],
                );
            }
        }
    }
    report.table = table;
    report.unknown = expected
        .keys()
        .filter(|scenario| !ran.contains(scenario.as_str()))
        .cloned()
        .collect();
    report
}

/// The last [`LOG_TAIL`] lines of the file at `path`.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL)..].join("\n")
}

/// The client scenarios against the example client, one after another.
fn run_client(run: &Run<'_>, expected: &Expected) -> Result<(), Error> {
    let client = run.examples.join(Side::Client.example());
    let command = client_command(&client)?;
    let dir = run.work.join("client");
    let results = dir.join("results");
    fresh_dir(&results)?;
    let scenarios = list_client_scenarios(&run.node, &dir)?;
    println!(
        "conformance: @modelcontextprotocol/conformance {}'s {} client scenarios against {}",
        run.node.conformance_version,
        scenarios.len(),
        client.display()
    );
    let started = Instant::now();
    let mut outcomes = Vec::with_capacity(scenarios.len());
    for scenario in &scenarios {
        let left = CLIENT_SUITE_TIMEOUT.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(Error::Failed(format!(
                "conformance (client scenarios): they did not finish within {} s ({} of {} \
                 ran); the logs are in {}",
                CLIENT_SUITE_TIMEOUT.as_secs(),
                outcomes.len(),
                scenarios.len(),
                dir.display()
            )));
        }
        let timeout = left.min(CLIENT_SCENARIO_TIMEOUT);
        outcomes.push(run_client_scenario(run, &command, scenario, &dir, timeout)?);
    }
    finish(Side::Client, &outcomes, expected, started.elapsed(), &dir)
}

/// The client's path as the suite's `--command`. The suite splits that text at spaces and runs
/// it through a shell, so it must be one word with nothing a shell would read in it.
fn client_command(client: &Path) -> Result<String, Error> {
    client
        .to_str()
        .filter(|path| {
            !path.is_empty()
                && path
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_+./:@,".contains(c))
        })
        .map(str::to_owned)
        .ok_or_else(|| {
            Error::Failed(format!(
                "the client is at {}, a path the suite cannot run: it runs its command through \
                 a shell, split at spaces (build into a plain path with CARGO_TARGET_DIR)",
                client.display()
            ))
        })
}

/// Every client scenario the suite has, as `list --client` lists them.
fn list_client_scenarios(node: &NodeEnvironment, dir: &Path) -> Result<Vec<String>, Error> {
    let log = dir.join("list.log");
    let mut list = suite_command(node)?;
    list.args(["list", "--client"]).current_dir(dir);
    let status = process::run_logged(&mut list, &log, CLIENT_SCENARIO_TIMEOUT)?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let scenarios = parse_client_scenarios(&text);
    match status {
        Some(status) if status.success() && !scenarios.is_empty() => Ok(scenarios),
        status => Err(Error::Failed(format!(
            "the suite did not list its client scenarios ({}); the end of {}:\n{}",
            status.map_or_else(
                || format!("killed after {} s", CLIENT_SCENARIO_TIMEOUT.as_secs()),
                |status| status.to_string()
            ),
            log.display(),
            log_tail(&log)
        ))),
    }
}

/// The scenarios under `Client scenarios ...:` in the suite's `list`, whose rows read
/// `  - NAME [SPEC VERSIONS]`.
fn parse_client_scenarios(listing: &str) -> Vec<String> {
    listing
        .lines()
        .skip_while(|line| !line.starts_with("Client scenarios"))
        .skip(1)
        .map_while(|line| line.trim().strip_prefix("- "))
        .filter_map(|row| row.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Runs one client scenario and reads its outcome.
fn run_client_scenario(
    run: &Run<'_>,
    command: &str,
    scenario: &str,
    dir: &Path,
    timeout: Duration,
) -> Result<Outcome, Error> {
    let results = dir.join("results");
    let log = dir.join(format!("{}.log", scenario.replace('/', "_")));
    let mut suite = suite_command(&run.node)?;
    suite
        .args([
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
            "--timeout",
            &CLIENT_TIME.as_millis().to_string(),
            "--output-dir",
        ])
        .arg(&results)
        .current_dir(dir);
    let end = match process::run_logged(&mut suite, &log, timeout)? {
        None => SuiteEnd::Killed(timeout),
        Some(status) if status.success() => SuiteEnd::Passed,
        Some(status) => SuiteEnd::Failed(status.to_string()),
    };
    let found = result_dir(&results, scenario);
    let read = |name: &str| {
        found
            .as_ref()
            .and_then(|found| std::fs::read_to_string(found.join(name)).ok())
    };
    let checks = read("checks.json").and_then(|text| serde_json::from_str(&text).ok());
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    Ok(Outcome::of_client(
        scenario.to_owned(),
        &end,
        checks.as_ref(),
        &said,
        &read("stderr.txt").unwrap_or_default(),
    ))
}

/// How the suite ended one client scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SuiteEnd {
    /// It passed the scenario (exit 0).
    Passed,
    /// It failed the scenario; how it exited.
    Failed(String),
    /// It did not end within the time given, and was killed.
    Killed(Duration),
}

/// The directory the suite wrote a client scenario's results to: `NAME-STAMP` under `results`
/// (a name with a `/`, as `auth/metadata-default`, is a directory below).
fn result_dir(results: &Path, scenario: &str) -> Option<PathBuf> {
    let (parent, leaf) = match scenario.rsplit_once('/') {
        Some((parent, leaf)) => (results.join(parent), leaf),
        None => (results.to_path_buf(), scenario),
    };
    std::fs::read_dir(parent)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .and_then(without_stamp)
                == Some(leaf)
        })
}

/// A result directory's name less the timestamp the suite appends (`-` and an ISO timestamp
/// with `:` and `.` as `-`); `None` for a name too short to have one.
fn without_stamp(name: &str) -> Option<&str> {
    const STAMP: usize = "-2026-01-02T03-04-05-678Z".len();
    name.get(..name.len().checked_sub(STAMP)?)
}

/// `text` cut to at most `max` bytes (at a character's boundary), with `...` when cut.
fn abridge(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let cut = (0..=max)
        .rev()
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(0);
    format!("{} ...", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn outcome(scenario: &str, problems: &[&str]) -> Outcome {
        Outcome {
            scenario: scenario.to_owned(),
            problems: problems.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    fn expected(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(s, r)| ((*s).to_owned(), (*r).to_owned()))
            .collect()
    }

    #[test]
    fn no_options_test_the_example_against_the_committed_list() {
        assert_eq!(Options::parse(&[]), Ok(Options::default()));
    }

    #[test]
    fn the_server_command_takes_every_argument_after_it() {
        let options = Options::parse(&args(&[
            "--expected-failures",
            "mine.txt",
            "--server-command",
            "node",
            "server.js",
            "--expected-failures",
        ]));
        assert_eq!(
            options,
            Ok(Options {
                server_command: Some(args(&["node", "server.js", "--expected-failures"])),
                expected_failures: Some(PathBuf::from("mine.txt")),
                ..Options::default()
            })
        );
    }

    #[test]
    fn both_sides_run_unless_one_is_chosen_each_with_its_own_list() {
        assert_eq!(Options::default().sides(), [Side::Server, Side::Client]);
        let options = Options::parse(&args(&[
            "--only",
            "client",
            "--expected-client-failures",
            "client.txt",
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(options.sides(), [Side::Client]);
        let root = Path::new("/repo");
        assert_eq!(
            options.expected_failures(Side::Client, root),
            Path::new("client.txt")
        );
        assert_eq!(
            options.expected_failures(Side::Server, root),
            Side::Server.expected_failures_file(root)
        );
        assert_ne!(
            Side::Client.expected_failures_file(root),
            Side::Server.expected_failures_file(root)
        );
    }

    #[test]
    fn a_flag_without_its_value_or_an_unknown_flag_is_a_usage_error() {
        for wrong in [
            &["--server-command"][..],
            &["--expected-failures"],
            &["--expected-client-failures"],
            &["--only"],
            &["--only", "both"],
            &["--fast"],
        ] {
            assert!(
                matches!(Options::parse(&args(wrong)), Err(Error::Usage(_))),
                "{wrong:?}"
            );
        }
    }

    #[test]
    fn the_port_placeholder_becomes_one_free_port_in_every_argument() {
        let argv = args(&[
            "/usr/bin/env",
            "PORT={port}",
            "server",
            "--url=http://127.0.0.1:{port}",
        ]);
        let (command, port) = server_command(&argv).unwrap_or_else(|e| panic!("{e:?}"));
        let port = port.map(|p| p.to_string()).unwrap_or_default();
        let given: Vec<String> = command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            given,
            [
                format!("PORT={port}"),
                "server".to_owned(),
                format!("--url=http://127.0.0.1:{port}")
            ]
        );
        let (_, none) = server_command(&args(&["/bin/true"])).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(none, None);
    }

    #[test]
    fn the_announced_address_is_read_from_the_servers_line() {
        assert_eq!(
            announced_url("toolsmith: listening on http://127.0.0.1:4242/mcp").as_deref(),
            Some("http://127.0.0.1:4242/mcp")
        );
        assert_eq!(
            announced_url("conformance_server: listening on http://[::1]:80/mcp (stateless)")
                .as_deref(),
            Some("http://[::1]:80/mcp")
        );
        for other in [
            "toolsmith: ready",
            "listening on https://127.0.0.1:1/mcp",
            "listening on http://127.0.0.1/mcp",
            "listening on http://:1/mcp",
            "listening on http://127.0.0.1:99999/mcp",
        ] {
            assert_eq!(announced_url(other), None, "{other}");
        }
    }

    #[test]
    fn the_summary_gives_every_scenario_in_order_with_its_failed_checks() {
        let log = "\
=== Running scenario: ping ===
✗ not-a-summary-row: 0 passed, 9 failed

=== SUMMARY ===
✓ server-initialize: 1 passed, 0 failed
✗ tools-call-image: 0 passed, 1 failed

Total: 1 passed, 1 failed
";
        assert_eq!(
            parse_summary(log),
            Some(vec![
                ("server-initialize".to_owned(), 0),
                ("tools-call-image".to_owned(), 1)
            ])
        );
        assert_eq!(parse_summary("=== Running scenario: ping ===\n"), None);
        assert_eq!(parse_summary("=== SUMMARY ===\n✓ ping: lots\n"), None);
    }

    #[test]
    fn failures_and_warnings_are_problems_and_other_checks_are_not() {
        let checks: Vec<Value> = serde_json::from_str(
            r#"[
                {"id": "a", "status": "SUCCESS", "description": "fine"},
                {"id": "b", "status": "FAILURE", "errorMessage": "No image content found"},
                {"id": "c", "status": "WARNING", "details": {"message": "no session"}},
                {"id": "d", "status": "INFO", "description": "sent a request"}
            ]"#,
        )
        .unwrap_or_default();
        let outcome = Outcome::new("s".to_owned(), 1, Some(&checks));
        assert_eq!(
            outcome.problems,
            [
                "[FAILURE] b: No image content found",
                "[WARNING] c: no session"
            ]
        );
        assert!(!outcome.passed());
    }

    #[test]
    fn a_scenario_that_failed_without_its_checks_still_fails() {
        let crashed = Outcome::new("s".to_owned(), 1, None);
        assert!(!crashed.passed());
        assert!(Outcome::new("s".to_owned(), 0, None).passed());
    }

    #[test]
    fn checks_are_found_by_the_result_directory_less_its_timestamp() {
        let dir = std::env::temp_dir().join(format!("xtask-conformance-{}", std::process::id()));
        let scenario = dir.join("server-tools-call-image-2026-01-02T03-04-05-678Z");
        let _ = std::fs::create_dir_all(&scenario);
        let _ = std::fs::write(scenario.join("checks.json"), r#"[{"status": "SUCCESS"}]"#);
        let _ = std::fs::create_dir_all(dir.join("server-x"));
        let found = read_checks(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            found.keys().collect::<Vec<_>>(),
            [&scenario_key("tools-call-image")]
        );
    }

    #[test]
    fn expected_failures_are_read_with_their_reasons() {
        let text = "\
# Scenarios toolsmith does not pass, and why.

resources-list        # resources are outside the project's scope
tools-call-sampling   # sampling comes later
";
        assert_eq!(
            parse_expected_failures(text),
            Ok(expected(&[
                (
                    "resources-list",
                    "resources are outside the project's scope"
                ),
                ("tools-call-sampling", "sampling comes later"),
            ]))
        );
    }

    #[test]
    fn an_expected_failure_needs_a_reason_and_is_listed_once() {
        for wrong in [
            "resources-list\n",
            "resources-list   #   \n",
            "resources list # two words\n",
            "ping # a\nping # b\n",
        ] {
            assert!(parse_expected_failures(wrong).is_err(), "{wrong:?}");
        }
    }

    #[test]
    fn an_unlisted_failure_fails_the_run_and_a_listed_one_does_not() {
        let outcomes = [
            outcome("ping", &[]),
            outcome("resources-list", &["[FAILURE] x: y"]),
            outcome(
                "tools-call-image",
                &["[FAILURE] tools-call-image: No image content found"],
            ),
        ];
        let report = judge(&outcomes, &expected(&[("resources-list", "out of scope")]));
        assert_eq!(report.passed, 1);
        assert_eq!(report.expected, 1);
        assert_eq!(report.unexpected, ["tools-call-image"]);
        assert!(report.table.contains("No image content found"));
        assert!(report.table.contains("expected: out of scope"));
        assert!(report.verdict(Path::new("list.txt")).is_err());
    }

    #[test]
    fn a_listed_scenario_that_passes_fails_the_run_until_it_is_removed() {
        let outcomes = [outcome("ping", &[])];
        let report = judge(&outcomes, &expected(&[("ping", "flaky")]));
        assert_eq!(report.stale, ["ping"]);
        assert!(report.table.contains("remove it from the list"));
        let verdict = report.verdict(Path::new("list.txt"));
        assert!(
            matches!(&verdict, Err(Error::Failed(m)) if m.contains("remove them from list.txt: ping")),
            "{verdict:?}"
        );
    }

    #[test]
    fn a_listed_name_the_suite_does_not_have_fails_the_run() {
        let report = judge(&[outcome("ping", &[])], &expected(&[("pnig", "typo")]));
        assert_eq!(report.unknown, ["pnig"]);
        assert!(report.verdict(Path::new("list.txt")).is_err());
    }

    #[test]
    fn a_run_with_only_listed_failures_succeeds() {
        let outcomes = [
            outcome("ping", &[]),
            outcome("prompts-list", &["[FAILURE] a: b"]),
        ];
        let report = judge(&outcomes, &expected(&[("prompts-list", "out of scope")]));
        assert_eq!(report.verdict(Path::new("list.txt")), Ok(()));
    }

    #[test]
    fn the_client_scenarios_are_read_from_the_suites_list() {
        let listing = "\
Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - tools_call [2025-06-18,2025-11-25]
  - auth/metadata-default [2025-11-25]
  - auth/client-credentials-jwt [extension]
";
        assert_eq!(
            parse_client_scenarios(listing),
            [
                "initialize",
                "tools_call",
                "auth/metadata-default",
                "auth/client-credentials-jwt"
            ]
        );
        let both = "Server scenarios (test against a server):\n  - ping [2025-06-18]\n\n";
        assert_eq!(parse_client_scenarios(both), Vec::<String>::new());
        assert_eq!(
            parse_client_scenarios(&format!("{both}{listing}")),
            parse_client_scenarios(listing)
        );
    }

    #[test]
    fn a_client_scenarios_results_are_found_below_its_name() {
        let dir = std::env::temp_dir().join(format!("xtask-client-{}", std::process::id()));
        let nested = dir.join("auth/metadata-default-2026-01-02T03-04-05-678Z");
        let plain = dir.join("tools_call-2026-01-02T03-04-05-678Z");
        let _ = std::fs::create_dir_all(&nested);
        let _ = std::fs::create_dir_all(&plain);
        let found = (
            result_dir(&dir, "auth/metadata-default"),
            result_dir(&dir, "tools_call"),
            result_dir(&dir, "initialize"),
        );
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(found, (Some(nested), Some(plain), None));
    }

    #[test]
    fn a_client_scenario_the_suite_failed_without_a_failed_check_still_fails() {
        let end = SuiteEnd::Failed("exit status: 1".to_owned());
        let said = "⚠️  CLIENT EXITED WITH ERROR (code 1) - Test may be incomplete";
        let outcome = Outcome::of_client("s".to_owned(), &end, Some(&Vec::new()), said, "boom\n");
        assert_eq!(
            outcome.problems,
            [
                "the suite failed the scenario (exit status: 1) with no failed check: the client \
                 exited with an error",
                "the client said: boom"
            ]
        );
        let killed = Outcome::of_client(
            "s".to_owned(),
            &SuiteEnd::Killed(Duration::from_secs(60)),
            None,
            "",
            "",
        );
        assert!(!killed.passed());
    }

    #[test]
    fn a_client_scenario_passes_on_the_suites_word_and_clean_checks() {
        let checks: Vec<Value> = serde_json::from_str(
            r#"[{"id": "a", "status": "SUCCESS"}, {"id": "b", "status": "INFO"}]"#,
        )
        .unwrap_or_default();
        // A scenario that expects the client to give up passes with its error on stderr.
        let outcome = Outcome::of_client(
            "auth/resource-mismatch".to_owned(),
            &SuiteEnd::Passed,
            Some(&checks),
            "",
            "connecting failed: 401",
        );
        assert!(outcome.passed(), "{outcome:?}");
        let failed: Vec<Value> =
            serde_json::from_str(r#"[{"id": "tool-add-numbers", "status": "FAILURE", "details": {"message": "Tool was not called by client"}}]"#)
                .unwrap_or_default();
        let outcome = Outcome::of_client(
            "tools_call".to_owned(),
            &SuiteEnd::Failed("exit status: 1".to_owned()),
            Some(&failed),
            "",
            "",
        );
        assert_eq!(
            outcome.problems,
            ["[FAILURE] tool-add-numbers: Tool was not called by client"]
        );
    }

    #[test]
    fn the_client_runs_only_from_a_path_a_shell_reads_as_one_word() {
        assert_eq!(
            client_command(Path::new("/work/target/debug/examples/conformance_client")),
            Ok("/work/target/debug/examples/conformance_client".to_owned())
        );
        for wrong in ["/my work/client", "/work/$(reboot)/client", "/work/a;b", ""] {
            assert!(client_command(Path::new(wrong)).is_err(), "{wrong:?}");
        }
    }

    #[test]
    fn long_words_are_cut_at_a_character() {
        assert_eq!(abridge("short", 10), "short");
        assert_eq!(abridge("ééé", 3), "é ...");
    }

    #[test]
    fn ci_skips_the_suite_while_the_example_does_not_exist() {
        let root = std::env::temp_dir().join("xtask-conformance-no-example");
        assert_eq!(ci(&root), Ok(()));
    }

    #[test]
    fn the_committed_list_gives_a_reason_for_every_entry() {
        let root = crate::workspace_root();
        let text =
            std::fs::read_to_string(Side::Server.expected_failures_file(&root)).unwrap_or_default();
        let listed = parse_expected_failures(&text);
        assert!(
            matches!(&listed, Ok(list) if !list.is_empty()),
            "{listed:?}"
        );
    }

    #[test]
    fn the_committed_client_list_gives_a_reason_for_every_entry() {
        let root = crate::workspace_root();
        let path = Side::Client.expected_failures_file(&root);
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let listed = parse_expected_failures(&text);
        assert!(
            matches!(&listed, Ok(list) if !list.is_empty()),
            "{listed:?}"
        );
    }
}
