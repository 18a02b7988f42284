//! gh's JSON as text for a model, in the reference's style: `Found 2 issue(s):`, `#1: Title
//! (OPEN)`, `Issue #5: ...`, `Pull Request #6: ...`, `Views: 10 total (3 unique)`.
//!
//! Each function reads the fields it shows into a small serde type, so output without them is
//! an error naming what is missing rather than a blank in the text.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Deserialize)]
struct Label {
    name: String,
}

#[derive(Deserialize)]
struct User {
    login: String,
}

#[derive(Deserialize)]
struct IssueSummary {
    number: u64,
    title: String,
    state: String,
    #[serde(default)]
    labels: Vec<Label>,
    #[serde(default)]
    assignees: Vec<User>,
    url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PRSummary {
    number: u64,
    title: String,
    state: String,
    base_ref_name: String,
    head_ref_name: String,
    url: String,
}

#[derive(Deserialize)]
struct Issue {
    number: u64,
    title: String,
    state: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    labels: Vec<Label>,
    #[serde(default)]
    assignees: Vec<User>,
    url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PR {
    number: u64,
    title: String,
    state: String,
    #[serde(default)]
    body: Option<String>,
    base_ref_name: String,
    head_ref_name: String,
    mergeable: String,
    url: String,
}

#[derive(Deserialize)]
struct Period {
    timestamp: String,
    count: u64,
    uniques: u64,
}

#[derive(Deserialize)]
struct TrafficReport {
    count: u64,
    uniques: u64,
    #[serde(default, alias = "views", alias = "clones")]
    periods: Vec<Period>,
}

fn read<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| e.to_string())
}

fn names(labels: &[Label]) -> String {
    labels
        .iter()
        .map(|l| l.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn logins(users: &[User]) -> String {
    users
        .iter()
        .map(|u| u.login.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn body_text(body: Option<&str>) -> &str {
    match body {
        Some(body) if !body.trim().is_empty() => body,
        _ => "No description provided",
    }
}

/// `Found N issue(s):` and one entry per issue, or `No issues found`.
pub(crate) fn issue_list(value: &Value) -> Result<String, String> {
    let issues: Vec<IssueSummary> = read(value)?;
    if issues.is_empty() {
        return Ok("No issues found".to_owned());
    }
    let mut lines = vec![format!("Found {} issue(s):", issues.len())];
    for issue in &issues {
        lines.push(format!(
            "#{}: {} ({})",
            issue.number, issue.title, issue.state
        ));
        if !issue.labels.is_empty() {
            lines.push(format!("  Labels: {}", names(&issue.labels)));
        }
        if !issue.assignees.is_empty() {
            lines.push(format!("  Assignees: {}", logins(&issue.assignees)));
        }
        lines.push(format!("  URL: {}", issue.url));
    }
    Ok(lines.join("\n"))
}

/// `Found N pull request(s):` and one entry per pull request, or `No pull requests found`.
pub(crate) fn pr_list(value: &Value) -> Result<String, String> {
    let prs: Vec<PRSummary> = read(value)?;
    if prs.is_empty() {
        return Ok("No pull requests found".to_owned());
    }
    let mut lines = vec![format!("Found {} pull request(s):", prs.len())];
    for pr in &prs {
        lines.push(format!("#{}: {} ({})", pr.number, pr.title, pr.state));
        lines.push(format!("  {} → {}", pr.head_ref_name, pr.base_ref_name));
        lines.push(format!("  URL: {}", pr.url));
    }
    Ok(lines.join("\n"))
}

/// `Issue #N: Title`, its state, labels, assignees, URL and body.
pub(crate) fn issue(value: &Value) -> Result<String, String> {
    let issue: Issue = read(value)?;
    let mut lines = vec![
        format!("Issue #{}: {}", issue.number, issue.title),
        format!("State: {}", issue.state),
    ];
    if !issue.labels.is_empty() {
        lines.push(format!("Labels: {}", names(&issue.labels)));
    }
    if !issue.assignees.is_empty() {
        lines.push(format!("Assignees: {}", logins(&issue.assignees)));
    }
    lines.push(format!("URL: {}", issue.url));
    lines.push(String::new());
    lines.push("Body:".to_owned());
    lines.push(body_text(issue.body.as_deref()).to_owned());
    Ok(lines.join("\n"))
}

/// `Pull Request #N: Title`, its state, branches, mergeability as gh reports it, URL and body.
pub(crate) fn pr(value: &Value) -> Result<String, String> {
    let pr: PR = read(value)?;
    let lines = [
        format!("Pull Request #{}: {}", pr.number, pr.title),
        format!("State: {}", pr.state),
        format!("Branch: {} → {}", pr.head_ref_name, pr.base_ref_name),
        format!("Mergeable: {}", pr.mergeable),
        format!("URL: {}", pr.url),
        String::new(),
        "Body:".to_owned(),
        body_text(pr.body.as_deref()).to_owned(),
    ];
    Ok(lines.join("\n"))
}

/// `Views: N total (M unique)` (or `Clones:`), then one line per period.
pub(crate) fn traffic(heading: &str, value: &Value) -> Result<String, String> {
    let report: TrafficReport = read(value)?;
    let mut lines = vec![format!(
        "{heading}: {} total ({} unique)",
        report.count, report.uniques
    )];
    for period in &report.periods {
        lines.push(format!(
            "  {}: {} ({} unique)",
            period.timestamp, period.count, period.uniques
        ));
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn an_issue_list_shows_each_issue_with_labels_assignees_and_url() {
        let value = json!([
            {"number": 1, "title": "Crash on start", "state": "OPEN",
             "labels": [{"name": "bug"}, {"name": "p1"}], "assignees": [{"login": "ana"}],
             "url": "https://github.com/o/r/issues/1"},
            {"number": 2, "title": "Docs", "state": "OPEN", "labels": [], "assignees": [],
             "url": "https://github.com/o/r/issues/2"}
        ]);
        assert_eq!(
            issue_list(&value).unwrap(),
            "Found 2 issue(s):\n\
             #1: Crash on start (OPEN)\n  Labels: bug, p1\n  Assignees: ana\n  URL: https://github.com/o/r/issues/1\n\
             #2: Docs (OPEN)\n  URL: https://github.com/o/r/issues/2"
        );
    }

    #[test]
    fn empty_lists_say_nothing_was_found() {
        assert_eq!(issue_list(&json!([])).unwrap(), "No issues found");
        assert_eq!(pr_list(&json!([])).unwrap(), "No pull requests found");
    }

    #[test]
    fn a_pr_list_shows_the_branch_arrow() {
        let value = json!([{"number": 6, "title": "Faster", "state": "MERGED",
            "baseRefName": "main", "headRefName": "speed", "url": "u"}]);
        assert_eq!(
            pr_list(&value).unwrap(),
            "Found 1 pull request(s):\n#6: Faster (MERGED)\n  speed → main\n  URL: u"
        );
    }

    #[test]
    fn an_issue_shows_its_body_or_says_there_is_none() {
        let value = json!({"number": 5, "title": "T", "state": "CLOSED", "body": "",
            "labels": [], "assignees": [], "url": "u"});
        assert_eq!(
            issue(&value).unwrap(),
            "Issue #5: T\nState: CLOSED\nURL: u\n\nBody:\nNo description provided"
        );
    }

    #[test]
    fn a_pr_reports_mergeability_as_gh_gives_it() {
        for mergeable in ["MERGEABLE", "CONFLICTING", "UNKNOWN"] {
            let value = json!({"number": 6, "title": "T", "state": "OPEN", "body": "b",
                "baseRefName": "main", "headRefName": "f", "mergeable": mergeable, "url": "u"});
            assert!(
                pr(&value)
                    .unwrap()
                    .contains(&format!("Branch: f → main\nMergeable: {mergeable}\n"))
            );
        }
    }

    #[test]
    fn traffic_shows_totals_and_each_period() {
        let value = json!({"count": 10, "uniques": 3, "views": [
            {"timestamp": "2026-11-30T00:00:00Z", "count": 4, "uniques": 2},
            {"timestamp": "2026-12-01T00:00:00Z", "count": 6, "uniques": 1}]});
        assert_eq!(
            traffic("Views", &value).unwrap(),
            "Views: 10 total (3 unique)\n  2026-11-30T00:00:00Z: 4 (2 unique)\n  2026-12-01T00:00:00Z: 6 (1 unique)"
        );
    }

    #[test]
    fn output_without_the_fields_shown_is_an_error_naming_them() {
        let error = issue(&json!({"number": 5})).unwrap_err();
        assert!(error.contains("missing field `title`"), "{error}");
        assert!(issue_list(&json!({"not": "a list"})).is_err());
    }
}
