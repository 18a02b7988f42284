//! The built-in GitHub toolset, `github`: read-only questions about issues, pull requests,
//! REST resources and traffic, answered by the `gh` CLI.
//!
//! [`GitHubCLIToolset`] has seven tools: `github_list_issues`, `github_list_prs`,
//! `github_get_issue`, `github_get_pr`, `github_api_request`, `github_traffic_views` and
//! `github_traffic_clones`. Each checks the model's values, builds gh's argv with a pure
//! function of [`argv`], runs gh through `duct` (an argv, never a shell) under a timeout,
//! killing it as soon as the call is cancelled or its deadline passes, and answers with text in
//! the reference's style plus gh's JSON as the structured output. gh reads its token from the
//! environment (`GH_TOKEN`, or its own login); token values never appear in an error.
//!
//! gh is looked for on `PATH`, in its absolute directories only: never in the current
//! directory, so a `gh` planted in an untrusted checkout never runs.
//!
//! This crate must never write to GitHub (only `gh issue list|view`, `gh pr list|view` and
//! `gh api --method GET` are ever run), never start a shell, never run a program from the
//! current directory it was not given, and never let a model's value become one of gh's flags.
//!
//! ```
//! use toolsmith::Toolset;
//! use toolsmith_github::GitHubCLIToolset;
//!
//! // gh is looked for on the PATH it will run with; here, one without it.
//! let tools = GitHubCLIToolset::new().with_env("PATH", "/nonexistent").into_tools();
//! let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
//! assert_eq!(names[0], "github_list_issues");
//! let error = toolsmith::testing::call_text(tools[0].as_ref(), serde_json::json!({"repo": "octo/hello"}))
//!     .unwrap_err();
//! assert!(
//!     error.contains("the GitHub CLI (gh) is not installed: `gh` was not found on PATH (searched /nonexistent)"),
//!     "{error}"
//! );
//! ```

pub mod argv;
mod error;
mod gh;
mod locate;
mod render;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use toolsmith::{Context, ToolError, ToolOutput};

pub use argv::{IssueState, Limit, Number, PRState, TrafficPeriod};
pub use error::{GitHubError, Stop};
pub use gh::DEFAULT_TIMEOUT;

use argv::{IssueQuery, PRQuery, Traffic};
use gh::Gh;

/// Read-only GitHub tools over the `gh` CLI (toolset `github`).
///
/// Built with [`Default`] (what the registry does) it runs `gh` found in an absolute directory
/// of `PATH` (never the current directory), with a 30 s timeout, the process's environment and
/// its current directory;
/// [`with_program`](Self::with_program), [`with_timeout`](Self::with_timeout),
/// [`with_env`](Self::with_env) and [`with_dir`](Self::with_dir) change that.
#[derive(Debug, Clone, Default)]
pub struct GitHubCLIToolset {
    gh: Gh,
}

impl GitHubCLIToolset {
    /// The toolset with gh from `PATH` and the default timeout.
    pub fn new() -> Self {
        GitHubCLIToolset::default()
    }

    /// Runs this program as gh.
    ///
    /// A bare name (`gh`, `gh-2.40`) is looked up, at each call, in the absolute directories of
    /// the `PATH` gh will run with (the one set with [`with_env`](Self::with_env), else the
    /// process's); empty and relative entries are skipped, so the current directory is never
    /// searched. Anything with a directory separator (`/opt/gh/bin/gh`, `./gh`) is a path and
    /// runs as given; a relative one is relative to the process's current directory, not to
    /// [`with_dir`](Self::with_dir).
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.gh.program = locate::Program::from_user(program.into());
        self
    }

    /// Kills gh and fails the call when it runs longer than `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.gh.timeout = timeout;
        self
    }

    /// Sets an environment variable for gh on top of the process's own (`GH_HOST`, `GH_TOKEN`,
    /// a proxy). A token set here is redacted from errors like one from the process; a `PATH`
    /// set here is also where gh itself is looked for.
    pub fn with_env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.gh.env.push((name.into(), value.into()));
        self
    }

    /// Runs gh in `dir` (default: the process's current directory); without a `repo`, gh asks
    /// about the repository that directory is in.
    pub fn with_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.gh.dir = Some(dir.into());
        self
    }

    /// Runs gh with `args` for the call of `context`, parses its JSON and renders it with
    /// `render`.
    fn answer(
        &self,
        args: Vec<OsString>,
        context: &Context,
        render: impl FnOnce(&Value) -> Result<String, String>,
    ) -> Result<ToolOutput, ToolError> {
        let stdout = self.gh.run(&args, context)?;
        let unexpected = |reason: String| GitHubError::UnexpectedOutput {
            command: self.gh.describe(&args),
            reason: self.gh.redact(&reason),
        };
        let value: Value = serde_json::from_str(&stdout).map_err(|e| {
            let head: String = stdout.chars().take(200).collect();
            unexpected(format!("it is not JSON ({e}): {head:?}"))
        })?;
        let text = render(&value).map_err(unexpected)?;
        let mut output = ToolOutput::text(text);
        output.structured = Some(value);
        Ok(output)
    }
}

#[toolsmith::toolset(name = "github")]
impl GitHubCLIToolset {
    /// Lists a repository's issues, newest first, with their labels, assignees and URLs.
    ///
    /// # Arguments
    /// * `repo` - The repository as OWNER/NAME (default: the repository of the current directory).
    /// * `state` - Which issues, by state.
    /// * `labels` - Only issues that carry every one of these labels.
    /// * `assignee` - Only issues assigned to this login (`@me` for the authenticated user).
    /// * `author` - Only issues opened by this login.
    /// * `limit` - At most this many issues, 1 to 100.
    #[tool(read_only, open_world)]
    // One argument per filter a model may set, and the call's context.
    #[allow(clippy::too_many_arguments)]
    fn list_issues(
        &self,
        repo: Option<String>,
        #[param(default = IssueState::Open)] state: IssueState,
        #[param(default = Vec::new())] labels: Vec<String>,
        assignee: Option<String>,
        author: Option<String>,
        #[param(default = Limit::default())] limit: Limit,
        ctx: &Context,
    ) -> Result<ToolOutput, ToolError> {
        let args = argv::list_issues(&IssueQuery {
            repo,
            state,
            labels,
            assignee,
            author,
            limit: limit.0,
        })
        .map_err(GitHubError::from)?;
        self.answer(args, ctx, render::issue_list)
    }

    /// Lists a repository's pull requests, newest first, with their branches and URLs.
    ///
    /// # Arguments
    /// * `repo` - The repository as OWNER/NAME (default: the repository of the current directory).
    /// * `state` - Which pull requests, by state.
    /// * `labels` - Only pull requests that carry every one of these labels.
    /// * `author` - Only pull requests opened by this login.
    /// * `base` - Only pull requests into this base branch.
    /// * `limit` - At most this many pull requests, 1 to 100.
    #[tool(read_only, open_world)]
    // One argument per filter a model may set, and the call's context.
    #[allow(clippy::too_many_arguments)]
    fn list_prs(
        &self,
        repo: Option<String>,
        #[param(default = PRState::Open)] state: PRState,
        #[param(default = Vec::new())] labels: Vec<String>,
        author: Option<String>,
        base: Option<String>,
        #[param(default = Limit::default())] limit: Limit,
        ctx: &Context,
    ) -> Result<ToolOutput, ToolError> {
        let args = argv::list_prs(&PRQuery {
            repo,
            state,
            labels,
            author,
            base,
            limit: limit.0,
        })
        .map_err(GitHubError::from)?;
        self.answer(args, ctx, render::pr_list)
    }

    /// Shows one issue: its state, labels, assignees, URL and body.
    ///
    /// # Arguments
    /// * `issue_number` - The issue's number.
    /// * `repo` - The repository as OWNER/NAME (default: the repository of the current directory).
    #[tool(read_only, open_world)]
    fn get_issue(
        &self,
        issue_number: Number,
        repo: Option<String>,
        ctx: &Context,
    ) -> Result<ToolOutput, ToolError> {
        let args = argv::get_issue(issue_number.0, repo.as_deref()).map_err(GitHubError::from)?;
        self.answer(args, ctx, render::issue)
    }

    /// Shows one pull request: its state, branches, mergeability (MERGEABLE, CONFLICTING or
    /// UNKNOWN, as GitHub reports it), URL and body.
    ///
    /// # Arguments
    /// * `pr_number` - The pull request's number.
    /// * `repo` - The repository as OWNER/NAME (default: the repository of the current directory).
    #[tool(read_only, open_world)]
    fn get_pr(
        &self,
        pr_number: Number,
        repo: Option<String>,
        ctx: &Context,
    ) -> Result<ToolOutput, ToolError> {
        let args = argv::get_pr(pr_number.0, repo.as_deref()).map_err(GitHubError::from)?;
        self.answer(args, ctx, render::pr)
    }

    /// Reads any GitHub REST resource with a GET request and returns its JSON.
    ///
    /// # Arguments
    /// * `endpoint` - A relative REST path such as `repos/OWNER/NAME/pulls/6/files`.
    /// * `fields` - Query parameters, such as `{"per_page": "5"}`.
    #[tool(read_only, open_world)]
    fn api_request(
        &self,
        endpoint: String,
        #[param(default = BTreeMap::new())] fields: BTreeMap<String, String>,
        ctx: &Context,
    ) -> Result<ToolOutput, ToolError> {
        let args = argv::api_request(&endpoint, &fields).map_err(GitHubError::from)?;
        self.answer(args, ctx, |value| {
            serde_json::to_string_pretty(value).map_err(|e| e.to_string())
        })
    }

    /// Shows a repository's page views over the last 14 days: totals and each period.
    ///
    /// # Arguments
    /// * `repo` - The repository as OWNER/NAME.
    /// * `per` - Break the views down by day or by week (GitHub's default: day).
    #[tool(read_only, open_world)]
    fn traffic_views(
        &self,
        repo: String,
        per: Option<TrafficPeriod>,
        ctx: &Context,
    ) -> Result<ToolOutput, ToolError> {
        let args = argv::traffic(Traffic::Views, &repo, per).map_err(GitHubError::from)?;
        self.answer(args, ctx, |value| render::traffic("Views", value))
    }

    /// Shows how often a repository was cloned over the last 14 days: totals and each period.
    ///
    /// # Arguments
    /// * `repo` - The repository as OWNER/NAME.
    /// * `per` - Break the clones down by day or by week (GitHub's default: day).
    #[tool(read_only, open_world)]
    fn traffic_clones(
        &self,
        repo: String,
        per: Option<TrafficPeriod>,
        ctx: &Context,
    ) -> Result<ToolOutput, ToolError> {
        let args = argv::traffic(Traffic::Clones, &repo, per).map_err(GitHubError::from)?;
        self.answer(args, ctx, |value| render::traffic("Clones", value))
    }
}
