// Server-sent events for the fake servers: a scripted reply sent as a stream, one event at a
// time. Each fake includes this file (`include!`) into a module of its own, so that the fakes,
// which the CLI's tests include too, stay one file each to include.
//
// An answer is written by hand on the request's own connection (tiny_http's responses buffer
// their body): a 200 head of `text/event-stream`, then each event as a chunk of its own, flushed
// at once, so that a client sees each event as it is sent; then the last chunk, which ends the
// body. A stream "broken" after some events gets a chunk header that is not one instead, which
// a client reads as a body that broke off.

use std::io::Write as _;
use std::time::Duration;

/// How a scripted reply is streamed.
#[derive(Debug, Clone)]
pub struct Shape {
    /// How many characters of text (or of a call's argument text) each delta carries.
    pub piece: usize,
    /// How the stream ends.
    pub ending: Ending,
    /// The wait before each event after the first.
    pub pace: Duration,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            piece: 4,
            ending: Ending::Whole,
            pace: Duration::ZERO,
        }
    }
}

/// How a stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// With all its events, the API's end event last.
    Whole,
    /// After this many events, the body ending cleanly there (a server that stopped).
    CutAfter(usize),
    /// After this many events, the body breaking off (a connection lost).
    BrokenAfter(usize),
    /// After this many events, silence for this long (a server that hangs), then the body
    /// ending there.
    StalledAfter(usize, Duration),
}

/// One event: its `event:` line when named, its `data:`, and the blank line that ends it.
pub fn event(name: Option<&str>, data: &str) -> String {
    let mut text = String::new();
    if let Some(name) = name {
        text.push_str(&format!("event: {name}\n"));
    }
    for line in data.lines() {
        text.push_str(&format!("data: {line}\n"));
    }
    text.push('\n');
    text
}

/// `text` in pieces of `size` characters (one empty piece for empty text).
pub fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars
        .chunks(size.max(1))
        .map(|piece| piece.iter().collect())
        .collect()
}

/// Answers `request` with `events` as a stream of this shape, with `headers` besides the
/// content type.
pub fn send(request: tiny_http::Request, events: &[String], shape: &Shape, headers: &[(&str, &str)]) {
    let mut writer = request.into_writer();
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
         Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n",
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if writer.write_all(head.as_bytes()).and_then(|()| writer.flush()).is_err() {
        return;
    }
    let count = match shape.ending {
        Ending::Whole => events.len(),
        Ending::CutAfter(count)
        | Ending::BrokenAfter(count)
        | Ending::StalledAfter(count, _) => count.min(events.len()),
    };
    for (i, event) in events[..count].iter().enumerate() {
        if i > 0 {
            std::thread::sleep(shape.pace);
        }
        let chunk = format!("{:x}\r\n{event}\r\n", event.len());
        if writer.write_all(chunk.as_bytes()).and_then(|()| writer.flush()).is_err() {
            // The client went away: nothing more to send.
            return;
        }
    }
    if let Ending::StalledAfter(_, silence) = shape.ending {
        std::thread::sleep(silence);
    }
    let end: &[u8] = match shape.ending {
        Ending::BrokenAfter(_) => b"not a chunk\r\n\r\n",
        _ => b"0\r\n\r\n",
    };
    let _ = writer.write_all(end).and_then(|()| writer.flush());
}
