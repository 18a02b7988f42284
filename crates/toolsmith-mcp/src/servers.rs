//! Where the client finds a server: a program to start over stdio ([`StdioServer`]), a URL
//! to reach over streamable HTTP ([`HttpServer`]), and the `mcpServers` configuration file
//! that Claude Desktop and most MCP clients read ([`read_config`]).
//!
//! Values that may hold secrets (a server's environment, HTTP headers) never appear in
//! `Debug` output or in an error message.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use toolsmith::types::value_kind;

/// An MCP server to connect to.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteServer {
    /// A program started here, spoken to over its stdin and stdout.
    Stdio(StdioServer),
    /// A server reached over streamable HTTP.
    Http(HttpServer),
}

impl RemoteServer {
    /// What errors call the server.
    pub fn name(&self) -> &str {
        match self {
            RemoteServer::Stdio(server) => &server.name,
            RemoteServer::Http(server) => &server.name,
        }
    }
}

impl std::fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteServer::Stdio(server) => server.fmt(f),
            RemoteServer::Http(server) => server.fmt(f),
        }
    }
}

impl From<StdioServer> for RemoteServer {
    fn from(server: StdioServer) -> Self {
        RemoteServer::Stdio(server)
    }
}

impl From<&StdioServer> for RemoteServer {
    fn from(server: &StdioServer) -> Self {
        RemoteServer::Stdio(server.clone())
    }
}

impl From<HttpServer> for RemoteServer {
    fn from(server: HttpServer) -> Self {
        RemoteServer::Http(server)
    }
}

impl From<&HttpServer> for RemoteServer {
    fn from(server: &HttpServer) -> Self {
        RemoteServer::Http(server.clone())
    }
}

impl From<&RemoteServer> for RemoteServer {
    fn from(server: &RemoteServer) -> Self {
        server.clone()
    }
}

/// An MCP server to start over stdio: a program and its arguments, never a shell command line.
#[derive(Clone, PartialEq, Eq)]
pub struct StdioServer {
    /// What errors call the server (`everything`, `filesystem`).
    pub name: String,
    /// The program: a path, or a name looked up on `PATH`.
    pub program: String,
    /// Its arguments, each one word as given.
    pub args: Vec<String>,
    /// Variables set for it, beside the few it inherits (`PATH`, `HOME`, ...).
    pub env: Vec<(String, String)>,
    /// The directory it starts in; this process's own where `None`.
    pub cwd: Option<PathBuf>,
}

impl StdioServer {
    /// The server `name`, started as `program` with `args`.
    pub fn new(
        name: impl Into<String>,
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        StdioServer {
            name: name.into(),
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// The same server, with the variable `key` set to `value`.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The same server, started in `dir`.
    #[must_use]
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }
}

impl std::fmt::Debug for StdioServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioServer")
            .field("name", &self.name)
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &Redacted(&self.env))
            .field("cwd", &self.cwd)
            .finish()
    }
}

/// An MCP server reached over streamable HTTP.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpServer {
    /// What errors call the server.
    pub name: String,
    /// Its MCP endpoint (`https://example.com/mcp`). Redirects are not followed: a request
    /// carries the headers below, which must not reach another place than the one named here.
    pub url: String,
    /// Headers sent with every request (`Authorization: Bearer ...`).
    pub headers: Vec<(String, String)>,
}

impl HttpServer {
    /// The server `name` at `url`.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        HttpServer {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// The same server, with the header `name: value` on every request.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("headers", &Redacted(&self.headers))
            .finish()
    }
}

/// Names with their values hidden.
struct Redacted<'a>(&'a [(String, String)]);

impl std::fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(key, _)| (key, "<redacted>")))
            .finish()
    }
}

/// The largest configuration file read, in bytes.
const CONFIG_BYTES: u64 = 1 << 20;

/// A configuration file that cannot be used, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file, where one was read.
    pub file: Option<PathBuf>,
    /// The server entry at fault, where one is.
    pub server: Option<String>,
    /// What is wrong, in words.
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if let Some(server) = &self.server {
            write!(f, "the server `{server}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Reads the servers of an `mcpServers` configuration file, as Claude Desktop and most MCP
/// clients write it:
///
/// ```json
/// {
///   "mcpServers": {
///     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
///     "search": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${SEARCH_TOKEN}" } }
///   }
/// }
/// ```
///
/// An entry with `command` (with optional `args`, `env` and `cwd`) is a [`StdioServer`]; one
/// with `url` (with optional `headers`) an [`HttpServer`]. `type` may say which (`stdio`,
/// `http` or `streamable-http`); the legacy `sse` transport is refused by name. An entry with
/// `"disabled": true` is skipped, and keys other clients keep there (`autoApprove`, ...) are
/// left alone. `${VAR}` in any string is this process's variable `VAR` (`${VAR:-fallback}`
/// where it may be unset), so secrets can stay out of the file.
///
/// # Errors
///
/// When the file cannot be read, is larger than a MiB, is not JSON, or an entry is not one of
/// the shapes above or names a variable that is not set; the error names the file, the
/// server and the key.
pub fn read_config(path: &Path) -> Result<Vec<RemoteServer>, ConfigError> {
    let in_file = |message: String| ConfigError {
        file: Some(path.to_owned()),
        server: None,
        message,
    };
    let file =
        std::fs::File::open(path).map_err(|error| in_file(format!("cannot open: {error}")))?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, CONFIG_BYTES + 1), &mut text)
        .map_err(|error| in_file(format!("cannot read: {error}")))?;
    if text.len() as u64 > CONFIG_BYTES {
        return Err(in_file(format!(
            "is larger than {CONFIG_BYTES} bytes, too large for a configuration"
        )));
    }
    parse_config(&text, |name| std::env::var(name).ok()).map_err(|mut error| {
        error.file = Some(path.to_owned());
        error
    })
}

/// The servers of an `mcpServers` configuration given as text, its `${VAR}`s looked up with
/// `var`. See [`read_config`].
///
/// # Errors
///
/// As [`read_config`], without a file to name.
pub fn parse_config(
    text: &str,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Vec<RemoteServer>, ConfigError> {
    let whole = |message: String| ConfigError {
        file: None,
        server: None,
        message,
    };
    let document: Value =
        serde_json::from_str(text).map_err(|error| whole(format!("is not JSON: {error}")))?;
    let Some(servers) = document.get("mcpServers") else {
        return Err(whole(
            "has no `mcpServers` object (the servers go in `{\"mcpServers\": {\"name\": {...}}}`)"
                .to_owned(),
        ));
    };
    let Value::Object(servers) = servers else {
        return Err(whole(format!(
            "has `mcpServers` as {}, where an object of servers by name belongs",
            value_kind(servers)
        )));
    };
    let mut read = Vec::with_capacity(servers.len());
    for (name, value) in servers {
        let entry = Entry { name, var: &var };
        if let Some(server) = entry.read(entry_object(name, value)?)? {
            read.push(server);
        }
    }
    Ok(read)
}

fn entry_object<'a>(name: &str, value: &'a Value) -> Result<&'a Map<String, Value>, ConfigError> {
    value.as_object().ok_or_else(|| ConfigError {
        file: None,
        server: Some(name.to_owned()),
        message: format!(
            "is {}, where an object with `command` or `url` belongs",
            value_kind(value)
        ),
    })
}

/// One entry of `mcpServers`, being read.
struct Entry<'a, F> {
    name: &'a str,
    var: &'a F,
}

impl<F: Fn(&str) -> Option<String>> Entry<'_, F> {
    fn error(&self, message: String) -> ConfigError {
        ConfigError {
            file: None,
            server: Some(self.name.to_owned()),
            message,
        }
    }

    fn read(&self, entry: &Map<String, Value>) -> Result<Option<RemoteServer>, ConfigError> {
        match entry.get("disabled") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => return Ok(None),
            Some(other) => {
                return Err(self.error(format!(
                    "has `disabled` as {}, where `true` or `false` belongs",
                    value_kind(other)
                )));
            }
        }
        let transport = match entry.get("type") {
            None => None,
            Some(Value::String(transport)) => Some(transport.as_str()),
            Some(other) => {
                return Err(self.error(format!(
                    "has `type` as {}, where `stdio` or `http` belongs",
                    value_kind(other)
                )));
            }
        };
        let stdio = match (
            transport,
            entry.contains_key("command"),
            entry.contains_key("url"),
        ) {
            (Some("sse"), ..) => {
                return Err(self.error(
                    "uses the legacy HTTP+SSE transport (`\"type\": \"sse\"`), which toolsmith \
                     does not speak; most servers also serve streamable HTTP (`\"type\": \"http\"`)"
                        .to_owned(),
                ));
            }
            (Some("stdio"), ..) => true,
            (Some("http" | "streamable-http" | "streamableHttp"), ..) => false,
            (Some(other), ..) => {
                return Err(self.error(format!(
                    "has the transport `{other}`, where `stdio`, `http` or `streamable-http` belongs"
                )));
            }
            (None, true, true) => {
                return Err(self.error(
                    "has both `command` and `url`: give one, or say which with `type`".to_owned(),
                ));
            }
            (None, true, false) => true,
            (None, false, true) => false,
            (None, false, false) => {
                return Err(self.error(
                    "has neither `command` (a program to start) nor `url` (a server to reach)"
                        .to_owned(),
                ));
            }
        };
        let server = if stdio {
            let mut server = StdioServer::new(
                self.name,
                self.string(entry, "command")?.unwrap_or_default(),
                self.strings(entry, "args")?,
            );
            if server.program.is_empty() {
                return Err(self.error("has no `command` to start".to_owned()));
            }
            server.env = self.pairs(entry, "env")?;
            server.cwd = self.string(entry, "cwd")?.map(PathBuf::from);
            RemoteServer::Stdio(server)
        } else {
            let url = self.string(entry, "url")?.unwrap_or_default();
            if url.is_empty() {
                return Err(self.error("has no `url` to reach".to_owned()));
            }
            let mut server = HttpServer::new(self.name, url);
            server.headers = self.pairs(entry, "headers")?;
            RemoteServer::Http(server)
        };
        Ok(Some(server))
    }

    fn string(&self, entry: &Map<String, Value>, key: &str) -> Result<Option<String>, ConfigError> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => self.expand(text, key).map(Some),
            Some(other) => Err(self.error(format!(
                "has `{key}` as {}, where a string belongs",
                value_kind(other)
            ))),
        }
    }

    fn strings(&self, entry: &Map<String, Value>, key: &str) -> Result<Vec<String>, ConfigError> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(at, item)| match item {
                    Value::String(text) => self.expand(text, &format!("{key}[{at}]")),
                    other => Err(self.error(format!(
                        "has `{key}[{at}]` as {}, where a string belongs",
                        value_kind(other)
                    ))),
                })
                .collect(),
            Some(other) => Err(self.error(format!(
                "has `{key}` as {}, where an array of strings belongs",
                value_kind(other)
            ))),
        }
    }

    fn pairs(
        &self,
        entry: &Map<String, Value>,
        key: &str,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(pairs)) => pairs
                .iter()
                .map(|(name, value)| match value {
                    Value::String(text) => {
                        Ok((name.clone(), self.expand(text, &format!("{key}.{name}"))?))
                    }
                    // The value is never repeated: it may be a secret.
                    other => Err(self.error(format!(
                        "has `{key}.{name}` as {}, where a string belongs",
                        value_kind(other)
                    ))),
                })
                .collect(),
            Some(other) => Err(self.error(format!(
                "has `{key}` as {}, where an object of strings belongs",
                value_kind(other)
            ))),
        }
    }

    /// `text` with every `${VAR}` (or `${VAR:-fallback}`) replaced.
    fn expand(&self, text: &str, key: &str) -> Result<String, ConfigError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(self.error(format!(
                    "has `{key}` with a `${{` that is never closed by `}}`"
                )));
            };
            let inner = &after[..end];
            let (name, fallback) = match inner.split_once(":-") {
                Some((name, fallback)) => (name, Some(fallback)),
                None => (inner, None),
            };
            let valid = !name.is_empty()
                && name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric())
                && !name.as_bytes()[0].is_ascii_digit();
            if !valid {
                return Err(self.error(format!(
                    "has `{key}` naming the variable `{name}`, which is no variable name \
                     (letters, digits and `_`)"
                )));
            }
            match ((self.var)(name), fallback) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(fallback)) => out.push_str(fallback),
                (None, None) => {
                    return Err(self.error(format!(
                        "has `{key}` naming the variable `{name}`, which is not set \
                         (set it, or write `${{{name}:-fallback}}`)"
                    )));
                }
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".to_owned()),
            "HOME" => Some("/home/me".to_owned()),
            _ => None,
        }
    }

    #[test]
    fn the_claude_desktop_shapes_read_as_servers() {
        let servers = parse_config(
            r#"{"mcpServers": {
                "files": {"command": "npx", "args": ["-y", "pkg", "${HOME}/notes"],
                          "env": {"KEY": "${TOKEN}"}, "autoApprove": ["read"]},
                "off": {"command": "nothing", "disabled": true},
                "search": {"type": "http", "url": "https://example.com/mcp",
                           "headers": {"Authorization": "Bearer ${TOKEN}"}},
                "local": {"url": "http://127.0.0.1:${PORT:-8080}/mcp"}
            }}"#,
            vars,
        )
        .unwrap();
        let names: Vec<&str> = servers.iter().map(RemoteServer::name).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        let files = servers.iter().find(|s| s.name() == "files").unwrap();
        assert_eq!(
            *files,
            RemoteServer::Stdio(
                StdioServer::new("files", "npx", ["-y", "pkg", "/home/me/notes"])
                    .with_env("KEY", "s3cret")
            )
        );
        let search = servers.iter().find(|s| s.name() == "search").unwrap();
        assert_eq!(
            *search,
            RemoteServer::Http(
                HttpServer::new("search", "https://example.com/mcp")
                    .with_header("Authorization", "Bearer s3cret")
            )
        );
        let local = servers.iter().find(|s| s.name() == "local").unwrap();
        assert_eq!(
            *local,
            RemoteServer::Http(HttpServer::new("local", "http://127.0.0.1:8080/mcp"))
        );
        // Secrets stay out of debug output.
        let shown = format!("{servers:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("Authorization"), "{shown}");
    }

    #[test]
    fn each_mistake_names_its_server_and_key() {
        let cases = [
            (r"[]", "no `mcpServers`"),
            (r#"{"mcpServers": []}"#, "`mcpServers` as an array"),
            (r#"{"mcpServers": {"a": 3}}"#, "`a`: is a number"),
            (r#"{"mcpServers": {"a": {}}}"#, "neither `command`"),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "y"}}}"#,
                "both `command` and `url`",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "args": "-v"}}}"#,
                "`args` as a string",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "args": [1]}}}"#,
                "`args[0]` as a number",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}"#,
                "`env.K` as a number",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "sse", "url": "y"}}}"#,
                "legacy HTTP+SSE",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "ws", "url": "y"}}}"#,
                "the transport `ws`",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "${NOPE}"}}}"#,
                "`NOPE`, which is not set",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "${NOPE"}}}"#,
                "never closed",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "${1X}"}}}"#,
                "no variable name",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "http", "command": "x"}}}"#,
                "no `url`",
            ),
            (r#"{"mcpServers": {"a": {"command": ""}}}"#, "no `command`"),
            (r"{", "is not JSON"),
        ];
        for (text, expected) in cases {
            let error = parse_config(text, vars).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn a_file_is_named_in_its_errors_and_bounded() {
        let dir = std::env::temp_dir().join(format!("toolsmith-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"mcpServers": {"a": {"command": 1}}}"#).unwrap();
        let error = read_config(&bad).unwrap_err().to_string();
        assert!(
            error.starts_with(&bad.display().to_string()) && error.contains("`command`"),
            "{error}"
        );
        let big = dir.join("big.json");
        std::fs::write(&big, vec![b' '; (CONFIG_BYTES + 10) as usize]).unwrap();
        let error = read_config(&big).unwrap_err().to_string();
        assert!(error.contains("too large"), "{error}");
        let error = read_config(&dir.join("missing.json"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("cannot open"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
