//! `cargo xtask conformance`: the MCP conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance`, a Node program) against toolsmith's conformance server,
//! judged against a list of the scenarios expected to fail.
//!
//! The server is the example `conformance_server` of `toolsmith-mcp`, built here and started on
//! a free port of 127.0.0.1 (`--http 127.0.0.1:0`); it says where it listens on stderr
//! (`...listening on http://ADDR/mcp`), as `toolsmith mcp --http` does. `--server-command` runs
//! the suite against any other server instead. Every scenario of the suite runs (`--suite all`:
//! the pending ones too, `json-schema-2020-12` among them), with Node 22 from
//! `target/peers/node` (`cargo xtask setup`), within [`SUITE_TIMEOUT`]; the server is killed
//! when the suite ends, however it ends. A scenario passes when none of its checks is a failure
//! or a warning (the suite's own rule for its baseline files).
//!
//! The expected failures are `xtask/conformance/expected-failures.txt`: one scenario a line,
//! each with `# why`. A scenario that fails and is not listed fails the task, and so does one
//! listed that passes: it is to be removed from the list. The suite's log, each scenario's
//! checks and the server's log are kept under `target/conformance`.

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

use crate::{Error, peers, process};

/// The example of `toolsmith-mcp` the suite runs against, and its source.
const EXAMPLE: &str = "conformance_server";
const EXAMPLE_SOURCE: &str = "crates/toolsmith-mcp/examples/conformance_server.rs";
/// How long a server may take to listen.
const SERVER_STARTUP: Duration = Duration::from_secs(60);
/// How long the whole suite may run: it takes a few seconds, and a scenario the server leaves
/// hanging must not hold CI.
const SUITE_TIMEOUT: Duration = Duration::from_secs(120);
/// In `--server-command`'s arguments, replaced by a free port of 127.0.0.1.
const PORT_PLACEHOLDER: &str = "{port}";
/// How many lines of a log a message quotes (the last ones).
const LOG_TAIL: usize = 30;

/// What `cargo xtask conformance` runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Another server to test, as an argument vector, instead of the example; [`PORT_PLACEHOLDER`]
    /// in an argument becomes a free port of 127.0.0.1, where the server is then expected.
    pub server_command: Option<Vec<String>>,
    /// The expected failures, instead of `xtask/conformance/expected-failures.txt`.
    pub expected_failures: Option<PathBuf>,
}

impl Options {
    /// Reads `[--expected-failures FILE] [--server-command PROGRAM [ARG...]]`; the server's
    /// command takes every argument after `--server-command`.
    pub fn parse(args: &[String]) -> Result<Options, Error> {
        let mut options = Options::default();
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            match flag.as_str() {
                "--expected-failures" => {
                    let file = rest.next().ok_or_else(|| {
                        Error::Usage("`--expected-failures` takes a file".to_owned())
                    })?;
                    options.expected_failures = Some(PathBuf::from(file));
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
}

/// The expected failures file under the workspace root.
pub fn expected_failures_file(root: &Path) -> PathBuf {
    peers::node_manifest_dir(root).join("expected-failures.txt")
}

/// CI's step: the suite against the example, or a line saying why it is skipped while the
/// example does not exist yet.
pub fn ci(root: &Path) -> Result<(), Error> {
    if !root.join(EXAMPLE_SOURCE).is_file() {
        println!("conformance: skipped ({EXAMPLE_SOURCE} does not exist yet)");
        return Ok(());
    }
    run(root, &Options::default())
}

/// Installs the suite (once), starts the server, runs every scenario, compares the results with
/// the expected failures and prints them.
pub fn run(root: &Path, options: &Options) -> Result<(), Error> {
    let expected_path = options
        .expected_failures
        .clone()
        .unwrap_or_else(|| expected_failures_file(root));
    let expected_text = std::fs::read_to_string(&expected_path)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", expected_path.display())))?;
    let expected = parse_expected_failures(&expected_text)
        .map_err(|e| Error::Failed(format!("{}: {e}", expected_path.display())))?;
    let (command, port) = match &options.server_command {
        Some(argv) => server_command(argv)?,
        None if !root.join(EXAMPLE_SOURCE).is_file() => {
            return Err(Error::Failed(format!(
                "{EXAMPLE_SOURCE} does not exist yet (`--server-command` tests another server)"
            )));
        }
        None => (example_command(root)?, None),
    };
    let node = peers::ensure_node(root)?;
    let work = process::target_dir(root).join("conformance");
    let results = work.join("results");
    if results.exists() {
        std::fs::remove_dir_all(&results)
            .map_err(|e| Error::Failed(format!("cannot remove {}: {e}", results.display())))?;
    }
    std::fs::create_dir_all(&results)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", results.display())))?;
    let server_log = work.join("server.log");
    let suite_log = work.join("suite.log");

    let server = Server::start(command, port, &server_log)?;
    println!(
        "conformance: @modelcontextprotocol/conformance {} against {}",
        node.conformance_version, server.url
    );
    let started = Instant::now();
    let mut suite = Command::new(&node.node);
    suite
        .arg(&node.conformance)
        .args([
            "server",
            "--url",
            &server.url,
            "--suite",
            "all",
            "--output-dir",
        ])
        .arg(&results)
        .current_dir(&work);
    if let Some(bin) = node.node.parent() {
        suite.env("PATH", process::search_path(Some(bin))?);
    }
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
    let report = judge(&outcomes, &expected);
    print!("{}", report.table);
    println!(
        "conformance: {} passed, {} failed as expected, {} failed unexpectedly, {} listed but \
         passed ({:.1} s; logs in {})",
        report.passed,
        report.expected,
        report.unexpected.len(),
        report.stale.len(),
        elapsed.as_secs_f64(),
        work.display()
    );
    report.verdict(&expected_path)
}

/// The example, built; the command that starts it on a free port of 127.0.0.1.
fn example_command(root: &Path) -> Result<Command, Error> {
    let mut build = Command::new(process::cargo()?);
    build
        .args(["build", "-p", "toolsmith-mcp", "--example", EXAMPLE])
        .current_dir(root);
    process::run(&mut build)?;
    let binary = process::target_dir(root)
        .join("debug")
        .join("examples")
        .join(EXAMPLE);
    let mut command = Command::new(binary);
    command.args(["--http", "127.0.0.1:0"]).current_dir(root);
    Ok(command)
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
/// timestamp the suite appends (`server-NAME-2026-01-02T03-04-05-678Z`); what does not read is
/// left out (a scenario that crashed writes nothing).
fn read_checks(results: &Path) -> BTreeMap<String, Vec<Value>> {
    /// `-` and an ISO timestamp with `:` and `.` as `-`.
    const STAMP: usize = "-2026-01-02T03-04-05-678Z".len();
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(results).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(key) = name.get(..name.len().saturating_sub(STAMP)) else {
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
            Err(Error::Failed(format!("conformance: {}", wrong.join("; "))))
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
            })
        );
    }

    #[test]
    fn a_flag_without_its_value_or_an_unknown_flag_is_a_usage_error() {
        for wrong in [
            &["--server-command"][..],
            &["--expected-failures"],
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
    fn ci_skips_the_suite_while_the_example_does_not_exist() {
        let root = std::env::temp_dir().join("xtask-conformance-no-example");
        assert_eq!(ci(&root), Ok(()));
    }

    #[test]
    fn the_committed_list_gives_a_reason_for_every_entry() {
        let root = crate::workspace_root();
        let text = std::fs::read_to_string(expected_failures_file(&root)).unwrap_or_default();
        let listed = parse_expected_failures(&text);
        assert!(
            matches!(&listed, Ok(list) if !list.is_empty()),
            "{listed:?}"
        );
    }
}
