//! What a tool asks ([`Context::elicit`](toolsmith::Context::elicit),
//! [`Context::sample`](toolsmith::Context::sample)) goes to the MCP client the call came from.
//!
//! - Protocol 2026-07-28 and later ([`Rounds`]): the server answers the call with
//!   `input_required` holding the question (SEP-2322), and the client calls again with the
//!   answer; this works over every transport, stateless HTTP too.
//! - Earlier protocols ([`ClientAsker`]): `elicitation/create` or `sampling/createMessage` on
//!   the connection the call came in on, where the client's answer can come back: a lasting
//!   connection (stdio, a byte stream) or an HTTP session. Over stateless HTTP the tool gets
//!   [`ToolError::NobodyToAsk`](toolsmith::ToolError) saying why ([`stateless`]).
//!
//! Either way a client that did not declare the capability is not asked.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::task::Waker;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{Peer, ServiceError};
use serde_json::{Value, json};
use toolsmith::{
    AskError, AskFuture, Asker, Context, Elicitation, Elicited, Role, Sampled, Sampling,
};

/// Asks the client of one connection (stdio, a byte stream, an HTTP session), on a protocol
/// before 2026-07-28.
pub(crate) struct ClientAsker {
    peer: Peer<RoleServer>,
}

impl ClientAsker {
    pub(crate) fn new(peer: Peer<RoleServer>) -> Self {
        ClientAsker { peer }
    }

    /// Why the client cannot be asked for `what` (`declared`: whether it declared the
    /// capability), if it cannot.
    fn undeclared(what: &str, declared: bool) -> Result<(), AskError> {
        if declared {
            return Ok(());
        }
        Err(AskError::Unsupported(format!(
            "the client did not declare the `{what}` capability"
        )))
    }
}

/// Asks nobody, saying why: where the client cannot be asked at all.
pub(crate) struct Unreachable(&'static str);

/// The asker of a call over stateless HTTP.
pub(crate) fn stateless() -> Arc<dyn Asker> {
    static STATELESS: LazyLock<Arc<dyn Asker>> = LazyLock::new(|| {
        Arc::new(Unreachable(
            "the server serves HTTP without sessions, where a client's answer has nowhere to \
             go (serve with sessions to ask the client)",
        ))
    });
    Arc::clone(&STATELESS)
}

impl Asker for Unreachable {
    fn elicit<'a>(&'a self, _: &'a Context, _: &'a Elicitation) -> AskFuture<'a, Elicited> {
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            self.0.to_owned(),
        ))))
    }

    fn sample<'a>(&'a self, _: &'a Context, _: &'a Sampling) -> AskFuture<'a, Sampled> {
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            self.0.to_owned(),
        ))))
    }
}

impl Asker for ClientAsker {
    fn elicit<'a>(
        &'a self,
        _context: &'a Context,
        request: &'a Elicitation,
    ) -> AskFuture<'a, Elicited> {
        Box::pin(async move {
            let declared = self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.elicitation.is_some());
            Self::undeclared("elicitation", declared)?;
            let schema: ElicitationSchema = serde_json::from_value(request.schema.clone())
                .map_err(|error| {
                    AskError::Failed(format!(
                        "the form is not an MCP elicitation schema ({error})"
                    ))
                })?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: request.message.clone(),
                requested_schema: schema,
            };
            let result = self
                .peer
                .create_elicitation(params)
                .await
                .map_err(|error| failed("elicitation", &error))?;
            match result.action {
                ElicitationAction::Accept => match result.content {
                    Some(Value::Object(content)) => Ok(Elicited::Accept(content)),
                    Some(other) => Err(AskError::Failed(format!(
                        "the client accepted with content that is not an object: {other}"
                    ))),
                    None => Ok(Elicited::Accept(serde_json::Map::new())),
                },
                ElicitationAction::Decline => Ok(Elicited::Decline),
                ElicitationAction::Cancel => Ok(Elicited::Cancel),
                // An action of a later protocol: not an answer this server can read.
                _ => Err(AskError::Failed(
                    "the client answered with an action this server does not know".to_owned(),
                )),
            }
        })
    }

    fn sample<'a>(
        &'a self,
        _context: &'a Context,
        request: &'a Sampling,
    ) -> AskFuture<'a, Sampled> {
        Box::pin(async move {
            let declared = self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.sampling.is_some());
            Self::undeclared("sampling", declared)?;
            let params = sampling_params(request)?;
            let result = create_message(&self.peer, params).await?;
            sampled(result)
        })
    }
}

/// `request` as `sampling/createMessage`'s params. Written as JSON and read as rmcp's type,
/// which protocol 2025-11-25 deprecates (SEP-2577) without a successor for this request.
fn sampling_params(request: &Sampling) -> Result<Value, AskError> {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": {"type": "text", "text": message.text}})
        })
        .collect();
    let mut params = json!({"messages": messages, "maxTokens": request.max_tokens});
    if let Some(system) = &request.system {
        params["systemPrompt"] = json!(system);
    }
    if let Some(temperature) = request.temperature {
        params["temperature"] = json!(temperature);
    }
    Ok(params)
}

/// Sends `sampling/createMessage` with `params`; the result as JSON.
#[allow(deprecated)]
async fn create_message(peer: &Peer<RoleServer>, params: Value) -> Result<Value, AskError> {
    let params: rmcp::model::CreateMessageRequestParams =
        serde_json::from_value(params).map_err(|error| {
            AskError::Failed(format!("the sampling request does not read ({error})"))
        })?;
    let result = peer
        .create_message(params)
        .await
        .map_err(|error| failed("sampling", &error))?;
    serde_json::to_value(result)
        .map_err(|error| AskError::Failed(format!("the client's answer does not read ({error})")))
}

/// The text of a `sampling/createMessage` result.
fn sampled(result: Value) -> Result<Sampled, AskError> {
    let blocks = match &result["content"] {
        Value::Array(blocks) => blocks.clone(),
        block => vec![block.clone()],
    };
    let text: String = blocks
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect();
    if text.is_empty() && !blocks.iter().any(|block| block["type"] == "text") {
        return Err(AskError::Failed(format!(
            "the client's model answered without text: {}",
            result["content"]
        )));
    }
    Ok(Sampled {
        text,
        model: result["model"].as_str().map(str::to_owned),
        stop_reason: result["stopReason"].as_str().map(str::to_owned),
    })
}

/// A request to the client that went wrong, in words.
fn failed(what: &str, error: &ServiceError) -> AskError {
    match error {
        ServiceError::McpError(error) => AskError::Failed(format!(
            "the client refused the {what} request: {} (code {})",
            error.message, error.code.0
        )),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => AskError::Failed(
            format!("the connection to the client closed before it answered the {what} request"),
        ),
        other => AskError::Failed(format!("the {what} request failed: {other}")),
    }
}

/// What a call asks on protocol 2026-07-28 and later, where a server asks by answering
/// `input_required` (SEP-2322) and the client calls again with the answers.
///
/// The call runs from the start each round. Its questions are numbered in the order it asks
/// them (`q0`, `q1`, ...): one answered in this round's `inputResponses` or an earlier round's
/// (carried in `requestState`) is answered at once; the first one that is not ends the round,
/// the tool's future dropped, and the client is sent that question. So a tool that asks must
/// ask before it acts, and ask the same questions in the same order for the same answers.
pub(crate) struct Rounds {
    /// The tool called: `requestState` holds it, so that a state is never read for another.
    tool: String,
    /// The answers so far, by question.
    answers: BTreeMap<String, Value>,
    /// What the client can answer, as it declared in the request's `_meta`.
    elicitation: bool,
    sampling: bool,
    state: Mutex<RoundState>,
}

#[derive(Default)]
struct RoundState {
    /// The next question's number.
    next: usize,
    /// The question that ends this round, once asked.
    asked: Option<(String, Value)>,
    /// Who waits for the round to end.
    waker: Option<Waker>,
}

/// `requestState`'s version: a state of another version is not read.
const STATE_VERSION: u64 = 1;

impl Rounds {
    /// The rounds of a call of `tool`, given this round's `responses` and the `state` the
    /// client echoed; `capabilities` as the request's `_meta` declared them.
    ///
    /// # Errors
    /// An invalid-params error when `state` is not one this server wrote for `tool`.
    pub(crate) fn new(
        tool: &str,
        responses: Option<BTreeMap<String, Value>>,
        state: Option<&str>,
        capabilities: Option<&rmcp::model::ClientCapabilities>,
    ) -> Result<Rounds, rmcp::ErrorData> {
        let mut answers = BTreeMap::new();
        if let Some(state) = state {
            let refused = || {
                rmcp::ErrorData::invalid_params(
                    format!(
                        "`requestState` is not one this server gave for a call of `{tool}`: send \
                         it back as it came, with the call it came for"
                    ),
                    None,
                )
            };
            let read: Value = serde_json::from_str(state).map_err(|_| refused())?;
            if read["v"] != STATE_VERSION || read["tool"] != tool {
                return Err(refused());
            }
            let Value::Object(earlier) = &read["answers"] else {
                return Err(refused());
            };
            answers.extend(earlier.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        answers.extend(responses.unwrap_or_default());
        Ok(Rounds {
            tool: tool.to_owned(),
            answers,
            elicitation: capabilities.is_some_and(|c| c.elicitation.is_some()),
            sampling: capabilities.is_some_and(|c| c.sampling.is_some()),
            state: Mutex::new(RoundState::default()),
        })
    }

    /// The question that ends this round, once the call has asked one; `waker` is woken when
    /// it does (from whatever thread the tool asks on).
    pub(crate) fn asked(&self, waker: &Waker) -> Option<(String, Value)> {
        let mut state = lock(&self.state);
        if state.asked.is_none() {
            state.waker = Some(waker.clone());
        }
        state.asked.clone()
    }

    /// The `input_required` result for `question` (its key and request).
    pub(crate) fn input_required(&self, question: (String, Value)) -> Value {
        let state = json!({"v": STATE_VERSION, "tool": self.tool, "answers": self.answers});
        let (key, request) = question;
        json!({
            "resultType": "input_required",
            "inputRequests": {key: request},
            "requestState": state.to_string(),
        })
    }

    /// The answer to the next question, or the round's end: `request` is the question as the
    /// client is sent it.
    fn ask(&self, request: Value) -> AskFuture<'_, Value> {
        let mut state = lock(&self.state);
        let key = format!("q{}", state.next);
        state.next += 1;
        if let Some(answer) = self.answers.get(&key) {
            return Box::pin(std::future::ready(Ok(answer.clone())));
        }
        if state.asked.is_none() {
            state.asked = Some((key, request));
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
        // The round ends here: the server drops the call.
        Box::pin(std::future::pending())
    }
}

impl Asker for Rounds {
    fn elicit<'a>(&'a self, _: &'a Context, request: &'a Elicitation) -> AskFuture<'a, Elicited> {
        Box::pin(async move {
            Self::undeclared_on("elicitation", self.elicitation)?;
            let question = json!({
                "method": "elicitation/create",
                "params": {"mode": "form", "message": request.message, "requestedSchema": request.schema},
            });
            let answer = self.ask(question).await?;
            let result: rmcp::model::ElicitResult = serde_json::from_value(answer.clone())
                .map_err(|_| {
                    AskError::Failed(format!(
                        "the client's answer is not an elicitation result: {answer}"
                    ))
                })?;
            match result.action {
                ElicitationAction::Accept => match result.content {
                    Some(Value::Object(content)) => Ok(Elicited::Accept(content)),
                    None => Ok(Elicited::Accept(serde_json::Map::new())),
                    Some(other) => Err(AskError::Failed(format!(
                        "the client accepted with content that is not an object: {other}"
                    ))),
                },
                ElicitationAction::Decline => Ok(Elicited::Decline),
                ElicitationAction::Cancel => Ok(Elicited::Cancel),
                _ => Err(AskError::Failed(
                    "the client answered with an action this server does not know".to_owned(),
                )),
            }
        })
    }

    fn sample<'a>(&'a self, _: &'a Context, request: &'a Sampling) -> AskFuture<'a, Sampled> {
        Box::pin(async move {
            Self::undeclared_on("sampling", self.sampling)?;
            let question =
                json!({"method": "sampling/createMessage", "params": sampling_params(request)?});
            sampled(self.ask(question).await?)
        })
    }
}

impl Rounds {
    fn undeclared_on(what: &str, declared: bool) -> Result<(), AskError> {
        if declared {
            return Ok(());
        }
        Err(AskError::Unsupported(format!(
            "the client did not declare the `{what}` capability in the request's `_meta`"
        )))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
