//! Where coercion is in the input: a chain of segments on the stack, rendered into a JSON Pointer
//! only when a diagnostic needs one, so the clean path never formats a path.

use crate::diagnostics::pointer_push;

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

    /// The path as a JSON Pointer (`""` for the root).
    pub(super) fn render(&self) -> String {
        let mut chain = Vec::with_capacity(self.depth + 1);
        let mut at = Some(self);
        while let Some(path) = at {
            chain.push(path.segment);
            at = path.parent;
        }
        let mut pointer = String::new();
        for segment in chain.iter().rev() {
            match segment {
                Segment::Root => {}
                Segment::Key(key) => pointer = pointer_push(&pointer, key),
                Segment::Index(index) => pointer = pointer_push(&pointer, &index.to_string()),
            }
        }
        pointer
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
}
