//! Which lines a pattern matches, found by searching the whole text at once.
//!
//! A line matches when the regex matches somewhere in its content (see [`crate::lines`]), as if the
//! line were searched on its own: `^` and `$` match at the start and end of each line, and `\A`,
//! `\z` do too. (The regex is in CRLF mode, so `^` and `$` also match after and before a lone
//! `\r` inside a line.) Searching line by line costs one regex call per line; instead, as ripgrep does,
//! the whole text is searched, and after a match the search jumps to the next line. Both ways find
//! the same lines: the regex is built in multi-line CRLF mode, so its anchors treat line ends as
//! a line on its own would, and a match that reaches past its line's content (a pattern that can
//! match `\n` or `\r`) is checked again on that line alone, after which the rest of the text is
//! searched line by line. Patterns whose anchors mean "start or end of the haystack" (`\A`, `\z`,
//! `(?-m)^`, `(?-R)$`) are searched line by line from the start.

use std::ops::ControlFlow;

use memchr::memrchr;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Input, MatchKind, meta};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, Look};

use crate::TextError;
use crate::lines::{Line, lines};

/// A compiled pattern, and how its matching lines can be found.
#[derive(Debug)]
pub(crate) struct LineMatcher {
    /// The `regex` crate's engine (what `regex::Regex` wraps), built from the parsed pattern.
    regex: meta::Regex,
    /// Whether searching the whole text finds exactly the lines a line-by-line search would.
    whole_text: bool,
}

impl LineMatcher {
    /// Compiles `pattern` in the `regex` crate's syntax (Unicode-aware, case-insensitive when
    /// asked), refusing one that is not a valid regex or that compiles to more than `size_limit`
    /// bytes.
    pub fn new(pattern: &str, ignore_case: bool, size_limit: usize) -> Result<Self, TextError> {
        // Parsed here, with the settings `regex::RegexBuilder` would use, so that a problem is
        // named and located, and so that the anchors and literals of the pattern can be read.
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(ignore_case)
            .multi_line(true)
            .crlf(true)
            .build()
            .parse(pattern)
            .map_err(|error| invalid(pattern, &error))?;
        let looks = hir.properties().look_set();
        let whole_text = ![Look::Start, Look::End, Look::StartLF, Look::EndLF]
            .into_iter()
            .any(|look| looks.contains(look));
        let mut config = meta::Config::new().nfa_size_limit(Some(size_limit));
        if let Some(prefilter) = short_prefilter(&hir) {
            config = config.prefilter(Some(prefilter));
        }
        let regex = meta::Builder::new()
            .configure(config)
            .build_from_hir(&hir)
            .map_err(|error| match error.size_limit() {
                Some(limit) => TextError::PatternTooBig {
                    pattern: pattern.to_owned(),
                    limit,
                },
                None => TextError::InvalidPattern {
                    pattern: pattern.to_owned(),
                    problem: error.to_string(),
                },
            })?;
        Ok(LineMatcher { regex, whole_text })
    }

    /// Whether the line `content` matches.
    pub fn is_match(&self, content: &str) -> bool {
        self.regex.is_match(content)
    }

    /// Calls `found` with every matching line of `text`, in order, until it breaks.
    pub fn for_each_match(&self, text: &str, mut found: impl FnMut(Line) -> ControlFlow<()>) {
        let bytes = text.as_bytes();
        // Always the start of a line (or the end of the text).
        let mut pos = 0;
        if self.whole_text {
            while pos < bytes.len() {
                let Some(m) = self.regex.find(Input::new(text).range(pos..)) else {
                    return;
                };
                let start = memrchr(b'\n', &bytes[pos..m.start()]).map_or(pos, |i| pos + i + 1);
                if start >= bytes.len() {
                    // An empty match after the final newline, where no line is.
                    return;
                }
                let line = Line::around(bytes, start, m.start());
                pos = line.next;
                if m.end() <= line.end {
                    if found(line).is_break() {
                        return;
                    }
                    continue;
                }
                // The match reaches past the line: the pattern can match a line ending, so the
                // rest is searched line by line (which keeps the search linear).
                if self.is_match(line.content(text)) && found(line).is_break() {
                    return;
                }
                break;
            }
        }
        let rest = text.get(pos..).unwrap_or_default();
        for (line, content) in lines(rest) {
            if self.is_match(content) {
                let line = Line {
                    start: pos + line.start,
                    end: pos + line.end,
                    next: pos + line.next,
                };
                if found(line).is_break() {
                    return;
                }
            }
        }
    }

    /// How many lines of `text` match.
    pub fn count(&self, text: &str) -> usize {
        let mut count = 0;
        self.for_each_match(text, |_| {
            count += 1;
            ControlFlow::Continue(())
        });
        count
    }
}

/// A prefilter from the pattern's three-byte prefixes, where they are fewer than the full
/// prefixes the engine would pick. A case-insensitive word has 2^n spellings; searching for the
/// eight spellings of its first three letters, and checking each candidate, is about twice as
/// fast as searching for sixteen or more longer ones.
fn short_prefilter(hir: &Hir) -> Option<Prefilter> {
    let prefixes = |limit: Option<usize>| {
        let mut extractor = Extractor::new();
        extractor.kind(ExtractKind::Prefix);
        if let Some(limit) = limit {
            extractor.limit_literal_len(limit);
        }
        let mut seq = extractor.extract(hir);
        seq.optimize_for_prefix_by_preference();
        seq
    };
    let short = prefixes(Some(3));
    let literals = short.literals()?;
    let full = prefixes(None).len().unwrap_or(usize::MAX);
    let worth_it = literals.len() < full
        && literals.len() <= 16
        && literals.iter().all(|literal| literal.len() >= 3);
    if !worth_it {
        return None;
    }
    let needles: Vec<&[u8]> = literals.iter().map(|literal| literal.as_bytes()).collect();
    Prefilter::new(MatchKind::LeftmostFirst, &needles)
}

fn invalid(pattern: &str, error: &regex_syntax::Error) -> TextError {
    let (problem, offset) = match error {
        regex_syntax::Error::Parse(e) => (e.kind().to_string(), Some(e.span().start.offset)),
        regex_syntax::Error::Translate(e) => (e.kind().to_string(), Some(e.span().start.offset)),
        other => (other.to_string(), None),
    };
    let problem = match offset.and_then(|offset| pattern.get(..offset)) {
        Some(before) => format!("{problem} (at character {})", before.chars().count() + 1),
        None => problem,
    };
    TextError::InvalidPattern {
        pattern: pattern.to_owned(),
        problem,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The contents of the matching lines, by the whole-text search and line by line.
    fn both_ways(pattern: &str, ignore_case: bool, text: &str) -> (Vec<String>, Vec<String>) {
        let matcher = LineMatcher::new(pattern, ignore_case, 1 << 20).unwrap();
        let mut found = Vec::new();
        matcher.for_each_match(text, |line| {
            found.push(line.content(text).to_owned());
            ControlFlow::Continue(())
        });
        // Each line on its own, by the `regex` crate, in the mode the module documents.
        let oracle = regex::RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .multi_line(true)
            .crlf(true)
            .build()
            .unwrap();
        let expected = lines(text)
            .filter(|(_, content)| oracle.is_match(content))
            .map(|(_, content)| content.to_owned())
            .collect();
        (found, expected)
    }

    #[test]
    fn the_whole_text_search_finds_the_lines_a_line_by_line_search_finds() {
        let text = "alpha\r\nbeta\n\nGamma ALPHA\r\n\r\ndelta\nAlpha\nalphabet soup\nalpha";
        let patterns = [
            "alpha",
            "^",
            "$",
            "^$",
            "a$",
            "^a",
            r"\s",
            r"a\s+d",
            r"\n",
            r"\r",
            r"a\r?$",
            ".*",
            r"\bal",
            r"(?s).",
            r"\Aalpha",
            r"alpha\z",
            r"(?-m)^",
            r"x*",
            "[^x]+",
            r"\w+$",
            "alpha|beta|gamma",
            r"alpha\b",
            r"^alpha$",
            "pha",
            r"lph\w*$",
        ];
        for pattern in patterns {
            for ignore_case in [false, true] {
                let (found, expected) = both_ways(pattern, ignore_case, text);
                assert_eq!(
                    found, expected,
                    "pattern {pattern:?}, ignore_case {ignore_case}"
                );
            }
        }
    }

    #[test]
    fn a_case_insensitive_word_is_searched_by_its_three_letter_prefixes() {
        let parse = |pattern: &str| regex_syntax::Parser::new().parse(pattern).unwrap();
        assert!(short_prefilter(&parse("(?i)error")).is_some());
        // One spelling already, or prefixes too short to be worth searching for.
        assert!(short_prefilter(&parse("error")).is_none());
        assert!(short_prefilter(&parse("(?i)er")).is_none());
        assert!(short_prefilter(&parse(r"(?i)\w+")).is_none());
    }

    proptest::proptest! {
        /// Law: for any text of short lines (LF, CRLF, lone CR, non-ASCII) and any pattern from a
        /// family that exercises anchors, line endings and case folding, the whole-text search
        /// finds exactly the lines that match when each is searched on its own.
        #[test]
        fn whole_text_search_agrees_with_line_by_line_search(
            text in "([aAbé \\r]{0,6}(\\n|\\r\\n)?){0,12}",
            pattern in proptest::sample::select(vec![
                "a", "ab", "^a", "a$", "^$", r"\s", r"b\s*a", r"\r", r"\n", "(?s).", "é$", r"\bab",
                "", r"\Aa", r"a\z", "aab|ba", r"[^b]+$", r"(?i)abé",
            ]),
            ignore_case in proptest::bool::ANY,
        ) {
            let (found, expected) = both_ways(pattern, ignore_case, &text);
            proptest::prop_assert_eq!(found, expected);
        }
    }

    #[test]
    fn a_match_that_spans_lines_does_not_make_either_line_match() {
        let (found, _) = both_ways(r"a\nb", false, "a\nb\na b");
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn no_line_follows_a_final_newline() {
        assert_eq!(both_ways("^", false, "a\n").0, ["a"]);
        assert_eq!(both_ways("", false, "").0, Vec::<String>::new());
    }
}
