//! Request data: a program serving its tools over HTTP puts who is calling into each call's
//! context, from the request's `Authorization` header, and a tool reads it with `ctx.get`.
//!
//! Run it with `cargo run -p toolsmith-mcp --example request_data -- 127.0.0.1:8080` and call
//! `my_tasks` with `Authorization: Bearer token-ada` (or `token-grace`); without the header, or
//! with a token nobody holds, the call answers with an `isError` result saying the caller is
//! missing.

use std::collections::HashMap;
use std::sync::Arc;

use toolsmith::{Context, Registry, ToolError};
use toolsmith_mcp::{CallRequest, McpConfig, McpServer, ServeError};

/// Who is calling: what a bearer token stands for.
#[derive(Debug, Clone, PartialEq)]
struct Principal {
    name: String,
}

/// The tokens the server knows (in a real program: a session store, a JWT check, ...).
struct Tokens(HashMap<&'static str, Principal>);

impl Tokens {
    fn demo() -> Self {
        let principal = |name: &str| Principal {
            name: name.to_owned(),
        };
        Tokens(HashMap::from([
            ("token-ada", principal("ada")),
            ("token-grace", principal("grace")),
        ]))
    }

    /// Puts the caller of `request` into `ctx`, when its bearer token is known.
    fn identify(&self, request: &CallRequest<'_>, ctx: &mut Context) {
        let token = request
            .header("authorization")
            .and_then(|value| value.strip_prefix("Bearer "));
        if let Some(principal) = token.and_then(|token| self.0.get(token)) {
            ctx.insert(principal.clone());
        }
    }
}

/// Lists the caller's open tasks.
#[toolsmith::tool(read_only)]
fn my_tasks(ctx: &Context) -> Result<String, ToolError> {
    let caller = ctx.get::<Principal>()?;
    Ok(format!("{}'s tasks: review the release notes", caller.name))
}

/// The server: `my_tasks`, and the hook that says who calls.
fn server() -> Result<McpServer, ServeError> {
    let mut registry = Registry::new();
    registry.add(Arc::new(MyTasks))?;
    let tokens = Tokens::demo();
    let server = McpServer::new(registry, McpConfig::default())?;
    Ok(server.with_request_data(move |request, ctx| tokens.identify(request, ctx)))
}

fn main() -> Result<(), ServeError> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = server()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        let shutdown = toolsmith_mcp::shutdown_signal()?;
        let listener = toolsmith_mcp::bind_http(&addr).await?;
        if let Ok(bound) = listener.local_addr() {
            eprintln!("request_data: listening on http://{bound}/mcp");
        }
        server.serve_http(listener, shutdown).await
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// Calls `my_tasks` on the server at `port` with `headers`; the result.
    async fn my_tasks_as(port: u16, headers: &str) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "my_tasks", "arguments": {}}})
        .to_string();
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             {headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        let (_, body) = response.split_once("\r\n\r\n").unwrap();
        serde_json::from_str::<Value>(body).unwrap()["result"].clone()
    }

    #[tokio::test]
    async fn the_caller_comes_from_the_authorization_header() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = server().unwrap();
        tokio::spawn(async move { server.serve_http(listener, std::future::pending()).await });

        let ada = my_tasks_as(port, "Authorization: Bearer token-ada\r\n").await;
        assert_eq!(ada["isError"], false, "{ada}");
        assert_eq!(
            ada["content"][0]["text"],
            "ada's tasks: review the release notes"
        );
        for headers in ["", "Authorization: Bearer token-nobody\r\n"] {
            let nobody = my_tasks_as(port, headers).await;
            assert_eq!(nobody["isError"], true, "{nobody}");
            let text = nobody["content"][0]["text"].as_str().unwrap();
            assert!(
                text.starts_with("Tool `my_tasks` cannot run here: its caller did not provide"),
                "{text}"
            );
        }
    }
}
