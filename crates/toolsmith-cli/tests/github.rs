//! The GitHub toolset as the `toolsmith` binary links it: listed, declared, and refusing a
//! model's hostile arguments before gh is ever started.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

fn toolsmith(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        // A gh that cannot be found: nothing here may reach a real gh or the network.
        .env("PATH", "/nonexistent")
        .output()
        .expect("start toolsmith")
}

#[test]
fn the_binary_lists_the_github_tools() {
    let out = toolsmith(&["list"]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    for tool in [
        "github_list_issues",
        "github_list_prs",
        "github_get_issue",
        "github_get_pr",
        "github_api_request",
        "github_traffic_views",
        "github_traffic_clones",
    ] {
        assert!(stdout.contains(tool), "{tool} not listed:\n{stdout}");
    }
}

#[test]
fn an_endpoint_that_is_a_flag_is_refused_with_a_clear_message() {
    let out = toolsmith(&["call", "github_api_request", r#"{"endpoint":"--help"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap().trim_end(),
        "Tool `github_api_request` failed: invalid input: `endpoint`: \"--help\" is not a \
         relative REST path such as `repos/OWNER/NAME/issues` (it starts with `-`, which gh \
         would read as a flag); gh was not run"
    );
}

#[test]
fn a_missing_gh_is_reported_with_how_to_install_it() {
    let out = toolsmith(&[
        "call",
        "github_get_issue",
        r#"{"issue_number": 1, "repo": "octo/hello"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("the GitHub CLI (gh) is not installed: `gh` was not found"),
        "{stderr}"
    );
    assert!(stderr.contains("https://cli.github.com"), "{stderr}");
}
