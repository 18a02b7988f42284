//! `--mcp 'CMD ARG...'`, `--mcp-url URL` and `--mcp-config FILE`: the tools of MCP servers
//! beside the linked ones, for `list`, `schema`, `call`, `agent` and `mcp` (a gateway: the
//! servers' tools served again, coerced and checked in front of each).
//!
//! Each command line is split into words as a shell would split them (quotes, backslashes) but
//! without a shell: no variables, no globs, no redirections; the first word is the program.
//! A configuration file holds `mcpServers` entries as Claude Desktop writes them
//! ([`toolsmith_mcp::read_config`]). The servers are connected on a runtime of their own that
//! lives as long as the command, and their tools are added to the registry under their own
//! names, or under `SERVER_NAME` when a name is taken (or `--mcp-prefix` asks for it).

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use toolsmith::{Registry, Tool};
use toolsmith_mcp::{HttpServer, ListChanges, McpClient, RemoteServer, RemoteTool, StdioServer};

use crate::error::UsageError;

/// The MCP servers whose tools a command works on beside the linked ones.
#[derive(Debug, Args)]
pub struct Upstreams {
    /// Also the tools of the MCP server this command line starts (split into words without a
    /// shell: `--mcp 'npx -y @modelcontextprotocol/server-everything'`). Repeat it for more
    /// servers; a tool name two of them share is a usage error.
    #[arg(long = "mcp", value_name = "'CMD ARG...'", value_parser = command_line,
          group = "upstream")]
    servers: Vec<Vec<String>>,
    /// Also the tools of the MCP server at this streamable HTTP URL (repeatable).
    #[arg(long = "mcp-url", value_name = "URL", value_parser = http_url, group = "upstream")]
    urls: Vec<String>,
    /// A header sent to every `--mcp-url` server (`'Authorization: Bearer TOKEN'`;
    /// repeatable). A command line is visible to other users of the machine: keep tokens in
    /// a `--mcp-config` file, as `${VARIABLE}`s.
    #[arg(long = "mcp-header", value_name = "'NAME: VALUE'", requires = "urls",
          value_parser = header)]
    headers: Vec<(String, String)>,
    /// Also the tools of every server in this file's `mcpServers` (as Claude Desktop writes
    /// it: `command`, `args`, `env`, or `url`, `headers`; `${VARIABLE}`s are read from the
    /// environment). Repeatable.
    #[arg(long = "mcp-config", value_name = "FILE", group = "upstream")]
    configs: Vec<PathBuf>,
    /// Put each MCP server's name before its tools' (`everything_get-sum`). Without it, only
    /// the tools of a server that has a name taken already get it, all of them.
    #[arg(long = "mcp-prefix", requires = "upstream")]
    always_prefix: bool,
}

/// The servers started for a command, and the runtime their connections live on; dropping it
/// ends them.
pub struct Connected {
    /// The linked tools and the servers' tools.
    pub registry: Registry,
    /// A line for stderr for each liberty taken reading a server's tool schema.
    pub warnings: Vec<String>,
    /// What a later change of a server's tools is composed from.
    composition: Composition,
    /// Each server's tools as listed.
    listed: Vec<(String, Vec<Arc<RemoteTool>>)>,
    /// Each server's changes, heard from before its tools were listed.
    changes: Vec<ListChanges>,
    /// Held so the connections live: the clients, and the runtime serving them.
    clients: Vec<McpClient>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// How the registry is made: the linked tools, then each server's (by name, in order).
#[derive(Clone)]
struct Composition {
    linked: Registry,
    always_prefix: bool,
}

impl Composition {
    /// The registry of the linked tools and `servers`' (each named, with its tools); and a
    /// warning line for each liberty taken reading a tool's schema.
    fn compose(
        &self,
        servers: &[(String, Vec<Arc<RemoteTool>>)],
    ) -> Result<(Registry, Vec<String>), String> {
        let mut registry = self.linked.clone();
        let mut warnings = Vec::new();
        for (server, tools) in servers {
            let mut own = Registry::new();
            for tool in tools {
                for warning in tool.import_warnings() {
                    warnings.push(format!(
                        "toolsmith: warning: `{server}` tool `{}`: {warning}",
                        tool.name()
                    ));
                }
                let name = tool.name().to_owned();
                own.add(Arc::clone(tool) as Arc<dyn Tool>)
                    .map_err(|error| {
                        format!("the MCP server `{server}` lists the tool `{name}` twice: {error}")
                    })?;
            }
            // Under the server's name when asked, or when one of its names is taken already:
            // then every tool of it, so that its tools keep one spelling.
            let taken = own.names().any(|name| registry.entry(name).is_some());
            if self.always_prefix || taken {
                own = own
                    .prefixed(&prefix(server))
                    .map_err(|error| error.to_string())?;
            }
            let source = format!("the MCP server `{server}`");
            let tools = own.iter().map(|entry| Arc::clone(entry.tool())).collect();
            registry
                .add_from(None, &source, tools)
                .map_err(|error| error.to_string())?;
        }
        Ok((registry, warnings))
    }
}

/// Each change of a server's tools, as the registry composed anew (see [`Connected::follow`]).
pub struct Changes {
    heard: tokio::sync::mpsc::Receiver<usize>,
    composition: Composition,
    clients: Vec<McpClient>,
    /// Each server's tools as last listed.
    listed: Vec<(String, Vec<Arc<RemoteTool>>)>,
}

impl Changes {
    /// Waits for a server to say its tools changed (or to be connected again), lists its tools
    /// again and composes the registry anew: the registry, with a line for each server whose
    /// tools changed; `None` once every connection is gone.
    ///
    /// # Errors
    /// When the server's tools cannot be listed, or no longer compose (a name now taken twice);
    /// the caller keeps the tools it has.
    pub async fn next(&mut self) -> Option<Result<(Registry, String), String>> {
        let first = self.heard.recv().await?;
        let mut changed = vec![first];
        // Changes heard meanwhile are taken at once: each server is listed once.
        while let Ok(index) = self.heard.try_recv() {
            if !changed.contains(&index) {
                changed.push(index);
            }
        }
        let mut said = Vec::new();
        let changed_names: Vec<String> = changed
            .iter()
            .map(|&index| self.clients[index].name().to_owned())
            .collect();
        for index in changed {
            let client = &self.clients[index];
            let tools = match client.tools().await {
                Ok(tools) => tools,
                Err(error) => return Some(Err(error.to_string())),
            };
            said.push(format!(
                "the MCP server `{}` now lists {} tools",
                client.name(),
                tools.len()
            ));
            self.listed[index].1 = tools.into_iter().map(Arc::new).collect();
        }
        Some(
            self.composition
                .compose(&self.listed)
                .map(|(registry, warnings)| {
                    // The warnings of the servers listed anew; the others' were said before.
                    for warning in warnings {
                        let warning = warning.trim_start_matches("toolsmith: warning: ");
                        if changed_names
                            .iter()
                            .any(|name| warning.starts_with(&format!("`{name}` ")))
                        {
                            tracing::warn!("{warning}");
                        }
                    }
                    (registry, said.join("; "))
                }),
        )
    }
}

impl Connected {
    /// The runtime the servers' connections live on (its one worker thread reads and writes
    /// them); `None` without servers.
    pub fn runtime(&self) -> Option<&tokio::runtime::Runtime> {
        self.runtime.as_ref()
    }

    /// The changes of the servers' tools from now on, heard on the connections' own runtime;
    /// `None` without servers. The tools listed now are the starting point.
    pub fn follow(&self) -> Option<Changes> {
        let runtime = self.runtime.as_ref()?;
        let (tell, heard) = tokio::sync::mpsc::channel(self.clients.len().max(1));
        for (index, changes) in self.changes.iter().enumerate() {
            let mut changes = changes.clone();
            let tell = tell.clone();
            runtime.spawn(async move {
                loop {
                    changes.changed().await;
                    if tell.send(index).await.is_err() {
                        break;
                    }
                }
            });
        }
        Some(Changes {
            heard,
            composition: self.composition.clone(),
            clients: self.clients.clone(),
            listed: self.listed.clone(),
        })
    }
}

impl Upstreams {
    /// Whether any server was asked for.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.urls.is_empty() && self.configs.is_empty()
    }

    /// Every server asked for, in the order: the configuration files' (each file's in its
    /// order), `--mcp`'s, `--mcp-url`'s; each with a name of its own (`node`, `node#2`).
    fn remote_servers(&self) -> Result<Vec<RemoteServer>, UsageError> {
        let mut servers = Vec::new();
        for file in &self.configs {
            let read = toolsmith_mcp::read_config(file)
                .map_err(|error| UsageError::Upstream(error.to_string()))?;
            servers.extend(read);
        }
        for words in &self.servers {
            let program = words.first().cloned().unwrap_or_default();
            let name = std::path::Path::new(&program)
                .file_stem()
                .map_or_else(|| program.clone(), |s| s.to_string_lossy().into_owned());
            servers.push(StdioServer::new(name, program, words.iter().skip(1).cloned()).into());
        }
        for url in &self.urls {
            let mut server = HttpServer::new(host(url), url.as_str());
            server.headers.clone_from(&self.headers);
            servers.push(server.into());
        }
        let mut taken = std::collections::HashSet::new();
        for server in &mut servers {
            let stem = server.name().to_owned();
            let mut name = stem.clone();
            let mut count = 1;
            while !taken.insert(name.clone()) {
                count += 1;
                name = format!("{stem}#{count}");
            }
            match server {
                RemoteServer::Stdio(server) => server.name = name,
                RemoteServer::Http(server) => server.name = name,
                _ => {}
            }
        }
        Ok(servers)
    }

    /// `linked` and the tools of every server asked for, the servers connected at once.
    pub fn connect(&self, linked: &Registry) -> Result<Connected, UsageError> {
        let composition = Composition {
            linked: linked.clone(),
            always_prefix: self.always_prefix,
        };
        if self.is_empty() {
            return Ok(Connected {
                registry: linked.clone(),
                warnings: Vec::new(),
                composition,
                listed: Vec::new(),
                changes: Vec::new(),
                clients: Vec::new(),
                runtime: None,
            });
        }
        let servers = self.remote_servers()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolsmith-mcp-client")
            .enable_all()
            .build()
            .map_err(|error| UsageError::Upstream(format!("cannot start a runtime: {error}")))?;
        let connected = runtime.block_on(async {
            let mut connecting = tokio::task::JoinSet::new();
            for (index, server) in servers.into_iter().enumerate() {
                connecting.spawn(async move {
                    let client = McpClient::connect(server).await?;
                    // Before the listing: a change while it runs is heard.
                    let changes = client.list_changes();
                    let tools = client.tools().await?;
                    Ok::<_, toolsmith_mcp::ClientError>((index, client, changes, tools))
                });
            }
            let mut connected = Vec::with_capacity(connecting.len());
            while let Some(joined) = connecting.join_next().await {
                let joined = joined.map_err(|error| error.to_string())?;
                connected.push(joined.map_err(|error| error.to_string())?);
            }
            connected.sort_by_key(|(index, ..)| *index);
            Ok::<_, String>(connected)
        });
        let connected = connected.map_err(UsageError::Upstream)?;
        let mut clients = Vec::with_capacity(connected.len());
        let mut listed = Vec::with_capacity(connected.len());
        let mut changes = Vec::with_capacity(connected.len());
        for (_, client, heard, tools) in connected {
            changes.push(heard);
            listed.push((
                client.name().to_owned(),
                tools.into_iter().map(Arc::new).collect(),
            ));
            clients.push(client);
        }
        let (registry, warnings) = composition.compose(&listed).map_err(UsageError::Upstream)?;
        Ok(Connected {
            registry,
            warnings,
            composition,
            listed,
            changes,
            clients,
            runtime: Some(runtime),
        })
    }
}

impl Drop for Connected {
    fn drop(&mut self) {
        // The clients first, while their runtime still runs; then the runtime, without waiting
        // for servers that take their time to leave (they are killed).
        self.clients.clear();
        self.registry = Registry::new();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A server's name from its URL: the host (and port) the URL names.
fn host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    // Credentials in a URL are never part of a name that errors show.
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    host.to_owned()
}

/// An `http` or `https` URL, checked when the command line is read.
fn http_url(text: &str) -> Result<String, String> {
    let scheme = text
        .split_once("://")
        .map(|(scheme, _)| scheme.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http" | "https") if !host(text).is_empty() => Ok(text.to_owned()),
        _ => Err(format!(
            "`{text}` is not an http or https URL (like `http://127.0.0.1:8000/mcp`)"
        )),
    }
}

/// `NAME: VALUE` as a header.
fn header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        // The text is not repeated: it may hold a token.
        _ => Err("a header is `NAME: VALUE`, like `Authorization: Bearer TOKEN`".to_owned()),
    }
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
    fn servers_are_named_after_their_program_or_host() {
        let upstreams = Upstreams {
            servers: vec![
                command_line("/usr/bin/node x.js").unwrap(),
                command_line("node y.js").unwrap(),
            ],
            urls: vec!["https://user:pw@example.com:8443/mcp?x=1".to_owned()],
            headers: vec![("Authorization".to_owned(), "Bearer t".to_owned())],
            configs: Vec::new(),
            always_prefix: false,
        };
        let servers = upstreams.remote_servers().unwrap();
        let names: Vec<&str> = servers.iter().map(RemoteServer::name).collect();
        assert_eq!(names, ["node", "node#2", "example.com:8443"]);
        let RemoteServer::Stdio(second) = &servers[1] else {
            panic!("{:?}", servers[1]);
        };
        assert_eq!(second.args, ["y.js"]);
        let RemoteServer::Http(web) = &servers[2] else {
            panic!("{:?}", servers[2]);
        };
        assert_eq!(web.headers, upstreams.headers);
        assert_eq!(prefix("node#2"), "node2");
    }

    #[test]
    fn urls_and_headers_are_checked_when_read() {
        assert!(http_url("http://127.0.0.1:8000/mcp").is_ok());
        assert!(http_url("HTTPS://example.com").is_ok());
        assert!(http_url("ftp://example.com").is_err());
        assert!(http_url("example.com/mcp").is_err());
        assert!(http_url("http://").is_err());
        assert_eq!(
            header("Authorization:  Bearer t ").unwrap(),
            ("Authorization".to_owned(), "Bearer t".to_owned())
        );
        let error = header("Bearer secret").unwrap_err();
        assert!(!error.contains("secret"), "{error}");
    }
}
