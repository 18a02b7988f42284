//! [`Gemini`]: a client for `POST {base}/v1beta/models/{model}:generateContent`, Google's own
//! API for Gemini models.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::Dialect;
use toolsmith::types::value_kind;

use crate::http::{
    ApiKey, BaseUrlError, ErrorShape, EventReader, Post, Read, Transport, abridge,
    api_key_settings, check_base_url, cut_short, json_body, standard_message, transport_settings,
};
use crate::lm::{Delta, DeltaSink, LanguageModel, LmError, LmFuture, Reply, Usage, cut_off};
use crate::message::{Message, Request, Role, ToolCall, ToolChoice};

/// A Gemini model behind Google's Gemini API (`generateContent`).
///
/// Tools are declared as function declarations, their parameters in the Gemini dialect (the
/// API's subset of OpenAPI's schema: `nullable` instead of type arrays, references inlined, no
/// `additionalProperties`), and the tool choice is the `functionCallingConfig`'s mode. System
/// messages become the `systemInstruction`, the assistant's turns the `model`'s, and the
/// results of one reply's calls one `user` turn of `functionResponse` parts, each named after
/// the call it answers. Requests carry the API key in the `x-goog-api-key` header, never in the
/// URL, and no key header when there is no key. A 429 or 5xx answer is retried with exponential
/// backoff, waiting what the server asks for where it says (a `Retry-After` header, else the
/// `RetryInfo.retryDelay` of Google's error body; up to
/// [`max_retry_wait`](Self::max_retry_wait)); any other 4xx fails at once with the server's
/// status and message (`INVALID_ARGUMENT: ...`). No error ever contains the key.
///
/// A model that thinks (Gemini 2.5 and later) signs its function calls, and Gemini 3 refuses a
/// conversation whose calls come back without their `thoughtSignature`: each call keeps its
/// signature ([`ToolCall::signature`]) in the conversation, and goes back with it.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolsmith_agent::{Gemini, LanguageModel};
///
/// let lm: Arc<dyn LanguageModel> = Arc::new(
///     Gemini::new(Gemini::DEFAULT_BASE_URL, "gemini-2.5-flash")?
///         .api_key_from_env("GEMINI_API_KEY"),
/// );
/// # Ok::<(), toolsmith_agent::BaseUrlError>(())
/// ```
#[derive(Clone)]
pub struct Gemini {
    base_url: String,
    model: String,
    api_key: Option<ApiKey>,
    temperature: Option<f64>,
    transport: Transport,
}

impl fmt::Debug for Gemini {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gemini")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("temperature", &self.temperature)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl Gemini {
    /// Google's own endpoint: `https://generativelanguage.googleapis.com`.
    pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";

    /// A client of `model` (such as `gemini-2.5-flash`; a leading `models/`, as the API names
    /// its models, is dropped) at `base_url` (the part before `/v1beta/models/...`, such as
    /// [`DEFAULT_BASE_URL`](Self::DEFAULT_BASE_URL)), without a key; 60 s per request, 3
    /// retries from 500 ms.
    ///
    /// The model's name is one segment of the request's path: any character in it that could
    /// end that segment or be read as more than a name (`/`, `?`, `#`, `:`, a space, ...) is
    /// percent-encoded, so a wrong name is a model the server does not have, never another
    /// endpoint.
    ///
    /// # Errors
    /// When `base_url` is not an `http` or `https` URL with a host
    /// ([`check_base_url`](Self::check_base_url)): the problem is found here, not at the first
    /// request.
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Result<Self, BaseUrlError> {
        let base_url = base_url.into();
        Self::check_base_url(&base_url)?;
        let model = model.into();
        let model = match model.strip_prefix("models/") {
            Some(name) => name.to_owned(),
            None => model,
        };
        Ok(Gemini {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model,
            api_key: None,
            temperature: None,
            transport: Transport::default(),
        })
    }

    /// Whether `base_url` can be a client's base URL: an `http` or `https` URL with a host, and
    /// without a query or fragment (`/v1beta/models/{model}:generateContent` is added after
    /// it).
    ///
    /// ```
    /// use toolsmith_agent::Gemini;
    ///
    /// assert!(Gemini::check_base_url(Gemini::DEFAULT_BASE_URL).is_ok());
    /// let error = Gemini::check_base_url("https://example.com/?key=1").unwrap_err();
    /// assert!(error.problem.contains("query or fragment"), "{error}");
    /// ```
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn check_base_url(base_url: &str) -> Result<(), BaseUrlError> {
        check_base_url(base_url, "/v1beta/models/{model}:generateContent")
    }

    api_key_settings!("in the `x-goog-api-key` header");

    transport_settings!();

    /// The sampling temperature sent (`generationConfig.temperature`; the model's default when
    /// not set).
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The endpoint requests go to. It never holds the key, which goes in a header.
    ///
    /// ```
    /// use toolsmith_agent::Gemini;
    ///
    /// let client = Gemini::new("http://127.0.0.1:8080/", "models/gemini-2.5-flash")?;
    /// assert_eq!(
    ///     client.url(),
    ///     "http://127.0.0.1:8080/v1beta/models/gemini-2.5-flash:generateContent"
    /// );
    /// # Ok::<(), toolsmith_agent::BaseUrlError>(())
    /// ```
    pub fn url(&self) -> String {
        self.method_url("generateContent")
    }

    /// The endpoint streamed requests go to
    /// ([`complete_streaming`](LanguageModel::complete_streaming)): `streamGenerateContent`,
    /// its responses asked for as server-sent events (`alt=sse`).
    ///
    /// ```
    /// use toolsmith_agent::Gemini;
    ///
    /// let client = Gemini::new("http://127.0.0.1:8080", "gemini-2.5-flash")?;
    /// assert_eq!(
    ///     client.streaming_url(),
    ///     "http://127.0.0.1:8080/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    /// );
    /// # Ok::<(), toolsmith_agent::BaseUrlError>(())
    /// ```
    pub fn streaming_url(&self) -> String {
        format!("{}?alt=sse", self.method_url("streamGenerateContent"))
    }

    /// `{base}/v1beta/models/{model}:{method}`.
    fn method_url(&self, method: &str) -> String {
        format!(
            "{}/v1beta/models/{}:{method}",
            self.base_url,
            path_segment(&self.model)
        )
    }

    /// The model asked for (without a leading `models/`).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body of the request for `request`.
    ///
    /// # Errors
    /// [`LmError::Declaration`] when a tool cannot be declared in the client's dialect (a name
    /// the API refuses, a recursive type).
    pub fn request_body(&self, request: &Request<'_>) -> Result<Value, LmError> {
        let (system, contents) = self.contents(request.messages);
        let mut body = json!({});
        if !system.is_empty() {
            body["systemInstruction"] = json!({"parts": system});
        }
        body["contents"] = Value::Array(contents);
        if !request.tools.is_empty() {
            let dialect = self.dialect();
            let mut declarations = Vec::with_capacity(request.tools.len());
            for tool in request.tools {
                let parameters = tool.parameters_in(dialect)?;
                declarations.push(json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": parameters.into_owned(),
                }));
            }
            body["tools"] = json!([{"functionDeclarations": declarations}]);
            body["toolConfig"] = json!({
                "functionCallingConfig": function_calling_config(request.tool_choice),
            });
        }
        let mut generation = serde_json::Map::new();
        if let Some(temperature) = request.temperature.or(self.temperature) {
            generation.insert("temperature".to_owned(), json!(temperature));
        }
        if let Some(max_tokens) = request.max_tokens {
            generation.insert("maxOutputTokens".to_owned(), json!(max_tokens));
        }
        if !generation.is_empty() {
            body["generationConfig"] = Value::Object(generation);
        }
        Ok(body)
    }

    /// The system messages' text parts, and the rest of the conversation as `contents`: one
    /// content per turn, consecutive messages of one role merged (a reply's tool results make
    /// one `user` turn, as the API wants them), messages with nothing to say left out.
    fn contents(&self, messages: &[Message]) -> (Vec<Value>, Vec<Value>) {
        let mut system = Vec::new();
        let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            let (role, parts) = match message.role {
                Role::System => {
                    system.extend(text_part(message));
                    continue;
                }
                Role::User => ("user", text_part(message).into_iter().collect()),
                Role::Assistant => ("model", self.model_parts(message)),
                Role::Tool => ("user", vec![function_response(&messages[..index], message)]),
            };
            if parts.is_empty() {
                continue;
            }
            match turns.last_mut() {
                Some((last, merged)) if *last == role => merged.extend(parts),
                _ => turns.push((role, parts)),
            }
        }
        let contents = turns
            .into_iter()
            .map(|(role, parts)| json!({"role": role, "parts": parts}))
            .collect();
        (system, contents)
    }

    /// An assistant message's parts: its text, then a `functionCall` part per call, each with
    /// the call's id where the server gave one and its thought signature where it had one.
    fn model_parts(&self, message: &Message) -> Vec<Value> {
        let mut parts: Vec<Value> = text_part(message).into_iter().collect();
        for call in &message.tool_calls {
            let mut function_call = json!({
                "name": call.name,
                "args": arguments_object(&call.arguments),
            });
            if is_server_id(&call.id) {
                function_call["id"] = Value::String(call.id.clone());
            }
            let mut part = json!({"functionCall": function_call});
            if let Some(signature) = &call.signature {
                part["thoughtSignature"] = Value::String(signature.clone());
            }
            parts.push(part);
        }
        parts
    }
}

/// Google's error body: its `error.status` and `error.message` (`RESOURCE_EXHAUSTED: Quota
/// exceeded ...`), and the `retryDelay` of a `google.rpc.RetryInfo` among its `details`.
const ERRORS: ErrorShape = ErrorShape {
    message: google_message,
    retry_delay: retry_info_delay,
};

impl LanguageModel for Gemini {
    fn dialect(&self) -> Dialect {
        Dialect::Gemini
    }

    /// Asks the server, retrying 429 and 5xx answers; a request's deadline bounds every
    /// attempt's time, and a retry that could only begin after it is not made.
    fn complete<'a>(&'a self, request: Request<'a>) -> LmFuture<'a> {
        Box::pin(async move {
            let post = self.post(self.url(), &request)?;
            self.transport.exchange(post, ERRORS, parse_response).await
        })
    }

    /// Asks [`streaming_url`](Self::streaming_url) and reads each event's
    /// `GenerateContentResponse` chunk as it comes: text parts are the text's next pieces
    /// (thoughts skipped), function calls come whole (with their thought signatures, kept as
    /// [`complete`](LanguageModel::complete) keeps them), and the last chunk carries the
    /// candidate's `finishReason` and the usage. The stream has no end event: one that ends
    /// before a `finishReason` (or a blocked prompt's `promptFeedback`) was cut short. A
    /// blocked prompt, or a candidate that stopped with nothing to say, is the error
    /// [`complete`](LanguageModel::complete) gives; an `error` object in the stream is an
    /// [`LmError::Status`] of its `code`, with Google's status and message. Retries and the
    /// deadline are as [`complete`](LanguageModel::complete)'s, the deadline and the time
    /// per request bounding the whole stream.
    fn complete_streaming<'a>(&'a self, request: Request<'a>, sink: DeltaSink<'a>) -> LmFuture<'a> {
        Box::pin(async move {
            let post = self.post(self.streaming_url(), &request)?;
            self.transport
                .exchange_streaming(post, ERRORS, ChunkReader::new(sink))
                .await
        })
    }
}

impl Gemini {
    /// The request for `request` to `url`, the key in its header.
    fn post(&self, url: String, request: &Request<'_>) -> Result<Post, LmError> {
        let headers = self
            .api_key
            .iter()
            .map(|key| ("x-goog-api-key", key.expose().to_owned()))
            .collect();
        Ok(Post {
            url,
            headers,
            body: self.request_body(request)?.to_string(),
            secret: self.api_key.as_ref().map(|key| key.expose().to_owned()),
            deadline: request.deadline,
        })
    }
}

/// A message's text as a part, when it has any (the API refuses an empty part).
fn text_part(message: &Message) -> Option<Value> {
    message
        .content
        .as_deref()
        .filter(|text| !text.is_empty())
        .map(|text| json!({"text": text}))
}

/// A tool message as a `functionResponse` part, named after the call it answers: the API pairs a
/// response with its call by name and order (and by id, where the call had one).
fn function_response(earlier: &[Message], message: &Message) -> Value {
    let result = message.content.clone().unwrap_or_default();
    let id = message.tool_call_id.as_deref().unwrap_or_default();
    let call = earlier
        .iter()
        .rev()
        .filter(|message| message.role == Role::Assistant)
        .flat_map(|message| &message.tool_calls)
        .find(|call| call.id == id);
    match call {
        Some(call) => {
            let mut response = json!({"name": call.name, "response": {"result": result}});
            if is_server_id(&call.id) {
                response["id"] = Value::String(call.id.clone());
            }
            json!({"functionResponse": response})
        }
        // The answer to a call the conversation does not hold has no name to go by, and a
        // `functionResponse` without its call is refused: the model reads it as text.
        None => json!({"text": format!("The result of tool call `{id}`: {result}")}),
    }
}

/// A call's arguments as the object `functionCall.args` must be: an object as it is, argument
/// text parsed. Anything else (text that is not a JSON object) goes back as `{}`: the API
/// refuses any other `args`, and the call's answer, which follows, told the model what was
/// wrong with them.
fn arguments_object(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => json!({}),
        },
        _ => json!({}),
    }
}

/// Whether a call's id is the server's (`functionCall.id`), not one this client made up
/// (`call_{index}`) for a call that came without one.
fn is_server_id(id: &str) -> bool {
    let made_up = id
        .strip_prefix("call_")
        .is_some_and(|index| !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()));
    !id.is_empty() && !made_up
}

/// A tool choice as a `functionCallingConfig`.
fn function_calling_config(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
    }
}

/// `model` as one path segment: every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
/// percent-encoded, so that a name can neither leave its segment (`/`, `?`, `#`) nor be read as
/// the method (`:`).
fn path_segment(model: &str) -> String {
    let mut segment = String::with_capacity(model.len());
    for byte in model.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            segment.push(char::from(byte));
        } else {
            segment.push_str(&format!("%{byte:02X}"));
        }
    }
    segment
}

/// The model's message in a `generateContent` response (`candidates[0].content.parts`: text
/// joined, thoughts skipped, function calls in order, each with its thought signature) and its
/// usage.
fn parse_response(text: &str) -> Result<Reply, LmError> {
    response_reply(&json_body(text)?)
}

/// The reply of a `generateContent` response's JSON (see [`parse_response`]). A streamed
/// response is read here too, once its chunks are put together in the same shape.
fn response_reply(body: &Value) -> Result<Reply, LmError> {
    let malformed = |reason: String| LmError::Malformed { reason };
    let Some(candidate) = body
        .get("candidates")
        .and_then(|candidates| candidates.get(0))
    else {
        return Err(malformed(match blocked(body) {
            Some(reason) => format!("the prompt was blocked ({reason}); no candidate came"),
            None => "it has no `candidates[0]`".to_owned(),
        }));
    };
    let parts = match candidate.get("content") {
        None | Some(Value::Null) => None,
        Some(content @ Value::Object(_)) => match content.get("parts") {
            None | Some(Value::Null) => Some(&[][..]),
            Some(Value::Array(parts)) => Some(&parts[..]),
            Some(other) => {
                return Err(malformed(format!(
                    "its `candidates[0].content.parts` is {}, not an array",
                    value_kind(other)
                )));
            }
        },
        Some(other) => {
            return Err(malformed(format!(
                "its `candidates[0].content` is {}, not an object",
                value_kind(other)
            )));
        }
    };
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for (i, part) in parts.unwrap_or_default().iter().enumerate() {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(call) = part.get("functionCall") {
            let mut call = parse_function_call(tool_calls.len(), call)?;
            call.signature = part
                .get("thoughtSignature")
                .and_then(Value::as_str)
                .map(str::to_owned);
            tool_calls.push(call);
        } else if let Some(text) = part.get("text") {
            let text = text.as_str().ok_or_else(|| {
                malformed(format!(
                    "its part {i}'s `text` is {}, not text",
                    value_kind(text)
                ))
            })?;
            content.push_str(text);
        }
        // Other parts (inline data, executable code, ...) carry nothing an agent reads.
    }
    if candidate.get("finishReason").and_then(Value::as_str) == Some("MAX_TOKENS") {
        return Err(cut_off(
            "the token limit (`maxOutputTokens`, or the model's context)",
            tool_calls.last().map(|call| call.name.as_str()),
            (!content.is_empty()).then_some(content),
            "raise the request's `max_tokens`, or shorten the conversation",
        ));
    }
    if content.is_empty() && tool_calls.is_empty() {
        let finish = candidate.get("finishReason").and_then(Value::as_str);
        if let Some(reason) = finish.filter(|reason| *reason != "STOP") {
            let detail = candidate
                .get("finishMessage")
                .and_then(Value::as_str)
                .map(|message| format!(": {}", abridge(message)))
                .unwrap_or_default();
            return Err(malformed(format!(
                "the model stopped ({reason}) with no text and no function call{detail}"
            )));
        }
        if parts.is_none() {
            return Err(malformed("its `candidates[0]` has no `content`".to_owned()));
        }
    }
    let reply = Reply::new(Message {
        role: Role::Assistant,
        content: (!content.is_empty()).then_some(content),
        tool_calls,
        tool_call_id: None,
    });
    let reply = match usage(body) {
        Some(usage) => reply.with_usage(usage),
        None => reply,
    };
    Ok(reply)
}

/// Why the prompt was blocked, where the response says (`promptFeedback.blockReason`, with its
/// `blockReasonMessage`).
fn blocked(body: &Value) -> Option<String> {
    let feedback = body.get("promptFeedback")?;
    let reason = feedback.get("blockReason").and_then(Value::as_str)?;
    Some(
        match feedback.get("blockReasonMessage").and_then(Value::as_str) {
            Some(message) => format!("{reason}: {}", abridge(message)),
            None => reason.to_owned(),
        },
    )
}

/// `usageMetadata`, where the server reports it: `promptTokenCount` in, and out the reply's
/// `candidatesTokenCount` with the `thoughtsTokenCount` of its thinking (billed as output, as
/// OpenAI's `completion_tokens` count reasoning). A count of zero is left out of the JSON.
fn usage(body: &Value) -> Option<Usage> {
    let usage = body.get("usageMetadata")?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage::new(
        count("promptTokenCount"),
        count("candidatesTokenCount").saturating_add(count("thoughtsTokenCount")),
    ))
}

fn parse_function_call(index: usize, call: &Value) -> Result<ToolCall, LmError> {
    let name = call
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .ok_or_else(|| LmError::Malformed {
            reason: format!("function call {index} has no `name`"),
        })?;
    let arguments = match call.get("args") {
        None | Some(Value::Null) => json!({}),
        Some(arguments) => arguments.clone(),
    };
    Ok(ToolCall::new(call_id(call, index), name, arguments))
}

/// A function call's `id`, or `call_{index}` for a call that came without one.
fn call_id(call: &Value, index: usize) -> String {
    call.get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("call_{index}"), str::to_owned)
}

/// A streamed response, read chunk by chunk into the response a whole one is (its
/// candidate's parts and other fields, the usage, the prompt's feedback), which
/// [`response_reply`] then reads.
struct ChunkReader<'a> {
    sink: DeltaSink<'a>,
    /// The first candidate's fields but its content, the last chunk's where they repeat.
    candidate: Option<serde_json::Map<String, Value>>,
    /// Every part of the candidate's content, in order; `None` until a chunk has content.
    parts: Option<Vec<Value>>,
    usage: Option<Value>,
    feedback: Option<Value>,
    /// How many function calls have come.
    calls: usize,
    /// Whether the response is over: its candidate finished, or the prompt was blocked.
    finished: bool,
}

impl<'a> ChunkReader<'a> {
    fn new(sink: DeltaSink<'a>) -> Self {
        ChunkReader {
            sink,
            candidate: None,
            parts: None,
            usage: None,
            feedback: None,
            calls: 0,
            finished: false,
        }
    }

    /// Reports a part of the candidate's content as it comes, as [`response_reply`] will read
    /// it: a text part as text, a function call as a call (thoughts neither).
    fn report(&mut self, part: &Value) {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            return;
        }
        if let Some(call) = part.get("functionCall") {
            if let Some(name) = call.get("name").and_then(Value::as_str) {
                (self.sink)(Delta::ToolCall {
                    index: self.calls,
                    id: call_id(call, self.calls),
                    name: name.to_owned(),
                });
            }
            self.calls += 1;
        } else if let Some(text) = part.get("text").and_then(Value::as_str)
            && !text.is_empty()
        {
            (self.sink)(Delta::Text(text.to_owned()));
        }
    }
}

impl EventReader for ChunkReader<'_> {
    fn event(&mut self, _kind: &str, data: &str) -> Result<Read, LmError> {
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
                message: google_message(data),
                attempts: 1,
            });
        }
        if let Some(usage) = chunk.get("usageMetadata").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        if let Some(feedback) = chunk.get("promptFeedback").filter(|f| !f.is_null()) {
            self.finished |= feedback.get("blockReason").is_some();
            self.feedback = Some(feedback.clone());
        }
        let Some(Value::Object(fields)) = chunk.get("candidates").and_then(|c| c.get(0)) else {
            return Ok(Read::More);
        };
        let candidate = self.candidate.get_or_insert_default();
        for (key, value) in fields.iter().filter(|(key, _)| *key != "content") {
            candidate.insert(key.clone(), value.clone());
        }
        self.finished |= fields.get("finishReason").is_some_and(|r| !r.is_null());
        match fields.get("content") {
            None | Some(Value::Null) => {}
            Some(content) => {
                let parts = match content.get("parts") {
                    None | Some(Value::Null) => &[][..],
                    Some(Value::Array(parts)) => &parts[..],
                    Some(other) => {
                        return Err(LmError::Malformed {
                            reason: format!(
                                "a chunk's `candidates[0].content.parts` is {}, not an array",
                                value_kind(other)
                            ),
                        });
                    }
                };
                for part in parts {
                    self.report(part);
                }
                self.parts.get_or_insert_default().extend_from_slice(parts);
            }
        }
        Ok(Read::More)
    }

    fn finish(self, _ended: bool) -> Result<Reply, LmError> {
        if !self.finished {
            return Err(cut_short(
                "its candidate's `finishReason` (or a blocked prompt's `promptFeedback`)",
            ));
        }
        let mut body = json!({});
        if let Some(mut candidate) = self.candidate {
            if let Some(parts) = self.parts {
                candidate.insert(
                    "content".to_owned(),
                    json!({"parts": parts, "role": "model"}),
                );
            }
            body["candidates"] = json!([candidate]);
        }
        if let Some(usage) = self.usage {
            body["usageMetadata"] = usage;
        }
        if let Some(feedback) = self.feedback {
            body["promptFeedback"] = feedback;
        }
        response_reply(&body)
    }
}

/// Google's error body, `{"error": {"code", "message", "status", "details"}}` (alone or, as some
/// Google endpoints answer, the first of an array).
fn google_error(body: &str) -> Option<Value> {
    let parsed: Value = serde_json::from_str(body).ok()?;
    let body = match parsed {
        Value::Array(items) => items.into_iter().next()?,
        other => other,
    };
    match body {
        Value::Object(mut fields) => fields.remove("error"),
        _ => None,
    }
}

/// The server's words in Google's error shape, its status first (`RESOURCE_EXHAUSTED: Quota
/// exceeded ...`); else as any API's.
fn google_message(body: &str) -> String {
    let error = google_error(body);
    let field = |key: &str| {
        error
            .as_ref()
            .and_then(|error| error.get(key))
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    };
    match (field("status"), field("message")) {
        (Some(status), Some(message)) => abridge(&format!("{status}: {message}")),
        (Some(status), None) => abridge(status),
        _ => standard_message(body),
    }
}

/// The `retryDelay` of the `google.rpc.RetryInfo` in an error's `details`.
fn retry_info_delay(body: &str) -> Option<Duration> {
    let error = google_error(body)?;
    error
        .get("details")?
        .as_array()?
        .iter()
        .filter(|detail| {
            detail
                .get("@type")
                .and_then(Value::as_str)
                .is_some_and(|kind| kind.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|detail| detail.get("retryDelay")?.as_str().and_then(duration))
}

/// A protobuf `Duration` in its JSON form: seconds with up to nine decimals, then `s` (`"30s"`,
/// `"1.5s"`). A negative one is none.
fn duration(text: &str) -> Option<Duration> {
    let seconds = text.trim().strip_suffix('s')?;
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let digits = |text: &str| text.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || !digits(whole)
        || !digits(fraction)
        || fraction.len() > 9
    {
        return None;
    }
    let secs = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let nanos = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}").parse().ok()?
    };
    Some(Duration::new(secs, nanos))
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

    fn response(parts: Value) -> String {
        json!({
            "candidates": [{"content": {"parts": parts, "role": "model"},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 5,
                              "thoughtsTokenCount": 7, "totalTokenCount": 32},
            "modelVersion": "gemini-2.5-flash",
        })
        .to_string()
    }

    #[test]
    fn a_response_gives_text_without_thoughts_and_calls_with_ids() {
        let text = response(json!([
            {"text": "Let me think.", "thought": true},
            {"text": "Adding "},
            {"text": "now."},
            {"functionCall": {"name": "add", "args": {"a": 1}, "id": "fc-1"},
             "thoughtSignature": "sig-1"},
            {"functionCall": {"name": "add"}},
        ]));
        let reply = parse_response(&text).unwrap();
        assert_eq!(reply.message.content.as_deref(), Some("Adding now."));
        assert_eq!(
            reply.message.tool_calls,
            vec![
                ToolCall::new("fc-1", "add", json!({"a": 1})).with_signature("sig-1"),
                ToolCall::new("call_1", "add", json!({})),
            ]
        );
        assert_eq!(reply.usage, Some(Usage::new(20, 12)));
    }

    #[test]
    fn a_response_without_a_usable_candidate_says_why() {
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}}).to_string();
        let error = parse_response(&blocked).unwrap_err();
        assert!(error.to_string().contains("blocked (SAFETY)"), "{error}");
        let stopped = json!({"candidates": [{"finishReason": "RECITATION", "index": 0}]});
        let error = parse_response(&stopped.to_string()).unwrap_err();
        assert!(
            error.to_string().contains("stopped (RECITATION)"),
            "{error}"
        );
        let no_content = json!({"candidates": [{"finishReason": "STOP"}]});
        let error = parse_response(&no_content.to_string()).unwrap_err();
        assert!(error.to_string().contains("no `content`"), "{error}");
        let nameless = response(json!([{"functionCall": {"args": {}}}]));
        let error = parse_response(&nameless).unwrap_err();
        assert!(error.to_string().contains("has no `name`"), "{error}");
        let error = parse_response("<html>").unwrap_err();
        assert!(error.to_string().contains("not JSON"), "{error}");
        // A candidate that stopped normally with nothing to say is an empty message.
        let empty = parse_response(&response(json!([]))).unwrap();
        assert_eq!(empty.message, Message::tool_calls(Vec::new()));
    }

    #[test]
    fn googles_errors_give_their_status_message_and_retry_delay() {
        let body = json!({"error": {"code": 429, "message": "Quota exceeded.",
            "status": "RESOURCE_EXHAUSTED", "details": [
                {"@type": "type.googleapis.com/google.rpc.Help", "links": []},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}})
        .to_string();
        assert_eq!(google_message(&body), "RESOURCE_EXHAUSTED: Quota exceeded.");
        assert_eq!(retry_info_delay(&body), Some(Duration::from_millis(1500)));
        assert_eq!(google_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(retry_info_delay("Bad Gateway"), None);
        let wrapped = format!("[{body}]");
        assert_eq!(
            google_message(&wrapped),
            "RESOURCE_EXHAUSTED: Quota exceeded."
        );
    }

    #[test]
    fn a_protobuf_duration_is_read_to_the_nanosecond() {
        assert_eq!(duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(duration("0.000000001s"), Some(Duration::from_nanos(1)));
        assert_eq!(duration(".5s"), Some(Duration::from_millis(500)));
        for bad in ["30", "-1s", "s", "1.0000000001s", "1e3s", "1.2.3s"] {
            assert_eq!(duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_model_name_stays_one_path_segment() {
        let client = Gemini::new("https://x/", "tuned/a b?c#d:e").unwrap();
        assert_eq!(
            client.url(),
            "https://x/v1beta/models/tuned%2Fa%20b%3Fc%23d%3Ae:generateContent"
        );
        assert_eq!(Gemini::new("https://x", "models/m").unwrap().model(), "m");
    }

    #[test]
    fn the_request_body_names_each_result_after_its_call_and_merges_turns() {
        let client = Gemini::new("http://127.0.0.1:1", "m")
            .unwrap()
            .temperature(0.0);
        let signed = ToolCall::new("fc-1", "add", json!({"a": 1})).with_signature("sig-1");
        let messages = [
            Message::system("Be brief."),
            Message::user("hi"),
            Message::tool_calls(vec![
                signed,
                ToolCall::new("call_1", "mul", json!("{\"a\": 2}")),
                ToolCall::new("call_2", "mul", json!("{oops")),
            ]),
            Message::tool_result("fc-1", "1"),
            Message::tool_result("call_1", "2"),
            Message::tool_result("call_2", "bad arguments"),
            Message::tool_result("unknown", "?"),
        ];
        let tools = [ToolDeclaration::new(
            "finish",
            "Answer.",
            Answered::type_graph(),
        )];
        let body = client
            .request_body(&Request {
                messages: &messages,
                tools: &tools,
                tool_choice: &ToolChoice::Tool("finish".into()),
                deadline: None,
                max_tokens: None,
                temperature: None,
            })
            .unwrap();
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}]})
        );
        assert_eq!(
            body["contents"],
            json!([
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [
                    {"functionCall": {"name": "add", "args": {"a": 1}, "id": "fc-1"},
                     "thoughtSignature": "sig-1"},
                    {"functionCall": {"name": "mul", "args": {"a": 2}}},
                    {"functionCall": {"name": "mul", "args": {}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "add", "response": {"result": "1"}, "id": "fc-1"}},
                    {"functionResponse": {"name": "mul", "response": {"result": "2"}}},
                    {"functionResponse": {"name": "mul", "response": {"result": "bad arguments"}}},
                    {"text": "The result of tool call `unknown`: ?"},
                ]},
            ])
        );
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["name"],
            "finish"
        );
        assert_eq!(
            body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["finish"]}})
        );
        assert_eq!(body["generationConfig"], json!({"temperature": 0.0}));
        let plain = client
            .request_body(&Request {
                messages: &messages[1..2],
                tools: &[],
                tool_choice: &ToolChoice::Auto,
                deadline: None,
                max_tokens: None,
                temperature: None,
            })
            .unwrap();
        assert_eq!(plain.get("tools"), None);
        assert_eq!(plain.get("toolConfig"), None);
        assert_eq!(plain.get("systemInstruction"), None);
        // A request's own limits go in the generation config, over the client's.
        let limited = client
            .request_body(&Request {
                messages: &messages[1..2],
                tools: &[],
                tool_choice: &ToolChoice::Auto,
                deadline: None,
                max_tokens: Some(30),
                temperature: Some(0.7),
            })
            .unwrap();
        assert_eq!(
            limited["generationConfig"],
            json!({"temperature": 0.7, "maxOutputTokens": 30})
        );
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let client = Gemini::new("http://x", "m")
            .unwrap()
            .api_key(Some("AIza-secret".into()));
        assert!(!format!("{client:?}").contains("AIza-secret"));
        assert!(!client.url().contains("AIza-secret"));
    }
}
