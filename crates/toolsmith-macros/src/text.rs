//! Words: doc comments, name conventions, and serde's renaming rules.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The doc comment on `attrs`, one leading space stripped from each line, trimmed; `None` when
/// there is none.
pub fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|chunk| {
            // `split`, not `lines`: an empty `///` line is a paragraph break to keep.
            chunk
                .split('\n')
                .map(|line| line.strip_prefix(' ').unwrap_or(line).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The lines of a doc comment, each with whether it is markdown (not inside a code fence, where
/// `# use ...;` and `#[derive]` are code, not headings).
fn markdown_lines(doc: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut fenced = false;
    doc.lines().map(move |line| {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        let markdown = !fenced && !fence;
        if fence {
            fenced = !fenced;
        }
        (line, markdown)
    })
}

/// The description part of a doc comment: everything before its first markdown heading, as
/// prose ([`prose`]).
pub fn description(doc: &str) -> Option<String> {
    let end = markdown_lines(doc)
        .position(|(line, markdown)| markdown && line.starts_with('#'))
        .unwrap_or(usize::MAX);
    let text: Vec<&str> = doc.lines().take(end).collect();
    let text = prose(&text.join("\n"));
    (!text.is_empty()).then_some(text)
}

/// The doc comment on `attrs` as prose ([`prose`]); `None` when there is none.
pub fn doc_prose(attrs: &[Attribute]) -> Option<String> {
    doc_text(attrs).map(|doc| prose(&doc))
}

/// Doc comment text as a reader who never saw the source wants it: each paragraph's hard-wrapped
/// lines unwrapped into one line, paragraphs still apart (a blank line between them). A list item
/// starts a line of its own (its wrapped lines joined to it), and so do headings, table rows and
/// markdown hard breaks (two trailing spaces, or a trailing `\`); code blocks, fenced or
/// indented, keep their lines as written.
pub fn prose(doc: &str) -> String {
    let mut blocks: Vec<Vec<String>> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    // Whether the next plain line continues the last one.
    let mut joinable = false;
    let mut fenced = false;
    let mut indented_code = false;
    // Whether the last block ended inside a list (an indented line after it continues the list).
    let mut in_list = false;
    for raw in doc.lines() {
        let raw = raw.trim_end_matches('\r');
        let trimmed = raw.trim_start();
        let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        if fenced || fence {
            fenced ^= fence;
            lines.push(raw.trim_end().to_owned());
            joinable = false;
            continue;
        }
        if trimmed.is_empty() {
            if !lines.is_empty() {
                in_list = !indented_code && lines.last().is_some_and(|l| list_item(l).is_some());
                blocks.push(std::mem::take(&mut lines));
            }
            joinable = false;
            indented_code = false;
            continue;
        }
        let indent = raw.len() - trimmed.len();
        if lines.is_empty() && (indent >= 4 || raw.starts_with('\t')) && !in_list {
            indented_code = true;
        }
        if indented_code {
            lines.push(raw.trim_end().to_owned());
            continue;
        }
        let (text, hard_break) = match trimmed.trim_end().strip_suffix('\\') {
            Some(text) => (text.trim_end(), true),
            None => (trimmed.trim_end(), raw.ends_with("  ")),
        };
        let own_line = trimmed.starts_with('#') || trimmed.starts_with('|');
        if own_line || list_item(trimmed).is_some() {
            // A list item keeps its indentation: nesting is meaningful.
            let keep = if own_line { 0 } else { indent };
            lines.push(format!("{}{text}", &raw[..keep]));
            joinable = !own_line && !hard_break;
            continue;
        }
        match lines.last_mut() {
            Some(last) if joinable => {
                last.push(' ');
                last.push_str(text);
            }
            _ => lines.push(text.to_owned()),
        }
        joinable = !hard_break;
    }
    if !lines.is_empty() {
        blocks.push(lines);
    }
    let blocks: Vec<String> = blocks.iter().map(|block| block.join("\n")).collect();
    blocks.join("\n\n")
}

/// The text of a markdown list item (`* `, `- `, `+ `, `1. `, `1) `), without its marker.
fn list_item(line: &str) -> Option<&str> {
    let line = line.trim_start();
    if let Some(rest) = ["* ", "- ", "+ "].iter().find_map(|m| line.strip_prefix(m)) {
        return Some(rest);
    }
    let digits = line.find(|c: char| !c.is_ascii_digit())?;
    let rest = &line[digits..];
    (digits > 0 && digits <= 9)
        .then(|| rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")))
        .flatten()
}

/// The entries of a `# Arguments` section: `* `name` - what it is` (also `-` bullets and `:`).
pub fn argument_docs(doc: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut inside = false;
    for (line, markdown) in markdown_lines(doc) {
        if !markdown {
            continue;
        }
        if let Some(heading) = line.strip_prefix('#') {
            inside = heading
                .trim_start_matches('#')
                .trim()
                .eq_ignore_ascii_case("arguments");
            continue;
        }
        if !inside {
            continue;
        }
        let trimmed = line.trim_start();
        let bullet = trimmed
            .strip_prefix("* ")
            .or_else(|| trimmed.strip_prefix("- "));
        match bullet {
            Some(item) => {
                if let Some(entry) = argument_entry(item) {
                    out.push(entry);
                }
            }
            // An indented line continues the entry above it.
            None if !trimmed.is_empty() && line.starts_with(char::is_whitespace) => {
                if let Some((_, text)) = out.last_mut() {
                    text.push(' ');
                    text.push_str(trimmed);
                }
            }
            None => {}
        }
    }
    out
}

fn argument_entry(item: &str) -> Option<(String, String)> {
    let item = item.trim();
    let (name, rest) = match item.strip_prefix('`') {
        Some(quoted) => {
            let end = quoted.find('`')?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => {
            let end = item.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            (&item[..end], &item[end..])
        }
    };
    let rest = rest.trim_start();
    let text = ["- ", "— ", ": ", "-- "]
        .iter()
        .find_map(|sep| rest.strip_prefix(sep))
        .or_else(|| rest.strip_prefix(':'))?;
    let text = text.trim();
    (!name.is_empty() && !text.is_empty()).then(|| (name.to_owned(), text.to_owned()))
}

/// `HTTPClient` → `http_client`, `WeatherLookup` → `weather_lookup`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_is_lower)
            {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// `weather_lookup` → `WeatherLookup`.
pub fn pascal_case(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(capitalize)
        .collect()
}

/// `word_count` → `Word count`.
pub fn humanize(name: &str) -> String {
    let words: Vec<&str> = name.split('_').filter(|w| !w.is_empty()).collect();
    capitalize(&words.join(" "))
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// An identifier as serde spells it: without a raw `r#` prefix.
pub fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// serde's `rename_all` rules, applied exactly as serde applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    pub fn parse(rule: &str) -> Option<Self> {
        Some(match rule {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// A variant name (PascalCase in Rust) under this rule.
    pub fn variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                let mut out = String::new();
                for (i, c) in variant.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake.variant(variant).to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake.variant(variant).replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .variant(variant)
                .replace('_', "-"),
        }
    }

    /// A field name (snake_case in Rust) under this rule.
    pub fn field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for c in field.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolset_names_become_snake_case_with_acronyms_kept_together() {
        assert_eq!(snake_case("HTTPClient"), "http_client");
        assert_eq!(snake_case("WeatherLookup"), "weather_lookup");
        assert_eq!(snake_case("Database"), "database");
        assert_eq!(snake_case("Api2Client"), "api2_client");
    }

    #[test]
    fn blank_doc_lines_keep_paragraphs_apart() {
        let attrs: Vec<syn::Attribute> = vec![
            syn::parse_quote!(#[doc = " First."]),
            syn::parse_quote!(#[doc = ""]),
            syn::parse_quote!(#[doc = " Second."]),
        ];
        assert_eq!(doc_text(&attrs).as_deref(), Some("First.\n\nSecond."));
    }

    #[test]
    fn prose_unwraps_paragraphs_and_keeps_them_apart() {
        assert_eq!(
            prose("One line\nwrapped, and\n  indented.\n\nA second\nparagraph."),
            "One line wrapped, and indented.\n\nA second paragraph."
        );
    }

    #[test]
    fn prose_keeps_list_items_on_their_own_lines_with_their_nesting() {
        assert_eq!(
            prose("Modes:\n* `fast` - quick, but\n  rough.\n  - nested\n2. numbered\n10) too"),
            "Modes:\n* `fast` - quick, but rough.\n  - nested\n2. numbered\n10) too"
        );
    }

    #[test]
    fn prose_keeps_code_blocks_tables_and_hard_breaks() {
        assert_eq!(
            prose(
                "Text\n\n    indented code\n      more\n\n| a | b |\n|---|---|\nline one  \nline two\\\nline three"
            ),
            "Text\n\n    indented code\n      more\n\n| a | b |\n|---|---|\nline one\nline two\nline three"
        );
        assert_eq!(
            prose("Before\n```text\nkept\n\n  as is\n```\nafter\nwrapped"),
            "Before\n```text\nkept\n\n  as is\n```\nafter wrapped"
        );
    }

    #[test]
    fn method_names_are_humanized() {
        assert_eq!(humanize("word_count"), "Word count");
        assert_eq!(humanize("query"), "Query");
    }

    #[test]
    fn argument_sections_give_parameter_descriptions() {
        let doc = "Looks up the weather.\n\n# Arguments\n\n* `city` - The city.\n* units: `metric` or\n  `imperial`.\n\n# Errors\n* `x` - not an argument";
        assert_eq!(
            argument_docs(doc),
            [
                ("city".to_owned(), "The city.".to_owned()),
                ("units".to_owned(), "`metric` or `imperial`.".to_owned()),
            ]
        );
        assert_eq!(description(doc).as_deref(), Some("Looks up the weather."));
    }

    #[test]
    fn code_blocks_do_not_end_the_description() {
        let doc = "Looks something up.\n\n```\n# use foo;\n#[derive(Debug)]\nstruct X;\n```\nMore.\n\n# Arguments\n* `x` - An x.";
        assert_eq!(
            description(doc).as_deref(),
            Some("Looks something up.\n\n```\n# use foo;\n#[derive(Debug)]\nstruct X;\n```\nMore.")
        );
        assert_eq!(argument_docs(doc), [("x".to_owned(), "An x.".to_owned())]);
    }

    #[test]
    fn rename_rules_match_serde() {
        assert_eq!(RenameRule::Snake.variant("InProgress"), "in_progress");
        assert_eq!(
            RenameRule::ScreamingKebab.variant("InProgress"),
            "IN-PROGRESS"
        );
        assert_eq!(RenameRule::Camel.field("due_date"), "dueDate");
        assert_eq!(RenameRule::Pascal.field("due_date"), "DueDate");
        assert_eq!(RenameRule::Kebab.field("due_date"), "due-date");
    }
}
