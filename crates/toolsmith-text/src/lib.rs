//! The built-in text processing toolset, `text`: grep, wc, a ripgrep-style search, line
//! extraction, filtering, de-duplication, sorting and a summary, for a model to run on text it
//! holds.
//!
//! Everything runs in this process, in Rust, on the text passed in: patterns are regexes in the
//! `regex` crate's syntax, run by its engine (`regex-automata`'s meta regex, which
//! `regex::Regex` wraps; Unicode-aware, linear time, no look-around or backreferences), so a
//! pattern is never a command, never a flag and never a file name, whatever it contains. This
//! crate must never start a process or shell out, and never touch the file system or the network.
//!
//! A line ends at `\n` (the last line needs none; empty text has no lines), and a `\r` before
//! that `\n` is part of the line ending, not of the line: CRLF text has the same lines as LF text,
//! and lines are written back with `\n`. Outputs are deterministic: lines keep their order
//! unless a tool sorts them, and ties are broken the same way every time. Texts longer than a
//! limit (64 MiB unless configured), patterns longer than 64 KiB and patterns that compile to
//! more than the regex crate's size limit (10 MiB unless configured) are refused with an error
//! that says so. The tools state their argument limits to whoever calls them
//! ([`TextProcessingToolset::argument_limits`]), so a caller's default policy (strings of 1 MiB)
//! does not stand between a model and the texts this toolset takes.
//!
//! ```
//! use toolsmith::{Toolset, testing};
//! use toolsmith_text::TextProcessingToolset;
//!
//! let tools = TextProcessingToolset::to_tools();
//! let wc = tools.iter().find(|tool| tool.name() == "text_wc").expect("text_wc");
//! let output = testing::call(wc.as_ref(), serde_json::json!({"text": "a b\nc"}))?;
//! assert_eq!(output.as_text(), "Lines: 2, Words: 3, Characters: 5");
//! assert_eq!(output.structured, Some(serde_json::json!({"lines": 2, "words": 3, "characters": 5})));
//! # Ok::<(), toolsmith::ToolError>(())
//! ```

mod count;
mod lines;
mod matcher;
mod order;

use std::fmt::{self, Write};
use std::ops::ControlFlow;

use serde_json::{Value, json};
use toolsmith::{Limits, ToolOutput};

use crate::lines::join;
use crate::matcher::LineMatcher;

/// The longest text a tool accepts unless configured otherwise: 64 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: usize = 64 << 20;

/// The most a pattern may compile to unless configured otherwise: 10 MiB, the regex crate's own
/// default.
pub const DEFAULT_REGEX_SIZE_LIMIT: usize = 10 << 20;

/// The longest pattern accepted unless configured otherwise: 64 KiB. Parsing a pattern costs
/// hundreds of bytes of memory per byte of pattern before any size limit can be checked, so a
/// pattern is refused by its length first.
pub const DEFAULT_MAX_PATTERN_BYTES: usize = 64 << 10;

/// The most bytes JSON spells one byte of a string with: a control character as `\u001f`.
const JSON_ESCAPE_FACTOR: usize = 6;

/// Room in the argument text for everything beside the text: the other arguments, the keys,
/// whitespace.
const OTHER_ARGUMENTS_BYTES: usize = 1 << 20;

/// The `text` toolset. Its limits are set when it is built; [`Default`] (what the registry
/// uses) gives [`DEFAULT_MAX_INPUT_BYTES`] and [`DEFAULT_REGEX_SIZE_LIMIT`].
///
/// Its tools state their own argument limits ([`argument_limits`](Self::argument_limits)),
/// which follow the input limit, so every caller (the registry, `toolsmith call`, the MCP
/// server, an agent) lets a text of up to that size through, whatever its own policy's limits.
///
/// ```
/// use toolsmith::Toolset;
/// use toolsmith_text::TextProcessingToolset;
///
/// let tools = TextProcessingToolset::default()
///     .with_max_input_bytes(1 << 30)
///     .into_tools();
/// assert_eq!(tools[0].name(), "text_grep");
/// assert_eq!(tools[0].limits().map(|l| l.max_string_bytes), Some(1 << 30));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextProcessingToolset {
    max_input_bytes: usize,
    max_pattern_bytes: usize,
    regex_size_limit: usize,
}

impl Default for TextProcessingToolset {
    fn default() -> Self {
        TextProcessingToolset {
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            max_pattern_bytes: DEFAULT_MAX_PATTERN_BYTES,
            regex_size_limit: DEFAULT_REGEX_SIZE_LIMIT,
        }
    }
}

impl TextProcessingToolset {
    /// The same toolset, accepting texts of up to `bytes` bytes.
    #[must_use]
    pub fn with_max_input_bytes(mut self, bytes: usize) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// The same toolset, accepting patterns of up to `bytes` bytes.
    #[must_use]
    pub fn with_max_pattern_bytes(mut self, bytes: usize) -> Self {
        self.max_pattern_bytes = bytes;
        self
    }

    /// The same toolset, accepting patterns that compile to up to `bytes` bytes.
    #[must_use]
    pub fn with_regex_size_limit(mut self, bytes: usize) -> Self {
        self.regex_size_limit = bytes;
        self
    }

    /// The limits its tools state on their arguments: a string as long as the input limit,
    /// and argument text long enough to carry such a text however JSON escapes it (six bytes
    /// a byte at worst, as `\u0000`), with room for the other arguments. The rest are the
    /// defaults.
    pub fn argument_limits(&self) -> Limits {
        Limits {
            max_string_bytes: self.max_input_bytes,
            max_input_bytes: self
                .max_input_bytes
                .saturating_mul(JSON_ESCAPE_FACTOR)
                .saturating_add(OTHER_ARGUMENTS_BYTES),
            ..Limits::default()
        }
    }

    fn check_size(&self, text: &str) -> Result<(), TextError> {
        if text.len() > self.max_input_bytes {
            return Err(TextError::TooLarge {
                bytes: text.len(),
                limit: self.max_input_bytes,
            });
        }
        Ok(())
    }

    fn matcher(&self, pattern: &str, ignore_case: bool) -> Result<LineMatcher, TextError> {
        if pattern.len() > self.max_pattern_bytes {
            return Err(TextError::PatternTooLong {
                bytes: pattern.len(),
                limit: self.max_pattern_bytes,
            });
        }
        LineMatcher::new(pattern, ignore_case, self.regex_size_limit)
    }
}

#[toolsmith::toolset(name = "text", limits = Self::argument_limits)]
impl TextProcessingToolset {
    /// Finds the lines of a text that match a regular expression, ignoring case unless
    /// `ignore_case` is false (like `grep -i`; `text_rg` matches case by default). Patterns are
    /// Rust regex syntax, like ripgrep's. Output: the matching lines in order, one per line,
    /// without line numbers; `No matches found for pattern '<pattern>'`
    /// when none match; with `count_only`, `Found <N> matches for pattern '<pattern>'`, N being
    /// the number of matching lines. Structured: `{"pattern", "matching_lines"}`.
    ///
    /// # Arguments
    /// * `text` - The text to search.
    /// * `pattern` - A regular expression; `^` and `$` match at the start and end of each line.
    /// * `ignore_case` - Match letters in either case (default true).
    /// * `count_only` - Say how many lines match instead of listing them (default false).
    #[tool(read_only, idempotent)]
    pub fn grep(
        &self,
        text: &str,
        pattern: &str,
        #[param(default = true)] ignore_case: bool,
        #[param(default = false)] count_only: bool,
    ) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let matcher = self.matcher(pattern, ignore_case)?;
        let (out, count) = if count_only {
            let count = matcher.count(text);
            (
                format!("Found {count} matches for pattern '{pattern}'"),
                count,
            )
        } else {
            let mut out = String::new();
            let mut count = 0;
            matcher.for_each_match(text, |line| {
                if count > 0 {
                    out.push('\n');
                }
                out.push_str(line.content(text));
                count += 1;
                ControlFlow::Continue(())
            });
            if count == 0 {
                out = no_matches(pattern);
            }
            (out, count)
        };
        Ok(with_structured(
            out,
            json!({"pattern": pattern, "matching_lines": count}),
        ))
    }

    /// Counts the lines, words and characters of a text. Output: `Lines: <L>, Words: <W>,
    /// Characters: <C>`, or only the count asked for (`Lines: <L>`) when one of `lines_only`,
    /// `words_only`, `chars_only` is true (several: those, in that order, comma-separated).
    /// Lines: a last line without a newline counts, empty text has 0. Words: runs of
    /// non-whitespace. Characters: Unicode characters (scalar values), newlines included.
    /// Structured: `{"lines", "words", "characters"}` (those asked for).
    ///
    /// # Arguments
    /// * `text` - The text to count.
    /// * `lines_only` - Report only the lines (default false).
    /// * `words_only` - Report only the words (default false).
    /// * `chars_only` - Report only the characters (default false).
    #[tool(read_only, idempotent)]
    pub fn wc(
        &self,
        text: &str,
        #[param(default = false)] lines_only: bool,
        #[param(default = false)] words_only: bool,
        #[param(default = false)] chars_only: bool,
    ) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let counts = count::count(text);
        let all = !(lines_only || words_only || chars_only);
        let chosen = [
            ("Lines", "lines", lines_only, counts.lines),
            ("Words", "words", words_only, counts.words),
            ("Characters", "characters", chars_only, counts.characters),
        ];
        let mut parts = Vec::new();
        let mut structured = serde_json::Map::new();
        for (label, key, asked, n) in chosen {
            if all || asked {
                parts.push(format!("{label}: {n}"));
                structured.insert(key.to_owned(), json!(n));
            }
        }
        Ok(with_structured(parts.join(", "), Value::Object(structured)))
    }

    /// Searches a text like ripgrep, with line numbers, matching case unless `ignore_case` is
    /// true (like `rg`; `text_grep` ignores case by default). Patterns are Rust regex syntax.
    /// Output: each matching line as `<N>:<line>` (N is the 1-based line
    /// number), one per line; with `context`, also that many lines before and after each match,
    /// as `<N>-<line>`, and `--` between groups of lines that are not adjacent; `No matches found
    /// for pattern '<pattern>'` when none match. Structured: `{"pattern", "matching_lines"}`.
    ///
    /// # Arguments
    /// * `text` - The text to search.
    /// * `pattern` - A regular expression; `^` and `$` match at the start and end of each line.
    /// * `context` - How many lines to show before and after each match (default 0).
    /// * `ignore_case` - Match letters in either case (default false).
    #[tool(read_only, idempotent)]
    pub fn rg(
        &self,
        text: &str,
        pattern: &str,
        #[param(default = 0)] context: u32,
        #[param(default = false)] ignore_case: bool,
    ) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let matcher = self.matcher(pattern, ignore_case)?;
        let context = context as usize;
        let mut out = String::new();
        let mut count = 0;
        if context == 0 {
            let bytes = text.as_bytes();
            // Line numbers: newlines counted between consecutive matches.
            let (mut number, mut counted_to) = (1usize, 0usize);
            matcher.for_each_match(text, |line| {
                number += memchr::memchr_iter(b'\n', &bytes[counted_to..line.start]).count();
                counted_to = line.start;
                if count > 0 {
                    out.push('\n');
                }
                let _ = write!(out, "{number}:{}", line.content(text));
                count += 1;
                ControlFlow::Continue(())
            });
        } else {
            let all: Vec<&str> = lines::contents(text).collect();
            let matching: Vec<bool> = all.iter().map(|line| matcher.is_match(line)).collect();
            // The last line written, to join adjacent groups and separate the others.
            let mut written: Option<usize> = None;
            for (index, _) in matching.iter().enumerate().filter(|(_, m)| **m) {
                count += 1;
                let from = index
                    .saturating_sub(context)
                    .max(written.map_or(0, |w| w + 1));
                let to = index.saturating_add(context).min(all.len() - 1);
                for (shown, content) in all.iter().enumerate().take(to + 1).skip(from) {
                    match written {
                        Some(w) if shown == w + 1 => out.push('\n'),
                        Some(_) => out.push_str("\n--\n"),
                        None => {}
                    }
                    let mark = if matching[shown] { ':' } else { '-' };
                    let _ = write!(out, "{}{mark}{content}", shown + 1);
                    written = Some(shown);
                }
            }
        }
        if count == 0 {
            out = no_matches(pattern);
        }
        Ok(with_structured(
            out,
            json!({"pattern": pattern, "matching_lines": count}),
        ))
    }

    /// Returns lines `start_line` to `end_line` (inclusive, numbered from 1) of a text. Output:
    /// those lines, one per line, without line numbers; a range reaching past the last line stops
    /// there. Errors: `start_line` below 1, `end_line` below `start_line`, or `start_line` past
    /// the last line. Structured: `{"start_line", "end_line", "total_lines"}`, `end_line` being
    /// the last line actually returned.
    ///
    /// # Arguments
    /// * `text` - The text to take lines from.
    /// * `start_line` - The first line to return, from 1.
    /// * `end_line` - The last line to return (default: `start_line`).
    #[tool(read_only, idempotent)]
    pub fn extract_lines(
        &self,
        text: &str,
        start_line: i64,
        end_line: Option<i64>,
    ) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let end_line = end_line.unwrap_or(start_line);
        if start_line < 1 || end_line < start_line {
            return Err(TextError::LineRange {
                start_line,
                end_line,
            });
        }
        // Both are at least 1 here; a count beyond usize is past any text's end anyway.
        let first = usize::try_from(start_line - 1).unwrap_or(usize::MAX);
        let wanted = usize::try_from(end_line - start_line + 1).unwrap_or(usize::MAX);
        let mut total = 0;
        let mut picked = Vec::new();
        for (index, content) in lines::contents(text).enumerate() {
            total = index + 1;
            if index >= first && picked.len() < wanted {
                picked.push(content);
            }
        }
        if picked.is_empty() {
            return Err(TextError::PastTheEnd {
                start_line,
                total_lines: total,
            });
        }
        let last = first + picked.len();
        Ok(with_structured(
            join(&picked),
            json!({"start_line": start_line, "end_line": last, "total_lines": total}),
        ))
    }

    /// Keeps the lines of a text that match a regular expression, or, with `invert`, those that
    /// do not, ignoring case unless `ignore_case` is false. Patterns are Rust regex syntax.
    /// Output: those lines in order, one per line (empty when there are none). Structured:
    /// `{"pattern", "kept_lines", "total_lines"}`.
    ///
    /// # Arguments
    /// * `text` - The text to filter.
    /// * `pattern` - A regular expression; `^` and `$` match at the start and end of each line.
    /// * `invert` - Keep the lines that do not match instead (default false).
    /// * `ignore_case` - Match letters in either case (default true).
    #[tool(read_only, idempotent)]
    pub fn filter_lines(
        &self,
        text: &str,
        pattern: &str,
        #[param(default = false)] invert: bool,
        #[param(default = true)] ignore_case: bool,
    ) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let matcher = self.matcher(pattern, ignore_case)?;
        let mut kept = Vec::new();
        let mut total = 0;
        for content in lines::contents(text) {
            total += 1;
            if matcher.is_match(content) != invert {
                kept.push(content);
            }
        }
        Ok(with_structured(
            join(&kept),
            json!({"pattern": pattern, "kept_lines": kept.len(), "total_lines": total}),
        ))
    }

    /// Removes repeated lines from a text: each distinct line once, where it first occurs, or,
    /// when `preserve_order` is false, sorted by byte order (as `LC_ALL=C sort -u`). Output: the
    /// lines, one per line. Structured: `{"unique_lines", "total_lines"}`.
    ///
    /// # Arguments
    /// * `text` - The text whose lines to de-duplicate.
    /// * `preserve_order` - Keep the order of first occurrence (default true); false sorts.
    #[tool(read_only, idempotent)]
    pub fn unique_lines(
        &self,
        text: &str,
        #[param(default = true)] preserve_order: bool,
    ) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let unique = order::unique(text, preserve_order);
        let total = count_lines(text);
        Ok(with_structured(
            join(&unique),
            json!({"unique_lines": unique.len(), "total_lines": total}),
        ))
    }

    /// Sorts the lines of a text, by byte order (as `LC_ALL=C sort`; uppercase before
    /// lowercase) or, with `numeric`, by the number each line starts with (after optional blanks:
    /// an optional sign, digits, an optional fraction), lines without one after all numbered
    /// lines in their original order. The sort is stable; `reverse` reverses the sorted lines.
    /// Output: the lines, one per line. Structured: `{"total_lines"}`.
    ///
    /// # Arguments
    /// * `text` - The text whose lines to sort.
    /// * `reverse` - Reverse the sorted order (default false).
    /// * `numeric` - Sort by each line's leading number (default false).
    #[tool(read_only, idempotent)]
    pub fn sort_lines(
        &self,
        text: &str,
        #[param(default = false)] reverse: bool,
        #[param(default = false)] numeric: bool,
    ) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let sorted = order::sort(text, numeric, reverse);
        let total = sorted.len();
        Ok(with_structured(
            join(&sorted),
            json!({"total_lines": total}),
        ))
    }

    /// Summarizes a text. Output: `Text Summary:`, then one indented line each for `Lines`,
    /// `Words`, `Characters` (as `text_wc` counts them), `Average line length` (characters per
    /// line, line endings not counted) and `Average word length` (characters per word), both
    /// with two decimals, then `Most frequent words:` and up to five indented `<word>: <count>`
    /// lines: words of three or more letters, lowercased, most frequent first, ties in
    /// alphabetical order (`(none)` when there are none). Structured: `{"lines", "words",
    /// "characters", "average_line_length", "average_word_length", "most_frequent_words":
    /// [{"word", "count"}]}`.
    ///
    /// # Arguments
    /// * `text` - The text to summarize.
    #[tool(read_only, idempotent)]
    pub fn summarize_text(&self, text: &str) -> Result<ToolOutput, TextError> {
        self.check_size(text)?;
        let summary = count::summarize(text);
        let counts = summary.counts;
        let mut out = format!(
            "Text Summary:\n  Lines: {}\n  Words: {}\n  Characters: {}\n  \
             Average line length: {:.2}\n  Average word length: {:.2}\n  Most frequent words:",
            counts.lines,
            counts.words,
            counts.characters,
            summary.average_line_length,
            summary.average_word_length,
        );
        if summary.top_words.is_empty() {
            out.push_str(" (none)");
        }
        for (word, n) in &summary.top_words {
            let _ = write!(out, "\n    {word}: {n}");
        }
        let top: Vec<Value> = summary
            .top_words
            .iter()
            .map(|(word, n)| json!({"word": word, "count": n}))
            .collect();
        Ok(with_structured(
            out,
            json!({
                "lines": counts.lines,
                "words": counts.words,
                "characters": counts.characters,
                "average_line_length": summary.average_line_length,
                "average_word_length": summary.average_word_length,
                "most_frequent_words": top,
            }),
        ))
    }
}

fn no_matches(pattern: &str) -> String {
    format!("No matches found for pattern '{pattern}'")
}

fn count_lines(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
        + usize::from(text.as_bytes().last().is_some_and(|&b| b != b'\n'))
}

fn with_structured(text: String, structured: Value) -> ToolOutput {
    let mut output = ToolOutput::text(text);
    output.structured = Some(structured);
    output
}

/// Why a text tool refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextError {
    /// The text is longer than the toolset accepts.
    TooLarge {
        /// The text's length.
        bytes: usize,
        /// The most the toolset accepts.
        limit: usize,
    },
    /// The pattern is not a valid regular expression.
    InvalidPattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it, and where.
        problem: String,
    },
    /// The pattern is longer than the toolset accepts (it is not quoted back: it is long).
    PatternTooLong {
        /// The pattern's length.
        bytes: usize,
        /// The most the toolset accepts.
        limit: usize,
    },
    /// The pattern compiles to more than the regex size limit.
    PatternTooBig {
        /// The pattern as given.
        pattern: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A line range that is no range: it starts before line 1 or ends before it starts.
    LineRange {
        /// The first line asked for.
        start_line: i64,
        /// The last line asked for.
        end_line: i64,
    },
    /// A line range that starts after the text's last line.
    PastTheEnd {
        /// The first line asked for.
        start_line: i64,
        /// How many lines the text has.
        total_lines: usize,
    },
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::TooLarge { bytes, limit } => write!(
                f,
                "the text is {bytes} bytes, more than the {limit} bytes this toolset accepts; \
                 send a smaller part of it"
            ),
            TextError::InvalidPattern { pattern, problem } => {
                write!(f, "invalid regex pattern '{pattern}': {problem}")
            }
            TextError::PatternTooLong { bytes, limit } => write!(
                f,
                "the regex pattern is {bytes} bytes, more than the {limit} bytes this toolset \
                 accepts; use a shorter pattern"
            ),
            TextError::PatternTooBig { pattern, limit } => write!(
                f,
                "the regex pattern '{pattern}' is too big: compiled, it exceeds the size limit \
                 of {limit} bytes; use a simpler pattern (large counted repetitions such as \
                 `\\w{{1000}}` multiply its size)"
            ),
            TextError::LineRange {
                start_line,
                end_line,
            } => {
                if *start_line < 1 {
                    write!(
                        f,
                        "start_line must be 1 or more (lines are numbered from 1), not {start_line}"
                    )
                } else {
                    write!(
                        f,
                        "end_line ({end_line}) must not be less than start_line ({start_line})"
                    )
                }
            }
            TextError::PastTheEnd {
                start_line,
                total_lines,
            } => write!(
                f,
                "start_line {start_line} is past the end of the text, which has {total_lines} \
                 line{}",
                if *total_lines == 1 { "" } else { "s" }
            ),
        }
    }
}

impl std::error::Error for TextError {}
