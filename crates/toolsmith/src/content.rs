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
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text(String),
    /// An image: its bytes and MIME type (`image/png`).
    Image(Media),
    /// Audio: its bytes and MIME type (`audio/wav`).
    Audio(Media),
    /// A resource, its contents included.
    Resource(Resource),
    /// A link to a resource the client can read.
    ResourceLink(ResourceLink),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    /// An image block.
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Image(Media {
            data: data.into(),
            mime_type: mime_type.into(),
        })
    }

    /// An audio block.
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Content::Audio(Media {
            data: data.into(),
            mime_type: mime_type.into(),
        })
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
        Content::Resource(resource)
    }
}

impl From<ResourceLink> for Content {
    fn from(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
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
