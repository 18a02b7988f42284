//! Counting: lines, words and characters in one pass over the bytes, and the summary.

use std::cmp::Reverse;

use foldhash::{HashMap, HashMapExt};

use crate::lines::contents;

/// What `wc` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    /// Lines (see [`crate::lines`]).
    pub lines: usize,
    /// Runs of non-whitespace (Unicode whitespace, as [`char::is_whitespace`]).
    pub words: usize,
    /// Unicode scalar values.
    pub characters: usize,
}

/// Bytes counted at a time on the all-ASCII fast path: one bit per byte of a `u64` mask.
const BLOCK: usize = 64;

/// Counts `text` in one pass. Runs of 64 ASCII bytes are counted with bit masks, built eight
/// bytes at a time in a `u64` (a word starts where a non-space byte follows a space);
/// elsewhere, one character at a time.
pub(crate) fn count(text: &str) -> Counts {
    let bytes = text.as_bytes();
    let mut newlines = 0usize;
    let mut words = 0usize;
    let mut characters = 0usize;
    // Whether the previous character was whitespace (the start of the text counts as such).
    let mut after_space = true;
    let mut i = 0;
    while i < bytes.len() {
        let end = (i + BLOCK).min(bytes.len());
        let block = &bytes[i..end];
        if block.len() == BLOCK && block.is_ascii() {
            let mut spaces = 0u64;
            let mut block_newlines = 0u32;
            for (k, word) in block.chunks_exact(8).enumerate() {
                let mut eight = [0u8; 8];
                eight.copy_from_slice(word);
                let (space, newline) = ascii_spaces_and_newlines(u64::from_le_bytes(eight));
                spaces |= space << (8 * k);
                block_newlines += newline;
            }
            let space_before = (spaces << 1) | u64::from(after_space);
            words += (!spaces & space_before).count_ones() as usize;
            after_space = spaces >> 63 == 1;
            newlines += block_newlines as usize;
            characters += BLOCK;
            i = end;
            continue;
        }
        // Not all ASCII: characters one at a time up to the block's end (or just past it, when a
        // character straddles it).
        while i < end {
            let b = bytes[i];
            let (space, width) = if b < 0x80 {
                newlines += usize::from(b == b'\n');
                (is_ascii_space(b), 1)
            } else {
                match text.get(i..).and_then(|rest| rest.chars().next()) {
                    Some(c) => (c.is_whitespace(), c.len_utf8()),
                    // Unreachable for a `str` walked by characters; stepping on stays total.
                    None => (false, 1),
                }
            };
            words += usize::from(after_space && !space);
            after_space = space;
            characters += 1;
            i += width;
        }
    }
    let unterminated = usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
    Counts {
        lines: newlines + unterminated,
        words,
        characters,
    }
}

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// For eight ASCII bytes (little-endian in a `u64`): one bit per whitespace byte (bit k for byte
/// k), and how many are `\n`. Each test leaves a byte's high bit set where it holds, without
/// borrows between bytes, since every byte is below 0x80.
fn ascii_spaces_and_newlines(x: u64) -> (u64, u32) {
    let at_least = |n: u8| ((x | HIGH) - LOW * u64::from(n)) & HIGH;
    let equal = |c: u8| {
        let t = x ^ (LOW * u64::from(c));
        !((t | HIGH) - LOW) & HIGH
    };
    let newline = equal(b'\n');
    let space = (at_least(b'\t') & !at_least(b'\r' + 1)) | equal(b' ');
    // Gathers the high bit of byte k into bit k of the top byte.
    let bits = ((space >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    (bits, newline.count_ones())
}

/// The ASCII characters [`char::is_whitespace`] accepts: `\t`, `\n`, `\x0B`, `\x0C`, `\r`, space.
fn is_ascii_space(b: u8) -> bool {
    b == b' ' || b.wrapping_sub(b'\t') < 5
}

/// What `summarize_text` reports.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub counts: Counts,
    /// Characters of line content (without line endings) per line.
    pub average_line_length: f64,
    /// Characters per word.
    pub average_word_length: f64,
    /// The most frequent words of three or more letters, lowercased, most frequent first.
    pub top_words: Vec<(String, usize)>,
}

/// How many words `summarize` ranks.
const TOP_WORDS: usize = 5;

pub(crate) fn summarize(text: &str) -> Summary {
    let counts = count(text);
    let content_chars: usize = contents(text).map(|line| line.chars().count()).sum();
    let word_chars: usize = text.split_whitespace().map(|w| w.chars().count()).sum();
    let mut frequency: HashMap<String, usize> = HashMap::new();
    for word in text.split(|c: char| !c.is_alphabetic()) {
        if word.chars().nth(2).is_some() {
            *frequency.entry(word.to_lowercase()).or_default() += 1;
        }
    }
    let mut top_words: Vec<(String, usize)> = frequency.into_iter().collect();
    top_words.sort_unstable_by(|(a, m), (b, n)| (Reverse(m), a).cmp(&(Reverse(n), b)));
    top_words.truncate(TOP_WORDS);
    Summary {
        counts,
        average_line_length: ratio(content_chars, counts.lines),
        average_word_length: ratio(word_chars, counts.words),
        top_words,
    }
}

/// `part / whole`, rounded to two decimals; 0 for an empty whole.
fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 / whole as f64 * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same counts, the plain way.
    fn naive(text: &str) -> Counts {
        Counts {
            lines: contents(text).count(),
            words: text.split_whitespace().count(),
            characters: text.chars().count(),
        }
    }

    proptest::proptest! {
        /// Law: the one-pass count equals the plain definitions for any text, ASCII runs long
        /// enough for the block path mixed with Unicode letters and whitespace.
        #[test]
        fn one_pass_counts_equal_the_plain_definitions(
            text in "([a-z ]{0,70}|[\\t\\n\\r\\x0B\\x0C]|é|日本|\u{3000}|\u{a0}|\u{2028}|\u{85}){0,40}",
        ) {
            proptest::prop_assert_eq!(count(&text), naive(&text));
        }
    }

    #[test]
    fn eight_bytes_at_once_classify_every_ascii_byte_in_every_position() {
        for b in 0u8..0x80 {
            assert_eq!(is_ascii_space(b), char::from(b).is_whitespace(), "{b:#x}");
            for filler in [b'a', b' ', b'\n', 0x7F] {
                for k in 0..8 {
                    let mut bytes = [filler; 8];
                    bytes[k] = b;
                    let spaces = bytes
                        .iter()
                        .enumerate()
                        .map(|(i, &c)| u64::from(is_ascii_space(c)) << i)
                        .sum::<u64>();
                    let newlines = bytes.iter().filter(|&&c| c == b'\n').count() as u32;
                    assert_eq!(
                        ascii_spaces_and_newlines(u64::from_le_bytes(bytes)),
                        (spaces, newlines),
                        "{bytes:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_block_path_counts_as_the_plain_definitions_do() {
        let samples = [
            String::new(),
            "a b\nc".to_owned(),
            "word ".repeat(40),
            " x".repeat(64),
            format!("{}é{}", "a ".repeat(31), " b".repeat(40)),
            format!(
                "{}\u{3000}{}\u{a0}end\n",
                "ab".repeat(40),
                "日本語 ".repeat(30)
            ),
            "\u{2028}x\u{85}y\u{2003}z\n".repeat(20),
            format!("{}\r\n", "tab\tand\x0Bvt\x0Cff ".repeat(9)),
        ];
        for text in &samples {
            // Every offset, so that blocks start everywhere relative to the words.
            for start in 0..text.len().min(70) {
                if let Some(part) = text.get(start..) {
                    assert_eq!(count(part), naive(part), "{part:?}");
                }
            }
        }
    }
}
