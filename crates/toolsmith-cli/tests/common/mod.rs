//! What several of the CLI's test files share: the README, and its command lines as words.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

/// The repository's root (this crate sits two levels below it).
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/toolsmith-cli sits two levels below the repository root")
}

/// The README's text.
pub fn readme() -> String {
    std::fs::read_to_string(repo_root().join("README.md")).unwrap()
}

/// The first fenced block of kind `kind` (`console`, `sh`, `json`) after the marker comment
/// `<!-- MARKER`, without its fences.
pub fn block_after<'a>(readme: &'a str, marker: &str, kind: &str) -> &'a str {
    let start = readme
        .find(&format!("<!-- {marker}"))
        .unwrap_or_else(|| panic!("the README's marker {marker}"));
    let fence = format!("```{kind}\n");
    let block = &readme[start..];
    let block = &block[block.find(&fence).expect("a block after the marker") + fence.len()..];
    &block[..block.find("\n```").expect("the block's end")]
}

/// A command line as a shell splits it: words, with single quotes taken literally.
pub fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                in_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(!quoted, "an unclosed quote in {command}");
    if in_word {
        words.push(word);
    }
    words
}
