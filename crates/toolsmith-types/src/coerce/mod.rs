//! Coercion: turning what a model sent into the canonical value of a [`Type`], leniently but
//! never lossily, by the project's coercion rulebook.
//!
//! One walk over the input, guided by the type: every lenient step is recorded as a [`Repair`]
//! (or refused with a `repair_refused` error under a strict policy), and every problem is
//! collected in document order instead of stopping at the first.
//!
//! Architecture invariant: recursion follows the input, which is finite, and is bounded by
//! [`Limits::max_depth`](crate::Limits::max_depth); steps that do not descend into the input
//! (references, unions, wrapping a value in an array) are bounded separately, so no type and no
//! input can overflow the stack.

mod compound;
mod path;
mod scalar;

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::diagnostics::{
    CoerceError, CoerceErrors, ErrorCode, Repair, RepairCode, abridged_segment, count,
};
use crate::json::{JsonText, read_json_text, too_many_values};
use crate::literal::{Literals, NumberLiterals};
use crate::policy::{Mode, Policy};
use crate::ty::{StructType, Type, TypeGraph};

use compound::StyledNames;
use path::Path;

pub(crate) use scalar::{Int, integer_ok, number_bounds_ok, number_violations, string_violations};

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
/// ```
/// use serde_json::json;
/// use toolsmith_types::{coerce, Field, Policy, StructType, Type, TypeGraph};
///
/// let graph = TypeGraph::new(Type::Struct(
///     StructType::anonymous()
///         .field(Field::new("count", Type::integer()))
///         .field(Field::new("tags", Type::array(Type::string()))),
/// ));
/// let out = coerce(&graph, &json!({"count": "3", "tags": "urgent"}), &Policy::default())?;
/// assert_eq!(out.value, json!({"count": 3, "tags": ["urgent"]}));
/// let codes: Vec<_> = out.repairs.iter().map(|r| r.code.as_str()).collect();
/// assert_eq!(codes, ["int_from_string", "wrap_in_array"]);
///
/// let errors = coerce(&graph, &json!({"count": 2.5}), &Policy::default()).unwrap_err();
/// let codes: Vec<_> = errors.iter().map(|e| (e.path.as_str(), e.code.as_str())).collect();
/// assert_eq!(codes, [("/count", "int_from_float"), ("/tags", "missing")]);
/// # Ok::<(), toolsmith_types::CoerceErrors>(())
/// ```
///
/// # Errors
/// Every problem found, each with its path, code, input and expectation; past
/// [`Limits::max_errors`](crate::Limits::max_errors) the rest are summarised in one
/// `too_many_errors` error at the end. An input holding more than
/// [`Limits::max_values`](crate::Limits::max_values) values is one `too_large` error, as the
/// same arguments sent as text are.
pub fn coerce(graph: &TypeGraph, input: &Value, policy: &Policy) -> Result<Coerced, CoerceErrors> {
    let values = values_within_limit(input, policy)?;
    let literals = Literals::none();
    let mut coercer = Coercer::new(graph, policy, &literals, values);
    let value = coercer.value(&graph.root, input, &Path::ROOT);
    coercer.finish(value).map(|finished| {
        let (value, repairs) = finished.reported_repairs(policy.limits.max_repairs);
        Coerced {
            value: value.into_value(input),
            repairs,
        }
    })
}

/// Coerces `input`, taken by value, to the root type of `graph` under `policy`: the same as
/// [`coerce`], except that an input that is already canonical is returned as it is, without a
/// copy (what a caller holding freshly parsed arguments wants).
///
/// # Errors
/// As [`coerce`].
pub fn coerce_owned(
    graph: &TypeGraph,
    input: Value,
    policy: &Policy,
) -> Result<Coerced, CoerceErrors> {
    let values = values_within_limit(&input, policy)?;
    let read = coerce_read(graph, input, NumberLiterals::None, values, policy)?;
    Ok(Coerced {
        value: read.value,
        repairs: capped(
            Vec::new(),
            read.repairs,
            read.repairs_cut,
            policy.limits.max_repairs,
        ),
    })
}

/// What [`coerce_read`] made of a value: the canonical value, the repairs kept, and how many
/// more were made and not built (for the caller to report after its own).
pub(crate) struct Read {
    pub(crate) value: Value,
    pub(crate) repairs: Vec<Repair>,
    pub(crate) repairs_cut: usize,
}

/// [`coerce_owned`] for a value read from text whose number literals `literals` says where to
/// find (numbers are then decided on the digits that were sent), holding `values` JSON values
/// (within the limit: the reader counted them).
pub(crate) fn coerce_read(
    graph: &TypeGraph,
    input: Value,
    literals: NumberLiterals<'_>,
    values: usize,
    policy: &Policy,
) -> Result<Read, CoerceErrors> {
    let finished = {
        let literals = literals.of(&input);
        let mut coercer = Coercer::new(graph, policy, &literals, values);
        let value = coercer.value(&graph.root, &input, &Path::ROOT);
        coercer.finish(value)
    }?;
    Ok(Read {
        value: match finished.value {
            Out::Same => input,
            Out::New(value) => value,
        },
        repairs: finished.repairs,
        repairs_cut: finished.repairs_cut,
    })
}

/// Coerces `default`, a field's default, to `ty`, a type of `graph` (its root or any part of it),
/// under `policy`, as coercion reads a default at call time: how import checks each default.
pub(crate) fn coerce_default(
    graph: &TypeGraph,
    ty: &Type,
    default: &Value,
    policy: &Policy,
) -> Result<Coerced, CoerceErrors> {
    let literals = Literals::none();
    // A default is part of the type: only JSON text inside it counts against the limit.
    let mut coercer = Coercer::new(graph, policy, &literals, 0);
    coercer.in_default += 1;
    let value = coercer.value(ty, default, &Path::ROOT);
    coercer.finish(value).map(|finished| {
        let (value, repairs) = finished.reported_repairs(policy.limits.max_repairs);
        Coerced {
            value: value.into_value(default),
            repairs,
        }
    })
}

/// How many JSON values `input` holds (every scalar, array and object; keys not counted),
/// counted without recursion.
fn values_in(input: &Value) -> usize {
    let mut values = 0;
    let mut stack = vec![input];
    while let Some(value) = stack.pop() {
        values += 1;
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    values
}

/// How many JSON values `input` holds, or the `too_large` error when that is more than the
/// policy allows: the error argument text holding the same value gets.
fn values_within_limit(input: &Value, policy: &Policy) -> Result<usize, CoerceErrors> {
    let max = policy.limits.max_values;
    match values_in(input) {
        values if values > max => Err(CoerceErrors(vec![too_many_values(max, Some(values))])),
        values => Ok(values),
    }
}

/// `text` in one canonical word style, for matching names across case and word style: its words,
/// lowercased, joined by `_`; `None` when `text` is not words written in one style.
///
/// A word ends at a separator (`_`, `-` or a space) or at a change of case (`inProgress`,
/// `HTTPServer`). Words are never split or joined: the text uses one kind of separator, exactly
/// one between two words and none at either end, so `In-Progress`, `IN_PROGRESS`,
/// `in progress` and `inProgress` all read `in_progress`, while `i_n_progress`, `--done--` and
/// `d o n e` do not read as `in_progress` or `done`.
pub(crate) fn fold_style(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 4);
    let mut separator = None;
    // Whether the previous character ended a word with a separator (or nothing came yet).
    let mut at_start = true;
    let mut chars = text.chars().peekable();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        if matches!(c, '_' | '-' | ' ') {
            if at_start || separator.is_some_and(|s| s != c) {
                return None;
            }
            separator = Some(c);
            out.push('_');
            at_start = true;
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            let next_is_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            let camel = c.is_uppercase()
                && (p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next_is_lower));
            if camel {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
        at_start = false;
        previous = Some(c);
    }
    (!at_start).then_some(out)
}

/// Most steps taken at one place in the input without descending into it (following a
/// reference, trying a union member, wrapping a value in an array). Bounds types such as
/// `T = T | int` or `T = [T]` that would otherwise recurse forever on a scalar.
const MAX_HOPS: u8 = 16;

/// What is expected when the budget for speculative steps is spent.
const TOO_AMBIGUOUS: &str = "a value that fits its union with less guessing (add `_type` tags)";

/// A coerced value, relative to its input: the input itself when it was canonical already (the
/// clean path builds nothing and copies the input once, at the end), else the new value.
enum Out {
    /// The input is its own canonical value.
    Same,
    /// The canonical value differs from the input.
    New(Value),
}

impl Out {
    /// The canonical value of `input`.
    fn into_value(self, input: &Value) -> Value {
        match self {
            Out::Same => input.clone(),
            Out::New(value) => value,
        }
    }

    /// The canonical value, as a changed value relative to some other input.
    fn renewed(self, input: &Value) -> Out {
        Out::New(self.into_value(input))
    }
}

/// A coercion's result before the input is given up: the canonical value relative to it.
struct Finished {
    value: Out,
    /// The repairs kept (at most the policy's `max_repairs`).
    repairs: Vec<Repair>,
    /// How many more were made and not built.
    repairs_cut: usize,
}

impl Finished {
    /// The repairs as reported: those kept, then the summary of those cut, if any.
    fn reported_repairs(self, max_repairs: usize) -> (Out, Vec<Repair>) {
        let repairs = capped(Vec::new(), self.repairs, self.repairs_cut, max_repairs);
        (self.value, repairs)
    }
}

/// `first` then `then` (which came with `cut` more repairs not built), as reported under a cap of
/// `max` repairs: at most `max` of them, then one `too_many_repairs` entry counting the rest.
pub(crate) fn capped(
    mut first: Vec<Repair>,
    then: Vec<Repair>,
    cut: usize,
    max: usize,
) -> Vec<Repair> {
    first.extend(then);
    let over = first.len().saturating_sub(max) + cut;
    first.truncate(max);
    if over > 0 {
        first.push(Repair::too_many(over));
    }
    first
}

/// The walk's state: the graph, the policy, and the diagnostics found so far.
struct Coercer<'g> {
    graph: &'g TypeGraph,
    policy: &'g Policy,
    /// The literals of the input's numbers, where it was read from text.
    literals: &'g Literals,
    /// The literals of the values sent as JSON text that enclose this step, innermost last.
    in_json_text: Vec<Literals>,
    /// How many field defaults (part of the type, not of the input) enclose this step.
    in_default: u32,
    /// The repairs kept, never more than the policy's `max_repairs`.
    repairs: Vec<Repair>,
    /// The repairs made past that cap: counted, never built.
    repairs_cut: usize,
    /// The errors kept, never more than the policy's `max_errors`.
    errors: Vec<CoerceError>,
    /// The errors found past that cap: counted, never built.
    cut: Cut,
    /// Each struct's fields by their names in canonical word style, built the first time a key
    /// of that struct is not a declared name (keyed by the struct's address in the graph).
    styles: HashMap<*const StructType, StyledNames, foldhash::fast::RandomState>,
    /// How many speculative coercions enclose the current step.
    trial_depth: u32,
    /// Steps taken inside speculative coercions so far.
    trial_steps: usize,
    /// Steps taken outside them: the size of the input walked so far.
    steps: usize,
    /// The JSON values of the request so far: the input's, and those of the JSON text inside
    /// its strings read by the steps taken for sure (a trial's count only once it is
    /// committed). What is left of the policy's `max_values` bounds the next JSON text.
    values: usize,
}

/// Steps that may be taken speculatively (trying union members, inferring tags) in any
/// coercion, on top of [`TRIAL_STEPS_PER_STEP`] for each step taken for sure. Unions nested in
/// unions can make trying every member exponential in the depth of the input; past this budget,
/// a union that still needs trying is an error instead of a long wait.
const BASE_TRIAL_STEPS: usize = 1 << 14;

/// Speculative steps allowed for each step outside speculation.
const TRIAL_STEPS_PER_STEP: usize = 16;

/// Errors found once [`Limits::max_errors`](crate::Limits::max_errors) were kept already: what a
/// speculative coercion needs to know of them (whether they were only refused repairs, whether a
/// limit was hit), without building them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cut {
    /// How many.
    count: usize,
    /// How many were not `repair_refused`.
    not_refused: usize,
    /// How many were `too_deep` or `too_large`.
    limits: usize,
}

impl Cut {
    fn add(&mut self, code: ErrorCode) {
        self.count += 1;
        self.not_refused += usize::from(code != ErrorCode::RepairRefused);
        self.limits += usize::from(matches!(code, ErrorCode::TooDeep | ErrorCode::TooLarge));
    }

    /// What was cut since `before`.
    fn since(self, before: Cut) -> Cut {
        Cut {
            count: self.count - before.count,
            not_refused: self.not_refused - before.not_refused,
            limits: self.limits - before.limits,
        }
    }

    fn extend(&mut self, other: Cut) {
        self.count += other.count;
        self.not_refused += other.not_refused;
        self.limits += other.limits;
    }
}

/// The diagnostics of a speculative coercion (a union member, a tag inference), kept aside until
/// the caller decides whether they count.
struct Trial {
    value: Option<Out>,
    repairs: Vec<Repair>,
    /// Its repairs past the cap.
    repairs_cut: usize,
    errors: Vec<CoerceError>,
    /// Its errors past the cap.
    cut: Cut,
    /// Speculative steps taken inside it (nested trials included).
    steps: usize,
    /// The values of JSON text inside strings it read.
    values: usize,
}

impl Trial {
    /// Accepted as it is: no repair, no error.
    fn is_clean(&self) -> bool {
        self.value.is_some()
            && self.repairs.is_empty()
            && self.repairs_cut == 0
            && self.errors.is_empty()
            && self.cut.count == 0
    }

    /// Failed on a limit of the policy (nesting or size) somewhere inside.
    fn hit_a_limit(&self) -> bool {
        self.cut.limits > 0
            || self
                .errors
                .iter()
                .any(|e| matches!(e.code, ErrorCode::TooDeep | ErrorCode::TooLarge))
    }

    /// Accepted, possibly with repairs; under a strict policy, failing only for refused repairs.
    fn is_acceptable(&self) -> bool {
        (self.value.is_some() || !self.errors.is_empty() || self.cut.count > 0)
            && self.cut.not_refused == 0
            && self
                .errors
                .iter()
                .all(|e| e.code == ErrorCode::RepairRefused)
    }
}

impl<'g> Coercer<'g> {
    fn new(
        graph: &'g TypeGraph,
        policy: &'g Policy,
        literals: &'g Literals,
        values: usize,
    ) -> Self {
        Coercer {
            graph,
            policy,
            literals,
            in_json_text: Vec::new(),
            in_default: 0,
            repairs: Vec::new(),
            repairs_cut: 0,
            errors: Vec::new(),
            cut: Cut::default(),
            styles: HashMap::default(),
            trial_depth: 0,
            trial_steps: 0,
            steps: 0,
            values,
        }
    }

    /// The result: the value when nothing went wrong, else every error (capped).
    fn finish(mut self, value: Option<Out>) -> Result<Finished, CoerceErrors> {
        let clean = self.errors.is_empty() && self.cut.count == 0;
        match value {
            Some(value) if clean => {
                return Ok(Finished {
                    value,
                    repairs: self.repairs,
                    repairs_cut: self.repairs_cut,
                });
            }
            None if clean => self.error(
                &Path::ROOT,
                ErrorCode::SchemaInvalid,
                None,
                "a value the type can describe",
            ),
            _ => {}
        }
        if self.cut.count > 0 {
            let (max, more) = (self.policy.limits.max_errors, self.cut.count);
            self.errors.push(CoerceError::new(
                "",
                ErrorCode::TooManyErrors,
                None,
                format!("at most {max} problems reported at once; {more} more not shown"),
            ));
        }
        Err(CoerceErrors(self.errors))
    }

    /// Records the error that `build` makes, unless the policy's `max_errors` are kept already:
    /// past the cap an error is only counted, so that hostile input never makes errors costly.
    fn push_error(&mut self, code: ErrorCode, build: impl FnOnce() -> CoerceError) {
        if self.errors.len() < self.policy.limits.max_errors {
            self.errors.push(build());
        } else {
            self.cut.add(code);
        }
    }

    /// Coerces the value at `path`, after checking the limits on its depth and size.
    fn value(&mut self, ty: &'g Type, input: &Value, path: &Path<'_>) -> Option<Out> {
        if !self.within_limits(input, path) {
            return None;
        }
        self.dispatch(ty, input, path, 0)
    }

    /// Whether the value at `path` (not its children) is within the policy's limits; records
    /// the error when it is not.
    fn within_limits(&mut self, input: &Value, path: &Path<'_>) -> bool {
        let limits = &self.policy.limits;
        if path.depth > limits.max_depth {
            let expected = format!("at most {} levels of nesting", limits.max_depth);
            self.error(path, ErrorCode::TooDeep, None, expected);
            return false;
        }
        // The size that was sent, beside the limit it is past: what to cut, and by how much.
        let expected = match input {
            Value::String(s) if s.len() > limits.max_string_bytes => format!(
                "a string of at most {} bytes; {} bytes were sent",
                count(limits.max_string_bytes),
                count(s.len())
            ),
            Value::Array(items) if items.len() > limits.max_items => format!(
                "at most {} items; {} were sent",
                count(limits.max_items),
                count(items.len())
            ),
            Value::Object(map) if map.len() > limits.max_items => format!(
                "at most {} entries; {} were sent",
                count(limits.max_items),
                count(map.len())
            ),
            _ => return true,
        };
        self.error(path, ErrorCode::TooLarge, None, expected);
        false
    }

    /// Coerces `input` as `ty`; `hops` counts the steps already taken here without descending.
    fn dispatch(&mut self, ty: &'g Type, input: &Value, path: &Path<'_>, hops: u8) -> Option<Out> {
        if self.trial_depth == 0 {
            self.steps += 1;
        } else {
            self.trial_steps += 1;
            if self.trials_spent() {
                return self.fail(path, ErrorCode::TooLarge, None, TOO_AMBIGUOUS);
            }
        }
        if hops > MAX_HOPS {
            return self.fail(
                path,
                ErrorCode::SchemaInvalid,
                None,
                "a type that does not refer to itself without nesting",
            );
        }
        if let (Value::String(text), Some(open)) = (input, json_text_opening(ty))
            && text.trim_start().starts_with(open)
        {
            // JSON text for a container is read as JSON, or refused; never read another way
            // because it is too deep or too large to read.
            let limits = &self.policy.limits;
            let depth_left = limits.max_depth.saturating_sub(path.depth);
            let values_left = limits.max_values.saturating_sub(self.values);
            let parsed = match read_json_text(text, depth_left, values_left, limits) {
                JsonText::Value(parsed, values) if kind_opened_by(&parsed) == Some(open) => {
                    self.values += values;
                    Some(parsed)
                }
                JsonText::Value(..) | JsonText::NotJson => None,
                JsonText::Refused(error) => {
                    let (code, expected) = error.code_and_expected();
                    return self.fail(path, code, None, expected);
                }
            };
            if let Some(parsed) = parsed {
                return self.json_text(ty, text, input, parsed, open, path, hops);
            }
        }
        self.dispatch_value(ty, input, path, hops)
    }

    /// Coerces `parsed`, an array or object (opened by `open`) read from `text`, the string
    /// `input`, as `ty`.
    #[allow(clippy::too_many_arguments)]
    fn json_text(
        &mut self,
        ty: &'g Type,
        text: &str,
        input: &Value,
        parsed: Value,
        open: char,
        path: &Path<'_>,
        hops: u8,
    ) -> Option<Out> {
        let expected = if open == '[' { "an array" } else { "an object" };
        let code = RepairCode::ParsedJsonString;
        if !self.repair(path, code, expected, input, &parsed) || !self.within_limits(&parsed, path)
        {
            return None;
        }
        // Its numbers are decided on their literals too, while `parsed` is walked.
        let literals = NumberLiterals::Text(text.into()).of(&parsed);
        self.in_json_text.push(literals);
        let out = self.dispatch(ty, &parsed, path, hops + 1);
        self.in_json_text.pop();
        Some(match out? {
            Out::Same => Out::New(parsed),
            changed => changed,
        })
    }

    /// Coerces `input` as `ty`, by its kind.
    fn dispatch_value(
        &mut self,
        ty: &'g Type,
        input: &Value,
        path: &Path<'_>,
        hops: u8,
    ) -> Option<Out> {
        match ty {
            Type::String(st) => self.string(st, input, path),
            Type::Integer(it) => self.integer(it, input, path),
            Type::Number(nt) => self.number(nt, input, path),
            Type::Boolean => self.boolean(input, path),
            Type::Enum(et) => self.enumeration(et, input, path),
            Type::Struct(st) => self.structure(st, input, path),
            Type::Array(at) => self.array(at, input, path, hops),
            Type::Map(mt) => self.map(mt, input, path),
            Type::Nilable(inner) => match input {
                Value::Null => Some(Out::Same),
                _ => self.dispatch(inner, input, path, hops + 1),
            },
            Type::Tagged(tu) => self.tagged(tu, input, path),
            Type::Union(members) => self.union(members, input, path, hops),
            // Following references costs no hop: `resolve` itself stops at a cycle of bare
            // references, however long a chain of aliases is.
            Type::Ref(name) => match self.graph.resolve(ty) {
                Some(target) => self.dispatch(target, input, path, hops),
                None => self.fail(
                    path,
                    ErrorCode::SchemaInvalid,
                    None,
                    format!("a type defined as `{name}` (it is undefined, or only refers on)"),
                ),
            },
            Type::Any => self.any(input, path),
        }
    }

    /// Runs `coerce` with its diagnostics kept aside.
    fn trial(&mut self, coerce: impl FnOnce(&mut Self) -> Option<Out>) -> Trial {
        let (repairs, errors, steps) = (self.repairs.len(), self.errors.len(), self.trial_steps);
        let (cut, repairs_cut, values) = (self.cut, self.repairs_cut, self.values);
        self.trial_depth += 1;
        let value = coerce(self);
        self.trial_depth -= 1;
        let trial_cut = self.cut.since(cut);
        self.cut = cut;
        let trial_repairs_cut = std::mem::replace(&mut self.repairs_cut, repairs_cut) - repairs_cut;
        Trial {
            value,
            repairs: self.repairs.split_off(repairs),
            repairs_cut: trial_repairs_cut,
            errors: self.errors.split_off(errors),
            cut: trial_cut,
            steps: self.trial_steps - steps,
            values: std::mem::replace(&mut self.values, values) - values,
        }
    }

    /// Whether the budget for speculative steps is spent.
    fn trials_spent(&self) -> bool {
        self.trial_steps > BASE_TRIAL_STEPS + self.steps.saturating_mul(TRIAL_STEPS_PER_STEP)
    }

    /// Whether the budget for speculative steps is spent; records the error when it is.
    fn out_of_trials(&mut self, path: &Path<'_>) -> bool {
        let spent = self.trials_spent();
        if spent {
            self.error(path, ErrorCode::TooLarge, None, TOO_AMBIGUOUS);
        }
        spent
    }

    /// Keeps a trial's diagnostics, in place, and returns its value.
    fn commit(&mut self, trial: Trial) -> Option<Out> {
        if self.trial_depth == 0 {
            // The chosen trial was real work on the input, not speculation: it stops counting
            // against the speculation budget (an outer trial, if any, settles this itself).
            self.trial_steps -= trial.steps;
            self.steps += trial.steps;
        }
        // What it read from JSON text is now part of the value being built.
        self.values += trial.values;
        // Diagnostics recorded since the trial ran (the repair that unwraps its value) may leave
        // less room under the caps than the trial had: what does not fit is counted.
        let limits = &self.policy.limits;
        let mut repairs = trial.repairs;
        let room = limits.max_repairs.saturating_sub(self.repairs.len());
        self.repairs_cut += trial.repairs_cut + repairs.len().saturating_sub(room);
        repairs.truncate(room);
        self.repairs.extend(repairs);
        let mut errors = trial.errors;
        let room = limits.max_errors.saturating_sub(self.errors.len());
        for error in errors.iter().skip(room) {
            self.cut.add(error.code);
        }
        errors.truncate(room);
        self.errors.extend(errors);
        self.cut.extend(trial.cut);
        trial.value
    }

    /// The literal the number `node` was sent as, when it is known.
    fn literal(&self, node: &Value, number: &serde_json::Number) -> Option<String> {
        self.in_json_text
            .last()
            .unwrap_or(self.literals)
            .of(node, number)
    }

    /// Records an error at `path`.
    fn error(
        &mut self,
        path: &Path<'_>,
        code: ErrorCode,
        input: Option<&Value>,
        expected: impl Into<String>,
    ) {
        self.push_error(code, || {
            CoerceError::new(path.render(), code, input.map(abridged), expected)
        });
    }

    /// Records an error at `path` and returns no value.
    fn fail(
        &mut self,
        path: &Path<'_>,
        code: ErrorCode,
        input: Option<&Value>,
        expected: impl Into<String>,
    ) -> Option<Out> {
        self.error(path, code, input, expected);
        None
    }

    /// Records an error listing the `allowed` values, with the nearest one to `given`.
    fn fail_allowed(
        &mut self,
        path: &Path<'_>,
        code: ErrorCode,
        input: &Value,
        expected: &str,
        allowed: impl FnOnce() -> Vec<String>,
    ) -> Option<Out> {
        self.push_error(code, || {
            let given = match input {
                Value::String(s) => Cow::Borrowed(s.as_str()),
                other => Cow::Owned(other.to_string()),
            };
            CoerceError::new(path.render(), code, Some(abridged(input)), expected)
                .with_allowed(allowed(), Some(&given))
        });
        None
    }

    /// Records a repair at `path` that made `to` of `from`, or under a strict policy refuses it
    /// with an error saying what was `expected`. Returns whether to go on with the repaired
    /// value.
    fn repair(
        &mut self,
        path: &Path<'_>,
        code: RepairCode,
        expected: &str,
        from: &Value,
        to: &Value,
    ) -> bool {
        self.repair_sides(path, code, expected, Some(from), Some(to))
    }

    /// [`Coercer::repair`] where `from` (nothing was sent) or `to` (nothing took its place) may
    /// be missing.
    fn repair_sides(
        &mut self,
        path: &Path<'_>,
        code: RepairCode,
        expected: &str,
        from: Option<&Value>,
        to: Option<&Value>,
    ) -> bool {
        match self.policy.mode {
            Mode::Lenient => {
                self.record(path, code, from, to);
                true
            }
            Mode::Strict => {
                self.error(path, ErrorCode::RepairRefused, from, expected);
                false
            }
        }
    }

    /// Records a change made to the input, whatever the mode; past the policy's `max_repairs`
    /// it is only counted, so that hostile input never makes repairs costly.
    fn record(
        &mut self,
        path: &Path<'_>,
        code: RepairCode,
        from: Option<&Value>,
        to: Option<&Value>,
    ) {
        if self.repairs.len() >= self.policy.limits.max_repairs {
            self.repairs_cut += 1;
            return;
        }
        self.repairs.push(Repair {
            path: path.render(),
            code,
            from: from.map(abridged),
            to: to.map(abridged),
            not_shown: None,
        });
    }

    /// What a value of `ty` is, in words a model reads: `"an integer"`, `"a string or null"`.
    fn expected(&self, ty: &Type) -> Cow<'static, str> {
        self.expected_within(ty, 4)
    }

    fn expected_within(&self, ty: &Type, budget: u8) -> Cow<'static, str> {
        let Some(ty) = self.graph.resolve(ty) else {
            return Cow::Borrowed("a value of a defined type");
        };
        Cow::Borrowed(match ty {
            Type::String(_) => "a string",
            Type::Integer(_) => "an integer",
            Type::Number(_) => "a number",
            Type::Boolean => "true or false",
            Type::Enum(_) => "one of the allowed values",
            Type::Struct(_) | Type::Map(_) | Type::Tagged(_) => "an object",
            Type::Array(_) => "an array",
            Type::Any | Type::Ref(_) => "any value",
            Type::Nilable(inner) if budget > 0 => {
                return Cow::Owned(format!(
                    "{} or null",
                    self.expected_within(inner, budget - 1)
                ));
            }
            Type::Union(members) if budget > 0 => {
                return Cow::Owned(self.expected_one_of(members, budget - 1));
            }
            Type::Nilable(_) | Type::Union(_) => "a value of another kind",
        })
    }

    /// What any of `members` is, in words: `"an integer or a string"`.
    fn expected_one_of(&self, members: &[Type], budget: u8) -> String {
        let mut kinds: Vec<Cow<'static, str>> = Vec::with_capacity(members.len());
        for member in members {
            let kind = self.expected_within(member, budget);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        kinds.join(" or ")
    }

    /// Whether `ty` accepts `null` as it is.
    fn accepts_null(&self, ty: &Type, budget: u8) -> bool {
        match self.graph.resolve(ty) {
            Some(Type::Nilable(_) | Type::Any) => true,
            Some(Type::Union(members)) if budget > 0 => members
                .iter()
                .any(|member| self.accepts_null(member, budget - 1)),
            _ => false,
        }
    }

    /// Checks the descendants of an untyped value against the limits; it is its own canonical value.
    fn any(&mut self, input: &Value, path: &Path<'_>) -> Option<Out> {
        self.any_within_limits(input, path).then_some(Out::Same)
    }

    fn any_within_limits(&mut self, input: &Value, path: &Path<'_>) -> bool {
        // `value` checked `input` itself; recursion stops at the depth limit.
        match input {
            Value::Array(items) => {
                let mut ok = true;
                for (index, item) in items.iter().enumerate() {
                    let path = path.index(index);
                    ok &= self.within_limits(item, &path) && self.any_within_limits(item, &path);
                }
                ok
            }
            Value::Object(map) => {
                let mut ok = true;
                for (key, item) in map {
                    let path = path.key(key);
                    ok &= self.within_limits(item, &path) && self.any_within_limits(item, &path);
                }
                ok
            }
            _ => true,
        }
    }
}

/// The bracket opening JSON text that stands for a value of `ty`, for the containers that accept
/// their value sent as JSON text.
fn json_text_opening(ty: &Type) -> Option<char> {
    match ty {
        Type::Array(_) => Some('['),
        Type::Struct(_) | Type::Map(_) | Type::Tagged(_) => Some('{'),
        _ => None,
    }
}

/// The bracket that opens the JSON text of `value`, when it is an array or an object.
fn kind_opened_by(value: &Value) -> Option<char> {
    match value {
        Value::Array(_) => Some('['),
        Value::Object(_) => Some('{'),
        _ => None,
    }
}

/// A copy of `value` small enough for a diagnostic: deep nesting, long strings and long
/// collections are cut (marked with `…`), so hostile input never makes diagnostics costly.
fn abridged(value: &Value) -> Value {
    let mut budget = ABRIDGED_BUDGET;
    abridged_at(value, 0, &mut budget)
}

/// Roughly how many characters of a value one diagnostic holds: strings are cut after 1024
/// characters, and past this budget in all, the remaining items of an array or object are one
/// `…`, so no diagnostic is large however large the value it is about.
const ABRIDGED_BUDGET: usize = 4096;

fn abridged_at(value: &Value, level: usize, budget: &mut usize) -> Value {
    const MAX_LEVEL: usize = 16;
    const MAX_ITEMS: usize = 64;
    const MAX_CHARS: usize = 1024;
    const CUT: &str = "…";
    // Every value costs something, so that empty arrays and objects cannot go on forever.
    *budget = budget.saturating_sub(2);
    match value {
        Value::String(s) => {
            let shown = MAX_CHARS.min(*budget).max(16);
            *budget = budget.saturating_sub(s.len().min(shown));
            match s.char_indices().nth(shown) {
                None => value.clone(),
                Some((end, _)) => Value::String(format!("{}{CUT}", &s[..end])),
            }
        }
        Value::Array(_) | Value::Object(_) if level >= MAX_LEVEL => Value::String(CUT.to_owned()),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len().min(MAX_ITEMS));
            for item in items {
                if out.len() == MAX_ITEMS || *budget == 0 {
                    out.push(Value::String(CUT.to_owned()));
                    break;
                }
                out.push(abridged_at(item, level + 1, budget));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                if out.len() == MAX_ITEMS || *budget == 0 {
                    out.insert(CUT.to_owned(), Value::String(CUT.to_owned()));
                    break;
                }
                let key = abridged_segment(key);
                *budget = budget.saturating_sub(key.len());
                let item = abridged_at(item, level + 1, budget);
                out.insert(key.into_owned(), item);
            }
            Value::Object(out)
        }
        other => {
            *budget = budget.saturating_sub(8);
            other.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{coerce, coerce_owned};
    use crate::policy::Policy;
    use crate::ty::{Type, TypeGraph};

    #[test]
    fn owned_coercion_agrees_with_borrowed_coercion() {
        let graph = TypeGraph::new(Type::array(Type::integer()));
        for input in [json!([1, 2]), json!([1, "2"]), json!("[3]"), json!(["x"])] {
            let borrowed = coerce(&graph, &input, &Policy::default());
            assert_eq!(coerce_owned(&graph, input, &Policy::default()), borrowed);
        }
    }
}
