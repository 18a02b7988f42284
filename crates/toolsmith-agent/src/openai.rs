//! [`OpenAiCompatible`]: a client for `POST {base}/chat/completions`, the API that OpenAI,
//! llama.cpp's server, vLLM, Ollama and most gateways speak.

use std::fmt;

use serde_json::{Map, Value, json};
use toolsmith::Dialect;
use toolsmith::types::value_kind;

use crate::http::{
    ApiKey, BaseUrlError, ErrorShape, EventReader, Post, Read, Transport, api_key_settings,
    check_base_url, cut_short, json_body, standard_message, transport_settings,
};
use crate::lm::{Delta, DeltaSink, LanguageModel, LmError, LmFuture, Reply, Usage, cut_off};
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
    api_key: Option<ApiKey>,
    strict: bool,
    temperature: Option<f64>,
    token_limit: TokenLimitField,
    transport: Transport,
}

/// The member of a request that carries its token limit ([`Request::max_tokens`]): the API's
/// two names for it, which servers do not all read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenLimitField {
    /// `max_tokens`: what llama.cpp's server, llama-cpp-python, vLLM, Ollama and most
    /// gateways read. OpenAI has deprecated it, and its reasoning models (o-series, GPT-5)
    /// refuse a request that has it.
    MaxTokens,
    /// `max_completion_tokens`: OpenAI's current name, which each of its chat models takes.
    /// A server that predates it may ignore it (llama-cpp-python does), and then the reply is
    /// not limited.
    MaxCompletionTokens,
}

impl TokenLimitField {
    /// The member's name in a request.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenLimitField::MaxTokens => "max_tokens",
            TokenLimitField::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// The field a server at `base_url` reads: `max_completion_tokens` for OpenAI's own API
    /// (host `api.openai.com`, or a regional one such as `eu.api.openai.com`), `max_tokens`
    /// for any other.
    fn for_base_url(base_url: &str) -> Self {
        let host = reqwest::Url::parse(base_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        let host = host.as_deref().map(|host| host.trim_end_matches('.'));
        match host {
            Some(host) if host == "api.openai.com" || host.ends_with(".api.openai.com") => {
                TokenLimitField::MaxCompletionTokens
            }
            _ => TokenLimitField::MaxTokens,
        }
    }
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("strict", &self.strict)
            .field("token_limit", &self.token_limit)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl OpenAiCompatible {
    /// OpenAI's own API: `https://api.openai.com/v1`.
    pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

    /// A client of `model` at `base_url` (the part before `/chat/completions`, such as
    /// `https://api.openai.com/v1`), without a key; 60 s per request, 3 retries from 500 ms.
    /// A request's token limit goes in the member the server reads: `max_completion_tokens`
    /// at OpenAI's own API (`api.openai.com` and its regional hosts), `max_tokens` elsewhere
    /// ([`token_limit_field`](Self::token_limit_field) says which for a proxy in front of
    /// OpenAI).
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
            token_limit: TokenLimitField::for_base_url(&base_url),
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

    api_key_settings!("as a bearer token");

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

    /// The member a request's token limit goes in, where the default for the base URL is not
    /// the one the server reads: a proxy or gateway in front of OpenAI's reasoning models
    /// wants [`MaxCompletionTokens`](TokenLimitField::MaxCompletionTokens).
    ///
    /// ```
    /// use toolsmith_agent::{OpenAiCompatible, TokenLimitField};
    ///
    /// let openai = OpenAiCompatible::new("https://api.openai.com/v1", "o4-mini")?;
    /// assert_eq!(openai.token_limit(), TokenLimitField::MaxCompletionTokens);
    /// let local = OpenAiCompatible::new("http://127.0.0.1:8080/v1", "smollm2")?;
    /// assert_eq!(local.token_limit(), TokenLimitField::MaxTokens);
    /// let proxied = OpenAiCompatible::new("https://llm-proxy.internal/v1", "o4-mini")?
    ///     .token_limit_field(TokenLimitField::MaxCompletionTokens);
    /// assert_eq!(proxied.token_limit().as_str(), "max_completion_tokens");
    /// # Ok::<(), toolsmith_agent::BaseUrlError>(())
    /// ```
    pub fn token_limit_field(mut self, field: TokenLimitField) -> Self {
        self.token_limit = field;
        self
    }

    /// The member a request's token limit goes in.
    pub fn token_limit(&self) -> TokenLimitField {
        self.token_limit
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
        if let Some(temperature) = request.temperature.or(self.temperature) {
            body["temperature"] = json!(temperature);
        }
        if let Some(max_tokens) = request.max_tokens {
            body[self.token_limit.as_str()] = json!(max_tokens);
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
            let post = self.post(self.request_body(&request)?, &request);
            self.transport
                .exchange(post, ErrorShape::STANDARD, |text| {
                    parse_completion(text, self.token_limit)
                })
                .await
        })
    }

    /// Asks the server for a stream (`"stream": true`, with `stream_options.include_usage`)
    /// and reads its `chat.completion.chunk`s as they come: `choices[0].delta.content` is the
    /// text's next piece, `delta.tool_calls` start calls (their `index`, `id` and
    /// `function.name`) and carry their arguments' next pieces, the last chunk the usage,
    /// and `data: [DONE]` ends it. An `error` object in the stream is an
    /// [`LmError::Status`] of its `code` (500 when it has no HTTP status), with its message.
    /// Retries and the deadline are as [`complete`](LanguageModel::complete)'s, the deadline
    /// and the time per request bounding the whole stream.
    fn complete_streaming<'a>(&'a self, request: Request<'a>, sink: DeltaSink<'a>) -> LmFuture<'a> {
        Box::pin(async move {
            let mut body = self.request_body(&request)?;
            body["stream"] = Value::Bool(true);
            body["stream_options"] = json!({"include_usage": true});
            let post = self.post(body, &request);
            self.transport
                .exchange_streaming(
                    post,
                    ErrorShape::STANDARD,
                    ChunkReader::new(sink, self.token_limit),
                )
                .await
        })
    }
}

impl OpenAiCompatible {
    /// The request of `body`, with the key as a bearer token.
    fn post(&self, body: Value, request: &Request<'_>) -> Post {
        let headers = self
            .api_key
            .iter()
            .map(|key| ("Authorization", format!("Bearer {}", key.expose())))
            .collect();
        Post {
            url: self.url(),
            headers,
            body: body.to_string(),
            secret: self.api_key.as_ref().map(|key| key.expose().to_owned()),
            deadline: request.deadline,
        }
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
fn parse_completion(text: &str, limit: TokenLimitField) -> Result<Reply, LmError> {
    completion_reply(&json_body(text)?, limit)
}

/// The reply of a chat completion's JSON: `choices[0].message`, and the `usage`. A streamed
/// completion is read here too, once its chunks are put together in the same shape.
fn completion_reply(body: &Value, limit: TokenLimitField) -> Result<Reply, LmError> {
    let malformed = |reason: String| LmError::Malformed { reason };
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
                value_kind(other)
            )));
        }
    };
    let finish = body
        .get("choices")
        .and_then(|choices| choices.get(0))
        .and_then(|choice| choice.get("finish_reason"))
        .and_then(Value::as_str);
    if finish == Some("length") {
        // Cut off at the token limit: the last call's arguments, or the text, may be cut.
        let last_call = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .and_then(|calls| calls.last())
            .map(|call| {
                call.pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("a tool")
            });
        let field = limit.as_str();
        return Err(cut_off(
            &format!("the token limit (`{field}`, or the model's context)"),
            last_call,
            content.filter(|text| !text.is_empty()),
            &format!("raise `{field}`, or shorten the conversation"),
        ));
    }
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
                value_kind(other)
            )));
        }
    };
    let reply = Reply::new(Message {
        role: Role::Assistant,
        content,
        tool_calls,
        tool_call_id: None,
    });
    Ok(match usage(body) {
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
    let id = call_id(call, index);
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(arguments) => arguments.clone(),
    };
    Ok(ToolCall::new(id, name, arguments))
}

/// A call's `id`, or `call_{index}` for a call that came without one.
fn call_id(call: &Value, index: usize) -> String {
    call.get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("call_{index}"), str::to_owned)
}

/// A streamed chat completion, read chunk by chunk into the message a whole completion holds
/// (`choices[0].message`, and the `usage`), which [`completion_reply`] then reads.
struct ChunkReader<'a> {
    sink: DeltaSink<'a>,
    /// The text so far: `None` until a chunk has some (a message of calls only has none).
    content: Option<String>,
    /// The calls, in the order they started, each as a whole completion's call.
    calls: Vec<Value>,
    /// The `index` each call of `calls` has in the stream.
    keys: Vec<u64>,
    usage: Option<Value>,
    /// `choices[0].finish_reason`, once a chunk gives it.
    finish_reason: Option<Value>,
    /// The member the request's token limit went in, for a reply cut off there.
    limit: TokenLimitField,
}

impl<'a> ChunkReader<'a> {
    fn new(sink: DeltaSink<'a>, limit: TokenLimitField) -> Self {
        ChunkReader {
            sink,
            limit,
            content: None,
            calls: Vec::new(),
            keys: Vec::new(),
            usage: None,
            finish_reason: None,
        }
    }

    /// One of `delta.tool_calls`: a call's start (its `id`, `function.name`) or its arguments'
    /// next piece, for the call of its `index` (the `position`-th in the delta, where the
    /// server gives none).
    fn call_delta(&mut self, position: usize, delta: &Value) {
        let key = delta
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let index = match self.keys.iter().position(|seen| *seen == key) {
            Some(index) => index,
            None => {
                self.keys.push(key);
                self.calls
                    .push(json!({"type": "function", "function": {"name": null}}));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[index];
        if call.get("id").is_none()
            && let Some(id) = delta.get("id").filter(|id| id.is_string())
        {
            call["id"] = id.clone();
        }
        let function = delta.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        if let Some(name) = name.filter(|name| !name.is_empty())
            && call["function"]["name"].is_null()
        {
            call["function"]["name"] = Value::String(name.to_owned());
            (self.sink)(Delta::ToolCall {
                index,
                id: call_id(call, index),
                name: name.to_owned(),
            });
        }
        match function.and_then(|f| f.get("arguments")) {
            None | Some(Value::Null) => {}
            Some(Value::String(piece)) => match &mut call["function"]["arguments"] {
                Value::String(arguments) => arguments.push_str(piece),
                arguments => *arguments = Value::String(piece.clone()),
            },
            // Arguments sent whole, as an object: as a whole completion has them.
            Some(arguments) => call["function"]["arguments"] = arguments.clone(),
        }
    }
}

impl EventReader for ChunkReader<'_> {
    fn event(&mut self, _kind: &str, data: &str) -> Result<Read, LmError> {
        if data.trim() == "[DONE]" {
            return Ok(Read::Done);
        }
        let chunk = json_body(data)?;
        if chunk.get("error").is_some_and(|error| !error.is_null()) {
            let status = chunk["error"]
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|code| u16::try_from(code).ok())
                .filter(|code| (400..600).contains(code))
                .unwrap_or(500);
            return Err(LmError::Status {
                status,
                message: standard_message(data),
                attempts: 1,
            });
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| !usage.is_null()) {
            self.usage = Some(usage.clone());
        }
        let choice = chunk.get("choices").and_then(|choices| choices.get(0));
        if let Some(reason) = choice
            .and_then(|choice| choice.get("finish_reason"))
            .filter(|reason| reason.is_string())
        {
            self.finish_reason = Some(reason.clone());
        }
        let Some(delta) = choice.and_then(|choice| choice.get("delta")) else {
            return Ok(Read::More);
        };
        let piece = match delta.get("content") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Array(parts)) => Some(text_parts(parts)),
            _ => None,
        };
        if let Some(piece) = piece {
            self.content.get_or_insert_default().push_str(&piece);
            if !piece.is_empty() {
                (self.sink)(Delta::Text(piece));
            }
        }
        if let Some(Value::Array(calls)) = delta.get("tool_calls") {
            for (position, call) in calls.iter().enumerate() {
                self.call_delta(position, call);
            }
        }
        Ok(Read::More)
    }

    fn finish(self, ended: bool) -> Result<Reply, LmError> {
        if !ended {
            return Err(cut_short("`data: [DONE]`"));
        }
        let mut message = json!({"role": "assistant", "content": self.content});
        if !self.calls.is_empty() {
            message["tool_calls"] = Value::Array(self.calls);
        }
        let mut body = json!({"choices": [{"message": message}]});
        if let Some(reason) = self.finish_reason {
            body["choices"][0]["finish_reason"] = reason;
        }
        if let Some(usage) = self.usage {
            body["usage"] = usage;
        }
        completion_reply(&body, self.limit)
    }
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
        let message = parse_completion(&body.to_string(), TokenLimitField::MaxTokens)
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
        let error = parse_completion(r#"{"id": "x"}"#, TokenLimitField::MaxTokens).unwrap_err();
        assert!(error.to_string().contains("choices[0].message"), "{error}");
        let error = parse_completion("<html>", TokenLimitField::MaxTokens).unwrap_err();
        assert!(error.to_string().contains("not JSON"), "{error}");
    }

    #[test]
    fn the_usage_is_read_where_the_server_reports_it() {
        let body = json!({"choices": [{"message": {"content": "hi"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}});
        let reply =
            parse_completion(&body.to_string(), TokenLimitField::MaxTokens).expect("a completion");
        assert_eq!(reply.usage, Some(Usage::new(12, 3)));
        let body = json!({"choices": [{"message": {"content": "hi"}}]});
        assert_eq!(
            parse_completion(&body.to_string(), TokenLimitField::MaxTokens)
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
                max_tokens: None,
                temperature: None,
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
            max_tokens: None,
            temperature: None,
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
    fn the_token_limit_is_max_completion_tokens_only_at_openais_own_api() {
        let field = |base_url: &str| OpenAiCompatible::new(base_url, "m").unwrap().token_limit();
        for openai in [
            OpenAiCompatible::DEFAULT_BASE_URL,
            "https://API.OpenAI.com/v1/",
            "https://api.openai.com:443/v1",
            "https://eu.api.openai.com/v1",
            "https://api.openai.com./v1",
        ] {
            assert_eq!(
                field(openai),
                TokenLimitField::MaxCompletionTokens,
                "{openai}"
            );
        }
        for other in [
            "http://127.0.0.1:8080/v1",
            "https://api.openai.com.example/v1",
            "https://notapi.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "http://localhost:11434/v1",
        ] {
            assert_eq!(field(other), TokenLimitField::MaxTokens, "{other}");
        }
        let messages = [Message::user("hi")];
        let request = Request {
            messages: &messages,
            tools: &[],
            tool_choice: &ToolChoice::Auto,
            deadline: None,
            max_tokens: Some(30),
            temperature: None,
        };
        let body = OpenAiCompatible::new(OpenAiCompatible::DEFAULT_BASE_URL, "o3")
            .unwrap()
            .request_body(&request)
            .unwrap();
        assert_eq!(
            (body.get("max_tokens"), &body["max_completion_tokens"]),
            (None, &json!(30))
        );
        let body = OpenAiCompatible::new(OpenAiCompatible::DEFAULT_BASE_URL, "o3")
            .unwrap()
            .token_limit_field(TokenLimitField::MaxTokens)
            .request_body(&request)
            .unwrap();
        assert_eq!(
            (&body["max_tokens"], body.get("max_completion_tokens")),
            (&json!(30), None)
        );
    }

    #[test]
    fn a_requests_own_limits_override_the_clients() {
        let client = OpenAiCompatible::new("http://127.0.0.1:1/v1/", "m")
            .unwrap()
            .temperature(0.0);
        let messages = [Message::user("hi")];
        let body = client
            .request_body(&Request {
                messages: &messages,
                tools: &[],
                tool_choice: &ToolChoice::Auto,
                deadline: None,
                max_tokens: Some(30),
                temperature: Some(0.7),
            })
            .unwrap();
        assert_eq!(
            (&body["max_tokens"], &body["temperature"]),
            (&json!(30), &json!(0.7))
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

    /// Feeds `chunks` (each an event's data) to a stream reader: the reply, and the deltas.
    fn read_stream(chunks: &[Value]) -> (Result<Reply, LmError>, Vec<Delta>) {
        let deltas = std::sync::Mutex::new(Vec::new());
        let sink = |delta: Delta| deltas.lock().unwrap().push(delta);
        let mut reader = ChunkReader::new(&sink, TokenLimitField::MaxTokens);
        let mut ended = false;
        for chunk in chunks {
            let data = chunk
                .as_str()
                .map_or_else(|| chunk.to_string(), str::to_owned);
            match reader.event("message", &data) {
                Ok(Read::More) => {}
                Ok(Read::Done) => {
                    ended = true;
                    break;
                }
                Err(error) => return (Err(error), deltas.into_inner().unwrap()),
            }
        }
        let reply = reader.finish(ended);
        (reply, deltas.into_inner().unwrap())
    }

    fn delta(delta: Value) -> Value {
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
    }

    #[test]
    fn streamed_calls_without_an_index_or_an_id_and_whole_arguments_are_read() {
        let (reply, deltas) = read_stream(&[
            delta(json!({"role": "assistant", "content": null})),
            // A server that sends each call whole, without `index` or `id`.
            delta(json!({"tool_calls": [{"function": {"name": "add", "arguments": {"a": 1}}}]})),
            delta(json!({"tool_calls": [
                {"index": 1, "id": "c2", "function": {"name": "mul", "arguments": "{\"a\""}}]})),
            delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": ": 2}"}}]})),
            json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}),
            json!("[DONE]"),
        ]);
        let reply = reply.unwrap();
        assert_eq!(reply.message.content, None);
        assert_eq!(
            reply.message.tool_calls,
            [
                ToolCall::new("call_0", "add", json!({"a": 1})),
                ToolCall::new("c2", "mul", json!("{\"a\": 2}")),
            ]
        );
        assert_eq!(reply.usage, Some(Usage::new(5, 2)));
        assert_eq!(
            deltas,
            [
                Delta::ToolCall {
                    index: 0,
                    id: "call_0".into(),
                    name: "add".into()
                },
                Delta::ToolCall {
                    index: 1,
                    id: "c2".into(),
                    name: "mul".into()
                },
            ]
        );
    }

    #[test]
    fn a_stream_error_object_is_a_status_error_of_its_code() {
        let (error, _) = read_stream(&[json!({"error": {"message": "bad input", "code": 400}})]);
        assert_eq!(
            error.unwrap_err(),
            LmError::Status {
                status: 400,
                message: "bad input".into(),
                attempts: 1
            }
        );
        let (error, _) = read_stream(&[json!("{not json")]);
        assert!(error.unwrap_err().to_string().contains("not JSON"));
        let (error, _) = read_stream(&[delta(json!({"content": "hi"}))]);
        assert!(error.unwrap_err().to_string().contains("cut short"));
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let client = OpenAiCompatible::new("http://x", "m")
            .unwrap()
            .api_key(Some("sk-secret".into()));
        assert!(!format!("{client:?}").contains("sk-secret"));
    }
}
