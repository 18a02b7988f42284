//! Where coercion is in the input: a chain of segments on the stack, rendered into a JSON Pointer
//! only when a diagnostic needs one, so the clean path never formats a path.

use std::borrow::Cow;

use crate::diagnostics::bounded_pointer;

/// One step from a parent value to a child.
#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

/// The location of the value being coerced; its depth is the nesting level of that value.
#[derive(Clone, Copy)]
pub(super) struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
    /// How many arrays and objects enclose the value (the root is depth 0).
    pub(super) depth: usize,
}

impl<'a> Path<'a> {
    /// The root of the input.
    pub(super) const ROOT: Path<'static> = Path {
        parent: None,
        segment: Segment::Root,
        depth: 0,
    };

    /// The member `key` of the object at this path.
    pub(super) fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
            depth: self.depth + 1,
        }
    }

    /// The element `index` of the array at this path.
    pub(super) fn index(&self, index: usize) -> Path<'_> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
            depth: self.depth + 1,
        }
    }

    /// The path as a JSON Pointer (`""` for the root), kept small for a diagnostic as
    /// [`bounded_pointer`] says (long keys cut, the outer part of a long path elided), so that
    /// no input makes a path costly to render or to keep.
    pub(super) fn render(&self) -> String {
        let mut segments = Vec::with_capacity(self.depth);
        let mut at = Some(self);
        while let Some(path) = at {
            match path.segment {
                Segment::Root => {}
                Segment::Key(key) => segments.push(Cow::Borrowed(key)),
                Segment::Index(index) => segments.push(Cow::Owned(index.to_string())),
            }
            at = path.parent;
        }
        bounded_pointer(segments)
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn renders_nested_segments_as_an_escaped_pointer() {
        let root = Path::ROOT;
        let tags = root.key("a/b");
        let second = tags.index(2);
        assert_eq!(second.render(), "/a~1b/2");
        assert_eq!(second.depth, 2);
        assert_eq!(root.render(), "");
    }

    #[test]
    fn a_long_key_is_cut_and_a_long_path_keeps_its_innermost_segments() {
        let long = "k".repeat(10_000);
        let root = Path::ROOT;
        let key = root.key(&long);
        assert_eq!(key.render(), format!("/{}…", "k".repeat(256)));

        fn deep(path: &Path<'_>, key: &str, levels: usize) -> String {
            match levels {
                0 => path.index(7).render(),
                _ => deep(&path.key(key), key, levels - 1),
            }
        }
        let rendered = deep(&root.key("top"), &long, 100);
        assert!(rendered.starts_with("/…/kkk"), "{rendered:.40}");
        assert!(rendered.ends_with("…/7"), "{rendered}");
        assert!(rendered.len() < 2048 + 300, "{}", rendered.len());
    }
}
