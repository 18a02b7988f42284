//! The GitHub toolset end to end: the real gh (from the peer environment) against a fake
//! GitHub API on 127.0.0.1 that answers what gh really asks, with the filters applied.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fake_github;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_github::{FakeGitHub, TOKEN, TempDir, gh_env};
use serde_json::{Value, json};
use toolsmith::{
    Arguments, CancellationToken, Context, Tool, ToolError, ToolExt, ToolOutput, Toolset,
};
use toolsmith_github::GitHubCLIToolset;

/// The real gh, pointed at a fresh fake GitHub, with fresh configuration and caches.
struct GitHub {
    fake: FakeGitHub,
    home: TempDir,
    tools: Vec<Arc<dyn Tool>>,
}

impl GitHub {
    /// `None` (the test is skipped, saying why) when gh is not installed and not required.
    fn start(name: &str) -> Option<GitHub> {
        GitHub::start_with(name, |toolset| toolset)
    }

    fn start_with(
        name: &str,
        configure: impl FnOnce(GitHubCLIToolset) -> GitHubCLIToolset,
    ) -> Option<GitHub> {
        let gh = toolsmith_testkit::require("gh")?;
        let fake = FakeGitHub::start();
        let home = TempDir::new(name);
        // gh runs in its own empty directory (no git repository), so nothing it does lands
        // elsewhere and `repo` defaults to nothing.
        let workdir = home.path().join("work");
        std::fs::create_dir_all(&workdir).unwrap();
        let mut toolset = GitHubCLIToolset::new().with_program(gh).with_dir(workdir);
        for (key, value) in gh_env(&fake, home.path()) {
            toolset = toolset.with_env(key, value);
        }
        let tools = configure(toolset).into_tools();
        Some(GitHub { fake, home, tools })
    }

    /// The directory gh runs in.
    fn workdir(&self) -> std::path::PathBuf {
        self.home.path().join("work")
    }

    fn call(&self, tool: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
        self.call_in(tool, arguments, Context::new())
    }

    fn call_in(
        &self,
        tool: &str,
        arguments: Value,
        context: Context,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self
            .tools
            .iter()
            .find(|t| t.name() == tool)
            .unwrap_or_else(|| panic!("no tool {tool}"));
        tool.call_blocking(Arguments::Json(&arguments), context)
    }

    /// `github_api_request` of the slow endpoint (which holds gh's request for 20 s) in
    /// `context`: its error.
    fn slow_call(&self, context: Context) -> ToolError {
        self.call_in(
            "github_api_request",
            json!({"endpoint": "repos/octo/hello/slow"}),
            context,
        )
        .unwrap_err()
    }

    /// Asserts that gh's request to the slow endpoint was abandoned: the connection closed
    /// without an answer, as when gh is killed (the fake would hold it for 20 s).
    fn assert_slow_request_abandoned(&self) {
        assert_eq!(
            self.fake
                .wait_for_abandoned(Duration::from_secs(10))
                .as_deref(),
            Some("/repos/octo/hello/slow")
        );
    }

    fn text(&self, tool: &str, arguments: Value) -> String {
        match self.call(tool, arguments) {
            Ok(output) => output.as_text().into_owned(),
            Err(error) => panic!("{tool} failed: {error}"),
        }
    }

    fn error(&self, tool: &str, arguments: Value) -> String {
        match self.call(tool, arguments) {
            Ok(output) => panic!("{tool} succeeded: {}", output.as_text()),
            Err(error) => error.to_model_message(),
        }
    }

    /// The variables of the one request for `operation`.
    fn variables_of(&self, operation: &str) -> Value {
        let requests: Vec<_> = self
            .fake
            .requests()
            .into_iter()
            .filter(|r| r.operation().as_deref() == Some(operation))
            .collect();
        assert_eq!(requests.len(), 1, "one {operation} request");
        requests[0].variables()
    }
}

#[test]
fn list_issues_lists_open_issues_newest_first() {
    let Some(github) = GitHub::start("list-issues") else {
        return;
    };
    let output = github
        .call("github_list_issues", json!({"repo": "octo/hello"}))
        .unwrap();
    assert_eq!(
        output.as_text(),
        "Found 3 issue(s):\n\
         #5: Flaky test (OPEN)\n  Labels: bug, ci\n  Assignees: ana, bob\n  URL: https://github.localhost/octo/hello/issues/5\n\
         #2: Add dark mode (OPEN)\n  Labels: enhancement, good first issue\n  URL: https://github.localhost/octo/hello/issues/2\n\
         #1: Crash on start (OPEN)\n  Labels: bug\n  Assignees: ana\n  URL: https://github.localhost/octo/hello/issues/1"
    );
    let structured = output.structured.unwrap();
    assert_eq!(structured[0]["number"], 5);
    assert_eq!(structured[0]["labels"][1]["name"], "ci");
    assert_eq!(github.fake.operations(), ["IssueList"]);
    assert_eq!(
        github.variables_of("IssueList"),
        json!({"limit": 20, "owner": "octo", "repo": "hello", "states": ["OPEN"]})
    );
}

#[test]
fn list_issues_passes_state_assignee_author_and_limit_to_the_listing() {
    let Some(github) = GitHub::start("list-issues-filters") else {
        return;
    };
    let text = github.text(
        "github_list_issues",
        json!({"repo": "octo/hello", "state": "closed", "author": "ana", "assignee": "bob", "limit": 5}),
    );
    assert_eq!(
        text,
        "Found 1 issue(s):\n#3: Typo in README (CLOSED)\n  Labels: docs\n  Assignees: bob\n  URL: https://github.localhost/octo/hello/issues/3"
    );
    assert_eq!(
        github.variables_of("IssueList"),
        json!({"assignee": "bob", "author": "ana", "limit": 5, "owner": "octo", "repo": "hello", "states": ["CLOSED"]})
    );
    let all = github.text(
        "github_list_issues",
        json!({"repo": "octo/hello", "state": "all", "limit": 2}),
    );
    assert!(
        all.starts_with("Found 2 issue(s):\n#5: Flaky test (OPEN)"),
        "{all}"
    );
}

#[test]
fn an_empty_list_says_no_issues_were_found() {
    let Some(github) = GitHub::start("list-issues-empty") else {
        return;
    };
    assert_eq!(
        github.text(
            "github_list_issues",
            json!({"repo": "octo/hello", "author": "nobody"})
        ),
        "No issues found"
    );
}

#[test]
fn a_label_filter_makes_gh_search_and_the_search_applies_it() {
    let Some(github) = GitHub::start("list-issues-label") else {
        return;
    };
    let text = github.text(
        "github_list_issues",
        json!({"repo": "octo/hello", "labels": ["bug"]}),
    );
    assert!(
        text.starts_with("Found 2 issue(s):\n#5: Flaky test (OPEN)"),
        "{text}"
    );
    assert!(text.contains("\n#1: Crash on start (OPEN)"), "{text}");
    assert_eq!(
        github.fake.operations(),
        ["SearchType_enumValues", "IssueSearch"]
    );
    assert_eq!(
        github.variables_of("IssueSearch")["query"],
        "label:bug repo:octo/hello state:open type:issue"
    );

    let text = github.text(
        "github_list_issues",
        json!({"repo": "octo/hello", "labels": ["good first issue"], "state": "all"}),
    );
    assert!(
        text.starts_with("Found 1 issue(s):\n#2: Add dark mode"),
        "{text}"
    );
    let text = github.text(
        "github_list_issues",
        json!({"repo": "octo/hello", "labels": ["bug", "ci"], "author": "carol"}),
    );
    assert!(
        text.starts_with("Found 1 issue(s):\n#5: Flaky test"),
        "{text}"
    );
}

#[test]
fn list_prs_lists_with_the_branch_arrow_and_filters_state_and_base() {
    let Some(github) = GitHub::start("list-prs") else {
        return;
    };
    assert_eq!(
        github.text("github_list_prs", json!({"repo": "octo/hello"})),
        "Found 2 pull request(s):\n\
         #9: Fix the crash (OPEN)\n  fix-crash → main\n  URL: https://github.localhost/octo/hello/pull/9\n\
         #6: Speed up parsing (OPEN)\n  speed → main\n  URL: https://github.localhost/octo/hello/pull/6"
    );
    assert_eq!(
        github.text(
            "github_list_prs",
            json!({"repo": "octo/hello", "state": "merged"})
        ),
        "Found 1 pull request(s):\n#7: Release 1.0 (MERGED)\n  prep-1.0 → release\n  URL: https://github.localhost/octo/hello/pull/7"
    );
    let text = github.text(
        "github_list_prs",
        json!({"repo": "octo/hello", "state": "all", "base": "main"}),
    );
    assert!(text.starts_with("Found 3 pull request(s):"), "{text}");
    assert!(!text.contains("#7"), "{text}");
    assert_eq!(
        github.fake.operations(),
        ["PullRequestList", "PullRequestList", "PullRequestList"]
    );
}

#[test]
fn author_and_label_filters_make_gh_search_pull_requests() {
    let Some(github) = GitHub::start("list-prs-search") else {
        return;
    };
    assert_eq!(
        github.text(
            "github_list_prs",
            json!({"repo": "octo/hello", "author": "ana"})
        ),
        "Found 1 pull request(s):\n#6: Speed up parsing (OPEN)\n  speed → main\n  URL: https://github.localhost/octo/hello/pull/6"
    );
    assert_eq!(
        github.variables_of("PullRequestSearch")["q"],
        "author:ana repo:octo/hello state:open type:pr"
    );
    let text = github.text(
        "github_list_prs",
        json!({"repo": "octo/hello", "labels": ["bug"], "state": "closed"}),
    );
    assert!(
        text.starts_with("Found 1 pull request(s):\n#8: Rewrite everything (CLOSED)"),
        "{text}"
    );
    let operations = github.fake.operations();
    assert_eq!(operations[0], "SearchType_enumValues");
    assert_eq!(
        operations
            .iter()
            .filter(|o| *o == "PullRequestSearch")
            .count(),
        2
    );
}

#[test]
fn get_issue_shows_state_labels_assignees_url_and_body() {
    let Some(github) = GitHub::start("get-issue") else {
        return;
    };
    let output = github
        .call(
            "github_get_issue",
            json!({"issue_number": 5, "repo": "octo/hello"}),
        )
        .unwrap();
    assert_eq!(
        output.as_text(),
        "Issue #5: Flaky test\nState: OPEN\nLabels: bug, ci\nAssignees: ana, bob\n\
         URL: https://github.localhost/octo/hello/issues/5\n\nBody:\nIt fails one run in ten."
    );
    let structured = output.structured.unwrap();
    assert_eq!(structured["number"], 5);
    assert_eq!(structured["body"], "It fails one run in ten.");
    assert_eq!(
        github.variables_of("IssueByNumber"),
        json!({"number": 5, "owner": "octo", "repo": "hello"})
    );
    assert!(
        github
            .text(
                "github_get_issue",
                json!({"issue_number": "2", "repo": "octo/hello"})
            )
            .ends_with("Body:\nNo description provided")
    );
}

#[test]
fn a_missing_issue_is_a_failure_carrying_githubs_graphql_error() {
    let Some(github) = GitHub::start("get-issue-missing") else {
        return;
    };
    let error = github.error(
        "github_get_issue",
        json!({"issue_number": 99, "repo": "octo/hello"}),
    );
    assert!(error.starts_with("Tool `github_get_issue` failed: `gh issue view 99 --json number,title,state,body,labels,assignees,url --repo=octo/hello` failed (exit status 1): "), "{error}");
    assert!(
        error.contains("Could not resolve to an issue or pull request with the number of 99."),
        "{error}"
    );
}

#[test]
fn an_unknown_repository_is_a_failure_naming_it() {
    let Some(github) = GitHub::start("unknown-repo") else {
        return;
    };
    let error = github.error("github_list_issues", json!({"repo": "octo/missing"}));
    assert!(
        error.contains("Could not resolve to a Repository with the name 'octo/missing'."),
        "{error}"
    );
}

#[test]
fn get_pr_reports_mergeability_as_github_gives_it() {
    let Some(github) = GitHub::start("get-pr") else {
        return;
    };
    assert_eq!(
        github.text(
            "github_get_pr",
            json!({"pr_number": 6, "repo": "octo/hello"})
        ),
        "Pull Request #6: Speed up parsing\nState: OPEN\nBranch: speed → main\nMergeable: MERGEABLE\n\
         URL: https://github.localhost/octo/hello/pull/6\n\nBody:\nParses in one pass."
    );
    for (number, mergeable) in [(9, "CONFLICTING"), (7, "UNKNOWN")] {
        let text = github.text(
            "github_get_pr",
            json!({"pr_number": number, "repo": "octo/hello"}),
        );
        assert!(
            text.contains(&format!("\nMergeable: {mergeable}\n")),
            "{text}"
        );
    }
    let error = github.error(
        "github_get_pr",
        json!({"pr_number": 42, "repo": "octo/hello"}),
    );
    assert!(
        error.contains("Could not resolve to a PullRequest with the number of 42."),
        "{error}"
    );
}

#[test]
fn api_request_is_a_get_with_the_fields_as_query_parameters() {
    let Some(github) = GitHub::start("api") else {
        return;
    };
    let output = github
        .call(
            "github_api_request",
            json!({"endpoint": "repos/octo/hello/issues", "fields": {"state": "closed", "per_page": "5"}}),
        )
        .unwrap();
    assert_eq!(
        output.structured,
        Some(json!([{"number": 3, "title": "Typo in README", "state": "closed"}]))
    );
    assert_eq!(
        output.as_text(),
        "[\n  {\n    \"number\": 3,\n    \"title\": \"Typo in README\",\n    \"state\": \"closed\"\n  }\n]"
    );
    let requests = github.fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path, "/repos/octo/hello/issues");
    assert_eq!(requests[0].query, "per_page=5&state=closed");
    assert_eq!(requests[0].body, "");
}

#[test]
fn api_request_of_a_missing_resource_fails_with_ghs_404() {
    let Some(github) = GitHub::start("api-404") else {
        return;
    };
    let error = github.error(
        "github_api_request",
        json!({"endpoint": "repos/octo/hello/nothing-here"}),
    );
    assert!(
        error.starts_with(
            "Tool `github_api_request` failed: `gh api --method GET repos/octo/hello/nothing-here` failed (exit status 1): "
        ),
        "{error}"
    );
    assert!(error.contains("Not Found (HTTP 404)"), "{error}");
}

#[test]
fn api_output_that_is_not_json_is_an_unexpected_output_error() {
    let Some(github) = GitHub::start("api-text") else {
        return;
    };
    let error = github.error(
        "github_api_request",
        json!({"endpoint": "repos/octo/hello/readme.txt"}),
    );
    assert!(
        error.contains("printed output that is not what was asked for: it is not JSON"),
        "{error}"
    );
    assert!(error.contains("Hello, world"), "{error}");
}

#[test]
fn traffic_views_and_clones_show_totals_and_each_period() {
    let Some(github) = GitHub::start("traffic") else {
        return;
    };
    let output = github
        .call("github_traffic_views", json!({"repo": "octo/hello"}))
        .unwrap();
    assert_eq!(
        output.as_text(),
        "Views: 10 total (3 unique)\n  2026-11-30T00:00:00Z: 4 (2 unique)\n  2026-12-01T00:00:00Z: 6 (2 unique)"
    );
    assert_eq!(output.structured.unwrap()["views"][1]["count"], 6);
    assert_eq!(
        github.text(
            "github_traffic_clones",
            json!({"repo": "octo/hello", "per": "week"})
        ),
        "Clones: 10 total (3 unique)\n  2026-11-23T00:00:00Z: 10 (3 unique)"
    );
    let requests = github.fake.requests();
    let asked: Vec<(&str, &str, &str)> = requests
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str(), r.query.as_str()))
        .collect();
    assert_eq!(
        asked,
        [
            ("GET", "/repos/octo/hello/traffic/views", ""),
            ("GET", "/repos/octo/hello/traffic/clones", "per=week"),
        ]
    );
}

#[test]
fn hostile_labels_reach_github_only_as_label_text() {
    let Some(github) = GitHub::start("hostile-labels") else {
        return;
    };
    let hostile = [
        "--web",
        "-R other/repo",
        "$(touch x)",
        "; rm -rf x",
        "`touch x`",
    ];
    let text = github.text(
        "github_list_issues",
        json!({"repo": "octo/hello", "labels": hostile}),
    );
    assert_eq!(text, "No issues found");
    let query = github.variables_of("IssueSearch")["query"]
        .as_str()
        .unwrap()
        .to_owned();
    for label in hostile {
        assert!(query.contains(label), "{label:?} not in {query:?}");
    }
    // gh asked about octo/hello only, and opened no browser (`--web` would print a URL instead).
    assert!(query.contains("repo:octo/hello"), "{query}");
    assert!(!query.contains("repo:other/repo"), "{query}");
    // No shell ran the labels: nothing was created where gh ran.
    let created: Vec<_> = std::fs::read_dir(github.workdir()).unwrap().collect();
    assert!(created.is_empty(), "{created:?}");
}

#[test]
fn without_a_repo_outside_a_git_repository_gh_says_what_is_missing() {
    let Some(github) = GitHub::start("no-repo") else {
        return;
    };
    let error = github.error("github_list_issues", json!({}));
    assert!(
        error.starts_with("Tool `github_list_issues` failed: `gh issue list --json number,title,state,labels,assignees,url --state=open --limit=20` failed (exit status 1): "),
        "{error}"
    );
    assert!(error.contains("failed to run git"), "{error}");
    assert!(github.fake.requests().is_empty());
}

#[test]
fn hostile_values_that_are_not_labels_are_refused_before_gh_runs() {
    let Some(github) = GitHub::start("hostile-refused") else {
        return;
    };
    let cases = [
        (
            "github_list_issues",
            json!({"repo": "-R other/repo"}),
            "`repo`",
        ),
        (
            "github_list_issues",
            json!({"repo": "octo/hello", "author": "--web"}),
            "`author`",
        ),
        (
            "github_list_issues",
            json!({"repo": "octo/hello", "assignee": "$(touch x)"}),
            "`assignee`",
        ),
        (
            "github_list_issues",
            json!({"repo": "octo/hello", "labels": ["bug\n--web"]}),
            "`labels`",
        ),
        (
            "github_list_prs",
            json!({"repo": "octo/hello", "base": "-R"}),
            "`base`",
        ),
        (
            "github_list_prs",
            json!({"repo": "octo/hello", "author": "a; rm"}),
            "`author`",
        ),
        (
            "github_get_pr",
            json!({"pr_number": 1, "repo": "octo/hello;rm"}),
            "`repo`",
        ),
        (
            "github_api_request",
            json!({"endpoint": "--help"}),
            "`endpoint`",
        ),
        (
            "github_api_request",
            json!({"endpoint": "https://evil.example/x"}),
            "`endpoint`",
        ),
        (
            "github_api_request",
            json!({"endpoint": "repos/octo/hello/../../user"}),
            "`endpoint`",
        ),
        (
            "github_api_request",
            json!({"endpoint": "user\n-X POST"}),
            "`endpoint`",
        ),
        (
            "github_api_request",
            json!({"endpoint": "user", "fields": {"-X": "POST"}}),
            "`fields`",
        ),
        ("github_traffic_views", json!({"repo": "`id`/x"}), "`repo`"),
    ];
    for (tool, arguments, parameter) in cases {
        let error = github.error(tool, arguments.clone());
        assert!(
            error.starts_with(&format!(
                "Tool `{tool}` failed: invalid input: {parameter}:"
            )),
            "{tool} {arguments}: {error}"
        );
        assert!(error.ends_with("; gh was not run"), "{error}");
    }
    // Bounds the schema declares are refused while reading the arguments.
    for (tool, arguments, parameter) in [
        (
            "github_get_issue",
            json!({"issue_number": 0, "repo": "octo/hello"}),
            "`issue_number`",
        ),
        (
            "github_get_pr",
            json!({"pr_number": -6, "repo": "octo/hello"}),
            "`pr_number`",
        ),
        (
            "github_list_issues",
            json!({"repo": "octo/hello", "limit": 101}),
            "`limit`",
        ),
        (
            "github_list_prs",
            json!({"repo": "octo/hello", "limit": 0}),
            "`limit`",
        ),
    ] {
        let error = github.call(tool, arguments.clone()).unwrap_err();
        assert!(
            matches!(error, ToolError::InvalidArguments { .. }),
            "{error:?}"
        );
        assert!(
            error.to_model_message().contains(parameter),
            "{tool} {arguments}: {error}"
        );
    }
    assert!(github.fake.requests().is_empty(), "gh must not have run");
}

#[test]
fn a_token_never_appears_in_an_error() {
    let Some(github) = GitHub::start("token") else {
        return;
    };
    // This endpoint echoes the credential it was sent, as a broken server or proxy might.
    let error = github.error(
        "github_api_request",
        json!({"endpoint": "repos/octo/leaky"}),
    );
    assert!(error.contains("Bad credentials"), "{error}");
    assert!(error.contains("[redacted]"), "{error}");
    assert!(!error.contains(TOKEN), "{error}");
    let sent = github.fake.requests()[0]
        .header("authorization")
        .map(str::to_owned);
    assert_eq!(sent.as_deref(), Some("token test-token"));
}

#[test]
fn gh_that_runs_past_the_timeout_is_killed_and_the_call_fails() {
    let Some(github) = GitHub::start_with("timeout", |toolset| {
        // Long enough for gh to start and send its request even on a busy machine.
        toolset.with_timeout(Duration::from_secs(3))
    }) else {
        return;
    };
    let error = github.error(
        "github_api_request",
        json!({"endpoint": "repos/octo/hello/slow"}),
    );
    assert_eq!(
        error,
        "Tool `github_api_request` failed: `gh api --method GET repos/octo/hello/slow` did not \
         finish within 3 s and was stopped"
    );
    // The killed gh's connection closes; the fake notices the client gone without an answer.
    github.assert_slow_request_abandoned();
}

#[test]
fn a_call_cancelled_while_gh_runs_kills_gh_at_once() {
    let Some(github) = GitHub::start("cancel") else {
        return;
    };
    let token = CancellationToken::new();
    let context = Context::new().with_cancellation(token.clone());
    std::thread::scope(|scope| {
        let canceller = scope.spawn(|| {
            assert!(
                github.fake.wait_for_request(Duration::from_secs(30)),
                "gh sent no request"
            );
            let at = Instant::now();
            token.cancel();
            at
        });
        let error = github.slow_call(context);
        let answered_at = Instant::now();
        let cancelled_at = canceller.join().unwrap();
        assert_eq!(
            error,
            ToolError::Cancelled {
                tool: "github_api_request".to_owned()
            }
        );
        // The slow endpoint would hold gh for 20 s; the call ends within a slice or two of
        // the cancellation (a generous bound for a busy machine).
        let took = answered_at.duration_since(cancelled_at);
        assert!(took < Duration::from_secs(2), "answered {took:?} after");
    });
    // gh was killed, not left to finish.
    github.assert_slow_request_abandoned();
}

#[test]
fn a_call_whose_deadline_passes_while_gh_runs_kills_gh() {
    let Some(github) = GitHub::start("deadline") else {
        return;
    };
    // Well inside the toolset's own 30 s, long enough for gh to start on a busy machine.
    let context = Context::new().with_deadline(Instant::now() + Duration::from_secs(3));
    let started = Instant::now();
    let error = github.slow_call(context);
    assert_eq!(
        error,
        ToolError::TimedOut {
            tool: "github_api_request".to_owned(),
            after: None
        }
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    github.assert_slow_request_abandoned();
}

#[test]
fn a_timeout_too_long_to_be_a_deadline_is_no_deadline() {
    let Some(github) =
        GitHub::start_with("no-deadline", |toolset| toolset.with_timeout(Duration::MAX))
    else {
        return;
    };
    let text = github.text(
        "github_get_issue",
        json!({"issue_number": 1, "repo": "octo/hello"}),
    );
    assert!(text.starts_with("Issue #1: Crash on start"), "{text}");
}

#[test]
fn every_request_gh_makes_is_a_read_of_the_fake_api() {
    let Some(github) = GitHub::start("read-only") else {
        return;
    };
    let calls = vec![
        (
            "github_list_issues",
            json!({"repo": "octo/hello", "labels": ["bug"]}),
        ),
        (
            "github_list_prs",
            json!({"repo": "octo/hello", "author": "ana"}),
        ),
        (
            "github_get_issue",
            json!({"issue_number": 1, "repo": "octo/hello"}),
        ),
        (
            "github_get_pr",
            json!({"pr_number": 6, "repo": "octo/hello"}),
        ),
        (
            "github_api_request",
            json!({"endpoint": "repos/octo/hello"}),
        ),
        ("github_traffic_views", json!({"repo": "octo/hello"})),
        ("github_traffic_clones", json!({"repo": "octo/hello"})),
    ];
    for (tool, arguments) in &calls {
        github.text(tool, arguments.clone());
    }
    let requests = github.fake.requests();
    assert!(requests.len() >= calls.len());
    for request in &requests {
        assert!(
            request.target.starts_with("http://api.github.localhost/"),
            "{request:?}"
        );
        match request.method.as_str() {
            "GET" => {}
            // GraphQL reads: queries only, never a mutation.
            "POST" if request.path == "/graphql" => {
                let body: Value = serde_json::from_str(&request.body).unwrap();
                let query = body["query"].as_str().unwrap();
                assert!(!query.contains("mutation"), "{query}");
            }
            other => panic!("gh sent {other} {}", request.target),
        }
    }
}

#[test]
fn every_tool_is_read_only_and_open_world() {
    let tools = GitHubCLIToolset::new().into_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "github_list_issues",
            "github_list_prs",
            "github_get_issue",
            "github_get_pr",
            "github_api_request",
            "github_traffic_views",
            "github_traffic_clones"
        ]
    );
    for tool in &tools {
        let annotations = tool.annotations();
        assert_eq!(annotations.read_only, Some(true), "{}", tool.name());
        assert_eq!(annotations.open_world, Some(true), "{}", tool.name());
    }
}

#[test]
fn linking_the_crate_registers_the_github_toolset() {
    let registry = toolsmith::registry().unwrap();
    let registered: Vec<&toolsmith::RegisteredTool> = registry
        .iter()
        .filter(|t| t.toolset() == Some("github"))
        .collect();
    assert_eq!(registered.len(), 7);
    assert!(registry.get("github_get_pr").is_some());
    assert_eq!(<GitHubCLIToolset as Toolset>::NAME, "github");
}

#[test]
fn the_parameters_declare_defaults_enums_and_required_fields() {
    let tools = GitHubCLIToolset::new().into_tools();
    let list_issues =
        toolsmith::parameters_schema(tools[0].parameters(), toolsmith::Dialect::JsonSchema)
            .unwrap();
    assert_eq!(list_issues["properties"]["state"]["default"], "open");
    assert_eq!(
        list_issues["$defs"]["IssueState"]["enum"],
        json!(["open", "closed", "all"])
    );
    assert_eq!(
        list_issues["properties"]["limit"],
        json!({"type": "integer", "minimum": 1, "maximum": 100,
               "description": "At most this many issues, 1 to 100.", "default": 20})
    );
    assert_eq!(list_issues["properties"]["labels"]["default"], json!([]));
    assert_eq!(list_issues["required"], json!([]));
    let list_prs =
        toolsmith::parameters_schema(tools[1].parameters(), toolsmith::Dialect::JsonSchema)
            .unwrap();
    assert_eq!(
        list_prs["$defs"]["PRState"]["enum"],
        json!(["open", "closed", "merged", "all"])
    );
    let get_issue =
        toolsmith::parameters_schema(tools[2].parameters(), toolsmith::Dialect::JsonSchema)
            .unwrap();
    assert_eq!(get_issue["required"], json!(["issue_number"]));
    assert_eq!(get_issue["properties"]["issue_number"]["minimum"], 1);
    let views = toolsmith::parameters_schema(tools[5].parameters(), toolsmith::Dialect::JsonSchema)
        .unwrap();
    assert_eq!(views["required"], json!(["repo"]));
    assert_eq!(
        views["$defs"]["TrafficPeriod"]["enum"],
        json!(["day", "week"])
    );
}

#[test]
fn declarations_match_golden_in_every_dialect() {
    let tools = GitHubCLIToolset::new().into_tools();
    let tools: Vec<&dyn Tool> = tools.iter().map(|t| t.as_ref()).collect();
    toolsmith::testing::assert_envelopes_golden(&tools, "tests/golden");
}

#[test]
fn every_receiver_accepts_every_tool() {
    let tools = GitHubCLIToolset::new().into_tools();
    let tools: Vec<&dyn Tool> = tools.iter().map(|t| t.as_ref()).collect();
    for dialect in toolsmith::Dialect::ALL {
        let findings = toolsmith::lint_tools(tools.iter().copied(), dialect);
        assert!(findings.is_empty(), "{dialect:?}: {findings:?}");
    }
}
