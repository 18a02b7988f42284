//! The soak test `cargo xtask soak` runs: the real `toolsmith mcp --http` binary under load and
//! faults for a set time, then two instances behind HAProxy with one killed and restarted
//! mid-run; it prints what it measured and ends with a verdict (exit 0 pass, 1 fail, 2 usage).
//!
//! Part one, one instance (started under `prlimit --nofile`): many clients, each on one
//! kept-alive connection calling the text tools; slow-header clients sending a byte a second;
//! at a quarter of the time a burst of idle connections past the server's connection cap and
//! its limit of open files, held, then let go; new clients during and after the burst. Part
//! two: the same clients through HAProxy to two instances, one of them killed (SIGKILL) at a
//! third of the time and restarted two seconds later; every call has an id, and a call is lost
//! when it was sent and not answered with the right result.
//!
//! It only ever talks to 127.0.0.1, every loop is bounded by the part's deadline, and every
//! process it starts is killed when its handle is dropped, also when the run fails. xtask
//! builds it and installs HAProxy; nothing toolsmith ships depends on it.

mod faults;
mod haproxy;
mod load;
mod server;

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::faults::{Burst, SlowHeaders};
use crate::load::{Calls, Target, Timeline};
use crate::server::{Guarded, HaproxyCommand, Server, ServerCommand};

/// The server's header timeout (`--header-timeout`'s default): how long it lets a client take
/// over a request's headers. Slow-header connections must be closed within it and [`SLACK`].
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The server's shutdown timeout (`--shutdown-timeout`'s default).
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
/// What a deadline of the server's may be late by, on a machine this loaded.
const SLACK: Duration = Duration::from_secs(2);
/// How long a new client may wait for its first answer once the burst has let go.
const AFTER_BURST_PATIENCE: Duration = Duration::from_secs(5);
/// Where the ids of the new clients' calls start (the clients' count from 1).
const PROBE_IDS: u64 = 1 << 40;
/// The most resident memory an instance may reach, in MiB.
const RSS_LIMIT_MIB: u64 = 256;
/// Failed calls allowed on one instance, as a fraction of the calls sent.
const FAILED_FRACTION: f64 = 0.001;

const USAGE: &str = "\
usage: soak --toolsmith PATH --workdir DIR [--haproxy PATH [--haproxy-libs PATH]] [options]

  --seconds N       how long each part runs (default 60)
  --clients N       concurrent clients calling tools (default 200)
  --slow-clients N  clients sending their headers one byte a second (default 10)
  --burst N         idle connections opened at once mid-run (default 1100)
  --nofile N        the server's limit of open files (default 1024)
  --part P          single, balanced or both (default both; balanced needs --haproxy)";

/// What to run, as read from the command line.
#[derive(Debug, Clone)]
struct Options {
    server: ServerCommand,
    haproxy: Option<HaproxyCommand>,
    workdir: PathBuf,
    seconds: u64,
    clients: usize,
    slow_clients: usize,
    burst: usize,
    single: bool,
    balanced: bool,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        let mut toolsmith = None;
        let mut haproxy = None;
        let mut haproxy_libs = None;
        let mut workdir = None;
        let mut seconds = 60;
        let mut clients = 200;
        let mut slow_clients = 10;
        let mut burst = 1100;
        let mut nofile = 1024;
        let mut part = "both".to_owned();
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            let mut value = || {
                rest.next()
                    .cloned()
                    .ok_or_else(|| format!("`{flag}` needs a value"))
            };
            let count = |text: String| {
                text.parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("`{flag}` takes a count above zero, not `{text}`"))
            };
            match flag.as_str() {
                "--toolsmith" => toolsmith = Some(PathBuf::from(value()?)),
                "--haproxy" => haproxy = Some(PathBuf::from(value()?)),
                "--haproxy-libs" => haproxy_libs = Some(value()?.into()),
                "--workdir" => workdir = Some(PathBuf::from(value()?)),
                "--seconds" => seconds = count(value()?)?,
                "--clients" => clients = count(value()?)? as usize,
                "--slow-clients" => slow_clients = count(value()?)? as usize,
                "--burst" => burst = count(value()?)? as usize,
                "--nofile" => nofile = count(value()?)?,
                "--part" => part = value()?,
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        let (single, balanced) = match part.as_str() {
            "single" => (true, false),
            "balanced" => (false, true),
            "both" => (true, true),
            other => {
                return Err(format!(
                    "`--part` is single, balanced or both, not `{other}`"
                ));
            }
        };
        if balanced && haproxy.is_none() {
            return Err("the balanced part needs `--haproxy`".to_owned());
        }
        let prlimit = server::find_on_path("prlimit")
            .ok_or("util-linux's `prlimit` is not on PATH (it starts the server with few files)")?;
        Ok(Options {
            server: ServerCommand {
                toolsmith: toolsmith.ok_or("`--toolsmith` is required")?,
                prlimit,
                nofile,
            },
            haproxy: haproxy.map(|program| HaproxyCommand {
                program,
                library_path: haproxy_libs,
            }),
            // Absolute: HAProxy reads a relative socket path as a host name.
            workdir: std::path::absolute(workdir.ok_or("`--workdir` is required")?)
                .map_err(|e| format!("`--workdir`: {e}"))?,
            seconds,
            clients,
            slow_clients,
            burst,
            single,
            balanced,
        })
    }

    fn duration(&self) -> Duration {
        Duration::from_secs(self.seconds)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match Options::parse(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("soak: error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(message) = check_own_file_limit(&options) {
        eprintln!("soak: error: {message}");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("soak: error: no runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut verdicts = Vec::new();
    if options.single {
        verdicts.push(("one instance", runtime.block_on(one_instance(&options))));
    }
    if options.balanced {
        verdicts.push(("behind HAProxy", runtime.block_on(balanced(&options))));
    }
    let mut passed = true;
    println!("\nsoak verdict:");
    for (part, verdict) in verdicts {
        match verdict {
            Ok(problems) if problems.is_empty() => println!("  {part}: PASS"),
            Ok(problems) => {
                passed = false;
                println!("  {part}: FAIL");
                for problem in problems {
                    println!("    - {problem}");
                }
            }
            Err(error) => {
                passed = false;
                println!("  {part}: FAIL ({error})");
            }
        }
    }
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Whether this process may open the connections it is asked to.
fn check_own_file_limit(options: &Options) -> Result<(), String> {
    let needed = (options.clients + options.slow_clients + options.burst + 256) as u64;
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|soft| soft.parse::<u64>().ok());
    match soft {
        Some(soft) if soft < needed => Err(format!(
            "this process may open {soft} files and needs {needed} (raise it with `ulimit -n`)"
        )),
        _ => Ok(()),
    }
}

/// What went wrong in a part, one line each (none: it passed).
type Problems = Vec<String>;

/// Part one: one instance, under load, slow headers and an idle burst.
async fn one_instance(options: &Options) -> Result<Problems, String> {
    let mut server = Server::start("toolsmith", &options.server, "127.0.0.1:0")?;
    let target = Target { addr: server.addr };
    println!(
        "\n== one instance: toolsmith mcp --http {} (open files at most {}), {} clients, {} \
         slow-header clients, a burst of {} idle connections, {} s",
        server.addr,
        options.server.nofile,
        options.clients,
        options.slow_clients,
        options.burst,
        options.seconds
    );
    load::fresh_call(&target, 0, Duration::from_secs(10))
        .await
        .map_err(|kind| format!("the server does not answer a first call: {kind}"))?;

    let timeline = Arc::new(Timeline::new(options.seconds as usize));
    let deadline = timeline.start() + options.duration();
    let watched = Arc::new(Mutex::new(vec![("RSS".to_owned(), server.process.pid())]));
    let sampler = tokio::spawn(sample_rss(Arc::clone(&watched), deadline));
    let clients = spawn_clients(options, &target, &timeline, deadline);

    let mut slow = JoinSet::new();
    for _ in 0..options.slow_clients {
        slow.spawn(faults::slow_header_client(
            server.addr,
            timeline.start(),
            deadline,
        ));
    }

    // The burst: a quarter in, held for up to 12 s (past the header timeout, so that the server
    // closes those it accepted), but never past three quarters of the part.
    let burst_at = options.duration() / 4;
    let hold = Duration::from_secs(12).min(options.duration() / 2);
    tokio::time::sleep_until((timeline.start() + burst_at).into()).await;
    let during = tokio::spawn({
        let target = target.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let started = Instant::now();
            let answer =
                load::fresh_call(&target, PROBE_IDS + 1, hold + Duration::from_secs(20)).await;
            (started, answer)
        }
    });
    let burst = faults::idle_burst(server.addr, options.burst, hold).await;
    let released = timeline.start().elapsed();
    let after = load::fresh_call(&target, PROBE_IDS + 2, AFTER_BURST_PATIENCE).await;
    let (during_started, during) = during
        .await
        .map_err(|_| "the new client during the burst did not finish".to_owned())?;

    let (mut calls, elapsed) = join_clients(clients, &timeline).await;
    let mut slow_headers = SlowHeaders::default();
    while let Some(joined) = slow.join_next().await {
        if let Ok(seen) = joined {
            slow_headers.merge(seen);
        }
    }
    let samples = sampler.await.unwrap_or_default();

    let mut events = vec![
        (
            burst_at,
            format!("{} idle connections opened", options.burst),
        ),
        (released, "idle connections let go".to_owned()),
    ];
    events.sort_by_key(|(at, _)| *at);
    print_timeline(&timeline, &samples, &events, options.seconds as usize);
    print_calls(&mut calls, elapsed);

    let mut problems = Problems::new();
    let allowed = (calls.sent as f64 * FAILED_FRACTION).floor() as u64;
    if calls.failed() > allowed {
        problems.push(format!(
            "{} calls failed, more than {allowed} (0.1% of those sent)",
            calls.failed()
        ));
    }
    if calls.ok == 0 {
        problems.push("no call was answered".to_owned());
    }
    report_slow_headers(&slow_headers, (burst_at, released), &mut problems);
    report_burst(
        &burst,
        burst_at,
        released,
        (during_started - timeline.start(), &during),
        &after,
        &mut problems,
    );
    let log = server.process.log();
    report_rss("the server", &samples, 0, &mut problems);
    let alive = server.process.is_running();
    println!(
        "server: {} at the end; lines on stderr after its address: {}{}",
        if alive { "running" } else { "exited" },
        log.lines,
        last_lines(&log)
    );
    if !alive {
        problems.push(format!(
            "the server exited during the run ({:?})",
            server.process.exit_status()
        ));
        return Ok(problems);
    }
    match load::fresh_call(&target, PROBE_IDS + 3, AFTER_BURST_PATIENCE).await {
        Ok(took) => println!(
            "server: a new client at the end answered in {}",
            millis(took)
        ),
        Err(kind) => problems.push(format!("a new client at the end was not answered: {kind}")),
    }
    let stopping = Instant::now();
    match tokio::task::block_in_place(|| server.process.terminate(SHUTDOWN_TIMEOUT + SLACK * 2)) {
        Ok(status) if status.success() => println!(
            "server: stopped by SIGTERM in {}, exit status 0",
            millis(stopping.elapsed())
        ),
        Ok(status) => problems.push(format!("the server stopped by SIGTERM with {status}")),
        Err(error) => problems.push(error),
    }
    Ok(problems)
}

/// Part two: two instances behind HAProxy, one killed and restarted mid-run.
async fn balanced(options: &Options) -> Result<Problems, String> {
    let haproxy = options
        .haproxy
        .as_ref()
        .ok_or("the balanced part needs HAProxy")?;
    let a = Server::start("instance a", &options.server, "127.0.0.1:0")?;
    let b = Server::start("instance b", &options.server, "127.0.0.1:0")?;
    let front = free_port()?;
    std::fs::create_dir_all(&options.workdir)
        .map_err(|e| format!("cannot create {}: {e}", options.workdir.display()))?;
    let socket = options.workdir.join("haproxy.sock");
    let config_path = options.workdir.join("haproxy.cfg");
    let config = haproxy::config(front, &[("a", a.addr), ("b", b.addr)], &socket);
    std::fs::write(&config_path, config)
        .map_err(|e| format!("cannot write {}: {e}", config_path.display()))?;
    haproxy.check(&config_path)?;
    let mut proxy = haproxy.start(&config_path)?;
    println!(
        "\n== behind HAProxy: {front} round robin over instance a ({}) and b ({}), {} clients, \
         {} s; a is killed (SIGKILL) at a third of the time and restarted 2 s later \
         (configuration: {})",
        a.addr,
        b.addr,
        options.clients,
        options.seconds,
        config_path.display()
    );
    let target = Target { addr: front };
    wait_for_first_answer(&target, &mut proxy).await?;

    let timeline = Arc::new(Timeline::new(options.seconds as usize));
    let deadline = timeline.start() + options.duration();
    let watched = Arc::new(Mutex::new(vec![
        ("a MiB".to_owned(), a.process.pid()),
        ("b MiB".to_owned(), b.process.pid()),
    ]));
    let sampler = tokio::spawn(sample_rss(Arc::clone(&watched), deadline));
    let clients = spawn_clients(options, &target, &timeline, deadline);

    let kill_at = options.duration() / 3;
    tokio::time::sleep_until((timeline.start() + kill_at).into()).await;
    let a_addr = a.addr;
    let mut a = a;
    a.process.kill();
    let killed = timeline.start().elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let how = options.server.clone();
    let listen = a_addr.to_string();
    let a = tokio::task::spawn_blocking(move || Server::start("instance a", &how, &listen))
        .await
        .map_err(|_| "restarting instance a failed".to_owned())??;
    let restarted = timeline.start().elapsed();
    if let Ok(mut watched) = watched.lock() {
        watched[0].1 = a.process.pid();
    }

    let (mut calls, elapsed) = join_clients(clients, &timeline).await;
    let samples = sampler.await.unwrap_or_default();
    let events = vec![
        (killed, "instance a killed".to_owned()),
        (restarted, "instance a restarted".to_owned()),
    ];
    print_timeline(&timeline, &samples, &events, options.seconds as usize);
    print_calls(&mut calls, elapsed);

    let mut problems = Problems::new();
    println!(
        "lost calls (sent, not answered with the right result): {}{}",
        calls.lost.len(),
        lost_ids(&calls.lost)
    );
    if !calls.lost.is_empty() {
        problems.push(format!(
            "{} calls lost; every call in flight on the killed instance is retried, so none may be",
            calls.lost.len()
        ));
    }
    if calls.ok == 0 {
        problems.push("no call was answered".to_owned());
    }
    match haproxy::stats(&socket).await {
        Ok(stats) => {
            for line in stats {
                println!(
                    "haproxy {:<8} {:>9} requests, {} retried, {} redispatched, {} errors, {}",
                    line.name,
                    thousands(line.requests),
                    line.retries,
                    line.redispatches,
                    line.errors,
                    line.status
                );
            }
        }
        Err(error) => println!("haproxy: {error}"),
    }
    report_rss("instance a", &samples, 0, &mut problems);
    report_rss("instance b", &samples, 1, &mut problems);
    for (name, mut process) in [("instance a", a.process), ("instance b", b.process)] {
        if !process.is_running() {
            problems.push(format!("{name} exited during the run"));
        }
        process.kill();
    }
    if !proxy.is_running() {
        problems.push("HAProxy exited during the run".to_owned());
    }
    Ok(problems)
}

/// Waits (up to 10 s) until a call through HAProxy is answered: its health checks must find
/// the instances up first.
async fn wait_for_first_answer(target: &Target, proxy: &mut Guarded) -> Result<(), String> {
    let started = Instant::now();
    loop {
        match load::fresh_call(target, 0, Duration::from_secs(2)).await {
            Ok(_) => return Ok(()),
            Err(kind) if started.elapsed() > Duration::from_secs(10) => {
                return Err(format!(
                    "no call through HAProxy was answered within 10 s ({kind}){}",
                    last_lines(&proxy.log())
                ));
            }
            Err(_) if !proxy.is_running() => {
                return Err(format!("HAProxy exited{}", last_lines(&proxy.log())));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// The clients, each a task of its own.
fn spawn_clients(
    options: &Options,
    target: &Target,
    timeline: &Arc<Timeline>,
    deadline: Instant,
) -> JoinSet<Calls> {
    let ids = Arc::new(AtomicU64::new(1));
    let mut clients = JoinSet::new();
    for _ in 0..options.clients {
        clients.spawn(load::client(
            target.clone(),
            Arc::clone(&ids),
            deadline,
            Arc::clone(timeline),
        ));
    }
    clients
}

/// Every client's calls added up, and how long they ran.
async fn join_clients(mut clients: JoinSet<Calls>, timeline: &Timeline) -> (Calls, Duration) {
    let mut calls = Calls::default();
    while let Some(joined) = clients.join_next().await {
        if let Ok(client) = joined {
            calls.merge(client);
        }
    }
    (calls, timeline.start().elapsed())
}

/// Resident memory of the watched processes, once a second until `deadline`: one sample per
/// second, each process's in KiB (`None` when it was not running).
async fn sample_rss(
    watched: Arc<Mutex<Vec<(String, u32)>>>,
    deadline: Instant,
) -> Vec<Vec<(String, Option<u64>)>> {
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let now: Vec<(String, Option<u64>)> = watched
            .lock()
            .map(|watched| {
                watched
                    .iter()
                    .map(|(name, pid)| (name.clone(), server::rss_kib(*pid)))
                    .collect()
            })
            .unwrap_or_default();
        samples.push(now);
        if Instant::now() >= deadline {
            return samples;
        }
    }
}

/// One line a second: calls answered and failed, each watched process's RSS, what happened.
fn print_timeline(
    timeline: &Timeline,
    samples: &[Vec<(String, Option<u64>)>],
    events: &[(Duration, String)],
    seconds: usize,
) {
    let names: Vec<&str> = samples
        .first()
        .map(|first| first.iter().map(|(name, _)| name.as_str()).collect())
        .unwrap_or_default();
    let mut header = format!("{:>4} {:>9} {:>7}", "s", "answered", "failed");
    for name in &names {
        let _ = write!(header, " {name:>8}");
    }
    println!("{header}  event");
    for second in 0..seconds {
        let mut line = format!(
            "{second:>4} {:>9} {:>7}",
            thousands(timeline.ok_in(second)),
            timeline.failed_in(second)
        );
        // The sample taken at the end of this second.
        let sample = samples.get(second + 1).or_else(|| samples.last());
        for index in 0..names.len() {
            let rss = sample.and_then(|s| s.get(index)).and_then(|(_, kib)| *kib);
            match rss {
                Some(kib) => {
                    let _ = write!(line, " {:>8.1}", kib as f64 / 1024.0);
                }
                None => {
                    let _ = write!(line, " {:>8}", "-");
                }
            }
        }
        let happened: Vec<&str> = events
            .iter()
            .filter(|(at, _)| at.as_secs() as usize == second)
            .map(|(_, what)| what.as_str())
            .collect();
        println!("{line}  {}", happened.join("; "));
    }
}

/// Calls, throughput, latency and failures.
fn print_calls(calls: &mut Calls, elapsed: Duration) {
    println!(
        "calls: {} sent, {} answered right, {} failed",
        thousands(calls.sent),
        thousands(calls.ok),
        thousands(calls.failed())
    );
    let p50 = calls.latency_quantile(0.50);
    let p99 = calls.latency_quantile(0.99);
    let max = calls.latency_quantile(1.0);
    println!(
        "throughput: {} calls/s; latency p50 {}, p99 {}, max {}",
        thousands((calls.ok as f64 / elapsed.as_secs_f64()).round() as u64),
        micros(p50),
        micros(p99),
        micros(max)
    );
    if calls.failures.is_empty() {
        println!("failures: none");
    } else {
        println!("failures by kind:");
        for (kind, n) in &calls.failures {
            println!("  {kind}: {n}");
        }
    }
    if calls.initialize_failures > 0 {
        println!(
            "initialize requests that failed (tried again): {}",
            calls.initialize_failures
        );
    }
}

/// Slow-header connections: each must be closed within the header timeout, but one made during
/// the burst may first wait in the listen queue (the server is at its connection cap), where
/// the server's clock has not started.
fn report_slow_headers(seen: &SlowHeaders, burst: (Duration, Duration), problems: &mut Problems) {
    let closed = seen.closed.len();
    let outside = seen.longest_outside(burst);
    println!(
        "slow-header clients: {} connections, {closed} closed by the server, {} still open at \
         the end, {} could not connect; the longest held {:.1} s (header timeout {} s), {:.1} s \
         for one made during the burst (waiting to be accepted first)",
        closed + seen.open_at_end.len(),
        seen.open_at_end.len(),
        seen.connect_failures,
        outside.as_secs_f64(),
        HEADER_TIMEOUT.as_secs(),
        seen.longest_inside(burst).as_secs_f64(),
    );
    if outside > HEADER_TIMEOUT + SLACK {
        problems.push(format!(
            "a slow-header connection stayed open {:.1} s, past the header timeout ({} s)",
            outside.as_secs_f64(),
            HEADER_TIMEOUT.as_secs()
        ));
    }
    if closed == 0 && seen.open_at_end.iter().all(|c| c.held <= HEADER_TIMEOUT) {
        println!("  (the part is too short for the header timeout to close any)");
    }
}

fn report_burst(
    burst: &Burst,
    at: Duration,
    released: Duration,
    (during_at, during): (Duration, &Result<Duration, String>),
    after: &Result<Duration, String>,
    problems: &mut Problems,
) {
    let failed: u64 = burst.failed.values().sum();
    println!(
        "idle burst at {:.1} s: {} asked, {} connected in {:.1} s, {failed} not connected{}; \
         the server closed {} of them (header timeout) before they were let go at {:.1} s",
        at.as_secs_f64(),
        burst.wanted,
        burst.connected,
        burst.opened_in.as_secs_f64(),
        if burst.failed.is_empty() {
            String::new()
        } else {
            format!(" ({:?})", burst.failed)
        },
        burst.closed_by_server,
        released.as_secs_f64()
    );
    match during {
        Ok(took) => println!(
            "  a new client at {:.1} s (during the burst) was answered in {}",
            during_at.as_secs_f64(),
            millis(*took)
        ),
        Err(kind) => println!(
            "  a new client at {:.1} s (during the burst) was not answered: {kind}",
            during_at.as_secs_f64()
        ),
    }
    match after {
        Ok(took) => println!(
            "  a new client after the burst was answered in {}",
            millis(*took)
        ),
        Err(kind) => {
            println!("  a new client after the burst was not answered: {kind}");
            problems.push(format!(
                "a new client was not answered within {} s of the burst's end: {kind}",
                AFTER_BURST_PATIENCE.as_secs()
            ));
        }
    }
}

/// RSS at the start, peak and end of process `index` of the samples; a problem past the limit.
fn report_rss(
    name: &str,
    samples: &[Vec<(String, Option<u64>)>],
    index: usize,
    problems: &mut Problems,
) {
    let series: Vec<u64> = samples
        .iter()
        .filter_map(|sample| sample.get(index).and_then(|(_, kib)| *kib))
        .collect();
    let (Some(first), Some(last)) = (series.first(), series.last()) else {
        println!("{name}: no RSS sample");
        return;
    };
    let peak = series.iter().copied().max().unwrap_or(0);
    println!(
        "{name}: RSS at the start {}, peak {}, at the end {} (limit {RSS_LIMIT_MIB} MiB)",
        mib(*first),
        mib(peak),
        mib(*last)
    );
    if peak > RSS_LIMIT_MIB * 1024 {
        problems.push(format!(
            "{name} reached {} of resident memory, past {RSS_LIMIT_MIB} MiB",
            mib(peak)
        ));
    }
}

/// A free port on 127.0.0.1 (free when asked: nothing else here takes ports meanwhile).
fn free_port() -> Result<SocketAddr, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| format!("no free port on 127.0.0.1: {e}"))
}

fn lost_ids(lost: &[(u64, String)]) -> String {
    const SHOWN: usize = 20;
    if lost.is_empty() {
        return String::new();
    }
    let mut sorted: Vec<&(u64, String)> = lost.iter().collect();
    sorted.sort();
    let shown: Vec<String> = sorted
        .iter()
        .take(SHOWN)
        .map(|(id, kind)| format!("#{id} ({kind})"))
        .collect();
    let more = lost.len().saturating_sub(SHOWN);
    if more > 0 {
        format!(": {} and {more} more", shown.join(", "))
    } else {
        format!(": {}", shown.join(", "))
    }
}

fn last_lines(log: &server::Log) -> String {
    if log.last.is_empty() {
        String::new()
    } else {
        format!("; its last lines:\n    {}", log.last.join("\n    "))
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn micros(us: Option<u32>) -> String {
    us.map_or_else(
        || "-".to_owned(),
        |us| format!("{:.2} ms", f64::from(us) / 1000.0),
    )
}

fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn a_zero_count_is_a_usage_error() {
        let parsed = Options::parse(&args(&[
            "--toolsmith",
            "t",
            "--workdir",
            "w",
            "--part",
            "single",
            "--clients",
            "0",
        ]));
        assert!(matches!(parsed, Err(m) if m.contains("--clients")));
    }

    #[test]
    fn the_balanced_part_needs_haproxy() {
        let parsed = Options::parse(&args(&["--toolsmith", "t", "--workdir", "w"]));
        assert!(matches!(parsed, Err(m) if m.contains("--haproxy")));
    }

    #[test]
    fn lost_calls_are_listed_by_id() {
        let lost = vec![(7, "timeout".to_owned()), (3, "HTTP 503".to_owned())];
        assert_eq!(lost_ids(&lost), ": #3 (HTTP 503), #7 (timeout)");
    }
}
