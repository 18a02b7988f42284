//! `--mcp 'CMD ARG...'`: the tools of MCP servers beside the linked ones, for `list`, `schema`,
//! `call` and `mcp` (a gateway: the servers' tools served again, coerced and checked in front
//! of each).
//!
//! Each command line is split into words as a shell would split them (quotes, backslashes) but
//! without a shell: no variables, no globs, no redirections; the first word is the program.
//! The servers are started and served on a runtime of their own that lives as long as the
//! command, and their tools are added to the registry under their own names, or under
//! `SERVER_NAME` when a name is taken (or `--mcp-prefix` asks for it).

use std::sync::Arc;

use clap::Args;
use toolsmith::{Registry, Tool};
use toolsmith_mcp::{McpClient, StdioServer};

use crate::error::UsageError;

/// The MCP servers whose tools a command works on beside the linked ones.
#[derive(Debug, Args)]
pub struct Upstreams {
    /// Also the tools of the MCP server this command line starts (split into words without a
    /// shell: `--mcp 'npx -y @modelcontextprotocol/server-everything'`). Repeat it for more
    /// servers; a tool name two of them share is a usage error.
    #[arg(long = "mcp", value_name = "'CMD ARG...'", value_parser = command_line)]
    servers: Vec<Vec<String>>,
    /// Put each `--mcp` server's name before its tools' (`everything_get-sum`). Without it, only
    /// the tools of a server that has a name taken already get it, all of them.
    #[arg(long = "mcp-prefix", requires = "servers")]
    always_prefix: bool,
}

/// The servers started for a command, and the runtime their connections live on; dropping it
/// ends them.
pub struct Connected {
    /// The linked tools and the servers' tools.
    pub registry: Registry,
    /// A line for stderr for each liberty taken reading a server's tool schema.
    pub warnings: Vec<String>,
    /// Held so the connections live: the runtime serving them, and the clients.
    _clients: Vec<McpClient>,
    _runtime: Option<tokio::runtime::Runtime>,
}

impl Upstreams {
    /// Whether any server was asked for.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// `linked` and the tools of every server asked for.
    pub fn connect(&self, linked: &Registry) -> Result<Connected, UsageError> {
        if self.servers.is_empty() {
            return Ok(Connected {
                registry: linked.clone(),
                warnings: Vec::new(),
                _clients: Vec::new(),
                _runtime: None,
            });
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolsmith-mcp-client")
            .enable_all()
            .build()
            .map_err(|error| UsageError::Upstream(format!("cannot start a runtime: {error}")))?;
        let mut registry = linked.clone();
        let mut warnings = Vec::new();
        let mut clients = Vec::new();
        for (index, words) in self.servers.iter().enumerate() {
            let server = stdio_server(index, words);
            let (client, tools) = runtime
                .block_on(async {
                    let client = McpClient::connect(&server).await?;
                    let tools = client.tools().await?;
                    Ok::<_, toolsmith_mcp::ClientError>((client, tools))
                })
                .map_err(|error| UsageError::Upstream(error.to_string()))?;
            let mut own = Registry::new();
            for tool in tools {
                for warning in tool.import_warnings() {
                    warnings.push(format!(
                        "toolsmith: warning: `{}` tool `{}`: {warning}",
                        server.name,
                        tool.name()
                    ));
                }
                let name = tool.name().to_owned();
                own.add(Arc::new(tool)).map_err(|error| {
                    UsageError::Upstream(format!(
                        "the MCP server `{}` lists the tool `{name}` twice: {error}",
                        server.name
                    ))
                })?;
            }
            // Under the server's name when asked, or when one of its names is taken already:
            // then every tool of it, so that its tools keep one spelling.
            let taken = own.names().any(|name| registry.entry(name).is_some());
            if self.always_prefix || taken {
                own = own
                    .prefixed(&prefix(&server.name))
                    .map_err(|error| UsageError::Upstream(error.to_string()))?;
            }
            let source = format!("the MCP server `{}`", server.name);
            let tools = own.iter().map(|entry| Arc::clone(entry.tool())).collect();
            registry
                .add_from(None, &source, tools)
                .map_err(|error| UsageError::Upstream(error.to_string()))?;
            clients.push(client);
        }
        Ok(Connected {
            registry,
            warnings,
            _clients: clients,
            _runtime: Some(runtime),
        })
    }
}

impl Drop for Connected {
    fn drop(&mut self) {
        // The clients first, while their runtime still runs; then the runtime, without waiting
        // for servers that take their time to leave (they are killed).
        self._clients.clear();
        if let Some(runtime) = self._runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The server started by `words`, named after its program (and its place, from the second on).
fn stdio_server(index: usize, words: &[String]) -> StdioServer {
    let program = words.first().cloned().unwrap_or_default();
    let stem = std::path::Path::new(&program)
        .file_stem()
        .map_or_else(|| program.clone(), |s| s.to_string_lossy().into_owned());
    let name = if index == 0 {
        stem
    } else {
        format!("{stem}#{}", index + 1)
    };
    StdioServer::new(name, program, words.iter().skip(1).cloned())
}

/// A server's name as a tool-name prefix: its letters, digits, `_` and `-`.
fn prefix(server: &str) -> String {
    server
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .collect()
}

/// A command line as words, split without a shell.
fn command_line(text: &str) -> Result<Vec<String>, String> {
    let words = shlex::split(text)
        .ok_or_else(|| format!("`{text}` is not a command line: a quote is not closed"))?;
    if words.is_empty() {
        return Err("the command line is empty".to_owned());
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_command_line_is_split_without_a_shell() {
        assert_eq!(
            command_line(r#"node "my server.js" --root '$HOME' *.json"#).unwrap(),
            ["node", "my server.js", "--root", "$HOME", "*.json"]
        );
        assert!(command_line("node 'unclosed").is_err());
        assert!(command_line("   ").is_err());
    }

    #[test]
    fn servers_are_named_after_their_program() {
        let words = |line: &str| command_line(line).unwrap();
        assert_eq!(stdio_server(0, &words("/usr/bin/node x.js")).name, "node");
        assert_eq!(stdio_server(1, &words("node y.js")).name, "node#2");
        assert_eq!(stdio_server(0, &words("node y.js")).args, ["y.js"]);
        assert_eq!(prefix("node#2"), "node2");
    }
}
