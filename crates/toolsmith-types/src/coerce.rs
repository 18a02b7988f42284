//! Coercion: turning what a model sent into the canonical value of a [`Type`], leniently but
//! never lossily (`../shared/spec/coercion-rulebook.md` is the policy this implements).

use serde_json::Value;

use crate::diagnostics::{CoerceErrors, Repair};
use crate::policy::Policy;
use crate::ty::TypeGraph;

/// A successful coercion: the canonical value and every repair made to reach it.
#[derive(Debug, Clone, PartialEq)]
pub struct Coerced {
    /// Plain JSON in the type's own shape: integers as integers, enums in their declared
    /// spelling, defaults filled in, no undeclared keys.
    pub value: Value,
    /// Every lenient step taken, in document order. Empty when the input was already canonical.
    pub repairs: Vec<Repair>,
}

/// Coerces `input` to the root type of `graph` under `policy`.
///
/// # Errors
/// Every problem found, each with its path, code, input and expectation.
pub fn coerce(graph: &TypeGraph, input: &Value, policy: &Policy) -> Result<Coerced, CoerceErrors> {
    let _ = (graph, input, policy);
    todo!("coercion")
}
