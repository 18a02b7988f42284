//! `allOf` as one schema: the algebra that merges its members' keywords (`properties` and
//! `required` joined, `type` and `enum` intersected, bounds tightened, annotations kept from the
//! first), exact or a liberty; and `anyOf` beside other keywords, each member merged with them.

use std::collections::{HashSet, VecDeque};

use serde_json::{Map, Value};

use super::ImportCode;
use super::walk::{ANNOTATIONS, COMMON, Importer, ROOT_ONLY};
use crate::pointer::pointer_push;

/// Most schemas one `allOf` may gather (its members, the definitions they refer to, and their
/// own `allOf` members), which bounds a definition that includes itself.
const MAX_ALL_OF_PARTS: usize = 64;

/// Most schemas every `allOf` of one document may gather together. Merging writes referenced
/// definitions in place, so without this bound, definitions whose properties each merge the next
/// definition would cost time exponential in their number.
const MAX_ALL_OF_TOTAL: usize = 4096;

impl<'s, 'd> Importer<'s, 'd> {
    /// `allOf` as one schema: the members' keywords merged into the schema around them. The
    /// merge is exact where keywords constrain the value independently, which is the usual case
    /// (`allOf` around one `$ref` to describe it, objects assembled from parts); what does not
    /// merge exactly is a liberty (`all_of_inexact`). `None` when refused (and said).
    pub(super) fn all_of(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
    ) -> Result<Value, AllOfFail> {
        let at = pointer_push(path, "allOf");
        let members = match object.get("allOf") {
            Some(Value::Array(members)) if !members.is_empty() => members,
            _ => {
                self.error(&at, "`allOf` must be a non-empty array");
                return Err(AllOfFail::Reported);
            }
        };
        let mut base = object.clone();
        base.remove("allOf");
        let annotation = |k: &String| {
            COMMON.contains(&k.as_str())
                || ANNOTATIONS.contains(&k.as_str())
                || ROOT_ONLY.contains(&k.as_str())
        };
        // One `$ref` beside nothing but annotations: the reference itself, keeping its name.
        let real: Vec<&Value> = members
            .iter()
            .filter(|m| **m != Value::Bool(true))
            .collect();
        if let [Value::Object(only)] = real[..]
            && only.contains_key("$ref")
            && only.keys().all(|k| k == "$ref" || annotation(k))
            && base.keys().all(annotation)
        {
            let mut merged = only.clone();
            merged.extend(base);
            return Ok(Value::Object(merged));
        }

        let mut merged = Map::new();
        let mut parts: Vec<(String, Map<String, Value>)> = vec![(path.to_owned(), base)];
        let mut queue: VecDeque<(String, Value)> = members
            .iter()
            .enumerate()
            .map(|(i, m)| (pointer_push(&at, &i.to_string()), m.clone()))
            .collect();
        let mut gathered = 0;
        while let Some((here, member)) = queue.pop_front() {
            gathered += 1;
            self.all_of_parts += 1;
            if self.all_of_parts > MAX_ALL_OF_TOTAL {
                self.error(
                    &at,
                    format!("the document's `allOf`s gather more than {MAX_ALL_OF_TOTAL} schemas"),
                );
                return Err(AllOfFail::Reported);
            }
            if gathered > MAX_ALL_OF_PARTS {
                self.error(
                    &at,
                    format!("`allOf` gathers more than {MAX_ALL_OF_PARTS} schemas"),
                );
                return Err(AllOfFail::Reported);
            }
            let mut member = match member {
                Value::Bool(true) => continue,
                Value::Bool(false) => {
                    return Err(AllOfFail::Nothing {
                        path: here,
                        message: "an `allOf` member is `false`: no value is valid".to_owned(),
                    });
                }
                Value::Object(member) => member,
                _ => {
                    self.error(&here, "a schema must be an object or a boolean");
                    return Err(AllOfFail::Reported);
                }
            };
            if let Some(target) = member.remove("$ref") {
                let ref_path = pointer_push(&here, "$ref");
                let body = target
                    .as_str()
                    .and_then(|t| self.definition_body(t))
                    .cloned();
                match body {
                    Some(body) => queue.push_back((ref_path, body)),
                    None => {
                        self.error(
                            &ref_path,
                            format!(
                                "{target} points at no definition under `$defs` or `definitions`"
                            ),
                        );
                        return Err(AllOfFail::Reported);
                    }
                }
            }
            if let Some(inner) = member.remove("allOf") {
                let inner_at = pointer_push(&here, "allOf");
                let Value::Array(inner) = inner else {
                    self.error(&inner_at, "`allOf` must be a non-empty array");
                    return Err(AllOfFail::Reported);
                };
                for (j, m) in inner.into_iter().enumerate() {
                    queue.push_back((pointer_push(&inner_at, &j.to_string()), m));
                }
            }
            parts.push((here, member));
        }

        let mut inexact: Vec<(String, String)> = Vec::new();
        for (here, part) in &parts {
            for (key, value) in part {
                let Some(existing) = merged.get_mut(key) else {
                    merged.insert(key.clone(), value.clone());
                    continue;
                };
                if existing == value {
                    continue;
                }
                match merge_keyword(key, existing, value) {
                    Merge::Done => {}
                    Merge::Nothing => {
                        return Err(AllOfFail::Nothing {
                            path: pointer_push(here, key),
                            message: format!(
                                "`{key}` leaves no value in common with the rest of `allOf`"
                            ),
                        });
                    }
                    Merge::Inexact => inexact.push((pointer_push(here, key), key.clone())),
                }
            }
        }
        // `additionalProperties` sees only the `properties` beside it: merged, it would also
        // admit what the other parts declare.
        let declared: HashSet<&String> = parts
            .iter()
            .filter_map(|(_, p)| p.get("properties").and_then(Value::as_object))
            .flat_map(Map::keys)
            .collect();
        for (here, part) in &parts {
            let closes = part
                .get("additionalProperties")
                .is_some_and(|a| *a != Value::Bool(true));
            let own: HashSet<&String> = part
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            if closes && declared.iter().any(|name| !own.contains(name)) {
                inexact.push((
                    pointer_push(here, "additionalProperties"),
                    "additionalProperties".to_owned(),
                ));
            }
        }
        let mut refused = false;
        for (here, key) in inexact {
            let what = if key == "additionalProperties" {
                "`additionalProperties` in an `allOf` part only admits the properties declared \
                 beside it"
                    .to_owned()
            } else {
                format!("`{key}` differs between `allOf` parts, and one schema holds one")
            };
            let reading = if key == "additionalProperties" {
                "admitting the properties of every part"
            } else {
                "the first of them"
            };
            refused |= !self.liberty(&here, ImportCode::AllOfInexact, &what, reading);
        }
        if refused {
            Err(AllOfFail::Reported)
        } else {
            Ok(Value::Object(merged))
        }
    }

    /// `anyOf` (or `oneOf`) beside keywords that constrain the value too: each member merged
    /// with them, as `A and (B or C)` is `(A and B) or (A and C)`; a member that leaves no value
    /// beside them is left out. As exact as the merges (see [`Importer::all_of`]); where a merge
    /// goes wrong, its paths run through `/anyOf/<i>/allOf/0` (the keywords beside) and
    /// `/anyOf/<i>/allOf/1` (the member).
    pub(super) fn any_of_siblings(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
    ) -> Option<Value> {
        let keyword = match (object.contains_key("anyOf"), object.contains_key("oneOf")) {
            (true, false) => "anyOf",
            (false, true) => "oneOf",
            // Both: `form` reports it.
            _ => return None,
        };
        let Some(Value::Array(members)) = object.get(keyword) else {
            return None;
        };
        let (mut rest, mut siblings) = (Map::new(), Map::new());
        for (key, value) in object {
            let k = key.as_str();
            if k == keyword
                || COMMON.contains(&k)
                || ANNOTATIONS.contains(&k)
                || ROOT_ONLY.contains(&k)
            {
                rest.insert(key.clone(), value.clone());
            } else {
                siblings.insert(key.clone(), value.clone());
            }
        }
        if siblings.is_empty() || members.is_empty() {
            return None;
        }
        let at = pointer_push(path, keyword);
        let mut merged_members = Vec::with_capacity(members.len());
        for (i, member) in members.iter().enumerate() {
            if *member == Value::Bool(false) {
                continue;
            }
            let both = Value::Array(vec![Value::Object(siblings.clone()), member.clone()]);
            let wrapper = Map::from_iter([("allOf".to_owned(), both)]);
            match self.all_of(&wrapper, &pointer_push(&at, &i.to_string())) {
                Ok(merged) => merged_members.push(merged),
                // This member allows no value the keywords beside it allow.
                Err(AllOfFail::Nothing { .. }) => {}
                Err(AllOfFail::Reported) => return Some(Value::Bool(true)),
            }
        }
        if merged_members.is_empty() {
            self.error(
                &at,
                format!("no member of `{keyword}` allows a value the keywords beside it allow"),
            );
            return Some(Value::Bool(true));
        }
        rest.insert(keyword.to_owned(), Value::Array(merged_members));
        Some(Value::Object(rest))
    }
}

/// Why an `allOf` did not merge.
pub(super) enum AllOfFail {
    /// Already reported (an error, or a liberty a strict import refuses).
    Reported,
    /// Its parts leave no value valid: where, and why (for the caller to report, or, for a
    /// member of an `anyOf`, to leave the member out).
    Nothing {
        /// JSON Pointer of the part that leaves nothing.
        path: String,
        /// Why.
        message: String,
    },
}

/// How one keyword of an `allOf` part merged into the keyword already gathered.
enum Merge {
    /// Exactly: the gathered value now says what both did.
    Done,
    /// The two leave no value valid.
    Nothing,
    /// Not exactly: the gathered value is kept as it was.
    Inexact,
}

/// Merges `value` into `existing`, two different values of `key` in parts of one `allOf`.
fn merge_keyword(key: &str, existing: &mut Value, value: &Value) -> Merge {
    let both = |a: Value, b: Value| {
        Value::Object(Map::from_iter([(
            "allOf".to_owned(),
            Value::Array(vec![a, b]),
        )]))
    };
    match key {
        "properties" => {
            let (Value::Object(mine), Value::Object(theirs)) = (&mut *existing, value) else {
                return Merge::Inexact;
            };
            for (name, schema) in theirs {
                match mine.get_mut(name) {
                    None => {
                        mine.insert(name.clone(), schema.clone());
                    }
                    Some(old) if old == schema => {}
                    Some(old) => *old = both(std::mem::take(old), schema.clone()),
                }
            }
            Merge::Done
        }
        "required" => {
            let (Value::Array(mine), Value::Array(theirs)) = (&mut *existing, value) else {
                return Merge::Inexact;
            };
            for name in theirs {
                if !mine.contains(name) {
                    mine.push(name.clone());
                }
            }
            Merge::Done
        }
        "type" => {
            let names = |v: &Value| -> Option<Vec<String>> {
                match v {
                    Value::String(t) => Some(vec![t.clone()]),
                    Value::Array(ts) => ts.iter().map(|t| t.as_str().map(str::to_owned)).collect(),
                    _ => None,
                }
            };
            let (Some(mine), Some(theirs)) = (names(existing), names(value)) else {
                return Merge::Inexact;
            };
            let mut common: Vec<String> = Vec::new();
            for t in &mine {
                let kept = if theirs.contains(t) {
                    t.as_str()
                } else if (t == "integer" && theirs.iter().any(|o| o == "number"))
                    || (t == "number" && theirs.iter().any(|o| o == "integer"))
                {
                    "integer"
                } else {
                    continue;
                };
                if !common.iter().any(|c| c == kept) {
                    common.push(kept.to_owned());
                }
            }
            *existing = match common.len() {
                0 => return Merge::Nothing,
                1 => Value::String(common.remove(0)),
                _ => Value::Array(common.into_iter().map(Value::String).collect()),
            };
            Merge::Done
        }
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "maximum"
        | "exclusiveMaximum" | "maxLength" | "maxItems" => {
            let (Some(mine), Some(theirs)) = (existing.as_f64(), value.as_f64()) else {
                return Merge::Inexact;
            };
            let lower = key.starts_with("min") || key == "exclusiveMinimum";
            if (lower && theirs > mine) || (!lower && theirs < mine) {
                *existing = value.clone();
            }
            Merge::Done
        }
        "items" | "additionalProperties" | "propertyNames" => {
            match (&*existing, value) {
                (Value::Array(_), _) | (_, Value::Array(_)) => return Merge::Inexact,
                (Value::Bool(false), _) | (_, Value::Bool(true)) => {}
                (_, Value::Bool(false)) | (Value::Bool(true), _) => *existing = value.clone(),
                _ => *existing = both(std::mem::take(existing), value.clone()),
            }
            Merge::Done
        }
        "enum" => {
            let (Value::Array(mine), Value::Array(theirs)) = (&mut *existing, value) else {
                return Merge::Inexact;
            };
            mine.retain(|v| theirs.contains(v));
            if mine.is_empty() {
                Merge::Nothing
            } else {
                Merge::Done
            }
        }
        // Annotations: the first one found (the schema's own, then its members' in order).
        "description" | "title" | "default" => Merge::Done,
        k if ANNOTATIONS.contains(&k) => Merge::Done,
        _ => Merge::Inexact,
    }
}
