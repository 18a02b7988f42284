//! The `text` toolset, linked into the `toolsmith` binary: called from the command line as the
//! README shows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn toolsmith(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        .output()
        .expect("start toolsmith")
}

#[test]
fn call_text_wc_prints_the_counts() {
    let out = toolsmith(&["call", "text_wc", r#"{"text":"a b\nc"}"#]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Lines: 2, Words: 3, Characters: 5\n"
    );
}

#[test]
fn the_binary_lists_every_text_tool() {
    let out = toolsmith(&["list"]);
    assert!(out.status.success(), "{out:?}");
    let listed = String::from_utf8(out.stdout).unwrap();
    for name in [
        "text_grep",
        "text_wc",
        "text_rg",
        "text_extract_lines",
        "text_filter_lines",
        "text_unique_lines",
        "text_sort_lines",
        "text_summarize_text",
    ] {
        assert!(
            listed.lines().any(|line| line.starts_with(name)),
            "{name} in {listed}"
        );
    }
}

#[test]
fn list_shows_whole_first_sentences_and_the_case_defaults_of_grep_and_rg() {
    let out = toolsmith(&["list"]);
    assert!(out.status.success(), "{out:?}");
    let listed = String::from_utf8(out.stdout).unwrap();
    let summary = |name: &str| {
        let line = listed
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {listed}"));
        line.split_once("  text  ").unwrap().1.trim().to_owned()
    };
    assert_eq!(
        summary("text_grep"),
        "Finds the lines of a text that match a regular expression, ignoring case unless \
         `ignore_case` is false (like `grep -i`; `text_rg` matches case by default)."
    );
    assert_eq!(
        summary("text_rg"),
        "Searches a text like ripgrep, with line numbers, matching case unless `ignore_case` is \
         true (like `rg`; `text_grep` ignores case by default)."
    );
    for line in listed.lines() {
        assert!(line.ends_with('.'), "a whole sentence: {line}");
    }
}

#[test]
fn an_invalid_pattern_exits_1_with_the_problem_on_stderr() {
    let out = toolsmith(&["call", "text_grep", r#"{"text":"a","pattern":"(a"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap().trim_end(),
        "Tool `text_grep` failed: invalid regex pattern '(a': unclosed group (at character 1)"
    );
}

#[test]
fn the_readme_text_wc_example_prints_what_the_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let prompt = "$ toolsmith call text_wc '";
    let from = readme
        .find(prompt)
        .expect("the README shows a text_wc call")
        + prompt.len();
    let (arguments, rest) = readme[from..].split_once("'\n").unwrap();
    let shown = rest.lines().next().unwrap();
    let out = toolsmith(&["call", "text_wc", arguments]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{shown}\n"));
}
