//! The module half of `cargo xtask layers`: inside each crate, the top-level modules (a
//! `src/name.rs` file or a `src/name/` folder) form no circle, so each crate's files can be read
//! bottom up.
//!
//! A module uses another when code in its files (comments skipped) names `crate::other::...`
//! or lists `other` in a `use crate::{...}` group. That is a cheap reading, not a compiler's:
//! `super::` paths and names re-exported at the crate root are not followed, so a circle through
//! them goes unseen; what it does see is a real dependency.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Error;

/// Each top-level module of a crate, with the modules it uses and, for each, a file that names
/// it.
pub type Graph = BTreeMap<String, BTreeMap<String, PathBuf>>;

/// The top-level modules of the crate whose sources are in `src`, and the `.rs` files of each.
fn modules(src: &Path) -> Result<BTreeMap<String, Vec<PathBuf>>, Error> {
    let mut found: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for path in read_dir(src)? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        // `name.rs` and a `name/` folder beside it are one module.
        if path.is_dir() {
            if name != "bin" {
                let files = found.entry(name.to_owned()).or_default();
                rust_files(&path, files)?;
            }
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "lib"
            && stem != "main"
        {
            found.entry(stem.to_owned()).or_default().push(path);
        }
    }
    Ok(found)
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = fs::read_dir(dir)
        .map_err(|error| Error::Failed(format!("cannot read {}: {error}", dir.display())))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    Ok(paths)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    for path in read_dir(dir)? {
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The crate's module graph, read from its sources in `src`; files are named from `shown_from`.
pub fn graph(src: &Path, shown_from: &Path) -> Result<Graph, Error> {
    let modules = modules(src)?;
    let names: Vec<&str> = modules.keys().map(String::as_str).collect();
    let mut graph = Graph::new();
    for (module, files) in &modules {
        let uses = graph.entry(module.clone()).or_default();
        for file in files {
            let text = fs::read_to_string(file).map_err(|error| {
                Error::Failed(format!("cannot read {}: {error}", file.display()))
            })?;
            for used in references(&text) {
                if used != *module && names.contains(&used.as_str()) {
                    let shown = file.strip_prefix(shown_from).unwrap_or(file);
                    uses.entry(used).or_insert_with(|| shown.to_owned());
                }
            }
        }
    }
    Ok(graph)
}

/// The names `source` uses as `crate::name`: each path's first segment, and each first
/// segment listed in a `use crate::{...}` group.
pub fn references(source: &str) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string literal (a URL) is not a comment; such a line is kept.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        // `$crate::` and `toolsmith_crate::` are other paths.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = closing_brace(group);
            found.extend(group_heads(&group[..end]));
            rest = &group[end..];
        } else {
            let name = identifier(rest);
            if !name.is_empty() && rest[name.len()..].starts_with("::") {
                found.push(name.to_owned());
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Where the group that starts `text` (after its `{`) closes: the byte of its `}`.
fn closing_brace(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// The first segment of each path in a `use` group's contents (nested groups skipped).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut at_start = true;
    let mut chars = group.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => at_start = true,
            c if depth == 0 && at_start && (c.is_alphabetic() || c == '_') => {
                let name = identifier(&group[i..]);
                for _ in 1..name.chars().count() {
                    chars.next();
                }
                heads.push(name.to_owned());
                at_start = false;
            }
            c if c.is_whitespace() => {}
            _ if depth == 0 => at_start = false,
            _ => {}
        }
    }
    heads
}

fn identifier(text: &str) -> &str {
    let end = text
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
        .map_or(text.len(), |(i, _)| i);
    &text[..end]
}

/// Every circle in `graph`, each as the modules around it, starting from the least by name and
/// ending where it started (`a → b → a`), with the file that names each step.
pub fn circles(graph: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    for component in strongly_connected(graph) {
        if component.len() < 2 {
            continue;
        }
        // One circle through the component, found by walking its edges from its least module.
        let start = &component[0];
        let mut path = vec![start.clone()];
        let mut steps = Vec::new();
        let mut current = start.clone();
        loop {
            let next = graph[&current]
                .iter()
                .filter(|(to, _)| component.contains(to))
                .find(|(to, _)| *to == start || !path.contains(to));
            let Some((to, file)) = next else { break };
            steps.push(format!("{current} → {to} ({})", file.display()));
            if to == start {
                break;
            }
            path.push(to.clone());
            current = to.clone();
        }
        found.push(format!(
            "a circle of modules: {} — {}",
            component.join(", "),
            steps.join("; ")
        ));
    }
    found
}

/// The strongly connected components of `graph` (Tarjan's), each sorted by name.
fn strongly_connected(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        components: Vec<Vec<String>>,
    }
    fn visit<'g>(state: &mut State<'g>, node: &'g str) {
        let i = state.index.len();
        state.index.insert(node, i);
        state.low.insert(node, i);
        state.stack.push(node);
        let graph = state.graph;
        for to in graph[node].keys() {
            let to = to.as_str();
            if !graph.contains_key(to) {
                continue;
            }
            if !state.index.contains_key(to) {
                visit(state, to);
                let low = state.low[to].min(state.low[node]);
                state.low.insert(node, low);
            } else if state.stack.contains(&to) {
                let low = state.index[to].min(state.low[node]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                component.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            component.sort();
            state.components.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.components
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn paths_and_use_groups_are_read_and_comments_are_not() {
        let source = "\
//! See [`crate::ignored::Thing`].
use crate::a::X;
use crate::{b::{Y, Z}, c, D};
use crate::{
    e::W, // and crate::notes::here
};
fn f() { crate::f::g(); let _ = $crate::h::i; }
";
        // `D` is an item of the root; the graph keeps only names that are modules.
        assert_eq!(references(source), ["D", "a", "b", "c", "e", "f"]);
    }

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = root.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-modules-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_circle_is_named_with_the_files_that_make_it() {
        let src = scratch("circle");
        write(
            &src,
            &[
                ("lib.rs", "mod a; mod b; mod c;"),
                ("a.rs", "use crate::b::B;"),
                // `b.rs` and its folder `b/` are one module.
                ("b.rs", "mod inner;"),
                ("b/inner.rs", "use crate::{c::C};"),
                ("c.rs", "fn f() { crate::a::f() }"),
            ],
        );
        let found = circles(&graph(&src, &src).unwrap());
        let _ = fs::remove_dir_all(&src);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("a circle of modules: a, b, c"),
            "{}",
            found[0]
        );
        assert!(found[0].contains("b → c ("), "{}", found[0]);
        assert!(found[0].contains("inner.rs"), "{}", found[0]);
    }

    #[test]
    fn layered_modules_hold() {
        let src = scratch("layered");
        write(
            &src,
            &[
                ("lib.rs", "mod a; mod b; pub use a::A;"),
                ("a.rs", "use crate::b::B; // crate::b again"),
                (
                    "b.rs",
                    "use crate::A; // the root's re-export is not followed",
                ),
            ],
        );
        let found = circles(&graph(&src, &src).unwrap());
        let _ = fs::remove_dir_all(&src);
        assert!(found.is_empty(), "{found:?}");
    }
}
