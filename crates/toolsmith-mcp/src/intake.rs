//! A `tools/call`'s arguments as the client sent them, carried from the transport to the server.
//!
//! rmcp reads `params.arguments` into a map: two equal keys become the last one, and arguments
//! sent as a JSON string (encoded twice, as models do) or as an array make the whole request
//! unreadable. The server reads arguments the way every other surface does instead: their text
//! goes to toolsmith's argument reader (`Registry::call` with `Arguments::Text`), which repairs
//! a double encoding, refuses a duplicate key, and says what is wrong with anything else. So
//! the transports take that text from the message before rmcp reads it and hand it over in the
//! request's extensions, as a [`CallIntake`], where [`McpServer`](crate::McpServer) finds it:
//! the stdio transport when it reads a call, the HTTP front through [`http_body`].
//!
//! The other way, a client reads a server's answer to a `tools/call` straight into its type
//! ([`ToolAnswer`]).

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock,
    Extensions, InputResponses, JsonRpcMessage, MetaObject, RequestId, RequestMetaObject,
    ResultType, ServerResult,
};
use rmcp::service::RxJsonRpcMessage;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::OwnedSemaphorePermit;

/// A leading UTF-8 byte order mark, which a message may start with and which is dropped.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// What the transport hands the server with a `tools/call`: the arguments' text, and, when the
/// transport waited for it, the call's place among those the server has taken.
#[derive(Clone)]
pub(crate) struct CallIntake(Arc<Intake>);

pub(crate) struct Intake {
    /// The text of `params.arguments`; `None` when there were none (absent, or `null`).
    pub(crate) arguments: Option<Box<str>>,
    /// The call's place: held until the tool returns (or the call leaves the queue unrun).
    pub(crate) admitted: Option<OwnedSemaphorePermit>,
}

impl CallIntake {
    pub(crate) fn new(arguments: Option<Box<str>>, admitted: Option<OwnedSemaphorePermit>) -> Self {
        CallIntake(Arc::new(Intake {
            arguments,
            admitted,
        }))
    }

    /// Takes the intake out of a request's extensions: put there by the stdio transport, or
    /// (over HTTP) in the extensions of the HTTP request that rmcp keeps there.
    pub(crate) fn take(extensions: &mut Extensions) -> Option<Arc<Intake>> {
        let intake = match extensions.remove::<CallIntake>() {
            Some(intake) => intake,
            None => extensions
                .get_mut::<hyper::http::request::Parts>()?
                .extensions
                .remove::<CallIntake>()?,
        };
        Some(intake.0)
    }
}

/// A `tools/call` request as it arrives: `{"jsonrpc":"2.0","id":..,"method":"tools/call",
/// "params":{..}}`, other members ignored, as rmcp ignores them. `jsonrpc` and `method` are read
/// in place (rmcp's types for them copy each into a string), the arguments as their text.
#[derive(Deserialize)]
pub(crate) struct ToolCall<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    pub(crate) id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) params: ToolCallParams<'a>,
    /// A message with a `result` or `error` as well is not a request to rmcp.
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// rmcp's `CallToolRequestParams`, with the arguments as their text, whatever JSON they are.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCallParams<'a> {
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
    name: Cow<'static, str>,
    #[serde(borrow)]
    pub(crate) arguments: Option<&'a RawValue>,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// `true` for a member that is there, whatever its value (`null` too).
fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(value).map(|_| true)
}

impl<'a> ToolCall<'a> {
    /// `text` as a `tools/call` request, when it reads as one the way rmcp would read it.
    pub(crate) fn read(text: &'a [u8]) -> Option<ToolCall<'a>> {
        let call: ToolCall<'a> = serde_json::from_slice(text).ok()?;
        (call.jsonrpc == "2.0" && call.method == "tools/call" && !call.result && !call.error)
            .then_some(call)
    }
}

impl ToolCallParams<'_> {
    /// rmcp's request for these params, with `arguments` as given (rmcp keeps a request's
    /// `_meta` in its extensions, not in its params).
    pub(crate) fn into_request(self, arguments: Option<rmcp::model::JsonObject>) -> ClientRequest {
        let mut params = CallToolRequestParams::new(self.name);
        params.arguments = arguments;
        params.input_responses = self.input_responses;
        params.request_state = self.request_state;
        let mut request = CallToolRequest::new(params);
        if let Some(meta) = self.meta {
            request.extensions.insert(meta);
        }
        ClientRequest::CallToolRequest(request)
    }
}

/// A server's answer to a `tools/call`: `{"jsonrpc":"2.0","id":..,"result":{..}}`, nothing else,
/// its result with no member but a `CallToolResult`'s.
///
/// rmcp reads an answer by trying each kind of result in turn, fifteen before a tool's, each
/// failure writing an error message: several times the cost of the rest of a call through a
/// gateway. An answer of this shape is read in one pass straight into its type instead, the way
/// rmcp reads a `CallToolResult`, which is what rmcp makes of it (each kind tried before a
/// tool's requires a member a tool's result does not have); the tests hold the two readings
/// equal. Anything else goes to rmcp's reader.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolAnswer<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    result: AnswerResult,
}

/// A `CallToolResult`'s members, read as rmcp reads them, and no other.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AnswerResult {
    #[serde(default)]
    result_type: Option<ResultType>,
    content: Option<Vec<ContentBlock>>,
    /// Present (`null` too) or not.
    #[serde(default, deserialize_with = "present_value")]
    structured_content: Option<Value>,
    is_error: Option<bool>,
    #[serde(rename = "_meta")]
    meta: Option<MetaObject>,
}

/// A member's value, `null` too, as present.
fn present_value<'de, D: serde::Deserializer<'de>>(value: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(value).map(Some)
}

impl ToolAnswer<'_> {
    /// `text` as the answer to a `tools/call`, when it reads as one the way rmcp would read it.
    pub(crate) fn read(text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        let ToolAnswer {
            jsonrpc,
            id,
            result,
        } = serde_json::from_slice(text).ok()?;
        // What rmcp refuses as a `CallToolResult`: another kind of result (`input_required`),
        // or none of a tool's members.
        let other_kind = result
            .result_type
            .as_ref()
            .is_some_and(|kind| !kind.is_complete());
        let none = result.content.is_none()
            && result.structured_content.is_none()
            && result.is_error.is_none();
        if jsonrpc != "2.0" || other_kind || none {
            return None;
        }
        let mut answer = CallToolResult::default();
        answer.result_type = result.result_type;
        answer.content = result.content.unwrap_or_default();
        answer.structured_content = result.structured_content;
        answer.is_error = result.is_error;
        answer.meta = result.meta;
        Some(JsonRpcMessage::response(
            ServerResult::CallToolResult(answer),
            id,
        ))
    }
}

/// A POST body made ready for rmcp's HTTP service: a leading byte order mark dropped, and for a
/// `tools/call`, the arguments' text put in `parts`' extensions for the server to read and
/// replaced by `null` in the body. So rmcp reads the request whatever the arguments are (a
/// string, an array), never reads them a second time, and what is wrong with them (nesting too
/// deep, a repeated key) is the reader's answer, as over stdio.
pub(crate) fn http_body(
    mut parts: hyper::http::request::Parts,
    body: Bytes,
) -> (hyper::http::request::Parts, Bytes) {
    let body = match body.strip_prefix(UTF8_BOM) {
        Some(_) => body.slice(UTF8_BOM.len()..),
        None => body,
    };
    let Some(call) = ToolCall::read(&body) else {
        return (parts, body);
    };
    let arguments = call.params.arguments;
    let text = arguments.map(|raw| Box::<str>::from(raw.get()));
    parts.extensions.insert(CallIntake::new(text, None));
    let Some(raw) = arguments else {
        return (parts, body);
    };
    // The raw value is a slice of `body`: where it starts there.
    let start = (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
    let end = start.saturating_add(raw.get().len());
    if body.get(start..end) != Some(raw.get().as_bytes()) {
        return (parts, body);
    }
    let mut spliced = Vec::with_capacity(body.len());
    spliced.extend_from_slice(&body[..start]);
    spliced.extend_from_slice(b"null");
    spliced.extend_from_slice(&body[end..]);
    (parts, Bytes::from(spliced))
}
