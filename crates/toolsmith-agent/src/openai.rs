//! [`OpenAiCompatible`]: a client for `POST {base}/chat/completions`, the API that OpenAI,
//! llama.cpp's server, vLLM, Ollama and most gateways speak.

use std::fmt;

use serde_json::{Map, Value, json};
use toolsmith::Dialect;

use crate::http::{
    BaseUrlError, ErrorShape, Post, Transport, check_base_url, json_body, kind, transport_settings,
};
use crate::lm::{LanguageModel, LmError, LmFuture, Reply, Usage};
use crate::message::{Message, Request, Role, ToolCall, ToolChoice};

/// A chat model behind an OpenAI-compatible `chat/completions` endpoint.
///
/// Tools are declared as functions in the OpenAI dialect (the strict one, with
/// `"strict": true`, after [`strict`](Self::strict)). Requests carry the API key as a bearer
/// token, and no `Authorization` header when there is no key. A 429 or 5xx answer is retried
/// with exponential backoff, waiting what the server's `Retry-After` asks for where it says (up
/// to [`max_retry_wait`](Self::max_retry_wait)); any other 4xx fails at once with the server's
/// message. No error ever contains the key.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolsmith_agent::{LanguageModel, OpenAiCompatible};
///
/// let lm: Arc<dyn LanguageModel> = Arc::new(
///     OpenAiCompatible::new("https://api.openai.com/v1", "gpt-4o-mini")?
///         .api_key_from_env("OPENAI_API_KEY"),
/// );
/// # Ok::<(), toolsmith_agent::BaseUrlError>(())
/// ```
#[derive(Clone)]
pub struct OpenAiCompatible {
    base_url: String,
    model: String,
    api_key: Option<String>,
    strict: bool,
    temperature: Option<f64>,
    transport: Transport,
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("strict", &self.strict)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl OpenAiCompatible {
    /// OpenAI's own API: `https://api.openai.com/v1`.
    pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

    /// A client of `model` at `base_url` (the part before `/chat/completions`, such as
    /// `https://api.openai.com/v1`), without a key; 60 s per request, 3 retries from 500 ms.
    ///
    /// # Errors
    /// When `base_url` is not an `http` or `https` URL with a host ([`check_base_url`](Self::check_base_url)):
    /// the problem is found here, not at the first request.
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Result<Self, BaseUrlError> {
        let base_url = base_url.into();
        Self::check_base_url(&base_url)?;
        Ok(OpenAiCompatible {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key: None,
            strict: false,
            temperature: None,
            transport: Transport::default(),
        })
    }

    /// Whether `base_url` can be a client's base URL: an `http` or `https` URL with a host, and
    /// without a query or fragment (`/chat/completions` is added after it).
    ///
    /// ```
    /// use toolsmith_agent::OpenAiCompatible;
    ///
    /// assert!(OpenAiCompatible::check_base_url("http://127.0.0.1:8080/v1").is_ok());
    /// let error = OpenAiCompatible::check_base_url("not-a-url").unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "`not-a-url` is not an http(s) URL: it has no scheme (start it with http:// or https://)"
    /// );
    /// ```
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn check_base_url(base_url: &str) -> Result<(), BaseUrlError> {
        check_base_url(base_url, "/chat/completions")
    }

    /// Sends the key held by the environment variable `name`; none when it is unset or empty.
    pub fn api_key_from_env(self, name: &str) -> Self {
        let key = std::env::var(name).ok();
        self.api_key(key)
    }

    /// Sends `key` (none when `None` or empty) as a bearer token.
    pub fn api_key(mut self, key: Option<String>) -> Self {
        self.api_key = key.filter(|key| !key.is_empty());
        self
    }

    transport_settings!();

    /// Declares tools with `"strict": true`, their parameters in the strict OpenAI dialect
    /// (every field required, an optional one nullable, no additional properties), so that the
    /// model's arguments always match the schema.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The sampling temperature sent (the server's default when not set).
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body of the request for `request`.
    ///
    /// # Errors
    /// [`LmError::Declaration`] when a tool cannot be declared in the client's dialect.
    pub fn request_body(&self, request: &Request<'_>) -> Result<Value, LmError> {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(message).collect::<Vec<_>>(),
        });
        if !request.tools.is_empty() {
            let dialect = self.dialect();
            let mut tools = Vec::with_capacity(request.tools.len());
            for tool in request.tools {
                let parameters = tool.parameters_in(dialect)?;
                let mut function = json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": parameters.into_owned(),
                });
                if self.strict {
                    function["strict"] = Value::Bool(true);
                }
                tools.push(json!({"type": "function", "function": function}));
            }
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = tool_choice(request.tool_choice);
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        Ok(body)
    }
}

impl LanguageModel for OpenAiCompatible {
    fn dialect(&self) -> Dialect {
        Dialect::OpenAi {
            strict: self.strict,
        }
    }

    /// Asks the server, retrying 429 and 5xx answers; a request's deadline bounds every
    /// attempt's time, and a retry that could only begin after it is not made.
    fn complete<'a>(&'a self, request: Request<'a>) -> LmFuture<'a> {
        Box::pin(async move {
            let body = self.request_body(&request)?.to_string();
            let headers = self
                .api_key
                .iter()
                .map(|key| ("Authorization", format!("Bearer {key}")))
                .collect();
            let post = Post {
                url: self.url(),
                headers,
                body,
                secret: self.api_key.clone(),
                deadline: request.deadline,
            };
            self.transport
                .exchange(post, ErrorShape::STANDARD, parse_completion)
                .await
        })
    }
}

/// A message in the chat completions shape.
fn message(message: &Message) -> Value {
    let mut out = json!({"role": message.role.as_str()});
    // Empty text rather than `null` for a message of tool calls only: chat templates of
    // local servers concatenate the content and fail on `null`.
    out["content"] = Value::String(message.content.clone().unwrap_or_default());
    if !message.tool_calls.is_empty() {
        out["tool_calls"] = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                })
            })
            .collect();
    }
    if let Some(id) = &message.tool_call_id {
        out["tool_call_id"] = Value::String(id.clone());
    }
    out
}

/// A tool choice in the chat completions shape.
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// The assistant message of a chat completion (`choices[0].message`), and its `usage`.
fn parse_completion(text: &str) -> Result<Reply, LmError> {
    let malformed = |reason: String| LmError::Malformed { reason };
    let body = json_body(text)?;
    let message = body
        .get("choices")
        .and_then(|choices| choices.get(0))
        .and_then(|choice| choice.get("message"))
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("it has no `choices[0].message` object".to_owned()))?;
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Array(parts)) => Some(text_parts(parts)),
        Some(other) => {
            return Err(malformed(format!(
                "its `content` is {}, not text",
                kind(other)
            )));
        }
    };
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, call)| parse_tool_call(i, call))
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(malformed(format!(
                "its `tool_calls` is {}, not an array",
                kind(other)
            )));
        }
    };
    let reply = Reply::new(Message {
        role: Role::Assistant,
        content,
        tool_calls,
        tool_call_id: None,
    });
    Ok(match usage(&body) {
        Some(usage) => reply.with_usage(usage),
        None => reply,
    })
}

/// `usage.prompt_tokens` and `usage.completion_tokens`, where the server reports them.
fn usage(body: &Value) -> Option<Usage> {
    let usage = body.get("usage")?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64);
    Some(Usage::new(
        count("prompt_tokens")?,
        count("completion_tokens").unwrap_or(0),
    ))
}

/// The text of content given as parts (`[{"type": "text", "text": ...}]`).
fn text_parts(parts: &[Value]) -> String {
    parts
        .iter()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect()
}

fn parse_tool_call(index: usize, call: &Value) -> Result<ToolCall, LmError> {
    let empty = Map::new();
    let function = call
        .get("function")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| LmError::Malformed {
            reason: format!("tool call {index} has no `function.name`"),
        })?;
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("call_{index}"), str::to_owned);
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(arguments) => arguments.clone(),
    };
    Ok(ToolCall::new(id, name, arguments))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use toolsmith::Describe;

    use crate::declaration::ToolDeclaration;

    #[derive(toolsmith::ToolType)]
    #[allow(dead_code)]
    struct Answered {
        answer: Option<String>,
    }

    #[test]
    fn a_completion_gives_text_and_tool_calls_with_ids() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": null,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}},
            {"type": "function", "function": {"name": "add", "arguments": {"a": 2}}}
        ]}}]});
        let message = parse_completion(&body.to_string())
            .expect("a completion")
            .message;
        assert_eq!(message.content, None);
        assert_eq!(
            message.tool_calls,
            vec![
                ToolCall::new("a", "add", json!("{\"a\":1}")),
                ToolCall::new("call_1", "add", json!({"a": 2})),
            ]
        );
    }

    #[test]
    fn a_reply_without_choices_is_malformed() {
        let error = parse_completion(r#"{"id": "x"}"#).unwrap_err();
        assert!(error.to_string().contains("choices[0].message"), "{error}");
        let error = parse_completion("<html>").unwrap_err();
        assert!(error.to_string().contains("not JSON"), "{error}");
    }

    #[test]
    fn the_usage_is_read_where_the_server_reports_it() {
        let body = json!({"choices": [{"message": {"content": "hi"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}});
        let reply = parse_completion(&body.to_string()).expect("a completion");
        assert_eq!(reply.usage, Some(Usage::new(12, 3)));
        let body = json!({"choices": [{"message": {"content": "hi"}}]});
        assert_eq!(
            parse_completion(&body.to_string())
                .expect("a completion")
                .usage,
            None
        );
    }

    #[test]
    fn the_request_body_declares_tools_only_when_there_are_some() {
        let client = OpenAiCompatible::new("http://127.0.0.1:1/v1/", "m")
            .unwrap()
            .temperature(0.0);
        assert_eq!(client.url(), "http://127.0.0.1:1/v1/chat/completions");
        let messages = [Message::user("hi")];
        let choice = ToolChoice::Auto;
        let plain = client
            .request_body(&Request {
                messages: &messages,
                tools: &[],
                tool_choice: &choice,
                deadline: None,
            })
            .unwrap();
        assert_eq!(
            plain,
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0})
        );
        let tools = [ToolDeclaration::new(
            "finish",
            "Answer.",
            Answered::type_graph(),
        )];
        let request = Request {
            messages: &messages,
            tools: &tools,
            tool_choice: &ToolChoice::Tool("finish".into()),
            deadline: None,
        };
        let with_tools = client.request_body(&request).unwrap();
        assert_eq!(
            with_tools["tool_choice"],
            json!({"type": "function", "function": {"name": "finish"}})
        );
        assert_eq!(with_tools["tools"][0]["function"]["name"], "finish");
        assert_eq!(with_tools["tools"][0]["function"].get("strict"), None);
        let strict = client.strict(true).request_body(&request).unwrap();
        assert_eq!(strict["tools"][0]["function"]["strict"], true);
        assert_eq!(
            strict["tools"][0]["function"]["parameters"]["additionalProperties"],
            false
        );
    }

    #[test]
    fn a_message_of_calls_has_empty_content_and_text_arguments() {
        let calls = Message::tool_calls(vec![ToolCall::new("c1", "add", json!({"a": 1}))]);
        assert_eq!(
            message(&calls),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}}
            ]})
        );
        assert_eq!(
            message(&Message::tool_result("c1", "3")),
            json!({"role": "tool", "content": "3", "tool_call_id": "c1"})
        );
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let client = OpenAiCompatible::new("http://x", "m")
            .unwrap()
            .api_key(Some("sk-secret".into()));
        assert!(!format!("{client:?}").contains("sk-secret"));
    }
}
