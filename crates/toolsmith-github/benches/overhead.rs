//! What the GitHub toolset costs on top of gh itself: `github_get_issue` called through
//! `Tool::call` (reading and checking the arguments, building the argv, running gh under a
//! deadline, parsing its JSON, rendering the text) against running the same gh argv directly
//! with duct, both against the same fake GitHub API on 127.0.0.1.
//!
//! Run with `cargo xtask bench github` (which installs gh into the peer environment first).

use std::process::ExitCode;
use std::time::Instant;

/// Back-to-back pairs timed for the overhead figure.
const PAIRS: usize = 41;

#[path = "../../../benches/harness.rs"]
mod harness;

#[path = "../tests/fake_github/mod.rs"]
mod fake_github;

use fake_github::{FakeGitHub, TempDir, gh_env};
use harness::{Case, report};
use toolsmith::{Arguments, Context, Policy, ToolExt, Toolset};
use toolsmith_github::{GitHubCLIToolset, argv};

fn main() -> ExitCode {
    let Some(gh) = toolsmith_testkit::peer("gh") else {
        eprintln!("gh is not installed in the peer environment; run `cargo xtask setup`");
        return ExitCode::FAILURE;
    };
    let fake = FakeGitHub::start();
    let home = TempDir::new("bench");
    let env = gh_env(&fake, home.path());

    let mut toolset = GitHubCLIToolset::new().with_program(&gh);
    for (key, value) in &env {
        toolset = toolset.with_env(key, value);
    }
    let tools = toolset.into_tools();
    let Some(get_issue) = tools.iter().find(|t| t.name() == "github_get_issue") else {
        eprintln!("no github_get_issue tool");
        return ExitCode::FAILURE;
    };
    let arguments = r#"{"issue_number": 5, "repo": "octo/hello"}"#;
    let policy = Policy::default();
    let Ok(args) = argv::get_issue(5, Some("octo/hello")) else {
        eprintln!("the argv could not be built");
        return ExitCode::FAILURE;
    };

    // The same process set-up the toolset uses: its fixed variables, then the test's.
    let mut direct = duct::cmd(&gh, &args)
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .env("GH_PROMPT_DISABLED", "1")
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .env("GH_PAGER", "")
        .env("NO_COLOR", "1");
    for (key, value) in &env {
        direct = direct.env(key, value);
    }

    // Both must work before either is timed.
    match (
        direct.run(),
        get_issue.call_blocking(
            Arguments::Text(arguments),
            Context::new().with_policy(policy.clone()),
        ),
    ) {
        (Ok(out), Ok(_)) if out.status.success() => {}
        (direct, tool) => {
            eprintln!("a case fails: gh directly {direct:?}, through the tool {tool:?}");
            return ExitCode::FAILURE;
        }
    }

    let medians = report(
        "github_get_issue: gh run directly vs through Tool::call (fake GitHub on 127.0.0.1)",
        vec![
            Case::new("gh issue view 5 --json ... (duct, directly)", || {
                direct.run().map(|out| out.stdout.len()).unwrap_or(0)
            }),
            Case::new("github_get_issue via Tool::call", || {
                get_issue
                    .call_blocking(
                        Arguments::Text(arguments),
                        Context::new().with_policy(policy.clone()),
                    )
                    .map(|out| out.as_text().len())
                    .unwrap_or(0)
            }),
        ],
    );
    // At about 80 ms a call, a machine's noise is larger than the overhead; the median of
    // back-to-back pairs (alternating which goes first) says more than the difference of medians.
    let mut differences: Vec<f64> = (0..PAIRS)
        .map(|i| {
            let time = |f: &mut dyn FnMut()| {
                let started = Instant::now();
                f();
                started.elapsed().as_secs_f64() * 1e3
            };
            let mut run_gh = || {
                let _ = direct.run();
            };
            let mut run_tool = || {
                let _ = get_issue.call_blocking(
                    Arguments::Text(arguments),
                    Context::new().with_policy(policy.clone()),
                );
            };
            let (gh_ms, tool_ms) = if i % 2 == 0 {
                let gh_ms = time(&mut run_gh);
                (gh_ms, time(&mut run_tool))
            } else {
                let tool_ms = time(&mut run_tool);
                (time(&mut run_gh), tool_ms)
            };
            tool_ms - gh_ms
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    let paired = differences[differences.len() / 2];
    if let [gh_ns, tool_ns] = medians[..] {
        println!(
            "gh directly: {:.2} ms per call; through the tool: {:.2} ms (ratio {:.3}); \
             overhead, median of {PAIRS} back-to-back pairs: {paired:.3} ms",
            gh_ns / 1e6,
            tool_ns / 1e6,
            tool_ns / gh_ns
        );
    }
    ExitCode::SUCCESS
}
