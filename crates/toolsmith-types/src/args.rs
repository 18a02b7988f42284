//! Argument text: what a model sends as a tool call's arguments, read into a JSON object.

use serde_json::Value;

use crate::coerce::Coerced;
use crate::diagnostics::{CoerceErrors, Repair};
use crate::policy::Policy;
use crate::ty::TypeGraph;

/// Tool-call arguments as they arrive: text from a model, or JSON already parsed.
#[derive(Debug, Clone, Copy)]
pub enum Arguments<'a> {
    /// Argument text, read by the rules for argument text (fences, near-JSON repairs).
    Text(&'a str),
    /// A JSON value; a JSON string is read as argument text.
    Json(&'a Value),
}

/// Argument text read into a JSON object, with the repairs the reading needed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedArguments {
    /// The arguments object.
    pub value: serde_json::Map<String, Value>,
    /// Repairs made to the text (path `""`).
    pub repairs: Vec<Repair>,
}

/// Reads argument text into a JSON object.
///
/// # Errors
/// `json_invalid`, `duplicate_key`, `arguments_type`, `too_deep` or `too_large`, or
/// `repair_refused` under a strict policy.
pub fn parse_arguments(text: &str, policy: &Policy) -> Result<ParsedArguments, CoerceErrors> {
    let _ = (text, policy);
    todo!("argument text")
}

/// Reads `arguments` and coerces them to the root type of `graph`: the one call a tool runtime
/// makes.
///
/// # Errors
/// Every problem with the text or the values.
pub fn coerce_arguments(
    graph: &TypeGraph,
    arguments: Arguments<'_>,
    policy: &Policy,
) -> Result<Coerced, CoerceErrors> {
    let _ = (graph, arguments, policy);
    todo!("argument coercion")
}
