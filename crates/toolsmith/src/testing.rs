//! Helpers for testing tools: call one with `json!` arguments, and hold a schema to a golden file.
//!
//! ```
//! use serde_json::json;
//! use toolsmith::testing;
//!
//! /// Counts the words in a text.
//! #[toolsmith::tool]
//! fn word_count(text: String) -> usize {
//!     text.split_whitespace().count()
//! }
//!
//! assert_eq!(testing::call_text(&WordCount, json!({"text": "one two three"})), Ok("3".to_owned()));
//! // An error comes back as the message the model would read.
//! let error = testing::call_text(&WordCount, json!({"txt": "one"})).unwrap_err();
//! assert!(error.contains("did you mean \"text\""), "{error}");
//! ```

use std::path::Path;

use serde_json::Value;
use toolsmith_types::{Arguments, Dialect};

use crate::{Context, Tool, ToolError, ToolExt, ToolOutput};

/// Calls `tool` with `arguments` (a JSON object, or a JSON string of argument text) in a
/// default [`Context`], to its end on this thread ([`ToolExt::call_blocking`]); a panic is
/// [`ToolError::Panicked`], as under a registry's default layers.
///
/// # Errors
/// What the tool's call returns.
pub fn call(tool: &dyn Tool, arguments: Value) -> Result<ToolOutput, ToolError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tool.call_blocking(Arguments::Json(&arguments), Context::new())
    }))
    .unwrap_or_else(|payload| {
        Err(ToolError::Panicked {
            tool: tool.name().to_owned(),
            message: crate::future::panic_message(payload.as_ref()),
        })
    })
}

/// Calls `tool` as [`call`] does: its output text, or the message a model would read.
///
/// # Errors
/// The error's [`ToolError::to_model_message`].
pub fn call_text(tool: &dyn Tool, arguments: Value) -> Result<String, String> {
    call(tool, arguments)
        .map(|output| output.as_text().into_owned())
        .map_err(|error| error.to_model_message())
}

/// Asserts that `actual` equals the JSON in the file at `path` (relative to the package being
/// tested). With `UPDATE_GOLDEN=1` in the environment the file is written instead.
///
/// # Panics
/// When the file is missing or unreadable, or differs from `actual`: this is an assertion.
#[track_caller]
pub fn assert_golden(path: impl AsRef<Path>, actual: &Value) {
    let path = path.as_ref();
    let rendered = match serde_json::to_string_pretty(actual) {
        Ok(text) => text + "\n",
        Err(error) => panic!("the value could not be written as JSON: {error}"),
    };
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        if let Some(parent) = path.parent()
            && let Err(error) = std::fs::create_dir_all(parent)
        {
            panic!("could not create {}: {error}", parent.display());
        }
        if let Err(error) = std::fs::write(path, &rendered) {
            panic!("could not write {}: {error}", path.display());
        }
        return;
    }
    let expected = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => panic!(
            "could not read golden file {} ({error}); run with UPDATE_GOLDEN=1 to create it",
            path.display()
        ),
    };
    let expected_value: Value = match serde_json::from_str(&expected) {
        Ok(value) => value,
        Err(error) => panic!("golden file {} is not JSON: {error}", path.display()),
    };
    if &expected_value != actual {
        panic!(
            "{} differs from the actual value (run with UPDATE_GOLDEN=1 to accept it)\n\
             --- expected\n{expected}\n--- actual\n{rendered}",
            path.display()
        );
    }
}

/// Asserts that a tool's declaration in the reference's shape, `{"type": "function",
/// "function": {"name", "description", "parameters"}}` with the parameters in canonical JSON
/// Schema ([`envelope`](crate::envelope) in `Dialect::JsonSchema`, wrapped), equals the golden
/// file at `path`, as [`assert_golden`] does.
///
/// # Panics
/// When the schema cannot be emitted, or differs from the file.
#[track_caller]
pub fn assert_schema_golden(tool: &dyn Tool, path: impl AsRef<Path>) {
    match crate::envelope(tool, Dialect::JsonSchema) {
        Ok(function) => assert_golden(
            path,
            &serde_json::json!({"type": "function", "function": function}),
        ),
        Err(error) => panic!("the schema of `{}` cannot be emitted: {error}", tool.name()),
    }
}

/// Asserts that the declarations of `tools` in every dialect equal the golden files
/// `<dir>/<dialect>.json`, as [`assert_golden`] does. Each file holds one entry per tool: its
/// [`envelope`](crate::envelope), or `{"error": ...}` where the receiver cannot take it.
///
/// # Panics
/// When a file differs from the declarations.
#[track_caller]
pub fn assert_envelopes_golden(tools: &[&dyn Tool], dir: impl AsRef<Path>) {
    for dialect in Dialect::ALL {
        let declared: Vec<Value> = tools
            .iter()
            .map(|tool| match crate::envelope(*tool, dialect) {
                Ok(envelope) => envelope,
                Err(error) => serde_json::json!({"error": error.to_string()}),
            })
            .collect();
        assert_golden(
            dir.as_ref().join(format!("{dialect}.json")),
            &Value::Array(declared),
        );
    }
}
