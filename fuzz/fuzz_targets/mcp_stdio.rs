//! Bytes as a client writes them to an MCP server's stdin: newline-delimited JSON-RPC, any
//! number of lines, served by `McpServer::serve` (the stdio entry, over in-memory pipes) with a
//! small registry of tools. Nothing may panic, the server must finish once the client closes
//! its input (within a few seconds: a hang is a failure), what it writes must be JSON-RPC
//! lines, and every line gets at most one answer: no more answers carry an id than lines sent
//! it (a line over the size limit may be answered by the id at its start, whatever it is), and
//! no more answers come than lines that are not blank.
//!
//! The server, its tools, its thread pool and the async runtime are built once; each input is a
//! new connection. The request size limit is 1 KiB, so that lines over it are within reach of
//! the fuzzer's inputs. Seeds are sessions: the handshake and calls, protocol errors, lines
//! that are not messages, requests before the handshake, pipelined bursts.

#![no_main]

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith::{Registry, ToolType};
use toolsmith_mcp::{McpConfig, McpServer};

/// The largest line the server takes.
const MAX_LINE_BYTES: usize = 1024;
/// How long one input may take, from the first byte sent to the server's end.
const BOUND: Duration = Duration::from_secs(5);
/// Each pipe's buffer.
const PIPE_BYTES: usize = 64 * 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let answers = fixture
        .runtime
        .block_on(async { tokio::time::timeout(BOUND, exchange(&fixture.server, data)).await });
    let Ok(answers) = answers else {
        panic!(
            "the server did not finish within {BOUND:?} of its input's end: {:?}",
            String::from_utf8_lossy(data)
        );
    };
    check(data, &answers);
});

/// Sends `input` and closes it while reading every answer; returns them once the server is done.
async fn exchange(server: &McpServer, input: &[u8]) -> Vec<u8> {
    let (mut client_write, server_read) = tokio::io::duplex(PIPE_BYTES);
    let (server_write, mut client_read) = tokio::io::duplex(PIPE_BYTES);
    let serving = server.serve(server_read, server_write);
    let sending = async move {
        // The server may stop reading (a failed handshake ends the connection).
        if client_write.write_all(input).await.is_ok() {
            let _ = client_write.shutdown().await;
        }
    };
    let mut answers = Vec::new();
    let receiving = client_read.read_to_end(&mut answers);
    // A failed handshake is an error of `serve`; what was answered until then is checked.
    let (_served, (), received) = tokio::join!(serving, sending, receiving);
    if let Err(error) = received {
        panic!("the server's output could not be read: {error}");
    }
    answers
}

/// What the server wrote, against what it was sent.
fn check(input: &[u8], output: &[u8]) {
    let sent = Sent::read(input);
    let Ok(output) = std::str::from_utf8(output) else {
        panic!("the server wrote bytes that are not UTF-8: {output:?}");
    };
    assert!(
        output.is_empty() || output.ends_with('\n'),
        "the server's last line is not ended: {output:?}"
    );
    let mut answered: HashMap<String, usize> = HashMap::new();
    let mut answers = 0usize;
    for line in output.lines() {
        let message: Written = match serde_json::from_str(line) {
            Ok(message) => message,
            Err(error) => {
                panic!("the server wrote a line that is not a message ({error}): {line:?}")
            }
        };
        assert_eq!(message.jsonrpc, "2.0", "not a JSON-RPC message: {line}");
        if !(message.result || message.error) {
            assert!(message.method, "neither an answer nor a request: {line}");
            continue;
        }
        answers += 1;
        let Some(id) = message.id else {
            continue;
        };
        let count = answered.entry(id_key(&id)).or_default();
        *count += 1;
        let lines_with_id = sent.ids.get(&id_key(&id)).copied().unwrap_or(0);
        assert!(
            *count <= lines_with_id + sent.oversized,
            "{count} answers for id {id}, sent by {lines_with_id} line(s) ({} over the limit)\n\
             input: {:?}\noutput: {output}",
            sent.oversized,
            String::from_utf8_lossy(input)
        );
    }
    assert!(
        answers <= sent.lines,
        "{answers} answers to {} line(s)\ninput: {:?}\noutput: {output}",
        sent.lines,
        String::from_utf8_lossy(input)
    );
}

/// A line the server wrote, as far as the laws look at it.
#[derive(Deserialize)]
struct Written<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    /// `None` when absent or `null`.
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
    #[serde(default, deserialize_with = "present")]
    method: bool,
}

/// `true` for a member that is there, whatever its value.
fn present<'de, D: Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(value).map(|_| true)
}

/// What the client sent, as far as answers can refer to it.
struct Sent {
    /// Lines that are not blank.
    lines: usize,
    /// Lines over the size limit: each may be answered with the id found at its start.
    oversized: usize,
    /// How many lines carry each id ([`id_key`]), at the top level of a JSON object.
    ids: HashMap<String, usize>,
}

impl Sent {
    fn read(input: &[u8]) -> Sent {
        let mut sent = Sent {
            lines: 0,
            oversized: 0,
            ids: HashMap::new(),
        };
        for line in input.split(|&b| b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            sent.lines += 1;
            // The limit counts the newline.
            if line.len() >= MAX_LINE_BYTES {
                sent.oversized += 1;
            }
            // Every id the line can be taken to carry, however the server trims it.
            let mut ids = top_level_ids(line);
            let trimmed = line.strip_suffix(b"\r").unwrap_or(line);
            let trimmed = trimmed.strip_prefix(UTF8_BOM).unwrap_or(trimmed);
            if trimmed.len() < line.len() {
                ids.extend(top_level_ids(trimmed));
            }
            ids.sort();
            ids.dedup();
            for id in ids {
                *sent.ids.entry(id).or_default() += 1;
            }
        }
        sent
    }
}

/// The values of every `id` member of the JSON object `text` is (each one, where a key is
/// repeated), as keys ([`id_key`]); none when `text` is not a JSON object.
fn top_level_ids(text: &[u8]) -> Vec<String> {
    struct Ids;
    impl<'de> Visitor<'de> for Ids {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut ids = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    ids.push(id_key(&map.next_value::<Value>()?));
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(ids)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    deserializer.deserialize_map(Ids).unwrap_or_default()
}

/// An id as a key: numbers by their value, as the server may write an id it read as `1e2` as
/// `100`, and one it read as `-0` as `0`.
fn id_key(id: &Value) -> String {
    match id.as_f64() {
        // Adding zero turns -0 into 0.
        Some(number) => format!("{}", number + 0.0),
        None => id.to_string(),
    }
}

/// The server and the runtime it is served on, built once.
struct Fixture {
    runtime: tokio::runtime::Runtime,
    server: McpServer,
}

fn fixture() -> &'static Fixture {
    static BUILT: OnceLock<Fixture> = OnceLock::new();
    BUILT.get_or_init(|| {
        // As `toolsmith_mcp::serve_stdio` serves one client: on one thread.
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => panic!("no runtime: {error}"),
        };
        let mut registry = Registry::new();
        for tool in [
            Arc::new(Add) as Arc<dyn toolsmith::Tool>,
            Arc::new(Echo),
            Arc::new(Refuse),
            Arc::new(Forecast),
        ] {
            if let Err(error) = registry.add(tool) {
                panic!("the fuzz tools do not register: {error}");
            }
        }
        let config = McpConfig::default()
            .with_max_request_bytes(MAX_LINE_BYTES)
            .with_max_concurrent_calls(2);
        let server = match McpServer::new(registry, config) {
            Ok(server) => server,
            Err(error) => panic!("the fuzz server cannot serve: {error}"),
        };
        Fixture { runtime, server }
    })
}

/// Adds two integers.
#[toolsmith::tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a.saturating_add(b)
}

/// Says the text back.
#[toolsmith::tool]
fn echo(text: String, times: Option<u8>) -> String {
    text.repeat(usize::from(times.unwrap_or(1).min(4)))
}

/// Fails with the reason given.
#[toolsmith::tool]
fn refuse(reason: String) -> Result<String, String> {
    Err(reason)
}

/// Tomorrow's weather.
#[derive(Serialize, ToolType)]
struct Weather {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: f64,
}

/// Looks up tomorrow's weather: a structured output.
#[toolsmith::tool(read_only, open_world)]
fn forecast(city: String, days: Option<u8>) -> Weather {
    Weather {
        city,
        celsius: f64::from(days.unwrap_or(1)) + 0.5,
    }
}
