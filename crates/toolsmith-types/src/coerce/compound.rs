//! Values with parts: structs, tagged and untagged unions, arrays and maps.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::path::Path;
use super::{Coercer, Out, abridged, fold_style};
use crate::diagnostics::{CoerceError, ErrorCode, RepairCode};
use crate::policy::UnknownKeys;
use crate::ty::{
    ArrayType, Field, MapKeys, MapType, StructType, TYPE_TAG, TaggedUnion, TaggedVariant, Type,
};

const AN_OBJECT: &str = "an object";
const AN_ARRAY: &str = "an array";
const A_DECLARED_FIELD: &str = "a declared field";
const A_TYPE_NAME: &str = "a known type name";

/// What became of one declared field of a struct.
enum Slot<'v> {
    /// Not sent.
    Empty,
    /// Sent, valid and canonical as it is.
    Same(&'v Value),
    /// Sent and valid, with this canonical value.
    New(Value),
    /// Sent as `null` where that means "omitted".
    Omitted,
    /// Sent and invalid (already reported; not also "missing").
    Failed,
}

impl<'v> Slot<'v> {
    fn filled(out: Option<Out>, input: &'v Value) -> Self {
        match out {
            Some(Out::Same) => Slot::Same(input),
            Some(Out::New(value)) => Slot::New(value),
            None => Slot::Failed,
        }
    }
}

/// The fields of one struct by the keys that name them: their names and aliases as declared,
/// and in canonical word style ([`fold_style`]). Built once per struct type in one coercion, so
/// that each key costs one lookup however many fields and keys there are.
pub(super) struct StyledNames {
    /// Declared names and aliases.
    exact: HashMap<String, usize, foldhash::fast::RandomState>,
    /// Names and aliases in canonical word style; `None` where two fields share one.
    styled: HashMap<String, Option<usize>, foldhash::fast::RandomState>,
}

impl StyledNames {
    fn of(st: &StructType) -> Self {
        let mut exact = HashMap::default();
        let mut styled: HashMap<String, Option<usize>, _> = HashMap::default();
        for (index, field) in st.fields.iter().enumerate() {
            for name in std::iter::once(&field.name).chain(&field.aliases) {
                exact.entry(name.clone()).or_insert(index);
                if let Some(folded) = fold_style(name) {
                    styled
                        .entry(folded)
                        .and_modify(|seen| {
                            if *seen != Some(index) {
                                *seen = None;
                            }
                        })
                        .or_insert(Some(index));
                }
            }
        }
        StyledNames { exact, styled }
    }

    /// The field `key` names, as declared or in another case or style.
    fn field_of(&self, key: &str) -> Option<usize> {
        if key == TYPE_TAG {
            return None;
        }
        self.exact
            .get(key)
            .copied()
            .or_else(|| self.styled.get(&fold_style(key)?).copied().flatten())
    }
}

/// Whether `item` is one `{"key": .., "value": ..}` entry of a map sent as an array.
fn is_entry(item: &Value) -> bool {
    matches!(item, Value::Object(entry)
        if entry.len() == 2 && entry.contains_key("key") && entry.contains_key("value"))
}

/// Where the parts of one map entry are.
struct EntryPaths<'a> {
    /// The entry as a whole (duplicate keys are reported here).
    entry: &'a Path<'a>,
    /// The key.
    key: &'a Path<'a>,
    /// The value.
    value: &'a Path<'a>,
}

impl<'g> Coercer<'g> {
    pub(super) fn structure(
        &mut self,
        st: &'g StructType,
        input: &Value,
        path: &Path<'_>,
    ) -> Option<Out> {
        match input {
            Value::Object(map) => self.object(st, map, path, None),
            _ => self.fail(path, ErrorCode::DictType, Some(input), AN_OBJECT),
        }
    }

    /// The declared names of `st`, by the keys that name them.
    fn styled_names(&mut self, st: &'g StructType) -> &StyledNames {
        self.styles
            .entry(std::ptr::from_ref(st))
            .or_insert_with(|| StyledNames::of(st))
    }

    /// The field each key of `input` (in order) names under an alias or in another case or
    /// style, where that is unambiguous: no other key names the same field (under its name, an
    /// alias, or in some style). One lookup a key.
    fn restyled(&mut self, st: &'g StructType, input: &Map<String, Value>) -> Vec<Option<usize>> {
        let names = self.styled_names(st);
        let mut targets: Vec<Option<usize>> = input.keys().map(|k| names.field_of(k)).collect();
        let mut keys_naming = vec![0u32; st.fields.len()];
        for &index in targets.iter().flatten() {
            keys_naming[index] = keys_naming[index].saturating_add(1);
        }
        for target in &mut targets {
            if target.is_some_and(|index| keys_naming[index] != 1) {
                *target = None;
            }
        }
        targets
    }

    /// The fields of `st` from `input`; `tag` is set when a tagged union chose this struct (the
    /// canonical value then starts with it, and the sent `_type` is not a field).
    fn object(
        &mut self,
        st: &'g StructType,
        input: &Map<String, Value>,
        path: &Path<'_>,
        tag: Option<&str>,
    ) -> Option<Out> {
        let fields = &st.fields;
        let mut slots: Vec<Slot<'_>> = std::iter::repeat_with(|| Slot::Empty)
            .take(fields.len())
            .collect();
        let mut extra: Vec<(&str, Slot<'_>)> = Vec::new();
        let mut ok = true;
        // Whether the input is its own canonical value: declared keys in declaration order
        // (after an exact `_type` when a union chose the struct), then any additional keys.
        let mut same = true;
        // Keys usually arrive in declaration order: try the next field first.
        let mut next = 0;
        // What each key names, worked out for all keys at once the first time a key is not a
        // declared name.
        let mut restyled: Option<Vec<Option<usize>>> = None;
        for (position, (key, value)) in input.iter().enumerate() {
            let key_path = path.key(key);
            let index = if fields.get(next).is_some_and(|f| f.name == *key) {
                Some(next)
            } else {
                fields.iter().position(|f| f.name == *key)
            };
            // serde reads an alias as the field itself: no repair.
            let alias = match (index, key.as_str()) {
                (Some(_), _) | (None, TYPE_TAG) => None,
                (None, _) => self.styled_names(st).exact.get(key.as_str()).copied(),
            };
            if let Some(index) = index.or(alias) {
                if alias.is_some() {
                    same = false;
                } else {
                    same &= index >= next && extra.is_empty();
                    next = index + 1;
                }
                ok &= if matches!(slots[index], Slot::Empty) {
                    self.field(&fields[index], &mut slots[index], value, &key_path)
                } else {
                    self.sent_twice(&fields[index], &key_path)
                };
            } else if let (TYPE_TAG, Some(tag)) = (key.as_str(), tag) {
                // Chosen by the union already; canonical only as the first key, spelled exactly.
                same &= position == 0 && value.as_str() == Some(tag);
            } else if let (TYPE_TAG, Some(name)) = (key.as_str(), &st.name) {
                same = false;
                ok &= self.struct_tag(name, value, &key_path);
            } else if let Some(index) =
                restyled.get_or_insert_with(|| self.restyled(st, input))[position]
            {
                same = false;
                let from = Value::String(key.clone());
                let to = Value::String(fields[index].name.clone());
                let code = RepairCode::KeyRenamed;
                if self.repair(&key_path, code, A_DECLARED_FIELD, &from, &to) {
                    // Renamed first: the value is the declared field's, and so are its repairs
                    // and errors.
                    let field_path = path.key(&fields[index].name);
                    ok &= self.field(&fields[index], &mut slots[index], value, &field_path);
                } else {
                    slots[index] = Slot::Failed;
                    ok = false;
                }
            } else if let Some(extra_ty) = &st.additional {
                let slot = Slot::filled(self.value(extra_ty, value, &key_path), value);
                ok &= !matches!(slot, Slot::Failed);
                extra.push((key, slot));
            } else {
                same = false;
                ok &= self.unknown_key(st, key, value, &key_path);
            }
        }
        same &= tag.is_none() || input.contains_key(TYPE_TAG);

        for (field, slot) in fields.iter().zip(&mut slots) {
            match slot {
                Slot::Same(_) | Slot::Failed => {}
                Slot::New(_) => same = false,
                Slot::Empty if field.required => {
                    let expected = self.expected(&field.ty);
                    self.error(&path.key(&field.name), ErrorCode::Missing, None, expected);
                    ok = false;
                }
                Slot::Empty | Slot::Omitted => {
                    if let Some(default) = &field.default {
                        same = false;
                        *slot = match self.canonical_default(field, default, path) {
                            Some(value) => Slot::New(value),
                            None => {
                                ok = false;
                                Slot::Failed
                            }
                        };
                    } else if matches!(slot, Slot::Omitted) {
                        same = false;
                    }
                }
            }
        }
        same &= extra.iter().all(|(_, slot)| matches!(slot, Slot::Same(_)));
        if !ok {
            return None;
        }
        if same {
            return Some(Out::Same);
        }

        let mut out = Map::with_capacity(fields.len() + extra.len() + usize::from(tag.is_some()));
        if let Some(tag) = tag {
            out.insert(TYPE_TAG.to_owned(), Value::String(tag.to_owned()));
        }
        for (field, slot) in fields.iter().zip(slots) {
            let value = match slot {
                Slot::Same(value) => value.clone(),
                Slot::New(value) => value,
                Slot::Empty | Slot::Omitted | Slot::Failed => continue,
            };
            out.insert(field.name.clone(), value);
        }
        for (key, slot) in extra {
            match slot {
                Slot::Same(value) => out.insert(key.to_owned(), value.clone()),
                Slot::New(value) => out.insert(key.to_owned(), value),
                Slot::Empty | Slot::Omitted | Slot::Failed => None,
            };
        }
        Some(Out::New(Value::Object(out)))
    }

    /// The canonical form of a field's default. A default is part of the type, not of the
    /// input, so one that does not fit its field exactly (not even after repairs) is an error in
    /// the type.
    fn canonical_default(
        &mut self,
        field: &'g Field,
        default: &Value,
        path: &Path<'_>,
    ) -> Option<Value> {
        let field_path = path.key(&field.name);
        self.in_default += 1;
        let trial = self.trial(|c| c.value(&field.ty, default, &field_path));
        self.in_default -= 1;
        if trial.is_clean() {
            trial.value.map(|out| out.into_value(default))
        } else {
            // The real reason, as coercing the default gives it (`at most 3`, not `a number`).
            let reason = match (trial.errors.first(), trial.repairs.first()) {
                (Some(error), _) => match &error.input {
                    Some(input) => format!("expected {}, got {}", error.expected, input),
                    None => format!("expected {}", error.expected),
                },
                (None, Some(repair)) => format!("it needs a repair: {}", repair.code.describe()),
                // Repairs past the cap are counted only.
                (None, None) if trial.repairs_cut > 0 => "it needs repairs".to_owned(),
                (None, None) => format!("expected {}", self.expected(&field.ty)),
            };
            let expected = format!(
                "a type whose default for `{}` fits the field ({} does not: {reason})",
                field.name, default,
            );
            self.error(&field_path, ErrorCode::SchemaInvalid, None, expected);
            None
        }
    }

    /// One declared field's value; `null` for an optional field that cannot be `null` means
    /// "omitted": the wire shape of a dialect that offers `null` for every optional field, a
    /// repair under any other.
    fn field<'v>(
        &mut self,
        field: &'g Field,
        slot: &mut Slot<'v>,
        value: &'v Value,
        path: &Path<'_>,
    ) -> bool {
        if value.is_null() && !field.required && !self.accepts_null(&field.ty, 4) {
            if self.policy.dialect.rules().null_means_omitted() {
                *slot = Slot::Omitted;
                return true;
            }
            // The default takes its place, if there is one; else nothing does.
            let to = field.default.as_ref();
            let expected = self.expected(&field.ty);
            let code = RepairCode::NullAsOmitted;
            let omitted = self.repair_sides(path, code, &expected, Some(value), to);
            *slot = if omitted { Slot::Omitted } else { Slot::Failed };
            return omitted;
        }
        *slot = Slot::filled(self.value(&field.ty, value, path), value);
        !matches!(slot, Slot::Failed)
    }

    /// A field sent under two of its names (its name and an alias, or two aliases), which serde
    /// refuses as a duplicate field.
    fn sent_twice(&mut self, field: &Field, path: &Path<'_>) -> bool {
        let expected = format!(
            "`{}` once, under its name or one of its aliases ({})",
            field.name,
            field.aliases.join(", ")
        );
        self.error(path, ErrorCode::DuplicateKey, None, expected);
        false
    }

    /// A `_type` sent to a named struct: its own name is accepted (and dropped).
    fn struct_tag(&mut self, name: &str, value: &Value, path: &Path<'_>) -> bool {
        match value.as_str() {
            Some(given) if given == name => true,
            Some(given) if given.to_lowercase() == name.to_lowercase() => {
                let to = Value::String(name.to_owned());
                self.repair(path, RepairCode::UnionTagCase, A_TYPE_NAME, value, &to)
            }
            _ => {
                let allowed = || vec![name.to_owned()];
                self.fail_allowed(
                    path,
                    ErrorCode::UnionTagInvalid,
                    value,
                    A_TYPE_NAME,
                    allowed,
                );
                false
            }
        }
    }

    /// A key the struct does not declare: dropped or rejected, as the policy says.
    fn unknown_key(&mut self, st: &StructType, key: &str, value: &Value, path: &Path<'_>) -> bool {
        match self.policy.unknown_keys {
            UnknownKeys::Ignore => {
                // Asked for by the policy itself, so recorded but never refused, even in strict
                // mode.
                self.record(path, RepairCode::ExtraIgnored, Some(value), None);
                true
            }
            UnknownKeys::Reject => {
                // Built only while errors are kept: past the cap, an unknown key costs a count.
                let code = ErrorCode::ExtraForbidden;
                self.push_error(code, || {
                    let allowed = st.fields.iter().map(|f| f.name.clone()).collect();
                    CoerceError::new(path.render(), code, Some(abridged(value)), A_DECLARED_FIELD)
                        .with_allowed(allowed, Some(key))
                });
                false
            }
        }
    }

    /// Structs told apart by `_type`.
    pub(super) fn tagged(
        &mut self,
        tu: &'g TaggedUnion,
        input: &Value,
        path: &Path<'_>,
    ) -> Option<Out> {
        let Value::Object(map) = input else {
            return self.fail(path, ErrorCode::DictType, Some(input), AN_OBJECT);
        };
        let Some(given) = map.get(TYPE_TAG) else {
            return self.infer_variant(tu, map, input, path);
        };
        let tag_path = path.key(TYPE_TAG);
        let text = given.as_str();
        let variant = match text.and_then(|t| tu.variants.iter().find(|v| v.tag == t)) {
            Some(variant) => variant,
            None => {
                let lower = text.map(str::to_lowercase);
                let mut same_case = tu
                    .variants
                    .iter()
                    .filter(|v| Some(v.tag.to_lowercase()) == lower);
                match (same_case.next(), same_case.next()) {
                    (Some(variant), None) => {
                        let to = Value::String(variant.tag.clone());
                        let code = RepairCode::UnionTagCase;
                        if !self.repair(&tag_path, code, A_TYPE_NAME, given, &to) {
                            return None;
                        }
                        variant
                    }
                    _ => {
                        let tags = || tu.variants.iter().map(|v| v.tag.clone()).collect();
                        let code = ErrorCode::UnionTagInvalid;
                        return self.fail_allowed(&tag_path, code, given, A_TYPE_NAME, tags);
                    }
                }
            }
        };
        let st = self.variant_struct(variant, path)?;
        self.object(st, map, path, Some(&variant.tag))
    }

    /// A tagged value without `_type`: the only variant that accepts it as it is.
    fn infer_variant(
        &mut self,
        tu: &'g TaggedUnion,
        map: &Map<String, Value>,
        input: &Value,
        path: &Path<'_>,
    ) -> Option<Out> {
        let mut accepted = None;
        let mut clean = 0;
        for variant in &tu.variants {
            let st = self.variant_struct(variant, path)?;
            let trial = self.trial(|c| c.object(st, map, path, Some(&variant.tag)));
            if trial.is_clean() {
                clean += 1;
                accepted = accepted.or(Some((variant, trial)));
            }
        }
        if self.out_of_trials(path) {
            return None;
        }
        match accepted {
            Some((variant, trial)) if clean == 1 => {
                let value = self.commit(trial);
                let to = Value::String(variant.tag.clone());
                let code = RepairCode::UnionTagInferred;
                let tag_path = path.key(TYPE_TAG);
                self.repair_sides(&tag_path, code, "a `_type` field", None, Some(&to))
                    .then_some(value)
                    .flatten()
            }
            _ => {
                let code = ErrorCode::UnionTagNotFound;
                self.push_error(code, || {
                    let tags = tu.variants.iter().map(|v| v.tag.clone()).collect();
                    let expected = "an object with a `_type` field naming its kind";
                    CoerceError::new(path.render(), code, Some(abridged(input)), expected)
                        .with_allowed(tags, None)
                });
                None
            }
        }
    }

    /// The struct behind a variant (a struct, or a reference to one).
    fn variant_struct(
        &mut self,
        variant: &'g TaggedVariant,
        path: &Path<'_>,
    ) -> Option<&'g StructType> {
        match self.graph.resolve(&variant.ty) {
            Some(Type::Struct(st)) => Some(st),
            _ => {
                let expected = format!("variant `{}` to be an object type", variant.tag);
                self.fail(path, ErrorCode::SchemaInvalid, None, expected);
                None
            }
        }
    }

    /// The first member accepting the value as it is; else the first accepting it with repairs.
    pub(super) fn union(
        &mut self,
        members: &'g [Type],
        input: &Value,
        path: &Path<'_>,
        hops: u8,
    ) -> Option<Out> {
        let mut fallback = None;
        let mut over_limit = None;
        for member in members {
            let trial = self.trial(|c| c.dispatch(member, input, path, hops + 1));
            if trial.is_clean() {
                return self.commit(trial);
            }
            if fallback.is_none() && trial.is_acceptable() {
                fallback = Some(trial);
            } else if over_limit.is_none() && trial.hit_a_limit() {
                over_limit = Some(trial);
            }
        }
        if self.out_of_trials(path) {
            return None;
        }
        match fallback.or(over_limit) {
            // A member that failed only on a limit says more than "no member matched".
            Some(trial) => self.commit(trial),
            None => {
                let expected = self.expected_one_of(members, 4);
                self.fail(path, ErrorCode::UnionNoMatch, Some(input), expected)
            }
        }
    }

    pub(super) fn array(
        &mut self,
        at: &'g ArrayType,
        input: &Value,
        path: &Path<'_>,
        hops: u8,
    ) -> Option<Out> {
        match input {
            Value::Array(items) => {
                // Built only once an element changes; until then the input is canonical.
                let mut built: Option<Vec<Value>> = None;
                let mut ok = true;
                for (index, item) in items.iter().enumerate() {
                    match self.value(&at.items, item, &path.index(index)) {
                        Some(Out::Same) => {
                            if let Some(built) = &mut built {
                                built.push(item.clone());
                            }
                        }
                        Some(Out::New(value)) => {
                            let built = built.get_or_insert_with(|| {
                                let mut built = Vec::with_capacity(items.len());
                                built.extend(items[..index].iter().cloned());
                                built
                            });
                            built.push(value);
                        }
                        None => ok = false,
                    }
                }
                ok &= self.check_items(at, items.len(), input, path);
                if ok && at.unique_items {
                    ok = self.check_unique(built.as_deref().unwrap_or(items), path);
                }
                ok.then(|| built.map_or(Out::Same, |built| Out::New(Value::Array(built))))
            }
            Value::Null => self.fail(path, ErrorCode::ListType, Some(input), AN_ARRAY),
            _ => {
                // One value exactly valid as an element stands for a list of one.
                let element = path.index(0);
                let trial = self.trial(|c| c.dispatch(&at.items, input, &element, hops + 1));
                if !trial.is_clean() {
                    return self.fail(path, ErrorCode::ListType, Some(input), AN_ARRAY);
                }
                let Some(value) = self.commit(trial) else {
                    return self.fail(path, ErrorCode::ListType, Some(input), AN_ARRAY);
                };
                let wrapped = Value::Array(vec![value.into_value(input)]);
                if !self.repair(path, RepairCode::WrapInArray, AN_ARRAY, input, &wrapped) {
                    return None;
                }
                self.check_items(at, 1, input, path)
                    .then_some(Out::New(wrapped))
            }
        }
    }

    /// Whether the canonical `items` are pairwise different, as JSON Schema compares them;
    /// each repeat is an error at its index. Linear: items are compared by a canonical text.
    fn check_unique(&mut self, items: &[Value], path: &Path<'_>) -> bool {
        let mut seen = std::collections::HashMap::with_capacity(items.len());
        let mut ok = true;
        for (index, item) in items.iter().enumerate() {
            if let Some(first) = seen.insert(super::scalar::json_key(item), index) {
                seen.insert(super::scalar::json_key(item), first);
                let expected = format!("an item unlike the others (it repeats item {first})");
                self.error(
                    &path.index(index),
                    ErrorCode::DuplicateItem,
                    Some(item),
                    expected,
                );
                ok = false;
            }
        }
        ok
    }

    fn check_items(&mut self, at: &ArrayType, len: usize, input: &Value, path: &Path<'_>) -> bool {
        let len = len as u64;
        if let Some(min) = at.min_items.filter(|&min| len < min) {
            let expected = format!("at least {min} items");
            self.error(path, ErrorCode::TooShort, Some(input), expected);
            return false;
        }
        if let Some(max) = at.max_items.filter(|&max| len > max) {
            let expected = format!("at most {max} items");
            self.error(path, ErrorCode::TooLong, Some(input), expected);
            return false;
        }
        true
    }

    pub(super) fn map(&mut self, mt: &'g MapType, input: &Value, path: &Path<'_>) -> Option<Out> {
        match input {
            Value::Object(entries) if matches!(mt.keys, MapKeys::String) => {
                self.string_keyed_map(mt, entries, path)
            }
            Value::Object(entries) => {
                let mut out = Map::with_capacity(entries.len());
                let mut ok = true;
                let mut same = true;
                for (key, value) in entries {
                    let here = path.key(key);
                    let paths = EntryPaths {
                        entry: &here,
                        key: &here,
                        value: &here,
                    };
                    ok &= self.map_entry(mt, key, value, &paths, &mut out);
                    same &= out.get(key.as_str()).is_some_and(|v| v == value);
                }
                ok.then(|| {
                    if same {
                        Out::Same
                    } else {
                        Out::New(Value::Object(out))
                    }
                })
            }
            // How strict dialects send maps: `[{"key": .., "value": ..}]` (`[]` when empty). The
            // wire shape of a dialect that writes maps so; under any other, a repair.
            Value::Array(items) if items.iter().all(is_entry) => {
                let mut out = Map::with_capacity(items.len());
                let mut ok = true;
                for (index, item) in items.iter().enumerate() {
                    let entry = path.index(index);
                    let (key_path, value_path) = (entry.key("key"), entry.key("value"));
                    let (Some(key), Some(value)) = (item.get("key"), item.get("value")) else {
                        continue;
                    };
                    let Some(key) = key.as_str() else {
                        self.error(&key_path, ErrorCode::StringType, Some(key), "a string");
                        ok = false;
                        continue;
                    };
                    let paths = EntryPaths {
                        entry: &entry,
                        key: &key_path,
                        value: &value_path,
                    };
                    ok &= self.map_entry(mt, key, value, &paths, &mut out);
                }
                if !ok {
                    return None;
                }
                let out = Value::Object(out);
                let wire_shape = self.policy.dialect.rules().maps_as_entries;
                let code = RepairCode::MapFromEntries;
                (wire_shape || self.repair(path, code, AN_OBJECT, input, &out))
                    .then_some(Out::New(out))
            }
            _ => self.fail(path, ErrorCode::DictType, Some(input), AN_OBJECT),
        }
    }

    /// A map with string keys sent as an object: built only once a value changes.
    fn string_keyed_map(
        &mut self,
        mt: &'g MapType,
        entries: &Map<String, Value>,
        path: &Path<'_>,
    ) -> Option<Out> {
        let mut built: Option<Map<String, Value>> = None;
        let mut ok = true;
        for (index, (key, value)) in entries.iter().enumerate() {
            match self.value(&mt.values, value, &path.key(key)) {
                Some(Out::Same) => {
                    if let Some(built) = &mut built {
                        built.insert(key.clone(), value.clone());
                    }
                }
                Some(Out::New(new)) => {
                    let built = built.get_or_insert_with(|| {
                        let mut built = Map::with_capacity(entries.len());
                        for (key, value) in entries.iter().take(index) {
                            built.insert(key.clone(), value.clone());
                        }
                        built
                    });
                    built.insert(key.clone(), new);
                }
                None => ok = false,
            }
        }
        ok.then(|| built.map_or(Out::Same, |built| Out::New(Value::Object(built))))
    }

    /// One entry of a map, added to `out` under its canonical key.
    fn map_entry(
        &mut self,
        mt: &'g MapType,
        key: &str,
        value: &Value,
        paths: &EntryPaths<'_>,
        out: &mut Map<String, Value>,
    ) -> bool {
        let key = match &mt.keys {
            MapKeys::String => Cow::Borrowed(key),
            MapKeys::Enum(et) => match self.enum_key(et, key, paths.key) {
                Some(key) => Cow::Owned(key),
                None => {
                    let _ = self.value(&mt.values, value, paths.value);
                    return false;
                }
            },
        };
        if out.contains_key(key.as_ref()) {
            let input = Value::String(key.into_owned());
            self.error(
                paths.entry,
                ErrorCode::DuplicateKey,
                Some(&input),
                "each key at most once",
            );
            return false;
        }
        match self.value(&mt.values, value, paths.value) {
            Some(new) => {
                out.insert(key.into_owned(), new.into_value(value));
                true
            }
            None => false,
        }
    }
}
