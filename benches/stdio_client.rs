//! The client the MCP benchmarks share (included with `#[path]`): newline-delimited JSON-RPC
//! written to a server's stdin and read from its stdout, batched so that each burst of requests
//! reaches the server in one write, as from any client that frames its messages before sending.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A server process and the client's ends of its pipes.
pub struct Server {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Server {
    /// Starts the server and initializes it; then calls each `(tool, arguments)` of `checks`
    /// once and checks that its answer is a success containing the fragment given.
    pub fn start(command: &mut Command, checks: &[(&str, &str, &str)]) -> Server {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let stdin = BufWriter::new(child.stdin.take().expect("a stdin pipe"));
        let stdout = BufReader::new(child.stdout.take().expect("a stdout pipe"));
        let mut server = Server {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 0,
        };
        server.send(
            r#""method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#,
        );
        server.flush();
        let init = server.receive();
        assert!(init.contains(r#""result""#), "{init}");
        server.notify(r#""method":"notifications/initialized""#);
        server.flush();
        for (tool, arguments, fragment) in checks {
            server.send_call(tool, arguments);
            server.flush();
            let answer = server.receive();
            assert!(
                answer.contains(fragment) && answer.contains(r#""isError":false"#),
                "{tool}: {answer}"
            );
        }
        server
    }

    /// Sends a request with the next id; returns the id.
    pub fn send(&mut self, body: &str) -> u64 {
        self.next_id += 1;
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","id":{},{body}}}"#,
            self.next_id
        )
        .expect("the server reads its stdin");
        self.next_id
    }

    /// The id of the last request sent.
    pub fn last_id(&self) -> u64 {
        self.next_id
    }

    /// Sends a notification.
    pub fn notify(&mut self, body: &str) {
        writeln!(self.stdin, r#"{{"jsonrpc":"2.0",{body}}}"#).expect("the server reads its stdin");
    }

    /// Writes what was sent to the server.
    pub fn flush(&mut self) {
        self.stdin.flush().expect("the server reads its stdin");
    }

    /// Sends a `tools/call` of `tool` with `arguments` (JSON text).
    pub fn send_call(&mut self, tool: &str, arguments: &str) {
        self.send(&format!(
            r#""method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}"#
        ));
    }

    /// The next line the server writes.
    pub fn receive(&mut self) -> &str {
        self.line.clear();
        self.stdout
            .read_line(&mut self.line)
            .expect("the server writes its stdout");
        &self.line
    }

    /// `n` calls of `tool` written before any answer is read; the answers read.
    pub fn calls(&mut self, tool: &str, arguments: &str, n: usize) {
        for _ in 0..n {
            self.send_call(tool, arguments);
        }
        self.flush();
        for _ in 0..n {
            assert!(!self.receive().is_empty(), "the server hung up");
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
