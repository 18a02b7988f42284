//! A tool's [`ToolOutput`] as MCP's `CallToolResult`: each content block in MCP's shape (bytes
//! base64-encoded), the structured value as `structuredContent`, the repairs in `_meta`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, ResourceContents};
use serde_json::Value;
use toolsmith::{Content, ResourceContents as Contents, ToolOutput};

/// The `_meta` key under which a result lists the repairs made to the call's arguments.
pub(crate) const REPAIRS_META_KEY: &str = "toolsmith/repairs";

/// `output` as a successful result: its blocks in order, its structured value where it is an
/// object (MCP's `structuredContent` is one; other values travel as the text block the tool's
/// output has for them), and its repairs, recorded for the client as the CLI records them.
pub(crate) fn success_result(output: ToolOutput) -> CallToolResult {
    let ToolOutput {
        content,
        structured,
        repairs,
    } = output;
    let mut result = CallToolResult::success(content.into_iter().map(block).collect());
    if let Some(structured @ Value::Object(_)) = structured {
        result.structured_content = Some(structured);
    }
    if !repairs.is_empty() {
        let repairs = repairs.iter().map(toolsmith::Repair::to_json);
        let mut meta = rmcp::model::JsonObject::new();
        meta.insert(REPAIRS_META_KEY.to_owned(), Value::Array(repairs.collect()));
        result.meta = Some(MetaObject(meta));
    }
    result
}

/// An error result: the model's message as its one text block.
pub(crate) fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// One block in MCP's shape.
fn block(content: Content) -> ContentBlock {
    match content {
        Content::Text(text) => ContentBlock::text(text),
        Content::Image(media) => ContentBlock::image(BASE64.encode(media.data), media.mime_type),
        Content::Audio(media) => ContentBlock::audio(BASE64.encode(media.data), media.mime_type),
        Content::Resource(resource) => {
            let contents = match resource.contents {
                Contents::Text(text) => ResourceContents::TextResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    text,
                    meta: None,
                },
                Contents::Blob(data) => ResourceContents::BlobResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    blob: BASE64.encode(data),
                    meta: None,
                },
            };
            ContentBlock::resource(contents)
        }
        Content::ResourceLink(link) => {
            let mut resource = rmcp::model::Resource::new(link.uri, link.name);
            resource.description = link.description;
            resource.mime_type = link.mime_type;
            ContentBlock::resource_link(resource)
        }
        // A kind of block this server does not know yet: said in words rather than lost.
        other => ContentBlock::text(format!(
            "[a {} block this server cannot send]",
            other.kind()
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use toolsmith::{Resource, ResourceLink};

    use super::*;

    #[test]
    fn every_kind_of_block_is_written_as_mcp_spells_it() {
        let mut link = ResourceLink::new("file:///notes.md", "notes");
        link.description = Some("The notes".to_owned());
        link.mime_type = Some("text/markdown".to_owned());
        let output = ToolOutput::new(vec![
            Content::text("Here:"),
            Content::image(vec![1, 2, 3], "image/png"),
            Content::audio(b"RIFF".to_vec(), "audio/wav"),
            Resource::text("test://a", "some text")
                .with_mime_type("text/plain")
                .into(),
            Resource::blob("test://b", vec![0xff, 0x00]).into(),
            link.into(),
        ]);
        let result = serde_json::to_value(success_result(output)).unwrap();
        assert_eq!(
            result["content"],
            json!([
                {"type": "text", "text": "Here:"},
                {"type": "image", "data": "AQID", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "some text"}},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "/wA="}},
                {"type": "resource_link", "uri": "file:///notes.md", "name": "notes",
                 "description": "The notes", "mimeType": "text/markdown"}
            ])
        );
        assert_eq!(result["isError"], false);
        assert!(result.get("structuredContent").is_none());
    }

    #[test]
    fn only_an_object_is_structured_content() {
        let object = success_result(ToolOutput::structured(json!({"a": 1})));
        assert_eq!(object.structured_content, Some(json!({"a": 1})));
        let number = success_result(ToolOutput::structured(json!(3)));
        assert_eq!(number.structured_content, None);
        assert_eq!(number.content[0].as_text().unwrap().text, "3");
    }
}
