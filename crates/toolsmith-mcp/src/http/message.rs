//! A POST body as one JSON-RPC message: UTF-8 JSON, nested no deeper than serde_json reads
//! (128 levels), one object (JSON-RPC batches are not part of MCP since 2025-06-18), that reads
//! as a message of an MCP client.

use std::fmt;

use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, RequestId};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

/// Why a body is not one message, and how it is answered (status 400 always).
#[derive(Debug)]
pub(crate) enum NotAMessage {
    /// Not UTF-8 JSON, or nested too deep.
    NotJson(serde_json::Error),
    /// A JSON array: a batch.
    Batch,
    /// JSON that is neither an object nor an array.
    NotObject,
    /// An object that is not a message (with its `id`, where it has one that reads as one).
    Invalid {
        id: Option<RequestId>,
        error: serde_json::Error,
    },
}

impl NotAMessage {
    /// The JSON-RPC error answering it, and the id it answers.
    pub(crate) fn into_error(self) -> (ErrorData, Option<RequestId>) {
        match self {
            NotAMessage::NotJson(error) => (
                ErrorData::new(
                    ErrorCode::PARSE_ERROR,
                    format!("Parse error: the body is not JSON ({error})"),
                    None,
                ),
                None,
            ),
            NotAMessage::Batch => (
                ErrorData::invalid_request(
                    "Invalid Request: a JSON array (a batch) is not an MCP message; send one \
                     message per request",
                    None,
                ),
                None,
            ),
            NotAMessage::NotObject => (
                ErrorData::invalid_request(
                    "Invalid Request: the body must be one JSON-RPC message, a JSON object",
                    None,
                ),
                None,
            ),
            NotAMessage::Invalid { id, error } => (
                ErrorData::invalid_request(
                    format!("Invalid Request: not an MCP message ({error})"),
                    None,
                ),
                id,
            ),
        }
    }
}

/// Whether `body` is one JSON object: UTF-8, well formed, nested no deeper than serde_json reads.
/// Reads it once, keeping nothing.
pub(crate) fn check_json(body: &[u8]) -> Result<(), NotAMessage> {
    match serde_json::from_slice::<Kind>(body) {
        Ok(Kind::Object) => Ok(()),
        Ok(Kind::Array) => Err(NotAMessage::Batch),
        Ok(Kind::Scalar) => Err(NotAMessage::NotObject),
        Err(error) => Err(NotAMessage::NotJson(error)),
    }
}

/// `body` (a JSON object, as [`check_json`] found) as rmcp reads a message.
pub(crate) fn read(body: &[u8]) -> Result<ClientJsonRpcMessage, NotAMessage> {
    serde_json::from_slice(body).map_err(|error| NotAMessage::Invalid {
        id: id_of(body),
        error,
    })
}

/// The `id` member of the JSON object `body`, where it reads as a request id.
fn id_of(body: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct WithId {
        id: Option<RequestId>,
    }
    serde_json::from_slice::<WithId>(body).ok()?.id
}

/// What a JSON value is, found by reading it whole (every string checked as UTF-8, every level
/// of nesting counted by serde_json) without keeping any of it.
enum Kind {
    Object,
    Array,
    Scalar,
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Scalar)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Kind, A::Error> {
        while items.next_element::<Kind>()?.is_some() {}
        Ok(Kind::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Kind, A::Error> {
        while members.next_entry::<Kind, Kind>()?.is_some() {}
        Ok(Kind::Object)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn refused(body: &[u8]) -> (ErrorData, Option<RequestId>) {
        match check_json(body).and_then(|()| read(body).map(drop)) {
            Ok(()) => panic!("{} was read as a message", String::from_utf8_lossy(body)),
            Err(not) => not.into_error(),
        }
    }

    #[test]
    fn a_message_is_read() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[[1]]}}}"#;
        check_json(body).unwrap();
        assert!(matches!(read(body), Ok(ClientJsonRpcMessage::Request(_))));
    }

    #[test]
    fn what_is_not_json_is_a_parse_error() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let bodies: [&[u8]; 6] = [
            b"{not json",
            br#"{"x": NaN}"#,
            b"{\"x\": \"\xff\"}",
            br#"{"x": 1} {"y": 2}"#,
            b"",
            deep.as_bytes(),
        ];
        for body in bodies {
            let (error, id) = refused(body);
            assert_eq!(error.code, ErrorCode::PARSE_ERROR, "{}", error.message);
            assert_eq!(id, None);
        }
        let deep_object = format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200));
        assert_eq!(
            refused(deep_object.as_bytes()).0.code,
            ErrorCode::PARSE_ERROR
        );
    }

    #[test]
    fn a_batch_or_a_scalar_is_an_invalid_request() {
        let (error, id) = refused(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
        assert!(error.message.contains("batch"), "{}", error.message);
        assert_eq!(id, None);
        assert_eq!(refused(b"5").0.code, ErrorCode::INVALID_REQUEST);
    }

    #[test]
    fn an_object_that_is_no_message_is_an_invalid_request_with_its_id() {
        let (error, id) =
            refused(br#"{"jsonrpc":"2.0","id":"a-1","method":"initialize","params":5}"#);
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(id, Some(RequestId::String("a-1".into())));
        let (_, id) = refused(br#"{"id":[1],"what":"no method"}"#);
        assert_eq!(id, None);
    }
}
