//! HAProxy in front of two `toolsmith mcp --http` instances: its configuration, and what it
//! says it did (retries, redispatches) through its stats socket.
//!
//! Which calls it may send again, and why: every request is one JSON-RPC message in one POST,
//! and the server keeps no session (stateless streamable HTTP), so any instance can answer any
//! request. A request that never reached an instance (`conn-failure`: the connection was
//! refused or failed) is always safe to send to another. A request an instance received and
//! then died without answering (`empty-response`: the connection closed with nothing read) may
//! have run: sending it again is safe only when the call has no effect but its answer, which
//! holds for every tool `toolsmith` serves (all are read-only; the text tools are pure
//! functions of their arguments). A deployment serving tools with side effects keeps
//! `retry-on conn-failure` alone. Answers that came back (any status, a tool's error) are never
//! retried, and neither is a slow answer (`response-timeout`): retrying slow calls multiplies
//! the load on a server that is already slow.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

/// The configuration: a frontend on `listen`, round robin over `servers` (name and address),
/// each health-checked twice a second, failed requests retried as the module says.
pub fn config(listen: SocketAddr, servers: &[(&str, SocketAddr)], stats_socket: &Path) -> String {
    let mut text = format!(
        "\
global
    maxconn 4096
    stats socket {socket} mode 600 level admin

defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-request 10s
    timeout http-keep-alive 60s
    # Up to three more attempts per request, each on another server than the last.
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response

frontend mcp
    bind {listen}
    default_backend toolsmith

backend toolsmith
    balance roundrobin
",
        socket = stats_socket.display(),
    );
    for (name, addr) in servers {
        let _ = writeln!(
            text,
            "    server {name} {addr} check inter 500ms fall 2 rise 2"
        );
    }
    text
}

/// One server's line of HAProxy's statistics.
#[derive(Debug, Default, Clone)]
pub struct ServerStats {
    /// The server's name (`a`, `b`) or `BACKEND` for the whole backend.
    pub name: String,
    /// Requests it was sent.
    pub requests: u64,
    /// Requests retried after a failure on it.
    pub retries: u64,
    /// Requests sent to another server after a failure on it.
    pub redispatches: u64,
    /// Connection errors and response errors it caused.
    pub errors: u64,
    /// Its state (`UP`, `DOWN`).
    pub status: String,
}

/// The backend's statistics, asked through the stats socket (`show stat`).
pub async fn stats(socket: &Path) -> Result<Vec<ServerStats>, String> {
    let mut stream = UnixStream::connect(socket)
        .await
        .map_err(|e| format!("cannot reach HAProxy's stats socket: {e}"))?;
    stream
        .write_all(b"show stat\n")
        .await
        .map_err(|e| format!("cannot ask HAProxy for its stats: {e}"))?;
    let mut csv = String::new();
    stream
        .read_to_string(&mut csv)
        .await
        .map_err(|e| format!("cannot read HAProxy's stats: {e}"))?;
    Ok(parse_stats(&csv, "toolsmith"))
}

/// The lines of `backend` in `show stat`'s CSV.
fn parse_stats(csv: &str, backend: &str) -> Vec<ServerStats> {
    let mut lines = csv.lines();
    let Some(header) = lines.next().and_then(|line| line.strip_prefix("# ")) else {
        return Vec::new();
    };
    let columns: Vec<&str> = header.split(',').collect();
    let column = |name: &str| columns.iter().position(|c| *c == name);
    let (Some(px), Some(sv)) = (column("pxname"), column("svname")) else {
        return Vec::new();
    };
    let number = |fields: &[&str], name: &str| {
        column(name)
            .and_then(|i| fields.get(i))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .filter(|fields| fields.get(px) == Some(&backend))
        .map(|fields| ServerStats {
            name: fields.get(sv).map(|s| (*s).to_owned()).unwrap_or_default(),
            requests: number(&fields, "stot"),
            retries: number(&fields, "wretr"),
            redispatches: number(&fields, "wredis"),
            errors: number(&fields, "econ") + number(&fields, "eresp"),
            status: column("status")
                .and_then(|i| fields.get(i))
                .map(|s| (*s).to_owned())
                .unwrap_or_default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_lists_every_server_with_its_health_check() {
        let a: SocketAddr = ([127, 0, 0, 1], 4001).into();
        let b: SocketAddr = ([127, 0, 0, 1], 4002).into();
        let text = config(
            ([127, 0, 0, 1], 4000).into(),
            &[("a", a), ("b", b)],
            Path::new("/tmp/s.sock"),
        );
        assert!(text.contains("bind 127.0.0.1:4000"), "{text}");
        assert!(text.contains("server a 127.0.0.1:4001 check"), "{text}");
        assert!(text.contains("server b 127.0.0.1:4002 check"), "{text}");
        assert!(
            text.contains("retry-on conn-failure empty-response\n"),
            "{text}"
        );
    }

    #[test]
    fn stats_are_read_by_column_name() {
        let csv = "# pxname,svname,stot,econ,eresp,wretr,wredis,status\n\
                   mcp,FRONTEND,10,,,,,OPEN\n\
                   toolsmith,a,7,1,2,3,4,UP\n\
                   toolsmith,BACKEND,12,1,2,3,4,UP\n";
        let stats = parse_stats(csv, "toolsmith");
        assert_eq!(stats.len(), 2);
        assert_eq!(stats[0].name, "a");
        assert_eq!(
            (
                stats[0].requests,
                stats[0].errors,
                stats[0].retries,
                stats[0].redispatches
            ),
            (7, 3, 3, 4)
        );
        assert_eq!(stats[0].status, "UP");
    }
}
