//! The text tools against the programs they stand in for, on one generated ~100 MB text:
//! `text_grep` (counting) against `rg -c` and `grep -c`, case-sensitive and not; `text_wc`
//! against `wc`; `text_sort_lines` against `LC_ALL=C sort`; `text_unique_lines` against
//! `awk '!seen[$0]++'` (order kept) and `LC_ALL=C sort -u` (sorted).
//!
//! The corpus is generated here, deterministically (no download), and written to
//! `target/bench-data/` for the peers. The tools run in this process on the text already in
//! memory; the peers run on that file, which is in the page cache after the first round. Before
//! anything is timed, every tool's answer is checked against its peer's. The text is larger than
//! the toolset's default 64 MiB limit, so the bench builds the toolset with a larger one.
//!
//! Run with `cargo xtask bench text` (which installs ripgrep first when it is missing).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

#[path = "../../../benches/harness.rs"]
mod harness;

use harness::{Case, report_rounds};
use serde_json::json;
use toolsmith::{Arguments, Context, Policy, ToolExt, ToolOutput, Toolset};
use toolsmith_text::TextProcessingToolset;

/// The corpus's size, in bytes (it ends at the first line end after this).
const CORPUS_BYTES: usize = 100_000_000;

/// Rounds for the searches (tens of milliseconds a call), for wc (wc takes about a second), and
/// for sorting and de-duplicating (seconds a call for the peers): the whole run stays in minutes.
const FAST_ROUNDS: usize = 15;
const WC_ROUNDS: usize = 7;
const SLOW_ROUNDS: usize = 3;

/// The pattern counted, with the case of its letters as given and ignoring it.
const PATTERN: &str = "error";

// ---- The corpus ----

/// SplitMix64: a small, fast, deterministic generator (the corpus must be the same every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in `0..n`, small ones far more often (roughly Zipf-like, as words are).
    fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((u * u * u) * n as f64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const COMMON: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "request",
    "server",
    "user",
    "value",
    "time",
    "data",
    "file",
    "system",
    "error",
    "line",
    "from",
    "by",
    "at",
    "was",
    "not",
    "connection",
    "retry",
    "cache",
    "open",
    "closed",
    "timeout",
    "status",
    "warning",
    "info",
];

/// Words outside ASCII, so that the tools meet multi-byte text (none folds case to ASCII letters).
const UNICODE: &[&str] = &[
    "café",
    "naïve",
    "Straße",
    "über",
    "日本語",
    "données",
    "smörgåsbord",
    "Ωμέγα",
    "façade",
    "Dvořák",
    "ñandú",
    "crème",
];

fn vocabulary(rng: &mut Rng) -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ne", "ra", "to", "shi", "ven", "dor", "al", "ex", "pra", "qu", "zu",
        "bel", "tin", "or", "an", "ig", "um", "sta", "fle", "gro", "wy",
    ];
    let mut words: Vec<String> = COMMON.iter().map(|w| (*w).to_owned()).collect();
    while words.len() < 8000 {
        let syllables = 1 + rng.below(4);
        let word: String = (0..syllables)
            .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
            .collect();
        // Made-up words must not contain the pattern, or the counts would be about them.
        if !word.contains(PATTERN) {
            words.push(word);
        }
    }
    words
}

/// The corpus: lines of 3 to 16 words, some starting with a number, some capitalized, a few
/// with non-ASCII words, and about a third repeating an earlier line.
fn corpus() -> String {
    let mut rng = Rng(0x746f_6f6c_736d_6974);
    let words = vocabulary(&mut rng);
    let mut text = String::with_capacity(CORPUS_BYTES + 256);
    let mut pool: Vec<(usize, usize)> = Vec::new();
    let mut line = String::new();
    while text.len() < CORPUS_BYTES {
        if pool.len() > 1000 && rng.chance(35) {
            let (from, to) = pool[rng.below(pool.len())];
            line.clear();
            line.push_str(&text[from..to]);
            text.push_str(&line);
            text.push('\n');
            continue;
        }
        let start = text.len();
        if rng.chance(20) {
            text.push_str(&rng.below(100_000).to_string());
            text.push(' ');
        }
        let count = 3 + rng.below(14);
        for i in 0..count {
            if i > 0 {
                text.push_str(if rng.chance(6) { ", " } else { " " });
            }
            if rng.chance(3) {
                text.push_str(UNICODE[rng.below(UNICODE.len())]);
                continue;
            }
            let word = &words[rng.skewed(words.len())];
            if rng.chance(4) {
                text.push_str(&word.to_uppercase());
            } else if i == 0 || rng.chance(5) {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    text.extend(first.to_uppercase());
                    text.push_str(chars.as_str());
                }
            } else {
                text.push_str(word);
            }
        }
        if rng.chance(40) {
            text.push('.');
        }
        if pool.len() < 200_000 {
            pool.push((start, text.len()));
        }
        text.push('\n');
    }
    text
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            manifest
                .ancestors()
                .nth(2)
                .unwrap_or(manifest)
                .join("target")
        })
}

// ---- The peers ----

/// A peer program's command line: an argument vector, with environment settings.
struct Peer {
    program: &'static str,
    /// Where `program` is: found once, in an absolute directory of `PATH` (never the current
    /// directory), and started by this path.
    path: PathBuf,
    args: Vec<String>,
    env: &'static [(&'static str, &'static str)],
}

impl Peer {
    fn new(program: &'static str, args: &[&str], file: &Path) -> Result<Self, String> {
        let path = toolsmith_testkit::system_program(program).ok_or_else(|| {
            format!("`{program}` is not in an absolute directory of PATH (`cargo xtask bench text` installs rg)")
        })?;
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        args.push(file.display().to_string());
        Ok(Peer {
            program,
            path,
            args,
            env: &[("LC_ALL", "C")],
        })
    }

    fn env(mut self, env: &'static [(&'static str, &'static str)]) -> Self {
        self.env = env;
        self
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.path);
        command.args(&self.args).envs(self.env.iter().copied());
        command
    }

    fn label(&self) -> String {
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let args: Vec<&str> = self.args[..self.args.len() - 1]
            .iter()
            .map(String::as_str)
            .collect();
        format!("{} {} {}", env.join(" "), self.program, args.join(" "))
    }

    /// Its standard output, for checking answers.
    fn output(&self) -> Result<Vec<u8>, String> {
        let out = self
            .command()
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("could not start {}: {e}", self.program))?;
        if !out.status.success() {
            return Err(format!("{} failed: {}", self.label(), out.status));
        }
        Ok(out.stdout)
    }

    /// One timed run. Small outputs (counts) are read through a pipe: GNU grep stops at the
    /// first match when its output is /dev/null, even with `-c`. Large ones go to /dev/null.
    fn run(&self, small_output: bool) {
        let result = if small_output {
            self.command().output().map(|out| out.status)
        } else {
            self.command().stdout(Stdio::null()).status()
        };
        match result {
            Ok(status) if status.success() => {}
            other => panic!("{} failed: {other:?}", self.label()),
        }
    }

    /// The case that times it.
    fn case<'a>(&'a self, small_output: bool) -> Named<'a> {
        named(self.label(), move || self.run(small_output))
    }
}

fn count_of(output: &[u8]) -> Result<usize, String> {
    let text = String::from_utf8_lossy(output);
    text.trim()
        .parse()
        .map_err(|e| format!("not a count: {text:?} ({e})"))
}

fn numbers(output: &[u8]) -> Vec<usize> {
    String::from_utf8_lossy(output)
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

fn check(
    what: &str,
    ours: impl std::fmt::Debug,
    theirs: impl std::fmt::Debug,
) -> Result<(), String> {
    let ours_text = format!("{ours:?}");
    let theirs_text = format!("{theirs:?}");
    if ours_text == theirs_text {
        println!("check {what}: same answer ({})", abbreviate(&ours_text));
        Ok(())
    } else {
        Err(format!(
            "{what}: the tool says {}, the peer {}",
            abbreviate(&ours_text),
            abbreviate(&theirs_text)
        ))
    }
}

fn abbreviate(text: &str) -> String {
    if text.len() <= 60 {
        text.to_owned()
    } else {
        format!("{} bytes of output", text.len())
    }
}

/// A tool's output, which must not be an error.
fn output(result: Result<ToolOutput, toolsmith_text::TextError>) -> ToolOutput {
    result.unwrap_or_else(|error| panic!("the tool failed: {error}"))
}

fn matching_lines(output: &ToolOutput) -> usize {
    output
        .structured
        .as_ref()
        .and_then(|s| s["matching_lines"].as_u64())
        .unwrap_or(u64::MAX) as usize
}

/// A case and its name, kept for the throughput table.
type Named<'a> = (String, Case<'a>);

fn named<'a, R>(name: impl Into<String>, f: impl FnMut() -> R + 'a) -> Named<'a> {
    let name = name.into();
    (name.clone(), Case::new(name, f))
}

/// Times `cases` in `rounds` interleaved rounds (ratios to the first), then prints each case's
/// median time and throughput over the corpus.
fn timed(title: &str, rounds: usize, bytes: usize, cases: Vec<Named<'_>>) {
    let (names, cases): (Vec<String>, Vec<Case<'_>>) = cases.into_iter().unzip();
    let medians = report_rounds(title, rounds, cases);
    for (name, ns) in names.iter().zip(&medians) {
        let mb_per_s = bytes as f64 / 1e6 / (ns / 1e9);
        println!("  {name:<48} {:>8.1} ms {mb_per_s:>9.1} MB/s", ns / 1e6);
    }
    println!();
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("bench text: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let text = corpus();
    let dir = target_dir().join("bench-data");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let file = dir.join("text-corpus.txt");
    std::fs::write(&file, &text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let bytes = text.len();
    println!(
        "corpus: {} ({bytes} bytes, {} lines)\n",
        file.display(),
        text.lines().count()
    );

    // The default limit is 64 MiB; the corpus is larger.
    let toolset = TextProcessingToolset::default().with_max_input_bytes(256 << 20);

    let rg = |args: &[&str]| Peer::new("rg", args, &file);
    let grep = |args: &[&str]| Peer::new("grep", args, &file);
    let rg_case = rg(&["-c", PATTERN])?;
    let grep_case = grep(&["-c", PATTERN])?;
    let rg_nocase = rg(&["-c", "-i", PATTERN])?;
    let grep_nocase = grep(&["-c", "-i", PATTERN])?;
    let wc = Peer::new("wc", &[], &file)?;
    let wc_chars = Peer::new("wc", &["-lwm"], &file)?.env(&[("LC_ALL", "C.UTF-8")]);
    let sort = Peer::new("sort", &[], &file)?;
    let sort_unique = Peer::new("sort", &["-u"], &file)?;
    let awk = Peer::new("awk", &["!seen[$0]++"], &file)?;

    // Every tool must give its peer's answer before its speed means anything.
    let grep_tool = |ignore_case: bool| {
        matching_lines(&output(toolset.grep(&text, PATTERN, ignore_case, true)))
    };
    let case_count = grep_tool(false);
    let nocase_count = grep_tool(true);
    check("rg -c", case_count, count_of(&rg_case.output()?)?)?;
    check("grep -c", case_count, count_of(&grep_case.output()?)?)?;
    check("rg -c -i", nocase_count, count_of(&rg_nocase.output()?)?)?;
    check(
        "grep -c -i",
        nocase_count,
        count_of(&grep_nocase.output()?)?,
    )?;
    let counts = output(toolset.wc(&text, false, false, false)).structured;
    let counts = counts.unwrap_or_default();
    let ours = [&counts["lines"], &counts["words"], &counts["characters"]]
        .map(|n| n.as_u64().unwrap_or_default() as usize);
    // In the C locale wc counts bytes, and a byte outside ASCII is not part of a word: only
    // its lines (and the bytes) can agree; the UTF-8 locale's counts are the tool's.
    let theirs = numbers(&wc.output()?);
    check(
        "wc (lines; bytes)",
        [ours[0], bytes],
        [theirs.first().copied(), theirs.get(2).copied()].map(Option::unwrap_or_default),
    )?;
    check(
        "wc -lwm (lines, words, characters)",
        ours,
        numbers(&wc_chars.output()?),
    )?;
    let with_newline = |output: ToolOutput| output.as_text().into_owned() + "\n";
    let sorted = with_newline(output(toolset.sort_lines(&text, false, false)));
    check("sort", &sorted, String::from_utf8_lossy(&sort.output()?))?;
    let unique = with_newline(output(toolset.unique_lines(&text, true)));
    check(
        "awk '!seen[$0]++'",
        &unique,
        String::from_utf8_lossy(&awk.output()?),
    )?;
    let unique_sorted = with_newline(output(toolset.unique_lines(&text, false)));
    check(
        "sort -u",
        &unique_sorted,
        String::from_utf8_lossy(&sort_unique.output()?),
    )?;
    drop((sorted, unique, unique_sorted));
    println!();

    // Through `Tool::call` as well: the arguments are a JSON value holding the whole text, which
    // coercion copies into the tool's arguments.
    let tools = toolset.clone().into_tools();
    let grep_call = tools
        .iter()
        .find(|t| t.name() == "text_grep")
        .ok_or("no text_grep")?
        .clone();
    // The tools state their limits from the toolset's (256 MiB): the default policy is enough.
    let policy = Policy::default();
    let arguments =
        json!({"text": text, "pattern": PATTERN, "ignore_case": false, "count_only": true});

    for (title, rg_peer, grep_peer, ignore_case) in [
        (
            "text_grep count, case-sensitive (ratios to rg -c; target 1.50x)",
            &rg_case,
            &grep_case,
            false,
        ),
        (
            "text_grep count, ignoring case (ratios to rg -c -i; target 1.50x)",
            &rg_nocase,
            &grep_nocase,
            true,
        ),
    ] {
        let mut cases = vec![
            rg_peer.case(true),
            grep_peer.case(true),
            target(
                named("text_grep (count_only)", || {
                    toolset.grep(black_box(&text), PATTERN, ignore_case, true)
                }),
                1.5,
            ),
        ];
        if !ignore_case {
            cases.push(named("text_grep via Tool::call (JSON arguments)", || {
                grep_call.call_blocking(
                    Arguments::Json(black_box(&arguments)),
                    Context::new().with_policy(policy.clone()),
                )
            }));
        }
        timed(title, FAST_ROUNDS, bytes, cases);
    }
    timed(
        "text_wc (ratios to wc; target 1.00x)",
        WC_ROUNDS,
        bytes,
        vec![
            wc.case(true),
            wc_chars.case(true),
            target(
                named("text_wc", || {
                    toolset.wc(black_box(&text), false, false, false)
                }),
                1.0,
            ),
        ],
    );
    timed(
        "text_sort_lines (ratios to sort; target 1.50x)",
        SLOW_ROUNDS,
        bytes,
        vec![
            sort.case(false),
            target(
                named("text_sort_lines", || {
                    toolset.sort_lines(black_box(&text), false, false)
                }),
                1.5,
            ),
        ],
    );
    timed(
        "text_unique_lines, order kept (ratios to awk; target 1.00x)",
        SLOW_ROUNDS,
        bytes,
        vec![
            awk.case(false),
            target(
                named("text_unique_lines (order kept)", || {
                    toolset.unique_lines(black_box(&text), true)
                }),
                1.0,
            ),
        ],
    );
    timed(
        "text_unique_lines, sorted (ratios to sort -u)",
        SLOW_ROUNDS,
        bytes,
        vec![
            sort_unique.case(false),
            named("text_unique_lines (sorted)", || {
                toolset.unique_lines(black_box(&text), false)
            }),
        ],
    );
    Ok(())
}

fn target(case: Named<'_>, ratio: f64) -> Named<'_> {
    (case.0, case.1.target(ratio))
}
