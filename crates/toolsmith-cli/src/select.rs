//! Which tools a command works on, under which names: `--tools`, `--prefix` and `--rename`,
//! over [`Registry::select`], [`Registry::renamed`] and [`Registry::prefixed`]; and the tool a
//! command names ([`find_tool`]).

use std::borrow::Cow;

use clap::Args;
use toolsmith::{RegisteredTool, Registry, ToolError};

use crate::error::UsageError;

/// The tools a command works on (`--tools`), under which names (`--rename`, `--prefix`).
#[derive(Debug, Args)]
pub struct ToolSelection {
    /// Only the tools this pattern matches: a name, or `*` standing for any run of characters
    /// (`'text_*'`). Repeat it to take the tools any of the patterns match; a pattern that
    /// matches no tool is a usage error.
    #[arg(long = "tools", value_name = "PATTERN")]
    patterns: Vec<String>,
    #[command(flatten)]
    renames: Renames,
}

/// New names for tools: `--rename` and `--prefix`. The model sees them, calls by them and reads
/// them in errors.
#[derive(Debug, Args)]
pub struct Renames {
    /// Call the tool OLD by the name NEW (`github_get_issue=issue`). Repeat it for each tool;
    /// renames apply in order, before the prefix.
    #[arg(long = "rename", value_name = "OLD=NEW", value_parser = rename)]
    renames: Vec<(String, String)>,
    /// Put `PREFIX_` before every tool's name (`--prefix gh`: `gh_text_wc`).
    #[arg(long, value_name = "PREFIX", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    prefix: Option<String>,
}

impl ToolSelection {
    /// `registry`'s tools as selected and renamed (`registry` itself when no flag is given).
    pub fn apply<'r>(&self, registry: &'r Registry) -> Result<Cow<'r, Registry>, UsageError> {
        let selected = if self.patterns.is_empty() {
            Cow::Borrowed(registry)
        } else {
            let selected = registry
                .select(&self.patterns)
                .map_err(|error| UsageError::Select {
                    flag: "--tools",
                    error,
                })?;
            Cow::Owned(selected)
        };
        self.renames.apply(selected)
    }
}

impl Renames {
    /// `registry`'s tools renamed (`registry` itself when no flag is given).
    pub fn apply<'r>(&self, registry: Cow<'r, Registry>) -> Result<Cow<'r, Registry>, UsageError> {
        let mut renamed = registry;
        for (from, to) in &self.renames {
            let next = renamed
                .renamed(from, to)
                .map_err(|error| UsageError::Select {
                    flag: "--rename",
                    error,
                })?;
            renamed = Cow::Owned(next);
        }
        if let Some(prefix) = &self.prefix {
            let next = renamed
                .prefixed(prefix)
                .map_err(|error| UsageError::Select {
                    flag: "--prefix",
                    error,
                })?;
            renamed = Cow::Owned(next);
        }
        Ok(renamed)
    }
}

/// `OLD=NEW`, both names non-empty.
fn rename(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((from, to)) if !from.is_empty() && !to.is_empty() => {
            Ok((from.to_owned(), to.to_owned()))
        }
        _ => Err("must be OLD=NEW, a tool's name and the name to call it by".to_owned()),
    }
}

/// The tool named `name`, or an error naming it with the nearest registered name.
pub fn find_tool<'r>(registry: &'r Registry, name: &str) -> Result<&'r RegisteredTool, UsageError> {
    let did_you_mean = match registry.find(name) {
        Ok(entry) => return Ok(entry),
        Err(ToolError::NotFound { did_you_mean, .. }) => did_you_mean,
        Err(_) => None,
    };
    Err(UsageError::UnknownTool {
        name: name.to_owned(),
        did_you_mean,
        registered: registry.len(),
    })
}
