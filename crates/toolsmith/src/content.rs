//! [`Content`]: the blocks a tool's result is made of, as MCP and the providers model them.

use std::borrow::Cow;

/// One block of a tool's result.
///
/// A tool that returns text (or a typed value) answers one [`Text`](Content::Text) block; a
/// tool that returns a [`ToolOutput`](crate::ToolOutput) can answer any mix.
///
/// ```
/// use toolsmith::{Content, ToolOutput};
///
/// let output = ToolOutput::new(vec![
///     Content::text("A red pixel:"),
///     Content::image(vec![0x89, b'P', b'N', b'G'], "image/png"),
/// ]);
/// assert_eq!(output.as_text(), "A red pixel:");
/// assert_eq!(output.content.len(), 2);
/// ```
///
/// A block is the size of its text (three words): the other kinds are boxed, so that the one
/// text block most results are sits in a [`ToolOutput`](crate::ToolOutput) without an
/// allocation of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text(String),
    /// An image: its bytes and MIME type (`image/png`).
    Image(Box<Media>),
    /// Audio: its bytes and MIME type (`audio/wav`).
    Audio(Box<Media>),
    /// A resource, its contents included.
    Resource(Box<Resource>),
    /// A link to a resource the client can read.
    ResourceLink(Box<ResourceLink>),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    /// An image block.
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Image(Box::new(Media {
            data: data.into(),
            mime_type: mime_type.into(),
        }))
    }

    /// An audio block.
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Audio(Box::new(Media {
            data: data.into(),
            mime_type: mime_type.into(),
        }))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }

    /// What kind of block, in MCP's words: `text`, `image`, `audio`, `resource`,
    /// `resource_link`.
    pub fn kind(&self) -> &'static str {
        match self {
            Content::Text(_) => "text",
            Content::Image(_) => "image",
            Content::Audio(_) => "audio",
            Content::Resource(_) => "resource",
            Content::ResourceLink(_) => "resource_link",
        }
    }
}

/// The bytes of an image or a sound, and their MIME type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    /// The bytes (not encoded; a transport encodes them as it must, base64 for JSON).
    pub data: Vec<u8>,
    /// The MIME type: `image/png`, `audio/wav`, ...
    pub mime_type: String,
}

/// A resource with its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its MIME type, where known.
    pub mime_type: Option<String>,
    /// What it holds.
    pub contents: ResourceContents,
}

impl Resource {
    /// A text resource.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            mime_type: None,
            contents: ResourceContents::Text(text.into()),
        }
    }

    /// A binary resource.
    pub fn blob(uri: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Resource {
            uri: uri.into(),
            mime_type: None,
            contents: ResourceContents::Blob(data.into()),
        }
    }

    /// The same resource, with its MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// What a resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// A link to a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLink {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// What it is, where said.
    pub description: Option<String>,
    /// Its MIME type, where known.
    pub mime_type: Option<String>,
}

impl ResourceLink {
    /// A link to `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }
}

impl From<Resource> for Content {
    fn from(resource: Resource) -> Self {
        Content::Resource(Box::new(resource))
    }
}

impl From<ResourceLink> for Content {
    fn from(link: ResourceLink) -> Self {
        Content::ResourceLink(Box::new(link))
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

/// The blocks of a tool's result ([`ToolOutput::content`](crate::ToolOutput::content)): a list
/// of [`Content`] that holds one block without an allocation, since most results are one text
/// block, and is no larger than a `Vec`. It reads as a slice (`len`, `iter`, indexing, `first`,
/// ...), grows by [`push`](Blocks::push) and [`Extend`], and is made from a `Vec`, one block or
/// an iterator. Several blocks are held as a boxed slice, which a `push` reallocates: to add
/// many, [`extend`](Extend::extend) once or build a `Vec` first.
///
/// ```
/// use toolsmith::{Blocks, Content};
///
/// let mut blocks = Blocks::from(Content::text("a red pixel:"));
/// blocks.push(Content::image(vec![0x89, b'P', b'N', b'G'], "image/png"));
/// assert_eq!(blocks.len(), 2);
/// assert_eq!(blocks[0].as_text(), Some("a red pixel:"));
/// let kinds: Vec<&str> = blocks.iter().map(Content::kind).collect();
/// assert_eq!(kinds, ["text", "image"]);
/// let owned: Vec<Content> = blocks.into_vec();
/// assert_eq!(owned.len(), 2);
/// ```
#[derive(Clone)]
pub struct Blocks(Held);

/// How the blocks are held: one in place, else a boxed slice (a `Vec` would make the whole a
/// word larger: a [`Content`] and a boxed slice share three words). `Many` may hold any number,
/// one included; equality is the slices'.
#[derive(Clone)]
enum Held {
    One(Content),
    Many(Box<[Content]>),
}

impl Blocks {
    /// No blocks.
    #[inline]
    pub fn new() -> Self {
        Blocks(Held::Many(Box::default()))
    }

    /// The blocks, as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Content] {
        match &self.0 {
            Held::One(block) => std::slice::from_ref(block),
            Held::Many(blocks) => blocks,
        }
    }

    /// The blocks, as a mutable slice.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Content] {
        match &mut self.0 {
            Held::One(block) => std::slice::from_mut(block),
            Held::Many(blocks) => blocks,
        }
    }

    /// Adds `block` at the end.
    pub fn push(&mut self, block: Content) {
        self.extend(std::iter::once(block));
    }

    /// The blocks, as a `Vec`.
    pub fn into_vec(self) -> Vec<Content> {
        match self.0 {
            Held::One(block) => vec![block],
            Held::Many(blocks) => blocks.into_vec(),
        }
    }
}

impl Default for Blocks {
    fn default() -> Self {
        Blocks::new()
    }
}

impl std::ops::Deref for Blocks {
    type Target = [Content];

    #[inline]
    fn deref(&self) -> &[Content] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for Blocks {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Content] {
        self.as_mut_slice()
    }
}

impl std::fmt::Debug for Blocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Blocks {
    fn eq(&self, other: &Blocks) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Blocks {}

impl PartialEq<[Content]> for Blocks {
    fn eq(&self, other: &[Content]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<Vec<Content>> for Blocks {
    fn eq(&self, other: &Vec<Content>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> PartialEq<[Content; N]> for Blocks {
    fn eq(&self, other: &[Content; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<Blocks> for [Content] {
    fn eq(&self, other: &Blocks) -> bool {
        self == other.as_slice()
    }
}

impl PartialEq<Blocks> for Vec<Content> {
    fn eq(&self, other: &Blocks) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> PartialEq<Blocks> for [Content; N] {
    fn eq(&self, other: &Blocks) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl From<Content> for Blocks {
    #[inline]
    fn from(block: Content) -> Self {
        Blocks(Held::One(block))
    }
}

impl From<Vec<Content>> for Blocks {
    #[inline]
    fn from(blocks: Vec<Content>) -> Self {
        Blocks(Held::Many(blocks.into_boxed_slice()))
    }
}

impl<const N: usize> From<[Content; N]> for Blocks {
    fn from(blocks: [Content; N]) -> Self {
        blocks.into_iter().collect()
    }
}

impl From<Blocks> for Vec<Content> {
    fn from(blocks: Blocks) -> Self {
        blocks.into_vec()
    }
}

impl FromIterator<Content> for Blocks {
    fn from_iter<I: IntoIterator<Item = Content>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let Some(first) = iter.next() else {
            return Blocks::new();
        };
        match iter.next() {
            None => Blocks(Held::One(first)),
            Some(second) => {
                let mut blocks = Vec::with_capacity(iter.size_hint().0.saturating_add(2));
                blocks.push(first);
                blocks.push(second);
                blocks.extend(iter);
                Blocks::from(blocks)
            }
        }
    }
}

impl Extend<Content> for Blocks {
    fn extend<I: IntoIterator<Item = Content>>(&mut self, iter: I) {
        // Taken first: should the iterator panic, the blocks held are still held.
        let more: Blocks = iter.into_iter().collect();
        if more.is_empty() {
            return;
        }
        let held = std::mem::replace(&mut self.0, Held::Many(Box::default()));
        *self = match held {
            Held::Many(blocks) if blocks.is_empty() => more,
            Held::Many(blocks) => {
                let mut blocks = blocks.into_vec();
                blocks.extend(more);
                Blocks::from(blocks)
            }
            Held::One(first) => std::iter::once(first).chain(more).collect(),
        };
    }
}

impl IntoIterator for Blocks {
    type Item = Content;
    type IntoIter = IntoBlocks;

    fn into_iter(self) -> IntoBlocks {
        IntoBlocks(match self.0 {
            Held::One(block) => Draining::One(Some(block)),
            Held::Many(blocks) => Draining::Many(blocks.into_vec().into_iter()),
        })
    }
}

impl<'a> IntoIterator for &'a Blocks {
    type Item = &'a Content;
    type IntoIter = std::slice::Iter<'a, Content>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'a> IntoIterator for &'a mut Blocks {
    type Item = &'a mut Content;
    type IntoIter = std::slice::IterMut<'a, Content>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_mut_slice().iter_mut()
    }
}

/// The blocks of a [`Blocks`], taken in order.
#[derive(Debug)]
pub struct IntoBlocks(Draining);

#[derive(Debug)]
enum Draining {
    One(Option<Content>),
    Many(std::vec::IntoIter<Content>),
}

impl Iterator for IntoBlocks {
    type Item = Content;

    #[inline]
    fn next(&mut self) -> Option<Content> {
        match &mut self.0 {
            Draining::One(block) => block.take(),
            Draining::Many(blocks) => blocks.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match &self.0 {
            Draining::One(block) => usize::from(block.is_some()),
            Draining::Many(blocks) => blocks.len(),
        };
        (left, Some(left))
    }
}

impl DoubleEndedIterator for IntoBlocks {
    fn next_back(&mut self) -> Option<Content> {
        match &mut self.0 {
            Draining::One(block) => block.take(),
            Draining::Many(blocks) => blocks.next_back(),
        }
    }
}

impl ExactSizeIterator for IntoBlocks {}

impl std::iter::FusedIterator for IntoBlocks {}

/// The text blocks of `content`, joined by newlines (borrowed where there is one).
pub(crate) fn joined_text(content: &[Content]) -> Cow<'_, str> {
    let mut texts = content.iter().filter_map(Content::as_text);
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut joined = format!("{first}\n{second}");
            for text in texts {
                joined.push('\n');
                joined.push_str(text);
            }
            Cow::Owned(joined)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Blocks, Content, Held};

    fn texts(blocks: &Blocks) -> Vec<&str> {
        blocks.iter().filter_map(Content::as_text).collect()
    }

    #[test]
    fn a_block_is_the_size_of_its_text_and_one_is_held_in_place() {
        assert_eq!(size_of::<Content>(), size_of::<String>());
        assert_eq!(size_of::<Blocks>(), size_of::<Vec<Content>>());
        assert!(matches!(Blocks::from(Content::text("a")).0, Held::One(_)));
        assert!(matches!(
            std::iter::once(Content::text("a")).collect::<Blocks>().0,
            Held::One(_)
        ));
        let mut pushed = Blocks::new();
        pushed.push(Content::text("a"));
        assert!(matches!(pushed.0, Held::One(_)));
    }

    #[test]
    fn blocks_held_either_way_are_the_same_blocks() {
        let one = Blocks::from(Content::text("a"));
        let many = Blocks::from(vec![Content::text("a")]);
        assert!(matches!(many.0, Held::Many(_)));
        assert_eq!(one, many);
        assert_eq!(one, [Content::text("a")]);
        assert_eq!([Content::text("a")], one);
        assert_eq!(vec![Content::text("a")], many);
        assert_eq!(*[Content::text("a")].as_slice(), one);
        assert_ne!(one, Blocks::new());
        assert_eq!(format!("{one:?}"), format!("{many:?}"));
    }

    #[test]
    fn blocks_keep_their_order_however_they_grow() {
        let mut blocks = Blocks::new();
        assert!(blocks.is_empty());
        blocks.push(Content::text("a"));
        blocks.push(Content::image(vec![1], "image/png"));
        blocks.extend([Content::text("b"), Content::text("c")]);
        assert_eq!(blocks.len(), 4);
        assert_eq!(texts(&blocks), ["a", "b", "c"]);
        assert_eq!(blocks[1].kind(), "image");

        // An empty `Vec` given, then grown.
        let mut grown = Blocks::from(Vec::with_capacity(4));
        grown.push(Content::text("x"));
        assert!(matches!(grown.0, Held::One(_)));
        grown.push(Content::text("y"));
        grown.extend(std::iter::empty());
        assert_eq!(texts(&grown), ["x", "y"]);

        let collected: Blocks = blocks.clone().into_iter().collect();
        assert_eq!(collected, blocks);
        let backwards: Vec<Content> = blocks.clone().into_iter().rev().collect();
        assert_eq!(backwards.first(), Some(&Content::text("c")));
        let mut drained = Blocks::from(Content::text("only")).into_iter();
        assert_eq!(drained.len(), 1);
        assert_eq!(drained.next(), Some(Content::text("only")));
        assert_eq!(drained.next(), None);
        assert_eq!(Vec::from(blocks).len(), 4);
    }

    #[test]
    fn blocks_change_in_place() {
        let mut blocks = Blocks::from(Content::text("a"));
        if let Some(Content::Text(text)) = blocks.first_mut() {
            text.push('!');
        }
        for block in &mut blocks {
            if let Content::Text(text) = block {
                text.push('?');
            }
        }
        assert_eq!(texts(&blocks), ["a!?"]);
    }
}
