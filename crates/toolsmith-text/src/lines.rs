//! What a line is, once for every tool.
//!
//! A line ends at `\n`; the last line needs no `\n` (so `"a\nb"` has two lines, `"a\n"` one and
//! `""` none). A `\r` right before the `\n` belongs to the line ending, not to the line's content,
//! so CRLF and LF texts hold the same lines; a `\r` anywhere else is content.

use memchr::memchr;

/// One line: its content `text[start..end]`, and where the next line starts (`next`, the text's
/// length after the last line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub start: usize,
    pub end: usize,
    pub next: usize,
}

impl Line {
    /// The line that starts at `start`, which must be a line start before the end of the text.
    pub fn starting_at(bytes: &[u8], start: usize) -> Line {
        Line::around(bytes, start, start)
    }

    /// The line that starts at `start` and holds position `at` (`start <= at`, with no `\n` in
    /// between).
    pub fn around(bytes: &[u8], start: usize, at: usize) -> Line {
        match bytes.get(at..).and_then(|rest| memchr(b'\n', rest)) {
            Some(offset) => {
                let newline = at + offset;
                let end = if newline > start && bytes[newline - 1] == b'\r' {
                    newline - 1
                } else {
                    newline
                };
                Line {
                    start,
                    end,
                    next: newline + 1,
                }
            }
            None => Line {
                start,
                end: bytes.len(),
                next: bytes.len(),
            },
        }
    }

    /// The line's content.
    pub fn content<'a>(&self, text: &'a str) -> &'a str {
        // `start` follows a `\n` and `end` precedes `\n` or `\r\n` (or is an end of the text),
        // so both are character boundaries.
        text.get(self.start..self.end).unwrap_or_default()
    }
}

/// The lines of `text`, in order.
pub(crate) fn lines(text: &str) -> Lines<'_> {
    Lines { text, pos: 0 }
}

/// The iterator [`lines`] returns.
pub(crate) struct Lines<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (Line, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.text.len() {
            return None;
        }
        let line = Line::starting_at(self.text.as_bytes(), self.pos);
        self.pos = line.next;
        Some((line, line.content(self.text)))
    }
}

/// The contents of the lines of `text`, in order.
pub(crate) fn contents(text: &str) -> impl Iterator<Item = &str> {
    lines(text).map(|(_, content)| content)
}

/// Joins line contents with `\n`, without a final one.
pub(crate) fn join(lines: &[&str]) -> String {
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<&str> {
        contents(text).collect()
    }

    #[test]
    fn a_last_line_without_newline_counts_and_empty_text_has_none() {
        assert_eq!(all(""), Vec::<&str>::new());
        assert_eq!(all("a"), ["a"]);
        assert_eq!(all("a\n"), ["a"]);
        assert_eq!(all("a\nb"), ["a", "b"]);
        assert_eq!(all("\n\n"), ["", ""]);
    }

    #[test]
    fn the_carriage_return_of_a_crlf_ending_is_not_content() {
        assert_eq!(all("a\r\nb\r\n"), ["a", "b"]);
        assert_eq!(all("\r\n"), [""]);
        // A `\r` not followed by `\n` is content.
        assert_eq!(all("a\rb\nc\r"), ["a\rb", "c\r"]);
    }
}
