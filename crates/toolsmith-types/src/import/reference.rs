//! `$ref`: the definition a reference names (`#/$defs/<name>` or `#/definitions/<name>`, its
//! name a URI-fragment segment decoded by [`crate::pointer`]), and the definitions referenced and
//! not imported yet.

use serde_json::{Map, Value};

use super::walk::Importer;
use crate::pointer::{decode_fragment_segment, pointer_push};
use crate::ty::Type;

/// Which root keyword a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DefsContainer {
    Defs,
    Definitions,
}

impl DefsContainer {
    fn keyword(self) -> &'static str {
        match self {
            DefsContainer::Defs => "$defs",
            DefsContainer::Definitions => "definitions",
        }
    }

    pub(super) fn pointer(self) -> &'static str {
        match self {
            DefsContainer::Defs => "/$defs",
            DefsContainer::Definitions => "/definitions",
        }
    }
}

/// A definition referenced and not imported yet.
pub(super) struct Pending<'s> {
    pub(super) name: String,
    pub(super) schema: &'s Value,
    pub(super) path: String,
}

impl<'s, 'd> Importer<'s, 'd> {
    /// The body of the definition `target` (`#/$defs/<name>` or `#/definitions/<name>`) points at.
    pub(super) fn definition_body(&self, target: &str) -> Option<&'s Value> {
        let (container, name) = parse_ref(target).ok()?;
        self.document.get(container.keyword())?.get(&name)
    }

    pub(super) fn reference(&mut self, object: &Map<String, Value>, path: &str) -> Type {
        let path = pointer_push(path, "$ref");
        let Some(Value::String(target)) = object.get("$ref") else {
            self.error(&path, "`$ref` must be a string");
            return Type::Any;
        };
        let (container, name) = match parse_ref(target) {
            Ok(parsed) => parsed,
            Err(message) => {
                self.error(&path, message);
                return Type::Any;
            }
        };
        match self.seen.get(&name) {
            Some(known) if *known == container => return Type::Ref(name),
            Some(_) => {
                self.error(
                    &path,
                    format!("`{name}` is defined under both `$defs` and `definitions`"),
                );
                return Type::Any;
            }
            None => {}
        }
        let document = self.document;
        let Some(schema) = document
            .get(container.keyword())
            .and_then(|defs| defs.get(&name))
        else {
            self.error(&path, format!("`{target}` points at no definition"));
            return Type::Any;
        };
        self.seen.insert(name.clone(), container);
        self.pending.push_back(Pending {
            name: name.clone(),
            schema,
            path: pointer_push(container.pointer(), &name),
        });
        Type::Ref(name)
    }
}

/// What a `$ref` names: `#/$defs/<name>` or `#/definitions/<name>`, or why it cannot be read.
fn parse_ref(target: &str) -> Result<(DefsContainer, String), String> {
    let parsed = [DefsContainer::Defs, DefsContainer::Definitions]
        .into_iter()
        .find_map(|c| {
            let rest = target.strip_prefix("#/")?.strip_prefix(c.keyword())?;
            Some((c, rest.strip_prefix('/')?))
        });
    let Some((container, segment)) = parsed else {
        return Err(format!(
            "`{target}`: only references to `#/$defs/<name>` or `#/definitions/<name>` are supported"
        ));
    };
    match decode_fragment_segment(segment) {
        Some(name) => Ok((container, name)),
        None => Err(format!(
            "`{target}`: only references to a whole definition are supported"
        )),
    }
}
