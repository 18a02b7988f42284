//! Clients that misbehave: slow-header clients (one byte a second, never finishing their
//! headers) and a burst of idle connections (more than the server's connection cap and its
//! limit of open files allow).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// How long the burst waits for each of its connections to be made.
const CONNECT_PATIENCE: Duration = Duration::from_secs(3);

/// One slow-header connection: when it was made (from the part's start) and how long it stayed
/// open.
#[derive(Debug, Clone, Copy)]
pub struct Held {
    pub opened: Duration,
    pub held: Duration,
}

/// What one slow-header client saw: how long each of its connections stayed open.
#[derive(Debug, Default)]
pub struct SlowHeaders {
    /// Connections the server closed.
    pub closed: Vec<Held>,
    /// Connections still open when the part ended.
    pub open_at_end: Vec<Held>,
    /// Connections that could not be made.
    pub connect_failures: u64,
}

impl SlowHeaders {
    /// Adds `other`'s connections to these.
    pub fn merge(&mut self, other: SlowHeaders) {
        self.closed.extend(other.closed);
        self.open_at_end.extend(other.open_at_end);
        self.connect_failures += other.connect_failures;
    }

    /// The longest any connection made outside `window` stayed open (one made inside it may
    /// have waited to be accepted).
    pub fn longest_outside(&self, window: (Duration, Duration)) -> Duration {
        self.closed
            .iter()
            .chain(&self.open_at_end)
            .filter(|c| c.opened < window.0 || c.opened > window.1)
            .map(|c| c.held)
            .max()
            .unwrap_or_default()
    }

    /// The longest any connection made inside `window` stayed open.
    pub fn longest_inside(&self, window: (Duration, Duration)) -> Duration {
        self.closed
            .iter()
            .chain(&self.open_at_end)
            .filter(|c| c.opened >= window.0 && c.opened <= window.1)
            .map(|c| c.held)
            .max()
            .unwrap_or_default()
    }
}

/// Sends a request's headers one byte a second, never finishing them, until the server closes
/// the connection; then does it again on a new one, until `deadline`.
pub async fn slow_header_client(
    addr: SocketAddr,
    start: Instant,
    deadline: Instant,
) -> SlowHeaders {
    let mut seen = SlowHeaders::default();
    let deadline = tokio::time::Instant::from_std(deadline);
    while tokio::time::Instant::now() < deadline {
        let Ok(Ok(mut stream)) = tokio::time::timeout_at(deadline, TcpStream::connect(addr)).await
        else {
            seen.connect_failures += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let opened = tokio::time::Instant::now();
        let head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ");
        // The headers never end: after the head, one `a` a second.
        let mut bytes = head.into_bytes().into_iter().chain(std::iter::repeat(b'a'));
        let mut buffer = [0u8; 1024];
        let mut next_byte = opened;
        let closed = loop {
            tokio::select! {
                read = stream.read(&mut buffer) => match read {
                    // An answer (a 408, say) is read; the close that follows ends it.
                    Ok(n) if n > 0 => {}
                    _ => break true,
                },
                () = tokio::time::sleep_until(next_byte) => {
                    let byte = bytes.next().unwrap_or(b'a');
                    if stream.write_all(&[byte]).await.is_err() {
                        break true;
                    }
                    next_byte += Duration::from_secs(1);
                }
                () = tokio::time::sleep_until(deadline) => break false,
            }
        };
        let held = Held {
            opened: opened.into_std().saturating_duration_since(start),
            held: opened.elapsed(),
        };
        if closed {
            seen.closed.push(held);
        } else {
            seen.open_at_end.push(held);
        }
    }
    seen
}

/// What a burst of idle connections saw.
#[derive(Debug, Default)]
pub struct Burst {
    /// Connections asked for.
    pub wanted: usize,
    /// Connections made (the system completes them in the listen queue before the server
    /// accepts them).
    pub connected: usize,
    /// Connections that could not be made in time, by what went wrong.
    pub failed: std::collections::BTreeMap<String, u64>,
    /// Connections the server closed before the burst let go of them (its header timeout).
    pub closed_by_server: usize,
    /// When the last of them was made, from the burst's start.
    pub opened_in: Duration,
}

/// Opens `count` connections to `addr` at once, sends nothing on them, and holds them for
/// `hold`, noting those the server closes; then closes the rest.
pub async fn idle_burst(addr: SocketAddr, count: usize, hold: Duration) -> Burst {
    let started = Instant::now();
    let release = tokio::time::Instant::now() + hold;
    let mut connecting = JoinSet::new();
    for _ in 0..count {
        connecting.spawn(async move {
            match tokio::time::timeout(CONNECT_PATIENCE, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => Ok(stream),
                Ok(Err(error)) => Err(format!("connect: {}", error.kind())),
                Err(_) => Err("connect: no answer in 3 s".to_owned()),
            }
        });
    }
    let mut burst = Burst {
        wanted: count,
        ..Burst::default()
    };
    let mut holding = JoinSet::new();
    while let Some(joined) = connecting.join_next().await {
        match joined {
            Ok(Ok(mut stream)) => {
                burst.connected += 1;
                holding.spawn(async move {
                    let mut buffer = [0u8; 256];
                    loop {
                        match tokio::time::timeout_at(release, stream.read(&mut buffer)).await {
                            // The server closed it (or answered and will close it).
                            Ok(Ok(0) | Err(_)) => return true,
                            Ok(Ok(_)) => {}
                            // Still open at the release: dropped here, closing it.
                            Err(_) => return false,
                        }
                    }
                });
            }
            Ok(Err(kind)) => *burst.failed.entry(kind).or_default() += 1,
            Err(_) => *burst.failed.entry("task failed".to_owned()).or_default() += 1,
        }
    }
    burst.opened_in = started.elapsed();
    while let Some(joined) = holding.join_next().await {
        if matches!(joined, Ok(true)) {
            burst.closed_by_server += 1;
        }
    }
    burst
}
