//! A fake GitHub API on 127.0.0.1 for the real gh, and the environment that points gh at it.
//!
//! gh, told `GH_HOST=github.localhost`, speaks plain HTTP to `api.github.localhost`; with
//! `HTTP_PROXY` set to this server it sends every request here in absolute form
//! (`POST http://api.github.localhost/graphql HTTP/1.1`). The fake answers the GraphQL
//! operations and REST reads gh really sends for the toolset's commands, over one repository,
//! `octo/hello`, applying the filters it is asked for; it records every request, so tests can
//! say what gh asked. Each connection is answered once and closed.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// The token the tests hand gh; a real token never reaches a test.
pub const TOKEN: &str = "test-token";

/// How long the `slow` endpoint keeps a request waiting for gh to give up, at most.
const SLOW_FOR: Duration = Duration::from_secs(20);

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The request target as sent (absolute form through a proxy).
    pub target: String,
    /// The path, without scheme, host or query.
    pub path: String,
    /// The query string, without `?`.
    pub query: String,
    /// Header names in lower case, with their values.
    pub headers: Vec<(String, String)>,
    /// The body, as text.
    pub body: String,
}

impl Request {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The GraphQL operation name, read from the query text.
    pub fn operation(&self) -> Option<String> {
        let body: Value = serde_json::from_str(&self.body).ok()?;
        operation_name(body["query"].as_str()?)
    }

    /// The GraphQL variables.
    pub fn variables(&self) -> Value {
        serde_json::from_str::<Value>(&self.body)
            .map(|b| b["variables"].clone())
            .unwrap_or(Value::Null)
    }
}

/// The fake server; it stops when dropped.
pub struct FakeGitHub {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    abandoned: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeGitHub {
    /// Starts the fake on a free port of 127.0.0.1.
    pub fn start() -> FakeGitHub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let abandoned = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (requests, abandoned, stop) = (requests.clone(), abandoned.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (requests, abandoned) = (requests.clone(), abandoned.clone());
                    std::thread::spawn(move || serve(stream, &requests, &abandoned));
                }
            })
        };
        FakeGitHub {
            addr,
            requests,
            abandoned,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`, for `HTTP_PROXY`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The GraphQL operations received so far, in order.
    pub fn operations(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter_map(Request::operation)
            .collect()
    }

    /// Waits (up to `within`) until some request has come: gh is running by then. Whether one
    /// came.
    pub fn wait_for_request(&self, within: Duration) -> bool {
        let deadline = std::time::Instant::now() + within;
        while self.requests.lock().unwrap().is_empty() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Waits (up to `within`) until a client hung up on the slow endpoint without an answer;
    /// returns the path it had asked for.
    pub fn wait_for_abandoned(&self, within: Duration) -> Option<String> {
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Some(path) = self.abandoned.lock().unwrap().first() {
                return Some(path.clone());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The environment gh runs in against `fake`, with fresh configuration, cache and state
/// directories under `home` (a new temporary directory per test).
pub fn gh_env(fake: &FakeGitHub, home: &Path) -> Vec<(String, String)> {
    let dir = |name: &str| {
        let path = home.join(name);
        std::fs::create_dir_all(&path).unwrap();
        path.display().to_string()
    };
    vec![
        ("GH_HOST".into(), "github.localhost".into()),
        ("HTTP_PROXY".into(), fake.url()),
        ("HTTPS_PROXY".into(), fake.url()),
        ("NO_PROXY".into(), "no-such-host.invalid".into()),
        ("GH_TOKEN".into(), TOKEN.into()),
        ("GH_TELEMETRY".into(), "false".into()),
        ("GH_PROMPT_DISABLED".into(), "1".into()),
        ("NO_COLOR".into(), "1".into()),
        ("GH_CONFIG_DIR".into(), dir("gh-config")),
        ("XDG_CACHE_HOME".into(), dir("cache")),
        ("XDG_STATE_HOME".into(), dir("state")),
        ("XDG_CONFIG_HOME".into(), dir("config")),
        ("XDG_DATA_HOME".into(), dir("data")),
    ]
}

/// A fresh temporary directory, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!(
            "toolsmith-github-{name}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn serve(mut stream: TcpStream, requests: &Mutex<Vec<Request>>, abandoned: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(request) = read_request(&stream) else {
        return;
    };
    requests.lock().unwrap().push(request.clone());
    if request.path == "/repos/octo/hello/slow" {
        // Answer nothing; note when the client gives up and closes the connection.
        let _ = stream.set_read_timeout(Some(SLOW_FOR));
        let mut byte = [0u8; 1];
        if matches!(stream.read(&mut byte), Ok(0)) {
            abandoned.lock().unwrap().push(request.path.clone());
        }
        return;
    }
    let (status, content_type, body) = respond(&request);
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Write);
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        if headers.len() > 100 {
            return None;
        }
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length.min(1 << 20)];
    reader.read_exact(&mut body).ok()?;
    let without_host = target
        .strip_prefix("http://")
        .map(|rest| rest.find('/').map_or("/", |i| &rest[i..]))
        .unwrap_or(&target);
    let (path, query) = without_host.split_once('?').unwrap_or((without_host, ""));
    Some(Request {
        method,
        path: path.to_owned(),
        query: query.to_owned(),
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn operation_name(query: &str) -> Option<String> {
    let start = query.find("query ")? + "query ".len();
    let name: String = query[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

type Response = (&'static str, &'static str, String);

fn json_response(status: &'static str, value: Value) -> Response {
    (status, "application/json; charset=utf-8", value.to_string())
}

fn respond(request: &Request) -> Response {
    let host = request
        .header("host")
        .unwrap_or_default()
        .split(':')
        .next()
        .unwrap_or_default();
    if host != "api.github.localhost" {
        return json_response(
            "502 Bad Gateway",
            json!({"message": format!("the fake GitHub serves only api.github.localhost, not {host:?}")}),
        );
    }
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/graphql") => json_response("200 OK", graphql(request)),
        ("GET", path) => rest(request, path),
        (method, path) => json_response(
            "405 Method Not Allowed",
            json!({"message": format!("the fake GitHub is read-only: {method} {path}")}),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// The repository's data.

struct Issue {
    number: u64,
    title: &'static str,
    state: &'static str,
    body: &'static str,
    labels: &'static [&'static str],
    assignees: &'static [&'static str],
    author: &'static str,
}

const ISSUES: &[Issue] = &[
    Issue {
        number: 1,
        title: "Crash on start",
        state: "OPEN",
        body: "It crashes when the config is empty.",
        labels: &["bug"],
        assignees: &["ana"],
        author: "ana",
    },
    Issue {
        number: 2,
        title: "Add dark mode",
        state: "OPEN",
        body: "",
        labels: &["enhancement", "good first issue"],
        assignees: &[],
        author: "bob",
    },
    Issue {
        number: 3,
        title: "Typo in README",
        state: "CLOSED",
        body: "teh -> the",
        labels: &["docs"],
        assignees: &["bob"],
        author: "ana",
    },
    Issue {
        number: 5,
        title: "Flaky test",
        state: "OPEN",
        body: "It fails one run in ten.",
        labels: &["bug", "ci"],
        assignees: &["ana", "bob"],
        author: "carol",
    },
];

struct PullRequest {
    number: u64,
    title: &'static str,
    state: &'static str,
    body: &'static str,
    base: &'static str,
    head: &'static str,
    mergeable: &'static str,
    labels: &'static [&'static str],
    author: &'static str,
}

const PULL_REQUESTS: &[PullRequest] = &[
    PullRequest {
        number: 6,
        title: "Speed up parsing",
        state: "OPEN",
        body: "Parses in one pass.",
        base: "main",
        head: "speed",
        mergeable: "MERGEABLE",
        labels: &["performance"],
        author: "ana",
    },
    PullRequest {
        number: 7,
        title: "Release 1.0",
        state: "MERGED",
        body: "",
        base: "release",
        head: "prep-1.0",
        mergeable: "UNKNOWN",
        labels: &[],
        author: "bob",
    },
    PullRequest {
        number: 8,
        title: "Rewrite everything",
        state: "CLOSED",
        body: "Never mind.",
        base: "main",
        head: "rewrite",
        mergeable: "CONFLICTING",
        labels: &["bug"],
        author: "ana",
    },
    PullRequest {
        number: 9,
        title: "Fix the crash",
        state: "OPEN",
        body: "Fixes #1.",
        base: "main",
        head: "fix-crash",
        mergeable: "CONFLICTING",
        labels: &["bug"],
        author: "carol",
    },
];

fn html_url(kind: &str, number: u64) -> String {
    format!("https://github.localhost/octo/hello/{kind}/{number}")
}

fn user(login: &str) -> Value {
    json!({"id": format!("U_{login}"), "login": login, "name": login, "databaseId": login.len()})
}

fn labels(names: &[&str]) -> Value {
    let nodes: Vec<Value> = names
        .iter()
        .map(|name| json!({"id": format!("L_{name}"), "name": name, "description": "", "color": "ededed"}))
        .collect();
    json!({"nodes": nodes, "totalCount": names.len()})
}

fn issue_node(issue: &Issue) -> Value {
    let assignees: Vec<Value> = issue.assignees.iter().map(|a| user(a)).collect();
    json!({
        "__typename": "Issue",
        "id": format!("I_{}", issue.number),
        "number": issue.number,
        "title": issue.title,
        "state": issue.state,
        "body": issue.body,
        "url": html_url("issues", issue.number),
        "labels": labels(issue.labels),
        "assignees": {"nodes": assignees, "totalCount": issue.assignees.len()},
        "author": user(issue.author),
    })
}

fn pr_node(pr: &PullRequest) -> Value {
    json!({
        "__typename": "PullRequest",
        "id": format!("PR_{}", pr.number),
        "number": pr.number,
        "title": pr.title,
        "state": pr.state,
        "body": pr.body,
        "url": html_url("pull", pr.number),
        "baseRefName": pr.base,
        "headRefName": pr.head,
        "mergeable": pr.mergeable,
        "isDraft": false,
        "labels": labels(pr.labels),
        "assignees": {"nodes": [], "totalCount": 0},
        "author": user(pr.author),
    })
}

// ---------------------------------------------------------------------------------------------
// GraphQL.

fn graphql_error(kind: &str, path: &[&str], message: String) -> Value {
    json!({"data": null, "errors": [{"type": kind, "path": path, "message": message}]})
}

fn unknown_repository(owner: &str, name: &str) -> Value {
    json!({
        "data": {"repository": null},
        "errors": [{"type": "NOT_FOUND", "path": ["repository"],
                    "message": format!("Could not resolve to a Repository with the name '{owner}/{name}'.")}]
    })
}

fn graphql(request: &Request) -> Value {
    let variables = request.variables();
    let text = |name: &str| variables[name].as_str().unwrap_or_default().to_owned();
    let limit = variables["limit"].as_u64().unwrap_or(30) as usize;
    let Some(operation) = request.operation() else {
        return graphql_error("PARSE", &[], "no operation name in the query".into());
    };
    let repo_is_known = || text("owner") == "octo" && text("repo") == "hello";
    match operation.as_str() {
        "SearchType_enumValues" => json!({"data": {"SearchType": {"enumValues": [
            {"name": "DISCUSSION"}, {"name": "ISSUE"}, {"name": "ISSUE_ADVANCED"},
            {"name": "REPOSITORY"}, {"name": "USER"}
        ]}}}),
        "IssueList" => {
            if !repo_is_known() {
                return unknown_repository(&text("owner"), &text("repo"));
            }
            let states: Vec<String> = string_list(&variables["states"]);
            let nodes: Vec<Value> = ISSUES
                .iter()
                .rev()
                .filter(|i| states.is_empty() || states.iter().any(|s| s == i.state))
                .filter(|i| {
                    variables["assignee"]
                        .as_str()
                        .is_none_or(|a| i.assignees.contains(&a))
                })
                .filter(|i| variables["author"].as_str().is_none_or(|a| i.author == a))
                .take(limit)
                .map(issue_node)
                .collect();
            json!({"data": {"repository": {"hasIssuesEnabled": true, "issues": {
                "totalCount": nodes.len(), "nodes": nodes,
                "pageInfo": {"hasNextPage": false, "endCursor": null}}}}})
        }
        "PullRequestList" => {
            if !repo_is_known() {
                return unknown_repository(&text("owner"), &text("repo"));
            }
            let states: Vec<String> = string_list(&variables["state"]);
            let nodes: Vec<Value> = PULL_REQUESTS
                .iter()
                .rev()
                .filter(|p| states.is_empty() || states.iter().any(|s| s == p.state))
                .filter(|p| variables["baseBranch"].as_str().is_none_or(|b| p.base == b))
                .filter(|p| variables["headBranch"].as_str().is_none_or(|h| p.head == h))
                .take(limit)
                .map(pr_node)
                .collect();
            json!({"data": {"repository": {"pullRequests": {
                "totalCount": nodes.len(), "nodes": nodes,
                "pageInfo": {"hasNextPage": false, "endCursor": null}}}}})
        }
        "IssueSearch" => {
            if !repo_is_known() {
                return unknown_repository(&text("owner"), &text("repo"));
            }
            let search = Search::parse(&text("query"));
            let nodes: Vec<Value> = ISSUES
                .iter()
                .rev()
                .filter(|i| search.matches_issue(i))
                .take(limit)
                .map(issue_node)
                .collect();
            json!({"data": {
                "repository": {"hasIssuesEnabled": true},
                "search": {"issueCount": nodes.len(), "nodes": nodes,
                           "pageInfo": {"hasNextPage": false, "endCursor": null}}}})
        }
        "PullRequestSearch" => {
            let search = Search::parse(&text("q"));
            let nodes: Vec<Value> = PULL_REQUESTS
                .iter()
                .rev()
                .filter(|p| search.matches_pr(p))
                .take(limit)
                .map(pr_node)
                .collect();
            json!({"data": {"search": {"issueCount": nodes.len(), "nodes": nodes,
                "pageInfo": {"hasNextPage": false, "endCursor": null}}}})
        }
        "IssueByNumber" => {
            if !repo_is_known() {
                return unknown_repository(&text("owner"), &text("repo"));
            }
            let number = variables["number"].as_u64().unwrap_or(0);
            let found = ISSUES
                .iter()
                .find(|i| i.number == number)
                .map(issue_node)
                .or_else(|| {
                    PULL_REQUESTS
                        .iter()
                        .find(|p| p.number == number)
                        .map(pr_node)
                });
            match found {
                Some(node) => {
                    json!({"data": {"repository": {"hasIssuesEnabled": true, "issue": node}}})
                }
                None => json!({
                    "data": {"repository": {"hasIssuesEnabled": true, "issue": null}},
                    "errors": [{"type": "NOT_FOUND", "path": ["repository", "issue"],
                        "message": format!("Could not resolve to an issue or pull request with the number of {number}.")}]
                }),
            }
        }
        "PullRequestByNumber" => {
            if !repo_is_known() {
                return unknown_repository(&text("owner"), &text("repo"));
            }
            let number = variables["pr_number"].as_u64().unwrap_or(0);
            match PULL_REQUESTS.iter().find(|p| p.number == number) {
                Some(pr) => json!({"data": {"repository": {"pullRequest": pr_node(pr)}}}),
                None => json!({
                    "data": {"repository": {"pullRequest": null}},
                    "errors": [{"type": "NOT_FOUND", "path": ["repository", "pullRequest"],
                        "message": format!("Could not resolve to a PullRequest with the number of {number}.")}]
                }),
            }
        }
        other => graphql_error(
            "UNKNOWN_OPERATION",
            &[],
            format!("the fake GitHub does not know the operation {other}"),
        ),
    }
}

fn string_list(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A search query's qualifiers (`label:"good first issue" repo:octo/hello state:open`).
#[derive(Default, Debug)]
struct Search {
    qualifiers: Vec<(String, String)>,
}

impl Search {
    fn parse(query: &str) -> Search {
        let mut qualifiers = Vec::new();
        let mut chars = query.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.peek().is_none() {
                break;
            }
            let key: String = chars.by_ref().take_while(|c| *c != ':').collect();
            let mut value = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                value.extend(chars.by_ref().take_while(|c| *c != '"'));
            } else {
                while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                    value.push(c);
                }
            }
            qualifiers.push((key, value));
        }
        Search { qualifiers }
    }

    fn all(&self, key: &str) -> impl Iterator<Item = &str> {
        self.qualifiers
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn in_repo(&self) -> bool {
        self.all("repo").all(|r| r == "octo/hello")
    }

    fn matches_issue(&self, issue: &Issue) -> bool {
        self.in_repo()
            && self.all("type").all(|t| t == "issue")
            && self.all("label").all(|l| issue.labels.contains(&l))
            && self.all("author").all(|a| issue.author == a)
            && self.all("assignee").all(|a| issue.assignees.contains(&a))
            && self
                .all("state")
                .all(|s| issue.state.eq_ignore_ascii_case(s))
    }

    fn matches_pr(&self, pr: &PullRequest) -> bool {
        self.in_repo()
            && self.all("type").all(|t| t == "pr")
            && self.all("label").all(|l| pr.labels.contains(&l))
            && self.all("author").all(|a| pr.author == a)
            && self.all("base").all(|b| pr.base == b)
            && self.all("state").all(|s| match s {
                "open" => pr.state == "OPEN",
                "closed" => pr.state != "OPEN",
                _ => false,
            })
            && self.all("is").all(|s| pr.state.eq_ignore_ascii_case(s))
    }
}

// ---------------------------------------------------------------------------------------------
// REST.

fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn traffic(kind: &str, per: &str) -> Value {
    let periods = match per {
        "week" => vec![json!({"timestamp": "2026-11-23T00:00:00Z", "count": 10, "uniques": 3})],
        _ => vec![
            json!({"timestamp": "2026-11-30T00:00:00Z", "count": 4, "uniques": 2}),
            json!({"timestamp": "2026-12-01T00:00:00Z", "count": 6, "uniques": 2}),
        ],
    };
    json!({"count": 10, "uniques": 3, kind: periods})
}

fn rest(request: &Request, path: &str) -> Response {
    let query = query_pairs(&request.query);
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    match path {
        "/repos/octo/hello/traffic/views" => {
            json_response("200 OK", traffic("views", param("per").unwrap_or("day")))
        }
        "/repos/octo/hello/traffic/clones" => {
            json_response("200 OK", traffic("clones", param("per").unwrap_or("day")))
        }
        "/repos/octo/hello" => json_response(
            "200 OK",
            json!({"full_name": "octo/hello", "private": false, "default_branch": "main"}),
        ),
        "/repos/octo/hello/issues" => {
            let state = param("state").unwrap_or("open");
            let per_page: usize = param("per_page").and_then(|p| p.parse().ok()).unwrap_or(30);
            let issues: Vec<Value> = ISSUES
                .iter()
                .filter(|i| state == "all" || i.state.eq_ignore_ascii_case(state))
                .filter(|i| param("labels").is_none_or(|l| l.split(',').all(|l| i.labels.contains(&l))))
                .take(per_page)
                .map(|i| json!({"number": i.number, "title": i.title, "state": i.state.to_ascii_lowercase()}))
                .collect();
            json_response("200 OK", Value::Array(issues))
        }
        // Answers with text, not JSON.
        "/repos/octo/hello/readme.txt" => ("200 OK", "text/plain", "Hello, world\n".to_owned()),
        // A broken server that echoes the credential it was given.
        "/repos/octo/leaky" => json_response(
            "401 Unauthorized",
            json!({"message": format!("Bad credentials: {}", request.header("authorization").unwrap_or_default())}),
        ),
        _ => json_response(
            "404 Not Found",
            json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}),
        ),
    }
}
