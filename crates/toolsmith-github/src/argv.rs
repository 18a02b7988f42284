//! What each tool asks gh to do, as an argv: pure functions from the tool's inputs to
//! `gh`'s arguments, after every model-supplied value has been checked.
//!
//! Nothing here runs a process. Each function either refuses its inputs, naming every problem,
//! or returns the arguments to pass to `gh` (without the program itself). The rules that keep a
//! model's values from steering gh are all here, so each is unit-tested on its own:
//!
//! - only the read-only commands `issue list`, `issue view`, `pr list`, `pr view` and `api` with
//!   `--method GET` are ever built;
//! - a repository is `OWNER/NAME` in GitHub's characters, passed as `--repo=OWNER/NAME`;
//! - numbers are positive and a list's `limit` is 1 to 100;
//! - labels, logins and branch names go into the argv as one `--flag=value` word each, so no
//!   value can become a flag; logins and branches that start with `-` are refused outright;
//! - an API endpoint is a relative REST path: no scheme, host, leading `-`, whitespace or `..`.
//!
//! ```
//! use toolsmith_github::argv;
//!
//! let args = argv::get_issue(5, Some("octo/hello")).expect("valid inputs");
//! assert_eq!(
//!     args,
//!     ["issue", "view", "5", "--json", "number,title,state,body,labels,assignees,url", "--repo=octo/hello"]
//! );
//! let refused = argv::get_issue(0, Some("-R evil/repo")).unwrap_err();
//! assert_eq!(refused.problems().len(), 2);
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;

use serde::{Deserialize, Serialize};
use toolsmith::{Definitions, Describe, IntegerType, ToolType, Type};

/// The largest `limit` a list accepts.
pub const MAX_LIMIT: u32 = 100;

/// The fields `gh issue list` is asked for.
pub const ISSUE_LIST_FIELDS: &str = "number,title,state,labels,assignees,url";
/// The fields `gh pr list` is asked for.
pub const PR_LIST_FIELDS: &str = "number,title,state,baseRefName,headRefName,url";
/// The fields `gh issue view` is asked for.
pub const ISSUE_FIELDS: &str = "number,title,state,body,labels,assignees,url";
/// The fields `gh pr view` is asked for.
pub const PR_FIELDS: &str = "number,title,state,body,baseRefName,headRefName,mergeable,url";

/// How many items a list returns: 1 to [`MAX_LIMIT`], 20 unless told otherwise. The bounds are
/// in the schema a model sees, and the argv functions check them again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Limit(pub u32);

impl Default for Limit {
    fn default() -> Self {
        Limit(20)
    }
}

impl Describe for Limit {
    fn describe(_: &mut Definitions) -> Type {
        Type::Integer(IntegerType::range(1, i128::from(MAX_LIMIT)))
    }
}

/// An issue or pull request number: 1 or more, in the schema and in the argv functions' checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Number(pub u64);

impl Describe for Number {
    fn describe(_: &mut Definitions) -> Type {
        Type::Integer(IntegerType {
            minimum: Some(1),
            ..IntegerType::default()
        })
    }
}

/// Which issues to list, by state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToolType)]
#[serde(rename_all = "snake_case")]
pub enum IssueState {
    /// Open issues.
    #[default]
    Open,
    /// Closed issues.
    Closed,
    /// Open and closed issues.
    All,
}

impl IssueState {
    fn as_gh(self) -> &'static str {
        match self {
            IssueState::Open => "open",
            IssueState::Closed => "closed",
            IssueState::All => "all",
        }
    }
}

/// Which pull requests to list, by state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToolType)]
#[serde(rename_all = "snake_case")]
pub enum PRState {
    /// Open pull requests.
    #[default]
    Open,
    /// Closed without being merged.
    Closed,
    /// Merged pull requests.
    Merged,
    /// Every pull request.
    All,
}

impl PRState {
    fn as_gh(self) -> &'static str {
        match self {
            PRState::Open => "open",
            PRState::Closed => "closed",
            PRState::Merged => "merged",
            PRState::All => "all",
        }
    }
}

/// The period a traffic report is broken down by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolType)]
#[serde(rename_all = "snake_case")]
pub enum TrafficPeriod {
    /// One line per day.
    Day,
    /// One line per week.
    Week,
}

impl TrafficPeriod {
    fn as_gh(self) -> &'static str {
        match self {
            TrafficPeriod::Day => "day",
            TrafficPeriod::Week => "week",
        }
    }
}

/// Which traffic report: page views or clones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// `repos/OWNER/NAME/traffic/views`.
    Views,
    /// `repos/OWNER/NAME/traffic/clones`.
    Clones,
}

impl Traffic {
    fn path(self) -> &'static str {
        match self {
            Traffic::Views => "views",
            Traffic::Clones => "clones",
        }
    }
}

/// What to list with `gh issue list`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueQuery {
    /// `OWNER/NAME`; gh's own default (the current directory's repository) when `None`.
    pub repo: Option<String>,
    /// Which issues, by state.
    pub state: IssueState,
    /// Issues carrying every one of these labels.
    pub labels: Vec<String>,
    /// Issues assigned to this login (`@me` for the authenticated user).
    pub assignee: Option<String>,
    /// Issues opened by this login.
    pub author: Option<String>,
    /// At most this many, 1 to [`MAX_LIMIT`].
    pub limit: u32,
}

/// What to list with `gh pr list`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PRQuery {
    /// `OWNER/NAME`; gh's own default when `None`.
    pub repo: Option<String>,
    /// Which pull requests, by state.
    pub state: PRState,
    /// Pull requests carrying every one of these labels.
    pub labels: Vec<String>,
    /// Pull requests opened by this login.
    pub author: Option<String>,
    /// Pull requests into this base branch.
    pub base: Option<String>,
    /// At most this many, 1 to [`MAX_LIMIT`].
    pub limit: u32,
}

/// Why inputs were refused: every problem, each naming the parameter it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput {
    problems: Vec<String>,
}

impl InvalidInput {
    /// Each problem, in the order of the parameters.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "invalid input: {one}"),
            many => {
                write!(f, "invalid input ({} problems):", many.len())?;
                for problem in many {
                    write!(f, "\n- {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for InvalidInput {}

/// Collects every problem with a tool's inputs before any argv is built.
#[derive(Default)]
struct Check {
    problems: Vec<String>,
}

impl Check {
    /// The checked value, or `None` after noting why it was refused.
    fn value<T>(&mut self, checked: Result<T, String>) -> Option<T> {
        checked.map_err(|problem| self.problems.push(problem)).ok()
    }

    /// An optional value, checked when present.
    fn optional<'a, T>(
        &mut self,
        value: Option<&'a str>,
        check: impl FnOnce(&'a str) -> Result<T, String>,
    ) -> Option<T> {
        value.and_then(|value| self.value(check(value)))
    }

    fn finish(self) -> Result<(), InvalidInput> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(InvalidInput {
                problems: self.problems,
            })
        }
    }
}

/// How a value is shown in a problem: quoted and escaped, and cut short when long.
fn shown(value: &str) -> String {
    const MAX: usize = 80;
    if value.chars().count() <= MAX {
        format!("{value:?}")
    } else {
        let head: String = value.chars().take(MAX).collect();
        format!("{head:?}...")
    }
}

/// `OWNER/NAME` in GitHub's characters: an owner of letters, digits and inner `-` (at most 39),
/// a name of letters, digits, `.`, `_` and `-` (at most 100, not `.` or `..`, not starting
/// with `-`).
pub fn check_repo(parameter: &str, repo: &str) -> Result<String, String> {
    let refuse = |why: &str| {
        Err(format!(
            "`{parameter}`: {} is not a repository as OWNER/NAME ({why})",
            shown(repo)
        ))
    };
    let Some((owner, name)) = repo.split_once('/') else {
        return refuse("there is no `/`");
    };
    if owner.is_empty() || owner.len() > 39 {
        return refuse("the owner must be 1 to 39 characters");
    }
    if !owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        || owner.starts_with('-')
        || owner.ends_with('-')
    {
        return refuse("the owner may hold only letters, digits and inner `-`");
    }
    if name.is_empty() || name.len() > 100 {
        return refuse("the name must be 1 to 100 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return refuse("the name may hold only letters, digits, `.`, `_` and `-`");
    }
    if name == "." || name == ".." || name.starts_with('-') {
        return refuse("the name cannot be `.` or `..` or start with `-`");
    }
    Ok(repo.to_owned())
}

/// A GitHub login (letters, digits and inner `-`, at most 39), or `@me`.
pub fn check_login(parameter: &str, login: &str) -> Result<String, String> {
    let valid = login == "@me"
        || (!login.is_empty()
            && login.len() <= 39
            && login.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !login.starts_with('-')
            && !login.ends_with('-'));
    if valid {
        Ok(login.to_owned())
    } else {
        Err(format!(
            "`{parameter}`: {} is not a GitHub login (letters, digits and inner `-`, at most 39 \
             characters, or `@me`)",
            shown(login)
        ))
    }
}

/// A branch name as git allows it: not empty, no leading `-`, no whitespace or control
/// characters, none of `~^:?*[\`, no `..`.
pub fn check_branch(parameter: &str, branch: &str) -> Result<String, String> {
    let valid = !branch.is_empty()
        && branch.len() <= 255
        && !branch.starts_with('-')
        && !branch.contains("..")
        && !branch
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    if valid {
        Ok(branch.to_owned())
    } else {
        Err(format!(
            "`{parameter}`: {} is not a branch name (no leading `-`, whitespace, control \
             characters, `..` or any of ~^:?*[\\)",
            shown(branch)
        ))
    }
}

/// A label: any text of 1 to 100 characters without control characters, commas or double
/// quotes (a label may hold spaces, `-` and other punctuation; it is passed as one `--label=`
/// word, so it stays a label). gh joins labels into GitHub's search syntax, where a comma means
/// "either" and a quote ends a phrase, so those two cannot be asked for faithfully.
pub fn check_label(parameter: &str, label: &str) -> Result<String, String> {
    let valid = !label.trim().is_empty()
        && label.chars().count() <= 100
        && !label
            .chars()
            .any(|c| c.is_control() || c == ',' || c == '"');
    if valid {
        Ok(label.to_owned())
    } else {
        Err(format!(
            "`{parameter}`: {} is not a label gh can filter by (1 to 100 characters, no control \
             characters such as newlines, no `,` or `\"`)",
            shown(label)
        ))
    }
}

/// A positive issue or pull request number.
pub fn check_number(parameter: &str, number: u64) -> Result<u64, String> {
    if number == 0 {
        Err(format!("`{parameter}`: numbers start at 1, not 0"))
    } else {
        Ok(number)
    }
}

/// A list's `limit`: 1 to [`MAX_LIMIT`].
pub fn check_limit(limit: u32) -> Result<u32, String> {
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(format!(
            "`limit`: {limit} is out of range; send 1 to {MAX_LIMIT}"
        ))
    }
}

/// A relative REST path, as `gh api` reads it: no scheme or host, no leading `-` or `//`, no
/// whitespace or control characters, no `..`, nothing but the characters of a path and its
/// query (`?per_page=5`), and not `graphql` (whose requests can write).
pub fn check_endpoint(endpoint: &str) -> Result<String, String> {
    let refuse = |why: &str| {
        Err(format!(
            "`endpoint`: {} is not a relative REST path such as `repos/OWNER/NAME/issues` \
             ({why})",
            shown(endpoint)
        ))
    };
    let path = endpoint.split('?').next().unwrap_or_default();
    if endpoint.is_empty() || path.trim_matches('/').is_empty() {
        return refuse("it is empty");
    }
    if endpoint.starts_with('-') {
        return refuse("it starts with `-`, which gh would read as a flag");
    }
    if endpoint
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return refuse("it holds whitespace or control characters");
    }
    if endpoint.contains("..") {
        return refuse("it holds `..`");
    }
    if endpoint.starts_with("//") || endpoint.contains("://") || has_scheme(path) {
        return refuse("it names a scheme or a host; give only the path");
    }
    if let Some(c) = endpoint.chars().find(|&c| !is_path_char(c)) {
        return refuse(&format!(
            "{c:?} has no place in a REST path; use letters, digits and /-._~%?&=+,:@{{}}"
        ));
    }
    let first = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    if first.eq_ignore_ascii_case("graphql") {
        return refuse("GraphQL requests are not read-only REST reads");
    }
    Ok(endpoint.to_owned())
}

/// The characters a REST path and its query may hold (percent-encode anything else).
fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/-._~%?&=+,:@{}".contains(c)
}

/// Whether a path begins like `scheme:` (RFC 3986: a letter, then letters, digits, `+-.`).
fn has_scheme(path: &str) -> bool {
    let Some((head, _)) = path.split_once(':') else {
        return false;
    };
    let mut chars = head.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// A query field's name: letters, digits, `_`, `.`, `-`, and `[]` for gh's array fields.
pub fn check_field_name(name: &str) -> Result<String, String> {
    let valid = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-[]".contains(c));
    if valid {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "`fields`: {} is not a field name (letters, digits, `_`, `.`, `-` and `[]`)",
            shown(name)
        ))
    }
}

/// A query field's value: any text without control characters.
pub fn check_field_value(name: &str, value: &str) -> Result<String, String> {
    if value.chars().any(char::is_control) {
        Err(format!(
            "`fields.{name}`: {} holds control characters such as newlines",
            shown(value)
        ))
    } else {
        Ok(value.to_owned())
    }
}

/// One argv word `--flag=value`: gh reads it as the flag's value whatever the value holds.
fn flag(name: &str, value: &str) -> OsString {
    OsString::from(format!("--{name}={value}"))
}

fn check_labels(check: &mut Check, labels: &[String]) -> Vec<String> {
    labels
        .iter()
        .filter_map(|label| check.value(check_label("labels", label)))
        .collect()
}

fn words(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// `gh issue list --json ... --state S --limit N [--label=L]... [--assignee=A] [--author=U]
/// [--repo=R]`.
///
/// # Errors
/// Every problem with `query`'s values.
pub fn list_issues(query: &IssueQuery) -> Result<Vec<OsString>, InvalidInput> {
    let mut check = Check::default();
    let repo = check.optional(query.repo.as_deref(), |r| check_repo("repo", r));
    let labels = check_labels(&mut check, &query.labels);
    let assignee = check.optional(query.assignee.as_deref(), |a| check_login("assignee", a));
    let author = check.optional(query.author.as_deref(), |a| check_login("author", a));
    let limit = check.value(check_limit(query.limit));
    check.finish()?;

    let mut argv = words(&["issue", "list", "--json", ISSUE_LIST_FIELDS]);
    argv.push(flag("state", query.state.as_gh()));
    argv.extend(limit.map(|limit| flag("limit", &limit.to_string())));
    argv.extend(labels.iter().map(|label| flag("label", label)));
    argv.extend(assignee.map(|a| flag("assignee", &a)));
    argv.extend(author.map(|a| flag("author", &a)));
    argv.extend(repo.map(|r| flag("repo", &r)));
    Ok(argv)
}

/// `gh pr list --json ... --state S --limit N [--label=L]... [--author=U] [--base=B]
/// [--repo=R]`.
///
/// # Errors
/// Every problem with `query`'s values.
pub fn list_prs(query: &PRQuery) -> Result<Vec<OsString>, InvalidInput> {
    let mut check = Check::default();
    let repo = check.optional(query.repo.as_deref(), |r| check_repo("repo", r));
    let labels = check_labels(&mut check, &query.labels);
    let author = check.optional(query.author.as_deref(), |a| check_login("author", a));
    let base = check.optional(query.base.as_deref(), |b| check_branch("base", b));
    let limit = check.value(check_limit(query.limit));
    check.finish()?;

    let mut argv = words(&["pr", "list", "--json", PR_LIST_FIELDS]);
    argv.push(flag("state", query.state.as_gh()));
    argv.extend(limit.map(|limit| flag("limit", &limit.to_string())));
    argv.extend(labels.iter().map(|label| flag("label", label)));
    argv.extend(author.map(|a| flag("author", &a)));
    argv.extend(base.map(|b| flag("base", &b)));
    argv.extend(repo.map(|r| flag("repo", &r)));
    Ok(argv)
}

/// `gh issue view N --json ... [--repo=R]`.
///
/// # Errors
/// A zero number, a repository not as `OWNER/NAME`.
pub fn get_issue(number: u64, repo: Option<&str>) -> Result<Vec<OsString>, InvalidInput> {
    view("issue", "issue_number", ISSUE_FIELDS, number, repo)
}

/// `gh pr view N --json ... [--repo=R]`.
///
/// # Errors
/// A zero number, a repository not as `OWNER/NAME`.
pub fn get_pr(number: u64, repo: Option<&str>) -> Result<Vec<OsString>, InvalidInput> {
    view("pr", "pr_number", PR_FIELDS, number, repo)
}

fn view(
    command: &str,
    parameter: &str,
    fields: &str,
    number: u64,
    repo: Option<&str>,
) -> Result<Vec<OsString>, InvalidInput> {
    let mut check = Check::default();
    let number = check.value(check_number(parameter, number));
    let repo = check.optional(repo, |r| check_repo("repo", r));
    check.finish()?;

    let mut argv = words(&[command, "view"]);
    argv.extend(number.map(|n| OsString::from(n.to_string())));
    argv.extend(words(&["--json", fields]));
    argv.extend(repo.map(|r| flag("repo", &r)));
    Ok(argv)
}

/// `gh api --method GET ENDPOINT [--raw-field=K=V]...`: a REST read; gh sends the fields as the
/// query string.
///
/// # Errors
/// An endpoint that is not a relative REST path, a field name or value refused.
pub fn api_request(
    endpoint: &str,
    fields: &BTreeMap<String, String>,
) -> Result<Vec<OsString>, InvalidInput> {
    let mut check = Check::default();
    let endpoint = check.value(check_endpoint(endpoint));
    let fields: Vec<(String, String)> = fields
        .iter()
        .filter_map(|(name, value)| {
            let name = check.value(check_field_name(name))?;
            let value = check.value(check_field_value(&name, value))?;
            Some((name, value))
        })
        .collect();
    check.finish()?;
    Ok(api_get(endpoint, &fields))
}

/// `gh api --method GET repos/OWNER/NAME/traffic/{views,clones} [--raw-field=per=P]`.
///
/// # Errors
/// A repository not as `OWNER/NAME`.
pub fn traffic(
    report: Traffic,
    repo: &str,
    per: Option<TrafficPeriod>,
) -> Result<Vec<OsString>, InvalidInput> {
    let mut check = Check::default();
    let repo = check.value(check_repo("repo", repo));
    check.finish()?;
    let endpoint = repo.map(|repo| format!("repos/{repo}/traffic/{}", report.path()));
    let fields: Vec<(String, String)> = per
        .map(|per| ("per".to_owned(), per.as_gh().to_owned()))
        .into_iter()
        .collect();
    Ok(api_get(endpoint, &fields))
}

fn api_get(endpoint: Option<String>, fields: &[(String, String)]) -> Vec<OsString> {
    let mut argv = words(&["api", "--method", "GET"]);
    argv.extend(endpoint.map(OsString::from));
    argv.extend(
        fields
            .iter()
            .map(|(name, value)| flag("raw-field", &format!("{name}={value}"))),
    );
    argv
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn strings(argv: Vec<OsString>) -> Vec<String> {
        argv.into_iter()
            .map(|word| word.into_string().unwrap())
            .collect()
    }

    fn issues(query: IssueQuery) -> Result<Vec<String>, InvalidInput> {
        list_issues(&query).map(strings)
    }

    fn prs(query: PRQuery) -> Result<Vec<String>, InvalidInput> {
        list_prs(&query).map(strings)
    }

    fn api(endpoint: &str, fields: &[(&str, &str)]) -> Result<Vec<String>, InvalidInput> {
        let fields = fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        api_request(endpoint, &fields).map(strings)
    }

    fn query() -> IssueQuery {
        IssueQuery {
            limit: 20,
            ..IssueQuery::default()
        }
    }

    /// Every argv word that gh could read as a flag (`-x`, `--x`) must be one this module wrote.
    fn assert_only_known_flags(argv: &[String]) {
        const KNOWN: &[&str] = &[
            "--json",
            "--state=",
            "--limit=",
            "--label=",
            "--assignee=",
            "--author=",
            "--base=",
            "--repo=",
            "--method",
            "--raw-field=",
        ];
        for word in argv.iter().filter(|w| w.starts_with('-')) {
            assert!(
                KNOWN
                    .iter()
                    .any(|k| word == k || (k.ends_with('=') && word.starts_with(k))),
                "unexpected flag word {word:?} in {argv:?}"
            );
        }
    }

    #[test]
    fn an_issue_list_asks_for_the_fields_the_output_needs() {
        assert_eq!(
            issues(query()).unwrap(),
            [
                "issue",
                "list",
                "--json",
                "number,title,state,labels,assignees,url",
                "--state=open",
                "--limit=20"
            ]
        );
    }

    #[test]
    fn every_issue_filter_is_one_flag_word() {
        let argv = issues(IssueQuery {
            repo: Some("octo/hello".into()),
            state: IssueState::All,
            labels: vec!["bug".into(), "good first issue".into()],
            assignee: Some("@me".into()),
            author: Some("ana-b".into()),
            limit: 5,
        })
        .unwrap();
        assert_eq!(
            argv[4..],
            [
                "--state=all",
                "--limit=5",
                "--label=bug",
                "--label=good first issue",
                "--assignee=@me",
                "--author=ana-b",
                "--repo=octo/hello"
            ]
        );
    }

    #[test]
    fn a_label_that_looks_like_a_flag_stays_a_label_value() {
        for hostile in ["--web", "-R other/repo", "$(touch x)", "; rm -rf /", "`id`"] {
            let argv = issues(IssueQuery {
                labels: vec![hostile.into()],
                ..query()
            })
            .unwrap();
            assert_eq!(argv.last().unwrap(), &format!("--label={hostile}"));
            assert_only_known_flags(&argv);
        }
    }

    #[test]
    fn a_label_with_a_newline_or_nothing_in_it_is_refused() {
        for bad in ["bug\n--web", "", "   ", "tab\there", "a,b", "say \"hi\""] {
            let error = issues(IssueQuery {
                labels: vec![bad.into()],
                ..query()
            })
            .unwrap_err();
            assert!(error.problems()[0].starts_with("`labels`:"), "{error}");
        }
    }

    #[test]
    fn a_repo_must_be_owner_slash_name() {
        for good in [
            "octo/hello",
            "a/b",
            "my-org/repo.rs",
            "o/.github",
            "O-1/x_y-z",
        ] {
            assert_eq!(check_repo("repo", good), Ok(good.to_owned()));
        }
        for bad in [
            "",
            "octo",
            "octo/",
            "/hello",
            "-R other/repo",
            "--web",
            "octo/hello/extra",
            "octo/..",
            "octo/.",
            "-octo/hello",
            "octo/-hello",
            "octo/hello;rm",
            "octo/$(touch x)",
            "octo/hel`id`lo",
            "octo/hello\n",
            "o c/hello",
        ] {
            let problem = check_repo("repo", bad).unwrap_err();
            assert!(
                problem.contains("not a repository as OWNER/NAME"),
                "{problem}"
            );
        }
    }

    #[test]
    fn hostile_logins_are_refused_and_say_which_parameter() {
        for hostile in [
            "--web",
            "-R",
            "-R other/repo",
            "$(touch x)",
            "a; rm",
            "`id`",
            "a\nb",
        ] {
            let error = issues(IssueQuery {
                assignee: Some(hostile.into()),
                author: Some(hostile.into()),
                ..query()
            })
            .unwrap_err();
            assert_eq!(error.problems().len(), 2, "{error}");
            assert!(error.problems()[0].starts_with("`assignee`:"));
            assert!(error.problems()[1].starts_with("`author`:"));
        }
    }

    #[test]
    fn a_branch_that_could_be_a_flag_or_is_no_branch_is_refused() {
        for hostile in [
            "--web",
            "-R",
            "-R other/repo",
            "$(touch x)",
            "a; rm",
            "a\nb",
            "a..b",
            "",
        ] {
            let error = prs(PRQuery {
                base: Some(hostile.into()),
                limit: 20,
                ..PRQuery::default()
            })
            .unwrap_err();
            assert!(error.problems()[0].starts_with("`base`:"), "{error}");
        }
    }

    #[test]
    fn a_branch_git_allows_is_one_base_word_even_with_shell_characters() {
        // Git allows these names; without a shell they are only names.
        for name in ["`id`", "a;b", "$HOME", "feature/x|y"] {
            let argv = prs(PRQuery {
                base: Some(name.into()),
                limit: 20,
                ..PRQuery::default()
            })
            .unwrap();
            assert_eq!(argv.last().unwrap(), &format!("--base={name}"));
            assert_only_known_flags(&argv);
        }
    }

    #[test]
    fn a_pr_list_passes_labels_author_and_base_as_flag_words() {
        assert_eq!(
            prs(PRQuery {
                repo: Some("octo/hello".into()),
                state: PRState::Merged,
                labels: vec!["bug".into()],
                author: Some("ana".into()),
                base: Some("release/1.0".into()),
                limit: 100,
            })
            .unwrap(),
            [
                "pr",
                "list",
                "--json",
                "number,title,state,baseRefName,headRefName,url",
                "--state=merged",
                "--limit=100",
                "--label=bug",
                "--author=ana",
                "--base=release/1.0",
                "--repo=octo/hello"
            ]
        );
    }

    #[test]
    fn limit_must_be_1_to_100() {
        for bad in [0, 101, u32::MAX] {
            let error = issues(IssueQuery {
                limit: bad,
                ..query()
            })
            .unwrap_err();
            assert_eq!(
                error.problems(),
                [format!("`limit`: {bad} is out of range; send 1 to 100")]
            );
            assert!(
                prs(PRQuery {
                    limit: bad,
                    ..PRQuery::default()
                })
                .is_err()
            );
        }
        assert!(
            issues(IssueQuery {
                limit: 1,
                ..query()
            })
            .is_ok()
        );
        assert!(
            issues(IssueQuery {
                limit: 100,
                ..query()
            })
            .is_ok()
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let error = issues(IssueQuery {
            repo: Some("nope".into()),
            labels: vec!["ok".into(), "bad\n".into()],
            assignee: Some("-x".into()),
            author: None,
            limit: 0,
            state: IssueState::Open,
        })
        .unwrap_err();
        let parameters: Vec<&str> = error
            .problems()
            .iter()
            .map(|p| p.split(':').next().unwrap())
            .collect();
        assert_eq!(parameters, ["`repo`", "`labels`", "`assignee`", "`limit`"]);
        assert!(
            error
                .to_string()
                .starts_with("invalid input (4 problems):\n- `repo`")
        );
    }

    #[test]
    fn a_view_puts_the_number_first_and_the_repo_as_one_word() {
        assert_eq!(
            strings(get_issue(5, None).unwrap()),
            ["issue", "view", "5", "--json", ISSUE_FIELDS]
        );
        assert_eq!(
            strings(get_pr(6, Some("octo/hello")).unwrap()),
            ["pr", "view", "6", "--json", PR_FIELDS, "--repo=octo/hello"]
        );
    }

    #[test]
    fn numbers_must_be_positive() {
        assert_eq!(
            get_issue(0, None).unwrap_err().problems(),
            ["`issue_number`: numbers start at 1, not 0"]
        );
        assert_eq!(
            get_pr(0, None).unwrap_err().problems(),
            ["`pr_number`: numbers start at 1, not 0"]
        );
    }

    #[test]
    fn an_api_request_is_always_a_get() {
        assert_eq!(
            api("repos/octo/hello/issues?per_page=5", &[]).unwrap(),
            [
                "api",
                "--method",
                "GET",
                "repos/octo/hello/issues?per_page=5"
            ]
        );
    }

    #[test]
    fn api_fields_are_raw_fields_so_gh_never_reads_a_file_for_them() {
        let argv = api(
            "search/issues",
            &[
                ("q", "repo:octo/hello is:open"),
                ("per_page", "@/etc/passwd"),
            ],
        )
        .unwrap();
        assert_eq!(
            argv[4..],
            [
                "--raw-field=per_page=@/etc/passwd",
                "--raw-field=q=repo:octo/hello is:open"
            ]
        );
        assert_only_known_flags(&argv);
    }

    #[test]
    fn a_field_value_that_looks_like_a_flag_stays_a_value() {
        let argv = api("user", &[("x", "--method=POST"), ("y", "-X POST")]).unwrap();
        assert_eq!(
            argv[4..],
            ["--raw-field=x=--method=POST", "--raw-field=y=-X POST"]
        );
        assert_eq!(argv[..3], ["api", "--method", "GET"]);
    }

    #[test]
    fn field_names_and_values_are_checked() {
        for (name, value) in [
            ("", "v"),
            ("-X", "POST"),
            ("a=b", "c"),
            ("a b", "c"),
            ("ok", "a\nb"),
        ] {
            let error = api("user", &[(name, value)]).unwrap_err();
            assert!(error.problems()[0].starts_with("`fields"), "{error}");
        }
        assert!(api("user", &[("labels[]", "bug"), ("per_page", "5")]).is_ok());
    }

    #[test]
    fn an_endpoint_must_be_a_relative_rest_path() {
        for good in [
            "user",
            "/user",
            "repos/octo/hello/pulls/6/files",
            "repos/octo/hello/issues?state=closed&per_page=5",
            "search/issues?q=label:bug",
            "repos/octo/hello.js/contents/a%20b",
        ] {
            assert_eq!(check_endpoint(good), Ok(good.to_owned()), "{good}");
        }
        for bad in [
            "",
            "/",
            "--help",
            "-X",
            "--method=POST",
            "https://evil.example/x",
            "http://api.github.com/user",
            "//evil.example/x",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "repos/../../user",
            "repos/octo/hello/..",
            "repos/octo hello",
            "user\n",
            "user\tx",
            "repos/octo/hello#x",
            "graphql",
            "/graphql",
            "GraphQL?query=x",
            "$(touch x)",
            "user; rm",
            "`id`",
        ] {
            let problem = check_endpoint(bad).unwrap_err();
            assert!(problem.starts_with("`endpoint`:"), "{bad}: {problem}");
        }
    }

    #[test]
    fn the_help_flag_as_endpoint_is_refused_with_a_clear_message() {
        let error = api("--help", &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid input: `endpoint`: \"--help\" is not a relative REST path such as \
             `repos/OWNER/NAME/issues` (it starts with `-`, which gh would read as a flag)"
        );
    }

    #[test]
    fn traffic_reads_the_repos_traffic_with_get() {
        assert_eq!(
            strings(traffic(Traffic::Views, "octo/hello", Some(TrafficPeriod::Day)).unwrap()),
            [
                "api",
                "--method",
                "GET",
                "repos/octo/hello/traffic/views",
                "--raw-field=per=day"
            ]
        );
        assert_eq!(
            strings(traffic(Traffic::Clones, "octo/hello", None).unwrap()),
            ["api", "--method", "GET", "repos/octo/hello/traffic/clones"]
        );
        assert!(traffic(Traffic::Views, "../x", None).is_err());
    }

    #[test]
    fn states_are_passed_in_ghs_spelling() {
        for (state, word) in [
            (IssueState::Open, "--state=open"),
            (IssueState::Closed, "--state=closed"),
            (IssueState::All, "--state=all"),
        ] {
            assert_eq!(issues(IssueQuery { state, ..query() }).unwrap()[4], word);
        }
        for (state, word) in [
            (PRState::Open, "--state=open"),
            (PRState::Closed, "--state=closed"),
            (PRState::Merged, "--state=merged"),
            (PRState::All, "--state=all"),
        ] {
            let argv = prs(PRQuery {
                state,
                limit: 1,
                ..PRQuery::default()
            })
            .unwrap();
            assert_eq!(argv[4], word);
        }
    }
}
