//! [`Anthropic`]: a client for `POST {base}/v1/messages`, Anthropic's Messages API, spoken
//! natively: the system prompt apart, user and assistant turns alternating, tool calls and their
//! answers as `tool_use` and `tool_result` content blocks.

use std::fmt;

use serde_json::{Map, Value, json};
use toolsmith::types::{parse_arguments, value_kind};
use toolsmith::{Dialect, Policy};

use crate::http::{
    ApiKey, BaseUrlError, ErrorShape, EventReader, Post, Read, Transport, abridge,
    api_key_settings, check_base_url, cut_short, json_body, standard_message, transport_settings,
};
use crate::lm::{Delta, DeltaSink, LanguageModel, LmError, LmFuture, Reply, Usage};
use crate::message::{Message, Request, Role, ToolCall, ToolChoice};

/// The version of the Messages API spoken (the `anthropic-version` header).
const API_VERSION: &str = "2023-06-01";

/// The most tokens a reply may take unless set (the API requires a bound).
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A Claude model behind Anthropic's Messages API (`POST {base}/v1/messages`).
///
/// Tools are declared with an `input_schema` in the Anthropic dialect (the strict one, with
/// `"strict": true`, after [`strict`](Self::strict)). The conversation is written as the API
/// takes it: system messages in the top-level `system` text, then user and assistant turns
/// alternating, consecutive messages of one role merged into one turn of content blocks (the
/// answers to one reply's tool calls become one user turn of `tool_result` blocks). Requests
/// carry the API key as `x-api-key`, and no such header when there is no key. A 429 or 5xx
/// answer (529 when the API is overloaded) is retried with exponential backoff, waiting what the
/// server's `retry-after` asks for where it says (up to [`max_retry_wait`](Self::max_retry_wait));
/// any other 4xx fails at once with the server's message. No error ever contains the key.
///
/// Every request asks for at most [`max_tokens`](Self::max_tokens) tokens of reply. A reply the
/// server cut off there is an error ([`LmError::Malformed`], saying so), never a message: its
/// last tool call may have lost arguments, or its text its end, and neither may pass for an
/// answer.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolsmith_agent::{Anthropic, LanguageModel};
///
/// let lm: Arc<dyn LanguageModel> = Arc::new(
///     Anthropic::new(Anthropic::DEFAULT_BASE_URL, "claude-sonnet-4-5")?
///         .api_key_from_env("ANTHROPIC_API_KEY")
///         .max_tokens(8192),
/// );
/// # Ok::<(), toolsmith_agent::BaseUrlError>(())
/// ```
#[derive(Clone)]
pub struct Anthropic {
    base_url: String,
    model: String,
    api_key: Option<ApiKey>,
    strict: bool,
    max_tokens: u32,
    temperature: Option<f64>,
    transport: Transport,
}

impl fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anthropic")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("strict", &self.strict)
            .field("max_tokens", &self.max_tokens)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// Anthropic's own API: `https://api.anthropic.com`.
    pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

    /// A client of `model` at `base_url` (the part before `/v1/messages`, such as
    /// `https://api.anthropic.com`), without a key; replies of at most 4096 tokens, 60 s per
    /// request, 3 retries from 500 ms.
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
        Ok(Anthropic {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key: None,
            strict: false,
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
            transport: Transport::default(),
        })
    }

    /// Whether `base_url` can be a client's base URL: an `http` or `https` URL with a host, and
    /// without a query or fragment (`/v1/messages` is added after it).
    ///
    /// ```
    /// use toolsmith_agent::Anthropic;
    ///
    /// assert!(Anthropic::check_base_url("http://127.0.0.1:8080").is_ok());
    /// let error = Anthropic::check_base_url("https://api.anthropic.com?beta=1").unwrap_err();
    /// assert_eq!(error.problem, "it has a query or fragment, and `/v1/messages` goes after it");
    /// ```
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn check_base_url(base_url: &str) -> Result<(), BaseUrlError> {
        check_base_url(base_url, "/v1/messages")
    }

    api_key_settings!("in the `x-api-key` header");

    transport_settings!();

    /// Declares tools with `"strict": true`, their parameters in the strict Anthropic dialect
    /// (no additional properties, a recursive type refused), so that the model's arguments
    /// always match the schema.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The most tokens a reply may take (4096 unless set; at least 1), which the API requires
    /// with every request. A reply cut off there is an error saying so: raise it for a model
    /// that writes long answers or large tool arguments.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The sampling temperature sent, from 0 to 1 (the server's default when not set).
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body of the request for `request`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith_agent::{Anthropic, Message, Request, ToolChoice};
    ///
    /// let client = Anthropic::new("http://127.0.0.1:8080", "claude-test")?.max_tokens(512);
    /// let messages = [Message::system("Be brief."), Message::user("Hi!")];
    /// let body = client.request_body(&Request {
    ///     messages: &messages,
    ///     tools: &[],
    ///     tool_choice: &ToolChoice::Auto,
    ///     deadline: None,
    ///     max_tokens: None,
    ///     temperature: None,
    /// })?;
    /// assert_eq!(
    ///     body,
    ///     json!({
    ///         "model": "claude-test",
    ///         "max_tokens": 512,
    ///         "system": "Be brief.",
    ///         "messages": [{"role": "user", "content": "Hi!"}],
    ///     })
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`LmError::Declaration`] when a tool cannot be declared in the client's dialect.
    pub fn request_body(&self, request: &Request<'_>) -> Result<Value, LmError> {
        let (system, messages) = conversation(request.messages);
        let mut body = json!({
            "model": self.model,
            "max_tokens": request.max_tokens.unwrap_or(self.max_tokens),
            "messages": messages,
        });
        if let Some(system) = system {
            body["system"] = Value::String(system);
        }
        if !request.tools.is_empty() {
            let dialect = self.dialect();
            let mut tools = Vec::with_capacity(request.tools.len());
            for tool in request.tools {
                let schema = tool.parameters_in(dialect)?;
                let mut declared = json!({
                    "name": tool.name(),
                    "input_schema": schema.into_owned(),
                });
                if !tool.description().is_empty() {
                    declared["description"] = Value::String(tool.description().to_owned());
                }
                if self.strict {
                    declared["strict"] = Value::Bool(true);
                }
                tools.push(declared);
            }
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = tool_choice(request.tool_choice);
        }
        if let Some(temperature) = request.temperature.or(self.temperature) {
            body["temperature"] = json!(temperature);
        }
        Ok(body)
    }
}

/// Anthropic's error body: its `error.type` and `error.message` (`overloaded_error:
/// Overloaded`), else the standard shape's message or the body's start.
const ERRORS: ErrorShape = ErrorShape {
    message: |body| {
        serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|body| error_message(&body))
            .unwrap_or_else(|| standard_message(body))
    },
    retry_delay: |_| None,
};

impl LanguageModel for Anthropic {
    fn dialect(&self) -> Dialect {
        Dialect::Anthropic {
            strict: self.strict,
        }
    }

    /// Asks the server, retrying 429 and 5xx answers; a request's deadline bounds every
    /// attempt's time, and a retry that could only begin after it is not made.
    fn complete<'a>(&'a self, request: Request<'a>) -> LmFuture<'a> {
        Box::pin(async move {
            let post = self.post(self.request_body(&request)?, &request);
            let max_tokens = request.max_tokens.unwrap_or(self.max_tokens);
            self.transport
                .exchange(post, ERRORS, |text| parse_message(text, max_tokens))
                .await
        })
    }

    /// Asks the server for a stream (`"stream": true`) and reads its events as they come:
    /// `message_start` (the message, its input tokens), `content_block_start` (a text or
    /// `tool_use` block, with the call's id and name), `content_block_delta` (the text's next
    /// piece, or the next piece of a call's input as `partial_json`), `content_block_stop`,
    /// `message_delta` (the stop reason, the output tokens) and `message_stop`, which ends
    /// it; `ping`s and events of types this client does not know are skipped. A call's input
    /// is its pieces joined, read as JSON (`{}` when there are none). An `error` event is an
    /// [`LmError::Status`] of the status its type stands for (529 for `overloaded_error`),
    /// with Anthropic's message. A reply cut off at `max_tokens` is an error, as
    /// [`complete`](LanguageModel::complete)'s is; retries and the deadline are as its too,
    /// the deadline and the time per request bounding the whole stream.
    fn complete_streaming<'a>(&'a self, request: Request<'a>, sink: DeltaSink<'a>) -> LmFuture<'a> {
        Box::pin(async move {
            let mut body = self.request_body(&request)?;
            body["stream"] = Value::Bool(true);
            let post = self.post(body, &request);
            let reader = EventsReader::new(sink, request.max_tokens.unwrap_or(self.max_tokens));
            self.transport
                .exchange_streaming(post, ERRORS, reader)
                .await
        })
    }
}

impl Anthropic {
    /// The request of `body`, with the API's version and the key.
    fn post(&self, body: Value, request: &Request<'_>) -> Post {
        let mut headers = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(key) = &self.api_key {
            headers.push(("x-api-key", key.expose().to_owned()));
        }
        Post {
            url: self.url(),
            headers,
            body: body.to_string(),
            secret: self.api_key.as_ref().map(|key| key.expose().to_owned()),
            deadline: request.deadline,
        }
    }
}

/// One turn of the conversation on the wire: `user` or `assistant`, and its content blocks.
struct Turn {
    role: &'static str,
    blocks: Vec<Value>,
}

impl Turn {
    /// The turn as a message: a turn of one text block as plain text, any other as its blocks,
    /// `tool_result` blocks first (the API takes a user turn's text only after its results).
    fn into_message(mut self) -> Value {
        if let [block] = self.blocks.as_slice()
            && is_block(block, "text")
            && let Some(text) = block.get("text")
        {
            return json!({"role": self.role, "content": text});
        }
        // A stable sort: the results keep their order, and so does the text.
        self.blocks
            .sort_by_key(|block| !is_block(block, "tool_result"));
        json!({"role": self.role, "content": self.blocks})
    }
}

/// The system prompt (every system message's text, joined by blank lines) and the turns of the
/// conversation in the Messages API's shape.
///
/// The API takes user and assistant turns alternating, so consecutive messages of one role are
/// merged into one turn: the answers to one reply's calls (tool messages) become one user turn
/// of `tool_result` blocks, and a user's text after them joins that turn. A message with nothing
/// to say (blank text, no calls) adds no block: the API refuses text blocks of whitespace only.
fn conversation(messages: &[Message]) -> (Option<String>, Vec<Value>) {
    let mut system: Vec<&str> = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    for message in messages {
        let text = message
            .content
            .as_deref()
            .filter(|text| !text.trim().is_empty());
        let (role, blocks) = match message.role {
            Role::System => {
                system.extend(text);
                continue;
            }
            Role::User => ("user", text.map(text_block).into_iter().collect()),
            Role::Assistant => ("assistant", assistant_blocks(text, &message.tool_calls)),
            Role::Tool => ("user", vec![tool_result(message)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(turn) if turn.role == role => turn.blocks.extend(blocks),
            _ => turns.push(Turn { role, blocks }),
        }
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, turns.into_iter().map(Turn::into_message).collect())
}

/// Whether `block` is a content block of type `kind`.
fn is_block(block: &Value, kind: &str) -> bool {
    block.get("type").and_then(Value::as_str) == Some(kind)
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// An assistant message's blocks: its text, if any, then a `tool_use` block per call.
fn assistant_blocks(text: Option<&str>, calls: &[ToolCall]) -> Vec<Value> {
    let mut blocks = Vec::with_capacity(calls.len() + 1);
    blocks.extend(text.map(text_block));
    blocks.extend(calls.iter().map(|call| {
        json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": tool_input(&call.arguments),
        })
    }));
    blocks
}

/// A call's arguments as a `tool_use` block's `input`, which the API takes only as an object.
fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        // Argument text (a call made by another API's model, or a script) is read as coercion
        // reads it, repairs and all.
        Value::String(text) => match parse_arguments(text, &Policy::default()) {
            Ok(parsed) => Value::Object(parsed.value),
            // Text that is no object has no place in `input`: the call goes back with empty
            // arguments rather than failing the whole request. Its `tool_result`, the error
            // the call's arguments got, still tells the model what was wrong with them.
            Err(_) => Value::Object(Map::new()),
        },
        // Likewise for arguments that are neither an object nor text.
        _ => Value::Object(Map::new()),
    }
}

/// A tool message as a `tool_result` block, its text as the `content` (left out when blank,
/// as the API allows).
fn tool_result(message: &Message) -> Value {
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
    });
    if let Some(text) = message
        .content
        .as_deref()
        .filter(|text| !text.trim().is_empty())
    {
        block["content"] = Value::String(text.to_owned());
    }
    block
}

/// A tool choice in the Messages API's shape.
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    }
}

/// The server's words in an Anthropic error body, `{"type": "error", "error": {"type",
/// "message"}}`: the message after the error's type, abridged.
fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error")?;
    let message = error.get("message").and_then(Value::as_str)?;
    Some(match error.get("type").and_then(Value::as_str) {
        Some(kind) => abridge(&format!("{kind}: {message}")),
        None => abridge(message),
    })
}

/// The assistant message of a Messages API reply (its `content` blocks), and its `usage`.
///
/// Text blocks are joined into the message's text, `tool_use` blocks become its calls (with
/// `input` as the arguments object), and blocks of other types (thinking, server tools) are
/// not this client's and are skipped. A reply cut off by `max_tokens` (or by the model's context
/// window) is an error, whatever it holds: its last block may be incomplete.
fn parse_message(text: &str, max_tokens: u32) -> Result<Reply, LmError> {
    message_reply(&json_body(text)?, max_tokens)
}

/// The reply of a Messages API reply's JSON (see [`parse_message`]). A streamed message is
/// read here too, once its events are put together in the same shape.
fn message_reply(body: &Value, max_tokens: u32) -> Result<Reply, LmError> {
    let malformed = |reason: String| LmError::Malformed { reason };
    if body.get("type").and_then(Value::as_str) == Some("error") {
        let message = error_message(body).unwrap_or_else(|| "(no message)".to_owned());
        return Err(malformed(format!(
            "it is an error, not a message: {message}"
        )));
    }
    let blocks = match body.get("content") {
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(malformed(format!(
                "its `content` is {}, not an array of blocks",
                value_kind(other)
            )));
        }
        None => return Err(malformed("it has no `content` array".to_owned())),
    };
    check_stop(body, blocks, max_tokens)?;
    let mut content: Option<String> = None;
    let mut tool_calls = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let Some(object) = block.as_object() else {
            return Err(malformed(format!(
                "content block {index} is {}, not an object",
                value_kind(block)
            )));
        };
        match object.get("type").and_then(Value::as_str) {
            Some("text") => match object.get("text") {
                Some(Value::String(text)) => content.get_or_insert_default().push_str(text),
                _ => {
                    return Err(malformed(format!(
                        "content block {index} is text without a `text` string"
                    )));
                }
            },
            Some("tool_use") => tool_calls.push(parse_tool_use(index, object)?),
            // Thinking, a server tool's use and result, ...: not this client's to read.
            Some(_) => {}
            None => {
                return Err(malformed(format!("content block {index} has no `type`")));
            }
        }
    }
    let reply = Reply::new(Message {
        role: Role::Assistant,
        content: content.filter(|text| !text.is_empty()),
        tool_calls,
        tool_call_id: None,
    });
    Ok(match usage(body) {
        Some(usage) => reply.with_usage(usage),
        None => reply,
    })
}

/// A reply whose `stop_reason` says it was cut off (by `max_tokens`, or by the model's
/// context window) is an error, whatever its `blocks` hold: the last may be incomplete.
fn check_stop(body: &Value, blocks: &[Value], max_tokens: u32) -> Result<(), LmError> {
    match body.get("stop_reason").and_then(Value::as_str) {
        Some("max_tokens") => Err(cut_off(
            &format!("`max_tokens` ({max_tokens} tokens)"),
            blocks,
            "raise `max_tokens`",
        )),
        Some("model_context_window_exceeded") => Err(cut_off(
            "the model's context window",
            blocks,
            "shorten the conversation",
        )),
        _ => Ok(()),
    }
}

/// The error of a reply cut off at `limit`, by what it was writing then (its last block), with
/// the text of its text blocks.
fn cut_off(limit: &str, blocks: &[Value], remedy: &str) -> LmError {
    let text: String = blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let text = (!text.is_empty()).then_some(text);
    let last = blocks.last();
    let last_call = last
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|block| {
            block
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("a tool")
        });
    match last
        .and_then(|block| block.get("type"))
        .and_then(Value::as_str)
    {
        // A block of another kind last (thinking, ...): said as such.
        Some(kind) if kind != "text" && kind != "tool_use" => LmError::CutOff {
            reason: format!("it was cut off at {limit} in its last content block; {remedy}"),
            text,
        },
        _ => crate::lm::cut_off(limit, last_call, text, remedy),
    }
}

/// One `tool_use` block as a call: its `id`, its `name`, and its `input` object as the
/// arguments.
fn parse_tool_use(index: usize, block: &Map<String, Value>) -> Result<ToolCall, LmError> {
    let malformed = |problem: String| LmError::Malformed {
        reason: format!("content block {index} (`tool_use`) {problem}"),
    };
    let text = |key: &str| {
        block
            .get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    };
    let name = text("name").ok_or_else(|| malformed("has no `name`".to_owned()))?;
    // The id is what the call's `tool_result` must quote: without it there is no answering.
    let id = text("id").ok_or_else(|| malformed(format!("of `{name}` has no `id`")))?;
    let input = match block.get("input") {
        Some(input @ Value::Object(_)) => input.clone(),
        Some(other) => {
            return Err(malformed(format!(
                "of `{name}` has {} as its `input`, not an object",
                value_kind(other)
            )));
        }
        None => return Err(malformed(format!("of `{name}` has no `input`"))),
    };
    Ok(ToolCall::new(id, name, input))
}

/// The HTTP status an error of this type is answered with (Anthropic's table of errors), for
/// an error that comes in a stream, after a 200.
fn error_status(kind: &str) -> u16 {
    match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => 500,
    }
}

/// A streamed message, read event by event into the message a whole reply is (its content
/// blocks, `stop_reason` and `usage`), which [`message_reply`] then reads.
struct EventsReader<'a> {
    sink: DeltaSink<'a>,
    max_tokens: u32,
    /// The message of `message_start`, its `stop_reason` and `usage` updated by
    /// `message_delta`.
    message: Value,
    /// The content blocks, by their `index`.
    blocks: Vec<Value>,
    /// The pieces of each `tool_use` block's input so far, by the block's `index`.
    inputs: Vec<Option<String>>,
    /// How many calls have started.
    calls: usize,
}

impl<'a> EventsReader<'a> {
    fn new(sink: DeltaSink<'a>, max_tokens: u32) -> Self {
        EventsReader {
            sink,
            max_tokens,
            message: json!({"type": "message", "role": "assistant", "content": []}),
            blocks: Vec::new(),
            inputs: Vec::new(),
            calls: 0,
        }
    }

    /// The `index` of a block event, which must name a block that started (or, for
    /// `content_block_start`, the next one).
    fn index(event: &Value, kind: &str) -> Result<usize, LmError> {
        event
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|index| usize::try_from(index).ok())
            .ok_or_else(|| LmError::Malformed {
                reason: format!("its `{kind}` event has no `index`"),
            })
    }

    fn block_start(&mut self, event: &Value) -> Result<(), LmError> {
        let index = Self::index(event, "content_block_start")?;
        let Some(block) = event.get("content_block").filter(|b| b.is_object()) else {
            return Err(LmError::Malformed {
                reason: format!("its `content_block_start` {index} has no `content_block`"),
            });
        };
        if index != self.blocks.len() {
            return Err(LmError::Malformed {
                reason: format!(
                    "its content block {index} started after {} blocks",
                    self.blocks.len()
                ),
            });
        }
        let mut input = None;
        if is_block(block, "tool_use") {
            let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
            (self.sink)(Delta::ToolCall {
                index: self.calls,
                id: text("id").to_owned(),
                name: text("name").to_owned(),
            });
            self.calls += 1;
            input = Some(String::new());
        }
        if let Some(text) = block.get("text").and_then(Value::as_str)
            && is_block(block, "text")
            && !text.is_empty()
        {
            (self.sink)(Delta::Text(text.to_owned()));
        }
        self.blocks.push(block.clone());
        self.inputs.push(input);
        Ok(())
    }

    fn block_delta(&mut self, event: &Value) -> Result<(), LmError> {
        let index = Self::index(event, "content_block_delta")?;
        let (Some(block), Some(input)) = (self.blocks.get_mut(index), self.inputs.get_mut(index))
        else {
            return Err(LmError::Malformed {
                reason: format!("its content block {index} has a delta but never started"),
            });
        };
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => {
                let text = piece("text");
                if let Some(Value::String(whole)) = block.get_mut("text") {
                    whole.push_str(text);
                } else {
                    block["text"] = Value::String(text.to_owned());
                }
                if !text.is_empty() && is_block(block, "text") {
                    (self.sink)(Delta::Text(text.to_owned()));
                }
            }
            Some("input_json_delta") => match input {
                Some(input) => input.push_str(piece("partial_json")),
                None => {
                    return Err(LmError::Malformed {
                        reason: format!(
                            "its content block {index} has input but is no `tool_use` block"
                        ),
                    });
                }
            },
            // Thinking, its signature, citations, ...: not read from a reply, as they are not
            // from a whole one.
            _ => {}
        }
        Ok(())
    }
}

impl EventReader for EventsReader<'_> {
    fn event(&mut self, kind: &str, data: &str) -> Result<Read, LmError> {
        let event = json_body(data)?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or(kind);
        match kind {
            "message_start" => {
                if let Some(message @ Value::Object(_)) = event.get("message") {
                    self.message = message.clone();
                }
            }
            "content_block_start" => self.block_start(&event)?,
            "content_block_delta" => self.block_delta(&event)?,
            "message_delta" => {
                if let Some(Value::Object(delta)) = event.get("delta") {
                    for (key, value) in delta {
                        self.message[key] = value.clone();
                    }
                }
                // Its counts are the message's so far: each replaces the one it names.
                if let Some(Value::Object(usage)) = event.get("usage") {
                    if !self.message["usage"].is_object() {
                        self.message["usage"] = json!({});
                    }
                    for (key, value) in usage.iter().filter(|(_, value)| !value.is_null()) {
                        self.message["usage"][key] = value.clone();
                    }
                }
            }
            "message_stop" => return Ok(Read::Done),
            "error" => {
                let status = event
                    .get("error")
                    .and_then(|error| error.get("type"))
                    .and_then(Value::as_str)
                    .map_or(500, error_status);
                return Err(LmError::Status {
                    status,
                    message: (ERRORS.message)(data),
                    attempts: 1,
                });
            }
            // `content_block_stop`, `ping`, and any event type added later.
            _ => {}
        }
        Ok(Read::More)
    }

    fn finish(mut self, ended: bool) -> Result<Reply, LmError> {
        if !ended {
            return Err(cut_short("`message_stop`"));
        }
        // A reply cut off is that error, though its last call's input may not be JSON.
        check_stop(&self.message, &self.blocks, self.max_tokens)?;
        for (index, (block, input)) in self.blocks.iter_mut().zip(self.inputs).enumerate() {
            let Some(input) = input else { continue };
            block["input"] = if input.trim().is_empty() {
                // No pieces: the input the block started with (`{}`, as the API sends it).
                match block.get("input") {
                    Some(start @ Value::Object(_)) => start.clone(),
                    _ => json!({}),
                }
            } else {
                serde_json::from_str(&input).map_err(|error| {
                    let name = block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("a tool");
                    LmError::Malformed {
                        reason: format!(
                            "content block {index} (`tool_use`) of `{name}` has input pieces \
                             that do not join into JSON ({error}): {}",
                            abridge(&input).escape_debug()
                        ),
                    }
                })?
            };
        }
        self.message["content"] = Value::Array(self.blocks);
        message_reply(&self.message, self.max_tokens)
    }
}

/// The tokens counted in `usage`, where the server reports them: `input_tokens` with the
/// prompt-cache tokens the API counts apart (`cache_creation_input_tokens`,
/// `cache_read_input_tokens`), and `output_tokens`.
fn usage(body: &Value) -> Option<Usage> {
    let usage = body.get("usage")?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64);
    let input = count("input_tokens")?
        .saturating_add(count("cache_creation_input_tokens").unwrap_or(0))
        .saturating_add(count("cache_read_input_tokens").unwrap_or(0));
    Some(Usage::new(input, count("output_tokens").unwrap_or(0)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn body_of(messages: &[Message]) -> Value {
        Anthropic::new("http://127.0.0.1:1/", "m")
            .unwrap()
            .request_body(&Request {
                messages,
                tools: &[],
                tool_choice: &ToolChoice::Auto,
                deadline: None,
                max_tokens: None,
                temperature: None,
            })
            .unwrap()
    }

    #[test]
    fn a_requests_own_limits_override_the_clients() {
        let client = Anthropic::new("http://127.0.0.1:1/", "m")
            .unwrap()
            .max_tokens(4096)
            .temperature(0.0);
        let messages = [Message::user("hi")];
        let request = |max_tokens, temperature| Request {
            messages: &messages,
            tools: &[],
            tool_choice: &ToolChoice::Auto,
            deadline: None,
            max_tokens,
            temperature,
        };
        let own = client.request_body(&request(None, None)).unwrap();
        assert_eq!(
            (&own["max_tokens"], &own["temperature"]),
            (&json!(4096), &json!(0.0))
        );
        let asked = client.request_body(&request(Some(30), Some(0.7))).unwrap();
        assert_eq!(
            (&asked["max_tokens"], &asked["temperature"]),
            (&json!(30), &json!(0.7))
        );
    }

    #[test]
    fn system_messages_go_apart_and_turns_of_one_role_merge() {
        let body = body_of(&[
            Message::system("Be brief."),
            Message::user("2 + 3?"),
            Message {
                content: Some("Adding.".into()),
                ..Message::tool_calls(vec![
                    ToolCall::new("t1", "add", json!({"a": 2, "b": 3})),
                    ToolCall::new("t2", "add", json!("{'a': 1, b: 1,}")),
                    ToolCall::new("t3", "add", json!("[1, 2]")),
                ])
            },
            Message::tool_result("t1", "5"),
            Message::tool_result("t2", "2"),
            Message::tool_result("t3", ""),
            Message::user("Now answer."),
            Message::system("Answer in English."),
        ]);
        assert_eq!(body["system"], "Be brief.\n\nAnswer in English.");
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": "2 + 3?"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Adding."},
                    {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2, "b": 3}},
                    {"type": "tool_use", "id": "t2", "name": "add", "input": {"a": 1, "b": 1}},
                    {"type": "tool_use", "id": "t3", "name": "add", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "5"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "2"},
                    {"type": "tool_result", "tool_use_id": "t3"},
                    {"type": "text", "text": "Now answer."},
                ]},
            ])
        );
    }

    #[test]
    fn tool_results_come_before_text_and_empty_messages_add_nothing() {
        let body = body_of(&[
            Message::user("go"),
            Message::tool_calls(vec![ToolCall::new("t1", "f", json!({}))]),
            Message::assistant(" \n"),
            Message::user("meanwhile"),
            Message::tool_result("t1", "done"),
        ]);
        assert_eq!(body.get("system"), None);
        assert_eq!(
            body["messages"][2]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
                {"type": "text", "text": "meanwhile"},
            ])
        );
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn a_reply_gives_joined_text_calls_with_object_input_and_usage() {
        let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "x"},
                {"type": "text", "text": "Let me "},
                {"type": "text", "text": "add."},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": "2"}},
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 7}});
        let reply = parse_message(&body.to_string(), 100).unwrap();
        assert_eq!(reply.message.content.as_deref(), Some("Let me add."));
        assert_eq!(
            reply.message.tool_calls,
            [ToolCall::new("toolu_1", "add", json!({"a": "2"}))]
        );
        assert_eq!(reply.usage, Some(Usage::new(15, 7)));
    }

    #[test]
    fn a_reply_cut_off_by_max_tokens_is_an_error_naming_what_it_cut() {
        let cut = |content: Value| {
            let body = json!({"type": "message", "content": content, "stop_reason": "max_tokens"});
            parse_message(&body.to_string(), 64)
                .unwrap_err()
                .to_string()
        };
        let in_call = cut(json!([{"type": "tool_use", "id": "t", "name": "add", "input": {}}]));
        assert!(
            in_call.ends_with(
                "it was cut off at `max_tokens` (64 tokens) in a call of `add`, whose \
                 arguments may be incomplete; raise `max_tokens`"
            ),
            "{in_call}"
        );
        assert!(cut(json!([])).contains("before the model had written anything"));
        assert!(cut(json!([{"type": "text", "text": "The answer is"}])).contains("in its text"));
        // What was written by then is kept, for whoever can use it (a sampling request).
        let body = json!({"type": "message", "stop_reason": "max_tokens", "content": [
            {"type": "text", "text": "The answer"}, {"type": "text", "text": " is"}]});
        assert!(matches!(
            parse_message(&body.to_string(), 64),
            Err(LmError::CutOff { text: Some(text), .. }) if text == "The answer is"
        ));
    }

    #[test]
    fn anthropic_errors_read_as_their_type_and_message() {
        let body = r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_1"}"#;
        assert_eq!((ERRORS.message)(body), "overloaded_error: Overloaded");
        assert_eq!((ERRORS.message)("upstream timeout"), "upstream timeout");
    }

    /// Feeds `events` (`(type, data)`) to a stream reader: the reply, and the deltas.
    fn read_stream(events: &[Value], max_tokens: u32) -> (Result<Reply, LmError>, Vec<Delta>) {
        let deltas = std::sync::Mutex::new(Vec::new());
        let sink = |delta: Delta| deltas.lock().unwrap().push(delta);
        let mut reader = EventsReader::new(&sink, max_tokens);
        let mut ended = false;
        for event in events {
            let kind = event["type"].as_str().unwrap();
            match reader.event(kind, &event.to_string()) {
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

    fn call_events(partial_json: &[&str], stop_reason: &str) -> Vec<Value> {
        let mut events = vec![
            json!({"type": "message_start", "message": {"type": "message", "role": "assistant",
                "content": [], "stop_reason": null, "usage": {"input_tokens": 9, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        ];
        for piece in partial_json {
            events.push(json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        events.push(json!({"type": "content_block_stop", "index": 0}));
        events.push(
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason},
            "usage": {"output_tokens": 12}}),
        );
        events.push(json!({"type": "message_stop"}));
        events
    }

    #[test]
    fn a_streamed_calls_input_is_its_pieces_joined_and_cut_off_wins_over_bad_json() {
        let (reply, deltas) = read_stream(&call_events(&["", "{\"a\": ", "2}"], "tool_use"), 64);
        let reply = reply.unwrap();
        assert_eq!(
            reply.message.tool_calls,
            [ToolCall::new("toolu_1", "add", json!({"a": 2}))]
        );
        assert_eq!(reply.usage, Some(Usage::new(9, 12)));
        assert_eq!(
            deltas,
            [Delta::ToolCall {
                index: 0,
                id: "toolu_1".into(),
                name: "add".into()
            }]
        );
        let (error, _) = read_stream(&call_events(&["{\"a\": "], "tool_use"), 64);
        let error = error.unwrap_err().to_string();
        assert!(
            error.contains(
                "content block 0 (`tool_use`) of `add` has input pieces that do not join into JSON"
            ),
            "{error}"
        );
        let (error, _) = read_stream(&call_events(&["{\"a\": "], "max_tokens"), 64);
        let error = error.unwrap_err().to_string();
        assert!(
            error.contains("cut off at `max_tokens` (64 tokens) in a call of `add`"),
            "{error}"
        );
        let mut unfinished = call_events(&["{}"], "tool_use");
        unfinished.pop();
        let (error, _) = read_stream(&unfinished, 64);
        assert!(error.unwrap_err().to_string().contains("cut short"));
    }

    #[test]
    fn a_delta_for_a_block_that_never_started_is_malformed() {
        let events = [json!({"type": "content_block_delta", "index": 3,
            "delta": {"type": "text_delta", "text": "hi"}})];
        let (error, _) = read_stream(&events, 64);
        let error = error.unwrap_err().to_string();
        assert!(
            error.contains("content block 3 has a delta but never started"),
            "{error}"
        );
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let client = Anthropic::new("http://x", "m")
            .unwrap()
            .api_key(Some("sk-ant-secret".into()));
        let debug = format!("{client:?}");
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
        assert!(debug.contains("[redacted]"), "{debug}");
    }
}
