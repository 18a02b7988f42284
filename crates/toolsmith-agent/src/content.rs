//! A tool's output as a provider takes it: the content blocks a tool message can carry, and a
//! note the model reads in place of each block it cannot.
//!
//! The OpenAI chat completions API takes text only in a tool message: its published schema
//! (`ChatCompletionRequestToolMessage` in openai/openai-openapi) allows a string or an array of
//! content parts of which "only type `text` is supported". Images, audio and files in a tool's
//! result are taken only by its Responses API (`function_call_output`), which this crate does
//! not speak. So text blocks, text resources and resource links go to the model as text, and
//! every other block is dropped with a note, and kept whole in the [`Step`](crate::Step).

use serde_json::{Value, json};
use toolsmith::{Content, Media, ResourceContents};

/// The longest MIME type or URI quoted in a note (a tool's own words; a longer one is cut).
const QUOTE_LIMIT: usize = 200;

/// `content` as a tool message's text (blocks joined by newlines, a note in place of each
/// block a text-only message cannot carry), and the blocks dropped.
pub(crate) fn for_text_message(
    content: impl IntoIterator<Item = Content>,
) -> (String, Vec<Content>) {
    let mut text = String::new();
    let mut dropped = Vec::new();
    for block in content {
        if !text.is_empty() {
            text.push('\n');
        }
        match block {
            // The first block's text is taken as it is (most outputs are one text block).
            Content::Text(block) if text.is_empty() => text = block,
            Content::Text(block) => text.push_str(&block),
            Content::Resource(resource) => match &resource.contents {
                ResourceContents::Text(contents) => {
                    text.push_str(&format!("[resource {}]\n{contents}", quote(&resource.uri)));
                }
                ResourceContents::Blob(bytes) => {
                    let mime = resource.mime_type.as_deref().map(quote);
                    let what = match mime {
                        Some(mime) => format!("{mime}, {}", bytes_of(bytes.len())),
                        None => bytes_of(bytes.len()),
                    };
                    text.push_str(&format!(
                        "[the resource {} ({what}) was returned but cannot be shown]",
                        quote(&resource.uri),
                    ));
                    dropped.push(Content::Resource(resource));
                }
            },
            Content::ResourceLink(link) => {
                text.push_str(&format!(
                    "[a link to the resource `{}` at {}",
                    quote(&link.name),
                    quote(&link.uri)
                ));
                if let Some(description) = &link.description {
                    text.push_str(&format!(": {description}"));
                }
                text.push(']');
            }
            Content::Image(media) => {
                text.push_str(&media_note("image", &media));
                dropped.push(Content::Image(media));
            }
            Content::Audio(media) => {
                text.push_str(&media_note("audio", &media));
                dropped.push(Content::Audio(media));
            }
            other => {
                text.push_str(&format!(
                    "[a block of kind `{}` was returned but cannot be shown]",
                    other.kind()
                ));
                dropped.push(other);
            }
        }
    }
    (text, dropped)
}

/// `[an image/png of 1,234 bytes was returned but cannot be shown]`.
fn media_note(kind: &str, media: &Media) -> String {
    let mime = quote(&media.mime_type);
    let what = if mime.starts_with(kind) {
        mime
    } else if mime.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind} ({mime})")
    };
    format!(
        "[an {what} of {} was returned but cannot be shown]",
        bytes_of(media.data.len())
    )
}

/// A dropped block as data, without its bytes: `{"type", "mime_type", "bytes"}` (and `"uri"`
/// for a resource).
pub(crate) fn describe(block: &Content) -> Value {
    match block {
        Content::Image(media) | Content::Audio(media) => json!({
            "type": block.kind(),
            "mime_type": media.mime_type,
            "bytes": media.data.len(),
        }),
        Content::Resource(resource) => {
            let bytes = match &resource.contents {
                ResourceContents::Text(text) => text.len(),
                ResourceContents::Blob(bytes) => bytes.len(),
            };
            json!({
                "type": block.kind(),
                "uri": resource.uri,
                "mime_type": resource.mime_type,
                "bytes": bytes,
            })
        }
        other => json!({"type": other.kind()}),
    }
}

/// `1 byte`, `1,234 bytes`.
fn bytes_of(n: usize) -> String {
    if n == 1 {
        return "1 byte".to_owned();
    }
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{grouped} bytes")
}

/// `text`, cut at [`QUOTE_LIMIT`] characters.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolsmith::{Resource, ResourceLink};

    #[test]
    fn sizes_are_grouped_by_thousands() {
        let sizes: Vec<String> = [0, 1, 999, 1_234, 1_048_576].map(bytes_of).into();
        assert_eq!(
            sizes,
            [
                "0 bytes",
                "1 byte",
                "999 bytes",
                "1,234 bytes",
                "1,048,576 bytes"
            ]
        );
    }

    #[test]
    fn text_goes_through_and_media_is_dropped_with_a_note_in_its_place() {
        let png = Content::image(vec![0; 1_234], "image/png");
        let wav = Content::audio(vec![0; 2], "audio/wav");
        let (text, dropped) =
            for_text_message(vec![Content::text("Here:"), png.clone(), wav.clone()]);
        assert_eq!(
            text,
            "Here:\n[an image/png of 1,234 bytes was returned but cannot be shown]\n\
             [an audio/wav of 2 bytes was returned but cannot be shown]"
        );
        assert_eq!(dropped, [png, wav]);
    }

    #[test]
    fn a_text_resource_and_a_link_are_shown_and_a_binary_resource_is_not() {
        let notes = Resource::text("file:///notes.md", "# Notes");
        let pdf = Resource::blob("file:///a.pdf", vec![1, 2, 3]).with_mime_type("application/pdf");
        let mut link = ResourceLink::new("file:///b.txt", "b.txt");
        link.description = Some("the other file".into());
        let (text, dropped) = for_text_message(vec![notes.into(), pdf.clone().into(), link.into()]);
        assert_eq!(
            text,
            "[resource file:///notes.md]\n# Notes\n\
             [the resource file:///a.pdf (application/pdf, 3 bytes) was returned but cannot be shown]\n\
             [a link to the resource `b.txt` at file:///b.txt: the other file]"
        );
        assert_eq!(dropped, [Content::from(pdf)]);
    }

    #[test]
    fn a_media_type_of_another_kind_is_named_beside_the_kind() {
        let odd = Media {
            data: vec![0; 3],
            mime_type: "application/octet-stream".into(),
        };
        assert_eq!(
            media_note("image", &odd),
            "[an image (application/octet-stream) of 3 bytes was returned but cannot be shown]"
        );
    }
}
