//! The HTTP transport's error answers: a JSON-RPC error in every body, with the status that
//! says what went wrong.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::StatusCode;
use hyper::body::{Body, Frame, SizeHint};
use hyper::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderValue};
use rmcp::model::{ErrorCode, ErrorData, RequestId};
use serde_json::{Map, Value, json};

pub(crate) type Response = hyper::Response<BoxBody<Bytes, Infallible>>;

/// The most of a plain-text error body of rmcp's that is quoted.
const MAX_QUOTED: usize = 16 * 1024;

/// `error` as a JSON-RPC error answering `id` (`null` where none is known, as JSON-RPC asks;
/// rmcp's own error type leaves the member out), with `status`.
pub(crate) fn error(status: StatusCode, error: ErrorData, id: Option<RequestId>) -> Response {
    let message = json!({"jsonrpc": "2.0", "id": id, "error": error});
    // A JSON value always serializes.
    let body = serde_json::to_vec(&message).unwrap_or_default();
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `response`, after which the connection closes: the request's body was not read to its end,
/// and what is left of it must not be read as the next request.
pub(crate) fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// rmcp's answer, with an error it wrote as plain text (a header it refused, a failure of its
/// own) rewritten as a JSON-RPC error answering `id`, with the same status and headers, and an
/// error it wrote as JSON without an `id` given `"id": null`.
pub(crate) async fn as_json_rpc(response: Response, id: Option<RequestId>) -> Response {
    let status = response.status();
    if status.is_success() {
        return response;
    }
    let json = is_json(response.headers());
    let (mut parts, body) = response.into_parts();
    let bytes = match Limited::new(body, MAX_QUOTED).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    if json && let Ok(mut error) = serde_json::from_slice::<Map<String, Value>>(&bytes) {
        error.entry("id").or_insert(Value::Null);
        let body = serde_json::to_vec(&error).unwrap_or_default();
        parts.headers.remove(CONTENT_LENGTH);
        return hyper::Response::from_parts(parts, Full::new(Bytes::from(body)).boxed());
    }
    let text = String::from_utf8_lossy(&bytes);
    let message = match text.trim() {
        "" => status.canonical_reason().unwrap_or("Error").to_owned(),
        text => text.to_owned(),
    };
    let code = if status.is_server_error() {
        ErrorCode::INTERNAL_ERROR
    } else {
        ErrorCode::INVALID_REQUEST
    };
    let rewritten = error(status, ErrorData::new(code, message, None), id);
    parts.headers.remove(CONTENT_LENGTH);
    parts.headers.remove(CONTENT_TYPE);
    let (rewritten_parts, body) = rewritten.into_parts();
    parts.headers.extend(rewritten_parts.headers);
    hyper::Response::from_parts(parts, body)
}

/// `body`, ended early (cleanly, as a stream that is done) once `stopped` resolves: a stream
/// that would not end by itself.
pub(crate) fn until(
    body: BoxBody<Bytes, Infallible>,
    stopped: impl Future<Output = ()> + Send + Sync + 'static,
) -> BoxBody<Bytes, Infallible> {
    Until {
        body,
        stopped: Box::pin(stopped),
    }
    .boxed()
}

struct Until<F> {
    body: BoxBody<Bytes, Infallible>,
    stopped: Pin<Box<F>>,
}

impl<F: Future<Output = ()>> Body for Until<F> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.stopped.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // Ending early, it may be shorter than its own hint says.
        let mut hint = SizeHint::new();
        if let Some(upper) = self.body.size_hint().upper() {
            hint.set_upper(upper);
        }
        hint
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| essence(value).eq_ignore_ascii_case("application/json"))
}

/// A media type without its parameters: `application/json; charset=utf-8` -> `application/json`.
pub(crate) fn essence(media_type: &str) -> &str {
    media_type
        .split_once(';')
        .map_or(media_type, |(essence, _)| essence)
        .trim()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    async fn body_of(response: Response) -> Value {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn a_plain_text_error_becomes_a_json_rpc_error_with_the_same_status_and_headers() {
        let mut plain = hyper::Response::new(Full::new(Bytes::from("Not Acceptable: no")).boxed());
        *plain.status_mut() = StatusCode::NOT_ACCEPTABLE;
        plain
            .headers_mut()
            .insert("allow", HeaderValue::from_static("POST"));
        let response = as_json_rpc(plain, Some(RequestId::Number(4))).await;
        assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
        assert_eq!(response.headers()["allow"], "POST");
        assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
        let body = body_of(response).await;
        assert_eq!(body["id"], 4);
        assert_eq!(body["error"]["code"], -32600);
        assert_eq!(body["error"]["message"], "Not Acceptable: no");
    }

    #[tokio::test]
    async fn a_server_failure_is_an_internal_error() {
        let mut plain = hyper::Response::new(Full::new(Bytes::new()).boxed());
        *plain.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        let body = body_of(as_json_rpc(plain, None).await).await;
        assert!(body.as_object().unwrap().contains_key("id"), "{body}");
        assert_eq!(body["id"], Value::Null);
        assert_eq!(body["error"]["code"], -32603);
        assert_eq!(body["error"]["message"], "Internal Server Error");
    }

    #[tokio::test]
    async fn a_json_error_without_an_id_gets_a_null_one() {
        let mut json = hyper::Response::new(
            Full::new(Bytes::from(
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"no"}}"#,
            ))
            .boxed(),
        );
        *json.status_mut() = StatusCode::BAD_REQUEST;
        json.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let body = body_of(as_json_rpc(json, None).await).await;
        assert_eq!(
            body,
            serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "no"}})
        );
    }

    #[test]
    fn a_media_type_is_compared_without_its_parameters() {
        assert_eq!(
            essence(" application/json ; charset=utf-8"),
            "application/json"
        );
        assert_eq!(essence("text/plain"), "text/plain");
    }
}
